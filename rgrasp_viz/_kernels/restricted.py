"""One pass over the working matrix ``W_T``: ``q = W_T^T (W_T p - t)``, dense / CSR.

The gradient of the least-squares sub-problem on ``T`` (times ``n``), without forming the Gram
matrix, in one sweep over the ``n`` samples: each row's ``w_{i,T}^T p - t_i`` is formed and
``(w_{i,T}^T p - t_i) w_{i,T}`` added while the row is in cache.  With ``t = 0`` it is the
product with the Gram matrix (a conjugate-gradient iteration of
:mod:`rgrasp_viz.solvers._exact`); with ``t = y`` it is the normal-equation residual formed
from the least-squares residual, the accurate one for iterative refinement.
"""

from __future__ import annotations

import numpy as np

from ._jit import njit


@njit(cache=True, nogil=True)
def gram_apply_dense(B, m, p, t, q):
    """``q = B[:, :m]^T (B[:, :m] @ p - t)`` for a C-contiguous ``B`` (its first ``m`` columns)."""
    n = B.shape[0]
    for k in range(m):
        q[k] = 0.0
    for i in range(n):
        a0 = 0.0
        a1 = 0.0
        k = 0
        while k + 2 <= m:
            a0 += B[i, k] * p[k]
            a1 += B[i, k + 1] * p[k + 1]
            k += 2
        if k < m:
            a0 += B[i, k] * p[k]
        a = (a0 + a1) - t[i]
        for k in range(m):
            q[k] += a * B[i, k]


@njit(cache=True, nogil=True)
def gram_apply_csr(data, indices, indptr, p, t, q):
    """``q = X^T (X @ p - t)`` for CSR arrays of ``X`` (column indices ``0 .. len(q)-1``)."""
    for k in range(q.shape[0]):
        q[k] = 0.0
    for i in range(indptr.shape[0] - 1):
        a = 0.0
        for e in range(indptr[i], indptr[i + 1]):
            a += data[e] * p[np.uint64(indices[e])]
        a -= t[i]
        for e in range(indptr[i], indptr[i + 1]):
            q[np.uint64(indices[e])] += a * data[e]
