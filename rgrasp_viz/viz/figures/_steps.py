"""Step sensitivity: passes to the speed target against the step-size factor, per method."""

from __future__ import annotations

import math

from ...solvers._registry import method_color
from ._base import LEGEND, esc, figure, spec, tr


def step_sensitivity_spec(sensitivity):
    """Plain-dict form of :func:`step_sensitivity`: ``{"data": [...], "layout": {...}}``.

    Parameters and meaning as for :func:`step_sensitivity`.

    Returns
    -------
    dict
    """
    if not isinstance(sensitivity, dict) or not isinstance(sensitivity.get("methods"), dict):
        raise ValueError("sensitivity must be run.json's step_sensitivity: a dict with "
                         "'methods' (per method: 'factors', 'passes', 'diverged', 'chosen')")
    methods = sensitivity["methods"]
    shown = [p for m in methods.values() for p in m["passes"] if p is not None]
    budget = sensitivity.get("budget_passes")
    # runs that never reach the target (or diverge) are drawn on a row above every value
    top = max(shown + ([budget] if budget else [])) * 1.15 if shown or budget else 1.0
    data = []
    for row, (key, m) in enumerate(methods.items()):
        # each method's misses on its own row above the lines, so that they do not hide
        # each other
        miss_y = top * (1 + 0.06 * row)
        method = key.split("|")[0]
        color = method_color(method)
        label = esc(m.get("label", key))
        f = list(m["factors"])
        passes = [p if p is not None else math.nan for p in m["passes"]]
        diverged = list(m.get("diverged", [False] * len(f)))
        data.append(tr("scatter", x=f, y=passes, mode="lines+markers", name=label,
                       line={"color": color}, marker={"color": color, "size": 7},
                       hovertemplate="factor %{x:.3g}<br>%{y:.3g} passes<extra>" + label +
                                     "</extra>",
                       meta={"role": "passes", "method": key}))
        miss_x = [x for x, p in zip(f, m["passes"], strict=True) if p is None]
        miss_text = ["diverged" if dv else "never" for p, dv in
                     zip(m["passes"], diverged, strict=True) if p is None]
        data.append(tr("scatter", x=miss_x, y=[miss_y] * len(miss_x), mode="markers",
                       name=f"{label}: never / diverged", showlegend=False,
                       marker={"color": color, "symbol": "x", "size": 9},
                       customdata=miss_text,
                       hovertemplate="factor %{x:.3g}: %{customdata}<extra>" + label +
                                     "</extra>",
                       meta={"role": "missed", "method": key}))
        chosen = m.get("chosen")
        cy = [p for x, p in zip(f, passes, strict=True) if chosen is not None and x == chosen]
        cy = [miss_y if (not cy or math.isnan(cy[0])) else cy[0]] if chosen is not None \
            else []
        data.append(tr("scatter", x=[chosen] if chosen is not None else [], y=cy,
                       mode="markers", name=f"{label}: chosen", showlegend=False,
                       marker={"color": color, "symbol": "star", "size": 15,
                               "line": {"color": "black", "width": 1}},
                       hovertemplate="chosen factor %{x:.3g}<extra>" + label + "</extra>",
                       meta={"role": "chosen", "method": key}))
    seeds = sensitivity.get("tuning_seeds") or []
    sub = esc(sensitivity.get("target", ""))
    if seeds:
        sub += f"; worst of tuning seeds {', '.join(str(s) for s in seeds)}"
    return spec(data, dict(
        title={"text": "Step sensitivity: passes to the speed target vs step factor"
                       f"<br><sup>{sub}; ★ chosen, × never / diverged</sup>"},
        xaxis={"title": {"text": "factor × default_eta"}, "type": "log",
               "tickvals": sensitivity.get("grid") or None,
               "tickformat": ".3g"},
        yaxis={"title": {"text": "effective passes to the speed target"}},
        legend=LEGEND, height=460, margin={"t": 90, "b": 110}))


def step_sensitivity(sensitivity):
    """Passes to the speed target at every step-size factor, one line per method.

    Parameters
    ----------
    sensitivity : dict
        ``run.json``'s ``step_sensitivity`` (:func:`rgrasp_viz.reproduce.tune`): per
        method, ``factors``, ``passes`` (``None``: never reached on some tuning seed, or
        diverged), ``diverged`` and ``chosen``; optionally ``grid``, ``tuning_seeds``,
        ``target`` and ``budget_passes``.

    Returns
    -------
    plotly.graph_objects.Figure
        Per method three traces (``meta["role"]``: ``"passes"``, the line; ``"missed"``,
        crosses on a row of its own above the lines at the factors that never reach the
        target or diverge; ``"chosen"``, a star at the chosen factor), log factor axis.
    """
    return figure(step_sensitivity_spec(sensitivity))
