"""Pure figure builders: :class:`~rgrasp_viz.Trace` (or results) in, ``go.Figure`` out.

Nothing here runs a solver or creates a widget.  Every builder accepts a
:class:`~rgrasp_viz.Trace` or anything with a ``.trace`` attribute (a
:class:`~rgrasp_viz.SolveResult`), and returns a fresh ``plotly.graph_objects.Figure``
whose traces carry a ``meta`` dict (``{"role": ..., "method": ...}``) so that dashboards and
tests can find them.

The number of plotly traces a builder emits depends only on the number of runs passed in,
never on the method or the data (empty traces are kept), so a dashboard can update a
``FigureWidget`` in place when a slider changes.

Labels and colours: the method registry (:mod:`rgrasp_viz.solvers.registry`) is the single
place where a method gets its name and colour.
"""

from __future__ import annotations

import functools
import math
import numbers
import os
import shutil
import threading
import time
from pathlib import Path

import numpy as np
import plotly.graph_objects as go

from ..analysis import best_objective
from ..solvers.registry import method_color, method_label, run_label

__all__ = [
    "checkpoint_positions",
    "coefficients",
    "convergence",
    "estimate_fstar",
    "event_positions",
    "export",
    "find_chromium",
    "method_color",
    "method_label",
    "progress",
    "run_labels",
    "slack_descent",
    "slack_ratios",
    "snapshot",
    "support_raster",
    "threshold_share",
    "threshold_timeline",
    "trace_label",
]

# Method labels and colours come from the registry (:mod:`rgrasp_viz.solvers.registry`).

_LEGEND = {"orientation": "h", "yref": "container", "yanchor": "bottom", "y": 0.0, "x": 0}
_LEGEND_TOP = {"orientation": "h", "yanchor": "bottom", "y": 1.0, "xanchor": "right", "x": 1}

# support-raster categories (value in the heatmap -> meaning, colour)
RASTER_CATEGORIES = (
    (0, "not involved", "#FFFFFF"),
    (1, "true support, missed", "#F4C7C3"),
    (2, "in T, not kept", "#A6CEE3"),
    (3, "in supp(x^t), not in true support", "#E69F00"),
    (4, "in supp(x^t) and in true support", "#1B7837"),
)

_PARAM_KEYS = ("s", "eta", "J", "m", "random_state", "inner", "problem", "batch_size")


_GRID = "#E5ECF6"
TEMPLATE = {
    "layout": {
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        "font": {"color": "#2A3F5F"},
        "hovermode": "closest",
        "xaxis": {"gridcolor": _GRID, "linecolor": _GRID, "zerolinecolor": _GRID,
                  "automargin": True},
        "yaxis": {"gridcolor": _GRID, "linecolor": _GRID, "zerolinecolor": _GRID,
                  "automargin": True},
    }
}
"""A small plotly template (white, light grid): much cheaper to validate than
``"plotly_white"``, which matters when a slider redraws three figures."""


def _tr(kind, **props):
    """One trace as a plain dict."""
    return {"type": kind, **props}


def _spec(data, layout):
    layout = dict(layout)
    layout.setdefault("template", TEMPLATE)
    return {"data": data, "layout": layout}


def _figure(spec):
    return go.Figure(spec)


def trace_label(trace):
    """The label of one run: its method's label, marked ``(on T)`` for our variant of
    Algorithm 2 (see :func:`rgrasp_viz.solvers.registry.run_label`)."""
    return run_label(trace.method, trace.meta.get("inner"))


# -- inputs ------------------------------------------------------------------------------------


def _as_trace(obj):
    from ..trace import Trace

    if isinstance(obj, Trace):
        return obj
    tr = getattr(obj, "trace", None)
    if isinstance(tr, Trace):
        return tr
    raise TypeError(f"expected a Trace or a SolveResult, got {type(obj).__name__}")


def _as_traces(objs):
    if objs is None:
        raise TypeError("expected a Trace, a SolveResult or a list of them, got None")
    if isinstance(objs, (list, tuple)):
        out = [_as_trace(o) for o in objs]
    else:
        out = [_as_trace(objs)]
    if not out:
        raise ValueError("no traces given")
    return out


def _fmt_param(key, value):
    if isinstance(value, float):
        return f"{key}={value:.3g}"
    return f"{key}={value}"


def run_labels(traces):
    """Legend names: the method's label, plus the parameters that tell equal methods apart.

    Parameters
    ----------
    traces : list of Trace

    Returns
    -------
    list of str
    """
    traces = _as_traces(traces)
    base = [trace_label(t) for t in traces]
    out = list(base)
    for lab in set(base):
        group = [i for i, b in enumerate(base) if b == lab]
        if len(group) < 2:
            continue
        keys = [k for k in _PARAM_KEYS
                if len({repr(traces[i].meta.get(k)) for i in group}) > 1]
        for n, i in enumerate(group):
            extra = ", ".join(_fmt_param(k, traces[i].meta.get(k)) for k in keys)
            out[i] = f"{lab} ({extra})" if extra else f"{lab} #{n + 1}"
    return out


def _finite_or_nan(a):
    a = np.asarray(a, dtype=np.float64).copy()
    a[~np.isfinite(a)] = np.nan
    return a


# -- F* ----------------------------------------------------------------------------------------


def _check_same_problem(traces):
    shapes = {(t.meta.get("n"), t.meta.get("d")) for t in traces}
    if len(shapes) > 1:
        raise ValueError(f"the traces come from problems of different sizes (n, d): "
                         f"{sorted(shapes)}; an objective gap needs one problem")


def estimate_fstar(traces, reference=None):
    """Estimate ``F*``, the optimal objective, for objective-gap plots.

    The true minimum of ``F`` over s-sparse vectors is unknown (the problem is non-convex and
    NP-hard), so ``F*`` is always an estimate -- an *upper bound* on the true minimum:

    * ``reference=None``: the best (smallest finite) objective reached by any of ``traces``.
      The run that attains it has gap 0 there, which a log axis cannot show: convergence
      plots omit gaps ``<= 0``.
    * ``reference`` a Trace or SolveResult (e.g. a long, high-precision run such as GraSP,
      which solves each sub-problem exactly): the best objective over the reference run *and*
      ``traces`` (so that no plotted gap is negative).
    * ``reference`` a number: used as is (gaps ``<= 0`` are omitted).

    Parameters
    ----------
    traces : Trace, SolveResult or list of them
        The runs to be compared (same problem).
    reference : None, float, Trace or SolveResult, optional
        See above.

    Returns
    -------
    fstar : float
        The estimate (``nan`` when no run has a finite objective).
    source : str
        One line saying where ``fstar`` came from; figures show it.

    Raises
    ------
    ValueError
        When the traces (or the reference) come from problems of different sizes.
    """
    traces = _as_traces(traces)
    if isinstance(reference, numbers.Real) and not isinstance(reference, bool):
        return float(reference), f"F* = {float(reference):.8g} given by the caller"
    labels = run_labels(traces)
    cands = []
    for tr, lab in zip(traces, labels, strict=True):
        f, i = best_objective(tr)
        cands.append((f, f"{lab}, iteration {i}", False))
    if reference is not None:
        ref = _as_trace(reference)
        _check_same_problem([*traces, ref])
        f, i = best_objective(ref)
        cands.append((f, f"reference run {trace_label(ref)} "
                         f"(s={ref.meta.get('s')}), iteration {i}", True))
    else:
        _check_same_problem(traces)
    f, where, is_ref = min(cands, key=lambda c: c[0])
    if not math.isfinite(f):
        return math.nan, "no run has a finite objective"
    n_runs = len(traces)
    if is_ref:
        src = f"F* = best objective of the {where} and the {n_runs} plotted run(s)"
    else:
        src = (f"F* = best objective over the {n_runs} plotted run(s) ({where}"
               f"{'' if reference is None else '; the reference run did worse'})")
    return f, src


# -- convergence -------------------------------------------------------------------------------

_XLABEL = {"passes": "effective passes", "time": "solver time [s]",
           "iteration": "outer iteration"}


def _xvalues(trace, x):
    if x == "passes":
        return np.asarray(trace.passes, dtype=np.float64)
    if x == "time":
        return np.asarray(trace.time, dtype=np.float64)
    if x == "iteration":
        return np.asarray(trace.iteration, dtype=np.float64)
    raise ValueError(f"x must be 'passes', 'time' or 'iteration', got {x!r}")


def _support_flags(traces):
    """For each trace: None when it ends on the support of the best run, else the number of
    coordinates in which the two final supports differ (symmetric difference)."""
    best = min(range(len(traces)),
               key=lambda i: (_fin(traces[i].objective[-1]), i))
    ref = set(traces[best].support(-1).tolist())
    out = []
    for tr in traces:
        sup = set(tr.support(-1).tolist())
        out.append(None if sup == ref else len(sup ^ ref))
    return out, best


def _fin(v):
    v = float(v)
    return v if math.isfinite(v) else math.inf


DIVERGED_CUT = 1e3
"""Convergence plots drop gaps above ``DIVERGED_CUT`` times the starting gap (a diverging
run would otherwise stretch the log axis over hundreds of decades)."""


def convergence_spec(traces, x="passes", y="both", fstar=None):
    """Plain-dict form of :func:`convergence`: ``{"data": [...], "layout": {...}}``, not
    validated (the dashboards update their widgets from it).

    Parameters and meaning as for :func:`convergence`.

    Returns
    -------
    dict
    """
    traces = _as_traces(traces)
    if y not in ("gap", "rel_error", "both"):
        raise ValueError(f"y must be 'gap', 'rel_error' or 'both', got {y!r}")
    for tr in traces:
        _xvalues(tr, x)  # validates x
    if isinstance(fstar, tuple):
        fs, src = float(fstar[0]), str(fstar[1])
    else:
        fs, src = estimate_fstar(traces, reference=fstar)
    labels = run_labels(traces)
    flags, best = _support_flags(traces)
    panels = ["gap", "rel_error"] if y == "both" else [y]
    data = []
    differs = []
    for k, (tr, lab, flag) in enumerate(zip(traces, labels, flags, strict=True)):
        color = method_color(tr.method)
        name = lab if flag is None else f"{lab} ≠ supp ({flag})"
        if flag is not None:
            differs.append({"run": lab, "n_differ": flag, "best": labels[best]})
        xs = _xvalues(tr, x)
        n = len(xs)
        size = np.zeros(n)
        size[-1] = 10 if flag is not None else 6
        symbol = "x" if flag is not None else "circle"
        for p, panel in enumerate(panels):
            if panel == "gap":
                obj = _finite_or_nan(tr.objective)
                vals = obj - fs
                pos = vals[np.isfinite(vals) & (vals > 0)]
                start = (vals[0] if np.isfinite(vals[0]) and vals[0] > 0
                         else (pos.max() if len(pos) else np.inf))
                vals[(vals <= 0) | (vals > DIVERGED_CUT * start)] = np.nan
                hover = "%{y:.3e}"
            else:
                vals = _finite_or_nan(tr.rel_error)
                vals[vals <= 0] = np.nan
                hover = "%{y:.3e}"
            data.append(_tr(
                "scatter",
                x=xs, y=vals, mode="lines+markers", name=name, legendgroup=f"run{k}",
                showlegend=p == 0, line={"color": color, "width": 2},
                marker={"size": size, "symbol": symbol, "color": color},
                xaxis="x" if p == 0 else "x2", yaxis="y" if p == 0 else "y2",
                hovertemplate=f"{lab}<br>{_XLABEL[x]} %{{x:.4g}}<br>{panel} {hover}"
                              "<extra></extra>",
                meta={"role": panel, "method": tr.method, "run": k}))
    ytitle = {"gap": "F(x) − F*", "rel_error": "‖x − x*‖ / ‖x*‖"}
    layout = {
        "title": {"text": f"Convergence<br><sup>{src}</sup>", "x": 0.02},
        "height": 380,
        "margin": {"l": 60, "r": 20, "t": 70, "b": 90},
        "legend": _LEGEND,
        "meta": {"fstar": fs, "fstar_source": src, "support_differs": differs,
                 "x": x, "y": y},
    }
    if len(panels) == 2:
        layout["xaxis"] = {"domain": [0, 0.46], "title": {"text": _XLABEL[x]}}
        layout["xaxis2"] = {"domain": [0.54, 1], "title": {"text": _XLABEL[x]},
                            "anchor": "y2"}
        layout["yaxis"] = {"type": "log", "title": {"text": ytitle["gap"]},
                           "exponentformat": "power"}
        layout["yaxis2"] = {"type": "log", "title": {"text": ytitle["rel_error"]},
                            "anchor": "x2", "exponentformat": "power"}
    else:
        layout["xaxis"] = {"title": {"text": _XLABEL[x]}}
        layout["yaxis"] = {"type": "log", "title": {"text": ytitle[panels[0]]},
                           "exponentformat": "power"}
    annotations = []
    if differs:
        annotations.append({
            "text": "≠ supp: ends on a different support than "
                    f"{labels[best]} (lowest final objective)",
            "xref": "paper", "yref": "paper", "x": 1, "y": 1.08, "showarrow": False,
            "xanchor": "right", "font": {"size": 11, "color": "#B2182B"}})
    if "rel_error" in panels and all(len(t.true_support) == 0 for t in traces):
        annotations.append({"text": "no x* known: relative error unavailable",
                            "xref": "paper", "yref": "paper", "x": 1, "y": 0.5,
                            "showarrow": False, "xanchor": "right"})
    layout["annotations"] = annotations
    return _spec(data, layout)


def convergence(traces, x="passes", y="both", fstar=None):
    """Objective gap and/or relative estimation error of several runs.

    Parameters
    ----------
    traces : Trace, SolveResult or list of them
        Runs on one problem; each gets its method's fixed colour.
    x : {"passes", "time", "iteration"}
        Horizontal axis: effective passes over the data, solver seconds, or outer
        iterations.
    y : {"gap", "rel_error", "both"}
        ``log(F(x^t) - F*)``, ``||x^t - x*|| / ||x*||``, or both side by side.
    fstar : None, float, Trace, SolveResult or (float, str), optional
        How to get ``F*``: see :func:`estimate_fstar` (``None``: best over ``traces``; a run:
        a reference run; a number; or an already computed ``(fstar, source)`` pair).  The
        source is shown in the title and stored in ``fig.layout.meta``.

    Returns
    -------
    plotly.graph_objects.Figure
        Traces with ``meta["role"]`` ``"gap"`` / ``"rel_error"``, one per run and panel, in
        the order of ``traces``.  Runs that end on a different support than the run with the
        lowest final objective are flagged: ``"≠ supp"`` in the legend, an ``x`` marker at
        the end of the curve, and ``fig.layout.meta["support_differs"]``.

    Notes
    -----
    Gaps ``<= 0`` (the point that defines ``F*``) and gaps above ``DIVERGED_CUT`` times the
    starting gap (diverging runs) are not drawn (NaN in the data).
    """
    return _figure(convergence_spec(traces, x=x, y=y, fstar=fstar))


# -- support raster ----------------------------------------------------------------------------


def _ragged_cols(trace, name):
    ptr = np.asarray(getattr(trace, name + "_ptr"))
    idx = np.asarray(getattr(trace, name + "_idx"))
    cols = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
    return idx, cols


def raster_rows(trace, max_rows=200):
    """Coordinates shown by :func:`support_raster`, in display order.

    True support first (ascending), then coordinates that were ever in ``supp(x^t)``, then
    coordinates that were only ever in ``T``; each group in order of first appearance.

    Parameters
    ----------
    trace : Trace or SolveResult
    max_rows : int

    Returns
    -------
    rows : ndarray of int
        At most ``max(max_rows, len(true support))`` coordinates.
    n_hidden : int
        Coordinates that were in a support or in ``T`` but are not shown.
    """
    trace = _as_trace(trace)
    true = np.asarray(trace.true_support, dtype=np.int64)
    s_idx, s_cols = _ragged_cols(trace, "support")
    t_idx, t_cols = _ragged_cols(trace, "T")
    d = int(trace.meta["d"])
    big = np.iinfo(np.int64).max
    first_s = np.full(d, big)
    np.minimum.at(first_s, s_idx, s_cols)
    first_t = np.full(d, big)
    np.minimum.at(first_t, t_idx, t_cols)
    is_true = np.zeros(d, bool)
    is_true[true] = True
    ever_s = np.flatnonzero((first_s < big) & ~is_true)
    only_t = np.flatnonzero((first_t < big) & (first_s == big) & ~is_true)
    ever_s = ever_s[np.lexsort((ever_s, first_s[ever_s]))]
    only_t = only_t[np.lexsort((only_t, first_t[only_t]))]
    rest = np.concatenate([ever_s, only_t])
    room = max(int(max_rows) - len(true), 0)
    return np.concatenate([true, rest[:room]]).astype(np.int64), max(len(rest) - room, 0)


def raster_matrix(trace, rows):
    """The category matrix of :func:`support_raster` (rows x iterations, values 0..4).

    Parameters
    ----------
    trace : Trace or SolveResult
    rows : array of int
        Coordinates, as returned by :func:`raster_rows`.

    Returns
    -------
    ndarray of int8, shape (len(rows), n_iter + 1)
        See ``RASTER_CATEGORIES``: 4 = in ``supp(x^t)`` and true support, 3 = in
        ``supp(x^t)`` only, 2 = in ``T`` (of iteration t) but not kept, 1 = true support
        coordinate missed, 0 = none.
    """
    trace = _as_trace(trace)
    d = int(trace.meta["d"])
    rowmap = np.full(d, -1, dtype=np.int64)
    rowmap[rows] = np.arange(len(rows))
    z = np.zeros((len(rows), len(trace)), dtype=np.int8)
    true = np.zeros(d, bool)
    true[trace.true_support] = True
    z[true[rows], :] = 1
    t_idx, t_cols = _ragged_cols(trace, "T")
    r = rowmap[t_idx]
    ok = r >= 0
    z[r[ok], t_cols[ok]] = 2
    s_idx, s_cols = _ragged_cols(trace, "support")
    r = rowmap[s_idx]
    ok = r >= 0
    z[r[ok], s_cols[ok]] = np.where(true[s_idx[ok]], 4, 3)
    return z


def support_raster_spec(trace, max_rows=200, cursor=None):
    """Plain-dict form of :func:`support_raster`: ``{"data": [...], "layout": {...}}``, not
    validated (the dashboards update their widgets from it).

    Parameters and meaning as for :func:`support_raster`.

    Returns
    -------
    dict
    """
    trace = _as_trace(trace)
    rows, hidden = raster_rows(trace, max_rows)
    z = raster_matrix(trace, rows)
    n_true = len(trace.true_support)
    labels = [f"{j}★" if k < n_true else str(j) for k, j in enumerate(rows)]
    iters = np.arange(len(trace))
    k = len(RASTER_CATEGORIES)
    scale = []
    for v, _, c in RASTER_CATEGORIES:
        scale += [[v / k, c], [(v + 1) / k, c]]
    data = []
    data.append(_tr(
        "heatmap",
        z=z, x=iters, y=labels, zmin=-0.5, zmax=k - 0.5, colorscale=scale, xgap=0,
        ygap=1 if len(rows) <= 80 else 0,
        colorbar={"tickvals": [v for v, _, _ in RASTER_CATEGORIES],
                  "ticktext": [lab for _, lab, _ in RASTER_CATEGORIES], "len": 0.9,
                  "thickness": 12},
        hovertemplate="coordinate %{y}<br>iteration %{x}<br>category %{z}<extra></extra>",
        meta={"role": "raster", "method": trace.method, "coords": rows.tolist()}))
    rowpos = {int(j): lab for j, lab in zip(rows, labels, strict=True)}
    ent_x, ent_y, left_x, left_y = [], [], [], []
    for t in range(1, len(trace)):
        for j in trace.entered(t):
            if int(j) in rowpos:
                ent_x.append(t)
                ent_y.append(rowpos[int(j)])
        for j in trace.left(t):
            if int(j) in rowpos:
                left_x.append(t)
                left_y.append(rowpos[int(j)])
    data.append(_tr(
                "scatter",
        x=ent_x, y=ent_y, mode="markers", name="entered supp",
        marker={"symbol": "circle-open", "color": "#1A9641", "size": 7, "line": {"width": 2}},
        hovertemplate="entered: coordinate %{y} at iteration %{x}<extra></extra>",
        meta={"role": "entered", "method": trace.method}))
    data.append(_tr(
                "scatter",
        x=left_x, y=left_y, mode="markers", name="left supp",
        marker={"symbol": "x-thin", "color": "#D7191C", "size": 7,
                "line": {"width": 2, "color": "#D7191C"}},
        hovertemplate="left: coordinate %{y} at iteration %{x}<extra></extra>",
        meta={"role": "left", "method": trace.method}))
    cx = [] if cursor is None or not labels else [float(cursor)] * 2
    cy = [] if cursor is None or not labels else [labels[0], labels[-1]]
    data.append(_tr(
                "scatter",
        x=cx, y=cy, mode="lines", name="now", showlegend=False,
        line={"color": "black", "width": 2, "dash": "dot"}, hoverinfo="skip",
        meta={"role": "cursor", "method": trace.method}))
    shapes = []
    if 0 < n_true < len(rows):
        shapes.append({"type": "line", "xref": "paper", "x0": 0, "x1": 1, "yref": "y",
                       "y0": n_true - 0.5, "y1": n_true - 0.5,
                       "line": {"color": "black", "width": 1}})
    note = f"; {hidden} more coordinates not shown" if hidden else ""
    return _spec(data, dict(
        title={"text": f"Support of {trace_label(trace)} — true support (★) on "
                       f"top<br><sup>{len(rows)} coordinates{note}</sup>", "x": 0.02},
        height=max(320, min(900, 120 + 7 * len(rows))),
        margin={"l": 60, "r": 20, "t": 70, "b": 90},
        xaxis={"title": {"text": "outer iteration t"}, "range": [-0.5, len(trace) - 0.5]},
        yaxis={"autorange": "reversed", "type": "category",
               "showticklabels": len(rows) <= 60, "title": {"text": "coordinate"}},
        legend=_LEGEND_TOP, shapes=shapes,
        meta={"rows": rows.tolist(), "n_true": n_true, "hidden": hidden}))


def support_raster(trace, max_rows=200, cursor=None):
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
    max_rows : int, default 200
        At most this many rows (true support always shown; coordinates that were only ever
        in ``T`` are dropped first).
    cursor : float, optional
        Draw a vertical line at this (possibly fractional) iteration; ``play`` moves it
        through the epochs.

    Returns
    -------
    plotly.graph_objects.Figure
        Traces with ``meta["role"]``: ``"raster"`` (heatmap; ``meta["coords"]`` lists the
        coordinate of each row), ``"entered"``, ``"left"``, ``"cursor"``.
    """
    return _figure(support_raster_spec(trace, max_rows=max_rows, cursor=cursor))


# -- thresholding: positions, cost model, timeline ---------------------------------------------


def event_positions(trace, x="passes"):
    """Positions of the recorded hard-thresholding events on the timeline axis.

    Parameters
    ----------
    trace : Trace or SolveResult
    x : {"passes", "steps"}
        Effective passes (the trace's convention: an epoch's full gradient first, then
        ``1/n`` per inner step; outer thresholdings at the end of their iteration), or
        cumulative inner steps (``(t - 1) * steps_per_iter + step``; methods without inner
        steps count one step per outer iteration).

    Returns
    -------
    pos : ndarray of float
    kind : ndarray of int8
        0 = inside an epoch, 1 = the closing ``H_s`` of an outer iteration.
    """
    trace = _as_trace(trace)
    it = np.asarray(trace.ev_iter, dtype=np.int64)
    step = np.asarray(trace.ev_step, dtype=np.int64)
    kind = np.asarray(trace.ev_kind, dtype=np.int8)
    if len(it) == 0:
        return np.empty(0), kind
    if x == "passes":
        return np.asarray(trace._position(it, step, kind), dtype=np.float64), kind
    if x == "steps":
        per = int(trace.meta.get("steps_per_iter", 0) or 0)
        if per == 0:
            return it.astype(np.float64), kind
        return ((it - 1) * per + step).astype(np.float64), kind
    raise ValueError(f"x must be 'passes' or 'steps', got {x!r}")


def _iteration_positions(trace, x):
    if x == "passes":
        return np.asarray(trace.passes, dtype=np.float64)
    per = int(trace.meta.get("steps_per_iter", 0) or 0)
    it = np.asarray(trace.iteration, dtype=np.float64)
    return it if per == 0 else it * per


def _calibrate(fn, min_batch):
    fn()
    n = 1
    while True:  # calls per batch so that a batch lasts about min_batch seconds
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - t0 >= min_batch or n >= 1 << 16:
            return n
        n *= 4


def _time_pair(fn, base, min_batch=5e-4, repeats=5):
    """Seconds per call of ``fn`` and of ``base``: batches of the two alternate (so that both
    see the same machine load) and the fastest batch of each counts (the least disturbed)."""
    n_f, n_b = _calibrate(fn, min_batch), _calibrate(base, min_batch)
    best_f = best_b = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n_f):
            fn()
        best_f = min(best_f, (time.perf_counter() - t0) / n_f)
        t0 = time.perf_counter()
        for _ in range(n_b):
            base()
        best_b = min(best_b, (time.perf_counter() - t0) / n_b)
    return best_f, best_b


@functools.lru_cache(maxsize=256)
def _measured_seconds(p, k, in_kernel):
    """Seconds per hard thresholding of a length-``p`` vector to ``k`` entries, measured
    with the package's public ``H_s`` (see :func:`threshold_share`)."""
    from .._kernels import hard_threshold, top_k

    v = np.random.default_rng(0).standard_normal(max(int(p), 1))
    k = int(k)
    if in_kernel:
        small = np.random.default_rng(1).standard_normal(4)
        t, base = _time_pair(lambda: hard_threshold(v, k), lambda: hard_threshold(small, 2))
        return max(t - base, 0.0)
    return _time_pair(lambda: top_k(v, k), lambda: None)[0]


def _grid(p, k):
    """Round ``(p, k)`` up to multiples of 8 so that cost measurements are reused."""
    pr = p if p <= 16 else int(math.ceil(p / 8) * 8)
    return pr, (pr if k >= p else min(k, pr))


def _event_shapes(trace):
    """(kind, p, k) of the thresholding operations of ``trace``: vector length and kept
    entries, per event kind."""
    m = trace.method
    d = int(trace.meta["d"])
    s = int(trace.meta.get("s", 1))
    tsz = np.diff(np.asarray(trace.T_ptr))[1:]
    t_med = int(np.median(tsz)) if len(tsz) and tsz.max() > 0 else 3 * s
    inner_full = trace.meta.get("inner") == "full"
    if m in ("svrgsp", "svrgsp+"):
        inner = (d, t_med) if inner_full else (t_med, t_med)
        return {0: inner, 1: (t_med, s)}
    return {0: (d, s), 1: (d, s)}  # FG-HT, GraSP, SG-HT, SVRGHT: H_s on all d


def threshold_share(trace, cost=None):
    """Count the hard thresholdings of a run and estimate their share of solver time.

    The trace records *when* every ``H_s`` happened, not how long it took (timing each one
    inside the compiled epoch would cost more than the operation).  The share is therefore
    estimated with a cost model measured on this machine::

        share = sum over event kinds (count * t_H(p, k)) / solver time

    where ``t_H(p, k)`` is the time to threshold a random length-``p`` vector to ``k``
    entries: for thresholdings inside an epoch (SVRGHT, SG-HT, SVRGSP+'s ``H_|T|``), the
    time of ``rv.hard_threshold`` minus its Python-call overhead (the time of the same call on
    a length-4 vector); for the closing ``H_s`` of an outer iteration, which the solvers call
    from Python, the time of ``rv.top_k`` with its overhead.  Times are the fastest of 5
    batches of about 0.5 ms, alternating with the overhead batches, so that machine load
    disturbs them as little as possible.  ``p`` is ``d`` or the median ``|T|`` of the run.
    Measurements are cached per ``(p, k)`` (rounded up to multiples of 8).

    Parameters
    ----------
    trace : Trace or SolveResult
    cost : None, float, dict or False, optional
        ``None``: measure as above.  A float: seconds per thresholding (all kinds).  A dict
        ``{kind: seconds}`` (kind 0 inside an epoch, 1 outer).  ``False``: do not estimate.

    Returns
    -------
    dict
        ``count`` (total, exact: ``trace.n_thresholds[-1]``), ``count_inner``,
        ``count_outer``, ``solver_time`` (s), ``seconds`` (estimated time spent in
        thresholding), ``share`` (fraction of solver time, capped at 1; NaN when not
        estimated or no solver time), ``per_op`` (dict kind -> seconds), ``source`` (how it
        was obtained).
    """
    trace = _as_trace(trace)
    kind = np.asarray(trace.ev_kind)
    total = int(trace.n_thresholds[-1])
    n_outer = int((kind == 1).sum())
    if trace.meta.get("events_truncated"):
        # events stop at max_events; outer events are one per iteration
        per_iter_outer = 1 if trace.method in ("fght", "grasp", "svrgsp", "svrgsp+") else 0
        n_outer = per_iter_outer * trace.n_iter
    n_inner = total - n_outer
    solver_time = float(trace.time[-1])
    counts = {0: n_inner, 1: n_outer}
    if cost is False:
        per_op, source = {}, "share of solver time not estimated"
    elif cost is None:
        shapes = _event_shapes(trace)
        per_op = {kd: _measured_seconds(*_grid(p, k), kd == 0)
                  for kd, (p, k) in shapes.items() if counts[kd]}
        parts = [f"{'inner' if kd == 0 else 'outer'} H on {shapes[kd][0]}→{shapes[kd][1]}: "
                 f"{1e6 * t:.2f} µs" for kd, t in per_op.items()]
        source = ("estimated: count × t_H, t_H measured on this machine with rv.hard_threshold"
                  " (in-epoch, call overhead subtracted) / rv.top_k (outer), fastest of 5 "
                  "batches; "
                  + "; ".join(parts))
    elif isinstance(cost, dict):
        per_op = {int(kd): float(v) for kd, v in cost.items()}
        source = "estimated: count × given seconds per thresholding"
    else:
        per_op = {0: float(cost), 1: float(cost)}
        source = f"estimated: count × {float(cost):.3g} s per thresholding (given)"
    seconds = sum(counts[kd] * per_op.get(kd, 0.0) for kd in counts) if per_op else math.nan
    if per_op and solver_time > 0:
        share = min(seconds / solver_time, 1.0)
    else:
        share = math.nan
    return {"count": total, "count_inner": n_inner, "count_outer": n_outer,
            "solver_time": solver_time, "seconds": seconds, "share": share,
            "per_op": per_op, "source": source}


_MAX_COUNT_POINTS = 2000


def threshold_timeline_spec(traces, x="passes", cost=None):
    """Plain-dict form of :func:`threshold_timeline`: ``{"data": [...], "layout": {...}}``, not
    validated (the dashboards update their widgets from it).

    Parameters and meaning as for :func:`threshold_timeline`.

    Returns
    -------
    dict
    """
    traces = _as_traces(traces)
    if x not in ("passes", "steps"):
        raise ValueError(f"x must be 'passes' or 'steps', got {x!r}")
    labels = run_labels(traces)
    data = []
    shares = []
    lanes = list(range(len(traces)))
    for lane, tr, lab in zip(lanes, traces, labels, strict=True):
        color = method_color(tr.method)
        pos, kind = event_positions(tr, x)
        for kd, kname in ((0, "inner"), (1, "outer")):
            p = pos[kind == kd]
            h = 0.38 if kd == 0 else 0.48
            xs = np.repeat(p, 3)
            ys = np.tile(np.array([lane - h, lane + h, np.nan]), len(p))
            xs[2::3] = np.nan
            data.append(_tr(
                "scatter",
                x=xs, y=ys, mode="lines", xaxis="x", yaxis="y",
                line={"color": color if kd == 0 else "black", "width": 1 if kd == 0 else 2},
                name=f"{lab}: {'H inside epochs' if kd == 0 else 'closing H_s'}",
                legendgroup=f"run{lane}", showlegend=False, hoverinfo="skip",
                meta={"role": "marks", "method": tr.method, "run": lane, "kind": kname,
                      "count": len(p)}))
        # running count
        if tr.meta.get("events_truncated") or len(pos) == 0:
            cx = _iteration_positions(tr, x)
            cy = np.asarray(tr.n_thresholds, dtype=np.float64)
        else:
            order = np.argsort(pos, kind="stable")
            cx = pos[order]
            cy = np.arange(1, len(cx) + 1, dtype=np.float64)
            if len(cx) > _MAX_COUNT_POINTS:  # thin uniformly, keep the last point
                keep = np.unique(np.r_[np.linspace(0, len(cx) - 1, _MAX_COUNT_POINTS)
                                       .astype(np.int64), len(cx) - 1])
                cx, cy = cx[keep], cy[keep]
            cx = np.r_[0.0, cx]
            cy = np.r_[0.0, cy]
        data.append(_tr(
                "scatter",
            x=cx, y=cy, mode="lines", line={"color": color, "width": 2, "shape": "hv"},
            name=lab, legendgroup=f"run{lane}", xaxis="x2", yaxis="y2",
            hovertemplate=f"{lab}<br>%{{y:,}} thresholdings by %{{x:.4g}}<extra></extra>",
            meta={"role": "counts", "method": tr.method, "run": lane}))
        sh = threshold_share(tr, cost)
        shares.append(sh)
    share_pct = [100 * s["share"] if math.isfinite(s["share"]) else 0.0 for s in shares]
    text = [f"{s['count']:,} H · {1e3 * s['solver_time']:.0f} ms · "
            + (f"≈{100 * s['share']:.0f}%" if math.isfinite(s["share"]) else "n/a")
            for s in shares]
    data.append(_tr(
        "bar",
        x=share_pct, y=lanes, orientation="h", xaxis="x3", yaxis="y3",
        marker={"color": [method_color(t.method) for t in traces]}, text=text,
        textposition="outside", cliponaxis=False, showlegend=False,
        hovertemplate="%{text}<extra>estimated share of solver time</extra>",
        meta={"role": "share", "methods": [t.method for t in traces]}))
    axis_x = "effective passes" if x == "passes" else "inner steps"
    lane_axis = {"tickvals": lanes, "ticktext": labels, "range": [len(lanes) - 0.4, -0.6],
                 "showgrid": False, "zeroline": False}
    src = shares[0]["source"] if len({s["source"] for s in shares}) == 1 else \
        "estimated per run: count × measured t_H (see fig.layout.meta['share'])"
    return _spec(data, dict(
        title={"text": "Hard thresholding: when, how often, at what cost"
                       f"<br><sup>{_short(src)}</sup>", "x": 0.02},
        height=300 + 60 * len(traces),
        margin={"l": 90, "r": 20, "t": 70, "b": 90},
        xaxis={"domain": [0, 0.7], "anchor": "y", "matches": "x2", "showticklabels": False},
        yaxis={"domain": [0.45, 1], **lane_axis},
        xaxis2={"domain": [0, 0.7], "anchor": "y2", "title": {"text": axis_x}},
        yaxis2={"domain": [0, 0.38], "type": "log", "title": {"text": "count so far"},
                "exponentformat": "power"},
        xaxis3={"domain": [0.76, 1], "anchor": "y3", "range": [0, 100],
                "title": {"text": "% of solver time (est.)"}},
        yaxis3={"domain": [0.45, 1], "anchor": "x3", **lane_axis, "showticklabels": False},
        legend=_LEGEND,
        meta={"share": [{k: v for k, v in s.items() if k != "per_op"}
                        | {"per_op": {str(k): v for k, v in s["per_op"].items()}}
                        for s in shares], "x": x}))


def threshold_timeline(traces, x="passes", cost=None):
    """One mark per hard-thresholding operation, per run, with running counts and cost.

    SVRGHT thresholds after every inner step (a dense comb), SVRGSP once per epoch (the
    closing ``H_s``), SVRGSP+ also ``m`` times inside each epoch (``H_|T|``), FG-HT and
    GraSP once per iteration.

    Parameters
    ----------
    traces : Trace, SolveResult or list of them
    x : {"passes", "steps"}
        Axis: effective passes or cumulative inner steps (see :func:`event_positions`).
    cost : None, float, dict or False
        Cost model for the share of solver time (see :func:`threshold_share`).

    Returns
    -------
    plotly.graph_objects.Figure
        Top left: one lane per run; every mark is a short vertical segment (a line trace
        with NaN gaps, ``meta["role"]`` ``"marks"``, ``meta["kind"]`` ``"inner"`` /
        ``"outer"``, ``meta["count"]`` marks).  Bottom left: running counts
        (``"counts"``, ending at ``n_thresholds[-1]``).  Right: the estimated share of
        solver time (``"share"`` bars).  ``fig.layout.meta["share"]`` holds the
        :func:`threshold_share` dicts.
    """
    return _figure(threshold_timeline_spec(traces, x=x, cost=cost))


def _short(text, n=140):
    return text if len(text) <= n else text[: n - 1] + "…"


# -- coefficients ------------------------------------------------------------------------------


def snapshot(trace, t=-1, step=None):
    """The vector shown by :func:`coefficients`: ``x^t``, or the inner iterate at ``step``.

    Parameters
    ----------
    trace : Trace or SolveResult
    t : int
        Outer iteration (negative counts from the end).
    step : int, optional
        Inner step of iteration ``t`` at which a checkpoint snapshot was recorded (needs
        ``record_iterates=True``; steps are multiples of ``record_every``).

    Returns
    -------
    ndarray of float, shape (d,)
    """
    trace = _as_trace(trace)
    t = int(t) % len(trace)
    if step is None:
        return trace.x(t)
    if not trace.has_iterates:
        raise ValueError("this trace holds no inner iterates: solve with "
                         "record_iterates=True to look inside an epoch")
    hit = np.flatnonzero((trace.ck_iter == t) & (trace.ck_step == int(step)))
    if not len(hit):
        steps = trace.ck_step[trace.ck_iter == t].tolist()
        raise ValueError(f"no inner snapshot at step {step} of iteration {t}; recorded "
                         f"steps: {steps[:10]}{' ...' if len(steps) > 10 else ''}")
    return np.asarray(trace.ck_x[hit[0]], dtype=np.float64)


def coefficients_spec(trace, t=-1, step=None):
    """Plain-dict form of :func:`coefficients`: ``{"data": [...], "layout": {...}}``, not
    validated (the dashboards update their widgets from it).

    Parameters and meaning as for :func:`coefficients`.

    Returns
    -------
    dict
    """
    trace = _as_trace(trace)
    t = int(t) % len(trace)
    v = snapshot(trace, t, step)
    d = len(v)
    s = int(trace.meta.get("s", 1))
    a = np.abs(v)
    nz = np.flatnonzero(a)
    tau = float(np.partition(a, d - s)[d - s]) if 0 < s <= d else 0.0
    color = method_color(trace.method)
    true = np.asarray(trace.true_support)
    xt = np.asarray(trace.x_true)
    in_true = np.isin(nz, true)
    data = []
    sx = np.repeat(nz.astype(np.float64), 3)
    sx[2::3] = np.nan
    sy = np.column_stack([np.zeros(len(nz)), a[nz], np.full(len(nz), np.nan)]).ravel()
    data.append(_tr("scatter", x=sx, y=sy, mode="lines", line={"color": color, "width": 1.5},
                             name="|x_j|", hoverinfo="skip", showlegend=False,
                             meta={"role": "stems", "method": trace.method}))
    data.append(_tr(
                "scatter",
        x=nz, y=a[nz], mode="markers", name="|x_j| (filled: j in supp x*)",
        marker={"color": color, "size": 7, "symbol": np.where(in_true, "circle",
                                                              "circle-open").tolist()},
        customdata=v[nz], hovertemplate="j=%{x}<br>x_j=%{customdata:.4g}<extra></extra>",
        meta={"role": "heads", "method": trace.method}))
    data.append(_tr(
                "scatter",
        x=true, y=np.abs(xt[true]) if len(xt) else [], mode="markers", name="|x*_j|",
        marker={"symbol": "line-ew-open", "size": 12, "color": "black",
                "line": {"width": 2}},
        hovertemplate="j=%{x}<br>|x*_j|=%{y:.4g}<extra></extra>",
        meta={"role": "x_true", "method": trace.method}))
    Z = trace.Z(t) if t > 0 else np.empty(0, np.int64)
    data.append(_tr(
                "scatter",
        x=Z, y=np.zeros(len(Z)), mode="markers", name="Z: 2s gradient directions",
        marker={"symbol": "triangle-up", "size": 8, "color": "#6A3D9A"},
        hovertemplate="j=%{x} in Z<extra></extra>",
        meta={"role": "Z", "method": trace.method}))
    data.append(_tr(
                "scatter",
        x=[0, d - 1], y=[tau, tau], mode="lines", name=f"threshold (s-th largest |x|) = "
        f"{tau:.3g}", line={"color": "#B2182B", "dash": "dash", "width": 1.5},
        hoverinfo="skip", meta={"role": "threshold", "method": trace.method, "value": tau}))
    where = f"iteration {t}" if step is None else f"inner step {step} of iteration {t}"
    return _spec(data, dict(
        title={"text": f"{trace_label(trace)}: |x| at {where}<br><sup>"
                       f"{len(nz)} nonzeros, s={s}, |Z|={len(Z)}</sup>", "x": 0.02},
        height=340, margin={"l": 60, "r": 20, "t": 70, "b": 90},
        xaxis={"title": {"text": "coordinate j"}, "range": [-0.5, d - 0.5]},
        yaxis={"title": {"text": "|x_j|"}, "rangemode": "tozero"},
        legend=_LEGEND,
        meta={"t": t, "step": step, "threshold": tau}))


def coefficients(trace, t=-1, step=None):
    """Magnitudes of the iterate at one moment, with ``x*``, the threshold and ``Z``.

    Parameters
    ----------
    trace : Trace or SolveResult
    t : int, default -1
        Outer iteration.
    step : int, optional
        Inner step within iteration ``t`` (see :func:`snapshot`); default: ``x^t`` itself.

    Returns
    -------
    plotly.graph_objects.Figure
        ``meta["role"]``: ``"stems"`` (``|v_j|`` for the nonzeros, vertical segments with
        NaN gaps), ``"heads"`` (one marker per nonzero; ``x`` the coordinates), ``"x_true"``
        (``|x*_j|``), ``"Z"`` (the ``2s`` gradient directions chosen at iteration ``t``,
        markers on the axis), ``"threshold"`` (the ``s``-th largest magnitude of ``v``:
        what ``H_s`` would keep).
    """
    return _figure(coefficients_spec(trace, t=t, step=step))


# -- objective so far (for replay) -------------------------------------------------------------


def checkpoint_positions(trace):
    """Effective passes at each inner checkpoint of ``trace`` (see :func:`event_positions`).

    Parameters
    ----------
    trace : Trace or SolveResult

    Returns
    -------
    ndarray of float, one entry per checkpoint (``trace.ck_iter``)
    """
    trace = _as_trace(trace)
    if len(trace.ck_iter) == 0:
        return np.empty(0)
    return np.asarray(trace._position(np.asarray(trace.ck_iter, np.int64),
                                      np.asarray(trace.ck_step, np.int64)), dtype=np.float64)


def progress_spec(trace, t=-1, step=None):
    """Plain-dict form of :func:`progress`: ``{"data": [...], "layout": {...}}``, not
    validated (the dashboards update their widgets from it).

    Parameters and meaning as for :func:`progress`.

    Returns
    -------
    dict
    """
    trace = _as_trace(trace)
    t = int(t) % len(trace)
    color = method_color(trace.method)
    passes = np.asarray(trace.passes, dtype=np.float64)
    obj = _finite_or_nan(trace.objective)
    last_outer = t if step is None else t - 1
    px, py = [passes[: last_outer + 1]], [obj[: last_outer + 1]]
    ck_obj = _finite_or_nan(trace.ck_objective)
    if len(ck_obj) and np.isfinite(ck_obj).any():
        ci = np.asarray(trace.ck_iter)
        cs = np.asarray(trace.ck_step)
        sel = (ci < t) | ((ci == t) & (step is not None) & (cs <= (step or 0)))
        px.append(checkpoint_positions(trace)[sel])
        py.append(ck_obj[sel])
    x = np.concatenate(px)
    y = np.concatenate(py)
    order = np.argsort(x, kind="stable")
    x, y = x[order], y[order]
    y[y <= 0] = np.nan
    data = [
        _tr("scatter", x=passes, y=np.where(obj > 0, obj, np.nan), mode="lines",
            line={"color": color, "width": 1}, opacity=0.3, name="whole run",
            hoverinfo="skip", meta={"role": "whole", "method": trace.method}),
        _tr("scatter", x=x, y=y, mode="lines", line={"color": color, "width": 2},
            name="so far", hovertemplate="passes %{x:.4g}<br>F %{y:.4e}<extra></extra>",
            meta={"role": "so_far", "method": trace.method}),
        _tr("scatter", x=x[-1:], y=y[-1:], mode="markers", name="now",
            marker={"color": color, "size": 10, "symbol": "circle"},
            hovertemplate="now: passes %{x:.4g}<br>F %{y:.4e}<extra></extra>",
            meta={"role": "now", "method": trace.method}),
    ]
    where = f"iteration {t}" if step is None else f"iteration {t}, inner step {step}"
    now = f"F = {y[-1]:.4e}" if len(y) and np.isfinite(y[-1]) else "F not recorded here"
    return _spec(data, dict(
        title={"text": f"{trace_label(trace)}: objective so far<br><sup>{where}: "
                       f"{now}</sup>", "x": 0.02},
        height=300, margin={"l": 60, "r": 20, "t": 70, "b": 50}, showlegend=False,
        xaxis={"title": {"text": "effective passes"},
               "range": [0, max(float(np.nanmax(passes)), 1e-9) * 1.02]},
        yaxis={"type": "log", "title": {"text": "F(x)"}, "exponentformat": "power"},
        meta={"t": t, "step": step}))


def progress(trace, t=-1, step=None):
    """The objective of a run up to one moment, over the whole run's curve.

    Parameters
    ----------
    trace : Trace or SolveResult
    t : int, default -1
        Outer iteration.
    step : int, optional
        Inner step of iteration ``t``; inner checkpoints up to it are included when the run
        recorded iterates (their exact objective, ``trace.ck_objective``).

    Returns
    -------
    plotly.graph_objects.Figure
        ``meta["role"]``: ``"whole"`` (faint, every outer iteration), ``"so_far"`` (outer
        iterations and recorded inner checkpoints up to the moment, by effective passes),
        ``"now"`` (the last point).
    """
    return _figure(progress_spec(trace, t=t, step=step))


# -- slack descent condition (Algorithm 1, step 5) ---------------------------------------------

SLACK_MAX_CELLS = 50_000_000
"""Largest ``n * max|T|`` for which :func:`slack_ratios` forms ``W[:, T]`` densely."""


def slack_ratios(trace, problem, max_cells=SLACK_MAX_CELLS):
    """The slack descent ratio of Algorithm 1, step 5, at every outer iteration.

    ``r_t = ||b - b̂|| / ||x^{t-1} - b̂||`` where ``b`` is the recorded sub-problem solution
    on the merged support ``T`` of iteration ``t`` and ``b̂ = argmin_{supp(b) ⊆ T} F(b)``
    is computed exactly here (least squares on the columns ``T``).  The paper requires
    ``r_t <= c1`` for some ``0 < c1 < 1``; GraSP has ``b = b̂`` (``r_t ≈ 0``).

    Parameters
    ----------
    trace : Trace or SolveResult
        A run of a method of Algorithm 1 (``grasp``, ``svrgsp``, ``svrgsp+``).
    problem : Problem
        The problem the run solved (least squares).
    max_cells : int
        Refuse problems with ``n * max|T| > max_cells`` (dense ``W[:, T]`` per iteration).

    Returns
    -------
    ndarray of float, shape (n_iter + 1,)
        Aligned with the trace's rows: entry 0 is NaN (no iteration), entry ``t`` is
        ``r_t`` (``inf`` when ``x^{t-1} = b̂``, NaN for a non-finite ``b``).

    Raises
    ------
    ValueError
        If the trace has no merged supports ``T``, the loss is not least squares, the
        problem does not match the trace, or the problem is too large.
    """
    trace = _as_trace(trace)
    tsz = np.diff(np.asarray(trace.T_ptr))
    if len(tsz) < 2 or tsz[1:].max(initial=0) == 0:
        raise ValueError(f"the trace of {trace.method!r} records no merged support T: the "
                         "slack condition belongs to Algorithm 1 (grasp, svrgsp, svrgsp+)")
    if getattr(problem, "loss", None) != "squares":
        raise ValueError("slack_ratios needs the exact sub-problem minimiser b̂, computed "
                         "here only for least squares (loss='squares'), got loss="
                         f"{getattr(problem, 'loss', None)!r}")
    if (problem.n, problem.d) != (trace.meta.get("n"), trace.meta.get("d")):
        raise ValueError(f"the problem (n={problem.n}, d={problem.d}) is not the one of the "
                         f"trace (n={trace.meta.get('n')}, d={trace.meta.get('d')})")
    cells = problem.n * int(tsz.max())
    if cells > max_cells:
        raise ValueError(f"problem too large for the exact sub-problem solve: n * max|T| = "
                         f"{cells:,} > max_cells = {max_cells:,}; use a smaller problem "
                         "(e.g. make_regression('classroom')) or raise max_cells")
    import scipy.linalg
    import scipy.sparse as sp

    W, y = problem.W, problem.y
    out = np.full(len(trace), np.nan)
    ptr = np.asarray(trace.T_ptr)
    bval = np.asarray(trace.b_val)
    for t in range(1, len(trace)):
        T = trace.T(t)
        if len(T) == 0:
            continue
        WT = W[:, T]
        WT = WT.toarray() if sp.issparse(WT) else np.asarray(WT)
        b = bval[ptr[t]:ptr[t + 1]]
        if not np.all(np.isfinite(b)):
            continue
        bhat = scipy.linalg.lstsq(WT, y, lapack_driver="gelsd", check_finite=False)[0]
        xprev = trace.x(t - 1)[T]
        num = float(np.linalg.norm(b - bhat))
        den = float(np.linalg.norm(xprev - bhat))
        out[t] = num / den if den > 0 else (0.0 if num == 0 else math.inf)
    return out


def slack_descent_spec(trace, problem, c1=0.5, max_cells=SLACK_MAX_CELLS):
    """Plain-dict form of :func:`slack_descent`: ``{"data": [...], "layout": {...}}``, not
    validated (the dashboards update their widgets from it).

    Parameters and meaning as for :func:`slack_descent`.

    Returns
    -------
    dict
    """
    if not 0 < c1 < 1:
        raise ValueError(f"c1 must be in (0, 1), got {c1}")
    trace = _as_trace(trace)
    r = slack_ratios(trace, problem, max_cells)
    it = np.arange(len(r))
    valid = np.isfinite(r[1:])
    ok = float(np.mean(r[1:][valid] <= c1)) if valid.any() else math.nan
    shown = r.copy()
    shown[shown <= 0] = np.nan
    color = method_color(trace.method)
    data = []
    data.append(_tr(
                "scatter",
        x=it[1:], y=shown[1:], mode="lines+markers", name="‖b − b̂‖ / ‖x^{t−1} − b̂‖",
        line={"color": color}, marker={"color": color, "size": 6},
        customdata=r[1:], hovertemplate="t=%{x}<br>ratio %{customdata:.3e}<extra></extra>",
        meta={"role": "ratio", "method": trace.method}))
    data.append(_tr(
                "scatter",
        x=[0.5, max(len(r) - 0.5, 1.5)], y=[c1, c1], mode="lines", name=f"c1 = {c1:g}",
        line={"color": "black", "dash": "dash"}, hoverinfo="skip", meta={"role": "c1"}))
    pct = "n/a" if math.isnan(ok) else f"{100 * ok:.0f}%"
    return _spec(data, dict(
        title={"text": f"Slack descent condition, {trace_label(trace)}<br><sup>"
                       f"ratio ≤ c1 in {pct} of iterations; b̂ = exact least squares on T"
                       "</sup>", "x": 0.02},
        height=340, margin={"l": 60, "r": 20, "t": 70, "b": 90},
        xaxis={"title": {"text": "outer iteration t"}},
        yaxis={"type": "log", "title": {"text": "ratio"}, "exponentformat": "power"},
        legend=_LEGEND,
        meta={"c1": c1, "fraction_ok": ok}))


def slack_descent(trace, problem, c1=0.5, max_cells=SLACK_MAX_CELLS):
    """Plot the slack descent ratios of :func:`slack_ratios` against the paper's ``c1``.

    Parameters
    ----------
    trace : Trace or SolveResult
    problem : Problem
    c1 : float, default 0.5
        The tolerance of Algorithm 1, step 5.  The paper only requires ``0 < c1 < 1`` (its
        analysis needs ``c1`` small enough but gives no number); 0.5 is an illustration.
    max_cells : int

    Returns
    -------
    plotly.graph_objects.Figure
        ``meta["role"]`` ``"ratio"`` (per iteration, ``x`` = iteration) and ``"c1"``;
        ``fig.layout.meta`` holds ``c1`` and ``fraction_ok`` (share of iterations with
        ``r_t <= c1``).
    """
    return _figure(slack_descent_spec(trace, problem=problem, c1=c1, max_cells=max_cells))


# -- export ------------------------------------------------------------------------------------

_CHROME_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable",
                 "chrome", "headless_shell")


def find_chromium():
    """Locate a Chromium/Chrome executable for PNG export.

    Looks at ``$RGRASP_VIZ_CHROMIUM``, ``$RGRASP_CHROMIUM`` (the browser tests' variable),
    ``$BROWSER_PATH`` (kaleido's own), then ``chromium``, ``chromium-browser``,
    ``google-chrome``, ... on ``PATH``.

    Returns
    -------
    str or None
        The path, or None when nothing executable was found.
    """
    for var in ("RGRASP_VIZ_CHROMIUM", "RGRASP_CHROMIUM", "BROWSER_PATH"):
        p = os.environ.get(var)
        if p and os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    for name in _CHROME_NAMES:
        p = shutil.which(name)
        if p:
            return p
    return None


_KALEIDO_LOCK = threading.Lock()
_KALEIDO_STARTED = {"path": None}
PNG_TIMEOUT = 120.0
"""Seconds to wait for kaleido/Chromium to render one PNG."""


def _write_png(fig, path, width, height, scale):
    chromium = find_chromium()
    if chromium is None:
        raise RuntimeError(
            "PNG export needs Chromium or Chrome and none was found (looked at "
            "$RGRASP_VIZ_CHROMIUM, $RGRASP_CHROMIUM, $BROWSER_PATH and chromium/google-chrome "
            "on PATH). "
            "Install one (e.g. `apt-get install chromium`) or set RGRASP_VIZ_CHROMIUM="
            "/path/to/chrome; HTML export works without a browser.")
    try:
        import kaleido
    except ImportError as exc:  # pragma: no cover - kaleido is a dependency of the viz layer
        raise RuntimeError("PNG export needs the kaleido package (>= 1.0)") from exc
    opts = {"format": "png", "width": int(width), "height": int(height), "scale": scale}
    result = {}

    def run():
        try:
            with _KALEIDO_LOCK:
                if _KALEIDO_STARTED["path"] is None:
                    kaleido.start_sync_server(path=chromium, mathjax=False,
                                              silence_warnings=True)
                    _KALEIDO_STARTED["path"] = chromium
                kaleido.write_fig_sync(fig, path=str(path), opts=opts)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            result["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(PNG_TIMEOUT)
    if worker.is_alive():
        raise RuntimeError(f"kaleido did not render the PNG within {PNG_TIMEOUT:.0f} s "
                           f"(browser: {chromium}); the browser may fail to start here")
    if "error" in result:
        raise RuntimeError(f"PNG export with kaleido and {chromium} failed: "
                           f"{result['error']}") from result["error"]


def export(fig, path, *, width=None, height=None, scale=1.0):
    """Write a figure to a standalone ``.html`` file or a ``.png`` image.

    Parameters
    ----------
    fig : plotly Figure or FigureWidget
    path : str or path-like
        ``*.html`` / ``*.htm``: one self-contained file (plotly.js embedded, works offline).
        ``*.png``: rendered by kaleido with a local Chromium (see :func:`find_chromium`).
    width, height : int, optional
        Image size in CSS pixels for PNG (default: the figure's layout size, else
        1000 x its height or 500).
    scale : float, default 1.0
        PNG pixel density multiplier.

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    ValueError
        For another file extension.
    RuntimeError
        For PNG when no Chromium is found or rendering fails.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    fig = go.Figure(fig) if not isinstance(fig, go.Figure) else fig
    if suffix in (".html", ".htm"):
        fig.write_html(str(path), include_plotlyjs=True, full_html=True)
    elif suffix == ".png":
        w = width or fig.layout.width or 1000
        h = height or fig.layout.height or 500
        _write_png(fig, path, w, h, scale)
    else:
        raise ValueError(f"export writes .html or .png files, got {path.name!r}")
    return path
