"""Solvers: one outer loop in Python (:mod:`._driver`) around per-method steps
(:mod:`.methods`) whose inner epochs run in the Numba kernels; every method is described by
one entry of the registry (:mod:`.registry`)."""

from ._common import default_eta, restricted_row_smoothness, restricted_smoothness
from ._driver import solve
from .registry import (
    READINGS,
    MethodSpec,
    get_method,
    method_color,
    method_label,
    method_names,
    run_label,
)
from .status import Status

__all__ = ["READINGS", "MethodSpec", "Status", "default_eta", "get_method", "method_color",
           "method_label", "method_names", "restricted_row_smoothness",
           "restricted_smoothness", "run_label", "solve"]
