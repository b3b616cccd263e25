"""Full-gradient kernels against NumPy / SciPy's own two products, in one process (Markdown).

For each problem and loss, ``g = W^T f'(W x) / n`` is computed

* by the fused kernel (:func:`rgrasp_viz._kernels.full_gradient_dense` / ``_csr``) with the
  automatic thread count (the CPUs other processes leave free; shown), with one thread, and
  with one thread per CPU whatever the load;
* by the peer: ``a = W @ x``, ``r = f'(a)`` (NumPy), ``W.T @ r / n`` -- dense: NumPy with its
  multi-threaded BLAS as configured, and with BLAS limited to one thread (threadpoolctl);
  CSR: ``scipy.sparse`` (single-threaded).

Rounds rotate the order of the contenders (each follows each other equally often: a BLAS
call leaves its threads spinning for a while, which slows whatever runs next); the table gives
median times and the median of the per-round ratios kernel / peer (a ratio is taken within a
round, so a busy phase of a shared machine hits both sides).  Targets: ratio <= 1.2 on paper
setting 1 and on a CSR problem of rcv1's shape (n=20242, d=47236, 0.16 % nonzeros, uniformly
random); the classroom problem (n=500, d=1000) shows the single-chunk path.

Usage: ``python benchmarks/bench_gradient.py [--rounds 41] [--quick]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import scipy.sparse as sp
from _util import machine_note, table
from scipy.special import expit

import rgrasp_viz as rv
from rgrasp_viz import _kernels as K
from rgrasp_viz._kernels import gradient as G
from rgrasp_viz._kernels import threads as TH
from rgrasp_viz.solvers._common import csr_arrays

LOSSES = {"squares": 0, "logistic": 1}


def problems(quick):
    """``(name, W, s)``: dense setting 1 and classroom, and a CSR problem of rcv1's shape."""
    out = [("classroom n=500 d=1000 (dense)", rv.make_regression("classroom", random_state=0).W,
            24)]
    if not quick:
        out.append(("setting 1 n=2500 d=5000 (dense)", rv.make_regression(1, random_state=0).W,
                    300))
    n, d = (20242, 47236) if not quick else (5000, 12000)
    W = sp.random(n, d, density=0.0016, format="csr", random_state=0)
    W.sort_indices()
    out.append((f"rcv1 shape n={n} d={d} 0.16 % (CSR)", W, 200))
    return out


def contenders(W, loss, s, rng):
    n, d = W.shape
    y = rng.standard_normal(n) if loss == "squares" else np.where(rng.random(n) < 0.5, -1.0, 1.0)
    x = np.zeros(d)
    x[rng.choice(d, s, replace=False)] = rng.standard_normal(s) / np.sqrt(s)
    code = LOSSES[loss]
    g, r = np.empty(d), np.empty(n)

    def peer():
        a = W @ x
        f = a - y if loss == "squares" else -y * expit(-y * a)
        return W.T @ f / n

    if sp.issparse(W):
        arrays = csr_arrays(W)

        def ours(threads=None):
            K.full_gradient_csr(*arrays, y, code, x, r, g, n_threads=threads)
            return g

        work = W.nnz
    else:
        sup = np.flatnonzero(x)
        xs = x[sup]

        def ours(threads=None):
            K.full_gradient_dense(W, y, code, sup, xs, r, g, n_threads=threads)
            return g

        work = n * d
    ref = peer()
    err = np.abs(ours() - ref).max() / np.abs(ref).max()
    return ours, peer, err, G.row_chunks(n, d, work)


def _one_blas_thread(fn):
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1, user_api="blas"):
        return fn()


def bench(W, loss, s, rounds, rng):
    ours, peer, err, chunks = contenders(W, loss, s, rng)
    cpus = TH._available_cpus()
    runs = {"auto": lambda: ours(None), "one": lambda: ours(1), "all": lambda: ours(cpus),
            "peer": peer, "peer1": lambda: _one_blas_thread(peer)}
    times = {k: [] for k in runs}
    chosen = []
    for f in runs.values():  # warm up
        f()
    for r in range(rounds):
        names = list(runs)
        order = names[r % len(names):] + names[:r % len(names)]
        for k in order:
            if k == "auto":
                chosen.append(TH.get_num_threads())
            t0 = time.perf_counter()
            runs[k]()
            times[k].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) for k, v in times.items()}
    ratio = {k: statistics.median(a / b for a, b in zip(times[k], times["peer"], strict=True))
             for k in ("auto", "one", "all", "peer1")}
    return {"chunks": chunks, "threads": f"{min(chosen)}-{max(chosen)}" if chunks > 1 else "1",
            "ours_ms": 1e3 * med["auto"], "one_ms": 1e3 * med["one"], "all_ms": 1e3 * med["all"],
            "peer_ms": 1e3 * med["peer"], "ratio": ratio["auto"], "ratio_one": ratio["one"],
            "ratio_all": ratio["all"], "peer1_ms": 1e3 * med["peer1"], "err": err}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=41)
    ap.add_argument("--quick", action="store_true", help="small CSR problem, no setting 1")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    print(f"# Full-gradient kernels vs NumPy / SciPy\n\n{machine_note()} at start; "
          f"threads: {TH.ENV_VAR}={TH._configured() or 'unset (automatic)'}; {args.rounds} "
          f"rounds, medians\n")
    rows = []
    for name, W, s in problems(args.quick):
        for loss in LOSSES:
            rows.append({"problem": name, "loss": loss} | bench(W, loss, s, args.rounds, rng))
    print(table(rows, [("problem", "problem", ""), ("loss", "loss", ""),
                       ("chunks", "chunks", "d"), ("threads", "threads used", ""),
                       ("ours_ms", "kernel ms", ".3f"), ("one_ms", "kernel, 1 thread ms", ".3f"),
                       ("peer_ms", "NumPy/SciPy pair ms", ".3f"),
                       ("peer1_ms", "pair, 1 BLAS thread ms", ".3f"),
                       ("ratio", "kernel / pair", ".2f"),
                       ("ratio_one", "1 thread / pair", ".2f"),
                       ("all_ms", f"kernel, {TH._available_cpus()} threads ms", ".3f"),
                       ("ratio_all", f"{TH._available_cpus()} threads / pair", ".2f"),
                       ("err", "max rel. diff", ".1e")],
                "g = W^T f'(W x) / n: fused kernel vs the two products (target: ratio <= 1.2)"))
    print(f"{machine_note()} at end")


if __name__ == "__main__":
    main()
