"""Solvers: one outer loop in Python (:mod:`._driver`) around per-method steps
(:mod:`.methods`) whose inner epochs run in the Numba kernels."""

from ._common import default_eta, restricted_row_smoothness, restricted_smoothness
from ._driver import solve
from .methods import METHODS

__all__ = ["METHODS", "default_eta", "restricted_row_smoothness", "restricted_smoothness",
           "solve"]
