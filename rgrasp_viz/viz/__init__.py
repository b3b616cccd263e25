"""Visualization layer: pure figure builders, export, and ipywidgets dashboards.

* :mod:`rgrasp_viz.viz.figures` -- Trace(s) in, ``plotly.graph_objects.Figure`` out; no
  widgets, no solver calls, no timing; one fixed colour per method (from the method
  registry).  The numbers behind them: :mod:`rgrasp_viz.analysis`.
* :func:`rgrasp_viz.viz.figures.export` -- figures to HTML or PNG files.
* :mod:`rgrasp_viz.viz.dashboards` -- the widgets behind ``rv.explore``, ``rv.play`` and
  ``rv.compare``: debounced re-solves and ``FigureWidget`` updates.
* :func:`measured_threshold_cost` -- the cost of one hard thresholding on this machine, a
  cost model to pass as ``cost=`` to the thresholding figures.

Nothing here is imported by ``import rgrasp_viz``: the solver core never loads plotly or
ipywidgets; ``rv.explore``, ``rv.play``, ``rv.compare`` and ``rv.viz`` load this package on
first use.
"""

from __future__ import annotations

import importlib

from . import figures
from ._animate import Animation
from ._cost import measured_threshold_cost


def __getattr__(name):
    # the dashboards pull in ipywidgets; load them only when asked for
    if name == "dashboards":
        return importlib.import_module(".dashboards", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# one public home per name: the figure builders are rgrasp_viz.viz.figures.*, the dashboards'
# classes rgrasp_viz.viz.dashboards.*, and rv.explore / rv.play / rv.compare / rv.animate the
# functions that open them
__all__ = ["Animation", "figures", "measured_threshold_cost"]
