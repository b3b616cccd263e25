"""The hard-thresholding timeline: when, how often, at what (estimated) cost."""

from __future__ import annotations

import math

import numpy as np

from ...analysis import as_traces, event_positions, iteration_positions, run_labels, threshold_share
from ...solvers._registry import method_color
from ._base import LEGEND, esc, figure, short, spec, text_px, tr

_MAX_COUNT_POINTS = 500
"""Points of a run's count-so-far curve at most: at a dashboard's width a step of a few pixels;
a denser curve looks the same and is drawn again with every move of a replay's cursor."""


def _running_count(run, x, pos):
    """The count-so-far curve of one run (thinned to ``_MAX_COUNT_POINTS``)."""
    if run.meta.get("events_truncated") or len(pos) == 0:
        return iteration_positions(run, x), np.asarray(run.n_thresholds, dtype=np.float64)
    order = np.argsort(pos, kind="stable")
    cx = pos[order]
    cy = np.arange(1, len(cx) + 1, dtype=np.float64)
    if len(cx) > _MAX_COUNT_POINTS:  # thin uniformly, keep the last point
        keep = np.unique(np.r_[np.linspace(0, len(cx) - 1, _MAX_COUNT_POINTS)
                               .astype(np.int64), len(cx) - 1])
        cx, cy = cx[keep], cy[keep]
    return np.r_[0.0, cx], np.r_[0.0, cy]


def threshold_timeline_spec(traces, x="passes", cost=None, max_marks=None):
    """Plain-dict form of :func:`threshold_timeline`: ``{"data": [...], "layout": {...}}``, not
    validated (the dashboards update their widgets from it).

    Parameters and meaning as for :func:`threshold_timeline`.

    Returns
    -------
    dict
    """
    traces = as_traces(traces)
    if x not in ("passes", "steps"):
        raise ValueError(f"x must be 'passes' or 'steps', got {x!r}")
    if max_marks is not None and int(max_marks) < 2:
        raise ValueError(f"max_marks must be >= 2 or None, got {max_marks!r}")
    raw_labels = run_labels(traces)
    labels = [esc(lab) for lab in raw_labels]  # shown by the page: text, never HTML
    data = []
    shares = []
    thinned = []
    lanes = list(range(len(traces)))
    for lane, run, lab in zip(lanes, traces, labels, strict=True):
        color = method_color(run.method)
        pos, kind = event_positions(run, x)
        for kd, kname in ((0, "inner"), (1, "outer")):
            p = pos[kind == kd]
            count = len(p)
            if max_marks is not None and count > int(max_marks):
                # a comb denser than the pixels it is drawn on: every k-th mark looks the
                # same, and redraws (a replay's cursor) stay fast
                p = np.sort(p)[np.unique(np.linspace(0, count - 1, int(max_marks))
                                         .astype(np.int64))]
                thinned.append(f"{lab}: {len(p):,} of {count:,} marks drawn")
            h = 0.38 if kd == 0 else 0.48
            xs = np.repeat(p, 3)
            ys = np.tile(np.array([lane - h, lane + h, np.nan]), len(p))
            xs[2::3] = np.nan
            data.append(tr(
                "scatter",
                x=xs, y=ys, mode="lines", xaxis="x", yaxis="y",
                line={"color": color if kd == 0 else "black", "width": 1 if kd == 0 else 2},
                name=f"{lab}: {'H inside epochs' if kd == 0 else 'closing Hₛ'}",
                legendgroup=f"run{lane}", showlegend=False, hoverinfo="skip",
                meta={"role": "marks", "method": run.method, "run": lane, "kind": kname,
                      "count": count, "drawn": len(p)}))
        cx, cy = _running_count(run, x, pos)
        data.append(tr(
            "scatter",
            x=cx, y=cy, mode="lines", line={"color": color, "width": 2, "shape": "hv"},
            name=lab, legendgroup=f"run{lane}", xaxis="x2", yaxis="y2",
            hovertemplate=f"{lab}<br>%{{y:,}} thresholdings by %{{x:.4g}}<extra></extra>",
            meta={"role": "counts", "method": run.method, "run": lane}))
        shares.append(threshold_share(run, cost))
    estimated = [s for s in shares if s["per_op"]]
    counts = [f"{s['count']:,} H · {1e3 * s['solver_time']:.0f} ms" for s in shares]
    if estimated:  # no empty "% of time" panel when nothing was estimated
        share_pct = [100 * s["share"] if math.isfinite(s["share"]) else 0.0 for s in shares]
        # short texts only: the counts sit under each lane's name (tick labels get the
        # margin they need), the bar carries its percentage -- nothing runs off the figure
        text = [f"≈{100 * s['share']:.0f}%" if math.isfinite(s["share"]) else "n/a"
                for s in shares]
        data.append(tr(
            "bar",
            x=share_pct, y=lanes, orientation="h", xaxis="x3", yaxis="y3",
            marker={"color": [method_color(t.method) for t in traces]}, text=text,
            customdata=counts, textposition="outside", cliponaxis=False, showlegend=False,
            hovertemplate="%{customdata} · %{text}<extra>estimated share of solver time"
                          "</extra>",
            meta={"role": "share", "methods": [t.method for t in traces]}))
    axis_x = "effective passes" if x == "passes" else "inner steps"
    lane_axis = {"tickvals": lanes, "range": [len(lanes) - 0.4, -0.6],
                 "showgrid": False, "zeroline": False}
    ticktext = [f"{lab}<br><span style='font-size:10px'>{c}</span>"
                for lab, c in zip(labels, counts, strict=True)]
    src = ("share of solver time not estimated (no cost model given)" if not estimated
           else "share of solver time estimated: count × time of one H "
                + ("measured on this machine" if all("measured" in s["source"]
                                                    for s in estimated) else "(given)"))
    sub = src if not thinned else f"{src}; " + "; ".join(thinned)
    right = 0.74 if estimated else 1.0
    # room for the lane labels (name, counts under it) whether or not plotly.js may push the
    # margin (a dashboard fixes it, to draw its cursor over the figure)
    left = max(90, math.ceil(max((max(text_px(lab, 12), text_px(c, 10)) for lab, c
                                  in zip(raw_labels, counts, strict=True)), default=0)) + 14)
    share_axes = {} if not estimated else {
        "xaxis3": {"domain": [0.8, 1], "anchor": "y3", "range": [0, 125],
                   "tickvals": [0, 50, 100], "title": {"text": "% of time (est.)"}},
        "yaxis3": {"domain": [0.45, 1], "anchor": "x3", **lane_axis, "showticklabels": False}}
    return spec(data, dict(
        title={"text": "Hard thresholding: when, how often, at what cost"
                       f"<br><sup>{short(sub, 200)}</sup>", "x": 0.02},
        height=300 + 60 * len(traces),
        autosize=True,
        margin={"l": left, "r": 40, "t": 70, "b": 90},
        xaxis={"domain": [0, right], "anchor": "y", "matches": "x2", "showticklabels": False},
        yaxis={"domain": [0.45, 1], **lane_axis, "ticktext": ticktext},
        xaxis2={"domain": [0, right], "anchor": "y2", "title": {"text": axis_x}},
        yaxis2={"domain": [0, 0.38], "type": "log", "title": {"text": "count so far"},
                "exponentformat": "power"},
        **share_axes,
        legend=LEGEND,
        # None, not NaN, where nothing was estimated: the layout travels to the page as JSON
        meta={"share_source": src,
              "share": [{k: _json_number(v) for k, v in s.items() if k != "per_op"}
                        | {"per_op": {str(k): v for k, v in s["per_op"].items()}}
                        for s in shares], "x": x}))


def _json_number(v):
    return None if isinstance(v, float) and not math.isfinite(v) else v


def threshold_timeline(traces, x="passes", cost=None, max_marks=None):
    """One mark per hard-thresholding operation, per run, with running counts and cost.

    SVRGHT thresholds after every inner step (a dense comb), SVRGSP once per epoch (the
    closing ``H_s``), SVRGSP+ also ``m`` times inside each epoch (``H_|T|``), FG-HT and
    GraSP once per iteration.

    Parameters
    ----------
    traces : Trace, SolveResult or list of them
    x : {"passes", "steps"}
        Axis: effective passes or cumulative inner steps (see
        :func:`~rgrasp_viz.analysis.event_positions`).
    cost : None, float, dict or callable, optional
        Cost model for the share of solver time (see
        :func:`~rgrasp_viz.analysis.threshold_share`); ``None`` leaves the share out.  Pass
        ``cost=rgrasp_viz.viz.measured_threshold_cost`` for costs measured on this machine.
    max_marks : int, optional
        Draw at most this many marks per lane and kind (evenly spread; the counts stay
        exact and the subtitle says so): a comb of tens of thousands of marks is denser than
        the pixels it is drawn on, and a replay redraws faster without it.  Default: all.

    Returns
    -------
    plotly.graph_objects.Figure
        Top left: one lane per run; every mark is a short vertical segment (a line trace
        with NaN gaps, ``meta["role"]`` ``"marks"``, ``meta["kind"]`` ``"inner"`` /
        ``"outer"``, ``meta["count"]`` thresholdings, ``meta["drawn"]`` marks drawn).
        Bottom left: running counts (``"counts"``, ending at ``n_thresholds[-1]``).  Right,
        only when a cost model estimated it: the share of solver time (``"share"`` bars; no
        empty panel otherwise, the lanes then span the width).  ``fig.layout.meta["share"]``
        holds the :func:`~rgrasp_viz.analysis.threshold_share` dicts.
    """
    return figure(threshold_timeline_spec(traces, x=x, cost=cost, max_marks=max_marks))
