"""scikit-learn estimators over :func:`rgrasp_viz.solve`: sparse least squares and sparse
binary logistic regression with an exact intercept, feature names and a replayable trace.

>>> import rgrasp_viz as rv
>>> from sklearn.datasets import load_diabetes
>>> from sklearn.pipeline import make_pipeline
>>> from sklearn.preprocessing import StandardScaler
>>> X, y = load_diabetes(return_X_y=True, as_frame=True)
>>> model = make_pipeline(StandardScaler().set_output(transform="pandas"),
...                       rv.SparseLinearRegression(s=4, random_state=0)).fit(X, y)
>>> sorted(model[-1].selected_features_)
['bmi', 'bp', 's1', 's5']

What the estimators add to the paper's algorithms, each named and recorded in
``trace_.meta["estimator"]``:

* an **intercept**, exact and not counted in ``s``: least squares on dense data by centering
  (the sparse problem is solved on centred columns and targets, the intercept recovered
  after); on CSR data (which centering would densify) and for the logistic loss as an extra
  column of ones that every method updates and never thresholds (``always_select``);
* the **best iterate** the run visited (``solve``'s ``x_best``), not the last one
  (stochastic methods' last iterate can be worse than one they passed);
* a **refit** on the final support (``refit=True``): exact least squares, or Newton steps for
  the logistic loss -- reported separately (``objective_`` is the algorithm's,
  ``refit_objective_`` the refit's);
* ``swap_rounds`` of **support swaps** after the run (ours, after abess's splicing): one
  selected coordinate traded for an unselected one, each candidate pair judged by an exact
  refit, kept only when the objective drops.

The estimators need scikit-learn (an optional dependency): ``rv.SparseLinearRegression``
imports this module on first use.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from . import losses
from ._kernels.threads import BlasThreads
from .exceptions import DataWarning
from .solvers import solve
from .solvers._params import check_always_select

__all__ = ["DEFAULT_METHOD", "SCALE_RATIO", "SparseLinearRegression",
           "SparseLogisticRegression"]

DEFAULT_METHOD = "htp"
"""The estimators' default method.  HTP (a gradient step, ``H_s``, then the exact fit on the
kept support) reaches a fixed point in a few full-gradient iterations, so it is fast and
deterministic on the data a practitioner brings (n and d in the thousands); the paper's
stochastic methods pay off on large n, where their cheap epochs win, and remain one
``method=`` away (benchmarks/bench_estimators.py measures them side by side)."""

DEFAULT_S = 10
"""``s=None`` selects ``min(DEFAULT_S, n_features - len(always_select))`` coordinates."""

SCALE_RATIO = 1e3
"""Columns whose standard deviations differ by more than this factor trigger a
:class:`~rgrasp_viz.exceptions.DataWarning`: ``H_s`` compares raw coefficient magnitudes, so the
selection depends on the units."""

_SWAP_CANDIDATES = 4
"""Per swap round: the best ``_SWAP_CANDIDATES`` entering and leaving candidates (by a
one-coordinate estimate of the objective change) are paired and each pair refitted."""

_NEWTON_ITER = 50
_INTERCEPT = "(intercept)"


class _SparseLinearModel(BaseEstimator):
    """Shared fit machinery of the two estimators (see their docstrings)."""

    _loss = "squares"

    def __init__(self, s=None, *, method=DEFAULT_METHOD, fit_intercept=True, always_select=(),
                 max_iter=None, tol=1e-7, random_state=None, eta=None, J=None, m=None,
                 inner="paper", l2=0.0, refit=True, swap_rounds=10):
        self.s = s
        self.method = method
        self.fit_intercept = fit_intercept
        self.always_select = always_select
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.eta = eta
        self.J = J
        self.m = m
        self.inner = inner
        self.l2 = l2
        self.refit = refit
        self.swap_rounds = swap_rounds

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    # -- fitting --------------------------------------------------------------------------

    def _check_options(self, d):
        if not isinstance(self.fit_intercept, (bool, np.bool_)):
            raise TypeError(f"fit_intercept must be True or False, got {self.fit_intercept!r}")
        if not isinstance(self.refit, (bool, np.bool_)):
            raise TypeError(f"refit must be True or False, got {self.refit!r}")
        sr = self.swap_rounds
        if isinstance(sr, bool) or not isinstance(sr, numbers.Integral) or sr < 0:
            raise ValueError(f"swap_rounds must be a non-negative integer, got {sr!r}")
        if sr and not self.refit:
            raise ValueError("swap_rounds > 0 judges swaps by exact refits: it needs "
                             "refit=True (or set swap_rounds=0)")
        l2 = self.l2
        if isinstance(l2, bool) or not isinstance(l2, numbers.Real) or not (
                math.isfinite(l2) and l2 >= 0):
            raise ValueError(f"l2 must be a non-negative finite number, got {l2!r}")
        forced = check_always_select(self.always_select, d)
        free = d - len(forced)
        s = min(DEFAULT_S, free) if self.s is None else self.s
        if isinstance(s, bool) or not isinstance(s, numbers.Integral) or not 1 <= s <= free:
            raise ValueError(f"s must be an integer in [1, {free}] (n_features - "
                             f"len(always_select)), got {self.s!r}")
        return int(s), list(forced)

    def _seed(self):
        rs = self.random_state
        if rs is None or isinstance(rs, numbers.Integral) and not isinstance(rs, bool):
            return rs
        return int(check_random_state(rs).randint(2**31 - 1))

    def _fit(self, X, y_work, loss):
        """Solve on the validated ``X`` and working targets; set every fitted attribute."""
        n, d = X.shape
        if n < 2:
            raise ValueError(f"n_samples={n}: at least 2 samples are needed to fit "
                             f"{type(self).__name__}")
        s, forced = self._check_options(d)
        _warn_scales(X, type(self).__name__)
        centered = self.fit_intercept and loss == "squares" and not sp.issparse(X)
        x0 = None
        x_mean = np.zeros(d)
        y_mean = 0.0
        if centered:
            with np.errstate(over="ignore", invalid="ignore"):  # finite X may overflow here
                x_mean = X.mean(axis=0)
                A = X - x_mean
            over = np.flatnonzero(~np.isfinite(A).all(axis=0))
            if over.size:
                j = int(over[0])
                raise ValueError(f"column {j} of X overflows float64 when centred (its "
                                 f"entries reach {np.max(np.abs(X[:, j])):.3g}, finite but so "
                                 f"large that their mean or X - mean is not); rescale it")
            y_mean = float(y_work.mean())
            b = y_work - y_mean
            icol = None
        elif self.fit_intercept:  # an unpenalised-by-H_s column of ones, always selected
            ones = np.ones((n, 1))
            A = sp.hstack([X, sp.csr_matrix(ones)], format="csr") if sp.issparse(X) \
                else np.hstack([X, ones])
            b = y_work
            icol = d
            forced = forced + [d]
            x0 = np.zeros(d + 1)
            x0[d] = _intercept_start(y_work, loss)
        else:
            A, b, icol = X, y_work, None
        from ._problems import Problem

        prob = Problem(A, b, loss=loss, l2=float(self.l2))
        res = solve(prob, self.method, s=s, eta=self.eta, J=self.J, m=self.m,
                    inner=self.inner, max_iter=self.max_iter, tol=self.tol, x0=x0,
                    random_state=self._seed(), always_select=forced)
        x = np.asarray(res.x_best, dtype=np.float64).copy()
        objective = float(res.fun_best)
        refit_objective = None
        swaps = []
        if self.refit:
            # small dense algebra: a multi-threaded BLAS on busy cores only waits
            with BlasThreads(1):
                support = np.union1d(np.flatnonzero(x), forced).astype(np.int64)
                x, refit_objective = _refit(prob, support, x)
                if refit_objective > objective:  # never worse than the run's own iterate
                    x = np.asarray(res.x_best, dtype=np.float64).copy()
                    refit_objective = objective
                if self.swap_rounds:
                    x, refit_objective, swaps = _swap(prob, x, refit_objective, forced,
                                                      self.swap_rounds, s)
        coef = x[:d].copy()
        if icol is not None:
            intercept = float(x[icol])
        elif centered:
            intercept = y_mean - float(x_mean @ coef)
        else:
            intercept = 0.0
        self._set_fitted(res, coef, intercept, objective, refit_objective, swaps, forced, icol,
                         centered)
        return self

    def _set_fitted(self, res, coef, intercept, objective, refit_objective, swaps, forced,
                    icol, centered):
        self.coef_ = coef
        self.intercept_ = intercept
        self.n_iter_ = int(res.nit)
        self.status_ = res.status
        self.objective_ = objective
        self.refit_objective_ = refit_objective
        self.swaps_ = swaps
        self.trace_ = res.trace
        names = getattr(self, "feature_names_in_", None)
        meta = self.trace_.meta
        meta["estimator"] = {
            "class": type(self).__name__, "fit_intercept": bool(self.fit_intercept),
            "intercept": "centering" if centered else "column" if icol is not None else None,
            "intercept_column": icol, "always_select": [int(j) for j in forced],
            "objective_best": objective, "best_iteration": int(res.nit_best),
            "objective_last": float(res.fun), "refit": bool(self.refit),
            "refit_objective": refit_objective, "swap_rounds": int(self.swap_rounds),
            "swaps": swaps}
        if names is not None:
            labels = [str(v) for v in names]
            if icol is not None:
                labels.append(_INTERCEPT)
            meta["feature_names"] = labels

    # -- prediction -----------------------------------------------------------------------

    def _decision(self, X):
        """``X @ coef_ + intercept_``.

        Parameters
        ----------
        X : array_like or sparse matrix, shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return np.asarray(X @ self.coef_).ravel() + self.intercept_

    @property
    def selected_features_(self):
        """ndarray: the selected features (names when the data had them, else indices),
        ``always_select`` included."""
        check_is_fitted(self)
        idx = np.flatnonzero(self.coef_)
        names = getattr(self, "feature_names_in_", None)
        return names[idx] if names is not None else idx


class SparseLinearRegression(RegressorMixin, _SparseLinearModel):
    """Least squares with at most ``s`` nonzero coefficients, solved by a method of the
    package (:func:`rgrasp_viz.solve`).

    Minimises ``(1/2n) ||y - X w - c||^2 (+ (l2/2) ||w||^2)`` subject to ``||w||_0 <= s``
    (``always_select`` features not counted), with the intercept ``c`` exact and free.

    Parameters
    ----------
    s : int, optional
        Sparsity level: features selected besides ``always_select``.  Default
        ``min(10, n_features - len(always_select))`` (``DEFAULT_S``), so that the default
        estimator fits any data.
    method : str, default "htp"
        Any registered method (:func:`rgrasp_viz.method_names`); the default and why:
        :data:`DEFAULT_METHOD`.
    fit_intercept : bool, default True
        Fit an intercept (not counted in ``s``, never thresholded): by centering on dense
        data, by an always-selected column of ones on sparse data.
    always_select : sequence of int, default ()
        Features kept in every support, not counted in ``s``.
    max_iter : int, optional
        Outer iterations (default: the method's).
    tol : float, default 1e-7
        The solver's fixed-point tolerance.
    random_state : None, int or numpy.random.RandomState
        Seeds the stochastic methods (same seed: bit-identical fit and trace).
    eta, J, m, inner :
        Solver options, as in :func:`rgrasp_viz.solve` (step size, epoch length, SVRGSP+'s
        thresholding count, reading of Algorithm 2).
    l2 : float, default 0
        Ridge term on the coefficients (an intercept column, when used, shares it).
    refit : bool, default True
        Refit by exact least squares on the support found (reported as
        ``refit_objective_``; the algorithm's own best objective is ``objective_``).
    swap_rounds : int, default 10
        After the run, at most this many rounds of support swaps judged by exact refits
        (ours, not the paper's; recorded in ``swaps_`` and the trace).  0 switches it off.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    n_iter_ : int
        Outer iterations of the run.
    status_ : rgrasp_viz.Status
        How the run stopped.
    objective_ : float
        The objective of the best iterate the run visited (on the centred problem when
        centering: the training loss with the best intercept for those coefficients).
    refit_objective_ : float or None
        The objective after the refit and the swaps (None without refit).
    swaps_ : list of dict
        The swaps made: round, feature in, feature out, objective after.
    trace_ : rgrasp_viz.Trace
        The run, replayable (:meth:`play`, :func:`rgrasp_viz.play`); ``meta["estimator"]``
        records the intercept handling, refit and swaps, ``meta["feature_names"]`` the
        names the figures show.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        When ``X`` had string column names (a DataFrame).
    """

    _loss = "squares"

    def fit(self, X, y):
        """Fit the model.

        Parameters
        ----------
        X : array_like, sparse matrix or DataFrame, shape (n_samples, n_features)
        y : array_like, shape (n_samples,)

        Returns
        -------
        self
        """
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64,
                             y_numeric=True)
        return self._fit(X, np.asarray(y, dtype=np.float64), "squares")

    def predict(self, X):
        """Predicted targets ``X @ coef_ + intercept_``."""
        return self._decision(X)


class SparseLogisticRegression(ClassifierMixin, _SparseLinearModel):
    """Binary logistic regression with at most ``s`` nonzero coefficients, solved by a
    method of the package (:func:`rgrasp_viz.solve`).

    Minimises ``(1/n) sum log(1 + exp(-y_i (x_i w + c))) (+ (l2/2) ||(w, c)||^2)`` subject to
    ``||w||_0 <= s`` with ``y_i = +1`` for ``classes_[1]`` and ``-1`` for ``classes_[0]``
    (any two labels).  The intercept ``c`` is an always-selected coordinate every method
    updates and never thresholds.

    Parameters and attributes are those of :class:`SparseLinearRegression` (the refit takes
    Newton steps with a backtracking line search), plus ``classes_``.  On linearly separable
    data the unregularised loss has no minimiser: a small ``l2`` keeps the coefficients
    finite.
    """

    _loss = "logistic"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def fit(self, X, y):
        """Fit the model.

        Parameters
        ----------
        X : array_like, sparse matrix or DataFrame, shape (n_samples, n_features)
        y : array_like, shape (n_samples,)
            Two distinct labels.

        Returns
        -------
        self
        """
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64)
        check_classification_targets(y)
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        if len(self.classes_) != 2:
            raise ValueError(f"Only binary classification is supported: y must hold exactly "
                             f"2 classes, got {len(self.classes_)} class(es) "
                             f"{self.classes_.tolist()[:5]}")
        return self._fit(X, np.where(y_idx == 1, 1.0, -1.0), "logistic")

    def decision_function(self, X):
        """``X @ coef_ + intercept_``: positive for ``classes_[1]``."""
        return self._decision(X)

    def predict_proba(self, X):
        """Class probabilities, columns in the order of ``classes_``."""
        a = self.decision_function(X)
        return np.column_stack([_sigmoid(-a), _sigmoid(a)])

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba`."""
        a = self.decision_function(X)
        return np.column_stack([-np.logaddexp(0.0, a), -np.logaddexp(0.0, -a)])

    def predict(self, X):
        """The class of larger probability."""
        check_is_fitted(self)
        return self.classes_[(self.decision_function(X) > 0).astype(int)]


# -- helpers ------------------------------------------------------------------------------


def _sigmoid(a):
    return np.exp(-np.logaddexp(0.0, -a))


def _intercept_start(y, loss):
    """The best constant model: the mean target, or the log-odds of the +1 class."""
    if loss == "squares":
        return float(np.mean(y))
    p = float(np.clip(np.mean(y > 0), 1e-6, 1 - 1e-6))
    return math.log(p / (1 - p))


def _warn_scales(X, name):
    """A :class:`DataWarning` when the columns' standard deviations differ by more than
    ``SCALE_RATIO`` (constant columns ignored)."""
    if X.shape[0] < 2:
        return
    if sp.issparse(X):
        mean = np.asarray(X.mean(axis=0)).ravel()
        sq = np.asarray(X.multiply(X).mean(axis=0)).ravel()
        std = np.sqrt(np.maximum(sq - mean * mean, 0.0))
    else:
        std = X.std(axis=0)
    std = std[std > 1e-12 * max(float(std.max(initial=0.0)), 1e-300)]
    if len(std) >= 2 and std.max() > SCALE_RATIO * std.min():
        warnings.warn(
            f"the features' scales differ by a factor {std.max() / std.min():.3g} (standard "
            f"deviations {std.min():.3g} to {std.max():.3g}): H_s compares raw coefficient "
            f"magnitudes, so the selected features depend on the units; standardize them, "
            f"e.g. make_pipeline(StandardScaler(), {name}(...))",
            DataWarning, stacklevel=4)


def _columns(W, S):
    """``W[:, S]`` as a dense array (``W`` dense, or CSC for cheap column slices)."""
    return np.asarray(W[:, S].toarray()) if sp.issparse(W) else np.asarray(W[:, S])


def _refit(prob, S, x, Wcols=None):
    """The minimiser of ``F`` on the coordinates ``S`` (warm start ``x``): exact least
    squares, or damped Newton steps for the logistic loss.  ``Wcols``: ``prob.W`` or a CSC
    copy of it, to slice columns from.  Returns ``(x_new, F(x_new))``."""
    A = _columns(prob.W if Wcols is None else Wcols, S)
    y, lam, n = prob.y, prob.l2, prob.n
    out = np.zeros(prob.d)
    if prob.loss == "squares":
        if lam:
            G = A.T @ A / n + lam * np.eye(len(S))
            b = np.linalg.lstsq(G, A.T @ y / n, rcond=None)[0]
        else:
            b = np.linalg.lstsq(A, y, rcond=None)[0]
    else:
        b = _newton(A, y, x[S].copy(), lam)
    out[S] = b
    return out, losses.objective(prob.W, y, out, prob.loss, lam)


def _logistic_fun(A, y, b, lam):
    a = A @ b
    return float(np.mean(np.logaddexp(0.0, -y * a))) + 0.5 * lam * float(b @ b)


def _newton(A, y, b, lam, maxiter=_NEWTON_ITER):
    """Damped Newton on the logistic loss over the columns of ``A`` (a tiny Levenberg term
    keeps the system solvable on separable or collinear columns)."""
    n = A.shape[0]
    f = _logistic_fun(A, y, b, lam)
    for _ in range(maxiter):
        a = A @ b
        p = _sigmoid(-y * a)  # = 1 - sigma(y a)
        g = -(A.T @ (y * p)) / n + lam * b
        w = p * (1 - p)
        H = (A.T * w) @ A / n + (lam + 1e-10) * np.eye(len(b))
        try:
            step = np.linalg.solve(H, g)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(H, g, rcond=None)[0]
        t, dec = 1.0, float(g @ step)
        while t > 1e-10:
            b_new = b - t * step
            f_new = _logistic_fun(A, y, b_new, lam)
            if f_new <= f - 1e-4 * t * dec:
                break
            t *= 0.5
        else:
            break
        done = f - f_new <= 1e-12 * max(abs(f), 1e-300)
        b, f = b_new, f_new
        if done:
            break
    return b


def _weighted_colsq(W, W2, w, chunk=1024):
    """``sum_i w_i W_ij^2`` for every column ``j`` (``W2``: the squared entries of a sparse
    ``W``); a dense ``W`` is read in row blocks, never squared whole."""
    if W2 is not None:
        return np.asarray(W2.T @ w).ravel()
    out = np.zeros(W.shape[1])
    for i in range(0, W.shape[0], chunk):
        B = W[i:i + chunk]
        out += w[i:i + chunk] @ (B * B)
    return out


def _swap(prob, x, fun, forced, rounds, s):
    """Support swaps after the run: per round, the ``_SWAP_CANDIDATES`` best entering and
    leaving coordinates (one-coordinate estimates of the objective change) are paired, every
    pair refitted exactly, and the best pair kept if it lowers the objective; stops at the
    first round without improvement.  A support with fewer than ``s`` coordinates (a run that
    stopped early, e.g. diverged) first grows: the round adds the best entering candidate
    (``"out": None``).  Returns ``(x, F(x), swaps)``."""
    W, y, lam, n = prob.W, prob.y, prob.l2, prob.n
    forced_mask = np.zeros(prob.d, dtype=bool)
    forced_mask[forced] = True
    forced = np.asarray(forced, dtype=np.int64)
    swaps = []
    W2 = None
    Wcols = W.tocsc() if sp.issparse(W) else W
    for r in range(1, rounds + 1):
        S = np.flatnonzero((x != 0) & ~forced_mask)
        outside = np.flatnonzero((x == 0) & ~forced_mask)
        if len(outside) == 0 or (len(S) == 0 and s == 0):
            break
        a = np.asarray(W @ x).ravel()
        deriv = losses.loss_derivative(a, y, prob.loss)
        curv = np.ones(n) if prob.loss == "squares" else (
            lambda q: q * (1 - q))(_sigmoid(y * a))
        g = np.asarray(W.T @ deriv).ravel() / n + lam * x
        if W2 is None:
            W2 = W.multiply(W).tocsr() if sp.issparse(W) else None
        h = np.maximum(_weighted_colsq(W, W2, curv) / n + lam, 1e-300)
        gain = g[outside] ** 2 / (2 * h[outside])  # decrease from adding j alone
        cost = x[S] ** 2 * h[S] / 2  # increase from removing i alone
        ins = outside[np.argsort(-gain, kind="stable")[:_SWAP_CANDIDATES]]
        # None: add without removing (only while the support is short of s)
        outs = [None] if len(S) < s else list(S[np.argsort(cost, kind="stable")
                                                [:_SWAP_CANDIDATES]])
        best = None
        for j in ins:
            for i in outs:
                keep = S if i is None else S[S != i]
                support = np.sort(np.concatenate([keep, [j], forced])).astype(np.int64)
                x_try = x.copy()
                if i is not None:
                    x_try[i] = 0.0
                x_new, f_new = _refit(prob, support, x_try, Wcols)
                if best is None or f_new < best[1]:
                    best = (x_new, f_new, int(j), None if i is None else int(i))
        if best is None or not best[1] < fun * (1 - 1e-9) - 1e-300:
            break
        x, fun = best[0], best[1]
        swaps.append({"round": r, "in": best[2], "out": best[3], "objective": float(fun)})
    return x, float(fun), swaps
