"""``F*``: the objective every gap is measured against, from a reference better than the runs.

The true minimum of ``F`` over s-sparse vectors is unknown (the problem is NP-hard), so ``F*``
is an upper bound on it.  Were it the best of the runs being compared, whichever run ended
lowest would have gap 0 and "reach" any target by definition; :func:`reference` therefore
looks further than the runs themselves:

* least squares: the exact least-squares fit on the support of every run's best and final
  iterate, and on the true support when it is known (``s`` columns each: cheap);
* with ``run=True`` (what ``python -m rgrasp_viz reproduce`` does): also the run that went
  lowest, continued to :data:`REFERENCE_FACTOR` times the budget with ``tol = ftol = 0``
  (the same iterates, continued: never above that run);
* logistic loss with ``run=False``: that continuation is the only candidate besides the runs,
  so it is made anyway, but short: to at most :data:`CHEAP_EXTRA_PASSES` passes past the
  budget (an improvement on the runs, not a converged ``F*``; its source says so).

``F*`` is the lowest candidate, and never above any run's best objective: should a run be
lower (a run that the continuation does not reproduce, e.g. made with settings not recorded
in its trace), ``F*`` is clipped to it and the source says so.  The dashboards, the figures
and ``reproduce`` all take ``F*`` from here.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import warnings

import numpy as np
import scipy.sparse as sp

from .analysis import FStar, as_trace, best_objective
from .exceptions import ConvergenceWarning
from .solvers import default_eta, solve
from .solvers._registry import get_method, normalize_reading, run_label
from .solvers._status import Status

__all__ = ["CHEAP_EXTRA_PASSES", "REFERENCE_FACTOR", "Reference", "least_squares_on",
           "reference"]

REFERENCE_FACTOR = 10.0
"""With ``run=True`` the reference run gets this many times the budget (``tol = ftol = 0``)."""

ROUNDING_RTOL = 1e-12
"""A run below every candidate by at most this (relative) is below it by rounding only (e.g. a
fixed point of FG-HT and the exact fit on its support); the source says so."""

CHEAP_EXTRA_PASSES = 20.0
"""Logistic loss with ``run=False``: the continued run stops this many passes past the budget
(at most :data:`REFERENCE_FACTOR` times it)."""


@dataclasses.dataclass
class Reference:
    """What the targets are measured against.

    Attributes
    ----------
    fstar : float
        ``F*``.
    source : str
        Where ``F*`` comes from, in words.
    candidates : list of dict
        Every value considered (``source``, ``objective``); ``fstar`` is the lowest.
    err_ref : float
        Reference estimation error (NaN without ground truth): that of the oracle, the
        least-squares fit on the true support.
    err_source : str
        Where ``err_ref`` comes from.
    run : dict
        The reference run's settings and outcome (empty when none was made).
    """

    fstar: float
    source: str
    candidates: list = dataclasses.field(default_factory=list)
    err_ref: float = math.nan
    err_source: str = ""
    run: dict = dataclasses.field(default_factory=dict)

    @classmethod
    def from_runs(cls, traces):
        """The circular fallback: the best objective (and error) of the runs themselves.

        Used only when no reference was computed (hand-built traces); its source says so.
        """
        traces = _as_dict(traces)
        vals = [best_objective(t)[0] for t in traces.values()]
        vals = [v for v in vals if math.isfinite(v)]
        errs = [float(np.nanmin(t.rel_error)) for t in traces.values()
                if np.isfinite(t.rel_error).any()]
        return cls(min(vals) if vals else math.nan,
                   "the best objective of the runs themselves (no reference run: the lowest "
                   "run reaches the target by definition)", [],
                   min(errs) if errs else math.nan,
                   "the smallest error of the runs themselves (no reference)")

    def as_fstar(self):
        """The :class:`~rgrasp_viz.analysis.FStar` a figure is drawn against: the value, and
        ``"F* = <source>"`` as the figure's subtitle."""
        return FStar(float(self.fstar), f"F* = {self.source}", "reference")

    def to_dict(self):
        """``run.json``'s record of the reference."""
        return {"fstar": self.fstar, "source": self.source, "candidates": self.candidates,
                "error_reference": self.err_ref, "error_source": self.err_source,
                "run": self.run}


def least_squares_on(problem, support):
    """The exact least-squares fit with its nonzeros on ``support`` (zeros elsewhere).

    Parameters
    ----------
    problem : Problem
        A least-squares problem.
    support : array_like of int

    Returns
    -------
    numpy.ndarray, shape (d,)
        ``argmin F(x)`` over the ``x`` supported on ``support`` (minimum-norm when the
        columns are rank deficient).
    """
    support = np.asarray(support, dtype=np.int64)
    x = np.zeros(problem.d)
    if support.size:
        cols = problem.W[:, support]
        cols = cols.toarray() if sp.issparse(cols) else np.asarray(cols, dtype=np.float64)
        x[support] = np.linalg.lstsq(cols, problem.y, rcond=None)[0]
    return x


def _as_dict(traces):
    """``{name: Trace}`` from a dict, or from a sequence of traces / results (by label)."""
    if isinstance(traces, dict):
        return {k: as_trace(v) for k, v in traces.items()}
    out = {}
    for v in traces:
        t = as_trace(v)
        name = run_label(t.meta.get("method", "run"), t.meta.get("inner"))
        while name in out:
            name += "'"
        out[name] = t
    return out


def _label(name, trace):
    method = trace.meta.get("method", name)
    try:
        return run_label(method, trace.meta.get("inner"))
    except ValueError:
        return str(name)


def _continue(problem, trace, name, s, seed, inner, factors, budget):
    """The run of ``trace`` again (same settings as recorded in its meta), to ``budget``
    passes with ``tol = ftol = 0``: the same iterates, continued."""
    meta = trace.meta
    method = meta.get("method", name)
    spec = get_method(method)
    s = int(meta.get("s", s))
    inner = normalize_reading(meta.get("inner") or inner)
    eta = None
    if spec.has_step:
        eta = meta.get("eta")
        if eta is None or not math.isfinite(float(eta)):
            f = (factors or {}).get(name, (factors or {}).get(method, 1.0))
            eta = f * default_eta(problem, method, s, inner)
        eta = float(eta)
    rs = meta.get("random_state", seed)
    kw = {k: meta[k] for k in ("J", "m", "batch_size") if meta.get(k) is not None
          and (k != "m" or spec.readings)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = solve(problem, method=method, s=s, eta=eta, random_state=rs, tol=0.0,
                    ftol=0.0, max_iter=1_000_000, max_passes=budget, inner=inner, warn=False,
                    **kw)
    return res, method, inner, eta


def reference(problem, traces, *, s=None, run=True, budget=None, seed=0, inner="paper",
              factors=None, progress=False):
    """``F*`` from a reference better than every run in ``traces``, and the error reference.

    Parameters
    ----------
    problem : Problem
        The problem the runs solved.
    traces : dict of str to Trace, or sequence of Trace / SolveResult
        The runs (by method name when a dict).
    s : int, optional
        Sparsity level of the re-run; default: the one recorded in its trace.
    run : bool, default True
        Also continue the lowest run to :data:`REFERENCE_FACTOR` times ``budget``
        (``tol = ftol = 0``; seconds to minutes at the paper's size).  ``False``: only the
        cheap candidates (least squares: exact fits on the runs' supports; logistic: a short
        continuation, :data:`CHEAP_EXTRA_PASSES` past the budget).
    budget : float, optional
        The runs' pass budget; default: the largest number of passes any run used.
    seed : int
        Index-sequence seed of the re-run when its trace does not record one.
    inner : {"paper", "on_T"}
        Reading of Algorithm 2 of the re-run when its trace does not record one.
    factors : dict of str to float, optional
        Step-size multipliers of :func:`rgrasp_viz.default_eta` by method, used only when
        the re-run's trace does not record its step size.
    progress : bool
        One line on stderr about the re-run.

    Returns
    -------
    Reference
        ``fstar``: the lowest candidate (see the module docstring), clipped to the lowest
        run's best objective should that be lower.  ``err_ref`` (when the problem knows
        ``x_true``): the estimation error of the least-squares fit on the true support (the
        oracle), independent of every run.
    """
    traces = _as_dict(traces)
    inner = normalize_reading(inner)
    ok = {m: t for m, t in traces.items()
          if int(t.meta.get("status", 0)) != Status.DIVERGED and
          math.isfinite(best_objective(t)[0])}
    if budget is None:
        used = [float(t.passes[-1]) for t in traces.values() if len(t)]
        budget = max(used) if used else 1.0
    candidates = []
    run_info = {}
    squares = problem.loss == "squares"
    supports = []
    if ok and (run or not squares):
        best_m = min(ok, key=lambda m: best_objective(ok[m])[0])
        ref_budget = REFERENCE_FACTOR * budget if run else \
            min(REFERENCE_FACTOR * budget, budget + CHEAP_EXTRA_PASSES)
        res, method, r_inner, eta = _continue(problem, ok[best_m], best_m, s, seed, inner,
                                              factors, ref_budget)
        f_ref, k_ref = best_objective(res.trace)
        label = run_label(method, r_inner)
        stopped = (f"pass budget {ref_budget:g} used"
                   if res.status in (Status.CALLBACK, Status.MAX_PASSES) else res.message)
        run_info = {"method": method, "label": label, "inner": r_inner,
                    "factor": (factors or {}).get(best_m, 1.0), "eta": eta,
                    "budget_passes": ref_budget, "tol": 0.0, "ftol": 0.0,
                    "iterations": res.trace.n_iter, "passes": res.passes,
                    "best_objective": f_ref, "stopped": stopped, "full": bool(run)}
        how = (f"{REFERENCE_FACTOR:g}x the budget" if run else
               f"a short continuation (cheap reference, not converged: at most "
               f"{CHEAP_EXTRA_PASSES:g} passes past the budget)")
        candidates.append({"source": f"{label} run again with {how} ({ref_budget:g} passes, "
                                     f"tol=0, ftol=0; {stopped})",
                           "objective": f_ref})
        if progress:
            print(f"[ref] {label:<8} {ref_budget:g} passes: {res.trace.n_iter:>5d} it  "
                  f"{res.passes:7.1f} passes  {res.time:8.3f} s  F {f_ref:.6e}",
                  file=sys.stderr, flush=True)
        if k_ref >= 0:
            supports.append((f"{label} reference run's best iterate", res.trace.support(k_ref)))
    if squares:
        for m, t in traces.items():
            name = _label(m, t)
            k = best_objective(t)[1]
            if k >= 0:
                supports.append((f"{name}'s best iterate", t.support(k)))
            if len(t) and k != len(t) - 1 and (k < 0 or not np.array_equal(t.support(k),
                                                                           t.support(-1))):
                supports.append((f"{name}'s final iterate", t.support(-1)))
        for where, supp in supports:
            fit = float(problem.objective(least_squares_on(problem, supp)))
            candidates.append({"source": "exact least-squares fit on the support of "
                                         f"{where} ({len(supp)} nonzeros)",
                               "objective": fit})
    err_ref, err_source = math.nan, ""
    if problem.x_true is not None:
        true_supp = np.flatnonzero(problem.x_true)
        oracle = least_squares_on(problem, true_supp)
        err_ref = float(problem.rel_error(oracle))
        err_source = (f"the exact least-squares fit on the true support ({true_supp.size} "
                      "nonzeros; the oracle)")
        if squares:
            candidates.append({"source": "exact least-squares fit on the true support "
                                         f"({true_supp.size} nonzeros)",
                               "objective": float(problem.objective(oracle))})
    finite = [c for c in candidates if math.isfinite(c["objective"])]
    runs_best = {m: best_objective(t)[0] for m, t in traces.items()
                 if math.isfinite(best_objective(t)[0])}  # diverged runs included
    if not finite and not runs_best:
        return Reference(math.nan, "no finite objective (every run diverged)", candidates,
                         err_ref, err_source, run_info)
    if finite:
        best = min(finite, key=lambda c: c["objective"])
        fstar, source = float(best["objective"]), best["source"]
    else:
        fstar, source = math.inf, ""
    if runs_best:
        low = min(runs_best, key=runs_best.get)
        if runs_best[low] < fstar:
            name = _label(low, traces[low])
            if fstar - runs_best[low] <= ROUNDING_RTOL * abs(fstar):
                why = (f"{source}, lowered by {fstar - runs_best[low]:.1e} (rounding) to the "
                       f"best objective of the run {name}, so that no gap is negative")
            else:
                why = (f"the best objective of the run {name} itself (below every reference "
                       "candidate: F* clipped to it, so that no gap is negative)")
            clipped = {"source": why, "objective": runs_best[low]}
            candidates.append(clipped)
            fstar, source = runs_best[low], why
    return Reference(fstar, source, candidates, err_ref, err_source, run_info)
