"""Dashboards: :func:`explore`, :func:`play`, :func:`compare` (ipywidgets + plotly FigureWidget).

Each dashboard is an ``ipywidgets.VBox`` (it displays itself in Jupyter, JupyterLab and
Voila) with its widgets, its ``FigureWidget``\\ s and its last result as attributes, so
notebooks and tests can drive it from Python.

Rules followed everywhere:

* every ``FigureWidget`` is built with its full data and layout in the constructor, and later
  changes go through :func:`update_figure` (one message per figure and change);
* animation uses an ipywidgets ``Play`` linked to a slider, never plotly frames;
* figures come from the pure builders of :mod:`rgrasp_viz.viz.figures`, numbers from
  :mod:`rgrasp_viz.analysis`; solving goes through :func:`rgrasp_viz.solve` (no kernel is
  touched here).

=================  ===============================================================
module             job
=================  ===============================================================
``debounce``       :class:`Debouncer`: latest request only, stale results dropped
``controls``       the explorer's controls, one table (:data:`controls.CONTROLS`)
``explorer``       :func:`explore`, :class:`Explorer`
``player``         :func:`play`, :class:`Player`
``comparison``     :func:`compare`, :class:`Comparison`
``_widgets``       figure widgets and their updates, status lines
=================  ===============================================================
"""

from __future__ import annotations

from ...analysis import replay_frames
from ._comparison import Comparison, compare
from ._debounce import Debouncer
from ._explorer import Explorer, explore
from ._player import Player, play
from ._widgets import update_figure

__all__ = ["Comparison", "Debouncer", "Explorer", "Player", "compare", "explore", "play",
           "replay_frames", "update_figure"]
