"""Re-execute the course notebooks in place, the way they are committed.

Run this after any change to the package that can change what the notebooks print (solver
core, figures, dashboards), then commit the refreshed notebooks::

    .venv/bin/python scripts/execute_notebooks.py            # every course notebook
    .venv/bin/python scripts/execute_notebooks.py 02 04      # only 02-*.ipynb and 04-*.ipynb

Each notebook is executed top to bottom in a fresh kernel with::

    jupyter nbconvert --to notebook --execute --inplace
        --ExecutePreprocessor.store_widget_state=False
        --ExecutePreprocessor.record_timing=False

(no widget state and no per-cell timestamps in the committed file), with
``RGRASP_VIZ_STANDIN=1`` so that notebook 06 uses its synthetic stand-in even on a machine
that has the real rcv1 file cached -- the same setting
``tests/notebooks/test_notebooks.py`` uses when it replays the notebooks with nbval.  The
script prints each notebook's execution time and size and exits non-zero if a notebook
fails, takes longer than ``--budget`` seconds, or exceeds 1 MB.

The course notebooks are ``notebooks/NN-*.ipynb`` (``045-*`` sits between 4 and 5);
``notebooks/app.ipynb`` (the Voila app)
has its own owner and is executed only with ``--include-app``.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
MAX_BYTES = 1_000_000


def course_notebooks():
    """The course notebooks, in order: ``notebooks/NN-*.ipynb`` (and ``NNN-*.ipynb``, a notebook
    between two: ``045-`` sorts between ``04-`` and ``05-``)."""
    return sorted(p for p in NOTEBOOKS.glob("[0-9][0-9]*-*.ipynb"))


def execute(path, timeout=600):
    """Execute ``path`` in place; return ``(wall seconds, CPU seconds, CompletedProcess)``.

    CPU seconds are those of nbconvert and the kernel (user + system): on a busy machine they
    say more about the notebook than the wall time does."""
    cmd = [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
           "--inplace", "--ExecutePreprocessor.store_widget_state=False",
           "--ExecutePreprocessor.record_timing=False",
           f"--ExecutePreprocessor.timeout={int(timeout)}", str(path)]
    env = dict(os.environ, RGRASP_VIZ_STANDIN="1", PYDEVD_DISABLE_FILE_VALIDATION="1")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("select", nargs="*",
                        help="notebook number prefixes or names (default: all course notebooks)")
    parser.add_argument("--include-app", action="store_true",
                        help="also execute notebooks/app.ipynb")
    parser.add_argument("--budget", type=float, default=60.0,
                        help="seconds a notebook may take (default 60; exceeded -> exit 1)")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="seconds per cell before nbconvert gives up (default 600)")
    args = parser.parse_args(argv)

    paths = course_notebooks()
    if args.select:
        paths = [p for p in paths if any(p.name.startswith(s) or p.name == s for s in args.select)]
    if args.include_app:
        paths.append(NOTEBOOKS / "app.ipynb")
    if not paths:
        parser.error("no notebook matches")

    failed = []
    print(f"{'notebook':34s} {'wall [s]':>8s} {'CPU [s]':>8s} {'bytes':>10s}")
    for path in paths:
        seconds, cpu, proc = execute(path, args.timeout)
        size = path.stat().st_size
        problems = []
        if proc.returncode != 0:
            problems.append("execution failed:\n" + proc.stderr[-3000:])
        if seconds > args.budget:
            problems.append(f"took {seconds:.0f} s > budget {args.budget:.0f} s")
        if size >= MAX_BYTES:
            problems.append(f"{size:,} bytes >= {MAX_BYTES:,}")
        status = "ok" if not problems else "FAILED"
        print(f"{path.name:34s} {seconds:8.1f} {cpu:8.1f} {size:10,d}  {status}", flush=True)
        for p in problems:
            print("    " + p.replace("\n", "\n    "))
        if problems:
            failed.append(path.name)
    if failed:
        print(f"\n{len(failed)} notebook(s) failed: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
