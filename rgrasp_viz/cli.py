"""Command-line entry point: ``python -m rgrasp_viz demo|reproduce`` (and ``rgrasp-viz ...``).

* ``demo`` solves a synthetic problem with every method and prints a comparison table.
* ``reproduce EXPERIMENT`` re-runs an experiment of the paper's Section 5, writes figures,
  traces and a claims table (see :mod:`rgrasp_viz.reproduce`).
"""

from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np

from . import make_regression, solve
from .result import ConvergenceWarning
from .solvers.registry import method_names

_ORDER = method_names(paper_only=True)


def comparison_table(problem, s=None, random_state=0, methods=_ORDER, **kwargs):
    """Solve ``problem`` with every method and return the rows of a comparison table.

    Returns
    -------
    list of dict
        One row per method: method, passes, time, objective, rel_error, n_thresholds,
        support_found (fraction of the true support recovered), status.
    """
    rows = []
    true = set(np.flatnonzero(problem.x_true)) if problem.x_true is not None else None
    for m in methods:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            res = solve(problem, method=m, s=s, random_state=random_state, **kwargs)
        found = (len(true & set(np.flatnonzero(res.x))) / len(true)) if true else float("nan")
        rows.append({"method": m, "iterations": res.nit, "passes": res.passes,
                     "time": res.time, "objective": res.fun, "rel_error": res.rel_error,
                     "n_thresholds": int(res.trace.n_thresholds[-1]),
                     "support_found": found, "status": res.message.split(":")[0]})
    return rows


def format_table(rows):
    """Plain-text table of :func:`comparison_table` rows."""
    head = (f"{'method':<9}{'iters':>6}{'passes':>9}{'time [s]':>10}{'objective':>12}"
            f"{'rel. error':>12}{'thresholds':>12}{'support':>9}  status")
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r['method']:<9}{r['iterations']:>6d}{r['passes']:>9.1f}{r['time']:>10.4f}"
            f"{r['objective']:>12.4e}{r['rel_error']:>12.3e}{r['n_thresholds']:>12d}"
            f"{r['support_found']:>8.0%}  {r['status']}")
    return "\n".join(lines)


def main(argv=None):
    """Run the command-line interface."""
    parser = argparse.ArgumentParser(prog="rgrasp-viz", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="solve a synthetic problem with every method")
    demo.add_argument("--setting", default="classroom",
                      help="'classroom' (default), '1' or '2' (the paper's Section 5.2)")
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--methods", default=",".join(_ORDER),
                      help=f"comma-separated subset of {list(method_names())}")
    _add_reproduce(sub)
    args = parser.parse_args(argv)
    if args.command == "reproduce":
        return _reproduce(args)
    setting = int(args.setting) if args.setting.isdigit() else args.setting
    prob = make_regression(setting, random_state=args.seed)
    s = prob.default_s
    print(f"{prob}\nsparsity s = {s} (1.2 s*), seed {args.seed}\n")
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    print(format_table(comparison_table(prob, s=s, random_state=args.seed, methods=methods)))
    print("\npasses: effective passes over the data (a full gradient = 1); time: solver seconds"
          "\n(objective evaluation and recording excluded); thresholds: hard-thresholding"
          " operations.")
    return 0


def _add_reproduce(sub):
    from .reproduce import EXPERIMENTS, PASS_BUDGET

    rep = sub.add_parser(
        "reproduce", help="re-run an experiment of the paper and check its claims",
        description="Run all six methods with the paper's settings on one experiment of "
                    "Section 5; write interactive figures (log objective gap and, on "
                    "synthetic data, estimation error vs effective passes and vs time), "
                    "PNGs when Chromium is available, the traces (.npz), claims.md and "
                    "run.json; print the claims table.")
    rep.add_argument("experiment", choices=list(EXPERIMENTS),
                     help="fig1-setting1/2: synthetic linear regression (Figure 1); "
                          "fig2-rcv1/realsim: logistic regression on real data (Figure 2); "
                          "fig3-rcv1: linear regression on rcv1 (Figure 3)")
    rep.add_argument("--quick", action="store_true",
                     help="classroom size, seconds: synthetic n=500, d=1000, s*=50; real "
                          "data: a tenth of the rows and columns of the file (s=20) if it is "
                          "in the data directory, else a clearly labelled synthetic stand-in "
                          "of that shape with as many nonzeros per row (never downloads)")
    rep.add_argument("--out", default=None,
                     help="output directory (default rgrasp-reproduce/EXPERIMENT[-quick])")
    rep.add_argument("--data-dir", default=None,
                     help="cache directory of the real data sets (default $RGRASP_VIZ_DATA "
                          "or the user cache directory)")
    rep.add_argument("--seed", type=int, default=0,
                     help="seed of the synthetic data and of every index sequence")
    rep.add_argument("--inner", choices=("restricted", "full"), default="restricted",
                     help="SVRGSP(+) inner iterate on T (default) or on all d coordinates")
    rep.add_argument("--budget", type=float, default=None,
                     help="effective passes per method (default: "
                          + ", ".join(f"{k} {v:g}" for k, v in PASS_BUDGET.items()) + ")")
    rep.add_argument("--tune", action="store_true",
                     help="tune the step sizes now on two separately seeded problems (grid of "
                          "multipliers of default_eta) instead of using the recorded factors")
    rep.add_argument("--no-png", action="store_true", help="write HTML figures only")
    rep.add_argument("--no-download", action="store_true",
                     help="never download a real data set (fail with instructions)")


def _reproduce(args):
    from . import datasets
    from .reproduce import print_summary, run

    try:
        report = run(args.experiment, quick=args.quick, out=args.out, data_dir=args.data_dir,
                     seed=args.seed, inner=args.inner, tune_steps=args.tune,
                     png=not args.no_png, download=not args.no_download, budget=args.budget)
    except (datasets.DatasetUnavailableError, datasets.ChecksumError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print_summary(report)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
