"""The scikit-learn estimators (rgrasp_viz._estimators) and the solver-core options they use:
``always_select`` in every method, the best iterate of a run, the data warnings, feature
names in the support raster."""

from __future__ import annotations

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
            if name != "check_array_api_input":
                yield pytest.param(estimator, check, id=f"{type(est).__name__}-{name}")


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
    assert set(np.flatnonzero(est.coef_)) == {0, 3}
    assert est.intercept_ == pytest.approx(-3.0, abs=0.6)
    # at the optimum the intercept's gradient vanishes: mean predicted = observed frequency
    p = est.predict_proba(X)[:, 1]
    assert p.mean() == pytest.approx(np.mean(y == "yes"), abs=1e-6)
    no_icpt = SparseLogisticRegression(s=2, fit_intercept=False, random_state=0).fit(X, y)
    assert no_icpt.intercept_ == 0.0
    assert no_icpt.score(X, y) <= est.score(X, y)


def test_predict_proba_and_decision_function_agree(cancer):
    X, y = cancer
    est = SparseLogisticRegression(s=5, random_state=0).fit(X, y)
    df = est.decision_function(X)
    np.testing.assert_allclose(df, X @ est.coef_ + est.intercept_)
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
    est = SparseLogisticRegression(s=5, method="sght", refit=False, swap_rounds=0,
                                   random_state=0, max_iter=20).fit(X, y)
    meta = est.trace_.meta["estimator"]
    assert est.objective_ == meta["objective_best"] <= meta["objective_last"]
    assert est.refit_objective_ is None
    yy = np.where(y == est.classes_[1], 1.0, -1.0)
    f = np.mean(np.logaddexp(0.0, -yy * (X @ est.coef_ + est.intercept_)))
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
    assert swapped.coef_[last["in"]] != 0 and swapped.coef_[last["out"]] == 0
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
