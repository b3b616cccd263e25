"""The condition-map figure (rgrasp_viz.viz.figures.condition_map): drawn from a map record,
read back from the figure's data."""

from __future__ import annotations

import math

import pytest

from rgrasp_viz.solvers._registry import method_label
from rgrasp_viz.viz.figures import condition_map, condition_map_spec


def _row(rho, shape, method, passes):
    lv = {k: {"passes": p, "reached": p is not None} for k, p in
          (("0.001", None if passes is None else passes / 2), ("0.0001", passes),
           ("1e-05", None))}
    return {"rho": rho, "shape": shape, "method": method, "passes": passes, "levels": lv}


@pytest.fixture
def record():
    passes = {("paper", 0.0): {"fght": 20.0, "svrgsp+": 40.0},
              ("paper", 0.1): {"fght": None, "svrgsp+": 50.0},
              ("tall", 0.0): {"fght": 8.0, "svrgsp+": 3.0},
              ("tall", 0.1): {"fght": 30.0, "svrgsp+": 4.0}}
    rows = [_row(rho, shape, m, p) for (shape, rho), ms in passes.items()
            for m, p in ms.items()]
    winner = [{"rho": rho, "shape": shape,
               "method": min((m for m in ms if ms[m] is not None), key=ms.get)}
              for (shape, rho), ms in passes.items()]
    constants = [{"shape": sh, "rho": rho, "n": n, "d": d, "s": 12, "ratio": r}
                 for sh, n, d in (("paper", 500, 1000), ("tall", 1000, 250))
                 for rho, r in ((0.0, 1.2 if sh == "paper" else 0.2),
                                (0.1, 0.3 if sh == "paper" else 0.05))]
    return {"map": rows, "winner": winner, "constants": constants, "speed_target": 1e-4}


def _by_role(fig, role, shape):
    (t,) = [t for t in fig.data if t.meta["role"] == role and t.meta["shape"] == shape]
    return t


def test_heat_map_holds_log_passes_and_text_per_rho_and_method(record):
    fig = condition_map(record)
    heat = _by_role(fig, "passes", "paper")
    assert list(heat.x) == ["0", "0.1"]
    assert list(heat.y) == [method_label("fght"), method_label("svrgsp+")]
    assert heat.z[0][0] == pytest.approx(math.log10(20)) and heat.z[0][1] is None
    assert heat.z[1][1] == pytest.approx(math.log10(50))
    assert [list(t) for t in heat.text] == [["★ 20", "never"], ["40", "★ 50"]]
    # one colour scale for every shape: the same passes, the same colour
    tall = _by_role(fig, "passes", "tall")
    assert (heat.zmin, heat.zmax) == (tall.zmin, tall.zmax) == (
        pytest.approx(math.log10(3)), pytest.approx(math.log10(50)))
    assert tall.xaxis != heat.xaxis


def test_winners_are_starred_where_they_won(record):
    fig = condition_map(record)
    star = _by_role(fig, "winner", "paper")
    assert list(zip(star.x, star.y, strict=True)) == [("0", "FG-HT"), ("0.1", "SVRGSP+")]
    star = _by_role(fig, "winner", "tall")
    assert list(zip(star.x, star.y, strict=True)) == [("0", "SVRGSP+"), ("0.1", "SVRGSP+")]
    assert star.xaxis == _by_role(fig, "passes", "tall").xaxis  # on its shape's heat map


def test_the_smoothness_ratio_is_drawn_on_its_own_log_axis(record):
    fig = condition_map(record)
    ratio = _by_role(fig, "ratio", "paper")
    assert list(ratio.x) == ["0", "0.1"] and list(ratio.y) == [1.2, 0.3]
    one = _by_role(fig, "ratio_one", "paper")
    assert list(one.y) == [1.0, 1.0] and one.yaxis == ratio.yaxis
    axis = fig.layout[ratio.yaxis.replace("y", "yaxis")]
    assert axis.type == "log"
    assert ratio.yaxis != _by_role(fig, "passes", "paper").yaxis
    assert list(_by_role(fig, "ratio", "tall").y) == [0.2, 0.05]


def test_another_level_and_bad_records(record):
    spec = condition_map_spec(record, level=1e-3)
    heat = spec["data"][0]
    assert heat["meta"]["level"] == "0.001" and heat["z"][0][0] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="winner"):
        condition_map({"map": record["map"], "constants": []})
    with pytest.raises(ValueError, match="empty"):
        condition_map({"map": [], "winner": [], "constants": []})
