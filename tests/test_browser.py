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
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
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

pytestmark = pytest.mark.browser

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


@pytest.fixture(scope="module")
def app_notebook() -> Path:
    assert APP.is_file(), APP
    return APP


@pytest.fixture(scope="module")
def voila(app_notebook, tmp_path_factory, chromium_path):
    home = tmp_path_factory.mktemp("voila")
    port = _free_port()
    server = Server(
        "voila",
        [
            _bin("voila"),
            str(app_notebook),
            "--no-browser",
            f"--port={port}",
            "--Voila.ip=127.0.0.1",
            "--Voila.token=",
            "--Voila.port_retries=0",
            "--show_tracebacks=True",  # an error must be visible on the page, not only in a log
        ],
        url=f"http://127.0.0.1:{port}/",
        cwd=app_notebook.parent,
        env=_jupyter_env(home),
        log=home / "voila.log",
    )
    try:
        server.wait_ready("voila/static/voila.js")  # a static file: no kernel started yet
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def lab(app_notebook, tmp_path_factory, chromium_path):
    # Serve a copy: running the notebook in the UI must never autosave outputs into the repo.
    home = tmp_path_factory.mktemp("lab")
    root = home / "root"
    (root / "notebooks").mkdir(parents=True)
    shutil.copy(app_notebook, root / "notebooks" / app_notebook.name)
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


@pytest.fixture(scope="module")
def browser(chromium_path, unavailable):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("playwright is not installed (it is in the `test` extra)")

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser, tmp_path):
    """A fresh page; its console and page errors are printed (pytest shows them on failure)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1100})
    pg = context.new_page()
    pg.console_lines, pg.page_errors = [], []
    pg.on("console", lambda m: pg.console_lines.append(f"[{m.type}] {m.text}"))
    pg.on("pageerror", lambda e: pg.page_errors.append(str(e)))
    yield pg
    print(f"\nscreenshots: {sorted(str(p) for p in tmp_path.glob('*.png'))}")
    print("page errors:", *pg.page_errors, sep="\n  ")
    print("console:", *pg.console_lines[-40:], sep="\n  ")
    context.close()


def _shot(page, path: Path) -> None:
    page.screenshot(path=str(path), full_page=True)


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
        timings.append(f"eta {moved['value_before']} -> {moved['value_after']} ({presses} "
                       f"key presses) redrew plots {moved['changed']} in "
                       f"{moved['redraw_s']:.2f} s")

    # the largest step size diverges: the dashboard says so and keeps the last good plots
    shown = [p["fingerprint"] for p in plots(page)]
    eta = slider(page, "eta").locator(".noUi-handle")
    eta.focus()
    eta.press("End")
    page.locator(".rgrasp-status.rgrasp-error").wait_for(timeout=REDRAW_TIMEOUT)
    kind, message = status(page)
    _shot(page, tmp_path / "voila-diverged.png")
    assert "diverged" in message and "Lower" in message, message
    assert [p["fingerprint"] for p in plots(page)] == shown, "diverged run replaced the plots"
    assert page.page_errors == [], page.page_errors
    print(f"voila: plots drawn {t_render:.1f} s after load;", "; ".join(timings))


def test_jupyterlab_runs_app_notebook_and_renders_widgets(lab, page, tmp_path):
    page.goto(lab.url + "lab/tree/notebooks/" + APP.name, timeout=RENDER_TIMEOUT)
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
    assert visible_errors(page) == []
    assert page.page_errors == [], page.page_errors
