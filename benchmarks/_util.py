"""Small helpers shared by the benchmark scripts (tables, medians, timing)."""

from __future__ import annotations

import statistics
import time


def median_time(fn, repeats=5):
    """Median wall time of ``fn()`` over ``repeats`` calls, and the last return value."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


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
