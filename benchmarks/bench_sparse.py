"""Sparse-data speed (issue 5, section 2); prints Markdown tables and writes a plotly HTML.

(a) rcv1-shaped synthetic CSR data (20,242 x 47,236, density 0.16 %, unit-norm rows of
    positive tf-idf-like values, logistic loss, s = 200): solver seconds per effective pass
    of each method divided by one scipy CSR full gradient ``W.T @ f'(W x) / n`` measured in
    the same run (target for SVRGSP / SVRGSP+: <= 3x).  Each repeat times the gradient
    next to the solves and the ratio is taken per repeat, so load on a shared machine
    cancels as far as possible; medians over repeats (different index sequences).
(b) The paper's Table 1 claim (per-iteration cost O(d log d) for SVRGHT, O(d) for SVRGSP):
    CSR data with a fixed number of nonzeros per row and d from 1e3 to 1e6.  Per method:
    the marginal cost of one inner step (the slope of the outer-iteration time between two
    epoch lengths, so the full gradient, support merge and gathers cancel) and the cost
    per inner step amortised over an outer iteration with J = 2n (for SVRGHT extrapolated
    from a shorter epoch with the measured slope when d is large; marked "~").

Usage: ``python benchmarks/bench_sparse.py [--repeats 3] [--quick] [--out FILE.html]
[--cpu-time]``.
``--quick``: a quarter of the rows in (a) and d up to 1e5 in (b).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time
import warnings

import numpy as np
import scipy.sparse as sp
from _util import CLOCK, machine_note, median_time, table, use_cpu_clock

import rgrasp_viz as rv
from rgrasp_viz import losses
from rgrasp_viz.solvers import check_params, get_method, warm_up
from rgrasp_viz.solvers._common import Workspace

warnings.simplefilter("ignore", rv.exceptions.ConvergenceWarning)

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, "out", "bench_sparse.html")

RCV1 = {"n": 20242, "d": 47236, "density": 0.0016}
S_REAL = 200  # the paper's s on real data

# (label, method, inner, outer iterations per timed solve)
PASS_CASES = [
    ("fght", "fght", "restricted", 10),
    ("sght", "sght", "restricted", 3),
    ("svrght", "svrght", "restricted", 1),
    ("svrgsp (z on T)", "svrgsp", "restricted", 5),
    ("svrgsp+ (z on T)", "svrgsp+", "restricted", 5),
    ("svrgsp (z on all d)", "svrgsp", "full", 5),
    ("svrgsp+ (z on all d)", "svrgsp+", "full", 5),
]
TARGET = 3.0  # SVRGSP(+) seconds per pass <= 3 full gradients


def rcv1_like(n, d, density, random_state=0, s_star=1000):
    """Synthetic CSR data shaped like rcv1: ``round(density n d)`` uniformly placed nonzeros,
    positive values, rows scaled to unit norm, logistic labels from a sparse ``x*``."""
    rng = np.random.default_rng(random_state)
    nnz = int(round(density * n * d))
    flat = np.sort(rng.choice(n * d, size=nnz, replace=False))
    rows, cols = np.divmod(flat, d)
    data = rng.exponential(1.0, nnz) + 0.05
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    W = sp.csr_matrix((data, cols, indptr), shape=(n, d))
    norms = np.sqrt(np.asarray(W.multiply(W).sum(axis=1)).ravel())
    W = sp.csr_matrix(sp.diags(1.0 / np.maximum(norms, 1e-12)) @ W)
    x_true = np.zeros(d)
    sup = rng.choice(d, size=min(s_star, d), replace=False)
    x_true[sup] = rng.uniform(-1, 1, sup.size) * 20.0
    prob_pos = 1.0 / (1.0 + np.exp(-(W @ x_true)))
    y = np.where(rng.random(n) < prob_pos, 1.0, -1.0)
    return rv.Problem(W, y, loss="logistic", x_true=x_true)


def fixed_row_nnz(n, d, row_nnz, random_state=0):
    """CSR data with exactly ``row_nnz`` nonzeros per row (uniform columns), unit-norm rows,
    logistic labels: the per-step work of a sparse method does not grow with d."""
    rng = np.random.default_rng(random_state)
    k = min(row_nnz, d)
    cols = np.sort(rng.integers(0, d, size=(n, k)), axis=1)
    for i in np.flatnonzero(np.any(np.diff(cols, axis=1) == 0, axis=1)):  # rare repeats
        cols[i] = np.sort(rng.choice(d, size=k, replace=False))
    data = rng.exponential(1.0, (n, k)) + 0.05
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    W = sp.csr_matrix((data.ravel(), cols.ravel(), np.arange(0, n * k + 1, k)), shape=(n, d))
    x_true = np.zeros(d)
    sup = rng.choice(d, size=min(50, d), replace=False)
    x_true[sup] = rng.uniform(-1, 1, sup.size) * 20.0
    y = np.where(rng.random(n) < 1.0 / (1.0 + np.exp(-(W @ x_true))), 1.0, -1.0)
    return rv.Problem(W, y, loss="logistic", x_true=x_true)


def scipy_gradient(prob, x):
    """One effective pass: the scipy CSR full gradient ``W.T @ f'(W x) / n``."""
    W = prob.W
    return W.T @ losses.loss_derivative(W @ x, prob.y, prob.loss) / prob.n


# -- (a) time per effective pass on rcv1-shaped data --------------------------------------------


def bench_passes(prob, s, repeats):
    for _, method, inner, _ in PASS_CASES:  # compile / load kernels outside the timing
        if method in ("sght", "svrght", "svrgsp", "svrgsp+"):
            warm_up(method, True, inner)
    x_ref = rv.solve(prob, method="fght", s=s, max_iter=3, warn=False).x
    per_pass = {c[0]: [] for c in PASS_CASES}
    ratios = {c[0]: [] for c in PASS_CASES}
    info = {}
    grads = []
    for r in range(repeats):
        g_t, _ = median_time(lambda: scipy_gradient(prob, x_ref), 5)
        grads.append(g_t)
        for label, method, inner, iters in PASS_CASES:
            res = rv.solve(prob, method=method, s=s, inner=inner, max_iter=iters, tol=0,
                           ftol=0, random_state=r, warn=False)
            t = res.time / res.passes
            per_pass[label].append(t)
            ratios[label].append(t / g_t)
            info[label] = (res.passes / res.nit, res.status, res.message)
    rows = [{"what": "scipy CSR full gradient W.T @ f'(W x) / n",
             "ms": 1e3 * statistics.median(grads), "ratio": 1.0, "passes": "",
             "note": "baseline (1 pass)"}]
    for label, method, _, _ in PASS_CASES:
        per_iter, status, message = info[label]
        ratio = statistics.median(ratios[label])
        note = ""
        if method in ("svrgsp", "svrgsp+"):
            note = f"target <= {TARGET:g}x: {'met' if ratio <= TARGET else 'MISSED'}"
        if status == 2:
            note = (note + "; " if note else "") + "diverged: " + message.split(":")[0]
        rows.append({"what": label, "ms": 1e3 * statistics.median(per_pass[label]),
                     "ratio": ratio, "passes": f"{per_iter:.3g}", "note": note})
    return rows


# -- (b) per-inner-step cost against d ----------------------------------------------------------

SCALE_CASES = [("svrght", "svrght", "restricted"),
               ("svrgsp (z on T)", "svrgsp", "restricted"),
               ("svrgsp (z on all d)", "svrgsp", "full"),
               ("svrgsp+ (z on all d)", "svrgsp+", "full")]


def _impl(prob, method, inner, s, J):
    eta = rv.default_eta(prob, method, s, inner)
    rec = max(1, J // 20)
    params = check_params(prob, method, s=s, eta=eta, J=J, m=min(6, J), inner=inner,
                          max_iter=1, record_every=rec)
    return get_method(method).factory(prob, params, Workspace(prob.d, J, rec))


def _outer_time(prob, method, inner, s, x, J, repeats):
    impl = _impl(prob, method, inner, s, J)
    impl.step(x, np.random.default_rng(0))  # builds one-off state (the CSC copy of W)
    t, _ = median_time(lambda: impl.step(x, np.random.default_rng(0)), repeats)
    return t


def bench_scaling(dims, n, row_nnz, s, repeats):
    for _, method, inner in SCALE_CASES:
        warm_up(method, True, inner)
    rows = []
    for d in dims:
        prob = fixed_row_nnz(n, d, row_nnz, random_state=1)
        x = rv.solve(prob, method="fght", s=s, max_iter=3, warn=False).x
        g_t, _ = median_time(lambda: scipy_gradient(prob, x), 7)  # noqa: B023
        row = {"d": d, "grad_us": 1e6 * g_t}
        for label, method, inner in SCALE_CASES:
            J = 2 * n
            if method == "svrght":  # O(d) steps: keep each timing near 0.2 s
                J_b = int(min(J, max(40, 4e7 / d)))
                J_a = max(10, J_b // 4)
            else:  # cheap steps: a long second epoch so that they outweigh the O(d) part
                J_a, J_b = J, J + max(200_000, d // 2)
            t_a = _outer_time(prob, method, inner, s, x, J_a, repeats)
            t_b = _outer_time(prob, method, inner, s, x, J_b, repeats)
            step = max((t_b - t_a) / (J_b - J_a), 0.0)
            amort = (t_b + (J - J_b) * step) / J if J_b <= J else t_a / J
            row[label] = 1e9 * step
            row[label + " amortised"] = 1e9 * amort
            row[label + " extrapolated"] = J_b < J
        rows.append(row)
    return rows


def _slope(ds, ts):
    """Least-squares slope of log(time) against log(d)."""
    ok = [(math.log(d), math.log(t)) for d, t in zip(ds, ts, strict=True) if t > 0]
    if len(ok) < 2:
        return float("nan")
    xs, ys = zip(*ok, strict=True)
    return float(np.polyfit(xs, ys, 1)[0])


def scaling_tables(rows):
    cols = [("d", "d", "d")]
    out_rows = []
    for r in rows:
        o = {"d": r["d"], "grad": r["grad_us"]}
        for label, _, _ in SCALE_CASES:
            o[label] = f"{r[label]:,.0f}"
            mark = "~" if r[label + " extrapolated"] else ""
            o[label + " a"] = f"{mark}{r[label + ' amortised']:,.0f}"
        o["ratio"] = r["svrght"] / max(r["svrgsp (z on T)"], 1e-9)
        out_rows.append(o)
    cols += [(label, f"{label} ns/step", "") for label, _, _ in SCALE_CASES]
    cols += [("ratio", "svrght / svrgsp (z on T)", ".0f")]
    t1 = table(out_rows, cols)
    cols2 = [("d", "d", "d"), ("grad", "scipy full gradient [us]", ".0f")]
    cols2 += [(label + " a", f"{label} ns/step amortised", "") for label, _, _ in SCALE_CASES]
    t2 = table(out_rows, cols2)
    ds = [r["d"] for r in rows]
    big = [r for r in rows if r["d"] >= 1e4] or rows
    slopes = []
    for label, _, _ in SCALE_CASES:
        slopes.append({"series": label,
                       "step": _slope([r["d"] for r in big], [r[label] for r in big]),
                       "amort": _slope([r["d"] for r in big],
                                       [r[label + " amortised"] for r in big])})
    t3 = table(slopes, [("series", "series", ""), ("step", "slope: inner step", ".2f"),
                        ("amort", "slope: amortised", ".2f")],
               f"log-log slope of cost against d (d = {min(r['d'] for r in big):g} .. "
               f"{max(ds):g}; 1 = linear in d, 0 = independent of d)")
    return t1, t2, t3


# -- plot ---------------------------------------------------------------------------------------


def write_html(path, pass_rows, scale_rows, title_note):
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(
        rows=1, cols=2, column_widths=[0.58, 0.42],
        subplot_titles=("Cost of one inner step vs d (CSR, fixed nnz per row)",
                        "rcv1-shaped CSR: seconds per effective pass / full gradient"))
    ds = [r["d"] for r in scale_rows]
    palette = {"svrght": "#d62728", "svrgsp (z on T)": "#1f77b4",
               "svrgsp (z on all d)": "#2ca02c", "svrgsp+ (z on all d)": "#9467bd"}
    for label, _, _ in SCALE_CASES:
        fig.add_trace(go.Scatter(x=ds, y=[r[label] for r in scale_rows], name=label,
                                 mode="lines+markers", line={"color": palette[label]},
                                 legendgroup=label), row=1, col=1)
        fig.add_trace(go.Scatter(x=ds, y=[r[label + " amortised"] for r in scale_rows],
                                 name=label + " (amortised, J = 2n)", mode="lines+markers",
                                 line={"color": palette[label], "dash": "dot"},
                                 legendgroup=label), row=1, col=1)
    if ds:  # O(d) and O(d log d) guides through the first SVRGHT point
        t0 = scale_rows[0]["svrght"]
        fig.add_trace(go.Scatter(x=ds, y=[t0 * d / ds[0] for d in ds], name="O(d) guide",
                                 mode="lines", line={"color": "grey", "dash": "dash"}),
                      row=1, col=1)
        fig.add_trace(go.Scatter(
            x=ds, y=[t0 * d * math.log(d) / (ds[0] * math.log(ds[0])) for d in ds],
            name="O(d log d) guide", mode="lines", line={"color": "black", "dash": "dash"}),
            row=1, col=1)
    fig.update_xaxes(type="log", title_text="d", row=1, col=1)
    fig.update_yaxes(type="log", title_text="ns per inner step", row=1, col=1)
    labels = [r["what"] for r in pass_rows[1:]]
    fig.add_trace(go.Bar(x=labels, y=[r["ratio"] for r in pass_rows[1:]], name="per pass",
                         marker={"color": "#7f7f7f"}, showlegend=False,
                         text=[f"{r['ratio']:.2f}x" for r in pass_rows[1:]],
                         textposition="outside"), row=1, col=2)
    fig.add_hline(y=TARGET, line={"dash": "dash", "color": "black"}, row=1, col=2,
                  annotation_text=f"target {TARGET:g}x (SVRGSP)")
    fig.update_yaxes(type="log", title_text="seconds per pass / one full gradient",
                     row=1, col=2)
    fig.update_layout(title=f"rgrasp_viz sparse-data speed<br><sup>{title_note}</sup>",
                      height=620, width=1400, template="plotly_white")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.write_html(path, include_plotlyjs=True)
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true",
                    help="a quarter of the rows in (a), d up to 1e5 in (b)")
    ap.add_argument("--out", default=DEFAULT_OUT, help=f"HTML figure (default {DEFAULT_OUT})")
    ap.add_argument("--n-scaling", type=int, default=1000, help="rows of the (b) data")
    ap.add_argument("--row-nnz", type=int, default=64, help="nonzeros per row in (b)")
    ap.add_argument("--cpu-time", action="store_true",
                    help="time with process CPU time (an idle-machine estimate on a busy one)")
    args = ap.parse_args(argv)
    if args.cpu_time:
        use_cpu_clock()
    t_start = time.perf_counter()
    # --quick: a quarter of the rows (same d and density, so the same nonzeros per row)
    n, d = (RCV1["n"] // 4 if args.quick else RCV1["n"]), RCV1["d"]
    print(f"# rgrasp_viz sparse-data benchmarks\n\n{machine_note()} at start; repeats = "
          f"{args.repeats}; clock: {CLOCK['name']}\n")
    prob = rcv1_like(n, d, RCV1["density"], random_state=0)
    print(f"(a) data: {prob}, nnz = {prob.W.nnz:,} ({prob.W.nnz / prob.n:.1f} per row), "
          f"logistic, s = {S_REAL}, J = 2n, default step sizes\n")
    pass_rows = bench_passes(prob, S_REAL, args.repeats)
    print(table(pass_rows, [("what", "method", ""), ("ms", "ms per effective pass", ".2f"),
                            ("ratio", "x full gradient", ".2f"),
                            ("passes", "passes per outer iteration", ""), ("note", "", "")],
                "(a) seconds per effective pass vs scipy's CSR full gradient (same run)"))
    dims = [1_000, 3_000, 10_000, 30_000, 100_000]
    if not args.quick:
        dims += [300_000, 1_000_000]
    scale_rows = bench_scaling(dims, args.n_scaling, args.row_nnz, 100, args.repeats)
    t1, t2, t3 = scaling_tables(scale_rows)
    what = (f"n = {args.n_scaling}, {args.row_nnz} nonzeros per row, logistic, s = 100, "
            f"J = 2n")
    print(f"### (b) marginal cost of one inner step [ns] ({what})\n\n{t1}")
    print(f"### (b) cost per inner step amortised over one outer iteration [ns] ({what}; "
          f"~ = extrapolated from a shorter epoch)\n\n{t2}")
    print(t3)
    note = (f"{machine_note()} at end; {time.perf_counter() - t_start:.0f} s in all; "
            f"clock: {CLOCK['name']}")
    print(note + "\n")
    path = write_html(args.out, pass_rows, scale_rows, note)
    print(f"figure: {path}")


if __name__ == "__main__":
    main()
