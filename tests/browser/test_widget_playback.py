"""The dashboards' figure widget in a real page (Voila, Chromium): every figure keeps its height
and its data through the changes a learner makes, a replay plays, stops and seeks in the page,
a moving replay's traces drawn by the page match plotly.js's drawing pixel for pixel, figures
sent together are drawn one painted frame apart, and picking SVRGHT in the app ends with its
status line done and its figures drawn.

What is asserted is drawn content (``gd.data``, ``gd._fullLayout``, the page's canvas and
screenshots, the replay position each figure shows) and liveness (something moved within a
generous bound), never a rate or a duration: speed is measured by
``benchmarks/bench_playback.py``.
"""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import numpy as np
import pytest
from browser_pages import (
    REDRAW_TIMEOUT,
    RENDER_TIMEOUT,
    Server,
    _bin,
    _free_port,
    _jupyter_env,
    _notebook,
    _shot,
    slider,
    status,
    visible_errors,
)
from PIL import Image

# fixtures (browser, page, voila on the app): tests/browser/conftest.py

pytestmark = pytest.mark.browser

CELLS = {
    "compare_m": '''import rgrasp_viz as rv

cmp = rv.compare(rv.make_regression("classroom", random_state=0),
                 methods=["svrght", "svrgsp", "svrgsp+"], s=24)
cmp''',
    "player": '''import rgrasp_viz as rv

res = rv.solve(rv.make_regression("classroom", random_state=0), "svrgsp+",
               record_iterates=True, random_state=0, warn=False)
pl = rv.play(res)
pl''',
}
ROOT_CLASS = {"compare_m": "rgrasp-compare", "player": "rgrasp-play"}

# Every figure of a dashboard as drawn: its box and plotly.js's height, its traces and points,
# the replay position it shows; and the replay control's position.
DRAWN_JS = """
(cls) => {
  const root = document.querySelector('.' + cls);
  if (!root) return null;
  const count = (v) => (v && v.length !== undefined ? v.length : 0);
  const control = root.querySelector('.rgrasp-replay');
  return {
    index: control ? Number(control.dataset.rgraspIndex) : null,
    playing: control ? control.dataset.rgraspPlaying === '1' : null,
    figures: [...root.querySelectorAll('.js-plotly-plot')].map((gd) => ({
      box: gd.getBoundingClientRect().height,
      layout: gd._fullLayout ? gd._fullLayout.height : 0,
      traces: (gd.data || []).length,
      points: (gd.data || []).reduce((n, t) => n + Math.max(count(t.x), count(t.y),
                                                              count(t.z)), 0),
      frame: gd.dataset.rgraspFrame === undefined ? null : Number(gd.dataset.rgraspFrame),
      text: gd.dataset.rgraspText || null,
      title: gd._fullLayout && gd._fullLayout.title ? String(gd._fullLayout.title.text) : '',
    })),
    status: [...root.querySelectorAll('.rgrasp-status')].map((e) => e.innerText).join(' | '),
    busy: !!root.querySelector('.rgrasp-status.rgrasp-busy'),
  };
}
"""


# The cursors the page draws over a figure: where each line is drawn (its centre, from the
# figure's left edge) and where plotly.js maps its position on its axis, its top and bottom and
# plotly.js's plot area, and how many cursor shapes plotly.js draws itself.
CURSORS_JS = """
(cls) => [...document.querySelector('.' + cls).querySelectorAll('.rgrasp-figure-holder')]
  .map((h) => {
    const gd = h.querySelector('.js-plotly-plot');
    const box = gd.getBoundingClientRect();
    const size = gd._fullLayout._size;
    return {
      plotlyCursors: (gd.layout.shapes || []).filter((sh) => sh.name === 'cursor').length,
      lines: [...h.querySelectorAll('.rgrasp-cursor')].map((c) => {
        const ax = gd._fullLayout['xaxis' + c.dataset.xref.slice(1)];
        const r = c.getBoundingClientRect();
        const x = Number(c.dataset.x);
        return {x, shown: c.style.display !== 'none', drawn: r.left + r.width / 2 - box.left,
                plotly: ax._offset + ax.l2p(x), top: r.top - box.top,
                bottom: r.bottom - box.top, plotTop: size.t, plotBottom: size.t + size.h};
      }),
    };
  })
"""


def assert_cursors_at(page, cls, counts, at=None):
    """Figure ``k`` has ``counts[k]`` cursors drawn by the page (at ``at``, when given), where
    plotly.js maps their position (within a pixel), across the plot area; plotly.js draws
    none."""
    got = page.evaluate(CURSORS_JS, cls)
    assert [len(fig["lines"]) for fig in got] == counts, got
    for k, fig in enumerate(got):
        assert fig["plotlyCursors"] == 0, (k, fig)
        for line in fig["lines"]:
            assert line["shown"], (k, line)
            assert at is None or line["x"] == pytest.approx(at, rel=5e-3), (k, line)
            assert abs(line["drawn"] - line["plotly"]) <= 1.0, (k, line)
            assert abs(line["top"] - line["plotTop"]) <= 1.0, (k, line)
            assert abs(line["bottom"] - line["plotBottom"]) <= 1.0, (k, line)
    return got


# Who draws each figure's traces (data-rgrasp-marks: "page" while a replay moves, see
# marks.js), whether its canvas is shown and how many of its pixels it inked, how many traces
# plotly.js holds hidden (one point, not a number), the replay position and title state drawn,
# and the names its legend lists.
MARKS_JS = """
(cls) => [...document.querySelector('.' + cls).querySelectorAll('.rgrasp-figure-holder')]
  .map((h) => {
    const gd = h.querySelector('.js-plotly-plot');
    const c = h.querySelector('canvas.rgrasp-figure-marks');
    const shown = !!c && c.style.display !== 'none' && c.width > 0;
    let inked = 0;
    if (shown) {
      const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      for (let i = 3; i < px.length; i += 4) if (px[i] > 0) inked += 1;
    }
    const hidden = (gd.data || []).filter((t) => t.y && t.y.length === 1
      && Number.isNaN(t.y[0]));
    return {marks: gd.dataset.rgraspMarks, canvas: shown, inked, hidden: hidden.length,
            traces: (gd.data || []).length, frame: Number(gd.dataset.rgraspFrame),
            text: gd.dataset.rgraspText,
            legend: [...gd.querySelectorAll('.legend .traces')].map((e) => e.textContent)};
  })
"""


def marks(page, cls):
    return page.evaluate(MARKS_JS, cls)


def assert_drawn_by(page, cls, who):
    """Figure ``k``'s traces are drawn by ``who[k]``: ``"page"`` (its canvas shown and inked,
    every trace plotly.js holds hidden) or ``"plotly"`` (no canvas, nothing hidden)."""
    got = marks(page, cls)
    assert [f["marks"] for f in got] == who, got
    for k, f in enumerate(got):
        if who[k] == "page":
            assert f["canvas"] and f["inked"] > 200 and f["hidden"] == f["traces"], (k, f)
        else:
            assert not f["canvas"] and f["hidden"] == 0, (k, f)
    return got


def wait_drawn_by(page, cls, who, figures=None, timeout=REDRAW_TIMEOUT):
    """Until the figures ``figures`` (indices; default all) are drawn by ``who`` at the
    replay control's position, their titles included."""
    page.wait_for_function(
        f"([cls, who, figs]) => {{ const c = document.querySelector('.' + cls + ' .rgrasp-replay');"
        f" const m = ({MARKS_JS})(cls); return (figs || m.map((_, k) => k)).every((k) =>"
        " m[k].marks === who && m[k].frame === Number(c.dataset.rgraspIndex)"
        " && m[k].text === 'current'); }", arg=[cls, who, figures], timeout=timeout,
        polling=50)


def pixels(locator):
    """What the page shows of an element, as an RGB array."""
    return np.asarray(Image.open(io.BytesIO(locator.screenshot())).convert("RGB")).astype(int)


def ink(a):
    return int((a.min(axis=2) < 200).sum())


def assert_same_drawing(a, b, what):
    """Two drawings of a figure agree: nothing but anti-aliased edges differ (under 1 % of
    the inked pixels by more than 64 of 255, under 0.2 % by more than 128)."""
    assert a.shape == b.shape, what
    d = np.abs(a - b).max(axis=2)
    n = max(ink(a), ink(b))
    assert n > 1000, f"{what}: {n} inked pixels"
    assert (d > 64).sum() <= 0.01 * n and (d > 128).sum() <= 0.002 * n, (
        f"{what}: {(d > 64).sum()} pixels differ by > 64, {(d > 128).sum()} by > 128, "
        f"of {n} inked")


def drag_slider(page, root, fraction):
    """Press the replay's slider and drag it to ``fraction`` of its length (held)."""
    box = root.locator(".rgrasp-replay-range").first.bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + box["width"] * 0.02, y)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * fraction, y, steps=8)


@pytest.fixture(scope="module")
def widget_notebooks(tmp_path_factory):
    folder = tmp_path_factory.mktemp("widget-notebooks")
    for name, code in CELLS.items():
        (folder / f"{name}.ipynb").write_text(json.dumps(_notebook(code), indent=1))
    return folder


@pytest.fixture(scope="module")
def voila_widgets(widget_notebooks, tmp_path_factory, chromium_path):
    home = tmp_path_factory.mktemp("voila-widgets")
    port = _free_port()
    server = Server(
        "voila",
        [_bin("voila"), str(widget_notebooks), "--no-browser", f"--port={port}",
         "--Voila.ip=127.0.0.1", "--Voila.token=", "--Voila.port_retries=0",
         "--show_tracebacks=True"],
        url=f"http://127.0.0.1:{port}/", cwd=widget_notebooks, env=_jupyter_env(home),
        log=home / "voila.log")
    try:
        server.wait_ready("voila/static/voila.js")
        yield server
    finally:
        server.stop()


def drawn(page, cls):
    return page.evaluate(DRAWN_JS, cls)


def assert_every_figure_drawn(page, cls, what, n=None):
    """Every figure has a height (its box and plotly.js's layout) and plotted data."""
    got = drawn(page, cls)
    figs = got["figures"]
    assert figs and (n is None or len(figs) == n), f"{what}: figures {figs}"
    flat = [f for f in figs if not (f["box"] > 0 and f["layout"] > 0)]
    assert not flat, f"{what}: figures drawn with height 0: {flat}"
    empty = [f for f in figs if not (f["traces"] > 0 and f["points"] > 0)]
    assert not empty, f"{what}: figures without data: {empty}"
    return got


def open_dashboard(page, server, name):
    page.set_viewport_size({"width": 1400, "height": 2400})
    page.goto(server.url + f"voila/render/{name}.ipynb", timeout=RENDER_TIMEOUT,
              wait_until="domcontentloaded")
    cls = ROOT_CLASS[name]
    try:
        page.wait_for_function(
            "(cls) => { const r = document.querySelector('.' + cls);"
            " if (!r || !r.querySelector('.rgrasp-replay')) return false;"
            " const g = [...r.querySelectorAll('.rgrasp-figure-plot')];"
            " return g.length > 0 && g.every((gd) => (gd.data || []).length > 0"
            " && gd.dataset.rgraspFrame !== undefined); }",
            arg=cls, timeout=RENDER_TIMEOUT, polling=250)
    except Exception:
        raise AssertionError(f"Voila did not render {name}; errors {visible_errors(page)}\n"
                             f"{server.tail()}") from None
    return page.locator(f".{cls}").first


def wait_replay_moves(page, cls, start, timeout=REDRAW_TIMEOUT):
    """Until the replay control and every figure show a position past ``start``."""
    page.wait_for_function(
        f"(cls) => {{ const d = ({DRAWN_JS})(cls); return d.index > {start}"
        f" && d.figures.every((f) => f.frame !== null && f.frame > {start}); }}",
        arg=cls, timeout=timeout, polling=50)


def wait_figures_at(page, cls, index, timeout=REDRAW_TIMEOUT):
    """Until every figure shows replay position ``index``, its title included (and the
    control says so)."""
    page.wait_for_function(
        f"(cls) => {{ const d = ({DRAWN_JS})(cls); return d.index === {index}"
        f" && d.figures.every((f) => f.frame === {index} && f.text !== 'stale'); }}",
        arg=cls, timeout=timeout, polling=50)


def play_pause(root):
    root.locator(".rgrasp-replay-play").first.click()


def test_compare_keeps_every_figure_through_an_m_change_a_wait_and_play(voila_widgets, page,
                                                                         tmp_path):
    """The sequence of issue 27: compare on the classroom problem, m 6 -> 15, wait 30 s,
    Play: every figure keeps its height and its data throughout; the kernel hears where the
    replay stopped (its live counts follow)."""
    cls = ROOT_CLASS["compare_m"]
    root = open_dashboard(page, voila_widgets, "compare_m")
    first = assert_every_figure_drawn(page, cls, "first render", n=5)
    m = slider(root, "m")
    handle = m.locator(".noUi-handle")
    handle.focus()
    for _ in range(9):
        handle.press("ArrowRight")
    assert m.locator(".widget-readout").inner_text().strip() == "15"
    page.wait_for_function(
        f"(cls) => {{ const d = ({DRAWN_JS})(cls); return !d.busy"
        " && d.status.includes('m = 15'); }", arg=cls, timeout=120_000, polling=200)
    assert_every_figure_drawn(page, cls, "m = 15 solved", n=5)
    for k in range(6):  # 30 s, looking every 5 s
        page.wait_for_timeout(5_000)
        assert_every_figure_drawn(page, cls, f"{5 * (k + 1)} s after m = 15", n=5)
    _shot(page, tmp_path / "compare-m15.png")
    counts = root.locator(".widget-html", has_text="H so far").first.inner_text()
    play_pause(root)
    wait_replay_moves(page, cls, 0)
    assert_every_figure_drawn(page, cls, "playing", n=5)
    # while it plays, the page draws the coefficient figures' traces (marks.js)
    page.wait_for_function(f"(cls) => ({MARKS_JS})(cls).slice(2).every((f) => f.marks === 'page')",
                           arg=cls, timeout=REDRAW_TIMEOUT, polling=50)
    if drawn(page, cls)["playing"]:
        assert_drawn_by(page, cls, ["plotly", "plotly", "page", "page", "page"])
    # play on until a method is past its start (its coefficients drawn), so that the counts
    # where the replay stops differ from position 0's
    start = [f["points"] for f in first["figures"][2:]]
    page.wait_for_function(
        f"([cls, start]) => ({DRAWN_JS})(cls).figures.slice(2)"
        ".some((f, k) => f.points !== start[k])", arg=[cls, start], timeout=REDRAW_TIMEOUT)
    play_pause(root)
    stopped = drawn(page, cls)
    assert not stopped["playing"] and stopped["index"] > 0
    wait_figures_at(page, cls, stopped["index"])
    assert_every_figure_drawn(page, cls, "after play", n=5)
    wait_drawn_by(page, cls, "plotly")  # where it rests, plotly.js draws every trace again
    assert_drawn_by(page, cls, ["plotly"] * 5)
    # the cursors of convergence and timeline: drawn by the page where the replay rests, on
    # plotly.js's axes; after a zoom (a relayout of the axis range) they follow the axis
    passes = float(root.locator(".rgrasp-replay-readout").first.inner_text().split()[0])
    before = assert_cursors_at(page, cls, [2, 2, 0, 0, 0], passes)
    page.evaluate(
        "async ([cls, x]) => { const P = await globalThis.__rgraspPlotly;"
        " const gd = document.querySelector('.' + cls).querySelector('.js-plotly-plot');"
        " const r = gd.layout.xaxis.range;"
        " await P.relayout(gd, {'xaxis.range': [r[0], x + 0.5 * (r[1] - x)]}); }",
        [cls, passes])
    zoomed = assert_cursors_at(page, cls, [2, 2, 0, 0, 0], passes)
    assert zoomed[0]["lines"][0]["drawn"] > before[0]["lines"][0]["drawn"] + 1
    # the kernel heard where the replay stopped: the live counts moved from position 0
    page.wait_for_function(
        "([cls, before]) => { const e = [...document.querySelector('.' + cls)"
        ".querySelectorAll('.widget-html')].find((x) => x.innerText.includes('H so far'));"
        " return e && e.innerText !== before; }", arg=[cls, counts], timeout=REDRAW_TIMEOUT)
    assert first["figures"][0]["layout"] > 0
    assert visible_errors(page) == [] and page.page_errors == [], (
        visible_errors(page), page.page_errors)


def test_a_moving_replays_traces_are_drawn_by_the_page_as_plotly_js_draws_them(
        voila_widgets, page, tmp_path):
    """compare's replay slider held by the pointer: the page draws the coefficient figures'
    traces, pixel for pixel as plotly.js draws the same position once the slider is let go;
    also after a zoom and a trace hidden from the legend while it is held."""
    cls = ROOT_CLASS["compare_m"]
    root = open_dashboard(page, voila_widgets, "compare_m")
    holders = root.locator(".rgrasp-figure-holder")
    coef = [2, 3, 4]
    # the first method's legend (drawn once, for the whole replay) lists every kind of mark,
    # also those with no point at the start (x^0 = 0 keeps nothing; SVRGHT has no Z)
    legend = marks(page, cls)[2]["legend"]
    assert len(legend) == 4 and any(n.startswith("kept by") for n in legend), legend
    assert any(n.startswith("Z:") for n in legend), legend
    drag_slider(page, root, 0.4)
    wait_drawn_by(page, cls, "page", coef)
    at = drawn(page, cls)["index"]
    assert at > 0 and drawn(page, cls)["figures"][2]["frame"] == at
    assert_drawn_by(page, cls, ["plotly", "plotly", "page", "page", "page"])
    by_page = [pixels(holders.nth(k)) for k in coef]
    page.mouse.up()
    wait_drawn_by(page, cls, "plotly")
    assert drawn(page, cls)["index"] == at
    assert_drawn_by(page, cls, ["plotly"] * 5)
    by_plotly = [pixels(holders.nth(k)) for k in coef]
    for k, a, b in zip(coef, by_page, by_plotly, strict=True):
        assert_same_drawing(a, b, f"figure {k} at position {at}")
    Image.fromarray(np.vstack(by_page).astype(np.uint8)).save(tmp_path / "marks-by-page.png")
    Image.fromarray(np.vstack(by_plotly).astype(np.uint8)).save(tmp_path / "marks-by-plotly.png")
    # another position draws other marks: the comparison sees a difference
    drag_slider(page, root, 0.9)
    wait_drawn_by(page, cls, "page", coef)
    assert drawn(page, cls)["index"] > at
    d = np.abs(pixels(holders.nth(3)) - by_plotly[1]).max(axis=2)
    assert (d > 128).sum() > 0.02 * ink(by_plotly[1])
    # held: zoom into the second method's coordinates and hide its heads from the legend
    # (plotly.js's public calls, as its own zoom and legend make them)
    page.evaluate(
        "async (cls) => { const P = await globalThis.__rgraspPlotly;"
        " const gd = document.querySelector('.' + cls).querySelectorAll('.js-plotly-plot')[3];"
        " await P.relayout(gd, {'xaxis.range': [150, 650]});"
        " await P.restyle(gd, {visible: 'legendonly'}, [1]); }", cls)
    wait_drawn_by(page, cls, "page", coef)
    page.wait_for_timeout(300)  # the redraw the restyle asked for
    zoomed_page = pixels(holders.nth(3))
    page.mouse.up()
    wait_drawn_by(page, cls, "plotly")
    zoomed_plotly = pixels(holders.nth(3))
    assert_same_drawing(zoomed_page, zoomed_plotly, "zoomed, heads hidden")
    assert page.evaluate(
        "(cls) => document.querySelector('.' + cls).querySelectorAll('.js-plotly-plot')[3]"
        ".data[1].visible", cls) == "legendonly"
    assert marks(page, cls)[2]["legend"] == legend
    assert visible_errors(page) == [] and page.page_errors == [], (
        visible_errors(page), page.page_errors)


# Three figure widgets in a bare page, each with a stand-in model (what anywidget gives the
# module); once drawn, the kernel sends all three a new figure in one task.  Records each
# Plotly.react's start and end as the count of animation frames the page has begun (a paint
# follows each) and the figure drawn.
TURNS_JS = """
async ([esm, version, figures, changed]) => {
  const mod = await import(URL.createObjectURL(new Blob([esm], {type: 'text/javascript'})));
  let frame = 0;
  const count = () => { frame += 1; requestAnimationFrame(count); };
  requestAnimationFrame(count);
  const models = figures.map((fig) => {
    const state = {_plotly_version: version, _figure: fig, _frames: {}, _frame: -1,
                   _replay: '', caption: ''};
    const listeners = {};
    return {state, listeners, get: (k) => state[k],
            on: (ev, cb) => { (listeners[ev] = listeners[ev] || []).push(cb); },
            off: () => {}, send: () => {}};
  });
  const els = [];
  for (const model of models) {
    const el = document.createElement('div');
    el.style.width = '700px';
    document.body.appendChild(el);
    els.push(el);
    await mod.default.render({model, el});
  }
  const gds = els.map((el) => el.querySelector('.rgrasp-figure-plot'));
  const drawn = (n) => gds.every((gd) => Number(gd.dataset.rgraspDraws || 0) >= n);
  for (let i = 0; i < 400 && !drawn(1); i++) await new Promise((r) => setTimeout(r, 25));
  const P = window.Plotly;
  const log = [];
  const react = P.react;
  P.react = function (gd, ...args) {
    const entry = {figure: gds.indexOf(gd), start: frame};
    const out = react.call(this, gd, ...args);
    entry.end = frame; // the drawing is computed in this task
    log.push(entry);
    return out;
  };
  models.forEach((m, k) => { m.state._figure = changed[k]; });
  models.forEach((m) => (m.listeners['change:_figure'] || []).forEach((cb) => cb()));
  for (let i = 0; i < 400 && !drawn(2); i++) await new Promise((r) => setTimeout(r, 25));
  P.react = react;
  return {log, draws: gds.map((gd) => Number(gd.dataset.rgraspDraws || 0))};
}
"""


def test_figures_sent_together_are_drawn_one_painted_frame_apart(browser):
    """A kernel change redrawing several figures (a slider of rv.explore): each whole
    drawing waits until the previous one has been painted, in the order the kernel sent them,
    so that the first reaches the screen without waiting for the others' drawing."""
    import plotly
    from plotly.utils import PlotlyJSONEncoder

    from rgrasp_viz.viz.dashboards._figure import Figure, _plotly_js_version

    def fig(k, shift):
        spec = {"data": [{"type": "scatter", "x": list(range(50)),
                          "y": [(i + shift) % 7 for i in range(50)], "mode": "lines+markers"}],
                "layout": {"height": 250, "title": {"text": f"figure {k}"}}}
        return json.dumps(spec, cls=PlotlyJSONEncoder)

    context = browser.new_context()
    page = context.new_page()
    try:
        page.set_content("<html><body></body></html>")
        page.add_script_tag(path=str(Path(plotly.__file__).parent / "package_data"
                                     / "plotly.min.js"))
        got = page.evaluate(TURNS_JS, [str(Figure._esm), _plotly_js_version(),
                                       [fig(k, 0) for k in range(3)],
                                       [fig(k, 3) for k in range(3)]])
    finally:
        context.close()
    assert got["draws"] == [2, 2, 2], got
    log = got["log"]
    assert [e["figure"] for e in log] == [0, 1, 2], log
    for before, after in zip(log, log[1:], strict=False):
        assert after["start"] > before["end"], log  # an animation frame (a paint) between


def test_player_plays_stops_and_seeks_in_the_page(voila_widgets, page, tmp_path):
    cls = ROOT_CLASS["player"]
    root = open_dashboard(page, voila_widgets, "player")
    assert_every_figure_drawn(page, cls, "first render", n=3)
    assert drawn(page, cls)["index"] == 0
    # play, then stop: the figures move (the coefficients drawn by the page), then rest where
    # the control rests (drawn by plotly.js)
    play_pause(root)
    wait_replay_moves(page, cls, 0)
    page.wait_for_function(f"(cls) => ({MARKS_JS})(cls)[0].marks === 'page'", arg=cls,
                           timeout=REDRAW_TIMEOUT, polling=50)
    play_pause(root)
    wait_drawn_by(page, cls, "plotly")
    here = drawn(page, cls)["index"]
    wait_figures_at(page, cls, here)
    got = assert_every_figure_drawn(page, cls, "stopped", n=3)
    assert not got["playing"]
    page.wait_for_timeout(1_000)
    assert drawn(page, cls)["index"] == here  # stopped means stopped
    # seek: the end of the run, then one step back, then the start
    rng = root.locator(".rgrasp-replay-range").first
    last = int(rng.get_attribute("max"))
    rng.focus()
    rng.press("End")
    wait_figures_at(page, cls, last)
    # the support raster's cursor, drawn by the page, on the last outer iteration
    ((line,),) = [f["lines"] for f in assert_cursors_at(page, cls, [0, 0, 1]) if f["lines"]]
    iterations = page.evaluate(
        "(cls) => document.querySelector('.' + cls).querySelectorAll('.js-plotly-plot')[2]"
        ".layout.xaxis.range[1] - 0.5", cls)
    assert line["x"] == pytest.approx(iterations)
    title = drawn(page, cls)["figures"][0]["title"]
    assert "hard thresholdings so far" in title
    root.locator(".rgrasp-replay-prev").first.click()
    wait_figures_at(page, cls, last - 1)
    assert drawn(page, cls)["figures"][0]["title"] != title
    rng.focus()
    rng.press("Home")
    wait_figures_at(page, cls, 0)
    # play from the end starts over, and reaches the end by itself
    rng.press("End")
    wait_figures_at(page, cls, last)
    play_pause(root)
    page.wait_for_function(
        f"(cls) => {{ const d = ({DRAWN_JS})(cls); return d.index < {last}; }}", arg=cls,
        timeout=REDRAW_TIMEOUT, polling=50)
    play_pause(root)
    assert_every_figure_drawn(page, cls, "after seeking", n=3)
    _shot(page, tmp_path / "player-seek.png")
    assert visible_errors(page) == [] and page.page_errors == [], (
        visible_errors(page), page.page_errors)


def test_app_svrght_ends_done_with_its_figures_drawn(voila, page, tmp_path):
    """SVRGHT picked in the app: the status line ends done (not busy) naming SVRGHT, drawn
    with the convergence figure, and every figure shows SVRGHT's run, its dense comb of
    thresholdings thinned (the title says so)."""
    page.set_viewport_size({"width": 1400, "height": 2400})
    page.goto(voila.url, timeout=RENDER_TIMEOUT, wait_until="domcontentloaded")
    cls = "rgrasp-explore"
    page.wait_for_function(
        "() => { const g = document.querySelectorAll('.rgrasp-explore .js-plotly-plot');"
        " return g.length === 3 && [...g].every((gd) => (gd.data || []).length > 0); }",
        timeout=RENDER_TIMEOUT, polling=250)
    page.wait_for_function(
        "() => document.querySelector('.rgrasp-status:is(.rgrasp-ok, .rgrasp-warn)')",
        timeout=REDRAW_TIMEOUT)
    select = page.locator(".rgrasp-explore .widget-dropdown", has_text="method").first
    t0 = time.monotonic()
    select.locator("select").select_option(label="SVRGHT")
    page.wait_for_function(
        "() => { const s = document.querySelector('.rgrasp-explore .rgrasp-status');"
        " return s && !s.classList.contains('rgrasp-busy') && s.innerText.includes('SVRGHT'); }",
        timeout=60_000, polling=100)
    waited = time.monotonic() - t0
    _shot(page, tmp_path / "app-svrght.png")
    kind, text = status(page)
    assert kind in ("ok", "warn") and "SVRGHT" in text, (kind, text)
    # the status line is the convergence figure's caption: drawn in the same element
    assert page.evaluate(
        "() => !!document.querySelector('.rgrasp-explore .rgrasp-figure "
        ".rgrasp-figure-caption .rgrasp-status')")
    got = assert_every_figure_drawn(page, cls, "SVRGHT", n=3)
    conv, timeline = got["figures"][0], got["figures"][1]
    assert "SVRGHT" in conv["title"] or "SVRGHT" in page.evaluate(
        "() => document.querySelector('.rgrasp-explore .js-plotly-plot').data"
        ".map((t) => t.name).join(' ')")
    assert "marks drawn" in timeline["title"], timeline["title"]
    points = page.evaluate(
        "() => [...document.querySelectorAll('.rgrasp-explore .js-plotly-plot')][1].data"
        ".filter((t) => t.meta && t.meta.role === 'marks').map((t) => t.x.length)")
    assert points and max(points) <= 3 * 400, points
    assert visible_errors(page) == [] and page.page_errors == [], (
        visible_errors(page), page.page_errors)
    print(f"SVRGHT picked -> status done after {waited:.1f} s (not asserted: a liveness "
          "bound of 60 s only)")
