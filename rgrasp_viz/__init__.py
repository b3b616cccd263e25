"""rgrasp_viz: teach and visualize sparsity-constrained optimization.

The package implements the six algorithms compared in Shang et al., "Efficient Relaxed
Gradient Support Pursuit for Sparsity Constrained Non-convex Optimization" (IJCAI 2019) --
FG-HT, GraSP, SG-HT, SVRGHT, SVRGSP and SVRGSP+ -- and records everything a learner needs to
*see* in a :class:`Trace`.

>>> import rgrasp_viz as rv
>>> prob = rv.make_regression("classroom", random_state=0)
>>> res = rv.solve(prob, method="svrgsp+", s=24, random_state=0)
>>> bool(res.rel_error < 2e-2)  # the noise floor of this problem is about 1e-2
True

The visualization layer loads on first use (plotly and ipywidgets are never imported by
``import rgrasp_viz``): ``rv.explore()``, ``rv.play(result)`` (or ``result.play()``),
``rv.compare(problem)`` and ``rv.viz.figures`` (pure figure builders).  The scikit-learn
estimators ``rv.SparseLinearRegression`` and ``rv.SparseLogisticRegression`` load on first
use too (scikit-learn is an optional dependency).
"""

import importlib

from . import datasets, exceptions  # noqa: E402
from ._kernels import top_k  # noqa: E402
from ._problems import Problem, as_problem, make_classification, make_regression  # noqa: E402
from ._result import SolveResult  # noqa: E402
from ._trace import Trace  # noqa: E402
from ._version import __version__  # noqa: E402, F401
from .solvers import (  # noqa: E402
    Status,
    SubProblem,
    cuts_per_epoch,
    default_eta,
    get_method,
    hard_threshold,
    method_names,
    register_method,
    solve,
    unregister_method,
)

_LAZY = {"explore": "viz.dashboards", "play": "viz.dashboards", "compare": "viz.dashboards",
         "animate": "viz._animate"}
_ESTIMATORS = ("SparseLinearRegression", "SparseLogisticRegression")


def __getattr__(name):
    """Lazy access to the visualization layer: ``rv.explore``, ``rv.play``, ``rv.compare``
    and ``rv.viz`` import plotly/ipywidgets on first use, never at ``import rgrasp_viz``;
    ``rv.SparseLinearRegression`` and ``rv.SparseLogisticRegression`` import scikit-learn."""
    if name == "viz":
        return importlib.import_module(".viz", __name__)
    if name in _ESTIMATORS:  # scikit-learn is optional: imported on first use
        return getattr(importlib.import_module("._estimators", __name__), name)
    if name in _LAZY:
        module = importlib.import_module(f".{_LAZY[name]}", __name__)
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Problem",
    "SolveResult",
    "SparseLinearRegression",
    "SparseLogisticRegression",
    "Status",
    "SubProblem",
    "Trace",
    "__version__",
    "as_problem",
    "cuts_per_epoch",
    "datasets",
    "exceptions",
    "default_eta",
    "get_method",
    "hard_threshold",
    "make_classification",
    "make_regression",
    "method_names",
    "register_method",
    "solve",
    "top_k",
    "unregister_method",
]
