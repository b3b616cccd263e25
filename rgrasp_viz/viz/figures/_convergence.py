"""Convergence: objective gap and relative estimation error of several runs."""

from __future__ import annotations

import numpy as np

from ...analysis import as_traces, estimate_fstar, final_support_differences, run_labels, x_values
from ...solvers.registry import method_color
from ._base import LEGEND, figure, finite_or_nan, spec, tr

XLABEL = {"passes": "effective passes", "time": "solver time [s]",
          "iteration": "outer iteration"}

DIVERGED_CUT = 1e3
"""Convergence plots drop gaps above ``DIVERGED_CUT`` times the starting gap (a diverging
run would otherwise stretch the log axis over hundreds of decades)."""


def _gap(trace, fstar):
    obj = finite_or_nan(trace.objective)
    vals = obj - fstar
    pos = vals[np.isfinite(vals) & (vals > 0)]
    start = (vals[0] if np.isfinite(vals[0]) and vals[0] > 0
             else (pos.max() if len(pos) else np.inf))
    vals[(vals <= 0) | (vals > DIVERGED_CUT * start)] = np.nan
    return vals


def convergence_spec(traces, x="passes", y="both", fstar=None):
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
    if isinstance(fstar, tuple):
        fs, src = float(fstar[0]), str(fstar[1])
    else:
        fs, src = estimate_fstar(traces, reference=fstar)
    labels = run_labels(traces)
    flags, best = final_support_differences(traces)
    panels = ["gap", "rel_error"] if y == "both" else [y]
    data = []
    differs = []
    for k, (run, lab, flag) in enumerate(zip(traces, labels, flags, strict=True)):
        color = method_color(run.method)
        name = lab if flag is None else f"{lab} ≠ supp ({flag})"
        if flag is not None:
            differs.append({"run": lab, "n_differ": flag, "best": labels[best]})
        xs = x_values(run, x)
        size = np.zeros(len(xs))
        size[-1] = 10 if flag is not None else 6
        symbol = "x" if flag is not None else "circle"
        for p, panel in enumerate(panels):
            if panel == "gap":
                vals = _gap(run, fs)
            else:
                vals = finite_or_nan(run.rel_error)
                vals[vals <= 0] = np.nan
            data.append(tr(
                "scatter",
                x=xs, y=vals, mode="lines+markers", name=name, legendgroup=f"run{k}",
                showlegend=p == 0, line={"color": color, "width": 2},
                marker={"size": size, "symbol": symbol, "color": color},
                xaxis="x" if p == 0 else "x2", yaxis="y" if p == 0 else "y2",
                hovertemplate=f"{lab}<br>{XLABEL[x]} %{{x:.4g}}<br>{panel} %{{y:.3e}}"
                              "<extra></extra>",
                meta={"role": panel, "method": run.method, "run": k}))
    ytitle = {"gap": "F(x) − F*", "rel_error": "‖x − x*‖ / ‖x*‖"}
    layout = {
        "title": {"text": f"Convergence<br><sup>{src}</sup>", "x": 0.02},
        "height": 380,
        "margin": {"l": 60, "r": 20, "t": 70, "b": 90},
        "legend": LEGEND,
        "meta": {"fstar": fs, "fstar_source": src, "support_differs": differs,
                 "x": x, "y": y},
    }
    if len(panels) == 2:
        layout["xaxis"] = {"domain": [0, 0.46], "title": {"text": XLABEL[x]}}
        layout["xaxis2"] = {"domain": [0.54, 1], "title": {"text": XLABEL[x]},
                            "anchor": "y2"}
        layout["yaxis"] = {"type": "log", "title": {"text": ytitle["gap"]},
                           "exponentformat": "power"}
        layout["yaxis2"] = {"type": "log", "title": {"text": ytitle["rel_error"]},
                            "anchor": "x2", "exponentformat": "power"}
    else:
        layout["xaxis"] = {"title": {"text": XLABEL[x]}}
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
    return spec(data, layout)


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
        How to get ``F*``: see :func:`~rgrasp_viz.analysis.estimate_fstar` (``None``: best
        over ``traces``; a run: a reference run; a number; or an already computed
        ``(fstar, source)`` pair).  The source is shown in the title and stored in
        ``fig.layout.meta``.

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
    return figure(convergence_spec(traces, x=x, y=y, fstar=fstar))
