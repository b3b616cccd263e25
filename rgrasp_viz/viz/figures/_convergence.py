"""Convergence: objective gap and relative estimation error of several runs."""

from __future__ import annotations

import math

import numpy as np

from ...analysis import (
    FStar,
    as_traces,
    axis_scale,
    estimate_fstar,
    final_support_differences,
    run_labels,
    x_values,
)
from ...solvers._registry import method_color
from ._base import LEGEND, esc, figure, finite_or_nan, run_styles, spec, tr

XLABEL = {"passes": "effective passes", "time": "solver time [s]",
          "iteration": "outer iteration"}

DIVERGED_CUT = 1e3
"""Convergence plots clip values above ``DIVERGED_CUT`` times the starting value (a diverging
run would otherwise stretch the log axis over hundreds of decades): a diverged run's curve
ends at the cut with a ▲, runs that did not diverge are not drawn above it."""

_DIVERGED = 2  # Status.DIVERGED (the figures read traces, not the solver)

GAP_FLOOR_RTOL = 1e-6
"""Objective gaps below this fraction of the initial gap ``F(x⁰) − F*`` are drawn at that floor
(a dotted, labelled line), not below it or dropped: when ``F*`` is a run's own limit (the
lowest ``F`` of the runs shown, or an exact fit on the support a run converges to), the last
gaps measure the run against its own end and dive toward 0 (a gap of 0, the point defining
``F*``, has no place on a log axis).  Below every level the speed targets use (1e-3 .. 1e-5 of
the initial gap), so no target crossing is hidden."""


def gap_floor(traces, fstar):
    """The floor of the objective gaps of one view: :data:`GAP_FLOOR_RTOL` times the largest
    initial gap ``F(x⁰) − F*`` of ``traces`` (NaN when there is none)."""
    starts = []
    for t in traces:
        f = np.asarray(t.objective, dtype=np.float64)
        if len(f) and math.isfinite(f[0]):
            starts.append(float(f[0]) - float(fstar))
    starts = [g for g in starts if g > 0]
    return GAP_FLOOR_RTOL * max(starts) if starts else math.nan


def _diverged(trace):
    return int(trace.meta.get("status", 0) or 0) == _DIVERGED


def _clip(vals, start, diverged):
    """NaN for values ``<= 0``; above ``DIVERGED_CUT * start``: NaN, or for a diverged run the
    first such value (or the first non-finite one) at the cut and NaN after it.

    Returns the values and the index clipped at the cut (-1: none)."""
    vals = np.asarray(vals, dtype=np.float64).copy()
    cut = DIVERGED_CUT * start
    high = ~np.isfinite(vals) | (vals > cut)
    high[:1] &= np.isfinite(vals[:1]) & (vals[:1] > cut)  # a NaN start is not a blow-up
    clipped = -1
    if diverged and high.any():
        clipped = int(np.argmax(high))
        vals[clipped] = cut
        vals[clipped + 1:] = np.nan
        high[clipped] = False
    vals[high] = np.nan
    vals[vals <= 0] = np.nan
    return vals, clipped


def _start(vals):
    pos = vals[np.isfinite(vals) & (vals > 0)]
    return (vals[0] if np.isfinite(vals[0]) and vals[0] > 0
            else (pos.max() if len(pos) else math.inf))


def convergence_spec(traces, x="passes", y="both", fstar=None, xscale="auto"):
    """Plain-dict form of :func:`convergence`: ``{"data": [...], "layout": {...}}``, not
    validated (the dashboards update their widgets from it).

    Parameters and meaning as for :func:`convergence`.

    Returns
    -------
    dict
    """
    traces = as_traces(traces)
    if y not in ("gap", "rel_error", "both"):
        raise ValueError(f"y must be 'gap', 'rel_error' or 'both', got {y!r}")
    for t in traces:
        x_values(t, x)  # validates x
    scale = axis_scale(traces, x, xscale)
    if isinstance(fstar, tuple) and not isinstance(fstar, FStar):
        fs = FStar(float(fstar[0]), str(fstar[1]), "given")
    else:
        fs = estimate_fstar(traces, reference=fstar)
    raw_labels = run_labels(traces)  # in the figure's meta as they are
    labels = [esc(lab) for lab in raw_labels]  # shown by the page: text, never HTML
    flags, best = final_support_differences(traces)
    styles, notes, groups = run_styles(traces, labels, [method_color(t.method) for t in traces])
    panels = ["gap", "rel_error"] if y == "both" else [y]
    floor = gap_floor(traces, fs.value) if "gap" in panels and math.isfinite(fs.value) \
        else math.nan
    floored_runs = []
    data = []
    differs = []
    diverged = []
    for k, (run, lab, flag, sty) in enumerate(zip(traces, labels, flags, styles, strict=True)):
        bad = _diverged(run)
        if bad:
            flag = None  # a diverged run's support means nothing
        name = lab if flag is None else f"{lab} ≠ supp ({flag})"
        if bad:
            name = f"{name}: diverged"
            diverged.append(raw_labels[k])
        if flag is not None:
            differs.append({"run": raw_labels[k], "n_differ": flag,
                            "best": raw_labels[best]})
        # the trace's own values: on a log axis plotly leaves out x = 0 (the starting point)
        xs = x_values(run, x).copy()
        for p, panel in enumerate(panels):
            n_floored = 0
            if panel == "gap":
                vals = fs.gap(finite_or_nan(run.objective)) if math.isfinite(fs.value) else \
                    np.full(len(run), np.nan)
                raw = fs.gap(np.asarray(run.objective, dtype=np.float64))
                if math.isfinite(floor):
                    for arr in (vals, raw):
                        low = np.isfinite(arr) & (arr < floor)
                        arr[low] = floor
                    n_floored = int(np.count_nonzero(raw == floor))
                    if n_floored:
                        floored_runs.append(raw_labels[k])
            else:
                vals = finite_or_nan(run.rel_error)
                raw = np.asarray(run.rel_error, dtype=np.float64)
            start = _start(vals)
            vals, clipped = _clip(raw if bad else vals, start, bad)
            size = np.zeros(len(xs))
            symbol = ["circle"] * len(xs)
            last = int(np.flatnonzero(np.isfinite(vals))[-1]) if np.isfinite(vals).any() \
                else len(xs) - 1
            size[last] = 10 if flag is not None or bad else 6
            symbol[last] = "x" if flag is not None else "circle"
            if clipped >= 0:
                size[clipped] = 12
                symbol[clipped] = "triangle-up"
            line = {"color": sty["color"], "width": sty["width"], "dash": sty["dash"]}
            if bad:
                line = {**line, "dash": "dot", "width": 2}
            data.append(tr(
                "scatter",
                x=xs, y=vals, mode="lines+markers", name=name, legendgroup=f"run{k}",
                showlegend=p == 0, line=line,
                marker={"size": size, "symbol": symbol, "color": sty["color"]},
                xaxis="x" if p == 0 else "x2", yaxis="y" if p == 0 else "y2",
                hovertemplate=f"{lab}<br>{XLABEL[x]} %{{x:.4g}}<br>{panel} %{{y:.3e}}"
                              "<extra></extra>",
                meta={"role": panel, "method": run.method, "run": k, "diverged": bad,
                      "clipped_at": clipped, "floored": n_floored}))
    ytitle = {"gap": "F(x) − F*", "rel_error": "‖x − x*‖ / ‖x*‖"}
    xtitle = XLABEL[x] + (" (log scale)" if scale == "log" else "")
    if differs:
        notes.append(f"≠ supp: ends on a different support than {labels[best]} "
                     "(lowest final objective)")
    if diverged:
        notes.append(f"{esc(', '.join(diverged))}: diverged (dotted; ▲ where it leaves the "
                     "plot)")
    if floored_runs:
        why = ("F* is reached" if fs.origin != "runs" else
               "F* is the lowest F of the run shown" if len(traces) == 1 else
               "F* is the lowest F of the runs shown")
        notes.append(f"floor {floor:.2g} = {GAP_FLOOR_RTOL:g} × (F(x⁰) − F*): smaller gaps "
                     f"drawn at it ({why})")
    layout = {
        "title": {"text": f"Convergence<br><sup>{esc(fs.source)}</sup>", "x": 0.02},
        "height": 380 + 18 * max(len(notes) - 1, 0),
        "autosize": True,
        "margin": {"l": 60, "r": 20, "t": 70 + 18 * max(len(notes) - 1, 0), "b": 90},
        "legend": LEGEND,
        "meta": {"fstar": fs.value, "fstar_source": fs.source, "fstar_origin": fs.origin,
                 "support_differs": differs, "identical": [[raw_labels[i] for i in g]
                                                           for g in groups],
                 "diverged": diverged, "x": x, "y": y, "xscale": scale,
                 "gap_floor": floor if math.isfinite(floor) else None,
                 "floored": floored_runs},
    }
    xa = {"title": {"text": xtitle}, "type": scale}
    if len(panels) == 2:
        # the gap holds the right panel's tick labels (10⁻⁴) and its y title at a notebook's
        # or the site's width (0.54 put "‖x − x*‖ / ‖x*‖" over the left panel)
        layout["xaxis"] = {**xa, "domain": [0, 0.41]}
        layout["xaxis2"] = {**xa, "domain": [0.59, 1], "anchor": "y2"}
        layout["yaxis"] = {"type": "log", "title": {"text": ytitle["gap"]},
                           "exponentformat": "power"}
        layout["yaxis2"] = {"type": "log", "title": {"text": ytitle["rel_error"]},
                            "anchor": "x2", "exponentformat": "power"}
    else:
        layout["xaxis"] = xa
        layout["yaxis"] = {"type": "log", "title": {"text": ytitle[panels[0]]},
                           "exponentformat": "power"}
    annotations = [{"text": note, "xref": "paper", "yref": "paper", "x": 1,
                    "y": 1.0 + 0.045 * (len(notes) - 1 - k), "yanchor": "bottom",
                    "showarrow": False, "xanchor": "right",
                    "font": {"size": 11, "color": "#B2182B" if "≠" in note or "diverged"
                             in note else "#444"}}
                   for k, note in enumerate(notes)]
    if "rel_error" in panels and all(len(t.true_support) == 0 for t in traces):
        annotations.append({"text": "no x* known: relative error unavailable",
                            "xref": "paper", "yref": "paper", "x": 1, "y": 0.5,
                            "showarrow": False, "xanchor": "right"})
    layout["annotations"] = annotations
    if floored_runs:  # the floor, drawn across the gap panel
        layout["shapes"] = [{"type": "line", "xref": "x domain", "x0": 0, "x1": 1, "yref": "y",
                             "y0": floor, "y1": floor, "layer": "below",
                             "line": {"color": "#888888", "width": 1, "dash": "dot"}}]
    return spec(data, layout)


def convergence(traces, x="passes", y="both", fstar=None, xscale="auto"):
    """Objective gap and/or relative estimation error of several runs.

    Parameters
    ----------
    traces : Trace, SolveResult or list of them
        Runs on one problem; each gets its method's fixed colour.  Several runs of one method
        get distinct dashes and shades, their legend names carry the parameter that differs;
        runs that made identical iterates are named in a note (and drawn so that each stays
        visible); a diverged run is drawn dotted up to the plot's edge (▲).
    x : {"passes", "time", "iteration"}
        Horizontal axis: effective passes over the data, solver seconds, or outer
        iterations.
    y : {"gap", "rel_error", "both"}
        ``log(F(x^t) - F*)``, ``||x^t - x*|| / ||x*||``, or both side by side.
    fstar : None, float, FStar, Trace, SolveResult or (float, str), optional
        How to get ``F*``: see :func:`~rgrasp_viz.analysis.estimate_fstar` (``None``: lowest
        over ``traces``; a run: a separate reference run; a number; or an
        :class:`~rgrasp_viz.analysis.FStar` already computed for a table shown next to the
        plot).  Its source is shown in the title and stored in ``fig.layout.meta``.
    xscale : {"auto", "linear", "log"}
        ``"auto"``: logarithmic for solver time when the runs' times differ by more than
        :data:`~rgrasp_viz.analysis.LOG_AXIS_RATIO` times
        (:func:`~rgrasp_viz.analysis.axis_scale`), linear otherwise.

    Returns
    -------
    plotly.graph_objects.Figure
        Traces with ``meta["role"]`` ``"gap"`` / ``"rel_error"``, one per run and panel, in
        the order of ``traces``.  Runs that end on a different support than the run with the
        lowest final objective are flagged: ``"≠ supp"`` in the legend, an ``x`` marker at
        the end of the curve, and ``fig.layout.meta["support_differs"]``;
        ``fig.layout.meta["identical"]`` lists the groups of identical runs by label.

    Notes
    -----
    Gaps below ``GAP_FLOOR_RTOL`` times the largest initial gap ``F(x⁰) − F*`` (the point that
    defines ``F*`` included) are drawn at that floor, a dotted line named in a note
    (``fig.layout.meta["gap_floor"]``; each curve's ``meta["floored"]`` counts its points
    there): a run whose ``F*`` is its own limit never loses its last point nor dives toward
    0.  Values above ``DIVERGED_CUT`` times the starting value are not drawn, except the point
    where a diverged run leaves the plot.  The ``x`` values are the trace's own; on a log
    time axis the starting point (``x = 0``) is not drawn.
    """
    return figure(convergence_spec(traces, x=x, y=y, fstar=fstar, xscale=xscale))
