"""The working matrix ``W[:, T]`` of a restricted epoch, in a dense / CSR pair.

SVRGSP in the restricted reading runs its inner loop on the columns ``T`` of the data, so
every outer iteration builds ``W[:, T]`` once:

* dense: :func:`gather_columns_dense` copies the ``|T|`` columns into a C-contiguous
  ``n x |T|`` buffer (O(n |T|));
* CSR: :func:`gather_columns_csc` reads the columns from a CSC copy of ``W`` (made once per
  solve) and writes canonical CSR arrays of ``W[:, T]`` in O(n + |T| + nnz(W[:, T])) -- the
  columns outside ``T`` are never touched, so this costs far less than a pass over the data.
"""

from __future__ import annotations

import numpy as np

from ._jit import njit


@njit(cache=True)
def gather_columns_dense(X, T, out):
    """``out[:, q] = X[:, T[q]]`` for a C-contiguous ``X`` (n x d) and ``out`` (n x |T|)."""
    n = X.shape[0]
    m = T.shape[0]
    for i in range(n):
        for q in range(m):
            out[i, q] = X[i, T[q]]
    return out


@njit(cache=True)
def gather_columns_csc(cdata, cindices, cindptr, n, T):
    """CSR arrays ``(data, indices, indptr)`` of ``W[:, T]`` from the CSC arrays of ``W``.

    ``T`` must be ascending; the row indices of each CSC column need not be sorted.  The
    result has column indices ``0 .. |T|-1`` (positions in ``T``), sorted within each row,
    and no duplicates if ``W`` has none: the canonical CSR of ``W[:, T]``.
    """
    m = T.shape[0]
    indptr = np.zeros(n + 1, dtype=np.int64)
    for q in range(m):
        col = T[q]
        for e in range(cindptr[col], cindptr[col + 1]):
            indptr[cindices[e] + 1] += 1
    for i in range(n):
        indptr[i + 1] += indptr[i]
    nnz = indptr[n]
    data = np.empty(nnz, dtype=np.float64)
    indices = np.empty(nnz, dtype=np.int64)
    pos = np.empty(n, dtype=np.int64)
    for i in range(n):
        pos[i] = indptr[i]
    for q in range(m):  # ascending q: each row receives its columns in order
        col = T[q]
        for e in range(cindptr[col], cindptr[col + 1]):
            r = cindices[e]
            w = pos[r]
            data[w] = cdata[e]
            indices[w] = q
            pos[r] = w + 1
    return data, indices, indptr
