"""What the page draws over a figure itself (``marks.js``), run by Node: where a value is
drawn on a fixed plot area, which traces the page can draw as plotly.js would, plotly.js's
symbol paths and dash lengths, and the strokes and fills a drawing makes.  How the drawing
compares with plotly.js's own, pixel by pixel, is tested in a real page
(``tests/browser/test_widget_playback.py``)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from plotly.utils import PlotlyJSONEncoder

import rgrasp_viz as rv
from rgrasp_viz.viz import figures as F
from rgrasp_viz.viz.dashboards import _figure
from rgrasp_viz.viz.dashboards._widgets import fixed_plot_area

MARKS = Path(_figure.__file__).parent / "marks.js"

# Runs marks.js in a Node context of its own, with a Path2D that keeps its path and a canvas
# whose 2-d context records every call; prints the JSON of each expression given.
HARNESS = r"""
const vm = require("vm");
const fs = require("fs");
const calls = [];
const ctx = new Proxy({}, {
  get: (o, k) => (k in o ? o[k] : (...a) => { calls.push([k, ...a.map((v) =>
    (v && v.d !== undefined ? v.d : v))]); }),
  set: (o, k, v) => { calls.push(["set", k, v]); return true; },
});
const canvas = {width: 0, height: 0, style: {}, getContext: () => ctx};
const context = vm.createContext({Path2D: class { constructor(d) { this.d = d; } }, calls,
  canvas});
vm.runInContext(fs.readFileSync(process.argv[2], "utf8"), context);
const exprs = JSON.parse(fs.readFileSync(0, "utf8"));
const out = exprs.map((e) => { calls.length = 0; return vm.runInContext(e, context); });
process.stdout.write(JSON.stringify(out, (k, v) => (Number.isNaN(v) ? "NaN" : v)));
"""


@pytest.fixture(scope="module")
def node():
    path = shutil.which("node") or "/usr/bin/node"
    if not Path(path).exists():
        pytest.skip("node is not installed")
    return path


@pytest.fixture
def run(node, tmp_path):
    """``run(*expressions)``: their values, computed in marks.js's scope."""
    harness = tmp_path / "harness.js"
    harness.write_text(HARNESS)

    def go(*exprs):
        got = subprocess.run([node, str(harness), str(MARKS)], input=json.dumps(exprs),
                             capture_output=True, text=True, timeout=60)
        assert got.returncode == 0, got.stderr
        return json.loads(got.stdout)
    return go


LAYOUT = {"width": 500, "height": 300, "margin": {"l": 60, "r": 40, "t": 50, "b": 50,
                                                   "autoexpand": False},
          "xaxis": {"range": [0, 10]}, "yaxis": {"range": [-1, 1], "domain": [0.5, 1]},
          "xaxis2": {"range": [0, 2], "type": "log"}}


LINE = {"type": "scatter", "mode": "lines", "x": [0, 1], "y": [0, 1],
        "line": {"color": "red"}}
MARKERS = {"type": "scatter", "mode": "markers", "x": [0, 1], "y": [0, 1],
           "marker": {"color": "blue", "symbol": ["circle", "circle-open"]}}


def test_an_axis_maps_its_range_onto_its_domain_of_the_plot_area(run):
    lay = json.dumps(LAYOUT)
    got = run(*(f"(() => {{ const m = axisMap({lay}, '{ax}'); return [m.px({v}), m.lo, m.hi]; }})()"
                for ax, v in (("xaxis", 0), ("xaxis", 10), ("xaxis", 2.5), ("yaxis", -1),
                              ("yaxis", 1), ("xaxis2", 10), ("xaxis2", 1))))
    plot_w, plot_h = 500 - 60 - 40, 300 - 50 - 50
    assert got[0] == [60, 60, 460] and got[1][0] == 460
    assert got[2][0] == pytest.approx(60 + 0.25 * plot_w)
    # y runs downwards; the axis holds the upper half of the plot area (domain [0.5, 1])
    assert got[3] == [pytest.approx(50 + plot_h / 2), 50, pytest.approx(50 + plot_h / 2)]
    assert got[4][0] == pytest.approx(50)
    # a log axis: its range in powers of ten (plotly.js's convention)
    assert got[5][0] == pytest.approx(60 + 0.5 * plot_w) and got[6][0] == pytest.approx(60)


def test_a_value_the_page_cannot_place_is_not_a_number(run):
    lay = json.dumps(LAYOUT)
    got = run(*(f"axisMap({lay}, '{ax}').px({v})"
                for ax, v in (("xaxis", "null"), ("xaxis", "'3'"), ("xaxis2", 0),
                              ("xaxis2", -1), ("xaxis", "NaN"))))
    assert got == ["NaN"] * 5


@pytest.mark.parametrize("axis", [
    {"autorange": True}, {"range": [0]}, {"range": [0, 1], "type": "category"},
    {"range": [0, 1], "type": "date"}, {"range": [0, 1], "overlaying": "y"},
    {"range": [0, 1], "scaleanchor": "x"}, {"range": [1, 1]}])
def test_an_axis_without_a_range_the_layout_fixes_is_not_mapped(run, axis):
    lay = json.dumps({**LAYOUT, "yaxis": axis})
    assert run(f"axisMap({lay}, 'yaxis')", f"axisMap({lay}, 'yaxis', true)") == [None, None]


def test_an_autoranged_axis_is_mapped_by_its_range_but_does_not_hold(run):
    """plotly.js writes the range it chose back into the layout: a cursor is placed by it; the
    page's traces need a range of the axis's own (plotly.js would range it again)."""
    lay = json.dumps({**LAYOUT, "xaxis": {"range": [0, 10], "autorange": True}})
    got = run(f"axisMap({lay}, 'xaxis').px(10)", f"axisMap({lay}, 'xaxis', true)",
              f"drawMarks(canvas, {lay}, [{json.dumps(LINE)}])")
    assert got == [460, None, False]


def test_a_plot_area_is_fixed_only_with_margins_pushed_by_nothing_and_a_size(run):
    base = json.dumps(LAYOUT)
    got = run(f"fixedArea({base})",
              f"fixedArea(Object.assign({base}, {{margin: {{l: 60}}}}))",
              f"fixedArea(Object.assign({base}, {{width: undefined}}))",
              f"fixedArea(Object.assign({base}, {{height: '300'}}))")
    assert got == [True, False, False, False]


@pytest.mark.parametrize(("dash", "width", "want"), [
    (None, 1, []), ("solid", 2, []), ("dot", 1, [3, 3]), ("dot", 4, [4, 4]),
    ("dash", 1.5, [9, 9]), ("longdash", 4, [20, 20]), ("dashdot", 1, None), ("5px", 1, None)])
def test_dash_lengths_are_plotly_js(run, dash, width, want):
    """plotly.js's Drawing.dashStyle: max(width, 3) px on and off for "dot", 3x for "dash",
    5x for "longdash"; none for a solid line; null (left to plotly.js) for any other."""
    arg = "undefined" if dash is None else json.dumps(dash)
    assert run(f"dashPattern({arg}, {width})") == [want]


@pytest.mark.parametrize(("symbol", "r", "path"), [
    # plotly.js 4's symbol_defs.js, as it writes them for a marker of size 2r
    ("circle", 3.5, "M3.5,0A3.5,3.5 0 1,1 0,-3.5A3.5,3.5 0 0,1 3.5,0Z"),
    ("square", 3, "M3,3H-3V-3H3Z"),
    ("diamond", 4, "M5.2,0L0,5.2L-5.2,0L0,-5.2Z"),
    ("triangle-up", 4, "M-4.62,2H4.62L0,-4Z"),
    ("triangle-down", 4, "M-4.62,-2H4.62L0,4Z"),
    ("line-ew", 6, "M8.4,0H-8.4"),
    ("line-ns", 6, "M0,8.4V-8.4")])
def test_symbol_paths_are_plotly_js(run, symbol, r, path):
    assert run(f"SYMBOLS[{json.dumps(symbol)}]({r})") == [path]


def _coefficient_traces():
    res = rv.solve(rv.make_regression("classroom", random_state=0), "svrgsp", random_state=0,
                   record_iterates=True, warn=False)
    spec = fixed_plot_area(F.coefficients_spec(res, 3, ymax=1.0))
    return json.loads(json.dumps(spec, cls=PlotlyJSONEncoder))


def test_the_coefficient_figures_traces_are_drawn_by_the_page(run):
    spec = _coefficient_traces()
    roles = [t["meta"]["role"] for t in spec["data"]]
    assert roles == ["stems", "heads", "x_true", "Z", "threshold"]
    got = run(*(f"drawable({json.dumps(t)})" for t in spec["data"]),
              f"fixedArea(Object.assign({json.dumps(spec['layout'])}, {{width: 900}}))")
    assert got == [True] * 6


@pytest.mark.parametrize(("change", "why"), [
    ({"type": "bar"}, "not scatter"),
    ({"mode": "lines+markers"}, "two modes"),
    ({"mode": None}, "plotly.js picks the mode"),
    ({"fill": "tozeroy"}, "a fill"),
    ({"line": {"color": "red", "shape": "spline"}}, "a curve"),
    ({"line": {"color": "red", "dash": "dashdot"}}, "a dash the page does not draw"),
    ({"line": {"width": 2}}, "plotly.js picks the colour"),
    ({"x": None}, "x from x0 and dx"),
    ({"selectedpoints": [0]}, "a selection"),
])
def test_a_line_trace_the_page_cannot_draw_is_left_to_plotly(run, change, why):
    tr = {**LINE, **change}
    assert run(f"drawable({json.dumps(tr)})") == [False], why
    assert run(f"drawable({json.dumps(LINE)})") == [True]


@pytest.mark.parametrize(("marker", "why"), [
    ({"color": ["red", "blue"]}, "a colour per point"),
    ({"color": "blue", "symbol": "star"}, "a symbol the page does not draw"),
    ({"color": "blue", "symbol": ["circle", "x"]}, "one point's symbol"),
    ({"color": "blue", "symbol": "line-ew"}, "a line symbol not open (plotly.js: line colour)"),
    ({"color": "blue", "size": [3, 4]}, "a size per point"),
    ({"color": "blue", "line": {"width": 1}}, "an outline without its colour"),
    ({"color": "blue", "gradient": {"type": "radial"}}, "a gradient"),
    ({"symbol": "circle"}, "plotly.js picks the colour"),
])
def test_a_marker_trace_the_page_cannot_draw_is_left_to_plotly(run, marker, why):
    assert run(f"drawable({json.dumps({**MARKERS, 'marker': marker})})") == [False], why
    ok = [{"color": "blue", "symbol": "line-ew-open", "line": {"width": 2}},
          {"color": "blue", "symbol": "square", "line": {"width": 1, "color": "black"}},
          {"color": "blue"}]
    assert run(*(f"drawable({json.dumps({**MARKERS, 'marker': m})})" for m in ok)) == [True] * 3


def test_a_hidden_scatter_trace_draws_nothing_and_needs_nothing(run):
    got = run(f"drawable({json.dumps({'mode': 'lines+markers', 'visible': 'legendonly'})})",
              f"drawable({json.dumps({'mode': 'lines+markers', 'visible': False})})",
              f"drawable({json.dumps({'type': 'bar', 'visible': False})})")
    assert got == [True, True, False]
    calls = _calls(run, [{**LINE, "visible": "legendonly"}])
    assert "stroke" not in [c[0] for c in calls]


def _calls(run, traces, layout=LAYOUT):
    (got,) = run(f"(drawMarks(canvas, {json.dumps(layout)}, {json.dumps(traces)}), "
                 "calls.slice())")
    return got


def test_a_line_breaks_where_a_value_is_missing(run):
    tr = {**LINE, "x": [0, 1, 2, 3, 4, 5], "y": [0, 0.5, None, 0.5, 0.25, 0],
          "line": {"color": "red", "width": 1.5, "dash": "dash"}}
    calls = _calls(run, [tr])
    path = [c[0] for c in calls if c[0] in ("moveTo", "lineTo")]
    assert path == ["moveTo", "lineTo", "moveTo", "lineTo", "lineTo"]
    assert ["setLineDash", [9, 9]] in calls and ["set", "strokeStyle", "red"] in calls
    assert ["set", "lineWidth", 1.5] in calls
    first = next(c for c in calls if c[0] == "moveTo")
    assert first[1:] == [60, pytest.approx(50 + 50)]  # (0, 0): left edge, middle of the domain
    # clipped to the plot area of its axes: x [60, 460], y (domain [0.5, 1]) [50, 150]
    assert ["rect", 60, 50, 400, 100] in calls


def test_markers_are_plotly_js_symbols_filled_or_open_at_their_points(run):
    tr = {**MARKERS, "x": [0, 5, 10], "y": [0, None, 1],
          "marker": {"color": "blue", "size": 7,
                     "symbol": ["circle", "circle-open", "diamond-open"]}}
    calls = _calls(run, [tr])
    drawn = [c for c in calls if c[0] in ("fill", "stroke") and len(c) > 1]
    circle = "M3.5,0A3.5,3.5 0 1,1 0,-3.5A3.5,3.5 0 0,1 3.5,0Z"
    # the point with no y is not drawn; the open diamond is a stroke in the marker's colour
    assert drawn == [["fill", circle], ["stroke", "M4.55,0L0,4.55L-4.55,0L0,-4.55Z"]]
    moves = [c[1:] for c in calls if c[0] == "setTransform" and c[5] != 0]
    assert moves == [[1, 0, 0, 1, 60, 100], [1, 0, 0, 1, 460, 50]]
    assert ["set", "fillStyle", "blue"] in calls and ["set", "strokeStyle", "blue"] in calls


def test_a_trace_on_an_axis_the_page_cannot_place_leaves_the_canvas_clear(run):
    lay = {**LAYOUT, "yaxis": {"autorange": True}}
    (ok,) = run(f"drawMarks(canvas, {json.dumps(lay)}, {json.dumps([LINE])})")
    assert ok is False
    calls = _calls(run, [LINE], lay)
    assert calls[-1][0] == "clearRect" and "stroke" not in [c[0] for c in calls]


def test_the_canvas_covers_the_figure_in_device_pixels(run):
    got = run("(globalThis.devicePixelRatio = 2, drawMarks(canvas, "
              f"{json.dumps(LAYOUT)}, []), [canvas.width, canvas.height, canvas.style.width,"
              " canvas.style.height])")
    assert got == [[1000, 600, "500px", "300px"]]
