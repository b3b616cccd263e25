"""Parameter sweeps as figures with Plotly's own slider: drag a parameter without a kernel.

The dashboards (:func:`rgrasp_viz.explore`) re-solve whenever a slider moves, which needs a
running Python kernel.  A static page (the course website) cannot solve, but it can hold
runs computed beforehand: :func:`parameter_sweep_figure` turns the runs of one parameter's
values (the other parameters at their defaults) into one figure whose slider, drawn and
moved by plotly.js alone, shows the run of the chosen value: the convergence panels the
dashboard draws (objective gap against one shared ``F*`` and relative error, by effective
pass), with fixed axes so that moving the slider shows the change, and the run's status in
the title.

The builder is pure: it draws given runs and never solves (the site's build script solves
the sweeps, see ``scripts/build_site.py``).  :func:`correlation_sweep_figure` does the same
for the correlation ``rho`` of the design, over the runs recorded by ``python -m rgrasp_viz
reproduce condition-map`` (too long to solve while the site builds): every method's gap
curve at the chosen ``rho``, so that moving the slider shows FG-HT's lead shrink and vanish.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..analysis import FStar, as_trace, estimate_fstar
from ..solvers import cuts_per_epoch, method_color
from ..solvers._registry import get_method, method_label
from ..solvers._status import Status
from .figures import TEMPLATE, convergence_spec
from .figures._base import figure

__all__ = ["CORRELATION_FLOOR", "SWEEP_PARAMETERS", "correlation_sweep_figure",
           "parameter_sweep_figure"]

SWEEP_PARAMETERS = {
    "m": "SVRGSP+ cuts to |T| every ⌈J/m⌉ inner steps",
    "J": "inner steps per epoch",
    "eta": "step size η",
    "s": "sparsity level",
}
"""The parameters a sweep figure is made for, with what they mean (the slider's label)."""

_RESTYLED = ("x", "y", "name", "line", "marker", "hovertemplate", "meta")
"""Trace properties a slider step replaces (everything that differs between runs)."""


def _plain(value):
    """``value`` as JSON-ready Python: arrays as lists, non-finite numbers as None."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def _label(value):
    if isinstance(value, numbers.Integral):
        return str(int(value))
    return f"{float(value):.3g}"


def _status_line(trace):
    code = trace.meta.get("status")
    try:
        status = Status(code).name
    except ValueError:
        status = str(code)
    passes = float(np.asarray(trace.passes, dtype=np.float64)[-1]) if len(trace) else 0.0
    return f"{status}, {trace.n_iter} iterations, {passes:.0f} passes"


def _cuts_note(trace):
    """`` (5 cuts per epoch)`` for a run of a method that uses ``m`` (SVRGSP+ in the paper's
    reading), from :func:`~rgrasp_viz.cuts_per_epoch`; empty otherwise."""
    meta = trace.meta
    try:
        uses_m = get_method(trace.method).uses_m
    except (KeyError, ValueError):  # a method not registered in this session
        return ""
    if not uses_m or meta.get("inner") == "on_T" or not meta.get("J") or not meta.get("m"):
        return ""
    cuts = cuts_per_epoch(int(meta["J"]), int(meta["m"]))
    return f" ({cuts} cut{'s' if cuts != 1 else ''} per epoch)"


def _finite_range(arrays, log):
    values = np.concatenate([np.asarray([np.nan if v is None else v for v in a],
                                        dtype=np.float64) for a in arrays] or [[np.nan]])
    values = values[np.isfinite(values)]
    if log:
        values = values[values > 0]
    if not values.size:
        return None
    lo, hi = float(values.min()), float(values.max())
    if log:
        lo, hi = math.log10(lo), math.log10(hi)
        pad = 0.05 * max(hi - lo, 1.0)
    else:
        pad = 0.03 * max(hi - lo, 1.0)
    return [lo - pad, hi + pad]


def parameter_sweep_figure(results, param, *, default=None, fstar=None, title=None):
    """A convergence figure with a Plotly slider over the runs of one parameter's values.

    Parameters
    ----------
    results : sequence of (value, run)
        The parameter's values in slider order, each with its run (a ``SolveResult`` or a
        ``Trace``; all on one problem, all other parameters equal).
    param : str
        The parameter's name (``"m"``, ``"J"``, ``"eta"``, ``"s"`` or another solve
        argument), shown on the slider.
    default : optional
        The value the figure opens on and marks "(default)" (default: the first).
    fstar : None, float or FStar, optional
        ``F*`` for every run's objective gap, shared by all values so that moving the slider
        moves the curve and not the reference.  Default: :func:`estimate_fstar` over all
        runs (pass a lower reference, e.g. an exact fit, so that no run shown defines it).
    title : str, optional
        What the runs are (default: the method's label).

    Returns
    -------
    plotly.graph_objects.Figure
        Two panels (objective gap, relative error, by effective pass) drawing the run of the
        slider's value; ``layout.sliders[0].steps[k]`` holds the ``"update"`` that draws
        value ``k`` (``args[0]``: the traces' data, ``args[1]``: the title), and
        ``layout.meta["sweep"]`` the parameter, its values and the default's position.

    Raises
    ------
    ValueError
        When ``results`` is empty, a value repeats, or ``default`` is not among the values.
    """
    results = list(results)
    if not results:
        raise ValueError("parameter_sweep_figure needs at least one (value, run) pair")
    values = [v for v, _ in results]
    if len(set(map(repr, values))) != len(values):
        raise ValueError(f"the values of {param!r} repeat: {values}")
    labels = [_label(v) for v in values]
    if default is None:
        active = 0
    else:
        matches = [k for k, v in enumerate(values) if v == default]
        if not matches:
            raise ValueError(f"default {param}={default!r} is not among the values {values}")
        active = matches[0]
    traces = [as_trace(r) for _, r in results]
    if isinstance(fstar, FStar):
        fs = fstar
    elif fstar is None:
        fs = estimate_fstar(traces)
    else:
        fs = estimate_fstar(traces, reference=float(fstar))
    name = method_label(traces[0].method)
    head = title or name
    specs = [convergence_spec([t], x="passes", y="both", fstar=fs, xscale="linear")
             for t in traces]
    if len({len(s["data"]) for s in specs}) != 1:  # pragma: no cover - one run, two panels
        raise ValueError("the runs give figures of different shapes")

    def heading(k):
        mark = " (default)" if k == active else ""
        return (f"{head}: {param} = {labels[k]}{mark}{_cuts_note(traces[k])} · "
                f"{_status_line(traces[k])}<br><sup>{fs.source}</sup>")

    steps = []
    for k, sp in enumerate(specs):
        restyle = {key: [_plain(d.get(key)) for d in sp["data"]] for key in _RESTYLED}
        steps.append({"label": labels[k], "method": "update",
                      "args": [restyle, {"title.text": heading(k),
                                         "annotations": _plain(sp["layout"]
                                                               .get("annotations", []))}]})
    base = specs[active]
    layout = dict(base["layout"])
    # fixed axes over every value's run, so that moving the slider moves the curve; a
    # diverged run leaves the plot (as in the dashboard) instead of stretching the axis
    kept = [d for s in specs for d in s["data"] if not (d.get("meta") or {}).get("diverged")]
    kept = kept or [d for s in specs for d in s["data"]]
    xr = _finite_range([d["x"] for d in kept], log=False)
    y1 = _finite_range([d["y"] for d in kept if d.get("yaxis", "y") == "y"], log=True)
    y2 = _finite_range([d["y"] for d in kept if d.get("yaxis") == "y2"], log=True)
    for axis, rng in (("xaxis", xr), ("xaxis2", xr), ("yaxis", y1), ("yaxis2", y2)):
        if axis in layout and rng is not None:
            layout[axis] = {**layout[axis], "range": rng, "autorange": False}
    layout["title"] = {**layout.get("title", {}), "text": heading(active)}
    layout["height"] = int(layout.get("height", 380)) + 90
    margin = dict(layout.get("margin", {}))
    margin["b"] = int(margin.get("b", 90)) + 90
    layout["margin"] = margin
    layout["showlegend"] = False  # one run at a time: the title names it
    layout["sliders"] = [{
        "active": active, "steps": steps, "pad": {"t": 60}, "len": 1.0, "x": 0,
        "currentvalue": {"prefix": f"{param} = ", "font": {"size": 14}},
        "name": param,
    }]
    meta = dict(layout.get("meta") or {})
    meta["sweep"] = {"param": param, "values": _plain(values), "labels": labels,
                     "default": active, "fstar": _plain(fs.value)}
    layout["meta"] = meta
    data = [dict(d) for d in base["data"]]
    layout["template"] = TEMPLATE
    return figure({"data": data, "layout": layout})


CORRELATION_FLOOR = 1e-7
"""Smallest fraction ``(F - F*) / (F0 - F*)`` the correlation slider draws: a run that gets
below it (or to ``F*`` itself) is drawn at the floor, which is labelled, instead of diving
toward 0 on the log axis (two decades below the map's lowest level)."""


def correlation_sweep_figure(record, shape="paper", *, default=None, floor=CORRELATION_FLOOR):
    """Every method's gap by pass, with a Plotly slider over the design's correlation ``rho``.

    Parameters
    ----------
    record : dict
        The record of ``reproduce condition-map`` (``run.json``; the course's copy is
        ``notebooks/data/condition-map.json``): its ``curves`` (one seed's
        ``(F - F*) / (F0 - F*)`` by pass per shape, rho and method), ``map`` and ``winner``.
    shape : str
        Which shape of the record to draw.
    default : float, optional
        The rho the figure opens on (default: the smallest).
    floor : float
        :data:`CORRELATION_FLOOR`.

    Returns
    -------
    plotly.graph_objects.Figure
        One trace per method (``meta["method"]``) and a dotted line at the speed target;
        ``layout.sliders[0].steps[k]`` redraws the curves of ``rho`` number ``k``
        (``args[0]``: the method traces' ``x`` and ``y``; ``args[1]``: the title, naming the
        winner and FG-HT's passes; ``args[2]``: the indices of the method traces);
        ``layout.meta["sweep"]`` holds the values.

    Raises
    ------
    ValueError
        When the record has no curves for ``shape`` or ``default`` is not one of its rhos.
    """
    curves = [c for c in record.get("curves", []) if c["shape"] == shape]
    if not curves:
        raise ValueError(f"the condition-map record has no curves for shape {shape!r}")
    rhos = sorted({float(c["rho"]) for c in curves})
    methods = list(dict.fromkeys(c["method"] for c in curves))
    if default is None:
        active = 0
    elif float(default) in rhos:
        active = rhos.index(float(default))
    else:
        raise ValueError(f"default rho={default!r} is not among the record's {rhos}")
    target = float(record.get("speed_target", 1e-4))
    key = f"{target:g}"
    by = {(float(c["rho"]), c["method"]): c for c in curves}
    rows = {(float(r["rho"]), r["method"]): r for r in record.get("map", [])
            if r["shape"] == shape}
    wins = {float(w["rho"]): w for w in record.get("winner", []) if w["shape"] == shape}

    def ys(rho, m):
        c = by.get((rho, m))
        if c is None:
            return [], []
        y = [None if v is None else max(float(v), floor) for v in c["fraction"]]
        return list(c["passes"]), y

    def passes_text(rho, m):
        r = rows.get((rho, m))
        p = r["levels"][key]["passes"] if r else None
        return "never" if p is None else f"{p:.0f} passes"

    def heading(rho):
        w = wins.get(rho, {})
        fg = passes_text(rho, "fght")
        win = (f"fewest passes: {method_label(w['method'])} ({passes_text(rho, w['method'])})"
               if w.get("method") else "no method reaches it on every seed")
        return (f"ρ = {rho:g} · to {key} of the initial gap, {win}; FG-HT: {fg}"
                f"<br><sup>{shape} shape, seed {curves[0].get('seed', 0)}; passes: median "
                f"over the seeds; curves drawn down to a floor of {floor:g}</sup>")

    steps = []
    for rho in rhos:
        xy = [ys(rho, m) for m in methods]
        steps.append({"label": f"{rho:g}", "method": "update",
                      "args": [{"x": [x for x, _ in xy], "y": [y for _, y in xy]},
                               {"title.text": heading(rho)}, list(range(len(methods)))]})
    start = [ys(rhos[active], m) for m in methods]
    data = [{"type": "scatter", "mode": "lines", "x": x, "y": y, "name": method_label(m),
             "line": {"color": method_color(m), "width": 2},
             "hovertemplate": f"{method_label(m)}: pass %{{x:.1f}}, %{{y:.2e}}<extra></extra>",
             "meta": {"role": "gap", "method": m}}
            for m, (x, y) in zip(methods, start, strict=True)]
    xmax = max((max(c["passes"]) for c in curves if c["passes"]), default=1.0)
    data.append({"type": "scatter", "mode": "lines", "x": [0, xmax], "y": [target, target],
                 "name": f"target {key}", "line": {"color": "#888", "dash": "dot", "width": 1},
                 "hoverinfo": "skip", "meta": {"role": "target"}})
    layout = {
        "title": {"text": heading(rhos[active])},
        "xaxis": {"title": {"text": "effective passes"}, "range": [0, xmax],
                  "autorange": False},
        "yaxis": {"title": {"text": "(F − F*) / (F0 − F*)"}, "type": "log",
                  "range": [math.log10(floor) - 0.2, 0.2], "autorange": False,
                  "exponentformat": "power"},
        "height": 520, "margin": {"t": 100, "b": 150},
        "legend": {"orientation": "v", "x": 1.02, "y": 1},
        "sliders": [{"active": active, "steps": steps, "pad": {"t": 60}, "len": 1.0, "x": 0,
                     "currentvalue": {"prefix": "ρ = ", "font": {"size": 14}},
                     "name": "rho"}],
        "meta": {"sweep": {"param": "rho", "values": rhos, "labels": [f"{r:g}" for r in rhos],
                           "default": active, "shape": shape, "floor": floor,
                           "methods": methods}},
    }
    layout["template"] = TEMPLATE
    return figure({"data": data, "layout": layout})
