"""The least-squares path over s of SparseLinearRegressionCV: every point against a NumPy
``lstsq`` fit of its support, the fits from the whole A^T A (dense data with few columns)
against those from the columns of A^T A that a support needs (the route of CSR and wide data),
the first point started from the empty support against a brute-force best single feature,
and the chosen model at s = 1."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("sklearn")

from sklearn.datasets import load_diabetes  # noqa: E402

from rgrasp_viz import _estimators  # noqa: E402
from rgrasp_viz._estimators import SparseLinearRegression, SparseLinearRegressionCV  # noqa: E402


def _diabetes():
    X, y = load_diabetes(return_X_y=True)
    return X, y


def _correlated(n=120, d=25, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, d))
    X = np.empty_like(Z)
    X[:, 0] = Z[:, 0]
    for j in range(1, d):  # Toeplitz 0.9: neighbouring columns strongly correlated
        X[:, j] = 0.9 * X[:, j - 1] + np.sqrt(1 - 0.81) * Z[:, j]
    beta = np.zeros(d)
    beta[[2, 7, 13, 20]] = [1.5, -2.0, 1.0, 0.7]
    return X, X @ beta + 0.5 * rng.standard_normal(n)


def _fit(X, y, sample_weight=None, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return SparseLinearRegressionCV(random_state=0, **kw).fit(X, y,
                                                                 sample_weight=sample_weight)


def _without_gram(monkeypatch):
    monkeypatch.setattr(_estimators, "_GRAM_MAX_COLS", 0)


def _same_path(a, b, rtol=1e-9):
    assert a.s_ == b.s_
    np.testing.assert_allclose(a.path_["objective"], b.path_["objective"], rtol=rtol)
    np.testing.assert_array_equal(a.path_["n_selected"], b.path_["n_selected"])
    np.testing.assert_array_equal(a.path_["coef"] != 0, b.path_["coef"] != 0)
    scale = np.abs(b.path_["coef"]).max()
    np.testing.assert_allclose(a.path_["coef"], b.path_["coef"], rtol=0, atol=1e-9 * scale)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=0, atol=1e-9 * scale)
    np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=1e-9,
                               atol=1e-9 * abs(b.intercept_))


CASES = {
    "diabetes": dict(data=_diabetes, kw={}),
    "no intercept": dict(data=_diabetes, kw={"fit_intercept": False}),
    "always_select": dict(data=_diabetes, kw={"always_select": [2]}),
    "ridge": dict(data=_diabetes, kw={"l2": 0.1}),
    "correlated": dict(data=_correlated, kw={"s_values": range(1, 13)}),
}


@pytest.mark.parametrize("criterion", ["ebic", "bic", "cv"])
@pytest.mark.parametrize("case", list(CASES))
def test_gram_path_matches_the_column_path(monkeypatch, case, criterion):
    X, y = CASES[case]["data"]()
    kw = dict(CASES[case]["kw"], criterion=criterion, cv=3)
    assert _estimators._Data.build(X, y, "squares", None, True, 0.0, [], "t").gram() \
        is not None  # the case takes the Gram route
    fast = _fit(X, y, **kw)
    _without_gram(monkeypatch)
    slow = _fit(X, y, **kw)
    _same_path(fast, slow)


@pytest.mark.parametrize("case", ["diabetes", "no intercept", "correlated"])
@pytest.mark.parametrize("sparse", [False, True])
def test_every_point_is_the_lstsq_fit_of_its_support(case, sparse):
    X, y = CASES[case]["data"]()
    kw = dict(CASES[case]["kw"], criterion="bic")
    m = _fit(sp.csr_matrix(X) if sparse else X, y, **kw)
    icpt = m.fit_intercept
    A = np.hstack([X, np.ones((len(y), 1))]) if icpt else X
    path = zip(m.path_["coef"], m.path_["intercept"], m.path_["objective"], strict=True)
    for coef, c0, f in path:
        S = np.flatnonzero(coef)
        cols = np.append(S, X.shape[1]) if icpt else S
        ref = np.linalg.lstsq(A[:, cols], y, rcond=None)[0]
        r = y - A[:, cols] @ ref
        np.testing.assert_allclose(0.5 * r @ r / len(y), f, rtol=1e-10)
        scale = np.abs(ref).max()
        np.testing.assert_allclose(coef[S], ref[:len(S)], rtol=0, atol=1e-8 * scale)
        if icpt:
            np.testing.assert_allclose(c0, ref[-1], rtol=0, atol=1e-8 * scale)


def test_gram_path_with_sample_weights_matches_the_column_path(monkeypatch):
    X, y = _diabetes()
    w = np.random.default_rng(1).integers(1, 4, len(y)).astype(float)
    fast = _fit(X, y, sample_weight=w, criterion="ebic")
    _without_gram(monkeypatch)
    slow = _fit(X, y, sample_weight=w, criterion="ebic")
    _same_path(fast, slow)


def test_dense_gram_path_matches_the_csr_path():
    X, y = _correlated()
    dense = _fit(X, y, criterion="ebic", s_values=range(1, 13))
    csr = _fit(sp.csr_matrix(X), y, criterion="ebic", s_values=range(1, 13))
    _same_path(dense, csr, rtol=1e-8)


def test_collinear_columns_fall_back_to_lstsq_and_match_the_column_path(monkeypatch):
    X, y = _diabetes()
    X = np.hstack([X, X[:, [2]], X[:, [3]] + 1e-9 * X[:, [4]]])  # exact and near copies
    fast = _fit(X, y, criterion="bic", s_values=range(1, 13))
    assert np.all(np.isfinite(fast.path_["objective"]))
    _without_gram(monkeypatch)
    slow = _fit(X, y, criterion="bic", s_values=range(1, 13))
    np.testing.assert_allclose(fast.path_["objective"], slow.path_["objective"], rtol=1e-8)
    assert fast.s_ == slow.s_


def test_first_point_is_the_best_single_feature():
    X, y = _correlated(seed=3)
    m = _fit(X, y, criterion="ebic", s_values=range(1, 6))
    Xc, yc = X - X.mean(0), y - y.mean()
    losses = [0.5 * np.mean((yc - Xc[:, [j]] @ np.linalg.lstsq(Xc[:, [j]], yc, rcond=None)[0])
                            ** 2) for j in range(X.shape[1])]
    assert np.flatnonzero(m.path_["coef"][0]).tolist() == [int(np.argmin(losses))]
    np.testing.assert_allclose(m.path_["objective"][0], min(losses), rtol=1e-10)


def test_chosen_first_point_is_the_methods_own_fit():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 8))
    y = 3 * X[:, 5] + rng.standard_normal(80)
    m = _fit(X, y, criterion="ebic", s_values=range(1, 5))
    assert m.s_ == 1
    ref = SparseLinearRegression(s=1, random_state=0).fit(X, y)
    assert m.trace_ is not None and m.fit_info_["best_iteration"] is not None
    np.testing.assert_allclose(m.coef_, ref.coef_, rtol=1e-12)
    np.testing.assert_allclose(m.intercept_, ref.intercept_, rtol=1e-12)
    np.testing.assert_allclose(m.path_["coef"][0], ref.coef_, rtol=1e-10)
    assert m.n_iter_ == ref.n_iter_
