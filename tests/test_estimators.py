"""The scikit-learn estimators (rgrasp_viz._estimators) and the solver-core options they use:
``always_select`` in every method, the best iterate of a run, the data warnings, feature
names in the support raster."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

sklearn = pytest.importorskip("sklearn")

from sklearn.base import clone  # noqa: E402
from sklearn.datasets import load_breast_cancer, load_diabetes  # noqa: E402
from sklearn.model_selection import GridSearchCV, cross_val_score  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import estimator_checks_generator  # noqa: E402

import rgrasp_viz as rv  # noqa: E402
from rgrasp_viz import losses  # noqa: E402
from rgrasp_viz._estimators import SparseLinearRegression, SparseLogisticRegression  # noqa: E402
from rgrasp_viz.exceptions import ConvergenceWarning, DataWarning  # noqa: E402

METHODS = ["fght", "grasp", "sght", "svrght", "svrgsp", "svrgsp+", "htp"]


def _sklearn_checks():
    """scikit-learn's estimator checks for both estimators with their default constructor,
    except ``check_array_api_input``: it is meant for estimators that declare array API
    support (ours compute with NumPy and Numba only, ``array_api_support`` is False; the
    check only skips itself unless SCIPY_ARRAY_API is set)."""
    for est in (SparseLinearRegression(), SparseLogisticRegression()):
        for estimator, check in estimator_checks_generator(est):
            name = getattr(check, "func", check).__name__
            if name == "check_array_api_input":
                continue
            if (isinstance(est, SparseLinearRegression)
                    and name.startswith("check_sample_weight_equivalence")):
                # left out, not failed: the check's data (15 rows, about 12 distinct with a
                # positive weight, 30 features, s=10) has many supports that fit exactly, so
                # roundoff picks among equal optima; the property it checks (integer weights
                # == repeated rows) is test_integer_weights_equal_repeated_rows_* below, on a
                # well-posed problem
                continue
            marks = ()
            yield pytest.param(estimator, check, id=f"{type(est).__name__}-{name}",
                               marks=marks)


def test_estimators_declare_no_array_api_support():
    for est in (SparseLinearRegression(), SparseLogisticRegression()):
        assert est.__sklearn_tags__().array_api_support is False


@pytest.mark.parametrize(("estimator", "check"), list(_sklearn_checks()))
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


def test_lazy_attribute_and_import():
    assert rv.SparseLinearRegression is SparseLinearRegression
    assert rv.SparseLogisticRegression is SparseLogisticRegression


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    return (X - X.mean()) / X.std(), y


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    return StandardScaler().fit_transform(X), y


# -- intercept ------------------------------------------------------------------------------


@pytest.mark.parametrize("sparse", [False, True])
def test_least_squares_intercept_follows_a_shift_of_the_targets(diabetes, sparse):
    X, y = diabetes
    Xa = sp.csr_matrix(X.to_numpy()) if sparse else X.to_numpy()
    a = SparseLinearRegression(s=4, random_state=0).fit(Xa, y)
    b = SparseLinearRegression(s=4, random_state=0).fit(Xa, y + 1000.0)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-8, atol=1e-8)
    assert b.intercept_ == pytest.approx(a.intercept_ + 1000.0, rel=1e-10)
    assert np.count_nonzero(a.coef_) == 4  # the intercept is not counted in s


def test_least_squares_refit_is_the_exact_fit_on_the_support(diabetes):
    X, y = diabetes
    est = SparseLinearRegression(s=3, random_state=0).fit(X, y)
    S = np.flatnonzero(est.coef_)
    A = np.column_stack([X.to_numpy()[:, S], np.ones(len(y))])
    ref = np.linalg.lstsq(A, y.to_numpy(), rcond=None)[0]
    np.testing.assert_allclose(est.coef_[S], ref[:-1], rtol=1e-8)
    assert est.intercept_ == pytest.approx(ref[-1], rel=1e-10)
    loss = 0.5 * np.mean((y.to_numpy() - A @ ref) ** 2)
    assert est.refit_objective_ == pytest.approx(loss, rel=1e-10)


@pytest.mark.parametrize("method", ["htp", "grasp"])
def test_dense_and_csr_give_the_same_model(diabetes, cancer, method):
    """Dense least squares centres the data, CSR carries a column of ones: for the exact
    methods the two runs are the same (the optimal intercept centres the residual)."""
    X, y = diabetes
    Xd = X.to_numpy() + 3.0  # columns not centred: the CSR fit cannot rely on it
    dense = SparseLinearRegression(s=5, method=method, random_state=0).fit(Xd, y)
    csr = SparseLinearRegression(s=5, method=method, random_state=0).fit(sp.csr_matrix(Xd), y)
    assert dense.trace_.meta["estimator"]["intercept"] == "centering"
    assert csr.trace_.meta["estimator"]["intercept"] == "column"
    np.testing.assert_allclose(csr.coef_, dense.coef_, rtol=1e-7, atol=1e-9)
    assert csr.intercept_ == pytest.approx(dense.intercept_, rel=1e-9)
    if method != "htp":
        return
    Xc, yc = cancer
    dense = SparseLogisticRegression(s=4, random_state=0).fit(Xc, yc)
    csr = SparseLogisticRegression(s=4, random_state=0).fit(sp.csr_matrix(Xc), yc)
    np.testing.assert_allclose(csr.coef_, dense.coef_, rtol=1e-6, atol=1e-8)
    assert csr.intercept_ == pytest.approx(dense.intercept_, rel=1e-6)


def test_logistic_intercept_on_imbalanced_labels():
    rng = np.random.default_rng(0)
    n, d = 600, 12
    X = rng.standard_normal((n, d))
    a = 1.5 * X[:, 0] - 1.0 * X[:, 3] - 3.0  # about 8 % positives
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-a)), "yes", "no")
    est = SparseLogisticRegression(s=2, random_state=0).fit(X, y)
    assert list(est.classes_) == ["no", "yes"]
    assert est.coef_.shape == (1, d) and est.intercept_.shape == (1,)
    assert set(np.flatnonzero(est.coef_[0])) == {0, 3}
    assert est.intercept_[0] == pytest.approx(-3.0, abs=0.6)
    # at the optimum the intercept's gradient vanishes: mean predicted = observed frequency
    p = est.predict_proba(X)[:, 1]
    assert p.mean() == pytest.approx(np.mean(y == "yes"), abs=1e-6)
    no_icpt = SparseLogisticRegression(s=2, fit_intercept=False, random_state=0).fit(X, y)
    np.testing.assert_array_equal(no_icpt.intercept_, [0.0])
    assert no_icpt.score(X, y) <= est.score(X, y)


def test_predict_proba_and_decision_function_agree(cancer):
    X, y = cancer
    est = SparseLogisticRegression(s=5, random_state=0).fit(X, y)
    df = est.decision_function(X)
    np.testing.assert_allclose(df, X @ est.coef_[0] + est.intercept_[0])
    P = est.predict_proba(X)
    np.testing.assert_allclose(P.sum(1), 1.0)
    np.testing.assert_allclose(P[:, 1], 1 / (1 + np.exp(-df)), rtol=1e-12)
    np.testing.assert_array_equal(est.predict(X), est.classes_[(df > 0).astype(int)])
    np.testing.assert_allclose(np.exp(est.predict_log_proba(X)), P, rtol=1e-10)


def test_multiclass_is_refused():
    X = np.random.default_rng(0).standard_normal((30, 4))
    with pytest.raises(ValueError, match="Only binary classification"):
        SparseLogisticRegression().fit(X, np.arange(30) % 3)



@pytest.mark.parametrize(("fit_intercept", "message"), [
    (True, r"column 2 of X overflows float64 when centred \(its entries reach 1e\+308"),
    (False, r"largest \|W\| = 1e\+308, in column 2: squares of entries overflow"),
])
def test_a_finite_column_too_large_for_float64_is_named(fit_intercept, message):
    """Finite entries of 1e308: an overflow in column 2, not "non-finite values" in the
    data (centring makes their mean infinite; without it, their squares are)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 5))
    X[:, 2] = 1e308
    y = rng.standard_normal(40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's own overflow notes
        with pytest.raises(ValueError, match=message):
            SparseLinearRegression(s=2, fit_intercept=fit_intercept).fit(X, y)

# -- always_select --------------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("sparse", [False, True])
def test_always_select_is_kept_by_every_method_and_not_counted(method, sparse):
    prob = rv.make_regression("classroom", random_state=1)
    W = sp.csr_matrix(prob.W) if sparse else prob.W
    # the true support's smallest coordinates are not the ones H_s would keep early
    forced = [int(j) for j in np.flatnonzero(prob.x_true == 0)[:3]]
    res = rv.solve((W, prob.y), method, s=8, always_select=forced, random_state=0,
                   max_iter=15, warn=False, record_iterates=True)
    tr = res.trace
    for t in range(len(tr)):
        x = tr.x(t)
        assert np.count_nonzero(np.delete(x, forced)) <= 8
    assert np.count_nonzero(res.x) == 8 + 3
    assert tr.meta["always_select"] == sorted(forced)
    # every iterate after the first keeps the forced coordinates (they move off zero)
    assert all(np.all(tr.x(t)[forced] != 0) for t in range(1, len(tr)))


def test_always_select_inside_svrgsp_plus_epochs():
    """SVRGSP+'s H_|T| and SVRGHT's per-step H_s keep the forced coordinates: the inner
    snapshots (paper reading, on all d coordinates) have them nonzero."""
    prob = rv.make_regression("classroom", random_state=2)
    forced = [int(j) for j in np.flatnonzero(prob.x_true == 0)[:2]]
    for method in ("svrgsp+", "svrght"):
        res = rv.solve(prob, method, s=10, always_select=forced, random_state=0, max_iter=4,
                       record_iterates=True, record_every=5, warn=False)
        assert res.trace.has_iterates
        snaps = res.trace.ck_x
        assert np.all(snaps[:, forced] != 0)
        assert np.all(res.x[forced] != 0)
        if method == "svrght":  # checkpoints follow the per-step H_s: s + 2 coordinates
            assert np.all(np.count_nonzero(snaps, axis=1) == 12)


@pytest.mark.parametrize("sparse", [False, True])
def test_always_select_on_t_reading(sparse):
    prob = rv.make_regression("classroom", random_state=4)
    W = sp.csr_matrix(prob.W) if sparse else prob.W
    forced = [int(j) for j in np.flatnonzero(prob.x_true == 0)[:2]]
    res = rv.solve((W, prob.y), "svrgsp+", s=10, inner="on_T", always_select=forced,
                   random_state=0, max_iter=6, warn=False)
    for t in range(1, len(res.trace)):
        x = res.trace.x(t)
        assert np.all(x[forced] != 0) and np.count_nonzero(np.delete(x, forced)) <= 10
        assert set(forced) <= set(res.trace.T(t).tolist())


def test_always_select_matches_the_paper_without_it():
    """always_select=() is the paper's operator: bit-identical runs."""
    prob = rv.make_regression("classroom", random_state=0)
    for method in ("svrgsp+", "svrght", "grasp"):
        a = rv.solve(prob, method, s=12, random_state=3, warn=False)
        b = rv.solve(prob, method, s=12, random_state=3, warn=False, always_select=[])
        np.testing.assert_array_equal(a.x, b.x)


def test_top_k_forced_kernel_against_numpy():
    rng = np.random.default_rng(0)
    for _ in range(50):
        p = int(rng.integers(2, 700))
        v = rng.standard_normal(p)
        nf = int(rng.integers(0, min(5, p - 1) + 1))
        forced = np.sort(rng.choice(p, nf, replace=False)).astype(np.int64)
        k = int(rng.integers(0, p - nf + 1))
        out = np.zeros(p, dtype=np.int64)
        w = rv._kernels.threshold.top_k_forced(v.copy(), k, forced, out,
                                               np.zeros(p, dtype=np.int64), np.zeros(p),
                                               np.zeros(p))
        rest = np.setdiff1d(np.arange(p), forced)
        ref = np.sort(np.concatenate([forced, rest[np.argsort(-np.abs(v[rest]),
                                                              kind="stable")[:k]]]))
        np.testing.assert_array_equal(out[:w], ref)
        np.testing.assert_array_equal(rv.top_k(v, k, forced), ref)


def test_always_select_bad_input():
    prob = rv.make_regression("classroom", random_state=0)
    with pytest.raises(ValueError, match="always_select must hold coordinates"):
        rv.solve(prob, s=5, always_select=[prob.d])
    with pytest.raises(ValueError, match="repeated"):
        rv.solve(prob, s=5, always_select=[1, 1])
    with pytest.raises(ValueError, match="s counts only"):
        rv.solve(prob, s=prob.d - 1, always_select=[0, 1])
    with pytest.raises(TypeError, match="integer coordinates"):
        rv.solve(prob, s=5, always_select=["a"])


def test_estimator_always_select(diabetes):
    X, y = diabetes
    est = SparseLinearRegression(s=2, always_select=[0, 1], random_state=0).fit(X, y)
    assert est.coef_[0] != 0 and est.coef_[1] != 0
    assert np.count_nonzero(est.coef_) == 4
    with pytest.raises(ValueError, match="s must be an integer"):
        SparseLinearRegression(s=9, always_select=[0, 1]).fit(X, y)


# -- best iterate, refit, swaps ---------------------------------------------------------------


def test_solve_reports_the_best_iterate_it_visited():
    prob = rv.make_classification(n=200, d=100, s_star=5, random_state=0)
    res = rv.solve(prob, "sght", s=12, random_state=0, max_iter=30, warn=False)
    obj = np.asarray(res.trace.objective)
    assert res.fun_best == pytest.approx(obj.min())
    assert res.nit_best == int(np.argmin(obj))
    assert res.fun_best == pytest.approx(losses.objective(prob.W, prob.y, res.x_best,
                                                          prob.loss))
    assert res.fun == pytest.approx(obj[-1])  # res.x stays the paper's last iterate
    assert res.trace.meta["best_iteration"] == res.nit_best


@pytest.mark.filterwarnings("ignore::rgrasp_viz.exceptions.ConvergenceWarning")  # not checked
def test_estimator_returns_best_iterate_without_refit(cancer):
    X, y = cancer
    est = SparseLogisticRegression(s=5, method="sght", refit=False, swap_rounds=0, l2=0.0,
                                   random_state=0, max_iter=20).fit(X, y)
    meta = est.trace_.meta["estimator"]
    assert est.objective_ == meta["objective_best"] <= meta["objective_last"]
    assert est.refit_objective_ is None
    yy = np.where(y == est.classes_[1], 1.0, -1.0)
    f = np.mean(np.logaddexp(0.0, -yy * (X @ est.coef_[0] + est.intercept_[0])))
    assert f == pytest.approx(est.objective_, rel=1e-9)


def test_refit_and_swaps_lower_the_objective_and_are_recorded(cancer):
    X, y = cancer
    base = SparseLogisticRegression(s=5, method="svrgsp+", refit=False, swap_rounds=0,
                                    random_state=0).fit(X, y)
    refit = SparseLogisticRegression(s=5, method="svrgsp+", swap_rounds=0,
                                     random_state=0).fit(X, y)
    swapped = SparseLogisticRegression(s=5, method="svrgsp+", random_state=0).fit(X, y)
    assert refit.objective_ == base.objective_
    assert refit.refit_objective_ <= base.objective_
    assert swapped.refit_objective_ <= refit.refit_objective_
    meta = swapped.trace_.meta["estimator"]
    assert meta["swaps"] == swapped.swaps_
    assert swapped.swaps_, "the swaps improved nothing here: pick another case"
    last = swapped.swaps_[-1]
    assert swapped.coef_[0, last["in"]] != 0 and swapped.coef_[0, last["out"]] == 0
    objectives = [sw["objective"] for sw in swapped.swaps_]
    assert objectives == sorted(objectives, reverse=True)
    assert objectives[-1] == swapped.refit_objective_
    assert np.count_nonzero(swapped.coef_) == 5
    with pytest.raises(ValueError, match="refit=True"):
        SparseLogisticRegression(refit=False).fit(X, y)


# -- scikit-learn integration -------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::rgrasp_viz.exceptions.ConvergenceWarning")  # not checked
def test_pipeline_gridsearch_cross_val_clone(diabetes, cancer):
    X, y = diabetes
    pipe = make_pipeline(StandardScaler(), SparseLinearRegression(random_state=0))
    grid = GridSearchCV(pipe, {"sparselinearregression__s": [2, 4],
                               "sparselinearregression__method": ["htp", "svrgsp+"]}, cv=3)
    grid.fit(X, y)
    assert grid.best_params_["sparselinearregression__s"] in (2, 4)
    assert grid.best_score_ > 0.3
    Xc, yc = cancer
    scores = cross_val_score(make_pipeline(StandardScaler(),
                                           SparseLogisticRegression(s=3, random_state=0)),
                             Xc, yc, cv=3)
    assert scores.mean() > 0.9
    est = clone(SparseLogisticRegression(s=4, method="grasp"))
    assert est.get_params()["s"] == 4 and not hasattr(est, "coef_")


def test_dataframe_feature_names_reach_the_trace_and_the_raster(diabetes, tmp_path):
    X, y = diabetes
    est = SparseLinearRegression(s=3, random_state=0).fit(X, y)
    assert list(est.feature_names_in_) == list(X.columns)
    assert est.trace_.meta["feature_names"] == list(X.columns)
    assert set(est.selected_features_) <= set(X.columns)
    path = tmp_path / "fit.npz"
    est.trace_.save(path)
    loaded = rv.Trace.load(path)
    assert loaded.meta["feature_names"] == list(X.columns)
    from rgrasp_viz.viz.figures import support_raster

    fig = support_raster(loaded)
    labels = list(fig.data[0].y)
    assert "bmi" in labels and "s5" in labels
    assert not any(lab.isdigit() for lab in labels)
    # the logistic fit's intercept column is labelled too
    Xc = X.assign(bmi2=X["bmi"] ** 2)
    est = SparseLogisticRegression(s=2, random_state=0).fit(Xc, y > y.median())
    assert est.trace_.meta["feature_names"][-1] == "(intercept)"
    assert "(intercept)" in list(support_raster(est.trace_).data[0].y)


def test_play_accepts_an_estimator(diabetes):
    pytest.importorskip("ipywidgets")
    X, y = diabetes
    est = SparseLinearRegression(s=3, random_state=0).fit(X, y)
    player = rv.play(est)
    assert player.trace is est.trace_
    assert not hasattr(est, "play")  # rv.play is the one way to play


@pytest.mark.filterwarnings("ignore::rgrasp_viz.exceptions.ConvergenceWarning")  # not checked
def test_same_random_state_same_fit(cancer):
    X, y = cancer
    a = SparseLogisticRegression(s=4, method="svrgsp+", random_state=5).fit(X, y)
    b = SparseLogisticRegression(s=4, method="svrgsp+", random_state=5).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.trace_.equals(b.trace_)


# -- warnings ---------------------------------------------------------------------------------


def test_scale_warning_names_the_remedy(diabetes):
    X, y = diabetes
    Xr = X.to_numpy().copy()
    Xr[:, 2] *= 1e5
    with pytest.warns(DataWarning, match="StandardScaler"):
        SparseLinearRegression(s=3).fit(Xr, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataWarning)
        make_pipeline(StandardScaler(), SparseLinearRegression(s=3)).fit(Xr, y)


def test_solve_warns_on_binary_labels_without_loss():
    prob = rv.make_classification(n=200, d=100, s_star=5, random_state=0)
    y01 = (prob.y > 0).astype(float)
    with pytest.warns(DataWarning, match="loss='logistic'"):
        rv.solve((prob.W, y01), "htp", s=5)
    assert issubclass(DataWarning, UserWarning)
    assert not issubclass(DataWarning, ConvergenceWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataWarning)
        rv.solve((prob.W, y01), "htp", s=5, loss="squares")
        rv.solve((prob.W, y01), "htp", s=5, loss="logistic", warn=False)


def test_module_docstring_example_runs():
    import doctest

    import rgrasp_viz._estimators as mod

    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.filterwarnings("ignore::rgrasp_viz.exceptions.ConvergenceWarning")  # not checked
def test_swaps_grow_the_support_of_a_run_that_stopped_short(diabetes):
    """A diverged run's best iterate is its start (no feature): the swap rounds first add
    features up to s (recorded with "out": None), then swap."""
    X, y = diabetes
    est = SparseLinearRegression(s=3, method="fght", eta=1e6, random_state=0).fit(X, y)
    assert est.status_ == rv.Status.DIVERGED
    assert est.trace_.meta["estimator"]["best_iteration"] == 0
    assert np.count_nonzero(est.coef_) == 3
    grown = [sw for sw in est.swaps_ if sw["out"] is None]
    assert len(grown) == 3
    good = SparseLinearRegression(s=3, random_state=0).fit(X, y)
    assert est.refit_objective_ <= good.refit_objective_ * 1.01


def test_raster_labels_are_text_and_unique():
    from rgrasp_viz.viz.figures._raster import raster_labels

    prob = rv.make_regression("classroom", random_state=0)
    tr = rv.solve(prob, "htp", s=5).trace
    tr.meta["feature_names"] = ["<b>x</b>"] + ["dup"] * (prob.d - 1)
    labels = raster_labels(tr, np.array([0, 1, 2]), n_true=1)
    assert labels == ["&lt;b&gt;x&lt;/b&gt;★", "dup [1]", "dup [2]"]
    tr.meta["feature_names"] = ["too", "short"]  # not one name per coordinate: numbers
    assert raster_labels(tr, np.array([3, 4])) == ["3", "4"]


def test_import_rgrasp_viz_does_not_import_sklearn():
    import subprocess
    import sys

    code = ("import sys, rgrasp_viz; assert 'sklearn' not in sys.modules; "
            "rgrasp_viz.SparseLinearRegression; assert 'sklearn' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=600)


# -- swaps until stable -----------------------------------------------------------------------


def _toeplitz(n, d, k, rho, seed, noise=1.0):
    """Rows N(0, Sigma) with Sigma_ij = rho^|i-j| (an AR(1) across the columns), k nonzero
    coefficients uniform on [-1, 1] at random positions."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, d))
    X = np.empty_like(Z)
    X[:, 0] = Z[:, 0]
    for j in range(1, d):
        X[:, j] = rho * X[:, j - 1] + math.sqrt(1 - rho * rho) * Z[:, j]
    beta = np.zeros(d)
    support = rng.choice(d, k, replace=False)
    beta[support] = rng.uniform(-1, 1, k)
    return X, X @ beta + noise * rng.standard_normal(n), beta


def _ls_loss(X, y, S):
    """Least squares with an intercept on the columns S: (1/2n) ||residual||^2."""
    A = np.column_stack([X[:, S], np.ones(len(y))])
    r = y - A @ np.linalg.lstsq(A, y, rcond=None)[0]
    return 0.5 * float(r @ r) / len(y)


def test_least_squares_swaps_end_where_no_single_swap_lowers_the_loss():
    """The fit's support is swap-stable, checked by brute force over every (out, in) pair
    with a plain lstsq, and the swaps lowered the objective strictly, round after round."""
    X, y, _ = _toeplitz(120, 40, 8, 0.9, seed=1)
    est = SparseLinearRegression(s=6, random_state=0).fit(X, y)
    S = list(np.flatnonzero(est.coef_))
    f = _ls_loss(X, y, S)
    assert est.refit_objective_ == pytest.approx(f, rel=1e-10)
    assert est.status_ == rv.Status.CONVERGED and not est.fit_info_["swap_cap_reached"]
    for i in S:
        for j in sorted(set(range(40)) - set(S)):
            assert _ls_loss(X, y, [t for t in S if t != i] + [j]) >= f * (1 - 1e-9), (i, j)
    objectives = [sw["objective"] for sw in est.swaps_]
    assert all(np.diff(objectives) < 0)
    noswap = SparseLinearRegression(s=6, random_state=0, swap_rounds=0).fit(X, y)
    assert est.refit_objective_ <= noswap.refit_objective_


def test_logistic_swaps_end_where_no_single_swap_lowers_the_loss():
    rng = np.random.default_rng(3)
    n, d = 300, 15
    X = rng.standard_normal((n, d))
    X[:, 1] = X[:, 0] + 0.3 * rng.standard_normal(n)  # correlated pairs
    X[:, 5] = X[:, 4] + 0.3 * rng.standard_normal(n)
    a = X[:, [0, 4, 7, 9]] @ np.array([1.0, -1.0, 0.8, 0.6])
    y = (rng.random(n) < 1 / (1 + np.exp(-a))).astype(int)
    est = SparseLogisticRegression(s=3, random_state=0).fit(X, y)
    S = list(np.flatnonzero(est.coef_[0]))
    yy = np.where(y == 1, 1.0, -1.0)

    def best_loss(cols):  # a readable reference: scipy's minimiser on the columns + intercept
        from scipy.optimize import minimize

        A = np.column_stack([X[:, cols], np.ones(n)])

        def fun(b):
            return (np.mean(np.logaddexp(0.0, -yy * (A @ b)))
                    + 0.5 * est.l2 * float(b[:-1] @ b[:-1]))
        return minimize(fun, np.zeros(A.shape[1]), method="BFGS", tol=1e-12).fun

    f = best_loss(S)
    assert est.refit_objective_ == pytest.approx(f, rel=1e-6)
    for i in S:
        for j in sorted(set(range(d)) - set(S)):
            assert best_loss([t for t in S if t != i] + [j]) >= f * (1 - 1e-6), (i, j)


def test_swap_cap_is_a_safety_net_that_warns():
    X, y, _ = _toeplitz(200, 60, 10, 0.9, seed=2)
    free = SparseLinearRegression(s=10, random_state=0).fit(X, y)
    assert len(free.swaps_) >= 2, "pick a case where the swaps take several rounds"
    with pytest.warns(rv.exceptions.ConvergenceWarning, match="swap_rounds=1 while still lowering"):
        capped = SparseLinearRegression(s=10, random_state=0, swap_rounds=1).fit(X, y)
    assert capped.status_ == rv.Status.MAX_ITER
    assert capped.fit_info_["swap_cap_reached"] and len(capped.swaps_) == 1
    assert capped.trace_.meta["estimator"]["swap_cap_reached"]
    assert free.refit_objective_ < capped.refit_objective_


def _blocks(n, d, k, seed, rho=0.8):
    """Columns in blocks of 10 sharing a factor (correlation ``rho``), k nonzero coefficients
    uniform on [-1, 1] at random positions, unit noise."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, d))
    F = rng.standard_normal((n, d // 10 + 1))
    X = math.sqrt(1 - rho) * Z + math.sqrt(rho) * np.repeat(F, 10, axis=1)[:, :d]
    beta = np.zeros(d)
    beta[rng.choice(d, k, replace=False)] = rng.uniform(-1, 1, k)
    return X, X @ beta + rng.standard_normal(n)


def test_swaps_stand_in_for_the_runs_minimiser_probe():
    """HTP freezes on this block design: without swaps the run's end-of-run probe reports
    HT_FIXED_POINT (status and warning).  With swaps the run skips the probe, the swaps leave
    the frozen support, and the model they return passes the probe: CONVERGED, no warning,
    the same run."""
    from rgrasp_viz.solvers._driver import SUPPORT_FACTOR, minimiser_probe

    X, y = _blocks(200, 100, 10, seed=1)
    with pytest.warns(ConvergenceWarning, match="HT_FIXED_POINT"):
        frozen = SparseLinearRegression(s=10, swap_rounds=0, random_state=0).fit(X, y)
    assert frozen.status_ == rv.Status.HT_FIXED_POINT and frozen.fit_info_["minimiser_probe"]
    assert frozen.trace_.meta["minimiser_check"] is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = SparseLinearRegression(s=10, random_state=0).fit(X, y)
    assert est.status_ == rv.Status.CONVERGED and not est.fit_info_["minimiser_probe"]
    assert est.trace_.meta["minimiser_check"] is None
    assert est.swaps_ and est.refit_objective_ < 0.9 * frozen.refit_objective_
    np.testing.assert_array_equal(est.trace_.x(-1), frozen.trace_.x(-1))  # the same run
    probe = minimiser_probe(rv.Problem(X - X.mean(axis=0), y - y.mean()), est.coef_, 10)
    assert probe["F_support"] <= SUPPORT_FACTOR * probe["F_probe"]


@pytest.mark.parametrize("layout", ["dense", "csr", "weighted"])
def test_skipping_the_probe_changes_no_coefficient(monkeypatch, layout):
    """The fits with swaps, which skip the run's probe, are the fits the probed runs give,
    bit for bit (dense, CSR, weighted rows), where the probe would have said
    HT_FIXED_POINT too."""
    import contextlib

    import rgrasp_viz._estimators as E

    X, y = _blocks(200, 100, 10, seed=1)
    w = np.random.default_rng(0).integers(1, 4, len(y)).astype(float)
    data = sp.csr_matrix(X) if layout == "csr" else X
    weight = w if layout == "weighted" else None
    lean = SparseLinearRegression(s=10, random_state=0).fit(data, y, sample_weight=weight)
    monkeypatch.setattr(E, "without_minimiser_probe", contextlib.nullcontext)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        probed = SparseLinearRegression(s=10, random_state=0).fit(data, y, sample_weight=weight)
    np.testing.assert_array_equal(lean.coef_, probed.coef_)
    assert lean.intercept_ == probed.intercept_
    assert lean.swaps_ == probed.swaps_
    assert probed.status_ == rv.Status.HT_FIXED_POINT and lean.status_ == rv.Status.CONVERGED
    assert probed.trace_.meta["minimiser_check"] is not None
    assert lean.trace_.meta["minimiser_check"] is None


def test_a_fresh_process_fits_with_the_cached_kernels():
    """A new process (e.g. a joblib worker) loads the kernels numba cached and compiles none:
    the first process fills the cache if it is cold, a second one fits dense and CSR least
    squares and the logistic loss with cache hits only."""
    import subprocess
    import sys

    from rgrasp_viz._kernels import _jit

    if not _jit.HAVE_NUMBA:
        pytest.skip("numba is not installed: the kernels run as Python")
    code = """if True:
        import importlib, pkgutil
        import numpy as np, scipy.sparse as sp
        import rgrasp_viz as rv
        import rgrasp_viz._kernels as K
        rng = np.random.default_rng(0)
        X = rng.standard_normal((60, 12))
        y = X[:, 0] - X[:, 1] + 0.1 * rng.standard_normal(60)
        a = rv.SparseLinearRegression(s=3, random_state=0).fit(X, y)
        b = rv.SparseLinearRegression(s=3, random_state=0).fit(sp.csr_matrix(X), y)
        c = rv.SparseLogisticRegression(s=3, random_state=0).fit(X, y > 0)
        assert list(np.flatnonzero(a.coef_)) == list(np.flatnonzero(b.coef_))
        hits = misses = 0
        for info in pkgutil.iter_modules(K.__path__):
            mod = importlib.import_module("rgrasp_viz._kernels." + info.name)
            for obj in set(v for v in vars(mod).values() if hasattr(v, "stats")):
                hits += sum(obj.stats.cache_hits.values())
                misses += sum(obj.stats.cache_misses.values())
        print(hits, misses)
    """
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=900, check=True) for _ in range(2)]
    hits, misses = map(int, runs[1].stdout.split())
    assert hits > 0 and misses == 0, runs[1].stdout


def test_correlated_design_against_abess(unavailable):
    """The issue's case (Toeplitz rho = 0.9, n = 500, d = 1000, k = s = 20, seed 1):
    training loss within 2 % of abess's, F1 of the true support within 0.05 of abess's."""
    try:
        import abess
    except ImportError:
        unavailable("abess is not installed (the bench extra)")
    from sklearn.metrics import f1_score

    X, y, beta = _toeplitz(500, 1000, 20, 0.9, seed=1)
    ours = SparseLinearRegression(s=20, random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        peer = abess.LinearRegression(support_size=[20]).fit(X, y)

    def loss(coef, c):
        return 0.5 * np.mean((y - X @ coef - c) ** 2)

    assert loss(ours.coef_, ours.intercept_) <= 1.02 * loss(peer.coef_, peer.intercept_)
    assert (f1_score(beta != 0, ours.coef_ != 0)
            >= f1_score(beta != 0, peer.coef_ != 0) - 0.05)


# -- sample and class weights --------------------------------------------------------------


@pytest.mark.parametrize("sparse", [False, True])
def test_integer_weights_equal_repeated_rows_least_squares(sparse):
    rng = np.random.default_rng(0)
    X, y, _ = _toeplitz(80, 12, 3, 0.5, seed=5, noise=0.3)
    w = rng.integers(0, 4, size=80)
    Xr, yr = np.repeat(X, w, axis=0), np.repeat(y, w)
    conv = sp.csr_matrix if sparse else np.asarray
    a = SparseLinearRegression(s=3, random_state=0).fit(conv(X), y, sample_weight=w)
    b = SparseLinearRegression(s=3, random_state=0).fit(conv(Xr), yr)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-10, atol=1e-10)
    assert a.intercept_ == pytest.approx(b.intercept_, rel=1e-10, abs=1e-10)
    assert a.refit_objective_ == pytest.approx(b.refit_objective_, rel=1e-10)


def test_integer_weights_equal_repeated_rows_logistic():
    rng = np.random.default_rng(1)
    n, d = 150, 10
    X = rng.standard_normal((n, d))
    a = X[:, [1, 4]] @ np.array([1.5, -1.0])
    y = (rng.random(n) < 1 / (1 + np.exp(-a))).astype(int)
    w = rng.integers(0, 4, size=n)
    Xr, yr = np.repeat(X, w, axis=0), np.repeat(y, w)
    weighted = SparseLogisticRegression(s=3, random_state=0).fit(X, y, sample_weight=w)
    repeated = SparseLogisticRegression(s=3, random_state=0).fit(Xr, yr)
    np.testing.assert_allclose(weighted.coef_, repeated.coef_, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(weighted.intercept_, repeated.intercept_, rtol=1e-10)
    # equal weights are the unweighted fit, bit for bit (its trace included)
    ones = SparseLogisticRegression(s=3, random_state=0).fit(X, y, sample_weight=np.full(n, 2))
    plain = SparseLogisticRegression(s=3, random_state=0).fit(X, y)
    np.testing.assert_array_equal(ones.coef_, plain.coef_)
    assert ones.trace_ is not None and weighted.trace_ is None
    with pytest.raises(ValueError, match="method must be 'htp'"):
        SparseLogisticRegression(s=3, method="grasp").fit(X, y, sample_weight=w)
    with pytest.raises(ValueError, match="every sample weight is zero"):
        SparseLogisticRegression(s=3).fit(X, y, sample_weight=np.zeros(n))
    with pytest.raises(ValueError, match="[Nn]egative"):
        SparseLinearRegression(s=3).fit(X, a, sample_weight=-np.ones(n))


def test_class_weight_is_a_sample_weight_per_class():
    rng = np.random.default_rng(2)
    n, d = 200, 8
    X = rng.standard_normal((n, d))
    y = np.where(X[:, 2] - 0.5 * X[:, 5] + 0.8 * rng.standard_normal(n) > 1.0, "a", "b")
    cw = SparseLogisticRegression(s=2, class_weight={"a": 3.0, "b": 1.0}).fit(X, y)
    sw = SparseLogisticRegression(s=2).fit(X, y, sample_weight=np.where(y == "a", 3.0, 1.0))
    np.testing.assert_array_equal(cw.coef_, sw.coef_)
    bal = SparseLogisticRegression(s=2, class_weight="balanced").fit(X, y)
    plain = SparseLogisticRegression(s=2).fit(X, y)
    # balancing raises the rare class's predicted share towards one half
    share = {m: np.mean(m.predict(X) == "a") for m in (bal, plain)}
    assert share[bal] > share[plain]


# -- conventions ---------------------------------------------------------------------------


def test_classifier_shapes_follow_scikit_learn(cancer):
    from sklearn.linear_model import LogisticRegression

    X, y = cancer
    ours = SparseLogisticRegression(s=5).fit(X, y)
    ref = LogisticRegression().fit(X, y)
    assert ours.coef_.shape == ref.coef_.shape == (1, 30)
    assert ours.intercept_.shape == ref.intercept_.shape == (1,)
    np.testing.assert_allclose(ours.decision_function(X),
                               (X @ ours.coef_.T + ours.intercept_).ravel())
    reg = SparseLinearRegression(s=3).fit(X, y.astype(float))
    assert reg.coef_.shape == (30,) and isinstance(reg.intercept_, float)


def test_always_select_by_column_names(diabetes):
    X, y = diabetes
    by_name = SparseLinearRegression(s=2, always_select=["age", "sex"]).fit(X, y)
    by_index = SparseLinearRegression(s=2, always_select=[0, 1]).fit(X, y)
    np.testing.assert_array_equal(by_name.coef_, by_index.coef_)
    assert {"age", "sex"} <= set(by_name.selected_features_)
    with pytest.raises(ValueError, match=r"\['nope'\] are not columns"):
        SparseLinearRegression(s=2, always_select=["age", "nope"]).fit(X, y)
    with pytest.raises(ValueError, match="X has no column names"):
        SparseLinearRegression(s=2, always_select=["age"]).fit(X.to_numpy(), y)


def test_import_without_sklearn_names_the_extra():
    """scikit-learn simulated missing (``sys.modules['sklearn'] = None``): the lazy attribute
    and the module both say which extra to install."""
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['sklearn'] = None\n"
        "import rgrasp_viz as rv\n"
        "for get in (lambda: rv.SparseLinearRegressionCV, "
        "lambda: __import__('rgrasp_viz._estimators')):\n"
        "    try:\n"
        "        get()\n"
        "    except ImportError as exc:\n"
        "        assert 'pip install rgrasp_viz[estimators]' in str(exc), exc\n"
        "    else:\n"
        "        raise SystemExit('no ImportError')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr


def _logistic_data(seed, n=300, d=40, k=6):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    beta = np.zeros(d)
    beta[rng.choice(d, k, replace=False)] = rng.uniform(-2, 2, k)
    y = (rng.random(n) < 1 / (1 + np.exp(-X @ beta))).astype(int)
    return X, y


@pytest.mark.parametrize("layout", ["dense", "csr", "weighted"])
@pytest.mark.parametrize(("seed", "s"), [(0, 3), (1, 6), (2, 12)])
def test_newton_exact_fits_give_the_lbfgs_model(monkeypatch, layout, seed, s):
    """The run's exact logistic fits by Newton (the estimators' default) give the model the
    L-BFGS fits give: the same support, swaps and iterations, coefficients and objectives
    equal to tight tolerance (dense, CSR; a weighted fit runs the estimator's own weighted
    HTP and is unchanged bit for bit)."""
    import contextlib

    import rgrasp_viz._estimators as E

    X, y = _logistic_data(seed)
    w = np.random.default_rng(seed).integers(1, 4, len(y)).astype(float)
    data = sp.csr_matrix(X) if layout == "csr" else X
    weight = w if layout == "weighted" else None
    lean = SparseLogisticRegression(s=s).fit(data, y, sample_weight=weight)
    monkeypatch.setattr(E, "logistic_exact_by_newton", contextlib.nullcontext)
    full = SparseLogisticRegression(s=s).fit(data, y, sample_weight=weight)
    np.testing.assert_array_equal(np.flatnonzero(lean.coef_), np.flatnonzero(full.coef_))
    np.testing.assert_allclose(lean.coef_, full.coef_, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(lean.intercept_, full.intercept_, rtol=1e-7, atol=1e-9)
    assert [(m["in"], m["out"]) for m in lean.swaps_] == [(m["in"], m["out"])
                                                          for m in full.swaps_]
    assert lean.n_iter_ == full.n_iter_ and lean.status_ == full.status_
    assert lean.objective_ == pytest.approx(full.objective_, rel=1e-10)
    assert lean.refit_objective_ == pytest.approx(full.refit_objective_, rel=1e-12)
    if layout == "weighted":
        np.testing.assert_array_equal(lean.coef_, full.coef_)
        assert lean.fit_info_["exact_logistic_fit"] is None
    else:
        assert lean.fit_info_["exact_logistic_fit"] == "newton"
        assert lean.trace_.passes[-1] > 0


def test_fit_validation_fast_path_matches_scikit_learn():
    """A float64 ndarray is accepted as is; a list, a DataFrame and a float32 array go
    through scikit-learn's validation: the same fit.  Refitting on an ndarray drops the
    DataFrame's feature names; non-finite data is refused with scikit-learn's message."""
    pd = pytest.importorskip("pandas")
    X, y = _logistic_data(3, n=120, d=12)
    ref = SparseLogisticRegression(s=3).fit(X, y)
    for data in (X.tolist(), pd.DataFrame(X, columns=[f"f{j}" for j in range(12)])):
        other = SparseLogisticRegression(s=3).fit(data, y)
        np.testing.assert_array_equal(other.coef_, ref.coef_)
    est = SparseLogisticRegression(s=3).fit(pd.DataFrame(X, columns=[f"f{j}" for j in
                                                                     range(12)]), y)
    assert hasattr(est, "feature_names_in_")
    est.fit(X, y)
    assert not hasattr(est, "feature_names_in_") and est.n_features_in_ == 12
    reg = SparseLinearRegression(s=3).fit(X, y.astype(float))
    np.testing.assert_array_equal(
        reg.coef_, SparseLinearRegression(s=3).fit(X.tolist(), y.tolist()).coef_)
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        SparseLinearRegression(s=3).fit(bad, y.astype(float))
    yb = y.astype(float)
    yb[1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        SparseLinearRegression(s=3).fit(X, yb)
    with pytest.raises(ValueError, match="Unknown label type"):
        SparseLogisticRegression(s=3).fit(X, y + 0.5)


@pytest.mark.parametrize("layout", ["dense", "csr", "weighted"])
def test_kept_least_squares_refits_change_no_path(monkeypatch, layout):
    """The least-squares refits kept by support (a path point refits the previous point's
    support) give the path computed without them, bit for bit (dense, CSR, weighted)."""
    import rgrasp_viz._estimators as E

    X, y = _blocks(150, 40, 6, seed=3)
    w = np.random.default_rng(1).integers(1, 4, len(y)).astype(float)
    data = sp.csr_matrix(X) if layout == "csr" else X
    weight = w if layout == "weighted" else None
    kept = rv.SparseLinearRegressionCV(criterion="ebic", s_values=range(1, 16)).fit(
        data, y, sample_weight=weight)
    monkeypatch.setattr(E, "_REFIT_MEMO", 0)
    fresh = rv.SparseLinearRegressionCV(criterion="ebic", s_values=range(1, 16)).fit(
        data, y, sample_weight=weight)
    for key in ("coef", "intercept", "objective", "criterion"):
        np.testing.assert_array_equal(kept.path_[key], fresh.path_[key])
    assert kept.s_ == fresh.s_
