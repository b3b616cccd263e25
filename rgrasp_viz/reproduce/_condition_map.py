"""Where variance reduction pays: the condition map (ours; no figure of the paper).

``python -m rgrasp_viz reproduce condition-map [--quick] [--jobs N] [--seeds ...]`` runs
every method of the paper, each with a tuned step size, on the paper's synthetic generator
with an equicorrelated covariance ``Sigma = (1 - rho) I + rho 11^T`` for each ``rho`` of
:data:`RHOS`, at two shapes (:data:`SHAPES`: ``n/d = 1/2`` as the paper, and a tall
``n/d = 4``), on several seeds, and records how many effective passes (and seconds) each needs
to bring the objective gap to a fraction of the initial gap, ``(F - F*) / (F0 - F*)``
(:data:`SPEED_TARGET`, also the other :data:`LEVELS`), which method is fastest, and the two
smoothness constants that explain the winner:

* ``L``: the restricted smoothness of the full gradient, the largest eigenvalue of
  ``W_S^T W_S / n`` on ``2s`` columns (the one FG-HT's step rule uses,
  :func:`rgrasp_viz.solvers.restricted_smoothness`); it grows like ``1 + 2 s rho``;
* ``Lmax``: the per-sample smoothness ``max_i ||w_i||^2`` (all ``d`` coordinates, as the
  paper's Algorithm 2 moves its inner iterate on all of them); ``||w_i||^2`` is about ``d``
  on average whatever ``rho``, and its maximum grows with ``rho`` far more slowly than ``L``.

A full-gradient pass buys one step of length ``~1/L``; a variance-reduced epoch buys ``J``
steps of length ``~1/Lmax``.  Per pass, variance reduction moves further when
``Lmax / (n L) < 1`` (:func:`smoothness` records that ratio), provided the problem is
ill-conditioned enough that FG-HT needs more passes than an epoch's fixed cost (3 passes).

Protocol (all choices are ours, named here):

* step sizes: per (shape, rho, method), the multiplier of :func:`rgrasp_viz.default_eta` is
  tuned on held-out seeds (the claims' tuning seeds, 1000 and up), coarse to fine: the powers of two
  :data:`COARSE_GRID`, then the two ``sqrt(2)`` neighbours of the coarse pick; the pick reaches
  the speed target on every tuning seed in the fewest passes on the worse seed (else: the
  lowest median final gap); a factor that diverges on any tuning seed is out;
* ``F*`` per problem: :func:`rgrasp_viz.reference.reference` with ``run=False`` (the exact
  least-squares fits on the true support and on every run's best and final support, never
  above any run), the one reference every view uses; a run stops at its pass budget, at an
  exact fixed point, or once its best objective improved by less than
  :data:`STALL_RTOL` times ``F0 - F_best`` in :data:`STALL_PASSES` passes (far past every
  level);
* a row of the map is the median over the seeds; ``reached`` says whether every seed got
  there.  The winner at (shape, rho) is the method with the fewest median passes to the speed
  target among those that reached it on every seed (``winner``; ``winner_by_level`` the same
  at every level of :data:`LEVELS`: a method without variance reduction may stall between
  two levels, so the winner can change with the level);
* the paper's own steps too: every method also runs with the multiplier 1 (the step
  :func:`rgrasp_viz.default_eta` gives, as the paper sets it) on the same problems, and
  ``map_paper_steps`` / ``winner_paper_steps`` are the same map and winners from those runs
  (tuning is ours: the two views say how much of a method's lead is its step size).

Everything is deterministic: the same seeds give bit-identical rows (but ``seconds``), serial
or parallel (every task builds its problem from its seed).
"""

from __future__ import annotations

import json
import math
import statistics
import time
import warnings

import numpy as np

from .._io import write_text
from .._problems import make_regression
from .._progress import note
from ..analysis import first_crossing
from ..exceptions import ConvergenceWarning
from ..reference import reference
from ..solvers import (
    Status,
    default_eta,
    get_method,
    method_label,
    restricted_smoothness,
    solve,
)
from ._claims import SPEED_LEVEL, SPEED_LEVELS, TIE_TOLERANCE, speed_gap
from ._experiments import METHODS, warm_up
from ._output import OutputFolder, check_out
from ._parallel import check_jobs, check_scheduler, run_tasks
from ._report import _export_all, default_out
from ._tuning import TUNE_GRID, TUNE_SEEDS, tuning_seeds

__all__ = ["BUDGET", "COARSE_GRID", "LEVELS", "NAME", "RHOS", "SHAPES", "SPEED_TARGET",
           "STALL_PASSES", "STALL_RTOL", "VR_FREE", "build_map_problem", "check_map_args",
           "claims_paragraph", "fine_grid", "map_rows", "run_condition_map", "smoothness",
           "summarize", "winners"]

NAME = "condition-map"
"""Command-line name of the experiment."""

RHOS = (0.0, 0.01, 0.03, 0.1, 0.3)
"""Off-diagonal entries of the equicorrelated covariance (setting 1 is 0, setting 2 is 0.1)."""

SHAPES = {
    "paper": {"quick": (500, 1000, 50), "full": (1000, 2000, 100)},
    "tall": {"quick": (1000, 250, 12), "full": (2000, 500, 25)},
}
"""``(n, d, s*)`` per shape and size: ``n/d = 1/2`` and ``s* = d/20`` as the paper's settings,
and a tall ``n/d = 4``.  ``s = 1.2 s*`` (the paper's rule, ``Problem.default_s``)."""

LEVELS = SPEED_LEVELS
"""Fractions of the initial gap, ``(F - F*) / (F0 - F*)``, at which passes are counted (the
speed levels of the claims, :data:`~._claims.SPEED_LEVELS`)."""

SPEED_TARGET = SPEED_LEVEL
"""The level that decides the winner (the claims' speed target)."""

BUDGET = 300.0
"""Effective passes per run (quick and full)."""

COARSE_GRID = TUNE_GRID[::2]
"""Step multipliers tried first: every other factor of the claims' sqrt(2) grid
:data:`~._tuning.TUNE_GRID` (the powers of two, 0.25 to 8); then the ``sqrt(2)`` neighbours of
the pick (:func:`fine_grid`; beyond the grid's edge when the pick is at it)."""

STALL_PASSES = 20.0
"""A run whose best objective gained less than :data:`STALL_RTOL` of ``F0 - F_best`` over this
many passes stops (it sits far below every level of :data:`LEVELS`)."""

STALL_RTOL = 1e-9
"""See :data:`STALL_PASSES`."""

CURVE_POINTS = 150
"""Points kept per gap curve in ``run.json`` (first seed; for the figures and the site)."""

VR_FREE = tuple(m for m in METHODS if not get_method(m).epoch and get_method(m).has_step)
"""The methods with a step size and without variance reduction (FG-HT, SG-HT)."""


def fine_grid(factor):
    """The ``sqrt(2)`` neighbours of a coarse pick (the refinement step of the tuning)."""
    return (factor / math.sqrt(2.0), factor * math.sqrt(2.0))


def check_map_args(seeds=None, jobs=1, budget=None):
    """Check :func:`run_condition_map`'s arguments before any work; return them normalised.

    Raises
    ------
    ValueError
        For empty or repeated seeds, a negative seed or a tuning seed, a bad ``jobs``
        (:func:`~._parallel.check_jobs`) or a bad budget.
    """
    seeds = (0, 1, 2) if seeds is None else seeds
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        seeds = (seeds,)
    seeds = tuple(seeds)
    if not seeds or any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0
                        for s in seeds):
        raise ValueError(f"seeds must be non-negative integers, got {seeds!r}")
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds repeat: {seeds!r}")
    clash = sorted(set(seeds) & set(tuning_seeds(TUNE_SEEDS)))
    if clash:
        raise ValueError(f"seeds {clash} are tuning seeds (the steps are tuned on them); "
                         "evaluate on other seeds")
    jobs = check_jobs(int(jobs) if isinstance(jobs, np.integer) else jobs)
    budget = BUDGET if budget is None else float(budget)
    if not (math.isfinite(budget) and budget > 0):
        raise ValueError(f"budget must be a positive number of passes, got {budget!r}")
    return tuple(int(s) for s in seeds), int(jobs), budget


def build_map_problem(shape, rho, quick, seed):
    """The problem of one cell of the map: the paper's generator with correlation ``rho``."""
    n, d, s_star = SHAPES[shape]["quick" if quick else "full"]
    return make_regression(n=n, d=d, s_star=s_star, correlation=rho, random_state=seed)


def smoothness(problem, s):
    """The constants that decide whether variance reduction pays on ``problem``.

    Returns
    -------
    dict
        ``L`` (restricted smoothness of the full gradient on ``2s`` columns, FG-HT's step
        rule), ``Lmax`` (``max_i ||w_i||^2``), ``Lmean`` (``mean_i ||w_i||^2``), ``n``, and
        ``ratio = Lmax / (n L)``: below 1 a variance-reduced epoch moves further per pass
        than full gradients do.
    """
    W = np.asarray(problem.W)
    rows = np.einsum("ij,ij->i", W, W)
    L = float(restricted_smoothness(problem, 2 * s))
    lmax = float(rows.max())
    return {"L": L, "Lmax": lmax, "Lmean": float(rows.mean()), "n": problem.n,
            "ratio": lmax / (problem.n * L)}


class _Stop:
    """Budget and stall test (see :data:`STALL_PASSES`)."""

    def __init__(self, budget, f0):
        self.budget, self.f0 = budget, f0
        self.marks = []  # (passes, best objective)

    def __call__(self, info):
        if info.passes >= self.budget:
            raise StopIteration
        best = min(float(info.fun), self.marks[-1][1]) if self.marks else float(info.fun)
        self.marks.append((float(info.passes), best))
        old = [b for p, b in self.marks if p <= info.passes - STALL_PASSES]
        if old and old[-1] - best <= STALL_RTOL * max(self.f0 - best, 0.0):
            raise StopIteration


def _run(problem, method, s, factor, seed, budget):
    eta = factor * default_eta(problem, method, s, "paper") if get_method(method).has_step \
        else None
    f0 = float(problem.objective(np.zeros(problem.d)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return solve(problem, method=method, s=s, eta=eta, random_state=seed, tol=1e-10,
                     ftol=0.0, max_iter=100_000, inner="paper", warn=False,
                     callback=_Stop(budget, f0))


def _thin(x, y, k=CURVE_POINTS):
    """At most ``k`` points of a curve (first and last kept, evenly spaced indices)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if len(x) > k:
        idx = np.unique(np.linspace(0, len(x) - 1, k).round().astype(int))
        x, y = x[idx], y[idx]
    return [float(v) for v in x], [float(v) if math.isfinite(v) else None for v in y]


def _solve_cell(task):
    """One problem, a list of (method, factor) runs, and its ``F*``: compact records.

    ``task``: ``(shape, rho, quick, seed, runs, budget, curves)``.
    """
    shape, rho, quick, seed, runs, budget, curves = task
    prob = build_map_problem(shape, rho, quick, seed)
    s = prob.default_s
    warm_up(prob, "paper", tuple(dict.fromkeys(m for m, _ in runs)))
    results = {(m, f): _run(prob, m, s, f, seed, budget) for m, f in runs}
    ref = reference(prob, [r.trace for r in results.values()], run=False)
    f0 = float(prob.objective(np.zeros(prob.d)))
    out = []
    for (m, f), r in results.items():
        tr = r.trace
        rec = {"method": m, "factor": f, "eta": tr.meta.get("eta"),
               "status": Status(r.status).name, "diverged": r.status == Status.DIVERGED,
               "passes_used": float(tr.passes[-1]), "objective": np.asarray(tr.objective),
               "passes": np.asarray(tr.passes), "time": np.asarray(tr.time)}
        out.append(rec)
    consts = smoothness(prob, s) if curves else None
    return {"shape": shape, "rho": rho, "seed": seed, "n": prob.n, "d": prob.d, "s": s,
            "s_star": int(np.count_nonzero(prob.x_true)), "f0": f0, "fstar": ref.value,
            "fstar_source": ref.where, "runs": out, "constants": consts}


def _fraction(rec, fstar, f0):
    """``(F - F*) / (F0 - F*)`` along a run (:func:`~._claims.speed_gap`)."""
    return speed_gap(rec["objective"], fstar, f0)


def _score(rec, fstar, f0):
    """Passes and seconds to each level, the final fraction."""
    frac = _fraction(rec, fstar, f0)
    if rec["diverged"]:
        frac = np.full_like(frac, np.inf)
    passes = {f"{lv:g}": first_crossing(rec["passes"], frac, lv) for lv in LEVELS}
    seconds = {f"{lv:g}": first_crossing(rec["time"], frac, lv) for lv in LEVELS}
    fin = frac[np.isfinite(frac)]
    return passes, seconds, (float(fin.min()) if fin.size else math.inf)


# -- tuning ------------------------------------------------------------------------------------


def _tune_scores(cells):
    """``{(shape, rho): {(method, factor): [(passes, best fraction, diverged) per seed]}}``.

    ``cells``: every tuning cell result; those of one problem (shape, rho, seed) share the
    lowest ``F*`` of all their batches (coarse and fine runs)."""
    fstar = {}
    for c in cells:
        key = (c["shape"], c["rho"], c["seed"])
        fstar[key] = min(fstar.get(key, math.inf), c["fstar"])
    scores = {}
    for c in cells:
        fs = fstar[(c["shape"], c["rho"], c["seed"])]
        for rec in c["runs"]:
            p, _, best = _score(rec, fs, c["f0"])
            scores.setdefault((c["shape"], c["rho"]), {}).setdefault(
                (rec["method"], rec["factor"]), []).append(
                (p[f"{SPEED_TARGET:g}"], best, rec["diverged"]))
    return scores


def _pick(per_factor):
    """The pick among ``{factor: [(passes, best, diverged), ...]}`` (see the module doc)."""
    cands = []
    for f, sc in per_factor.items():
        if any(d for _, _, d in sc):
            continue
        cands.append((max(p for p, _, _ in sc), statistics.median(b for _, b, _ in sc), f))
    if not cands:
        return min(per_factor)
    return min(cands)[2]


def _tune(shapes, rhos, quick, seeds, budget, n_tune, jobs, scheduler, tick):
    """Tuned factor per (shape, rho, method), and the tuning table."""
    tseeds = tuning_seeds(n_tune)
    stepped = [m for m in METHODS if get_method(m).has_step]
    coarse = [(m, f) for m in stepped for f in COARSE_GRID]
    tasks = [(sh, rho, quick, ts, coarse, budget, False) for sh in shapes for rho in rhos
             for ts in tseeds]
    cells = run_tasks(_solve_cell, tasks, jobs=jobs, scheduler=scheduler)
    tick("tuned the coarse grid")
    scores = _tune_scores(cells)
    picks = {}
    for key, sc in scores.items():
        for m in stepped:
            picks[key + (m,)] = _pick({f: v for (mm, f), v in sc.items() if mm == m})
    tasks = [(sh, rho, quick, ts, [(m, f) for m in stepped for f in
                                   fine_grid(picks[(sh, rho, m)])], budget, False)
             for sh in shapes for rho in rhos for ts in tseeds]
    cells += run_tasks(_solve_cell, tasks, jobs=jobs, scheduler=scheduler)
    tick("tuned the fine grid")
    scores = _tune_scores(cells)
    factors, table = {}, []
    for (sh, rho), sc in scores.items():
        for m in stepped:
            per = {f: v for (mm, f), v in sc.items() if mm == m}
            factors[(sh, rho, m)] = _pick(per)
            for f, v in sorted(per.items()):
                table.append({"shape": sh, "rho": rho, "method": m, "factor": f,
                              "passes_worst": max(p for p, _, _ in v),
                              "best_fraction_median": statistics.median(b for _, b, _ in v),
                              "diverged": any(d for _, _, d in v),
                              "picked": f == factors[(sh, rho, m)]})
    return factors, table, tseeds


# -- the map -----------------------------------------------------------------------------------


def _finite(v):
    return v if math.isfinite(v) else None


def map_rows(cells, factors):
    """Rows of the map from the measurement cells: one per (rho, shape, method), from the
    runs with the step multiplier ``factors[(shape, rho, method)]`` (default 1: the paper's
    step; a cell may hold runs with other multipliers, left out).

    Each row: ``rho``, ``shape``, ``method``, ``label``, ``factor``; ``passes`` and
    ``seconds`` (medians over the seeds; ``None`` = not reached by most seeds) and
    ``reached`` (every seed) at :data:`SPEED_TARGET`; ``levels``: the same per level;
    ``per_seed``: the passes of each seed per level.
    """
    runs = {}
    for c in cells:
        for rec in c["runs"]:
            if rec["factor"] != factors.get((c["shape"], c["rho"], rec["method"]), 1.0):
                continue
            p, t, best = _score(rec, c["fstar"], c["f0"])
            runs.setdefault((c["rho"], c["shape"], rec["method"]), []).append(
                (c["seed"], p, t, best))
    rows = []
    for (rho, shape, m), per in runs.items():
        per.sort(key=lambda v: v[0])
        levels = {}
        for lv in LEVELS:
            k = f"{lv:g}"
            ps = [v[1][k] for v in per]
            ts = [v[2][k] for v in per]
            levels[k] = {"passes": _finite(float(np.median(ps))),
                         "seconds": _finite(float(np.median(ts))),
                         "reached": all(math.isfinite(x) for x in ps),
                         "reached_seeds": sum(math.isfinite(x) for x in ps),
                         "per_seed": [_finite(x) for x in ps]}
        tgt = levels[f"{SPEED_TARGET:g}"]
        rows.append({"rho": rho, "shape": shape, "method": m, "label": method_label(m),
                     "factor": factors.get((shape, rho, m), 1.0),
                     "passes": tgt["passes"], "seconds": tgt["seconds"],
                     "reached": tgt["reached"], "levels": levels,
                     "seeds": [v[0] for v in per],
                     "best_fraction_median": float(np.median([v[3] for v in per]))})
    order = {m: k for k, m in enumerate(METHODS)}
    rows.sort(key=lambda r: (list(SHAPES).index(r["shape"]), r["rho"], order[r["method"]]))
    return rows


def winners(rows, level=SPEED_TARGET):
    """The winner per (rho, shape): fewest median passes to ``level`` among the methods that
    reached it on every seed (``method`` None when none did); with the runner-up, and ``tie``
    when the runner-up needs at most the claims' passes tie tolerance more (5 %)."""
    key = f"{level:g}"
    cells = {}
    for r in rows:
        cells.setdefault((r["rho"], r["shape"]), []).append(r)
    out = []
    for (rho, shape), rs in cells.items():
        ok = sorted((r for r in rs if r["levels"][key]["reached"]),
                    key=lambda r: r["levels"][key]["passes"])
        win = ok[0] if ok else None
        nxt = ok[1] if len(ok) > 1 else None
        out.append({"rho": rho, "shape": shape, "method": win and win["method"],
                    "label": win and win["label"],
                    "passes": win and win["levels"][key]["passes"],
                    "variance_reduced": bool(win) and bool(get_method(win["method"]).epoch),
                    "runner_up": nxt and nxt["method"],
                    "runner_up_passes": nxt and nxt["levels"][key]["passes"],
                    "tie": bool(nxt) and nxt["levels"][key]["passes"]
                    <= (1 + TIE_TOLERANCE["passes"]) * win["levels"][key]["passes"]})
    out.sort(key=lambda w: (list(SHAPES).index(w["shape"]), w["rho"]))
    return out


def _fmt_rhos(rhos):
    return ", ".join(f"{r:g}" for r in rhos)


def claims_paragraph(rows, won, constants, by_level=None):
    """One paragraph per shape saying where each method wins, with the numbers (and, given
    ``by_level``, the winners at the other levels)."""
    key = f"{SPEED_TARGET:g}"
    by = {(r["rho"], r["shape"], r["method"]): r for r in rows}
    paras = []
    for shape in dict.fromkeys(w["shape"] for w in won):
        ws = [w for w in won if w["shape"] == shape]
        c0 = next(c for c in constants if c["shape"] == shape)
        parts = []
        groups = {}
        for w in ws:
            groups.setdefault(w["label"] or "no method", []).append(w)
        for label, g in groups.items():
            nums = "; ".join(
                f"rho = {w['rho']:g}: {w['passes']:.0f} passes"
                + (f" vs {method_label(w['runner_up'])} {w['runner_up_passes']:.0f}"
                   + (", a tie within 5 %" if w.get("tie") else "")
                   if w["runner_up"] else "") for w in g if w["method"])
            if label == "no method":
                parts.append(f"no method reaches it on every seed at rho = "
                             f"{_fmt_rhos([w['rho'] for w in g])}")
            else:
                parts.append(f"{label} ({_kind(g[0])}) wins at rho = "
                             f"{_fmt_rhos([w['rho'] for w in g])} ({nums})")
        fg = [by.get((w["rho"], shape, "fght")) for w in ws]
        fg_txt = ", ".join(f"{r['rho']:g}: " + (f"{r['passes']:.0f}" if r["passes"] is not None
                                                else "not reached")
                           for r in fg if r)
        cs = sorted((c for c in constants if c["shape"] == shape), key=lambda c: c["rho"])
        ratio_txt = ", ".join(f"{c['ratio']:.2g} at rho = {c['rho']:g}" for c in cs)
        others = ""
        for lv, wl in (by_level or {}).items():
            if lv == key:
                continue
            others += (f" The fewest passes to {lv} instead: " + ", ".join(
                f"{w['label'] or 'none'} at rho = {w['rho']:g}" for w in wl
                if w["shape"] == shape) + ".")
        paras.append(
            f"At the {shape} shape (n = {c0['n']}, d = {c0['d']}, s = {c0['s']}), to "
            f"(F - F*)/(F0 - F*) <= {key} with tuned steps (median over the seeds): "
            + "; ".join(parts) + f". FG-HT's passes by rho: {fg_txt}. "
            f"From rho = {cs[0]['rho']:g} to {cs[-1]['rho']:g} the full-gradient smoothness L "
            f"grows from {cs[0]['L']:.3g} to {cs[-1]['L']:.3g} (x{cs[-1]['L'] / cs[0]['L']:.3g}), "
            f"while the per-sample ||w_i||^2 stays at {cs[0]['Lmean']:.0f} to "
            f"{cs[-1]['Lmean']:.0f} on average (d = {c0['d']}) and its maximum grows from "
            f"{cs[0]['Lmax']:.0f} to {cs[-1]['Lmax']:.0f} (x{cs[-1]['Lmax'] / cs[0]['Lmax']:.3g}); "
            f"the ratio max ||w_i||^2 / (n L) is {ratio_txt}." + others)
    return "\n\n".join(paras)


def summarize(rows, constants, paper_rows=None):
    """What the map's rows say: ``winner`` (at :data:`SPEED_TARGET`), ``winner_level``,
    ``winner_by_level`` and the ``claims`` paragraph; given the rows with the paper's steps,
    also ``winner_paper_steps`` and a paragraph on them (also to refresh a saved record's
    words from its numbers: ``record.update(summarize(record["map"], record["constants"],
    record.get("map_paper_steps")))``)."""
    by_level = {f"{lv:g}": winners(rows, lv) for lv in LEVELS}
    won = by_level[f"{SPEED_TARGET:g}"]
    out = {"winner": won, "winner_level": SPEED_TARGET, "winner_by_level": by_level,
           "claims": claims_paragraph(rows, won, constants, by_level)}
    if paper_rows:
        paper = winners(paper_rows)
        out["winner_paper_steps"] = paper
        out["claims"] += "\n\n" + paper_steps_paragraph(paper, won)
    return out


def _kind(w):
    """How a winner moves: with or without variance reduction."""
    return "variance-reduced" if w["variance_reduced"] else "without variance reduction"


def _won(w):
    """One winner of :func:`winners` in words, with its passes and its runner-up's."""
    if not w["method"]:
        return "no method reaches it on every seed"
    vs = (f" vs {method_label(w['runner_up'])} {w['runner_up_passes']:.0f}"
          if w["runner_up"] else "")
    return f"{w['label']} ({_kind(w)}, {w['passes']:.0f} passes{vs})"


def paper_steps_paragraph(paper, tuned):
    """Where the winners with the paper's own steps differ from the winners with tuned steps,
    with the numbers."""
    key = f"{SPEED_TARGET:g}"
    tuned_at = {(w["rho"], w["shape"]): w for w in tuned}
    paras = []
    for shape in dict.fromkeys(w["shape"] for w in paper):
        ws = [w for w in paper if w["shape"] == shape]
        each = "; ".join(f"rho = {w['rho']:g}: {_won(w)}" for w in ws)
        moved = [w for w in ws if w["method"] != tuned_at.get((w["rho"], shape), {}).get(
            "method")]
        why = ("the same winners as with tuned steps" if not moved else
               "tuning changes the winner at rho = " + _fmt_rhos([w["rho"] for w in moved])
               + " (tuned: " + ", ".join(
                   f"{tuned_at[(w['rho'], shape)]['label'] or 'none'}" for w in moved) + ")")
        paras.append(f"With the paper's own steps (multiplier 1, no tuning) at the {shape} "
                     f"shape, to {key}: {each}; {why}.")
    return "\n\n".join(paras)


def _constants(cells):
    """Smoothness constants per (shape, rho): the mean over the seeds' problems."""
    acc = {}
    for c in cells:
        if c["constants"]:
            acc.setdefault((c["shape"], c["rho"]), []).append((c, c["constants"]))
    out = []
    for (shape, rho), vals in acc.items():
        c0 = vals[0][0]
        row = {"shape": shape, "rho": rho, "n": c0["n"], "d": c0["d"], "s": c0["s"],
               "s_star": c0["s_star"]}
        for k in ("L", "Lmax", "Lmean", "ratio"):
            row[k] = float(np.mean([v[k] for _, v in vals]))
        out.append(row)
    out.sort(key=lambda r: (list(SHAPES).index(r["shape"]), r["rho"]))
    return out


def _curves(cells, seed, factors):
    """Gap curves ``(F - F*)/(F0 - F*)`` by pass of one seed, per (shape, rho, method), with
    the tuned steps ``factors``."""
    out = []
    for c in cells:
        if c["seed"] != seed:
            continue
        for rec in c["runs"]:
            if rec["factor"] != factors.get((c["shape"], c["rho"], rec["method"]), 1.0):
                continue
            x, y = _thin(rec["passes"], _fraction(rec, c["fstar"], c["f0"]))
            out.append({"shape": c["shape"], "rho": c["rho"], "method": rec["method"],
                        "seed": seed, "passes": x, "fraction": y, "status": rec["status"]})
    return out


def _cell_runs(factors, shape, rho):
    """The runs of one cell: every method with its tuned multiplier and with the paper's
    (1), once when they are the same."""
    runs = [(m, factors.get((shape, rho, m), 1.0)) for m in METHODS]
    return runs + [(m, 1.0) for m, f in runs if f != 1.0]


def run_condition_map(quick=False, out=None, seeds=None, jobs=1, scheduler=None,
                      budget=None, shapes=None, rhos=None, n_tune=None, png=True,
                      progress=True):
    """Run the condition map and write ``run.json``, ``claims.md`` and ``map.html``.

    Parameters
    ----------
    quick : bool
        Classroom shapes (:data:`SHAPES`), one tuning seed.
    out : path-like, optional
        Output folder (default ``rgrasp-reproduce/condition-map[-quick]``), replaced once the
        run is complete (:class:`~._output.OutputFolder`).
    seeds : sequence of int, optional
        Measurement seeds (default 0, 1, 2); tuning uses the tuning seeds 1000, 1001, ...
        (:func:`~._tuning.tuning_seeds`).
    jobs : int
        Worker processes (:func:`~._parallel.run_tasks`; -1: one per CPU).
    scheduler : str, optional
        A dask scheduler's address instead of local processes.
    budget : float, optional
        Passes per run (default :data:`BUDGET`).
    shapes, rhos : sequence, optional
        Subsets of :data:`SHAPES` and :data:`RHOS` (default all).
    n_tune : int, optional
        Tuning seeds (default 1 with ``quick``, 2 otherwise).
    png : bool
        Also write ``map.png`` (needs Chromium).
    progress : bool
        One line per phase on stderr.

    Returns
    -------
    dict
        What ``run.json`` holds.
    """
    seeds, jobs, budget = check_map_args(seeds, jobs, budget)
    check_scheduler(scheduler)
    shapes = tuple(SHAPES) if shapes is None else tuple(shapes)
    rhos = RHOS if rhos is None else tuple(float(r) for r in rhos)
    bad = [s for s in shapes if s not in SHAPES]
    if bad:
        raise ValueError(f"unknown shape(s) {bad}; choose among {list(SHAPES)}")
    if any(not (0.0 <= r < 1.0) for r in rhos):
        raise ValueError(f"rho must be in [0, 1), got {rhos}")
    n_tune = (1 if quick else 2) if n_tune is None else int(n_tune)
    out = check_out(default_out(NAME, quick) if out is None else out)
    t0 = time.perf_counter()

    def tick(msg):
        note(progress, f"{NAME}: {msg} ({time.perf_counter() - t0:.0f} s)")

    with OutputFolder(out) as folder:
        factors, tune_table, tseeds = _tune(shapes, rhos, quick, seeds, budget, n_tune, jobs,
                                            scheduler, tick)
        tasks = [(sh, rho, quick, sd, _cell_runs(factors, sh, rho), budget, True)
                 for sh in shapes for rho in rhos for sd in seeds]
        cells = run_tasks(_solve_cell, tasks, jobs=jobs, scheduler=scheduler)
        tick("ran the map")
        rows = map_rows(cells, factors)
        consts = _constants(cells)
        data = {
            "experiment": NAME, "quick": quick, "seeds": list(seeds), "tuning_seeds": tseeds,
            "jobs": jobs, "budget_passes": budget, "rhos": list(rhos),
            "shapes": {sh: dict(zip(("n", "d", "s_star"),
                                    SHAPES[sh]["quick" if quick else "full"], strict=True))
                       for sh in shapes},
            "methods": list(METHODS), "vr_free": list(VR_FREE),
            "levels": list(LEVELS), "speed_target": SPEED_TARGET,
            "target": "(F - F*) / (F0 - F*), F0 = F(0); passes and seconds to the first "
                      "crossing (interpolated), median over the seeds",
            "fstar": "rgrasp_viz.reference.reference(problem, runs, run=False) per problem: "
                     "the exact least-squares fits on the true support and on every run's "
                     "best and final support, never above any run",
            "fstars": [{"shape": c["shape"], "rho": c["rho"], "seed": c["seed"],
                        "fstar": c["fstar"], "f0": c["f0"], "source": c["fstar_source"]}
                       for c in cells],
            "step_tuning": {"coarse_grid": list(COARSE_GRID),
                            "fine": "the sqrt(2) neighbours of the coarse pick",
                            "rule": "fewest passes to the speed target on the worse tuning "
                                    "seed; else the lowest median final fraction; a factor "
                                    "diverging on a tuning seed is out",
                            "table": tune_table},
            "map": rows, "constants": consts, "curves": _curves(cells, seeds[0], factors),
            "map_paper_steps": map_rows(cells, {}),
        }
        data.update(summarize(rows, consts, data["map_paper_steps"]))
        data["wall_seconds"] = time.perf_counter() - t0
        stage = folder.stage
        write_text(stage / "run.json", json.dumps(_json_ready(data), indent=1))
        write_text(stage / "claims.md", _markdown(data))
        _write_figure(data, stage, png, progress)
        folder.commit()
    tick(f"wrote {out}")
    return data


def _json_ready(v):
    """Non-finite floats as None, NumPy scalars as Python ones (standard JSON)."""
    if isinstance(v, dict):
        return {str(k): _json_ready(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_json_ready(x) for x in v]
    if isinstance(v, (float, np.floating)):
        v = float(v)
        return v if math.isfinite(v) else None
    if isinstance(v, (np.integer, np.bool_)):
        return v.item()
    return v


def _markdown(data):
    """``claims.md``: the paragraph, then the map as a table."""
    key = f"{SPEED_TARGET:g}"
    lines = [f"# Condition map{' (quick)' if data['quick'] else ''}: where variance reduction "
             "pays", "", "Ours (no figure of the paper): equicorrelated designs, every method "
             "with tuned steps, seeds " + ", ".join(map(str, data["seeds"])) + ".", "",
             data["claims"], "",
             f"| shape | rho | method | factor | passes to {key} | seconds | reached | "
             "passes to 1e-3 | passes to 1e-5 |", "|---|---|---|---|---|---|---|---|---|"]

    def num(v, fmt=".0f"):
        return "never" if v is None else format(v, fmt)

    for r in data["map"]:
        lv = r["levels"]
        lines.append(f"| {r['shape']} | {r['rho']:g} | {r['label']} | {r['factor']:.3g} | "
                     f"{num(r['passes'])} | {num(r['seconds'], '.2f')} | "
                     f"{'yes' if r['reached'] else 'no'} | {num(lv['0.001']['passes'])} | "
                     f"{num(lv['1e-05']['passes'])} |")
    if data.get("map_paper_steps"):
        lines += ["", f"With the paper's own steps (multiplier 1): passes to {key}", "",
                  "| shape | rho | method | passes | reached |", "|---|---|---|---|---|"]
        lines += [f"| {r['shape']} | {r['rho']:g} | {r['label']} | {num(r['passes'])} | "
                  f"{'yes' if r['reached'] else 'no'} |" for r in data["map_paper_steps"]]
    lines += ["", "| shape | rho | L | max ||w_i||^2 | max ||w_i||^2 / (n L) |",
              "|---|---|---|---|---|"]
    for c in data["constants"]:
        lines.append(f"| {c['shape']} | {c['rho']:g} | {c['L']:.3g} | {c['Lmax']:.4g} | "
                     f"{c['ratio']:.3g} |")
    lines += ["", f"Wall time: {data['wall_seconds']:.0f} s with {data['jobs']} job(s).", ""]
    return "\n".join(lines)


def _write_figure(data, stage, png, progress):
    from ..viz.figures import condition_map  # lazy: plotly stays out of import rgrasp_viz

    _, notes = _export_all({"map": condition_map(_json_ready(data))}, stage, png)
    for n in notes:
        note(progress, "note: " + n)
