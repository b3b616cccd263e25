"""Pure figure builders: every plotted array is checked against what the trace holds (or an
independent NumPy computation), plus HTML / PNG export and the lazy import of the viz layer."""

from __future__ import annotations

import json
import math
import os
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest

import rgrasp_viz as rv
from rgrasp_viz.solvers._registry import method_names
from rgrasp_viz.viz import figures as F
from rgrasp_viz.viz import measured_threshold_cost

ROOT = Path(__file__).resolve().parents[3]
ALL = method_names()  # every registered method
N, D, S_STAR, S, J = 120, 200, 5, 6, 240


@pytest.fixture(scope="module")
def prob():
    return rv.make_regression(n=N, d=D, s_star=S_STAR, random_state=3)


@pytest.fixture(scope="module")
def runs(prob):
    return {m: rv.solve(prob, m, s=S, J=J, random_state=7, warn=False,
                        record_iterates=m in ("svrght", "svrgsp+"), max_iter=15)
            for m in ALL}


def by_role(fig, role):
    return [t for t in fig.data if (t.meta or {}).get("role") == role]


def finite(a):
    a = np.asarray(a, dtype=float)
    return a[np.isfinite(a)]


# -- colours and labels ---------------------------------------------------------------------------


def test_one_fixed_distinct_colour_per_method(runs):
    assert set(rv.method_names()) >= set(ALL)
    colors = {m: rv.get_method(m).color for m in rv.method_names()}
    assert len(set(colors.values())) == len(colors)
    fig = F.convergence(list(runs.values()))
    for tr in by_role(fig, "gap") + by_role(fig, "rel_error"):
        assert tr.line.color == colors[tr.meta["method"]]
    tl = F.threshold_timeline(list(runs.values()), cost=1e-6)
    for tr in by_role(tl, "counts"):
        assert tr.line.color == colors[tr.meta["method"]]
    assert F.method_color("nope") == "#7F7F7F"
    assert F.method_label("svrgsp+") == "SVRGSP+"


def test_run_labels_tell_equal_methods_apart(prob):
    a = rv.solve(prob, "svrgsp", s=S, J=J, eta=0.01, random_state=0, max_iter=3, warn=False)
    b = rv.solve(prob, "svrgsp", s=S, J=J, eta=0.02, random_state=0, max_iter=3, warn=False)
    assert F.run_labels([a, b]) == ["SVRGSP (eta=0.01)", "SVRGSP (eta=0.02)"]
    assert F.run_labels([a, a]) == ["SVRGSP #1", "SVRGSP #2"]


# -- F* and convergence ---------------------------------------------------------------------------


def test_estimate_fstar_sources(runs, prob):
    traces = [runs["svrgsp"], runs["svrght"]]
    fs = F.estimate_fstar(traces)
    assert fs.value == min(np.nanmin(t.trace.objective) for t in traces)
    assert fs.origin == "runs" and fs.source.startswith("F* = lowest F of the runs shown (")
    value, src = fs  # unpacks as (value, source)
    assert (value, src) == (fs.value, fs.source)
    given = F.estimate_fstar(traces, reference=0.001)
    assert given.value == 0.001 and given.origin == "given" and "given" in given.source
    # a separate reference run that is better than the runs shown defines F*
    ref = rv.solve(prob, "grasp", s=S, warn=False)
    worse = rv.solve(prob, "svrgsp", s=S, J=J, random_state=0, max_iter=1, warn=False)
    fs = F.estimate_fstar([worse], reference=ref)
    assert fs.value == float(np.min(ref.trace.objective)) < float(np.min(worse.trace.objective))
    assert fs.source == "F* = lowest F found by a separate GraSP run"
    assert fs.origin == "reference" and fs.run == "GraSP"
    assert F.estimate_fstar([worse], reference=fs) is fs  # one F* shared by a view
    other = rv.solve(rv.make_regression(n=N, d=D + 10, s_star=3, random_state=0), "fght",
                     s=3, max_iter=2, warn=False)
    with pytest.raises(ValueError, match="different sizes"):
        F.estimate_fstar([runs["fght"], other])


@pytest.mark.parametrize("x", ["passes", "time", "iteration"])
def test_convergence_arrays_equal_trace(runs, x):
    traces = [runs[m] for m in ("svrght", "svrgsp", "svrgsp+")]
    fig = F.convergence(traces, x=x, y="both")
    fs = fig.layout.meta["fstar"]
    assert fs == min(float(np.nanmin(t.trace.objective)) for t in traces)
    assert fig.layout.meta["fstar_source"] in fig.layout.title.text
    gaps, errs = by_role(fig, "gap"), by_role(fig, "rel_error")
    assert [g.meta["method"] for g in gaps] == ["svrght", "svrgsp", "svrgsp+"]
    for res, g, e in zip(traces, gaps, errs, strict=True):
        tr = res.trace
        np.testing.assert_array_equal(g.x, getattr(tr, x))
        expect = tr.objective - fs
        # gaps below the floor (the run defining F* among them) are drawn at it, never dropped
        floor = F.GAP_FLOOR_RTOL * max(t.trace.objective[0] - fs for t in traces)
        assert fig.layout.meta["gap_floor"] == pytest.approx(floor, rel=1e-12)
        np.testing.assert_allclose(np.asarray(g.y, float), np.maximum(expect, floor))
        assert g.meta["floored"] == np.count_nonzero(expect < floor)
        np.testing.assert_array_equal(np.asarray(e.y, float), tr.rel_error)
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis2.type == "log"


def test_convergence_single_panel_and_bad_args(runs):
    fig = F.convergence(runs["svrgsp+"], y="gap")
    assert len(fig.data) == 1 and fig.data[0].meta["role"] == "gap"
    with pytest.raises(ValueError, match="x must be"):
        F.convergence(runs["svrgsp+"], x="epochs")
    with pytest.raises(ValueError, match="y must be"):
        F.convergence(runs["svrgsp+"], y="loss")
    with pytest.raises(TypeError):
        F.convergence([object()])


def test_convergence_flags_different_final_supports(prob):
    a = rv.solve(prob, "fght", s=S, max_iter=40, warn=False)
    b = rv.solve(prob, "fght", s=S - 2, max_iter=40, warn=False)  # other size: other support
    c = rv.solve(prob, "grasp", s=S, warn=False)
    fig = F.convergence([a, b, c])
    best = int(np.argmin([a.fun, b.fun, c.fun]))
    sup = [set(r.trace.support(-1).tolist()) for r in (a, b, c)]
    flagged = {d["run"] for d in fig.layout.meta["support_differs"]}
    labels = F.run_labels([a, b, c])
    expect = {labels[i] for i in range(3) if sup[i] != sup[best]}
    assert flagged == expect and labels[1] in flagged
    for i, g in enumerate(by_role(fig, "gap")):
        assert ("≠ supp" in g.name) == (labels[i] in expect)
        assert (g.marker.symbol[-1] == "x") == (labels[i] in expect)
    same = F.convergence([a, a])
    assert same.layout.meta["support_differs"] == []


def test_convergence_cuts_diverged_run(prob):
    bad = rv.solve(prob, "svrght", s=S, J=J, eta=5.0, random_state=0, warn=False)
    assert bad.status == 2
    ok = rv.solve(prob, "fght", s=S, max_iter=10, warn=False)
    fig = F.convergence([ok, bad], y="gap")
    g = by_role(fig, "gap")[1]
    y = finite(g.y)
    start = bad.trace.objective[0] - fig.layout.meta["fstar"]
    assert len(y) >= 1 and np.all(y <= F.DIVERGED_CUT * start)
    json.loads(fig.to_json())  # no inf leaks into the JSON


def test_runs_of_one_method_get_their_own_style_and_parameter(prob):
    """An eta sweep: one method, several runs -- distinct dashes and shades, the step size in
    each legend name, never two curves drawn alike."""
    runs = [rv.solve(prob, "svrgsp", s=S, J=J, eta=eta, random_state=0, max_iter=6,
                     warn=False) for eta in (0.002, 0.004, 0.008)]
    fig = F.convergence(runs, y="gap")
    gaps = by_role(fig, "gap")
    assert [g.name.split(" ≠")[0] for g in gaps] == [f"SVRGSP (eta={e:.3g})"
                                                     for e in (0.002, 0.004, 0.008)]
    styles = {(g.line.dash, g.line.color) for g in gaps}
    assert len(styles) == 3 and len({g.line.dash for g in gaps}) == 3
    assert fig.layout.meta["identical"] == []


def test_identical_runs_are_said_and_stay_visible(prob):
    """Our reading of Algorithm 2 (z on T) makes m a no-op: SVRGSP+ with m = 1 and m = 6 and
    SVRGSP make the same iterates -- the figure says so instead of hiding two curves under
    a third; in the paper's reading m changes the run."""
    kw = {"s": S, "J": J, "random_state": 0, "max_iter": 6, "warn": False}
    on_t = [rv.solve(prob, "svrgsp+", m=1, inner="on_T", **kw),
            rv.solve(prob, "svrgsp+", m=6, inner="on_T", **kw),
            rv.solve(prob, "svrgsp", inner="on_T", **kw)]
    assert rv.analysis.identical_runs(on_t) == [[0, 1, 2]]
    fig = F.convergence(on_t, y="gap")
    group = ["SVRGSP+ (on T, m=1)", "SVRGSP+ (on T, m=6)", "SVRGSP (on T)"]
    assert fig.layout.meta["identical"] == [group]
    notes = [a.text for a in fig.layout.annotations]
    assert " = ".join(group) + ": identical iterates" in notes
    gaps = by_role(fig, "gap")
    # drawn so that each shows: the first wide underneath, the others dashed on top
    assert gaps[0].line.width > gaps[1].line.width == gaps[2].line.width
    assert len({g.line.dash for g in gaps}) == 3
    paper = [rv.solve(prob, "svrgsp+", m=m, inner="paper", **kw) for m in (1, 6)]
    assert rv.analysis.identical_runs(paper) == []
    assert not rv.analysis.same_iterates(*paper)
    assert F.convergence(paper).layout.meta["identical"] == []


def test_time_axis_is_logarithmic_when_runs_differ_by_orders_of_magnitude(prob):
    fast = rv.solve(prob, "fght", s=S, max_iter=3, warn=False)
    slow = rv.solve(prob, "fght", s=S, max_iter=3, warn=False)
    slow.trace._a["time"] = fast.trace.time * 100  # the same run, 100 times slower
    fig = F.convergence([fast, slow], x="time")
    assert fig.layout.xaxis.type == "log" and fig.layout.xaxis2.type == "log"
    assert "log scale" in fig.layout.xaxis.title.text and fig.layout.meta["xscale"] == "log"
    for g, run in zip(by_role(fig, "gap"), (fast, slow), strict=True):
        # the trace's own times: the starting point x = 0 is in the data, and a log axis
        # leaves it out
        np.testing.assert_array_equal(g.x, run.trace.time)
        assert g.x[0] == 0 and np.all(np.asarray(g.x[1:]) > 0)
    assert F.convergence([fast, slow], x="time", xscale="linear").layout.xaxis.type == "linear"
    same = F.convergence([fast, fast], x="time")
    assert same.layout.xaxis.type == "linear"
    assert F.convergence([fast, fast], x="time", xscale="log").layout.xaxis.type == "log"
    assert F.convergence([fast, slow], x="passes").layout.xaxis.type == "linear"
    with pytest.raises(ValueError, match="xscale"):
        F.convergence(fast, xscale="loglog")
    assert rv.analysis.axis_scale([fast, slow], "time") == "log"


def test_diverged_run_is_drawn_clipped_in_its_own_style(prob):
    bad = rv.solve(prob, "svrght", s=S, J=J, eta=5.0, random_state=0, warn=False)
    ok = rv.solve(prob, "svrght", s=S, J=J, random_state=0, max_iter=5, warn=False)
    assert bad.status == rv.Status.DIVERGED and ok.status != rv.Status.DIVERGED
    fig = F.convergence([ok, bad])
    for g in by_role(fig, "gap") + by_role(fig, "rel_error"):
        if g.meta["run"] == 1:
            y = np.asarray(g.y, dtype=float)
            k = g.meta["clipped_at"]
            assert g.meta["diverged"] and g.line.dash == "dot" and g.name.endswith("diverged")
            assert k >= 1 and g.marker.symbol[k] == "triangle-up"
            start = y[0]
            assert y[k] == pytest.approx(F.DIVERGED_CUT * start)  # clipped at the edge
            assert np.all(np.isnan(y[k + 1:]))
        else:
            assert not g.meta["diverged"] and g.line.dash != "dot"
    assert fig.layout.meta["diverged"] == ["SVRGHT (eta=5)"]
    assert any("diverged" in a.text for a in fig.layout.annotations)
    json.loads(fig.to_json())


def test_one_fstar_for_a_table_and_a_plot(runs):
    traces = [runs[m] for m in ("svrght", "svrgsp", "svrgsp+")]
    fs = F.estimate_fstar(traces, reference=runs["grasp"])
    fig = F.convergence(traces, fstar=fs)
    assert fig.layout.meta["fstar"] == fs.value and fs.source in fig.layout.title.text
    floor = fig.layout.meta["gap_floor"]
    for g, r in zip(by_role(fig, "gap"), traces, strict=True):
        last = float(np.asarray(g.y, dtype=float)[-1])
        assert last == pytest.approx(max(fs.gap(r.fun), floor))


# -- support raster -------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["svrgsp+", "svrght", "grasp"])
def test_raster_equals_recorded_supports(runs, method):
    tr = runs[method].trace
    fig = F.support_raster(tr, max_rows=10_000)
    (hm,) = by_role(fig, "raster")
    rows = np.asarray(hm.meta["coords"])
    z = np.asarray(hm.z)
    true = set(tr.true_support.tolist())
    assert rows[: len(true)].tolist() == sorted(true)  # true support first
    assert z.shape == (len(rows), len(tr))
    ever = set()
    for t in range(len(tr)):
        col = z[:, t]
        assert set(rows[col >= 3].tolist()) == set(tr.support(t).tolist())
        assert set(rows[col == 4].tolist()) == set(tr.support(t).tolist()) & true
        assert set(rows[col == 2].tolist()) == set(tr.T(t).tolist()) - set(tr.support(t).tolist())
        assert set(rows[col == 1].tolist()) == true - set(tr.T(t).tolist()) - set(
            tr.support(t).tolist())
        ever |= set(tr.support(t).tolist()) | set(tr.T(t).tolist())
    assert set(rows.tolist()) == ever | true
    # entered / left markers: one per coordinate change between x^{t-1} and x^t
    (ent,) = by_role(fig, "entered")
    (left,) = by_role(fig, "left")
    assert len(ent.x) == int(tr.n_entered[1:].sum())
    assert len(left.x) == int(tr.n_left[1:].sum())
    labels = list(hm.y)
    for t, lab in zip(ent.x, ent.y, strict=True):
        assert rows[labels.index(lab)] in tr.entered(t)
    for t, lab in zip(left.x, left.y, strict=True):
        assert rows[labels.index(lab)] in tr.left(t)
    # rows are categories in this order, whatever their labels look like ("120"): plotly.js
    # must never guess a linear axis from them
    y = fig.layout.yaxis
    assert (y.type, y.categoryorder, list(y.categoryarray)) == ("category", "array", labels)
    assert any(lab.isdigit() for lab in labels)


def test_raster_row_cap_keeps_true_support(runs):
    tr = runs["svrgsp+"].trace
    full = F.support_raster(tr, max_rows=10_000).layout.meta
    fig = F.support_raster(tr, max_rows=S_STAR + 3, cursor=2)
    rows = fig.layout.meta["rows"]
    assert len(rows) == S_STAR + 3
    assert rows[:S_STAR] == sorted(tr.true_support.tolist())
    assert fig.layout.meta["hidden"] == len(full["rows"]) - len(rows) > 0
    assert f"{fig.layout.meta['hidden']} more coordinates" in fig.layout.title.text
    (cur,) = [sh for sh in fig.layout.shapes if sh.name == "cursor"]
    assert (cur.x0, cur.x1, cur.xref, cur.yref) == (2.0, 2.0, "x", "paper")
    moved = F.with_cursor(F.support_raster_spec(tr, max_rows=S_STAR + 3, cursor=2), 3.5)
    assert [sh["x0"] for sh in moved["layout"]["shapes"] if sh["name"] == "cursor"] == [3.5]


def test_raster_rows_carry_their_coordinates(runs):
    tr = runs["svrgsp+"].trace
    fig = F.support_raster(tr, max_rows=150)
    (hm,) = by_role(fig, "raster")
    assert fig.layout.yaxis.showticklabels is True  # plotly.js skips labels where crowded
    assert fig.layout.yaxis.categoryarray == tuple(hm.y)
    assert fig.layout.width is None and fig.layout.autosize is True


@pytest.mark.parametrize("max_rows", [None, S_STAR + 3, 150])
def test_raster_labels_every_true_support_row(runs, max_rows):
    """Every true-support row (★) is labelled with its coordinate, on explicit ticks
    (plotly.js skips labels on a crowded automatic axis), with room for each label."""
    tr = runs["svrgsp+"].trace
    kw = {} if max_rows is None else {"max_rows": max_rows}
    fig = F.support_raster(tr, **kw)
    y = fig.layout.yaxis
    (hm,) = by_role(fig, "raster")
    assert y.tickmode == "array"
    ticks = dict(zip(y.tickvals, y.ticktext, strict=True))
    for j in tr.true_support.tolist():
        assert ticks[f"{j}★"] == f"{j}★"
    assert list(y.tickvals) == list(hm.y)  # every row, not only the true ones
    n_rows = len(hm.y)
    plot_px = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    assert plot_px / n_rows >= y.tickfont.size  # a label per row fits: no overlap


# -- thresholding timeline ------------------------------------------------------------------------


def segments(trace_obj):
    x = np.asarray(trace_obj.x, dtype=float)
    return x[0::3]


def test_timeline_one_mark_per_thresholding(runs):
    order = ("svrght", "svrgsp", "svrgsp+", "fght", "grasp", "sght")
    fig = F.threshold_timeline([runs[m] for m in order], cost=1e-6)
    marks = by_role(fig, "marks")
    counts = by_role(fig, "counts")
    for lane, m in enumerate(order):
        tr = runs[m].trace
        assert not tr.meta["events_truncated"]
        mine = [t for t in marks if t.meta["run"] == lane]
        n_marks = sum(t.meta["count"] for t in mine)
        assert n_marks == len(tr.ev_iter) == int(tr.n_thresholds[-1])
        for t in mine:  # every mark is one segment at the event's position
            kind = 0 if t.meta["kind"] == "inner" else 1
            expect = np.sort(F.event_positions(tr)[0][tr.ev_kind == kind])
            np.testing.assert_allclose(np.sort(segments(t)), expect)
            assert len(t.x) == 3 * t.meta["count"]
            ys = np.asarray(t.y, float).reshape(-1, 3) if len(t.y) else np.empty((0, 3))
            assert np.all(ys[:, 0] < lane) and np.all(ys[:, 1] > lane)
        assert counts[lane].y[-1] == tr.n_thresholds[-1]
    it = runs["svrght"].trace.n_iter
    inner = {t.meta["run"]: t.meta["count"] for t in marks if t.meta["kind"] == "inner"}
    outer = {t.meta["run"]: t.meta["count"] for t in marks if t.meta["kind"] == "outer"}
    assert inner[0] == it * J and outer[0] == 0  # SVRGHT: the dense comb
    n_sp = runs["svrgsp"].trace.n_iter
    assert inner[1] == 0 and outer[1] == n_sp  # SVRGSP: one per epoch
    n_pl = runs["svrgsp+"].trace.n_iter
    m = runs["svrgsp+"].trace.meta["m"]
    assert inner[2] == n_pl * (J // math.ceil(J / m)) and outer[2] == n_pl  # SVRGSP+
    assert inner[3] == 0 and outer[3] == runs["fght"].trace.n_iter


def test_timeline_positions_in_steps(runs):
    tr = runs["svrght"].trace
    it, step = tr.ev_iter.astype(int), tr.ev_step.astype(int)
    pos, _ = F.event_positions(tr, "passes")  # full gradient (1 pass), then 1/n per step
    np.testing.assert_allclose(pos, tr.passes[it - 1] + 1.0 + step / N)
    pos, kind = F.event_positions(tr, "steps")
    np.testing.assert_array_equal(pos, (tr.ev_iter.astype(int) - 1) * J + tr.ev_step)
    pos, _ = F.event_positions(runs["fght"].trace, "steps")
    np.testing.assert_array_equal(pos, runs["fght"].trace.ev_iter)
    fig = F.threshold_timeline(runs["svrght"], x="steps", cost=False)
    assert fig.layout.xaxis2.title.text == "inner steps"
    # nothing estimated: no empty "% of time" panel, the lanes span the width
    assert not by_role(fig, "share") and "xaxis3" not in fig.to_plotly_json()["layout"]
    assert tuple(fig.layout.xaxis2.domain) == (0, 1)
    with pytest.raises(ValueError, match="x must be"):
        F.threshold_timeline(runs["svrght"], x="time")


def test_timeline_texts_are_short_and_dense_combs_can_be_thinned(runs):
    tr = runs["svrght"].trace
    fig = F.threshold_timeline([runs["svrght"], runs["svrgsp+"]], cost=1e-6)
    (bar,) = by_role(fig, "share")
    assert all(len(t) <= 5 for t in bar.text)  # "≈31%": never runs off the figure
    assert "…" not in fig.layout.title.text
    assert f"{int(tr.n_thresholds[-1]):,} H" in fig.layout.yaxis.ticktext[0]
    full = by_role(fig, "marks")
    thin = by_role(F.threshold_timeline([runs["svrght"], runs["svrgsp+"]], cost=1e-6,
                                        max_marks=100), "marks")
    for a, b in zip(full, thin, strict=True):
        assert a.meta["count"] == b.meta["count"]  # the counts stay exact
        assert b.meta["drawn"] == min(a.meta["count"], 100) == len(b.x) // 3
    assert "100 of" in F.threshold_timeline(tr, cost=1e-6, max_marks=100).layout.title.text
    with pytest.raises(ValueError, match="max_marks"):
        F.threshold_timeline(tr, max_marks=1)


def test_threshold_share_given_cost(runs):
    tr = runs["svrgsp+"].trace
    sh = F.threshold_share(tr, cost={0: 1e-6, 1: 3e-6})
    n_in = int((tr.ev_kind == 0).sum())
    n_out = int((tr.ev_kind == 1).sum())
    assert (sh["count_inner"], sh["count_outer"]) == (n_in, n_out)
    assert sh["seconds"] == pytest.approx(n_in * 1e-6 + n_out * 3e-6)
    assert sh["share"] == pytest.approx(min(sh["seconds"] / tr.time[-1], 1.0))
    fig = F.threshold_timeline(tr, cost={0: 1e-6, 1: 3e-6})
    (bar,) = by_role(fig, "share")
    assert bar.x[0] == pytest.approx(100 * sh["share"])
    none = F.threshold_share(tr, cost=False)
    assert math.isnan(none["share"]) and none["count"] == int(tr.n_thresholds[-1])


def test_threshold_share_measured(runs):
    sh = F.threshold_share(runs["svrght"], cost=measured_threshold_cost)
    assert sh["per_op"][0] >= 0 and 0 <= sh["share"] <= 1
    assert "measured" in sh["source"] and "rv.hard_threshold" in sh["source"]
    assert sh["seconds"] == pytest.approx(sh["count"] * sh["per_op"][0])
    # the cost model sees the size of the vector: H_s on 16384 entries costs more than on 64
    big = measured_threshold_cost(16384, 64, True)
    small = measured_threshold_cost(64, 8, True)
    assert big > small >= 0 and big > 1e-6


def test_threshold_share_sizes_follow_the_registry_and_the_reading(runs, prob):
    d, s = prob.d, S
    assert F.threshold_share(runs["svrght"])["source"].startswith("share of solver time not")
    seen = {}

    def model(p, k, inside):
        seen[(p, k, inside)] = True
        return 1e-6

    for m in ("svrght", "fght", "grasp"):
        seen.clear()
        F.threshold_share(runs[m], cost=model)
        assert {(p, k) for p, k, _ in seen} == {(d, s)}, m
    for inner in ("paper", "on_T"):
        r = rv.solve(prob, "svrgsp+", s=s, J=J, max_iter=3, inner=inner, random_state=0,
                     warn=False)
        t_med = int(np.median(np.diff(r.trace.T_ptr)[1:]))
        seen.clear()
        F.threshold_share(r, cost=model)
        inner_p = d if inner == "paper" else t_med
        assert set(seen) == {(inner_p, t_med, True), (t_med, s, False)}, inner
    with pytest.raises(TypeError, match="cost must be"):
        F.threshold_share(runs["svrght"], cost="fast")


# -- coefficients and progress --------------------------------------------------------------------


def test_coefficients_at_outer_iteration(runs):
    tr = runs["svrgsp"].trace
    t = 3
    fig = F.coefficients(tr, t=t)
    x = tr.x(t)
    (heads,) = by_role(fig, "heads")
    np.testing.assert_array_equal(heads.x, np.flatnonzero(x))
    np.testing.assert_allclose(heads.y, np.abs(x[np.flatnonzero(x)]))
    (thr,) = by_role(fig, "threshold")
    assert thr.y[0] == pytest.approx(np.sort(np.abs(x))[::-1][S - 1])
    (Z,) = by_role(fig, "Z")
    np.testing.assert_array_equal(Z.x, tr.Z(t))
    assert len(Z.x) == 2 * S
    (xt,) = by_role(fig, "x_true")
    np.testing.assert_array_equal(xt.x, tr.true_support)
    np.testing.assert_allclose(xt.y, np.abs(tr.x_true[tr.true_support]))
    (stems,) = by_role(fig, "stems")
    assert len(stems.x) == 3 * len(heads.x)


def test_coefficients_inside_an_epoch(runs):
    tr = runs["svrgsp+"].trace
    t = 2
    steps = tr.ck_step[tr.ck_iter == t]
    step = int(steps[len(steps) // 2])
    k = np.flatnonzero((tr.ck_iter == t) & (tr.ck_step == step))[0]
    fig = F.coefficients(tr, t=t, step=step)
    z = tr.ck_x[k]
    (stems,) = by_role(fig, "stems")  # every nonzero: (j, 0), (j, |z_j|), (j, 0)
    np.testing.assert_array_equal(np.asarray(stems.x)[1::3], np.flatnonzero(z))
    np.testing.assert_allclose(np.asarray(stems.y)[1::3], np.abs(z[np.flatnonzero(z)]))
    assert np.all(np.asarray(stems.y)[0::3] == 0) and np.all(np.asarray(stems.y)[2::3] == 0)
    (heads,) = by_role(fig, "heads")  # markers on what H_s keeps: the s largest |z_j|
    np.testing.assert_array_equal(heads.x, np.sort(rv.top_k(z, S)))
    np.testing.assert_allclose(heads.y, np.abs(z[np.sort(rv.top_k(z, S))]))
    (thr,) = by_role(fig, "threshold")
    assert np.all(np.asarray(heads.y) >= thr.y[0])
    assert f"inner step {step} of iteration {t}" in fig.layout.title.text
    fixed = F.coefficients(tr, t=t, step=step, ymax=2.0)
    assert list(fixed.layout.yaxis.range) == [0, pytest.approx(2.16)]
    with pytest.raises(ValueError, match="no inner snapshot"):
        F.coefficients(tr, t=t, step=step + 1)
    with pytest.raises(ValueError, match="record_iterates=True"):
        F.coefficients(runs["svrgsp"], t=1, step=step)


def test_progress_so_far(runs):
    tr = runs["svrgsp+"].trace
    fig = F.progress(tr, t=2)
    (so,) = by_role(fig, "so_far")
    assert so.x[-1] == tr.passes[2] and so.y[-1] == pytest.approx(tr.objective[2])
    step = int(tr.ck_step[tr.ck_iter == 3][1])
    fig = F.progress(tr, t=3, step=step)
    (now,) = by_role(fig, "now")
    k = np.flatnonzero((tr.ck_iter == 3) & (tr.ck_step == step))[0]
    assert now.y[0] == pytest.approx(tr.ck_objective[k])
    assert now.x[0] == pytest.approx(F.checkpoint_positions(tr)[k])
    # the y axis holds still over the run: one range, covering every objective and
    # checkpoint the run records, whatever the moment shown
    lo, hi = fig.layout.yaxis.range
    assert list(F.progress(tr, t=1).layout.yaxis.range) == [lo, hi]
    vals = np.concatenate([tr.objective, tr.ck_objective])
    vals = vals[np.isfinite(vals) & (vals > 0)]
    assert lo < np.log10(vals.min()) and np.log10(vals.max()) < hi


# -- slack descent ------------------------------------------------------------------------------


def test_slack_ratios_match_numpy(runs, prob):
    tr = runs["svrgsp"].trace
    r = F.slack_ratios(tr, prob)
    assert r.shape == (len(tr),) and np.isnan(r[0])
    for t in (1, 4):
        T = tr.T(t)
        bhat = np.linalg.lstsq(prob.W[:, T], prob.y, rcond=None)[0]
        b = tr.b(t)[T]
        expect = np.linalg.norm(b - bhat) / np.linalg.norm(tr.x(t - 1)[T] - bhat)
        assert r[t] == pytest.approx(expect, rel=1e-8)
    g = F.slack_ratios(runs["grasp"], prob)
    assert np.all(g[1:] < 1e-8)  # GraSP solves the sub-problem exactly: b = b̂
    fig = F.slack_descent(tr, prob, c1=0.3)
    assert fig.layout.meta["fraction_ok"] == pytest.approx(np.mean(r[1:] <= 0.3))
    (ratio,) = by_role(fig, "ratio")
    np.testing.assert_allclose(ratio.customdata, r[1:])


def test_slack_axis_starts_at_0_and_shows_1(runs, prob):
    for m in ("svrgsp", "grasp"):
        fig = F.slack_descent(runs[m], prob, c1=0.5)
        y = fig.layout.yaxis
        assert y.type == "linear" and y.range[0] == 0 and y.range[1] >= 1
        (ratio,) = by_role(fig, "ratio")
        assert np.nanmax(np.asarray(ratio.y, dtype=float)) <= y.range[1]


def test_slack_ratios_refuse_clearly(runs, prob):
    with pytest.raises(ValueError, match="no merged support T"):
        F.slack_ratios(runs["svrght"], prob)
    with pytest.raises(ValueError, match="too large"):
        F.slack_ratios(runs["svrgsp"], prob, max_cells=100)
    other = rv.make_regression(n=N + 1, d=D, s_star=S_STAR, random_state=0)
    with pytest.raises(ValueError, match="not the one of the trace"):
        F.slack_ratios(runs["svrgsp"], other)
    clf = rv.make_classification(n=N, d=D, s_star=S_STAR, random_state=0)
    res = rv.solve(clf, "svrgsp", s=S, J=J, random_state=0, max_iter=2, warn=False)
    with pytest.raises(ValueError, match="least squares"):
        F.slack_ratios(res, clf)
    with pytest.raises(ValueError, match="c1"):
        F.slack_descent(runs["svrgsp"], prob, c1=1.5)


# -- structure and purity -----------------------------------------------------------------------


def test_trace_structure_does_not_depend_on_method(runs):
    """Dashboards update FigureWidgets in place: a builder's traces depend only on the
    number of runs, never on the method."""
    shapes = {}
    for m in ALL:
        r = runs[m]
        shapes.setdefault("conv", set()).add(tuple(t.type for t in F.convergence([r, r]).data))
        shapes.setdefault("raster", set()).add(tuple(t.type for t in F.support_raster(r).data))
        shapes.setdefault("timeline", set()).add(
            tuple(t.type for t in F.threshold_timeline(r, cost=1e-6).data))
        shapes.setdefault("coef", set()).add(tuple(t.type for t in F.coefficients(r, 1).data))
    assert all(len(v) == 1 for v in shapes.values()), shapes


def test_builders_never_solve_nor_time(runs, prob, monkeypatch):
    import rgrasp_viz.solvers._driver as driver
    import rgrasp_viz.viz._cost as cost

    def forbidden(*a, **k):
        raise AssertionError("a figure builder called the solver or timed something")

    monkeypatch.setattr(driver, "solve", forbidden)
    monkeypatch.setattr(rv, "solve", forbidden)
    monkeypatch.setattr(cost, "_measured_seconds", forbidden)
    monkeypatch.setattr(cost, "_time_pair", forbidden)
    rs = list(runs.values())
    ratios = F.slack_ratios(runs["svrgsp+"], prob)
    figs = [F.convergence(rs), F.support_raster(rs[0]), F.threshold_timeline(rs),
            F.coefficients(rs[-1], 2), F.progress(rs[-1], 2),
            F.slack_descent(runs["svrgsp+"], ratios=ratios)]
    for fig in figs:
        assert isinstance(fig, go.Figure)
        json.loads(fig.to_json())
        assert not fig.frames


def test_builders_accept_results_and_traces(runs):
    a = F.support_raster(runs["svrgsp"])
    b = F.support_raster(runs["svrgsp"].trace)
    assert a.to_json() == b.to_json()


# -- export ---------------------------------------------------------------------------------------


def test_export_html_standalone(runs, tmp_path):
    path = F.export(F.convergence(list(runs.values())), tmp_path / "conv.html")
    text = path.read_text(encoding="utf-8")
    assert path.stat().st_size > 1_000_000  # plotly.js is embedded: works offline
    assert "<script src=\"https://cdn" not in text
    assert "Plotly.newPlot" in text and "SVRGSP+" in text


def test_export_accepts_figure_widgets(runs, tmp_path):
    fw = go.FigureWidget(F.support_raster(runs["svrgsp"]))
    path = F.export(fw, tmp_path / "raster.htm")
    assert "Support of SVRGSP" in path.read_text(encoding="utf-8")


def test_export_rejects_other_suffix(runs, tmp_path):
    with pytest.raises(ValueError, match=r"\.html or \.png"):
        F.export(F.convergence(runs["fght"]), tmp_path / "x.svg")


def png_size(path):
    head = Path(path).read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def test_export_png_with_chromium(runs, tmp_path):
    if F.find_chromium() is None:
        reason = ("no Chromium/Chrome found for kaleido (set RGRASP_VIZ_CHROMIUM or install "
                  "chromium)")
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; CI is set, so this fails instead of skipping")
        pytest.skip(reason)
    fig = F.threshold_timeline([runs["svrght"], runs["svrgsp+"]], cost=1e-6)
    path = F.export(fig, tmp_path / "timeline.png", width=640, height=360, scale=1)
    assert png_size(path) == (640, 360)


def test_find_chromium_env_and_missing(monkeypatch, tmp_path, runs):
    exe = tmp_path / "mychrome"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    monkeypatch.setenv("RGRASP_VIZ_CHROMIUM", str(exe))
    assert F.find_chromium() == str(exe)
    for var in ("RGRASP_VIZ_CHROMIUM", "RGRASP_CHROMIUM", "BROWSER_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert F.find_chromium() is None
    with pytest.raises(RuntimeError, match="needs Chromium"):
        F.export(F.convergence(runs["fght"]), tmp_path / "x.png")


# -- the core stays free of plotly / ipywidgets --------------------------------------------------


def test_core_import_does_not_load_plotly_or_widgets():
    code = textwrap.dedent("""
        import json, sys
        import rgrasp_viz as rv
        p = rv.make_regression(n=40, d=30, s_star=3, random_state=0)
        r = rv.solve(p, "svrgsp+", s=4, random_state=0, max_iter=2, warn=False)
        r.trace.records(); r.trace.events()
        heavy = ("plotly", "ipywidgets", "anywidget", "kaleido", "traitlets")
        before = sorted(m for m in sys.modules if m.split(".")[0] in heavy)
        from rgrasp_viz.viz import figures
        after = sorted({m.split(".")[0] for m in sys.modules if m.split(".")[0] in heavy})
        print(json.dumps({"before": before, "after": after, "fig": figures.__name__,
                          "viz": rv.viz.figures is figures}))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["before"] == []
    assert "plotly" in out["after"]
    assert out["fig"] == "rgrasp_viz.viz.figures" and out["viz"] is True


def test_unknown_top_level_attribute_still_raises():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        rv.nope  # noqa: B018


def test_timeline_left_margin_holds_its_lane_labels(runs):
    """The lane labels (a run's name, its counts under it) have room whether or not plotly.js
    may push the margin (a dashboard fixes it, to draw its cursor over the figure)."""
    import html
    import re

    from rgrasp_viz.viz.figures._base import text_px

    for group in ([runs["svrght"]], list(runs.values()), [runs["svrgsp+"]] * 3):
        lay = F.threshold_timeline_spec(group, cost=False)["layout"]
        widths = []
        for text in lay["yaxis"]["ticktext"]:
            name, counts = re.fullmatch(r"(.*)<br><span style='font-size:10px'>(.*)</span>",
                                        text).groups()
            widths += [text_px(html.unescape(name), 12), text_px(counts, 10)]
        assert lay["margin"]["l"] >= max(90, max(widths) + 10), (lay["margin"], widths)
