"""What every figure builder shares: the template, plain-dict traces and specs, legends."""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go

from ...analysis import identical_runs
from ...solvers import run_label

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


_NARROW = frozenset("fijlrtI.,:;!|()[]'` ")
_WIDE = frozenset("mwMW@%")


def text_px(text, size=12):
    """An estimate, on the wide side, of the width in pixels of one line of ``text`` drawn at
    ``size`` px in plotly's default sans-serif font (per character: 0.3 em narrow, 0.9 em
    wide, 0.7 em capitals, else 0.56 em).  For margins that are fixed rather than pushed by
    what they hold."""
    return size * sum(0.3 if c in _NARROW else 0.9 if c in _WIDE else 0.7 if c.isupper()
                      else 0.56 for c in str(text))


def figure(spec_):
    """The validated ``go.Figure`` of a spec."""
    return go.Figure(spec_)


def finite_or_nan(a):
    """A float copy of ``a`` with non-finite entries as NaN (gaps in a plotted line)."""
    a = np.asarray(a, dtype=np.float64).copy()
    a[~np.isfinite(a)] = np.nan
    return a


def esc(text):
    """``text`` (a run label, a method name, a message: anything that may come from a file or
    a user) escaped so that a page shows it literally.

    The one escaping helper of the figures and the dashboards: ipywidgets' ``HTML`` widgets
    set their value as HTML, and plotly.js renders a subset of HTML in titles, legend names,
    tick labels, annotations and hover templates (``<b>``, ``<br>``, ``<a href>``), while it
    shows the entities ``&lt;`` ``&gt;`` ``&amp;`` as the characters they stand for (quotes
    are left as they are: harmless in text, and plotly.js has no ``&quot;``).  Never use the
    result inside an HTML attribute.
    """
    return html.escape(str(text), quote=False)


def short(text, n=140):
    """``text`` cut to ``n`` characters (with an ellipsis)."""
    return text if len(text) <= n else text[: n - 1] + "…"


# -- telling runs apart ---------------------------------------------------------------------

DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
"""Line dashes given in turn to several runs of one method."""

_SHADES = (0.0, -0.35, 0.35, -0.55, 0.55, -0.7)


def shade(color, amount):
    """``color`` (``#RRGGBB``) mixed with black (``amount < 0``) or white (``amount > 0``)."""
    c = color.lstrip("#")
    rgb = [int(c[k:k + 2], 16) for k in (0, 2, 4)]
    target = 255 if amount > 0 else 0
    a = abs(float(amount))
    out = [round(v + (target - v) * a) for v in rgb]
    return "#" + "".join(f"{v:02X}" for v in out)


def run_styles(traces, labels, base_colors):
    """One line style per run: several runs of one method get distinct dashes and shades of
    the method's colour (their legend names carry the parameter that differs); runs that made
    identical iterates are drawn so that the one below still shows, and named in a note.

    Parameters
    ----------
    traces : list of Trace
    labels : list of str
        Legend names (:func:`~rgrasp_viz.analysis.run_labels`).
    base_colors : list of str
        The method colour of each run.

    Returns
    -------
    styles : list of dict
        ``color``, ``dash``, ``width`` per run.
    notes : list of str
        One line per group of identical runs, e.g. ``"SVRGSP+ (m=1) = SVRGSP+ (m=6):
        identical iterates"``.
    groups : list of list of int
        The identical groups (indices).
    """
    styles = [{"color": c, "dash": "solid", "width": 2} for c in base_colors]
    by_method = {}
    for i, t in enumerate(traces):
        by_method.setdefault(run_label(t), []).append(i)
    for members in by_method.values():
        if len(members) < 2:
            continue
        for k, i in enumerate(members):
            styles[i]["dash"] = DASHES[k % len(DASHES)]
            styles[i]["color"] = shade(base_colors[i], _SHADES[k % len(_SHADES)])
    groups = identical_runs(traces)
    notes = []
    for group in groups:
        # the first run of the group is drawn wide underneath, the others narrower on top
        # with dashes of their own, so that every one of them stays visible
        styles[group[0]]["width"] = 5
        used = {styles[group[0]]["dash"]}
        for i in group[1:]:
            if styles[i]["dash"] in used:
                styles[i]["dash"] = next(d for d in DASHES[1:] + DASHES[:1] if d not in used)
            used.add(styles[i]["dash"])
            styles[i]["width"] = 2
        notes.append(" = ".join(labels[i] for i in group) + ": identical iterates")
    return styles, notes, groups
