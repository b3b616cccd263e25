"""Precompute the paper's Figure 1 at full size for the course (notebook 5 and the site).

Runs ``rgrasp_viz.reproduce.run`` (the same runs, reference and claims as
``python -m rgrasp_viz reproduce fig1-setting1``) and stores a compact copy under
``notebooks/data/``: ``<experiment>.npz`` (per method: passes, solver time, objective,
relative error, support sizes, thresholding counts, and the supports of a few iterations) and
``<experiment>.json`` (settings, F* and its source, claims with their verdicts, the
pass-counting rule); a few hundred kB per experiment.  Notebook 5 reads them with
``rgrasp_viz.reproduce._precomputed.load``::

    .venv/bin/python scripts/precompute_fig1.py                     # setting 1, full size
    .venv/bin/python scripts/precompute_fig1.py fig1-setting1 fig1-setting2 --jobs 2
    .venv/bin/python scripts/precompute_fig1.py --quick --budget 5 --out /tmp/fig1

Like ``reproduce``, it tunes the steps on the tuning seeds, then runs every evaluation seed
(``--seeds``, default 0-4); ``--jobs N`` / ``--scheduler ADDRESS`` spread the runs.  The
figures' traces are the first seed's; the claims carry every seed's verdict.  The folder
given to ``reproduce`` itself (``--work``, default a temporary folder) holds the full traces
and figures; only the compact copy is kept.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rgrasp_viz.reproduce import run  # noqa: E402
from rgrasp_viz.reproduce._precomputed import MAX_SUPPORTS, save  # noqa: E402

FIGURE1 = ("fig1-setting1", "fig1-setting2")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("experiments", nargs="*", default=["fig1-setting1"],
                    help=f"any of {', '.join(FIGURE1)} (default fig1-setting1)")
    ap.add_argument("--quick", action="store_true", help="classroom size (for tests)")
    ap.add_argument("--budget", type=float, default=None,
                    help="effective passes per method (default: reproduce's)")
    ap.add_argument("--seeds", default="0-4",
                    help="evaluation seeds, as reproduce --seeds (default 0-4)")
    ap.add_argument("--jobs", type=int, default=1, help="local worker processes")
    ap.add_argument("--scheduler", default=None, help="address of a Dask scheduler")
    ap.add_argument("--out", type=Path, default=ROOT / "notebooks" / "data",
                    help="where the compact copies go (default notebooks/data)")
    ap.add_argument("--work", type=Path, default=None,
                    help="reproduce's own output folder (default: a temporary folder)")
    ap.add_argument("--max-supports", type=int, default=MAX_SUPPORTS)
    args = ap.parse_args(argv)
    bad = [e for e in args.experiments if e not in FIGURE1]
    if bad:
        ap.error(f"unknown experiment(s) {bad}: choose among {', '.join(FIGURE1)}")
    if args.budget is not None and not args.budget > 0:
        ap.error(f"--budget must be a positive number of passes, got {args.budget}")
    if args.max_supports < 2:
        ap.error(f"--max-supports must be at least 2, got {args.max_supports}")
    args.out.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory(prefix="precompute-fig1-") as tmp:
        for exp in args.experiments:
            work = (args.work or Path(tmp)) / (exp + ("-quick" if args.quick else ""))
            t0 = time.perf_counter()
            report = run(exp, quick=args.quick, out=work, seeds=args.seeds, png=False,
                         budget=args.budget, progress=True, jobs=args.jobs,
                         scheduler=args.scheduler)
            files = save(report, args.out, max_supports=args.max_supports)
            size = sum(f.stat().st_size for f in files)
            print(f"{exp}: {time.perf_counter() - t0:.0f} s; wrote "
                  f"{', '.join(str(f) for f in files)} ({size / 1e3:.0f} kB)", flush=True)
            written += files
    return written


if __name__ == "__main__":
    main()
