"""The experiments of the paper's Section 5: their data, one budgeted run, the reference run.

Every method starts at ``x0 = 0``; SVRGSP(+) use ``J = 2n`` inner steps and SVRGSP+ ``m = 6``
(the package defaults, as in the paper).  Each method runs until it has used the pass budget
(:data:`PASS_BUDGET`, per experiment: the iteration that crosses it completes) or reaches an
exact fixed point (``tol = 1e-10``; the stagnation test is off, so curves cover the whole
budget).  The same seed draws the synthetic data and every method's index sequence.

``F*``, against which the claims measure every run, comes from a *reference* that is better
than every budgeted run (:func:`rgrasp_viz.reference.reference`, re-exported here): the
method whose budgeted run went lowest, run again with :data:`REFERENCE_FACTOR` times the
budget and ``tol = ftol = 0``; for least squares also the exact least-squares fit on the
support of every run's best iterate (and on the true support, when it is known).  Its source
is recorded with it.

On real data (and its ``--quick`` stand-in) the rows are split once per evaluation seed into
a training and a held-out part (:func:`heldout_split`, :data:`HELDOUT_FRACTION`; ours, not the
paper's): every method, ``F*`` and the step tuning see the training rows only, and the
quality claims compare each method's :func:`heldout_loss`.  Synthetic problems are solved
whole, as before.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import scipy.sparse as sp

from .. import datasets
from .. import losses as _losses
from .._problems import Problem, make_regression
from .._progress import note
from ..exceptions import (
    ChecksumError,
    ConvergenceWarning,
    DataFileError,
    DatasetUnavailableError,
)
from ..reference import REFERENCE_FACTOR, least_squares_on, reference
from ..solvers import default_eta, solve
from ..solvers import warm_up as solvers_warm_up
from ..solvers._registry import get_method, method_names, normalize_reading
from ..solvers._status import Status

__all__ = [
    "EXPERIMENTS",
    "HELDOUT_FRACTION",
    "METHODS",
    "PASS_BUDGET",
    "REFERENCE_FACTOR",
    "RUN_TOL",
    "Experiment",
    "ProblemInfo",
    "build_problem",
    "build_train_heldout",
    "get_experiment",
    "heldout_loss",
    "heldout_split",
    "least_squares_on",
    "pass_budget",
    "quick_shape",
    "reference",
    "run_method",
    "split_problem",
    "standin_problem",
    "warm_up",
]

METHODS = method_names(paper_only=True)
"""The six methods of the paper (registry order)."""


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

# Measured on setting 1 (full size, the paper's Algorithm 2, 150-200 passes, seeds 0-2; F* the
# FG-HT fixed point, the lowest): SVRGSP reaches a relative gap of 1e-1 after 105-125 passes,
# SVRGSP+ after 63-78, SVRGHT and SG-HT not within 200 (they reach 1, i.e. F <= 2 F*, after
# 70-80 and 10 passes).  The real-data budgets were not measured at full size.
PASS_BUDGET = {"fig1-setting1": 200.0, "fig1-setting2": 200.0, "fig2-rcv1": 100.0,
               "fig2-realsim": 100.0, "fig3-rcv1": 100.0}
"""Effective passes each method may use, by experiment (the iteration that crosses the budget
completes), also with ``--quick``.  Long enough for the paper's methods to reach the claims'
target at full size, so that a verdict can be "supported" or "contradicted" rather than "not
shown within the budget"."""

QUICK_SYNTHETIC = {"n": 500, "d": 1000, "s_star": 50}
"""``--quick`` size of the synthetic settings (the paper's n : d : s* = 10 : 20 : 1)."""

QUICK_SCALE = 10
"""``--quick`` on real data: one tenth of the rows and of the columns, ``s = 200 / 10``."""

S_REAL = 200
"""Sparsity level on real data (the paper's s = 200)."""

PAPER_DENSITY = {"rcv1": 0.0016, "real-sim": 0.00024}
"""Fraction of nonzeros of the real data sets, Table 2 of the paper (for the stand-in)."""

RUN_TOL = 1e-10

HELDOUT_FRACTION = 0.2
"""Fraction of the rows of a real-data problem held out (ours: the paper reports the training
objective only).  The methods are solved on the other rows; the quality claims compare the
held-out loss of each method's final iterate (:func:`heldout_split`)."""

SPLIT_STREAM = 20190025
"""Second word of the split's seed sequence ``[seed, SPLIT_STREAM]``: the split is drawn
from the evaluation seed, apart from the data's and the index sequences' streams."""
"""``tol`` passed to :func:`rgrasp_viz.solve` (stops only at an exact fixed point)."""


def quick_shape(n, d):
    """``(rows, columns, s)`` of the ``--quick`` version of an ``n x d`` real data set.

    One tenth of each dimension (at least 200 rows and 100 columns, at most all of them),
    and ``s = 20`` (the paper's 200 scaled alike; at most a tenth of the columns).
    """
    rows = min(n, max(200, round(n / QUICK_SCALE)))
    cols = min(d, max(100, round(d / QUICK_SCALE)))
    return rows, cols, max(1, min(S_REAL // QUICK_SCALE, cols // 10))


def get_experiment(experiment):
    """The :class:`Experiment` named ``experiment`` (an :class:`Experiment` passes through).

    Raises
    ------
    ValueError
        For an unknown name.
    """
    if isinstance(experiment, Experiment):
        return experiment
    try:
        return EXPERIMENTS[experiment]
    except (KeyError, TypeError):
        raise ValueError(f"unknown experiment {experiment!r}; choose one of "
                         f"{', '.join(EXPERIMENTS)}") from None


# -- data -----------------------------------------------------------------------------------


@dataclasses.dataclass
class ProblemInfo:
    """What was solved: label for titles, sparsity level, and whether it is a stand-in."""

    label: str
    s: int
    stand_in: bool = False
    note: str = ""


def say(progress, msg):
    """A note the user must see (e.g. a stand-in was used): one line on stderr when
    ``progress`` (:func:`rgrasp_viz._progress.note`); progress itself is a bar."""
    note(progress, msg)


def standin_problem(dataset, loss, random_state=0):
    """Synthetic sparse stand-in for the ``--quick`` version of a real data set.

    Keeping both the real density and the real number of columns would leave ``n << d`` at
    classroom size, where GraSP's restricted solves become rank deficient and slow; the
    stand-in keeps the real number of nonzeros *per row* instead.  It exercises the sparse
    code paths with the real per-row cost; its numbers say nothing about the real data.

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




def _fetch(dataset, data_dir, download, progress):
    """``datasets.fetch(..., return_X_y=True)``, a damaged file raising DataFileError."""
    try:
        return datasets.fetch(dataset, data_dir=data_dir, download=download,
                              progress=progress, return_X_y=True)
    except ChecksumError:
        raise
    except ValueError as exc:
        where = datasets.get_data_dir(data_dir)
        reason = " ".join(str(exc).split())  # one line
        raise DataFileError(
            f"the {dataset} data in {where} cannot be used: {reason} (delete the file to "
            "download it again, or replace it)"
        ) from exc


def build_problem(experiment, quick=False, seed=0, data_dir=None, download=True,
                  progress=True):
    """The problem of an experiment.

    Parameters
    ----------
    experiment : str or Experiment
    quick : bool
        Classroom size: synthetic ``n=500, d=1000, s*=50``; real data: a tenth of the rows
        and columns of the file when it is in the data directory, else the
        :func:`standin_problem` (never downloads).
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
    rgrasp_viz.exceptions.DatasetUnavailableError
        Without ``quick``, when a real data set is missing and cannot be downloaded.
    rgrasp_viz.exceptions.ChecksumError
        A real data file has the wrong checksum.
    DataFileError
        A real data file is there but damaged (malformed, truncated, not a valid ``.bz2``,
        wrong shape): one line saying which file and what is wrong with it.
    """
    exp = get_experiment(experiment)
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
        return prob, ProblemInfo(label=label, s=prob.default_s)

    if quick:
        try:
            W, y = _fetch(exp.dataset, data_dir, False, progress)
        except DatasetUnavailableError:
            where = datasets.get_data_dir(data_dir)
            prob = standin_problem(exp.dataset, exp.loss, seed)
            note = (f"the {exp.dataset} file is not in {where}: this quick run uses a "
                    f"SYNTHETIC STAND-IN ({prob.n:,} x {prob.d:,} random CSR with "
                    f"{prob.nnz / prob.n:.1f} nonzeros per row, as the real rows), not the "
                    "real data")
            say(progress, "note: " + note)
            spec = datasets.DATASETS[exp.dataset]
            s = quick_shape(spec.n_samples, spec.n_features)[2]
            return prob, ProblemInfo(label=f"SYNTHETIC STAND-IN for {exp.dataset} "
                                           f"({prob.n:,} x {prob.d:,})", s=s, stand_in=True,
                                     note=note)
        n_all, d_all = W.shape
        W, y, s = _quick_subset(W, y, seed)
        label = (f"{exp.dataset}, quick: {W.shape[0]:,} random of {n_all:,} rows, the "
                 f"{W.shape[1]:,} most frequent of {d_all:,} columns")
    else:
        W, y = _fetch(exp.dataset, data_dir, download, progress)
        label = f"{exp.dataset}: n={W.shape[0]:,}, d={W.shape[1]:,}"
        s = min(S_REAL, W.shape[1])
    prob = Problem(W, y, loss=exp.loss, name=exp.dataset)
    return prob, ProblemInfo(label=label, s=s)


# -- held-out split (real data; ours) ---------------------------------------------------------


def heldout_split(n, seed, fraction=HELDOUT_FRACTION):
    """The rows of a real-data problem, split into a training and a held-out part.

    The split is our protocol choice, not the paper's (which reports the training objective
    only): it lets the quality claims compare what the methods return on rows they did not
    fit, where no ground truth exists.

    Parameters
    ----------
    n : int
        Number of rows (at least 2).
    seed : int
        Evaluation seed; the same seed gives the same split (the same for every method).
    fraction : float
        Fraction held out, in ``(0, 1)``: ``round(fraction * n)`` rows, at least one, and at
        least one row left to train on.

    Returns
    -------
    train, heldout : ndarray of int64
        Sorted, disjoint row indices whose union is ``range(n)``.
    """
    n = int(n)
    if n < 2:
        raise ValueError(f"a held-out split needs at least 2 rows, got {n}")
    if not 0.0 < float(fraction) < 1.0:
        raise ValueError(f"the held-out fraction must be in (0, 1), got {fraction!r}")
    n_out = min(n - 1, max(1, round(float(fraction) * n)))
    perm = np.random.default_rng([int(seed), SPLIT_STREAM]).permutation(n)
    return np.sort(perm[n_out:]).astype(np.int64), np.sort(perm[:n_out]).astype(np.int64)


def split_problem(problem, seed, fraction=HELDOUT_FRACTION):
    """``(train, heldout)`` problems on the rows of :func:`heldout_split` (same loss, ``l2``,
    ``x_true``)."""
    train, out = heldout_split(problem.n, seed, fraction)

    def part(rows, what):
        W = problem.W[rows]
        return Problem(sp.csr_matrix(W) if sp.issparse(W) else W, problem.y[rows],
                       loss=problem.loss, x_true=problem.x_true, l2=problem.l2,
                       name=f"{problem.name} ({what})" if problem.name else what)

    return part(train, "train"), part(out, "held out")


def heldout_loss(heldout, x):
    """Mean loss of ``x`` on the held-out rows: the experiment's per-sample loss
    (:func:`rgrasp_viz.losses.sample_losses`: ``(a - y)^2 / 2`` or ``log(1 + exp(-y a))``)
    averaged over the rows of ``heldout``, without any ridge term."""
    return _losses.objective(heldout.W, heldout.y, np.asarray(x, dtype=np.float64),
                             heldout.loss)


def build_train_heldout(experiment, quick=False, seed=0, data_dir=None, download=True,
                        progress=True):
    """:func:`build_problem`, then, on real data (and its stand-in), the split of
    :func:`split_problem` drawn from ``seed``.

    Returns
    -------
    train : Problem
        What the methods solve (the whole problem on synthetic data, unchanged).
    heldout : Problem or None
        The held-out rows (None on synthetic data).
    info : ProblemInfo
    """
    exp = get_experiment(experiment)
    prob, info = build_problem(exp, quick, seed, data_dir, download, progress)
    if exp.kind != "real":
        return prob, None, info
    train, heldout = split_problem(prob, seed)
    return train, heldout, info


# -- running --------------------------------------------------------------------------------


class _PassBudget:
    """Callback stopping a run once it has used ``budget`` effective passes."""

    def __init__(self, budget):
        self.budget = budget

    def __call__(self, info):
        if info.passes >= self.budget:
            raise StopIteration


def pass_budget(budget):
    """Keywords of :func:`rgrasp_viz.solve` stopping a run after ``budget`` effective passes.

    The iteration that crosses the budget completes.  This is the one place the budget is
    applied: once ``solve`` takes ``max_passes=``, the body becomes
    ``return {"max_passes": budget}``.
    """
    return {"callback": _PassBudget(budget)}


def stopped_by_budget(res):
    """Whether a run was stopped by its pass budget (callback or ``max_passes``)."""
    return res.status in (Status.CALLBACK, Status.MAX_PASSES)


def status_text(res, budget):
    """Why a run stopped, in words (the budget named when it was the budget)."""
    return f"pass budget {budget:g} used" if stopped_by_budget(res) else res.message


def run_method(problem, method, s, factor=1.0, seed=0, budget=60.0, inner="paper",
               tol=RUN_TOL):
    """One run with the experiment settings.

    Parameters
    ----------
    problem : Problem
    method : str
    s : int
    factor : float
        Multiplier of :func:`rgrasp_viz.default_eta` (ignored by methods without a step).
    seed : int
        Index-sequence seed.
    budget : float
        Effective passes (:func:`pass_budget`).
    inner : {"paper", "on_T"}
        Reading of Algorithm 2 (SVRGSP(+) only), always passed explicitly.
    tol : float
        Fixed-point tolerance (the stagnation test is off: ``ftol = 0``).

    Returns
    -------
    SolveResult
    """
    inner = normalize_reading(inner)
    eta = factor * default_eta(problem, method, s, inner) if get_method(method).has_step \
        else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return solve(problem, method=method, s=s, eta=eta, random_state=seed, tol=tol,
                     ftol=0.0, max_iter=100_000, inner=inner, warn=False,
                     **pass_budget(budget))


def warm_up(problem, inner="paper", methods=METHODS):
    """Compile (or load from Numba's on-disk cache) the kernels of every method for the
    storage of ``problem``, before anything is timed (:func:`rgrasp_viz.solvers.warm_up`).

    Parameters
    ----------
    problem : Problem
        The problem about to be solved (only its storage is used).
    inner : {"paper", "on_T"}
    methods : sequence of str
    """
    for m in methods:
        solvers_warm_up(m, problem.is_sparse, normalize_reading(inner))
