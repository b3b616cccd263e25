"""Dashboard responsiveness on the classroom problem (n=500, d=1000, s*=20): one slider change
-> re-solve -> the three figures of ``rv.explore`` updated, measured on the Python side.

The explorer runs in its synchronous mode (``debounce=0``), so setting a slider's value returns
only after the solve and the ``FigureWidget`` updates (including the serialization of the
update messages; without a browser attached nothing is sent over a socket).  Each row changes
one slider ``--repeats`` times to values not seen before (for ``s`` and ``seed`` the GraSP
reference run for F* is recomputed too, and for ``seed`` the data are generated anew) and
reports the median, min and max wall time per change, split into the ``rv.solve`` call and
the rest (figure specs + widget updates).  Target: median <= 150 ms for the default method.

On a busy machine, multi-threaded BLAS in the objective evaluations that ``rv.solve`` does
outside its timed region can dominate (threads waiting for cores); compare with
``OPENBLAS_NUM_THREADS=1``.  The header line prints the load average and BLAS settings.

Usage: ``python benchmarks/bench_dashboards.py [--repeats 15] [--methods svrgsp+,svrght]``.

Notes on choices the dashboards make for speed
----------------------------------------------
* Figure template: the figures use a small hand-written template (white, light grid)
  instead of ``"plotly_white"``, whose validation in ``go.Figure`` / ``FigureWidget`` is much
  slower; it matters when a slider redraws three figures.
* Updates: ``update_figure`` sends one ``plotly_update`` per figure and change, built from the
  builders' plain-dict specs without per-property validation.
* Thresholding cost model (``rgrasp_viz.viz.measured_threshold_cost``): the trace records
  *when* every ``H_s`` happened, not how long it took (timing each one inside the compiled
  epoch would cost more than the operation).  ``t_H(p, k)``, the time to threshold a random
  length-``p`` vector to ``k`` entries, is measured once per ``(p, k)`` (rounded up to
  multiples of 8, cached): for thresholdings inside an epoch (SVRGHT, SG-HT, SVRGSP+'s
  ``H_|T|``) the time of ``rv.hard_threshold`` minus its Python-call overhead (the same call
  on a length-4 vector); for the closing ``H_s`` of an outer iteration, which the solvers call
  from Python, the time of ``rv.top_k`` with its overhead.  Each time is the fastest of 5
  batches of about 0.5 ms, alternating with the overhead batches, so that machine load
  disturbs it as little as possible.  The explorer measures on its first solve of a size;
  the "first rv.explore()" line below includes that.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time
import warnings

import numpy as np
from _util import machine_note, median_time, table

import rgrasp_viz as rv
from rgrasp_viz.viz.dashboards import _explorer as E

warnings.simplefilter("ignore", rv.exceptions.ConvergenceWarning)

TARGET_MS = 150.0


class SolveTimer:
    """Wraps the explorer's ``solve`` to time the solver call inside each change."""

    def __init__(self):
        self.orig = E.solve
        self.times = []

    def __call__(self, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            return self.orig(*args, **kwargs)
        finally:
            self.times.append(time.perf_counter() - t0)

    def __enter__(self):
        E.solve = self
        return self

    def __exit__(self, *exc):
        E.solve = self.orig


def slider_values(dash, key, repeats):
    """``repeats`` new values for slider ``key`` around its current value."""
    w = dash.sliders[key]
    v0 = w.value
    if key == "eta":
        # at most the default: SVRGHT diverges a little above its default step
        return [float(v0 * f) for f in np.geomspace(0.6, 1.0, repeats)]
    if key == "s":
        vals = [v for v in range(max(1, v0 - repeats), w.max + 1) if v != v0]
        return sorted(vals, key=lambda v: (abs(v - v0), v))[:repeats]
    if key == "seed":
        return [int(v0) + 1 + k for k in range(repeats)]
    raise ValueError(key)


def bench_changes(dash, method, key, repeats):
    dash.set(method=method)  # not timed
    dash._refs.clear()  # nothing cached from earlier rows: GraSP reference runs for F*
    dash._problems.clear()  # ... and generated data
    vals = slider_values(dash, key, repeats)
    walls, solves, solver = [], [], []
    diverged = 0
    with SolveTimer() as timer:
        for v in vals:
            n = len(timer.times)
            t0 = time.perf_counter()
            dash.sliders[key].value = v
            walls.append(time.perf_counter() - t0)
            solves.append(sum(timer.times[n:]))
            solver.append(dash.last_result.time)
            # a diverged run (SVRGHT's step window is narrow: a larger s at a fixed eta can
            # leave it) still costs a full solve; it is counted, and the plots stay
            diverged += dash.error is not None
            got = dash.last_result.trace.meta[{"seed": "random_state"}.get(key, key)]
            assert math.isclose(got, v, rel_tol=1e-9), (key, got, v)
    ms = [1e3 * w for w in walls]
    rest = [1e3 * (w - s) for w, s in zip(walls, solves, strict=True)]
    return {"method": method, "slider": key, "changes": len(vals),
            "median": statistics.median(ms), "min": min(ms), "max": max(ms),
            "solve": 1e3 * statistics.median(solves), "solver": 1e3 * statistics.median(solver),
            "rest": statistics.median(rest),
            "diverged": diverged,
            "ok": "yes" if statistics.median(ms) <= TARGET_MS else "no"}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--methods", default="svrgsp+,svrgsp,svrght,grasp,fght")
    args = ap.parse_args(argv)
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]

    t0 = time.perf_counter()
    dash = rv.explore(debounce=0)  # classroom: n=500, d=1000, s*=20, s=24
    build = time.perf_counter() - t0
    print("# rgrasp_viz dashboard benchmark\n")
    blas = ", ".join(f"{v}={os.environ[v]}" for v in ("OPENBLAS_NUM_THREADS",
                                                       "OMP_NUM_THREADS", "MKL_NUM_THREADS")
                     if v in os.environ) or "BLAS threads not limited"
    print(f"{dash.problem}, s = {dash.sliders['s'].value}; {machine_note()}; {blas}\n")
    print(f"first rv.explore() in this process (imports, Numba cache load, first solve, "
          f"figure widgets): {build:.2f} s\n")
    # warm every method once (Numba kernels, cost-model measurements), not timed
    for m in methods:
        dash.set(method=m)
    rows = []
    for m in methods:
        for key in ("eta", "s", "seed"):
            dash.set(method=m)
            if not dash.sliders[key].disabled:  # GraSP has no step size
                rows.append(bench_changes(dash, m, key, args.repeats))
    print(table(rows, [
        ("method", "method", ""), ("slider", "slider", ""), ("changes", "changes", "d"),
        ("median", "median ms", ".1f"), ("min", "min ms", ".1f"), ("max", "max ms", ".1f"),
        ("solve", "rv.solve ms (median)", ".1f"), ("solver", "solver time ms", ".1f"),
        ("rest", "figures + widgets ms", ".1f"), ("diverged", "diverged runs", "d"),
        ("ok", f"median <= {TARGET_MS:.0f} ms", "")],
        "slider change -> re-solve -> figures updated (Python side, synchronous mode)"))

    # replay: one frame of rv.play (no solve)
    res = rv.solve(dash.problem, "svrgsp+", s=dash.sliders["s"].value, random_state=0,
                   record_iterates=True, warn=False)
    pl = rv.play(res)
    k = iter(range(1, len(pl.frames)))
    secs, _ = median_time(lambda: pl.slider.__setattr__("value", next(k)), args.repeats)
    cmp_ = rv.compare(dash.problem, methods=("svrght", "svrgsp", "svrgsp+"),
                      s=dash.sliders["s"].value)
    j = iter(range(1, len(cmp_.grid)))
    secs_c, _ = median_time(lambda: cmp_.slider.__setattr__("value", next(j)), args.repeats)
    print(table([{"what": "rv.play: next frame (coefficients, objective, cursor)",
                  "ms": 1e3 * secs},
                 {"what": "rv.compare: next position (3 methods)", "ms": 1e3 * secs_c}],
                [("what", "what", ""), ("ms", "median ms", ".1f")], "replay"))
    dash.close()


if __name__ == "__main__":
    main()
