"""The cost of one hard thresholding on this machine, measured: a cost model for
:func:`rgrasp_viz.analysis.threshold_share` (``cost=measured_threshold_cost``).

The figure builders and the analysis never time anything; the dashboards (and notebooks that
want the estimate) pass this model in.  How the timing is done and why is in the notes of
``benchmarks/bench_dashboards.py``.
"""

from __future__ import annotations

import functools
import math
import time

import numpy as np

from .._kernels import hard_threshold, top_k

__all__ = ["measured_threshold_cost"]


def _calibrate(fn, min_batch):
    fn()
    n = 1
    while True:  # calls per batch so that a batch lasts about min_batch seconds
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - t0 >= min_batch or n >= 1 << 16:
            return n
        n *= 4


def _time_pair(fn, base, min_batch=5e-4, repeats=5):
    """Seconds per call of ``fn`` and of ``base``, batches of the two alternating; the
    fastest batch of each counts."""
    n_f, n_b = _calibrate(fn, min_batch), _calibrate(base, min_batch)
    best_f = best_b = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n_f):
            fn()
        best_f = min(best_f, (time.perf_counter() - t0) / n_f)
        t0 = time.perf_counter()
        for _ in range(n_b):
            base()
        best_b = min(best_b, (time.perf_counter() - t0) / n_b)
    return best_f, best_b


@functools.lru_cache(maxsize=256)
def _measured_seconds(p, k, in_kernel):
    """Seconds per hard thresholding of a length-``p`` vector to ``k`` entries, with the
    package's public ``H_s``: ``rv.hard_threshold`` minus its Python-call overhead for
    thresholdings inside a compiled epoch, ``rv.top_k`` with its overhead for the closing
    ``H_s`` the solvers call from Python."""
    v = np.random.default_rng(0).standard_normal(max(int(p), 1))
    k = int(k)
    if in_kernel:
        small = np.random.default_rng(1).standard_normal(4)
        t, base = _time_pair(lambda: hard_threshold(v, k), lambda: hard_threshold(small, 2))
        return max(t - base, 0.0)
    return _time_pair(lambda: top_k(v, k), lambda: None)[0]


def _grid(p, k):
    """Round ``(p, k)`` up to multiples of 8 so that measurements are reused."""
    pr = p if p <= 16 else int(math.ceil(p / 8) * 8)
    return pr, (pr if k >= p else min(k, pr))


def measured_threshold_cost(p, k, inside_epoch):
    """Seconds per hard thresholding of a length-``p`` vector to ``k`` entries, measured on
    this machine (cached per ``(p, k)`` rounded up to multiples of 8).

    Parameters
    ----------
    p, k : int
        Vector length and entries kept.
    inside_epoch : bool
        A thresholding inside a compiled epoch (call overhead subtracted) or the closing
        ``H_s`` of an outer iteration (called from Python, overhead included).

    Returns
    -------
    float
    """
    return _measured_seconds(*_grid(int(p), int(k)), bool(inside_epoch))


measured_threshold_cost.source = (
    "t_H measured on this machine with rv.hard_threshold (in-epoch, call overhead "
    "subtracted) / rv.top_k (outer), fastest of 5 batches")
