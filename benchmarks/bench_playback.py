"""Dashboards in a real page on a given number of CPUs: replay positions per second that
each figure of ``rv.play`` and ``rv.compare`` draws while their replay plays (the page steps
frames computed once in the kernel), how long ``rv.explore`` takes from a slider change to the
redrawn convergence figure, and from picking SVRGHT to its status line done; in Voila (and
Play in JupyterLab with ``--lab``).

The browser tests check that a replay is alive and correct and that a slider change redraws;
how fast depends on the machine and its load, so it is measured here.  Binder gives about one
shared CPU: ``--cpus 1`` pins this process before anything starts, so the server, its kernels
and Chromium (all children, which inherit the affinity) share the first CPU; the affinity of
every child process is read back and printed with the tables.

Each dashboard is served from the notebooks the browser tests use
(``tests/_support/browser_pages.py``: the classroom problem, ``record_iterates=True``) without
the tests' mirror widget (it serializes every figure after every change, work a learner's page
does not do), rendered in headless Chromium.

* Play: the replay control's play button is pressed and, for ``--seconds``, every animation
  frame of the page is sampled;
  a frame counts when the plotted data of any figure changed.  The peer, measured in the same
  run and page, is the page's own animation-frame rate (the most frames it could have drawn).
  The figures of a dashboard may draw one replay position in different animation frames, so
  each figure's own rate is shown too (distinct replay positions it showed per second; the
  slowest is what a learner sees advancing).  Target: ``TARGET_FPS`` positions per second
  for the slowest figure.
* Slider -> redraw (``rv.explore``): a key press moves one slider (eta, s, m, J; ``--repeats``
  changes each, alternating direction); the page times (``performance.now()``) from the key
  event to the first animation frame at which the convergence figure's plotted data differ,
  and when the kernel's "solving…" first shows (its answer to the change).  The kernel's own
  times are read from the status line it writes after the redraw (solver time, and solve +
  figure update from the start of the solve); the rest is the debounce
  (``Explorer(debounce=0.1)``), messages and drawing in the page.  Target: ``TARGET_MS``.
* SVRGHT picked (``rv.explore``): the method dropdown is set to SVRGHT (``--repeats`` times,
  back to SVRGSP+ in between); the page times the change event to the first animation frame
  at which the status line reports SVRGHT's run done, and to the redrawn convergence figure.
  Target: ``TARGET_METHOD_MS``.

Where the time goes: the CPU seconds each kind of child process (Chromium, the kernel, the
server, Playwright's driver) used while playing and over the slider changes are read from
``/proc`` and shown with the rates.

Usage: ``python benchmarks/bench_playback.py [--cpus N] [--seconds 5] [--repeats 3] [--lab]
[--note TEXT]``.  Needs Chromium (``/usr/bin/chromium`` or ``$RGRASP_CHROMIUM``), Playwright
and Voila (the ``test`` extra); without them it says so and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _util import machine_note, table

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "_support")]

TARGET_FPS = 20.0
TARGET_MS = 300.0
TARGET_METHOD_MS = 2000.0
"""Targets (issue 27): replay positions per second per figure, explore's slider -> redraw
median, and SVRGHT picked in explore -> its status line done, all on one CPU."""
DASHBOARDS = ("play", "compare")
SLIDERS = (("eta", "ArrowLeft"), ("s", "ArrowRight"), ("m", "ArrowLeft"), ("J", "ArrowRight"))
"""The sliders timed, each with the key of its first change (then alternating)."""
OTHER_KEY = {"ArrowLeft": "ArrowRight", "ArrowRight": "ArrowLeft"}


def _missing():
    """Why the benchmark cannot run here (None when it can)."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed"
    try:
        import voila  # noqa: F401
    except ImportError:
        return "voila is not installed"
    from conftest import find_chromium

    if find_chromium() is None:
        return "no Chromium found"
    return None


def pin_cpus(n):
    """Restrict this process (and so every child it starts) to the first ``n`` CPUs it may
    use; returns the CPUs now allowed."""
    allowed = sorted(os.sched_getaffinity(0))
    if not 1 <= n <= len(allowed):
        raise SystemExit(f"--cpus must be between 1 and {len(allowed)} (the CPUs this process "
                         f"may use: {allowed}), got {n}")
    os.sched_setaffinity(0, allowed[:n])
    return sorted(os.sched_getaffinity(0))


def _descendants(root_pid):
    """Process ids of every descendant of ``root_pid`` (from ``/proc``)."""
    children = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        pid = int(stat.parent.name)
        ppid = int(text[text.rindex(")") + 2:].split()[1])
        children.setdefault(ppid, []).append(pid)
    out, todo = [], [root_pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def child_affinities(seen):
    """Add ``pid -> (name, CPUs)`` of every child process running now to ``seen``."""
    for pid in _descendants(os.getpid()):
        try:
            cpus = tuple(sorted(os.sched_getaffinity(pid)))
            name = Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            continue
        seen[pid] = (_kind(pid, name), cpus)
    return seen


KINDS = {"chromium": "Chromium", "chrome": "Chromium", "voila": "server",
         "node-MainThread": "Playwright", "node": "Playwright"}
"""How the process names of the children read in the tables (others are shown as named)."""


def _kind(pid, name):
    """What a child process is: Chromium, kernel, server, Playwright (or its name)."""
    if name.startswith("python"):  # a kernel, or JupyterLab's server
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return name
        return "kernel" if b"ipykernel" in cmd else "server"
    return KINDS.get(name, name)


def cpu_seconds():
    """CPU seconds (user + system) used so far by the running child processes, by kind."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for pid in _descendants(os.getpid()):
        try:
            text = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        kind = _kind(pid, text[text.index("(") + 1:text.rindex(")")])
        out[kind] = out.get(kind, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


def cpu_used(before, after):
    """``after - before`` (:func:`cpu_seconds`) as text, largest first."""
    used = {k: after.get(k, 0.0) - before.get(k, 0.0) for k in after}
    return ", ".join(f"{k} {v:.1f}" for k, v in sorted(used.items(), key=lambda kv: -kv[1])
                     if v >= 0.05) or "-"


def _cpu_list(cpus):
    return ",".join(str(c) for c in cpus)


def affinity_note(pinned, seen):
    """One line: the CPUs the benchmark ran on and what was read back from its children."""
    by_cpus = {}
    for name, cpus in seen.values():
        by_cpus.setdefault(cpus, set()).add(name)
    found = "; ".join(f"on CPUs {_cpu_list(c)}: {', '.join(sorted(n))}"
                      for c, n in sorted(by_cpus.items()))
    what = (f"pinned to CPUs {_cpu_list(pinned)} (--cpus {len(pinned)})" if pinned
            else f"not pinned (CPUs {_cpu_list(sorted(os.sched_getaffinity(0)))})")
    return f"affinity: {what}; {len(seen)} child processes read back, {found or 'none'}"


# -- the notebooks: the browser tests' dashboard cells without their mirror ------------------

def _cells():
    """``name -> code``: the browser tests' dashboard cells, showing the dashboard itself."""
    import browser_pages as tb

    out = {}
    for name, code in tb.DASHBOARD_CELLS.items():
        head, sep, call = code.partition("\nmirrored(")
        shown = re.match(r"\w+", call)
        if not sep or not shown:
            raise RuntimeError(f"unexpected dashboard cell for {name!r} in "
                               "tests/_support/browser_pages.py")
        out[name] = head.replace("from _mirror import mirrored\n", "") + "\n" + shown.group()
    return out


def _write_notebooks(folder):
    import browser_pages as tb

    folder.mkdir(parents=True, exist_ok=True)
    for name, code in _cells().items():
        (folder / f"{name}.ipynb").write_text(json.dumps(tb._notebook(code), indent=1))


def _server(kind, folder, home):
    import browser_pages as tb

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
                "--LabApp.extension_manager=readonly",
                *(["--allow-root"] if os.geteuid() == 0 else [])]
        ready = "api/status"
        news = Path(env["JUPYTERLAB_SETTINGS_DIR"], "@jupyterlab", "apputils-extension")
        news.mkdir(parents=True, exist_ok=True)
        (news / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
    server = tb.Server(kind, args, url=f"http://127.0.0.1:{port}/", cwd=folder, env=env,
                       log=home / f"{kind}.log")
    server.wait_ready(ready)
    return server


# -- in the page ---------------------------------------------------------------------------

# A short key of one data array (plain, typed or a binary {dtype, bdata} spec).
KEY_JS = """
(a) => {
  if (a === undefined || a === null) return '-';
  if (a.bdata !== undefined) {
    let h = 0;
    for (let k = 0; k < a.bdata.length; k += 7) h = (h * 31 + a.bdata.charCodeAt(k)) % 1e9;
    return 'b' + a.bdata.length + ':' + h;
  }
  const n = a.length || 0;
  let s = 0;
  for (let k = 0; k < n; k++) { const v = +a[k]; if (isFinite(v)) s += v * (1 + k % 97); }
  return n + ':' + s;
}
"""

# A fingerprint of the plotted data of every figure in a dashboard, and whether its status
# line (if any) says the kernel is busy.
STATE_JS = """
(rootClass) => {
  const root = document.querySelector('.' + rootClass);
  if (!root) return null;
  const key = (KEY_JS);
  // every figure of the dashboard, drawn by plotly.js yet or not
  const gds = [...root.querySelectorAll('.rgrasp-figure-plot')];
  const status = root.querySelector('.rgrasp-status');
  return {
    figures: gds.length,
    drawn: gds.filter((gd) => (gd.data || []).length > 0).length,
    print: gds.map((gd) => (gd.data || []).map((t) => key(t.x) + '/' + key(t.y)).join('|'))
      .join('#'),
    busy: !!(status && status.classList.contains('rgrasp-busy')),
    status: status ? status.innerText : '',
  };
}
""".replace("(KEY_JS)", f"({KEY_JS.strip()})")

# Arm the slider timer: from the next key press to the first animation frame at which the
# convergence figure (the dashboard's first) shows other data, and to the first frame at
# which the status line says "solving…" (the kernel's answer to the change).
ARM_JS = f"""
(rootClass) => {{
  const root = document.querySelector('.' + rootClass);
  const gd = root.querySelector('.js-plotly-plot');
  const status = () => root.querySelector('.rgrasp-status');
  const key = ({KEY_JS});
  const conv = () => (gd.data || []).map((t) => key(t.x) + '/' + key(t.y)).join('|');
  const t = {{key: null, ack: null, redraw: null, before: conv(), error: null}};
  window.__rgraspSlider = t;
  const onKey = () => {{ if (t.key === null) t.key = performance.now(); }};
  document.addEventListener('keydown', onKey, {{capture: true}});
  const tick = () => {{
    try {{
      if (t.key !== null) {{
        const now = performance.now();
        const s = status();
        if (t.ack === null && s && s.classList.contains('rgrasp-busy')) t.ack = now;
        if (conv() !== t.before) {{
          t.redraw = now;
          document.removeEventListener('keydown', onKey, {{capture: true}});
          return;
        }}
      }}
    }} catch (e) {{ t.error = String(e); return; }}
    requestAnimationFrame(tick);
  }};
  requestAnimationFrame(tick);
  return true;
}}
"""


def settle(page, root_class, quiet=1.5, timeout=120.0):
    """Until the dashboard's figures are all drawn, its status is not busy and nothing
    changed for ``quiet`` seconds; returns the last state."""
    deadline = time.monotonic() + timeout
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        now = page.evaluate(STATE_JS, root_class)
        ready = now and now["figures"] and now["drawn"] == now["figures"] and not now["busy"]
        if now != last:
            last, since = now, time.monotonic()
        elif ready and time.monotonic() - since >= quiet:
            return now
        page.wait_for_timeout(200)
    raise TimeoutError(f"{root_class}: not settled after {timeout:g} s (last state: "
                       f"{ {k: v for k, v in (last or {}).items() if k != 'print'} })")


def open_dashboard(page, server, kind, name, tmp):
    import browser_pages as tb

    page.set_viewport_size({"width": 1400, "height": 2400})
    if kind == "voila":
        page.goto(server.url + f"voila/render/{name}.ipynb", timeout=tb.RENDER_TIMEOUT,
                  wait_until="domcontentloaded")
    else:
        tb._run_all_in_lab(page, server, f"dashboards/{name}.ipynb", tmp)
    cls = tb.DASHBOARD_CLASS[name]
    page.wait_for_selector(f".{cls} .js-plotly-plot", timeout=tb.RENDER_TIMEOUT)
    settle(page, cls, quiet=2.0, timeout=tb.RENDER_TIMEOUT / 1000)
    return page.locator(f".{cls}").first


def measure_play(page, server, kind, name, seconds, tmp):
    """Frames drawn while ``name`` plays for ``seconds`` in ``kind`` (voila or lab)."""
    import browser_pages as tb

    root = open_dashboard(page, server, kind, name, tmp)
    play = root.locator(".rgrasp-replay-play").first
    cpu0 = cpu_seconds()
    play.click()
    got = page.evaluate(tb.PLAYBACK_JS, [tb.DASHBOARD_CLASS[name], seconds])
    cpu = cpu_used(cpu0, cpu_seconds())
    play.click()
    fps = got["changed"] / got["seconds"]
    slowest = min(got["positions"]) / got["seconds"]
    return {"where": kind, "dashboard": f"rv.{name}", "frames": got["changed"],
            "seconds": got["seconds"], "fps": fps,
            "peer": got["samples"] / got["seconds"],
            "figures": ", ".join(f"{n / got['seconds']:.1f}" for n in got["positions"]),
            "slowest": slowest, "cpu": cpu, "target": TARGET_FPS,
            "meets": " / ".join("yes" if v >= TARGET_FPS else "no" for v in (fps, slowest))}


def explore_debounce():
    """Seconds ``rv.explore`` waits for a quiet slider before it solves (its default)."""
    import inspect

    from rgrasp_viz.viz.dashboards._explorer import Explorer

    return inspect.signature(Explorer).parameters["debounce"].default


def _median(values):
    """Median of the numbers that are not NaN (NaN when none is)."""
    values = [v for v in values if v == v]
    return statistics.median(values) if values else float("nan")


def _ms(pattern, text):
    m = re.search(pattern, text)
    return float(m.group(1)) if m else float("nan")


# Arm the method timer: from the change of the method dropdown to the first animation frame
# at which the status line reports a finished SVRGHT run (ok or warn, not busy) and the
# convergence figure shows other data.
METHOD_JS = f"""
(rootClass) => {{
  const root = document.querySelector('.' + rootClass);
  const gd = root.querySelector('.js-plotly-plot');
  const key = ({KEY_JS});
  const conv = () => (gd.data || []).map((t) => key(t.x) + '/' + key(t.y)).join('|');
  const t = {{start: null, done: null, drawn: null, before: conv(), error: null}};
  window.__rgraspMethod = t;
  const sel = root.querySelector('.widget-dropdown select');
  sel.addEventListener('change', () => {{ if (t.start === null) t.start = performance.now(); }},
                       {{capture: true, once: true}});
  const tick = () => {{
    try {{
      if (t.start !== null) {{
        const now = performance.now();
        const s = root.querySelector('.rgrasp-status');
        if (t.drawn === null && conv() !== t.before) t.drawn = now;
        if (t.done === null && s && !s.classList.contains('rgrasp-busy')
            && s.innerText.includes('SVRGHT')) t.done = now;
        if (t.done !== null && t.drawn !== null) return;
      }}
    }} catch (e) {{ t.error = String(e); return; }}
    requestAnimationFrame(tick);
  }};
  requestAnimationFrame(tick);
  return true;
}}
"""


def measure_method(page, server, repeats, tmp):
    """SVRGHT picked in ``rv.explore`` (Voila) -> status line done and figures redrawn."""
    import browser_pages as tb

    cls = tb.DASHBOARD_CLASS["explore"]
    root = open_dashboard(page, server, "voila", "explore", tmp)
    select = root.locator(".widget-dropdown", has_text="method").first.locator("select")
    got = []
    cpu0 = cpu_seconds()
    for _ in range(repeats):
        page.evaluate(METHOD_JS, cls)
        select.select_option(label="SVRGHT")
        page.wait_for_function("() => (window.__rgraspMethod.done !== null"
                               " && window.__rgraspMethod.drawn !== null)"
                               " || window.__rgraspMethod.error !== null",
                               timeout=tb.REDRAW_TIMEOUT, polling=50)
        t = page.evaluate("() => window.__rgraspMethod")
        if t["error"]:
            raise RuntimeError(f"method: {t['error']}")
        got.append((t["done"] - t["start"], t["drawn"] - t["start"]))
        select.select_option(label="SVRGSP+")  # back, for the next change
        settle(page, cls)
    cpu = cpu_used(cpu0, cpu_seconds())
    done = [g[0] for g in got]
    return [{"change": "method -> SVRGHT", "changes": len(got),
             "done": statistics.median(done), "max": max(done),
             "drawn": statistics.median(g[1] for g in got), "cpu": cpu,
             "target": TARGET_METHOD_MS,
             "meets": "yes" if max(done) <= TARGET_METHOD_MS
             else ("median only" if statistics.median(done) <= TARGET_METHOD_MS else "no")}]


def measure_sliders(page, server, repeats, tmp, seen):
    """Slider change -> redrawn convergence figure in ``rv.explore`` (Voila), per slider."""
    import browser_pages as tb

    cls = tb.DASHBOARD_CLASS["explore"]
    debounce_ms = 1e3 * explore_debounce()
    root = open_dashboard(page, server, "voila", "explore", tmp)
    child_affinities(seen)
    rows = []
    for name, first in SLIDERS:
        got = []
        cpu0 = cpu_seconds()
        for k in range(repeats):
            key = first if k % 2 == 0 else OTHER_KEY[first]
            handle = tb.slider(root, name).locator(".noUi-handle")
            handle.focus()
            page.evaluate(ARM_JS, cls)
            handle.press(key)
            page.wait_for_function("() => window.__rgraspSlider.redraw !== null"
                                   " || window.__rgraspSlider.error !== null",
                                   timeout=tb.REDRAW_TIMEOUT, polling=50)
            t = page.evaluate("() => window.__rgraspSlider")
            if t["error"]:
                raise RuntimeError(f"slider {name}: {t['error']}")
            state = settle(page, cls)
            redraw = t["redraw"] - t["key"]
            kernel = _ms(r"solve \+ redraw ([\d.]+) ms", state["status"])
            got.append({"redraw": redraw, "kernel": kernel,
                        "rest": redraw - debounce_ms - kernel,
                        "ack": (t["ack"] - t["key"]) if t["ack"] is not None else float("nan"),
                        "solver": _ms(r"solver ([\d.]+) ms", state["status"])})
        cpu = cpu_used(cpu0, cpu_seconds())
        redraw = [g["redraw"] for g in got]
        med = statistics.median(redraw)
        rows.append({"control": name, "changes": len(got), "median": med, "max": max(redraw),
                     "ack": _median(g["ack"] for g in got),
                     "solver": _median(g["solver"] for g in got),
                     "kernel": _median(g["kernel"] for g in got),
                     "rest": _median(g["rest"] for g in got),
                     "cpu": cpu, "target": TARGET_MS,
                     "meets": "yes" if max(redraw) <= TARGET_MS
                     else ("median only" if med <= TARGET_MS else "no")})
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds of Play")
    parser.add_argument("--repeats", type=int, default=3, help="changes per slider")
    parser.add_argument("--cpus", type=int, default=None,
                        help="run everything on the first N CPUs (default: all)")
    parser.add_argument("--lab", action="store_true", help="Play in JupyterLab too (slower)")
    parser.add_argument("--note", default="", help="printed with the tables (e.g. the load)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")
    pinned = pin_cpus(args.cpus) if args.cpus is not None else None
    why = _missing()
    if why:
        print(f"bench_playback: skipped ({why})")
        return 0
    import browser_pages as tb
    from conftest import find_chromium
    from playwright.sync_api import sync_playwright

    load_before = machine_note()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    play_rows, slider_rows, method_rows, seen = [], [], [], {}
    with tempfile.TemporaryDirectory(prefix="bench-playback-") as tmp:
        tmp = Path(tmp)
        folder = tmp / "root" / "dashboards"
        _write_notebooks(folder)
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
                                play_rows.append(measure_play(context.new_page(), server, kind,
                                                              name, args.seconds, tmp))
                                child_affinities(seen)
                            finally:
                                context.close()
                        if kind == "voila":
                            context = browser.new_context()
                            try:
                                slider_rows = measure_sliders(context.new_page(), server,
                                                              args.repeats, tmp, seen)
                            finally:
                                context.close()
                            context = browser.new_context()
                            try:
                                method_rows = measure_method(context.new_page(), server,
                                                             args.repeats, tmp)
                            finally:
                                context.close()
                    finally:
                        server.stop()
            finally:
                browser.close()
    print(f"{started}; before: {load_before}; after: {machine_note()}")
    print(affinity_note(pinned, seen))
    if args.note:
        print(args.note)
    print()
    print(table(play_rows, [("where", "served by", None), ("dashboard", "dashboard", None),
                            ("frames", "frames drawn", "d"), ("seconds", "seconds", ".1f"),
                            ("fps", "frames/s", ".1f"),
                            ("peer", "page animation frames/s (peer)", ".1f"),
                            ("figures", "replay positions/s by figure", None),
                            ("slowest", "slowest figure (positions/s)", ".1f"),
                            ("cpu", "CPU s used while playing, by process", None),
                            ("target", "target frames/s", ".0f"),
                            ("meets", "meets target (frames / slowest figure)", None)],
                title=f"Replay speed while playing ({args.seconds:g} s of Play)"))
    print(table(slider_rows, [("control", "slider", None), ("changes", "changes", "d"),
                              ("median", "key -> redraw median (ms)", ".0f"),
                              ("max", "max (ms)", ".0f"),
                              ("ack", "key -> 'solving…' shown (ms)", ".0f"),
                              ("solver", "kernel: solver (ms)", ".1f"),
                              ("kernel", "kernel: solve + figure update (ms)", ".0f"),
                              ("rest", f"rest: messages + drawing (ms; redraw minus "
                                       f"kernel minus the {1e3 * explore_debounce():.0f} ms "
                                       "debounce)", ".0f"),
                              ("cpu", "CPU s used over the changes and waits, by process",
                               None),
                              ("target", "target (ms)", ".0f"),
                              ("meets", "meets target", None)],
                title="rv.explore in Voila: slider change -> convergence figure redrawn "
                      "(medians over the changes)"))
    print(table(method_rows, [("change", "change", None), ("changes", "changes", "d"),
                              ("done", "select -> status done, median (ms)", ".0f"),
                              ("max", "max (ms)", ".0f"),
                              ("drawn", "select -> convergence redrawn, median (ms)", ".0f"),
                              ("cpu", "CPU s used, by process", None),
                              ("target", "target (ms)", ".0f"),
                              ("meets", "meets target", None)],
                title="rv.explore in Voila: SVRGHT picked -> status line done (classroom "
                      "problem)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
