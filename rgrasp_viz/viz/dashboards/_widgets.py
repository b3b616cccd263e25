"""What the dashboards share: figure widgets and their updates, status lines."""

from __future__ import annotations

from ...analysis import estimate_fstar
from ...analysis import status_kind as _run_status_kind
from ...reference import reference as shared_reference
from ...solvers import check_int, check_nonneg
from ..figures import TEMPLATE
from ..figures._base import esc  # noqa: F401 - the one escaping helper, for the dashboards
from ._figure import Figure, Replay, encode_frames


def figure_widget(spec):
    """A :class:`~._figure.Figure` showing ``spec`` from the start."""
    return Figure(spec)


def update_figure(fw, spec, caption=None):
    """Make ``fw`` (a :class:`~._figure.Figure`) show ``spec`` (a builder's ``*_spec``
    output) with one message; ``caption`` (HTML), if given, is drawn with it."""
    fw.show(spec, caption=caption)


MAX_MARKS = 400
"""Marks per lane of the dashboards' thresholding timelines: SVRGHT's comb of 28,000 marks is
denser than the pixels it is drawn on (the timeline's title says how many are drawn)."""


def empty_spec(title="no run to show yet", height=300):
    """A figure without data (a dashboard before its first successful run)."""
    return {"data": [], "layout": {"template": TEMPLATE, "height": height,
                                   "title": {"text": title, "x": 0.02}}}


_BOX_COLORS = {"ok": ("#1B5E20", "#E8F5E9"), "warn": ("#8A4B00", "#FFF4E5"),
               "error": ("#8B0000", "#FDECEA"), "busy": ("#333333", "#F2F2F2")}


def status_box(text, kind):
    """A status line (``kind``: ok, warn, error or busy) as HTML; ``text`` is HTML."""
    fg, bg = _BOX_COLORS[kind]
    return (f'<div class="rgrasp-status rgrasp-{kind}" style="color:{fg};background:{bg};'
            f'padding:4px 8px;border-radius:4px;font-size:13px">{text}</div>')


# -- replays: a Play widget, a slider and figures that draw their frames in the page ---------


def replay_control(n, interval, description, value=0, readouts=None):
    """The :class:`~._figure.Replay` of a dashboard: ``n`` positions."""
    return Replay(max=int(n) - 1, value=int(value), interval=int(interval),
                  description=description, readouts=list(readouts or []))


def play_frames(fw, replay, make, key=None):
    """Compute the frames of ``fw`` for every position of ``replay`` once
    (:func:`~._figure.encode_frames`) and let the page step them."""
    fw.set_frames(encode_frames(replay.max + 1, make, key=key), replay)


def fixed_plot_area(spec):
    """``spec`` with its plot area fixed: the margins as the builder gave them, pushed by
    nothing (``layout.margin.autoexpand`` false).  On axes with ranges of their own, the page
    then knows where a value is drawn from the layout alone, and draws a replay's cursor (a
    shape named ``"cursor"``), and the scatter traces of a moving replay, over the figure
    itself rather than have plotly.js compute the whole figure again at every position.  The
    builders size the margins of such figures to hold their labels."""
    layout = spec["layout"]
    layout["margin"] = {**layout.get("margin", {}), "autoexpand": False}
    return spec


def legend_lists_every_trace(spec):
    """``spec`` with one missing point (``x = y = [None]``, drawn as nothing) in each scatter
    trace that has no points.  plotly.js leaves a trace without points out of the legend, and
    a replay's legend is drawn once, for every position: a trace empty where the replay starts
    (the heads of ``x^0 = 0``) would never be listed."""
    for tr in spec["data"]:
        if tr.get("type", "scatter") == "scatter" and all(
                tr.get(k) is not None and len(tr[k]) == 0 for k in ("x", "y")):
            tr["x"], tr["y"] = [None], [None]
    return spec


PLAY_INTERVAL = 40
"""Milliseconds per position of a playing replay (25 positions per second when the page keeps
up; it skips positions rather than fall behind)."""


def spec_patch(spec, layout_keys=("title", "meta")):
    """A frame patch (:func:`~._figure.encode_frames`) from a builder's spec: every trace, and
    the layout entries that change from frame to frame."""
    layout = spec["layout"]
    return {"data": dict(enumerate(spec["data"])),
            "layout": {k: layout[k] for k in layout_keys if k in layout}}


def busy_text(what, seconds):
    """The status of a solve that has been running ``seconds`` (HTML, no user text)."""
    return (f"{what}… <b class='rgrasp-busy-seconds'>{int(seconds)} s</b>: not finished yet. "
            "Change a control to start over (this solve's result is then dropped).")


MAX_DEBOUNCE = 60.0
"""Seconds: the longest quiet period a dashboard accepts before it re-solves."""


def check_options(*, debounce=None, max_rows=None, n_ticks=None, interval=None):
    """Check the display options of a dashboard (before any work), as :func:`rgrasp_viz.solve`
    checks its own arguments (the same helpers, the same kind of message).

    Parameters
    ----------
    debounce : float, optional
        Seconds, ``0 <= debounce <= MAX_DEBOUNCE``.
    max_rows : int, optional
        Rows of a support raster, ``>= 1``.
    n_ticks : int, optional
        Positions of a replay slider, ``1 <= n_ticks <= 100_000``.
    interval : int, optional
        Milliseconds between two ticks of a Play widget, ``1 <= interval <= 60_000``.

    Returns
    -------
    dict
        The checked values (``float`` / ``int``) of the options given (None: not given).

    Raises
    ------
    TypeError, ValueError
        Naming the option.
    """
    out = {}
    if debounce is not None:
        out["debounce"] = check_nonneg("debounce", debounce)
        if out["debounce"] > MAX_DEBOUNCE:
            raise ValueError(f"debounce must be at most {MAX_DEBOUNCE:g} seconds, got "
                             f"{debounce!r}")
    if max_rows is not None:
        out["max_rows"] = check_int("max_rows", max_rows, 1)
    if n_ticks is not None:
        out["n_ticks"] = check_int("n_ticks", n_ticks, 1, 100_000)
    if interval is not None:
        out["interval"] = check_int("interval", interval, 1, 60_000)
    return out


def status_kind(run):
    """The colour of a run's status line (:func:`rgrasp_viz.analysis.status_kind`):
    ``"ok"`` (green) for CONVERGED only, and only when the estimate is not poor (a run, not a
    bare status, is needed for that: pass the result), ``"error"`` for DIVERGED, ``"warn"``
    for every other way a run stops (MAX_ITER, MAX_PASSES, STALLED, NO_PROGRESS,
    HT_FIXED_POINT, CALLBACK: it did not converge) and for a CONVERGED poor estimate
    (:func:`status_note` says why)."""
    return _run_status_kind(run).kind


def status_note(run):
    """Why a CONVERGED run is not shown green (a poor estimate), as plain text; empty
    otherwise (escape it before it reaches HTML)."""
    return _run_status_kind(run).note


REFERENCES = ("exact", None)
"""What a dashboard's ``reference=`` may be: ``"exact"`` (the shared reference of
:func:`rgrasp_viz.reference.reference` without a re-run: below every run shown) or None (the
lowest objective of the runs shown: that run's curve touches zero)."""


def check_reference(reference):
    """Refuse a ``reference=`` that is not in :data:`REFERENCES` (before any work)."""
    if reference not in REFERENCES:
        raise ValueError(
            f"reference must be 'exact' (F* from exact least-squares fits on every shown "
            f"run's supports and the true support, below every run) or None (F* = the lowest "
            f"objective of the runs shown), got {reference!r}")


def view_fstar(problem, runs, reference="exact"):
    """The :class:`~rgrasp_viz.analysis.FStar` of one dashboard view: the gaps of every run
    shown are measured against it.

    With ``reference="exact"`` it is :func:`rgrasp_viz.reference.reference` with
    ``run=False`` (least squares: the exact fits on the support of every run's best and final
    iterate and on the true support; logistic loss: a short continuation of the lowest run),
    never above any run shown, so that no curve dips to the floor where a run would define
    ``F*``.  Falls back to the lowest objective of the runs when the reference has no finite
    value (every run diverged).
    """
    if reference is None:
        return estimate_fstar(runs)
    ref = shared_reference(problem, list(runs), run=False)
    if not (ref.value == ref.value and abs(ref.value) < float("inf")):
        return estimate_fstar(runs)
    return ref
