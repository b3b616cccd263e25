"""The six methods of the paper, one outer iteration each.

Every method object exposes ``step(x, rng) -> StepResult``; the driver (:mod:`._driver`)
times that call, records its result, calls back and tests stopping.  Random indices come from
the ``np.random.Generator`` passed in, one ``rng.integers(0, n, size=...)`` call per outer
iteration, so a NumPy reference fed the same generator reproduces every iterate.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.optimize
import scipy.sparse as sp

from .. import _kernels as K
from .. import losses
from ._common import (
    StepResult,
    WorkingColumns,
    csc_arrays,
    csr_arrays,
    gather_columns,
    merge_support,
)
from ._exact import RestrictedLeastSquares


def _threshold(v, s):
    """``(H_s(v), kept indices)`` for a dense vector."""
    keep = K.top_k(v, s)
    out = np.zeros_like(v)
    out[keep] = v[keep]
    return out, keep


class _Method:
    """Base class: holds the problem, parameters and workspace of one solve."""

    name = ""
    uses_support_pursuit = False  # records Z, T and b (Algorithm 1)

    def __init__(self, problem, params, ws):
        self.problem = problem
        self.p = params
        self.ws = ws
        self.n = problem.n
        self.d = problem.d
        self.loss_code = problem.loss_code
        self.sparse = sp.issparse(problem.W)
        if self.sparse:
            self.csr = csr_arrays(problem.W)

    def _full_gradient(self, x):
        """``(grad F(x), f'(W x))`` in one fused single-threaded pass (the margins of an
        ``s``-sparse ``x`` on dense data cost O(n s)); the per-sample derivatives are SVRG's
        snapshot terms."""
        g = np.empty(self.d)
        deriv = np.empty(self.n)
        if self.sparse:
            K.full_gradient_csr(*self.csr, self.problem.y, self.loss_code, x, deriv, g)
        else:
            sup = np.flatnonzero(x)
            K.full_gradient_dense(self.problem.W, self.problem.y, self.loss_code, sup, x[sup],
                                  deriv, g)
        return g, deriv

    # effective-pass bookkeeping used to place inner events on the pass axis
    passes_head = 0.0
    passes_per_step = 0.0
    steps_per_iter = 0


class FGHT(_Method):
    """FG-HT: ``x <- H_s(x - eta * grad F(x))`` (one full gradient per iteration)."""

    name = "fght"

    def step(self, x, rng):
        g, _ = self._full_gradient(x)
        x_new, _ = _threshold(x - self.p["eta"] * g, self.p["s"])
        return StepResult(x=x_new, passes=1.0, n_thresholds=1, outer_event=0)


class GraSP(_Method):
    """GraSP: Algorithm 1 with the sub-problem on T solved exactly.

    Least squares: the exact minimiser on ``T`` (:class:`._exact.RestrictedLeastSquares`: the
    Gram matrix of ``W_T`` kept across iterations, entering columns added in one sweep over the
    data, then Cholesky); its passes over the data are counted.
    Logistic: L-BFGS on the coordinates of T, warm-started at ``x|_T``; each function and
    gradient evaluation is one sweep over the data (1 pass).
    """

    name = "grasp"
    uses_support_pursuit = True

    _ls = None  # the least-squares sub-problem solver, kept for the whole solve

    def step(self, x, rng):
        s = self.p["s"]
        g, _ = self._full_gradient(x)
        Z, T = merge_support(g, x, s)
        y = self.problem.y
        status, message = 0, None
        if self.problem.loss == "squares":
            if self._ls is None:  # once per solve, inside the timed region
                self._ls = RestrictedLeastSquares(self.problem.W, y, min(3 * s, self.d),
                                                  lam=self.p.get("lam", 0.0))
            b_T, sub_passes = self._ls.solve(T, x[T])
        else:
            WT = gather_columns(self.problem.W, T)
            b_T, sub_passes = self._logistic_on_T(WT, x[T])
            margin = float(np.min(y * np.asarray(WT @ b_T).ravel()))
            if margin > 0.0:
                # every sample is classified correctly with room to spare: the loss on T
                # has infimum 0 and no minimiser, so "solve the sub-problem exactly" is
                # undefined and L-BFGS only stops once ||b|| is huge
                status = 2
                message = (f"GraSP's logistic sub-problem on T (|T| = {len(T)}) has no finite "
                           f"minimiser: the samples are linearly separable on those "
                           f"coordinates (smallest margin {margin:.3g} > 0, "
                           f"||b|| = {np.linalg.norm(b_T):.3g}). The exact step of GraSP is "
                           f"ill-posed for unregularised logistic loss here; use more samples, "
                           f"a smaller s, or a stochastic method with a bounded inner loop")
        b = np.zeros(self.d)
        b[T] = b_T
        x_new, _ = _threshold(b, s)
        return StepResult(x=x_new, passes=1.0 + sub_passes, n_thresholds=1, Z=Z, T=T,
                          b_T=b_T, outer_event=0, status=status, message=message)

    def _logistic_on_T(self, WT, z0):
        y, n, loss = self.problem.y, self.n, self.problem.loss

        def fun(z):
            a = WT @ z
            f = float(np.mean(losses.sample_losses(a, y, loss)))
            grad = np.asarray(WT.T @ losses.loss_derivative(a, y, loss)).ravel() / n
            return f, grad

        res = scipy.optimize.minimize(fun, z0, jac=True, method="L-BFGS-B",
                                      options={"maxiter": self.p["sub_maxiter"],
                                               "gtol": 1e-10, "ftol": 1e-15})
        return res.x, float(res.nfev)


class _Stochastic(_Method):
    """Shared plumbing of the epoch kernels."""

    def _svrg_epoch(self, X, z, g, snap_dloss, idx, thr_every, s_keep, n_prev):
        """One SVRG epoch on ``X``: a dense array or a ``(data, indices, indptr)`` tuple."""
        ws, p = self.ws, self.p
        snaps = ws.snap_buffer(z.shape[0], p["record_iterates"])
        common = (self.problem.y, self.loss_code, z, g, snap_dloss, idx, p["eta"],
                  thr_every, s_keep, ws.keep_idx, ws.prev_idx, n_prev, ws.cand, ws.mags, ws.vbuf,
                  ws.ev_step, ws.ev_in, ws.ev_out, p["record"], ws.rec_every, ws.rec_loss,
                  snaps)
        if isinstance(X, tuple):
            out = K.svrg_epoch_csr(*X, *common)
        else:
            out = K.svrg_epoch_dense(X, *common)
        steps, n_ev, n_rec, _, status = out
        return int(steps), int(n_ev), int(n_rec), int(status), snaps


class SGHT(_Stochastic):
    """SG-HT: ``x <- H_s(x - eta * mean of a mini-batch of grad f_i(x))``; n samples a pass."""

    name = "sght"

    def __init__(self, problem, params, ws):
        super().__init__(problem, params, ws)
        self.batch = params["batch_size"]
        self.n_steps = max(1, self.n // self.batch)
        self.gbuf = np.zeros(self.d)
        self.passes_per_step = self.batch / self.n
        self.steps_per_iter = self.n_steps

    def step(self, x, rng):
        ws, p = self.ws, self.p
        idx = rng.integers(0, self.n, size=self.n_steps * self.batch)
        z = x.copy()
        n_prev = ws.set_prev(np.flatnonzero(x))
        snaps = ws.snap_buffer(self.d, p["record_iterates"])
        common = (self.problem.y, self.loss_code, z, idx, self.batch, p["eta"], p["s"],
                  self.gbuf, ws.keep_idx, ws.prev_idx, n_prev, ws.cand, ws.mags, ws.vbuf,
                  ws.ev_step, ws.ev_in, ws.ev_out, p["record"], ws.rec_every, ws.rec_loss,
                  snaps)
        if self.sparse:
            out = K.sg_epoch_csr(*self.csr, *common)
        else:
            out = K.sg_epoch_dense(self.problem.W, *common)
        steps, n_ev, n_rec, _, status = (int(v) for v in out)
        return StepResult(x=z, passes=steps * self.batch / self.n, n_thresholds=steps,
                          status=status, inner_steps=steps, n_events=n_ev,
                          n_checkpoints=n_rec, snaps=snaps[:n_rec])


class SVRGHT(_Stochastic):
    """SVRGHT: SVRG epochs with ``H_s`` after every inner step; the snapshot is ``z^J``."""

    name = "svrght"

    def __init__(self, problem, params, ws):
        super().__init__(problem, params, ws)
        self.passes_head = 1.0
        self.passes_per_step = 1.0 / self.n
        self.steps_per_iter = params["J"]

    def step(self, x, rng):
        p = self.p
        g, snap_dloss = self._full_gradient(x)
        idx = rng.integers(0, self.n, size=p["J"])
        z = x.copy()
        n_prev = self.ws.set_prev(np.flatnonzero(x))
        X = self.csr if self.sparse else self.problem.W
        steps, n_ev, n_rec, status, snaps = self._svrg_epoch(X, z, g, snap_dloss, idx, 1,
                                                             p["s"], n_prev)
        return StepResult(x=z, passes=1.0 + steps / self.n, n_thresholds=steps, status=status,
                          inner_steps=steps, n_events=n_ev, n_checkpoints=n_rec,
                          snaps=snaps[:n_rec])


class SVRGSP(_Stochastic):
    """SVRGSP / SVRGSP+: Algorithm 1 with Algorithm 2 as the sub-problem solver.

    ``inner="on_T"`` (our variant): the inner iterate ``z`` lives on ``T`` -- Algorithm 2
    solves the sub-problem, whose feasible set is ``x|_{T^c} = 0``, so each inner step costs
    O(|T|) and SVRGSP+'s ``H_|T|`` keeps everything (it is recorded, but changes nothing).
    ``inner="paper"``: ``z`` moves on all ``d`` coordinates (the paper's Algorithm 2),
    ``H_|T|`` keeps the ``|T|`` largest entries of ``z`` every ``ceil(J/m)``
    steps, and ``b`` is zeroed outside ``T`` at the end (Algorithm 1, step 5).

    On CSR data the dense part ``-eta * grad F(x~)`` of each inner step is applied lazily
    (see :func:`~rgrasp_viz._kernels.svrg_epoch_csr`), so an inner step costs O(nnz of the
    sampled row) in the full reading and O(nnz of the row within ``T``) in the restricted
    one, where ``W[:, T]`` is built per outer iteration from a CSC copy of ``W`` (made at the
    first iteration, O(nnz)) in O(n + nnz(W[:, T])).
    """

    name = "svrgsp"
    uses_support_pursuit = True
    plus = False

    def __init__(self, problem, params, ws):
        super().__init__(problem, params, ws)
        self.passes_head = 1.0
        self.passes_per_step = 1.0 / self.n
        self.steps_per_iter = params["J"]
        self.thr_every = math.ceil(params["J"] / params["m"]) if self.plus else 0
        self._csc = None  # CSC arrays of W (restricted reading on CSR data), built lazily
        self._cols = None  # dense restricted reading: W[:, T], updated in place

    def _work_matrix(self, T):
        """``(X, order)``: ``W[:, T]`` with its columns in the order ``order`` (a permutation
        of ``T``), as a dense array (possibly wider than ``|T|``; the epoch kernels read the
        first ``|T|`` columns) or the CSR arrays ``(data, indices, indptr)`` (``order = T``)."""
        if not self.sparse:
            if self._cols is None:  # once per solve, inside the timed region
                self._cols = WorkingColumns(self.problem.W, min(3 * self.p["s"], self.d))
            return self._cols.update(T)
        if self._csc is None:  # once per solve, inside the timed region: O(nnz)
            self._csc = csc_arrays(self.problem.W)
        return K.gather_columns_csc(*self._csc, self.n, T), T

    def step(self, x, rng):
        p, ws = self.p, self.ws
        s, J = p["s"], p["J"]
        g, snap_dloss = self._full_gradient(x)
        Z, T = merge_support(g, x, s)
        idx = rng.integers(0, self.n, size=J)
        if p["inner"] == "on_T":
            X, order = self._work_matrix(T)
            z = x[order]
            # every coordinate of the working space is "in" before the first H_|T|
            n_prev = ws.set_prev(np.arange(len(T)))
            steps, n_ev, n_rec, status, snaps = self._svrg_epoch(
                X, z, g[order], snap_dloss, idx, self.thr_every, len(T), n_prev)
            work_index = order.copy()
            b_T = np.empty(len(T))
            b_T[np.searchsorted(T, order)] = z  # working order -> ascending T
        else:
            z = x.copy()
            n_prev = ws.set_prev(T)
            steps, n_ev, n_rec, status, snaps = self._svrg_epoch(
                self.csr if self.sparse else self.problem.W, z, g, snap_dloss, idx,
                self.thr_every, len(T), n_prev)
            b_T = z[T]
            work_index = None
        keep = K.top_k(b_T, s)
        x_new = np.zeros(self.d)
        x_new[T[keep]] = b_T[keep]
        n_inner = n_ev if self.thr_every else 0
        return StepResult(x=x_new, passes=1.0 + steps / self.n, n_thresholds=n_inner + 1,
                          status=status, inner_steps=steps, Z=Z, T=T, b_T=b_T,
                          n_events=n_ev, n_checkpoints=n_rec, snaps=snaps[:n_rec],
                          work_index=work_index, outer_event=steps)


class SVRGSPPlus(SVRGSP):
    """SVRGSP+: SVRGSP with ``z <- H_|T|(z)`` every ``ceil(J/m)`` inner steps."""

    name = "svrgsp+"
    plus = True

