"""Build the course website into ``build/site/`` from the committed, executed notebooks.

    .venv/bin/python scripts/build_site.py            # what `make site` runs
    python -m http.server -d build/site               # then open http://localhost:8000

Steps (each fails with a message that says what to install or fix):

1. **Stage** a Sphinx source tree in a new folder under ``build/site-work``: ``site/``
   (configuration, landing page, API reference page, CSS) and every ``notebooks/*.ipynb`` (a
   glob, not a fixed list), with their outputs made static:

   * ``application/vnd.plotly.v1+json`` figures become ``text/html``: a div and an inline
     script that draws it with the site's own plotly.js (the notebooks store arrays as
     base64 ``bdata``, which plotly.js >= 2.28 reads);
   * dashboards (``rv.explore`` / ``rv.play`` / ``rv.compare``) keep their static copy
     (``text/html``, see :mod:`rgrasp_viz.viz._static`), with the Binder link pointed at
     the page's own notebook; a widget saved without one gets a note and a Binder link;
   * the live widget view (``application/vnd.jupyter.widget-view+json``) is dropped: it
     cannot be drawn without a kernel;

   and the **slider page** (``sliders.md``): the sweeps of ``m``, ``J``, ``eta`` and ``s`` on
   the explainer's and the tuning notebook's problems are solved here, at build time
   (:func:`slider_sweeps`, a few seconds), and drawn by
   :func:`rgrasp_viz.viz.sliders.parameter_sweep_figure`: Plotly's own sliders, no kernel;
   below them the correlation slider (rho) over the committed condition map
   (``notebooks/data/condition-map.json``, :func:`correlation_figure`; too long to solve at
   build time), drawn by :func:`rgrasp_viz.viz.sliders.correlation_sweep_figure`.

2. **Bundle** plotly.js (``plotly/package_data/plotly.min.js`` of the installed plotly) and
   MathJax 3 (``npm install mathjax@3`` into ``build/site-work/npm``, once; then a copy of
   the parts a page loads) into ``_static``: no page asks a CDN for anything.

3. **Build** with Sphinx + MyST-NB + the Sphinx Book Theme (the Jupyter Book 1 stack), warnings
   as errors (``-W``): an output type that nothing renders fails the build instead of
   leaving an empty box.

4. **Check** the result (after giving every math element its plain-text form, which the
   search results show, see :func:`annotate_math`): every ``src``/``href`` of a script,
   stylesheet, image, frame or font in the built HTML is local (anything starting with
   ``http:``, ``https:`` or ``//`` fails the build), and print the site's size and build
   time.

The output folder is complete or absent, never a mix, and never someone else's: Sphinx
writes into a temporary folder beside ``--out`` (``.NAME.partial-PID-XXXX``) that is swapped
into place only when the build and its checks succeeded (one atomic ``renameat2`` exchange on
Linux, as :mod:`rgrasp_viz.reproduce._output` does for ``reproduce``).  The builder writes a
marker file (:data:`MARKER`) listing every file of the site it built; an existing ``--out``
is replaced only when it is empty or holds nothing but the files its marker lists, so a
folder with anything else in it (``thesis.tex``, ``.git``) is refused (exit 2) and nothing
is deleted.  Ctrl-C or SIGTERM stop the build (exit 130 / 143): Sphinx and npm run in their
own process group, which is ended with the build, the temporary folder is removed and the
previous site stays as it was.
"""

from __future__ import annotations

import argparse
import copy
import html
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
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


MARKER = ".rgrasp-site.json"
"""The file a build writes at the top of its site: which files it wrote (relative paths)."""


class BuildError(RuntimeError):
    """A step of the build failed; the message says why and what to do."""


class OutError(BuildError):
    """``--out`` cannot be used (a file, or a folder holding files a build did not write)."""


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived during the build (raised by the signal handler)."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def _raise_interrupted(signum, frame):
    raise Interrupted(signum)


# -- child processes: their own process group, ended with the build -----------------------------


def _end_group(proc, grace=5.0):
    """End ``proc`` and everything it started (its process group): SIGTERM, then SIGKILL."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue
    proc.wait()


def run_child(cmd, **kwargs):
    """Run ``cmd`` in its own process group and return ``(returncode, stdout, stderr)``.

    Whatever stops the wait (SIGINT, SIGTERM, an error) ends the whole group before it
    propagates: no orphan keeps writing after the build stopped.
    """
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, **kwargs)
    try:
        out, err = proc.communicate()
    except BaseException:
        # a second Ctrl-C must not cut the clean-up short: hold signals while the group ends
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:
            _end_group(proc)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        raise
    return proc.returncode, out, err


# -- the output folder ------------------------------------------------------------------------


def _files_under(folder):
    """Every file and folder under ``folder`` (relative paths, folders too)."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


def check_out(out):
    """Check an output folder before any work; return its absolute path.

    Raises
    ------
    OutError
        When ``out`` is a file, a file-system root, or an existing folder holding anything
        a build did not write (no marker, or files its marker does not list), or whose
        marker is not one this builder wrote (see :func:`_marker_files`).
    """
    path = Path(os.path.realpath(os.path.expanduser(os.fspath(out))))
    if path.parent == path:
        raise OutError(f"--out {path} is a file-system root; name a folder inside it")
    if not os.path.lexists(path):
        return path
    if not path.is_dir():
        raise OutError(f"--out {path} is a file, not a folder")
    entries = os.listdir(path)
    if not entries:
        return path
    marker = path / MARKER
    written = _marker_files(path) if os.path.lexists(marker) else set()
    odd = [f for f in _files_under(path) if f != MARKER and f not in written]
    if odd:
        shown = ", ".join(odd[:5]) + (f" and {len(odd) - 5} more" if len(odd) > 5 else "")
        hint = ""
        if not os.path.lexists(marker) and (path / "site-build.json").is_file():
            hint = (f" (a site built before the builder marked its output with {MARKER}: "
                    "delete it yourself if nothing else is in it)")
        raise OutError(f"--out {path} holds files a site build did not write ({shown}); it "
                       f"would be replaced: choose a new or empty folder{hint}")
    return path


def _marker_files(path):
    """The files the marker of a previous build in ``path`` lists, validated.

    A marker this builder wrote is a JSON object whose ``"files"`` is a list of relative
    POSIX paths, each present in ``path``; anything else vouches for nothing and is refused
    (an ``OutError`` saying what is wrong with it), so a hand-made or damaged marker cannot
    make a folder of other files look like a previous build.
    """
    marker = path / MARKER
    refuse = (f"; not a marker this builder wrote, so --out {path} would be replaced "
              "unchecked: choose a new or empty folder")
    if marker.is_symlink() or not marker.is_file():
        raise OutError(f"{marker} is not a regular file{refuse}")
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
    except (ValueError, OSError) as exc:
        raise OutError(f"{marker} cannot be read as JSON ({exc}){refuse}") from None
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise OutError(f"{marker} does not hold a list of file names under \"files\"{refuse}")
    for name in files:
        parts = name.split("/")
        if not name or name.startswith("/") or "\\" in name or any(
                p in ("", ".", "..") for p in parts):
            raise OutError(f"{marker} lists {name!r}, not a relative path inside the "
                           f"folder{refuse}")
        if not os.path.lexists(path / name):
            raise OutError(f"{marker} lists {name!r}, which is not there{refuse}")
    return set(files)


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_dead_partials(out):
    """Temporary folders of builds that were killed (SIGKILL) before they could clean up."""
    for p in out.parent.glob(f".{out.name}.partial-*"):
        pid = p.name.rsplit(".partial-", 1)[1].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _pid_alive(int(pid)):
            shutil.rmtree(p, ignore_errors=True)


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def swap_in(stage_dir, out):
    """Put the complete site ``stage_dir`` at ``out``; the previous site (if any) is removed.

    Signals are held for the few system calls of the swap (then delivered), so ``out`` is
    the previous site or the new one, never neither.
    """
    from rgrasp_viz.reproduce._output import _exchange

    os.chmod(stage_dir, 0o777 & ~_umask())  # mkdtemp's 0o700 would end up on ``out``
    held = {signal.SIGINT, signal.SIGTERM}
    previous_mask = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    gone = None
    try:
        check_out(out)  # again: it may have been filled while Sphinx ran
        if not os.path.lexists(out):
            os.rename(stage_dir, out)
        elif _exchange(stage_dir, out):
            gone = stage_dir  # now holds the previous site
        else:
            gone = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-{os.getpid()}-",
                                         dir=out.parent))
            os.rmdir(gone)
            os.rename(out, gone)
            try:
                os.rename(stage_dir, out)
            except OSError:
                os.rename(gone, out)
                raise
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous_mask)
    if gone is not None:
        shutil.rmtree(gone, ignore_errors=True)


def _say(msg):
    print(msg, flush=True)


# -- 1. notebooks -> static notebooks ----------------------------------------------------------


def _binder_for(name):
    from rgrasp_viz.viz._static import BINDER_LAB

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
    from rgrasp_viz.viz._static import BINDER_LAB, figure_html

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
    """Copy ``site/`` and the static notebooks into ``work/src`` (a new folder); return the
    source dir and one line per notebook."""
    src = work / "src"
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


# -- 1b. kernel-free sliders: parameter sweeps solved now, dragged on the page -------------------

SLIDER_PAGE = "sliders"
"""The page (``sliders.md`` in the staged source) holding the sweep figures."""


def sweep_problems():
    """The two problems of the slider page with their dashboards' settings.

    Returns a list of ``(key, title, problem, method, defaults, grids)``: ``defaults`` the
    solve arguments every run shares (the parameter swept replaces its own), ``grids`` the
    values of ``m``, ``J``, ``eta`` and ``s`` (each containing its default).
    """
    import rgrasp_viz as rv

    explainer = rv.make_regression(n=100, d=30, s_star=3, random_state=0)  # notebook 0
    eta_e = rv.default_eta(explainer, "svrgsp", 3, inner="paper")
    classroom = rv.make_regression("classroom", random_state=0)  # notebook 4
    eta_c = rv.default_eta(classroom, "svrgsp+", 24)
    return [
        ("explainer", "The explainer's problem (notebook 0: n = 100, d = 30, s* = 3)",
         explainer, "svrgsp+",
         {"s": 3, "J": 60, "m": 6, "eta": eta_e, "inner": "paper", "random_state": 0},
         {"m": [1, 2, 3, 6, 10, 20, 60], "J": [15, 30, 60, 120, 200, 400],
          "eta": [f * eta_e for f in (0.25, 0.5, 1, 2, 4, 8)], "s": [1, 2, 3, 4, 6, 8]}),
        ("tuning", "The tuning notebook's problem (notebook 4: classroom, n = 500, d = 1000, "
         "s* = 20)", classroom, "svrgsp+",
         {"s": 24, "J": 2 * classroom.n, "m": 6, "eta": eta_c, "inner": "paper",
          "random_state": 0},
         {"m": [1, 2, 3, 6, 12, 30], "J": [100, 250, 500, 1000, 2000, 4000],
          "eta": [f * eta_c for f in (0.25, 0.5, 1, 1.5, 2, 3, 4)],
          "s": [12, 16, 20, 24, 30, 40]}),
    ]


def exact_fstar(problem, runs):
    """``F*`` below every run shown: the shared reference without extra runs
    (:func:`rgrasp_viz.reference.reference`, ``run=False``: the exact least-squares fits on
    the true support and on the support of every run's best and final iterate)."""
    from rgrasp_viz.reference import reference

    return reference(problem, list(runs), run=False)


def slider_sweeps(problems=None):
    """Solve every sweep of the slider page: ``{key: (title, {param: figure})}``."""
    import rgrasp_viz as rv
    from rgrasp_viz.viz.sliders import SWEEP_PARAMETERS, parameter_sweep_figure

    out = {}
    for key, title, prob, method, defaults, grids in (problems or sweep_problems()):
        runs = {}
        for param in SWEEP_PARAMETERS:
            runs[param] = [(v, rv.solve(prob, method, **{**defaults, param: v}, warn=False))
                           for v in grids[param]]
        fs = exact_fstar(prob, [r for rs in runs.values() for _, r in rs])
        out[key] = (title, {param: parameter_sweep_figure(rs, param, default=defaults[param],
                                                          fstar=fs)
                            for param, rs in runs.items()})
    return out


CONDITION_MAP = NOTEBOOKS / "data" / "condition-map.json"
"""The committed condition map (``scripts/precompute_condition_map.py``) the rho slider draws."""


def correlation_figure(path=CONDITION_MAP, shape="paper"):
    """The rho slider's figure from the committed condition map, and the record."""
    from rgrasp_viz.viz.sliders import correlation_sweep_figure

    try:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BuildError(f"the condition map {path} cannot be read ({exc}); run "
                         "scripts/precompute_condition_map.py") from exc
    return correlation_sweep_figure(record, shape), record


def _correlation_section(fig, record):
    """Markdown: the rho slider's prose and figure."""
    from rgrasp_viz.viz._static import figure_html

    shp = record["shapes"]["paper"]
    return [
        "## ρ: correlation of the design (where variance reduction pays)", "",
        "Every method of the paper with a tuned step size on the paper's synthetic design "
        f"(n = {shp['n']}, d = {shp['d']}, s* = {shp['s_star']}) whose features are "
        "equicorrelated with correlation ρ (setting 1 of the paper is ρ = 0, setting 2 is "
        "ρ = 0.1). The runs come from `python -m rgrasp_viz reproduce condition-map`, "
        "committed with the course (seed "
        f"{record['seeds'][0]} drawn; passes in the title are medians over seeds "
        f"{', '.join(map(str, record['seeds']))}). Move ρ up: the full-gradient smoothness L "
        "grows with it while the per-sample ‖w_i‖² stays near d on average (its maximum grows "
        "far more slowly), so FG-HT's steps shrink and its lead over the variance-reduced "
        "methods shrinks and vanishes; the title names the fastest method to 10⁻⁴ of the "
        "initial gap and FG-HT's passes. [Notebook 4½](notebooks/045-variance-reduction.ipynb) "
        "explains why and shows the whole map.",
        "", "```{raw} html", '<div class="rgrasp-plotly rgrasp-rho-sweep" data-param="rho">',
        figure_html(fig.to_plotly_json(), "rgrasp-rho-sweep"), "</div>", "```", ""]


def slider_page(sweeps, correlation=None):
    """The Markdown of the slider page: prose, then one figure per problem and parameter,
    then the rho slider (``correlation``: :func:`correlation_figure`'s pair)."""
    from rgrasp_viz.viz._static import figure_html
    from rgrasp_viz.viz.sliders import SWEEP_PARAMETERS

    lines = [
        "# Drag m, J, η, s and ρ without a kernel",
        "",
        "The dashboards of the course (`rv.explore`) solve again whenever a slider moves, "
        "which needs a Python kernel (Binder, or `make lab`). The figures below need none: "
        "every run was solved when this site was built, one per value of the slider, with "
        "the other parameters at their defaults, and the slider (drawn by plotly.js in your "
        "browser) shows the run of the value you pick: the objective gap and the relative "
        "error by effective pass, as the dashboard draws them, against one `F*` for all "
        "runs of a problem (the exact least-squares fit on the best support found, below "
        "every run), on fixed axes. The title says how each run ended (`DIVERGED` for a "
        "step size that is too large).",
        "",
    ]
    for key, (title, figs) in sweeps.items():
        lines += [f"## {title}", ""]
        for param, fig in figs.items():
            html_fig = figure_html(fig.to_plotly_json(), f"rgrasp-sweep-{key}-{param}")
            lines += [f"### {param}: {SWEEP_PARAMETERS[param]}", "", "```{raw} html",
                      f'<div class="rgrasp-plotly rgrasp-sweep" data-param="{param}">',
                      html_fig, "</div>", "```", ""]
    if correlation is not None:
        lines += _correlation_section(*correlation)
    return "\n".join(lines)


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
    code, _, err = run_child(cmd)
    if code != 0 or not es5.is_dir():
        raise BuildError(f"`{' '.join(cmd)}` failed:\n{err[-2000:]}")
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


def sphinx_build(src, out, doctrees):
    try:
        import myst_nb  # noqa: F401
        import sphinx  # noqa: F401
        import sphinx_book_theme  # noqa: F401
    except ImportError as exc:
        raise BuildError(f"the site needs Sphinx, MyST-NB and the Sphinx Book Theme ({exc}): "
                         "`pip install -e '.[site]'` (or `make site`)") from exc
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-E", "-q",
           "-d", str(doctrees), str(src), str(out)]
    env = dict(os.environ, PYDEVD_DISABLE_FILE_VALIDATION="1")
    code, _, err = run_child(cmd, env=env, cwd=ROOT)
    if code != 0:
        raise BuildError(f"Sphinx failed (warnings are errors):\n{err[-6000:]}")
    # the themes' Jinja macro files land in _static as they are: templates, not pages
    for junk in ("_static/webpack-macros.html", "_static/sbt-webpack-macros.html",
                 ".buildinfo", ".doctrees"):
        p = out / junk
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()


_MATH = re.compile(r'<(span|div) class="math notranslate nohighlight"([^>]*)>(.*?)</\1>',
                   re.DOTALL)
_EQNO = re.compile(r'<span class="eqno">.*?</span>\s*</span>|<span class="eqno">.*?</span>',
                   re.DOTALL)


def annotate_math(out):
    """Give every math element of the built pages its plain-text form (``data-text``).

    MathJax typesets the element itself; the attribute is what the search results show
    (``_static/rgrasp-search.js``), where MathJax does not run.  Returns the count.
    """
    sys.path.insert(0, str(SITE_SRC))
    try:
        from latex_text import plain_text
    finally:
        sys.path.remove(str(SITE_SRC))

    def add(m):
        tag, attrs, inner = m.groups()
        if "data-text=" in attrs:
            return m.group(0)
        tex = html.unescape(re.sub(r"<[^>]+>", "", _EQNO.sub("", inner)))
        text = html.escape(plain_text(tex), quote=True)
        return (f'<{tag} class="math notranslate nohighlight"{attrs} data-text="{text}">'
                f'{inner}</{tag}>')

    n = 0
    for path in out.rglob("*.html"):
        page = path.read_text(encoding="utf-8")
        new, k = _MATH.subn(add, page)
        if k:
            path.write_text(new, encoding="utf-8")
            n += k
    return n


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
    """Run the four steps into a temporary folder beside ``out`` and swap it in; return a
    dict of facts (pages, size, seconds).  ``out`` is checked first (:func:`check_out`)."""
    t0 = time.perf_counter()
    out = check_out(out)
    notebooks = sorted(NOTEBOOKS.glob("*.ipynb")) if notebooks is None else list(notebooks)
    if not notebooks:
        raise BuildError(f"no notebooks found in {NOTEBOOKS}")
    work.mkdir(parents=True, exist_ok=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    _remove_dead_partials(out)
    scratch = Path(tempfile.mkdtemp(prefix=f"build-{os.getpid()}-", dir=work))
    partial = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-{os.getpid()}-",
                                    dir=out.parent))
    try:
        src, lines = stage(scratch, notebooks)
        _say(f"staged {len(notebooks)} notebooks:")
        for line in lines:
            _say(line)
        t_sweeps = time.perf_counter()
        (src / f"{SLIDER_PAGE}.md").write_text(
            slider_page(slider_sweeps(), correlation_figure()), encoding="utf-8")
        _say(f"solved the slider sweeps in {time.perf_counter() - t_sweeps:.1f} s")
        bundle_assets(src, work)
        t1 = time.perf_counter()
        site = partial / "site"
        sphinx_build(src, site, scratch / "doctrees")
        t2 = time.perf_counter()
        annotate_math(site)
        remote = remote_references(site)
        if remote:
            listing = "\n".join(f"  {p.relative_to(site)}: {u}" for p, u in remote[:30])
            raise BuildError(f"{len(remote)} resource(s) would be fetched from another "
                             f"host:\n{listing}")
        pages = site_pages(site)
        facts = {"pages": pages, "bytes": tree_size(site),
                 "seconds": time.perf_counter() - t0, "sphinx_seconds": t2 - t1,
                 "notebooks": [p.name for p in notebooks]}
        (site / "site-build.json").write_text(json.dumps(facts, indent=1), encoding="utf-8")
        (site / MARKER).write_text(json.dumps({"builder": "scripts/build_site.py",
                                               "files": _files_under(site)}, indent=0),
                                   encoding="utf-8")
        swap_in(site, out)
        return facts
    finally:
        shutil.rmtree(partial, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "site",
                        help="output folder (default build/site; replaced when it is empty "
                             "or a previous build, refused otherwise)")
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "site-work",
                        help="npm cache and temporary staging folder (default build/site-work)")
    parser.add_argument("--notebooks", type=Path, nargs="+", default=None,
                        help="the notebooks to publish (default: notebooks/*.ipynb)")
    args = parser.parse_args(argv)
    handlers = {sig: signal.signal(sig, _raise_interrupted)
                for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        facts = build(args.out, args.work.resolve(), notebooks=args.notebooks)
    except OutError as exc:
        print(f"build_site: {exc}", file=sys.stderr)
        return 2
    except BuildError as exc:
        print(f"build_site: {exc}", file=sys.stderr)
        return 1
    except Interrupted as exc:
        name = signal.Signals(exc.signum).name
        print(f"build_site: stopped by {name}; the previous site (if any) is as it was",
              file=sys.stderr)
        return 128 + exc.signum
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    _say(f"built {len(facts['pages'])} pages into {args.out} in {facts['seconds']:.1f} s "
         f"(Sphinx {facts['sphinx_seconds']:.1f} s); {facts['bytes'] / 1e6:.1f} MB; "
         "no resource from another host")
    _say(f"open it: python -m http.server -d {args.out}  ->  http://localhost:8000")
    return 0


if __name__ == "__main__":
    sys.exit(main())
