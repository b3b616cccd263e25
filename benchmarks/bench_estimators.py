"""The estimators against abess at the same sparsity, on scikit-learn's bundled data sets.

Per data set and ``s``: the training loss of ``SparseLinearRegression`` /
``SparseLogisticRegression`` with their defaults, divided by abess's (same ``s``, intercept,
standardized columns), the same ratio without the support swaps (``swap_rounds=0``: the run's
best iterate refitted) and for the paper's SVRGSP+ as is (no refit, no swaps: its best
iterate), the held-out score of ours and abess's (R^2, accuracy) and the fit times (median of
``--repeats`` fits, each peer measured in the same run).  Losses: ``(1/2n) ||y - Xw - c||^2``
and the mean logistic loss, computed here the same way for every model.

Only data sets that ship with scikit-learn (no download): diabetes and diabetes with its
pairwise interactions (least squares); breast cancer, wine (class 0 vs rest), iris
(versicolor vs rest) and digits (< 5 vs >= 5) (logistic).

Run: ``python benchmarks/bench_estimators.py [--repeats 3] [--quick]``.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _util import table  # noqa: E402


def datasets(quick=False):
    """``(name, loss, X, y, s values)``, X standardized later (on the training part)."""
    from sklearn import datasets as D
    from sklearn.preprocessing import PolynomialFeatures

    X, y = D.load_diabetes(return_X_y=True)
    out = [("diabetes", "squares", X, y, (3, 5, 8))]
    if not quick:
        Xp = PolynomialFeatures(2, include_bias=False).fit_transform(
            (X - X.mean(0)) / X.std(0))
        Xp = Xp[:, Xp.std(0) > 1e-9]  # sex^2 is constant
        out.append(("diabetes x2", "squares", Xp, y, (5, 10, 20)))
    X, y = D.load_breast_cancer(return_X_y=True)
    out.append(("breast cancer", "logistic", X, y, (3, 5, 10)))
    if not quick:
        X, y = D.load_wine(return_X_y=True)
        out.append(("wine 0/rest", "logistic", X, (y == 0).astype(int), (2, 4)))
        X, y = D.load_iris(return_X_y=True)
        out.append(("iris 1/rest", "logistic", X, (y == 1).astype(int), (1, 2)))
        X, y = D.load_digits(return_X_y=True)
        out.append(("digits <5", "logistic", X, (y < 5).astype(int), (5, 10, 20)))
    return out


def train_loss(loss, X, y, coef, intercept):
    """The training loss of a linear model, the same formula for every peer."""
    a = X @ coef + intercept
    if loss == "squares":
        return 0.5 * float(np.mean((y - a) ** 2))
    t = np.where(y > 0, 1.0, -1.0)
    return float(np.mean(np.logaddexp(0.0, -t * a)))


def timed(fn, fn_args, repeats):
    """Median wall time of ``fn(*fn_args)`` over ``repeats`` calls, and its last result."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn(*fn_args)
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="two data sets only")
    args = ap.parse_args(argv)

    import abess
    from sklearn.metrics import accuracy_score, r2_score
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    import rgrasp_viz as rv

    warnings.simplefilter("ignore")  # abess's and our convergence chatter
    rows = []
    for name, loss, X, y, s_values in datasets(args.quick):
        strat = y if loss == "logistic" else None
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0,
                                              stratify=strat)
        keep = Xtr.std(0) > 1e-9  # digits' blank pixels: abess refuses constant columns
        Xtr, Xte = Xtr[:, keep], Xte[:, keep]
        sc = StandardScaler().fit(Xtr)
        Xtr, Xte = sc.transform(Xtr), sc.transform(Xte)
        Ours, Peer, score = ((rv.SparseLinearRegression, abess.LinearRegression, r2_score)
                             if loss == "squares" else
                             (rv.SparseLogisticRegression, abess.LogisticRegression,
                              accuracy_score))
        Ours(s=1, random_state=0).fit(Xtr, ytr)  # compile / load the kernels untimed
        for s in s_values:
            t_ours, ours = timed(Ours(s=s, random_state=0).fit, (Xtr, ytr), args.repeats)
            noswap = Ours(s=s, random_state=0, swap_rounds=0).fit(Xtr, ytr)
            paper = Ours(s=s, method="svrgsp+", random_state=0, refit=False,
                         swap_rounds=0).fit(Xtr, ytr)
            t_peer, peer = timed(Peer(support_size=[s]).fit, (Xtr, ytr), args.repeats)
            peer_coef = np.asarray(peer.coef_, dtype=float).ravel()
            peer_icpt = float(np.ravel(peer.intercept_)[0])
            f_peer = train_loss(loss, Xtr, ytr, peer_coef, peer_icpt)
            a_te = Xte @ peer_coef + peer_icpt
            pred_peer = a_te if loss == "squares" else (a_te > 0).astype(int)
            ratio = [train_loss(loss, Xtr, ytr, model.coef_, model.intercept_) / f_peer
                     for model in (ours, noswap, paper)]
            rows.append({
                "data": name, "loss": loss, "n x d": f"{Xtr.shape[0]} x {Xtr.shape[1]}",
                "s": s, "ours/abess": ratio[0], "no swaps": ratio[1],
                "SVRGSP+ as is": ratio[2], "swaps": len(ours.swaps_),
                "score ours": score(yte, ours.predict(Xte)),
                "score abess": score(yte, pred_peer),
                "time ours (ms)": 1e3 * t_ours, "time abess (ms)": 1e3 * t_peer,
                "nnz": f"{np.count_nonzero(ours.coef_)}/{np.count_nonzero(peer_coef)}"})
    cols = [("data", "data set", ""), ("loss", "loss", ""), ("n x d", "n x d (train)", ""),
            ("s", "s", "d"), ("ours/abess", "train loss ours/abess", ".4f"),
            ("no swaps", "... swap_rounds=0", ".4f"),
            ("SVRGSP+ as is", "... SVRGSP+, no refit/swaps", ".4f"),
            ("swaps", "swaps made", "d"), ("score ours", "held-out ours", ".3f"),
            ("score abess", "held-out abess", ".3f"), ("time ours (ms)", "fit ours (ms)", ".1f"),
            ("time abess (ms)", "fit abess (ms)", ".1f"), ("nnz", "nnz ours/abess", "")]
    print(table(rows, cols, title=f"Estimators' defaults (method={rv.estimators.DEFAULT_METHOD}"
                                  f") vs abess {abess.__version__}, same s, with intercepts"))
    print("held-out: R^2 (least squares), accuracy (logistic) on a 30 % split; times: median "
          f"of {args.repeats} fits, this machine, both peers in this run")
    worst = {loss: max(r["ours/abess"] for r in rows if r["loss"] == loss)
             for loss in ("squares", "logistic") if any(r["loss"] == loss for r in rows)}
    print("worst ratio: " + ", ".join(f"{k} {v:.4f}" for k, v in worst.items()))
    return rows


if __name__ == "__main__":
    main()
