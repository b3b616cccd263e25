"""The course website (``make site``, ``scripts/build_site.py``), built and opened for real.

* The notebook transform (unit): Plotly figures become HTML drawn by the page's plotly.js,
  dashboards keep their static copy with a Binder link to their own notebook, a widget
  without one gets a note, and nothing a static page cannot show is left.
* The build: one page per notebook (a glob, so new notebooks appear by themselves), an API
  reference, no resource from another host in any page, and warnings are errors (an output
  type that nothing renders fails the build).
* A real Chromium (Playwright) opens every page served on loopback with every request that
  would leave the machine blocked, and checks that each course page draws its Plotly figures
  (``gd.data`` of every figure div), that no output area holding a figure is empty, that
  MathJax typeset the mathematics, and that no page raised an error.  Full-page screenshots
  go to ``build/site-screenshots/`` (the path is printed).

The site is built once per session into a temporary folder (about half a minute); it needs
the ``site`` extra (Sphinx, MyST-NB, the Sphinx Book Theme: part of the test extras) and
npm for MathJax (cached in ``build/site-work``).  Missing tools skip with the reason, and
fail when ``CI`` is set.
"""

from __future__ import annotations

import base64
import functools
import http.server
import importlib.util
import json
import re
import shutil
import sys
import threading
import urllib.parse
from pathlib import Path

import numpy as np
import pytest

import rgrasp_viz as rv

ROOT = Path(__file__).resolve().parents[2]
NB_DIR = ROOT / "notebooks"
SCREENSHOTS = ROOT / "build" / "site-screenshots"
WORK = ROOT / "build" / "site-work"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
PLOTLY_MIME = "application/vnd.plotly.v1+json"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

sys.path.insert(0, str(ROOT / "scripts"))
import build_site  # noqa: E402

sys.path.pop(0)


def _notebooks():
    return sorted(NB_DIR.glob("*.ipynb"))


def _expected_figures(path):
    """Figures the committed notebook holds: Plotly outputs plus the figures of the static
    copies of dashboards (``rgrasp-static-figure`` divs in their ``text/html``)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    n = 0
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if PLOTLY_MIME in data:
                n += 1
            elif WIDGET_MIME in data and "text/html" in data:
                text = data["text/html"]
                text = "".join(text) if isinstance(text, list) else text
                n += text.count('class="rgrasp-static-figure"')
    return n


# -- the notebook transform ------------------------------------------------------------------


def _fake_notebook():
    fig = {"data": [{"type": "scatter", "x": [0, 1, 2], "y": [1, 3, 2]}],
           "layout": {"height": 300, "title": {"text": "a </script> in a title"}}}
    from rgrasp_viz.viz._static import BINDER_LAB, static_html

    dash_html = static_html([fig], title="rv.play")
    widget = {"model_id": "abc", "version_major": 2, "version_minor": 0}
    return {"cells": [
        {"cell_type": "markdown", "metadata": {}, "source": "# Title"},
        {"cell_type": "code", "metadata": {}, "execution_count": 1, "source": "fig",
         "outputs": [{"output_type": "display_data", "metadata": {},
                      "data": {PLOTLY_MIME: fig}}]},
        {"cell_type": "code", "metadata": {}, "execution_count": 2, "source": "rv.play(r)",
         "outputs": [{"output_type": "execute_result", "execution_count": 2, "metadata": {},
                      "data": {"text/plain": "Player(...)", WIDGET_MIME: widget,
                               "text/html": dash_html}}]},
        {"cell_type": "code", "metadata": {}, "execution_count": 3, "source": "rv.explore()",
         "outputs": [{"output_type": "execute_result", "execution_count": 3, "metadata": {},
                      "data": {"text/plain": "Explorer(...)", WIDGET_MIME: widget}}]},
    ], "metadata": {"widgets": {}}, "nbformat": 4, "nbformat_minor": 5}, BINDER_LAB


def test_static_notebook_turns_every_output_into_something_a_page_can_show():
    nb, binder = _fake_notebook()
    out, counts = build_site.static_notebook(nb, "07-fake.ipynb")
    assert counts == {"figures": 1, "dashboards": 1, "widget_notes": 1}
    assert nb["cells"][1]["outputs"][0]["data"].keys() == {PLOTLY_MIME}  # input untouched
    assert "widgets" not in out["metadata"]
    kinds = [set(o["data"]) for c in out["cells"] for o in c.get("outputs", [])]
    assert not any(k & {PLOTLY_MIME, WIDGET_MIME} for k in kinds), kinds
    fig_html = out["cells"][1]["outputs"][0]["data"]["text/html"]
    assert 'id="rgrasp-fig-07-fake-1-0"' in fig_html and "Plotly.newPlot" in fig_html
    assert "</script> in a title" not in fig_html  # the JSON cannot close its script
    dash = out["cells"][2]["outputs"][0]["data"]["text/html"]
    assert f'href="{binder}/07-fake.ipynb"' in dash  # the live version of this notebook
    note = out["cells"][3]["outputs"][0]["data"]["text/html"]
    assert "rgrasp-widget-note" in note and f"{binder}/07-fake.ipynb" in note


def test_remote_references_finds_cdn_resources_and_allows_links(tmp_path):
    (tmp_path / "a.html").write_text(
        '<script src="https://cdn.example.org/x.js"></script>'
        '<link rel="stylesheet" href="//cdn.example.org/y.css">'
        '<a href="https://mybinder.org/v2/gh/x">Binder</a>'
        '<script src="_static/plotly.min.js"></script>', encoding="utf-8")
    (tmp_path / "b.css").write_text("@font-face { src: url(https://fonts.example.org/f.woff) }",
                                    encoding="utf-8")
    found = sorted(u for _, u in build_site.remote_references(tmp_path))
    assert found == ["//cdn.example.org/y.css", "https://cdn.example.org/x.js",
                     "https://fonts.example.org/f.woff"]


def test_plain_text_of_the_course_mathematics():
    """Headings' mathematics as the tab title, the navigation and the search show it."""
    sys.path.insert(0, str(ROOT / "site"))
    try:
        from latex_text import plain_text
    finally:
        sys.path.remove(str(ROOT / "site"))
    assert plain_text(r"\mathcal{H}_s") == "ℋₛ"
    assert plain_text(r"$\mathcal{Z}$") == "𝒵"
    assert plain_text(r"\Sigma_{ij} = 0.1") == "Σᵢⱼ = 0.1"
    assert plain_text(r"i \ne j") == "i ≠ j"
    assert plain_text(r"O(|\mathcal T|)") == "O(|𝒯|)"
    assert plain_text(r"\lVert b - \hat b\rVert_2 \le c_1") == "‖b − b̂‖₂ ≤ c₁"
    # every formula of the notebooks' markdown comes out without TeX syntax
    for path in _notebooks():
        nb = json.loads(path.read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            if cell["cell_type"] != "markdown":
                continue
            text = "".join(cell["source"])
            for tex in re.findall(r"\$\$(.+?)\$\$|\$([^$\n]+)\$", text, re.S):
                out = plain_text(tex[0] or tex[1])
                assert not re.search(r"\\|\$|[_^]\{", out), (path.name, tex, out)


# -- the build --------------------------------------------------------------------------------


def _require_tools(unavailable):
    missing = [m for m in ("sphinx", "myst_nb", "sphinx_book_theme")
               if importlib.util.find_spec(m) is None]
    if missing:
        unavailable(f"the site needs {missing}: pip install -e '.[site]' (make site)")
    cached = (WORK / "npm" / "node_modules" / "mathjax" / "package.json").is_file()
    if not cached and shutil.which("npm") is None:
        unavailable("the site bundles MathJax from the npm registry and npm was not found "
                    "(apt-get install npm)")


@pytest.fixture(scope="session")
def site(tmp_path_factory, unavailable):
    """The site built from the committed notebooks: (output folder, facts)."""
    _require_tools(unavailable)
    out = tmp_path_factory.mktemp("site") / "site"
    facts = build_site.build(out, WORK)
    print(f"\nsite: {len(facts['pages'])} pages, {facts['bytes'] / 1e6:.1f} MB, built in "
          f"{facts['seconds']:.1f} s -> {out}")
    return out, facts


def test_one_page_per_notebook_an_index_and_an_api_reference(site):
    out, facts = site
    assert (out / "index.html").is_file()
    for path in _notebooks():
        assert (out / "notebooks" / f"{path.stem}.html").is_file(), path.name
    index = (out / "index.html").read_text(encoding="utf-8")
    for path in _notebooks():  # the navigation reaches every notebook
        assert f"notebooks/{path.stem}.html" in index, path.name
    api = (out / "api.html").read_text(encoding="utf-8")
    for name in ("rgrasp_viz.solve", "rgrasp_viz.Problem", "rgrasp_viz.Trace",
                 "rgrasp_viz.viz.figures.convergence", "rgrasp_viz.explore",
                 "rgrasp_viz.reproduce.run", "rgrasp_viz.animate"):
        assert f'id="{name}"' in api, name
    assert facts["bytes"] < 30e6, f"the site is {facts['bytes'] / 1e6:.1f} MB"


def test_everything_a_page_loads_is_in_the_site(site):
    out, _ = site
    assert build_site.remote_references(out) == []
    assert (out / "_static" / "plotly.min.js").stat().st_size > 1e6
    assert (out / "_static" / "mathjax" / "tex-chtml.js").is_file()
    page = (out / "notebooks" / "00-visual-explainer.html").read_text(encoding="utf-8")
    assert re.search(r'<script src="\.\./_static/plotly\.min\.js', page)
    assert re.search(r'src="\.\./_static/mathjax/tex-chtml\.js', page)
    assert "require.js" not in page and "embed-amd" not in page


def test_warnings_are_errors_an_unrendered_output_fails_the_build(tmp_path):
    """A MIME type that nothing renders must stop the build, not leave an empty box."""
    _require_tools(lambda reason: pytest.skip(reason))
    nb = json.loads((NB_DIR / "00-visual-explainer.ipynb").read_text(encoding="utf-8"))
    nb["cells"] = nb["cells"][:1] + [
        {"cell_type": "code", "metadata": {}, "execution_count": 1, "source": "x",
         "outputs": [{"output_type": "display_data", "metadata": {},
                      "data": {"application/x-unknown+json": {"a": 1}}}]}]
    bad = tmp_path / "00-visual-explainer.ipynb"
    bad.write_text(json.dumps(nb), encoding="utf-8")
    with pytest.raises(build_site.BuildError, match="x-unknown"):
        build_site.build(tmp_path / "out", WORK, notebooks=[bad])


# -- the output folder: never someone else's, complete or as it was -----------------------


def _run_builder(*args, **kwargs):
    import subprocess

    env = dict(__import__("os").environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, str(ROOT / "scripts" / "build_site.py"), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=ROOT, **kwargs)


def _previous_site(folder):
    """A folder as a previous build leaves it: a page and the builder's marker."""
    (folder / "notebooks").mkdir(parents=True)
    (folder / "index.html").write_text("previous site", encoding="utf-8")
    (folder / "notebooks" / "a.html").write_text("previous page", encoding="utf-8")
    (folder / build_site.MARKER).write_text(json.dumps(
        {"files": ["index.html", "notebooks", "notebooks/a.html"]}), encoding="utf-8")
    return folder


def test_check_out_accepts_only_empty_folders_and_previous_builds(tmp_path):
    assert build_site.check_out(tmp_path / "new") == tmp_path / "new"
    (tmp_path / "empty").mkdir()
    assert build_site.check_out(tmp_path / "empty") == tmp_path / "empty"
    prev = _previous_site(tmp_path / "prev")
    assert build_site.check_out(prev) == prev
    (prev / "notebooks" / "notes.txt").write_text("mine", encoding="utf-8")  # added by hand
    with pytest.raises(build_site.OutError, match="notebooks/notes.txt"):
        build_site.check_out(prev)
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(build_site.OutError, match="is a file"):
        build_site.check_out(tmp_path / "file")
    odd = tmp_path / "odd"
    odd.mkdir()
    (odd / build_site.MARKER).write_text("not json", encoding="utf-8")
    (odd / "index.html").write_text("x", encoding="utf-8")
    with pytest.raises(build_site.OutError, match="cannot be read as JSON"):  # a damaged
        build_site.check_out(odd)                                  # marker vouches for nothing


def test_an_out_holding_foreign_files_is_refused_and_nothing_is_deleted(tmp_path):
    out = tmp_path / "thesis"
    (out / ".git").mkdir(parents=True)
    (out / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    (out / "thesis.tex").write_text("\\documentclass{article}", encoding="utf-8")
    before = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    proc = _run_builder("--out", str(out), "--work", str(WORK))
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 2, (stdout, stderr)
    assert "thesis.tex" in stderr and ".git" in stderr and "Traceback" not in stderr
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == before
    assert (out / "thesis.tex").read_text(encoding="utf-8") == "\\documentclass{article}"
    assert not list(tmp_path.glob(".thesis.partial-*"))


def test_a_built_site_carries_the_marker_and_may_be_rebuilt(site):
    out, _ = site
    marker = json.loads((out / build_site.MARKER).read_text(encoding="utf-8"))
    assert "index.html" in marker["files"] and "notebooks/00-visual-explainer.html" in (
        marker["files"])
    assert build_site.check_out(out) == out  # its own output: a rebuild may replace it
    assert not list(out.parent.glob(f".{out.name}.partial-*"))


def _children(pid):
    """(pid, command line) of the processes whose parent is ``pid`` (Linux /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                cmd = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                found.append((int(stat.parent.name), cmd))
        except (OSError, IndexError, ValueError):
            continue
    return found


def _alive(pid):
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads child processes from /proc")
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_an_interrupted_build_keeps_the_previous_site_and_ends_sphinx(tmp_path, sig,
                                                                      unavailable):
    import signal
    import time

    _require_tools(unavailable)
    signum = getattr(signal, sig)
    out = _previous_site(tmp_path / "site")
    before = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*")
              if p.is_file()}
    proc = _run_builder("--out", str(out), "--work", str(WORK))
    sphinx = []
    deadline = time.monotonic() + 120  # liveness bound: staging + bundling take seconds
    while not sphinx and proc.poll() is None and time.monotonic() < deadline:
        sphinx = [pid for pid, cmd in _children(proc.pid) if "sphinx" in cmd]
        time.sleep(0.05)
    assert sphinx, ("Sphinx never started", proc.poll(), proc.communicate(timeout=60))
    time.sleep(0.5)  # Sphinx at work (reading, writing into the temporary folder)
    proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signum, (proc.returncode, stdout, stderr)
    assert "previous site" in stderr and "Traceback" not in stderr
    deadline = time.monotonic() + 15
    while _alive(sphinx[0]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(sphinx[0]), "Sphinx outlived the build (an orphan still writing)"
    after = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*")
             if p.is_file()}
    assert after == before  # the previous site as it was
    assert not list(tmp_path.glob(".site.partial-*"))  # the temporary folder removed
    assert not [p for p in WORK.glob(f"build-{proc.pid}-*")]


# -- in a real browser, offline -----------------------------------------------------------------

PAGE_JS = """
() => {
  const figs = Array.from(document.querySelectorAll('.rgrasp-static-figure'));
  const drawn = figs.map((el) => {
    const box = el.getBoundingClientRect();
    return {id: el.id, plotly: el.classList.contains('js-plotly-plot'),
            traces: (el.data || []).length, layout: !!el._fullLayout,
            // what plotly.js computed to draw (bdata arrays decoded): points per trace
            points: (el.calcdata || []).reduce((n, cd) => n + ((cd && cd.length) || 0), 0),
            height: box.height};
  });
  const outputs = Array.from(document.querySelectorAll('.rgrasp-plotly, .rgrasp-static'));
  const math = Array.from(document.querySelectorAll('span.math, div.math'));
  return {
    figures: drawn,
    all_plots: document.querySelectorAll('.js-plotly-plot').length,
    empty_outputs: outputs.filter((o) => o.getBoundingClientRect().height < 50).length,
    math: math.length,
    typeset: math.filter((m) => m.querySelector('mjx-container')).length,
    widget_notes: document.querySelectorAll('.rgrasp-widget-note').length,
    images: Array.from(document.querySelectorAll('img')).map(
      (i) => ({src: i.getAttribute('src'), ok: i.complete && i.naturalWidth > 0})),
  };
}
"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def served(site):
    out, _ = site
    handler = functools.partial(_QuietHandler, directory=str(out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", out
    server.shutdown()
    server.server_close()


@pytest.mark.browser
def test_every_page_in_a_browser_with_the_network_blocked(served, chromium_path):
    base, out = served
    playwright = pytest.importorskip("playwright.sync_api")
    host = urllib.parse.urlparse(base).netloc
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    print(f"\nscreenshots: {SCREENSHOTS}")
    pages = build_site.site_pages(out)
    blocked, errors, bad_responses, report = [], [], [], {}

    def route(r):
        url = urllib.parse.urlparse(r.request.url)
        if url.scheme in ("data", "blob") or url.netloc == host:
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    with playwright.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS,
                                     headless=True)
        try:
            ctx = browser.new_context(viewport={"width": 1280, "height": 900})
            ctx.route("**/*", route)
            page = ctx.new_page()
            page.on("pageerror", lambda e: errors.append((page.url, str(e))))
            page.on("response", lambda r: bad_responses.append((r.status, r.url))
                    if r.status >= 400 and not r.url.endswith("favicon.ico") else None)
            for rel in pages:
                page.goto(f"{base}/{rel}", wait_until="load")
                page.wait_for_function(
                    "() => Array.from(document.querySelectorAll('.rgrasp-static-figure'))"
                    ".every((el) => el.classList.contains('js-plotly-plot'))", timeout=60_000)
                if page.locator("span.math, div.math").count():
                    page.wait_for_function(
                        "() => Array.from(document.querySelectorAll('span.math, div.math'))"
                        ".every((m) => m.querySelector('mjx-container'))", timeout=60_000)
                report[rel] = page.evaluate(PAGE_JS)
                shot = SCREENSHOTS / (rel.replace("/", "__").replace(".html", ".png"))
                page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()

    assert blocked == [], f"requests that would leave the machine: {blocked[:20]}"
    assert errors == [], f"page errors: {errors[:10]}"
    assert bad_responses == [], f"missing files: {bad_responses[:10]}"
    for path in _notebooks():
        rel = f"notebooks/{path.stem}.html"
        r = report[rel]
        expected = _expected_figures(path)
        drawn = [f for f in r["figures"] if f["plotly"] and f["traces"] > 0 and f["layout"]
                 and f["height"] > 50]
        assert len(r["figures"]) == expected, (rel, len(r["figures"]), expected)
        assert len(drawn) == expected, (rel, [f for f in r["figures"] if f not in drawn])
        assert r["empty_outputs"] == 0, rel
        assert all(img["ok"] for img in r["images"]), (rel, r["images"])
        if re.match(r"\d\d-", path.name):  # a course page: figures and mathematics
            assert expected >= 1 and sum(f["points"] for f in drawn) > 0, rel
            assert r["math"] > 0 and r["typeset"] == r["math"], (rel, r["math"], r["typeset"])
    explainer = report["notebooks/00-visual-explainer.html"]
    assert any(img["src"].endswith(".gif") and img["ok"] for img in explainer["images"]), (
        "the explainer shows its rv.animate GIF")
    assert report["api.html"]["figures"] == []
    for rel, r in report.items():  # titles in the navigation carry mathematics everywhere
        assert r["typeset"] == r["math"], (rel, r["math"], r["typeset"])


@pytest.mark.browser
def test_figures_on_the_site_answer_the_mouse(served, chromium_path):
    """Hover shows a label and a drag zooms: the figures stay interactive offline."""
    base, _ = served
    playwright = pytest.importorskip("playwright.sync_api")
    host = urllib.parse.urlparse(base).netloc
    with playwright.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS,
                                     headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.route("**/*", lambda r: r.continue_()
                       if urllib.parse.urlparse(r.request.url).netloc == host else r.abort())
            page.goto(f"{base}/notebooks/00-visual-explainer.html", wait_until="load")
            page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot')"
                                   ".length >= 4", timeout=60_000)
            # the line chart of nonzeros: third figure of the page
            gd = page.locator(".rgrasp-static-figure").nth(2)
            gd.scroll_into_view_if_needed()
            before = page.evaluate("(el) => el._fullLayout.xaxis.range.slice()",
                                   gd.element_handle())
            box = page.evaluate("""(el) => {
                const l = el._fullLayout, r = el.getBoundingClientRect();
                const pt = el.calcdata[0][Math.floor(el.calcdata[0].length / 2)];
                return {x: r.left + l._size.l, y: r.top + l._size.t,
                        w: l._size.w, h: l._size.h,
                        px: r.left + l._size.l + l.xaxis.c2p(pt.x),
                        py: r.top + l._size.t + l.yaxis.c2p(pt.y)};
            }""", gd.element_handle())
            page.mouse.move(box["px"] - 3, box["py"])
            page.mouse.move(box["px"], box["py"])
            page.wait_for_function("(el) => el.querySelectorAll('.hoverlayer .hovertext')"
                                   ".length > 0", arg=gd.element_handle(), timeout=10_000)
            page.mouse.move(box["x"] + box["w"] * 0.2, box["y"] + box["h"] * 0.5)
            page.mouse.down()
            page.mouse.move(box["x"] + box["w"] * 0.5, box["y"] + box["h"] * 0.5, steps=8)
            page.mouse.up()
            page.wait_for_function(
                "([el, r]) => el._fullLayout.xaxis.range[0] > r[0] + 1e-9",
                arg=[gd.element_handle(), before], timeout=10_000)
        finally:
            browser.close()


# -- static copies of the dashboards (rgrasp_viz.viz._static) ------------------------------------


def test_thin_figure_keeps_whole_marks_and_the_ends():
    from rgrasp_viz.viz._static import thin_figure

    n = 3000
    xs = np.repeat(np.arange(n, dtype=float), 3)
    xs[2::3] = np.nan
    ys = np.tile([0.0, 1.0, np.nan], n)
    line = np.linspace(0, 1, 10_000)
    fig = {"data": [
        {"type": "scatter", "x": xs, "y": ys, "meta": {"role": "marks"}},
        {"type": "scatter", "x": line, "y": line ** 2, "marker": {"size": np.ones(10_000)}},
        {"type": "scatter", "x": [0, 1], "y": [1, 2]},
        {"type": "heatmap", "z": np.zeros((200, 200))},
    ], "layout": {"meta": {"x": 1}}}
    out = thin_figure(fig, max_points=600)
    marks, curve, small, heat = out["data"]
    assert len(marks["x"]) % 3 == 0 and len(marks["x"]) <= 600
    assert np.isnan(marks["x"][2::3]).all() and not np.isnan(marks["x"][0::3]).any()
    assert marks["x"][0] == 0 and marks["x"][-3] == n - 1  # first and last mark kept
    assert marks["meta"] == {"role": "marks", "thinned_from": 3 * n}
    assert len(curve["x"]) <= 600 and curve["x"][0] == 0 and curve["x"][-1] == 1
    assert np.allclose(curve["y"], curve["x"] ** 2)  # x and y thinned alike
    assert len(curve["marker"]["size"]) == len(curve["x"])
    assert small == fig["data"][2] and heat["z"] is fig["data"][3]["z"]  # left as they were
    assert out["layout"]["meta"] == {"x": 1, "static_thinned": 2}
    assert len(fig["data"][0]["x"]) == 3 * n  # the input is not modified
    # plotly's base64 arrays (what FigureWidget.to_plotly_json gives) are read too
    b64 = {"dtype": "f8", "bdata": base64.b64encode(line.tobytes()).decode()}
    out = thin_figure({"data": [{"type": "scatter", "x": b64, "y": b64}], "layout": {}},
                      max_points=100)
    assert len(out["data"][0]["x"]) <= 100 and out["data"][0]["x"][-1] == 1


@pytest.fixture(scope="module")
def dashboards():
    """A Player, a Comparison and an Explorer on small problems (no kernel needed)."""
    prob = rv.make_regression(n=120, d=60, s_star=4, random_state=1)
    res = rv.solve(prob, "svrgsp+", s=5, max_iter=4, record_iterates=True, random_state=0,
                   warn=False)
    return {"play": rv.play(res),
            "compare": rv.compare(prob, methods=["svrght", "svrgsp"], s=5, max_iter=4),
            "explore": rv.explore(prob, method="svrgsp", s=5, debounce=0, max_iter=4)}


def test_dashboards_add_a_static_copy_next_to_the_live_widget(dashboards):
    from rgrasp_viz.viz._static import BINDER_LAB

    n_figs = {"play": 3, "compare": 2 + 2, "explore": 3}
    for name, dash in dashboards.items():
        bundle = dash._repr_mimebundle_()
        assert WIDGET_MIME in bundle and "text/plain" in bundle, name  # the live widget
        text = bundle["text/html"]
        assert text.count('class="rgrasp-static-figure"') == n_figs[name], name
        assert f'href="{BINDER_LAB}"' in text and "live version" in text.lower(), name
        assert "http" not in re.sub(r'href="[^"]*"', "", text), name  # no fetch, links only
        assert dash._repr_mimebundle_()["text/html"] == text, name  # stable ids
    # an explorer whose only run diverged draws that run (issue 11: no blank plots) and says
    # why in its copy
    prob = rv.make_regression(n=120, d=60, s_star=4, random_state=1)
    bad = rv.explore(prob, method="svrgsp", s=5, debounce=0, eta=50.0, max_iter=4)
    text = bad._repr_mimebundle_()["text/html"]
    assert bad.result is None and text.count("rgrasp-static-figure") == 3 and "diverged" in text
    # a replay's static copy shows its end, not the empty start
    player = dashboards["play"]
    assert "last of" in player._repr_mimebundle_()["text/html"]


def test_comparison_copy_of_a_long_svrght_run_stays_small():
    """Notebook 2 compares full classroom runs: tens of thousands of SVRGHT marks."""
    prob = rv.make_regression("classroom", random_state=0)
    cmp_ = rv.compare(prob, methods=["svrght", "svrgsp"], s=24)
    # (the live comparison already draws at most MAX_MARKS marks per lane; meta counts all)
    n_marks = sum(d.meta["count"] for d in cmp_.fig_timeline.data
                  if (d.meta or {}).get("role") == "marks")
    text = cmp_._repr_mimebundle_()["text/html"]
    assert n_marks > 10_000 and len(text) < 250_000, (n_marks, len(text))


@pytest.mark.browser
def test_static_copies_draw_in_a_browser_offline(dashboards, tmp_path, chromium_path):
    """The HTML of the copies, on a page with the site's plotly.js only: every figure drawn
    with data, no error, no request off the machine."""
    import plotly

    js = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    shutil.copy2(js, tmp_path / "plotly.min.js")
    body = "\n".join(d._repr_mimebundle_()["text/html"] for d in dashboards.values())
    (tmp_path / "index.html").write_text(
        '<!doctype html><html><head><script src="plotly.min.js"></script></head>'
        f"<body>{body}</body></html>", encoding="utf-8")
    handler = functools.partial(_QuietHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    playwright = pytest.importorskip("playwright.sync_api")
    blocked, errors = [], []
    try:
        with playwright.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS,
                                         headless=True)
            try:
                page = browser.new_page()
                page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(base)
                           else (blocked.append(r.request.url), r.abort()))
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.goto(f"{base}/index.html", wait_until="load")
                figs = page.evaluate(PAGE_JS)["figures"]
                page.screenshot(path=str(SCREENSHOTS / "static-dashboards.png"),
                                full_page=True)
            finally:
                browser.close()
    finally:
        server.shutdown()
        server.server_close()
    assert blocked == [] and errors == []
    assert len(figs) == 3 + 4 + 3
    assert all(f["plotly"] and f["traces"] > 0 and f["points"] > 0 and f["height"] > 50
               for f in figs), figs


# -- no raw LaTeX, no overlapping panels, kernel-free sliders (issue 19) -------------------------

RAW_LATEX = re.compile(r"\\\(|\\\)|\$\$|\\mathcal|\\\||_\{")
"""What raw LaTeX looks like in a page's text once MathJax is done (it never is there after)."""

TEXT_JS = """() => [document.title, document.body.innerText,
  Array.from(document.querySelectorAll('svg text')).map((t) => t.textContent).join('\\n')]"""


def _browser(pw, chromium_path):
    return pw.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS, headless=True)


def _offline(page, base):
    host = urllib.parse.urlparse(base).netloc
    page.route("**/*", lambda r: r.continue_()
               if urllib.parse.urlparse(r.request.url).netloc == host
               or urllib.parse.urlparse(r.request.url).scheme in ("data", "blob")
               else r.abort())


def _open(page, url):
    page.goto(url, wait_until="load")
    page.wait_for_function(
        "() => Array.from(document.querySelectorAll('.rgrasp-static-figure'))"
        ".every((el) => el.classList.contains('js-plotly-plot'))", timeout=60_000)
    page.wait_for_function(
        "() => Array.from(document.querySelectorAll('span.math, div.math'))"
        ".every((m) => m.querySelector('mjx-container'))", timeout=60_000)


@pytest.mark.browser
def test_no_raw_latex_on_any_page_or_in_search_results(served, chromium_path):
    """Tab titles, page text, figure text (legends, titles) and search results, read after
    MathJax typeset the page: no ``\\(``, ``$$``, ``\\mathcal``, ``\\|`` or ``_{``.  And no
    output line is clipped (the explainer's counts are wider than the text column)."""
    base, out = served
    playwright = pytest.importorskip("playwright.sync_api")
    found, clipped = [], []
    with playwright.sync_playwright() as pw:
        browser = _browser(pw, chromium_path)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            _offline(page, base)
            for rel in build_site.site_pages(out):
                _open(page, f"{base}/{rel}")
                for kind, text in zip(("title", "text", "figures"), page.evaluate(TEXT_JS),
                                      strict=True):
                    found += [(rel, kind, text[max(0, m.start() - 50):m.end() + 30])
                              for m in RAW_LATEX.finditer(text)]
                # long output lines wrap: none is cut off at the edge of its box
                clipped += [(rel, t) for t in page.evaluate(
                    "() => Array.from(document.querySelectorAll('div.cell_output pre'))"
                    ".filter((p) => p.scrollWidth > p.clientWidth + 1)"
                    ".map((p) => p.textContent.slice(0, 100))")]
            # search: titles come from the notebooks' headings (mathematics in several) and
            # the summaries from the pages' text (mathematics everywhere)
            for query in ("thresholding", "support", "sparsity"):
                page.goto(f"{base}/search.html?q={query}", wait_until="load")
                page.wait_for_function(
                    "() => document.querySelectorAll('#search-results li p.context').length"
                    " >= 3", timeout=60_000)
                text = page.inner_text("#search-results")
                assert "ℋₛ" in text or query != "thresholding", text[:500]
                found += [(f"search {query}", "results", text[max(0, m.start() - 50):
                                                              m.end() + 30])
                          for m in RAW_LATEX.finditer(text)]
        finally:
            browser.close()
    assert found == [], found[:20]
    assert clipped == [], clipped[:10]
    # notebook 3's definition of the relaxed sub-problem (Algorithm 1, step 4) is mathematics
    page3 = (out / "notebooks" / "03-rgrasp-framework.html").read_text(encoding="utf-8")
    step4 = page3[page3.index("minimise slackly"):page3.index("hard-threshold over")]
    assert "$" not in re.sub(r"<[^>]+>", "", step4).replace("\\(", "").replace("\\)", "")
    assert re.search(r'<div class="math[^"]*"[^>]*>\s*\\\[\\hat b = \\arg\\min', step4)


OVERLAP_JS = """(gd) => {
  const inter = (a, b) => !(a.right <= b.left || b.right <= a.left || a.bottom <= b.top
                            || b.bottom <= a.top);
  const plots = Array.from(gd.querySelectorAll('.draglayer .nsewdrag')).map(
    (d) => ({id: d.parentNode.getAttribute('class'), r: d.getBoundingClientRect()}));
  const hits = [];
  gd.querySelectorAll('.infolayer g').forEach((g) => {
    const cls = g.getAttribute('class') || '';
    if (!/^g-[xy]\\d*title$/.test(cls) || !g.textContent) return;
    const r = g.getBoundingClientRect();
    plots.forEach((p) => { if (inter(r, p.r)) hits.push([cls, g.textContent, p.id]); });
  });
  return {plots: plots.length, hits: hits};
}"""


@pytest.mark.browser
@pytest.mark.parametrize("width", [800, 1280])
def test_axis_titles_clear_the_next_panel(served, chromium_path, width):
    """Two-panel convergence figures (the slider page draws them with the current builder):
    no axis title lies over a plot area, at a narrow and a wide window."""
    base, _ = served
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as pw:
        browser = _browser(pw, chromium_path)
        try:
            page = browser.new_page(viewport={"width": width, "height": 900})
            _offline(page, base)
            _open(page, f"{base}/{build_site.SLIDER_PAGE}.html")
            figs = page.locator(".rgrasp-sweep .rgrasp-static-figure")
            assert figs.count() == 8
            for k in range(figs.count()):
                r = page.evaluate(OVERLAP_JS, figs.nth(k).element_handle())
                assert r["plots"] == 2 and r["hits"] == [], (k, r)
        finally:
            browser.close()


SLIDER_JS = """(gd) => {
  const s = gd._fullLayout.sliders[0];
  const ticks = Array.from(gd.querySelectorAll('.slider-container .slider-tick-rect'))
    .map((t) => { const r = t.getBoundingClientRect(); return r.left + r.width / 2; });
  const grip = gd.querySelector('.slider-container .slider-grip-rect').getBoundingClientRect();
  return {active: s.active, n: s.steps.length, ticks: ticks,
          grip: [grip.left + grip.width / 2, grip.top + grip.height / 2],
          y: gd.data.map((d) => Array.from(d.y)), title: gd._fullLayout.title.text};
}"""


@pytest.mark.browser
def test_sliders_redraw_without_a_kernel(served, chromium_path):
    """Drag each slider (m, J, eta, s) of both problems to its last value: the figure
    redraws the run the package computes for that value (read back from ``gd.data``)."""
    base, _ = served
    playwright = pytest.importorskip("playwright.sync_api")
    problems = {key: (prob, method, defaults, grids)
                for key, _, prob, method, defaults, grids in build_site.sweep_problems()}
    moved = []
    with playwright.sync_playwright() as pw:
        browser = _browser(pw, chromium_path)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            _offline(page, base)
            _open(page, f"{base}/{build_site.SLIDER_PAGE}.html")
            for key, (prob, method, defaults, grids) in problems.items():
                for param in ("m", "J", "eta", "s"):
                    gd = page.locator(f"#rgrasp-sweep-{key}-{param}")
                    gd.scroll_into_view_if_needed()
                    before = page.evaluate(SLIDER_JS, gd.element_handle())
                    assert before["n"] == len(grids[param]) == len(before["ticks"])
                    assert grids[param][before["active"]] == defaults[param]
                    target = before["n"] - 1
                    page.mouse.move(*before["grip"])
                    page.mouse.down()
                    page.mouse.move(before["ticks"][target], before["grip"][1], steps=12)
                    page.mouse.up()
                    page.wait_for_function(
                        "([gd, k]) => gd._fullLayout.sliders[0].active === k",
                        arg=[gd.element_handle(), target], timeout=10_000)
                    after = page.evaluate(SLIDER_JS, gd.element_handle())
                    run = rv.solve(prob, method, **{**defaults, param: grids[param][target]},
                                   warn=False)
                    drawn = np.array([np.nan if v is None else v for v in after["y"][1]])
                    # what the dashboard's convergence panel draws for that run (a diverged
                    # run is cut where it leaves the plot)
                    from rgrasp_viz.viz.figures import convergence_spec

                    expected = np.asarray(convergence_spec([run], x="passes", y="both",
                                                           xscale="linear")["data"][1]["y"],
                                          dtype=float)
                    finite = np.isfinite(drawn)
                    assert finite.any() and len(drawn) == len(expected), (key, param)
                    np.testing.assert_allclose(drawn[finite], expected[finite], rtol=1e-9,
                                               err_msg=f"{key} {param}")
                    assert after["y"] != before["y"], (key, param)
                    assert f"{param} = " in after["title"] and "(default)" not in (
                        after["title"])
                    moved.append((key, param))
        finally:
            browser.close()
    assert len(moved) == 8


def test_the_api_reference_lists_the_public_api_only(site):
    """Every name ``import rgrasp_viz as rv`` exports is documented; nothing outside the
    modules' ``__all__`` (internal helpers) is."""
    import importlib

    out, _ = site
    api = (out / "api.html").read_text(encoding="utf-8")
    ids = re.findall(r'<dt class="sig sig-object py" id="([^"]+)"', api)
    documented = set(ids)
    for name in rv.__all__:
        if name == "__version__":
            continue
        if name in ("datasets", "exceptions"):  # modules: their members are documented
            assert any(i.startswith(f"rgrasp_viz.{name}.") for i in ids), name
            continue
        assert f"rgrasp_viz.{name}" in documented, name
    for name in ("explore", "play", "compare", "animate"):  # rv's lazy names: their one home
        assert f"rgrasp_viz.{name}" in documented, name
    for name in importlib.import_module("rgrasp_viz.viz.figures").__all__:
        obj = getattr(importlib.import_module("rgrasp_viz.viz.figures"), name)
        if callable(obj):
            assert f"rgrasp_viz.viz.figures.{name}" in documented, name
    internal = {"Debouncer", "replay_frames", "update_figure", "check_run_args", "warm_up",
                "quick_shape", "factor_key", "player_bundle", "explorer_bundle"}
    for ident in ids:
        module, _, name = ident.rpartition(".")
        assert not name.startswith("_"), ident
        assert name not in internal, ident
        try:
            mod = importlib.import_module(module)
        except ImportError:
            continue  # a member of a documented class
        public = set(getattr(mod, "__all__", ())) | (
            {"explore", "play", "compare", "animate"} if module == "rgrasp_viz" else set())
        assert name in public, ident


# -- the correlation slider (rho) over the committed condition map ------------------------------

RHO_JS = """(gd) => {
  const s = gd._fullLayout.sliders[0];
  const ticks = Array.from(gd.querySelectorAll('.slider-container .slider-tick-rect'))
    .map((t) => { const r = t.getBoundingClientRect(); return r.left + r.width / 2; });
  const grip = gd.querySelector('.slider-container .slider-grip-rect').getBoundingClientRect();
  return {active: s.active, n: s.steps.length, ticks: ticks,
          grip: [grip.left + grip.width / 2, grip.top + grip.height / 2],
          data: gd.data.map((d) => ({method: (d.meta || {}).method || null,
                                     x: Array.from(d.x), y: Array.from(d.y)})),
          title: gd._fullLayout.title.text};
}"""


def test_the_slider_page_carries_the_rho_slider_of_the_committed_map():
    fig, record = build_site.correlation_figure()
    page = build_site.slider_page({}, (fig, record))
    assert 'id="rgrasp-rho-sweep"' in page and 'class="rgrasp-plotly rgrasp-rho-sweep"' in page
    assert [float(v) for v in fig.layout.meta["sweep"]["values"]] == sorted(record["rhos"])
    with pytest.raises(build_site.BuildError, match="condition map"):
        build_site.correlation_figure(ROOT / "no-such-map.json")


@pytest.mark.browser
def test_rho_slider_redraws_the_committed_runs(served, chromium_path):
    """Drag the rho slider from 0 to its last value: the page draws that rho's recorded
    curves (read back from ``gd.data``), and the title names that rho's winner."""
    base, _ = served
    playwright = pytest.importorskip("playwright.sync_api")
    from rgrasp_viz.viz.sliders import CORRELATION_FLOOR

    record = json.loads(build_site.CONDITION_MAP.read_text(encoding="utf-8"))
    rhos = sorted(record["rhos"])
    with playwright.sync_playwright() as pw:
        browser = _browser(pw, chromium_path)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            _offline(page, base)
            _open(page, f"{base}/{build_site.SLIDER_PAGE}.html")
            gd = page.locator("#rgrasp-rho-sweep")
            gd.scroll_into_view_if_needed()
            before = page.evaluate(RHO_JS, gd.element_handle())
            assert before["active"] == 0 and before["n"] == len(rhos) == len(before["ticks"])
            page.mouse.move(*before["grip"])
            page.mouse.down()
            page.mouse.move(before["ticks"][-1], before["grip"][1], steps=12)
            page.mouse.up()
            page.wait_for_function("([gd, k]) => gd._fullLayout.sliders[0].active === k",
                                   arg=[gd.element_handle(), len(rhos) - 1], timeout=10_000)
            after = page.evaluate(RHO_JS, gd.element_handle())
        finally:
            browser.close()
    curves = {(c["rho"], c["method"]): c for c in record["curves"] if c["shape"] == "paper"}
    drawn = [d for d in after["data"] if d["method"]]
    assert len(drawn) == len(record["methods"])
    for d in drawn:
        rec = curves[(rhos[-1], d["method"])]
        assert d["x"] == pytest.approx(rec["passes"])
        want = [None if v is None else max(v, CORRELATION_FLOOR) for v in rec["fraction"]]
        assert d["y"] == pytest.approx(want), d["method"]
    assert after["data"] != before["data"]
    (win,) = [w for w in record["winner"] if w["shape"] == "paper" and w["rho"] == rhos[-1]]
    assert f"ρ = {rhos[-1]:g}" in after["title"]
    if win["method"]:
        from rgrasp_viz.solvers._registry import method_label

        assert f"fewest passes: {method_label(win['method'])}" in after["title"]


@pytest.mark.browser
def test_search_summaries_show_the_page_text_not_the_theme_menus(served, chromium_path):
    """The theme's <main> holds a toolbar (Binder, .ipynb, .pdf, "System Settings Light Dark")
    and the page's table of contents before the article: a summary must come from the
    article, so a word that is also a section title shows its passage, not the menu."""
    base, _ = served
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as pw:
        browser = _browser(pw, chromium_path)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            _offline(page, base)
            page.goto(f"{base}/search.html?q=prerequisites", wait_until="load")
            page.wait_for_function(
                "() => document.querySelectorAll('#search-results li p.context').length >= 3",
                timeout=60_000)
            contexts = page.eval_on_selector_all("#search-results li p.context",
                                                 "(ps) => ps.map((p) => p.textContent)")
            text, menu = page.evaluate("""async (url) => {
              const html = await (await fetch(url)).text();
              const doc = new DOMParser().parseFromString(html, 'text/html');
              return [Search.htmlToText(html),
                      doc.querySelector('.bd-header-article').textContent];
            }""", f"{base}/notebooks/04-tuning.html")
        finally:
            browser.close()
    assert "System Settings" in menu  # the menu is there, in <main> ...
    assert "System Settings" not in text and "Binder" not in text[:200]  # ... but not read
    assert text.lstrip().startswith("4 · Tuning")
    assert all("System Settings" not in c and "Light Dark" not in c for c in contexts), contexts
