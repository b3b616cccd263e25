"""Solvers: the method registry (:mod:`.registry`, built-in entries in :mod:`.builtins`),
Algorithm 1 with its step-5 solver as a parameter (:mod:`.rgrasp`, :mod:`.subsolvers`), the
other methods (:mod:`.methods`), step-size rules (:mod:`.steps`), parameter checking
(:mod:`.params`) and the driver ``solve`` (:mod:`._driver`)."""

from . import builtins as _builtins  # noqa: F401 - registers the built-in methods
from ._driver import solve, warm_up
from ._exact import WORK_RTOL
from .params import SolveParams, check_params, cuts_per_epoch
from .registry import (
    READINGS,
    MethodSpec,
    get_method,
    method_color,
    method_label,
    method_names,
    run_label,
)
from .rgrasp import SubProblem, hard_threshold, register_method, unregister_method
from .status import Status
from .steps import default_eta, restricted_row_smoothness, restricted_smoothness

__all__ = ["READINGS", "WORK_RTOL", "MethodSpec", "SolveParams", "Status", "SubProblem",
           "check_params", "cuts_per_epoch", "default_eta", "get_method", "hard_threshold",
           "method_color", "method_label", "method_names", "register_method",
           "restricted_row_smoothness", "restricted_smoothness", "run_label", "solve",
           "unregister_method", "warm_up"]
