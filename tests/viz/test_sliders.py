"""Kernel-free sliders (rgrasp_viz.viz.sliders): one figure, Plotly's own slider, one
precomputed run per value of a parameter.  The browser half (dragging the sliders on the
built site) is in tests/integration/test_site.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

import rgrasp_viz as rv
from rgrasp_viz.analysis import FStar
from rgrasp_viz.viz.figures import convergence_spec
from rgrasp_viz.viz.sliders import SWEEP_PARAMETERS, parameter_sweep_figure


@pytest.fixture(scope="module")
def sweep():
    prob = rv.make_regression(n=120, d=60, s_star=4, random_state=1)
    runs = [(m, rv.solve(prob, "svrgsp+", s=5, m=m, J=120, max_iter=6, random_state=0,
                         warn=False)) for m in (1, 3, 12)]
    return prob, runs


def _none_for_nan(values):
    return [None if not math.isfinite(v) else v for v in np.asarray(values, dtype=float)]


def test_each_step_draws_its_own_run_against_one_fstar(sweep):
    _, runs = sweep
    fs = FStar(min(float(np.min(r.trace.objective)) for _, r in runs) - 1e-3, "F* given",
               "given")
    fig = parameter_sweep_figure(runs, "m", default=3, fstar=fs)
    (slider,) = fig.layout.sliders
    assert slider.active == 1 and [s.label for s in slider.steps] == ["1", "3", "12"]
    assert fig.layout.meta["sweep"] == {"param": "m", "values": [1, 3, 12],
                                        "labels": ["1", "3", "12"], "default": 1,
                                        "fstar": fs.value}
    for k, ((_, run), step) in enumerate(zip(runs, slider.steps, strict=True)):
        assert step.method == "update"
        restyle, relayout = step.args
        expected = convergence_spec([run], x="passes", y="both", fstar=fs, xscale="linear")
        gap, rel = expected["data"]
        assert restyle["y"][0] == _none_for_nan(gap["y"])  # F(x) - F* of this run
        assert restyle["y"][1] == _none_for_nan(rel["y"])  # its relative error
        assert restyle["x"][0] == list(np.asarray(run.trace.passes, dtype=float))
        np.testing.assert_allclose([v for v in restyle["y"][0] if v is not None],
                                   (run.trace.objective - fs.value)[
                                       np.isfinite(gap["y"])])
        assert f"m = {slider.steps[k].label}" in relayout["title.text"]
        cuts = rv.cuts_per_epoch(120, runs[k][0])  # J = 120: 1, 3 and 12 cuts
        assert f"({cuts} cut{'s' if cuts > 1 else ''} per epoch)" in relayout["title.text"]
        assert ("(default)" in relayout["title.text"]) == (k == 1)
        assert run.status.name in relayout["title.text"]
    # the figure opens on the default's run
    opened = [np.nan if v is None else v for v in slider.steps[1].args[0]["y"][0]]
    np.testing.assert_array_equal(np.asarray(fig.data[0].y, dtype=float), opened)
    # different values: different curves
    assert slider.steps[0].args[0]["y"][0] != slider.steps[2].args[0]["y"][0]


def test_axes_are_fixed_over_all_values(sweep):
    _, runs = sweep
    fig = parameter_sweep_figure(runs, "m", default=3)
    xs = [v for step in fig.layout.sliders[0].steps for v in step.args[0]["x"][0]]
    gaps = [v for step in fig.layout.sliders[0].steps for v in step.args[0]["y"][0]
            if v is not None and v > 0]
    assert fig.layout.xaxis.autorange is False and fig.layout.yaxis.autorange is False
    lo, hi = fig.layout.xaxis.range
    assert lo <= min(xs) and hi >= max(xs)
    lo, hi = fig.layout.yaxis.range  # log axis: log10 units
    assert lo <= math.log10(min(gaps)) and hi >= math.log10(max(gaps))
    assert fig.layout.xaxis.range == fig.layout.xaxis2.range


def test_a_diverged_value_is_named_and_leaves_the_plot():
    prob = rv.make_regression(n=120, d=60, s_star=4, random_state=1)
    eta0 = rv.default_eta(prob, "svrgsp+", 5)
    runs = [(f * eta0, rv.solve(prob, "svrgsp+", s=5, eta=f * eta0, max_iter=6,
                                random_state=0, warn=False)) for f in (1.0, 500.0)]
    assert runs[1][1].status == rv.Status.DIVERGED
    fig = parameter_sweep_figure(runs, "eta", default=eta0)
    steps = fig.layout.sliders[0].steps
    assert "DIVERGED" in steps[1].args[1]["title.text"]
    ok_gaps = [v for v in steps[0].args[0]["y"][0] if v is not None and v > 0]
    assert fig.layout.yaxis.range[1] < math.log10(max(ok_gaps)) + 1  # not stretched


def test_bad_input_is_refused_before_drawing(sweep):
    _, runs = sweep
    with pytest.raises(ValueError, match="at least one"):
        parameter_sweep_figure([], "m")
    with pytest.raises(ValueError, match="repeat"):
        parameter_sweep_figure([runs[0], runs[0]], "m")
    with pytest.raises(ValueError, match="not among"):
        parameter_sweep_figure(runs, "m", default=7)
    assert set(SWEEP_PARAMETERS) == {"m", "J", "eta", "s"}


# -- the correlation slider over a condition-map record (no solving) ---------------------------


def _record():
    """A condition-map record by hand: FG-HT fast at rho = 0, slow at 0.1; SVRGSP+ steady."""
    from rgrasp_viz.viz.sliders import CORRELATION_FLOOR

    passes = [0.0, 10.0, 20.0, 30.0]
    fracs = {(0.0, "fght"): [1.0, 1e-3, 1e-9, 0.0], (0.0, "svrgsp+"): [1.0, 1e-2, 1e-4, 1e-6],
             (0.1, "fght"): [1.0, 0.5, 0.2, 0.1], (0.1, "svrgsp+"): [1.0, 1e-2, 1e-4, 1e-6]}
    curves = [{"shape": "paper", "rho": rho, "method": m, "seed": 0, "passes": passes,
               "fraction": f} for (rho, m), f in fracs.items()]
    pas = {(0.0, "fght"): 15.0, (0.0, "svrgsp+"): 20.0, (0.1, "fght"): None,
           (0.1, "svrgsp+"): 20.0}
    rows = [{"shape": "paper", "rho": rho, "method": m,
             "levels": {"0.0001": {"passes": p}}} for (rho, m), p in pas.items()]
    winner = [{"shape": "paper", "rho": 0.0, "method": "fght"},
              {"shape": "paper", "rho": 0.1, "method": "svrgsp+"}]
    assert CORRELATION_FLOOR < 1e-6
    return {"curves": curves, "map": rows, "winner": winner, "speed_target": 1e-4}


def test_the_rho_slider_draws_each_rhos_curves_and_names_the_winner():
    from rgrasp_viz.viz.sliders import CORRELATION_FLOOR, correlation_sweep_figure

    rec = _record()
    fig = correlation_sweep_figure(rec)
    (slider,) = fig.layout.sliders
    assert [s.label for s in slider.steps] == ["0", "0.1"] and slider.active == 0
    assert fig.layout.meta["sweep"]["param"] == "rho"
    fg, vr, target = fig.data
    assert (fg.meta["method"], vr.meta["method"], target.meta["role"]) == (
        "fght", "svrgsp+", "target")
    # rho = 0: FG-HT's curve, floored instead of diving to 0 (1e-9 and 0 drawn at the floor)
    assert list(fg.y) == [1.0, 1e-3, CORRELATION_FLOOR, CORRELATION_FLOOR]
    restyle, relayout, idx = slider.steps[1].args
    assert list(idx) == [0, 1]  # the target line is left alone
    assert restyle["y"][0] == [1.0, 0.5, 0.2, 0.1] and restyle["x"][0] == [0, 10, 20, 30]
    assert "SVRGSP+ (20 passes)" in relayout["title.text"]
    assert "FG-HT: never" in relayout["title.text"]
    assert "fewest passes: FG-HT (15 passes)" in slider.steps[0].args[1]["title.text"]
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis.autorange is False
    assert fig.layout.yaxis.range[0] < math.log10(CORRELATION_FLOOR)
    fig = correlation_sweep_figure(rec, default=0.1)
    assert fig.layout.sliders[0].active == 1 and list(fig.data[0].y) == [1.0, 0.5, 0.2, 0.1]
    with pytest.raises(ValueError, match="not among"):
        correlation_sweep_figure(rec, default=0.2)
    with pytest.raises(ValueError, match="no curves"):
        correlation_sweep_figure(rec, shape="tall")
