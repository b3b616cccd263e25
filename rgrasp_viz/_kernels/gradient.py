"""The full gradient ``grad F(x) = W^T f'(W x) / n (+ lam x)``, dense / CSR.

One fused pass over the data: each row's margin ``w_i^T x`` is formed and its contribution
``f'(w_i^T x) w_i`` added while the row is in cache (dense: eight rows at a time, so the
accumulator is loaded and stored once per eight rows); the derivatives ``f'(w_i^T x)`` are
stored, because SVRG's snapshot term ``grad f_i(x~) = f'(w_i^T x~) w_i`` is rebuilt from them.
The iterates of every method are ``s``-sparse, so on dense data the margin of a row reads
only the nonzeros of ``x`` (``sup``, ``xs``).

Threads: the rows are split into a fixed set of chunks that depends only on the shape of the
data (:func:`row_chunks`), never on the thread count; each chunk accumulates into its own
partial vector and the partial vectors are added in chunk order.  So a result is the same,
bit for bit, for every thread count (:mod:`.threads`: ``RGRASP_VIZ_NUM_THREADS`` or
:func:`~rgrasp_viz._kernels.threads.set_num_threads`).  Problems below :data:`PARALLEL_WORK`
have a single chunk and run on the calling thread: waking a second thread costs more than it
saves there.
"""

from __future__ import annotations

import threading

import numpy as np

from ._jit import njit
from .epochs import dloss
from .threads import MAIN, WORKER, get_num_threads, run_chunks

PARALLEL_WORK = 1 << 20
"""Smallest amount of work (dense: ``n * d`` entries; CSR: stored nonzeros) split into chunks
and run on several threads."""

CHUNK_WORK = 1 << 18
"""Smallest amount of work per chunk."""

MAX_CHUNKS = 16
"""Most chunks of one gradient (enough to keep 16 threads busy)."""


def row_chunks(n, d, work):
    """How many chunks a gradient over ``n`` rows, ``d`` columns and ``work`` units is split into.

    One chunk below :data:`PARALLEL_WORK`; otherwise as many as the work allows with at least
    :data:`CHUNK_WORK` per chunk, at most :data:`MAX_CHUNKS`, and partial vectors (``d``
    entries per chunk) that add at most an eighth to the work.  Depends on the shape only.
    """
    if work < PARALLEL_WORK or n < 2:
        return 1
    return int(max(1, min(MAX_CHUNKS, work // CHUNK_WORK, work // (8 * max(d, 1)), n)))


class _Scratch:
    """Partial vectors and worker-side derivatives of one multi-threaded gradient call.

    Held by the calling thread and by the call's workers together; it goes back to the free
    list when both have let go (a worker overtaken by the calling thread may still be writing
    into it after the call returned, see :func:`~rgrasp_viz._kernels.threads.run_chunks`).
    """

    def __init__(self, rows, d, n):
        self.parts = np.empty((rows, d))
        self.deriv = np.empty(n)
        self.holders = 0

    def fits(self, rows, d, n):
        return self.parts.shape[0] >= rows and self.parts.shape[1] == d and self.deriv.shape[0] == n


_free = []
_free_lock = threading.Lock()
_KEEP = 4  # scratch sets kept for reuse


def _take_scratch(rows, d, n):
    with _free_lock:
        for k, sc in enumerate(_free):
            if sc.fits(rows, d, n):
                del _free[k]
                sc.holders = 2  # the calling thread and the workers
                return sc
    sc = _Scratch(rows, d, n)
    sc.holders = 2
    return sc


def _let_go(sc):
    with _free_lock:
        sc.holders -= 1
        if sc.holders == 0:
            _free.insert(0, sc)
            del _free[_KEEP:]


@njit(cache=True, nogil=True)
def _rows_dense(X, y, loss, sup, xs, lo, hi, deriv, out, div):
    """``deriv[i] = f'(X[i, sup] @ xs)`` and ``out = sum_i deriv[i] X[i]`` for ``lo <= i < hi``,
    then ``out /= div`` unless ``div`` is 0 (one chunk: ``out`` is the gradient)."""
    d = X.shape[1]
    m = sup.shape[0]
    for k in range(d):
        out[k] = 0.0
    i = lo
    while i < hi:
        nb = min(8, hi - i)
        if nb == 8:  # eight margins in one sweep over sup
            a0 = 0.0
            a1 = 0.0
            a2 = 0.0
            a3 = 0.0
            a4 = 0.0
            a5 = 0.0
            a6 = 0.0
            a7 = 0.0
            for q in range(m):
                c = np.uint64(sup[q])  # unsigned: no negative-index wraparound in the loop
                v = xs[q]
                a0 += X[i, c] * v
                a1 += X[i + 1, c] * v
                a2 += X[i + 2, c] * v
                a3 += X[i + 3, c] * v
                a4 += X[i + 4, c] * v
                a5 += X[i + 5, c] * v
                a6 += X[i + 6, c] * v
                a7 += X[i + 7, c] * v
            deriv[i] = a0
            deriv[i + 1] = a1
            deriv[i + 2] = a2
            deriv[i + 3] = a3
            deriv[i + 4] = a4
            deriv[i + 5] = a5
            deriv[i + 6] = a6
            deriv[i + 7] = a7
        else:
            for j in range(i, hi):
                a = 0.0
                for q in range(m):
                    a += X[j, np.uint64(sup[q])] * xs[q]
                deriv[j] = a
        for j in range(i, i + nb):  # one call site: dloss is inlined once
            deriv[j] = dloss(deriv[j], y[j], loss)
        if nb == 8:
            r0 = deriv[i]
            r1 = deriv[i + 1]
            r2 = deriv[i + 2]
            r3 = deriv[i + 3]
            r4 = deriv[i + 4]
            r5 = deriv[i + 5]
            r6 = deriv[i + 6]
            r7 = deriv[i + 7]
            for k in range(d):
                out[k] += (((r0 * X[i, k] + r1 * X[i + 1, k])
                            + (r2 * X[i + 2, k] + r3 * X[i + 3, k]))
                           + ((r4 * X[i + 4, k] + r5 * X[i + 5, k])
                              + (r6 * X[i + 6, k] + r7 * X[i + 7, k])))
        else:
            for j in range(i, hi):
                r = deriv[j]
                for k in range(d):
                    out[k] += r * X[j, k]
        i += nb
    if div != 0.0:
        for k in range(d):
            out[k] /= div


@njit(cache=True, nogil=True)
def _rows_csr(data, indices, indptr, y, loss, x, lo, hi, deriv, out, div):
    """CSR twin of :func:`_rows_dense` (``x`` dense; one pass over the row's nonzeros)."""
    for k in range(out.shape[0]):
        out[k] = 0.0
    for i in range(lo, hi):
        q0 = indptr[i]
        q1 = indptr[i + 1]
        a0 = 0.0  # four partial sums: one running sum is bound by the latency of an add
        a1 = 0.0
        a2 = 0.0
        a3 = 0.0
        q = q0
        while q + 4 <= q1:
            a0 += data[q] * x[np.uint64(indices[q])]
            a1 += data[q + 1] * x[np.uint64(indices[q + 1])]
            a2 += data[q + 2] * x[np.uint64(indices[q + 2])]
            a3 += data[q + 3] * x[np.uint64(indices[q + 3])]
            q += 4
        while q < q1:
            a0 += data[q] * x[np.uint64(indices[q])]
            q += 1
        a = (a0 + a1) + (a2 + a3)
        r = dloss(a, y[i], loss)
        deriv[i] = r
        for q in range(q0, q1):
            out[np.uint64(indices[q])] += r * data[q]
    if div != 0.0:
        for k in range(out.shape[0]):
            out[k] /= div


@njit(cache=True, nogil=True)
def _reduce(parts, src, n, g):
    """``g = (parts[src[0]] + parts[src[1]] + ...) / n``, added in this order."""
    c = src.shape[0]
    for k in range(g.shape[0]):
        s = parts[src[0], k]
        for j in range(1, c):
            s += parts[src[j], k]
        g[k] = s / n


def _run(kernel, head, deriv, bounds, n, g, n_threads):
    """Run ``kernel(*head, lo, hi, deriv_out, out, 0.0)`` on each chunk; reduce into ``g``."""
    c = len(bounds) - 1
    threads = max(1, min(get_num_threads() if n_threads is None else int(n_threads), c))
    sc = _take_scratch(c + threads - 1, g.shape[0], deriv.shape[0])
    parts, src = sc.parts, np.arange(c, dtype=np.int64)
    spare = [c]

    def compute(j, mode):
        lo, hi = bounds[j], bounds[j + 1]
        if mode == MAIN:
            kernel(*head, lo, hi, deriv, parts[j], 0.0)
        elif mode == WORKER:
            kernel(*head, lo, hi, sc.deriv, parts[j], 0.0)
        else:  # STOLEN: the worker's copy may still be written; use a row of our own
            src[j] = spare[0]
            spare[0] += 1
            kernel(*head, lo, hi, deriv, parts[src[j]], 0.0)

    try:
        modes = run_chunks(compute, c, threads, on_workers_done=lambda: _let_go(sc))
        for j in range(c):
            if modes[j] == WORKER:
                deriv[bounds[j]:bounds[j + 1]] = sc.deriv[bounds[j]:bounds[j + 1]]
        _reduce(parts, src, n, g)
    finally:
        _let_go(sc)


def full_gradient_dense(X, y, loss, sup, xs, deriv, g, lam=0.0, n_threads=None):
    """``deriv = f'(X[:, sup] @ xs)`` and ``g = X^T deriv / n + lam x`` (``x``: ``xs`` on ``sup``).

    Parameters
    ----------
    X : ndarray, shape (n, d), C-contiguous float64
    y : ndarray, shape (n,)
    loss : int
        Loss code (0 squares, 1 logistic).
    sup, xs : ndarray
        The nonzeros of ``x``: int64 indices (distinct) and their values.
    deriv : ndarray, shape (n,)
        Output: per-sample derivatives ``f'(w_i^T x)`` (SVRG's snapshot terms).
    g : ndarray, shape (d,)
        Output: the gradient.
    lam : float, default 0.0
        Ridge weight of an optional term ``(lam / 2) ||x||^2`` (touches only ``sup``).
    n_threads : int, optional
        Threads for this call (default :func:`~rgrasp_viz._kernels.threads.get_num_threads`);
        the result does not depend on it.
    """
    n, d = X.shape
    c = row_chunks(n, d, n * d)
    if c == 1:
        _rows_dense(X, y, loss, sup, xs, 0, n, deriv, g, float(n))
    else:
        bounds = np.linspace(0, n, c + 1).astype(np.int64)
        _run(_rows_dense, (X, y, loss, sup, xs), deriv, bounds, n, g, n_threads)
    if lam:
        g[sup] += lam * xs


def full_gradient_csr(data, indices, indptr, y, loss, x, deriv, g, lam=0.0, n_threads=None):
    """CSR twin of :func:`full_gradient_dense`: ``g = X^T f'(X x) / n + lam * x`` (``x`` dense).

    ``data, indices, indptr`` are canonical-or-not CSR arrays with int64 indices; chunks hold
    about equal numbers of nonzeros.  Other parameters as in :func:`full_gradient_dense`.
    """
    n = indptr.shape[0] - 1
    d = g.shape[0]
    c = row_chunks(n, d, int(indptr[n]))
    if c == 1:
        _rows_csr(data, indices, indptr, y, loss, x, 0, n, deriv, g, float(n))
    else:
        bounds = np.searchsorted(indptr, np.linspace(0, indptr[n], c + 1)).astype(np.int64)
        bounds[0], bounds[-1] = 0, n
        _run(_rows_csr, (data, indices, indptr, y, loss, x), deriv, bounds, n, g, n_threads)
    if lam:
        g += lam * x
