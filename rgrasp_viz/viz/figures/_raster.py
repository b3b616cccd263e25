"""The support raster: which coordinates are in play at each outer iteration."""

from __future__ import annotations

import html

import numpy as np

from ...analysis import as_trace, raster_matrix, raster_rows, support_changes
from ...solvers import run_label
from ._base import LEGEND_TOP, esc, figure, spec, tr

RASTER_CATEGORIES = (
    (0, "not involved", "#FFFFFF"),
    (1, "true support, missed", "#F4C7C3"),
    (2, "in T, not kept", "#A6CEE3"),
    (3, "in supp(xᵗ), not in true support", "#E69F00"),
    (4, "in supp(xᵗ) and in true support", "#1B7837"),
)
"""Support-raster categories: value in the heatmap, meaning, colour."""

ROW_PX = 11
"""Pixels per raster row: room for every row's label (10 px font), so that no label is
skipped -- in particular every true-support coordinate (★) can be read."""

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
                  "thickness": 12},
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
    return spec(data, dict(
        title={"text": f"Support of {esc(run_label(trace))} — true support (★) on "
                       f"top<br><sup>{len(rows)} coordinates{note}</sup>", "x": 0.02},
        height=max(320, 160 + ROW_PX * len(rows)),
        margin={"l": 60, "r": 20, "t": 70, "b": 90},
        xaxis={"title": {"text": "outer iteration t"}, "range": [-0.5, len(trace) - 0.5]},
        # rows are categories, in this order, whatever their labels look like ("120");
        # every row is labelled (explicit ticks: plotly.js would skip labels on a crowded
        # axis, and half of the true coordinates could not be read): ROW_PX per row
        yaxis={"type": "category", "categoryorder": "array", "categoryarray": labels,
               "autorange": "reversed", "showticklabels": True,
               "tickmode": "array", "tickvals": labels, "ticktext": labels,
               "tickfont": {"size": 10}, "title": {"text": "coordinate"}},
        autosize=True,
        legend=LEGEND_TOP, shapes=shapes,
        meta={"rows": rows.tolist(), "n_true": n_true, "hidden": hidden,
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
