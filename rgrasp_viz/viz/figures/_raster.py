"""The support raster: which coordinates are in play at each outer iteration."""

from __future__ import annotations

import html
import math
import os

import numpy as np

from ...analysis import as_trace, raster_matrix, raster_rows, support_changes
from ...solvers import run_label
from ._base import LEGEND_TOP, esc, figure, spec, text_px, tr

RASTER_CATEGORIES = (
    (0, "not involved", "#FFFFFF"),
    (1, "true support, missed", "#F4C7C3"),
    (2, "in T, not kept", "#A6CEE3"),
    (3, "in supp(xᵗ), not in true support", "#E69F00"),
    (4, "in supp(xᵗ) and in true support", "#1B7837"),
)
"""Support-raster categories: value in the heatmap, meaning, colour."""

ROW_PX = 12
"""Pixels per raster row of :func:`support_raster`: room for every row's label
(:data:`LABEL_PX`), so that no label is skipped -- in particular every true-support
coordinate (★) can be read."""

TICK_FONT_PX = 10
"""Font size of the row labels."""

LABEL_PX = 12
"""Vertical room one row label needs: a 10 px font draws a text box about 11.5 px tall.
Rows closer than this (a raster squeezed into a smaller panel, as in an animation frame)
are labelled every k-th row only (:func:`row_ticks`); hovering a cell still names its row."""

LABEL_CHARS = 24
"""Longest row label drawn, in characters; a longer feature name is cut in the middle with
an ellipsis (its start and end are kept, where names usually differ).  Hovering shows the
whole name."""

_COLORBAR_PAD = 10
"""Pixels between the plot area and the colour bar's scale, and after its labels."""

MAX_ROWS = 60
"""Rows shown by default: the true support, then the coordinates that were in play, up to
this many (a figure of about 800 px at :data:`ROW_PX`)."""


def raster_cursor(x):
    """The "now" line of a support raster at iteration ``x`` (possibly fractional): a layout
    shape named ``"cursor"``.  A shape, not a trace, so that a replay moving it redraws only
    the shapes in the page, not the heatmap."""
    return {"type": "line", "name": "cursor", "xref": "x", "x0": float(x), "x1": float(x),
            "yref": "paper", "y0": 0, "y1": 1,
            "line": {"color": "black", "width": 2, "dash": "dot"}}


def with_cursor(spec, x):
    """``spec`` (a support raster's) with its cursor at ``x`` (a new layout ``shapes`` list;
    ``spec`` is not modified)."""
    shapes = [sh for sh in spec["layout"].get("shapes", []) or []
              if sh.get("name") != "cursor"]
    if spec["layout"].get("meta", {}).get("rows"):
        shapes.append(raster_cursor(x))
    return {"data": spec["data"], "layout": {**spec["layout"], "shapes": shapes}}


def raster_labels(trace, rows, n_true=0):
    """Row labels of a support raster: the feature names of ``trace.meta["feature_names"]``
    when the data had them (an estimator's fit), else the coordinate numbers; the first
    ``n_true`` rows (the true support) are starred.  Repeated names get their coordinate
    added, so every row keeps its own label.  Names are escaped (plotly reads tags in
    labels): a name reaches the page as text."""
    names = trace.meta.get("feature_names")
    if not isinstance(names, list) or len(names) != trace.meta.get("d"):
        names = None
    labels = [str(j) if names is None else html.escape(str(names[j]), quote=False)
              for j in rows]
    seen = {}
    for lab in labels:
        seen[lab] = seen.get(lab, 0) + 1
    labels = [lab if seen[lab] == 1 else f"{lab} [{j}]" for lab, j in zip(labels, rows,
                                                                           strict=True)]
    return [f"{lab}★" if k < n_true else lab for k, lab in enumerate(labels)]


def _unstar(label):
    """``(text, starred)``: a row label of :func:`raster_labels` unescaped, without its star."""
    star = label.endswith("★")
    return html.unescape(label[:-1] if star else label), star


def short_label(label, max_chars=LABEL_CHARS, skip=0):
    """A row label of :func:`raster_labels` (escaped, possibly starred) cut to at most
    ``max_chars`` characters of text with an ellipsis.

    The cut is made on the unescaped text (an entity such as ``&lt;`` is never split) and
    the result is escaped again; the star of a true-support row is kept.  With ``skip > 0``
    the first ``skip`` characters (a prefix shared by the other long labels) become a
    leading ellipsis and the rest is cut at its end; otherwise the middle is cut (the start
    and the end kept).

    Parameters
    ----------
    label : str
    max_chars : int, default LABEL_CHARS
        At least 3.
    skip : int, default 0

    Returns
    -------
    str
    """
    if max_chars < 3:
        raise ValueError(f"max_chars must be at least 3, got {max_chars!r}")
    text, star = _unstar(label)
    if len(text) > max_chars:
        if 0 < skip < len(text):
            text = "…" + text[skip:]
            if len(text) > max_chars:
                text = text[:max_chars - 1] + "…"
        else:
            head = max_chars // 2
            tail = max_chars - 1 - head
            text = text[:head] + "…" + (text[len(text) - tail:] if tail else "")
    return esc(text) + ("★" if star else "")


def _shared_prefix(labels, max_chars):
    """Length of the prefix that the labels longer than ``max_chars`` share (at least 2 of
    them, and 4 characters), cut back to a word boundary ("_", " ", "." or "-") when there
    is one: what a drawn label may skip.  0 otherwise."""
    long = [t for t in (_unstar(lab)[0] for lab in labels) if len(t) > max_chars]
    if len(long) < 2:
        return 0
    p = len(os.path.commonprefix(long))
    p = min(p, min(len(t) for t in long) - 1)
    cut = max(long[0].rfind(c, 0, p) for c in "_ .-") + 1
    p = cut if cut > 0 else p
    return p if p >= 4 else 0


def row_ticks(labels, plot_px, max_chars=LABEL_CHARS, label_px=LABEL_PX):
    """Which rows of a support raster get a drawn label, and their texts.

    ``len(labels)`` rows share ``plot_px`` pixels; when a row is thinner than ``label_px``
    only every ``k``-th row is labelled (rows ``0, k, 2k, ...``; ``k`` the smallest step
    that leaves ``label_px`` between labels), so that drawn labels never overlap.  Texts
    longer than ``max_chars`` are cut (:func:`short_label`): a prefix that the long names
    share is dropped first (``…01_after`` rather than ``serum_…after``, which would read
    the same for every row).

    Parameters
    ----------
    labels : list of str
        The rows' categories (:func:`raster_labels`), top to bottom.
    plot_px : float
        Height of the plot area, in pixels.
    max_chars : int, default LABEL_CHARS
    label_px : float, default LABEL_PX

    Returns
    -------
    tickvals : list of str
        The labelled rows' categories.
    ticktext : list of str
        Their drawn texts.
    step : int
        ``k`` (1: every row is labelled).
    """
    if not plot_px > 0:
        raise ValueError(f"plot_px must be a positive number of pixels, got {plot_px!r}")
    n = len(labels)
    step = max(1, math.ceil(label_px * n / plot_px - 1e-9)) if n else 1
    vals = list(labels[::step])
    skip = _shared_prefix(labels, max_chars)
    return vals, [short_label(lab, max_chars, skip) for lab in vals], step


def fit_row_labels(spec, plot_px, max_chars=LABEL_CHARS):
    """``spec`` (a support raster's) with its row labels fitted to a plot area of
    ``plot_px`` pixels (:func:`row_ticks`): e.g. the raster squeezed into a panel of an
    animation frame.  ``layout.meta["label_step"]`` records the step; ``spec`` is not
    modified.

    Parameters
    ----------
    spec : dict
        From :func:`support_raster_spec`.
    plot_px : float
    max_chars : int, default LABEL_CHARS

    Returns
    -------
    dict
    """
    lay = spec["layout"]
    labels = list(lay["yaxis"].get("categoryarray") or [])
    vals, text, step = row_ticks(labels, plot_px, max_chars)
    yaxis = {**lay["yaxis"], "tickvals": vals, "ticktext": text}
    meta = {**(lay.get("meta") or {}), "label_step": step}
    return {"data": spec["data"], "layout": {**lay, "yaxis": yaxis, "meta": meta}}


def support_raster_spec(trace, max_rows=MAX_ROWS, cursor=None):
    """Plain-dict form of :func:`support_raster`: ``{"data": [...], "layout": {...}}``, not
    validated (the dashboards update their widgets from it).

    Parameters and meaning as for :func:`support_raster`.

    Returns
    -------
    dict
    """
    trace = as_trace(trace)
    rows, hidden = raster_rows(trace, max_rows)
    z = raster_matrix(trace, rows)
    n_true = len(trace.true_support)
    labels = raster_labels(trace, rows, n_true)
    iters = np.arange(len(trace))
    k = len(RASTER_CATEGORIES)
    scale = []
    for v, _, c in RASTER_CATEGORIES:
        scale += [[v / k, c], [(v + 1) / k, c]]
    data = [tr(
        "heatmap",
        z=z, x=iters, y=labels, zmin=-0.5, zmax=k - 0.5, colorscale=scale, xgap=0,
        ygap=1 if len(rows) <= 80 else 0,
        colorbar={"tickvals": [v for v, _, _ in RASTER_CATEGORIES],
                  "ticktext": [lab for _, lab, _ in RASTER_CATEGORIES], "len": 0.9,
                  "thickness": 12, "x": 1.0, "xanchor": "left", "xpad": _COLORBAR_PAD},
        hovertemplate="coordinate %{y}<br>iteration %{x}<br>category %{z}<extra></extra>",
        meta={"role": "raster", "method": trace.method, "coords": rows.tolist()})]
    label_of = {int(j): lab for j, lab in zip(rows, labels, strict=True)}
    entered, left = support_changes(trace, rows)
    data.append(tr(
        "scatter",
        x=[t for t, _ in entered], y=[label_of[j] for _, j in entered], mode="markers",
        name="entered supp",
        marker={"symbol": "circle-open", "color": "#1A9641", "size": 7, "line": {"width": 2}},
        hovertemplate="entered: coordinate %{y} at iteration %{x}<extra></extra>",
        meta={"role": "entered", "method": trace.method}))
    data.append(tr(
        "scatter",
        x=[t for t, _ in left], y=[label_of[j] for _, j in left], mode="markers",
        name="left supp",
        marker={"symbol": "x-thin", "color": "#D7191C", "size": 7,
                "line": {"width": 2, "color": "#D7191C"}},
        hovertemplate="left: coordinate %{y} at iteration %{x}<extra></extra>",
        meta={"role": "left", "method": trace.method}))
    shapes = []
    if 0 < n_true < len(rows):
        shapes.append({"type": "line", "name": "separator", "xref": "paper", "x0": 0, "x1": 1,
                       "yref": "y", "y0": n_true - 0.5, "y1": n_true - 0.5,
                       "line": {"color": "black", "width": 1}})
    if cursor is not None and labels:
        shapes.append(raster_cursor(cursor))
    note = f"; {hidden} more coordinates not shown" if hidden else ""
    height = max(320, 160 + ROW_PX * len(rows))
    tickvals, ticktext, step = row_ticks(labels, height - 160) if labels else ([], [], 1)
    # room for the row labels and the colour bar whether or not plotly.js may push the
    # margins (a dashboard fixes them, to draw its cursor over the figure)
    left = max(60, math.ceil(max((text_px(html.unescape(t), TICK_FONT_PX) for t in ticktext),
                                 default=0)) + 36)
    right = math.ceil(2 * _COLORBAR_PAD + 12 + 6 + max(text_px(lab, 12) for _, lab, _
                                                       in RASTER_CATEGORIES))
    return spec(data, dict(
        title={"text": f"Support of {esc(run_label(trace))} — true support (★) on "
                       f"top<br><sup>{len(rows)} coordinates{note}</sup>", "x": 0.02},
        height=height,
        margin={"l": left, "r": right, "t": 70, "b": 90},
        xaxis={"title": {"text": "outer iteration t"}, "range": [-0.5, len(trace) - 0.5]},
        # rows are categories, in this order, whatever their labels look like ("120");
        # every row is labelled (explicit ticks: plotly.js would skip labels on a crowded
        # axis, and half of the true coordinates could not be read): ROW_PX per row; long
        # names are cut (the whole name is the category, shown on hover) and the margin
        # grows to hold the drawn labels
        yaxis={"type": "category", "categoryorder": "array", "categoryarray": labels,
               "autorange": "reversed", "showticklabels": True, "automargin": True,
               "tickmode": "array", "tickvals": tickvals, "ticktext": ticktext,
               "tickfont": {"size": TICK_FONT_PX}, "title": {"text": "coordinate"}},
        autosize=True,
        legend=LEGEND_TOP, shapes=shapes,
        meta={"rows": rows.tolist(), "n_true": n_true, "hidden": hidden, "label_step": step,
              "cursor": None if cursor is None else float(cursor)}))


def support_raster(trace, max_rows=MAX_ROWS, cursor=None):
    """Which coordinates are in play at each outer iteration.

    Rows are coordinates (true support first, separated by a line), columns outer
    iterations ``t = 0..n_iter``.  Cells: in ``supp(x^t)`` (split into true / false
    positives), in the merged support ``T`` of iteration ``t`` but not kept by the closing
    ``H_s``, or a true-support coordinate that was missed.  Markers show coordinates that
    entered (green circle) or left (red x) the support at each thresholding, i.e. between
    ``x^{t-1}`` and ``x^t``.

    Parameters
    ----------
    trace : Trace or SolveResult
    max_rows : int, default MAX_ROWS (60)
        At most this many rows (true support always shown; coordinates that were only ever
        in ``T`` are dropped first).  Every row is labelled and gets :data:`ROW_PX` pixels,
        so the figure grows with ``max_rows``.
    cursor : float, optional
        Draw a vertical dotted line at this (possibly fractional) iteration (a layout shape
        named ``"cursor"``, see :func:`raster_cursor`); ``play`` moves it through the
        epochs.

    Returns
    -------
    plotly.graph_objects.Figure
        Traces with ``meta["role"]``: ``"raster"`` (heatmap; ``meta["coords"]`` lists the
        coordinate of each row), ``"entered"``, ``"left"``.
    """
    return figure(support_raster_spec(trace, max_rows=max_rows, cursor=cursor))
