"""Step sizes of the experiments: the tuning run, and recorded multipliers of ``default_eta``.

``eta = factor * rv.default_eta(problem, method, s, inner)``.  By default every ``reproduce``
run tunes the factor now (:func:`tune`): per method (and, for SVRGSP(+), per reading of
Algorithm 2), every factor of the sqrt(2) grid :data:`TUNE_GRID` (0.25 ... 8) runs on
:data:`TUNE_SEEDS` problems of the same kind drawn with the *tuning seeds* ``1000, 1001``
(data and index sequence; the evaluation seeds must be other seeds); the pick reaches the
*speed* target (speed gap ``(F - F*) / (F(x0) - F*) <= 1e-4``) on every tuning problem in the
fewest effective passes on the worst of them; when no factor does, the lowest median speed
gap; a factor that diverges on any is out.  GraSP solves its sub-problem exactly and has no
step size.  The passes at every factor are written to ``run.json`` (``step_sensitivity``) and
drawn by :func:`rgrasp_viz.viz.figures.step_sensitivity`.

:data:`TUNED_FACTORS` records older picks (grid :data:`RECORDED_GRID`, the objective target
``(F - F*)/F* <= 0.1``), used only with ``tune_steps=False`` (``--no-tune``).
"""

from __future__ import annotations

import inspect
import math

import numpy as np

from ..analysis import first_crossing
from ..solvers import solve
from ..solvers._registry import get_method, normalize_reading, run_label
from ..solvers._status import Status
from ._claims import SPEED_LEVEL, speed_gap
from ._experiments import (
    METHODS,
    PASS_BUDGET,
    build_train_heldout,
    get_experiment,
    run_method,
    warm_up,
)
from ._parallel import run_tasks

__all__ = ["RECORDED_GRID", "TUNED_FACTORS", "TUNE_GRID", "TUNE_SEEDS", "TUNE_SEED_OFFSET",
           "factor_key", "n_tuning_tasks", "tune", "tune_task", "tuned_factor",
           "tuning_seeds"]

TUNE_GRID = tuple(2.0 ** (k / 2) for k in range(-4, 7))
"""Multipliers of :func:`rgrasp_viz.default_eta` tried when tuning: a sqrt(2) grid from 0.25
to 8 (11 factors), fine enough that a pick at the edge of stability is not a coarse grid's
artefact."""

RECORDED_GRID = (0.5, 1.0, 2.0, 4.0, 8.0)
"""The coarser grid :data:`TUNED_FACTORS` were picked on (objective target ``(F - F*)/F* <=
0.1``); used only with ``tune_steps=False``."""

TUNE_SEED_OFFSET = 1000
"""Tuning uses seeds ``TUNE_SEED_OFFSET + k`` for the data and the index sequence (the
evaluation seeds must avoid them)."""

TUNE_SEEDS = 2
"""Number of separately seeded tuning problems (the pick must work on all of them)."""

# Factors picked by ``tune(..., inners=("on_T", "paper"))`` with the grid TUNE_GRID on seed
# 0 + TUNE_SEED_OFFSET.  Keys: (experiment, quick); per method, and "<method>|<reading>" for
# the methods with two readings of Algorithm 2 (SVRGSP, SVRGSP+); "tuned_on" says which
# problem the grid ran on.  A value at the edge of the grid (0.5 for real-sim) means a
# smaller factor might do better.  The real data sets were not available when the table was
# made: full-scale runs on them use the factors tuned on the quick synthetic stand-in.
_STANDIN = "the --quick synthetic stand-in (the real file was not available), seeds 1000-1001"
TUNED_FACTORS = {
    ("fig1-setting1", True): {"fght": 2.0, "sght": 2.0, "svrght": 1.0,
                              "svrgsp|on_T": 1.0, "svrgsp+|on_T": 1.0,
                              "svrgsp|paper": 1.0, "svrgsp+|paper": 2.0,
                              "tuned_on": "quick setting 1 (n=500, d=1000, s*=50), seeds "
                                          "1000-1001"},
    ("fig1-setting1", False): {"fght": 2.0, "sght": 4.0, "svrght": 1.0,
                               "svrgsp|on_T": 2.0, "svrgsp+|on_T": 2.0,
                               "svrgsp|paper": 1.0, "svrgsp+|paper": 2.0,
                               "tuned_on": "setting 1 (n=2500, d=5000, s*=250), seeds 1000-1001"},
    ("fig1-setting2", True): {"fght": 2.0, "sght": 4.0, "svrght": 1.0,
                              "svrgsp|on_T": 2.0, "svrgsp+|on_T": 2.0,
                              "svrgsp|paper": 1.0, "svrgsp+|paper": 2.0,
                              "tuned_on": "quick setting 2 (n=500, d=1000, s*=50, correlation "
                                          "0.1), seeds 1000-1001"},
    ("fig1-setting2", False): {"fght": 2.0, "sght": 2.0, "svrght": 1.0,
                               "svrgsp|on_T": 4.0, "svrgsp+|on_T": 4.0,
                               "svrgsp|paper": 1.0, "svrgsp+|paper": 1.0,
                               "tuned_on": "setting 2 (n=5000, d=10000, s*=500), seeds 1000-1001"},
    ("fig2-rcv1", True): {"fght": 2.0, "sght": 4.0, "svrght": 1.0,
                          "svrgsp|on_T": 2.0, "svrgsp+|on_T": 2.0,
                          "svrgsp|paper": 2.0, "svrgsp+|paper": 2.0,
                          "tuned_on": _STANDIN},
    ("fig2-realsim", True): {"fght": 2.0, "sght": 4.0, "svrght": 0.5,
                             "svrgsp|on_T": 0.5, "svrgsp+|on_T": 0.5,
                             "svrgsp|paper": 0.5, "svrgsp+|paper": 0.5,
                             "tuned_on": _STANDIN},
    ("fig3-rcv1", True): {"fght": 1.0, "sght": 4.0, "svrght": 0.5,
                          "svrgsp|on_T": 2.0, "svrgsp+|on_T": 2.0,
                          "svrgsp|paper": 1.0, "svrgsp+|paper": 2.0,
                          "tuned_on": _STANDIN},
}
"""Recorded step-size multipliers by ``(experiment, quick)`` and :func:`factor_key`."""


def _solve_default_reading():
    """The reading :func:`rgrasp_viz.solve` uses when ``inner`` is not given."""
    return normalize_reading(inspect.signature(solve).parameters["inner"].default)


def factor_key(method, inner):
    """Key of :data:`TUNED_FACTORS`: ``method``, or ``"method|reading"`` for a method with
    two readings of Algorithm 2 (``"svrgsp|paper"``, ``"svrgsp+|on_T"``)."""
    spec = get_method(method)
    return f"{spec.name}|{normalize_reading(inner)}" if spec.readings else spec.name


def tuned_factor(experiment, quick, method, inner=None):
    """The recorded step-size multiplier of ``method`` (1.0 when none was recorded).

    Parameters
    ----------
    experiment : str
    quick : bool
    method : str
    inner : {"paper", "on_T"}, optional
        Reading of Algorithm 2; default: the one :func:`rgrasp_viz.solve` uses by default,
        so that ``solve(..., eta=factor * default_eta(...))`` without ``inner`` matches.

    Returns
    -------
    factor : float
    source : str
        Where the factor comes from.
    """
    key = factor_key(method, _solve_default_reading() if inner is None else inner)
    for q in (quick, True):  # full-scale entries fall back to the quick (stand-in) ones
        table = TUNED_FACTORS.get((experiment, q))
        if table and key in table:
            where = table.get("tuned_on", "")
            if q != quick:
                where += " (no full-scale tuning recorded; quick-scale factor used)"
            return float(table[key]), where
    return 1.0, "untuned (no recorded factor): the default_eta rule"


def _grid_text(grid):
    return ", ".join(f"{f:.3g}" for f in grid)


def tuning_seeds(n_seeds=TUNE_SEEDS):
    """The seeds of the tuning problems: ``TUNE_SEED_OFFSET + k``, ``k = 0 .. n_seeds - 1``
    (disjoint from the evaluation seeds, which :func:`~.command.check_run_args` checks)."""
    return list(range(TUNE_SEED_OFFSET, TUNE_SEED_OFFSET + n_seeds))


def tune(experiment, quick=False, data_dir=None, inners=("paper",), grid=TUNE_GRID,
         budget=None, methods=METHODS, n_seeds=TUNE_SEEDS, download=True, progress=True,
         jobs=1, scheduler=None, on_done=None):
    """Pick each method's step-size multiplier on separately seeded problems.

    Parameters
    ----------
    experiment : str or Experiment
    quick : bool
    data_dir : path-like, optional
    inners : sequence of {"paper", "on_T"}
        Readings of Algorithm 2 to tune for SVRGSP(+) (keys ``"svrgsp|paper"``, ...); the
        other methods run once per factor.
    grid : sequence of float
        Multipliers of :func:`rgrasp_viz.default_eta` (default: the sqrt(2) grid
        :data:`TUNE_GRID`, 0.25 ... 8).
    budget : float, optional
        Pass budget (default :data:`PASS_BUDGET`).
    methods : sequence of str
    n_seeds : int
        Tuning problems, seeds :func:`tuning_seeds` (data and index sequence).
    download : bool
    progress : bool
        Data notes on stderr.
    jobs, scheduler :
        Where the runs go (:func:`~._parallel.run_tasks`): one task per tuning problem and
        method (:func:`n_tuning_tasks`), each running the whole grid; the picks do not
        depend on it.
    on_done : callable, optional
        ``on_done(text)`` as each task comes back (a progress bar).

    Returns
    -------
    factors : dict of str to float
        The pick per :func:`factor_key` (GraSP: 1, it has no step size).
    sensitivity : dict
        ``run.json``'s ``step_sensitivity``: ``target``, ``grid``, ``tuning_seeds``,
        ``budget_passes`` and per key of :func:`factor_key` (``methods``): ``label``,
        ``factors``, ``passes`` (to the speed target, the worst over the tuning seeds;
        ``None`` = never on some seed or diverged), ``per_seed`` (the same per seed),
        ``diverged`` (per factor, on any seed), ``best_speed_gap`` (median over seeds) and
        ``chosen``.

    Notes
    -----
    On each tuning problem ``F*`` is the best objective over all its tuning runs (they are
    compared with each other only) and the target is the speed claims' level
    :data:`~.claims.SPEED_LEVEL` of ``(F - F*) / (F(x0) - F*)``.  The pick reaches it on
    every tuning problem, in the fewest passes on the worst of them; among factors that do
    not, the lowest median best speed gap wins; a factor that diverges on any problem never
    wins.
    """
    exp = get_experiment(experiment)
    inners = tuple(normalize_reading(i) for i in inners)
    budget = PASS_BUDGET[exp.name] if budget is None else float(budget)
    grid = tuple(float(f) for f in grid)
    seeds = tuning_seeds(n_seeds)
    tasks = []
    for tseed in seeds:
        for m in methods:
            spec = get_method(m)
            for inner in (inners if spec.readings else inners[:1]):
                tasks.append({"experiment": exp.name, "quick": quick, "seed": tseed,
                              "data_dir": data_dir, "download": download, "method": m,
                              "inner": inner, "budget": budget,
                              "grid": grid if spec.has_step else (1.0,)})
    def done(i, _):
        if on_done is not None:
            t = tasks[i]
            on_done(f"tuned {factor_key(t['method'], t['inner'])} on seed {t['seed']}")

    results = run_tasks(tune_task, tasks, jobs=jobs, scheduler=scheduler, on_done=done)
    per_seed = {tseed: {} for tseed in seeds}
    for task, res in zip(tasks, results, strict=True):
        key = factor_key(task["method"], task["inner"])
        for f, curve in zip(task["grid"], res, strict=True):
            per_seed[task["seed"]][(key, f)] = curve
    scores = {tseed: _scores(runs) for tseed, runs in per_seed.items()}
    return _pick(scores, seeds, grid, budget, methods, inners)


def n_tuning_tasks(methods=METHODS, inners=("paper",), n_seeds=TUNE_SEEDS):
    """How many tasks :func:`tune` hands to :func:`~._parallel.run_tasks`."""
    per_seed = sum(len(inners) if get_method(m).readings else 1 for m in methods)
    return n_seeds * per_seed


def tune_task(task):
    """One tuning task (module level, so that it can go to another process): the whole grid
    of one method on one tuning problem.

    Returns
    -------
    list of dict
        Per factor: ``passes`` and ``objective`` (arrays over outer iterations) and
        ``diverged``.
    """
    exp = get_experiment(task["experiment"])
    # real data: the training rows of the tuning seed's split (as the evaluation runs)
    prob, _, info = build_train_heldout(exp, task["quick"], task["seed"], task["data_dir"],
                                        task["download"], progress=False)
    warm_up(prob, task["inner"], (task["method"],))
    out = []
    for f in task["grid"]:
        res = run_method(prob, task["method"], info.s, f, task["seed"], task["budget"],
                         task["inner"])
        tr = res.trace
        out.append({"passes": np.asarray(tr.passes, dtype=np.float64),
                    "objective": np.asarray(tr.objective, dtype=np.float64),
                    "diverged": res.status == Status.DIVERGED})
    return out


def _scores(runs):
    """``(passes to the speed target, best speed gap, diverged)`` per (key, factor) on one
    tuning problem, ``F*`` the best objective of its runs."""
    finite = [float(np.nanmin(r["objective"])) for r in runs.values()
              if not r["diverged"] and np.isfinite(r["objective"]).any()]
    fs = min(finite) if finite else math.nan
    f0 = max(float(r["objective"][0]) for r in runs.values())
    scores = {}
    for kf, r in runs.items():
        gap = speed_gap(r["objective"], fs, f0)
        p = first_crossing(r["passes"], gap, SPEED_LEVEL) if not r["diverged"] else math.inf
        best = float(np.nanmin(gap)) if np.isfinite(gap).any() else math.nan
        scores[kf] = (p, best, bool(r["diverged"]))
    return scores


def _pick(scores, seeds, grid, budget, methods, inners):
    """The pick per key and ``step_sensitivity`` (see :func:`tune`)."""
    first = scores[seeds[0]]
    keys = list(dict.fromkeys(k for k, _ in first))
    factors, table = {}, {}
    for key in keys:
        fs = [f for k, f in first if k == key]
        cands, worst_l, per_seed, div_l, best_l = [], [], {str(s): [] for s in seeds}, [], []
        for f in fs:
            ps = [scores[s][(key, f)][0] for s in seeds]
            worst = max(ps)
            best = float(np.median([scores[s][(key, f)][1] for s in seeds]))
            diverged = any(scores[s][(key, f)][2] for s in seeds)
            for s, p in zip(seeds, ps, strict=True):
                per_seed[str(s)].append(_fnum(p))
            worst_l.append(None if diverged else _fnum(worst))
            div_l.append(diverged)
            best_l.append(_fnum(best))
            if not diverged:
                cands.append((worst, best if math.isfinite(best) else math.inf, f))
        factors[key] = min(cands)[2] if cands else min(fs)
        method = key.split("|")[0]
        has_step = get_method(method).has_step
        if has_step:
            table[key] = {"label": run_label(method, key.split("|")[1] if "|" in key
                                             else None),
                          "factors": fs, "passes": worst_l, "per_seed": per_seed,
                          "diverged": div_l, "best_speed_gap": best_l,
                          "chosen": factors[key]}
    sensitivity = {
        "target": f"speed gap (F - F*) / (F(x0) - F*) <= {SPEED_LEVEL:g}, F* the best "
                  "objective of all tuning runs on the same problem",
        "selection": "fewest passes to the target on the worst tuning seed; a factor that "
                     "diverges on any seed is out; never on every factor: the lowest median "
                     "best speed gap",
        "grid": list(grid), "tuning_seeds": list(seeds), "budget_passes": budget,
        "methods": table}
    return factors, sensitivity


def _fnum(v):
    v = float(v)
    return v if math.isfinite(v) else None
