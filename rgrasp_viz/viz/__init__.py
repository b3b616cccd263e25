"""Visualization layer: pure figure builders and ipywidgets dashboards.

* :mod:`rgrasp_viz.viz.figures` -- Trace(s) in, ``plotly.graph_objects.Figure`` out; no
  widgets, no solver calls; one fixed colour per method (:data:`METHOD_COLORS`).
* :mod:`rgrasp_viz.viz.dashboards` -- :func:`explore`, :func:`play`, :func:`compare`:
  widgets, debounced re-solves and ``FigureWidget`` updates.

Nothing here is imported by ``import rgrasp_viz``: the solver core never loads plotly or
ipywidgets; ``rv.explore``, ``rv.play``, ``rv.compare`` and ``rv.viz`` load this package on
first use.
"""

from __future__ import annotations

from .figures import (
    METHOD_COLORS,
    METHOD_LABELS,
    checkpoint_positions,
    coefficients,
    convergence,
    estimate_fstar,
    event_positions,
    export,
    find_chromium,
    method_color,
    method_label,
    progress,
    run_labels,
    slack_descent,
    slack_ratios,
    snapshot,
    support_raster,
    threshold_share,
    threshold_timeline,
)

_DASHBOARDS = ("explore", "play", "compare", "Explorer", "Player", "Comparison", "Debouncer")


def __getattr__(name):
    # dashboards pull in ipywidgets; load them only when asked for
    if name in _DASHBOARDS:
        from . import dashboards

        return getattr(dashboards, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "METHOD_COLORS",
    "METHOD_LABELS",
    "checkpoint_positions",
    "coefficients",
    "compare",
    "convergence",
    "estimate_fstar",
    "event_positions",
    "explore",
    "export",
    "find_chromium",
    "method_color",
    "method_label",
    "play",
    "progress",
    "run_labels",
    "slack_descent",
    "slack_ratios",
    "snapshot",
    "support_raster",
    "threshold_share",
    "threshold_timeline",
]
