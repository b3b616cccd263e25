"""The epoch kernels against a literal NumPy transcription of one epoch
(tests/_support/numpy_reference.py).

The dense SVRG kernel applies the constant part ``-eta * g`` of a step lazily and fuses each
step's update with the next step's margin (one sweep of the iterate per step); SVRGHT
(``H_s`` after every step) forms the margin from the kept coordinates only.  None of this
may change the run beyond rounding: every kernel, fed the same index sequence as the
reference, must give the same iterate (to 1e-10 relative), the same thresholding events,
checkpoint losses and snapshots, and stop at the same step when a margin blows up.  Cases
cover the configurations the methods use: SVRGSP / SVRGSP+ in the paper's reading (``z`` on
all ``d`` coordinates, ``H_|T|`` every ``ceil(J/m)`` steps, m = 1, 6 and J), the on-T reading
(``p = |T|`` columns of a wider buffer), SVRGHT, SG-HT; dense and CSR; both losses;
recording on, off and with snapshots.
"""

from __future__ import annotations

import math

import numpy as np
import numpy_reference as ref
import pytest
import scipy.sparse as sp

import rgrasp_viz as rv
from rgrasp_viz import _kernels as K
from rgrasp_viz._problems import make_classification, make_regression
from rgrasp_viz.solvers._common import NO_FORCED, Workspace, csr_arrays

RTOL = 1e-10
LOSSES = {"squares": 0, "logistic": 1}


def _data(loss, n=60, d=90, density=None, seed=0):
    """W (dense or CSR), y and an s-sparse snapshot point x with nonzero entries."""
    rng = np.random.default_rng(seed)
    if density is None:
        W = rng.standard_normal((n, d))
    else:
        W = sp.random(n, d, density=density, format="csr", random_state=rng,
                      data_rvs=rng.standard_normal)
        W.sort_indices()
    if loss == "squares":
        y = rng.standard_normal(n)
    else:
        y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    x = np.zeros(d)
    x[rng.choice(d, 8, replace=False)] = rng.standard_normal(8)
    return W, y, x


def _eta(W, factor=0.3):
    Wd = W.toarray() if sp.issparse(W) else W
    return factor / float(np.mean(np.sum(Wd * Wd, axis=1)))


def _svrg(X, y, loss, z0, g, idx, eta, thr_every, s_keep, rec_every, snap, prev,
          track=True, p=None, lam=0.0):
    """Run the SVRG epoch kernel (dense array or CSR matrix ``X``) on a copy of ``z0``."""
    p = z0.shape[0] if p is None else p
    ws = Workspace(p, len(idx), rec_every)
    n_prev = ws.set_prev(prev)
    snaps = ws.snap_buffer(p, snap)
    z = z0.copy()
    Xd = X.toarray() if sp.issparse(X) else X
    snap_dl = ref.dl(Xd[:, :p] @ z0, y, loss)
    common = (y, LOSSES[loss], z, g, snap_dl, np.asarray(idx, dtype=np.int64), eta, lam,
              thr_every, s_keep, ws.keep_idx, ws.prev_idx, n_prev, ws.cand, ws.mags, ws.vbuf,
              ws.ev_step, ws.ev_in, ws.ev_out, track, rec_every, ws.rec_loss, snaps, ws.stop,
              NO_FORCED)
    if sp.issparse(X):
        out = K.svrg_epoch_csr(*csr_arrays(X), *common)
    else:
        out = K.svrg_epoch_dense(X, *common)
    steps, n_ev, n_rec, n_prev, status = (int(v) for v in out)
    return {"z": z, "steps": steps, "status": status, "n_ev": n_ev,
            "events": np.stack([ws.ev_step[:n_ev], ws.ev_in[:n_ev], ws.ev_out[:n_ev]], 1),
            "keep": ws.keep_idx[:n_prev].copy() if n_ev else None,
            "rec": ws.rec_loss[:n_rec].copy(), "snaps": snaps[:n_rec].copy()}


def _close(a, b, rtol=RTOL):
    """Arrays equal to ``rtol`` relative to the size of ``b`` (entries near 0 included)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    scale = max(float(np.max(np.abs(b))) if b.size else 0.0, 1e-300)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * scale)


def _assert_matches(got, want, track=True):
    assert (got["steps"], got["status"]) == (want["steps"], want["status"])
    _close(got["z"], want["z"])
    assert got["n_ev"] == len(want["events"])
    if track:  # untracked events are only counted
        np.testing.assert_array_equal(got["events"], want["events"])
    if len(want["events"]):
        np.testing.assert_array_equal(got["keep"], want["keep"])
    _close(got["rec"], want["rec"])
    if got["snaps"].shape[0]:
        _close(got["snaps"], want["snaps"])


# (thr_every, s_keep, rec_every, snapshots): the configurations the methods use
J = 200
SVRG_CASES = {
    "svrgsp": (0, 24, 0, False),
    "svrgsp-checkpoints": (0, 24, 9, False),
    "svrgsp-snapshots": (0, 24, 9, True),
    "svrgsp+-m6": (math.ceil(J / 6), 24, 0, False),
    "svrgsp+-m6-snapshots": (math.ceil(J / 6), 24, 10, True),  # an event and a checkpoint
    "svrgsp+-m7": (math.ceil(J / 7), 24, 13, True),  # steps after the last event
    "svrgsp+-m1": (J, 24, 0, False),  # m = 1: one H_|T|, after the last step
    "svrgsp+-mJ": (1, 24, 7, True),  # m = J: H_|T| after every step
    "svrght": (1, 8, 10, True),
}


@pytest.mark.parametrize("lam", [0.0, 0.7], ids=["lam0", "ridge"])
@pytest.mark.parametrize("loss", ["squares", "logistic"])
@pytest.mark.parametrize("storage", ["dense", "csr"])
@pytest.mark.parametrize("case", list(SVRG_CASES))
def test_svrg_epoch_matches_reference(case, storage, loss, lam):
    thr_every, s_keep, rec_every, snap = SVRG_CASES[case]
    W, y, x = _data(loss, density=0.08 if storage == "csr" else None, seed=1)
    g = ref.grad(W.toarray() if sp.issparse(W) else W, y, x, loss, lam)
    idx = np.random.default_rng(2).integers(0, W.shape[0], size=J)
    eta = _eta(W)
    prev = np.flatnonzero(x)
    want = ref.svrg_epoch(W, y, loss, x, g, idx, eta, lam=lam, thr_every=thr_every,
                          s_keep=s_keep, rec_every=rec_every, prev=prev)
    got = _svrg(W, y, loss, x, g, idx, eta, thr_every, s_keep, rec_every, snap, prev,
                lam=lam)
    _assert_matches(got, want)
    if lam:  # the ridge term really changes the epoch
        plain = ref.svrg_epoch(W, y, loss, x, g, idx, eta, thr_every=thr_every,
                               s_keep=s_keep, rec_every=rec_every, prev=prev)
        assert np.linalg.norm(plain["z"] - want["z"]) > 1e-3 * np.linalg.norm(want["z"])
    assert np.linalg.norm(want["z"] - x) > 0.01 * np.linalg.norm(x)  # z really moved
    if thr_every:
        assert len(want["events"]) == J // thr_every > 0
    if snap:  # snapshots only read the state: bit-identical run without them
        plain = _svrg(W, y, loss, x, g, idx, eta, thr_every, s_keep, rec_every, False, prev,
                      lam=lam)
        np.testing.assert_array_equal(plain["z"], got["z"])
        np.testing.assert_array_equal(plain["events"], got["events"])
        np.testing.assert_array_equal(plain["rec"], got["rec"])


@pytest.mark.parametrize("storage", ["dense", "csr"])
@pytest.mark.parametrize("case", ["svrgsp-snapshots", "svrgsp+-m6-snapshots", "svrght"])
def test_svrg_epoch_without_tracking(case, storage):
    """``record=False``: the same run; events counted, not written."""
    thr_every, s_keep, rec_every, snap = SVRG_CASES[case]
    W, y, x = _data("squares", density=0.08 if storage == "csr" else None, seed=3)
    g = ref.grad(W.toarray() if sp.issparse(W) else W, y, x, "squares")
    idx = np.random.default_rng(4).integers(0, W.shape[0], size=J)
    eta, prev = _eta(W), np.flatnonzero(x)
    want = ref.svrg_epoch(W, y, "squares", x, g, idx, eta, thr_every=thr_every,
                          s_keep=s_keep, rec_every=rec_every, prev=prev)
    got = _svrg(W, y, "squares", x, g, idx, eta, thr_every, s_keep, rec_every, snap, prev,
                track=False)
    _assert_matches(got, want, track=False)
    tracked = _svrg(W, y, "squares", x, g, idx, eta, thr_every, s_keep, rec_every, snap,
                    prev)
    np.testing.assert_array_equal(got["z"], tracked["z"])


@pytest.mark.parametrize("loss", ["squares", "logistic"])
@pytest.mark.parametrize("thr_every", [0, 17, 1], ids=["svrgsp", "svrgsp+", "every-step"])
def test_on_T_reading_reads_only_the_first_p_columns(thr_every, loss):
    """The on-T reading passes ``W[:, T]`` inside a wider buffer (``WorkingColumns``): the
    kernel must use its first ``p = |T|`` columns only (the rest is NaN here)."""
    W, y, x = _data(loss, n=50, d=30, seed=5)
    p, cap = 30, 41
    B = np.full((W.shape[0], cap), np.nan)
    B[:, :p] = W
    g = ref.grad(W, y, x, loss)
    idx = np.random.default_rng(6).integers(0, W.shape[0], size=150)
    eta = _eta(W)
    all_p = np.arange(p)
    want = ref.svrg_epoch(W, y, loss, x, g, idx, eta, thr_every=thr_every, s_keep=p,
                          rec_every=11, prev=all_p)
    got = _svrg(B, y, loss, x, g, idx, eta, thr_every, p, 11, True, all_p)
    _assert_matches(got, want)
    assert np.all(np.isfinite(got["z"])) and np.all(np.isfinite(got["snaps"]))


@pytest.mark.parametrize("storage", ["dense", "csr"])
@pytest.mark.parametrize("thr_every", [0, 40, 1], ids=["svrgsp", "svrgsp+", "svrght"])
def test_svrg_epoch_divergence_stop(thr_every, storage):
    """A margin that blows up stops the epoch at that step, ``z`` as it was before it.

    Without thresholding after every step the constant term ``g`` is made huge (any vector
    is a valid input), so at the stop most of ``z`` is pending drift ``-D g``, which must be
    applied; SVRGHT diverges through a step size far too large."""
    W, y, x = _data("squares", density=0.15 if storage == "csr" else None, seed=7)
    g = ref.grad(W.toarray() if sp.issparse(W) else W, y, x, "squares")
    if thr_every != 1:
        g *= 1e146
    idx = np.random.default_rng(8).integers(0, W.shape[0], size=5000)
    eta = _eta(W, 4.0 if thr_every != 1 else 40.0)
    s_keep = 8 if thr_every == 1 else 60
    prev = np.flatnonzero(x)
    want = ref.svrg_epoch(W, y, "squares", x, g, idx, eta, thr_every=thr_every,
                          s_keep=s_keep, rec_every=25, prev=prev)
    got = _svrg(W, y, "squares", x, g, idx, eta, thr_every, s_keep, 25, False, prev)
    assert want["status"] == 1 and 0 < want["steps"] < len(idx)
    assert (got["steps"], got["status"]) == (want["steps"], want["status"])
    _close(got["z"], want["z"], rtol=1e-8)  # values near 1e150: relative agreement
    np.testing.assert_array_equal(got["events"], want["events"])


@pytest.mark.parametrize("storage", ["dense", "csr"])
def test_svrg_epoch_empty_and_single_step(storage):
    W, y, x = _data("logistic", density=0.2 if storage == "csr" else None, seed=9)
    g = ref.grad(W.toarray() if sp.issparse(W) else W, y, x, "logistic")
    eta, prev = _eta(W), np.flatnonzero(x)
    empty = _svrg(W, y, "logistic", x, g, np.zeros(0, dtype=np.int64), eta, 0, 5, 0, False,
                  prev)
    assert empty["steps"] == 0 and empty["status"] == 0
    np.testing.assert_array_equal(empty["z"], x)
    for thr_every in (0, 1):
        want = ref.svrg_epoch(W, y, "logistic", x, g, [4], eta, thr_every=thr_every,
                              s_keep=5, rec_every=1, prev=prev)
        got = _svrg(W, y, "logistic", x, g, [4], eta, thr_every, 5, 1, True, prev)
        _assert_matches(got, want)


def test_svrg_epoch_long_lazy_epoch_dense():
    """J = 20 000 steps with d = 1500 and no event: the pending drift spans the whole epoch."""
    W, y, x = _data("logistic", n=300, d=1500, seed=10)
    g = ref.grad(W, y, x, "logistic")
    idx = np.random.default_rng(11).integers(0, 300, size=20_000)
    eta = _eta(W, 0.2)
    want = ref.svrg_epoch(W, y, "logistic", x, g, idx, eta)
    got = _svrg(W, y, "logistic", x, g, idx, eta, 0, 30, 0, False, np.flatnonzero(x))
    _close(got["z"], want["z"], rtol=1e-9)


# -- SG-HT ------------------------------------------------------------------------------------


def _sg(X, y, loss, z0, idx, batch, eta, s_keep, rec_every, snap, prev, lam=0.0):
    p = z0.shape[0]
    ws = Workspace(p, len(idx) // batch, rec_every)
    n_prev = ws.set_prev(prev)
    snaps = ws.snap_buffer(p, snap)
    z = z0.copy()
    common = (y, LOSSES[loss], z, np.asarray(idx, dtype=np.int64), batch, eta, lam, s_keep,
              np.zeros(p), ws.keep_idx, ws.prev_idx, n_prev, ws.cand, ws.mags, ws.vbuf,
              ws.ev_step, ws.ev_in, ws.ev_out, True, rec_every, ws.rec_loss, snaps, NO_FORCED)
    if sp.issparse(X):
        out = K.sg_epoch_csr(*csr_arrays(X), *common)
    else:
        out = K.sg_epoch_dense(X, *common)
    steps, n_ev, n_rec, n_prev, status = (int(v) for v in out)
    return {"z": z, "steps": steps, "status": status, "n_ev": n_ev,
            "events": np.stack([ws.ev_step[:n_ev], ws.ev_in[:n_ev], ws.ev_out[:n_ev]], 1),
            "keep": ws.keep_idx[:n_prev].copy() if n_ev else None,
            "rec": ws.rec_loss[:n_rec].copy(), "snaps": snaps[:n_rec].copy()}


@pytest.mark.parametrize("lam", [0.0, 2.0], ids=["lam0", "ridge"])
@pytest.mark.parametrize("loss", ["squares", "logistic"])
@pytest.mark.parametrize("storage", ["dense", "csr"])
def test_sg_epoch_matches_reference(storage, loss, lam):
    W, y, x = _data(loss, density=0.08 if storage == "csr" else None, seed=12)
    idx = np.random.default_rng(13).integers(0, W.shape[0], size=7 * 8)
    eta, prev = _eta(W), np.flatnonzero(x)
    want = ref.sg_epoch(W, y, loss, x, idx, 7, eta, 8, lam=lam, rec_every=3, prev=prev)
    got = _sg(W, y, loss, x, idx, 7, eta, 8, 3, True, prev, lam=lam)
    _assert_matches(got, want)
    assert len(want["events"]) == 8
    if lam:
        plain = ref.sg_epoch(W, y, loss, x, idx, 7, eta, 8, rec_every=3, prev=prev)
        assert np.linalg.norm(plain["z"] - want["z"]) > 1e-3 * np.linalg.norm(want["z"])


# -- whole solves where the lazy dense path matters (d > n, long epochs) ----------------------


def _problem(loss, seed):
    if loss == "squares":
        return make_regression(n=70, d=160, s_star=5, noise_var=0.01, random_state=seed)
    return make_classification(n=70, d=160, s_star=5, signal=1.0, random_state=seed)


SOLVE_CASES = [(meth, m, inner) for meth, m in [("svrgsp", 6), ("svrgsp+", 1), ("svrgsp+", 6),
                                                 ("svrgsp+", 300)]
               for inner in ("paper", "on_T")] + [("svrght", 6, "paper")]


@pytest.mark.parametrize("loss", ["squares", "logistic"])
@pytest.mark.parametrize("method, m, inner", SOLVE_CASES)
@pytest.mark.parametrize("record", ["off", "on", "iterates"])
def test_dense_solve_matches_reference(method, m, inner, loss, record):
    prob = _problem(loss, seed=21)
    s, J, n_iter = 6, 300, 4
    eta = 0.4 / float(np.mean(np.sum(prob.W ** 2, axis=1)))
    res = rv.solve(prob, method=method, s=s, eta=eta, J=J, m=m, max_iter=n_iter, tol=0,
                   ftol=0, random_state=4, inner=inner, warn=False, record=record != "off",
                   record_iterates=record == "iterates", record_every=23)
    assert res.nit == n_iter, res.message
    out = ref.run(method, prob.W, prob.y, loss, s=s, eta=eta, n_iter=n_iter, J=J, m=m,
                  random_state=4, inner="full" if inner == "paper" else "restricted")
    for t in range(n_iter + 1):
        _close(res.trace.x(t), out["x"][t])
    if method != "svrght":
        for t in range(1, n_iter + 1):
            np.testing.assert_array_equal(res.trace.T(t), out["T"][t - 1])
            _close(res.trace.b(t), out["b"][t - 1])
    assert np.count_nonzero(out["x"][n_iter]) > 0


# -- the ridge term (lam > 0): scaled lazy state, its resynchronisation, whole methods ------


@pytest.mark.parametrize("storage", ["dense", "csr"])
@pytest.mark.parametrize("eta_lam", [0.15, 1.0, 1.3], ids=["rescale", "beta0", "beta<0"])
@pytest.mark.parametrize("thr_every, rec_every", [(0, 0), (90, 40)],
                         ids=["svrgsp", "svrgsp+-snapshots"])
def test_ridge_scale_resynchronisation(thr_every, rec_every, eta_lam, storage):
    """``sig = (1 - eta lam)^k`` falls below 1e-9 within the epoch (every ~140 steps at
    eta lam = 0.15; at once when 1 - eta lam is 0 or negative): the kernels take such
    steps eagerly and restart the clock, and still follow the eager reference."""
    W, y, x = _data("logistic", density=0.1 if storage == "csr" else None, seed=14)
    eta = _eta(W)
    lam = eta_lam / eta
    g = ref.grad(W.toarray() if sp.issparse(W) else W, y, x, "logistic", lam)
    idx = np.random.default_rng(15).integers(0, W.shape[0], size=600)
    prev = np.flatnonzero(x)
    want = ref.svrg_epoch(W, y, "logistic", x, g, idx, eta, lam=lam, thr_every=thr_every,
                          s_keep=20, rec_every=rec_every, prev=prev)
    got = _svrg(W, y, "logistic", x, g, idx, eta, thr_every, 20, rec_every, rec_every > 0,
                prev, lam=lam)
    _assert_matches(got, want)
    assert (1 - eta_lam) ** 150 < 1e-9  # the scale really would have underflowed


@pytest.mark.parametrize("storage", ["dense", "csr"])
@pytest.mark.parametrize("thr_every", [0, 40], ids=["svrgsp", "svrgsp+"])
def test_ridge_divergence_stop(thr_every, storage):
    """The divergence stop materialises the scaled lazy state (``sig u - D h``)."""
    W, y, x = _data("squares", density=0.15 if storage == "csr" else None, seed=16)
    eta = _eta(W, 4.0)
    lam = 0.01 / eta
    g = 1e146 * ref.grad(W.toarray() if sp.issparse(W) else W, y, x, "squares", lam)
    idx = np.random.default_rng(17).integers(0, W.shape[0], size=5000)
    prev = np.flatnonzero(x)
    want = ref.svrg_epoch(W, y, "squares", x, g, idx, eta, lam=lam, thr_every=thr_every,
                          s_keep=60, rec_every=25, prev=prev)
    got = _svrg(W, y, "squares", x, g, idx, eta, thr_every, 60, 25, False, prev, lam=lam)
    assert want["status"] == 1 and 0 < want["steps"] < len(idx)
    assert (got["steps"], got["status"]) == (want["steps"], want["status"])
    _close(got["z"], want["z"], rtol=1e-8)


@pytest.mark.parametrize("loss", ["squares", "logistic"])
def test_ridge_on_T_buffer(loss):
    W, y, x = _data(loss, n=50, d=30, seed=18)
    B = np.full((W.shape[0], 37), np.nan)
    B[:, :30] = W
    lam = 0.5
    g = ref.grad(W, y, x, loss, lam)
    idx = np.random.default_rng(19).integers(0, W.shape[0], size=150)
    eta = _eta(W)
    all_p = np.arange(30)
    want = ref.svrg_epoch(W, y, loss, x, g, idx, eta, lam=lam, thr_every=17, s_keep=30,
                          rec_every=11, prev=all_p)
    got = _svrg(B, y, loss, x, g, idx, eta, 17, 30, 11, True, all_p, lam=lam)
    _assert_matches(got, want)


@pytest.mark.parametrize("loss", ["squares", "logistic"])
@pytest.mark.parametrize("storage", ["dense", "csr"])
def test_ridge_epochs_reach_the_ridge_minimiser(storage, loss):
    """Repeated SVRG epochs with the ridge term (all coordinates, no thresholding) converge to
    the minimiser of ``mean f_i + (lam / 2) ||x||^2`` -- a closed form for least squares,
    L-BFGS for the logistic loss -- which differs from the unregularised one."""
    import scipy.optimize

    W, y, _ = _data(loss, n=80, d=12, density=0.5 if storage == "csr" else None, seed=20)
    Wd = W.toarray() if sp.issparse(W) else W
    n, d = Wd.shape
    lam = 0.3
    if loss == "squares":
        x_star = np.linalg.solve(Wd.T @ Wd / n + lam * np.eye(d), Wd.T @ y / n)
    else:
        res = scipy.optimize.minimize(
            lambda v: (ref.objective(Wd, y, v, loss, lam), ref.grad(Wd, y, v, loss, lam)),
            np.zeros(d), jac=True, method="L-BFGS-B", options={"gtol": 1e-12, "ftol": 0})
        x_star = res.x
    rng = np.random.default_rng(21)
    x = np.zeros(d)
    for _ in range(60):
        g = ref.grad(Wd, y, x, loss, lam)
        idx = rng.integers(0, n, size=2 * n)
        x = _svrg(W, y, loss, x, g, idx, _eta(W, 0.2), 0, d, 0, False, np.arange(d),
                  lam=lam)["z"]
    np.testing.assert_allclose(x, x_star, rtol=0, atol=1e-8 * np.linalg.norm(x_star))
    assert np.linalg.norm(ref.grad(Wd, y, x_star, loss)) > 1e-2  # lam = 0 is elsewhere


def _kernel_method(method, W, y, loss, *, s, eta, lam, n_iter, J, m, batch, seed, inner):
    """The methods with the ridge term, their inner loops run by the epoch kernels: what the
    solver does once it passes ``lam`` (full gradient ``+ lam x``; the package's
    random-index protocol)."""
    Wd = W.toarray() if sp.issparse(W) else W
    n, d = Wd.shape
    rng = np.random.default_rng(seed)
    x = np.zeros(d)
    xs = [x.copy()]
    for _ in range(n_iter):
        if method == "sght":
            idx = rng.integers(0, n, size=max(1, n // batch) * batch)
            x = _sg(W, y, loss, x, idx, batch, eta, s, 0, False, np.flatnonzero(x),
                    lam=lam)["z"]
        else:
            g = ref.grad(Wd, y, x, loss, lam)
            if method == "svrght":
                idx = rng.integers(0, n, size=J)
                x = _svrg(W, y, loss, x, g, idx, eta, 1, s, 0, False, np.flatnonzero(x),
                          lam=lam)["z"]
            else:
                _, T = ref._support_pursuit(g, x, s)
                idx = rng.integers(0, n, size=J)
                thr = math.ceil(J / m) if method == "svrgsp+" else 0
                b = np.zeros(d)
                if inner == "on_T":
                    WT = sp.csr_matrix(W[:, T]) if sp.issparse(W) else np.ascontiguousarray(
                        W[:, T])
                    b[T] = _svrg(WT, y, loss, x[T], g[T], idx, eta, thr, len(T), 0, False,
                                 np.arange(len(T)), lam=lam)["z"]
                else:
                    b[T] = _svrg(W, y, loss, x, g, idx, eta, thr, len(T), 0, False, T,
                                 lam=lam)["z"][T]
                x = ref.hard_threshold_ref(b, s)
        xs.append(x.copy())
    return xs


RIDGE_METHODS = [("svrgsp", "paper"), ("svrgsp", "on_T"), ("svrgsp+", "paper"),
                 ("svrgsp+", "on_T"), ("svrght", "paper"), ("sght", "paper")]


@pytest.mark.parametrize("loss", ["squares", "logistic"])
@pytest.mark.parametrize("storage", ["dense", "csr"])
@pytest.mark.parametrize("method, inner", RIDGE_METHODS)
def test_ridge_methods_match_reference(method, inner, storage, loss):
    prob = _problem(loss, seed=22)
    W = sp.csr_matrix(prob.W) if storage == "csr" else prob.W
    lam = 0.05
    eta = 0.4 / float(np.mean(np.sum(prob.W ** 2, axis=1)))
    kw = dict(s=6, eta=eta, n_iter=4, J=300, m=6, batch=7)
    got = _kernel_method(method, W, prob.y, loss, lam=lam, seed=5, inner=inner, **kw)
    want = ref.run(method, prob.W, prob.y, loss, random_state=5, inner=inner, lam=lam, **kw)
    plain = ref.run(method, prob.W, prob.y, loss, random_state=5, inner=inner, **kw)
    for t in range(kw["n_iter"] + 1):
        _close(got[t], want["x"][t])
    assert np.count_nonzero(want["x"][-1]) > 0
    assert np.linalg.norm(plain["x"][-1] - want["x"][-1]) > 1e-4 * np.linalg.norm(
        want["x"][-1])
