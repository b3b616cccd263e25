"""Static renderings of the dashboards, for pages without a Jupyter kernel.

A notebook saved without widget state (as the course notebooks are) keeps only a pointer to
each widget, so a page built from it (the course website, ``nbconvert``) would show an empty
box where a dashboard was.  Each dashboard therefore adds a second representation next to
ipywidgets' own: a ``text/html`` bundle holding its figures as they were when the cell ran,
as Plotly divs drawn by the page's own plotly.js (no request leaves the page), with a note
and a Binder link to the live version.  JupyterLab and Voila keep showing the live widget
(its MIME type ranks first there); the site shows the static copy.

Everything here is pure: figures in, a string out.  A dashboard says what its copy shows
through one public method, ``static_figures()`` (a title and figure specs); nothing else of
it is read here.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json

import numpy as np
import plotly.io as pio

__all__ = ["BINDER_LAB", "MAX_POINTS", "WIDGET_VIEW", "dashboard_bundle", "figure_html",
           "static_bundle", "static_html", "thin_figure"]

BINDER_LAB = ("https://mybinder.org/v2/gh/rgrasp-viz/rgrasp_viz/main"
              "?urlpath=lab/tree/notebooks")
"""Where the live course runs (JupyterLab on Binder, the ``notebooks/`` folder); the site
points each page's link at its own notebook."""

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
"""ipywidgets' MIME type: the live widget, which JupyterLab and Voila render first."""

MAX_POINTS = 4000
"""Largest number of points a trace keeps in a static copy (see :func:`thin_figure`)."""


def _decimate(n, max_points):
    """Indices of about ``max_points`` of ``n`` items, evenly spread, first and last kept."""
    return np.unique(np.r_[np.linspace(0, n - 1, max_points).astype(np.int64), n - 1])


def _as_array(v):
    """A trace's array as NumPy: plain lists, arrays, or plotly's base64 typed arrays
    (``{"dtype": "f8", "bdata": ..., "shape": ...}``); None for anything else."""
    if v is None:
        return None
    if isinstance(v, dict):
        if "bdata" not in v or "dtype" not in v:
            return None
        arr = np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
        shape = v.get("shape")
        if shape:
            dims = shape.split(",") if isinstance(shape, str) else shape
            arr = arr.reshape([int(k) for k in dims])
        return arr
    try:
        return np.asarray(v)
    except (TypeError, ValueError):
        return None


def thin_figure(fig_json, max_points=MAX_POINTS):
    """Keep at most about ``max_points`` points per trace, so that a static copy stays small.

    Thresholding timelines of long SVRGHT runs draw one short segment per inner step (tens
    of thousands of ``x, y, NaN`` triples); at the size of a page those marks overlap into a
    solid comb, so an evenly spread subset looks the same.  Segment traces
    (``meta["role"] == "marks"``) keep whole segments; other line traces keep evenly spread
    points (first and last included).  Traces that were thinned get
    ``meta["thinned_from"]`` (their original length), and the figure's
    ``layout.meta["static_thinned"]`` counts them.

    Parameters
    ----------
    fig_json : dict
        ``{"data": [...], "layout": {...}}`` (e.g. ``fig.to_plotly_json()``); not modified.
    max_points : int

    Returns
    -------
    dict
        A new figure dict.
    """
    if int(max_points) < 2:
        raise ValueError(f"max_points must be >= 2, got {max_points}")
    data = []
    thinned = 0
    for tr in fig_json.get("data", []):
        tr = dict(tr)
        x, y = _as_array(tr.get("x")), _as_array(tr.get("y"))
        n = 0 if x is None or x.ndim != 1 else len(x)
        if (tr.get("type", "scatter") in ("scatter", "scattergl") and n > max_points
                and y is not None and y.shape == x.shape):
            meta = dict(tr.get("meta") or {})
            if meta.get("role") == "marks" and n % 3 == 0:
                seg = _decimate(n // 3, max(1, max_points // 3))
                keep = (3 * seg[:, None] + np.arange(3)).ravel()
            else:
                keep = _decimate(n, max_points)
            tr["x"], tr["y"] = x[keep], y[keep]
            for key in ("customdata", "text", "hovertext"):
                arr = _as_array(tr.get(key))
                if arr is not None and arr.ndim >= 1 and len(arr) == n:
                    tr[key] = arr[keep]
            marker = tr.get("marker")
            if isinstance(marker, dict):
                marker = dict(marker)
                for key in ("size", "color", "symbol"):
                    arr = _as_array(marker.get(key))
                    if arr is not None and arr.ndim == 1 and len(arr) == n:
                        marker[key] = arr[keep]
                tr["marker"] = marker
            meta["thinned_from"] = n
            tr["meta"] = meta
            thinned += 1
        data.append(tr)
    layout = dict(fig_json.get("layout", {}))
    if thinned:
        meta = layout.get("meta")
        layout["meta"] = {**(meta if isinstance(meta, dict) else {}),
                          "static_thinned": thinned}
    return {"data": data, "layout": layout}


def figure_html(fig_json, div_id, config=None):
    """One figure as a div and the inline script that draws it with the page's ``Plotly``.

    Parameters
    ----------
    fig_json : dict
        ``{"data": [...], "layout": {...}}``; numeric arrays may be plotly's base64 typed
        arrays (``bdata``, read by plotly.js >= 2.28).
    div_id : str
        The div's id (unique within the page).
    config : dict, optional
        plotly.js config (default: responsive, no Plotly logo).

    Returns
    -------
    str
        ``<div class="rgrasp-static-figure">`` and a script that draws into it as soon as
        ``window.Plotly`` exists (at once, or on the page's ``load`` event).
    """
    payload = pio.to_json({"data": fig_json.get("data", []),
                           "layout": fig_json.get("layout", {})}, validate=False)
    config = {"responsive": True, "displaylogo": False} if config is None else config
    # a script element ends at the first "</script": keep the JSON from closing it
    payload = payload.replace("</", "<\\/")
    height = (fig_json.get("layout") or {}).get("height") or 450
    return (
        f'<div id="{div_id}" class="rgrasp-static-figure" style="height:{int(height)}px;'
        f'width:100%"></div>\n'
        f'<script type="text/javascript">(function() {{\n'
        f'  var fig = {payload};\n'
        f'  var config = {json.dumps(config)};\n'
        f'  function draw() {{\n'
        f'    var el = document.getElementById("{div_id}");\n'
        f'    if (el && window.Plotly) {{\n'
        f'      window.Plotly.newPlot(el, fig.data, fig.layout, config);\n'
        f'    }}\n'
        f'  }}\n'
        f'  if (window.Plotly) {{ draw(); }} else {{ window.addEventListener("load", draw); }}\n'
        f'}})();</script>')


def static_html(figures, *, title, binder_url=BINDER_LAB, max_points=MAX_POINTS):
    """The static copy of a dashboard: a note with a Binder link, then its figures.

    Parameters
    ----------
    figures : sequence of plotly Figure or FigureWidget (or their ``to_plotly_json()``)
        The dashboard's figures in display order.
    title : str
        What the dashboard is (one line, shown in the note).
    binder_url : str
        The live version (default: the course on Binder).
    max_points : int
        Per-trace point budget (see :func:`thin_figure`).

    Returns
    -------
    str
        HTML: ``<div class="rgrasp-static">`` with the note (``rgrasp-static-note``, a link
        of class ``rgrasp-binder``) and one ``rgrasp-static-figure`` div per figure, each
        drawn by an inline script with ``window.Plotly`` (no request leaves the page).  Ids
        are derived from the content, so re-running a cell gives the same HTML.
    """
    figs = [f if isinstance(f, dict) else f.to_plotly_json() for f in figures]
    figs = [thin_figure(f, max_points) for f in figs]
    digest = hashlib.sha1(json.dumps([title, len(figs)]).encode())
    for f in figs:
        digest.update(pio.to_json(f, validate=False).encode())
    base = f"rgrasp-static-{digest.hexdigest()[:12]}"
    thinned = sum(int((f["layout"].get("meta") or {}).get("static_thinned", 0))
                  for f in figs)
    extra = (f" Dense traces are thinned to about {max_points:,} points." if thinned
             else "")
    note = (f'<p class="rgrasp-static-note" style="font-size:13px;color:#555;margin:4px 0">'
            f"<b>{html.escape(title)}</b>: a static copy of the interactive dashboard, as it "
            f"was when the notebook ran (hover and zoom work; the controls need a Python "
            f"kernel).{extra} Live version: "
            f'<a class="rgrasp-binder" href="{html.escape(binder_url, quote=True)}" '
            f'target="_blank" rel="noopener">Binder</a>.</p>')
    divs = [figure_html(f, f"{base}-{k}") for k, f in enumerate(figs)]
    return f'<div class="rgrasp-static">\n{note}\n' + "\n".join(divs) + "\n</div>"


def static_bundle(widget_bundle, figures, *, title, binder_url=BINDER_LAB,
                  max_points=MAX_POINTS):
    """A dashboard's MIME bundle: ipywidgets' own plus the static ``text/html`` copy.

    Parameters
    ----------
    widget_bundle : dict or None
        What ``ipywidgets.Widget._repr_mimebundle_`` returned (``text/plain`` and the
        widget-view MIME type); kept as it is, so JupyterLab and Voila still show the live
        widget.
    figures, title, binder_url, max_points
        See :func:`static_html`.

    Returns
    -------
    dict
        ``widget_bundle`` with ``text/html`` added.
    """
    out = dict(widget_bundle or {})
    out["text/html"] = static_html(figures, title=title, binder_url=binder_url,
                                   max_points=max_points)
    return out


# -- the dashboards (each one's ``_repr_mimebundle_`` calls this) -----------------------------


def dashboard_bundle(dash, widget_bundle):
    """A dashboard's MIME bundle: ipywidgets' own plus the static copy of the figures its
    public :meth:`~rgrasp_viz.viz.dashboards.Explorer.static_figures` names (the one thing
    read from the dashboard).

    Parameters
    ----------
    dash : Explorer, Comparison or Player
        Anything with ``static_figures() -> (title, figures)``.
    widget_bundle : dict or None
        See :func:`static_bundle`.

    Returns
    -------
    dict
    """
    title, figures = dash.static_figures()
    return static_bundle(widget_bundle, figures, title=title)
