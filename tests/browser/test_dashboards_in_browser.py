"""A real browser on the dashboard: Voila serves ``notebooks/app.ipynb`` (``rv.explore()``),
Chromium (driven by Playwright) loads it, reads the data plotted by plotly, moves the ``eta``
slider with the keyboard and checks that the plots were redrawn with new data and no error is
shown.  The same notebook, run in JupyterLab 4 through its menus, renders the widgets.

Screenshots land in the test's temporary directory (printed in the captured output); the
browser and server logs are attached to failures.  Skipped, with the reason shown, when no
Chromium is found -- a failure instead when ``CI`` is set.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

import pytest
from browser_pages import (
    APP,
    DASHBOARD_CELLS,
    DASHBOARD_CLASS,
    DIVERGED_DRAWN_JS,
    MIRROR_PY,
    N_PLOTS,
    PLAYBACK_JS,
    REDRAW_TIMEOUT,
    RENDER_TIMEOUT,
    SCREENSHOTS,
    WAIT_PLOTS_JS,
    Server,
    _free_port,
    _jupyter_env,
    _notebook,
    _run_all_in_lab,
    _shot,
    assert_raster_is_categorical,
    code_lines,
    nudge_slider,
    plots,
    slider,
    status,
    visible_errors,
    voila_server,
)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def lab(app_notebook, dashboard_notebooks, tmp_path_factory, chromium_path):
    # Serve a copy: running the notebook in the UI must never autosave outputs into the repo.
    home = tmp_path_factory.mktemp("lab")
    root = home / "root"
    (root / "notebooks").mkdir(parents=True)
    shutil.copy(app_notebook, root / "notebooks" / app_notebook.name)
    shutil.copytree(dashboard_notebooks, root / "dashboards")
    env = _jupyter_env(home)
    news = Path(env["JUPYTERLAB_SETTINGS_DIR"], "@jupyterlab", "apputils-extension")
    news.mkdir(parents=True)
    (news / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
    port = _free_port()
    server = Server(
        "jupyter lab",
        [
            sys.executable, "-m", "jupyterlab",
            "--no-browser",
            f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            "--ServerApp.ip=127.0.0.1",
            "--IdentityProvider.token=",
            "--ServerApp.password=",
            "--ServerApp.disable_check_xsrf=True",
            f"--ServerApp.root_dir={root}",
            "--LabApp.news_url=",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.extension_manager=readonly",
            *(["--allow-root"] if os.geteuid() == 0 else []),
        ],
        url=f"http://127.0.0.1:{port}/",
        cwd=root,
        env=env,
        log=home / "lab.log",
    )
    try:
        server.wait_ready("api/status")
        yield server
    finally:
        server.stop()


# -- tests -----------------------------------------------------------------------------------


def test_app_notebook_is_one_dashboard_cell():
    """What Voila turns into the app: an introduction, then one cell whose output is the
    dashboard; committed executed, without widget state."""
    nb = json.loads(APP.read_text())
    kinds = [c["cell_type"] for c in nb["cells"]]
    assert kinds[0] == "markdown" and nb["cells"][0]["source"][0].startswith("# ")
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert len(code) == 1 and "rv.explore(" in "".join(code[0]["source"])
    assert "nbval-ignore-output" in code[0]["metadata"].get("tags", [])
    mimes = {m for o in code[0]["outputs"] for m in o.get("data", {})}
    assert "application/vnd.jupyter.widget-view+json" in mimes, "commit app.ipynb executed"
    assert "widgets" not in nb["metadata"], "app.ipynb must not store widget state"
    assert nb["metadata"]["kernelspec"]["name"] == "python3"


def test_voila_app_redraws_when_eta_slider_moves(voila, app_notebook, page, tmp_path):
    page.set_viewport_size({"width": 1400, "height": 2400})  # the whole dashboard on screen
    t0 = time.monotonic()
    page.goto(voila.url, timeout=RENDER_TIMEOUT, wait_until="domcontentloaded")
    try:
        page.wait_for_function(WAIT_PLOTS_JS, arg=N_PLOTS, timeout=RENDER_TIMEOUT, polling=250)
    except Exception:
        _shot(page, tmp_path / "voila-not-rendered.png")
        raise AssertionError(
            f"Voila did not draw {N_PLOTS} plots with data; errors {visible_errors(page)}; "
            f"plots {[{k: v for k, v in p.items() if k != 'fingerprint'} for p in plots(page)]}"
            f"\nvoila log:\n{voila.tail()}"
        ) from None
    t_render = time.monotonic() - t0
    _shot(page, tmp_path / "voila-initial.png")

    # the app reads as an app: no code, no errors
    body = page.locator("body").inner_text()
    for line in code_lines(app_notebook):
        assert line not in body, f"code shown in the Voila app: {line!r}"
    assert page.locator(".jp-CodeCell .jp-InputArea-editor, .jp-InputPrompt:visible").count() == 0
    assert visible_errors(page) == []
    before = plots(page)
    assert len(before) >= N_PLOTS and all(p["points"] > 0 for p in before[:N_PLOTS])

    # smaller step sizes: slower, never divergent.  First a burst of three key presses (a
    # learner's first fast drag: debounced, and the plots must end showing the latest value),
    # then one more press (the plots must still be live after the burst).
    timings = []
    for presses in (3, 1):
        moved = nudge_slider(page, "eta", "ArrowLeft", presses, tmp_path, voila)
        _shot(page, tmp_path / f"voila-after-eta-x{presses}.png")
        after = moved["after"]
        assert moved["changed"], "no plot changed"
        assert len(after) == len(before)
        assert all(p["points"] > 0 for p in after[:N_PLOTS]), after
        assert float(moved["value_after"]) < float(moved["value_before"]), moved
        assert visible_errors(page) == []
        page.wait_for_function(  # the status line reports the new run, not "solving…"
            "() => document.querySelector('.rgrasp-status:is(.rgrasp-ok, .rgrasp-warn)')",
            timeout=REDRAW_TIMEOUT,
        )
        assert status(page)[0] in ("ok", "warn"), status(page)
        assert_raster_is_categorical(page)
        timings.append(f"eta {moved['value_before']} -> {moved['value_after']} ({presses} "
                       f"key presses) redrew plots {moved['changed']} in "
                       f"{moved['redraw_s']:.2f} s")

    # the largest step size diverges: the dashboard says so and draws the diverged run
    # (dotted) next to the last good one; raster and timeline keep the good run
    shown = [p["fingerprint"] for p in plots(page)]
    eta = slider(page, "eta").locator(".noUi-handle")
    eta.focus()
    eta.press("End")
    page.locator(".rgrasp-status.rgrasp-error").wait_for(timeout=REDRAW_TIMEOUT)
    kind, message = status(page)
    assert "DIVERGED" in message and "Lower" in message, message
    page.wait_for_function(DIVERGED_DRAWN_JS, timeout=REDRAW_TIMEOUT, polling=200)
    _shot(page, tmp_path / "voila-diverged.png")
    now = [p["fingerprint"] for p in plots(page)]
    assert now[0] != shown[0] and now[1:N_PLOTS] == shown[1:N_PLOTS], "raster/timeline moved"
    assert_raster_is_categorical(page)
    assert page.page_errors == [], page.page_errors
    print(f"voila: plots drawn {t_render:.1f} s after load;", "; ".join(timings))


def test_jupyterlab_runs_app_notebook_and_renders_widgets(lab, page, tmp_path):
    _run_all_in_lab(page, lab, "notebooks/" + APP.name, tmp_path)
    try:
        page.wait_for_function(WAIT_PLOTS_JS, arg=N_PLOTS, timeout=RENDER_TIMEOUT, polling=250)
        slider(page, "eta").wait_for(state="visible", timeout=5_000)
    except Exception:
        _shot(page, tmp_path / "lab-not-rendered.png")
        raise AssertionError(
            f"JupyterLab did not render the widgets; errors {visible_errors(page)}; plots "
            f"{[{k: v for k, v in p.items() if k != 'fingerprint'} for p in plots(page)]}"
            f"\n{lab.tail()}"
        ) from None
    _shot(page, tmp_path / "lab-rendered.png")
    assert slider(page, "eta").is_visible()
    assert len([p for p in plots(page) if p["visible"] and p["points"] > 0]) >= N_PLOTS
    assert page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
                        ).count() == 0
    assert visible_errors(page) == []
    # live widgets, not a static snapshot: the kernel answers a slider move with new data
    moved = nudge_slider(page, "eta", "ArrowLeft", 1, tmp_path, lab)
    assert moved["changed"] and float(moved["value_after"]) < float(moved["value_before"])
    _shot(page, tmp_path / "lab-after-eta.png")
    assert_raster_is_categorical(page)
    assert visible_errors(page) == []
    assert page.page_errors == [], page.page_errors


# -- every figure of every dashboard agrees with a fresh render, after every kind of change ----
#
# The dashboards are served from small notebooks written into a temporary folder: each shows one
# dashboard next to a hidden "mirror" (a Textarea) to which the kernel writes, after every change,
# the figures as Python holds them (``FigureWidget.to_plotly_json()``).  The test renders that
# spec with ``Plotly.newPlot`` into a fresh div of the same page (same plotly.js, same CSS, same
# width) and compares what plotly.js made of both: trace count and types, array lengths, and per
# axis its type, range and categories.

# A trace from a stranger: its method name is an HTML payload that would set the page's title
# and a window flag if the page ran it (rv.play once put it into an HTML widget unescaped).
PAYLOAD = "<img src=x onerror=\"document.title='pwned';window.__rgraspPwned=1\">"
CRAFTED_CELL = f'''import rgrasp_viz as rv
from rgrasp_viz._trace import Trace

run = rv.solve(rv.make_regression(n=80, d=60, s_star=3, random_state=0), "svrgsp+", s=4,
               max_iter=4, record_iterates=True, random_state=0, warn=False)
path = Trace(dict(run.trace.arrays), {{**run.trace.meta, "method": {PAYLOAD!r}}}).save("evil.npz")
pl = rv.play(Trace.load(path))
pl'''


def _write_dashboard_notebooks(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "_mirror.py").write_text(MIRROR_PY)
    for name, code in DASHBOARD_CELLS.items():
        (folder / f"{name}.ipynb").write_text(json.dumps(_notebook(code), indent=1))
    (folder / "crafted.ipynb").write_text(json.dumps(_notebook(CRAFTED_CELL), indent=1))


MIRROR_VERSION_JS = """
() => {
  const t = document.querySelector('.rgrasp-mirror textarea');
  if (!t || !t.value) return null;
  const [v, busy] = t.value.split('|', 2);
  return {version: Number(v), busy: busy === '1'};
}
"""

# What plotly.js made of a figure: in the page, and from the mirror's spec in a fresh div.
FIG_STATE_JS = """
async (rootClass) => {
  const size = {i1: 1, u1: 1, u1c: 1, i2: 2, u2: 2, i4: 4, u4: 4, f4: 4, f8: 8};
  const count = (v) => {  // entries (rows of a 2-d array), also of a {dtype, bdata} spec
    if (v === undefined || v === null) return 0;
    if (ArrayBuffer.isView(v) || Array.isArray(v)) return v.length;
    if (v.shape !== undefined) return Number(String(v.shape).split(',')[0]);
    if (v.bdata !== undefined) return atob(v.bdata).length / size[v.dtype];
    return 1;
  };
  const state = (gd) => {
    const fl = gd._fullLayout;
    const axes = {};
    Object.keys(fl).filter((k) => /^[xy]axis[0-9]*$/.test(k)).sort().forEach((k) => {
      const ax = fl[k];
      axes[k] = {type: ax.type, range: (ax.range || []).map(Number),
                 categories: ax.type === 'category' ? ax._categories.map(String) : null};
    });
    return {traces: gd.data.length, types: gd.data.map((t) => t.type || 'scatter'),
            lengths: gd.data.map((t) => [count(t.x), count(t.y), count(t.z)]), axes};
  };
  const text = document.querySelector('.rgrasp-mirror textarea').value;
  const [version] = text.split('|', 1);
  const spec = JSON.parse(text.slice(text.indexOf('|', text.indexOf('|') + 1) + 1));
  // the plotly.js the dashboards' figures are drawn with
  const Plotly = globalThis.__rgraspPlotly ? await globalThis.__rgraspPlotly : window.Plotly;
  if (!Plotly) throw new Error('no plotly.js on the page');
  let div = document.getElementById('rgrasp-fresh-render');
  if (!div) {
    div = document.createElement('div');
    div.id = 'rgrasp-fresh-render';
    div.style.cssText = 'position:absolute;left:-10000px;top:0';
    document.body.appendChild(div);
  }
  const gds = document.querySelector('.' + rootClass).querySelectorAll('.js-plotly-plot');
  const out = {version: Number(version), plotly: Plotly.version, figures: {}};
  for (let i = 0; i < spec.length; i++) {
    const gd = gds[i];
    const name = spec[i].name;
    if (!gd) { out.figures[name] = null; continue; }
    div.style.width = gd.clientWidth + 'px';
    Plotly.purge(div);
    await Plotly.newPlot(div, spec[i].spec.data, spec[i].spec.layout);
    out.figures[name] = {page: state(gd), fresh: state(div)};
  }
  Plotly.purge(div);
  return out;
}
"""


# Width of each figure against its output cell, and every label of a figure inside it
LAYOUT_JS = """
(rootClass) => {
  const root = document.querySelector('.' + rootClass);
  const figures = [];
  const clipped = [];
  let texts = 0;
  for (const gd of root.querySelectorAll('.js-plotly-plot')) {
    const cell = gd.closest('.jp-OutputArea-output') || gd.parentElement;
    const box = gd.getBoundingClientRect();
    figures.push({width: Math.round(box.width), cell: cell.clientWidth,
                  ratio: box.width / Math.max(cell.clientWidth, 1)});
    const svg = gd.querySelector('.main-svg').getBoundingClientRect();
    for (const t of gd.querySelectorAll('text')) {
      const s = (t.textContent || '').trim();
      const r = t.getBoundingClientRect();
      if (!s || r.width === 0 || getComputedStyle(t).display === 'none') continue;
      texts += 1;
      const out = r.left < svg.left - 1 || r.right > svg.right + 1 || r.top < svg.top - 1
        || r.bottom > svg.bottom + 1;
      if (out || s.endsWith('…')) clipped.push({text: s.slice(0, 60), left: r.left,
        right: r.right, svgRight: svg.right});
    }
  }
  return {figures, clipped, texts};
}
"""


def _state_diff(name: str, page: dict, fresh: dict) -> list[str]:
    """Where plotly.js's rendering in the page differs from a fresh render of the same spec."""
    out = []
    for key in ("traces", "types", "lengths"):
        if page[key] != fresh[key]:
            out.append(f"{name}: {key} page {page[key]} != fresh {fresh[key]}")
    if sorted(page["axes"]) != sorted(fresh["axes"]):
        out.append(f"{name}: axes page {sorted(page['axes'])} != fresh {sorted(fresh['axes'])}")
    for ax, f in fresh["axes"].items():
        p = page["axes"].get(ax)
        if p is None:
            continue
        if p["type"] != f["type"]:
            out.append(f"{name}.{ax}: type page {p['type']!r} (range {p['range']}) != fresh "
                       f"{f['type']!r} (range {f['range']})")
            continue
        if p["categories"] != f["categories"]:
            n_p = None if p["categories"] is None else len(p["categories"])
            n_f = None if f["categories"] is None else len(f["categories"])
            out.append(f"{name}.{ax}: {n_p} categories in the page != {n_f} fresh "
                       f"(first page {(p['categories'] or [])[:4]}, fresh "
                       f"{(f['categories'] or [])[:4]})")
        # category axes: exact; others: within 3 % of the span (autorange pads markers in
        # pixels, and the page's plot area may differ from the fresh div by a few pixels)
        span = max(abs(f["range"][1] - f["range"][0]), 1e-12) if len(f["range"]) == 2 else 1
        tol = 1e-6 if f["type"] == "category" else 0.03 * span
        if len(p["range"]) != len(f["range"]) or any(
                abs(a - b) > tol for a, b in zip(p["range"], f["range"], strict=False)):
            out.append(f"{name}.{ax}: range page {p['range']} != fresh {f['range']} "
                       f"({f['type']})")
    return out


HEIGHTS_JS = """(cls) => {
  const root = document.querySelector('.' + cls);
  if (!root) return [];
  return [...root.querySelectorAll('.js-plotly-plot')].map((el, i) => ({
    index: i, box: el.getBoundingClientRect().height,
    layout: el._fullLayout ? el._fullLayout.height : 0}));
}"""


class DashboardPage:
    """One dashboard (with its mirror) on a page: drive it, wait for Python, compare."""

    def __init__(self, page, name: str, server, tmp_path: Path, label: str):
        self.page, self.name, self.server, self.tmp_path = page, name, server, tmp_path
        self.label = label  # e.g. "voila-explore"
        self.root = page.locator(f".{DASHBOARD_CLASS[name]}").first
        self.checked: list[str] = []
        self.shots: list[Path] = []

    def wait_rendered(self) -> None:
        """Until the mirror holds the first state and every figure of it has a plot."""
        self.page.wait_for_function(
            "(cls) => { const m = document.querySelector('.rgrasp-mirror textarea');"
            " const root = document.querySelector('.' + cls);"
            " if (!m || !m.value || !root) return false;"
            " const n = JSON.parse(m.value.slice(m.value.indexOf('|', m.value.indexOf('|') + 1)"
            " + 1)).length;"
            " return root.querySelectorAll('.js-plotly-plot').length === n; }",
            arg=DASHBOARD_CLASS[self.name], timeout=RENDER_TIMEOUT, polling=250)

    def mirror(self) -> dict:
        return self.page.evaluate(MIRROR_VERSION_JS)

    def change(self, what: str, act) -> None:
        """Do ``act()``, wait until the kernel published the new state, then until the page
        agrees with a fresh render of it (or fail with the differences)."""
        before = self.mirror()["version"]
        act()
        try:
            self.page.wait_for_function(
                f"() => {{ const m = ({MIRROR_VERSION_JS})();"
                f" return m && m.version > {before} && !m.busy; }}",
                timeout=REDRAW_TIMEOUT, polling=100)
        except Exception:
            self.shot(f"no-update-after-{what}")
            raise AssertionError(f"{self.label}: no new state from the kernel after {what}; "
                                 f"errors {visible_errors(self.page)}\n{self.server.tail()}"
                                 ) from None
        self.settle()
        self.compare(what)

    def settle(self, quiet: float = 1.0, timeout: float = REDRAW_TIMEOUT / 1000) -> float:
        """Until the kernel published nothing new for ``quiet`` seconds (a burst of key
        presses is several changes); returns the seconds waited."""
        last, since = self.mirror(), time.monotonic()
        start = since
        deadline = since + timeout
        while time.monotonic() < deadline:
            self.page.wait_for_timeout(200)
            now = self.mirror()
            if now != last:
                last, since = now, time.monotonic()
            elif not now["busy"] and time.monotonic() - since >= quiet:
                return time.monotonic() - start
        return time.monotonic() - start

    def compare(self, what: str, timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            got = self.page.evaluate(FIG_STATE_JS, DASHBOARD_CLASS[self.name])
            diffs = []
            for name, st in got["figures"].items():
                if st is None:
                    diffs.append(f"{name}: no plot in the page")
                else:
                    diffs += _state_diff(name, st["page"], st["fresh"])
            if not diffs or time.monotonic() > deadline:
                break
            self.page.wait_for_timeout(300)
        if diffs:
            self.shot(f"differs-after-{what}")
        assert not diffs, (f"{self.label}: after {what}, the page differs from a fresh render "
                           f"of the figures Python holds (mirror v{got['version']}, plotly.js "
                           f"{got['plotly']}):\n  " + "\n  ".join(diffs))
        self.checked.append(f"{what}: {len(got['figures'])} figures agree")

    def check_layout(self, what: str) -> None:
        """Every figure uses the width of its cell and no label runs off its figure."""
        got = self.page.evaluate(LAYOUT_JS, DASHBOARD_CLASS[self.name])
        assert got["figures"], f"{self.label}: no figure"
        narrow = [f for f in got["figures"] if f["ratio"] < 0.9]
        assert not narrow, f"{self.label} ({what}): figures narrower than their cell: {narrow}"
        assert not got["clipped"], f"{self.label} ({what}): text off its figure: {got['clipped']}"
        self.checked.append(f"{what}: {len(got['figures'])} figures use "
                            f"{min(f['ratio'] for f in got['figures']):.2f}+ of their cell, "
                            f"{got['texts']} labels inside their figure")

    def check_playback(self, seconds: float = 5.0, minimum_frames: int = 3) -> dict:
        """Press Play, watch the figures for ``seconds``, pause.

        The replay must be alive (at least ``minimum_frames`` frames drawn in ``seconds``: a
        liveness bound, not a speed -- frames per second depend on the machine's load and
        are measured by ``benchmarks/bench_playback.py``), keep its category axes (the
        raster) categories at every frame, and agree with a fresh render of Python's figures
        once paused."""
        play = self.root.locator(".rgrasp-replay-play").first  # play, then pause
        play.click()
        got = self.page.evaluate(PLAYBACK_JS, [DASHBOARD_CLASS[self.name], seconds])
        play.click()
        assert not got["lost"], f"{self.label}: figures {got['lost']} lost their category axis"
        assert got["changed"] >= minimum_frames, (
            f"{self.label}: playback drew {got['changed']} frames in {got['seconds']:.1f} s "
            f"(page sampled {got['samples']} animation frames): the replay does not move")
        # the kernel follows the slider too (and the test's mirror publishes every state)
        self.settle(quiet=2.0, timeout=240)
        self.compare("after playing")
        self.checked.append(f"playback: {got['changed']} frames drawn in "
                            f"{got['seconds']:.1f} s, category axes kept")
        return got

    def check_first_view(self) -> None:
        """The explorer opens on one run (no "previous" twin: the page echoing the default
        step size back re-solved it once) with the default step-size rule, and says so."""
        self.settle(quiet=1.5)
        text = self.root.inner_text()
        assert "(default rule)" in text and "(chosen)" not in text, text[:2000]
        names = self.page.evaluate(
            "(cls) => [...document.querySelector('.' + cls).querySelectorAll('.js-plotly-plot')]"
            ".flatMap((el) => el.data.filter((t) => t.meta && t.meta.role === 'gap' &&"
            " t.x && t.x.length).map((t) => t.name))", DASHBOARD_CLASS[self.name])
        assert len(names) == 1 and not names[0].startswith("previous"), names
        self.checked.append(f"first view: one run ({names[0]}), η (default rule)")

    def check_heights(self, what: str) -> None:
        """Every figure of the dashboard is drawn with a height > 0 (in the page's box and in
        plotly.js's layout): compare's coefficient panels once collapsed to 0 after Play."""
        got = self.page.evaluate(HEIGHTS_JS, DASHBOARD_CLASS[self.name])
        assert got, f"{self.label} ({what}): no figure"
        flat = [h for h in got if not (h["box"] > 0 and h["layout"] > 0)]
        assert not flat, f"{self.label} ({what}): figures drawn with height 0: {flat}"
        self.checked.append(f"{what}: {len(got)} figures drawn, heights "
                            f"{min(h['box'] for h in got):.0f}+ px")

    def play_several_times(self, times: int = 3, seconds: float = 1.5) -> None:
        """Press Play and pause ``times`` times; after each, every figure has a height."""
        play = self.root.locator(".rgrasp-replay-play").first
        for k in range(1, times + 1):
            play.click()
            self.page.wait_for_timeout(int(1000 * seconds))
            self.check_heights(f"during play {k}")
            play.click()
            self.page.wait_for_timeout(500)
            self.check_heights(f"after play {k}")

    def shot(self, tag: str) -> Path:
        path = self.tmp_path / f"{self.label}-{re.sub(r'[^a-z0-9]+', '-', tag.lower())}.png"
        self.root.screenshot(path=str(path))
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        stable = SCREENSHOTS / path.name
        shutil.copyfile(path, stable)
        self.shots.append(stable)
        print(f"screenshot: {path} (also {stable})")
        return stable

    # -- drivers ---------------------------------------------------------------------------
    def press(self, slider_name: str, key: str, presses: int = 1):
        def act():
            handle = slider(self.root, slider_name).locator(".noUi-handle")
            handle.focus()
            for _ in range(presses):
                handle.press(key)
        return act

    def seek(self, key: str, presses: int = 1):
        """Keys on the replay control's slider (the page moves, the kernel hears each)."""
        def act():
            handle = self.root.locator(".rgrasp-replay-range").first
            handle.focus()
            for _ in range(presses):
                handle.press(key)
        return act

    def pick(self, dropdown: str, label: str):
        def act():
            box = self.root.locator(".widget-dropdown", has_text=dropdown).first
            box.locator("select").select_option(label=label)
        return act

    def click(self, text: str):
        def act():
            self.root.locator("button", has_text=text).first.click()
        return act


def _drive(dash: DashboardPage) -> None:
    """Every kind of change the dashboard offers; a screenshot after the third."""
    dash.compare("first render")
    dash.check_layout("first render")
    if dash.name == "explore":
        dash.check_first_view()
        steps = [("eta", dash.press("eta", "ArrowLeft")), ("s", dash.press("s", "ArrowRight")),
                 ("J", dash.press("J", "ArrowRight")), ("m", dash.press("m", "ArrowLeft")),
                 ("reading", dash.pick("inner", "on_T (ours)")),
                 ("seed", dash.press("seed", "ArrowRight")),
                 ("method", dash.pick("method", "SVRGHT"))]
    elif dash.name == "play":
        steps = [("player step", dash.click("▶")), ("player step 2", dash.click("▶")),
                 ("player step back", dash.click("◀")),
                 ("player slider", dash.seek("ArrowRight", 5))]
    else:
        steps = [("compare step", dash.seek("ArrowRight")),
                 ("compare step 2", dash.seek("ArrowRight", 10)),
                 ("compare step 3", dash.seek("ArrowRight", 40)),
                 ("compare reading", dash.pick("inner", "on_T (ours)"))]
    for k, (what, act) in enumerate(steps, start=1):
        dash.change(what, act)
        if k == 3:
            dash.shot("after-3-changes")
            dash.check_layout("after 3 changes")
    if dash.name in ("play", "compare"):
        dash.check_playback()
    if dash.name == "compare":
        dash.play_several_times()


@pytest.fixture(scope="module")
def dashboard_notebooks(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("dashboards")
    _write_dashboard_notebooks(folder)
    return folder


@pytest.fixture(scope="module")
def voila_tree(dashboard_notebooks, tmp_path_factory, chromium_path):
    with voila_server(dashboard_notebooks, tmp_path_factory.mktemp("voila-tree")) as server:
        yield server


@pytest.mark.parametrize("name", list(DASHBOARD_CELLS))
def test_voila_dashboards_match_a_fresh_render_after_every_change(voila_tree, page, tmp_path,
                                                                   name):
    page.set_viewport_size({"width": 1400, "height": 2400})
    page.goto(voila_tree.url + f"voila/render/{name}.ipynb", timeout=RENDER_TIMEOUT,
              wait_until="domcontentloaded")
    dash = DashboardPage(page, name, voila_tree, tmp_path, f"voila-{name}")
    try:
        dash.wait_rendered()
    except Exception:
        _shot(page, tmp_path / f"voila-{name}-not-rendered.png")
        raise AssertionError(f"Voila did not render {name}; errors {visible_errors(page)}\n"
                             f"{voila_tree.tail()}") from None
    _drive(dash)
    assert visible_errors(page) == [] and page.page_errors == [], (
        visible_errors(page), page.page_errors)
    print(f"voila {name}:", "; ".join(dash.checked))


CRAFTED_JS = """
() => {
  const root = document.querySelector('.rgrasp-play');
  if (!root || root.querySelectorAll('.js-plotly-plot').length < 3) return null;
  return {title: document.title, pwned: window.__rgraspPwned === 1,
          imgs: root.querySelectorAll('img').length,
          html: [...root.querySelectorAll('.widget-html')].map((e) => e.innerText),
          svg: [...root.querySelectorAll('.js-plotly-plot .gtitle')].map((e) => e.textContent)};
}
"""


def test_voila_shows_a_crafted_method_name_as_text(voila_tree, page, tmp_path):
    """A trace whose method name is an HTML payload: rv.play shows the name literally (in its
    HTML widgets and in the plotly titles) and the payload never runs."""
    page.goto(voila_tree.url + "voila/render/crafted.ipynb", timeout=RENDER_TIMEOUT,
              wait_until="domcontentloaded")
    title = page.title()
    try:
        page.wait_for_function(CRAFTED_JS, timeout=RENDER_TIMEOUT, polling=250)
    except Exception:
        _shot(page, tmp_path / "crafted-not-rendered.png")
        raise AssertionError(f"Voila did not render the crafted replay; errors "
                             f"{visible_errors(page)}\n{voila_tree.tail()}") from None
    page.wait_for_timeout(1000)  # an onerror handler would have run by now
    got = page.evaluate(CRAFTED_JS)
    _shot(page, tmp_path / "crafted.png")
    assert not got["pwned"] and got["title"] == title != "pwned", got
    assert got["imgs"] == 0, got
    literal = "<img src=x onerror="
    assert any(literal in t for t in got["html"]), got["html"]  # shown as text
    assert got["svg"] and all(literal in t for t in got["svg"]), got["svg"]
    assert page.page_errors == [], page.page_errors


@pytest.mark.parametrize("name", list(DASHBOARD_CELLS))
def test_jupyterlab_dashboards_match_a_fresh_render_after_every_change(lab, page, tmp_path,
                                                                        name):
    page.set_viewport_size({"width": 1400, "height": 2400})
    _run_all_in_lab(page, lab, f"dashboards/{name}.ipynb", tmp_path)
    dash = DashboardPage(page, name, lab, tmp_path, f"lab-{name}")
    try:
        dash.wait_rendered()
    except Exception:
        _shot(page, tmp_path / f"lab-{name}-not-rendered.png")
        raise AssertionError(f"JupyterLab did not render {name}; errors "
                             f"{visible_errors(page)}\n{lab.tail()}") from None
    _drive(dash)
    assert visible_errors(page) == [] and page.page_errors == [], (
        visible_errors(page), page.page_errors)
    print(f"jupyterlab {name}:", "; ".join(dash.checked))


# -- the cause, without a server: what the page makes of each kind of update message ------------

PLOTLY_JS = Path(__import__("plotly").__file__).parent / "package_data" / "plotly.min.js"

AXIS_STATE_JS = """
(gd) => {
  const ax = gd._fullLayout.yaxis;
  return {type: ax.type, range: ax.range.map(Number),
          categories: ax.type === 'category' ? ax._categories.map(String) : null};
}
"""

STOCK_UPDATE_JS = f"""
async ([before, restyle, relayout, traces]) => {{
  const undef = (v) => v === '_undefined_' ? undefined
    : Array.isArray(v) ? v.map(undef) : v;
  for (const k of Object.keys(restyle)) restyle[k] = undef(restyle[k]);
  const gd = document.createElement('div');
  gd.style.width = '900px';
  document.body.appendChild(gd);
  await Plotly.newPlot(gd, before.data, before.layout);
  await Plotly.update(gd, restyle, relayout, traces);  // what the stock FigureWidget does
  return ({AXIS_STATE_JS})(gd);
}}
"""

FRESH_JS = f"""
async (spec) => {{
  const gd = document.createElement('div');
  gd.style.width = '900px';
  document.body.appendChild(gd);
  await Plotly.newPlot(gd, spec.data, spec.layout);
  return ({AXIS_STATE_JS})(gd);
}}
"""

# The dashboards' figure widget's own front end (figure.js), fed by a stand-in model: the
# figure Python sent first, then the figure after the change
LIVE_JS = f"""
async ([esm, version, first, after]) => {{
  const state = {{_plotly_version: version, _figure: first, _frames: {{}}, _frame: -1,
                  _replay: '', caption: ''}};
  const listeners = {{}};
  const model = {{
    get: (k) => state[k],
    on: (ev, cb) => {{ (listeners[ev] = listeners[ev] || []).push(cb); }},
    off: () => {{}},
    send: () => {{}},
  }};
  const mod = await import(URL.createObjectURL(new Blob([esm], {{type: 'text/javascript'}})));
  const el = document.createElement('div');
  el.style.width = '900px';
  document.body.appendChild(el);
  await mod.default.render({{model, el}});
  const gd = el.querySelector('.rgrasp-figure-plot');
  const until = async (n) => {{
    for (let i = 0; i < 200 && Number(gd.dataset.rgraspDraws || 0) < n; i++) {{
      await new Promise((r) => setTimeout(r, 50));
    }}
  }};
  await until(1);
  state._figure = after;
  (listeners['change:_figure'] || []).forEach((cb) => cb());
  await until(2);
  return {{draws: Number(gd.dataset.rgraspDraws || 0), axis: ({AXIS_STATE_JS})(gd)}};
}}
"""


def test_update_messages_keep_the_raster_a_category_axis(browser):
    """The cause of the broken raster, and the fix, in a bare page with plotly.js.

    The stock ``FigureWidget`` sends a change as ``Plotly.update`` with the new trace
    properties and only the layout keys that changed.  When traces get new ``x``/``y`` and
    the message does not set the axis, plotly.js clears the axis type and guesses it again
    from the labels ("120", "51★"): linear -- here after one step of the player, which moves
    the raster's markers and nothing in the layout.  The dashboards' figure widget sends the
    whole figure and draws it with ``Plotly.react``: the same axis as a fresh render of the
    figure Python holds, after a player step as after a change of seed."""
    import plotly.graph_objects as go
    from plotly.basedatatypes import Undefined
    from plotly.utils import PlotlyJSONEncoder

    import rgrasp_viz as rv
    from rgrasp_viz.viz import figures as F
    from rgrasp_viz.viz.dashboards._figure import Figure, _plotly_js_version
    from rgrasp_viz.viz.dashboards._widgets import update_figure

    esm = str(Figure._esm)  # the module the page gets

    def js(obj):
        def plain(o):
            if o is Undefined:
                return "_undefined_"
            if isinstance(o, dict):
                return {k: plain(v) for k, v in o.items()}
            if isinstance(o, (list, tuple)):
                return [plain(v) for v in o]
            return o

        return json.loads(json.dumps(plain(obj), cls=PlotlyJSONEncoder))

    prob = rv.make_regression("classroom", random_state=0)
    runs = [rv.solve(prob, "svrgsp+", random_state=seed, warn=False) for seed in (0, 1)]
    before = F.support_raster_spec(runs[0], max_rows=150, cursor=0.0)
    stepped = F.support_raster_spec(runs[0], max_rows=150, cursor=0.5)  # one player step
    reseeded = F.support_raster_spec(runs[1], max_rows=150, cursor=0.0)
    entered = next(i for i, t in enumerate(before["data"]) if t["meta"]["role"] == "entered")

    def stock_messages(change):
        fw = go.FigureWidget(before)
        sent = []
        fw._send_update_msg = lambda restyle_data, relayout_data, trace_indexes=None, **k: \
            sent.append((restyle_data, relayout_data, trace_indexes))
        change(fw)
        ((restyle, relayout, traces),) = sent
        return [js(before), js(restyle), js(relayout), traces]

    def new_markers(fw):  # the stock way: new x/y for the entered markers only
        with fw.batch_update():
            fw.data[entered].x = reseeded["data"][entered]["x"]
            fw.data[entered].y = reseeded["data"][entered]["y"]

    def live_messages(after):
        fw = Figure(before)
        first = fw._figure
        update_figure(fw, after)
        return [esm, _plotly_js_version(), first, fw._figure]

    context = browser.new_context()
    page = context.new_page()
    report = []
    try:
        page.add_script_tag(path=str(PLOTLY_JS))
        for name, after in (("player step", stepped), ("new seed", reseeded)):
            fresh = page.evaluate(FRESH_JS, js(after))
            labels = [str(c) for c in after["layout"]["yaxis"]["categoryarray"]]
            assert fresh["type"] == "category" and fresh["categories"] == labels
            ours = page.evaluate(LIVE_JS, live_messages(after))
            assert ours["draws"] >= 2, name
            assert ours["axis"] == fresh, (name, ours, fresh)
            report.append(f"{name}: our figure {ours['axis']['type']} with "
                          f"{len(ours['axis']['categories'])} rows, as fresh")
        broken = page.evaluate(STOCK_UPDATE_JS, stock_messages(new_markers))
        # the stock update turns the category axis into a linear one
        assert broken["type"] == "linear" and broken["categories"] is None, broken
        report.append(f"new markers, stock FigureWidget update: {broken['type']} axis, range "
                      f"{[round(v) for v in broken['range']]}")
    finally:
        context.close()
    print("; ".join(report))
