"""Pieces shared by every method: the base class of a method's step object, the full
gradient, the support steps of Algorithm 1, one SVRG epoch, gathering the working matrix,
and the per-solve workspace of kernel buffers."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .. import _kernels as K
from .._kernels import copy_columns, top_k


class Method:
    """Base class of a method's step object: the problem, parameters and workspace of one
    solve.  Subclasses implement ``step(x, rng) -> StepResult`` (one outer iteration)."""

    #: records ``Z``, ``T`` and ``b`` (an instance of Algorithm 1)
    uses_support_pursuit = False
    # effective-pass bookkeeping used to place inner events on the pass axis
    passes_head = 0.0
    passes_per_step = 0.0
    steps_per_iter = 0
    #: passes left in the run's budget ``max_passes`` when a step starts (set by the driver);
    #: a step whose own work is open-ended (logistic GraSP's L-BFGS) stops when it is spent
    passes_left = float("inf")

    def __init__(self, problem, params, ws):
        self.problem = problem
        self.p = params
        self.ws = ws
        self.n = problem.n
        self.d = problem.d
        self.loss_code = problem.loss_code
        self.forced = params.forced  # always_select: kept by every thresholding
        self.sparse = sp.issparse(problem.W)
        if self.sparse:
            self.csr = csr_arrays(problem.W)

    @property
    def data(self):
        """The design as the epoch kernels take it: a dense array or CSR arrays."""
        return self.csr if self.sparse else self.problem.W

    def full_gradient(self, x):
        """``(grad F(x), f'(W x))`` in one fused pass (the margins of an ``s``-sparse ``x``
        on dense data cost O(n s)); the per-sample derivatives are SVRG's snapshot terms."""
        g = np.empty(self.d)
        deriv = np.empty(self.n)
        lam = self.problem.l2  # the ridge term, included in g
        if self.sparse:
            K.full_gradient_csr(*self.csr, self.problem.y, self.loss_code, x, deriv, g, lam)
        else:
            sup = np.flatnonzero(x)
            K.full_gradient_dense(self.problem.W, self.problem.y, self.loss_code, sup, x[sup],
                                  deriv, g, lam)
        return g, deriv

    def svrg_epoch(self, X, z, g, snap_dloss, idx, thr_every, s_keep, n_prev, forced=None):
        """One SVRG epoch on ``X`` (dense array or CSR arrays), ``z`` updated in place; ``g``
        is the full gradient at the epoch's start, ridge term included.  A thresholding keeps
        ``forced`` (working coordinates, default none) and the ``s_keep`` largest others.

        Returns ``(steps, n_events, n_checkpoints, status, snapshots)``; events and
        checkpoints are left in the workspace buffers.

        A long epoch (an estimated ``EPOCH_THREAD_WORK`` multiply-adds or more) runs in a
        worker thread while the main thread waits, so that Ctrl-C is seen within a fraction
        of a second: it sets the kernel's stop flag, waits for the kernel to return and
        raises ``KeyboardInterrupt``.  The kernel is the same either way (it only reads the
        flag), so the iterates are identical bit for bit.
        """
        ws, p = self.ws, self.p
        snaps = ws.snap_buffer(z.shape[0], p.record_iterates)
        common = (self.problem.y, self.loss_code, z, g, snap_dloss, idx, p.eta,
                  self.problem.l2, thr_every, s_keep, ws.keep_idx, ws.prev_idx, n_prev,
                  ws.cand, ws.mags, ws.vbuf, ws.ev_step, ws.ev_in, ws.ev_out, p.record,
                  ws.rec_every, ws.rec_loss, snaps, ws.stop,
                  NO_FORCED if forced is None else forced)
        if isinstance(X, tuple):
            kernel, args = K.svrg_epoch_csr, (*X, *common)
            per_step = X[0].shape[0] / max(len(X[2]) - 1, 1)  # mean nonzeros of a row
            if thr_every == 1:
                per_step += z.shape[0]
        else:
            kernel, args = K.svrg_epoch_dense, (X, *common)
            per_step = z.shape[0]
        out = run_interruptibly(kernel, args, ws.stop, len(idx) * per_step)
        steps, n_ev, n_rec, _, status = out
        return int(steps), int(n_ev), int(n_rec), int(status), snaps


#: Estimated multiply-adds from which an epoch kernel runs in a worker thread (see
#: :meth:`Method.svrg_epoch`); below it, thread start-up would cost more than it buys.
EPOCH_THREAD_WORK = 20_000_000


def run_interruptibly(kernel, args, stop, work):
    """``kernel(*args)``, in a worker thread when ``work >= EPOCH_THREAD_WORK`` so that
    Ctrl-C in the main thread stops it.

    ``kernel`` must be compiled with ``nogil=True`` and return with status 2 soon after
    ``stop[0]`` becomes non-zero.  On ``KeyboardInterrupt`` (or any exception) while waiting,
    the flag is set, the worker is waited for, and the exception propagates.  Outside the
    main thread (no signals arrive there) the kernel is called directly.
    """
    stop[0] = 0
    if work < EPOCH_THREAD_WORK or threading.current_thread() is not threading.main_thread():
        return kernel(*args)
    box = {}
    done = threading.Event()

    def target():
        try:
            box["out"] = kernel(*args)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["exc"] = exc
        finally:
            done.set()

    worker = threading.Thread(target=target, name="rgrasp_viz-epoch", daemon=True)
    worker.start()
    # wait on an Event, not Thread.join: an interrupted join can mark a running thread as
    # stopped (Python 3.11), and a timed wait lets Ctrl-C through on every platform
    try:
        while not done.wait(0.1):
            pass
    except BaseException:
        stop[0] = 1
        done.wait()
        worker.join()
        stop[0] = 0
        raise
    worker.join()
    if "exc" in box:
        raise box["exc"]
    return box["out"]


NO_FORCED = np.empty(0, dtype=np.int64)
"""No ``always_select`` coordinates (the paper's ``H_s``)."""


def threshold(v, s, forced=None):
    """``(H_s(v), kept indices)`` for a dense vector; ``forced`` (``always_select``) kept
    besides the ``s`` largest other entries."""
    keep = top_k(v, s, forced)
    out = np.zeros_like(v)
    out[keep] = v[keep]
    return out, keep


# -- Algorithm 1, steps 2-4 ---------------------------------------------------------------------


def merge_support(g, x, s, forced=None):
    """``Z = supp(g, 2s)`` and ``T = Z ∪ supp(x)`` (both ascending).  With ``forced``
    (``always_select``): ``Z`` is the ``2s`` largest ``|g|`` outside ``forced``, and ``T``
    also holds ``forced``."""
    if forced is not None and len(forced):
        rest = np.ones(len(g), dtype=bool)
        rest[forced] = False
        rest = np.flatnonzero(rest)
        Z = rest[top_k(g[rest], 2 * s)]
    else:
        Z = top_k(g, 2 * s)
    # a boolean mask is O(d) without the sort inside np.union1d (~5x faster at d = 1000)
    mask = x != 0
    mask[Z] = True
    if forced is not None and len(forced):
        mask[forced] = True
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
    the first ``|T|`` columns are always live.  Most of ``T`` stays from one outer iteration to
    the next, and a column of ``W`` costs a cache line per row, so this reads a fraction of
    what a fresh gather reads.  The slot bookkeeping is O(|T|) NumPy; only the copies run in
    a kernel.
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
    stop: np.ndarray = field(init=False)  # the epoch kernels' stop flag (see run_interruptibly)

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
        self.stop = np.zeros(1, dtype=np.int64)

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
    events: tuple | None = None  # (steps, entered, left) arrays of inner events held here
    # instead of in the workspace buffers (a registered Python step-5 solver's thresholdings)

    def inner_events(self, ws):
        """``(steps, entered, left)`` of this iteration's inner thresholding events."""
        if self.events is not None:
            return self.events
        k = self.n_events
        return ws.ev_step[:k], ws.ev_in[:k], ws.ev_out[:k]
