"""Dashboards: :func:`explore`, :func:`play`, :func:`compare` (ipywidgets + figure widgets of
our own).

Each dashboard is an ``ipywidgets.VBox`` (it displays itself in Jupyter, JupyterLab and
Voila) with its widgets, its figures (:class:`~._figure.Figure`, an anywidget drawn with
plotly.js's public API) and its last result as attributes, so notebooks and tests can drive
it from Python.

Rules followed everywhere:

* every figure is built with its full data and layout in the constructor, and later
  changes go through :func:`update_figure` (one message per figure and change);
* a replay is played by the page (:class:`~._figure.Replay`): frames computed once in
  Python, shipped once as binary buffers, stepped by the page; never plotly frames;
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
``_figure``        :class:`Figure` and :class:`Replay` (``figure.js``, ``replay.js``)
``_widgets``       figure widgets and their updates, status lines
``_base``          ``Dashboard``: busy and error lines, ``wait``, ``close``, the
                   static copy (``static_figures``) displayed next to the live widget
=================  ===============================================================
"""

from __future__ import annotations

from ._comparison import Comparison, compare  # noqa: F401 - compare: rv.compare
from ._debounce import Debouncer
from ._explorer import Explorer, explore  # noqa: F401 - explore: rv.explore
from ._figure import Figure, Replay
from ._player import Player, play  # noqa: F401 - play: rv.play

# one public home per name: the functions that open a dashboard are rv.explore, rv.play and
# rv.compare (loaded from here on first use); the widgets' classes live here
__all__ = ["Comparison", "Debouncer", "Explorer", "Figure", "Player", "Replay"]
