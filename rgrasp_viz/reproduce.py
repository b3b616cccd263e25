"""Re-run the experiments of Section 5 of the paper and check its claims.

``python -m rgrasp_viz reproduce EXPERIMENT [--quick] [--out DIR] [--data-dir DIR] [--seed N]``
(also ``rgrasp-viz reproduce ...``) runs all six methods on one experiment of Shang et al.,
*Efficient Relaxed Gradient Support Pursuit* (IJCAI 2019), writes interactive figures with
the paper's axes, the traces and a table saying, for each claim of the paper, whether this
run supports it.  :func:`run` does the same from Python.

Experiments
-----------
=================== =========== ============================================ ======== ======
name                paper       data                                         loss     s
=================== =========== ============================================ ======== ======
``fig1-setting1``   Figure 1(a) synthetic, n=2500, d=5000, s*=250            squares  1.2 s*
``fig1-setting2``   Figure 1(b) synthetic, n=5000, d=10000, s*=500, rho=0.1  squares  1.2 s*
``fig2-rcv1``       Figure 2(a) rcv1, 20,242 x 47,236                        logistic 200
``fig2-realsim``    Figure 2(b) real-sim, 72,309 x 20,958                    logistic 200
``fig3-rcv1``       Figure 3    rcv1                                         squares  200
=================== =========== ============================================ ======== ======

Every method starts at ``x0 = 0``; SVRGSP(+) use ``J = 2n`` inner steps and SVRGSP+ ``m = 6``
(the package defaults, as in the paper).  Each method runs until it has used the pass budget
(:data:`PASS_BUDGET`: the iteration that crosses it completes) or reaches an exact fixed
point (``tol = 1e-10``; the stagnation test is off, so curves cover the whole budget).  The
same seed draws the synthetic data and every method's index sequence.

``--quick`` (seconds, for a classroom):

* synthetic: ``n=500, d=1000, s*=50`` (the paper's n : d : s* ratios; setting 2 keeps its
  correlation 0.1), ``s = 1.2 s* = 60``;
* real data (:func:`quick_shape`): one tenth of the rows and of the columns, ``s = 20`` (the
  paper's 200 scaled alike).  When the data file is already in the data directory: random
  rows of it and, among them, the most frequent columns.  When it is not there, a
  **synthetic stand-in**, labelled as such in every title, table and file
  (:func:`standin_problem`): a random CSR matrix of that shape whose rows have as many
  nonzeros, on average, as the real rows (the paper's Table 2 density times the real number
  of columns: 75.6 for rcv1, 5.0 for real-sim; the density is therefore ten times the
  table's), positive entries in unit-norm rows (like the cosine-normalised TF-IDF rows of the
  real files) and labels ``sign(W v + noise)`` for a dense Gaussian ``v``.  Keeping both
  the real density and the real number of columns would leave ``n << d`` at classroom size,
  where GraSP's restricted solves become rank deficient and slow.  The stand-in exercises
  the sparse code paths with the real per-row cost; its numbers say nothing about rcv1 or
  real-sim.  ``--quick`` never downloads.

Without ``--quick`` the real data sets come from :func:`rgrasp_viz.datasets.fetch` (download
once into the cache directory, ``--data-dir`` or ``$RGRASP_VIZ_DATA``); when the file is
missing and cannot be downloaded its message says where to put the file.

Step sizes
----------
``eta = factor * rv.default_eta(problem, method, s, inner)``; the factor comes from the grid
:data:`TUNE_GRID` ``= (0.5, 1, 2, 4, 8)``, picked per method on two problems of the same
kind drawn with *separate* seeds (``seed + 1000`` and ``seed + 1001``, for the data and the
index sequence; :func:`tune`): the factor whose runs reach the objective target (below) on
both, in the fewest effective passes on the worse of the two; when no factor does, the lowest
median objective gap; a factor that diverges on either is out.  ``F*`` for tuning is the
best objective over all tuning runs on that problem.  GraSP solves its sub-problem exactly
and has no step size.  :data:`TUNED_FACTORS` records the picks (``python -m rgrasp_viz
reproduce EXP --tune`` re-tunes first, prints the picks and adds the tuning table to
``claims.md``; the tuning runs take about ten times as long as the experiment):

================= ======= ====== ====== ====== ====== ======= ==============
experiment        scale   FG-HT  SG-HT  SVRGHT SVRGSP SVRGSP+ tuned on
================= ======= ====== ====== ====== ====== ======= ==============
fig1-setting1     quick   2      2      1      1 (1)  1 (2)   quick data
fig1-setting1     full    2      4      1      2 (1)  2 (2)   setting 1
fig1-setting2     quick   2      4      1      2 (1)  2 (2)   quick data
fig1-setting2     full    2      2      1      4 (1)  4 (1)   setting 2
fig2-rcv1         quick   2      4      1      2 (2)  2 (2)   stand-in
fig2-realsim      quick   2      4      0.5*   0.5*   0.5*    stand-in
                                               (0.5*) (0.5*)
fig3-rcv1         quick   1      4      0.5*   2 (1)  2 (2)   stand-in
================= ======= ====== ====== ====== ====== ======= ==============

In parentheses: ``inner="full"``.  ``*``: at the edge of the grid (a smaller factor might
do better).  The real data sets were not available when the table was made: full-scale runs
on them use the factors tuned on the synthetic stand-in (``claims.md`` and ``run.json`` say
so).  Run with ``--tune`` to tune on the real file.

Claims
------
``F*`` is the best objective reached by any of the six runs (the paper plots "the objective
value minus the minimum").  A method *reaches the objective target* when
``F(x^t) - F* <= TARGET_GAP * (F(x^0) - F*)`` (``TARGET_GAP = 1e-4``), and, on synthetic
data, *the error target* when ``||x^t - x*|| / ||x*|| <= 2 *`` (the smallest estimation error
any run reached).  The passes (or solver seconds) at which it does so are interpolated
log-linearly between outer iterations; "never" when it does not within the budget.
"A is faster than B" means A reaches the target with strictly fewer passes than B, or in
at most ``1 / TIME_MARGIN`` (``1 / 1.1``) of B's seconds (timings of identical runs vary by a
few percent), or B never does while A does.  Two runs with identical iterates are never
"faster" than each other (with ``inner="restricted"`` SVRGSP+ and SVRGSP coincide).
:func:`evaluate_claims` lists the claims; a claim that does not hold is reported as such.

Outputs (in ``--out``, default ``rgrasp-reproduce/EXPERIMENT[-quick]``)
----------------------------------------------------------------------
``passes.html`` / ``time.html`` (log objective gap, and on synthetic data the estimation
error, against effective passes / solver seconds; ``.png`` twins when Chromium is found),
``traces/<method>.npz`` (:meth:`rgrasp_viz.Trace.save`), ``claims.md`` and ``run.json``
(settings, step sizes, budgets, versions, files).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .analysis import first_crossing
from .problems import Problem, make_regression
from .result import ConvergenceWarning
from .solvers import default_eta, solve
from .solvers.registry import method_label, method_names

__all__ = [
    "EXPERIMENTS",
    "METHODS",
    "PASS_BUDGET",
    "TARGET_GAP",
    "TUNED_FACTORS",
    "Experiment",
    "Report",
    "build_problem",
    "evaluate_claims",
    "format_claims",
    "reach",
    "run",
    "tune",
]

METHODS = method_names(paper_only=True)
"""The six methods of the paper (registry order)."""


class _Labels:
    """``LABELS[m]``: the registry's label of method ``m``."""

    def __getitem__(self, method):
        return method_label(method)


LABELS = _Labels()

VR_METHODS = ("svrght", "svrgsp", "svrgsp+")
"""Stochastic variance-reduced methods."""

OTHER_METHODS = ("grasp", "fght", "sght")
"""Deterministic methods and plain stochastic SG-HT."""

OURS = ("svrgsp", "svrgsp+")


@dataclasses.dataclass(frozen=True)
class Experiment:
    """One experiment of the paper's Section 5.

    Parameters
    ----------
    name : str
        Command-line name.
    figure : str
        Where it is in the paper.
    kind : {"synthetic", "real"}
    loss : {"squares", "logistic"}
    setting : int, optional
        Synthetic setting (1 or 2) of :func:`rgrasp_viz.make_regression`.
    dataset : str, optional
        Data set name for :func:`rgrasp_viz.datasets.fetch`.
    """

    name: str
    figure: str
    kind: str
    loss: str
    setting: int | None = None
    dataset: str | None = None


EXPERIMENTS = {
    "fig1-setting1": Experiment("fig1-setting1", "Figure 1(a)", "synthetic", "squares",
                                setting=1),
    "fig1-setting2": Experiment("fig1-setting2", "Figure 1(b)", "synthetic", "squares",
                                setting=2),
    "fig2-rcv1": Experiment("fig2-rcv1", "Figure 2(a)", "real", "logistic", dataset="rcv1"),
    "fig2-realsim": Experiment("fig2-realsim", "Figure 2(b)", "real", "logistic",
                               dataset="real-sim"),
    "fig3-rcv1": Experiment("fig3-rcv1", "Figure 3", "real", "squares", dataset="rcv1"),
}
"""The experiments, by command-line name."""

PASS_BUDGET = {"synthetic": 60.0, "real": 40.0}
"""Effective passes each method may use (the iteration that crosses the budget completes)."""

QUICK_SYNTHETIC = {"n": 500, "d": 1000, "s_star": 50}
"""``--quick`` size of the synthetic settings (the paper's n : d : s* = 10 : 20 : 1)."""

QUICK_SCALE = 10
"""``--quick`` on real data: one tenth of the rows and of the columns, ``s = 200 / 10``."""

S_REAL = 200
"""Sparsity level on real data (the paper's s = 200)."""

PAPER_DENSITY = {"rcv1": 0.0016, "real-sim": 0.00024}
"""Fraction of nonzeros of the real data sets, Table 2 of the paper (for the stand-in)."""


def quick_shape(n, d):
    """``(rows, columns, s)`` of the ``--quick`` version of an ``n x d`` real data set.

    One tenth of each dimension (at least 200 rows and 100 columns, at most all of them),
    and ``s = 20`` (the paper's 200 scaled alike; at most a tenth of the columns).
    """
    rows = min(n, max(200, round(n / QUICK_SCALE)))
    cols = min(d, max(100, round(d / QUICK_SCALE)))
    return rows, cols, max(1, min(S_REAL // QUICK_SCALE, cols // 10))

TUNE_GRID = (0.5, 1.0, 2.0, 4.0, 8.0)
"""Multipliers of :func:`rgrasp_viz.default_eta` tried when tuning."""

TUNE_SEED_OFFSET = 1000
"""Tuning uses ``seed + TUNE_SEED_OFFSET + k`` for the data and the index sequence."""

TUNE_SEEDS = 2
"""Number of separately seeded tuning problems (the pick must work on all of them)."""

TARGET_GAP = 1e-4
"""Objective target: ``F - F* <= TARGET_GAP * (F(x0) - F*)``."""

TARGET_ERR_FACTOR = 2.0
"""Error target: ``rel_error <= TARGET_ERR_FACTOR *`` the smallest error any run reached."""

TIME_MARGIN = 1.1
"""A method is faster in *time* only when it needs at most ``1 / TIME_MARGIN`` of the other's
seconds (solver timings of identical runs vary by a few percent); in passes, strictly fewer."""

RUN_TOL = 1e-10
"""``tol`` passed to :func:`rgrasp_viz.solve` (stops only at an exact fixed point)."""

# Factors picked by ``tune(..., inners=("restricted", "full"))`` with the grid TUNE_GRID on
# seed 0 + TUNE_SEED_OFFSET.  Keys: (experiment, quick); per method, and "<method>|full" for
# SVRGSP(+) with inner="full"; "tuned_on" says which problem the grid ran on.
_STANDIN = "the --quick synthetic stand-in (the real file was not available), seeds 1000-1001"
TUNED_FACTORS = {
    ("fig1-setting1", True): {"fght": 2.0, "sght": 2.0, "svrght": 1.0, "svrgsp": 1.0,
                              "svrgsp+": 1.0, "svrgsp|full": 1.0, "svrgsp+|full": 2.0,
                              "tuned_on": "quick setting 1 (n=500, d=1000, s*=50), seeds "
                                          "1000-1001"},
    ("fig1-setting1", False): {"fght": 2.0, "sght": 4.0, "svrght": 1.0, "svrgsp": 2.0,
                               "svrgsp+": 2.0, "svrgsp|full": 1.0, "svrgsp+|full": 2.0,
                               "tuned_on": "setting 1 (n=2500, d=5000, s*=250), seeds 1000-1001"},
    ("fig1-setting2", True): {"fght": 2.0, "sght": 4.0, "svrght": 1.0, "svrgsp": 2.0,
                              "svrgsp+": 2.0, "svrgsp|full": 1.0, "svrgsp+|full": 2.0,
                              "tuned_on": "quick setting 2 (n=500, d=1000, s*=50, correlation "
                                          "0.1), seeds 1000-1001"},
    ("fig1-setting2", False): {"fght": 2.0, "sght": 2.0, "svrght": 1.0, "svrgsp": 4.0,
                               "svrgsp+": 4.0, "svrgsp|full": 1.0, "svrgsp+|full": 1.0,
                               "tuned_on": "setting 2 (n=5000, d=10000, s*=500), seeds 1000-1001"},
    ("fig2-rcv1", True): {"fght": 2.0, "sght": 4.0, "svrght": 1.0, "svrgsp": 2.0,
                          "svrgsp+": 2.0, "svrgsp|full": 2.0, "svrgsp+|full": 2.0,
                          "tuned_on": _STANDIN},
    ("fig2-realsim", True): {"fght": 2.0, "sght": 4.0, "svrght": 0.5, "svrgsp": 0.5,
                             "svrgsp+": 0.5, "svrgsp|full": 0.5, "svrgsp+|full": 0.5,
                             "tuned_on": _STANDIN},
    ("fig3-rcv1", True): {"fght": 1.0, "sght": 4.0, "svrght": 0.5, "svrgsp": 2.0,
                          "svrgsp+": 2.0, "svrgsp|full": 1.0, "svrgsp+|full": 2.0,
                          "tuned_on": _STANDIN},
}
"""Recorded step-size multipliers (see the module docstring); GraSP has no step size."""


def tuned_factor(experiment, quick, method, inner="restricted"):
    """The recorded step-size multiplier of ``method`` (1.0 when none was recorded).

    Parameters
    ----------
    experiment : str
    quick : bool
    method : str
    inner : {"restricted", "full"}

    Returns
    -------
    factor : float
    source : str
        Where the factor comes from.
    """
    key = method if (inner == "restricted" or method not in OURS) else f"{method}|{inner}"
    for q in (quick, True):  # full-scale entries fall back to the quick (stand-in) ones
        table = TUNED_FACTORS.get((experiment, q))
        if table and key in table:
            where = table.get("tuned_on", "")
            if q != quick:
                where += " (no full-scale tuning recorded; quick-scale factor used)"
            return float(table[key]), where
    return 1.0, "untuned (no recorded factor): the default_eta rule"


# -- data -----------------------------------------------------------------------------------


@dataclasses.dataclass
class ProblemInfo:
    """What was solved: label for titles, sparsity level, and whether it is a stand-in."""

    label: str
    s: int
    stand_in: bool = False
    note: str = ""


def _say(progress, msg):
    if progress:
        print(msg, file=sys.stderr, flush=True)


def standin_problem(dataset, loss, random_state=0):
    """Synthetic sparse stand-in for the ``--quick`` version of a real data set.

    Parameters
    ----------
    dataset : {"rcv1", "real-sim"}
    loss : {"logistic", "squares"}
    random_state : int or numpy.random.Generator

    Returns
    -------
    Problem
        A CSR design of the :func:`quick_shape` of the data set whose rows have, on average,
        as many nonzeros as the real rows (the paper's Table 2 density times the real number
        of columns), placed uniformly at random; positive half-normal values, rows scaled to
        unit norm (as the cosine-normalised TF-IDF rows of the real files); labels
        ``sign(W v + noise)`` in {-1, +1} for a dense Gaussian ``v`` (noise: 10 % of the
        margins' spread); no ``x_true``.
    """
    from . import datasets

    spec = datasets.DATASETS[dataset]
    n, d, _ = quick_shape(spec.n_samples, spec.n_features)
    per_row = PAPER_DENSITY[dataset] * spec.n_features
    rng = np.random.default_rng(random_state)
    counts = np.minimum(rng.poisson(per_row, size=n), d)
    cols = [np.sort(rng.choice(d, size=k, replace=False)) for k in counts]
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    indices = np.concatenate(cols).astype(np.int64)
    data = np.abs(rng.standard_normal(int(indptr[-1])))
    W = sp.csr_matrix((data, indices, indptr), shape=(n, d))
    norms = np.sqrt(np.asarray(W.multiply(W).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    W = sp.csr_matrix(sp.diags(1.0 / norms) @ W)
    margin = np.asarray(W @ rng.standard_normal(d)).ravel()
    noise = 0.1 * (float(margin.std()) or 1.0) * rng.standard_normal(n)
    y = np.where(margin + noise >= 0, 1.0, -1.0)
    return Problem(W, y, loss=loss, name=f"synthetic stand-in for {dataset}")


def _quick_subset(W, y, seed):
    """Random rows, then the most frequent columns among them (see :func:`quick_shape`)."""
    n, d = W.shape
    rows_n, cols_n, s = quick_shape(n, d)
    rows = np.sort(np.random.default_rng(seed).choice(n, size=rows_n, replace=False))
    W = sp.csr_matrix(W[rows])
    freq = np.bincount(W.indices, minlength=d)
    cols = np.sort(np.argsort(-freq, kind="stable")[:cols_n])
    return sp.csr_matrix(W[:, cols]), y[rows], s


def build_problem(experiment, quick=False, seed=0, data_dir=None, download=True,
                  progress=True):
    """The problem of an experiment.

    Parameters
    ----------
    experiment : str or Experiment
    quick : bool
        Classroom size (see the module docstring).
    seed : int
        Seed of the synthetic data, of the row subset and of the stand-in.
    data_dir : str or path-like, optional
        Cache directory of the real data sets.
    download : bool
        Allow :func:`rgrasp_viz.datasets.fetch` to download (never with ``quick``).
    progress : bool
        Messages on stderr.

    Returns
    -------
    problem : Problem
    info : ProblemInfo

    Raises
    ------
    rgrasp_viz.datasets.DatasetUnavailableError
        Without ``quick``, when a real data set is missing and cannot be downloaded.
    """
    exp = _experiment(experiment)
    if exp.kind == "synthetic":
        if quick:
            corr = 0.1 if exp.setting == 2 else 0.0
            prob = make_regression(**QUICK_SYNTHETIC, correlation=corr, random_state=seed)
            label = (f"setting {exp.setting}, quick: n={prob.n}, d={prob.d}, "
                     f"s*={QUICK_SYNTHETIC['s_star']}" + (", correlation 0.1" if corr else ""))
        else:
            prob = make_regression(exp.setting, random_state=seed)
            label = f"setting {exp.setting}: n={prob.n}, d={prob.d}, " \
                    f"s*={np.count_nonzero(prob.x_true)}"
        s = prob.default_s
        return prob, ProblemInfo(label=label, s=s)

    from . import datasets

    if quick:
        try:
            W, y = datasets.fetch(exp.dataset, data_dir=data_dir, download=False,
                                  progress=progress, return_X_y=True)
        except datasets.DatasetUnavailableError:
            where = datasets.get_data_dir(data_dir)
            prob = standin_problem(exp.dataset, exp.loss, seed)
            note = (f"the {exp.dataset} file is not in {where}: this quick run uses a "
                    f"SYNTHETIC STAND-IN ({prob.n:,} x {prob.d:,} random CSR with "
                    f"{prob.nnz / prob.n:.1f} nonzeros per row, as the real rows), not the "
                    "real data")
            _say(progress, "note: " + note)
            s = quick_shape(datasets.DATASETS[exp.dataset].n_samples,
                            datasets.DATASETS[exp.dataset].n_features)[2]
            return prob, ProblemInfo(label=f"SYNTHETIC STAND-IN for {exp.dataset} "
                                           f"({prob.n:,} x {prob.d:,})", s=s, stand_in=True,
                                     note=note)
        n_all, d_all = W.shape
        W, y, s = _quick_subset(W, y, seed)
        label = (f"{exp.dataset}, quick: {W.shape[0]:,} random of {n_all:,} rows, the "
                 f"{W.shape[1]:,} most frequent of {d_all:,} columns")
    else:
        W, y = datasets.fetch(exp.dataset, data_dir=data_dir, download=download,
                              progress=progress, return_X_y=True)
        label = f"{exp.dataset}: n={W.shape[0]:,}, d={W.shape[1]:,}"
        s = min(S_REAL, W.shape[1])
    prob = Problem(W, y, loss=exp.loss, name=exp.dataset)
    return prob, ProblemInfo(label=label, s=s)


def _experiment(experiment):
    if isinstance(experiment, Experiment):
        return experiment
    try:
        return EXPERIMENTS[experiment]
    except KeyError:
        raise ValueError(f"unknown experiment {experiment!r}; choose one of "
                         f"{', '.join(EXPERIMENTS)}") from None


# -- running --------------------------------------------------------------------------------


class _Budget:
    """Callback stopping a run once it has used ``budget`` effective passes."""

    def __init__(self, budget):
        self.budget = budget

    def __call__(self, info):
        if info.passes >= self.budget:
            raise StopIteration


def run_method(problem, method, s, factor=1.0, seed=0, budget=60.0, inner="restricted"):
    """One run with the experiment settings.

    Parameters
    ----------
    problem : Problem
    method : str
    s : int
    factor : float
        Multiplier of :func:`rgrasp_viz.default_eta`.
    seed : int
        Index-sequence seed.
    budget : float
        Effective passes.
    inner : {"restricted", "full"}

    Returns
    -------
    SolveResult
    """
    eta = factor * default_eta(problem, method, s, inner)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return solve(problem, method=method, s=s, eta=eta, random_state=seed, tol=RUN_TOL,
                     ftol=0.0, max_iter=100_000, callback=_Budget(budget), inner=inner,
                     warn=False)


def warm_up(problem, inner="restricted", methods=METHODS):
    """Run every method once on a tiny problem of the same storage and loss.

    Loads the compiled kernels (Numba's on-disk cache) and warms BLAS before anything is
    timed, so that the first method of an experiment does not pay for it.

    Parameters
    ----------
    problem : Problem
        The problem about to be solved (only its storage and loss are used).
    inner : {"restricted", "full"}
    methods : sequence of str
    """
    rng = np.random.default_rng(0)
    W = rng.standard_normal((24, 40))
    if problem.is_sparse:
        W = sp.csr_matrix(W * (rng.random(W.shape) < 0.3))
    x = np.zeros(40)
    x[:3] = 1.0
    y = np.asarray(W @ x).ravel()
    if problem.loss == "logistic":
        y = np.where(y >= 0, 1.0, -1.0)
    tiny = Problem(W, y, loss=problem.loss)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for m in methods:
            solve(tiny, method=m, s=3, max_iter=2, inner=inner, random_state=0, warn=False)


def _status(res, budget):
    if res.status == 99:
        return f"pass budget {budget:g} used"
    return res.message


# -- claims ---------------------------------------------------------------------------------


reach = first_crossing  # the shared definition (rgrasp_viz.analysis)


def _fstar(traces):
    vals = [float(np.nanmin(np.where(np.isfinite(t.objective), t.objective, np.nan)))
            for t in traces.values() if np.isfinite(t.objective).any()]
    return min(vals) if vals else math.nan


@dataclasses.dataclass
class _Ctx:
    traces: dict
    fstar: float
    has_truth: bool
    err_level: float

    def gap(self, m):
        t = self.traces[m]
        return np.asarray(t.objective, float) - self.fstar

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
            return f"{LABELS[m]} {v:.3g} {unit}"
        t = self.traces[m]
        if metric == "gap":
            best = np.nanmin(self.gap(m)) / (float(t.objective[0]) - self.fstar)
            return f"{LABELS[m]} never (best rel. gap {best:.1e})"
        return f"{LABELS[m]} never (best error {np.nanmin(t.rel_error):.2e})"

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
    if len(a_list) == 1 and len(b_list) == 1 and np.array_equal(
            ctx.traces[a_list[0]].objective, ctx.traces[b_list[0]].objective):
        # same iterates: no faster convergence, whatever the clock says
        ok = False
        nums += (" (identical iterates" + ("" if axis == "passes" else
                 ": a time difference is only H_|T|'s cost plus timing noise") + ")")
    return ("yes" if ok else "no"), nums


def _better_solutions(ctx):
    needed = VR_METHODS + OTHER_METHODS
    if any(m not in ctx.traces for m in needed):
        return "n/a", "missing runs"
    best = {m: float(np.nanmin(ctx.gap(m))) for m in needed}
    worst_vr = max(best[m] for m in VR_METHODS)
    best_other = min(best[m] for m in OTHER_METHODS)
    nums = "; ".join(f"{LABELS[m]} {best[m]:.2e}" for m in needed)
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
        parts.append(f"{LABELS[m]} {1e3 * pp[m]:.3g} ms/pass, "
                     f"{int(t.n_thresholds[-1]) / it:.4g} thresholdings/iter")
    return ("yes" if ok else "no"), "; ".join(parts)


CLAIMS = (
    ("P1", "SVRGSP reaches the objective target in fewer effective passes than SVRGHT",
     lambda c: _faster(c, ["svrgsp"], ["svrght"], "passes")),
    ("P2", "SVRGSP+ reaches the objective target in fewer effective passes than SVRGHT",
     lambda c: _faster(c, ["svrgsp+"], ["svrght"], "passes")),
    ("T1", "SVRGSP reaches the objective target in less time than SVRGHT",
     lambda c: _faster(c, ["svrgsp"], ["svrght"], "time")),
    ("T2", "SVRGSP+ reaches the objective target in less time than SVRGHT",
     lambda c: _faster(c, ["svrgsp+"], ["svrght"], "time")),
    ("P3", "SVRGSP+ reaches the objective target in fewer effective passes than SVRGSP",
     lambda c: _faster(c, ["svrgsp+"], ["svrgsp"], "passes")),
    ("T3", "SVRGSP+ reaches the objective target in less time than SVRGSP",
     lambda c: _faster(c, ["svrgsp+"], ["svrgsp"], "time")),
    ("A1", "SVRGSP and SVRGSP+ reach the objective target in fewer passes than all four "
           "baselines (FG-HT, GraSP, SG-HT, SVRGHT)",
     lambda c: _faster(c, OURS, ["fght", "grasp", "sght", "svrght"], "passes")),
    ("A2", "SVRGSP and SVRGSP+ reach the objective target in less time than all four "
           "baselines",
     lambda c: _faster(c, OURS, ["fght", "grasp", "sght", "svrght"], "time")),
    ("E1", "SVRGSP and SVRGSP+ reach the estimation-error target in fewer passes than all "
           "four baselines (synthetic data)",
     lambda c: _faster(c, OURS, ["fght", "grasp", "sght", "svrght"], "passes", "error")),
    ("V1", "Variance-reduced methods (SVRGHT, SVRGSP, SVRGSP+) reach the objective target in "
           "fewer passes than GraSP, FG-HT and SG-HT",
     lambda c: _faster(c, VR_METHODS, OTHER_METHODS, "passes")),
    ("V2", "Variance-reduced methods find better solutions (lower objective within the "
           "budget) than GraSP, FG-HT and SG-HT",
     _better_solutions),
    ("C1", "Per-iteration cost: SVRGSP and SVRGSP+ spend less solver time per effective pass "
           "than SVRGHT (O(d) vs O(d log d) per inner step)",
     lambda c: _cost(c, OURS, ["svrght"])),
    ("C2", "GraSP spends more solver time per effective pass than FG-HT (higher "
           "per-iteration complexity)",
     lambda c: _cost(c, ["fght"], ["grasp"])),
)
"""``(id, claim, evaluator)`` for every claim checked; the evaluator returns
``(verdict, numbers)``."""


def evaluate_claims(traces, has_truth=None):
    """Check the paper's claims on a set of runs.

    Parameters
    ----------
    traces : dict of str to Trace
        One run per method name (any subset of :data:`METHODS`; claims that need a missing
        run get the verdict ``"n/a"``).
    has_truth : bool, optional
        Whether the runs know ``x*`` (estimation-error claims); default: whether their
        ``rel_error`` is finite.

    Returns
    -------
    list of dict
        One row per entry of :data:`CLAIMS`: ``id``, ``claim``, ``verdict`` (``"yes"``,
        ``"no"`` or ``"n/a"``) and ``numbers`` (what the verdict was computed from).
        ``rows[0]["context"]`` is not set; the targets are in the module docstring.
    """
    traces = dict(traces)
    if has_truth is None:
        has_truth = bool(traces) and all(np.isfinite(t.rel_error).all()
                                         for t in traces.values())
    err_level = math.nan
    if has_truth and traces:
        err_level = TARGET_ERR_FACTOR * min(float(np.nanmin(t.rel_error))
                                            for t in traces.values())
    ctx = _Ctx(traces, _fstar(traces), has_truth, err_level)
    rows = []
    for cid, text, fn in CLAIMS:
        verdict, numbers = fn(ctx)
        rows.append({"id": cid, "claim": text, "verdict": verdict, "numbers": numbers})
    return rows


def targets_text(traces):
    """One paragraph describing ``F*`` and the targets used by :func:`evaluate_claims`."""
    fs = _fstar(traces)
    has_truth = all(np.isfinite(t.rel_error).all() for t in traces.values())
    text = (f"F* = {fs:.10g} (best objective of any run). Objective target: "
            f"F - F* <= {TARGET_GAP:g} (F(x0) - F*).")
    if has_truth:
        best = min(float(np.nanmin(t.rel_error)) for t in traces.values())
        text += (f" Error target: ||x - x*||/||x*|| <= {TARGET_ERR_FACTOR:g} x {best:.3e}"
                 f" = {TARGET_ERR_FACTOR * best:.3e}.")
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


# -- tuning ---------------------------------------------------------------------------------


def tune(experiment, quick=False, seed=0, data_dir=None, inners=("restricted",),
         grid=TUNE_GRID, budget=None, methods=METHODS, n_seeds=TUNE_SEEDS, download=True,
         progress=True):
    """Pick each method's step-size multiplier on separately seeded problems.

    Parameters
    ----------
    experiment : str or Experiment
    quick : bool
    seed : int
        The experiment's seed; tuning uses ``seed + TUNE_SEED_OFFSET + k``,
        ``k = 0 .. n_seeds - 1`` (data and index sequence).
    data_dir : path-like, optional
    inners : sequence of {"restricted", "full"}
        SVRGSP(+) readings to tune (``"full"`` gives the keys ``"svrgsp|full"``,
        ``"svrgsp+|full"``); the other methods run once per factor.
    grid : sequence of float
        Multipliers of :func:`rgrasp_viz.default_eta`.
    budget : float, optional
        Pass budget (default :data:`PASS_BUDGET`).
    methods : sequence of str
    n_seeds : int
        Tuning problems (default :data:`TUNE_SEEDS`).
    download : bool
    progress : bool

    Returns
    -------
    factors : dict of str to float
        The pick per method key (GraSP: 1, it has no step size).
    rows : list of dict
        key, factor, passes to the target (the worst over the tuning seeds; ``inf`` =
        never on some seed), best relative gap (median over the seeds), status.

    Notes
    -----
    On each tuning problem ``F*`` is the best objective over all its tuning runs and the
    target is the one of :func:`evaluate_claims` (``TARGET_GAP``).  The pick reaches it on
    every tuning problem, in the fewest passes on the worst of them; among factors that do
    not, the lowest median best gap wins; a factor that diverges on any problem never wins.
    """
    exp = _experiment(experiment)
    budget = PASS_BUDGET[exp.kind] if budget is None else budget
    per_seed = []
    for k in range(n_seeds):
        tseed = seed + TUNE_SEED_OFFSET + k
        prob, info = build_problem(exp, quick, tseed, data_dir, download, progress=False)
        for inner in inners:
            warm_up(prob, inner, methods)
        runs = {}
        for m in methods:
            for inner in (inners if m in OURS else inners[:1]):
                key = m if inner == "restricted" or m not in OURS else f"{m}|{inner}"
                for f in ((1.0,) if m == "grasp" else grid):
                    res = run_method(prob, m, info.s, f, tseed, budget, inner)
                    runs[(key, f)] = res
                    _say(progress, f"  tune seed {tseed} {key:<14} x{f:<4g} "
                                   f"{_status(res, budget)}")
        fs = min(float(np.nanmin(r.trace.objective)) for r in runs.values() if r.status != 2)
        scores = {}
        for kf, r in runs.items():
            tr = r.trace
            f0 = float(tr.objective[0]) - fs
            gap = np.asarray(tr.objective, float) - fs
            p = reach(tr.passes, gap, TARGET_GAP * f0)
            best = float(np.nanmin(gap)) / f0 if f0 > 0 else math.nan
            scores[kf] = (p, best, r.status == 2)
        per_seed.append(scores)
    rows, cands = [], {}
    for kf in per_seed[0]:
        key, f = kf
        worst = max(sc[kf][0] for sc in per_seed)
        best = float(np.median([sc[kf][1] for sc in per_seed]))
        diverged = any(sc[kf][2] for sc in per_seed)
        rows.append({"key": key, "factor": f, "passes": worst, "best_gap": best,
                     "status": "diverged" if diverged else "ok"})
        cands.setdefault(key, [])
        if not diverged:
            cands[key].append((worst, best, f))
    factors = {k: (min(c)[2] if c else min(grid)) for k, c in cands.items()}
    return factors, rows


# -- figures and outputs --------------------------------------------------------------------


def _figures(traces, exp, info, fstar, has_truth, quick, inner):
    from .viz import figures as F

    order = [traces[m] for m in METHODS if m in traces]
    src = f"F* = {fstar:.8g}, the best objective of any run"
    title = (f"{exp.figure} of the paper{' (quick)' if quick else ''} — {info.label}"
             f"<br><sup>{exp.loss} loss, s={info.s}, x0=0, J=2n, m=6, inner={inner}; "
             f"{src}</sup>")
    figs = {}
    for axis in ("passes", "time"):
        fig = F.convergence(order, x=axis, y="both" if has_truth else "gap",
                            fstar=(fstar, src))
        fig.update_layout(title={"text": title}, height=460, margin={"t": 95})
        figs[axis] = fig
    return figs


def _export_all(figs, out, png, progress):
    from .viz import figures as F

    files, notes = [], []
    for name, fig in figs.items():
        files.append(F.export(fig, out / f"{name}.html"))
    if not png:
        notes.append("PNG export skipped (--no-png)")
        return files, notes
    if F.find_chromium() is None:
        notes.append("PNG export skipped: no Chromium/Chrome found (HTML figures written)")
        return files, notes
    for name, fig in figs.items():
        try:
            files.append(F.export(fig, out / f"{name}.png", width=1100, height=460))
        except RuntimeError as exc:
            notes.append(f"PNG export skipped: {exc}")
            break
    return files, notes


@dataclasses.dataclass
class Report:
    """What :func:`run` did.

    Attributes
    ----------
    experiment : Experiment
    quick : bool
    info : ProblemInfo
    traces : dict of str to Trace
    claims : list of dict
    out : pathlib.Path
    files : list of pathlib.Path
    notes : list of str
    settings : dict
        Everything written to ``run.json``.
    """

    experiment: Experiment
    quick: bool
    info: ProblemInfo
    traces: dict
    claims: list
    out: Path
    files: list
    notes: list
    settings: dict


def default_out(experiment, quick=False):
    """``rgrasp-reproduce/<experiment>[-quick]`` in the current directory."""
    return Path("rgrasp-reproduce") / (experiment + ("-quick" if quick else ""))


def run(experiment, *, quick=False, out=None, data_dir=None, seed=0, inner="restricted",
        tune_steps=False, png=True, download=True, budget=None, progress=True):
    """Run one experiment, write its outputs and check the paper's claims.

    Parameters
    ----------
    experiment : str
        One of :data:`EXPERIMENTS`.
    quick : bool
        Classroom-size version (see the module docstring).
    out : path-like, optional
        Output directory (created); default :func:`default_out`.
    data_dir : path-like, optional
        Real data cache directory (:func:`rgrasp_viz.datasets.get_data_dir`).
    seed : int
        Data and index-sequence seed.
    inner : {"restricted", "full"}
        SVRGSP(+)'s inner iterate (see :func:`rgrasp_viz.solve`).
    tune_steps : bool
        Tune the step sizes now (:func:`tune`) instead of using :data:`TUNED_FACTORS`.
    png : bool
        Also write PNGs (needs Chromium; skipped with a note otherwise).
    download : bool
        Allow downloading a real data set (full runs only).
    budget : float, optional
        Effective passes per method (default :data:`PASS_BUDGET`).
    progress : bool
        One line per method (and data notes) on stderr.

    Returns
    -------
    Report
    """
    exp = _experiment(experiment)
    if inner not in ("restricted", "full"):
        raise ValueError(f"inner must be 'restricted' or 'full', got {inner!r}")
    budget = PASS_BUDGET[exp.kind] if budget is None else float(budget)
    out = Path(out) if out is not None else default_out(exp.name, quick)
    t_start = time.perf_counter()
    _say(progress, f"{exp.name} ({exp.figure}){' --quick' if quick else ''}: building data")
    prob, info = build_problem(exp, quick, seed, data_dir, download, progress)
    _say(progress, f"{info.label}; {exp.loss} loss, s={info.s}, budget {budget:g} passes")

    if tune_steps:
        _say(progress, f"tuning step sizes on seeds {seed + TUNE_SEED_OFFSET}.."
                       f"{seed + TUNE_SEED_OFFSET + TUNE_SEEDS - 1} "
                       f"(grid {', '.join(f'x{g:g}' for g in TUNE_GRID)})")
        picked, tune_rows = tune(exp, quick, seed, data_dir, (inner,), budget=budget,
                                 download=download, progress=progress)
        factors = {m: (picked[m if inner == "restricted" or m not in OURS else f"{m}|{inner}"],
                       f"tuned now on seeds {seed + TUNE_SEED_OFFSET}.."
                       f"{seed + TUNE_SEED_OFFSET + TUNE_SEEDS - 1}") for m in METHODS}
        _say(progress, "picked: " + ", ".join(f"{LABELS[m]} x{factors[m][0]:g}"
                                              for m in METHODS if m != "grasp"))
    else:
        tune_rows = []
        factors = {m: tuned_factor(exp.name, quick, m, inner) for m in METHODS}

    warm_up(prob, inner)
    traces, method_rows = {}, []
    for k, m in enumerate(METHODS, 1):
        f = 1.0 if m == "grasp" else factors[m][0]
        res = run_method(prob, m, info.s, f, seed, budget, inner)
        tr = res.trace
        traces[m] = tr
        eta = tr.meta["eta"]
        err = "" if not np.isfinite(res.rel_error) else f"  rel.err {res.rel_error:.3e}"
        _say(progress, f"[{k}/{len(METHODS)}] {LABELS[m]:<8} eta {eta:.3g} (x{f:g})  "
                       f"{tr.n_iter:>4d} it  {res.passes:6.1f} passes  {res.time:8.3f} s  "
                       f"F {res.fun:.6e}{err}  {_status(res, budget)}")
        method_rows.append({"method": m, "factor": f, "eta": eta, "factor_source":
                            factors[m][1] if m != "grasp" else "no step size (exact "
                            "sub-problem)", "iterations": tr.n_iter,
                            "passes": res.passes, "time": res.time, "objective": res.fun,
                            "rel_error": res.rel_error, "status": _status(res, budget)})

    has_truth = prob.x_true is not None
    claims = evaluate_claims(traces, has_truth)
    fstar = _fstar(traces)

    out.mkdir(parents=True, exist_ok=True)
    (out / "traces").mkdir(exist_ok=True)
    files = []
    for m, tr in traces.items():
        p = out / "traces" / f"{m.replace('+', 'plus')}.npz"
        tr.save(p)
        files.append(p)
    figs = _figures(traces, exp, info, fstar, has_truth, quick, inner)
    fig_files, notes = _export_all(figs, out, png, progress)
    files += fig_files
    for n in notes:
        _say(progress, "note: " + n)
    if info.note:
        notes.insert(0, info.note)

    settings = {
        "experiment": exp.name, "figure": exp.figure, "quick": quick, "problem": info.label,
        "stand_in": info.stand_in, "n": prob.n, "d": prob.d, "loss": exp.loss, "s": info.s,
        "seed": seed, "inner": inner, "budget_passes": budget, "J": "2n", "m": 6, "x0": 0,
        "tol": RUN_TOL, "target_gap": TARGET_GAP, "target_err_factor": TARGET_ERR_FACTOR,
        "fstar": fstar, "methods": method_rows, "tuning": tune_rows,
        "versions": traces[METHODS[0]].meta.get("versions"),
        "wall_seconds": time.perf_counter() - t_start,
    }
    md = _claims_markdown(exp, quick, info, claims, traces, method_rows, settings, notes)
    (out / "claims.md").write_text(md)
    (out / "run.json").write_text(json.dumps(_clean(settings), indent=2, default=_jsonable))
    files += [out / "claims.md", out / "run.json"]
    return Report(exp, quick, info, traces, claims, out, files, notes, settings)


def _clean(v):
    """Non-finite floats as strings ("inf", "nan"), so that ``run.json`` is standard JSON."""
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    if isinstance(v, (float, np.floating)) and not math.isfinite(v):
        return str(float(v))
    return v


def _jsonable(v):
    if isinstance(v, (np.floating, np.integer)):
        return v.item()
    return str(v)


def _claims_markdown(exp, quick, info, claims, traces, method_rows, settings, notes):
    head = [f"# Claims check: {exp.name} ({exp.figure}){' — quick' if quick else ''}", ""]
    if info.stand_in:
        head += [f"> **SYNTHETIC STAND-IN, NOT THE REAL DATA.** {info.note}", ""]
    head += [f"Problem: {info.label}; {exp.loss} loss; s = {info.s}; seed {settings['seed']}; "
             f"inner = {settings['inner']}; budget {settings['budget_passes']:g} effective "
             "passes per method.", "", targets_text(traces), ""]
    head += [format_claims(claims, markdown=True), "", "## Runs", "",
             "| method | eta (factor) | iterations | passes | seconds | objective | "
             "rel. error | stopped |", "|---|---|---|---|---|---|---|---|"]
    for r in method_rows:
        head.append(f"| {LABELS[r['method']]} | {r['eta']:.3g} (x{r['factor']:g}) | "
                    f"{r['iterations']} | {r['passes']:.1f} | {r['time']:.3f} | "
                    f"{r['objective']:.6e} | {r['rel_error']:.3e} | {r['status']} |")
    head += ["", "Step-size factors: " + "; ".join(
        f"{LABELS[r['method']]}: {r['factor_source']}" for r in method_rows)]
    if settings["tuning"]:
        head += ["", "## Step-size tuning (this run, seeds "
                 f"{settings['seed'] + TUNE_SEED_OFFSET} + 0..{TUNE_SEEDS - 1})", "",
                 "| method | factor | passes to target (worst seed) | best rel. gap (median) "
                 "| status |",
                 "|---|---|---|---|---|"]
        for r in settings["tuning"]:
            head.append(f"| {r['key']} | x{r['factor']:g} | {r['passes']:.3g} | "
                        f"{r['best_gap']:.2e} | {r['status']} |")
    if notes:
        head += ["", "Notes:", ""] + [f"* {n}" for n in notes]
    return "\n".join(head) + "\n"


def print_summary(report, stream=None):
    """Print the claims table and where the files are."""
    stream = stream or sys.stdout
    exp = report.experiment
    print(f"\nClaims of the paper, {exp.name} ({exp.figure})"
          f"{' — quick' if report.quick else ''}: {report.info.label}", file=stream)
    if report.info.stand_in:
        print("*** SYNTHETIC STAND-IN, NOT THE REAL DATA ***", file=stream)
    print(targets_text(report.traces), file=stream)
    print(format_claims(report.claims), file=stream)
    held = sum(r["verdict"] == "yes" for r in report.claims)
    judged = sum(r["verdict"] != "n/a" for r in report.claims)
    print(f"\n{held} of {judged} checked claims supported by this run.", file=stream)
    print(f"Wrote {len(report.files)} files to {os.fspath(report.out)} "
          "(passes.html, time.html, traces/*.npz, claims.md, run.json).", file=stream)
