"""The condition map: passes to the speed target over (correlation rho, method), per shape.

Drawn from the record of ``python -m rgrasp_viz reproduce condition-map`` (its ``run.json``,
committed as ``notebooks/data/condition-map.json``); nothing is solved here.
"""

from __future__ import annotations

import math

from ...solvers import method_label
from ._base import esc, figure, spec, tr

__all__ = ["condition_map", "condition_map_spec"]

_GAP = 0.07
_HEAT = (0.36, 1.0)
_RATIO = (0.0, 0.24)
_TICKS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000)
_RATIO_TICKS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5)


def _rho_label(rho):
    return f"{float(rho):g}"


def _level_key(data, level):
    level = data.get("speed_target", 1e-4) if level is None else level
    return f"{float(level):g}"


def _check(data):
    for key in ("map", "winner", "constants"):
        if key not in data:
            raise ValueError(f"condition-map data lacks {key!r} (a run.json of "
                             "`reproduce condition-map` has map, winner and constants)")
    if not data["map"]:
        raise ValueError("condition-map data has an empty map")


def condition_map_spec(data, level=None, title=None):
    """:func:`condition_map` as plain dicts."""
    _check(data)
    key = _level_key(data, level)
    shapes = list(dict.fromkeys(r["shape"] for r in data["map"]))
    methods = list(dict.fromkeys(r["method"] for r in data["map"]))
    rhos = sorted({float(r["rho"]) for r in data["map"]})
    xs = [_rho_label(r) for r in rhos]
    ys = [method_label(m) for m in methods]
    rows = {(float(r["rho"]), r["shape"], r["method"]): r for r in data["map"]}
    finite = [r["levels"][key]["passes"] for r in data["map"]
              if r["levels"][key]["passes"] is not None and r["levels"][key]["passes"] > 0]
    zmin = math.log10(min(finite)) if finite else 0.0
    zmax = math.log10(max(finite)) if finite else 1.0
    width = (1.0 - _GAP * (len(shapes) - 1)) / len(shapes)
    traces, layout = [], {}
    for i, shape in enumerate(shapes):
        a, b = 2 * i + 1, 2 * i + 2
        dom = [i * (width + _GAP), i * (width + _GAP) + width]
        wins = [w for w in data["winner"] if w["shape"] == shape and w.get("method")]
        won = {(float(w["rho"]), w["method"]) for w in wins}
        z, text = [], []
        for m in methods:
            zr, tr_ = [], []
            for rho in rhos:
                r = rows.get((rho, shape, m))
                p = r["levels"][key]["passes"] if r else None
                zr.append(math.log10(p) if p and p > 0 else None)
                star = "★ " if (rho, m) in won else ""
                tr_.append("never" if r and p is None else ("" if not r else f"{star}{p:.0f}"))
            z.append(zr)
            text.append(tr_)
        traces.append(tr(
            "heatmap", x=xs, y=ys, z=z, text=text, texttemplate="%{text}",
            xaxis=f"x{a}", yaxis=f"y{a}", zmin=zmin, zmax=zmax, colorscale="Viridis",
            reversescale=True, showscale=i == len(shapes) - 1, hoverongaps=False,
            colorbar={"title": {"text": "passes<br>(log)"}, "len": 0.6, "y": 0.68,
                      "tickvals": [math.log10(v) for v in _TICKS
                                   if zmin - 1e-9 <= math.log10(v) <= zmax + 1e-9],
                      "ticktext": [f"{v:g}" for v in _TICKS
                                   if zmin - 1e-9 <= math.log10(v) <= zmax + 1e-9]},
            hovertemplate=f"{esc(shape)}: rho=%{{x}}, %{{y}}: %{{text}} passes<extra></extra>",
            meta={"role": "passes", "shape": shape, "level": key}))
        traces.append(tr(
            "scatter", mode="markers", x=[_rho_label(w["rho"]) for w in wins],
            y=[method_label(w["method"]) for w in wins], xaxis=f"x{a}", yaxis=f"y{a}",
            marker={"symbol": "square-open", "size": 34, "color": "black",
                    "line": {"width": 2.5}},
            name="winner", showlegend=i == 0, hoverinfo="skip",
            meta={"role": "winner", "shape": shape}))
        consts = sorted((c for c in data["constants"] if c["shape"] == shape),
                        key=lambda c: c["rho"])
        traces.append(tr(
            "scatter", mode="lines+markers", x=[_rho_label(c["rho"]) for c in consts],
            y=[c["ratio"] for c in consts], xaxis=f"x{b}", yaxis=f"y{b}",
            line={"color": "#444"}, name="max ||w_i||² / (n L)", showlegend=i == 0,
            hovertemplate="rho=%{x}: max ||w_i||² / (n L) = %{y:.3g}<extra></extra>",
            meta={"role": "ratio", "shape": shape}))
        traces.append(tr(
            "scatter", mode="lines", x=[xs[0], xs[-1]], y=[1.0, 1.0], xaxis=f"x{b}",
            yaxis=f"y{b}", line={"color": "#c44", "dash": "dash", "width": 1},
            name="ratio 1 (below: variance reduction can pay)", showlegend=i == 0,
            hoverinfo="skip", meta={"role": "ratio_one", "shape": shape}))
        c0 = consts[0] if consts else {}
        head = (f"{esc(shape)} shape" + (f" (n = {c0['n']}, d = {c0['d']}, s = {c0['s']})"
                                         if c0 else ""))
        layout[f"xaxis{a}"] = {"domain": dom, "anchor": f"y{a}", "type": "category",
                               "categoryorder": "array", "categoryarray": xs,
                               "title": {"text": head}, "side": "top"}
        layout[f"yaxis{a}"] = {"domain": list(_HEAT), "anchor": f"x{a}", "type": "category",
                               "categoryorder": "array", "categoryarray": ys,
                               "autorange": "reversed", "showticklabels": i == 0}
        layout[f"xaxis{b}"] = {"domain": dom, "anchor": f"y{b}", "type": "category",
                               "categoryorder": "array", "categoryarray": xs,
                               "range": [-0.5, len(xs) - 0.5],
                               "title": {"text": "correlation ρ"}}
        ticks = [v for v in _RATIO_TICKS
                 if min([c["ratio"] for c in consts] + [1.0]) / 1.5 <= v
                 <= max([c["ratio"] for c in consts] + [1.0]) * 1.5]
        layout[f"yaxis{b}"] = {"domain": list(_RATIO), "anchor": f"x{b}", "type": "log",
                               "tickvals": ticks, "ticktext": [f"{v:g}" for v in ticks],
                               "title": {"text": "smoothness ratio" if i == 0 else ""}}
    for ax in ("xaxis", "yaxis"):  # the template names the first axes without a number
        layout[ax] = layout.pop(f"{ax}1")
    layout.update({
        "title": {"text": title or (f"Passes to (F − F*)/(F0 − F*) ≤ {key} (median over the "
                                    "seeds; ★ boxed = fewest), and max ||w_i||² / (n L)")},
        "height": 640, "margin": {"t": 140, "b": 60, "l": 90, "r": 40},
        "legend": {"orientation": "h", "x": 0, "y": -0.12},
        "meta": {"figure": "condition_map", "level": key, "shapes": shapes,
                 "methods": methods, "rhos": rhos},
    })
    data_ = [dict(t) for t in traces]
    for t in data_:
        if t.get("xaxis") == "x1":
            t["xaxis"], t["yaxis"] = "x", "y"
    return spec(data_, layout)


def condition_map(data, level=None, title=None):
    """Passes to the speed target over (rho, method), the winner starred, with the smoothness
    ratio below.

    Parameters
    ----------
    data : dict
        The record of ``reproduce condition-map`` (``run.json``; the course's committed copy
        is ``notebooks/data/condition-map.json``): ``map`` rows with ``rho``, ``shape``,
        ``method`` and per-level ``passes``; ``winner`` (boxed, its passes starred);
        ``constants`` with ``ratio = max_i ||w_i||^2 / (n L)``.
    level : float, optional
        Which level's passes to draw (default: the record's speed target).
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure
        One column per shape: a heat map of ``log10`` passes (text: the passes, "never" when
        most seeds did not get there) with the winners starred, and the smoothness ratio
        against ``rho`` on a log axis below (a dashed line at 1).  Traces carry
        ``meta["role"]``: ``passes``, ``winner``, ``ratio``, ``ratio_one``.

    Raises
    ------
    ValueError
        When ``data`` is not such a record.
    """
    return figure(condition_map_spec(data, level, title))
