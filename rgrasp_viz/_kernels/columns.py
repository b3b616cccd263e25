"""The working matrix ``W[:, T]`` of a restricted epoch, in a dense / CSR pair.

SVRGSP in the restricted reading runs its inner loop on the columns ``T`` of the data, so
every outer iteration builds ``W[:, T]`` once:

* dense: :func:`update_columns_dense` keeps ``W[:, T]`` in one C-contiguous ``n x 3s``
  buffer for the whole solve and, each outer iteration, copies in only the columns that
  entered ``T`` (O(n x number of changed columns); the column order is a permutation of
  ``T``, recorded in ``slots``);
* CSR: :func:`gather_columns_csc` reads the columns from a CSC copy of ``W`` (made once per
  solve) and writes canonical CSR arrays of ``W[:, T]`` in O(n + |T| + nnz(W[:, T])) -- the
  columns outside ``T`` are never touched, so this costs far less than a pass over the data.
"""

from __future__ import annotations

import numpy as np

from ._jit import njit


@njit(cache=True)
def update_columns_dense(X, T, B, slots, m_prev, where, tmp):
    """Make the first ``|T|`` columns of ``B`` hold ``X[:, T]``, in some order, in place.

    ``B`` (n x cap, C-contiguous, ``cap >= |T|``) is the working matrix of the previous outer
    iteration: its column ``k < m_prev`` holds ``X[:, slots[k]]``, and ``where[c]`` is the
    slot of column ``c`` of ``X`` (-1 if none).  Columns that stay in ``T`` stay where they
    are; a column that enters is copied from ``X`` into a freed slot, and when ``T`` shrinks
    the live columns beyond ``|T|`` move down into the remaining holes.  From one outer
    iteration to the next 50-90 % of ``T`` stays (measured on the classroom problem and
    setting 1), and a column of ``X`` costs a cache line per row, so this reads a fraction
    of what a fresh gather does.  ``slots`` and ``where`` are updated; ``tmp`` is int64
    scratch of shape ``(5, cap)`` (no allocation here: each new allocation type costs
    compile time on a cold cache).  The epoch kernels read ``B`` with ``p = |T|`` (their
    ``z`` has ``|T|`` entries), so the columns beyond are never touched.  ``T`` must be
    ascending.  Afterwards ``B[:, :|T|] == X[:, slots[:|T|]]`` exactly.  Cost
    O(n x changed columns + |T|).
    """
    n = X.shape[0]
    m = T.shape[0]
    stays = tmp[0]
    entering = tmp[1]
    holes = tmp[2]
    pos = tmp[3]
    move_src = tmp[4]
    # 1. columns of T without a slot enter; slots whose column left T become holes
    for k in range(m_prev):
        stays[k] = 0
    ne = 0
    for q in range(m):
        k = where[T[q]]
        if k >= 0:
            stays[k] = 1
        else:
            entering[ne] = T[q]
            ne += 1
    nh = 0
    for k in range(m_prev):
        if stays[k] == 0:
            holes[nh] = k
            nh += 1
            where[slots[k]] = -1
    # 2. positions to fill below m: holes there, then the new slots m_prev .. m-1;
    #    sources: live columns stranded at or beyond m (moved down), then entering columns
    npos = 0
    for r in range(nh):
        if holes[r] < m:
            pos[npos] = holes[r]
            npos += 1
    for k in range(m_prev, m):
        pos[npos] = k
        npos += 1
    nm = 0
    r = 0
    for k in range(m, m_prev):
        while r < nh and holes[r] < k:
            r += 1
        if not (r < nh and holes[r] == k):
            move_src[nm] = k
            nm += 1
    for i in range(n):
        for r in range(nm):
            B[i, pos[r]] = B[i, move_src[r]]
        for r in range(ne):
            B[i, pos[nm + r]] = X[i, entering[r]]
    for r in range(nm):
        c = slots[move_src[r]]
        slots[pos[r]] = c
        where[c] = pos[r]
    for r in range(ne):
        c = entering[r]
        slots[pos[nm + r]] = c
        where[c] = pos[nm + r]


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
