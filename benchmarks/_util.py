"""Small helpers shared by the benchmark scripts (tables, medians, timing)."""

from __future__ import annotations

import statistics
import time

CLOCK = {"now": time.perf_counter, "name": "wall time"}
"""The clock of :func:`median_time` (and of the solver after :func:`use_cpu_clock`)."""


def median_time(fn, repeats=5):
    """Median time of ``fn()`` over ``repeats`` calls, and the last return value."""
    now = CLOCK["now"]
    times, out = [], None
    for _ in range(repeats):
        t0 = now()
        out = fn()
        times.append(now() - t0)
    return statistics.median(times), out


def use_cpu_clock():
    """Time with this process's CPU time instead of wall time (``--cpu-time``).

    On a machine shared with other jobs, wall time counts the time the process waits for a
    core; the solver is single-threaded, so its CPU time estimates the wall time it would
    take on an idle machine.  BLAS is limited to one thread (its idle worker threads spin
    and would add their CPU time).  Switches :func:`median_time` and the solver's own
    timer (``SolveResult.time``, the trace's time axis).  Returns the clock's name.
    """
    import types

    import rgrasp_viz.solvers._driver as driver

    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
    except ImportError:  # pragma: no cover - optional
        pass
    driver.time = types.SimpleNamespace(perf_counter=time.process_time)
    CLOCK.update(now=time.process_time, name="process CPU time")
    return CLOCK["name"]


def table(rows, columns, title=None):
    """Render ``rows`` (dicts) as a Markdown table with the given ``(key, header, fmt)``."""
    lines = []
    if title:
        lines += [f"### {title}", ""]
    lines.append("| " + " | ".join(h for _, h, _ in columns) + " |")
    lines.append("|" + "|".join("---" for _ in columns) + "|")
    for r in rows:
        cells = []
        for key, _, fmt in columns:
            v = r.get(key, "")
            cells.append(format(v, fmt) if isinstance(v, (int, float)) and fmt else str(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def machine_note():
    """One line on the machine's state (CPUs and load average), to print with the timings."""
    import os

    try:
        load = "/".join(f"{v:.1f}" for v in os.getloadavg())
    except (AttributeError, OSError):  # pragma: no cover - not on every platform
        load = "n/a"
    return f"{os.cpu_count()} CPUs, load average (1/5/15 min) {load}"


def method_runs():
    """``(method, inner)`` of every registered method; both readings where it has them."""
    from rgrasp_viz.solvers import _registry as R

    return [(name, inner) for name in R.method_names()
            for inner in (R.get_method(name).readings or (None,))]
