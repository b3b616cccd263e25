"""NumPy analysis of traces, shared by the figures, the dashboards and ``reproduce``.

Nothing here draws, times or runs a solver: traces (or arrays) in, numbers out.  A fact such
as "where does a curve first reach a level" or "what is F*" is computed here once, so a table
and a plot shown together always agree.  Method names, labels and flags come from the method
registry (:mod:`rgrasp_viz.solvers._registry`).

* runs: :func:`as_trace`, :func:`~rgrasp_viz.solvers.run_label`, :func:`run_labels`,
  :func:`status_kind` (the colour a run's status is shown in, estimate quality included);
* objective: :func:`best_objective`, :func:`estimate_fstar` (one :class:`FStar` per view),
  :func:`first_crossing`, :func:`final_support_differences`;
* telling runs apart: :func:`same_iterates`, :func:`identical_runs`, :func:`axis_scale`;
* positions on the axes of the figures: :func:`x_values`, :func:`event_positions`,
  :func:`checkpoint_positions`, :func:`iteration_positions`;
* the support raster: :func:`raster_rows`, :func:`raster_matrix`, :func:`support_changes`;
* hard thresholding: :func:`threshold_shapes`, :func:`threshold_share` (a cost model fed with
  per-call costs; :mod:`rgrasp_viz.viz._cost` measures them);
* Algorithm 1, step 5: :func:`slack_ratios` (least squares on ``T``);
* replay: :func:`snapshot`, :func:`replay_frames`, :func:`frame_at`, :func:`frame_iteration`,
  :func:`thresholds_until`.
"""

from __future__ import annotations

import dataclasses
import math
import numbers

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from ._trace import Trace
from .solvers._registry import get_method, normalize_reading, run_label
from .solvers._status import Status

__all__ = [
    "IDENTICAL_RTOL",
    "LOG_AXIS_RATIO",
    "POOR_ERROR",
    "SLACK_MAX_CELLS",
    "FStar",
    "StatusKind",
    "as_trace",
    "as_traces",
    "axis_scale",
    "best_objective",
    "checkpoint_positions",
    "estimate_fstar",
    "event_positions",
    "final_support_differences",
    "first_crossing",
    "frame_at",
    "frame_iteration",
    "identical_runs",
    "iteration_positions",
    "raster_matrix",
    "raster_rows",
    "replay_frames",
    "run_labels",
    "same_iterates",
    "slack_ratios",
    "snapshot",
    "status_kind",
    "support_changes",
    "threshold_shapes",
    "threshold_share",
    "thresholds_until",
    "x_values",
]


# -- runs and their names ----------------------------------------------------------------------


def as_trace(obj):
    """The :class:`~rgrasp_viz.Trace` of ``obj`` (a Trace, anything with a ``.trace``, or a
    fitted estimator with a ``.trace_``).

    Raises
    ------
    TypeError
        For anything else.
    """
    if isinstance(obj, Trace):
        return obj
    tr = getattr(obj, "trace", None)
    if isinstance(tr, Trace):
        return tr
    tr = getattr(obj, "trace_", None)
    if isinstance(tr, Trace):
        return tr
    raise TypeError(f"expected a Trace, a SolveResult or a fitted estimator, got "
                    f"{type(obj).__name__}")


POOR_ERROR = 0.5
"""A run whose relative error ``||x - x*|| / ||x*||`` is above this (``x*`` known) estimates
``x*`` poorly: a CONVERGED status is then shown amber, with a note, not green (the optimiser
converged; the estimate is not one to trust, e.g. ``s`` far below ``s*``)."""


@dataclasses.dataclass(frozen=True)
class StatusKind:
    """How a run's status is shown: ``kind`` (``"ok"`` green, ``"warn"`` amber, ``"error"``
    red) and ``note`` (why a CONVERGED run is not green; empty otherwise)."""

    kind: str
    note: str = ""


def status_kind(run, poor_error=POOR_ERROR):
    """The colour of a run's status, by success *and* estimate quality (one rule for every
    view that colours statuses).

    ``"ok"`` (green) only for CONVERGED with, when the true solution is known, a relative
    error at most ``poor_error``; a CONVERGED run above it is ``"warn"`` (amber) with a note;
    DIVERGED is ``"error"``; every other status (MAX_ITER, MAX_PASSES, STALLED, NO_PROGRESS,
    HT_FIXED_POINT, CALLBACK: not converged) is ``"warn"``.

    Parameters
    ----------
    run : SolveResult, Trace, Status or int
        A run (its status and final relative error), or a bare status (no quality check).
    poor_error : float, default :data:`POOR_ERROR`
        The relative error above which a converged estimate is called poor.

    Returns
    -------
    StatusKind
    """
    rel = math.nan
    if isinstance(run, numbers.Integral):
        status = Status(int(run))
    else:
        trace = getattr(run, "trace", None)
        if hasattr(run, "status") and getattr(run, "status", None) is not None:
            status = Status(int(run.status))
            rel = getattr(run, "rel_error", math.nan)
        else:
            trace = as_trace(run)
            status = Status(int(trace.meta["status"]))
        if (rel is None or not math.isfinite(float(rel))) and trace is not None \
                and len(trace.rel_error):
            rel = trace.rel_error[-1]
        rel = math.nan if rel is None else float(rel)
    if status is Status.DIVERGED:
        return StatusKind("error")
    if status is not Status.CONVERGED:
        return StatusKind("warn")
    if math.isfinite(rel) and rel > poor_error:
        return StatusKind("warn", f"converged, but a poor estimate: relative error {rel:.2g} > "
                                  f"{poor_error:g} (e.g. s too small, or noise-dominated data)")
    return StatusKind("ok")


def as_traces(objs):
    """A non-empty list of traces from one run or a list of runs (see :func:`as_trace`)."""
    if objs is None:
        raise TypeError("expected a Trace, a SolveResult or a list of them, got None")
    out = [as_trace(o) for o in objs] if isinstance(objs, (list, tuple)) else [as_trace(objs)]
    if not out:
        raise ValueError("no traces given")
    return out


_PARAM_KEYS = ("s", "eta", "J", "m", "random_state", "inner", "problem", "batch_size")


def _fmt_param(key, value):
    return f"{key}={value:.3g}" if isinstance(value, float) else f"{key}={value}"


def run_labels(traces):
    """Legend names: the method's label, plus the parameters that tell equal methods apart.

    Parameters
    ----------
    traces : list of Trace

    Returns
    -------
    list of str
    """
    traces = as_traces(traces)
    base = [run_label(t) for t in traces]
    out = list(base)
    for lab in set(base):
        group = [i for i, b in enumerate(base) if b == lab]
        if len(group) < 2:
            continue
        keys = [k for k in _PARAM_KEYS
                if len({repr(traces[i].meta.get(k)) for i in group}) > 1]
        for n, i in enumerate(group):
            extra = ", ".join(_fmt_param(k, traces[i].meta.get(k)) for k in keys)
            if not extra:
                out[i] = f"{lab} #{n + 1}"
            elif lab.endswith(")"):  # "SVRGSP+ (on T)" -> "SVRGSP+ (on T, m=1)"
                out[i] = f"{lab[:-1]}, {extra})"
            else:
                out[i] = f"{lab} ({extra})"
    return out


# -- objective ---------------------------------------------------------------------------------


def best_objective(trace):
    """The smallest finite objective of a run and the iteration where it was reached.

    Parameters
    ----------
    trace : Trace

    Returns
    -------
    fun : float
        ``inf`` when no recorded objective is finite.
    iteration : int
        ``-1`` when no recorded objective is finite.
    """
    obj = np.asarray(trace.objective, dtype=np.float64)
    ok = np.isfinite(obj)
    if not ok.any():
        return math.inf, -1
    i = int(np.nanargmin(np.where(ok, obj, np.nan)))
    return float(obj[i]), i


def first_crossing(x, values, level):
    """Where a curve first gets to ``values <= level``.

    Parameters
    ----------
    x : array_like
        Positions (effective passes or seconds), non-decreasing.
    values : array_like
        Positive quantities (objective gap or estimation error) at those positions.
    level : float

    Returns
    -------
    float
        ``x`` at the first crossing, interpolated linearly in ``x`` and ``log(values)``
        between the sample before and the first sample at or below ``level``; ``x[0]`` when
        the first sample is already there; ``inf`` when no sample is.
    """
    x = np.asarray(x, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    ok = np.isfinite(v) & (v <= level)
    if not ok.any():
        return math.inf
    k = int(np.argmax(ok))
    if k == 0:
        return float(x[0])
    v0, v1 = v[k - 1], v[k]
    if not (np.isfinite(v0) and v0 > level and v1 > 0 and level > 0):
        return float(x[k])
    frac = (math.log(v0) - math.log(level)) / (math.log(v0) - math.log(v1))
    return float(x[k - 1] + frac * (x[k] - x[k - 1]))


def _check_same_problem(traces):
    shapes = {(t.meta.get("n"), t.meta.get("d")) for t in traces}
    if len(shapes) > 1:
        raise ValueError(f"the traces come from problems of different sizes (n, d): "
                         f"{sorted(shapes)}; an objective gap needs one problem")


@dataclasses.dataclass(frozen=True)
class FStar:
    """``F*`` of one view: the value every gap of that view is measured against, and where it
    came from.

    A table and a plot shown together take the same ``FStar`` (compute it once with
    :func:`estimate_fstar` and pass it to both), so their numbers agree.  It unpacks as
    ``fstar, source = estimate_fstar(...)``.

    Attributes
    ----------
    value : float
        ``F*`` (NaN when no run has a finite objective).
    source : str
        Where it came from, in one short phrase a student understands (figures show it), e.g.
        ``"F* = lowest F of the runs shown (SVRGSP+, iteration 14)"``.
    origin : {"reference", "runs", "given", "none"}
        A separate reference run, the runs shown, a number given by the caller, or nothing.
    run : str or None
        The label of the run that reached ``F*`` (None for a given number).
    iteration : int
        The iteration of that run (-1 when not from a run).
    """

    value: float
    source: str
    origin: str = "runs"
    run: str | None = None
    iteration: int = -1

    def __iter__(self):
        return iter((self.value, self.source))

    def __float__(self):
        return float(self.value)

    def gap(self, f):
        """``f - F*`` (array or number)."""
        return np.asarray(f, dtype=np.float64) - self.value


def estimate_fstar(traces, reference=None):
    """``F*``, the optimal objective, for the objective gaps of one view.

    The true minimum of ``F`` over s-sparse vectors is unknown (the problem is non-convex and
    NP-hard), so ``F*`` is always an estimate -- an *upper bound* on the true minimum:

    * ``reference=None``: the lowest finite objective reached by any of ``traces``.  The run
      that attains it has gap 0 there, which a log axis cannot show: convergence plots omit
      gaps ``<= 0``.
    * ``reference`` a Trace or SolveResult (a separate run, e.g. GraSP, which solves each
      sub-problem exactly): the lowest objective of the reference run *and* ``traces`` (so
      that no gap is negative); the source names whichever reached it.
    * ``reference`` a number: used as is (gaps ``<= 0`` are omitted).
    * ``reference`` an :class:`FStar`: returned as is (one F* shared by several figures).

    Parameters
    ----------
    traces : Trace, SolveResult or list of them
        The runs to be compared (same problem).
    reference : None, float, FStar, Trace or SolveResult, optional
        See above.

    Returns
    -------
    FStar
        Unpacks as ``(value, source)``; ``source`` is one short phrase a student
        understands, shown by the figures and tables that use it.

    Raises
    ------
    ValueError
        When the traces (or the reference) come from problems of different sizes.
    """
    if isinstance(reference, FStar):
        return reference
    traces = as_traces(traces)
    if isinstance(reference, numbers.Real) and not isinstance(reference, bool):
        v = float(reference)
        return FStar(v, f"F* = {v:.6g} (given)", "given")
    labels = run_labels(traces)
    cands = []
    for tr, lab in zip(traces, labels, strict=True):
        f, i = best_objective(tr)
        cands.append((f, lab, i, False))
    if reference is not None:
        ref = as_trace(reference)
        _check_same_problem([*traces, ref])
        f, i = best_objective(ref)
        cands.append((f, run_label(ref), i, True))
    else:
        _check_same_problem(traces)
    # the reference wins ties: "found by a separate run" does not depend on the runs shown
    f, lab, i, is_ref = min(cands, key=lambda c: (c[0], not c[3]))
    if not math.isfinite(f):
        return FStar(math.nan, "F* unknown: no run has a finite objective", "none")
    if is_ref:
        return FStar(f, f"F* = lowest F found by a separate {lab} run", "reference", lab, i)
    shown = "the run shown" if len(traces) == 1 else "the runs shown"
    return FStar(f, f"F* = lowest F of {shown} ({lab}, iteration {i})", "runs", lab, i)


# -- telling runs apart -------------------------------------------------------------------------

IDENTICAL_RTOL = 1e-9
"""Runs with the same supports whose objectives differ by at most this (relative) made the same
iterates (lazy updates materialised at different moments differ by about 1e-16)."""

LOG_AXIS_RATIO = 30.0
"""A time axis is logarithmic when the longest run takes more than this many times as long as
the shortest (:func:`axis_scale`)."""


def same_iterates(a, b, rtol=IDENTICAL_RTOL):
    """Whether two runs made the same iterates.

    Parameters
    ----------
    a, b : Trace or SolveResult
    rtol : float

    Returns
    -------
    bool
        True when both have as many outer iterations, the same support at every one, and
        objectives within ``rtol`` (relative) of each other; exact float equality is not
        required.
    """
    a, b = as_trace(a), as_trace(b)
    if len(a) != len(b) or a.meta.get("d") != b.meta.get("d"):
        return False
    if not (np.array_equal(a.support_ptr, b.support_ptr)
            and np.array_equal(a.support_idx, b.support_idx)):
        return False
    fa = np.asarray(a.objective, dtype=np.float64)
    fb = np.asarray(b.objective, dtype=np.float64)
    both_nan = np.isnan(fa) & np.isnan(fb)
    with np.errstate(invalid="ignore"):
        close = np.abs(fa - fb) <= rtol * np.maximum(np.abs(fa), np.abs(fb))
    return bool(np.all(close | both_nan))


def identical_runs(traces, rtol=IDENTICAL_RTOL):
    """Groups of runs that made the same iterates (see :func:`same_iterates`).

    Parameters
    ----------
    traces : list of Trace or SolveResult
    rtol : float

    Returns
    -------
    list of list of int
        Indices into ``traces``, one list per group of two or more identical runs, in order
        of first appearance.
    """
    traces = as_traces(traces)
    groups, seen = [], set()
    for i in range(len(traces)):
        if i in seen:
            continue
        group = [i] + [j for j in range(i + 1, len(traces))
                       if j not in seen and same_iterates(traces[i], traces[j], rtol)]
        if len(group) > 1:
            groups.append(group)
            seen.update(group)
    return groups


def axis_scale(traces, x, scale="auto", ratio=LOG_AXIS_RATIO):
    """Linear or logarithmic axis for ``x`` values of several runs.

    Parameters
    ----------
    traces : list of Trace or SolveResult
    x : {"passes", "time", "iteration"}
    scale : {"auto", "linear", "log"}
        ``"auto"``: logarithmic for solver time when the runs' total times differ by more
        than ``ratio`` (e.g. GraSP's 2 s next to SVRGSP+'s 30 ms squeezes the fast runs into
        the first pixels of a linear axis); linear otherwise.
    ratio : float

    Returns
    -------
    str
        ``"linear"`` or ``"log"``.
    """
    if scale in ("linear", "log"):
        return scale
    if scale != "auto":
        raise ValueError(f"xscale must be 'auto', 'linear' or 'log', got {scale!r}")
    if x != "time":
        return "linear"
    ends = []
    for t in as_traces(traces):
        v = x_values(t, x)
        v = v[np.isfinite(v) & (v > 0)]
        if len(v):
            ends.append(float(v.max()))
    return "log" if len(ends) >= 2 and max(ends) > ratio * min(ends) else "linear"


def _fin(v):
    v = float(v)
    return v if math.isfinite(v) else math.inf


def final_support_differences(traces):
    """Which runs end on another support than the run with the lowest final objective.

    Parameters
    ----------
    traces : list of Trace

    Returns
    -------
    flags : list of (int or None)
        Per run: None when it ends on the support of the best run, else the number of
        coordinates in which the two final supports differ (symmetric difference).
    best : int
        Index of the run with the lowest final objective (the first one on ties).
    """
    best = min(range(len(traces)), key=lambda i: (_fin(traces[i].objective[-1]), i))
    ref = set(traces[best].support(-1).tolist())
    out = []
    for tr in traces:
        sup = set(tr.support(-1).tolist())
        out.append(None if sup == ref else len(sup ^ ref))
    return out, best


# -- positions on the axes ---------------------------------------------------------------------


def x_values(trace, x):
    """Per outer iteration: effective passes, solver seconds or the iteration number.

    Raises
    ------
    ValueError
        For another ``x``.
    """
    if x == "passes":
        return np.asarray(trace.passes, dtype=np.float64)
    if x == "time":
        return np.asarray(trace.time, dtype=np.float64)
    if x == "iteration":
        return np.asarray(trace.iteration, dtype=np.float64)
    raise ValueError(f"x must be 'passes', 'time' or 'iteration', got {x!r}")


def event_positions(trace, x="passes"):
    """Positions of the recorded hard-thresholding events on the timeline axis.

    Parameters
    ----------
    trace : Trace or SolveResult
    x : {"passes", "steps"}
        Effective passes (the trace's convention: an epoch's full gradient first, then
        ``1/n`` per inner step; outer thresholdings at the end of their iteration), or
        cumulative inner steps (``(t - 1) * steps_per_iter + step``; methods without inner
        steps count one step per outer iteration).

    Returns
    -------
    pos : ndarray of float
    kind : ndarray of int8
        0 = inside an epoch, 1 = the closing ``H_s`` of an outer iteration.
    """
    trace = as_trace(trace)
    it = np.asarray(trace.ev_iter, dtype=np.int64)
    step = np.asarray(trace.ev_step, dtype=np.int64)
    kind = np.asarray(trace.ev_kind, dtype=np.int8)
    if x not in ("passes", "steps"):
        raise ValueError(f"x must be 'passes' or 'steps', got {x!r}")
    if len(it) == 0:
        return np.empty(0), kind
    if x == "passes":
        return np.asarray(trace._position(it, step, kind), dtype=np.float64), kind
    per = int(trace.meta.get("steps_per_iter", 0) or 0)
    if per == 0:
        return it.astype(np.float64), kind
    return ((it - 1) * per + step).astype(np.float64), kind


def iteration_positions(trace, x):
    """Where each outer iteration ends on the timeline axis (``"passes"`` or ``"steps"``)."""
    if x == "passes":
        return np.asarray(trace.passes, dtype=np.float64)
    per = int(trace.meta.get("steps_per_iter", 0) or 0)
    it = np.asarray(trace.iteration, dtype=np.float64)
    return it if per == 0 else it * per


def checkpoint_positions(trace):
    """Effective passes at each inner checkpoint of ``trace`` (see :func:`event_positions`).

    Parameters
    ----------
    trace : Trace or SolveResult

    Returns
    -------
    ndarray of float, one entry per checkpoint (``trace.ck_iter``)
    """
    trace = as_trace(trace)
    if len(trace.ck_iter) == 0:
        return np.empty(0)
    return np.asarray(trace._position(np.asarray(trace.ck_iter, np.int64),
                                      np.asarray(trace.ck_step, np.int64)), dtype=np.float64)


# -- support raster ----------------------------------------------------------------------------


def _ragged_cols(trace, name):
    ptr = np.asarray(getattr(trace, name + "_ptr"))
    idx = np.asarray(getattr(trace, name + "_idx"))
    cols = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
    return idx, cols


def raster_rows(trace, max_rows=200):
    """Coordinates shown by the support raster, in display order.

    True support first (ascending), then coordinates that were ever in ``supp(x^t)``, then
    coordinates that were only ever in ``T``; each group in order of first appearance.

    Parameters
    ----------
    trace : Trace or SolveResult
    max_rows : int

    Returns
    -------
    rows : ndarray of int
        At most ``max(max_rows, len(true support))`` coordinates.
    n_hidden : int
        Coordinates that were in a support or in ``T`` but are not shown.
    """
    trace = as_trace(trace)
    true = np.asarray(trace.true_support, dtype=np.int64)
    s_idx, s_cols = _ragged_cols(trace, "support")
    t_idx, t_cols = _ragged_cols(trace, "T")
    d = int(trace.meta["d"])
    big = np.iinfo(np.int64).max
    first_s = np.full(d, big)
    np.minimum.at(first_s, s_idx, s_cols)
    first_t = np.full(d, big)
    np.minimum.at(first_t, t_idx, t_cols)
    is_true = np.zeros(d, bool)
    is_true[true] = True
    ever_s = np.flatnonzero((first_s < big) & ~is_true)
    only_t = np.flatnonzero((first_t < big) & (first_s == big) & ~is_true)
    ever_s = ever_s[np.lexsort((ever_s, first_s[ever_s]))]
    only_t = only_t[np.lexsort((only_t, first_t[only_t]))]
    rest = np.concatenate([ever_s, only_t])
    room = max(int(max_rows) - len(true), 0)
    return np.concatenate([true, rest[:room]]).astype(np.int64), max(len(rest) - room, 0)


def raster_matrix(trace, rows):
    """The category matrix of the support raster (rows x iterations, values 0..4).

    Parameters
    ----------
    trace : Trace or SolveResult
    rows : array of int
        Coordinates, as returned by :func:`raster_rows`.

    Returns
    -------
    ndarray of int8, shape (len(rows), n_iter + 1)
        4 = in ``supp(x^t)`` and true support, 3 = in ``supp(x^t)`` only, 2 = in ``T`` (of
        iteration t) but not kept, 1 = true support coordinate missed, 0 = none.
    """
    trace = as_trace(trace)
    d = int(trace.meta["d"])
    rowmap = np.full(d, -1, dtype=np.int64)
    rowmap[rows] = np.arange(len(rows))
    z = np.zeros((len(rows), len(trace)), dtype=np.int8)
    true = np.zeros(d, bool)
    true[trace.true_support] = True
    z[true[rows], :] = 1
    t_idx, t_cols = _ragged_cols(trace, "T")
    r = rowmap[t_idx]
    ok = r >= 0
    z[r[ok], t_cols[ok]] = 2
    s_idx, s_cols = _ragged_cols(trace, "support")
    r = rowmap[s_idx]
    ok = r >= 0
    z[r[ok], s_cols[ok]] = np.where(true[s_idx[ok]], 4, 3)
    return z


def support_changes(trace, rows):
    """Coordinates of ``rows`` that entered or left ``supp(x^t)`` at each iteration.

    Parameters
    ----------
    trace : Trace or SolveResult
    rows : array of int
        The coordinates of interest (the raster's rows).

    Returns
    -------
    entered, left : list of (int, int)
        ``(t, j)``: coordinate ``j`` entered (left) the support between ``x^{t-1}`` and
        ``x^t``; by iteration, then in the order of ``trace.entered`` / ``trace.left``.
    """
    trace = as_trace(trace)
    shown = {int(j) for j in rows}
    entered, left = [], []
    for t in range(1, len(trace)):
        entered += [(t, int(j)) for j in trace.entered(t) if int(j) in shown]
        left += [(t, int(j)) for j in trace.left(t) if int(j) in shown]
    return entered, left


# -- hard thresholding: what is thresholded, and a cost model ----------------------------------


def threshold_shapes(trace):
    """The sizes of the hard thresholdings of a run, per event kind.

    Methods of Algorithm 2 (with readings of the inner iterate, registry flag ``readings``)
    threshold a ``|T|``-vector to ``s`` entries at the end of an outer iteration and, inside an
    epoch, ``H_|T|`` on ``|T|`` entries (our reading) or on all ``d`` (the paper's); every
    other method applies ``H_s`` to all ``d`` coordinates.

    Parameters
    ----------
    trace : Trace or SolveResult

    Returns
    -------
    dict of int to (int, int)
        Kind (0 inside an epoch, 1 the closing ``H_s``) to ``(p, k)``: vector length and
        entries kept.  ``|T|`` is the median over the run.
    """
    trace = as_trace(trace)
    d = int(trace.meta["d"])
    s = int(trace.meta.get("s", 1))
    tsz = np.diff(np.asarray(trace.T_ptr))[1:]
    t_med = int(np.median(tsz)) if len(tsz) and tsz.max() > 0 else 3 * s
    try:
        readings = get_method(trace.method).readings
    except (TypeError, ValueError):
        readings = ()
    if readings:
        inner = trace.meta.get("inner")
        paper = inner is not None and normalize_reading(inner) == "paper"
        return {0: (d, t_med) if paper else (t_med, t_med), 1: (t_med, s)}
    return {0: (d, s), 1: (d, s)}


def _closes_iterations(method):
    """Whether ``method`` ends each outer iteration with one ``H_s`` (deterministic methods
    and Algorithm 1); the stochastic baselines threshold after every inner step instead."""
    try:
        spec = get_method(method)
    except (TypeError, ValueError):
        return True
    return spec.framework or not spec.stochastic


def threshold_share(trace, cost=None):
    """Count the hard thresholdings of a run and estimate their share of solver time.

    The trace records *when* every ``H_s`` happened, not how long it took, so the share comes
    from a cost model: ``share = sum over event kinds (count * t_H(p, k)) / solver time``,
    with the sizes ``(p, k)`` of :func:`threshold_shapes`.

    Parameters
    ----------
    trace : Trace or SolveResult
    cost : float, dict, callable, None or False, optional
        Seconds per thresholding: one number for every kind; a dict ``{kind: seconds}`` (kind
        0 inside an epoch, 1 outer); or a callable ``cost(p, k, inside_epoch) -> seconds``
        (e.g. :func:`rgrasp_viz.viz.measured_threshold_cost`; its ``source`` attribute, when
        present, says where the numbers come from).  ``None`` or ``False``: not estimated.

    Returns
    -------
    dict
        ``count`` (total, exact: ``trace.n_thresholds[-1]``), ``count_inner``,
        ``count_outer``, ``solver_time`` (s), ``seconds`` (estimated time spent in
        thresholding), ``share`` (fraction of solver time, capped at 1; NaN when not
        estimated or no solver time), ``per_op`` (dict kind -> seconds), ``source`` (how it
        was obtained).
    """
    trace = as_trace(trace)
    kind = np.asarray(trace.ev_kind)
    total = int(trace.n_thresholds[-1])
    n_outer = int((kind == 1).sum())
    if trace.meta.get("events_truncated"):
        # events stop at max_events; outer events are one per iteration
        n_outer = trace.n_iter if _closes_iterations(trace.method) else 0
    n_inner = total - n_outer
    solver_time = float(trace.time[-1])
    counts = {0: n_inner, 1: n_outer}
    if cost is None or cost is False:
        per_op, source = {}, "share of solver time not estimated (no cost model given)"
    elif callable(cost):
        shapes = threshold_shapes(trace)
        per_op = {kd: float(cost(p, k, kd == 0))
                  for kd, (p, k) in shapes.items() if counts[kd]}
        parts = [f"{'inner' if kd == 0 else 'outer'} H on {shapes[kd][0]}→{shapes[kd][1]}: "
                 f"{1e6 * t:.2f} µs" for kd, t in per_op.items()]
        where = getattr(cost, "source", None) or "t_H from the given cost model"
        source = f"estimated: count × t_H, {where}; " + "; ".join(parts)
    elif isinstance(cost, dict):
        per_op = {int(kd): float(v) for kd, v in cost.items()}
        source = "estimated: count × given seconds per thresholding"
    elif isinstance(cost, numbers.Real) and not isinstance(cost, bool):
        per_op = {0: float(cost), 1: float(cost)}
        source = f"estimated: count × {float(cost):.3g} s per thresholding (given)"
    else:
        raise TypeError(f"cost must be a number, a dict {{kind: seconds}}, a callable "
                        f"cost(p, k, inside_epoch) or None, got {type(cost).__name__}")
    seconds = sum(counts[kd] * per_op.get(kd, 0.0) for kd in counts) if per_op else math.nan
    share = min(seconds / solver_time, 1.0) if per_op and solver_time > 0 else math.nan
    return {"count": total, "count_inner": n_inner, "count_outer": n_outer,
            "solver_time": solver_time, "seconds": seconds, "share": share,
            "per_op": per_op, "source": source}


# -- Algorithm 1, step 5: the slack descent condition ------------------------------------------

SLACK_MAX_CELLS = 50_000_000
"""Largest ``n * max|T|`` for which :func:`slack_ratios` forms ``W[:, T]`` densely."""


def slack_ratios(trace, problem, max_cells=SLACK_MAX_CELLS):
    """The slack descent ratio of Algorithm 1, step 5, at every outer iteration.

    ``r_t = ||b - b̂|| / ||x^{t-1} - b̂||`` where ``b`` is the recorded sub-problem solution
    on the merged support ``T`` of iteration ``t``, and ``b̂``, the minimiser of ``F(b)`` over
    the ``b`` with ``supp(b) ⊆ T``, is computed exactly here (least squares on the columns
    ``T``).  The paper requires ``r_t <= c1`` for some ``0 < c1 < 1``; GraSP has ``b = b̂``
    (``r_t ≈ 0``).

    Parameters
    ----------
    trace : Trace or SolveResult
        A run of a method of Algorithm 1 (registry flag ``framework``: it records ``T``).
    problem : Problem
        The problem the run solved (least squares).
    max_cells : int
        Refuse problems with ``n * max|T| > max_cells`` (dense ``W[:, T]`` per iteration).

    Returns
    -------
    ndarray of float, shape (n_iter + 1,)
        Aligned with the trace's rows: entry 0 is NaN (no iteration), entry ``t`` is
        ``r_t`` (``inf`` when ``x^{t-1} = b̂``, NaN for a non-finite ``b``).

    Raises
    ------
    ValueError
        If the trace has no merged supports ``T``, the loss is not least squares, the
        problem does not match the trace, or the problem is too large.
    """
    trace = as_trace(trace)
    tsz = np.diff(np.asarray(trace.T_ptr))
    if len(tsz) < 2 or tsz[1:].max(initial=0) == 0:
        raise ValueError(f"the trace of {trace.method!r} records no merged support T: the "
                         "slack condition belongs to Algorithm 1 (grasp, svrgsp, svrgsp+)")
    if getattr(problem, "loss", None) != "squares":
        raise ValueError("slack_ratios needs the exact sub-problem minimiser b̂, computed "
                         "here only for least squares (loss='squares'), got loss="
                         f"{getattr(problem, 'loss', None)!r}")
    if (problem.n, problem.d) != (trace.meta.get("n"), trace.meta.get("d")):
        raise ValueError(f"the problem (n={problem.n}, d={problem.d}) is not the one of the "
                         f"trace (n={trace.meta.get('n')}, d={trace.meta.get('d')})")
    cells = problem.n * int(tsz.max())
    if cells > max_cells:
        raise ValueError(f"problem too large for the exact sub-problem solve: n * max|T| = "
                         f"{cells:,} > max_cells = {max_cells:,}; use a smaller problem "
                         "(e.g. make_regression('classroom')) or raise max_cells")
    W, y = problem.W, problem.y
    out = np.full(len(trace), np.nan)
    ptr = np.asarray(trace.T_ptr)
    bval = np.asarray(trace.b_val)
    for t in range(1, len(trace)):
        T = trace.T(t)
        if len(T) == 0:
            continue
        WT = W[:, T]
        WT = WT.toarray() if sp.issparse(WT) else np.asarray(WT)
        b = bval[ptr[t]:ptr[t + 1]]
        if not np.all(np.isfinite(b)):
            continue
        bhat = scipy.linalg.lstsq(WT, y, lapack_driver="gelsd", check_finite=False)[0]
        xprev = trace.x(t - 1)[T]
        num = float(np.linalg.norm(b - bhat))
        den = float(np.linalg.norm(xprev - bhat))
        out[t] = num / den if den > 0 else (0.0 if num == 0 else math.inf)
    return out


# -- replay ------------------------------------------------------------------------------------


def snapshot(trace, t=-1, step=None):
    """The iterate at one moment: ``x^t``, or the inner iterate at ``step`` of iteration ``t``.

    Parameters
    ----------
    trace : Trace or SolveResult
    t : int
        Outer iteration (negative counts from the end).
    step : int, optional
        Inner step of iteration ``t`` at which a checkpoint snapshot was recorded (needs
        ``record_iterates=True``; steps are multiples of ``record_every``).

    Returns
    -------
    ndarray of float, shape (d,)
    """
    trace = as_trace(trace)
    t = int(t) % len(trace)
    if step is None:
        return trace.x(t)
    if not trace.has_iterates:
        raise ValueError("this trace holds no inner iterates: solve with "
                         "record_iterates=True to look inside an epoch")
    hit = np.flatnonzero((trace.ck_iter == t) & (trace.ck_step == int(step)))
    if not len(hit):
        steps = trace.ck_step[trace.ck_iter == t].tolist()
        raise ValueError(f"no inner snapshot at step {step} of iteration {t}; recorded "
                         f"steps: {steps[:10]}{' ...' if len(steps) > 10 else ''}")
    return np.asarray(trace.ck_x[hit[0]], dtype=np.float64)


def replay_frames(trace):
    """The moments a replay steps through: ``[(t, step), ...]`` in order.

    ``(t, None)`` is ``x^t`` (the end of outer iteration ``t``); ``(t, j)`` is the inner
    iterate after step ``j`` of iteration ``t`` (only when the run recorded iterates).

    Parameters
    ----------
    trace : Trace or SolveResult

    Returns
    -------
    frames : list of (int, int or None)
    passes : ndarray of float
        The effective pass of each frame (non-decreasing).
    """
    trace = as_trace(trace)
    frames = [(0, None)]
    pos = [0.0]
    passes = np.asarray(trace.passes, dtype=np.float64)
    ck_pos = checkpoint_positions(trace) if trace.has_iterates else np.empty(0)
    ck_iter = np.asarray(trace.ck_iter)
    ck_step = np.asarray(trace.ck_step)
    for t in range(1, len(trace)):
        if trace.has_iterates:
            for k in np.flatnonzero(ck_iter == t):
                frames.append((t, int(ck_step[k])))
                pos.append(float(ck_pos[k]))
        frames.append((t, None))
        pos.append(float(passes[t]))
    return frames, np.maximum.accumulate(np.asarray(pos))


def frame_at(frame_passes, pos):
    """Index of the last frame at or before ``pos`` effective passes (0 before the first)."""
    return max(int(np.searchsorted(frame_passes, pos + 1e-12, side="right")) - 1, 0)


def frame_iteration(trace, t, step):
    """Where frame ``(t, step)`` sits on the outer-iteration axis (fractional inside an
    epoch: ``t - 1 + step / steps_per_iter``)."""
    if step is None:
        return float(t)
    per = int(trace.meta.get("steps_per_iter", 0) or 0)
    return t - 1 + (step / per if per else 1.0)


def thresholds_until(trace, pos, t, step, event_pos=None):
    """Hard thresholdings performed up to ``pos`` effective passes (frame ``(t, step)``).

    Parameters
    ----------
    trace : Trace
    pos : float
    t, step : int, int or None
        The frame shown at ``pos`` (used when the trace's event list was truncated: the
        count then comes from the completed outer iterations).
    event_pos : ndarray, optional
        ``np.sort(event_positions(trace, "passes")[0])``, to reuse between calls.

    Returns
    -------
    int
    """
    if trace.meta.get("events_truncated"):
        return int(trace.n_thresholds[t if step is None else t - 1])
    if event_pos is None:
        event_pos = np.sort(event_positions(trace, "passes")[0])
    return int(np.searchsorted(event_pos, pos + 1e-12, side="right"))
