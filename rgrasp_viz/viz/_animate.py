"""Animations of recorded runs for slides and static pages: :func:`animate`.

A frame is one moment of one or several runs: for each run, a row of panels drawn by the
pure figure builders (:func:`~rgrasp_viz.viz.figures.coefficients_spec`: ``|x|`` with the
current threshold, ``x*`` and ``Z``; :func:`~rgrasp_viz.viz.figures.support_raster_spec`
with a cursor; :func:`~rgrasp_viz.viz.figures.progress_spec`: the objective so far).  The
panels are composed into one Plotly figure per frame, rendered to PNG by kaleido with a
local Chromium (as :func:`~rgrasp_viz.viz.figures.export` does), and written as an animated
GIF with Pillow, plus an MP4 when an ffmpeg encoder is available (``ffmpeg`` on ``PATH``, or
the binary of the ``imageio-ffmpeg`` package).  Several runs share one time axis: effective
passes, so SVRGHT and SVRGSP are compared at equal cost.

Install the optional pieces with ``pip install "rgrasp_viz[animate]"`` (kaleido, Pillow,
imageio-ffmpeg); Chromium comes from the system (``apt-get install chromium``).
"""

from __future__ import annotations

import base64
import dataclasses
import io
import json
import re
import shutil
import subprocess
import threading
from pathlib import Path

import numpy as np
import plotly.io as pio

from .._io import atomic_path
from .._progress import bar as progress_bar
from ..analysis import as_traces, replay_frames
from ..solvers import run_label
from . import figures as F

__all__ = ["VIEWS", "Animation", "animate", "animation_frames", "compose", "find_encoder"]

VIEWS = ("coefficients", "support", "objective")
"""The panels a run can show in a frame, left to right in this order."""

_WEIGHTS = {"coefficients": 2.0, "support": 1.0, "objective": 1.0}
MAX_RUNS = 4
"""At most this many runs side by side (one row each)."""

_KALEIDO_LOCK = threading.Lock()


@dataclasses.dataclass(frozen=True)
class Animation:
    """What :func:`animate` wrote.

    Attributes
    ----------
    path : pathlib.Path
        The GIF.
    mp4 : pathlib.Path or None
        The MP4 twin (None when no encoder was found or ``mp4=False``).
    n_frames : int
        Distinct frames (the last one is held for ``hold`` seconds).
    size : (int, int)
        Width and height in pixels.
    fps : float
    seconds : float
        Playing time of one loop.
    nbytes : int
        Size of the GIF in bytes.
    frames : list of tuple
        The moment of each frame: per run ``(t, step)`` (``step`` None for ``x^t``).
    passes : list of float
        The position of each frame on the shared axis of effective passes.
    """

    path: Path
    mp4: Path | None
    n_frames: int
    size: tuple
    fps: float
    seconds: float
    nbytes: int
    frames: list
    passes: list

    def _repr_mimebundle_(self, include=None, exclude=None):
        """The GIF itself (so that a notebook shows it, and a static page built from the
        notebook does too), and a one-line text summary."""
        data = base64.b64encode(self.path.read_bytes()).decode("ascii")
        return {"image/gif": data, "text/plain": repr(self)}

    def __repr__(self):
        mp4 = "" if self.mp4 is None else f", mp4={self.mp4.name!r}"
        return (f"Animation({self.path.name!r}{mp4}, {self.n_frames} frames, "
                f"{self.size[0]}x{self.size[1]} px, {self.seconds:.1f} s, "
                f"{self.nbytes / 1e6:.2f} MB)")


# -- which moments ---------------------------------------------------------------------------


def animation_frames(runs, max_frames=48, until=None):
    """The moments an animation shows: one state per run at each position of a grid of
    effective passes, consecutive repeats removed.

    Parameters
    ----------
    runs : Trace, SolveResult or list of them
    max_frames : int, default 48
        Points of the grid (from 0 to the last pass of the longest run, or ``until``).
    until : float, optional
        Last position (effective passes) shown; default: the end of the longest run.

    Returns
    -------
    states : list of tuple
        One entry per frame: per run, the ``(t, step)`` it shows (its last recorded state at
        or before the position).
    passes : list of float
        The position of each frame.
    """
    traces = as_traces(runs)
    if int(max_frames) < 2:
        raise ValueError(f"max_frames must be >= 2, got {max_frames}")
    replays = [replay_frames(tr) for tr in traces]
    ends = [float(p[-1]) for _, p in replays if np.isfinite(p[-1])]
    top = float(until) if until is not None else (max(ends) if ends else 0.0)
    if not top > 0:
        top = 1.0
    grid = np.linspace(0.0, top, int(max_frames))
    states, where = [], []
    for pos in grid:
        state = []
        for frames, fpos in replays:
            i = max(int(np.searchsorted(fpos, pos + 1e-12, side="right")) - 1, 0)
            state.append(frames[i])
        state = tuple(state)
        if not states or state != states[-1]:
            states.append(state)
            where.append(float(pos))
    return states, where


# -- one frame = one composed figure -----------------------------------------------------------

_AXIS = re.compile(r"^([xy])axis(\d*)$")


def _axis_ref(name):
    """'x', 'x2' -> ('x', '' / '2'); None for anything else."""
    m = re.match(r"^([xy])(\d*)$", str(name))
    return (m.group(1), m.group(2)) if m else None


_PANEL_TITLE_PX, _PANEL_AXIS_PX = 44, 46
"""Pixels of a panel of :func:`compose` above its plot area (its title) and below it (its
x axis): a row of ``row_height`` pixels has ``row_height - 90`` for the plot."""

_FRAME_LABEL_CHARS = 8
"""Longest raster row label in an animation frame: the labels sit in the gap between two
panels (72 px), so a longer feature name is cut (see :func:`~rgrasp_viz.viz.figures.
row_ticks`)."""


def compose(grid, *, widths=None, row_height=300, width=960, title=None, footer=None):
    """Put single-figure specs side by side and in rows, in one Plotly figure.

    Each spec keeps its own axes (renamed), domains (scaled into its cell), shapes and
    annotations; its title becomes an annotation above its cell.  Legends and colour bars
    are hidden (an animation frame is read at a glance; ``footer`` can say what the colours
    mean).

    Parameters
    ----------
    grid : list of list of dict
        ``grid[row][col]``: a builder's ``*_spec`` output (``{"data", "layout"}``).
    widths : list of float, optional
        Relative column widths (default equal).
    row_height : int
        Pixels per row.
    width : int
        Pixels of the whole figure.
    title, footer : str, optional
        One line above the panels and one below.

    Returns
    -------
    dict
        A figure dict (plain, not validated).
    """
    n_rows = len(grid)
    n_cols = max(len(r) for r in grid)
    widths = [1.0] * n_cols if widths is None else [float(w) for w in widths]
    top_px = 40 if title else 12
    bottom_px = 14 + 14 * (footer.count("<br>") + 1) if footer else 8
    height = int(top_px + bottom_px + n_rows * row_height)
    height += height % 2  # even sizes: what H.264 (MP4) needs
    title_px, axis_px = _PANEL_TITLE_PX, _PANEL_AXIS_PX
    inner_w = int(width) - 56 - 16  # the plot area between the margins, in pixels
    gap_x = 72 / inner_w * sum(widths) / max(1.0 - 72 * (n_cols - 1) / inner_w, 0.2)
    total = sum(widths) + gap_x * (n_cols - 1)
    data, layout = [], {"width": int(width) + int(width) % 2, "height": height,
                        "showlegend": False, "template": F.TEMPLATE,
                        "margin": {"l": 56, "r": 16, "t": top_px, "b": bottom_px},
                        "annotations": [], "shapes": [], "font": {"size": 11}}
    plot_h = height - top_px - bottom_px
    n_axis = 0  # axis pairs allocated so far
    x_left = 0.0
    cols = []
    for c in range(n_cols):
        x0 = x_left / total
        x1 = (x_left + widths[c]) / total
        cols.append((x0, x1))
        x_left += widths[c] + gap_x
    for r, row in enumerate(grid):
        cell_top = 1.0 - r * row_height / plot_h
        cell_bottom = 1.0 - (r + 1) * row_height / plot_h
        y1 = cell_top - title_px / plot_h
        y0 = cell_bottom + axis_px / plot_h
        for c, spec in enumerate(row):
            x0, x1 = cols[c]
            lay = spec.get("layout", {})
            # every axis pair of the panel ("", "2", ...) gets the next global number
            suffixes = {_AXIS.match(k).group(2) for k in lay if _AXIS.match(k)}
            for tr in spec.get("data", []):
                for key in ("xaxis", "yaxis"):
                    parsed = _axis_ref(tr.get(key, key[0]))
                    if parsed:
                        suffixes.add(parsed[1])
            suffixes.add("")
            mapping = {}
            for num in sorted(suffixes, key=lambda v: int(v or 1)):
                n_axis += 1
                new = "" if n_axis == 1 else str(n_axis)
                mapping["x" + num], mapping["y" + num] = "x" + new, "y" + new

            def ref(name, mapping=mapping):
                return mapping.get(str(name), name)

            def sx(v, x0=x0, x1=x1):
                return x0 + float(v) * (x1 - x0)

            def sy(v, y0=y0, y1=y1):
                return y0 + float(v) * (y1 - y0)

            for name, new in mapping.items():
                kind, _ = _axis_ref(name)
                axis = dict(lay.get(f"{kind}axis{name[1:]}", {}))
                a, b = axis.get("domain", [0, 1])
                axis["domain"] = [sx(a), sx(b)] if kind == "x" else [sy(a), sy(b)]
                for key in ("anchor", "matches", "overlaying", "scaleanchor"):
                    if key in axis and axis[key] != "free":
                        axis[key] = ref(axis[key])
                if "anchor" not in axis:
                    axis["anchor"] = ref(("y" if kind == "x" else "x") + name[1:])
                axis["title"] = {**(axis.get("title") or {}), "standoff": 4,
                                 "font": {"size": 11}}
                layout[f"{kind}axis{new[1:]}"] = axis
            for tr in spec.get("data", []):
                tr = dict(tr)
                tr["xaxis"] = ref(tr.get("xaxis", "x"))
                tr["yaxis"] = ref(tr.get("yaxis", "y"))
                tr["showlegend"] = False
                if tr.get("type") == "heatmap":
                    tr["showscale"] = False
                data.append(tr)
            for shape in lay.get("shapes", []) or []:
                shape = dict(shape)
                for axis_key, keys, scale in (("xref", ("x0", "x1"), sx),
                                              ("yref", ("y0", "y1"), sy)):
                    r_ = shape.get(axis_key, axis_key[0])
                    if r_ == "paper":
                        for k in keys:
                            if k in shape:
                                shape[k] = scale(shape[k])
                    else:
                        shape[axis_key] = ref(r_)
                layout["shapes"].append(shape)
            for ann in lay.get("annotations", []) or []:
                ann = dict(ann)
                for axis_key, k, scale in (("xref", "x", sx), ("yref", "y", sy)):
                    r_ = ann.get(axis_key, axis_key[0])
                    if r_ == "paper":
                        ann[k] = scale(ann.get(k, 0.5))
                    else:
                        ann[axis_key] = ref(r_)
                layout["annotations"].append(ann)
            text = (lay.get("title") or {}).get("text")
            if text:
                layout["annotations"].append({
                    "text": text, "xref": "paper", "yref": "paper", "x": x0, "y": y1,
                    "xanchor": "left", "yanchor": "bottom", "yshift": 4, "showarrow": False,
                    "align": "left", "font": {"size": 12}})
    if title:
        layout["annotations"].append({
            "text": title, "xref": "paper", "yref": "paper", "x": 0, "y": 1,
            "xanchor": "left", "yanchor": "bottom", "yshift": top_px - 30,
            "showarrow": False, "font": {"size": 15}})
    if footer:
        layout["annotations"].append({
            "text": footer, "xref": "paper", "yref": "paper", "x": 0, "y": 0,
            "xanchor": "left", "yanchor": "top", "yshift": -2, "align": "left",
            "showarrow": False, "font": {"size": 10, "color": "#555"}})
    return {"data": data, "layout": layout}


# -- frames of runs ----------------------------------------------------------------------------

_FOOTER = {
    "objective": "objective: F at every recorded moment so far (the dot: now)",
    "coefficients": "|xⱼ| (filled: j in supp x*) · black ticks: |x*ⱼ| · dashed red: "
                    "s-th largest |xⱼ|, what Hₛ keeps",
    "support": "support: green kept, true · orange kept, false · blue in T, cut · "
               "pink true, missed",
}


def _cursor(trace, t, step):
    """Position of the support-raster cursor (fractional outer iteration)."""
    if step is None:
        return float(t)
    per = int(trace.meta.get("steps_per_iter", 0) or 0)
    return t - 1 + (step / per if per else 1.0)


class _Panels:
    """The specs of one run's panels at any of its moments (the raster is built once)."""

    def __init__(self, trace, views, states, top, max_rows, plot_px=None):
        self.trace = trace
        if plot_px is None:  # the plot area of a panel holding max_rows rows
            plot_px = F.ROW_PX * max(int(max_rows), 1)
        self.views = views
        self.top = top
        self.raster = None
        if "support" in views:
            # the raster is squeezed into its panel: labels thinned to what the panel holds
            # and cut short (they sit between two panels); no axis title (room for them)
            raster = F.fit_row_labels(
                F.support_raster_spec(trace, max_rows=max_rows, cursor=0.0), plot_px,
                max_chars=_FRAME_LABEL_CHARS)
            lay = raster["layout"]
            self.raster = {"data": raster["data"], "layout": {
                **lay, "yaxis": {**lay["yaxis"], "title": {"text": ""}}}}
        # one |x| scale for the whole animation: axes that jump would hide the motion
        peak = max((float(np.max(np.abs(F.snapshot(trace, t, step)), initial=0.0))
                    for t, step in states), default=0.0)
        xt = np.abs(np.asarray(trace.x_true, dtype=np.float64))
        peak = max(peak, float(xt.max(initial=0.0)))
        self.coef_range = [0.0, 1.08 * peak if peak > 0 else 1.0]
        # one objective scale too (log10), from every value the run recorded
        f = np.concatenate([np.asarray(trace.objective, dtype=np.float64),
                            np.asarray(trace.ck_objective, dtype=np.float64)])
        f = f[np.isfinite(f) & (f > 0)]
        self.obj_range = ([float(np.log10(f.min())) - 0.05, float(np.log10(f.max())) + 0.05]
                          if f.size else None)

    def row(self, t, step):
        out = []
        for view in self.views:
            if view == "coefficients":
                spec = F.coefficients_spec(self.trace, t, step)
                spec["layout"]["yaxis"] = {**spec["layout"]["yaxis"],
                                           "range": self.coef_range, "autorange": False}
            elif view == "support":
                spec = F.with_cursor(self.raster, _cursor(self.trace, t, step))
                k = spec["layout"]["meta"]["label_step"]
                every = "" if k == 1 else f" · every {_ordinal(k)} row labelled"
                title = (f"Support of {F.esc(run_label(self.trace))}<br><sup>★ true support · "
                         f"dotted line: now{every}</sup>")
                spec = {"data": spec["data"], "layout": {**spec["layout"],
                                                          "title": {"text": title}}}
            else:
                spec = F.progress_spec(self.trace, t, step)
                # no faint "whole run" line: it joins the ends of the epochs only, and over one
                # epoch it was an unexplained straight diagonal from F(x^0) to F(x^1)
                spec["data"] = [tr for tr in spec["data"]
                                if (tr.get("meta") or {}).get("role") != "whole"]
                spec["layout"]["xaxis"] = {**spec["layout"]["xaxis"],
                                           "range": [0, 1.02 * self.top]}
                if self.obj_range is not None:
                    spec["layout"]["yaxis"] = {**spec["layout"]["yaxis"],
                                               "range": self.obj_range, "autorange": False}
                    if self.obj_range[1] - self.obj_range[0] >= 2:
                        # decades only: in a short panel plotly.js adds 2s and 5s between
                        # the powers of ten, small labels crowding the large ones
                        spec["layout"]["yaxis"]["dtick"] = 1
            out.append(spec)
        return out


def _ordinal(k):
    """``2nd``, ``3rd``, ``11th``, ``22nd``..."""
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def _moment(trace, t, step):
    return f"x^{t}" if step is None else f"iteration {t}, step {step}"


def _frame_title(labels, traces, state, pos, title):
    if title is not None:
        head = title
    elif len(traces) == 1:
        head = labels[0]
    else:
        head = " vs ".join(labels)
    head = F.esc(head)  # run labels and a caller's headline are text, never HTML
    where = (f"{_moment(traces[0], *state[0])} · " if len(traces) == 1 else "")
    return f"<b>{head}</b>   <span style='color:#555'>{where}{pos:.2f} effective passes</span>"


# -- rendering and encoding --------------------------------------------------------------------


def find_encoder():
    """An ffmpeg executable for MP4 output: ``ffmpeg`` on ``PATH``, else the binary that the
    ``imageio-ffmpeg`` package ships; None when there is neither."""
    exe = shutil.which("ffmpeg")
    if exe:
        return exe
    try:
        import imageio_ffmpeg  # optional: the animate extra
    except ImportError:
        return None
    try:
        exe = imageio_ffmpeg.get_ffmpeg_exe()
    except (RuntimeError, OSError):
        return None
    return exe if exe and Path(exe).is_file() else None


def _requirements(need_mp4):
    """Import Pillow and kaleido and find Chromium (and ffmpeg): clear errors, no work."""
    try:
        from PIL import Image  # noqa: F401  # optional: the animate extra
    except ImportError as exc:
        raise RuntimeError("rv.animate needs Pillow to write GIFs: "
                           "pip install 'rgrasp_viz[animate]'") from exc
    try:
        import kaleido  # noqa: F401  # optional: the animate extra
    except ImportError as exc:
        raise RuntimeError("rv.animate renders frames with kaleido (>= 1.0): "
                           "pip install 'rgrasp_viz[animate]'") from exc
    chromium = F.find_chromium()
    if chromium is None:
        raise RuntimeError(
            "rv.animate renders frames with kaleido, which needs Chromium or Chrome, and none "
            "was found (looked at $RGRASP_VIZ_CHROMIUM, $RGRASP_CHROMIUM, $BROWSER_PATH and "
            "chromium/google-chrome on PATH). Install one (e.g. `apt-get install chromium`) "
            "or set RGRASP_VIZ_CHROMIUM=/path/to/chrome.")
    encoder = find_encoder() if need_mp4 is not False else None
    if need_mp4 is True and encoder is None:
        raise RuntimeError("mp4=True needs an ffmpeg encoder: none on PATH and the "
                           "imageio-ffmpeg package is not installed "
                           "(pip install 'rgrasp_viz[animate]')")
    return chromium, encoder


def _render(fig, chromium):
    """PNG bytes of one figure dict (kaleido's shared browser, started once)."""
    import kaleido  # optional: the animate extra

    payload = json.loads(pio.to_json(fig, validate=False))
    opts = {"format": "png", "width": fig["layout"]["width"],
            "height": fig["layout"]["height"], "scale": 1}
    with _KALEIDO_LOCK:
        try:
            kaleido.start_sync_server(path=chromium, mathjax=False, silence_warnings=True)
            return kaleido.calc_fig_sync(payload, opts=opts)
        except Exception as exc:  # noqa: BLE001 - re-raised with the browser named
            raise RuntimeError(f"rendering a frame with kaleido and {chromium} failed: "
                               f"{exc}") from exc


def _palette_image(images):
    """One palette for every frame (colours stay put from frame to frame), taken from the
    first, middle and last frames."""
    from PIL import Image  # optional: the animate extra

    picks = [images[0], images[len(images) // 2], images[-1]]
    w = max(im.width for im in picks)
    strip = Image.new("RGB", (w, sum(im.height for im in picks)), "white")
    y = 0
    for im in picks:
        strip.paste(im, (0, y))
        y += im.height
    return strip.quantize(colors=128, method=Image.Quantize.MEDIANCUT)


def _write_gif(path, images, durations):
    from PIL import Image  # optional: the animate extra

    pal = _palette_image(images)
    frames = [im.quantize(palette=pal, dither=Image.Dither.NONE) for im in images]
    with atomic_path(path) as tmp:
        frames[0].save(tmp, format="GIF", save_all=True, append_images=frames[1:],
                       duration=durations, loop=0, disposal=1)


def _write_mp4(path, images, fps, hold_frames, encoder):
    w, h = images[0].size
    with atomic_path(path) as tmp:
        cmd = [encoder, "-y", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "rgb24",
               "-s", f"{w}x{h}", "-r", f"{fps:g}", "-i", "-", "-an", "-c:v", "libx264",
               "-pix_fmt", "yuv420p", "-crf", "26", "-movflags", "+faststart", str(tmp)]
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            for k, im in enumerate(images):
                repeat = 1 + (hold_frames if k == len(images) - 1 else 0)
                for _ in range(repeat):
                    proc.stdin.write(im.tobytes())
            proc.stdin.close()
        except BrokenPipeError:
            pass
        err = proc.stderr.read().decode(errors="replace")
        if proc.wait() != 0:
            raise RuntimeError(f"ffmpeg ({encoder}) could not write the MP4: {err[-1500:]}")


def _say_missing(exc):
    """The one line :func:`animate` prints instead of raising (``on_missing="warn"``)."""
    print(f"No animation drawn here: {exc}", flush=True)


class _Progress:
    """Frame progress: ``progress(i, n)`` when callable, else a ``tqdm.auto`` bar
    (:mod:`rgrasp_viz._progress`) unless ``progress`` is False."""

    def __init__(self, progress, n):
        self.n = n
        self.fn = progress if callable(progress) else None
        self.bar = (None if self.fn is not None else
                    progress_bar(n, "rv.animate", progress is not False, "frame"))

    def __call__(self, i):
        if self.fn is not None:
            self.fn(i, self.n)
        else:
            self.bar.update()

    def close(self):
        if self.bar is not None:
            self.bar.close()


def animate(runs, path, *, views=VIEWS, max_frames=48, fps=8.0, hold=1.5, until=None,
            width=960, row_height=280, max_rows=40, title=None, mp4=None, progress=True,
            on_missing="raise"):
    """Write an animated GIF (and an MP4 when an encoder is available) of recorded runs.

    Each frame shows, per run, a row of panels: the coefficients ``|x|`` with the current
    threshold (what ``H_s`` keeps), ``x*`` and ``Z``; the support raster with a cursor; and
    the objective so far.  Several runs are shown one row each, in step on a shared axis of
    effective passes (e.g. SVRGHT against SVRGSP: equal cost at every frame).  Inner steps
    are shown when the runs were solved with ``record_iterates=True`` (every
    ``record_every`` steps), otherwise outer iterations only.

    Parameters
    ----------
    runs : SolveResult, Trace or list of them
        At most ``MAX_RUNS`` (4).
    path : str or path-like
        The ``.gif`` to write (its folder must exist).  The MP4 goes next to it, with the
        suffix ``.mp4``.
    views : sequence of {"coefficients", "support", "objective"}
        Panels per run, left to right.
    max_frames : int, default 48
        Positions on the passes axis; consecutive identical moments are merged, so the
        animation may have fewer frames.
    fps : float, default 8
        Frames per second (the default length is a few seconds).
    hold : float, default 1.5
        Seconds the last frame stays on screen before the loop restarts.
    until : float, optional
        Last position shown, in effective passes (default: the end of the longest run):
        e.g. ``until=2`` for the first epoch of an SVRG method with ``J = n``.
    width, row_height : int
        Frame width and the height of each run's row, in pixels.
    max_rows : int, default 40
        Coordinates shown in the support raster, at most as many as its panel holds at
        ``ROW_PX`` pixels a row.  The true support is always shown: when it alone is more,
        only every k-th row is labelled (the frame's subtitle says so), so that labels never
        overlap; long feature names are cut to a few characters.
    title : str, optional
        Headline of every frame (default: the runs' labels).
    mp4 : None, bool
        None: also write an MP4 when an encoder is found (see :func:`find_encoder`);
        True: require it; False: GIF only.
    progress : bool or callable, default True
        True: a ``tqdm.auto`` bar of the rendered frames (a widget in Jupyter, a bar on
        stderr in a terminal, nothing when stderr is not a terminal); False: nothing; a
        callable: ``progress(i, n)`` after each rendered frame instead.  None is read as
        True.
    on_missing : {"raise", "warn"}, default "raise"
        What to do when nothing can be drawn on this machine (Pillow, kaleido or Chromium
        missing, or the browser failing on the first frame): raise a ``RuntimeError``, or
        print one line saying why and return None.  Notebooks use ``"warn"`` so that Run
        All goes on where the optional pieces are not installed (``make lab`` does not
        install them).  Bad runs or options always raise.

    Returns
    -------
    Animation or None
        Paths, frame count, size, length; it displays as the GIF in a notebook.  None only
        with ``on_missing="warn"`` when nothing could be drawn.

    Raises
    ------
    TypeError, ValueError
        For bad runs, path or options.
    RuntimeError
        When Pillow, kaleido or Chromium (or, with ``mp4=True``, ffmpeg) is missing, or
        rendering fails (with ``on_missing="warn"``: only for later frames and encoding).
        Every check runs before the first frame is rendered; files are
        written atomically (complete or not at all).

    Examples
    --------
    >>> import rgrasp_viz as rv
    >>> prob = rv.make_regression(n=100, d=30, s_star=3, random_state=0)
    >>> runs = [rv.solve(prob, m, s=3, J=50, max_iter=2, record_iterates=True,
    ...                  record_every=1, random_state=0) for m in ("svrght", "svrgsp")]
    >>> rv.animate(runs, "epoch.gif")   # doctest: +SKIP
    Animation('epoch.gif', mp4='epoch.mp4', 40 frames, 960x628 px, 6.5 s, 0.41 MB)
    """
    traces = as_traces(runs)
    if len(traces) > MAX_RUNS:
        raise ValueError(f"at most {MAX_RUNS} runs side by side, got {len(traces)}")
    path = Path(path)
    if path.suffix.lower() != ".gif":
        raise ValueError(f"rv.animate writes a .gif (and an .mp4 next to it), got "
                         f"{path.name!r}")
    if not path.parent.is_dir():
        raise ValueError(f"the folder of {str(path)!r} does not exist: create it first")
    if isinstance(views, str):
        views = (views,)
    views = tuple(views)
    bad = [v for v in views if v not in VIEWS]
    if not views or bad or len(set(views)) != len(views):
        raise ValueError(f"views must be distinct names among {VIEWS}, got {views}")
    views = tuple(v for v in VIEWS if v in views)
    checks = (("max_frames", max_frames, 2, 500), ("fps", fps, 0.5, 50),
              ("hold", hold, 0, 30), ("width", width, 320, 3840),
              ("row_height", row_height, 150, 1200), ("max_rows", max_rows, 1, 1000))
    for name, value, lo, hi in checks:
        if (isinstance(value, bool) or not isinstance(value, (int, float, np.integer,
                                                              np.floating))
                or not lo <= value <= hi):
            raise ValueError(f"{name} must be a number in [{lo}, {hi}], got {value!r}")
    if until is not None and not (isinstance(until, (int, float)) and until > 0):
        raise ValueError(f"until must be a positive number of passes, got {until!r}")
    if mp4 not in (None, True, False):
        raise ValueError(f"mp4 must be None, True or False, got {mp4!r}")
    if not (progress is None or isinstance(progress, bool) or callable(progress)):
        raise TypeError("progress must be None, a bool or a callable(i, n)")
    if on_missing not in ("raise", "warn"):
        raise ValueError(f"on_missing must be 'raise' or 'warn', got {on_missing!r}")
    try:
        chromium, encoder = _requirements(mp4)
    except RuntimeError as exc:
        if on_missing == "raise":
            raise
        _say_missing(exc)
        return None

    states, where = animation_frames(traces, max_frames=int(max_frames), until=until)
    top = float(until) if until is not None else max(
        (float(np.nanmax(tr.passes)) for tr in traces), default=1.0)
    labels = F.run_labels(traces)
    # ROW_PX per raster row: show as many rows as the row's panel holds (the true support
    # always: when it does not fit, only every k-th row is labelled)
    plot_px = int(row_height) - _PANEL_TITLE_PX - _PANEL_AXIS_PX
    fit = max(1, plot_px // F.ROW_PX)
    panels = [_Panels(tr, views, [s[k] for s in states], top, min(int(max_rows), fit), plot_px)
              for k, tr in enumerate(traces)]
    widths = [_WEIGHTS[v] for v in views]
    footer = "<br>".join(_FOOTER[v] for v in views if v in _FOOTER)
    from PIL import Image  # optional: the animate extra

    tick = _Progress(progress, len(states))
    images = []
    try:
        for i, (state, pos) in enumerate(zip(states, where, strict=True)):
            grid = [p.row(t, step) for p, (t, step) in zip(panels, state, strict=True)]
            fig = compose(grid, widths=widths, row_height=int(row_height), width=int(width),
                          title=_frame_title(labels, traces, state, pos, title),
                          footer=footer)
            try:
                png = _render(fig, chromium)
            except RuntimeError as exc:
                if on_missing == "raise" or images:
                    raise
                _say_missing(exc)
                return None
            images.append(Image.open(io.BytesIO(png)).convert("RGB"))
            tick(i + 1)
    finally:
        tick.close()
    frame_ms = int(round(1000 / fps))
    durations = [frame_ms] * len(images)
    durations[-1] += int(round(1000 * hold))
    _write_gif(path, images, durations)
    mp4_path = None
    if encoder is not None:
        mp4_path = path.with_suffix(".mp4")
        _write_mp4(mp4_path, images, fps, int(round(hold * fps)), encoder)
    return Animation(path=path, mp4=mp4_path, n_frames=len(images), size=images[0].size,
                     fps=float(fps), seconds=sum(durations) / 1000,
                     nbytes=path.stat().st_size, frames=[list(s) for s in states],
                     passes=list(where))
