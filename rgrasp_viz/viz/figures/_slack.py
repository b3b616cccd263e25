"""The slack descent condition of Algorithm 1, step 5, against the paper's ``c1``."""

from __future__ import annotations

import math

import numpy as np

from ...analysis import SLACK_MAX_CELLS, as_trace, slack_ratios
from ...solvers import run_label
from ...solvers._registry import method_color
from ._base import LEGEND, esc, figure, spec, tr


def slack_descent_spec(trace, problem=None, c1=0.5, max_cells=SLACK_MAX_CELLS, *,
                       ratios=None):
    """Plain-dict form of :func:`slack_descent`: ``{"data": [...], "layout": {...}}``, not
    validated (the dashboards update their widgets from it).

    Parameters and meaning as for :func:`slack_descent`.

    Returns
    -------
    dict
    """
    if not 0 < c1 < 1:
        raise ValueError(f"c1 must be in (0, 1), got {c1}")
    trace = as_trace(trace)
    if ratios is None:
        if problem is None:
            raise ValueError("give the problem the run solved (the ratios are computed from "
                             "it) or ratios=rgrasp_viz.analysis.slack_ratios(trace, problem)")
        ratios = slack_ratios(trace, problem, max_cells)
    r = np.asarray(ratios, dtype=np.float64)
    if r.shape != (len(trace),):
        raise ValueError(f"ratios must hold one entry per row of the trace ({len(trace)}), "
                         f"got shape {r.shape}")
    it = np.arange(len(r))
    valid = np.isfinite(r[1:])
    ok = float(np.mean(r[1:][valid] <= c1)) if valid.any() else math.nan
    finite = r[1:][valid]
    # a linear axis from 0 that always shows 1: r_t's distance to c1 (and to 1, where the
    # sub-problem solution stops being closer to b̂ than the start) reads true; ratios above
    # the top (rare blow-ups) are clipped at it
    top = max(1.1, min(float(finite.max()) if len(finite) else 0.0, 5.0) * 1.05)
    shown = np.where(np.isfinite(r), np.minimum(r, top), np.nan)
    color = method_color(trace.method)
    data = [
        tr("scatter", x=it[1:], y=shown[1:], mode="lines+markers",
           name="‖b − b̂‖ / ‖xᵗ⁻¹ − b̂‖", line={"color": color},
           marker={"color": color, "size": 6}, customdata=r[1:],
           hovertemplate="t=%{x}<br>ratio %{customdata:.3e}<extra></extra>",
           meta={"role": "ratio", "method": trace.method}),
        tr("scatter", x=[0.5, max(len(r) - 0.5, 1.5)], y=[c1, c1], mode="lines",
           name=f"c1 = {c1:g}", line={"color": "black", "dash": "dash"}, hoverinfo="skip",
           meta={"role": "c1"}),
    ]
    pct = "n/a" if math.isnan(ok) else f"{100 * ok:.0f}%"
    return spec(data, dict(
        title={"text": f"Slack descent condition, {esc(run_label(trace))}<br><sup>"
                       f"ratio ≤ c1 in {pct} of iterations; b̂ = exact least squares on T"
                       "</sup>", "x": 0.02},
        height=340, margin={"l": 60, "r": 20, "t": 70, "b": 90},
        xaxis={"title": {"text": "outer iteration t"}},
        yaxis={"type": "linear", "range": [0, top], "title": {"text": "ratio r_t"},
               "zeroline": True},
        autosize=True, legend=LEGEND,
        meta={"c1": c1, "fraction_ok": ok, "clipped_at": top}))


def slack_descent(trace, problem=None, c1=0.5, max_cells=SLACK_MAX_CELLS, *, ratios=None):
    """Plot the slack descent ratios of :func:`~rgrasp_viz.analysis.slack_ratios` against
    the paper's ``c1``.

    Parameters
    ----------
    trace : Trace or SolveResult
    problem : Problem, optional
        The problem the run solved; the ratios are computed from it (least squares on each
        ``T``).  Not needed when ``ratios`` are given.
    c1 : float, default 0.5
        The tolerance of Algorithm 1, step 5.  The paper only requires ``0 < c1 < 1`` (its
        analysis needs ``c1`` small enough but gives no number); 0.5 is an illustration.
    max_cells : int
    ratios : array_like, optional
        Ratios already computed with :func:`~rgrasp_viz.analysis.slack_ratios`.

    Returns
    -------
    plotly.graph_objects.Figure
        ``meta["role"]`` ``"ratio"`` (per iteration, ``x`` = iteration) and ``"c1"``;
        ``fig.layout.meta`` holds ``c1`` and ``fraction_ok`` (share of iterations with
        ``r_t <= c1``).  The ratio axis is linear from 0 and always shows 1, so the distance
        of ``r_t`` to ``c1`` reads true; ratios above ``meta["clipped_at"]`` are drawn there.
    """
    return figure(slack_descent_spec(trace, problem=problem, c1=c1, max_cells=max_cells,
                                     ratios=ratios))
