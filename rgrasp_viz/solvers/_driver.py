"""``solve``: validate once, then run the outer loop in Python around the Numba epochs."""

from __future__ import annotations

import math
import numbers
import platform
import time

import numpy as np

from .. import _kernels as K
from .. import losses
from ..problems import as_problem
from ..result import SolveResult, warn_max_iter
from ..trace import TraceBuilder
from ._common import Workspace, default_eta
from .registry import get_method, normalize_reading

EXPLODE_FACTOR = 1e6
"""A run whose objective exceeds ``EXPLODE_FACTOR * F(x0)`` is declared diverged."""


def _check_int(name, value, lo, hi=None):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < lo or (hi is not None and value > hi):
        rng = f"[{lo}, {hi}]" if hi is not None else f">= {lo}"
        raise ValueError(f"{name} must be in {rng}, got {value}")
    return value


def _check_positive_float(name, value):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be positive and finite, got {value}")
    return value


def _seed_repr(random_state):
    if random_state is None or isinstance(random_state, numbers.Integral):
        return None if random_state is None else int(random_state)
    return type(random_state).__name__


def _warmup(method, sparse, inner):
    """Compile (or load from Numba's on-disk cache) the kernels ``method`` needs, on a tiny
    problem, so that compilation never counts as solver time."""
    key = (method, sparse, inner)
    if key in _WARM:
        return
    from ..problems import Problem

    rng = np.random.default_rng(0)
    W = rng.standard_normal((8, 12))
    if sparse:
        import scipy.sparse as sp

        W = sp.csr_matrix(W)
    prob = Problem(W, rng.standard_normal(8))
    params = _params(prob, method, 2, 0.01, 8, 2, inner, 2, 4, True, True)
    ws = Workspace(prob.d, 8, 4)
    get_method(method).factory(prob, params, ws).step(np.zeros(prob.d),
                                                      np.random.default_rng(0))
    _WARM.add(key)


_WARM: set = set()


def _params(problem, method, s, eta, J, m, inner, batch_size, record_every, record,
            record_iterates):
    return {"method": method, "s": s, "eta": eta, "J": J, "m": m, "inner": inner,
            "batch_size": batch_size, "record_every": record_every, "record": bool(record),
            "record_iterates": bool(record_iterates), "sub_maxiter": 500}


def solve(problem, method="svrgsp+", *, s=None, eta=None, J=None, m=None, max_iter=None,
          tol=1e-7, ftol=1e-6, patience=None, x0=None, random_state=None, callback=None,
          inner="on_T", batch_size=None, record_every=None, record_iterates=False,
          record=True, max_events=1_000_000, loss=None, x_true=None, warn=True):
    """Solve ``min F(x) s.t. ||x||_0 <= s`` with one of the paper's six methods.

    Parameters
    ----------
    problem : Problem or tuple (W, y)
        The data.  Raw arrays are wrapped with :class:`~rgrasp_viz.Problem` (``loss``,
        ``x_true`` apply then).
    method : {"svrgsp+", "svrgsp", "svrght", "sght", "grasp", "fght"}
        Algorithm (dashes and case are ignored: ``"FG-HT"`` works).
    s : int, optional
        Sparsity level, ``1 <= s <= d``.  Default: ``round(1.2 * s*)`` when the problem
        knows its true solution (the paper's choice), otherwise required.
    eta : float, optional
        Step size.  Default: the rule of :func:`~rgrasp_viz.default_eta` (restricted
        smoothness from row/column norms, never the global Lipschitz constant).
    J : int, optional
        Inner steps per epoch for SVRGHT/SVRGSP/SVRGSP+ (default ``2n``).
    m : int, optional
        SVRGSP+: ``H_|T|`` is applied every ``ceil(J/m)`` inner steps, i.e.
        ``floor(J / ceil(J/m))`` times per epoch (``m`` times when ``m`` divides ``J``);
        ``1 <= m <= J``.  Default ``min(6, J)`` (the paper's ``m = 6``).
    max_iter : int, optional
        Maximum outer iterations (one full-gradient iteration, one SVRG epoch, or one pass of
        SG-HT).  Default 300 for FG-HT, 50 otherwise.
    tol : float, default 1e-7
        Converged when ``||x^t - x^{t-1}|| <= tol * max(||x^t||, ||x^{t-1}||)`` (a fixed
        point: FG-HT, GraSP and SVRGHT get there).
    ftol : float, default 1e-6
        Also stop when the best objective has not improved by more than ``ftol`` (relative)
        for ``patience`` iterations.  SVRGSP(+) and SG-HT need this: their inexact,
        stochastic steps keep swapping the smallest kept coordinates, so their iterates hover
        in a small neighbourhood instead of reaching a fixed point.  ``ftol=0`` disables it.
    patience : int, optional
        Iterations without an ``ftol`` improvement before the run counts as stagnated
        (``>= 1``).  Default 3 for SVRGSP(+), 5 otherwise (see ``DEFAULT_PATIENCE``).
    x0 : array_like, optional
        Starting point (default 0); ``H_s`` is applied to it.
    random_state : None, int or numpy.random.Generator
        Seeds the index sequence.  Protocol: one ``rng.integers(0, n, size=k)`` call per
        outer iteration (``k = J``, or ``n_steps * batch_size`` for SG-HT), in order.
    callback : callable, optional
        ``callback(intermediate_result)`` after every outer iteration with an
        ``OptimizeResult`` (x, fun, nit, passes, time, rel_error, support_size,
        n_thresholds); raise ``StopIteration`` to halt.
    inner : {"restricted", "full"}
        SVRGSP(+) only: where Algorithm 2's iterate lives (see :class:`~.methods.SVRGSP`).
    batch_size : int, optional
        SG-HT mini-batch size (default ``max(1, round(sqrt(n)))``: single samples stall).
    record_every : int, optional
        Inner checkpoint period in inner steps (default ``max(1, steps_per_epoch // 20)``).
    record_iterates : bool, default False
        Also store a copy of the iterate at every checkpoint (for step-by-step replay on
        classroom sizes).
    record : bool, default True
        Record inner thresholding events and checkpoints (False only to measure the
        recording overhead; per-iteration rows are always recorded).
    max_events : int, default 1_000_000
        Cap on stored thresholding events; beyond it per-iteration counts stay exact and
        ``trace.meta["events_truncated"]`` is set.
    loss : {"squares", "logistic"}, optional
        Loss for raw ``(W, y)`` input.
    x_true : array_like, optional
        Ground truth for raw input (enables ``rel_error``).
    warn : bool, default True
        Emit a :class:`~rgrasp_viz.ConvergenceWarning` when ``max_iter`` is reached.

    Returns
    -------
    SolveResult
        ``x, fun, nit, success, status, message, trace, passes, time, rel_error``.
        ``status``: 0 converged (``tol`` or ``ftol`` rule), 1 ``max_iter`` reached, 2 diverged
        (the objective became non-finite, exceeded ``EXPLODE_FACTOR * F(x0)``, or the run
        ended above ``F(x0)``; or GraSP met a logistic sub-problem on ``T`` with no finite
        minimiser, the samples being separable there; ``x`` is then the last iterate before
        the failing step, or the last one; the message names the likely cause), 99 stopped
        by the callback.
    """
    prob = as_problem(problem, loss=loss, x_true=x_true)
    spec = get_method(method)
    method = spec.name
    n, d = prob.n, prob.d
    if s is None:
        if prob.x_true is None:
            raise ValueError("s is required when the problem has no x_true")
        s = prob.default_s
    s = _check_int("s", s, 1, d)
    inner = normalize_reading(inner)
    J = 2 * n if J is None else _check_int("J", J, 1)
    m = min(6, J) if m is None else _check_int("m", m, 1)
    if m > J:
        raise ValueError(f"m must be <= J (got m={m}, J={J})")
    batch_size = (max(1, round(math.sqrt(n))) if batch_size is None
                  else _check_int("batch_size", batch_size, 1, n))
    eta_rule = "user"
    if eta is None:
        eta = default_eta(prob, method, s, inner, batch_size)
        eta_rule = "default"
    eta = _check_positive_float("eta", eta)
    max_iter = spec.max_iter if max_iter is None else _check_int("max_iter", max_iter, 1)
    for name, v in (("tol", tol), ("ftol", ftol)):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real) or not v >= 0:
            raise ValueError(f"{name} must be a non-negative number, got {v!r}")
    steps = {"sght": max(1, n // batch_size), "svrght": J, "svrgsp": J, "svrgsp+": J}.get(method, 0)
    record_every = (max(1, steps // 20) if record_every is None
                    else _check_int("record_every", record_every, 1))
    max_events = _check_int("max_events", max_events, 0)
    patience = (spec.patience if patience is None
                else _check_int("patience", patience, 1))
    if callback is not None and not callable(callback):
        raise TypeError("callback must be callable")
    if x0 is None:
        x = np.zeros(d)
    else:
        x0 = np.asarray(x0)
        if x0.dtype.kind not in "biuf":
            raise TypeError(f"x0 must be a real numeric array, got dtype {x0.dtype}")
        x0 = x0.astype(np.float64)
        if x0.shape != (d,):
            raise ValueError(f"x0 must have shape ({d},), got {x0.shape}")
        if not np.all(np.isfinite(x0)):
            raise ValueError("x0 contains NaN or inf")
        x = K.hard_threshold(x0, s)
    try:
        rng = np.random.default_rng(random_state)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"random_state must be None, a non-negative int or a "
                        f"numpy.random.Generator, got {random_state!r}") from exc

    params = _params(prob, method, s, eta, J, m, inner, batch_size, record_every, record,
                     record_iterates)
    _warmup(method, prob.is_sparse, inner)
    # record=False switches off inner recording entirely (events and checkpoints)
    ws = Workspace(d, steps, record_every if (spec.stochastic and record) else 0)
    impl = spec.factory(prob, params, ws)

    builder = TraceBuilder(d, prob.x_true, record_iterates, max_events)
    with np.errstate(over="ignore", invalid="ignore"):
        F0 = _objective(prob, x)
    builder.add_iteration(iteration=0, passes=0.0, time=0.0, objective=F0,
                          rel_error=prob.rel_error(x), x=x, n_thresholds=0)
    passes = solver_time = 0.0
    n_thr = 0
    fun = F0
    status, message = 1, f"maximum number of iterations ({max_iter}) reached"
    nit = 0
    best, since_best = F0, 0
    for t in range(1, max_iter + 1):
        t0 = time.perf_counter()
        out = impl.step(x, rng)
        solver_time += time.perf_counter() - t0
        # -- bookkeeping (not timed) --------------------------------------------------------
        passes += out.passes
        n_thr += out.n_thresholds
        with np.errstate(over="ignore", invalid="ignore"):
            F = _objective(prob, out.x) if np.all(np.isfinite(out.x)) else math.inf
        _record(builder, impl, prob, t, out, ws)
        builder.add_iteration(
            iteration=t, passes=passes, time=solver_time, objective=F,
            rel_error=prob.rel_error(out.x), x=out.x, n_thresholds=n_thr,
            inner_entered=int(ws.ev_in[: out.n_events].sum()) if record else 0,
            inner_left=int(ws.ev_out[: out.n_events].sum()) if record else 0,
            inner_steps=out.inner_steps, Z=out.Z, T=out.T, b_T=out.b_T)
        nit = t
        if out.status != 0 or not math.isfinite(F) or F > EXPLODE_FACTOR * max(F0, 1e-300):
            status = 2
            message = (f"diverged at iteration {t}: objective {F:.3g} (started at {F0:.3g}); "
                       + (out.message or _cause(method, eta)))
            break
        step_norm = float(np.linalg.norm(out.x - x))
        scale = max(float(np.linalg.norm(out.x)), float(np.linalg.norm(x)))
        x, fun = out.x, F
        if callback is not None:
            info = SolveResult(x=x.copy(), fun=F, nit=t, passes=passes, time=solver_time,
                               rel_error=prob.rel_error(x), support_size=int(np.count_nonzero(x)),
                               n_thresholds=n_thr, method=method)
            try:
                callback(info)
            except StopIteration:
                status, message = 99, "stopped by the callback (StopIteration)"
                break
        if step_norm <= tol * scale:
            status = 0
            message = f"converged: relative change {step_norm / max(scale, 1e-300):.2e} <= tol"
            break
        if F < best * (1.0 - ftol):
            best, since_best = F, 0
        else:
            since_best += 1
            if ftol > 0 and since_best >= patience:
                status = 0
                message = (f"converged: objective stagnated (no relative improvement > "
                           f"ftol={ftol:g} in {patience} iterations)")
                break
    if status in (0, 1) and fun > F0:
        # A too-large step can settle into a bounded oscillation far above F(x0), which the
        # stagnation rule alone would call converged; ending above the start is divergence.
        status = 2
        message = (f"diverged: the objective rose from {F0:.3g} to {fun:.3g} and did not come "
                   f"back down; {_cause(method, eta)}")
    if status == 1 and warn:
        warn_max_iter(method, max_iter)
    meta = {
        "method": method, "loss": prob.loss, "n": n, "sparse": bool(prob.is_sparse),
        "problem": getattr(prob, "name", None), "s": s, "eta": eta, "eta_rule": eta_rule,
        "J": J, "m": m, "inner": inner, "batch_size": batch_size, "record_every": record_every,
        "max_iter": max_iter, "tol": float(tol), "ftol": float(ftol), "patience": patience,
        "random_state": _seed_repr(random_state),
        "record_iterates": bool(record_iterates), "record": bool(record),
        "passes_head": impl.passes_head, "passes_per_step": impl.passes_per_step,
        "steps_per_iter": impl.steps_per_iter, "status": status, "message": message,
        "success": status == 0, "versions": _versions(),
    }
    trace = builder.finish(meta)
    return SolveResult(x=x, fun=fun, nit=nit, success=status == 0, status=status,
                       message=message, trace=trace, passes=passes, time=solver_time,
                       rel_error=prob.rel_error(x), method=method)


def _cause(method, eta):
    """The likely cause of a divergence, for the message."""
    if method == "grasp":  # no step size: the exact sub-problem is to blame
        return ("GraSP has no step size: its exact fit on T (up to 3s coordinates) does not "
                "survive the pruning to s entries on this problem (the restricted "
                "strong convexity / smoothness its analysis assumes fails here)")
    return f"the step size eta={eta:.3g} is too large"


def _objective(prob, x):
    """F(x) on an iterate the solver produced (already validated: skip Problem's checks)."""
    return losses.objective(prob.W, prob.y, x, prob.loss)


def _record(builder, impl, prob, t, out, ws):
    """Copy one iteration's inner events and checkpoints from the workspace into the trace."""
    if impl.p["record"] and out.n_events:
        k = out.n_events
        builder.add_events(t, ws.ev_step[:k], ws.ev_in[:k], ws.ev_out[:k], kind=0)
    if out.outer_event is not None:
        prev = builder.prev_support
        sup = np.flatnonzero(out.x)
        common = np.intersect1d(sup, prev, assume_unique=True).size
        builder.add_events(t, [out.outer_event], [len(sup) - common], [len(prev) - common],
                           kind=1)
    k = out.n_checkpoints
    if k:
        steps = (np.arange(1, k + 1) * ws.rec_every).astype(np.int64)
        snaps = objective = None
        if builder.record_iterates and out.snaps is not None:
            snaps = out.snaps
            if out.work_index is not None:  # working coordinates (T) -> all d coordinates
                full = np.zeros((k, prob.d))
                full[:, out.work_index] = snaps
                snaps = full
            with np.errstate(over="ignore", invalid="ignore"):
                objective = [_objective(prob, z) for z in snaps]
        builder.add_checkpoints(t, steps, ws.rec_loss[:k].copy(), snaps, objective)


def _versions():
    import scipy

    from .. import __version__

    return {"rgrasp_viz": __version__, "numpy": np.__version__, "scipy": scipy.__version__,
            "numba": K.NUMBA_VERSION, "python": platform.python_version()}
