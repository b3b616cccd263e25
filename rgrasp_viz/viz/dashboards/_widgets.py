"""What the dashboards share: figure widgets and their updates, status lines."""

from __future__ import annotations

import contextlib

from plotly.basedatatypes import Undefined as _UNDEFINED

from ...analysis import status_kind as _run_status_kind
from ..figures import TEMPLATE
from ..figures._base import esc  # noqa: F401 - the one escaping helper, for the dashboards
from ._figurewidget import LiveFigure


def figure_widget(spec):
    """A :class:`LiveFigure` holding the full data and layout of ``spec`` from the start."""
    return LiveFigure(spec)


def update_figure(fw, spec):
    """Make ``fw`` show ``spec`` (a builder's ``*_spec`` output) with one message.

    When the traces keep their number and types (the usual case: builders emit a fixed
    structure), every trace property and layout entry of ``spec`` is applied to the Python
    figure as one ``plotly_update``, without per-property validation (the specs come from the
    builders, whose output is validated whenever a ``go.Figure`` is made from them).
    Otherwise the traces are replaced.  A :class:`LiveFigure` then sends the changed traces
    and layout whole, once, and the page redraws them with ``Plotly.react``.

    Parameters
    ----------
    fw : plotly.graph_objects.FigureWidget
    spec : dict
        ``{"data": [trace dicts], "layout": {...}}``.
    """
    data, layout = spec["data"], spec["layout"]
    relayout = {k: v for k, v in layout.items() if k != "template"}
    same = len(fw.data) == len(data) and all(
        t.type == d.get("type", "scatter") for t, d in zip(fw.data, data, strict=True))
    hold = fw.hold() if isinstance(fw, LiveFigure) else contextlib.nullcontext()
    with hold:
        if not same or any(k not in fw.layout for k in relayout):
            # new structure (e.g. the first run to show): validated assignments
            if not same:
                fw.data = ()
                fw.add_traces(data)
            with fw.batch_update():
                for key, val in relayout.items():
                    fw.layout[key] = val
            return
        keys = []
        for d in data:
            keys += [k for k in d if k != "type" and k not in keys]
        restyle = {k: [d.get(k, _UNDEFINED) for d in data] for k in keys}
        resized = {k: relayout.pop(k) for k in _LAYOUT_ARRAYS
                   if k in relayout and len(relayout[k] or ()) != len(fw._layout.get(k) or ())}
        with fw.batch_update():
            fw.plotly_update(restyle_data=restyle, relayout_data=relayout,
                             trace_indexes=list(range(len(data))))
            for key, val in resized.items():
                # plotly.py keeps its objects for annotations, shapes ... per index: a list
                # that grows or shrinks is assigned (validated), or fw.layout goes stale
                fw.layout[key] = val


_LAYOUT_ARRAYS = ("annotations", "shapes", "images")


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


def from_page(widget, name="value"):
    """Whether the change of ``widget.name`` being handled came from the page (ipywidgets
    locks a property while it applies the page's value), not from Python."""
    return name in getattr(widget, "_property_lock", {})


def link_replay(play, slider, on_index):
    """Wire a replay: ``play`` drives ``slider`` in the page (``jslink``: no round trip
    through the kernel while playing) and in Python for changes made from Python; figures
    follow ``slider`` (:meth:`LiveFigure.set_frames` with ``driver=slider``).

    Parameters
    ----------
    play : ipywidgets.Play
    slider : ipywidgets.IntSlider
    on_index : callable
        ``on_index(i)`` after every change of the slider (e.g. a text label).

    Returns
    -------
    ipywidgets.Link
        The page-side link (keep it: it lives as long as the dashboard).
    """
    import ipywidgets as widgets

    link = widgets.jslink((play, "value"), (slider, "value"))

    def play_changed(change):
        if not from_page(play):  # the page's link did this already
            slider.value = change["new"]

    def slider_changed(change):
        if not from_page(slider) and play.value != change["new"]:
            play.value = change["new"]
        on_index(int(change["new"]))

    play.observe(play_changed, names="value")
    slider.observe(slider_changed, names="value")
    return link


PLAY_INTERVAL = 50
"""Milliseconds between two ticks of a replay's Play widget (20 ticks per second)."""


def spec_patch(spec, layout_keys=("title", "meta")):
    """A frame patch (:meth:`LiveFigure.set_frames`) from a builder's spec: every trace, and
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
    from ...solvers._params import _check_int, _check_nonneg

    out = {}
    if debounce is not None:
        out["debounce"] = _check_nonneg("debounce", debounce)
        if out["debounce"] > MAX_DEBOUNCE:
            raise ValueError(f"debounce must be at most {MAX_DEBOUNCE:g} seconds, got "
                             f"{debounce!r}")
    if max_rows is not None:
        out["max_rows"] = _check_int("max_rows", max_rows, 1)
    if n_ticks is not None:
        out["n_ticks"] = _check_int("n_ticks", n_ticks, 1, 100_000)
    if interval is not None:
        out["interval"] = _check_int("interval", interval, 1, 60_000)
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
    from ...analysis import estimate_fstar
    from ...reference import reference as shared_reference

    if reference is None:
        return estimate_fstar(runs)
    ref = shared_reference(problem, list(runs), run=False)
    if not (ref.fstar == ref.fstar and abs(ref.fstar) < float("inf")):
        return estimate_fstar(runs)
    return ref.as_fstar()
