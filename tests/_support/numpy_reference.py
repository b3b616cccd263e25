"""Slow, readable, pure-NumPy reference implementations of the six methods.

Written from the algorithm descriptions (Shang et al., IJCAI 2019, Algorithms 1 and 2) and the
package's documented random-index protocol, without importing the compiled kernels:

* ``rng = np.random.default_rng(random_state)``; deterministic methods draw nothing;
* per outer iteration exactly one ``rng.integers(0, n, size=k)`` call, drawn after the full
  gradient (and, for SVRGSP(+), after ``Z``/``T``): ``k = J`` for svrght/svrgsp/svrgsp+,
  ``k = n_steps * batch`` for sght with ``n_steps = max(1, n // batch)``.

Hard thresholding keeps the ``k`` largest magnitudes, ties broken towards the lower index.

Every function returns a dict with ``"x"`` (the iterates ``x^0 .. x^t``) and, where the
method has them, ``"Z"``, ``"T"`` (``T`` and ``Z`` of iterations ``1..t``) and ``"b"`` (the
dense sub-problem solutions ``b`` of iterations ``1..t``).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.optimize
import scipy.sparse as sp
from scipy.special import expit

# -- thresholding ---------------------------------------------------------------------------


def top_k_ref(v, k):
    """Ascending indices of the ``k`` largest ``|v|``; ties -> lower index (np.lexsort)."""
    v = np.asarray(v, dtype=np.float64)
    p = v.shape[0]
    k = max(0, min(int(k), p))
    # lexsort sorts by the LAST key first: primary key -|v|, secondary key the index
    order = np.lexsort((np.arange(p), -np.abs(v)))
    return np.sort(order[:k])


def hard_threshold_ref(v, k):
    """``H_k(v)``: keep the ``k`` largest magnitudes (lower index wins ties), zero the rest."""
    v = np.asarray(v, dtype=np.float64)
    keep = top_k_ref(v, k)
    out = np.zeros_like(v)
    out[keep] = v[keep]
    return out


# -- losses -----------------------------------------------------------------------------------


def dl(a, y, loss):
    """Derivative of the per-sample loss with respect to the margin ``a``."""
    a = np.asarray(a, dtype=np.float64)
    if loss == "squares":
        return a - y
    return -y * expit(-y * a)


def objective(W, y, x, loss, lam=0.0):
    """``F(x) = mean_i f_i(x) + (lam / 2) ||x||^2``."""
    a = np.asarray(W @ x, dtype=np.float64).ravel()
    ridge = 0.5 * lam * float(x @ x)
    if loss == "squares":
        return float(np.mean(0.5 * (a - y) ** 2)) + ridge
    return float(np.mean(np.logaddexp(0.0, -y * a))) + ridge


def grad(W, y, x, loss, lam=0.0):
    """Full gradient ``W^T dl(W x, y) / n`` (plus ``lam * x``: the ridge term)."""
    n = W.shape[0]
    a = np.asarray(W @ x, dtype=np.float64).ravel()
    g = np.asarray(W.T @ dl(a, y, loss), dtype=np.float64).ravel() / n
    return g + lam * x if lam else g


def _dense(W):
    return W.toarray() if sp.issparse(W) else np.asarray(W, dtype=np.float64)


def _start(d, s, x0):
    if x0 is None:
        return np.zeros(d)
    return hard_threshold_ref(np.asarray(x0, dtype=np.float64), s)


def _support_pursuit(g, x, s):
    """``Z = supp(g, 2s)``, ``T = Z ∪ supp(x)`` (both ascending)."""
    Z = top_k_ref(g, 2 * s)
    T = np.union1d(Z, np.flatnonzero(x))
    return Z, T


def sample_loss(a, y, loss):
    """Per-sample loss as a function of the margin ``a``."""
    a = np.asarray(a, dtype=np.float64)
    if loss == "squares":
        return 0.5 * (a - y) ** 2
    return np.logaddexp(0.0, -y * a)


# -- one inner epoch, literally (the kernels' oracle) -----------------------------------------


def _events_between(prev, keep):
    """(entered, left) of the kept set ``keep`` relative to ``prev``."""
    prev, keep = set(int(v) for v in prev), set(int(v) for v in keep)
    return len(keep - prev), len(prev - keep)


def svrg_epoch(W, y, loss, z0, g, idx, eta, lam=0.0, thr_every=0, s_keep=0, rec_every=0,
               prev=(), huge=1e150):
    """One SVRG inner epoch (Algorithm 2's loop, SVRGHT's with ``thr_every = 1``), eager.

    ``z~ = z0``; step ``j`` with sample ``i``:
    ``z <- z - eta * (f_i'(w_i z) w_i - f_i'(w_i z~) w_i + lam (z - z~) + g)`` where ``g`` is
    the full gradient at ``z~`` including its ``lam z~``; then ``z <- H_{s_keep}(z)`` when
    ``thr_every > 0`` and ``(j + 1) % thr_every == 0``; every ``rec_every`` steps a checkpoint:
    the mean of the sampled ``f_i(w_i z)`` (margins before each step) since the previous one
    and a copy of ``z``.  A margin with ``not |a| < huge`` stops the epoch before step ``j``.

    Returns a dict: ``z``, ``steps``, ``status`` (1: stopped), ``events`` (rows of
    ``(step, entered, left)``), ``keep`` (last kept set, ascending), ``rec``, ``snaps``.
    """
    W = _dense(W)
    z = np.array(z0, dtype=np.float64)
    zt = z.copy()
    snap_dl = dl(W @ zt, y, loss)
    prev = np.asarray(prev, dtype=np.int64)
    events, rec, snaps, window = [], [], [], []
    status, steps = 0, len(idx)
    for j, i in enumerate(idx):
        w = W[i]
        a = float(w @ z)
        if not abs(a) < huge:
            status, steps = 1, j
            break
        window.append(float(sample_loss(a, y[i], loss)))
        c = float(dl(a, y[i], loss)) - snap_dl[i]
        z = z - eta * (c * w + lam * (z - zt) + g)
        if thr_every > 0 and (j + 1) % thr_every == 0:
            keep = top_k_ref(z, s_keep)
            z = hard_threshold_ref(z, s_keep)
            events.append((j + 1, *_events_between(prev, keep)))
            prev = keep
        if rec_every > 0 and (j + 1) % rec_every == 0:
            rec.append(float(np.mean(window)))
            window = []
            snaps.append(z.copy())
    return {"z": z, "steps": steps, "status": status,
            "events": np.array(events, dtype=np.int64).reshape(-1, 3),
            "keep": np.sort(prev), "rec": np.array(rec),
            "snaps": np.array(snaps).reshape(-1, z.shape[0])}


def sg_epoch(W, y, loss, z0, idx, batch, eta, s_keep, lam=0.0, rec_every=0, prev=(),
             huge=1e150):
    """SG-HT's inner loop: ``z <- H_s(z - eta (mean_b f_b'(w_b z) w_b + lam z))`` for the
    consecutive mini-batches of ``idx``; checkpoints as in :func:`svrg_epoch` (one per
    ``rec_every`` steps, the mean over the samples of those steps)."""
    W = _dense(W)
    z = np.array(z0, dtype=np.float64)
    prev = np.asarray(prev, dtype=np.int64)
    n_steps = len(idx) // batch
    events, rec, snaps, window = [], [], [], []
    status, steps = 0, n_steps
    for j in range(n_steps):
        rows = idx[j * batch:(j + 1) * batch]
        a = W[rows] @ z
        bad = np.flatnonzero(~(np.abs(a) < huge))
        if bad.size:
            status, steps = 1, j
            break
        window.extend(float(v) for v in sample_loss(a, y[rows], loss))
        gb = W[rows].T @ dl(a, y[rows], loss) / batch
        keep = top_k_ref(z - eta * (gb + lam * z), s_keep)
        z = hard_threshold_ref(z - eta * (gb + lam * z), s_keep)
        events.append((j + 1, *_events_between(prev, keep)))
        prev = keep
        if rec_every > 0 and (j + 1) % rec_every == 0:
            rec.append(float(np.mean(window)))
            window = []
            snaps.append(z.copy())
    return {"z": z, "steps": steps, "status": status,
            "events": np.array(events, dtype=np.int64).reshape(-1, 3),
            "keep": np.sort(prev), "rec": np.array(rec),
            "snaps": np.array(snaps).reshape(-1, z.shape[0])}


# -- the six methods --------------------------------------------------------------------------


def fght(W, y, loss, s, eta, n_iter, x0=None, lam=0.0):
    """FG-HT: ``x <- H_s(x - eta * grad F(x))``."""
    W = _dense(W)
    x = _start(W.shape[1], s, x0)
    xs = [x.copy()]
    for _ in range(n_iter):
        x = hard_threshold_ref(x - eta * grad(W, y, x, loss, lam), s)
        xs.append(x.copy())
    return {"x": xs}


def grasp_squares(W, y, s, n_iter, x0=None):
    """GraSP for least squares: exact restricted least squares on ``T``."""
    W = _dense(W)
    d = W.shape[1]
    x = _start(d, s, x0)
    out = {"x": [x.copy()], "Z": [], "T": [], "b": []}
    for _ in range(n_iter):
        g = grad(W, y, x, "squares")
        Z, T = _support_pursuit(g, x, s)
        b = np.zeros(d)
        b[T] = np.linalg.lstsq(W[:, T], y, rcond=None)[0]
        x = hard_threshold_ref(b, s)
        out["x"].append(x.copy())
        out["Z"].append(Z)
        out["T"].append(T)
        out["b"].append(b)
    return out


def minimiser_probe_squares(W, y, x, s):
    """The end-of-run status probe for least squares (no ridge): one GraSP step from ``x``
    -- ``T = supp(grad F(x), 2s) ∪ supp(x)``, ``lstsq`` on ``T``, its ``s`` largest entries
    ``S``, ``lstsq`` on ``S`` -- and ``lstsq`` on ``supp(x)``.  Returns
    ``(F on S, F on supp(x), S)``."""
    W = _dense(W)
    d = W.shape[1]

    def fit(cols):
        z = np.zeros(d)
        z[cols] = np.linalg.lstsq(W[:, cols], y, rcond=None)[0]
        return z

    _, T = _support_pursuit(grad(W, y, x, "squares"), x, s)
    S = top_k_ref(fit(T), s)
    own = np.flatnonzero(x)
    return (objective(W, y, fit(S), "squares"), objective(W, y, fit(own), "squares"), S)


def grasp_logistic_subproblem(W, y, T, z0):
    """Minimise the logistic objective over the coordinates ``T`` (BFGS, tight tolerance)."""
    WT = _dense(W)[:, T]
    n = WT.shape[0]

    def fun(z):
        a = WT @ z
        return float(np.mean(np.logaddexp(0.0, -y * a))), WT.T @ dl(a, y, "logistic") / n

    res = scipy.optimize.minimize(fun, z0, jac=True, method="BFGS",
                                  options={"gtol": 1e-12, "maxiter": 2000})
    return res.x


def sght(W, y, loss, s, eta, n_iter, batch, random_state, x0=None, lam=0.0):
    """SG-HT: ``n_steps`` mini-batch steps, each followed by ``H_s``."""
    W = _dense(W)
    n, d = W.shape
    rng = np.random.default_rng(random_state)
    n_steps = max(1, n // batch)
    x = _start(d, s, x0)
    xs = [x.copy()]
    for _ in range(n_iter):
        idx = rng.integers(0, n, size=n_steps * batch)
        z = x.copy()
        for j in range(n_steps):
            rows = idx[j * batch : (j + 1) * batch]
            Wb = W[rows]
            gb = Wb.T @ dl(Wb @ z, y[rows], loss) / batch
            z = hard_threshold_ref(z - eta * (gb + lam * z), s)
        x = z
        xs.append(x.copy())
    return {"x": xs}


def svrght(W, y, loss, s, eta, n_iter, J, random_state, x0=None, lam=0.0):
    """SVRGHT: SVRG epochs with ``H_s`` after every inner step; the new snapshot is ``z^J``."""
    W = _dense(W)
    n, d = W.shape
    rng = np.random.default_rng(random_state)
    x = _start(d, s, x0)
    xs = [x.copy()]
    for _ in range(n_iter):
        g = grad(W, y, x, loss, lam)
        idx = rng.integers(0, n, size=J)
        x_snap = x.copy()
        z = x.copy()
        for i in idx:
            w = W[i]
            c = dl(w @ z, y[i], loss) - dl(w @ x_snap, y[i], loss)
            z = hard_threshold_ref(z - eta * (c * w + lam * (z - x_snap) + g), s)
        x = z
        xs.append(x.copy())
    return {"x": xs}


def svrgsp(W, y, loss, s, eta, n_iter, J, m, random_state, inner="restricted", plus=False,
           x0=None, lam=0.0):
    """SVRGSP / SVRGSP+ (Algorithm 1 with Algorithm 2 as the sub-problem solver).

    With ``lam > 0`` the objective is ``F + (lam / 2) ||x||^2`` and every component carries
    the ridge term: an inner step is ``z <- z - eta (c w_i + lam (z - z~) + g)`` with ``g``
    the full gradient at the snapshot ``z~`` (ridge included).

    ``inner="restricted"``: ``z`` lives on ``T`` (``H_|T|`` of SVRGSP+ keeps everything).
    ``inner="full"``: ``z`` lives on all ``d`` coordinates; SVRGSP+ applies
    ``z <- H_|T|(z)`` after step ``j`` whenever ``(j + 1) % ceil(J / m) == 0``; at the end
    ``b = z`` zeroed outside ``T``.
    """
    W = _dense(W)
    n, d = W.shape
    rng = np.random.default_rng(random_state)
    every = math.ceil(J / m)
    x = _start(d, s, x0)
    out = {"x": [x.copy()], "Z": [], "T": [], "b": []}
    for _ in range(n_iter):
        g = grad(W, y, x, loss, lam)
        Z, T = _support_pursuit(g, x, s)
        idx = rng.integers(0, n, size=J)
        b = np.zeros(d)
        if inner == "restricted":
            WT = W[:, T]
            z = x[T].copy()
            for j, i in enumerate(idx):
                c = dl(WT[i] @ z, y[i], loss) - dl(W[i] @ x, y[i], loss)
                z = z - eta * (c * WT[i] + lam * (z - x[T]) + g[T])
                if plus and (j + 1) % every == 0:
                    z = hard_threshold_ref(z, len(T))  # keeps all |T| coordinates
            b[T] = z
        else:
            z = x.copy()
            for j, i in enumerate(idx):
                w = W[i]
                c = dl(w @ z, y[i], loss) - dl(w @ x, y[i], loss)
                z = z - eta * (c * w + lam * (z - x) + g)
                if plus and (j + 1) % every == 0:
                    z = hard_threshold_ref(z, len(T))
            b[T] = z[T]
        x = hard_threshold_ref(b, s)
        out["x"].append(x.copy())
        out["Z"].append(Z)
        out["T"].append(T)
        out["b"].append(b)
    return out


def run(method, W, y, loss, *, s, eta, n_iter, J=None, m=None, batch=None,
        random_state=None, inner="restricted", x0=None, lam=0.0):
    """Dispatch by package method name (grasp: least squares only, ``lam = 0`` only).

    ``inner`` accepts the package's reading names too ("paper" = "full", "on_T" =
    "restricted")."""
    inner = {"paper": "full", "on_T": "restricted"}.get(inner, inner)
    if method == "fght":
        return fght(W, y, loss, s, eta, n_iter, x0=x0, lam=lam)
    if method == "grasp":
        if loss != "squares" or lam:
            raise ValueError("the reference GraSP iteration is for least squares, lam = 0")
        return grasp_squares(W, y, s, n_iter, x0=x0)
    if method == "sght":
        return sght(W, y, loss, s, eta, n_iter, batch, random_state, x0=x0, lam=lam)
    if method == "svrght":
        return svrght(W, y, loss, s, eta, n_iter, J, random_state, x0=x0, lam=lam)
    if method in ("svrgsp", "svrgsp+"):
        return svrgsp(W, y, loss, s, eta, n_iter, J, m, random_state, inner=inner,
                      plus=method == "svrgsp+", x0=x0, lam=lam)
    raise ValueError(f"unknown method {method!r}")
