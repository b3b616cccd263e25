"""``solve``: check the parameters once, then run the outer loop in Python around the
methods' steps (whose inner epochs run in the Numba kernels): timing, recording, callback,
stopping, divergence, and the safeguard of default step sizes."""

from __future__ import annotations

import contextlib
import contextvars
import math
import numbers
import platform
import time

import numpy as np
import scipy
import scipy.sparse as sp

from .. import _kernels as K
from .. import losses
from .._kernels.threads import BlasThreads
from .._problems import Problem, as_problem
from .._result import SolveResult, warn_max_iter, warn_status
from .._trace import TraceBuilder
from .._version import __version__
from ._common import Workspace, merge_support
from ._exact import RestrictedLeastSquares
from ._params import check_flag, check_params
from ._registry import get_method
from ._status import MESSAGES, Status

EXPLODE_FACTOR = 1e6
"""A run whose objective exceeds ``EXPLODE_FACTOR * F(x0)`` is declared diverged."""

NO_PROGRESS_RTOL = 1e-4
"""A run that stops (fixed point or stagnation) having lowered the objective by at most this
fraction of ``|F(x0)|`` made no progress (:attr:`Status.NO_PROGRESS`)."""

HOVER_RTOL = 0.01
"""Stagnation counts as convergence only when the run has also settled: over the last
``patience`` iterations the support did not change and the objective moved by at most this
fraction of the best objective.  A stochastic or inexact method still swapping coordinates,
or whose objective keeps jumping by more, is still searching, so it goes on."""

STALL_FACTOR = 3
"""A run whose best objective has not improved for ``STALL_FACTOR * patience`` iterations
while it is not steady stops as :attr:`Status.STALLED` (not converged)."""

SLOW_RTOL = 0.1
"""A run with a step size that ends at ``max_iter`` or ``max_passes`` having lowered the
objective by less than this fraction of ``|F(x0)|`` says (message and warning) that its step
size is the likely cause."""

FIXED_POINT_FACTOR = 2.0
"""A converged least-squares run whose objective is more than this factor above the exact
least-squares fit on its own support stopped before the minimiser of that support:
:attr:`Status.HT_FIXED_POINT` (not a success; see :func:`minimiser_probe`)."""

SUPPORT_FACTOR = 1.2
"""A converged least-squares run is probed once at its end point with one GraSP step
(:func:`minimiser_probe`: the ``2s`` largest gradient entries merged with the support, an
exact fit, pruned to ``s`` and refit on those ``s`` columns).  If the probe's objective is
more than this factor below the exact fit on the run's own support (and lower by more than
``NO_PROGRESS_RTOL * |F(x0)|``), the support the run froze on is not a minimiser's:
:attr:`Status.HT_FIXED_POINT` (not a success).  A run that ends on a minimiser's support, or
on one of the near-equivalent supports a noisy problem has (which differ in a few noise
columns), is within a few percent of the probe; a support that steps too short to change it
froze on is well above (``benchmarks/bench_status_probe.py`` tabulates both)."""

SAFEGUARD_HALVINGS = 8
"""A default step size (not one the user gave) is halved and the run restarted at most this
many times when it diverges or raises the objective in its first iterations."""

SAFEGUARD_EARLY = 3
"""The safeguard's early check: the objective above ``F(x0)`` after any of the first this many
iterations restarts a run that uses the default step."""


def warm_up(method, sparse, inner="paper"):
    """Compile (or load from Numba's on-disk cache) the kernels ``method`` needs, on a tiny
    problem, so that compilation never counts as solver time.

    Registered Python sub-solvers are not called: their runs warm up the kernels of
    Algorithm 1's other steps (gradient, thresholding) through FG-HT.
    """
    spec = get_method(method)
    if not spec.builtin:
        spec = get_method("fght")
    key = (spec.name, bool(sparse), inner if spec.readings else None)
    if key in _WARM:
        return
    rng = np.random.default_rng(0)
    W = rng.standard_normal((8, 12))
    if sparse:
        W = sp.csr_matrix(W)
    prob = Problem(W, rng.standard_normal(8))
    params = check_params(prob, spec.name, s=2, eta=0.01, J=8, m=2, inner=inner,
                          batch_size=2, record_every=4, record_iterates=True)
    ws = Workspace(prob.d, 8, 4)
    spec.factory(prob, params, ws).step(np.zeros(prob.d), np.random.default_rng(0))
    _WARM.add(key)


_WARM: set = set()

_PROBE = contextvars.ContextVar("rgrasp_viz_minimiser_probe", default=True)


@contextlib.contextmanager
def without_minimiser_probe():
    """Runs of :func:`solve` inside the block skip the end-of-run minimiser probe
    (:func:`minimiser_probe`): a converged least-squares run then ends ``CONVERGED`` without
    the check for a hard-thresholding fixed point, and ``trace.meta["minimiser_check"]`` is
    None.  For callers that search the run's neighbourhood themselves (the estimators' support
    swaps until stable); everything else about the runs is unchanged.  Per thread / task
    (a context variable)."""
    token = _PROBE.set(False)
    try:
        yield
    finally:
        _PROBE.reset(token)


def _seed_repr(random_state):
    if random_state is None or isinstance(random_state, numbers.Integral):
        return None if random_state is None else int(random_state)
    return type(random_state).__name__


def _start(prob, x0, s, forced=None):
    if x0 is None:
        return np.zeros(prob.d)
    x0 = np.asarray(x0)
    if x0.dtype.kind not in "biuf":
        raise TypeError(f"x0 must be a real numeric array, got dtype {x0.dtype}")
    x0 = x0.astype(np.float64)
    if x0.shape != (prob.d,):
        raise ValueError(f"x0 must have shape ({prob.d},), got {x0.shape}")
    if not np.all(np.isfinite(x0)):
        raise ValueError("x0 contains NaN or inf")
    return K.hard_threshold(x0, s, forced)


def _generator_factory(random_state):
    """A function returning the run's generator, replaying the same index sequence at every
    call (a restarted attempt draws what the first one drew): for a seed, a fresh generator
    from the same seed; a given ``Generator`` is rewound to its state at the start."""
    if isinstance(random_state, np.random.Generator):
        state = random_state.bit_generator.state

        def rewind():
            random_state.bit_generator.state = state
            return random_state

        return rewind
    try:
        np.random.default_rng(random_state)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"random_state must be None, a non-negative int or a "
                        f"numpy.random.Generator, got {random_state!r}") from exc
    seed = (np.random.SeedSequence() if random_state is None
            else np.random.SeedSequence(random_state))
    return lambda: np.random.default_rng(seed)


def solve(problem, method="svrgsp+", *, s=None, eta=None, J=None, m=None, inner="paper",
          max_iter=None, max_passes=None, tol=1e-7, ftol=1e-6, patience=None, x0=None,
          random_state=None, callback=None, batch_size=None, record_every=None,
          record_iterates=False, record=True, max_events=1_000_000, loss=None, x_true=None,
          warn=True, always_select=None):
    """Solve ``min F(x) s.t. ||x||_0 <= s`` with a registered method.

    Parameters
    ----------
    problem : Problem or tuple (W, y)
        The data.  Raw arrays are wrapped with :class:`~rgrasp_viz.Problem` (``loss``,
        ``x_true`` apply then).
    method : str, default "svrgsp+"
        A registered method (:func:`rgrasp_viz.method_names`): the paper's six ``"svrgsp+"``,
        ``"svrgsp"``, ``"svrght"``, ``"sght"``, ``"grasp"``, ``"fght"``, plus ``"htp"`` and any
        method added with :func:`rgrasp_viz.register_method`.  Case and dashes are ignored
        (``"FG-HT"`` works).
    s : int, optional
        Sparsity level, ``1 <= s <= d``.  Default: the paper's ``s = 1.2 s*``
        (:attr:`Problem.default_s`) when the problem knows its true solution, else required.
    eta : float, optional
        Step size.  Default: the method's rule (:func:`~rgrasp_viz.default_eta`), guarded:
        a default step that diverges or raises the objective in the first iterations is
        halved and the run restarted (at most ``SAFEGUARD_HALVINGS`` times; recorded in
        ``trace.meta["eta_halvings"]``, the abandoned work counted in passes and time).
        A step you give is used as is.
    J : int, optional
        Inner steps per epoch of SVRG-type methods (default ``2n``); at most
        :func:`~rgrasp_viz.solvers._params.max_inner_steps` (``100 n``, at least 100,000
        and at most 10,000,000).
    m : int, optional
        SVRGSP+: ``H_|T|`` is applied every ``ceil(J/m)`` inner steps, i.e.
        ``floor(J / ceil(J/m))`` times per epoch (``m`` times when ``m`` divides ``J``;
        :func:`~rgrasp_viz.cuts_per_epoch`);
        ``1 <= m <= J``.  Default ``min(6, J)`` (the paper's ``m = 6``).
    inner : {"paper", "on_T"}, default "paper"
        SVRGSP(+) only: where Algorithm 2's iterate lives.  ``"paper"``: on all ``d``
        coordinates, as the paper writes Algorithm 2 (``H_|T|`` then matters, so ``m`` does).
        ``"on_T"``: our variant, on the merged support ``T`` only (cheaper inner steps;
        ``H_|T|`` keeps everything, so ``m`` changes nothing); labelled "(on T)" everywhere.
        ``"full"`` and ``"restricted"`` are accepted as older names of the two.
    max_iter : int, optional
        Maximum outer iterations (one full-gradient iteration, one SVRG epoch, or one pass of
        SG-HT).  Default: the method's (300 for FG-HT, 50 otherwise).
    max_passes : float, optional
        Pass budget: stop once this many effective passes are done (the iteration that
        crosses it completes).  Default: no budget.
    tol : float, default 1e-7
        Converged when ``||x^t - x^{t-1}|| <= tol * max(||x^t||, ||x^{t-1}||)`` (a fixed
        point: FG-HT, GraSP, HTP and SVRGHT get there).
    ftol : float, default 1e-6
        Also stop when the best objective has not improved by more than ``ftol`` (relative)
        for ``patience`` iterations: inexact, stochastic steps keep swapping the smallest
        kept coordinates, so their iterates hover instead of reaching a fixed point.
        ``ftol=0`` disables it.
    patience : int, optional
        Iterations without an ``ftol`` improvement before the run counts as stagnated
        (``>= 1``).  Default: the method's registry entry.
    x0 : array_like, optional
        Starting point (default 0); ``H_s`` is applied to it.
    random_state : None, int or numpy.random.Generator
        Seeds the index sequence.  Protocol: one ``rng.integers(0, n, size=k)`` call per
        outer iteration (``k = J``, or ``n_steps * batch_size`` for SG-HT), in order.
    callback : callable, optional
        ``callback(intermediate_result)`` after every outer iteration with a
        :class:`~rgrasp_viz.SolveResult` (x, fun, nit, passes, time, rel_error,
        support_size, n_thresholds, attempt); raise ``StopIteration`` to halt.
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
        Emit a :class:`~rgrasp_viz.exceptions.ConvergenceWarning` when the run ends ``MAX_ITER``,
        ``DIVERGED``, ``STALLED``, ``NO_PROGRESS`` or ``HT_FIXED_POINT``, or when a run with
        a step size ends at its budget having lowered the objective by less than
        ``SLOW_RTOL`` of ``|F(x0)|`` (the message then names the step size as the likely
        cause).  ``False`` silences all of them; the status and message say the same.
    always_select : sequence of int, optional
        Coordinates kept in every support (e.g. an intercept column), not counted in ``s``:
        every thresholding -- ``H_s``, SVRGHT's and SG-HT's per-step ``H_s``, SVRGSP+'s
        ``H_|T|`` -- keeps them and the ``s`` (resp. ``|T| - len(always_select)``) largest
        other entries, and Algorithm 1's ``T`` always holds them.  Ours (the paper has no
        such option); recorded in ``trace.meta["always_select"]``.

    Returns
    -------
    SolveResult
        ``x, fun, nit, success, status, message, trace, passes, time, rel_error``, and
        ``x_best, fun_best, nit_best``: the iterate of lowest objective the run visited
        (``x0`` included; ours -- ``x`` stays the paper's output, the last iterate;
        ``trace.meta["best_iteration"]`` and ``["fun_best"]`` record it);
        ``status`` is a :class:`~rgrasp_viz.Status`: ``CONVERGED`` (the ``tol`` or ``ftol``
        rule), ``MAX_ITER``, ``MAX_PASSES``, ``DIVERGED`` (the objective became non-finite,
        exceeded ``EXPLODE_FACTOR * F(x0)``, or ended above ``F(x0)``; or an exact sub-problem
        was ill-posed; ``x`` is then the last iterate before the failing step, and the
        message names the likely cause), ``NO_PROGRESS`` (stopped where it started: the step
        size may be too small), ``STALLED`` (the best objective stopped improving while the
        iterates kept moving), ``HT_FIXED_POINT`` (least squares: the iterates stopped at a
        fixed point of hard thresholding, not a minimiser: one GraSP step from the end point,
        :func:`minimiser_probe`, finds a support ``SUPPORT_FACTOR``-fold better, or the exact
        fit on the run's own support is ``FIXED_POINT_FACTOR``-fold better), ``CALLBACK``.
        ``success`` is True for ``CONVERGED`` only.  A least-squares run that stopped at a
        tolerance is probed once at its end; the probe's work (passes by the work rule) and
        objectives are in ``trace.meta["minimiser_check"]``, not in ``passes``: the run's
        iterates do not use it.
    """
    warn = check_flag("warn", warn)
    prob = as_problem(problem, loss=loss, x_true=x_true)
    with prob.cache_scope():  # the data are checked for edits once, not at every lookup
        params = check_params(prob, method, s=s, eta=eta, J=J, m=m, inner=inner,
                              max_iter=max_iter, max_passes=max_passes, tol=tol, ftol=ftol,
                              patience=patience, batch_size=batch_size,
                              record_every=record_every, record=record,
                              record_iterates=record_iterates, max_events=max_events,
                              always_select=always_select)
    if callback is not None and not callable(callback):
        raise TypeError("callback must be callable")
    x_start = _start(prob, x0, params.s, params.forced)
    new_rng = _generator_factory(random_state)
    spec = params.spec
    warm_up(spec.name, prob.is_sparse, params.inner)
    with BlasThreads():  # BLAS (objectives, GraSP's algebra) on the CPUs that are free
        return _solve(prob, params, spec, x_start, new_rng, callback, random_state, warn)


def _solve(prob, params, spec, x_start, new_rng, callback, random_state, warn):
    """The attempts of one solve (see :func:`solve`), and its result."""
    eta0, halvings = params.eta, 0
    spent_passes = spent_time = 0.0
    while True:
        run = _Run(prob, params, x_start, new_rng(), callback, spent_passes, spent_time,
                   attempt=halvings)
        run.execute()
        guarded = params.eta_rule == "default" and spec.has_step
        if guarded and run.status == Status.DIVERGED and halvings < SAFEGUARD_HALVINGS:
            halvings += 1
            spent_passes, spent_time = run.passes, run.time
            params = params.replace(eta=params.eta / 2)
            continue
        break
    if warn:
        if run.status == Status.MAX_ITER:
            warn_max_iter(spec.name, params.max_iter, run.slow)
        elif run.status in _WARNED or run.slow:
            warn_status(spec.name, run.status.name, run.message)
    meta = {
        "method": spec.name, "loss": prob.loss, "n": prob.n, "sparse": bool(prob.is_sparse),
        "problem": getattr(prob, "name", None), "l2": prob.l2, "s": params.s, "eta": params.eta,
        "always_select": list(params.always_select),
        "eta_rule": params.eta_rule, "eta_initial": eta0, "eta_halvings": halvings,
        "safeguard_passes": spent_passes,
        "J": params.J, "m": params.m, "inner": params.inner, "batch_size": params.batch_size,
        "record_every": params.record_every, "max_iter": params.max_iter,
        "max_passes": None if math.isinf(params.max_passes) else params.max_passes,
        "tol": params.tol, "ftol": params.ftol, "patience": params.patience,
        "random_state": _seed_repr(random_state),
        "record_iterates": params.record_iterates, "record": params.record,
        "passes_head": run.impl.passes_head, "passes_per_step": run.impl.passes_per_step,
        "steps_per_iter": run.impl.steps_per_iter, "status": int(run.status),
        "status_name": run.status.name, "message": run.message,
        "success": run.status.success, "versions": _versions(),
        "best_iteration": run.nit_best, "fun_best": float(run.fun_best),
        "minimiser_check": None if run.check is None else {
            "F_probe": run.check["F_probe"], "F_support": run.check["F_support"],
            "kept": run.check["kept"], "passes": run.check["passes"],
            "time": run.check["time"]},
    }
    trace = run.builder.finish(meta)
    return SolveResult(x=run.x, fun=run.fun, nit=run.nit, success=run.status.success,
                       status=run.status, message=run.message, trace=trace,
                       passes=run.passes, time=run.time, rel_error=prob.rel_error(run.x),
                       method=spec.name, x_best=run.x_best, fun_best=run.fun_best,
                       nit_best=run.nit_best)


class _Run:
    """One attempt of a solve: the outer loop, its recording and its stopping rules."""

    def __init__(self, prob, params, x, rng, callback, passes, solver_time, attempt):
        self.prob, self.p, self.rng, self.callback = prob, params, rng, callback
        self.attempt = attempt
        spec = params.spec
        steps = params.J if spec.epoch else (max(1, prob.n // params.batch_size)
                                             if spec.uses_batch else 0)
        # record=False switches off inner recording entirely (events and checkpoints)
        self.ws = Workspace(prob.d, steps,
                            params.record_every if (spec.stochastic and params.record) else 0)
        self.impl = spec.factory(prob, params, self.ws)
        self.builder = TraceBuilder(prob.d, prob.x_true, params.record_iterates,
                                    params.max_events)
        self.x, self.passes, self.time = x, passes, solver_time
        with np.errstate(over="ignore", invalid="ignore"):
            self.F0 = _objective(prob, x)
        self.fun = self.F0
        # the best iterate visited (ours: the paper's output is the last one, x̂^T)
        self.x_best, self.fun_best, self.nit_best = x, self.F0, 0
        self.nit = 0
        self.n_thr = 0
        self.builder.add_iteration(iteration=0, passes=passes, time=solver_time,
                                   objective=self.F0, rel_error=prob.rel_error(x), x=x,
                                   n_thresholds=0)
        self.status = Status.MAX_ITER
        self.message = MESSAGES[Status.MAX_ITER].format(max_iter=params.max_iter)
        self.slow = ""  # the tiny-step hint, when the run hardly moved the objective
        self.check = None  # the end-of-run minimiser probe (converged least squares)

    def _stop(self, status, message):
        self.status, self.message = status, message

    def execute(self):
        p, prob, impl, ws = self.p, self.prob, self.impl, self.ws
        guarded = p.eta_rule == "default" and p.spec.has_step
        best, since_best = self.F0, 0
        x = self.x
        for t in range(1, p.max_iter + 1):
            impl.passes_left = p.max_passes - self.passes
            t0 = time.perf_counter()
            out = impl.step(x, self.rng)
            self.time += time.perf_counter() - t0
            # -- bookkeeping (not timed) ----------------------------------------------------
            self.passes += out.passes
            self.n_thr += out.n_thresholds
            with np.errstate(over="ignore", invalid="ignore"):
                F = _objective(prob, out.x) if np.all(np.isfinite(out.x)) else math.inf
            _record(self.builder, impl, prob, t, out, ws)
            _, ev_in, ev_out = out.inner_events(ws)
            self.builder.add_iteration(
                iteration=t, passes=self.passes, time=self.time, objective=F,
                rel_error=prob.rel_error(out.x), x=out.x, n_thresholds=self.n_thr,
                inner_entered=int(ev_in.sum()) if p.record else 0,
                inner_left=int(ev_out.sum()) if p.record else 0,
                inner_steps=out.inner_steps, Z=out.Z, T=out.T, b_T=out.b_T)
            self.nit = t
            if out.status != 0 or not math.isfinite(F) or F > EXPLODE_FACTOR * max(self.F0,
                                                                                   1e-300):
                self._stop(Status.DIVERGED, MESSAGES["diverged_at"].format(
                    t=t, F=F, F0=self.F0, cause=out.message or _cause(p)))
                break
            if guarded and t <= SAFEGUARD_EARLY and F > self.F0:
                self._stop(Status.DIVERGED, MESSAGES["diverged_rose"].format(
                    F0=self.F0, F=F, cause=_cause(p)))
                break
            step_norm = float(np.linalg.norm(out.x - x))
            scale = max(float(np.linalg.norm(out.x)), float(np.linalg.norm(x)))
            x, self.x, self.fun = out.x, out.x, F
            if F < self.fun_best:
                self.x_best, self.fun_best, self.nit_best = x, F, t
            if self.callback is not None and self._call_back(t, x, F):
                break
            if step_norm <= p.tol * scale:
                self._stop(Status.CONVERGED, MESSAGES["fixed_point"].format(
                    change=step_norm / max(scale, 1e-300)))
                break
            if F < best * (1.0 - p.ftol):
                best, since_best = F, 0
            else:
                since_best += 1
                if p.ftol > 0 and since_best >= p.patience and self._stagnated(best,
                                                                                since_best):
                    break
            if self.passes >= p.max_passes:
                self._stop(Status.MAX_PASSES, MESSAGES[Status.MAX_PASSES].format(
                    passes=self.passes, max_passes=p.max_passes))
                break
        self._final_checks()

    def _stagnated(self, best, since_best):
        """No ``ftol`` improvement for ``patience`` iterations: converged if the objective is
        also steady, stalled if it has moved for ``STALL_FACTOR * patience`` iterations."""
        p = self.p
        rows = self.builder.rows
        window = np.asarray(rows["objective"][-(p.patience + 1):])
        spread = float(window.max() - window.min()) / max(abs(best), 1e-12 * abs(self.F0),
                                                          1e-300)
        settled = not any(rows["n_entered"][-p.patience:])
        if spread <= HOVER_RTOL and settled:
            self._stop(Status.CONVERGED, MESSAGES["stagnated"].format(
                ftol=p.ftol, patience=p.patience))
            return True
        if since_best >= STALL_FACTOR * p.patience:
            advice = ("a smaller step size may settle it" if p.spec.has_step else
                      f"{p.spec.label} has no step size; its exact fits keep moving")
            self._stop(Status.STALLED, MESSAGES[Status.STALLED].format(
                k=since_best, ftol=p.ftol, spread=spread, advice=advice))
            return True
        return False

    def _call_back(self, t, x, F):
        info = SolveResult(x=x.copy(), fun=F, nit=t, passes=self.passes, time=self.time,
                           rel_error=self.prob.rel_error(x),
                           support_size=int(np.count_nonzero(x)), n_thresholds=self.n_thr,
                           method=self.p.method, attempt=self.attempt)
        try:
            self.callback(info)
        except StopIteration:
            self._stop(Status.CALLBACK, MESSAGES[Status.CALLBACK])
            return True
        return False

    def _final_checks(self):
        if self.status == Status.DIVERGED:
            return
        if self.fun > self.F0:
            # A too-large step can settle into a bounded oscillation far above F(x0), which
            # the stagnation rule alone would call converged; ending above the start is
            # divergence, whatever stopped the run (tolerance, max_iter, budget, callback).
            self._stop(Status.DIVERGED, MESSAGES["diverged_rose"].format(
                F0=self.F0, F=self.fun, cause=_cause(self.p)))
            return
        if self.status == Status.CONVERGED:
            rel = (self.F0 - self.fun) / max(abs(self.F0), 1e-300)
            if rel <= NO_PROGRESS_RTOL:
                cause = ("x0 is already a fixed point of the method" if self.nit <= 1 else
                         "the step size may be too small" if self.p.spec.has_step else
                         "x0 may already be a solution")
                self._stop(Status.NO_PROGRESS, MESSAGES[Status.NO_PROGRESS].format(
                    F0=self.F0, F=self.fun, rel=rel, cause=cause))
            elif self.prob.loss == "squares" and _PROBE.get():
                self._check_minimiser()
            return
        if self.status in (Status.MAX_ITER, Status.MAX_PASSES) and self.p.spec.has_step:
            moved = (self.F0 - self.fun) / max(abs(self.F0), 1e-300)
            if moved < SLOW_RTOL:
                self.slow = MESSAGES["slow"].format(moved=max(moved, 0.0), eta=self.p.eta)
                self.message += self.slow

    def _check_minimiser(self):
        """A converged least-squares run: is it at a minimiser, or frozen on a support that
        one GraSP step leaves (:data:`SUPPORT_FACTOR`), or short of its own support's exact
        fit (:data:`FIXED_POINT_FACTOR`)?  The probe's work and result go to
        :attr:`check` (``trace.meta["minimiser_check"]``)."""
        t0 = time.perf_counter()
        probe = minimiser_probe(self.prob, self.x, self.p.s, self.p.forced)
        probe["time"] = time.perf_counter() - t0
        self.check = probe
        F, F_own, F_probe = self.fun, probe["F_support"], probe["F_probe"]
        guard = NO_PROGRESS_RTOL * abs(self.F0)
        if F_own > SUPPORT_FACTOR * F_probe and F_own - F_probe > guard:
            how = MESSAGES["probe_support"].format(
                F_own=F_own, F_probe=F_probe, ratio=F_own / max(F_probe, 1e-300),
                kept=probe["kept"], s=self.p.s, passes=probe["passes"])
        elif F > FIXED_POINT_FACTOR * F_own and F - F_own > guard:
            how = MESSAGES["probe_fit"].format(F_own=F_own, ratio=F / max(F_own, 1e-300))
        else:
            return
        if not self.p.spec.has_step:
            cause = "the support it settled on is not the best"
        elif self.p.eta_rule == "default":
            cause = (f"at the default step size eta={self.p.eta:.3g} the support stopped "
                     f"changing (a support-pursuit method, e.g. GraSP or SVRGSP+, leaves "
                     f"this point)")
        else:
            cause = (f"the step size eta={self.p.eta:.3g} may be too small for the support to "
                     f"change (a larger step, e.g. the default, leaves this point)")
        self._stop(Status.HT_FIXED_POINT, MESSAGES[Status.HT_FIXED_POINT].format(
            F=F, how=how, cause=cause))


def minimiser_probe(prob, x, s, forced=()):
    """One GraSP step from ``x`` on a least-squares problem: does it leave ``x``'s support?

    ``g = grad F(x)``; ``T`` = the ``2s`` largest ``|g|`` (outside ``forced``) merged with
    ``supp(x)`` and ``forced``; the exact fit on ``T``; its ``s`` largest entries (plus
    ``forced``) ``S``; the exact fit on ``S``.  Also the exact fit on ``supp(x)``.  A step of
    gradient descent (as short as ``1/rho(2s)``) cannot leave a support on a correlated
    design whose new columns enter only by a fraction of their weight; the exact fit on the
    merged support lets every candidate column take its full weight at once, so a support
    that is not a minimiser's shows a lower objective after one probe.

    Parameters
    ----------
    prob : Problem
        Least squares (``loss == "squares"``; the ridge term included).
    x : ndarray, shape (d,)
        The end point of a run (at most ``s`` nonzeros besides ``forced``).
    s : int
    forced : array_like of int
        ``always_select`` coordinates, kept by the pruning.

    Returns
    -------
    dict
        ``F_probe`` (the objective of the fit on ``S``), ``F_support`` (of the fit on
        ``supp(x)``; ``F(x)`` itself if ``x`` is 0), ``support`` (``S``, ascending), ``kept``
        (how many of ``S`` are in ``supp(x)``) and ``passes``: the work charged by the
        package's rule (:mod:`._exact`): the gradient (1 pass) and the three exact fits,
        warm-started from ``x`` and from the fit on ``T``.
    """
    forced = np.asarray(forced, dtype=np.int64)
    support = np.flatnonzero(x)
    g = prob.gradient(x)
    _, T = merge_support(g, x, s, forced)
    fit = RestrictedLeastSquares(prob.W, prob.y, len(T), lam=prob.l2)
    b_T, passes = fit.solve(T, x[T], gradient_known=True)
    keep = K.top_k(b_T, s, np.searchsorted(T, forced) if len(forced) else None)
    S = T[keep]
    b_S, more = fit.solve(S, b_T[keep])
    passes += 1.0 + more
    z = np.zeros(prob.d)
    z[S] = b_S
    with np.errstate(over="ignore", invalid="ignore"):
        F_probe = _objective(prob, z)
        F_support = _objective(prob, x)
    if len(support):
        b_own, more = fit.solve(support, x[support], gradient_known=True)
        passes += more
        z = np.zeros(prob.d)
        z[support] = b_own
        with np.errstate(over="ignore", invalid="ignore"):
            F_support = min(F_support, _objective(prob, z))
    return {"F_probe": float(F_probe), "F_support": float(F_support), "support": S,
            "kept": int(np.isin(S, support).sum()), "passes": float(passes)}


_WARNED = (Status.DIVERGED, Status.STALLED, Status.NO_PROGRESS, Status.HT_FIXED_POINT)
"""Statuses reported with a :class:`~rgrasp_viz.exceptions.ConvergenceWarning`
(``MAX_ITER`` too)."""


def _cause(params):
    """The likely cause of a divergence, for the message."""
    if not params.spec.has_step:  # GraSP: the exact sub-problem is to blame
        return ("GraSP has no step size: its exact fit on T (up to 3s coordinates) does not "
                "survive the pruning to s entries on this problem (the restricted "
                "strong convexity / smoothness its analysis assumes fails here)")
    return f"the step size eta={params.eta:.3g} is too large"


def _objective(prob, x):
    """F(x) on an iterate the solver produced (already validated: skip Problem's checks)."""
    return losses.objective(prob.W, prob.y, x, prob.loss, prob.l2)


def _record(builder, impl, prob, t, out, ws):
    """Copy one iteration's inner events and checkpoints from the workspace into the trace."""
    if impl.p.record and out.n_events:
        builder.add_events(t, *out.inner_events(ws), kind=0)
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
    return {"rgrasp_viz": __version__, "numpy": np.__version__, "scipy": scipy.__version__,
            "numba": K.NUMBA_VERSION, "python": platform.python_version()}
