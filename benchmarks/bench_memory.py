"""Peak memory of a dense solve, above the matrix itself.

Each case runs in a fresh Python process (``python bench_memory.py --child ...``): it imports
the package, compiles the kernels on a tiny problem, reads its resident set size (RSS), then
fills an ``n x d`` float64 C-contiguous matrix in place (no temporary) and solves. The peak
RSS of the process (``ru_maxrss``) minus the RSS before the matrix, divided by the matrix's
size, is the ratio printed: 1.00 means the solve needed nothing beyond the data; 2.00 means
one full copy of it. The target of issue 29 is at most 1.25 for the built-in methods.

The baseline rows, measured in the same run: the matrix alone (filled, no solve) and one
NumPy gradient ``W.T @ (W @ x - y) / n``; and two cases that copy the data on purpose:
a Fortran-ordered input (``Problem`` stores C-ordered data, which the kernels' row access
needs) and a registered step-5 plug-in (it gets an internal read-only copy, so that it can
never reach the caller's arrays).

Usage::

    python benchmarks/bench_memory.py              # 8000 x 8000 (488 MiB per matrix)
    python benchmarks/bench_memory.py --n 20000    # 20000 x 20000 (3.0 GiB; needs ~7 GiB free)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _util import machine_note, table  # noqa: E402

CASES = [
    ("matrix only", "baseline: the filled matrix, no solve"),
    ("numpy gradient", "baseline: W.T @ (W @ x - y) / n"),
    ("fght", "rv.solve"),
    ("svrgsp", "rv.solve"),
    ("svrgsp+", "rv.solve"),
    ("grasp", "rv.solve"),
    ("svrgsp F-order input", "rv.solve on np.asfortranarray data: one copy"),
    ("plug-in step 5", "rv.register_method: the plug-in's read-only copy"),
]


def _rss_bytes():
    """Current resident set size (Linux /proc; else the peak so far)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # pragma: no cover - not Linux
        return _peak_bytes()


def _peak_bytes():
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def _child(case, n, d, s, max_iter):
    import numpy as np

    import rgrasp_viz as rv

    order = "F" if "F-order" in case else "C"
    plugin = case == "plug-in step 5"
    if plugin:
        rv.register_method("bench_plugin", subsolver=lambda sub: sub.x0 - sub.eta * sub.g)
    method = {"plug-in step 5": "bench_plugin", "svrgsp F-order input": "svrgsp"}.get(case, case)
    rng = np.random.default_rng(0)
    if case not in ("matrix only", "numpy gradient"):  # compile the kernels first
        small = rng.standard_normal((64, 80))
        rv.solve((small, rng.standard_normal(64)), method, s=5, max_iter=2, warn=False)
    before = _rss_bytes()
    W = np.empty((n, d), order=order)
    # fill in place, 16 M entries at a time, by row blocks (C) or column blocks (F): each
    # block is contiguous, as ``out=`` requires
    rows = order == "C"
    step = max(1, (1 << 24) // (d if rows else n))
    for i in range(0, n if rows else d, step):
        rng.standard_normal(out=W[i:i + step] if rows else W[:, i:i + step])
    y = W[:, :s] @ np.ones(s) + 0.1 * rng.standard_normal(n)
    filled = _rss_bytes()
    t0 = time.perf_counter()
    if case == "numpy gradient":
        x = np.zeros(d)
        x[:s] = 1.0
        g = W.T @ (W @ x - y) / n
        del g
    elif case != "matrix only":
        rv.solve((W, y), method, s=s, max_iter=max_iter, warn=False, record=False,
                 random_state=0)
    seconds = time.perf_counter() - t0
    peak = _peak_bytes()
    return {"case": case, "data_mb": W.nbytes / 2**20, "base_mb": before / 2**20,
            "filled_mb": (filled - before) / 2**20, "peak_mb": (peak - before) / 2**20,
            "ratio": (peak - before) / W.nbytes,
            "above_mb": (peak - before - W.nbytes) / 2**20, "seconds": seconds}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=8000, help="rows (and columns, unless --d)")
    ap.add_argument("--d", type=int, default=None, help="columns (default: --n)")
    ap.add_argument("--s", type=int, default=20, help="sparsity level")
    ap.add_argument("--max-iter", type=int, default=3, help="outer iterations per solve")
    ap.add_argument("--cases", nargs="*", default=[c for c, _ in CASES],
                    help="subset of the cases, by name")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    d = args.d or args.n
    if args.child:
        print(json.dumps(_child(args.child, args.n, d, args.s, args.max_iter)))
        return 0
    rows = []
    notes = dict(CASES)
    for case in args.cases:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [str(HERE.parent), os.environ.get("PYTHONPATH", "")]))
        proc = subprocess.run(
            [sys.executable, __file__, "--child", case, "--n", str(args.n), "--d", str(d),
             "--s", str(args.s), "--max-iter", str(args.max_iter)],
            capture_output=True, text=True, env=env, check=False)
        if proc.returncode != 0:
            print(f"{case}: failed\n{proc.stderr[-2000:]}", file=sys.stderr)
            continue
        row = json.loads(proc.stdout.strip().splitlines()[-1])
        row["what"] = notes.get(case, "")
        rows.append(row)
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"{when}; {machine_note()}")
    title = (f"Peak RSS of a dense {args.n} x {d} solve above the RSS before the matrix "
             f"(s={args.s}, max_iter={args.max_iter})")
    print(table(rows, [("case", "case", ""), ("what", "what", ""),
                       ("data_mb", "matrix (MiB)", ".0f"), ("peak_mb", "peak above (MiB)", ".0f"),
                       ("above_mb", "beyond the matrix (MiB)", ".0f"),
                       ("ratio", "peak / matrix", ".2f"), ("seconds", "time (s)", ".1f")],
                title=title))
    return 0


if __name__ == "__main__":
    sys.exit(main())
