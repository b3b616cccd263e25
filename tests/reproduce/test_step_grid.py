"""Step tuning: the sqrt(2) grid, tuning seeds apart from the evaluation seeds, the pick by
passes to the speed target, and ``step_sensitivity`` as ``run.json`` records it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rgrasp_viz import reproduce as R
from rgrasp_viz.reproduce import _command as RCMD
from rgrasp_viz.reproduce import _tuning as RT
from rgrasp_viz.reproduce import _tuning as tuning
from rgrasp_viz.reproduce._experiments import build_problem, run_method


def test_grid_is_sqrt2_from_a_quarter_to_eight():
    g = np.asarray(RT.TUNE_GRID)
    assert g[0] == pytest.approx(0.25) and g[-1] == pytest.approx(8.0)
    np.testing.assert_allclose(g[1:] / g[:-1], math.sqrt(2), rtol=1e-12)
    assert len(g) == 11
    assert {0.5, 1.0, 2.0, 4.0} <= set(RT.TUNE_GRID)  # exact powers of two on the grid


def test_tuning_seeds_are_disjoint_from_the_default_evaluation_seeds():
    assert RT.tuning_seeds() == [1000, 1001]
    assert not set(RT.tuning_seeds()) & set(RCMD.DEFAULT_SEEDS)
    with pytest.raises(ValueError, match="tuning seeds"):
        R.parse_seeds("0-1000")


@pytest.fixture(scope="module")
def fght_tuning():
    grid = (0.5, 1.0, 2.0, 8.0)
    factors, sens = RT.tune("fig1-setting1", quick=True, methods=("fght",), grid=grid,
                           budget=20, progress=False)
    return grid, factors, sens


def test_tune_picks_the_fewest_passes_among_non_diverged(fght_tuning):
    grid, factors, sens = fght_tuning
    m = sens["methods"]["fght"]
    assert m["factors"] == list(grid) and sens["grid"] == list(grid)
    assert sens["tuning_seeds"] == [1000, 1001] and sens["budget_passes"] == 20
    assert list(m["per_seed"]) == ["1000", "1001"]
    assert m["diverged"][-1] is True and m["passes"][-1] is None  # 8 x diverges
    for i in range(len(grid)):  # the worst of the tuning seeds, None when any never reaches
        per = [m["per_seed"][s][i] for s in ("1000", "1001")]
        if m["diverged"][i] or None in per:
            assert m["passes"][i] is None
        else:
            assert m["passes"][i] == max(per)
    reached = [(p, f) for p, f in zip(m["passes"], grid, strict=True) if p is not None]
    assert reached, sens
    assert factors == {"fght": min(reached)[1]} and m["chosen"] == min(reached)[1]
    assert "speed gap" in sens["target"] and "<= 0.0001" in sens["target"]


def test_tuning_passes_match_a_numpy_recount(fght_tuning):
    """Passes to the speed target recomputed from fresh runs: F* the best of the tuning runs
    on that problem, speed gap (F - F*) / (F(x0) - F*), first crossing of 1e-4 interpolated
    log-linearly."""
    grid, _, sens = fght_tuning
    m = sens["methods"]["fght"]
    for seed in (1000, 1001):
        prob, info = build_problem("fig1-setting1", True, seed, progress=False)
        runs = [run_method(prob, "fght", info.s, f, seed, 20, "paper") for f in grid]
        ok = [r for r in runs if np.isfinite(r.trace.objective).all()]
        fs = min(float(np.min(r.trace.objective)) for r in ok)
        f0 = float(runs[0].trace.objective[0])
        for i, r in enumerate(runs):
            if m["diverged"][i]:
                continue
            gap = (np.asarray(r.trace.objective) - fs) / (f0 - fs)
            hit = np.flatnonzero(gap <= 1e-4)
            got = m["per_seed"][str(seed)][i]
            if hit.size == 0:
                assert got is None
                continue
            k = hit[0]
            p = np.asarray(r.trace.passes)
            if k == 0 or gap[k] <= 0:  # at F* itself: no log to interpolate in
                want = p[k]
            else:
                want = p[k - 1] + (np.log(gap[k - 1]) - np.log(1e-4)) / (
                    np.log(gap[k - 1]) - np.log(gap[k])) * (p[k] - p[k - 1])
            assert got == pytest.approx(want, rel=1e-12)


def test_grasp_has_no_step_and_no_sensitivity_row():
    factors, sens = RT.tune("fig1-setting1", quick=True, methods=("grasp",), grid=(1.0, 2.0),
                           budget=3, progress=False, n_seeds=1)
    assert factors == {"grasp": 1.0} and sens["methods"] == {}
    assert tuning.n_tuning_tasks(("grasp", "svrgsp"), ("paper", "on_T"), 2) == 2 * 3


def test_never_reaching_picks_the_lowest_best_gap():
    """No factor reaches the target on every seed: the lowest median best speed gap wins,
    and a diverged factor never does."""
    inf = math.inf
    scores = {1000: {("fght", 1.0): (inf, 0.3, False), ("fght", 2.0): (inf, 0.1, False),
                     ("fght", 4.0): (inf, 0.0, True)},
              1001: {("fght", 1.0): (5.0, 0.2, False), ("fght", 2.0): (inf, 0.1, False),
                     ("fght", 4.0): (inf, 0.0, True)}}
    factors, sens = tuning._pick(scores, [1000, 1001], (1.0, 2.0, 4.0), 10.0, ("fght",),
                                 ("paper",))
    assert factors == {"fght": 2.0}
    assert sens["methods"]["fght"]["passes"] == [None, None, None]
    assert sens["methods"]["fght"]["diverged"] == [False, False, True]
