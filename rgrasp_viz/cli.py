"""Command-line entry point: ``python -m rgrasp_viz demo`` (and ``rgrasp-viz demo``)."""

from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np

from . import METHODS, make_regression, solve
from .result import ConvergenceWarning

_ORDER = ("fght", "grasp", "sght", "svrght", "svrgsp", "svrgsp+")


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
                      help=f"comma-separated subset of {sorted(METHODS)}")
    args = parser.parse_args(argv)
    setting = int(args.setting) if args.setting.isdigit() else args.setting
    prob = make_regression(setting, random_state=args.seed)
    s = round(1.2 * np.count_nonzero(prob.x_true))
    print(f"{prob}\nsparsity s = {s} (1.2 s*), seed {args.seed}\n")
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    print(format_table(comparison_table(prob, s=s, random_state=args.seed, methods=methods)))
    print("\npasses: effective passes over the data (a full gradient = 1); time: solver seconds"
          "\n(objective evaluation and recording excluded); thresholds: hard-thresholding"
          " operations.")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
