"""The end-of-run minimiser probe: what it costs next to the run, and whom it flags (Markdown).

For the ``reproduce --quick`` synthetic problems (settings 1 and 2: n=500, d=1000, s*=50,
s=60, Σ = I and equicorrelated 0.1), each method with a step at 0.25-4x its default step and
GraSP, over ``--seeds`` seeds (data and index sequence), ``rv.solve`` with its defaults.  For
every run that stopped at a tolerance and was probed: the status, ``F`` over the lowest ``F``
of its sweep (setting and seed), the probe's ratio (exact fit on the run's own support over
the fit on the probe's support; ``SUPPORT_FACTOR`` flags above it), the probe's passes by the
work rule next to the run's, and the probe's seconds next to the run's solver seconds
(measured in the same process, on this machine: see the load line).

Usage: ``python benchmarks/bench_status_probe.py [--seeds 2]``
"""

from __future__ import annotations

import argparse
import warnings

from _util import machine_note, table

import rgrasp_viz as rv
from rgrasp_viz.exceptions import ConvergenceWarning
from rgrasp_viz.solvers._driver import SUPPORT_FACTOR

METHODS = ("svrgsp+", "svrgsp", "svrght", "sght", "fght", "grasp")
FACTORS = (0.25, 0.5, 1.0, 2.0, 4.0)


def sweep(setting, seed):
    prob = rv.make_regression(n=500, d=1000, s_star=50,
                              correlation=0.1 if setting == 2 else 0.0, random_state=seed)
    s = prob.default_s
    runs = []
    for m in METHODS:
        for f in (FACTORS if rv.get_method(m).has_step else (1.0,)):
            eta = f * rv.default_eta(prob, m, s) if rv.get_method(m).has_step else None
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                runs.append((m, f, rv.solve(prob, m, s=s, eta=eta, random_state=seed)))
    best = min(r.fun for _, _, r in runs)
    rows = []
    for m, f, r in runs:
        check = r.trace.meta["minimiser_check"]
        if check is None:
            continue
        rows.append({"setting": setting, "seed": seed, "method": rv.get_method(m).label,
                     "factor": f, "status": r.status.name, "F/best": r.fun / best,
                     "ratio": check["F_support"] / check["F_probe"],
                     "passes": r.passes, "probe_passes": check["passes"],
                     "seconds": r.time, "probe_seconds": check["time"],
                     "rel_error": r.rel_error})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=2)
    args = ap.parse_args()
    rows = [r for setting in (1, 2) for seed in range(args.seeds) for r in sweep(setting, seed)]
    print(machine_note())
    print(f"SUPPORT_FACTOR = {SUPPORT_FACTOR:g}\n")
    print(table(rows, [("setting", "setting", ""), ("seed", "seed", ""),
                       ("method", "method", ""), ("factor", "step × default", "g"),
                       ("status", "status", ""), ("F/best", "F / best of sweep", ".3g"),
                       ("ratio", "own fit / probe", ".3g"), ("passes", "run passes", ".0f"),
                       ("probe_passes", "probe passes", ".0f"),
                       ("seconds", "run s", ".3g"), ("probe_seconds", "probe s", ".3g"),
                       ("rel_error", "rel. error", ".2g")],
                title="Runs probed at their end (stopped at a tolerance)"))
    conv = [r for r in rows if r["status"] == "CONVERGED"]
    flagged = [r for r in rows if r["status"] == "HT_FIXED_POINT"]
    if conv:
        print(f"CONVERGED: {len(conv)} runs, F / best of sweep at most "
              f"{max(r['F/best'] for r in conv):.3g}, probe ratio at most "
              f"{max(r['ratio'] for r in conv):.3g}")
    if flagged:
        print(f"HT_FIXED_POINT: {len(flagged)} runs, F / best of sweep "
              f"{min(r['F/best'] for r in flagged):.3g} to {max(r['F/best'] for r in flagged):.3g}"
              f", probe ratio at least {min(r['ratio'] for r in flagged):.3g}")
    print(f"probe seconds / run seconds: at most "
          f"{max(r['probe_seconds'] / max(r['seconds'], 1e-12) for r in rows):.3g}")


if __name__ == "__main__":
    main()
