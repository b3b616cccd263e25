"""The dashboards' figure widget and replay control (``_figure.py``, ``figure.js``,
``marks.js``, ``replay.js``): the JavaScript parses, the frames a page steps through decode to
what the figure builders make, and nothing private of plotly or ipywidgets is used."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import rgrasp_viz as rv
from rgrasp_viz.viz import figures as F
from rgrasp_viz.viz.dashboards import _figure
from rgrasp_viz.viz.dashboards._figure import Figure, Replay, encode_frames
from rgrasp_viz.viz.dashboards._widgets import spec_patch
from rgrasp_viz.viz.figures._base import spec as make_spec

HERE = Path(_figure.__file__).parent
JS_FILES = sorted(HERE.glob("*.js"))


def test_the_widgets_javascript_lives_in_js_files_next_to_them():
    assert {p.name for p in JS_FILES} >= {"figure.js", "marks.js", "replay.js"}
    src = Path(_figure.__file__).read_text()
    assert '_esm = _module("marks.js", "figure.js")' in src
    assert '_esm = _HERE / "replay.js"' in src
    # what the page gets is the files' text: the figure's module is marks.js, then figure.js
    assert str(Figure._esm) == "\n".join((HERE / n).read_text() for n in ("marks.js", "figure.js"))
    assert str(Replay._esm) == (HERE / "replay.js").read_text()


def _node():
    node = shutil.which("node") or "/usr/bin/node"
    if not Path(node).exists():
        pytest.skip("node is not installed")
    return node


@pytest.mark.parametrize("path", JS_FILES, ids=lambda p: p.name)
def test_javascript_parses(path):
    got = subprocess.run([_node(), "--check", str(path)], capture_output=True, text=True,
                         timeout=60)
    assert got.returncode == 0, got.stderr


def test_the_figure_module_the_page_gets_parses_as_one_es_module(tmp_path):
    """marks.js declares for figure.js: no import or export of its own, and no name both
    declare (a second declaration would be a syntax error of the module)."""
    marks = (HERE / "marks.js").read_text()
    assert not re.search(r"^\s*(import|export)\b", marks, re.MULTILINE)
    module = tmp_path / "figure-module.mjs"
    module.write_text(str(Figure._esm))
    got = subprocess.run([_node(), "--check", str(module)], capture_output=True, text=True,
                         timeout=60)
    assert got.returncode == 0, got.stderr


@pytest.mark.parametrize("path", JS_FILES, ids=lambda p: p.name)
def test_javascript_uses_only_plotlys_public_api(path):
    text = path.read_text()
    calls = set(re.findall(r"Plotly\.([A-Za-z_.]+)\(", text))
    assert calls <= {"react", "update", "restyle", "relayout", "animate", "purge",
                     "Plots.resize"}, calls
    # nor does it read plotly.js's private state (a figure's computed layout and data)
    assert "_full" not in text and "_doPlot" not in text


def test_no_private_name_of_plotly_or_ipywidgets_is_imported():
    for py in HERE.glob("*.py"):
        tree = ast.parse(py.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in (
                    "plotly", "ipywidgets"):
                names = [a.name for a in node.names]
                assert not any(n.startswith("_") for n in names), (py.name, names)
                assert not any(part.startswith("_") for part in node.module.split(".")), (
                    py.name, node.module)


def _decode(payload):
    """The page's reading of a frames payload, in NumPy: per state, trace -> path -> value."""
    index = np.frombuffer(payload["index"], "<i4")
    extra = json.loads(payload["json"])
    states = [{int(t): dict(keys) for t, keys in st["data"].items()} for st in extra]
    for a in payload["arrays"]:
        values = np.frombuffer(a["values"], "<" + a["dtype"])
        offsets = np.frombuffer(a["offsets"], "<i4")
        for s, st in enumerate(states):
            st.setdefault(a["trace"], {})[a["path"]] = values[offsets[s]:offsets[s + 1]]
    return index, states, [st["layout"] for st in extra]


@pytest.fixture(scope="module")
def run():
    prob = rv.make_regression(n=120, d=200, s_star=4, random_state=3)
    return rv.solve(prob, "svrgsp+", s=5, J=240, max_iter=4, record_iterates=True,
                    record_every=40, random_state=0, warn=False)


def test_frames_decode_to_the_builders_output(run):
    """What the page reads from the binary buffers is, state by state, what the builder made
    (float32 for non-integers: what a screen shows), and Python's figure at position i is the
    builder's figure for that position."""
    frames, _ = rv.analysis.replay_frames(run)
    ymax = F.coefficient_range(run)
    make = lambda i: spec_patch(F.coefficients_spec(run, *frames[i], ymax=ymax))  # noqa: E731
    fr = encode_frames(len(frames), make)
    index, states, layouts = _decode(fr.payload)
    assert len(index) == len(frames) and fr.payload["n"] == len(frames)
    assert fr.payload["traces"] == sorted({t for st in states for t in st})
    binary = {(a["trace"], a["path"]) for a in fr.payload["arrays"]}
    assert (0, "x") in binary and (0, "y") in binary  # the comb: many numbers, binary
    for i in range(len(frames)):
        want = make(i)
        got = states[index[i]]
        for t, keys in got.items():
            for path, v in keys.items():
                ref = want["data"][t]
                for k in path.split("."):
                    ref = ref[k]
                if (t, path) in binary:
                    np.testing.assert_allclose(np.asarray(v, float), np.asarray(ref, float),
                                               rtol=1e-6)
                else:
                    assert json.dumps(v, default=list) == json.dumps(ref, default=list)
        assert layouts[index[i]]["title.text"] == want["layout"]["title"]["text"]
    base = F.coefficients_spec(run, *frames[0], ymax=ymax)
    for i in (0, 3, len(frames) - 1):
        shown = fr.apply(base, i)
        fresh = F.coefficients_spec(run, *frames[i], ymax=ymax)
        for a, b in zip(shown["data"], fresh["data"], strict=True):
            np.testing.assert_array_equal(np.asarray(a["x"], float), np.asarray(b["x"], float))
            np.testing.assert_array_equal(np.asarray(a["y"], float), np.asarray(b["y"], float))
        assert shown["layout"]["title"] == fresh["layout"]["title"]


def test_frames_keep_only_what_changes_and_share_equal_states():
    base = {"data": [{"type": "scatter", "x": [0, 1], "y": [0.5, 1.5], "name": "a"}],
            "layout": {"title": {"text": "t0"}, "height": 300}}

    def make(i):
        return {"data": {0: {**base["data"][0], "y": [0.5 + i // 2, 1.5]}},
                "layout": {"title": {"text": f"t{i // 2}"}, "height": 300}}

    fr = encode_frames(6, make, key=lambda i: i // 2)
    assert fr.index.tolist() == [0, 0, 1, 1, 2, 2] and len(fr.states) == 3
    assert fr.states[1] == {"data": {0: {"y": [1.5, 1.5]}}, "layout": {"title.text": "t1"}}
    (arr,) = fr.payload["arrays"]
    assert arr["path"] == "y" and arr["dtype"] == "f4"
    assert np.frombuffer(arr["values"], "<f4").tolist() == [0.5, 1.5, 1.5, 1.5, 2.5, 1.5]
    assert np.frombuffer(arr["offsets"], "<i4").tolist() == [0, 2, 4, 6]
    with pytest.raises(ValueError, match="at least one position"):
        encode_frames(0, make)


def test_a_missing_value_travels_in_the_binary_buffers_as_not_a_number():
    """A trace with one missing point (how a replay's legend lists a trace empty at its start)
    still travels as binary numbers: None is NaN, which plotly.js draws as nothing too."""
    def make(i):
        x = [None] if i == 0 else list(range(i))
        return {"data": {0: {"type": "scatter", "x": x, "y": [None] if i == 0 else [1.5] * i}}}

    fr = encode_frames(3, make)
    arrays = {a["path"]: a for a in fr.payload["arrays"]}
    assert set(arrays) == {"x", "y"} and json.loads(fr.payload["json"])[0]["data"] == {}
    x = np.frombuffer(arrays["x"]["values"], "<" + arrays["x"]["dtype"])
    assert np.isnan(x[0]) and x[1:].tolist() == [0, 0, 1]
    assert fr.states[0]["data"][0]["x"] == [None]  # Python's figure keeps what it was given


def test_a_figure_follows_its_replay_in_python_without_sending_the_figure():
    base = {"data": [{"type": "scatter", "x": [0, 1], "y": [0.0, 0.0]}],
            "layout": {"height": 300}}
    fw = Figure(base)
    rp = Replay(max=4)
    fw.set_frames(encode_frames(5, lambda i: {"data": {0: {"y": [float(i), 0.0]}}}), rp)
    sent = []
    fw.observe(lambda ch: sent.append(ch["name"]), names=["_figure", "_frames"])
    rp.value = 3
    assert fw.frame == 3 and fw.to_plotly_json()["data"][0]["y"] == [3.0, 0.0]
    assert list(fw.data[0].y) == [3.0, 0.0]
    assert sent == []  # the page steps its own copy of the frames
    rp.value = 99  # clamped
    assert rp.value == 4 and fw.frame == 4
    with pytest.raises(TypeError, match="a figure must be"):
        Figure("not a figure")


def test_the_page_gets_plotly_js_from_the_kernel_as_a_buffer():
    import plotly.offline

    fw = Figure({"data": [], "layout": {}})
    sent = []
    fw.send = lambda content, buffers=None: sent.append((content, buffers))
    fw._on_custom_msg(fw, {"kind": "plotly-js-request"}, [])
    ((content, buffers),) = sent
    assert content == {"kind": "plotly-js"}
    assert bytes(buffers[0]).decode() == plotly.offline.get_plotlyjs()
    assert fw._plotly_version == plotly.offline.get_plotlyjs_version()


def test_a_small_template_is_written_into_the_layout_the_page_gets():
    """plotly.js looks every attribute up in a template too, at every step of a replay: the
    page gets the builders' small template's values in the layout instead, set only where the
    figure leaves them unset, on every axis (those of the layout and those the traces name);
    Python keeps the figure as built."""
    spec = make_spec([{"type": "scatter", "x": [0, 1], "y": [1, 2]},
                   {"type": "scatter", "x": [0, 1], "y": [1, 2], "xaxis": "x2", "yaxis": "y3"}],
                  {"xaxis": {"gridcolor": "red", "title": {"text": "j"}}, "font": {"size": 11},
                   "yaxis3": {"anchor": "x2"}})
    fw = Figure(spec)
    sent = json.loads(fw._figure)["layout"]
    tpl = F.TEMPLATE["layout"]
    assert "template" not in sent
    assert sent["xaxis"] == {**tpl["xaxis"], "gridcolor": "red", "title": {"text": "j"}}
    for ax in ("yaxis", "xaxis2"):  # named by the traces only: as plotly.js makes them
        assert sent[ax] == tpl[ax[:5]]
    assert sent["yaxis3"] == {**tpl["yaxis"], "anchor": "x2"}
    assert sent["font"] == {"size": 11, **tpl["font"]}
    assert {k: sent[k] for k in ("paper_bgcolor", "plot_bgcolor", "hovermode")} == {
        k: tpl[k] for k in ("paper_bgcolor", "plot_bgcolor", "hovermode")}
    assert fw.spec["layout"]["template"] == F.TEMPLATE and "yaxis" not in fw.spec["layout"]
    # a template with trace defaults, or a figure with traces off the x-y plane: as it is
    for other in ({"layout": tpl, "data": {"scatter": [{"mode": "lines"}]}},
                  {"layout": {"xaxis2": {"showgrid": False}}}):
        assert json.loads(Figure({**spec, "layout": {**spec["layout"], "template": other}})
                          ._figure)["layout"]["template"] == other
    pie = make_spec([{"type": "pie", "values": [1, 2]}], {})
    assert "template" in json.loads(Figure(pie)._figure)["layout"]
