"""The full gradient ``grad F(x) = W^T f'(W x) / n``, dense / CSR.

One fused pass over the data: each row's margin ``w_i^T x`` is formed and its contribution
``f'(w_i^T x) w_i / n`` added while the row is in cache; the derivatives ``f'(w_i^T x)`` are
stored for SVRG, whose snapshot term ``grad f_i(x~)`` they determine.  The iterates of every
method are ``s``-sparse, so on dense data the margin of a row reads only the nonzeros of
``x`` (``sup``, ``xs``).  Single-threaded on purpose: a multi-threaded BLAS ``dgemv`` on a
loaded 2-core machine was measured 25-100x slower than its quiet time, which made the timings
of small solves meaningless; this kernel is as fast as the BLAS pair when the machine is
quiet.
"""

from __future__ import annotations

from ._jit import njit
from .epochs import dloss


@njit(cache=True)
def full_gradient_dense(X, y, loss, sup, xs, deriv, g):
    """``deriv = f'(X[:, sup] @ xs)`` and ``g = X^T deriv / n`` (``X`` C-contiguous)."""
    n, d = X.shape
    m = sup.shape[0]
    for k in range(d):
        g[k] = 0.0
    for i in range(n):
        a = 0.0
        for q in range(m):
            a += X[i, sup[q]] * xs[q]
        r = dloss(a, y[i], loss)
        deriv[i] = r
        for k in range(d):
            g[k] += r * X[i, k]
    for k in range(d):
        g[k] /= n


@njit(cache=True)
def full_gradient_csr(data, indices, indptr, y, loss, x, deriv, g):
    """CSR twin of :func:`full_gradient_dense` (``x`` dense; one pass over the nonzeros)."""
    n = indptr.shape[0] - 1
    for k in range(g.shape[0]):
        g[k] = 0.0
    for i in range(n):
        lo = indptr[i]
        hi = indptr[i + 1]
        a = 0.0
        for q in range(lo, hi):
            a += data[q] * x[indices[q]]
        r = dloss(a, y[i], loss)
        deriv[i] = r
        for q in range(lo, hi):
            g[indices[q]] += r * data[q]
    for k in range(g.shape[0]):
        g[k] /= n
