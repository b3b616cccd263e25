"""One moment of a run: the coefficients ``|x|`` and the objective so far (for replays)."""

from __future__ import annotations

import numpy as np

from ...analysis import as_trace, checkpoint_positions, snapshot, trace_label
from ...solvers.registry import method_color
from ._base import LEGEND, figure, finite_or_nan, spec, tr


def coefficients_spec(trace, t=-1, step=None):
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
    color = method_color(trace.method)
    true = np.asarray(trace.true_support)
    xt = np.asarray(trace.x_true)
    in_true = np.isin(nz, true)
    sx = np.repeat(nz.astype(np.float64), 3)
    sx[2::3] = np.nan
    sy = np.column_stack([np.zeros(len(nz)), a[nz], np.full(len(nz), np.nan)]).ravel()
    Z = trace.Z(t) if t > 0 else np.empty(0, np.int64)
    data = [
        tr("scatter", x=sx, y=sy, mode="lines", line={"color": color, "width": 1.5},
           name="|x_j|", hoverinfo="skip", showlegend=False,
           meta={"role": "stems", "method": trace.method}),
        tr("scatter", x=nz, y=a[nz], mode="markers", name="|x_j| (filled: j in supp x*)",
           marker={"color": color, "size": 7,
                   "symbol": np.where(in_true, "circle", "circle-open").tolist()},
           customdata=v[nz], hovertemplate="j=%{x}<br>x_j=%{customdata:.4g}<extra></extra>",
           meta={"role": "heads", "method": trace.method}),
        tr("scatter", x=true, y=np.abs(xt[true]) if len(xt) else [], mode="markers",
           name="|x*_j|",
           marker={"symbol": "line-ew-open", "size": 12, "color": "black",
                   "line": {"width": 2}},
           hovertemplate="j=%{x}<br>|x*_j|=%{y:.4g}<extra></extra>",
           meta={"role": "x_true", "method": trace.method}),
        tr("scatter", x=Z, y=np.zeros(len(Z)), mode="markers",
           name="Z: 2s gradient directions",
           marker={"symbol": "triangle-up", "size": 8, "color": "#6A3D9A"},
           hovertemplate="j=%{x} in Z<extra></extra>",
           meta={"role": "Z", "method": trace.method}),
        tr("scatter", x=[0, d - 1], y=[tau, tau], mode="lines",
           name=f"threshold (s-th largest |x|) = {tau:.3g}",
           line={"color": "#B2182B", "dash": "dash", "width": 1.5}, hoverinfo="skip",
           meta={"role": "threshold", "method": trace.method, "value": tau}),
    ]
    where = f"iteration {t}" if step is None else f"inner step {step} of iteration {t}"
    return spec(data, dict(
        title={"text": f"{trace_label(trace)}: |x| at {where}<br><sup>"
                       f"{len(nz)} nonzeros, s={s}, |Z|={len(Z)}</sup>", "x": 0.02},
        height=340, margin={"l": 60, "r": 20, "t": 70, "b": 90},
        xaxis={"title": {"text": "coordinate j"}, "range": [-0.5, d - 0.5]},
        yaxis={"title": {"text": "|x_j|"}, "rangemode": "tozero"},
        legend=LEGEND,
        meta={"t": t, "step": step, "threshold": tau}))


def coefficients(trace, t=-1, step=None):
    """Magnitudes of the iterate at one moment, with ``x*``, the threshold and ``Z``.

    Parameters
    ----------
    trace : Trace or SolveResult
    t : int, default -1
        Outer iteration.
    step : int, optional
        Inner step within iteration ``t`` (see :func:`~rgrasp_viz.analysis.snapshot`);
        default: ``x^t`` itself.

    Returns
    -------
    plotly.graph_objects.Figure
        ``meta["role"]``: ``"stems"`` (``|v_j|`` for the nonzeros, vertical segments with
        NaN gaps), ``"heads"`` (one marker per nonzero; ``x`` the coordinates), ``"x_true"``
        (``|x*_j|``), ``"Z"`` (the ``2s`` gradient directions chosen at iteration ``t``,
        markers on the axis), ``"threshold"`` (the ``s``-th largest magnitude of ``v``:
        what ``H_s`` would keep).
    """
    return figure(coefficients_spec(trace, t=t, step=step))


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
    return figure(progress_spec(trace, t=t, step=step))
