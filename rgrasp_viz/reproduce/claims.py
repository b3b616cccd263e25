"""The paper's claims, checked on a set of runs (traces in, verdicts out; nothing is solved).

``F*`` comes from a :class:`Reference` better than every budgeted run (see
:func:`rgrasp_viz.reproduce.experiments.reference`), never from the runs being judged: were
it the best of those runs, whichever run ended lowest would reach the target by definition.
A method *reaches the objective target* when ``F(x^t) - F* <= TARGET_GAP * (F(x^0) - F*)``
and, on synthetic data, *the error target* when ``||x^t - x*|| / ||x*|| <=
TARGET_ERR_FACTOR *`` the oracle's error (the least-squares fit on the true support).  The
passes (or solver seconds) at which it does so are interpolated log-linearly between outer
iterations (:func:`rgrasp_viz.analysis.first_crossing`); "never" when not within the budget.

"A is faster than B" means A reaches the target with strictly fewer passes than B, or in at
most ``1 / TIME_MARGIN`` of B's seconds (timings of identical runs vary by a few percent), or
B never does while A does.  Two runs with the same iterates (:func:`same_iterates`: the same
support at every outer iteration and objectives equal within ``IDENTICAL_RTOL``) are never
"faster" than each other.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..analysis import IDENTICAL_RTOL, first_crossing, same_iterates
from ..reference import Reference
from ..solvers.registry import get_method, method_label, method_names, run_label

__all__ = [
    "BASELINES",
    "CLAIMS",
    "IDENTICAL_RTOL",
    "OTHER_METHODS",
    "OURS",
    "TARGET_ERR_FACTOR",
    "TARGET_GAP",
    "TIME_MARGIN",
    "VR_METHODS",
    "Reference",
    "evaluate_claims",
    "format_claims",
    "reach",
    "same_iterates",
    "targets_text",
]

_PAPER = method_names(paper_only=True)

OURS = tuple(m for m in _PAPER if get_method(m).readings)
"""The paper's two methods (Algorithm 1 with Algorithm 2: SVRGSP, SVRGSP+)."""

BASELINES = tuple(m for m in _PAPER if m not in OURS)
"""The four methods the paper compares against."""

VR_METHODS = tuple(m for m in _PAPER if get_method(m).epoch)
"""Stochastic variance-reduced methods (SVRG epochs: SVRGHT, SVRGSP, SVRGSP+)."""

OTHER_METHODS = tuple(m for m in _PAPER if m not in VR_METHODS)
"""Deterministic methods and plain stochastic SG-HT."""

TARGET_GAP = 1e-4
"""Objective target: ``F - F* <= TARGET_GAP * (F(x0) - F*)``."""

TARGET_ERR_FACTOR = 2.0
"""Error target: ``rel_error <= TARGET_ERR_FACTOR *`` the reference error."""

TIME_MARGIN = 1.1
"""A method is faster in *time* only when it needs at most ``1 / TIME_MARGIN`` of the other's
seconds (solver timings of identical runs vary by a few percent); in passes, strictly fewer."""

reach = first_crossing  # the shared definition (rgrasp_viz.analysis)


@dataclasses.dataclass
class _Ctx:
    traces: dict
    fstar: float
    has_truth: bool
    err_level: float

    def label(self, m):
        t = self.traces.get(m)
        return run_label(m, t.meta.get("inner")) if t is not None else method_label(m)

    def gap(self, m):
        return np.asarray(self.traces[m].objective, float) - self.fstar

    def gap_level(self, m):
        return TARGET_GAP * (float(self.traces[m].objective[0]) - self.fstar)

    def at(self, m, axis, metric="gap"):
        t = self.traces[m]
        x = t.passes if axis == "passes" else t.time
        if metric == "gap":
            return reach(x, self.gap(m), self.gap_level(m))
        return reach(x, t.rel_error, self.err_level)

    def fmt(self, m, axis, metric="gap"):
        v = self.at(m, axis, metric)
        unit = "passes" if axis == "passes" else "s"
        if math.isfinite(v):
            return f"{self.label(m)} {v:.3g} {unit}"
        t = self.traces[m]
        if metric == "gap":
            best = np.nanmin(self.gap(m)) / (float(t.objective[0]) - self.fstar)
            return f"{self.label(m)} never (best rel. gap {best:.1e})"
        return f"{self.label(m)} never (best error {np.nanmin(t.rel_error):.2e})"

    def per_pass(self, m):
        t = self.traces[m]
        p = float(t.passes[-1])
        return float(t.time[-1]) / p if p > 0 else math.nan


def _faster(ctx, a_list, b_list, axis, metric="gap"):
    """Every method of ``a_list`` strictly faster than every method of ``b_list``."""
    needed = list(a_list) + list(b_list)
    if any(m not in ctx.traces for m in needed):
        return "n/a", "missing runs: " + ", ".join(m for m in needed if m not in ctx.traces)
    if metric == "error" and not ctx.has_truth:
        return "n/a", "no ground truth x* (real data)"
    a = {m: ctx.at(m, axis, metric) for m in a_list}
    b = {m: ctx.at(m, axis, metric) for m in b_list}
    slow_a = max(a.values())
    fast_b = min(b.values())
    if axis == "time":
        ok = math.isfinite(slow_a) and slow_a * TIME_MARGIN <= fast_b
    else:
        ok = math.isfinite(slow_a) and slow_a < fast_b
    nums = "; ".join(ctx.fmt(m, axis, metric) for m in needed)
    if math.isfinite(fast_b) and math.isfinite(slow_a) and slow_a > 0:
        nums += f"; ratio {fast_b / slow_a:.2f}x"
    if len(a_list) == 1 and len(b_list) == 1 and same_iterates(
            ctx.traces[a_list[0]], ctx.traces[b_list[0]]):
        # same iterates: no faster convergence, whatever the clock says
        ok = False
        nums += (" (identical iterates: same supports, objectives within "
                 f"{IDENTICAL_RTOL:g}" + ("" if axis == "passes" else
                 "; a time difference is only H_|T|'s cost plus timing noise") + ")")
    return ("yes" if ok else "no"), nums


def _better_solutions(ctx):
    needed = VR_METHODS + OTHER_METHODS
    if any(m not in ctx.traces for m in needed):
        return "n/a", "missing runs"
    best = {m: float(np.nanmin(ctx.gap(m))) for m in needed}
    worst_vr = max(best[m] for m in VR_METHODS)
    best_other = min(best[m] for m in OTHER_METHODS)
    nums = "; ".join(f"{ctx.label(m)} {best[m]:.2e}" for m in needed)
    return ("yes" if worst_vr < best_other else "no"), "lowest F - F*: " + nums


def _cost(ctx, cheap, dear):
    needed = list(cheap) + list(dear)
    if any(m not in ctx.traces for m in needed):
        return "n/a", "missing runs"
    pp = {m: ctx.per_pass(m) for m in needed}
    ok = max(pp[m] for m in cheap) * TIME_MARGIN <= min(pp[m] for m in dear)
    parts = []
    for m in needed:
        t = ctx.traces[m]
        it = max(len(t) - 1, 1)
        parts.append(f"{ctx.label(m)} {1e3 * pp[m]:.3g} ms/pass, "
                     f"{int(t.n_thresholds[-1]) / it:.4g} thresholdings/iter")
    return ("yes" if ok else "no"), "; ".join(parts)


def _names(methods):
    return ", ".join("{" + m + "}" for m in methods)


_OURS_TXT = " and ".join("{" + m + "}" for m in OURS)
_VS_ALL = f"all four baselines ({_names(BASELINES)})"

CLAIMS = (
    ("P1", "{svrgsp} reaches the objective target in fewer effective passes than {svrght}",
     lambda c: _faster(c, ["svrgsp"], ["svrght"], "passes")),
    ("P2", "{svrgsp+} reaches the objective target in fewer effective passes than {svrght}",
     lambda c: _faster(c, ["svrgsp+"], ["svrght"], "passes")),
    ("T1", "{svrgsp} reaches the objective target in less time than {svrght}",
     lambda c: _faster(c, ["svrgsp"], ["svrght"], "time")),
    ("T2", "{svrgsp+} reaches the objective target in less time than {svrght}",
     lambda c: _faster(c, ["svrgsp+"], ["svrght"], "time")),
    ("P3", "{svrgsp+} reaches the objective target in fewer effective passes than {svrgsp}",
     lambda c: _faster(c, ["svrgsp+"], ["svrgsp"], "passes")),
    ("T3", "{svrgsp+} reaches the objective target in less time than {svrgsp}",
     lambda c: _faster(c, ["svrgsp+"], ["svrgsp"], "time")),
    ("A1", f"{_OURS_TXT} reach the objective target in fewer passes than {_VS_ALL}",
     lambda c: _faster(c, OURS, BASELINES, "passes")),
    ("A2", f"{_OURS_TXT} reach the objective target in less time than all four baselines",
     lambda c: _faster(c, OURS, BASELINES, "time")),
    ("E1", f"{_OURS_TXT} reach the estimation-error target in fewer passes than all four "
           "baselines (synthetic data)",
     lambda c: _faster(c, OURS, BASELINES, "passes", "error")),
    ("V1", f"Variance-reduced methods ({_names(VR_METHODS)}) reach the objective target in "
           f"fewer passes than {_names(OTHER_METHODS)}",
     lambda c: _faster(c, VR_METHODS, OTHER_METHODS, "passes")),
    ("V2", "Variance-reduced methods find better solutions (lower objective within the "
           f"budget) than {_names(OTHER_METHODS)}",
     _better_solutions),
    ("C1", f"Per-iteration cost: {_OURS_TXT} spend less solver time per effective pass "
           "than {svrght} (O(d) vs O(d log d) per inner step)",
     lambda c: _cost(c, OURS, ["svrght"])),
    ("C2", "{grasp} spends more solver time per effective pass than {fght} (higher "
           "per-iteration complexity)",
     lambda c: _cost(c, ["fght"], ["grasp"])),
)
"""``(id, claim, evaluator)`` for every claim checked.  ``claim`` names methods as
``{method}``, filled in with the run's label (``SVRGSP (on T)`` for our variant of
Algorithm 2); the evaluator returns ``(verdict, numbers)``."""


def _has_truth(traces):
    return bool(traces) and all(np.isfinite(t.rel_error).all() for t in traces.values())


def evaluate_claims(traces, has_truth=None, reference=None):
    """Check the paper's claims on a set of runs.

    Parameters
    ----------
    traces : dict of str to Trace
        One run per method name (any subset of the paper's six; claims that need a missing
        run get the verdict ``"n/a"``).
    has_truth : bool, optional
        Whether the runs know ``x*`` (estimation-error claims); default: whether their
        ``rel_error`` is finite.
    reference : Reference, optional
        ``F*`` and the error reference; default :meth:`Reference.from_runs` (circular: for
        hand-built examples only, and labelled so).

    Returns
    -------
    list of dict
        One row per entry of :data:`CLAIMS`: ``id``, ``claim`` (with the runs' labels),
        ``verdict`` (``"yes"``, ``"no"`` or ``"n/a"``) and ``numbers`` (what the verdict was
        computed from).
    """
    traces = dict(traces)
    if has_truth is None:
        has_truth = _has_truth(traces)
    ref = Reference.from_runs(traces) if reference is None else reference
    err_level = TARGET_ERR_FACTOR * ref.err_ref if has_truth else math.nan
    ctx = _Ctx(traces, ref.fstar, has_truth, err_level)
    labels = {m: ctx.label(m) for m in _PAPER}
    rows = []
    for cid, text, fn in CLAIMS:
        verdict, numbers = fn(ctx)
        rows.append({"id": cid, "claim": text.format_map(labels), "verdict": verdict,
                     "numbers": numbers})
    return rows


def targets_text(traces, reference=None):
    """One paragraph: ``F*`` with its source, and the targets in relative and absolute terms.

    Parameters
    ----------
    traces : dict of str to Trace
    reference : Reference, optional
        As in :func:`evaluate_claims`.
    """
    ref = Reference.from_runs(traces) if reference is None else reference
    fs = ref.fstar
    f0 = [float(t.objective[0]) for t in traces.values()]
    text = f"F* = {fs:.10g}, from {ref.source}. Objective target: F - F* <= {TARGET_GAP:g} " \
           "(F(x0) - F*)"
    if f0 and max(f0) - min(f0) <= 1e-12 * max(abs(max(f0)), 1.0):
        level = TARGET_GAP * (f0[0] - fs)
        text += f" = {level:.4g} (F(x0) = {f0[0]:.6g}), i.e. F <= {fs + level:.8g}."
    else:
        text += " (runs start at different F(x0))."
    if _has_truth(traces) and math.isfinite(ref.err_ref):
        text += (f" Error target: ||x - x*||/||x*|| <= {TARGET_ERR_FACTOR:g} x "
                 f"{ref.err_ref:.3e} = {TARGET_ERR_FACTOR * ref.err_ref:.3e} ({ref.err_source}).")
    text += (" Passes/seconds at the first crossing, interpolated log-linearly between outer"
             " iterations; 'never' = not within the budget. Faster = strictly fewer passes, "
             f"or at least {TIME_MARGIN:g}x less time (also per pass, C1/C2); 'ratio' = the "
             "claimed-slower side's best / the claimed-faster side's worst (> 1 supports the "
             "claim).")
    return text


def format_claims(rows, markdown=False):
    """The claims table as plain text (terminal) or Markdown.

    Parameters
    ----------
    rows : list of dict
        From :func:`evaluate_claims`.
    markdown : bool

    Returns
    -------
    str
    """
    if markdown:
        lines = ["| id | claim | supported | numbers |", "|---|---|---|---|"]
        for r in rows:
            lines.append(f"| {r['id']} | {r['claim']} | **{r['verdict']}** | "
                         f"{r['numbers'].replace('|', '/')} |")
        return "\n".join(lines)
    lines = []
    for r in rows:
        lines.append(f"[{r['verdict']:>3}] {r['id']}  {r['claim']}")
        lines.append(f"           {r['numbers']}")
    return "\n".join(lines)
