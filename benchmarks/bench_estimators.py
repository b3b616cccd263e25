"""The estimators against abess, skscope, OMP and l1 selection, all measured in one run.

Table 1 (fixed ``s``): per data set and ``s``, the training loss of
``SparseLinearRegression`` / ``SparseLogisticRegression`` (defaults) divided by abess's,
skscope's (``ScopeSolver``, when installed) and OMP's (least squares only) at the same ``s``
with intercepts and standardized columns; the support F1 (synthetic designs: against the
true support; bundled data: ours against abess's support); the held-out score (R^2 or
log-loss) of each.  Table 2: the fit times of the same fits (median of ``--repeats``; skscope
once, after an untimed JIT warm-up).  Table 3 (choosing ``s``): ``SparseLinearRegressionCV`` /
``SparseLogisticRegressionCV`` with ``criterion="cv"`` (5 folds) and ``"ebic"``, abess's own
selection (its defaults), ``LassoCV`` / l1 ``LogisticRegressionCV`` and
``OrthogonalMatchingPursuitCV``, each run on ``--splits`` seeded 70/30 train/test splits
(``random_state`` 0, 1, ...; stratified for logistic; columns standardized on the training
part): per data set and tool the mean held-out score over the splits and its range, the
median number of features kept and the median selection time.  One split cannot judge a 1 %
difference (on breast cancer the held-out log-loss of one tool against another swings by tens
of percent from split to split), hence the mean; the summary line under the table gives,
per data set, EBIC's selection time over abess's, the change of the mean held-out score
against abess's and on how many splits EBIC was within 1 % of abess or better.

Data: scikit-learn's bundled sets (diabetes and its pairwise interactions; breast cancer, wine
class 0 vs rest, digits < 5 vs >= 5) and correlated synthetic designs (seeded): Toeplitz
``Sigma_ij = rho^|i-j|`` with rho = 0.9 and 0.7, equicorrelated 0.5, and 10-column blocks at 0.8;
coefficients uniform on [-1, 1] at ``k`` random positions, Gaussian noise.  Losses:
``(1/2n) ||y - Xw - c||^2`` and the mean logistic loss (no ridge term), the same formula for
every model.

Table 4 (a fresh process, e.g. a joblib worker): wall times, in new Python processes, of
importing scikit-learn and loading diabetes (the baseline every worker pays), then importing
the estimator, then its first fit (dense least squares, CSR least squares, logistic on breast
cancer): ours and abess, each in its own processes (median of ``--fresh-runs``); for ours also
numba's one-time set-up (its first call of any compiled function, cache loads excluded) and
whether any kernel was compiled rather than loaded from numba's cache.

Run: ``python benchmarks/bench_estimators.py [--repeats 5] [--quick] [--no-skscope]
[--fresh-runs 3] [--splits 5] [--only fixed|selection|fresh]`` (``--only``: Tables 1-2,
Table 3 or Table 4 alone).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from functools import partial

import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _util import table  # noqa: E402


def correlated(kind, n, d, k, seed, noise=1.0, loss="squares"):
    """A seeded correlated design ``(X, y, beta)``: ``kind`` in toeplitz0.9, toeplitz0.7,
    equi0.5, block0.8."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, d))
    if kind.startswith("toeplitz"):
        rho = float(kind[8:])
        X = np.empty_like(Z)
        X[:, 0] = Z[:, 0]
        for j in range(1, d):
            X[:, j] = rho * X[:, j - 1] + math.sqrt(1 - rho * rho) * Z[:, j]
    elif kind.startswith("equi"):
        rho = float(kind[4:])
        X = math.sqrt(1 - rho) * Z + math.sqrt(rho) * rng.standard_normal((n, 1))
    else:  # blocks of 10 columns sharing a factor
        rho = float(kind[5:])
        F = rng.standard_normal((n, d // 10 + 1))
        X = math.sqrt(1 - rho) * Z + math.sqrt(rho) * np.repeat(F, 10, axis=1)[:, :d]
    beta = np.zeros(d)
    support = rng.choice(d, k, replace=False)
    beta[support] = rng.uniform(-1, 1, k)
    a = X @ beta
    if loss == "squares":
        y = a + noise * rng.standard_normal(n)
    else:
        y = (rng.random(n) < 1 / (1 + np.exp(-2 * a))).astype(int)
    return X, y, beta


def datasets(quick=False):
    """``(name, loss, X, y, s values, beta or None)``."""
    from sklearn import datasets as D
    from sklearn.preprocessing import PolynomialFeatures

    out = []
    X, y = D.load_diabetes(return_X_y=True)
    out.append(("diabetes", "squares", X, y, (3, 5, 8), None))
    if not quick:
        Xp = PolynomialFeatures(2, include_bias=False).fit_transform(
            (X - X.mean(0)) / X.std(0))
        out.append(("diabetes x2", "squares", Xp[:, Xp.std(0) > 1e-9], y, (5, 10, 20), None))
    X, y = D.load_breast_cancer(return_X_y=True)
    out.append(("breast cancer", "logistic", X, y, (3, 5, 10), None))
    if not quick:
        X, y = D.load_wine(return_X_y=True)
        out.append(("wine 0/rest", "logistic", X, (y == 0).astype(int), (2, 4), None))
        X, y = D.load_digits(return_X_y=True)
        out.append(("digits <5", "logistic", X, (y < 5).astype(int), (5, 10, 20), None))
    designs = [("toeplitz0.9", 500, 1000, 20, 1, 1.0), ("toeplitz0.7", 500, 1000, 20, 2, 2.0),
               ("equi0.5", 400, 500, 10, 3, 1.0), ("block0.8", 400, 500, 15, 4, 1.0)]
    if quick:
        designs = designs[:1]
    for kind, n, d, k, seed, noise in designs:
        X, y, beta = correlated(kind, n, d, k, seed, noise)
        out.append((f"{kind} n{n} d{d} k{k}", "squares", X, y, (k,), beta))
    if not quick:
        X, y, beta = correlated("toeplitz0.9", 600, 500, 10, 5, loss="logistic")
        out.append(("toeplitz0.9 logistic d500 k10", "logistic", X, y, (10,), beta))
    return out


def train_loss(loss, X, y, coef, intercept):
    """The training loss of a linear model, the same formula for every peer."""
    a = X @ np.ravel(coef) + float(np.ravel(intercept)[0])
    if loss == "squares":
        return 0.5 * float(np.mean((y - a) ** 2))
    t = np.where(y > 0, 1.0, -1.0)
    return float(np.mean(np.logaddexp(0.0, -t * a)))


def held_out(loss, X, y, coef, intercept):
    """R^2 (least squares) or log-loss (logistic) on held-out data."""
    a = X @ np.ravel(coef) + float(np.ravel(intercept)[0])
    if loss == "squares":
        return 1 - float(np.sum((y - a) ** 2) / np.sum((y - y.mean()) ** 2))
    t = np.where(y > 0, 1.0, -1.0)
    return float(np.mean(np.logaddexp(0.0, -t * a)))


def f1(a, b):
    a, b = np.ravel(a) != 0, np.ravel(b) != 0
    tp = np.sum(a & b)
    return 2 * tp / max(a.sum() + b.sum(), 1)


def fit_on(est, X, y):
    return est.fit(X, y)


def timed(fn, repeats):
    """Median wall time of ``fn()`` over ``repeats`` calls, and its last result."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), out


def skscope_fit(loss, X, y, s):
    """skscope's ScopeSolver on the same loss with an always-selected intercept column;
    returns a fit function (the objective is a plain function: skscope aborts on a bound
    method)."""
    import jax.numpy as jnp
    from skscope import ScopeSolver

    n, d = X.shape
    A = jnp.asarray(np.hstack([X, np.ones((n, 1))]))
    t = jnp.asarray(np.where(y > 0, 1.0, -1.0) if loss == "logistic" else y)

    def objective(p):
        a = A @ p
        if loss == "logistic":
            return jnp.mean(jnp.logaddexp(0.0, -t * a))
        r = t - a
        return jnp.sum(r * r) / (2 * n)

    def fit():
        p = np.asarray(ScopeSolver(d + 1, sparsity=s + 1, preselect=[d]).solve(
            objective, jit=True))
        return p[:d], p[d:]

    return fit


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="three data sets only")
    ap.add_argument("--no-skscope", action="store_true")
    ap.add_argument("--fresh-runs", type=int, default=3,
                    help="fresh processes per tool for Table 4 (0: skip it)")
    ap.add_argument("--splits", type=int, default=None,
                    help="train/test splits per data set for Table 3 (default 5; 2 with "
                         "--quick)")
    ap.add_argument("--only", choices=("fixed", "selection", "fresh"),
                    help="run only Tables 1-2 (fixed), Table 3 (selection) or Table 4 (fresh)")
    args = ap.parse_args(argv)
    if args.splits is None:
        args.splits = 2 if args.quick else 5
    if args.splits < 1:
        ap.error(f"--splits must be at least 1, got {args.splits}")
    warnings.simplefilter("ignore")  # abess's, scikit-learn's and our convergence chatter
    if args.only == "selection":
        selection(datasets(args.quick), args)
        return []
    if args.only == "fresh":
        fresh(max(args.fresh_runs, 1))
        return []

    import abess
    from sklearn.linear_model import OrthogonalMatchingPursuit

    import rgrasp_viz as rv

    have_skscope = False
    if not args.no_skscope:
        try:
            import skscope  # noqa: F401

            have_skscope = True
        except ImportError:
            pass
    rows, trows = [], []
    data = datasets(args.quick)
    for name, loss, X, y, s_values, beta in data:
        Xtr, Xte, ytr, yte, keep = split(loss, X, y, 0)
        b = None if beta is None else beta[keep]
        Ours, Peer = ((rv.SparseLinearRegression, abess.LinearRegression) if loss == "squares"
                      else (rv.SparseLogisticRegression, abess.LogisticRegression))
        Ours(s=1, random_state=0).fit(Xtr, ytr)  # load the kernels untimed
        for s in s_values:
            fits = {}
            t_ours, ours = timed(partial(fit_on, Ours(s=s, random_state=0), Xtr, ytr),
                                 args.repeats)
            fits["ours"] = (ours.coef_, ours.intercept_, t_ours)
            t_peer, peer = timed(partial(fit_on, Peer(support_size=[s]), Xtr, ytr),
                                 args.repeats)
            fits["abess"] = (peer.coef_, peer.intercept_, t_peer)
            if loss == "logistic":  # our training loss without the default ridge term
                plain = Ours(s=s, random_state=0, l2=0.0).fit(Xtr, ytr)
                row_plain = train_loss(loss, Xtr, ytr, plain.coef_, plain.intercept_)
            if loss == "squares":
                t_omp, omp = timed(partial(fit_on, OrthogonalMatchingPursuit(
                    n_nonzero_coefs=s), Xtr, ytr), args.repeats)
                fits["OMP"] = (omp.coef_, np.atleast_1d(omp.intercept_), t_omp)
            if have_skscope:
                fit = skscope_fit(loss, Xtr, ytr, s)
                fit()  # JIT compilation, untimed
                t_sk, (c, c0) = timed(fit, 1)
                fits["skscope"] = (c, c0, t_sk)
            f = {k: train_loss(loss, Xtr, ytr, c, c0) for k, (c, c0, _) in fits.items()}
            ref = b if b is not None else fits["abess"][0]
            row = {"data": name, "loss": loss, "n x d": f"{Xtr.shape[0]} x {Xtr.shape[1]}",
                   "s": s, "swaps": len(ours.swaps_),
                   "r0": (row_plain if loss == "logistic" else f["ours"]) / f["abess"]}
            trow = {"data": name, "s": s}
            for k, (c, c0, t) in fits.items():
                if k != "ours":
                    row[f"r {k}"] = f["ours"] / f[k]
                row[f"F1 {k}"] = f1(c, ref) if (b is not None or k != "abess") else np.nan
                row[f"h {k}"] = held_out(loss, Xte, yte, c, c0)
                trow[f"t {k}"] = 1e3 * t
            trows.append(trow)
            rows.append(row)
    peers = ["abess", "OMP"] + (["skscope"] if have_skscope else [])
    cols = [("data", "data set", ""), ("loss", "loss", ""), ("n x d", "n x d (train)", ""),
            ("s", "s", "d")]
    cols += [(f"r {k}", f"loss ours/{k}", ".4f") for k in peers]
    cols += [("r0", "... ours l2=0 / abess", ".4f")]
    cols += [(f"F1 {k}", f"F1 {k}", ".2f") for k in ["ours"] + peers]
    cols += [(f"h {k}", f"held-out {k}", ".3f") for k in ["ours"] + peers]
    cols += [("swaps", "swaps", "d")]
    for r in rows:
        for c in cols:
            r.setdefault(c[0], np.nan)
    method = rv.SparseLinearRegression().method
    print(table(rows, cols, title=f"Table 1. Fixed s: ours (method={method}"
                                  f", defaults) vs abess {abess.__version__}, OMP"
                                  + (", skscope" if have_skscope else "")))
    print("F1: against the true support (synthetic) or, on bundled data, against abess's "
          "support (so abess's own column is blank); held-out: R^2 (squares, higher is "
          "better) or log-loss (logistic, lower is better) on a 30 % split")
    sq = [r for r in rows if r["loss"] == "squares"]
    lg = [r for r in rows if r["loss"] == "logistic"]
    print(f"worst loss ours/abess: squares {max(r['r abess'] for r in sq):.4f}, logistic "
          f"{max(r['r abess'] for r in lg):.4f} (with l2=0: "
          f"{max(r['r0'] for r in lg):.4f})")
    tcols = [("data", "data set", ""), ("s", "s", "d")]
    tcols += [(f"t {k}", f"fit {k} (ms)", ".1f") for k in ["ours"] + peers]
    for r in trows:
        for c in tcols:
            r.setdefault(c[0], np.nan)
        r["ratio"] = r["t ours"] / r["t abess"]
    tcols.append(("ratio", "ours/abess", ".2f"))
    print(table(trows, tcols, title="Table 2. Fit times (same fits as Table 1)"))
    bundled = [r["ratio"] for r in trows if not str(r["data"]).startswith(
        ("toeplitz", "equi", "block"))]
    print(f"median fit time ours/abess: bundled sets {np.median(bundled):.2f}, all "
          f"{np.median([r['ratio'] for r in trows]):.2f}; times: median of {args.repeats} "
          "fits (skscope: 1 fit after its JIT warm-up)")
    if args.only is None:
        selection(data, args)
        if args.fresh_runs:
            fresh(args.fresh_runs)
    return rows


def split(loss, X, y, seed):
    """A seeded 70/30 split (stratified for logistic), constant training columns dropped,
    columns standardized on the training part: ``(Xtr, Xte, ytr, yte, keep)`` (``keep``:
    the columns kept)."""
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=seed,
                                          stratify=y if loss == "logistic" else None)
    keep = Xtr.std(0) > 1e-9  # digits' blank pixels: abess refuses constant columns
    sc = StandardScaler().fit(Xtr[:, keep])
    return sc.transform(Xtr[:, keep]), sc.transform(Xte[:, keep]), ytr, yte, keep


def worse_by(loss, ours, peer):
    """How much worse ``ours`` held-out score is than ``peer``'s, relative to ``peer``'s
    (negative: better); R^2 is higher-better, log-loss lower-better."""
    gap = (peer - ours) if loss == "squares" else (ours - peer)
    return gap / max(abs(peer), 1e-12)


def selection(data, args):
    """Table 3: choosing s, over ``args.splits`` train/test splits per data set."""
    import abess
    from sklearn.linear_model import LassoCV, LogisticRegressionCV, OrthogonalMatchingPursuitCV

    import rgrasp_viz as rv

    runs = []  # one per data set, tool and split
    wanted = ("diabetes", "breast cancer", "toeplitz0.9", "wine 0/rest")
    for name, loss, X, y, _, _ in data:
        if not name.startswith(wanted):
            continue
        for seed in range(args.splits):
            Xtr, Xte, ytr, yte, _ = split(loss, X, y, seed)
            d = Xtr.shape[1]
            smax = min(d, 30)
            grid = range(1, smax + 1)
            if loss == "squares":
                tools = {
                    "ours cv": rv.SparseLinearRegressionCV(s_values=grid, random_state=0),
                    "ours ebic": rv.SparseLinearRegressionCV(s_values=grid, criterion="ebic",
                                                             random_state=0),
                    "abess": abess.LinearRegression(),
                    "LassoCV": LassoCV(cv=5),
                    "OMPCV": OrthogonalMatchingPursuitCV(cv=5, max_iter=smax)}
            else:
                tools = {
                    "ours cv": rv.SparseLogisticRegressionCV(s_values=grid, random_state=0),
                    "ours ebic": rv.SparseLogisticRegressionCV(s_values=grid,
                                                               criterion="ebic",
                                                               random_state=0),
                    "abess": abess.LogisticRegression(),
                    "l1 LogRegCV": LogisticRegressionCV(cv=5, penalty="l1",
                                                        solver="liblinear")}
            for tool, fn in tools.items():
                t, m = timed(partial(fit_on, fn, Xtr, ytr), max(1, args.repeats // 2))
                runs.append({"data": name, "loss": loss, "tool": tool, "seed": seed,
                             "time": 1e3 * t, "kept": int(np.count_nonzero(m.coef_)),
                             "held": held_out(loss, Xte, yte, m.coef_,
                                              np.atleast_1d(m.intercept_))})
    rows = []
    for key in dict.fromkeys((r["data"], r["tool"]) for r in runs):
        mine = [r for r in runs if (r["data"], r["tool"]) == key]
        held = np.array([r["held"] for r in mine])
        rows.append({"data": key[0], "loss": mine[0]["loss"], "tool": key[1],
                     "kept": float(np.median([r["kept"] for r in mine])),
                     "held": float(held.mean()), "std": float(held.std()),
                     "range": f"{held.min():.4f}-{held.max():.4f}",
                     "time": float(np.median([r["time"] for r in mine]))})
    print(table(rows, [("data", "data set", ""), ("loss", "loss", ""), ("tool", "tool", ""),
                       ("kept", "features kept (median)", "g"),
                       ("held", "held-out mean (R^2 / log-loss)", ".4f"),
                       ("std", "std", ".4f"), ("range", "min-max", ""),
                       ("time", "selection time (ms, median)", ".1f")],
                title=f"Table 3. Choosing s over {args.splits} train/test splits (ours: path "
                      "over s = 1..min(d, 30) with warm starts)"))
    print(f"held-out: R^2 (squares, higher is better) or log-loss (logistic, lower is better) "
          f"on the 30 % test part of each of {args.splits} seeded splits (random_state 0.."
          f"{args.splits - 1}); features kept and times: medians over the splits (each time "
          f"the median of {max(1, args.repeats // 2)} fits)")
    parts = []
    for name in dict.fromkeys(r["data"] for r in rows):
        by = {r["tool"]: r for r in rows if r["data"] == name}
        ours, peer = by["ours ebic"], by["abess"]
        gap = worse_by(ours["loss"], ours["held"], peer["held"])
        verdict = (f"{100 * -gap:.1f} % better" if gap < 0 else
                   f"{100 * gap:.1f} % worse" + (" (within 1 %)" if gap <= 0.01 else ""))
        per = {}
        for r in runs:
            if r["data"] == name and r["tool"] in ("ours ebic", "abess"):
                per.setdefault(r["seed"], {})[r["tool"]] = r["held"]
        ok = sum(worse_by(ours["loss"], v["ours ebic"], v["abess"]) <= 0.01
                 for v in per.values())
        parts.append(f"{name}: {ours['time'] / peer['time']:.2f} x, mean held-out {verdict}, "
                     f"within 1 % or better on {ok}/{len(per)} splits")
    print("EBIC selection time ours/abess and mean held-out score against abess's: "
          + "; ".join(parts))


_FRESH = """
import json, sys, time
t0 = time.perf_counter()
import numpy as np
import scipy.sparse as sp
import sklearn.base, sklearn.model_selection  # what a joblib worker has loaded anyway
from sklearn.datasets import load_breast_cancer, load_diabetes
X, y = load_diabetes(return_X_y=True)
Xc, yc = load_breast_cancer(return_X_y=True)
Xc = (Xc - Xc.mean(0)) / Xc.std(0)
t1 = time.perf_counter()
out = {"baseline": t1 - t0}
if sys.argv[1] == "ours":
    import rgrasp_viz as rv
    Lin, Log = rv.SparseLinearRegression, rv.SparseLogisticRegression
    t2 = time.perf_counter()
    from rgrasp_viz import _kernels as K
    K.top_k(np.arange(4.0), 2)  # numba's one-time set-up (one cached kernel)
    out["numba_setup"] = time.perf_counter() - t2
    t2 = time.perf_counter() - out["numba_setup"]
    make = (lambda: Lin(s=5, random_state=0), lambda: Log(s=5, random_state=0))
else:
    import abess
    t2 = time.perf_counter()
    make = (lambda: abess.LinearRegression(support_size=[5]),
            lambda: abess.LogisticRegression(support_size=[5]))
out["import"] = t2 - t1
t = time.perf_counter()
make[0]().fit(X, y)
out["dense"] = time.perf_counter() - t
t = time.perf_counter()
make[0]().fit(sp.csr_matrix(X), y)
out["csr"] = time.perf_counter() - t
t = time.perf_counter()
make[1]().fit(Xc, yc)
out["logistic"] = time.perf_counter() - t
if sys.argv[1] == "ours":
    import importlib, pkgutil
    misses = 0
    for info in pkgutil.iter_modules(K.__path__):
        mod = importlib.import_module("rgrasp_viz._kernels." + info.name)
        for obj in set(v for v in vars(mod).values() if hasattr(v, "stats")):
            misses += sum(obj.stats.cache_misses.values())
    out["compiled"] = misses
print(json.dumps(out))
"""


def fresh(runs):
    """Table 4: the first fits of a fresh process (see the module docstring)."""
    import json
    import os
    import subprocess

    env = dict(os.environ)
    root = __file__.rsplit("/", 2)[0]
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    subprocess.run([sys.executable, "-c", _FRESH, "ours"], env=env, check=True,
                   capture_output=True)  # fills numba's cache if it is cold (untimed)
    rows = []
    for tool in ("ours", "abess"):
        res = [json.loads(subprocess.run([sys.executable, "-c", _FRESH, tool], env=env,
                                         check=True, capture_output=True,
                                         text=True).stdout)
               for _ in range(runs)]
        row = {"tool": tool}
        for key in ("baseline", "import", "numba_setup", "dense", "csr", "logistic"):
            vals = [r[key] for r in res if key in r]
            row[key] = 1e3 * float(np.median(vals)) if vals else np.nan
        row["first"] = row["import"] + (0 if tool == "abess" else row["numba_setup"]) \
            + row["dense"]
        row["compiled"] = max(r.get("compiled", 0) for r in res) if tool == "ours" else ""
        rows.append(row)
    print(table(rows, [("tool", "tool", ""), ("baseline", "sklearn + data (ms)", ".0f"),
                       ("import", "import (ms)", ".0f"),
                       ("numba_setup", "numba set-up (ms)", ".0f"),
                       ("dense", "1st fit dense (ms)", ".1f"), ("csr", "then CSR (ms)", ".1f"),
                       ("logistic", "then logistic (ms)", ".1f"),
                       ("first", "import + 1st fit (ms)", ".0f"),
                       ("compiled", "kernels compiled", "")],
                title=f"Table 4. A fresh process (median of {runs})"))


if __name__ == "__main__":
    main()
