"""Hard thresholding by selection (no sorting), deterministic under ties.

``top_k_indices`` returns the ``k`` entries of largest magnitude, ties broken towards the
lower index, in O(p) average time:

1. estimate a *lower* bound for the k-th largest magnitude from a small strided sample
   (a sample quantile taken a few standard deviations below the target rank);
2. one branch-free pass collects every index whose magnitude reaches that bound;
3. an in-place quickselect on the (few) candidates finds the exact k-th largest magnitude
   ``tau``; a final scan of the candidates, in index order, keeps all ``|v| > tau`` and the
   lowest-indexed ``|v| == tau``.

If the estimate overshoots (fewer than k candidates) every index becomes a candidate, so the
result is always exact; only the speed depends on the estimate (benchmarks/bench_core.py
compares it with ``np.argpartition``).
"""

from __future__ import annotations

import numpy as np

from ._jit import _INTERNAL, njit

_SAMPLE = 128  # strided-sample size used to estimate the threshold


@njit(cache=True, **_INTERNAL)
def _quickselect_desc(a, m, k):
    """Return the k-th largest (1-based) value of ``a[:m]``, reordering ``a[:m]`` in place."""
    lo = 0
    hi = m - 1
    target = k - 1  # position in descending order
    while hi > lo:
        mid = (lo + hi) >> 1
        # median of three, as a deterministic pivot
        x0 = a[lo]
        x1 = a[mid]
        x2 = a[hi]
        if x0 < x1:
            x0, x1 = x1, x0
        if x1 < x2:
            x1, x2 = x2, x1
            if x0 < x1:
                x0, x1 = x1, x0
        pivot = x1
        i = lo
        j = hi
        while i <= j:
            while a[i] > pivot:
                i += 1
            while a[j] < pivot:
                j -= 1
            if i <= j:
                tmp = a[i]
                a[i] = a[j]
                a[j] = tmp
                i += 1
                j -= 1
        if target <= j:
            hi = j
        elif target >= i:
            lo = i
        else:
            return a[target]
    return a[target]


@njit(cache=True)
def top_k_indices(v, k, out, cand, mags):
    """Indices of the ``k`` largest ``|v|`` (ties -> lower index), ascending, into ``out``.

    Parameters
    ----------
    v : float64[p]
    k : int
    out : int64[>= min(k, p)]
        Receives the selected indices in increasing order.
    cand : int64[p]
        Work buffer for candidate indices.
    mags : float64[p]
        Work buffer for candidate magnitudes.

    Returns
    -------
    int
        ``min(k, p)``, the number of indices written.
    """
    p = v.shape[0]
    if k >= p:
        for j in range(p):
            out[j] = j
        return p
    if k <= 0:
        return 0
    # -- 1. lower bound for the k-th largest magnitude from a strided sample --------------
    m = _SAMPLE if p > 4 * _SAMPLE else 0
    t_lo = 0.0
    if m > 0:
        stride = p // m
        for q in range(m):
            mags[q] = abs(v[q * stride])
        expected = k * m / p
        # rank (1-based, from the top) a safe margin above the expected sample rank
        r = int(expected + 3.0 * np.sqrt(expected) + 3.0)
        if r < m:
            t_lo = _quickselect_desc(mags, m, r)
    # -- 2. branch-free collection of candidates ------------------------------------------
    c = 0
    for j in range(p):
        cand[c] = j
        c += abs(v[j]) >= t_lo
    if c < k:  # the estimate overshot: every index is a candidate
        c = p
        for j in range(p):
            cand[j] = j
    # -- 3. exact k-th largest magnitude among the candidates, then a stable scan ---------
    for q in range(c):
        mags[q] = abs(v[cand[q]])
    tau = _quickselect_desc(mags, c, k)
    n_gt = 0
    for q in range(c):
        n_gt += abs(v[cand[q]]) > tau
    n_eq = k - n_gt
    w = 0
    for q in range(c):
        j = cand[q]
        a = abs(v[j])
        if a > tau:
            out[w] = j
            w += 1
        elif a == tau and n_eq > 0:
            out[w] = j
            w += 1
            n_eq -= 1
    return w


@njit(cache=True)
def top_k_forced(v, k, forced, out, cand, mags, fbuf):
    """:func:`top_k_indices` with the coordinates ``forced`` always kept: the ``k`` largest
    ``|v|`` among the other coordinates, plus ``forced`` (``always_select``), ascending, into
    ``out``; returns how many were written.  ``forced`` (ascending, distinct) is not counted
    in ``k``.  ``v`` is restored on return; ``fbuf`` (length ``>= len(forced)``) is scratch.
    """
    nf = forced.shape[0]
    if nf == 0:
        return top_k_indices(v, k, out, cand, mags)
    for q in range(nf):  # an infinite magnitude ranks first, ties by index among them
        fbuf[q] = v[forced[q]]
        v[forced[q]] = np.inf
    w = top_k_indices(v, k + nf, out, cand, mags)
    for q in range(nf):
        v[forced[q]] = fbuf[q]
    return w


@njit(cache=True, inline="always")
def keep_only(v, idx, n_idx, vbuf):
    """Zero every entry of ``v`` except ``v[idx[:n_idx]]`` (in place)."""
    for q in range(n_idx):
        vbuf[q] = v[idx[q]]
    v[:] = 0.0
    for q in range(n_idx):
        v[idx[q]] = vbuf[q]


@njit(cache=True, inline="always")
def count_changes(old, n_old, new, n_new):
    """Return (entered, left) between two ascending index lists."""
    i = 0
    j = 0
    common = 0
    while i < n_old and j < n_new:
        a = old[i]
        b = new[j]
        if a == b:
            common += 1
            i += 1
            j += 1
        elif a < b:
            i += 1
        else:
            j += 1
    return n_new - common, n_old - common


def top_k(v, k, forced=None):
    """Indices (ascending) of the ``k`` largest magnitudes of ``v``; ties -> lower index.

    Parameters
    ----------
    v : array_like of float
        Vector to select from.
    k : int
        Number of entries to keep; values ``>= len(v)`` select everything.
    forced : array_like of int, optional
        Indices always kept (``always_select``), not counted in ``k``: the result is
        ``forced`` plus the ``k`` largest magnitudes among the other entries.

    Returns
    -------
    ndarray of int64
        ``min(k, len(v))`` indices in increasing order (``min(k + len(forced), len(v))``
        with ``forced``).
    """
    v = np.ascontiguousarray(v, dtype=np.float64)
    if forced is not None and len(forced):
        forced = np.asarray(forced, dtype=np.int64)
        v = v.copy()
        v[forced] = np.inf
        k = int(k) + len(np.unique(forced))
    p = v.shape[0]
    out = np.empty(max(min(int(k), p), 0), dtype=np.int64)
    cand = np.empty(p, dtype=np.int64)
    mags = np.empty(p, dtype=np.float64)
    n = top_k_indices(v, int(k), out, cand, mags)
    return out[:n]


def hard_threshold(v, s, forced=None):
    """The hard-thresholding operator H_s on plain arrays (ties towards the lower index).

    The kernel behind :func:`rgrasp_viz.hard_threshold` (which documents the operator and also
    records a call made inside a registered step-5 solver); the built-in methods call this
    one directly.  Returns a copy of ``v`` with all but its ``s`` largest-magnitude entries
    (plus ``forced``) set to zero.
    """
    return hard_threshold_index(v, s, forced)[0]


def hard_threshold_index(v, s, forced=None):
    """``(H_s(v), kept)``: :func:`hard_threshold` and the ascending indices it kept (the
    recorder of a registered step-5 solver's thresholdings compares kept sets)."""
    v = np.array(v, dtype=np.float64)
    if v.ndim != 1:
        raise ValueError(f"v must be 1-D, got shape {v.shape}")
    if int(s) < 0:
        raise ValueError(f"s must be non-negative, got {s}")
    idx = top_k(v, s, forced)
    out = np.zeros_like(v)
    out[idx] = v[idx]
    return out, idx
