"""Visualization layer: pure figure builders, export, and ipywidgets dashboards.

* :mod:`rgrasp_viz.viz.figures` -- Trace(s) in, ``plotly.graph_objects.Figure`` out; no
  widgets, no solver calls, no timing; one fixed colour per method (from the method
  registry).  The numbers behind them: :mod:`rgrasp_viz.analysis`.
* :mod:`rgrasp_viz.viz.export` -- figures to HTML or PNG files.
* :mod:`rgrasp_viz.viz.dashboards` -- :func:`explore`, :func:`play`, :func:`compare`:
  widgets, debounced re-solves and figure widgets of our own (an anywidget drawn with
  plotly.js's public API; replays played by the page).
* :func:`measured_threshold_cost` -- the cost of one hard thresholding on this machine, a
  cost model to pass as ``cost=`` to the thresholding figures.

Nothing here is imported by ``import rgrasp_viz``: the solver core never loads plotly or
ipywidgets; ``rv.explore``, ``rv.play``, ``rv.compare`` and ``rv.viz`` load this package on
first use.
"""

from __future__ import annotations

from . import figures
from ._cost import measured_threshold_cost as measured_threshold_cost
from .figures import *  # noqa: F403 - figures.__all__ is the one list

_DASHBOARDS = ("explore", "play", "compare", "Explorer", "Player", "Comparison", "Debouncer")


def __getattr__(name):
    # dashboards pull in ipywidgets; load them only when asked for
    if name in _DASHBOARDS:
        from . import dashboards

        return getattr(dashboards, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# everything the figures module exports, plus the cost model and the lazily loaded dashboards
__all__ = sorted([*figures.__all__, "compare", "explore", "measured_threshold_cost", "play"])
