"""Pure figure builders: :class:`~rgrasp_viz.Trace` (or results) in, ``go.Figure`` out.

Nothing here runs a solver, times anything, solves a sub-problem or starts a browser: the
numbers come from :mod:`rgrasp_viz.analysis`, files are written by
:mod:`rgrasp_viz.viz._export` (both re-exported here for convenience).  Every builder accepts
a :class:`~rgrasp_viz.Trace` or anything with a ``.trace`` attribute (a
:class:`~rgrasp_viz.SolveResult`) and returns a fresh ``plotly.graph_objects.Figure`` whose
traces carry a ``meta`` dict (``{"role": ..., "method": ...}``) so that dashboards and tests
can find them; ``*_spec`` twins return the same figure as plain dicts.

The number of plotly traces a builder emits depends only on the number of runs passed in,
never on the method or the data (empty traces are kept), so a dashboard can update a
figure widget in place when a slider changes.

Labels and colours come from the method registry (:mod:`rgrasp_viz.solvers._registry`).

=====================  ==============================================================
module                 figures
=====================  ==============================================================
``_convergence``       :func:`convergence`
``_raster``            :func:`support_raster`
``_thresholding``      :func:`threshold_timeline`
``_moments``           :func:`coefficients`, :func:`progress`
``_slack``             :func:`slack_descent`
``_condition_map``     :func:`condition_map` (from a ``reproduce condition-map`` record)
``_steps``             :func:`step_sensitivity`
``_path``              :func:`path_figure` (an estimator's path over ``s``, not a trace)
``_base``              template, plain-dict traces and specs
=====================  ==============================================================
"""

from __future__ import annotations

# numbers and labels the builders share, kept here for the dashboards' ``F.x`` shorthand;
# their public home is rgrasp_viz.analysis / rgrasp_viz.solvers
from ...analysis import (  # noqa: F401
                         SLACK_MAX_CELLS,
                         checkpoint_positions,
                         estimate_fstar,
                         event_positions,
                         raster_matrix,
                         raster_rows,
                         run_labels,
                         slack_ratios,
                         snapshot,
                         threshold_share,
)
from ...solvers._registry import method_color, method_label  # noqa: F401
from .._export import export, find_chromium
from ._base import TEMPLATE, esc
from ._condition_map import condition_map, condition_map_spec
from ._convergence import (
    DIVERGED_CUT,
    GAP_FLOOR_RTOL,
    convergence,
    convergence_spec,
    gap_floor,
)
from ._moments import (
    coefficient_range,
    coefficients,
    coefficients_spec,
    progress,
    progress_spec,
)
from ._path import path_figure, path_figure_spec
from ._raster import (
    LABEL_CHARS,
    LABEL_PX,
    RASTER_CATEGORIES,
    ROW_PX,
    fit_row_labels,
    raster_cursor,
    row_ticks,
    support_raster,
    support_raster_spec,
    with_cursor,
)
from ._slack import slack_descent, slack_descent_spec
from ._steps import step_sensitivity, step_sensitivity_spec
from ._thresholding import threshold_timeline, threshold_timeline_spec

__all__ = [
    "DIVERGED_CUT",
    "GAP_FLOOR_RTOL",
    "LABEL_CHARS",
    "LABEL_PX",
    "RASTER_CATEGORIES",
    "ROW_PX",
    "TEMPLATE",
    "coefficient_range",
    "coefficients",
    "coefficients_spec",
    "condition_map",
    "condition_map_spec",
    "convergence",
    "convergence_spec",
    "esc",
    "export",
    "find_chromium",
    "fit_row_labels",
    "gap_floor",
    "path_figure",
    "path_figure_spec",
    "progress",
    "progress_spec",
    "raster_cursor",
    "row_ticks",
    "slack_descent",
    "slack_descent_spec",
    "step_sensitivity",
    "step_sensitivity_spec",
    "support_raster",
    "support_raster_spec",
    "threshold_timeline",
    "threshold_timeline_spec",
    "with_cursor",
]
