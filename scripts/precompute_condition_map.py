"""Precompute the condition map for the course (the new notebook and the site's rho slider).

Runs ``rgrasp_viz.reproduce.run_condition_map`` (the same runs as
``python -m rgrasp_viz reproduce condition-map``) and stores its record, ``run.json``, as
``notebooks/data/condition-map.json`` (written atomically: the previous copy stays until the
new one is complete)::

    nice -n 10 .venv/bin/python scripts/precompute_condition_map.py --jobs 2     # full size
    .venv/bin/python scripts/precompute_condition_map.py --quick --out /tmp/cm.json

The full size (two shapes, five rho, six methods, three seeds, two tuning seeds) is a long run:
start it with ``nice`` and two jobs, and let it write the record when it is complete.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rgrasp_viz._io import write_text  # noqa: E402
from rgrasp_viz.reproduce import run_condition_map, summarize  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="classroom shapes (for tests)")
    ap.add_argument("--seeds", default="0,1,2", help="comma-separated seeds (default 0,1,2)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--tune-seeds", type=int, default=None,
                    help="tuning seeds (default: 2 at full size, 1 with --quick)")
    ap.add_argument("--refresh", action="store_true",
                    help="solve nothing: recompute the words of the record at --out (winners, "
                         "paragraph) from its numbers (rgrasp_viz.reproduce.summarize)")
    ap.add_argument("--out", type=Path, default=ROOT / "notebooks" / "data" /
                    "condition-map.json", help="the record (default "
                                               "notebooks/data/condition-map.json)")
    args = ap.parse_args(argv)
    if args.refresh:
        record = json.loads(args.out.read_text(encoding="utf-8"))
        record.update(summarize(record["map"], record["constants"],
                                record.get("map_paper_steps")))
        write_text(args.out, json.dumps(record, separators=(",", ":")))
        print(record["claims"])
        return 0
    seeds = tuple(int(s) for s in args.seeds.split(","))
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="condition-map-") as work:
        data = run_condition_map(quick=args.quick, out=Path(work) / "run", seeds=seeds,
                                 jobs=args.jobs, n_tune=args.tune_seeds, png=False)
        record = (Path(work) / "run" / "run.json").read_text(encoding="utf-8")
    write_text(args.out, json.dumps(json.loads(record), separators=(",", ":")))
    print(data["claims"])
    print(f"\nwrote {args.out} ({args.out.stat().st_size / 1e3:.0f} kB) in "
          f"{time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
