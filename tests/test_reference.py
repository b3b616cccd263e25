"""``rgrasp_viz.reference``: ``F*`` below every run, from exact fits and a continued run."""

from __future__ import annotations

import math

import numpy as np
import pytest

import rgrasp_viz as rv
from rgrasp_viz import reference as REF


@pytest.fixture(scope="module")
def squares_runs():
    prob = rv.make_regression(n=200, d=400, s_star=20, random_state=3)
    runs = {m: rv.solve(prob, m, random_state=1, max_passes=8, tol=0.0, ftol=0.0,
                        warn=False).trace
            for m in ("fght", "sght", "svrgsp")}
    return prob, runs


def _lstsq_objective(prob, supp):
    """NumPy reference: the least-squares objective on the columns ``supp``."""
    cols = prob.W[:, supp]
    coef = np.linalg.lstsq(cols, prob.y, rcond=None)[0]
    return 0.5 * np.mean((cols @ coef - prob.y) ** 2)


def test_cheap_reference_is_the_best_exact_fit(squares_runs):
    prob, runs = squares_runs
    ref = REF.reference(prob, runs, run=False)
    assert ref.run == {}  # no solver run
    fits = [_lstsq_objective(prob, np.flatnonzero(prob.x_true))]
    for tr in runs.values():
        k = int(np.nanargmin(tr.objective))
        fits += [_lstsq_objective(prob, tr.support(k)), _lstsq_objective(prob, tr.support(-1))]
    assert ref.fstar == pytest.approx(min(fits), rel=1e-10)
    assert ref.fstar == min(c["objective"] for c in ref.candidates)
    assert "exact least-squares fit" in ref.source
    for tr in runs.values():
        assert ref.fstar <= float(np.nanmin(tr.objective))
    # the oracle's error
    x = REF.least_squares_on(prob, np.flatnonzero(prob.x_true))
    assert ref.err_ref == pytest.approx(prob.rel_error(x)) and "oracle" in ref.err_source


def test_full_reference_continues_the_lowest_run(squares_runs):
    prob, runs = squares_runs
    ref = REF.reference(prob, runs, budget=8)
    low = min(runs, key=lambda m: float(np.nanmin(runs[m].objective)))
    assert ref.run["method"] == low and ref.run["budget_passes"] == 80
    assert ref.run["tol"] == 0.0 and ref.run["full"] is True
    assert any("10x the budget" in c["source"] for c in ref.candidates)
    # the same iterates, continued: the re-run starts with the budgeted run's objectives
    again = rv.solve(prob, low, eta=runs[low].meta["eta"], random_state=1, tol=0.0, ftol=0.0,
                     max_passes=80, warn=False).trace
    k = len(runs[low])
    np.testing.assert_array_equal(again.objective[:k], runs[low].objective)
    assert ref.run["best_objective"] == float(np.nanmin(again.objective))
    assert ref.fstar <= min(float(np.nanmin(t.objective)) for t in runs.values())
    assert ref.fstar <= REF.reference(prob, runs, run=False).fstar


def test_logistic_cheap_reference_is_a_short_continuation():
    prob = rv.make_classification(n=200, d=300, s_star=10, random_state=0)
    runs = [rv.solve(prob, m, s=12, random_state=0, max_passes=4, tol=0.0, ftol=0.0,
                     warn=False) for m in ("fght", "svrgsp")]
    ref = REF.reference(prob, runs, run=False)
    used = max(float(r.trace.passes[-1]) for r in runs)  # the default budget
    assert ref.run["budget_passes"] == min(10 * used, used + REF.CHEAP_EXTRA_PASSES)
    assert ref.run["full"] is False and "not converged" in ref.source
    assert ref.fstar <= min(r.trace.objective.min() for r in runs)


def test_fstar_is_clipped_to_a_run_below_every_candidate(squares_runs):
    prob, runs = squares_runs
    low = dict(runs)
    # a run whose recorded objectives are far below anything reachable (made-up numbers)
    tr = rv.solve(prob, "fght", random_state=1, max_passes=3, warn=False).trace
    tr.objective[:] = -1.0
    low["made-up"] = tr
    ref = REF.reference(prob, low, run=False)
    assert ref.fstar == -1.0 and "clipped" in ref.source
    assert ref.candidates[-1]["objective"] == -1.0


def test_reproduce_re_exports_the_same_reference():
    assert REF.Reference is REF.Reference
    assert REF.least_squares_on is REF.least_squares_on
    assert REF.reference is REF.reference
    assert REF.REFERENCE_FACTOR == REF.REFERENCE_FACTOR
    assert math.isnan(REF.Reference(1.0, "x").err_ref)
