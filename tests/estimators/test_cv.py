"""The path over s and the choice of s: SparseLinearRegressionCV / SparseLogisticRegressionCV
(warm starts, cross-validation, information criteria, scikit-learn's checks, the figure)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.datasets import load_breast_cancer  # noqa: E402
from sklearn.model_selection import KFold  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import estimator_checks_generator  # noqa: E402

import rgrasp_viz as rv  # noqa: E402
from rgrasp_viz._estimators import (  # noqa: E402
    EBIC_GAMMA,
    SparseLinearRegression,
    SparseLinearRegressionCV,
    SparseLogisticRegressionCV,
)


def _checks():
    for est in (SparseLinearRegressionCV(s_values=[1, 2, 3], cv=3),
                SparseLogisticRegressionCV(s_values=[1, 2, 3], cv=3)):
        for estimator, check in estimator_checks_generator(est):
            name = getattr(check, "func", check).__name__
            if name == "check_array_api_input":  # no array API support declared
                continue
            yield pytest.param(estimator, check, id=f"{type(est).__name__}-{name}")


@pytest.mark.parametrize(("estimator", "check"), list(_checks()))
def test_cv_estimators_pass_sklearn_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rv.exceptions.ConvergenceWarning)
        check(estimator)


def _sparse_data(n=200, d=30, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = X[:, :3] @ np.array([3.0, -2.0, 1.5]) + 0.5 * rng.standard_normal(n) + 7.0
    return X, y


def test_lazy_exports():
    assert rv.SparseLinearRegressionCV is SparseLinearRegressionCV
    assert rv.SparseLogisticRegressionCV is SparseLogisticRegressionCV


@pytest.mark.parametrize("criterion", ["cv", "bic", "ebic"])
def test_every_criterion_finds_the_true_sparsity(criterion):
    X, y = _sparse_data(n=400)
    est = SparseLinearRegressionCV(s_values=range(1, 9), criterion=criterion,
                                   random_state=0).fit(X, y)
    assert est.path_["criterion_name"] == criterion
    assert est.path_["criterion"].argmin() == est.s_ - 1
    assert est.s_ == 3
    np.testing.assert_array_equal(est.selected_features_, [0, 1, 2])
    # the training objective never rises along the path (each s starts from s-1's support)
    assert np.all(np.diff(est.path_["objective"]) <= 1e-12)
    np.testing.assert_array_equal(est.path_["n_selected"], np.arange(1, 9))
    np.testing.assert_array_equal(est.coef_, est.path_["coef"][est.s_ - 1])


def test_cv_results_match_a_readable_kfold_loop():
    """The mean held-out squared error of each s equals a loop over the same folds fitting
    the path point by point (warm starts reach the same swap-stable fits here)."""
    X, y = _sparse_data(n=120, d=12, seed=1)
    folds = KFold(4, shuffle=True, random_state=0)
    est = SparseLinearRegressionCV(s_values=[1, 2, 3, 4], cv=folds, random_state=0).fit(X, y)
    for k, s in enumerate([1, 2, 3, 4]):
        errs = []
        for tr, te in folds.split(X):
            m = SparseLinearRegression(s=s, random_state=0).fit(X[tr], y[tr])
            errs.append(np.mean((y[te] - m.predict(X[te])) ** 2))
        assert est.cv_results_["mean_test_loss"][k] == pytest.approx(np.mean(errs), rel=1e-8)
        assert est.cv_results_["split0_test_loss"][k] == pytest.approx(errs[0], rel=1e-8)


def test_bic_and_ebic_formulas():
    """Every point of ``cv_results_``: BIC = n log(RSS / n) + s log n and EBIC = BIC +
    2 gamma log binom(d, s) with gamma = EBIC_GAMMA (Chen and Chen's 1)."""
    assert EBIC_GAMMA == 1.0
    X, y = _sparse_data(n=150, d=20, seed=2)
    est = SparseLinearRegressionCV(s_values=[2, 3, 5], criterion="ebic",
                                   random_state=0).fit(X, y)
    n, d = X.shape
    for k, s in enumerate([2, 3, 5]):
        coef, c0 = est.path_["coef"][k], est.path_["intercept"][k]
        rss = np.sum((y - X @ coef - c0) ** 2)
        bic = n * np.log(rss / n) + (s + 0) * np.log(n)
        assert est.cv_results_["bic"][k] == pytest.approx(bic, rel=1e-9)
        ebic = bic + 2 * EBIC_GAMMA * np.log(math.comb(d, s))
        assert est.cv_results_["ebic"][k] == pytest.approx(ebic, rel=1e-9)


def test_parallel_folds_give_the_same_choice():
    X, y = _sparse_data(n=150, d=15, seed=3)
    a = SparseLinearRegressionCV(s_values=range(1, 6), cv=3, random_state=0).fit(X, y)
    b = SparseLinearRegressionCV(s_values=range(1, 6), cv=3, n_jobs=2,
                                 random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.cv_results_["mean_test_loss"],
                                  b.cv_results_["mean_test_loss"])
    np.testing.assert_array_equal(a.coef_, b.coef_)
    # worker processes, when a joblib block asks for them: the same numbers again
    from joblib import parallel_config

    with parallel_config(backend="loky"):
        c = SparseLinearRegressionCV(s_values=range(1, 6), cv=3, n_jobs=2,
                                     random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.cv_results_["mean_test_loss"],
                                  c.cv_results_["mean_test_loss"])


def test_parallel_folds_run_in_threads_of_this_process(monkeypatch):
    """n_jobs=2 fits the folds in threads by default (no worker process to start, import
    the package in and set numba up in)."""
    import os
    import threading

    from rgrasp_viz._estimators import _PathCV

    seen = []
    fold = _PathCV._fold

    def spy(self, *args):
        seen.append((os.getpid(), threading.get_ident()))
        return fold(self, *args)

    monkeypatch.setattr(_PathCV, "_fold", spy)
    X, y = _sparse_data(n=150, d=15, seed=3)
    SparseLinearRegressionCV(s_values=range(1, 4), cv=4, n_jobs=2, random_state=0).fit(X, y)
    assert len(seen) == 4
    assert {pid for pid, _ in seen} == {os.getpid()}
    assert threading.get_ident() not in {tid for _, tid in seen}


def test_logistic_cv_on_breast_cancer():
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    est = SparseLogisticRegressionCV(s_values=[1, 3, 5, 8], cv=3, random_state=0).fit(X, y)
    assert est.s_ in (1, 3, 5, 8)
    assert est.coef_.shape == (1, 30) and est.intercept_.shape == (1,)
    assert np.count_nonzero(est.coef_) == est.s_
    assert set(est.cv_results_) >= {"s", "mean_test_loss", "std_test_loss", "split2_test_loss"}
    # the model at s_ is the path's point, and a plain fit warm-started the same way
    k = list(est.path_["s"]).index(est.s_)
    np.testing.assert_array_equal(est.coef_[0], est.path_["coef"][k])
    assert est.score(X, y) > 0.9


def test_bad_options_are_named():
    X, y = _sparse_data(n=50, d=6)
    with pytest.raises(ValueError, match="criterion must be one of"):
        SparseLinearRegressionCV(criterion="aic").fit(X, y)
    with pytest.raises(ValueError, match=r"s_values must be at least 1 and hold a value <= 6"):
        SparseLinearRegressionCV(s_values=[0, 2]).fit(X, y)
    with pytest.raises(ValueError, match=r"hold a value <= 6"):
        SparseLinearRegressionCV(s_values=[7, 8]).fit(X, y)
    est = SparseLinearRegressionCV(s_values=[5, 6, 9], criterion="bic").fit(X, y)
    np.testing.assert_array_equal(est.path_["s"], [5, 6])  # 9 > n_features: dropped
    with pytest.raises(ValueError, match="non-empty sequence of integers"):
        SparseLinearRegressionCV(s_values=[]).fit(X, y)


def test_path_figure_is_pure_and_marks_the_choice():
    from rgrasp_viz.viz.figures import path_figure

    X, y = _sparse_data(n=100, d=10)
    est = SparseLinearRegressionCV(s_values=range(1, 6), criterion="bic",
                                   random_state=0).fit(X, y)
    before = {k: np.copy(v) if isinstance(v, np.ndarray) else v for k, v in est.path_.items()}
    fig = est.path_figure(title="<b>x</b>")
    roles = [t.meta["role"] for t in fig.data]
    assert roles == ["objective", "criterion", "chosen"]
    assert list(fig.data[1].y) == pytest.approx(est.path_["criterion"].tolist())
    assert fig.data[2].x == (est.s_,)
    assert "&lt;b&gt;" in fig.layout.title.text
    for k, v in before.items():
        np.testing.assert_array_equal(est.path_[k], v)
    with pytest.raises(ValueError, match="must hold 'criterion'"):
        path_figure({"s": [1], "objective": [1.0]})


def test_warm_start_matches_a_cold_fit_on_well_posed_data():
    X, y = _sparse_data(n=200, d=20, seed=4)
    est = SparseLinearRegressionCV(s_values=[1, 2, 3, 4], criterion="bic",
                                   random_state=0).fit(X, y)
    for k, s in enumerate([1, 2, 3, 4]):
        m = SparseLinearRegression(s=s, random_state=0).fit(X, y)
        assert est.path_["objective"][k] == pytest.approx(m.refit_objective_, rel=1e-9)
