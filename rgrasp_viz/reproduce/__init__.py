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

from ._claims import (
    AGREEMENT,
    CLAIMS,
    CONTRADICTED,
    MIXED,
    NA,
    NOT_SHOWN,
    PASS_RULE,
    SPEED_LEVEL,
    SUPPORTED,
    TIE,
    VERDICTS,
    aggregate_claims,
    evaluate_claims,
    format_claims,
    verdict_summary,
)
from ._command import parse_seeds, run
from ._condition_map import (
    build_map_problem,
    run_condition_map,
    smoothness,
    summarize,
)
from ._experiments import EXPERIMENTS, PASS_BUDGET, Experiment
from ._parallel import run_tasks
from ._precomputed import load as load_precomputed
from ._report import Report
from ._tuning import TUNED_FACTORS, tuned_factor
from ._verdict_table import VerdictTable, claims_html

# the public API of the reproduction (one home per name: F* is rgrasp_viz.reference's, first
# crossings rgrasp_viz.analysis's); the other names imported above serve the package's own
# modules and tests
__all__ = [
    "AGREEMENT",
    "CLAIMS",
    "CONTRADICTED",
    "EXPERIMENTS",
    "MIXED",
    "NA",
    "NOT_SHOWN",
    "PASS_BUDGET",
    "PASS_RULE",
    "SPEED_LEVEL",
    "SUPPORTED",
    "TIE",
    "TUNED_FACTORS",
    "VERDICTS",
    "Experiment",
    "Report",
    "VerdictTable",
    "aggregate_claims",
    "build_map_problem",
    "claims_html",
    "evaluate_claims",
    "format_claims",
    "load_precomputed",
    "parse_seeds",
    "run",
    "run_condition_map",
    "run_tasks",
    "smoothness",
    "summarize",
    "tuned_factor",
    "verdict_summary",
]
