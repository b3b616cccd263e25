"""Re-run the experiments of Section 5 of the paper and check its claims.

``python -m rgrasp_viz reproduce EXPERIMENT [--quick] [--out DIR] [--inner {paper,on_T}] ...``
(also ``rgrasp-viz reproduce ...``) runs all six methods on one experiment of Shang et al.,
*Efficient Relaxed Gradient Support Pursuit* (IJCAI 2019), writes interactive figures with
the paper's axes, the traces and a table giving each claim of the paper a verdict per seed
(``--seeds 0-4`` by default) and one over seeds: supported, contradicted, tie, mixed (fewer
than 80 % of the seeds agree), not shown within the budget (neither side reached the target;
the numbers say which way they lean) or n/a.  Speed claims use the speed gap
``(F - F*)/(F0 - F*) <= 1e-4``; quality claims compare what the runs return (estimation
error, strong coordinates recovered).  The steps are tuned first on separate seeds.
:func:`run` does the same from Python.

=================== =========== ============================================ ======== ======
name                paper       data                                         loss     s
=================== =========== ============================================ ======== ======
``fig1-setting1``   Figure 1(a) synthetic, n=2500, d=5000, s*=250            squares  1.2 s*
``fig1-setting2``   Figure 1(b) synthetic, n=5000, d=10000, s*=500, rho=0.1  squares  1.2 s*
``fig2-rcv1``       Figure 2(a) rcv1, 20,242 x 47,236                        logistic 200
``fig2-realsim``    Figure 2(b) real-sim, 72,309 x 20,958                    logistic 200
``fig3-rcv1``       Figure 3    rcv1                                         squares  200
=================== =========== ============================================ ======== ======

SVRGSP and SVRGSP+ run the paper's Algorithm 2 by default (``inner="paper"``: ``z`` on all
``d`` coordinates); ``inner="on_T"`` runs the package's variant (``z`` on the merged support
``T``), labelled "(on T)" in every table, figure and file.

One job per module:

* :mod:`~rgrasp_viz.reproduce._experiments` — the experiments' data, their pass budgets, one
  budgeted run (``F*`` comes from :mod:`rgrasp_viz.reference`, re-exported here);
* :mod:`~rgrasp_viz.reproduce._tuning` — recorded step-size multipliers and the tuning run;
* :mod:`~rgrasp_viz.reproduce._claims` — the paper's claims checked on traces (no solving);
* :mod:`~rgrasp_viz.reproduce._report` — figures, ``claims.md``, ``run.json``, the summary;
* :mod:`~rgrasp_viz.reproduce._output` — the output folder: complete or absent, one writer;
* :mod:`~rgrasp_viz.reproduce._command` — :func:`run` and the command-line arguments;
* :mod:`~rgrasp_viz.reproduce._condition_map` — ``reproduce condition-map`` (ours, beyond the
  paper): :func:`run_condition_map`, where variance reduction pays over the features'
  correlation, with the smoothness constants that explain it (:func:`smoothness`);
* :mod:`~rgrasp_viz.reproduce._verdict_table` — :func:`claims_html` / :class:`VerdictTable`: the
  claims table as HTML with a coloured badge per verdict;
* :mod:`~rgrasp_viz.reproduce._parallel` — :func:`run_tasks`: the runs serially, on local
  processes (``--jobs``) or on a Dask cluster (``--scheduler``), with the same results.
"""

from __future__ import annotations

from ..solvers._registry import method_label
from ._claims import (
    AGREEMENT,
    BASELINES,
    CLAIMS,
    CONTRADICTED,
    FSTAR_GUARD,
    GAP_LEVELS,
    IDENTICAL_RTOL,
    MIXED,
    NA,
    NOT_SHOWN,
    OTHER_METHODS,
    OURS,
    PASS_RULE,
    QUALITY_CLAIMS,
    SPEED_LEVEL,
    SPEED_LEVELS,
    STRONG_SIGMAS,
    SUPPORTED,
    TARGET_CLAIMS,
    TARGET_ERR_FACTOR,
    TARGET_LEVEL,
    TIE,
    TIE_TOLERANCE,
    TIME_CLAIMS,
    TIME_MARGIN,
    VERDICTS,
    VR_METHODS,
    Reference,
    aggregate_claims,
    evaluate_claims,
    format_claims,
    format_target_table,
    quality_of,
    reach,
    relative_gap,
    same_iterates,
    speed_gap,
    strong_threshold,
    target_table,
    targets_text,
    verdict_counts,
    verdict_summary,
)
from ._command import DEFAULT_SEEDS, check_run_args, parse_seeds, run
from ._condition_map import (
    build_map_problem,
    map_rows,
    run_condition_map,
    smoothness,
    summarize,
    winners,
)
from ._experiments import (
    EXPERIMENTS,
    METHODS,
    PAPER_DENSITY,
    PASS_BUDGET,
    QUICK_SCALE,
    QUICK_SYNTHETIC,
    REFERENCE_FACTOR,
    RUN_TOL,
    S_REAL,
    Experiment,
    ProblemInfo,
    build_problem,
    least_squares_on,
    pass_budget,
    quick_shape,
    reference,
    run_method,
    standin_problem,
    warm_up,
)
from ._parallel import run_tasks
from ._precomputed import load as load_precomputed
from ._report import Report, default_out, print_summary
from ._tuning import (
    RECORDED_GRID,
    TUNE_GRID,
    TUNE_SEED_OFFSET,
    TUNE_SEEDS,
    TUNED_FACTORS,
    factor_key,
    tune,
    tuned_factor,
    tuning_seeds,
)
from ._verdict_table import BADGE_COLORS, VerdictTable, claims_html

__all__ = [
    "BADGE_COLORS",
    "VerdictTable",
    "build_map_problem",
    "claims_html",
    "map_rows",
    "run_condition_map",
    "smoothness",
    "summarize",
    "winners",
    "AGREEMENT",
    "BASELINES",
    "DEFAULT_SEEDS",
    "MIXED",
    "QUALITY_CLAIMS",
    "RECORDED_GRID",
    "SPEED_LEVEL",
    "SPEED_LEVELS",
    "STRONG_SIGMAS",
    "TIE",
    "TIE_TOLERANCE",
    "TIME_CLAIMS",
    "aggregate_claims",
    "parse_seeds",
    "quality_of",
    "run_tasks",
    "speed_gap",
    "strong_threshold",
    "tuning_seeds",
    "CLAIMS",
    "EXPERIMENTS",
    "IDENTICAL_RTOL",
    "METHODS",
    "OTHER_METHODS",
    "OURS",
    "PAPER_DENSITY",
    "PASS_BUDGET",
    "QUICK_SCALE",
    "QUICK_SYNTHETIC",
    "REFERENCE_FACTOR",
    "RUN_TOL",
    "S_REAL",
    "CONTRADICTED",
    "FSTAR_GUARD",
    "GAP_LEVELS",
    "NA",
    "NOT_SHOWN",
    "PASS_RULE",
    "SUPPORTED",
    "TARGET_CLAIMS",
    "TARGET_ERR_FACTOR",
    "TARGET_LEVEL",
    "TIME_MARGIN",
    "VERDICTS",
    "TUNED_FACTORS",
    "TUNE_GRID",
    "TUNE_SEEDS",
    "TUNE_SEED_OFFSET",
    "VR_METHODS",
    "Experiment",
    "ProblemInfo",
    "Reference",
    "Report",
    "build_problem",
    "check_run_args",
    "default_out",
    "evaluate_claims",
    "factor_key",
    "format_claims",
    "load_precomputed",
    "format_target_table",
    "least_squares_on",
    "pass_budget",
    "print_summary",
    "quick_shape",
    "reach",
    "reference",
    "relative_gap",
    "run",
    "run_method",
    "same_iterates",
    "standin_problem",
    "target_table",
    "targets_text",
    "tune",
    "tuned_factor",
    "verdict_counts",
    "verdict_summary",
    "warm_up",
]


class _Labels:
    """``LABELS[m]``: the registry's label of method ``m`` (kept for older callers; use
    :func:`rgrasp_viz.solvers._registry.method_label`)."""

    def __getitem__(self, method):
        return method_label(method)


LABELS = _Labels()
