"""NumPy analysis of traces, shared by the figures, the dashboards and ``reproduce``.

Nothing here draws, solves or times anything: traces (or arrays) in, numbers out.  A fact
such as "where does a curve first reach a level" is computed here once, so a table and a
plot shown together always agree.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["best_objective", "first_crossing"]


def best_objective(trace):
    """The smallest finite objective of a run and the iteration where it was reached.

    Parameters
    ----------
    trace : Trace

    Returns
    -------
    fun : float
        ``inf`` when no recorded objective is finite.
    iteration : int
        ``-1`` when no recorded objective is finite.
    """
    obj = np.asarray(trace.objective, dtype=np.float64)
    ok = np.isfinite(obj)
    if not ok.any():
        return math.inf, -1
    i = int(np.nanargmin(np.where(ok, obj, np.nan)))
    return float(obj[i]), i


def first_crossing(x, values, level):
    """Where a curve first gets to ``values <= level``.

    Parameters
    ----------
    x : array_like
        Positions (effective passes or seconds), non-decreasing.
    values : array_like
        Positive quantities (objective gap or estimation error) at those positions.
    level : float

    Returns
    -------
    float
        ``x`` at the first crossing, interpolated linearly in ``x`` and ``log(values)``
        between the sample before and the first sample at or below ``level``; ``x[0]`` when
        the first sample is already there; ``inf`` when no sample is.
    """
    x = np.asarray(x, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    ok = np.isfinite(v) & (v <= level)
    if not ok.any():
        return math.inf
    k = int(np.argmax(ok))
    if k == 0:
        return float(x[0])
    v0, v1 = v[k - 1], v[k]
    if not (np.isfinite(v0) and v0 > level and v1 > 0 and level > 0):
        return float(x[k])
    frac = (math.log(v0) - math.log(level)) / (math.log(v0) - math.log(v1))
    return float(x[k - 1] + frac * (x[k] - x[k - 1]))
