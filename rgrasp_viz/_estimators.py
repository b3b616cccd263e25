"""scikit-learn estimators over :func:`rgrasp_viz.solve`: sparse least squares and sparse
binary logistic regression with an exact intercept, feature names and a replayable trace,
and their cross-validated versions that choose the sparsity level along a warm-started path.

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
* **support swaps until stable** after the run (ours, after abess's splicing): one selected
  coordinate traded for an unselected one, repeated until no single swap lowers the
  objective.  For least squares every pair is scored exactly (rank-one updates of the fit on
  the support); for the logistic loss the pairs are ranked on the Newton quadratic model and
  the best ones checked by an exact refit.  ``swap_rounds`` caps the rounds as a safety net;
  a fit that reaches the cap while swaps still lower the objective warns
  (:class:`~rgrasp_viz.exceptions.ConvergenceWarning`) and reports ``status_ = Status.MAX_ITER``.
  With swaps the run skips ``solve``'s end-of-run minimiser probe (the swaps leave any
  support that one exact swap improves; ``fit_info_["minimiser_probe"]`` says whether it
  ran).  The logistic refits run in a kernel (:mod:`rgrasp_viz._kernels.newton`), and so
  do the run's own exact logistic fits (HTP's, GraSP's) on ridge-penalised supports of at
  most ``NEWTON_MAX_COLUMNS`` coordinates (``solvers._subsolvers.logistic_exact_by_newton``:
  the same minimiser as ``solve``'s L-BFGS to its tolerance, charged by the same work rule;
  ``fit_info_["exact_logistic_fit"]`` says ``"newton"``);
* ``sample_weight`` (and ``class_weight`` for the classifier): the weighted mean loss;
* for the logistic loss, a small **ridge term** by default (``l2=LOGISTIC_L2``, ours): without
  it near-separable data drives the coefficients to infinity and the held-out log-loss up.

The estimators need scikit-learn (an optional dependency, the ``estimators`` extra):
``rv.SparseLinearRegression`` imports this module on first use.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import warnings

import numpy as np
import scipy.sparse as sp

try:
    import sklearn  # noqa: F401
except ModuleNotFoundError as exc:  # the optional dependency: say which extra installs it
    raise ImportError("rgrasp_viz._estimators needs scikit-learn, an optional dependency: "
                      "pip install rgrasp_viz[estimators]") from exc
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.model_selection import check_cv
from sklearn.utils import check_random_state
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._kernels import HAVE_NUMBA
from ._kernels.newton import logistic_newton_dense
from ._kernels.swaps import swap_scores
from ._kernels.threads import BlasThreads
from ._problems import Problem
from .exceptions import ConvergenceWarning, DataWarning
from .solvers import Status, solve
from .solvers._driver import without_minimiser_probe
from .solvers._params import check_always_select
from .solvers._subsolvers import logistic_exact_by_newton

__all__ = ["DEFAULT_METHOD", "LOGISTIC_L2", "SCALE_RATIO", "SWAP_ROUNDS",
           "SparseLinearRegression", "SparseLinearRegressionCV", "SparseLogisticRegression",
           "SparseLogisticRegressionCV"]

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

SWAP_ROUNDS = 1000
"""Default cap on the swap rounds.  Every round strictly lowers the objective, so the search
ends on its own (no support is visited twice); the cap only bounds the work on pathological
data, and reaching it is reported."""

LOGISTIC_L2 = 1e-3
"""Default ridge term ``(l2/2) ||(w, c)||^2`` of :class:`SparseLogisticRegression` (ours, not
the paper's): it keeps the coefficients finite on (near-)separable data, where the plain
logistic loss has no minimiser; ``l2=0`` gives the paper's objective."""

_LOGISTIC_CHECKS = 5
"""Logistic swaps: the pairs ranked best on the Newton quadratic model that are checked by
an exact refit per round."""

_NEWTON_ITER = 50
_REFIT_MEMO = 8
"""Least-squares refits kept per working problem, by support (a path over ``s`` refits each
point's start support, the previous point's last refit)."""
_GRAM_MAX_COLS = 256
_GRAM_MAX_WORK = 4e6
"""Dense least squares with at most ``_GRAM_MAX_COLS`` columns and ``n d^2`` at most
``_GRAM_MAX_WORK``: ``A^T A`` and ``A^T b`` are formed once per working problem, and the
refits and swap scores read their blocks instead of gathering columns of ``A``."""
_GRAM_CHOL_RATIO = 1e-4
"""A Gram block whose Cholesky diagonal spans more than this ratio (condition number about
its inverse square, 1e8) is refitted by ``lstsq`` rather than from the Gram matrix."""
_INTERCEPT = "(intercept)"


def _intercept_start(y, loss, w=None):
    """The best constant model: the mean target, or the log-odds of the +1 class."""
    w = np.ones(len(y)) if w is None else w
    if loss == "squares":
        return float(np.average(y, weights=w))
    p = float(np.clip(np.average(y > 0, weights=w), 1e-6, 1 - 1e-6))
    return math.log(p / (1 - p))


class _SparseLinearModel(BaseEstimator):
    """Shared fit machinery of the two estimators (see their docstrings)."""

    _loss = "squares"

    def __init__(self, s=None, *, method=DEFAULT_METHOD, fit_intercept=True, always_select=(),
                 max_iter=None, tol=1e-7, random_state=None, eta=None, J=None, m=None,
                 inner="paper", l2=0.0, refit=True, swap_rounds=SWAP_ROUNDS):
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

    def _forced(self, d):
        """``always_select`` as sorted column indices; names are looked up in
        ``feature_names_in_`` (a DataFrame's columns)."""
        a = self.always_select
        if a is None:
            return ()
        items = [a] if isinstance(a, str) else list(np.ravel(np.asarray(a, dtype=object)))
        if any(isinstance(v, str) for v in items):
            names = getattr(self, "feature_names_in_", None)
            if names is None:
                raise ValueError(
                    f"always_select holds column names {[v for v in items if isinstance(v, str)]}"
                    f" but X has no column names: fit on a DataFrame, or pass indices")
            lookup = {str(v): i for i, v in enumerate(names)}
            missing = [v for v in items if isinstance(v, str) and v not in lookup]
            if missing:
                raise ValueError(f"always_select names {missing} are not columns of X "
                                 f"(columns: {list(lookup)[:10]}...)")
            items = [lookup[v] if isinstance(v, str) else v for v in items]
        if items and all(isinstance(v, numbers.Integral) and not isinstance(v, bool)
                         for v in items):
            items = np.asarray(items, dtype=np.int64)
        return check_always_select(items, d)

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
        forced = self._forced(d)
        free = d - len(forced)
        s = min(DEFAULT_S, free) if self.s is None else self.s
        if isinstance(s, bool) or not isinstance(s, numbers.Integral) or not 1 <= s <= free:
            raise ValueError(f"s must be an integer in [1, {free}] (n_features - "
                             f"len(always_select)), got {self.s!r}")
        return int(s), list(forced)

    def _swaps_run(self):
        """Whether support swaps follow the run (they need the refit)."""
        return bool(self.refit) and bool(self.swap_rounds)

    def _seed(self):
        rs = self.random_state
        if rs is None or isinstance(rs, numbers.Integral) and not isinstance(rs, bool):
            return rs
        return int(check_random_state(rs).randint(2**31 - 1))

    def _prepare(self, X, y_work, loss, sample_weight):
        """The working problem: ``(data, s, forced)`` with ``data`` a :class:`_Data`."""
        n, d = X.shape
        if n < 2:
            raise ValueError(f"n_samples={n}: at least 2 samples are needed to fit "
                             f"{type(self).__name__}")
        s, forced = self._check_options(d)
        w = _normalized_weights(sample_weight, X)
        return _Data.build(X, y_work, loss, w, bool(self.fit_intercept), float(self.l2),
                           forced, type(self).__name__), s

    def _fit(self, X, y_work, loss, sample_weight=None, *, start=None):
        """Solve on the validated ``X`` and working targets; set every fitted attribute.
        ``start``: a support (column indices of ``X``) to start from instead of running
        the method (the warm start of a path over ``s``)."""
        data, s = self._prepare(X, y_work, loss, sample_weight)
        self._fit_data(data, s, start=start)
        return self

    def _fit_data(self, data, s, *, start=None):
        res = None
        if start is not None:
            x = data.x0.copy()
            objective = None
            support = _with_forced(start, data.forced)  # start: ascending, distinct
            nit, status, trace = 1, Status.CONVERGED, None  # the refit; plus swap rounds
        elif data.w is not None and data.loss == "logistic":
            if self.method != "htp":
                raise ValueError(
                    f"sample_weight/class_weight with the logistic loss are fitted by the "
                    f"estimator's weighted HTP: method must be 'htp', got {self.method!r}")
            x, objective, nit = _weighted_htp(data, s, self.max_iter, self.tol)
            support = np.flatnonzero(x)
            status, trace = Status.CONVERGED, None
        else:
            prob = data.problem()
            # the swaps until stable search the run's neighbourhood one exact swap at a
            # time, so the run's own end-of-run probe for a hard-thresholding fixed point
            # (one GraSP step) would only repeat a coarser check of the same question
            probe = contextlib.nullcontext() if not self._swaps_run() else \
                without_minimiser_probe()
            # the run's exact logistic fits by the Newton iteration of the refits (the same
            # minimiser on the small supports of an estimator, without L-BFGS's overhead)
            newton = logistic_exact_by_newton() if data.loss == "logistic" else \
                contextlib.nullcontext()
            with probe, newton:
                res = solve(prob, self.method, s=s, eta=self.eta, J=self.J, m=self.m,
                            inner=self.inner, max_iter=self.max_iter, tol=self.tol,
                            x0=data.x0, random_state=self._seed(), always_select=data.forced)
            x = np.asarray(res.x_best, dtype=np.float64).copy()
            objective = float(res.fun_best)
            support = np.flatnonzero(x)
            nit, status, trace = int(res.nit), res.status, res.trace
        refit_objective = None
        swaps = []
        capped = False
        if self.refit or start is not None:
            # small dense algebra: a multi-threaded BLAS on busy cores only waits
            with BlasThreads(1):
                support = _with_forced(support, data.forced)
                x_new, refit_objective = data.refit(support, x)
                if objective is not None:  # never worse than the run's own iterate
                    f_run = data.objective(data.columns(support), x[support], support)
                    if refit_objective > f_run:
                        refit_objective = f_run
                        x_new = x
                x = x_new
                if self.swap_rounds:
                    x, refit_objective, swaps, capped = _local_search(
                        data, x, refit_objective, s, int(self.swap_rounds))
        if objective is None:
            objective = refit_objective
            nit += len(swaps)
        if capped:
            status = Status.MAX_ITER
            warnings.warn(
                f"{type(self).__name__}: the support swaps reached swap_rounds="
                f"{self.swap_rounds} while still lowering the objective (status_ = "
                f"MAX_ITER); raise swap_rounds for a stable support", ConvergenceWarning,
                stacklevel=3)
        coef, intercept = data.unpack(x)
        self._set_fitted(res, coef, intercept, objective, refit_objective, swaps, data,
                         nit, status, trace, capped)

    def _set_fitted(self, res, coef, intercept, objective, refit_objective, swaps, data,
                    nit, status, trace, capped):
        self._coef = coef
        self._intercept = intercept
        self.n_iter_ = nit
        self.status_ = status
        self.objective_ = objective
        self.refit_objective_ = refit_objective
        self.swaps_ = swaps
        self.trace_ = trace
        names = getattr(self, "feature_names_in_", None)
        info = {
            "class": type(self).__name__, "fit_intercept": bool(self.fit_intercept),
            "intercept": data.intercept_mode, "intercept_column": data.icol,
            "always_select": [int(j) for j in data.forced], "objective_best": objective,
            "best_iteration": None if res is None else int(res.nit_best),
            "objective_last": None if res is None else float(res.fun),
            "refit": bool(self.refit), "refit_objective": refit_objective,
            "swap_rounds": int(self.swap_rounds), "swaps": swaps,
            "swap_cap_reached": bool(capped),
            "minimiser_probe": res is not None and data.loss == "squares"
            and not self._swaps_run(),
            "sample_weight": data.w is not None,
            "exact_logistic_fit": "newton" if res is not None and data.loss == "logistic"
            else None}
        self.fit_info_ = info
        if trace is None:
            return
        trace.meta["estimator"] = info
        if names is not None:
            labels = [str(v) for v in names]
            if data.icol is not None:
                labels.append(_INTERCEPT)
            trace.meta["feature_names"] = labels

    # -- prediction -----------------------------------------------------------------------

    def _decision(self, X):
        """``X @ coef_ + intercept_`` as a vector of shape (n_samples,)."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return np.asarray(X @ self._coef).ravel() + self._intercept

    @property
    def selected_features_(self):
        """ndarray: the selected features (names when the data had them, else indices),
        ``always_select`` included."""
        check_is_fitted(self)
        idx = np.flatnonzero(self._coef)
        names = getattr(self, "feature_names_in_", None)
        return names[idx] if names is not None else idx


_PARAMS = """
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
        Fit an intercept (not counted in ``s``, never thresholded){icpt}.
    always_select : sequence of int or str, default ()
        Features kept in every support, not counted in ``s``: column indices, or column
        names when fitting on a DataFrame.
    max_iter : int, optional
        Outer iterations (default: the method's).
    tol : float, default 1e-7
        The solver's fixed-point tolerance.
    random_state : None, int or numpy.random.RandomState
        Seeds the stochastic methods (same seed: bit-identical fit and trace).
    eta, J, m, inner :
        Solver options, as in :func:`rgrasp_viz.solve` (step size, epoch length, SVRGSP+'s
        thresholding count, reading of Algorithm 2).
    l2 : float, default {l2}
        Ridge term on the coefficients (an intercept column, when used, shares it).{l2note}
    refit : bool, default True
        Refit {refit} on the support found (reported as ``refit_objective_``; the
        algorithm's own best objective is ``objective_``).
    swap_rounds : int, default 1000
        Support swaps after the run run until no single swap lowers the objective; this
        caps their rounds (a safety net: reaching it warns with
        :class:`~rgrasp_viz.exceptions.ConvergenceWarning` and sets ``status_`` to ``MAX_ITER``).  0
        switches the swaps off (ours, not the paper's; recorded in ``swaps_``)."""

_ATTRS = """
    Attributes
    ----------
    coef_ : ndarray of shape {coef_shape}
        The coefficients, at most ``s`` nonzero besides ``always_select``.
    intercept_ : {icpt_type}
        The intercept (0 when ``fit_intercept=False``).
    n_iter_ : int
        Outer iterations of the run.
    status_ : rgrasp_viz.Status
        How the fit stopped: the run's status, or ``MAX_ITER`` when the swaps hit
        ``swap_rounds``.  With swaps (the default) the run skips :func:`rgrasp_viz.solve`'s
        end-of-run minimiser probe: the swaps that follow leave the run's support whenever
        one exact swap lowers the objective, a finer search of the neighbourhood the probe
        samples with one GraSP step; so ``HT_FIXED_POINT`` is reported only with
        ``swap_rounds=0``.
    objective_ : float
        The objective of the best iterate the run visited (on the centred problem when
        centering: the training loss with the best intercept for those coefficients).
    refit_objective_ : float or None
        The objective after the refit and the swaps (None without refit).
    swaps_ : list of dict
        The swaps made: round, feature in, feature out, objective after.
    fit_info_ : dict
        How the fit was made (intercept handling, refit, swaps, whether the cap was hit).
    trace_ : rgrasp_viz.Trace or None
        The run, replayable (:meth:`play`, :func:`rgrasp_viz.play`); ``meta["estimator"]``
        is ``fit_info_``, ``meta["feature_names"]`` the names the figures show.  None for
        a warm-started or weighted-logistic fit (no run of a method of the paper).
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of str
        When ``X`` had string column names (a DataFrame)."""


class SparseLinearRegression(RegressorMixin, _SparseLinearModel):
    __doc__ = """Least squares with at most ``s`` nonzero coefficients, solved by a method of
    the package (:func:`rgrasp_viz.solve`), polished by support swaps until stable.

    Minimises ``(1/2n) ||y - X w - c||^2 (+ (l2/2) ||w||^2)`` subject to ``||w||_0 <= s``
    (``always_select`` features not counted), with the intercept ``c`` exact and free; with
    ``sample_weight`` the squared residuals are weighted (``n`` becomes the weights' sum).
""" + _PARAMS.format(
        icpt=": by centering on dense data, by an always-selected column of ones on "
             "sparse data", l2="0", l2note="", refit="by exact least squares") + """
""" + _ATTRS.format(coef_shape="(n_features,)", icpt_type="float") + """

    See Also
    --------
    SparseLinearRegressionCV : chooses ``s`` by cross-validation or an information
        criterion along a warm-started path.
    SparseLogisticRegression : the same for binary classification.
    sklearn.linear_model.OrthogonalMatchingPursuit : greedy forward selection.
    sklearn.linear_model.Lasso : the convex (l1) relaxation.

    Examples
    --------
    >>> import numpy as np
    >>> import rgrasp_viz as rv
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((100, 20))
    >>> y = 3 * X[:, 2] - 2 * X[:, 7] + 0.1 * rng.standard_normal(100)
    >>> reg = rv.SparseLinearRegression(s=2).fit(X, y)
    >>> reg.selected_features_
    array([2, 7])
    >>> np.round(reg.coef_[[2, 7]], 1)
    array([ 3., -2.])
    """

    _loss = "squares"

    def fit(self, X, y, sample_weight=None):
        """Fit the model.

        Parameters
        ----------
        X : array_like, sparse matrix or DataFrame, shape (n_samples, n_features)
            Training data (CSR is kept sparse).
        y : array_like, shape (n_samples,)
            Targets.
        sample_weight : array_like of shape (n_samples,), optional
            Non-negative weights of the samples (integer weights fit as repeated rows).

        Returns
        -------
        self : SparseLinearRegression
            The fitted estimator.
        """
        X, y = _validate_fit(self, X, y, y_numeric=True)
        return self._fit(X, np.asarray(y, dtype=np.float64), "squares", sample_weight)

    @property
    def coef_(self):
        check_is_fitted(self, "_coef")
        return self._coef

    @property
    def intercept_(self):
        check_is_fitted(self, "_coef")
        return self._intercept

    def predict(self, X):
        """Predicted targets ``X @ coef_ + intercept_``.

        Parameters
        ----------
        X : array_like, sparse matrix or DataFrame, shape (n_samples, n_features)
            Samples.

        Returns
        -------
        ndarray of shape (n_samples,)
            The predictions.
        """
        return self._decision(X)


def _validate_fit(est, X, y, y_numeric=False):
    """``validate_data(est, X, y, accept_sparse="csr", dtype=np.float64, ...)`` for ``fit``.

    The common case, a finite float64 ndarray ``X`` (at least one sample and one feature) and
    a 1-D numeric ``y`` of as many finite entries, is accepted as is (scikit-learn's checks
    would return the same arrays): ``n_features_in_`` is set and a stale ``feature_names_in_``
    removed, as scikit-learn does.  Anything else (lists, DataFrames, sparse matrices, other
    dtypes, non-finite values, wrong shapes) goes through scikit-learn's validation, with
    its conversions and error messages."""
    if (type(X) is np.ndarray and X.dtype == np.float64 and X.ndim == 2
            and X.shape[0] >= 1 and X.shape[1] >= 1
            and type(y) is np.ndarray and y.ndim == 1 and y.shape[0] == X.shape[0]
            and y.dtype.kind in "iuf" and y.dtype.itemsize <= 8
            and math.isfinite(float(np.add.reduce(X, axis=None)))
            and (y.dtype.kind != "f" or math.isfinite(float(np.add.reduce(y))))):
        est.n_features_in_ = X.shape[1]
        if hasattr(est, "feature_names_in_"):
            del est.feature_names_in_
        return X, y
    return validate_data(est, X, y, accept_sparse="csr", dtype=np.float64,
                         y_numeric=y_numeric)


def _classes(est, y, sample_weight, class_weight):
    """Binary labels as +-1, ``classes_`` set, weights combined with ``class_weight``."""
    if not (isinstance(y, np.ndarray) and y.ndim == 1 and y.dtype.kind in "iub"):
        check_classification_targets(y)  # integer labels always pass it
    est.classes_, y_idx = np.unique(y, return_inverse=True)
    if len(est.classes_) != 2:
        raise ValueError(f"Only binary classification is supported: y must hold exactly "
                         f"2 classes, got {len(est.classes_)} class(es) "
                         f"{est.classes_.tolist()[:5]}")
    if class_weight is not None:
        cw = compute_sample_weight(class_weight, y)
        sample_weight = cw if sample_weight is None else (
            cw * np.asarray(sample_weight, dtype=np.float64))
    return np.where(y_idx == 1, 1.0, -1.0), sample_weight


class _ClassifierAPI:
    """``coef_`` (1, d), ``intercept_`` (1,), probabilities and predictions."""

    @property
    def coef_(self):
        check_is_fitted(self, "_coef")
        return self._coef[None, :]

    @property
    def intercept_(self):
        check_is_fitted(self, "_coef")
        return np.array([self._intercept])

    def decision_function(self, X):
        """``X @ coef_.T + intercept_``: positive for ``classes_[1]``.

        Parameters
        ----------
        X : array_like, sparse matrix or DataFrame, shape (n_samples, n_features)
            Samples.

        Returns
        -------
        ndarray of shape (n_samples,)
            The margins.
        """
        return self._decision(X)

    def predict_proba(self, X):
        """Class probabilities, columns in the order of ``classes_``.

        Parameters
        ----------
        X : array_like, sparse matrix or DataFrame, shape (n_samples, n_features)
            Samples.

        Returns
        -------
        ndarray of shape (n_samples, 2)
            The probabilities.
        """
        a = self.decision_function(X)
        return np.column_stack([_sigmoid(-a), _sigmoid(a)])

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba`.

        Parameters
        ----------
        X : array_like, sparse matrix or DataFrame, shape (n_samples, n_features)
            Samples.

        Returns
        -------
        ndarray of shape (n_samples, 2)
            The log-probabilities.
        """
        a = self.decision_function(X)
        return np.column_stack([-np.logaddexp(0.0, a), -np.logaddexp(0.0, -a)])

    def predict(self, X):
        """The class of larger probability.

        Parameters
        ----------
        X : array_like, sparse matrix or DataFrame, shape (n_samples, n_features)
            Samples.

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        check_is_fitted(self)
        return self.classes_[(self.decision_function(X) > 0).astype(int)]


class SparseLogisticRegression(_ClassifierAPI, ClassifierMixin, _SparseLinearModel):
    __doc__ = """Binary logistic regression with at most ``s`` nonzero coefficients, solved
    by a method of the package (:func:`rgrasp_viz.solve`), polished by support swaps until
    stable.

    Minimises ``(1/n) sum log(1 + exp(-y_i (x_i w + c))) + (l2/2) ||(w, c)||^2`` subject to
    ``||w||_0 <= s`` with ``y_i = +1`` for ``classes_[1]`` and ``-1`` for ``classes_[0]``
    (any two labels); with sample or class weights the per-sample losses are weighted.
    The intercept ``c`` is an always-selected coordinate every method updates and never
    thresholds.
""" + _PARAMS.format(
        icpt=": an always-selected column of ones", l2="LOGISTIC_L2 (1e-3)",
        l2note=" The default (ours) keeps the coefficients finite on separable data; "
               "``l2=0`` is the paper's objective.",
        refit="by Newton steps with a backtracking line search") + """
    class_weight : dict, "balanced" or None, default None
        Weights of the classes (multiplying ``sample_weight``), as in scikit-learn.
""" + _ATTRS.format(coef_shape="(1, n_features)", icpt_type="ndarray of shape (1,)") + """
    classes_ : ndarray of shape (2,)
        The two labels.

    See Also
    --------
    SparseLogisticRegressionCV : chooses ``s`` by cross-validation or an information
        criterion along a warm-started path.
    SparseLinearRegression : the same for least squares.
    sklearn.linear_model.LogisticRegression : l1 / l2 penalised logistic regression.

    Examples
    --------
    >>> import rgrasp_viz as rv
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.preprocessing import StandardScaler
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> clf = rv.SparseLogisticRegression(s=5).fit(StandardScaler().fit_transform(X), y)
    >>> clf.coef_.shape, clf.intercept_.shape
    ((1, 30), (1,))
    >>> int((clf.coef_ != 0).sum())
    5
    """

    _loss = "logistic"

    def __init__(self, s=None, *, method=DEFAULT_METHOD, fit_intercept=True, always_select=(),
                 max_iter=None, tol=1e-7, random_state=None, eta=None, J=None, m=None,
                 inner="paper", l2=LOGISTIC_L2, refit=True, swap_rounds=SWAP_ROUNDS,
                 class_weight=None):
        super().__init__(s, method=method, fit_intercept=fit_intercept,
                         always_select=always_select, max_iter=max_iter, tol=tol,
                         random_state=random_state, eta=eta, J=J, m=m, inner=inner, l2=l2,
                         refit=refit, swap_rounds=swap_rounds)
        self.class_weight = class_weight

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def fit(self, X, y, sample_weight=None):
        """Fit the model.

        Parameters
        ----------
        X : array_like, sparse matrix or DataFrame, shape (n_samples, n_features)
            Training data (CSR is kept sparse).
        y : array_like, shape (n_samples,)
            Two distinct labels.
        sample_weight : array_like of shape (n_samples,), optional
            Non-negative weights of the samples (integer weights fit as repeated rows).

        Returns
        -------
        self : SparseLogisticRegression
            The fitted estimator.
        """
        X, y = _validate_fit(self, X, y)
        y_pm, sample_weight = _classes(self, y, sample_weight, self.class_weight)
        return self._fit(X, y_pm, "logistic", sample_weight)


# -- the working problem --------------------------------------------------------------------


def _check_sample_weight(sample_weight, n):
    """``sample_weight`` as a float64 array of ``n`` finite, non-negative weights (a scalar
    gives equal weights), or a ValueError naming what is wrong."""
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.ndim == 0:
        w = np.full(n, float(w))
    if w.ndim != 1 or w.shape[0] != n:
        raise ValueError(f"sample_weight must be a scalar or have shape ({n},), got shape "
                         f"{np.shape(sample_weight)}")
    if not np.isfinite(w).all():
        raise ValueError("sample_weight contains NaN or infinity")
    if (w < 0).any():
        raise ValueError("sample_weight must be non-negative (negative values are not "
                         "weights)")
    return w


def _normalized_weights(sample_weight, X):
    """Weights of mean 1 (so the objective is the weighted mean loss), or None when they
    are absent or all equal (the unweighted fit, bit for bit)."""
    if sample_weight is None:
        return None
    w = _check_sample_weight(sample_weight, X.shape[0])
    total = float(w.sum())
    if not total > 0:
        raise ValueError("every sample weight is zero (they sum to 0): at least one sample "
                         "must have a positive weight")
    if np.all(w == w[0]):
        return None
    return w * (len(w) / total)


class _Data:
    """The problem the estimators solve: the (centred, row-scaled, intercept-augmented)
    design ``A``, targets ``b``, the logistic sample weights ``w`` (least squares folds
    them into the rows), and what it takes to map a solution back to ``coef_, intercept_``.
    """

    @classmethod
    def build(cls, X, y, loss, w, fit_intercept, l2, forced, name):
        self = cls()
        n, d = X.shape
        self.loss, self.l2, self.d, self.n = loss, l2, d, n
        self.forced = list(forced)
        self.sparse = sp.issparse(X)
        self.x_mean, self.y_mean = None, 0.0
        self.icol = None
        self.w = w if loss == "logistic" else None
        sw = None if w is None or loss == "logistic" else np.sqrt(w)
        if fit_intercept and loss == "squares" and not self.sparse:
            self.intercept_mode = "centering"
            if w is None:
                with np.errstate(over="ignore", invalid="ignore"):
                    self.x_mean = X.mean(axis=0)
                self.y_mean = float(y.mean())
            else:
                self.x_mean = (w @ X) / n
                self.y_mean = float(w @ y) / n
            with np.errstate(over="ignore", invalid="ignore"):  # finite X may overflow here
                A = X - self.x_mean
            over = np.flatnonzero(~np.isfinite(A).all(axis=0))
            if over.size:
                j = int(over[0])
                raise ValueError(f"column {j} of X overflows float64 when centred (its "
                                 f"entries reach {np.max(np.abs(X[:, j])):.3g}, finite but so "
                                 f"large that their mean or X - mean is not); rescale it")
            b = y - self.y_mean
            colsq = np.einsum("ij,ij->j", A, A)
            if sw is not None:
                A *= sw[:, None]
                b = b * sw
                colsq = np.einsum("ij,ij->j", A, A)
            std = np.sqrt(colsq / n)
        else:
            std = _column_std(X)
            if fit_intercept:
                self.intercept_mode = "column"
                ones = np.ones((n, 1))
                A = sp.hstack([X, sp.csr_matrix(ones)], format="csr") if self.sparse \
                    else np.hstack([X, ones])
                self.icol = d
                self.forced.append(d)
            else:
                self.intercept_mode = None
                A = X
            b = y
            if sw is not None:
                A = sp.diags(sw) @ A if self.sparse else A * sw[:, None]
                b = b * sw
            colsq = None
        _warn_scales(std, name)
        self.A, self.b = A, b
        self.dA = A.shape[1]
        self.Acols = A.tocsc() if self.sparse else A
        self._colsq = colsq
        self._A2 = None
        self.x0 = None
        if self.icol is not None:
            self.x0 = np.zeros(self.dA)
            self.x0[self.icol] = _intercept_start(y, loss, self.w)
        else:
            self.x0 = np.zeros(self.dA)
        return self

    def problem(self):
        return Problem(self.A, self.b, loss=self.loss, l2=self.l2)

    def unpack(self, x):
        coef = x[:self.d].copy()
        if self.icol is not None:
            intercept = float(x[self.icol])
        elif self.x_mean is not None:
            intercept = self.y_mean - float(self.x_mean @ coef)
        else:
            intercept = 0.0
        return coef, intercept

    def colsq(self, c=None):
        """``sum_i c_i A_ij^2`` (``c`` None: 1)."""
        if c is None:
            if self._colsq is None:
                self._colsq = _weighted_colsq(self.A, self._sq(), np.ones(self.n))
            return self._colsq
        return _weighted_colsq(self.A, self._sq(), c)

    def _sq(self):
        if self.sparse and self._A2 is None:
            self._A2 = self.A.multiply(self.A).tocsr()
        return self._A2

    def columns(self, S):
        return _columns(self.Acols, S)

    def gram_columns(self, S, AS):
        """``A^T A[:, S]`` (least squares: fixed across swap rounds, so each column is
        computed once and kept, in the columns of one growing array; a round after a swap
        computes one new column)."""
        if len(S) == 0:
            return np.zeros((self.dA, 0))
        slot = self.__dict__.setdefault("_gram_slot", {})
        missing = [k for k, j in enumerate(S) if int(j) not in slot]
        if missing:
            new = np.asarray(self.A.T @ AS[:, missing])
            kept = self.__dict__.get("_gram_cols")
            used = len(slot)
            if kept is None or used + len(missing) > kept.shape[1]:
                grown = np.empty((self.dA, max(2 * (used + len(missing)), 16)))
                if kept is not None:
                    grown[:, :used] = kept[:, :used]
                kept = self._gram_cols = grown
            kept[:, used:used + len(missing)] = new
            for t, k in enumerate(missing):
                slot[int(S[k])] = used + t
        return self._gram_cols[:, [slot[int(j)] for j in S]]

    def gram(self):
        """``(A^T A, A^T b)`` of a dense least-squares problem with few columns
        (``_GRAM_MAX_WORK``), formed on first use; otherwise None."""
        g = self.__dict__.get("_gram", False)
        if g is False:
            g = None
            if (self.loss == "squares" and not self.sparse and self.dA <= _GRAM_MAX_COLS
                    and self.n * self.dA * self.dA <= _GRAM_MAX_WORK):
                A = np.asarray(self.A)
                g = (A.T @ A, A.T @ self.b)
            self._gram = g
        return g

    def Atb(self):
        """``A^T b`` (least squares), computed once."""
        c = self.__dict__.get("_Atb")
        if c is None:
            c = self._Atb = np.asarray(self.A.T @ self.b).ravel()
        return c

    def pen(self, S):
        """1 for the penalised coordinates among ``S``, 0 for the intercept column."""
        p = np.ones(len(S))
        if self.icol is not None:
            p[np.asarray(S) == self.icol] = 0.0
        return p

    def objective(self, AS, xs, S):
        """``F`` at the point with values ``xs`` on the columns ``AS`` (indices ``S``)."""
        a = AS @ xs
        if self.loss == "squares":
            r = a - self.b
            f = 0.5 * float(r @ r) / self.n
        else:
            ell = np.logaddexp(0.0, -self.b * a)
            if self.w is not None:
                ell *= self.w
            f = float(ell.sum() / len(ell))  # np.mean's value, without its overhead
        return f + 0.5 * self.l2 * float(self.pen(S) @ (xs * xs)) if self.l2 else f

    def refit(self, S, x):
        """The minimiser of ``F`` on the coordinates ``S`` (warm start ``x``): exact least
        squares, or damped Newton steps.  Returns ``(x_new, F(x_new))``."""
        if self.loss == "squares":  # a function of S alone: the last few are kept
            memo = self.__dict__.setdefault("_refit_memo", {})
            key = np.asarray(S, dtype=np.int64).tobytes()
            if key in memo:
                out, f = memo[key]
                return out.copy(), f
        out = np.zeros(self.dA)
        st = _gram_state(self, self.gram(), S) if self.loss == "squares" and len(S) else None
        if st is not None and st[-1]:  # the fit from the Gram matrix, well conditioned
            coef, r = st[8], st[10]
            out[S] = coef
            f = 0.5 * float(r @ r) / self.n
            if self.l2:
                f = f + 0.5 * self.l2 * float(self.pen(S) @ (coef * coef))
            if _REFIT_MEMO > 0:
                if len(memo) >= _REFIT_MEMO:
                    del memo[next(iter(memo))]
                memo[key] = (out.copy(), f)
            return out, f
        AS = self.columns(S)
        if self.loss == "squares":
            if self.l2:
                G = AS.T @ AS / self.n + self.l2 * np.diag(self.pen(S))
                coef = np.linalg.lstsq(G, AS.T @ self.b / self.n, rcond=None)[0]
            else:
                coef = np.linalg.lstsq(AS, self.b, rcond=None)[0]
        else:
            coef = _logistic_refit(AS, self.b, x[S], self.l2 * self.pen(S), self.w)
        out[S] = coef
        f = self.objective(AS, coef, S)
        if self.loss == "squares" and _REFIT_MEMO > 0:
            if len(memo) >= _REFIT_MEMO:
                del memo[next(iter(memo))]
            memo[key] = (out.copy(), f)
        return out, f


def _column_std(X):
    n = X.shape[0]
    if sp.issparse(X):
        mean = np.asarray(X.sum(axis=0)).ravel() / n
        sq = np.asarray(X.multiply(X).sum(axis=0)).ravel() / n
    else:
        mean = X.sum(axis=0) / n
        sq = np.einsum("ij,ij->j", X, X) / n
    return np.sqrt(np.maximum(sq - mean * mean, 0.0))


# -- helpers ------------------------------------------------------------------------------


def _sigmoid(a):
    return np.exp(-np.logaddexp(0.0, -a))


def _warn_scales(std, name):
    """A :class:`DataWarning` when the columns' standard deviations ``std`` differ by more
    than ``SCALE_RATIO`` (constant columns ignored)."""
    std = std[std > 1e-12 * max(float(std.max(initial=0.0)), 1e-300)]
    if len(std) >= 2 and std.max() > SCALE_RATIO * std.min():
        warnings.warn(
            f"the features' scales differ by a factor {std.max() / std.min():.3g} (standard "
            f"deviations {std.min():.3g} to {std.max():.3g}): H_s compares raw coefficient "
            f"magnitudes, so the selected features depend on the units; standardize them, "
            f"e.g. make_pipeline(StandardScaler(), {name}(...))",
            DataWarning, stacklevel=6)


def _columns(W, S):
    """``W[:, S]`` as a dense array (``W`` dense, or CSC for cheap column slices)."""
    return np.asarray(W[:, S].toarray()) if sp.issparse(W) else np.asarray(W[:, S])


def _logistic_fun(A, y, b, lam, w=None, a=None):
    """The (weighted) mean logistic loss plus the ridge term at ``b`` (``a``: the margins
    ``A @ b`` when already known)."""
    a = A @ b if a is None else a
    ell = np.logaddexp(0.0, -y * a)
    if w is not None:
        ell *= w
    return float(ell.sum() / len(ell)) + 0.5 * float(lam @ (b * b))


def _logistic_refit(A, y, b, lam, w=None):
    """The logistic refit on the columns ``A`` from ``b``: damped Newton in the kernel
    (:func:`~rgrasp_viz._kernels.newton.logistic_newton_dense`), or :func:`_newton`, its
    NumPy reference, when a Newton system is not positive definite to working precision
    (whose solve then falls back to least squares)."""
    A = np.ascontiguousarray(A, dtype=np.float64)
    b = np.array(b, dtype=np.float64)
    coef, ok = logistic_newton_dense(A, y, np.ones(len(y)) if w is None else w,
                                     np.ascontiguousarray(lam, dtype=np.float64), b,
                                     _NEWTON_ITER)
    return coef if ok else _newton(A, y, b, lam, w)


def _newton(A, y, b, lam, w=None, maxiter=_NEWTON_ITER):
    """Damped Newton on the (weighted) logistic loss over the columns of ``A`` (``lam``: the
    ridge term per column; a tiny Levenberg term keeps the system solvable on separable or
    collinear columns).  The margins of the accepted point are carried to the next step."""
    n = A.shape[0]
    a = A @ b
    f = _logistic_fun(A, y, b, lam, w, a)
    levenberg = np.diag(lam + 1e-10)
    for _ in range(maxiter):
        p = _sigmoid(-y * a)  # = 1 - sigma(y a)
        pw = p if w is None else w * p
        g = -(A.T @ (y * pw)) / n + lam * b
        h = pw * (1 - p)
        H = (A.T * h) @ A / n + levenberg
        try:
            step = np.linalg.solve(H, g)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(H, g, rcond=None)[0]
        t, dec = 1.0, float(g @ step)
        while t > 1e-10:
            b_new = b - t * step
            a_new = A @ b_new
            f_new = _logistic_fun(A, y, b_new, lam, w, a_new)
            if f_new <= f - 1e-4 * t * dec:
                break
            t *= 0.5
        else:
            break
        done = f - f_new <= 1e-12 * max(abs(f), 1e-300)
        b, f, a = b_new, f_new, a_new
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


def _pair_candidates(data, x, S, free_pos, grow, keep):
    """The ``keep`` best moves of a support ``S`` (sorted column indices; ``free_pos``: the
    positions in ``S`` that may leave) on the quadratic model of ``F`` at ``x``: exact for
    least squares, Newton's model for the logistic loss.

    The model is the weighted least squares ``(1/2n) sum_i c_i (a_i - z_i)^2 + (l2/2)||x||^2``
    (``c = 1, z = b`` for least squares; the curvatures and Newton targets at ``x`` for the
    logistic loss).  With the fit on ``S`` (Gram ``G``, coefficients ``beta``, residual
    ``r``), removing ``i`` raises the residual sum of squares by ``beta_i^2 / G^-1_ii`` and
    then adding ``j`` lowers it by ``(x_j^T r_-i)^2 / ||x_j||^2_perp``, both from
    ``X^T X_S G^-1`` (one ``d x |S|`` product per round).  Returns ``[(value, j, i)]``, best
    first, only moves the model says lower the objective (``i`` None: add ``j``)."""
    A, n, lam = data.A, data.n, data.l2
    if data.loss == "squares" and len(S):
        return _pair_candidates_gram(data, data.gram(), S, free_pos, grow, keep)
    AS = data.columns(S)
    if data.loss == "squares":
        c, z = None, data.b
        cs = data.colsq()
    else:
        a = AS @ x[S]
        q = _sigmoid(data.b * a)
        c = q * (1 - q)
        deriv = -data.b * (1 - q)
        if data.w is not None:
            c, deriv = data.w * c, data.w * deriv
        c = np.maximum(c, 1e-12)
        z = a - deriv / c
        cs = data.colsq(c)
    ASw = AS if c is None else AS * c[:, None]
    pen = data.pen(S)
    G = AS.T @ ASw + n * lam * np.diag(pen)
    try:
        Ginv = np.linalg.inv(G)
    except np.linalg.LinAlgError:
        Ginv = np.linalg.pinv(G)
    beta = Ginv @ (ASw.T @ z)
    r = z - AS @ beta
    rss = float(r @ r if c is None else (c * r) @ r) + n * lam * float(pen @ (beta * beta))
    C = np.asarray(A.T @ (r if c is None else c * r)).ravel()
    B = data.gram_columns(S, AS) if c is None else np.asarray(A.T @ ASw)
    M, J, e, floor, thresh = _move_terms(data, S, B, Ginv, cs, rss)
    return _scored_moves(M, J, free_pos, grow, keep, rss, C, e, floor, thresh, Ginv, beta,
                         S)


def _move_terms(data, S, B, Ginv, cs, rss):
    """What every move score of :func:`_scored_moves` shares, from the Gram columns ``B`` of
    the support ``S`` and its fit: ``(M, J, e, floor, thresh)`` with ``M = B G^-1``, ``J``
    the columns a move may add, ``e`` their squared norms outside the span of ``S``, the
    ``floor`` below which a column counts as inside it, and ``thresh`` the largest residual
    sum of squares that lowers the objective."""
    M = B @ Ginv
    e = cs + data.n * data.l2 - np.einsum("jk,jk->j", B, M)
    outside = np.ones(data.dA, dtype=bool)
    outside[S] = False
    outside[data.forced] = False
    J = np.flatnonzero(outside)
    floor = 1e-10 * (cs[J] + data.n * data.l2) + 1e-300
    return M, J, e, floor, rss * (1 - 1e-10)


def _pair_candidates_gram(data, gram, S, free_pos, grow, keep):
    """:func:`_pair_candidates` of a least-squares problem from its Gram matrix
    (:meth:`_Data.gram`): the same scores, with ``A^T A[:, S]`` read from ``A^T A`` and
    ``A^T r = A^T b - A^T A[:, S] beta`` (:func:`_gram_state`)."""
    st = _gram_state(data, gram, S)
    return _scored_moves(st[0], st[1], free_pos, grow, keep, *st[2:10])


_GRAM_STATES = 4
"""Least-squares fits on the Gram matrix kept per working problem, by support: the refit
that accepts a move fits the support the next swap round scores, and a path's next point
first grows the previous point's last support."""


def _gram_state(data, gram, S):
    """The fit on the columns ``S`` (sorted, non-empty) from ``(A^T A, A^T b)`` and what the
    move scores need: ``(M, J, rss, C, e, floor, thresh, Ginv, beta, S, r, ok)`` with ``r``
    the residual ``b - A_S beta`` and ``ok`` whether the block is well enough conditioned
    for ``beta`` to serve as the refit (else the refit uses ``lstsq``)."""
    key = np.asarray(S, dtype=np.int64).tobytes()
    states = data.__dict__.setdefault("_gram_states", {})
    st = states.get(key)
    if st is not None:
        return st
    n, lam = data.n, data.l2
    AS = data.columns(S)
    if gram is not None:
        Gf, cf = gram
        B = Gf[:, S]
    else:  # the columns of A^T A that S needs, kept across rounds
        cf = data.Atb()
        B = data.gram_columns(S, AS)
    G = B[S]
    pen = data.pen(S) if lam else None
    if lam:
        G = G + n * lam * np.diag(pen)
    try:
        dg = np.diagonal(np.linalg.cholesky(G))
        ok = bool(dg.min() > _GRAM_CHOL_RATIO * dg.max())
    except np.linalg.LinAlgError:
        ok = False
    try:
        Ginv = np.linalg.inv(G)
    except np.linalg.LinAlgError:
        Ginv = np.linalg.pinv(G)
    beta = Ginv @ cf[S]
    r = data.b - AS @ beta
    rss = float(r @ r)
    if lam:
        rss += n * lam * float(pen @ (beta * beta))
    C = cf - B @ beta
    M, J, e, floor, thresh = _move_terms(data, S, B, Ginv, data.colsq(), rss)
    st = (M, J, rss, C, e, floor, thresh, Ginv, beta, S, r, ok)
    if len(states) >= _GRAM_STATES:
        del states[next(iter(states))]
    states[key] = st
    return st


def _scored_moves(M, J, free_pos, grow, keep, rss, C, e, floor, thresh, Ginv, beta, S):
    """The ``keep`` best additions (``grow``) or swaps from the quantities of
    :func:`_pair_candidates`."""
    if grow:
        ok = e[J] > floor
        val = np.where(ok, rss - C[J] ** 2 / np.where(ok, e[J], 1.0), np.inf)
        # keep = 1: the stable sort's first is the first minimum
        order = [int(np.argmin(val))] if keep == 1 else np.argsort(val, kind="stable")[:keep]
        return [(float(val[t]), int(J[t]), None) for t in order if val[t] < thresh]
    g = np.diag(Ginv)[free_pos]
    bk = beta[free_pos]
    if HAVE_NUMBA:  # the same scores, bit for bit, in one fused sweep
        with np.errstate(divide="ignore", invalid="ignore"):
            base = rss + (bk ** 2 / g)
        val = swap_scores(M, J, np.asarray(free_pos, dtype=np.int64), bk, g, C, e, base,
                          floor)
        return _best_swaps(val, J, S, free_pos, keep, thresh)
    MJ = M[np.ix_(J, free_pos)]
    # num = C_J + bk MJ / g, den = e_J + MJ^2 / g, val = rss + bk^2 / g - num^2 / den, in
    # place on |J| x |free| arrays (the same operations in the same order)
    with np.errstate(divide="ignore", invalid="ignore"):
        num = np.multiply(bk[None, :], MJ)
        num /= g[None, :]
        num += C[J, None]
        den = np.square(MJ, out=MJ)
        den /= g[None, :]
        den += e[J, None]
        val = np.square(num, out=num)
        val /= den
        np.subtract(rss + (bk ** 2 / g)[None, :], val, out=val)
    ok = den > floor[:, None]
    ok &= np.isfinite(val)
    val[~ok] = np.inf
    return _best_swaps(val, J, S, free_pos, keep, thresh)


def _best_swaps(val, J, S, free_pos, keep, thresh):
    """The ``keep`` best-scored swaps of ``val`` (``|J| x |free|``), best first, below
    ``thresh``."""
    flat = val.ravel()
    if keep == 1:  # the best, the first of equal bests
        t = int(np.argmin(flat))
        if not flat[t] < thresh:
            return []
        return [(float(flat[t]), int(J[t // len(free_pos)]), int(S[free_pos[t % len(free_pos)]]))]
    k = min(keep, flat.size)
    top = np.argpartition(flat, k - 1)[:k] if k < flat.size else np.arange(flat.size)
    top = top[np.lexsort((top, flat[top]))]
    return [(float(flat[t]), int(J[t // len(free_pos)]), int(S[free_pos[t % len(free_pos)]]))
            for t in top if flat[t] < thresh]


def _with_forced(idx, forced):
    """``np.union1d(idx, forced)`` as int64 for ascending distinct ``idx`` (a
    ``flatnonzero``), without the sort when ``forced`` is empty."""
    if len(forced) == 0:
        return np.asarray(idx, dtype=np.int64)
    return np.union1d(idx, forced).astype(np.int64)


def _local_search(data, x, fun, s, rounds):
    """Support swaps after the run, until no single swap (or, for a support short of
    ``s``, no addition) lowers the objective: each round ranks every move on the quadratic
    model (:func:`_pair_candidates`), checks the best by an exact refit and keeps it when
    the objective drops.  Returns ``(x, F(x), swaps, capped)``; ``capped``: the last
    allowed round still lowered the objective."""
    forced_mask = np.zeros(data.dA, dtype=bool)
    forced_mask[data.forced] = True
    squares = data.loss == "squares"
    keep = 1 if squares else _LOGISTIC_CHECKS
    swaps = []
    for r in range(1, rounds + 1):
        free = np.flatnonzero((x != 0) & ~forced_mask) if data.forced else np.flatnonzero(x)
        if data.dA - len(data.forced) - len(free) == 0:
            return x, fun, swaps, False  # every free feature is in: nothing can change
        S = _with_forced(free, data.forced)
        free_pos = np.flatnonzero(~forced_mask[S])
        grow = len(free) < s
        if not grow and len(free_pos) == 0:
            return x, fun, swaps, False
        best = None
        for _, j, i in _pair_candidates(data, x, S, free_pos, grow, keep):
            support = np.sort(np.append(S if i is None else S[S != i], j))
            x_try = x  # least squares: the refit is a function of the support alone
            if not squares:  # the warm start of the Newton refit
                x_try = x.copy()
                if i is not None:
                    x_try[i] = 0.0
            x_new, f_new = data.refit(support, x_try)
            if f_new < fun - 1e-12 * max(abs(fun), 1e-300) and (
                    best is None or f_new < best[1]):
                best = (x_new, f_new, j, i)
        if best is None:
            return x, fun, swaps, False
        x, fun = best[0], float(best[1])
        swaps.append({"round": r, "in": best[2], "out": best[3], "objective": fun})
    return x, fun, swaps, True


def _weighted_htp(data, s, max_iter, tol):
    """HTP on the weighted logistic loss (the paper's methods sample rows uniformly, so a
    weighted fit runs this deterministic full-gradient method): a gradient step of length
    ``1/L`` (``L`` from a power iteration), ``H_s`` on the free coordinates, the Newton fit on
    the kept support; until the support repeats.  Returns ``(x, F(x), iterations)``."""
    A, y, w, lam, n = data.A, data.b, data.w, data.l2, data.n
    v = np.ones(data.dA) / math.sqrt(data.dA)
    for _ in range(20):
        u = np.asarray(A.T @ (w * np.asarray(A @ v).ravel())).ravel() / n
        v = u / max(float(np.linalg.norm(u)), 1e-300)
    L = 0.25 * float(np.linalg.norm(u)) + lam
    forced = np.asarray(data.forced, dtype=np.int64)
    free_mask = np.ones(data.dA, dtype=bool)
    free_mask[forced] = False
    free_idx = np.flatnonzero(free_mask)
    x = data.x0.copy()
    prev, f = None, None
    it = 0
    for it in range(1, (max_iter or 100) + 1):  # noqa: B007 (the count is returned)
        a = np.asarray(A @ x).ravel()
        g = -np.asarray(A.T @ (w * y * _sigmoid(-y * a))).ravel() / n + lam * x
        if data.icol is not None:
            g[data.icol] -= lam * x[data.icol]
        u = x - g / L
        top = free_idx[np.argsort(-np.abs(u[free_idx]), kind="stable")[:s]]
        S = np.union1d(top, forced).astype(np.int64)
        if prev is not None and np.array_equal(S, prev):
            break
        x, f = data.refit(S, u)
        prev = S
    if f is None:
        S = np.arange(data.dA)
        f = data.objective(data.columns(S), x[S], S)
    return x, float(f), it


# -- the path over s and the choice of s ----------------------------------------------------

_COMMON = ("method", "fit_intercept", "always_select", "max_iter", "tol", "random_state",
           "eta", "J", "m", "inner", "l2", "refit", "swap_rounds")

CRITERIA = ("cv", "bic", "ebic")
"""How the ``...CV`` estimators choose ``s``: K-fold cross-validation of the held-out loss,
the Bayesian information criterion, or the extended BIC (Chen and Chen, 2008)."""

EBIC_GAMMA = 1.0
"""The extended BIC's ``gamma``: ``EBIC = BIC + 2 gamma log binom(d, s)``.

``gamma = 1`` is Chen and Chen's (2008) choice and the form abess's own EBIC approximates
(a penalty of ``s (log n + 2 log d)``). It was chosen over ``gamma = 0.5`` because, judged
over several train/test splits, ``0.5`` kept too many features on correlated designs (the
extra features lowered the held-out score)."""

DEFAULT_S_MAX = 20
"""``s_values=None``: the path ``1, ..., min(DEFAULT_S_MAX, n_features - len(always_select))``."""


def _held_out_loss(loss, y_pm, a, w):
    """Mean (weighted) squared error or log-loss of the margins ``a``."""
    ell = (y_pm - a) ** 2 if loss == "squares" else np.logaddexp(0.0, -y_pm * a)
    return float(np.average(ell, weights=w))


class _PathCV:
    """A warm-started path over ``s`` and the choice of ``s`` on it (see the subclasses)."""

    _Base = None

    def _estimator(self, s):
        est = self._Base(s=int(s), **{k: getattr(self, k) for k in _COMMON})
        names = getattr(self, "feature_names_in_", None)
        if names is not None:
            est.feature_names_in_ = names
        return est

    def _s_grid(self, d):
        forced = self._estimator(1)._forced(d)
        free = d - len(forced)
        if self.s_values is None:
            return list(range(1, min(DEFAULT_S_MAX, free) + 1))
        vals = np.asarray(self.s_values)
        if vals.ndim != 1 or vals.size == 0 or vals.dtype.kind not in "iu":
            raise ValueError(f"s_values must be a non-empty sequence of integers, got "
                             f"{self.s_values!r}")
        if vals.min() < 1 or vals.min() > free:
            raise ValueError(f"s_values must be at least 1 and hold a value <= {free} "
                             f"(n_features - len(always_select)), got "
                             f"{sorted(set(vals.tolist()))}")
        return sorted(set(int(v) for v in vals if v <= free))  # larger s: all features

    def _path(self, X, y_pm, w, s_values):
        """The fitted estimators along ``s_values``: the first by the method, every next one
        warm-started from the previous support (refit, grow by one, swap until stable)."""
        data, _ = self._estimator(s_values[-1])._prepare(X, y_pm, self._Base._loss, w)
        fits, start = [], None
        if self._exact_first(s_values):
            # s = 1 of least squares with swaps until stable: the best single feature (the
            # swaps' scores are exact, so the method's run and its swaps end there too),
            # found by one addition to the empty support; the method's own fit (its trace)
            # is made only when this point is the one chosen (_fit_cv)
            start = np.empty(0, dtype=np.int64)
        # least squares: every point is small dense algebra (one thread) once the first
        # is fitted, so the BLAS threads are set once for the path, not per point
        one = BlasThreads(1) if self._Base._loss == "squares" else contextlib.nullcontext()
        with one:
            for s in s_values:
                est = self._estimator(s)
                est._fit_data(data, s, start=start)
                fits.append(est)
                start = np.flatnonzero(est._coef)
        if start is not None and len(fits) and self._exact_first(s_values):
            fits[0]._path_data = data
        return fits

    def _exact_first(self, s_values):
        """Whether the path's first point is fitted from the empty support (see
        :meth:`_path`): least squares, ``s = 1``, swaps on with a round to spare."""
        return (self._Base._loss == "squares" and s_values[0] == 1 and self._swaps_run()
                and int(self.swap_rounds) >= 2)

    def _fold(self, X, y_pm, w, train, test, s_values):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DataWarning)  # said once, on the whole data
            fits = self._path(X[train], y_pm[train], None if w is None else w[train],
                              s_values)
        Xt = X[test]
        wt = None if w is None else w[test]
        return [_held_out_loss(self._Base._loss, y_pm[test],
                               np.asarray(Xt @ f._coef).ravel() + f._intercept, wt)
                for f in fits]

    def _fit_cv(self, X, y_pm, y_split, sample_weight):
        if self.criterion not in CRITERIA:
            raise ValueError(f"criterion must be one of {CRITERIA}, got {self.criterion!r}")
        n, d = X.shape
        s_values = self._s_grid(d)
        w = None if sample_weight is None else _check_sample_weight(sample_weight, n)
        fits = self._path(X, y_pm, w, s_values)
        objective = np.array([f.refit_objective_ if f.refit_objective_ is not None
                              else f.objective_ for f in fits])
        results = {"s": np.array(s_values)}
        if self.criterion == "cv":
            cv = check_cv(self.cv, y_split, classifier=self._Base._loss == "logistic")
            splits = list(cv.split(X, y_split))
            # threads by default: a fold's work is NumPy, BLAS and the kernels, and a new
            # worker process would first import the package and load numba (about a second)
            losses_ = Parallel(n_jobs=self.n_jobs, prefer="threads")(
                delayed(self._fold)(X, y_pm, w, tr, te, s_values) for tr, te in splits)
            L = np.array(losses_)  # (folds, len(s_values))
            for k, row in enumerate(L):
                results[f"split{k}_test_loss"] = row
            results["mean_test_loss"] = L.mean(axis=0)
            results["std_test_loss"] = L.std(axis=0)
            score = results["mean_test_loss"]
        else:
            n_eff = n if w is None else float(w.sum())
            k = np.array(s_values) + len(fits[0].fit_info_["always_select"])
            # -2 log-likelihood: n log(RSS/n) (Gaussian, profiled variance) or 2 n F
            fit_term = (n_eff * np.log(np.maximum(2 * objective, 1e-300))
                        if self._Base._loss == "squares" else 2 * n_eff * objective)
            bic = fit_term + k * math.log(n_eff)
            results["bic"] = bic
            if self.criterion == "ebic":
                logbinom = np.array([math.lgamma(d + 1) - math.lgamma(s + 1)
                                     - math.lgamma(d - s + 1) for s in s_values])
                results["ebic"] = bic + 2 * EBIC_GAMMA * logbinom
            score = results[self.criterion]
        best = int(np.argmin(score))
        chosen = fits[best]
        data = chosen.__dict__.pop("_path_data", None)
        for f in fits:
            f.__dict__.pop("_path_data", None)
        if data is not None:  # the first point chosen: the method's own fit at s = 1
            chosen = self._estimator(s_values[best])
            chosen._fit_data(data, s_values[best])
        for attr in ("_coef", "_intercept", "n_iter_", "status_", "objective_",
                     "refit_objective_", "swaps_", "trace_", "fit_info_"):
            setattr(self, attr, getattr(chosen, attr))
        self.s_ = int(s_values[best])
        self.cv_results_ = results
        self.path_ = {"s": np.array(s_values), "objective": objective,
                      "criterion": np.asarray(score), "criterion_name": self.criterion,
                      "coef": np.array([f._coef for f in fits]),
                      "intercept": np.array([f._intercept for f in fits]),
                      "n_selected": np.array([np.count_nonzero(f._coef) for f in fits])}
        return self

    def path_figure(self, **kwargs):
        """The path over ``s`` as a figure (:func:`rgrasp_viz.viz.figures.path_figure`).

        Parameters
        ----------
        **kwargs
            Passed to :func:`rgrasp_viz.viz.figures.path_figure`.

        Returns
        -------
        plotly.graph_objects.Figure
            Training objective and the criterion against ``s``, the chosen ``s_`` marked.
        """
        check_is_fitted(self)
        from .viz.figures import path_figure  # lazy: plotly loads when a path is drawn

        return path_figure(self.path_, s_chosen=self.s_, **kwargs)


_CV_PARAMS = """
    Parameters
    ----------
    s_values : sequence of int, optional
        The sparsity levels of the path (default ``1 ... min(20, n_features -
        len(always_select))``, :data:`DEFAULT_S_MAX`); values above the number of free
        features are dropped.
    criterion : {{"cv", "bic", "ebic"}}, default "cv"
        How ``s`` is chosen: the mean held-out {heldout} over the folds of ``cv``, the BIC,
        or the extended BIC (``gamma = 1``, :data:`EBIC_GAMMA`, Chen and Chen's
        choice).
    cv : int, cross-validation generator or iterable, default 5
        As in scikit-learn (:func:`sklearn.model_selection.check_cv`; stratified K-fold for
        the classifier); used by ``criterion="cv"``.
    n_jobs : int, optional
        Folds fitted in parallel (joblib), in threads unless a
        :func:`joblib.parallel_config` block asks for processes: the folds' work runs in
        NumPy, BLAS and the compiled kernels, and a fresh worker process would first spend
        about a second importing the package and setting up numba.
    method, fit_intercept, always_select, max_iter, tol, random_state, eta, J, m, inner, l2, \
refit, swap_rounds :
        As in :class:`{base}`.  Every point of the path but the first is warm-started from
        the previous point's support (refit, one feature added, swaps until stable)."""

_CV_ATTRS = """
    Attributes
    ----------
    s_ : int
        The chosen sparsity level.
    path_ : dict
        Along the path: ``"s"``, the training ``"objective"``, the ``"criterion"`` (mean
        held-out loss, BIC or EBIC), ``"coef"`` (one row per ``s``), ``"intercept"``,
        ``"n_selected"``.
    cv_results_ : dict of ndarray
        ``"s"`` and, for ``criterion="cv"``, ``"split<k>_test_loss"``,
        ``"mean_test_loss"``, ``"std_test_loss"``; else ``"bic"`` (and ``"ebic"``).
    coef_, intercept_, n_iter_, status_, objective_, refit_objective_, swaps_, fit_info_, \
trace_, n_features_in_, feature_names_in_ :
        Those of the model at ``s_`` (as in :class:`{base}`; ``trace_`` is None unless
        ``s_`` is the first point of the path)."""


class SparseLinearRegressionCV(_PathCV, SparseLinearRegression):
    __doc__ = """Sparse least squares with the sparsity level chosen along a warm-started
    path over ``s``, by K-fold cross-validation or an information criterion.
""" + _CV_PARAMS.format(heldout="squared error", base="SparseLinearRegression") + """
""" + _CV_ATTRS.format(base="SparseLinearRegression") + """

    See Also
    --------
    SparseLinearRegression : the model at a given ``s``.
    sklearn.linear_model.LassoCV : the convex relaxation with a cross-validated penalty.
    sklearn.linear_model.OrthogonalMatchingPursuitCV : greedy selection, cross-validated.

    Examples
    --------
    >>> import numpy as np
    >>> import rgrasp_viz as rv
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 30))
    >>> y = X[:, :3] @ [3.0, -2.0, 1.5] + 0.5 * rng.standard_normal(200)
    >>> reg = rv.SparseLinearRegressionCV(s_values=range(1, 8), random_state=0).fit(X, y)
    >>> reg.s_, reg.selected_features_
    (3, array([0, 1, 2]))
    """

    _Base = SparseLinearRegression

    def __init__(self, s_values=None, *, criterion="cv", cv=5, n_jobs=None,
                 method=DEFAULT_METHOD, fit_intercept=True, always_select=(), max_iter=None,
                 tol=1e-7, random_state=None, eta=None, J=None, m=None, inner="paper",
                 l2=0.0, refit=True, swap_rounds=SWAP_ROUNDS):
        self.s_values = s_values
        self.criterion = criterion
        self.cv = cv
        self.n_jobs = n_jobs
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

    def fit(self, X, y, sample_weight=None):
        """Fit the path and choose ``s``.

        Parameters
        ----------
        X : array_like, sparse matrix or DataFrame, shape (n_samples, n_features)
            Training data.
        y : array_like, shape (n_samples,)
            Targets.
        sample_weight : array_like of shape (n_samples,), optional
            Non-negative sample weights (fits and held-out losses are weighted).

        Returns
        -------
        self : SparseLinearRegressionCV
            The fitted estimator.
        """
        X, y = _validate_fit(self, X, y, y_numeric=True)
        y = np.asarray(y, dtype=np.float64)
        return self._fit_cv(X, y, y, sample_weight)


class SparseLogisticRegressionCV(_PathCV, SparseLogisticRegression):
    __doc__ = """Sparse binary logistic regression with the sparsity level chosen along a
    warm-started path over ``s``, by stratified K-fold cross-validation or an information
    criterion.
""" + _CV_PARAMS.format(heldout="log-loss", base="SparseLogisticRegression") + """
    class_weight : dict, "balanced" or None, default None
        As in :class:`SparseLogisticRegression`.
""" + _CV_ATTRS.format(base="SparseLogisticRegression") + """
    classes_ : ndarray of shape (2,)
        The two labels.

    See Also
    --------
    SparseLogisticRegression : the model at a given ``s``.
    sklearn.linear_model.LogisticRegressionCV : l1 / l2 penalties, cross-validated.

    Examples
    --------
    >>> import rgrasp_viz as rv
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.preprocessing import StandardScaler
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> clf = rv.SparseLogisticRegressionCV(s_values=[2, 4, 6], criterion="bic")
    >>> clf = clf.fit(StandardScaler().fit_transform(X), y)
    >>> clf.s_ in (2, 4, 6), clf.coef_.shape
    (True, (1, 30))
    """

    _Base = SparseLogisticRegression

    def __init__(self, s_values=None, *, criterion="cv", cv=5, n_jobs=None,
                 method=DEFAULT_METHOD, fit_intercept=True, always_select=(), max_iter=None,
                 tol=1e-7, random_state=None, eta=None, J=None, m=None, inner="paper",
                 l2=LOGISTIC_L2, refit=True, swap_rounds=SWAP_ROUNDS, class_weight=None):
        self.s_values = s_values
        self.criterion = criterion
        self.cv = cv
        self.n_jobs = n_jobs
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
        self.class_weight = class_weight

    def fit(self, X, y, sample_weight=None):
        """Fit the path and choose ``s``.

        Parameters
        ----------
        X : array_like, sparse matrix or DataFrame, shape (n_samples, n_features)
            Training data.
        y : array_like, shape (n_samples,)
            Two distinct labels.
        sample_weight : array_like of shape (n_samples,), optional
            Non-negative sample weights (fits and held-out losses are weighted).

        Returns
        -------
        self : SparseLogisticRegressionCV
            The fitted estimator.
        """
        X, y = _validate_fit(self, X, y)
        y_pm, sample_weight = _classes(self, y, sample_weight, self.class_weight)
        return self._fit_cv(X, y_pm, y, sample_weight)
