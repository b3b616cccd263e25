"""GraSP's sub-problem for least squares, solved exactly: the minimiser over the coordinates T.

For the objective ``F(x) = ||W x - y||^2 / (2n) + (lam / 2) ||x||^2`` the sub-problem of
Algorithm 1 (``min F(x)`` subject to ``x|_{T^c} = 0``) has the normal equations

    (W_T^T W_T + n lam I) b = W_T^T y.

Two exact solvers, both kept per solve by :class:`RestrictedLeastSquares`:

* ``"cholesky"`` (default): the Gram matrix ``W_T^T W_T`` and ``W_T^T y`` are kept from one
  outer iteration to the next in the slots of the working matrix ``W[:, T]``
  (:class:`~rgrasp_viz.solvers._common.WorkingColumns`): only the rows and columns of the
  coordinates that entered ``T`` are computed (one sweep over the samples, reading their
  columns and ``W_T``), then a Cholesky factorization.  On CSR data the Gram matrix of the
  (sparse) ``W_T`` is formed afresh, also in one sweep.
* ``"cg"``: conjugate gradients on the normal equations, warm-started from the previous
  iterate on ``T``, to a relative residual of ``rtol``; each iteration is one pass over
  ``W_T`` (:func:`~rgrasp_viz._kernels.restricted.gram_apply_dense`).

Both are exact to rounding.  If the Gram matrix is ill-conditioned (reciprocal condition
number below 1e-5: LAPACK's estimate, asked for when the squared ratio of the smallest to the
largest diagonal entry of the Cholesky factor is below 1e-2), iterative refinement with the
residual ``W_T^T (y - W_T b)`` formed from ``W_T`` restores the digits the normal equations
lose (the corrected semi-normal equations); if it is numerically singular (``W_T`` rank
deficient, or wider than tall without a ridge term), the minimum-norm solution comes from a
rank-revealing solve on ``W_T`` itself (LAPACK ``gelsd``; a dense copy of ``W_T`` for CSR
data).

Counting work (the package's one rule)
--------------------------------------
A *pass* is one evaluation of a full or restricted gradient over the ``n`` samples; one
component gradient ``grad f_i`` is ``1/n`` of a pass (the paper's unit).  An exact restricted
solve -- GraSP's step 5, HTP's debiasing fit, either loss -- is charged what an iterative
solver that evaluates restricted gradients spends to reach the stated accuracy
``||grad_T F(z)||_inf <= WORK_RTOL * max(||grad_T F(z^0)||_inf, ||grad_T F(0)||_inf)`` from
the warm start ``z^0`` (the gradient at 0 sets the problem's scale, so a warm start that is
already accurate costs one evaluation instead of a chase after rounding noise):
conjugate gradients for least squares (:func:`work_cg`: each iteration is one restricted
gradient, i.e. one pass, plus one for the gradient at ``z^0`` unless the caller already has
it -- GraSP's step 2 computed it), L-BFGS for the logistic loss (one pass per function and
gradient evaluation, counted until the same tolerance is first met), however the package
actually computes the fit: the kept Gram matrix, the Cholesky factorization, refinement and
rank-revealing solves are how the answer is obtained fast in time (time is measured as is),
not what the step is charged in passes.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from scipy.linalg import lapack

from .. import _kernels as K
from .._kernels.restricted import gram_apply_csr, gram_apply_dense
from .._kernels.threads import BlasThreads
from ._common import WorkingColumns, csc_arrays

__all__ = ["WORK_RTOL", "RestrictedLeastSquares", "restricted_least_squares", "work_cg"]

METHODS = ("cholesky", "cg")
_RCOND_CHECK = 1e-2  # Cholesky diagonal's estimate below this: ask LAPACK (dpocon)
_RCOND_REFINE = 1e-5  # below this reciprocal condition number of the Gram matrix: refine
_RCOND_SINGULAR = 1e-13  # below this: singular, rank-revealing solve on W_T
_MAX_REFINE = 10
WORK_RTOL = 1e-6
"""The accuracy an exact restricted solve is charged for: the restricted gradient's largest
entry reduced to this fraction of its value at the warm start, or at 0 if that is larger
(see the module docstring)."""
BLAS_THREADED_COLUMNS = 1024
"""Working sets of at least this many columns get multi-threaded BLAS; smaller systems run
their BLAS calls on one thread (measurements in ``benchmarks/README.md``)."""


class RestrictedLeastSquares:
    """Exact least-squares minimiser on the successive merged supports ``T`` of one solve.

    Parameters
    ----------
    W : ndarray (C-contiguous) or scipy.sparse.csr_matrix, shape (n, d)
    y : ndarray, shape (n,)
    cap : int
        Largest ``|T|`` expected (GraSP: ``min(3 s, d)``); the dense working matrix and
        Gram matrix are allocated for it once.
    lam : float, default 0.0
        Ridge weight: ``F`` includes ``(lam / 2) ||x||^2``.
    method : {"cholesky", "cg"}
    rtol : float, default 1e-13
        ``"cg"``: stop at ``||r_k|| <= rtol ||W_T^T y||`` (normal-equation residual).
    """

    def __init__(self, W, y, cap, lam=0.0, method="cholesky", rtol=1e-13):
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        lam = float(lam)
        if not lam >= 0.0:
            raise ValueError(f"lam must be >= 0, got {lam!r}")
        cap = int(cap)
        if cap < 1:
            raise ValueError(f"cap must be a positive integer, got {cap!r}")
        self.W, self.y = W, np.ascontiguousarray(y, dtype=np.float64)
        self.n, self.d = W.shape
        self.cap, self.lam, self.method, self.rtol = min(cap, self.d), lam, method, float(rtol)
        self.sparse = sp.issparse(W)
        self._zeros = np.zeros(self.n)
        self._csc = None  # CSR data: CSC arrays of W, made at the first solve
        self.last_sweeps = 0.0  # passes over the samples the last solve actually made
        if not self.sparse:
            self._allocate(self.cap)

    def _allocate(self, cap):
        """Slots for up to ``cap`` columns (dense data); forgets every Gram entry."""
        self.cap = cap
        if not self.sparse:
            self._cols = WorkingColumns(self.W, cap)
            self._G = np.empty((cap, cap))  # Gram matrix of the slots
            self._r = np.empty(cap)  # W_slot^T y
            self._known = np.full(cap, -1, dtype=np.int64)  # column each slot's row is of

    # -- the working matrix and its Gram matrix ------------------------------------------------

    def _dense_system(self, T):
        """``(B, order, G, r, passes)``: ``B[:, :m] = W[:, order]``, its Gram matrix ``G`` (kept
        in slots, only entering columns computed; ``None`` for ``"cg"``) and ``W_T^T y``."""
        B, order = self._cols.update(T)
        m = len(T)
        order = order.copy()
        Bm = B[:, :m]
        if self.method == "cg":  # W_T^T y is formed in the sweep of the first residual
            return B, order, None, Bm.T @ self.y, 0.0
        new = np.flatnonzero(self._known[:m] != order)
        passes = 0.0
        if 2 * len(new) >= m:  # most of T is new: the whole Gram matrix (W_T^T W_T: syrk)
            self._G[:m, :m] = Bm.T @ Bm
            self._r[:m] = Bm.T @ self.y
            self._known[:m] = order
            passes = 1.0
        elif len(new):  # one sweep: the entering columns against every column of T, and y
            Bn = np.empty((self.n, len(new)))
            K.copy_columns(B, new, Bn, np.arange(len(new)))
            rows = Bn.T @ Bm
            self._G[new, :m] = rows
            self._G[:m, new] = rows.T
            self._r[new] = Bn.T @ self.y
            self._known[new] = order[new]
            passes = 1.0
        self._known[m:] = -1
        return B, order, self._G[:m, :m], self._r[:m], passes

    def _sparse_system(self, T):
        """CSR twin of :meth:`_dense_system` (the Gram matrix of the sparse ``W_T`` afresh)."""
        if self._csc is None:
            self._csc = csc_arrays(self.W)
        data, indices, indptr = K.gather_columns_csc(*self._csc, self.n, T)
        WT = sp.csr_matrix((data, indices, indptr), shape=(self.n, len(T)))
        r = np.asarray(WT.T @ self.y, dtype=np.float64).ravel()
        if self.method == "cg":
            return (data, indices, indptr), T, None, r, 0.0
        return (data, indices, indptr), T, _gram(WT), r, 1.0

    def _gram_of(self, X, m):
        """The Gram matrix of ``W_T`` afresh (``"cg"``'s fallback)."""
        if self.sparse:
            return _gram(sp.csr_matrix(X, shape=(self.n, m)))
        return X[:, :m].T @ X[:, :m]

    def _apply(self, X, m, p, t=None):
        """``W_T^T (W_T p - t) + n lam p`` (``t = 0`` when None): one pass over ``W_T``."""
        q = np.empty(m)
        t = self._zeros if t is None else t
        if self.sparse:
            gram_apply_csr(*X, p, t, q)
        else:
            gram_apply_dense(X, m, p, t, q)
        if self.lam:
            q += (self.n * self.lam) * p
        return q

    # -- solvers --------------------------------------------------------------------------------

    def solve(self, T, b0=None, gradient_known=False):
        """Minimise ``F`` over ``x|_{T^c} = 0``.

        Parameters
        ----------
        T : ndarray of int
            Ascending, distinct column indices, ``1 <= |T| <= d`` (beyond ``cap`` the slots
            are re-made, which forgets the kept Gram entries).
        b0 : ndarray, shape (|T|,), optional
            Warm start on ``T`` (default 0): where ``"cg"`` starts, and where the work rule's
            conjugate gradients start (e.g. the previous iterate restricted to ``T``).
        gradient_known : bool, default False
            The caller already has the restricted gradient at ``b0`` (GraSP: step 2's
            gradient on ``T``), so it is not charged again.

        Returns
        -------
        b_T : ndarray, shape (|T|,)
            The minimiser on ``T``, in the order of ``T`` (the minimum-norm one when it is
            not unique).
        passes : float
            The work charged by the package's rule (module docstring): the restricted
            gradients conjugate gradients evaluate from ``b0`` to reach :data:`WORK_RTOL`.
            The sweeps over the samples this solve actually made (new Gram entries,
            refinement, ``"cg"`` iterations) are in :attr:`last_sweeps`.
        """
        T = np.asarray(T, dtype=np.int64)
        m = len(T)
        if not 1 <= m <= self.d:
            raise ValueError(f"|T| must be between 1 and d = {self.d}, got {m}")
        if m > self.cap:  # e.g. a start x0 with more than s nonzeros
            self._allocate(m)
        # one BLAS thread below BLAS_THREADED_COLUMNS: OpenBLAS threads that spin after a
        # small call hold up the gradient kernels' threads next to them
        with BlasThreads(None if m >= BLAS_THREADED_COLUMNS else 1):
            if self.sparse:
                X, order, G, r, passes = self._sparse_system(T)
            else:
                X, order, G, r, passes = self._dense_system(T)
            z0 = np.zeros(m)
            if b0 is not None:
                z0 = np.asarray(b0, dtype=np.float64)[np.searchsorted(T, order)]
            if self.method == "cg":
                z, more = self._cg(X, m, r, z0 if b0 is not None else None)
            else:
                z, more = self._direct(X, m, G, r)
            charged = self._charge(X, m, G, r, z0) - (1 if gradient_known else 0)
        self.last_sweeps = passes + more
        b = np.empty(m)
        b[np.searchsorted(T, order)] = z  # working order -> ascending T
        return b, float(charged)

    def _charge(self, X, m, G, r, z0):
        """Restricted-gradient evaluations of conjugate gradients from ``z0`` to
        :data:`WORK_RTOL` (on the kept Gram matrix when there is one: no pass over the data)."""
        if G is None:
            def matvec(p):
                return self._apply(X, m, p)
        else:
            nlam = self.n * self.lam

            def matvec(p):
                q = G @ p
                return q + nlam * p if nlam else q
        return work_cg(matvec, r, z0)

    def _direct(self, X, m, G, r):
        """Cholesky on the normal equations; refined when ill-conditioned; a rank-revealing
        solve on ``W_T`` itself when singular."""
        A = G.copy()
        if self.lam:
            A[np.diag_indices(m)] += self.n * self.lam
        c, info = lapack.dpotrf(A, lower=0, clean=0, overwrite_a=1)
        rcond = 0.0
        if info == 0:
            # (min R_jj / max R_jj)^2 >= rcond: only when it is small is LAPACK's estimate
            # (several triangular solves, ~40 % of the factorization) worth its cost
            diag = np.abs(np.diagonal(c))
            rcond = (diag.min() / diag.max()) ** 2 if diag.max() > 0 else 0.0
            if rcond < _RCOND_CHECK:
                anorm = float(np.abs(G).sum(axis=0).max()) + self.n * self.lam  # ||A||_1
                rcond = _rcond(c, anorm)
        if rcond < _RCOND_SINGULAR:
            return self._lstsq(X, m), 1.0
        z = _potrs(c, r)
        if rcond >= _RCOND_REFINE:
            return z, 0.0
        # corrected semi-normal equations: the residual from W_T, the correction from R
        passes = 0.0
        for _ in range(_MAX_REFINE):
            res = -self._apply(X, m, z, self.y)  # W_T^T (y - W_T z) - n lam z
            passes += 1.0
            dz = _potrs(c, res)
            z = z + dz
            if np.linalg.norm(dz) <= 1e-15 * max(np.linalg.norm(z), 1e-300):
                break
        return z, passes

    def _lstsq(self, X, m):
        """Minimum-norm least squares on ``W_T`` (SVD-based, LAPACK ``gelsd``)."""
        WT = (sp.csr_matrix(X, shape=(self.n, m)).toarray() if self.sparse
              else np.array(X[:, :m]))
        rhs = self.y
        if self.lam:
            WT = np.vstack([WT, np.sqrt(self.n * self.lam) * np.eye(m)])
            rhs = np.concatenate([self.y, np.zeros(m)])
        cond = np.finfo(np.float64).eps * max(WT.shape)  # NumPy's default cutoff
        return scipy.linalg.lstsq(WT, rhs, cond=cond, lapack_driver="gelsd",
                                  check_finite=False)[0]

    def _cg(self, X, m, r, z0):
        """Conjugate gradients on ``A z = r`` from ``z0`` (0 if None)."""
        z = np.zeros(m) if z0 is None else z0.copy()
        passes = 1.0  # W_T^T y, and W_T^T W_T z0 for a warm start, in one sweep
        res = r - self._apply(X, m, z) if np.any(z) else r.copy()
        target = self.rtol * np.linalg.norm(r)
        rr = float(res @ res)
        p = res.copy()
        for _ in range(10 * m + 10):
            if rr <= target * target:
                break
            q = self._apply(X, m, p)
            passes += 1.0
            pq = float(p @ q)
            if not pq > 0.0:  # singular along p: leave it to the direct solver
                break
            alpha = rr / pq
            z += alpha * p
            res -= alpha * q
            rr_new = float(res @ res)
            p = res + (rr_new / rr) * p
            rr = rr_new
        if rr > target * target:  # not converged (singular or too ill-conditioned)
            z, more = self._direct(X, m, self._gram_of(X, m), r)
            passes += 1.0 + more
        return z, passes


def work_cg(matvec, rhs, z0, rtol=WORK_RTOL, maxiter=None):
    """How many restricted gradients conjugate gradients evaluate to reach the work rule's
    accuracy on ``A z = rhs`` (``A`` symmetric positive semi-definite, ``matvec(p) = A p``).

    The residual ``rhs - A z`` is the restricted gradient up to the factor ``-n``; CG
    evaluates it once at ``z0`` and then once per iteration (``A p``, one pass over ``W_T``
    for a solver that does not keep the Gram matrix), and stops when
    ``||rhs - A z||_inf <= rtol * max(||rhs - A z0||_inf, ||rhs||_inf)`` (``rhs`` is the
    residual at 0).

    Parameters
    ----------
    matvec : callable
    rhs, z0 : ndarray
    rtol : float, default WORK_RTOL
    maxiter : int, optional
        Cap on iterations (default ``10 |T| + 10``); a breakdown (``p^T A p <= 0``: a
        singular direction) also stops it.

    Returns
    -------
    int
        The evaluations: 1 (the gradient at ``z0``) + the iterations.
    """
    m = len(rhs)
    z = np.array(z0, dtype=np.float64)
    res = rhs - matvec(z) if np.any(z) else np.array(rhs, dtype=np.float64)
    evals = 1
    target = rtol * max(float(np.max(np.abs(res))), float(np.max(np.abs(rhs)))) if m else 0.0
    if float(np.max(np.abs(res))) <= target:
        return evals
    if target == 0.0:
        return evals
    rr = float(res @ res)
    p = res.copy()
    for _ in range(10 * m + 10 if maxiter is None else maxiter):
        q = matvec(p)
        evals += 1
        pq = float(p @ q)
        if not pq > 0.0:
            break
        alpha = rr / pq
        z += alpha * p
        res -= alpha * q
        if float(np.max(np.abs(res))) <= target:
            break
        rr_new = float(res @ res)
        p = res + (rr_new / rr) * p
        rr = rr_new
    return evals


def _gram(WT):
    """``WT^T WT`` as a dense array, for a sparse ``WT``."""
    return np.asarray((WT.T @ WT).toarray(), dtype=np.float64)


def _rcond(c, anorm):
    """Reciprocal condition number (1-norm) from the upper Cholesky factor ``c``."""
    rc, info = lapack.dpocon(c, anorm)
    return float(rc) if info == 0 else 0.0


def _potrs(c, b):
    """Solve with the upper Cholesky factor ``c``."""
    x, info = lapack.dpotrs(c, b, lower=0)
    if info != 0:  # pragma: no cover - only for invalid arguments
        raise np.linalg.LinAlgError(f"dpotrs failed (info = {info})")
    return x


def restricted_least_squares(W, y, T, lam=0.0, b0=None, method="cholesky",
                             gradient_known=False):
    """One exact solve of GraSP's least-squares sub-problem on ``T`` (no state kept).

    Returns ``(b_T, passes)`` as :meth:`RestrictedLeastSquares.solve`.
    """
    T = np.asarray(T, dtype=np.int64)
    return RestrictedLeastSquares(W, y, max(len(T), 1), lam=lam, method=method).solve(
        T, b0, gradient_known)
