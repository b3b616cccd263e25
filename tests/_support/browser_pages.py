"""What the browser tests and ``benchmarks/bench_playback.py`` share: the pages they open
(Voila, JupyterLab), the servers that serve them, the notebooks of the dashboards under test,
and what the page shows (evaluated in the browser).  No test lives here; the fixtures built on
it (a Chromium, a page, Voila on the app) are in ``tests/browser/conftest.py``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "notebooks" / "app.ipynb"
N_PLOTS = 3  # explore(): convergence, thresholding timeline, support raster
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SERVER_START_TIMEOUT = 60  # s, until the server answers HTTP
RENDER_TIMEOUT = 90_000  # ms, page load -> kernel -> first solve -> plots drawn
REDRAW_TIMEOUT = 30_000  # ms, slider moved -> re-solve -> plots redrawn

# -- what the page shows (evaluated in the browser) ------------------------------------------

# One summary per plotly graph div: trace count, number of points and a fingerprint of the
# x/y/z arrays.  plotly.js keeps the traces it draws in ``gd.data`` (typed arrays or, for
# binary-encoded FigureWidget data, {dtype, bdata} specs); both are turned into JSON.
PLOTS_JS = """
(root) => {
  const scope = root || document;
  const toList = (v) => {
    if (v === undefined || v === null) return [];
    if (ArrayBuffer.isView(v)) return Array.from(v);
    if (Array.isArray(v)) return v.map((e) => (ArrayBuffer.isView(e) ? Array.from(e) : e));
    return [v];
  };
  const count = (v) => {
    if (v === undefined || v === null) return 0;
    if (ArrayBuffer.isView(v) || Array.isArray(v)) return v.length;
    if (v.shape) return String(v.shape).split(',').reduce((a, b) => a * Number(b), 1);
    return 1;
  };
  return Array.from(scope.querySelectorAll('.js-plotly-plot')).map((gd) => {
    const data = gd.data || [];
    const box = gd.getBoundingClientRect();
    return {
      traces: data.length,
      points: data.reduce((n, t) => n + Math.max(count(t.x), count(t.y), count(t.z)), 0),
      fingerprint: JSON.stringify(data.map((t) => [toList(t.x), toList(t.y), toList(t.z)])),
      visible: box.width > 50 && box.height > 50,
    };
  });
}
"""

WAIT_PLOTS_JS = f"""
(n) => {{
  const summary = ({PLOTS_JS})(document);
  return summary.filter((p) => p.visible && p.points > 0).length >= n;
}}
"""

CHANGED_JS = f"""
(before) => {{
  const now = ({PLOTS_JS})(document).map((p) => p.fingerprint);
  return now.length === before.length && now.some((f, i) => f !== before[i]);
}}
"""


def plots(page) -> list[dict]:
    return page.evaluate(PLOTS_JS, None)


def slider(page, name: str):
    """The slider whose description is ``name`` (exactly, or as a separate word)."""
    sliders = page.locator(".widget-slider")
    for i in range(sliders.count()):
        label = sliders.nth(i).locator(".widget-label").inner_text().strip()
        words = label.replace("(", " ").replace(")", " ").replace(":", " ").split()
        if label == name or name in words:
            return sliders.nth(i)
    labels = [sliders.nth(i).locator(".widget-label").inner_text() for i in range(sliders.count())]
    raise AssertionError(f"no slider described as {name!r}; slider labels: {labels}")


def nudge_slider(page, name: str, key: str, presses: int, tmp_path: Path, server) -> dict:
    """Focus slider ``name``'s handle, press ``key`` ``presses`` times, wait until its readout
    changes and then until the plotted data differ from before.  Returns what happened."""
    before = [p["fingerprint"] for p in plots(page)]
    widget = slider(page, name)
    readout = widget.locator(".widget-readout")
    value_before = readout.inner_text()
    handle = widget.locator(".noUi-handle")
    handle.focus()
    for _ in range(presses):
        handle.press(key)
    page.wait_for_function(
        "([el, v]) => el.innerText !== v", arg=[readout.element_handle(), value_before],
        timeout=5_000,
    )
    value_after = readout.inner_text()
    t0 = time.monotonic()
    try:
        page.wait_for_function(CHANGED_JS, arg=before, timeout=REDRAW_TIMEOUT, polling=100)
    except Exception:
        _shot(page, tmp_path / f"not-redrawn-{name}.png")
        shown = status(page) if page.locator(".rgrasp-status").count() else None
        raise AssertionError(
            f"{name} {value_before} -> {value_after}: plotted data unchanged after "
            f"{REDRAW_TIMEOUT / 1000} s; dashboard status {shown}; errors "
            f"{visible_errors(page)}\n{server.tail()}"
        ) from None
    redraw = time.monotonic() - t0
    page.wait_for_timeout(500)  # let any later (debounced) redraw land, then look again
    after = plots(page)
    pairs = zip(before, after, strict=False)
    return {
        "value_before": value_before,
        "value_after": value_after,
        "redraw_s": redraw,
        "changed": [i for i, (a, b) in enumerate(pairs) if a != b["fingerprint"]],
        "after": after,
    }


RASTER_AXIS_JS = """
() => {
  const gds = document.querySelectorAll('.rgrasp-explore .js-plotly-plot');
  const gd = gds[gds.length - 1];  // explore(): convergence, timeline, raster
  const ax = gd._fullLayout.yaxis;
  return {type: ax.type, categories: ax._categories ? ax._categories.length : null,
          rows: gd.data[0].y.length, range: ax.range.map(Number)};
}
"""


DIVERGED_DRAWN_JS = """
() => {
  const gd = document.querySelector('.rgrasp-explore .js-plotly-plot');  // convergence
  return !!gd && (gd.data || []).some((t) => t.meta && t.meta.diverged && t.x.length > 0
                                           && t.line && t.line.dash === 'dot');
}
"""


def assert_raster_is_categorical(page) -> None:
    """The support raster's rows are categories in the page: one per heatmap row."""
    ax = page.evaluate(RASTER_AXIS_JS)
    assert ax["type"] == "category" and ax["categories"] == ax["rows"], ax
    assert ax["range"][0] >= ax["rows"] - 0.5 and ax["range"][1] < 0, ax  # top row on top


def status(page) -> tuple[str, str]:
    """(kind, text) of explore()'s status line: kind is ok, warn, error or busy."""
    box = page.locator(".rgrasp-status").first
    kind = next(c[len("rgrasp-"):] for c in box.get_attribute("class").split()
                if c != "rgrasp-status" and c.startswith("rgrasp-"))
    return kind, box.inner_text()


def code_lines(notebook: Path) -> list[str]:
    cells = json.loads(notebook.read_text())["cells"]
    src = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    return [ln.strip() for s in src for ln in s.splitlines() if len(ln.strip()) > 4]


def visible_errors(page) -> list[str]:
    """Error text on the page: Voila/Jupyter error outputs, stderr, tracebacks, and the
    dashboard's own error message widget."""
    found = []
    for sel in (
        ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']",
        ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error']",
        ".rgrasp-error",  # explore()'s status widget when a solve failed or diverged
    ):
        loc = page.locator(sel)
        found += [loc.nth(i).inner_text() for i in range(loc.count()) if loc.nth(i).is_visible()]
    body = page.locator("body").inner_text()
    for marker in ("Traceback (most recent call last)", "There was an error when executing"):
        if marker in body:
            found.append(marker)
    return found


# -- servers ---------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A Jupyter-family server in its own process group, stopped (and reaped) on exit."""

    def __init__(self, name: str, args: list[str], url: str, cwd: Path, env: dict, log: Path):
        self.name, self.url, self.log = name, url, log
        self._log_file = open(log, "wb")  # noqa: SIM115 -- closed in stop()
        self.proc = subprocess.Popen(
            args,
            cwd=cwd,
            env=env,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def wait_ready(self, path: str = "", timeout: float = SERVER_START_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited ({self.proc.returncode}):\n{self.tail()}")
            try:
                with urllib.request.urlopen(self.url + path, timeout=5) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.3)
        raise TimeoutError(f"{self.name} not ready after {timeout} s:\n{self.tail()}")

    def tail(self, n: int = 60) -> str:
        self._log_file.flush()
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # Jupyter servers shut their kernels down
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                pass
        try:  # whatever is left of this server's process group (kernels)
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait(timeout=10)
        self._log_file.close()


def _jupyter_env(home: Path) -> dict:
    """Isolated Jupyter config, data, runtime and lab state under ``home``."""
    env = dict(os.environ)
    for var, sub in (
        ("JUPYTER_CONFIG_DIR", "config"),
        ("JUPYTER_DATA_DIR", "data"),
        ("JUPYTER_RUNTIME_DIR", "runtime"),
        ("JUPYTERLAB_SETTINGS_DIR", "lab-settings"),
        ("JUPYTERLAB_WORKSPACES_DIR", "lab-workspaces"),
        ("IPYTHONDIR", "ipython"),
    ):
        (home / sub).mkdir(parents=True, exist_ok=True)
        env[var] = str(home / sub)
    env.pop("JUPYTER_PATH", None)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _bin(name: str) -> str:
    exe = Path(sys.executable).with_name(name)
    return str(exe) if exe.is_file() else name


def _shot(page, path: Path) -> None:
    page.screenshot(path=str(path), full_page=True)


def _run_all_in_lab(page, lab, path: str, tmp_path: Path) -> None:
    """Open ``path`` (relative to the server root) in JupyterLab and Run All Cells through the
    menu bar, once the notebook's kernel is idle."""
    # a workspace of its own, reset: only this notebook open (tabs of earlier tests would
    # otherwise be restored, with their plots, in the same page)
    workspace = re.sub(r"[^a-z0-9]+", "-", path.lower())
    page.goto(f"{lab.url}lab/workspaces/{workspace}/tree/{path}?reset", timeout=RENDER_TIMEOUT)
    nb = page.locator(".jp-NotebookPanel:visible")
    nb.wait_for(timeout=RENDER_TIMEOUT)
    # wait until the notebook's kernel is up (status bar "Python 3 (ipykernel) | Idle"; running
    # before that asks for a kernel), then Run > Run All Cells through the menu bar
    page.locator(".jp-StatusBar-Widget", has_text=re.compile(r"\|\s*Idle")).first.wait_for(
        timeout=RENDER_TIMEOUT
    )
    page.locator(".lm-MenuBar-item", has_text="Run").first.click()
    page.locator(".lm-Menu-item:visible", has_text="Run All Cells").first.click()
    select_kernel = page.locator(".jp-Dialog", has_text="Select Kernel")
    page.wait_for_timeout(500)
    if select_kernel.is_visible():  # the kernel went away meanwhile: take the notebook's own
        select_kernel.get_by_role("button", name="Select").click()


# -- the notebooks of the dashboards under test -------------------------------------------------
#
# Each shows one dashboard next to a hidden "mirror" (a Textarea) to which the kernel writes,
# after every change, the figures as Python holds them (``_mirror.py``, written next to them).

MIRROR_PY = '''
"""Test helper: publish the Python-side state of a dashboard's figures after every change."""
import json

import ipywidgets as W
from plotly.utils import PlotlyJSONEncoder
from rgrasp_viz.viz.dashboards._figure import Figure


def figure_widgets(widget):
    """The figure widgets inside ``widget``, in display (DOM) order."""
    out = []
    for child in getattr(widget, "children", ()):
        out += [child] if isinstance(child, Figure) else figure_widgets(child)
    return out


def mirrored(dashboard, trigger, busy=lambda: False, **names):
    box = W.Textarea(layout=W.Layout(display="none"))
    box.add_class("rgrasp-mirror")
    label = {id(fw): name for name, fw in names.items()}
    version = [0]

    def publish(*_):
        version[0] += 1
        figs = [{"name": label.get(id(fw), f"figure {i}"), "spec": fw.to_plotly_json()}
                for i, fw in enumerate(figure_widgets(dashboard))]
        box.value = (f"{version[0]}|{int(bool(busy()))}|"
                     + json.dumps(figs, cls=PlotlyJSONEncoder))

    for widget in trigger if isinstance(trigger, (list, tuple)) else [trigger]:
        widget.observe(publish, names="value")
    publish()
    return W.VBox([dashboard, box])
'''

DASHBOARD_CELLS = {
    "explore": '''import rgrasp_viz as rv
from _mirror import mirrored

dash = rv.explore()
mirrored(dash, dash.status, busy=lambda: "rgrasp-busy" in dash.status.value,
         convergence=dash.fig_convergence, timeline=dash.fig_timeline, raster=dash.fig_raster)''',
    "play": '''import rgrasp_viz as rv
from _mirror import mirrored

res = rv.solve(rv.make_regression("classroom", random_state=0), "svrgsp+",
               record_iterates=True, random_state=0, warn=False)
pl = rv.play(res)
mirrored(pl, pl.slider, coefficients=pl.fig_coefficients, progress=pl.fig_progress,
         raster=pl.fig_support)''',
    "compare": '''import rgrasp_viz as rv
from _mirror import mirrored

cmp = rv.compare()
figs = {f"coefficients {m}": fw for m, fw in cmp.fig_coefficients.items()}
mirrored(cmp, [cmp.slider, cmp.status], busy=lambda: "rgrasp-busy" in cmp.status.value,
         convergence=cmp.fig_convergence, timeline=cmp.fig_timeline, **figs)''',
}
DASHBOARD_CLASS = {"explore": "rgrasp-explore", "play": "rgrasp-play",
                   "compare": "rgrasp-compare"}
SCREENSHOTS = ROOT / "build" / "screenshots"


def _notebook(code: str) -> dict:
    return {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# dashboard under test"]},
            {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
             "source": code.splitlines(keepends=True)},
        ],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                    "language": "python"}},
        "nbformat": 4, "nbformat_minor": 5,
    }


# -- a replay playing in the page -------------------------------------------------------------

# Frames drawn while a replay plays: sampled at every animation frame of the page, a frame
# counts when what any figure shows changed -- plotly.js's data or shapes, the cursors the page
# draws, or the replay position drawn (figure.js marks it once the page has drawn it, on its
# canvas too: see marks.js); category axes must stay categories.
PLAYBACK_JS = """
async ([rootClass, seconds]) => {
  const root = document.querySelector('.' + rootClass);
  const gds = [...root.querySelectorAll('.js-plotly-plot')];
  const num = (a) => { let s = 0; const n = a ? a.length : 0;
    for (let k = 0; k < Math.min(n, 200); k++) {
      const v = +a[k];
      if (isFinite(v)) s += v * (k + 1);
    }
    return n + ':' + s; };
  const cursors = (gd) => [...gd.parentElement.querySelectorAll('.rgrasp-cursor')]
    .map((c) => c.style.transform).join(',');
  const print = () => gds.map((gd) => (gd.data || []).map((t) => num(t.x) + '/' + num(t.y)
    + '/' + (t.z ? t.z.length : 0)).join('|') + JSON.stringify((gd.layout || {}).shapes || [])
    + cursors(gd) + '@' + gd.dataset.rgraspFrame).join('#');
  const categorical = () => gds.map((gd) => gd._fullLayout && gd._fullLayout.yaxis
    ? gd._fullLayout.yaxis.type : null);
  const start = categorical();
  let last = print(), changed = 0, samples = 0, lost = [];
  const shown = gds.map(() => new Set());  // replay positions each figure drew
  const t0 = performance.now();
  while (performance.now() - t0 < seconds * 1000) {
    await new Promise((r) => requestAnimationFrame(r));
    samples += 1;
    gds.forEach((gd, k) => shown[k].add(gd.dataset.rgraspFrame));
    const now = print();
    if (now !== last) { changed += 1; last = now; }
    categorical().forEach((t, k) => { if (start[k] === 'category' && t !== 'category')
      lost.push(k); });
  }
  return {changed, samples, seconds: (performance.now() - t0) / 1000, lost: [...new Set(lost)],
          positions: shown.map((v) => v.size)};
}
"""


@contextlib.contextmanager
def voila_server(target, home):
    """Voila serving ``target`` (a notebook, or a folder of them) on a free loopback port, ready
    once a static file loads (no kernel started yet); stopped on exit."""
    target = Path(target)
    port = _free_port()
    server = Server(
        "voila",
        [
            _bin("voila"),
            str(target),
            "--no-browser",
            f"--port={port}",
            "--Voila.ip=127.0.0.1",
            "--Voila.token=",
            "--Voila.port_retries=0",
            "--show_tracebacks=True",  # an error must be visible on the page, not only in a log
        ],
        url=f"http://127.0.0.1:{port}/",
        cwd=target if target.is_dir() else target.parent,
        env=_jupyter_env(home),
        log=home / "voila.log",
    )
    try:
        server.wait_ready("voila/static/voila.js")
        yield server
    finally:
        server.stop()
