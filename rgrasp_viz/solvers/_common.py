"""Pieces shared by every method: step-size rules, the gradient / support steps of
Algorithm 1, gathering the working matrix, and the per-solve workspace of kernel buffers."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .. import losses
from .._kernels import copy_columns, top_k

# -- step-size rules -------------------------------------------------------------------------

_ROW_SAMPLE = 512  # rows used to estimate restricted row norms of dense data


def restricted_row_smoothness(problem, k):
    """Mean over samples of ``max_{|S| <= k} ||w_{i,S}||^2`` times the loss curvature bound.

    This is the average restricted smoothness of the per-sample losses ``f_i`` over k-sparse
    directions (for least squares the Hessian of ``f_i`` is ``w_i w_i^T``).  It is the sum of
    the ``k`` largest squared entries of each row: exact for CSR data, estimated on at most
    512 evenly spaced rows for dense data.  Cached on the problem.
    """
    k = int(min(max(k, 1), problem.d))
    cache = problem.__dict__.setdefault("_rgrasp_cache", {})
    key = ("row", k)
    if key not in cache:
        W = problem.W
        if sp.issparse(W):
            vals = []
            data, ptr = W.data, W.indptr
            for i in range(W.shape[0]):
                row = data[ptr[i] : ptr[i + 1]] ** 2
                if row.size > k:
                    row = np.partition(row, row.size - k)[row.size - k :]
                vals.append(row.sum())
            est = float(np.mean(vals))
        else:
            n = W.shape[0]
            rows = W[:: max(1, n // _ROW_SAMPLE)][:_ROW_SAMPLE] ** 2
            if k < problem.d:
                rows = np.partition(rows, problem.d - k, axis=1)[:, problem.d - k :]
            est = float(rows.sum(axis=1).mean())
        cache[key] = est * losses.curvature_bound(problem.loss)
    return cache[key]


def restricted_smoothness(problem, k, n_power=30):
    """Largest eigenvalue of ``(1/n) W_S^T W_S`` (times the curvature bound), by power iteration.

    ``S`` is the set of the ``k`` columns most correlated with ``y`` (the largest
    ``|W^T y|``, i.e. the first gradient directions from ``x = 0``): a cheap, deterministic
    estimate of the restricted smoothness of ``F`` at sparsity ``k``, which (unlike column
    norms) sees correlated designs such as setting 2.  Cached on the problem.
    """
    k = int(min(max(k, 1), problem.d))
    cache = problem.__dict__.setdefault("_rgrasp_cache", {})
    key = ("col", k)
    if key not in cache:
        W = problem.W
        S = top_k(np.asarray(W.T @ problem.y).ravel(), k)
        WS = W[:, S]
        if sp.issparse(WS):
            WS = WS.tocsr()
        v = np.full(len(S), 1.0 / math.sqrt(len(S)))
        lam = 0.0
        for _ in range(n_power):
            u = WS.T @ (WS @ v) / problem.n
            lam = float(np.linalg.norm(u))
            if lam == 0.0:
                break
            v = u / lam
        cache[key] = max(lam, 1e-300) * losses.curvature_bound(problem.loss)
    return cache[key]


def _eta_gradient(problem, s, inner, batch_size):
    return 1.0 / restricted_smoothness(problem, 2 * s)


def _eta_sght(problem, s, inner, batch_size):
    B = batch_size or max(1, round(math.sqrt(problem.n)))
    L = restricted_row_smoothness(problem, s) / B + restricted_smoothness(problem, 2 * s)
    return 1.0 / (2.0 * L)


def _eta_svrght(problem, s, inner, batch_size):
    return 2.5 / restricted_row_smoothness(problem, s)


def _eta_svrgsp(problem, s, inner, batch_size):
    if inner == "paper":
        return 1.0 / restricted_row_smoothness(problem, problem.d)
    return 1.0 / restricted_row_smoothness(problem, 3 * s)


ETA_RULES = {"gradient": _eta_gradient, "sght": _eta_sght, "svrght": _eta_svrght,
             "svrgsp": _eta_svrgsp}
"""Step-size rules by name (a method's ``eta_rule`` in the registry)."""


def default_eta(problem, method, s, inner="on_T", batch_size=None):
    """The default step size of ``method`` on ``problem`` (a documented rule, no tuning loop).

    Notation: ``rho(k)`` is the restricted smoothness of ``F`` at sparsity ``k``
    (:func:`restricted_smoothness`, from the columns most correlated with ``y``) and ``L(k)``
    the mean restricted smoothness of the per-sample losses (:func:`restricted_row_smoothness`,
    from the k largest squared entries of each row).  Both include the loss curvature bound
    (1 for least squares, 1/4 for logistic).  Rules, by the registry's ``eta_rule``:

    * ``"gradient"`` (FG-HT; GraSP, which has no step size, reports it): ``1 / rho(2s)``.
    * ``"sght"``: ``1 / (2 (L(s) / B + rho(2s)))`` -- the smoothness of a mini-batch of ``B``
      samples, halved for the gradient noise.
    * ``"svrght"``: ``2.5 / L(s)``.  SVRGHT's window is narrow: smaller steps stall on a
      wrong support (an off-support coordinate must cross the threshold in one step to
      enter), larger ones diverge; no constant factor works on every problem.
    * ``"svrgsp"``: ``1 / L(d)`` (the mean squared row norm) in the paper's reading, where the
      inner iterate moves on all ``d`` coordinates; ``1 / L(3s)`` on ``T`` (``|T| <= 3s``).

    The global Lipschitz constant (``max_i ||w_i||^2``) is never used: for sparse iterates it
    is far too pessimistic.

    Parameters
    ----------
    problem : Problem
    method : str
        Any registered method name.
    s : int
    inner : {"paper", "on_T"}
    batch_size : int, optional
        SG-HT mini-batch size (default ``round(sqrt(n))``).

    Returns
    -------
    float
    """
    from .registry import get_method, normalize_reading

    spec = get_method(method)
    rule = spec.eta_rule if spec.eta_rule is not None else "gradient"
    if isinstance(rule, str):
        rule = ETA_RULES[rule]
    return float(rule(problem, int(s), normalize_reading(inner), batch_size))


# -- Algorithm 1, steps 2-4 ---------------------------------------------------------------------


def full_gradient(problem, x):
    """``(grad F(x), W x)`` -- the margins are kept for SVRG's snapshot gradients."""
    return losses.gradient(problem.W, problem.y, x, problem.loss)


def merge_support(g, x, s):
    """``Z = supp(g, 2s)`` and ``T = Z ∪ supp(x)`` (both ascending)."""
    Z = top_k(g, 2 * s)
    # a boolean mask is O(d) without the sort inside np.union1d (~5x faster at d = 1000)
    mask = x != 0
    mask[Z] = True
    return Z, np.flatnonzero(mask)


def gather_columns(W, T):
    """``W[:, T]`` as a C-contiguous dense array or a canonical CSR matrix."""
    if sp.issparse(W):
        WT = sp.csr_matrix(W[:, T])
        WT.sort_indices()
        return WT
    return np.take(W, T, axis=1)


class WorkingColumns:
    """``W[:, T]`` for the successive merged supports ``T`` of one solve (dense ``W``).

    The columns live in one C-contiguous ``n x cap`` buffer, in slots: a column that stays in
    ``T`` keeps its slot, an entering column is copied from ``W`` into a freed slot, and when
    ``T`` shrinks the columns stranded beyond ``|T|`` move down into the remaining holes, so
    the first ``|T|`` columns are always live.  From one outer iteration to the next 50-90 %
    of ``T`` stays (measured on the classroom problem and setting 1), and a column of ``W``
    costs a cache line per row, so this reads a fraction of what a fresh gather reads.  The
    slot bookkeeping is O(|T|) NumPy; only the copies run in a kernel.
    """

    def __init__(self, W, cap):
        self.W = W
        self.B = np.empty((W.shape[0], cap))
        self.slots = np.zeros(cap, dtype=np.int64)  # slot -> column of W
        self.where = np.full(W.shape[1], -1, dtype=np.int64)  # column of W -> slot or -1
        self.m = 0

    def update(self, T):
        """Load ``W[:, T]`` (``T`` ascending, ``|T| <= cap``); return ``(B, order)`` with
        ``B[:, :|T|] == W[:, order]`` exactly and ``order`` a permutation of ``T``.  ``B`` is
        the whole buffer: the epoch kernels read only its first ``len(z) = |T|`` columns."""
        B, slots, where, m_prev, m = self.B, self.slots, self.where, self.m, len(T)
        slot_of_T = where[T]
        new = slot_of_T < 0
        entering = T[new]
        if len(entering) == 0 and m == m_prev:  # T did not change
            return B, slots[:m]
        stays = np.zeros(m_prev, dtype=bool)
        stays[slot_of_T[~new]] = True
        holes = np.flatnonzero(~stays)  # ascending
        where[slots[holes]] = -1
        nm = 0
        if m < m_prev:  # live columns stranded at or beyond m move down into holes below m
            pos = holes[holes < m]
            moves = np.flatnonzero(stays[m:]) + m
            nm = len(moves)
            if nm:  # sources beyond m, destinations below: no overlap
                copy_columns(B, moves, B, pos[:nm])
                slots[pos[:nm]] = slots[moves]
        elif m > m_prev:
            pos = np.concatenate((holes, np.arange(m_prev, m)))
        else:
            pos = holes
        if len(entering):
            copy_columns(self.W, entering, B, pos[nm:])
            slots[pos[nm:]] = entering
        where[slots[pos]] = pos
        self.m = m
        return B, slots[:m]


def csr_arrays(W):
    """``(data, indices, indptr)`` of a CSR matrix with 64-bit indices (one kernel type)."""
    return (np.ascontiguousarray(W.data, dtype=np.float64),
            np.ascontiguousarray(W.indices, dtype=np.int64),
            np.ascontiguousarray(W.indptr, dtype=np.int64))


def csc_arrays(W):
    """``(data, indices, indptr)`` of ``W`` in CSC format, 64-bit indices (for column gathers)."""
    return csr_arrays(sp.csc_matrix(W))


# -- per-solve workspace ------------------------------------------------------------------------


@dataclass
class Workspace:
    """Kernel buffers, allocated once per solve (fixed size, reused every epoch)."""

    d: int
    max_steps: int
    rec_every: int
    keep_idx: np.ndarray = field(init=False)
    prev_idx: np.ndarray = field(init=False)
    cand: np.ndarray = field(init=False)
    mags: np.ndarray = field(init=False)
    vbuf: np.ndarray = field(init=False)
    ev_step: np.ndarray = field(init=False)
    ev_in: np.ndarray = field(init=False)
    ev_out: np.ndarray = field(init=False)
    rec_loss: np.ndarray = field(init=False)

    def __post_init__(self):
        d, m = self.d, max(self.max_steps, 1)
        self.keep_idx = np.zeros(d, dtype=np.int64)
        self.prev_idx = np.zeros(d, dtype=np.int64)
        self.cand = np.zeros(d, dtype=np.int64)
        self.mags = np.zeros(d, dtype=np.float64)
        self.vbuf = np.zeros(d, dtype=np.float64)
        self.ev_step = np.zeros(m, dtype=np.int64)
        self.ev_in = np.zeros(m, dtype=np.int64)
        self.ev_out = np.zeros(m, dtype=np.int64)
        n_rec = m // self.rec_every + 1 if self.rec_every > 0 else 1
        self.rec_loss = np.zeros(n_rec, dtype=np.float64)

    def set_prev(self, idx):
        """Load the support that inner thresholding events are compared against."""
        idx = np.asarray(idx, dtype=np.int64)
        self.prev_idx[: len(idx)] = idx
        return len(idx)

    def snap_buffer(self, p, record_iterates):
        """Buffer for inner snapshots of a ``p``-dimensional iterate (empty when off)."""
        rows = len(self.rec_loss) if (record_iterates and self.rec_every > 0) else 0
        return np.zeros((rows, p), dtype=np.float64)


@dataclass
class StepResult:
    """What one outer iteration produced; the driver records it outside the timed region."""

    x: np.ndarray
    passes: float
    n_thresholds: int
    status: int = 0
    inner_steps: int = 0
    Z: np.ndarray | None = None
    T: np.ndarray | None = None
    b_T: np.ndarray | None = None
    n_events: int = 0  # inner events held in the workspace buffers
    n_checkpoints: int = 0
    snaps: np.ndarray | None = None  # (n_checkpoints, p) in working coordinates
    work_index: np.ndarray | None = None  # working coordinate -> full coordinate (None: all)
    outer_event: tuple | None = None  # (step, entered, left) of the closing H_s
    message: str | None = None  # why a method stopped itself (status != 0), for the result
    extra: dict = field(default_factory=dict)
