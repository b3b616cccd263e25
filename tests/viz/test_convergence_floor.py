"""A lone run's convergence figure (``rv.viz.figures.convergence(res)``): its F* is its own
lowest F, so its gaps end at a labelled floor -- no point dropped, no dive toward 0."""

from __future__ import annotations

import numpy as np
import pytest

import rgrasp_viz as rv
from rgrasp_viz.viz import figures as F


@pytest.fixture(scope="module")
def prob():
    return rv.make_regression("classroom", random_state=0)


@pytest.mark.parametrize("method", ["fght", "svrgsp+"])
def test_a_lone_runs_gap_ends_at_a_labelled_floor(prob, method):
    res = rv.solve(prob, method, s=24, random_state=0, warn=False)
    fig = F.convergence(res, y="gap")
    (g,) = fig.data
    y = np.asarray(g.y, dtype=float)
    gaps = res.trace.objective - res.trace.objective.min()  # F* = the run's own lowest F
    floor = F.GAP_FLOOR_RTOL * gaps[0]
    assert fig.layout.meta["gap_floor"] == pytest.approx(floor, rel=1e-12)
    # every point drawn, the last one too (it was dropped: gap 0 has no place on a log axis)
    assert len(y) == len(res.trace) and np.all(np.isfinite(y))
    # nothing below the floor (FG-HT dived to 2e-11 against its own end); above it, the gaps
    np.testing.assert_allclose(y, np.maximum(gaps, floor), rtol=1e-12)
    assert y.min() == pytest.approx(floor) and g.meta["floored"] >= 1
    assert g.meta["floored"] == np.count_nonzero(gaps < floor)
    # labelled: a dotted line at the floor and a note naming it and why
    (line,) = fig.layout.shapes
    assert line.y0 == line.y1 == pytest.approx(floor) and line.line.dash == "dot"
    note = " ".join(a.text for a in fig.layout.annotations)
    assert f"floor {floor:.2g}" in note and "lowest F of the run shown" in note
    assert fig.layout.meta["floored"] == [F.run_labels([res])[0]]


def test_no_floor_is_drawn_when_no_gap_comes_near_it(prob):
    """With an F* well below the run (given), the gaps are the trace's own and nothing is
    floored or labelled."""
    res = rv.solve(prob, "fght", s=24, random_state=0, warn=False, max_iter=5)
    fstar = float(res.trace.objective.min()) - 1.0
    fig = F.convergence(res, y="gap", fstar=fstar)
    y = np.asarray(fig.data[0].y, dtype=float)
    np.testing.assert_allclose(y, res.trace.objective - fstar, rtol=1e-12)
    assert fig.data[0].meta["floored"] == 0 and fig.layout.meta["floored"] == []
    assert not fig.layout.shapes
    assert not any("floor" in a.text for a in fig.layout.annotations)


def test_the_floor_is_one_for_all_runs_of_a_view(prob):
    runs = [rv.solve(prob, m, s=24, random_state=0, warn=False) for m in ("fght", "svrgsp+")]
    fig = F.convergence(runs, y="gap")
    fs = min(float(r.trace.objective.min()) for r in runs)
    floor = F.GAP_FLOOR_RTOL * max(r.trace.objective[0] - fs for r in runs)
    assert fig.layout.meta["gap_floor"] == pytest.approx(floor, rel=1e-12)
    for g in fig.data:
        assert np.nanmin(np.asarray(g.y, dtype=float)) >= floor * (1 - 1e-12)
