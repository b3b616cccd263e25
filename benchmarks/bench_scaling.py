"""Time per effective pass against n and d, every method, dense and CSR, next to the gradient
floor (Markdown table, log-log plot).

Two sweeps: n = 1e3 ... 1e5 at d = 1e3, and d = 1e3 ... 1e5 at n = 1e3 (paper-style synthetic
regression, s* = 20, s = 24; CSR designs with about 50 nonzeros per row,
``make_regression(sparse_density=min(1, 50 / d))``).  Each method (the registry's; SVRGSP(+) in
both readings of Algorithm 2) runs a few outer iterations with default settings and no
stopping rule; its cost is ``(time_end - time_1) / (passes_end - passes_1)`` from its trace,
i.e. solver seconds per effective pass after the first iteration (which also allocates the
method's workspace), the smaller of two runs (a busy machine only ever adds time).  The
floor is one call of the full-gradient kernel on the same data (median of 7): the cost of one
pass for a method that does nothing but read the data once.  The "floors" columns give each
method's cost in floors.

Dense points larger than ``--max-dense-mb`` (default 1000 MB) are skipped and listed.  The plot
(plotly, log-log, one panel per sweep and format) is written to
``benchmarks/out/scaling.html`` and, when kaleido and Chromium work, ``scaling.png``; both
atomically.  The whole script takes about 4 minutes on a busy 2-core machine
(``--quick``: three points per sweep, about 2 minutes).

Usage: ``python benchmarks/bench_scaling.py [--quick] [--max-dense-mb 1000] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
import warnings
from pathlib import Path

import numpy as np
from _util import machine_note, method_runs, table

import rgrasp_viz as rv
from rgrasp_viz import _kernels as K
from rgrasp_viz._io import atomic_path
from rgrasp_viz.solvers import _registry as R
from rgrasp_viz.solvers._common import csr_arrays

warnings.simplefilter("ignore", rv.exceptions.ConvergenceWarning)

S_STAR = 20
ROW_NNZ = 50
ITERS = {"fght": 8, "grasp": 4, "sght": 4}  # outer iterations per run; epochs: 3
EPOCH_ITERS = 3
RUNS = 2  # runs per method and point; the cheaper counts
OUT = Path(__file__).resolve().parent / "out"


def grid(quick):
    values = [1000, 10000, 100000] if quick else [1000, 3000, 10000, 30000, 100000]
    return [("n", v, 1000) for v in values] + [("d", 1000, v) for v in values]




def floor(prob, x):
    """Median seconds of one full-gradient kernel call at ``x``."""
    g, r = np.empty(prob.d), np.empty(prob.n)
    if prob.is_sparse:
        arrays = csr_arrays(prob.W)

        def grad():
            K.full_gradient_csr(*arrays, prob.y, 0, x, r, g)
    else:
        sup = np.flatnonzero(x)
        xs = x[sup]

        def grad():
            K.full_gradient_dense(prob.W, prob.y, 0, sup, xs, r, g)
    grad()
    times = []
    for _ in range(7):
        t0 = time.perf_counter()
        grad()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def per_pass(prob, method, inner):
    kw = {} if inner is None else {"inner": inner}
    iters = ITERS.get(method, EPOCH_ITERS) + 1
    best = float("inf")
    for seed in range(RUNS):
        res = rv.solve(prob, method=method, max_iter=iters, tol=0, ftol=0, random_state=seed,
                       warn=False, **kw)
        tr = res.trace
        if tr.n_iter < 2:
            return float("nan")
        best = min(best, float((tr.time[-1] - tr.time[1]) / (tr.passes[-1] - tr.passes[1])))
    return best


def measure(args):
    rows, skipped = [], []
    rv.solve(rv.make_regression("classroom", random_state=0), max_iter=1, warn=False)  # JIT
    for sparse in (False, True):
        for axis, n, d in grid(args.quick):
            fmt = "CSR" if sparse else "dense"
            if not sparse and n * d * 8 / 2**20 > args.max_dense_mb:
                skipped.append(f"dense n={n}, d={d} ({n * d * 8 / 2**20:.0f} MB)")
                continue
            prob = rv.make_regression(n=n, d=d, s_star=S_STAR, random_state=0,
                                      sparse_density=min(1.0, ROW_NNZ / d) if sparse else None)
            x = rv.solve(prob, method="fght", max_iter=2, warn=False).x
            base = floor(prob, x)
            point = {"axis": axis, "n": n, "d": d, "format": fmt}
            rows.append(point | {"run": "gradient floor", "method": None, "sec": base,
                                 "floors": 1.0})
            for method, inner in method_runs():
                sec = per_pass(prob, method, inner)
                rows.append(point | {"run": R.run_label(method, inner), "method": method,
                                     "inner": inner, "sec": sec, "floors": sec / base})
            print(f"  done: {fmt} n={n} d={d} ({time.strftime('%H:%M:%S')})", flush=True)
            del prob
    return rows, skipped


def figure(rows):
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    panels = [("n", "dense"), ("d", "dense"), ("n", "CSR"), ("d", "CSR")]
    fig = make_subplots(rows=2, cols=2, subplot_titles=[
        f"{fmt}: vary {ax} ({'d' if ax == 'n' else 'n'} = 1000)" for ax, fmt in panels],
        horizontal_spacing=0.08, vertical_spacing=0.12)
    labels = list(dict.fromkeys(r["run"] for r in rows))
    for k, (ax, fmt) in enumerate(panels):
        rr, cc = divmod(k, 2)
        for label in labels:
            pts = [r for r in rows if r["run"] == label and r["format"] == fmt
                   and r["axis"] == ax and math.isfinite(r["sec"])]
            if not pts:
                continue
            method = pts[0]["method"]
            floor_line = method is None
            fig.add_trace(go.Scatter(
                x=[p[ax] for p in pts], y=[p["sec"] for p in pts], name=label,
                legendgroup=label, showlegend=k == 0, mode="lines+markers",
                line={"color": "black" if floor_line else R.method_color(method),
                      "dash": "dash" if floor_line or (pts[0].get("inner") == "on_T") else
                      "solid", "width": 3 if floor_line else 2}),
                row=rr + 1, col=cc + 1)
        fig.update_xaxes(type="log", title_text=ax, row=rr + 1, col=cc + 1)
        fig.update_yaxes(type="log", title_text="seconds per effective pass", row=rr + 1,
                         col=cc + 1)
    fig.update_layout(width=1200, height=900, title="Time per effective pass vs the gradient "
                      "floor (one full-gradient kernel call)")
    return fig


def write(fig, out):
    from rgrasp_viz.viz.figures import export

    out.mkdir(parents=True, exist_ok=True)
    written = []
    html = out / "scaling.html"
    with atomic_path(html) as tmp:
        export(fig, tmp)
    written.append(str(html))
    png = out / "scaling.png"
    try:
        with atomic_path(png) as tmp:
            export(fig, tmp)
        written.append(str(png))
    except (RuntimeError, OSError) as exc:
        written.append(f"(no PNG: {exc})")
    return written


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="three points per sweep")
    ap.add_argument("--max-dense-mb", type=float, default=1000.0)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    print(f"# Scaling: time per effective pass against n and d\n\ns* = {S_STAR}, s = "
          f"{round(1.2 * S_STAR)}; CSR rows with about {ROW_NNZ} nonzeros; {machine_note()} at "
          f"start\n", flush=True)
    rows, skipped = measure(args)
    print()
    for note in skipped:
        print(f"* skipped (over {args.max_dense_mb:g} MB): {note}")
    if skipped:
        print()
    for fmt in ("dense", "CSR"):
        for ax in ("n", "d"):
            sub = [r for r in rows if r["format"] == fmt and r["axis"] == ax]
            if not sub:
                continue
            sizes = sorted({r[ax] for r in sub})
            labels = list(dict.fromkeys(r["run"] for r in sub))
            table_rows = []
            for label in labels:
                row = {"run": label}
                for v in sizes:
                    hit = [r for r in sub if r["run"] == label and r[ax] == v]
                    if hit:
                        row[f"ms{v}"] = 1e3 * hit[0]["sec"]
                        row[f"x{v}"] = hit[0]["floors"]
                table_rows.append(row)
            cols = [("run", "run", "")]
            for v in sizes:
                cols += [(f"ms{v}", f"{ax}={v:g} ms/pass", ".3g"), (f"x{v}", "floors", ".1f")]
            other = "d" if ax == "n" else "n"
            print(table(table_rows, cols, f"{fmt}, vary {ax} ({other} = 1000)"))
    for path in write(figure(rows), args.out):
        print(f"* plot: {path}")
    print(f"\n{machine_note()} at end; {time.perf_counter() - t0:.0f} s in all")


if __name__ == "__main__":
    main()
