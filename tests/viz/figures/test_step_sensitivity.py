"""The step-sensitivity figure: ``run.json``'s ``step_sensitivity`` in, a plotly figure out
(one line per method, crosses where a factor never reaches the target or diverges, a star at
the chosen factor)."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("plotly")

from rgrasp_viz.viz import figures as F  # noqa: E402

SENS = {
    "target": "speed gap (F - F*) / (F(x0) - F*) <= 0.0001",
    "grid": [0.25, 0.5, 1.0, 2.0, 4.0], "tuning_seeds": [1000, 1001], "budget_passes": 200,
    "methods": {
        "fght": {"label": "FG-HT", "factors": [0.25, 0.5, 1.0, 2.0, 4.0],
                 "passes": [80.0, 40.0, 20.0, None, None],
                 "diverged": [False, False, False, False, True], "chosen": 1.0},
        "svrgsp|paper": {"label": "SVRGSP <b>", "factors": [0.25, 0.5, 1.0, 2.0, 4.0],
                         "passes": [None, 90.0, 60.0, 50.0, None],
                         "diverged": [False, False, False, False, False], "chosen": 2.0},
    },
}


def by_role(fig, role):
    return {t.meta["method"]: t for t in fig.data if t.meta["role"] == role}


def test_one_line_per_method_with_its_passes():
    fig = F.step_sensitivity(SENS)
    lines = by_role(fig, "passes")
    assert list(lines) == ["fght", "svrgsp|paper"]
    assert list(lines["fght"].x) == SENS["grid"]
    y = list(lines["fght"].y)
    assert y[:3] == [80.0, 40.0, 20.0] and all(math.isnan(v) for v in y[3:])
    assert lines["svrgsp|paper"].name == "SVRGSP &lt;b&gt;"  # a label reaches the page as text
    assert fig.layout.xaxis.type == "log"


def test_misses_and_divergence_are_marked_above_the_lines():
    fig = F.step_sensitivity(SENS)
    missed = by_role(fig, "missed")
    assert list(missed["fght"].x) == [2.0, 4.0]
    assert list(missed["fght"].customdata) == ["never", "diverged"]
    assert list(missed["svrgsp|paper"].x) == [0.25, 4.0]
    top = missed["fght"].y[0]
    assert top > 200  # above every value and the budget
    chosen = by_role(fig, "chosen")
    assert list(chosen["fght"].x) == [1.0] and list(chosen["fght"].y) == [20.0]
    assert list(chosen["svrgsp|paper"].x) == [2.0] and list(chosen["svrgsp|paper"].y) == [50.0]


def test_the_same_number_of_traces_whatever_the_values():
    other = {**SENS, "methods": {k: {**m, "passes": [None] * 5} for k, m in
                                 SENS["methods"].items()}}
    assert len(F.step_sensitivity(other).data) == len(F.step_sensitivity(SENS).data) == 6
    spec = F.step_sensitivity_spec(SENS)
    assert set(spec) == {"data", "layout"}


@pytest.mark.parametrize("bad", [None, {}, {"methods": []}, "run.json"])
def test_not_a_step_sensitivity_is_refused(bad):
    with pytest.raises(ValueError, match="step_sensitivity"):
        F.step_sensitivity(bad)
