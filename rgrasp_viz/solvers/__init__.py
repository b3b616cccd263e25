"""Solvers: the method registry (``_registry.py``, built-in entries in ``_builtins.py``),
Algorithm 1 with its step-5 solver as a parameter (``_rgrasp.py``, ``_subsolvers.py``), the
other methods (``_methods.py``), step-size rules (``_steps.py``), parameter checking
(``_params.py``) and the driver ``solve`` (:mod:`._driver`)."""

from . import _builtins  # noqa: F401 - registers the built-in methods
from ._driver import solve, warm_up  # noqa: F401 - solve: rv.solve
from ._exact import WORK_RTOL
from ._params import (  # noqa: F401 - rv.cuts_per_epoch
    SolveParams,
    check_int,
    check_nonneg,
    check_params,
    cuts_per_epoch,
)
from ._registry import (  # noqa: F401 - get_method, method_names: rv.*
    READINGS,
    MethodSpec,
    get_method,
    method_color,
    method_label,
    method_names,
    run_label,
)
from ._rgrasp import (  # noqa: F401 - rv.*
    SubProblem,
    hard_threshold,
    register_method,
    unregister_method,
)
from ._status import Status  # noqa: F401 - rv.Status
from ._steps import (  # noqa: F401 - default_eta: rv.default_eta
    default_eta,
    restricted_row_smoothness,
    restricted_smoothness,
)

# one public home per name: solve, Status, SubProblem, cuts_per_epoch, default_eta, get_method,
# hard_threshold, method_names, register_method and unregister_method are rgrasp_viz.*
# (imported here for the package's own use)
__all__ = ["READINGS", "WORK_RTOL", "MethodSpec", "SolveParams", "check_int", "check_nonneg",
           "check_params", "method_color", "method_label", "restricted_row_smoothness",
           "restricted_smoothness", "run_label", "warm_up"]
