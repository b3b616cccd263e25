"""Peer benchmarks: our six methods against other sparse-regression solvers (Markdown tables).

On the same synthetic data and seeds (the paper's setting 1 scaled down to n=500, d=1000,
s*=50, and the classroom problem n=500, d=1000, s*=20; s = 1.2 s*), every solver gets the
same ``(W, y, s)`` and we report, as medians over the seeds: wall time of the fit, relative
estimation error ``||x - x*|| / ||x*||`` and true-support recovery (fraction of ``supp(x*)``
in the estimate's support).

Peers (optional; a missing one is skipped with a note):

* scikit-learn ``OrthogonalMatchingPursuit(n_nonzero_coefs=s, fit_intercept=False)``;
* abess ``LinearRegression(support_size=s, fit_intercept=False)`` (splicing);
* skscope ``ScopeSolver`` (splicing) and ``GraspSolver`` with the objective
  ``||y - W x||^2 / (2n)`` written in JAX (``jit=True``).

Ours: ``rv.solve`` with default stopping rules and the step sizes of ``reproduce`` (the
multipliers of ``default_eta`` tuned for the quick Figure 1 experiments); the wall time is the
whole ``solve`` call (objective evaluation and trace recording included).

Every (solver, size) pair is run once untimed first (JIT compilation: Numba for us, JAX for
skscope); each fit is then timed ``--repeats`` times and the median kept.

Usage: ``python benchmarks/bench_peers.py [--seeds 3] [--repeats 1] [--quick]``
(``--quick``: one seed, classroom size only).
"""

from __future__ import annotations

import argparse
import os
import statistics
import warnings

import numpy as np
from _util import median_time, table

import rgrasp_viz as rv
from rgrasp_viz import reproduce as R

warnings.simplefilter("ignore", rv.ConvergenceWarning)

SIZES = {
    "setting 1 / 5 (n=500, d=1000, s*=50)": {"n": 500, "d": 1000, "s_star": 50},
    "classroom (n=500, d=1000, s*=20)": {"n": 500, "d": 1000, "s_star": 20},
}


def ours(method):
    """Fit function of one of our methods (tuned step-size multiplier of ``reproduce``)."""
    factor = R.tuned_factor("fig1-setting1", True, method)[0] if method != "grasp" else 1.0

    def fit(prob, s, seed):
        eta = factor * rv.default_eta(prob, method, s)
        return rv.solve(prob, method=method, s=s, eta=eta, random_state=seed, warn=False).x

    return fit


def peers():
    """``(name, fit)`` of the installed peers, and notes about the missing ones."""
    found, notes = [], []
    try:
        from sklearn.linear_model import OrthogonalMatchingPursuit

        def omp(prob, s, seed):
            est = OrthogonalMatchingPursuit(n_nonzero_coefs=s, fit_intercept=False)
            return est.fit(prob.W, prob.y).coef_

        found.append(("OMP (scikit-learn)", omp))
    except ImportError:
        notes.append("scikit-learn not installed: OMP skipped (pip install scikit-learn)")
    try:
        from abess import LinearRegression

        def abess_fit(prob, s, seed):
            est = LinearRegression(support_size=s, fit_intercept=False)
            return est.fit(prob.W, prob.y).coef_

        found.append(("abess LinearRegression", abess_fit))
    except ImportError:
        notes.append("abess not installed: skipped (pip install abess)")
    try:
        import jax.numpy as jnp
        from skscope import GraspSolver, ScopeSolver

        def skscope_fit(cls):
            def fit(prob, s, seed):
                W, y, n = prob.W, prob.y, prob.n

                def objective(x):
                    r = y - W @ x
                    return jnp.sum(r * r) / (2 * n)

                solver = cls(prob.d, sparsity=s, random_state=seed)
                return np.asarray(solver.solve(objective, jit=True))

            return fit

        found.append(("skscope ScopeSolver", skscope_fit(ScopeSolver)))
        found.append(("skscope GraspSolver", skscope_fit(GraspSolver)))
    except ImportError:
        notes.append("skscope (and jax) not installed: skipped (pip install skscope)")
    return found, notes


def recovery(x, x_true):
    """Fraction of the true support found in ``supp(x)``."""
    true = np.flatnonzero(x_true)
    return float(np.isin(true, np.flatnonzero(x)).mean()) if len(true) else float("nan")


def bench(size, seeds, repeats, solvers):
    """Median time, error and recovery of every solver over ``seeds`` on one size."""
    probs = [rv.make_regression(**SIZES[size], random_state=seed) for seed in seeds]
    s = round(1.2 * SIZES[size]["s_star"])
    rows = []
    for name, fit in solvers:
        fit(probs[0], s, seeds[0])  # untimed: JIT compilation
        times, errs, recs, nnz = [], [], [], []
        for prob, seed in zip(probs, seeds, strict=True):
            secs, x = median_time(lambda f=fit, p=prob, sd=seed: f(p, s, sd), repeats)
            x = np.asarray(x, dtype=float).ravel()
            times.append(secs)
            errs.append(prob.rel_error(x))
            recs.append(recovery(x, prob.x_true))
            nnz.append(int(np.count_nonzero(x)))
        rows.append({"solver": name, "seconds": statistics.median(times),
                     "rel_error": statistics.median(errs), "recovery": statistics.median(recs),
                     "nnz": int(statistics.median(nnz))})
    fastest = min(r["seconds"] for r in rows)
    for r in rows:
        r["vs_fastest"] = r["seconds"] / fastest
    return rows, s


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=3, help="data seeds 0..N-1 (default 3)")
    ap.add_argument("--repeats", type=int, default=1, help="timings per fit (median)")
    ap.add_argument("--quick", action="store_true", help="one seed, classroom size only")
    args = ap.parse_args(argv)
    seeds = list(range(1 if args.quick else args.seeds))
    sizes = [k for k in SIZES if not args.quick or k.startswith("classroom")]
    others, notes = peers()
    solvers = [(f"{R.LABELS[m]} (rgrasp_viz)", ours(m)) for m in R.METHODS] + others
    load = "/".join(f"{v:.1f}" for v in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    print(f"# Peer benchmarks\n\nseeds {seeds}, {args.repeats} timing(s) per fit, medians over "
          f"seeds; s = 1.2 s*; wall seconds per fit; {os.cpu_count()} CPUs, load average "
          f"{load} at the start.\n")
    for note in notes:
        print(f"* {note}")
    if notes:
        print()
    for size in sizes:
        rows, s = bench(size, seeds, args.repeats, solvers)
        print(table(rows, [("solver", "solver", ""), ("seconds", "seconds", ".4f"),
                           ("vs_fastest", "x fastest", ".1f"),
                           ("rel_error", "rel. error", ".2e"),
                           ("recovery", "true support found", ".0%"),
                           ("nnz", "nonzeros", "d")],
                    f"{size}, s = {s}"))


if __name__ == "__main__":
    main()
