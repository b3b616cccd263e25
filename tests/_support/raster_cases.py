"""Runs whose support rasters the label tests draw (figure data and the browser): computed once
per session."""

from __future__ import annotations

import functools

import numpy as np

import rgrasp_viz as rv

LONG = "serum_concentration_of_biomarker_{:02d}_after_treatment_<b>mg</b>"
"""Column names that are long, share their start and hold markup."""


@functools.cache
def classroom_trace():
    """SVRGSP+ on the classroom problem (s = 24)."""
    prob = rv.make_regression("classroom", random_state=0)
    return rv.solve(prob, "svrgsp+", s=24, random_state=0).trace


@functools.cache
def long_named_trace():
    """An estimator fitted on a DataFrame whose 30 columns are named by :data:`LONG`."""
    import pandas as pd  # optional: the lab extra

    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 30))
    beta = np.zeros(30)
    beta[[1, 5, 9, 22]] = [3.0, -2.0, 2.5, 1.5]
    y = X @ beta + 0.1 * rng.standard_normal(80)
    cols = [LONG.format(j) for j in range(30)]
    est = rv.SparseLinearRegression(s=6, random_state=0).fit(pd.DataFrame(X, columns=cols), y)
    return est.trace_
