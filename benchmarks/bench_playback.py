"""Replay speed in a real page: frames per second that ``rv.play`` and ``rv.compare`` draw
while their Play widget runs, in Voila (and in JupyterLab with ``--lab``).

The browser tests check that a replay is alive and correct (categories kept, the page agrees
with Python after pausing); how fast it plays depends on the machine and its load, so it is
measured here.  Each dashboard is served from the same small notebooks the browser tests
use (``tests/test_browser.py``: the classroom problem, ``record_iterates=True``), rendered
in headless Chromium; Play is pressed and, for ``--seconds``, every animation frame of the
page is sampled: a frame counts when the plotted data of any figure changed.  The peer,
measured in the same run and page, is the page's own animation-frame rate (the most frames
it could have drawn).  Target: ``TARGET_FPS`` frames per second.

Usage: ``python benchmarks/bench_playback.py [--seconds 5] [--lab]``.  Needs Chromium
(``/usr/bin/chromium`` or ``$RGRASP_CHROMIUM``), Playwright and Voila (the ``test`` extra);
without them it says so and exits 0.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from _util import machine_note, table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

TARGET_FPS = 10.0
DASHBOARDS = ("play", "compare")


def _missing():
    """Why the benchmark cannot run here (None when it can)."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed"
    from conftest import find_chromium

    if find_chromium() is None:
        return "no Chromium found"
    return None


def _server(kind, folder, home):
    import test_browser as tb

    port = tb._free_port()
    env = tb._jupyter_env(home)
    if kind == "voila":
        args = [tb._bin("voila"), str(folder), "--no-browser", f"--port={port}",
                "--Voila.ip=127.0.0.1", "--Voila.token=", "--Voila.port_retries=0"]
        ready = "voila/static/voila.js"
    else:
        args = [sys.executable, "-m", "jupyterlab", "--no-browser",
                f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
                "--ServerApp.ip=127.0.0.1", "--IdentityProvider.token=",
                "--ServerApp.password=", "--ServerApp.disable_check_xsrf=True",
                f"--ServerApp.root_dir={folder.parent}", "--LabApp.news_url=",
                "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                "--LabApp.extension_manager=readonly"]
        ready = "api/status"
    server = tb.Server(kind, args, url=f"http://127.0.0.1:{port}/", cwd=folder, env=env,
                       log=home / f"{kind}.log")
    server.wait_ready(ready)
    return server


def measure(page, server, kind, name, seconds, tmp):
    """Frames drawn while ``name`` plays for ``seconds`` in ``kind`` (voila or lab)."""
    import test_browser as tb

    page.set_viewport_size({"width": 1400, "height": 2400})
    if kind == "voila":
        page.goto(server.url + f"voila/render/{name}.ipynb", timeout=tb.RENDER_TIMEOUT,
                  wait_until="domcontentloaded")
    else:
        tb._run_all_in_lab(page, server, f"dashboards/{name}.ipynb", tmp)
    dash = tb.DashboardPage(page, name, server, tmp, f"{kind}-{name}")
    dash.wait_rendered()
    dash.settle(quiet=2.0)
    play = dash.root.locator(".widget-play button").first
    play.click()
    got = page.evaluate(tb.PLAYBACK_JS, [tb.DASHBOARD_CLASS[name], seconds])
    play.click()
    fps = got["changed"] / got["seconds"]
    return {"where": kind, "dashboard": f"rv.{name}", "frames": got["changed"],
            "seconds": got["seconds"], "fps": fps,
            "peer": got["samples"] / got["seconds"],
            "figures": ", ".join(f"{n / got['seconds']:.1f}" for n in got["positions"]),
            "target": TARGET_FPS, "meets": "yes" if fps >= TARGET_FPS else "no"}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--lab", action="store_true", help="JupyterLab too (slower)")
    args = parser.parse_args(argv)
    why = _missing()
    if why:
        print(f"bench_playback: skipped ({why})")
        return 0
    import test_browser as tb
    from conftest import find_chromium
    from playwright.sync_api import sync_playwright

    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-playback-") as tmp:
        tmp = Path(tmp)
        folder = tmp / "root" / "dashboards"
        tb._write_dashboard_notebooks(folder)
        kinds = ["voila", "lab"] if args.lab else ["voila"]
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=find_chromium(),
                                         args=tb.CHROMIUM_ARGS, headless=True)
            try:
                for kind in kinds:
                    home = tmp / kind
                    home.mkdir()
                    server = _server(kind, folder, home)
                    try:
                        for name in DASHBOARDS:
                            context = browser.new_context()
                            try:
                                rows.append(measure(context.new_page(), server, kind, name,
                                                    args.seconds, tmp))
                            finally:
                                context.close()
                    finally:
                        server.stop()
            finally:
                browser.close()
    print(machine_note())
    print(table(rows, [("where", "served by", None), ("dashboard", "dashboard", None),
                       ("frames", "frames drawn", "d"), ("seconds", "seconds", ".1f"),
                       ("fps", "frames/s", ".1f"),
                       ("peer", "page animation frames/s (peer)", ".1f"),
                       ("figures", "replay positions/s by figure", None),
                       ("target", "target frames/s", ".0f"), ("meets", "meets target", None)],
                title=f"Replay speed while playing ({args.seconds:g} s of Play)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
