"""What every figure builder shares: the template, plain-dict traces and specs, legends."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

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
"""A small plotly template: white, light grid (cheap to validate, unlike ``"plotly_white"``)."""

LEGEND = {"orientation": "h", "yref": "container", "yanchor": "bottom", "y": 0.0, "x": 0}
LEGEND_TOP = {"orientation": "h", "yanchor": "bottom", "y": 1.0, "xanchor": "right", "x": 1}


def tr(kind, **props):
    """One trace as a plain dict."""
    return {"type": kind, **props}


def spec(data, layout):
    """A figure as plain dicts: ``{"data": [...], "layout": {...}}`` with the template."""
    layout = dict(layout)
    layout.setdefault("template", TEMPLATE)
    return {"data": data, "layout": layout}


def figure(spec_):
    """The validated ``go.Figure`` of a spec."""
    return go.Figure(spec_)


def finite_or_nan(a):
    """A float copy of ``a`` with non-finite entries as NaN (gaps in a plotted line)."""
    a = np.asarray(a, dtype=np.float64).copy()
    a[~np.isfinite(a)] = np.nan
    return a


def short(text, n=140):
    """``text`` cut to ``n`` characters (with an ellipsis)."""
    return text if len(text) <= n else text[: n - 1] + "…"
