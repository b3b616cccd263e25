"""One moment of a run: the coefficients ``|x|`` and the objective so far (for replays)."""

from __future__ import annotations

import numpy as np

from ...analysis import as_trace, checkpoint_positions, snapshot
from ...solvers import run_label
from ...solvers._registry import method_color
from ._base import LEGEND, esc, figure, finite_or_nan, spec, tr


def coefficient_range(trace):
    """The largest ``|x_j|`` of a run (outer iterates, recorded inner iterates and ``x*``):
    a fixed top for the coefficient axis of a replay, so that it does not jump between
    frames."""
    trace = as_trace(trace)
    top = 0.0
    for t in range(len(trace)):
        v = trace.x(t)
        if len(v):
            top = max(top, float(np.nanmax(np.abs(np.where(np.isfinite(v), v, 0.0)))))
    if trace.has_iterates and len(trace.ck_x):
        ck = np.asarray(trace.ck_x)
        top = max(top, float(np.nanmax(np.abs(np.where(np.isfinite(ck), ck, 0.0)))))
    if len(trace.x_true):
        top = max(top, float(np.max(np.abs(trace.x_true))))
    return top if top > 0 else 1.0


def coefficients_spec(trace, t=-1, step=None, ymax=None):
    """Plain-dict form of :func:`coefficients`: ``{"data": [...], "layout": {...}}``, not
    validated (the dashboards update their widgets from it).

    Parameters and meaning as for :func:`coefficients`.

    Returns
    -------
    dict
    """
    trace = as_trace(trace)
    t = int(t) % len(trace)
    v = snapshot(trace, t, step)
    d = len(v)
    s = int(trace.meta.get("s", 1))
    a = np.abs(v)
    nz = np.flatnonzero(a)
    tau = float(np.partition(a, d - s)[d - s]) if 0 < s <= d else 0.0
    # what H_s keeps: the s largest |v_j| (ties by lower index, as rv.top_k)
    kept = np.sort(np.lexsort((np.arange(d), -a))[: min(s, len(nz))])
    color = method_color(trace.method)
    true = np.asarray(trace.true_support)
    xt = np.asarray(trace.x_true)
    in_true = np.isin(kept, true)
    # one comb line (0 -> |v_j| -> 0 at every nonzero, joined along the axis): drawn many
    # times faster by plotly.js than segments separated by NaN gaps (replays redraw it at
    # every frame); one pixel wide, which the browser rasterises as a thin line, without the
    # joins a wider stroke needs at every tooth
    sx = np.repeat(nz.astype(np.float64), 3)
    sy = np.column_stack([np.zeros(len(nz)), a[nz], np.zeros(len(nz))]).ravel()
    Z = trace.Z(t) if t > 0 else np.empty(0, np.int64)
    data = [
        tr("scatter", x=sx, y=sy, mode="lines", line={"color": color, "width": 1},
           name="|x_j|", hoverinfo="skip", showlegend=False,
           meta={"role": "stems", "method": trace.method}),
        tr("scatter", x=kept, y=a[kept], mode="markers",
           name="kept by Hₛ (filled: j in supp x*)",
           marker={"color": color, "size": 7,
                   "symbol": np.where(in_true, "circle", "circle-open").tolist()},
           customdata=v[kept], hovertemplate="j=%{x}<br>x_j=%{customdata:.4g}<extra></extra>",
           meta={"role": "heads", "method": trace.method}),
        tr("scatter", x=true, y=np.abs(xt[true]) if len(xt) else [], mode="markers",
           name="|x*ⱼ|",
           marker={"symbol": "line-ew-open", "size": 12, "color": "black",
                   "line": {"width": 2}},
           hovertemplate="j=%{x}<br>|x*ⱼ|=%{y:.4g}<extra></extra>",
           meta={"role": "x_true", "method": trace.method}),
        tr("scatter", x=Z, y=np.zeros(len(Z)), mode="markers",
           name="Z: 2s gradient directions",
           marker={"symbol": "triangle-up", "size": 8, "color": "#6A3D9A"},
           hovertemplate="j=%{x} in Z<extra></extra>",
           meta={"role": "Z", "method": trace.method}),
        tr("scatter", x=[0, d - 1], y=[tau, tau], mode="lines",
           name="Hₛ threshold (s-th largest |x|)",
           line={"color": "#B2182B", "dash": "dash", "width": 1.5},
           hovertemplate=f"threshold {tau:.4g}<extra></extra>",
           meta={"role": "threshold", "method": trace.method, "value": tau}),
    ]
    where = f"iteration {t}" if step is None else f"inner step {step} of iteration {t}"
    yaxis = {"title": {"text": "|x_j|"}, "rangemode": "tozero"}
    if ymax is not None:
        yaxis = {"title": {"text": "|x_j|"}, "range": [0, 1.08 * float(ymax)]}
    return spec(data, dict(
        title={"text": f"{esc(run_label(trace))}: |x| at {where}<br><sup>"
                       f"{len(nz)} nonzeros, s={s} kept above {tau:.3g}, |Z|={len(Z)}</sup>",
               "x": 0.02},
        height=340, margin={"l": 60, "r": 20, "t": 70, "b": 90}, autosize=True,
        xaxis={"title": {"text": "coordinate j"}, "range": [-0.5, d - 0.5]},
        yaxis=yaxis,
        legend=LEGEND,
        meta={"t": t, "step": step, "threshold": tau}))


def coefficients(trace, t=-1, step=None, ymax=None):
    """Magnitudes of the iterate at one moment, with ``x*``, the threshold and ``Z``.

    Parameters
    ----------
    trace : Trace or SolveResult
    t : int, default -1
        Outer iteration.
    step : int, optional
        Inner step within iteration ``t`` (see :func:`~rgrasp_viz.analysis.snapshot`);
        default: ``x^t`` itself.
    ymax : float, optional
        Fix the top of the ``|x|`` axis (a replay passes :func:`coefficient_range` so that
        the axis stays put); default: from the data.

    Returns
    -------
    plotly.graph_objects.Figure
        ``meta["role"]``: ``"stems"`` (``|v_j|`` for every nonzero: one comb line, three
        points ``(j, 0), (j, |v_j|), (j, 0)`` per nonzero), ``"heads"`` (one marker per
        coordinate ``H_s`` keeps: the ``s`` largest ``|v_j|``, filled when in ``supp(x*)``;
        for an iterate ``x^t`` these are its nonzeros), ``"x_true"`` (``|x*_j|``), ``"Z"``
        (the ``2s`` gradient directions chosen at iteration ``t``, markers on the axis),
        ``"threshold"`` (the ``s``-th largest magnitude of ``v``: what ``H_s`` keeps is at
        or above it).
    """
    return figure(coefficients_spec(trace, t=t, step=step, ymax=ymax))


def progress_spec(trace, t=-1, step=None):
    """Plain-dict form of :func:`progress`: ``{"data": [...], "layout": {...}}``, not
    validated (the dashboards update their widgets from it).

    Parameters and meaning as for :func:`progress`.

    Returns
    -------
    dict
    """
    trace = as_trace(trace)
    t = int(t) % len(trace)
    color = method_color(trace.method)
    passes = np.asarray(trace.passes, dtype=np.float64)
    obj = finite_or_nan(trace.objective)
    last_outer = t if step is None else t - 1
    px, py = [passes[: last_outer + 1]], [obj[: last_outer + 1]]
    ck_obj = finite_or_nan(trace.ck_objective)
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
        tr("scatter", x=passes, y=np.where(obj > 0, obj, np.nan), mode="lines",
           line={"color": color, "width": 1}, opacity=0.3, name="whole run",
           hoverinfo="skip", meta={"role": "whole", "method": trace.method}),
        tr("scatter", x=x, y=y, mode="lines", line={"color": color, "width": 2},
           name="so far", hovertemplate="passes %{x:.4g}<br>F %{y:.4e}<extra></extra>",
           meta={"role": "so_far", "method": trace.method}),
        tr("scatter", x=x[-1:], y=y[-1:], mode="markers", name="now",
           marker={"color": color, "size": 10, "symbol": "circle"},
           hovertemplate="now: passes %{x:.4g}<br>F %{y:.4e}<extra></extra>",
           meta={"role": "now", "method": trace.method}),
    ]
    where = f"iteration {t}" if step is None else f"iteration {t}, inner step {step}"
    now = f"F = {y[-1]:.4e}" if len(y) and np.isfinite(y[-1]) else "F not recorded here"
    return spec(data, dict(
        title={"text": f"{esc(run_label(trace))}: objective so far<br><sup>{where}: "
                       f"{now}</sup>", "x": 0.02},
        height=300, margin={"l": 60, "r": 20, "t": 70, "b": 50}, showlegend=False,
        xaxis={"title": {"text": "effective passes"},
               "range": [0, max(float(np.nanmax(passes)), 1e-9) * 1.02]},
        yaxis={"type": "log", "title": {"text": "F(x)"}, "exponentformat": "power",
               **_log_range(obj, ck_obj)},
        meta={"t": t, "step": step}))


def _log_range(*values):
    """A log axis's range over every positive value the run records (its objective and its
    checkpoints), padded by 5 %: the same at every moment of the run, so that the axis holds
    still while a replay moves (empty: plotly.js ranges the axis itself)."""
    v = np.concatenate([np.asarray(x, dtype=np.float64).ravel() for x in values])
    v = v[np.isfinite(v) & (v > 0)]
    if not v.size:
        return {}
    lo, hi = np.log10(v.min()), np.log10(v.max())
    pad = 0.05 * (hi - lo) if hi > lo else 0.5
    return {"range": [float(lo - pad), float(hi + pad)]}


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
    return figure(progress_spec(trace, t=t, step=step))
