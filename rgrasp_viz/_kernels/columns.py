"""The working matrix ``W[:, T]`` of a restricted epoch, in a dense / CSR pair.

SVRGSP in the restricted reading runs its inner loop on the columns ``T`` of the data, so
every outer iteration builds ``W[:, T]`` once:

* dense: ``W[:, T]`` stays in one C-contiguous ``n x 3s`` buffer for the whole solve
  (:class:`rgrasp_viz.solvers._common.WorkingColumns`); each outer iteration
  :func:`copy_columns` copies in only the columns that entered ``T``, O(n x changed
  columns);
* CSR: :func:`gather_columns_csc` reads the columns from a CSC copy of ``W`` (made once per
  solve) and writes canonical CSR arrays of ``W[:, T]`` in O(n + |T| + nnz(W[:, T])) -- the
  columns outside ``T`` are never touched, so this costs far less than a pass over the data.
"""

from __future__ import annotations

import numpy as np

from ._jit import njit


@njit(cache=True)
def copy_columns(src, cols, dst, pos):
    """``dst[:, pos[r]] = src[:, cols[r]]`` for every ``r``, row by row (C-contiguous arrays
    with the same number of rows; ``src`` may be ``dst`` when no ``pos`` is in ``cols``)."""
    for i in range(src.shape[0]):
        for r in range(cols.shape[0]):
            dst[i, pos[r]] = src[i, cols[r]]


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
