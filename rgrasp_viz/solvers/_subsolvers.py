"""Step-5 solvers of Algorithm 1: what turns ``(x̂^{t-1}, T)`` into ``b`` on ``T``.

* :class:`Exact` -- the sub-problem ``min F(x) s.t. x|_{T^c} = 0`` solved exactly (GraSP;
  CoSaMP is its least-squares special case);
* :class:`SemiStochastic` -- the paper's Algorithm 2: ``J`` SVRG steps from ``x̂^{t-1}``
  (SVRGSP), optionally with ``z <- H_|T|(z)`` every ``ceil(J/m)`` steps (SVRGSP+).

A sub-solver is built once per solve (it may keep state across outer iterations, such as a
working matrix) and called once per outer iteration by :class:`~.rgrasp.RGraSP`, which owns
steps 2-4 and 6 of Algorithm 1.  A learner's own solver, written in plain Python against
:class:`~.rgrasp.SubProblem`, plugs in the same way (:func:`~.rgrasp.register_method`).
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import math

import numpy as np
import scipy.optimize
from scipy.special import expit

from .. import _kernels as K
from .._kernels.newton import logistic_newton_dense_work
from ._common import WorkingColumns, csc_arrays, gather_columns
from ._exact import WORK_RTOL, RestrictedLeastSquares

__all__ = ["NEWTON_MAX_COLUMNS", "Exact", "Fit", "SemiStochastic", "SubResult", "exact_fit",
           "logistic_exact_by_newton"]

NEWTON_MAX_COLUMNS = 64
"""Inside :func:`logistic_exact_by_newton`, exact logistic fits on at most this many
coordinates run damped Newton (a ``k x k`` system per step); larger ones keep L-BFGS."""

_NEWTON_ITER = 50

_NEWTON = contextvars.ContextVar("rgrasp_viz_logistic_exact_by_newton", default=False)


@contextlib.contextmanager
def logistic_exact_by_newton():
    """Runs of :func:`~rgrasp_viz.solve` inside the block make their exact logistic fits
    (:func:`exact_fit`) on small ridge-penalised supports by damped Newton
    (:func:`~rgrasp_viz._kernels.newton.logistic_newton_dense_work`) instead of L-BFGS: the
    same strictly convex sub-problem, so the same minimiser to the solvers' tolerances, in a
    few steps without scipy's per-evaluation overhead; charged by the same work rule, counting
    Newton's objective evaluations.  Ours, for the estimators (whose swaps refit with the same
    Newton iteration); a fit with no ridge term (``l2 = 0``), more than
    :data:`NEWTON_MAX_COLUMNS` coordinates, a finite pass budget or a Newton system that is
    not positive definite keeps L-BFGS.  Per thread / task (a context variable)."""
    token = _NEWTON.set(True)
    try:
        yield
    finally:
        _NEWTON.reset(token)


def _newton_fit(WT, y, z0, l2, gradient_known):
    """The exact logistic fit by damped Newton: ``(z, charged)`` as :func:`_logistic`, or None
    when the Newton system is not positive definite."""
    n = WT.shape[0]
    A = np.ascontiguousarray(WT.toarray() if hasattr(WT, "toarray") else WT,
                             dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    g_zero = float(np.max(np.abs(A.T @ y))) / (2 * n) if len(z0) else 0.0
    z, ok, charged = logistic_newton_dense_work(
        A, y, np.ones(n), np.full(len(z0), float(l2)), np.array(z0, dtype=np.float64),
        _NEWTON_ITER, WORK_RTOL, g_zero)
    if not ok:
        return None
    return z, float(max(charged - (1 if gradient_known else 0), 0))


@dataclasses.dataclass
class SubResult:
    """What a step-5 solver returns: ``b`` on ``T`` (ascending ``T`` order) and its cost."""

    b_T: np.ndarray
    passes: float
    n_thresholds: int = 0  # thresholding operations inside the solver (SVRGSP+'s H_|T|)
    status: int = 0  # 0 ok, 2 failed (diverged / ill-posed); the message says why
    message: str | None = None
    inner_steps: int = 0
    n_events: int = 0  # inner events left in the workspace buffers
    n_checkpoints: int = 0
    snaps: np.ndarray | None = None  # (n_checkpoints, p) in working coordinates
    work_index: np.ndarray | None = None  # working coordinate -> full coordinate (None: all)
    events: tuple | None = None  # (steps, entered, left) arrays, instead of the workspace's


# -- the exact solver (GraSP) ---------------------------------------------------------------------


@dataclasses.dataclass
class Fit:
    """An exact fit of ``F`` on a set of coordinates."""

    b: np.ndarray
    passes: float
    status: int = 0
    message: str | None = None


class _OutOfBudget(Exception):
    """Raised inside L-BFGS when the pass budget is spent."""


def _logistic(WT, y, z0, maxiter, l2=0.0, max_evals=math.inf, gradient_known=False):
    """L-BFGS on the restricted logistic problem from ``z0``.

    Returns ``(z, charged)``: ``charged`` is the work rule's count (see :mod:`._exact`): the
    function-and-gradient evaluations made until
    ``||grad||_inf <= WORK_RTOL max(||grad(z0)||_inf, ||grad(0)||_inf)`` was first met (all
    of them if never), the one at ``z0`` not charged when ``gradient_known``.  The iterate
    itself runs on to L-BFGS's own tight tolerance, unless ``max_evals`` charged evaluations
    (the pass budget) are spent first: then the best point evaluated is returned.
    """
    n = WT.shape[0]
    free = 1 if gradient_known else 0
    if max_evals <= 0:  # the budget is spent: no step
        return np.array(z0, dtype=np.float64), 0.0
    # the gradient at 0 (f'(0) = -y/2): the problem's scale, not charged
    g_zero = float(np.max(np.abs(np.asarray(WT.T @ y).ravel()))) / (2 * n) if len(z0) else 0.0
    state = {"evals": 0, "charged": None, "g0": None, "best": (math.inf, None)}

    y = np.asarray(y, dtype=np.float64)

    def fun(z):
        if state["evals"] >= max_evals + free:
            raise _OutOfBudget
        state["evals"] += 1
        a = np.asarray(WT @ z, dtype=np.float64).ravel()
        # losses.sample_losses / loss_derivative for the logistic loss, and their mean,
        # written out: this runs at every L-BFGS evaluation
        ya = -y * a
        f = float(np.logaddexp(0.0, ya).sum() / n) + 0.5 * l2 * float(z @ z)
        grad = np.asarray(WT.T @ (-y * expit(ya))).ravel() / n
        grad = grad + l2 * z
        gmax = float(np.max(np.abs(grad))) if len(grad) else 0.0
        if state["g0"] is None:
            state["g0"] = max(gmax, g_zero)
        if state["charged"] is None and gmax <= WORK_RTOL * state["g0"]:
            state["charged"] = state["evals"]
        if f < state["best"][0]:
            state["best"] = (f, z.copy())
        return f, grad

    try:
        res = scipy.optimize.minimize(fun, z0, jac=True, method="L-BFGS-B",
                                      options={"maxiter": maxiter, "gtol": 1e-10,
                                               "ftol": 1e-15})
        z = res.x
    except _OutOfBudget:
        z = state["best"][1] if state["best"][1] is not None else np.array(z0, dtype=float)
    charged = state["charged"] if state["charged"] is not None else state["evals"]
    return z, float(max(charged - free, 0))


def exact_fit(method, cols, z0, gradient_known=False):
    """Minimise ``F`` exactly over the coordinates ``cols`` (others zero), from ``z0``.

    Least squares: :class:`~._exact.RestrictedLeastSquares`, kept on the method object for
    the whole solve (the Gram matrix of the working columns is updated, not rebuilt).
    Logistic: L-BFGS warm-started at ``z0``, stopped early only when the pass budget of the
    run (``method.passes_left``, minus the step's own gradient) is spent.  Both are charged
    by the package's work rule (:mod:`._exact`): the restricted gradients an iterative solver
    evaluates to reach :data:`~._exact.WORK_RTOL`.  When every sample is classified correctly
    on ``cols`` with room to spare, the logistic loss has infimum 0 and no minimiser: reported
    as ``status = 2`` with a message.

    Parameters
    ----------
    method : Method
        The calling step object (problem, parameters).
    cols : ndarray of int
        Ascending coordinates.
    z0 : ndarray
        Warm start on ``cols``.
    gradient_known : bool, default False
        The restricted gradient at ``z0`` is already known (GraSP: step 2's gradient on
        ``T``): not charged again.

    Returns
    -------
    Fit
    """
    problem = method.problem
    y = problem.y
    if problem.loss == "squares":
        ls = method.__dict__.get("_exact_ls")
        if ls is None:  # once per solve, inside the timed region
            ls = RestrictedLeastSquares(problem.W, y, min(3 * method.p.s_total, method.d),
                                        lam=problem.l2)
            method._exact_ls = ls
        b, passes = ls.solve(cols, z0, gradient_known)
        return Fit(b, float(passes))
    WT = gather_columns(problem.W, cols)
    left = getattr(method, "passes_left", math.inf) - 1.0  # the step's own gradient
    newton = None
    if _NEWTON.get() and problem.l2 > 0 and 0 < len(cols) <= NEWTON_MAX_COLUMNS \
            and not math.isfinite(left):
        newton = _newton_fit(WT, y, z0, problem.l2, gradient_known)
    if newton is not None:
        b, passes = newton
    else:
        b, passes = _logistic(WT, y, z0, method.p.sub_maxiter, problem.l2,
                              max_evals=math.floor(left) if math.isfinite(left) else math.inf,
                              gradient_known=gradient_known)
    margin = float(np.min(y * np.asarray(WT @ b).ravel()))
    if margin > 0.0 and not problem.l2:
        return Fit(b, passes, 2, (
            f"the exact logistic fit on {len(cols)} coordinates has no finite minimiser: the "
            f"samples are linearly separable on those coordinates (smallest margin "
            f"{margin:.3g} > 0, ||b|| = {np.linalg.norm(b):.3g}); the exact step is "
            f"ill-posed for unregularised logistic loss here: add a small ridge term "
            f"(Problem(..., l2=1e-4)), use more samples or a smaller s, or a stochastic "
            f"method with a bounded inner loop"))
    return Fit(b, passes)


class Exact:
    """GraSP's step 5: the sub-problem on ``T`` solved exactly (:func:`exact_fit`), from
    ``x̂^{t-1}|_T``."""

    def __init__(self, method):
        self.method = method

    def solve(self, x, g, snap_dloss, T, rng):
        # x̂^{t-1} lives on T: its restricted gradient is step 2's, already charged
        fit = exact_fit(self.method, T, x[T], gradient_known=True)
        return SubResult(b_T=fit.b, passes=fit.passes, status=fit.status, message=fit.message)


# -- Algorithm 2 (SVRGSP, SVRGSP+) ------------------------------------------------------------


class SemiStochastic:
    """The paper's Algorithm 2: ``J`` semi-stochastic steps from ``z^0 = x̂^{t-1}``,
    ``z <- z - eta (grad f_i(z) - grad f_i(x̂^{t-1}) + g)``, with SVRGSP+'s option
    ``z <- H_|T|(z)`` every ``ceil(J/m)`` steps; ``b = z^J`` restricted to ``T``.

    Where ``z`` lives is the reading (``params.inner``):

    * ``"paper"`` (default, the paper's Algorithm 2): ``z`` moves on all ``d`` coordinates
      with the full gradient ``g``; ``H_|T|`` keeps the ``|T|`` largest entries of ``z`` (on
      any coordinates), and Algorithm 1 then zeroes ``b`` outside ``T``;
    * ``"on_T"`` (our variant): ``z`` moves on ``T`` only -- the feasible set of the
      sub-problem -- so each step costs O(|T|) on dense data, and ``H_|T|`` keeps every entry
      (it is recorded, but changes nothing, so ``m`` does not matter).

    On CSR data the dense part ``-eta * g`` of each inner step is applied lazily (see
    :func:`~rgrasp_viz._kernels.svrg_epoch_csr`); in the on-T reading ``W[:, T]`` is built
    per outer iteration from a CSC copy of ``W`` (made at the first iteration, O(nnz)).
    """

    def __init__(self, method, plus):
        self.method = method
        p = method.p
        self.thr_every = p.thr_every if plus else 0
        # where its inner events sit on the pass axis: after the epoch's full gradient
        self.passes_head = 1.0
        self.passes_per_step = 1.0 / method.n
        self.steps_per_iter = p.J
        self._csc = None  # CSC arrays of W (on-T reading on CSR data), built lazily
        self._cols = None  # dense on-T reading: W[:, T], updated in place

    def _work_matrix(self, T):
        """``(X, order)``: ``W[:, T]`` with its columns in the order ``order`` (a permutation
        of ``T``), as a dense array (possibly wider than ``|T|``; the epoch kernels read the
        first ``|T|`` columns) or the CSR arrays ``(data, indices, indptr)`` (``order = T``)."""
        m = self.method
        if not m.sparse:
            if self._cols is None:  # once per solve, inside the timed region
                self._cols = WorkingColumns(m.problem.W, min(3 * m.p.s_total, m.d))
            return self._cols.update(T)
        if self._csc is None:  # once per solve, inside the timed region: O(nnz)
            self._csc = csc_arrays(m.problem.W)
        return K.gather_columns_csc(*self._csc, m.n, T), T

    def solve(self, x, g, snap_dloss, T, rng):
        m = self.method
        ws, J = m.ws, m.p.J
        idx = rng.integers(0, m.n, size=J)
        if m.p.inner == "on_T":
            X, order = self._work_matrix(T)
            z = x[order]
            # every coordinate of the working space is "in" before the first H_|T|
            n_prev = ws.set_prev(np.arange(len(T)))
            steps, n_ev, n_rec, status, snaps = m.svrg_epoch(
                X, z, g[order], snap_dloss, idx, self.thr_every, len(T), n_prev)
            work_index = order.copy()
            b_T = np.empty(len(T))
            b_T[np.searchsorted(T, order)] = z  # working order -> ascending T
        else:
            z = x.copy()
            n_prev = ws.set_prev(T)
            # H_|T| keeps always_select (in T) and the |T| - |always_select| largest others
            steps, n_ev, n_rec, status, snaps = m.svrg_epoch(
                m.data, z, g, snap_dloss, idx, self.thr_every, len(T) - len(m.forced), n_prev,
                m.forced)
            b_T = z[T]
            work_index = None
        return SubResult(b_T=b_T, passes=steps / m.n,
                         n_thresholds=n_ev if self.thr_every else 0, status=status,
                         inner_steps=steps, n_events=n_ev, n_checkpoints=n_rec,
                         snaps=snaps[:n_rec], work_index=work_index)
