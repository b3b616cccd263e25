"""What the dashboards share: figure widgets and their updates, status lines."""

from __future__ import annotations

import contextlib
import html

from plotly.basedatatypes import Undefined as _UNDEFINED

from ..figures import TEMPLATE
from ._figurewidget import LiveFigure


def figure_widget(spec):
    """A :class:`LiveFigure` holding the full data and layout of ``spec`` from the start."""
    return LiveFigure(spec)


def update_figure(fw, spec):
    """Make ``fw`` show ``spec`` (a builder's ``*_spec`` output) with one message.

    When the traces keep their number and types (the usual case: builders emit a fixed
    structure), every trace property and layout entry of ``spec`` is applied to the Python
    figure as one ``plotly_update``, without per-property validation (the specs come from the
    builders, whose output is validated whenever a ``go.Figure`` is made from them).
    Otherwise the traces are replaced.  A :class:`LiveFigure` then sends the changed traces
    and layout whole, once, and the page redraws them with ``Plotly.react``.

    Parameters
    ----------
    fw : plotly.graph_objects.FigureWidget
    spec : dict
        ``{"data": [trace dicts], "layout": {...}}``.
    """
    data, layout = spec["data"], spec["layout"]
    relayout = {k: v for k, v in layout.items() if k != "template"}
    same = len(fw.data) == len(data) and all(
        t.type == d.get("type", "scatter") for t, d in zip(fw.data, data, strict=True))
    hold = fw.hold() if isinstance(fw, LiveFigure) else contextlib.nullcontext()
    with hold:
        if not same or any(k not in fw.layout for k in relayout):
            # new structure (e.g. the first run to show): validated assignments
            if not same:
                fw.data = ()
                fw.add_traces(data)
            with fw.batch_update():
                for key, val in relayout.items():
                    fw.layout[key] = val
            return
        keys = []
        for d in data:
            keys += [k for k in d if k != "type" and k not in keys]
        restyle = {k: [d.get(k, _UNDEFINED) for d in data] for k in keys}
        with fw.batch_update():
            fw.plotly_update(restyle_data=restyle, relayout_data=relayout,
                             trace_indexes=list(range(len(data))))


def empty_spec(title="no run to show yet", height=300):
    """A figure without data (a dashboard before its first successful run)."""
    return {"data": [], "layout": {"template": TEMPLATE, "height": height,
                                   "title": {"text": title, "x": 0.02}}}


def esc(text):
    """``text`` escaped for an HTML widget."""
    return html.escape(str(text))


_BOX_COLORS = {"ok": ("#1B5E20", "#E8F5E9"), "warn": ("#8A4B00", "#FFF4E5"),
               "error": ("#8B0000", "#FDECEA"), "busy": ("#333333", "#F2F2F2")}


def status_box(text, kind):
    """A status line (``kind``: ok, warn, error or busy) as HTML; ``text`` is HTML."""
    fg, bg = _BOX_COLORS[kind]
    return (f'<div class="rgrasp-status rgrasp-{kind}" style="color:{fg};background:{bg};'
            f'padding:4px 8px;border-radius:4px;font-size:13px">{text}</div>')
