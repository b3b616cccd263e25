"""Build the course website into ``build/site/`` from the committed, executed notebooks.

    .venv/bin/python scripts/build_site.py            # what `make site` runs
    python -m http.server -d build/site               # then open http://localhost:8000

Steps (each fails with a message that says what to install or fix):

1. **Stage** a Sphinx source tree in ``build/site-work/src``: ``site/`` (configuration,
   landing page, API reference page, CSS) and every ``notebooks/*.ipynb`` (a glob, not a
   fixed list), with their outputs made static:

   * ``application/vnd.plotly.v1+json`` figures become ``text/html``: a div and an inline
     script that draws it with the site's own plotly.js (the notebooks store arrays as
     base64 ``bdata``, which plotly.js >= 2.28 reads);
   * dashboards (``rv.explore`` / ``rv.play`` / ``rv.compare``) keep their static copy
     (``text/html``, see :mod:`rgrasp_viz.viz.static`), with the Binder link pointed at
     the page's own notebook; a widget saved without one gets a note and a Binder link;
   * the live widget view (``application/vnd.jupyter.widget-view+json``) is dropped: it
     cannot be drawn without a kernel.

2. **Bundle** plotly.js (``plotly/package_data/plotly.min.js`` of the installed plotly) and
   MathJax 3 (``npm install mathjax@3`` into ``build/site-work/npm``, once; then a copy of
   the parts a page loads) into ``_static``: no page asks a CDN for anything.

3. **Build** with Sphinx + MyST-NB + the Sphinx Book Theme (the Jupyter Book 1 stack), warnings
   as errors (``-W``): an output type that nothing renders fails the build instead of
   leaving an empty box.

4. **Check** the result: every ``src``/``href`` of a script, stylesheet, image, frame or
   font in the built HTML is local (anything starting with ``http:``, ``https:`` or ``//``
   fails the build), and print the site's size and build time.
"""

from __future__ import annotations

import argparse
import copy
import html
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SITE_SRC = ROOT / "site"
NOTEBOOKS = ROOT / "notebooks"
MATHJAX_VERSION = "3.2.2"
# the parts of the MathJax package a page loads (the rest is other components / Node only)
MATHJAX_PARTS = ("tex-chtml.js", "output/chtml/fonts/woff-v2", "input/tex/extensions",
                 "ui", "a11y")

PLOTLY_MIME = "application/vnd.plotly.v1+json"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


class BuildError(RuntimeError):
    """A step of the build failed; the message says why and what to do."""


def _say(msg):
    print(msg, flush=True)


# -- 1. notebooks -> static notebooks ----------------------------------------------------------


def _binder_for(name):
    from rgrasp_viz.viz.static import BINDER_LAB

    return f"{BINDER_LAB}/{name}"


def _widget_note(name):
    url = html.escape(_binder_for(name), quote=True)
    return (f'<div class="rgrasp-widget-note">An interactive dashboard was here: it needs a '
            f'Python kernel. Live version: <a class="rgrasp-binder" href="{url}" '
            f'target="_blank" rel="noopener">Binder</a> (or <code>make lab</code>).</div>')


def static_notebook(nb, name):
    """A copy of notebook ``nb`` (a dict) whose outputs a static page can show.

    Parameters
    ----------
    nb : dict
        The notebook (nbformat 4 JSON).
    name : str
        Its file name (for ids and the Binder links).

    Returns
    -------
    nb : dict
    counts : dict
        ``figures`` (Plotly figures turned into HTML), ``dashboards`` (static copies
        kept), ``widget_notes`` (widgets without a static copy, replaced by a note).
    """
    from rgrasp_viz.viz.static import BINDER_LAB, figure_html

    nb = copy.deepcopy(nb)
    nb.get("metadata", {}).pop("widgets", None)
    counts = {"figures": 0, "dashboards": 0, "widget_notes": 0}
    stem = re.sub(r"[^A-Za-z0-9]+", "-", Path(name).stem)
    for ci, cell in enumerate(nb.get("cells", [])):
        for oi, out in enumerate(cell.get("outputs", []) if cell["cell_type"] == "code"
                                 else []):
            data = out.get("data")
            if not data:
                continue
            if PLOTLY_MIME in data:
                fig = data[PLOTLY_MIME]
                config = {"responsive": True, "displaylogo": False, **fig.get("config", {})}
                div = figure_html(fig, f"rgrasp-fig-{stem}-{ci}-{oi}", config=config)
                out["data"] = {"text/html": f'<div class="rgrasp-plotly">{div}</div>'}
                out.setdefault("metadata", {})
                counts["figures"] += 1
            elif WIDGET_MIME in data:
                data.pop(WIDGET_MIME)
                page = _binder_for(name)
                if "text/html" in data:
                    text = data["text/html"]
                    text = "".join(text) if isinstance(text, list) else text
                    data["text/html"] = text.replace(f'href="{BINDER_LAB}"', f'href="{page}"')
                    counts["dashboards"] += 1
                else:
                    data["text/html"] = _widget_note(name)
                    counts["widget_notes"] += 1
    return nb, counts


def stage(work, notebooks):
    """Copy ``site/`` and the static notebooks into ``work/src``; return the source dir and
    one line per notebook."""
    src = work / "src"
    if src.exists():
        shutil.rmtree(src)
    shutil.copytree(SITE_SRC, src)
    (src / "notebooks").mkdir()
    lines = []
    for path in notebooks:
        nb = json.loads(path.read_text(encoding="utf-8"))
        out, counts = static_notebook(nb, path.name)
        (src / "notebooks" / path.name).write_text(json.dumps(out, ensure_ascii=False),
                                                   encoding="utf-8")
        lines.append(f"  {path.name:32s} {counts['figures']:3d} figures, "
                     f"{counts['dashboards']} dashboard copies, "
                     f"{counts['widget_notes']} widgets without a static copy")
    return src, lines


# -- 2. plotly.js and MathJax ------------------------------------------------------------------


def plotly_js():
    """Path of the plotly.min.js shipped with the installed plotly package."""
    import plotly

    path = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    if not path.is_file():
        raise BuildError(f"plotly.min.js not found at {path}: reinstall plotly (>= 5.18)")
    return path


def mathjax_dir(work):
    """The ``es5`` folder of MathJax ``MATHJAX_VERSION``, installed with npm once."""
    npm_root = work / "npm"
    es5 = npm_root / "node_modules" / "mathjax" / "es5"
    pkg = npm_root / "node_modules" / "mathjax" / "package.json"
    if pkg.is_file() and json.loads(pkg.read_text())["version"] == MATHJAX_VERSION:
        return es5
    npm = shutil.which("npm")
    if npm is None:
        raise BuildError("MathJax comes from the npm registry and npm was not found: install "
                         "Node.js and npm (Debian: apt-get install npm), or run `make site`, "
                         "which does so when run as root")
    npm_root.mkdir(parents=True, exist_ok=True)
    _say(f"npm install mathjax@{MATHJAX_VERSION} (once, into {npm_root})")
    cmd = [npm, "install", "--no-audit", "--no-fund", "--no-save", "--prefix", str(npm_root),
           f"mathjax@{MATHJAX_VERSION}"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0 or not es5.is_dir():
        raise BuildError(f"`{' '.join(cmd)}` failed:\n{proc.stderr[-2000:]}")
    return es5


def bundle_assets(src, work):
    static = src / "_static"
    static.mkdir(exist_ok=True)
    shutil.copy2(plotly_js(), static / "plotly.min.js")
    es5 = mathjax_dir(work)
    for part in MATHJAX_PARTS:
        source, dest = es5 / part, static / "mathjax" / part
        dest.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, dest)
        else:
            shutil.copy2(source, dest)


# -- 3. Sphinx -------------------------------------------------------------------------------


def sphinx_build(src, out, work):
    try:
        import myst_nb  # noqa: F401
        import sphinx  # noqa: F401
        import sphinx_book_theme  # noqa: F401
    except ImportError as exc:
        raise BuildError(f"the site needs Sphinx, MyST-NB and the Sphinx Book Theme ({exc}): "
                         "`pip install -e '.[site]'` (or `make site`)") from exc
    if out.exists():
        shutil.rmtree(out)
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-E", "-q",
           "-d", str(work / "doctrees"), str(src), str(out)]
    env = dict(os.environ, PYDEVD_DISABLE_FILE_VALIDATION="1")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    if proc.returncode != 0:
        raise BuildError(f"Sphinx failed (warnings are errors):\n{proc.stderr[-6000:]}")
    # the themes' Jinja macro files land in _static as they are: templates, not pages
    for junk in ("_static/webpack-macros.html", "_static/sbt-webpack-macros.html",
                 ".buildinfo", ".doctrees"):
        p = out / junk
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()


# -- 4. checks ---------------------------------------------------------------------------------

_REMOTE = re.compile(
    r"<(script|link|img|iframe|source|video|audio|embed)\b[^>]*?\b(src|href)\s*=\s*"
    r"[\"']((?:https?:)?//[^\"']*)[\"']", re.IGNORECASE)
_CSS_URL = re.compile(r"url\(\s*[\"']?((?:https?:)?//[^)\"']*)", re.IGNORECASE)


def remote_references(out):
    """``(file, url)`` for every resource a built page or stylesheet would fetch from
    another host (plain links ``<a href>`` are not requests and are allowed)."""
    found = []
    for path in sorted(out.rglob("*")):
        if path.suffix == ".html":
            text = path.read_text(encoding="utf-8", errors="replace")
            found += [(path, m.group(3)) for m in _REMOTE.finditer(text)]
        elif path.suffix == ".css":
            text = path.read_text(encoding="utf-8", errors="replace")
            found += [(path, m.group(1)) for m in _CSS_URL.finditer(text)]
    return found


def site_pages(out):
    """The HTML pages of a built site (relative paths), without Sphinx's own folders."""
    return sorted(p.relative_to(out).as_posix() for p in out.rglob("*.html")
                  if not p.relative_to(out).parts[0].startswith("_"))


def tree_size(path):
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def build(out, work, notebooks=None):
    """Run the four steps; return a dict of facts (pages, size, seconds)."""
    t0 = time.perf_counter()
    notebooks = sorted(NOTEBOOKS.glob("*.ipynb")) if notebooks is None else list(notebooks)
    if not notebooks:
        raise BuildError(f"no notebooks found in {NOTEBOOKS}")
    work.mkdir(parents=True, exist_ok=True)
    src, lines = stage(work, notebooks)
    _say(f"staged {len(notebooks)} notebooks:")
    for line in lines:
        _say(line)
    bundle_assets(src, work)
    t1 = time.perf_counter()
    sphinx_build(src, out, work)
    t2 = time.perf_counter()
    remote = remote_references(out)
    if remote:
        listing = "\n".join(f"  {p.relative_to(out)}: {u}" for p, u in remote[:30])
        raise BuildError(f"{len(remote)} resource(s) would be fetched from another host:\n"
                         f"{listing}")
    pages = site_pages(out)
    facts = {"pages": pages, "bytes": tree_size(out), "seconds": time.perf_counter() - t0,
             "sphinx_seconds": t2 - t1, "notebooks": [p.name for p in notebooks]}
    (out / "site-build.json").write_text(json.dumps(facts, indent=1), encoding="utf-8")
    return facts


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "site",
                        help="output folder (default build/site; replaced)")
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "site-work",
                        help="staging and npm cache folder (default build/site-work)")
    args = parser.parse_args(argv)
    try:
        facts = build(args.out.resolve(), args.work.resolve())
    except BuildError as exc:
        print(f"build_site: {exc}", file=sys.stderr)
        return 1
    _say(f"built {len(facts['pages'])} pages into {args.out} in {facts['seconds']:.1f} s "
         f"(Sphinx {facts['sphinx_seconds']:.1f} s); {facts['bytes'] / 1e6:.1f} MB; "
         "no resource from another host")
    _say(f"open it: python -m http.server -d {args.out}  ->  http://localhost:8000")
    return 0


if __name__ == "__main__":
    sys.exit(main())
