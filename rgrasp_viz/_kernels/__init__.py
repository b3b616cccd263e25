"""Numba kernels: the only subpackage that imports numba (through :mod:`._jit`).

Everything here works on plain, already-validated arrays; validation happens once at the
package boundary (:mod:`rgrasp_viz._problems`, :func:`rgrasp_viz.solve`).
"""

from ._jit import HAVE_NUMBA, NUMBA_VERSION
from .columns import copy_columns, gather_columns_csc
from .epochs import (
    dloss,
    sample_loss,
    sg_epoch_csr,
    sg_epoch_dense,
    svrg_epoch_csr,
    svrg_epoch_dense,
)
from .gradient import full_gradient_csr, full_gradient_dense
from .threshold import (
    count_changes,
    hard_threshold,
    hard_threshold_index,
    keep_only,
    top_k,
    top_k_indices,
)

__all__ = [
    "HAVE_NUMBA",
    "NUMBA_VERSION",
    "copy_columns",
    "count_changes",
    "dloss",
    "full_gradient_csr",
    "full_gradient_dense",
    "gather_columns_csc",
    "hard_threshold",
    "hard_threshold_index",
    "keep_only",
    "sample_loss",
    "sg_epoch_csr",
    "sg_epoch_dense",
    "svrg_epoch_csr",
    "svrg_epoch_dense",
    "top_k",
    "top_k_indices",
]
