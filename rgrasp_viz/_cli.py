"""Command-line entry point: ``python -m rgrasp_viz demo|reproduce`` (and ``rgrasp-viz ...``).

* ``demo`` solves a synthetic problem with every method and prints a comparison table.
* ``reproduce EXPERIMENT`` re-runs an experiment of the paper's Section 5, writes figures,
  traces and a claims table (see :mod:`rgrasp_viz.reproduce`).

Every argument is checked before any work: a bad value prints one line on stderr and exits
with code 2 (argparse's convention), never a traceback.
"""

from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np

from . import make_regression, solve
from .exceptions import ConvergenceWarning
from .reproduce import _command as command
from .solvers._registry import get_method, method_names, run_label

_ORDER = method_names(paper_only=True)

SETTINGS = ("classroom", "1", "2")
"""``demo --setting`` values (:func:`rgrasp_viz.make_regression`)."""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line: ``prog: error: message (see --help)``."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def comparison_table(problem, s=None, random_state=0, methods=_ORDER, **kwargs):
    """Solve ``problem`` with every method and return the rows of a comparison table.

    Returns
    -------
    list of dict
        One row per method: method, label (with the reading of Algorithm 2), iterations,
        passes, time, objective, rel_error, n_thresholds, support_found (fraction of the
        true support recovered), status.
    """
    rows = []
    true = set(np.flatnonzero(problem.x_true)) if problem.x_true is not None else None
    for m in methods:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            res = solve(problem, method=m, s=s, random_state=random_state, **kwargs)
        found = (len(true & set(np.flatnonzero(res.x))) / len(true)) if true else float("nan")
        rows.append({"method": m, "label": run_label(m, res.trace.meta.get("inner")),
                     "iterations": res.nit, "passes": res.passes,
                     "time": res.time, "objective": res.fun, "rel_error": res.rel_error,
                     "n_thresholds": int(res.trace.n_thresholds[-1]),
                     "support_found": found, "status": res.message.split(":")[0]})
    return rows


def format_table(rows):
    """Plain-text table of :func:`comparison_table` rows."""
    width = max([9] + [len(r.get("label", r["method"])) + 1 for r in rows])
    head = (f"{'method':<{width}}{'iters':>6}{'passes':>9}{'time [s]':>10}{'objective':>12}"
            f"{'rel. error':>12}{'thresholds':>12}{'support':>9}  status")
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r.get('label', r['method']):<{width}}{r['iterations']:>6d}{r['passes']:>9.1f}"
            f"{r['time']:>10.4f}{r['objective']:>12.4e}{r['rel_error']:>12.3e}"
            f"{r['n_thresholds']:>12d}{r['support_found']:>8.0%}  {r['status']}")
    return "\n".join(lines)


# -- argument types (each raises ArgumentTypeError with the message the user sees) ------------


def _setting(text):
    if text not in SETTINGS:
        raise argparse.ArgumentTypeError(f"must be one of {', '.join(SETTINGS)} (the "
                                         f"classroom problem or the paper's settings), "
                                         f"got {text!r}")
    return int(text) if text.isdigit() else text


def _methods(text):
    names = [m.strip() for m in text.split(",") if m.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"names no method (got {text!r}); give a "
                                         f"comma-separated subset of {', '.join(method_names())}")
    out = []
    for m in names:
        try:
            out.append(get_method(m).name)
        except ValueError:
            raise argparse.ArgumentTypeError(f"unknown method {m!r}; choose from "
                                             f"{', '.join(method_names())}") from None
    return out


def build_parser():
    """The ``rgrasp-viz`` argument parser (sub-commands ``demo`` and ``reproduce``)."""
    parser = _Parser(prog="rgrasp-viz", description=__doc__,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="solve a synthetic problem with every method")
    demo.add_argument("--setting", type=_setting, default="classroom",
                      help="'classroom' (default), '1' or '2' (the paper's Section 5.2)")
    demo.add_argument("--seed", type=command.seed_arg, default=0,
                      help="data and index seed (>= 0)")
    demo.add_argument("--methods", type=_methods, default=list(_ORDER),
                      help=f"comma-separated subset of {', '.join(method_names())}")
    demo.set_defaults(check=None, handler=_demo)
    parser.subcommands = {"demo": demo, "reproduce": command.add_parser(sub)}
    return parser


def main(argv=None):
    """Run the command-line interface; return the exit code (2: a user error)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.check is not None:  # exits with code 2 on a bad combination, before any work
        args.check(args, parser.subcommands[args.command])
    return args.handler(args)


def _demo(args):
    prob = make_regression(args.setting, random_state=args.seed)
    s = prob.default_s
    print(f"{prob}\nsparsity s = {s} (1.2 s*), seed {args.seed}\n")
    print(format_table(comparison_table(prob, s=s, random_state=args.seed,
                                        methods=args.methods)))
    print("\npasses: effective passes over the data (a full gradient = 1); time: solver seconds"
          "\n(objective evaluation and recording excluded); thresholds: hard-thresholding"
          " operations.")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
