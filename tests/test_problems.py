"""Tests of rgrasp_viz._problems: validation, canonical storage and the generators."""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import expit

from rgrasp_viz import losses
from rgrasp_viz._problems import Problem, as_problem, make_classification, make_regression


def _small(n=8, d=5, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)), rng.standard_normal(n)


# ---------------------------------------------------------------- storage / conversion


def test_dense_storage_is_c_contiguous_float64():
    W, y = _small()
    Wf = np.asfortranarray(W.astype(np.float32))
    p = Problem(Wf, y.astype(np.float32))
    assert p.W.dtype == np.float64 and p.W.flags.c_contiguous
    assert p.y.dtype == np.float64 and p.y.flags.c_contiguous and p.y.ndim == 1
    np.testing.assert_array_equal(p.W, Wf.astype(np.float64))
    assert not p.is_sparse


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int8, np.bool_])
def test_dense_real_dtypes_upcast(dtype):
    W = (np.arange(12).reshape(3, 4) % 2).astype(dtype)
    p = Problem(W, np.ones(3))
    assert p.W.dtype == np.float64
    np.testing.assert_array_equal(p.W, W.astype(np.float64))


def test_lists_accepted():
    p = Problem([[1, 2], [3, 4], [5, 6]], [1, 0, 1])
    assert (p.n, p.d) == (3, 2) and p.W.dtype == np.float64


@pytest.mark.parametrize(
    "convert",
    [sp.coo_matrix, sp.csc_matrix, sp.lil_matrix, sp.csr_array, sp.coo_array, sp.csc_array],
)
def test_sparse_formats_converted_to_csr_matrix(convert):
    W, y = _small()
    W[W < 0.3] = 0.0
    Ws = convert(W.astype(np.float32))
    p = Problem(Ws, y)
    assert type(p.W) is sp.csr_matrix
    assert p.W.dtype == np.float64
    assert p.W.has_canonical_format and p.W.has_sorted_indices
    np.testing.assert_array_equal(p.W.toarray(), W.astype(np.float32).astype(np.float64))
    assert p.is_sparse and p.nnz == np.count_nonzero(W)


def test_sparse_duplicates_summed_and_indices_sorted_without_mutating_input():
    # Unsorted indices and a duplicate entry in row 0.
    data = np.array([1.0, 2.0, 3.0, 4.0])
    indices = np.array([2, 0, 2, 1])
    indptr = np.array([0, 3, 4])
    Win = sp.csr_matrix((data, indices, indptr), shape=(2, 3))
    snapshot = (Win.data.copy(), Win.indices.copy(), Win.indptr.copy())
    p = Problem(Win, [1.0, 2.0])
    assert p.W.has_canonical_format
    np.testing.assert_array_equal(p.W.indices, [0, 2, 1])
    np.testing.assert_array_equal(p.W.toarray(), [[2.0, 0.0, 4.0], [0.0, 4.0, 0.0]])
    assert p.nnz == 3
    for before, after in zip(snapshot, (Win.data, Win.indices, Win.indptr), strict=True):
        np.testing.assert_array_equal(before, after)


def test_canonical_csr_kept_as_is():
    W = sp.random(20, 10, density=0.3, format="csr", random_state=0)
    p = Problem(W, np.zeros(20))
    assert p.W is W


def test_inputs_not_mutated():
    W, y = _small()
    y01 = (y > 0).astype(np.int64)
    W32 = W.astype(np.float32)
    W_copy, y_copy = W32.copy(), y01.copy()
    p = Problem(W32, y01, loss="logistic")
    np.testing.assert_array_equal(W32, W_copy)
    np.testing.assert_array_equal(y01, y_copy)
    p.gradient(np.ones(p.d))
    p.objective(np.ones(p.d))
    np.testing.assert_array_equal(W32, W_copy)


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize(
    "bad",
    [
        np.ones((3, 2), dtype=complex),
        np.array([["a", "b"], ["c", "d"]]),
        np.array([[1.0, None]], dtype=object),
        sp.csr_matrix(np.ones((2, 2), dtype=complex)),
    ],
)
def test_non_real_W_is_type_error(bad):
    with pytest.raises(TypeError, match="W"):
        Problem(bad, np.ones(bad.shape[0]))


def test_complex_y_and_x_true_are_type_errors():
    W, y = _small()
    with pytest.raises(TypeError, match="y"):
        Problem(W, y.astype(complex))
    with pytest.raises(TypeError, match="x_true"):
        Problem(W, y, x_true=np.ones(W.shape[1], dtype=complex))


@pytest.mark.parametrize("bad", [np.ones(5), np.ones((2, 2, 2)), np.float64(3.0)])
def test_W_must_be_2d(bad):
    with pytest.raises(ValueError, match="W must be 2-D"):
        Problem(bad, np.ones(2))


@pytest.mark.parametrize(
    "W", [np.ones((0, 4)), np.ones((4, 0)), sp.csr_matrix((0, 3)), sp.csr_matrix((3, 0))]
)
def test_empty_data(W):
    with pytest.raises(ValueError, match="W.*empty data"):
        Problem(W, np.ones(W.shape[0]))


def test_y_must_be_1d():
    W, y = _small()
    with pytest.raises(ValueError, match=r"y must be 1-D.*\(8, 1\)"):
        Problem(W, y[:, None])


def test_y_length_mismatch_reports_both_shapes():
    W, y = _small()
    with pytest.raises(ValueError, match=r"y.*\(8, 5\).*\(7,\)"):
        Problem(W, y[:-1])


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_non_finite_W_dense_and_sparse(value):
    W, y = _small()
    W[2, 3] = value
    with pytest.raises(ValueError, match="W contains non-finite"):
        Problem(W, y)
    with pytest.raises(ValueError, match="W contains non-finite"):
        Problem(sp.csr_matrix(W), y)


def test_non_finite_y_and_x_true():
    W, y = _small()
    y_bad = y.copy()
    y_bad[0] = np.nan
    with pytest.raises(ValueError, match="y contains non-finite"):
        Problem(W, y_bad)
    x_bad = np.zeros(W.shape[1])
    x_bad[1] = np.inf
    with pytest.raises(ValueError, match="x_true contains non-finite"):
        Problem(W, y, x_true=x_bad)


@pytest.mark.parametrize("loss", ["hinge", "Squares", None, 0])
def test_unknown_loss_lists_valid_ones(loss):
    W, y = _small()
    with pytest.raises(ValueError, match="loss must be one of.*squares.*logistic"):
        Problem(W, y, loss=loss)


@pytest.mark.parametrize("x_true", [np.ones(4), np.ones(6), np.ones((5, 1))])
def test_x_true_wrong_shape(x_true):
    W, y = _small()
    with pytest.raises(ValueError, match="x_true"):
        Problem(W, y, x_true=x_true)


def test_logistic_labels_pm1_kept():
    W, _ = _small()
    y = np.array([1, -1, 1, 1, -1, -1, 1, -1])
    p = Problem(W, y, loss="logistic")
    np.testing.assert_array_equal(p.y, y.astype(np.float64))


def test_logistic_labels_01_converted():
    W, _ = _small()
    y = np.array([1, 0, 1, 1, 0, 0, 1, 0])
    p = Problem(W, y, loss="logistic")
    np.testing.assert_array_equal(p.y, [1, -1, 1, 1, -1, -1, 1, -1])
    np.testing.assert_array_equal(y, [1, 0, 1, 1, 0, 0, 1, 0])  # input untouched
    # all-zero labels are a valid {0, 1} labelling too
    np.testing.assert_array_equal(Problem(W, np.zeros(8), loss="logistic").y, -np.ones(8))


def test_logistic_bad_labels_show_at_most_five_values():
    W, _ = _small()
    y = np.array([0.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 1.0])
    with pytest.raises(ValueError, match=r"y must hold labels.*0\.5, 2\.0, 3\.0, 4\.0, 5\.0 ") as e:
        Problem(W, y, loss="logistic")
    assert "6.0" not in str(e.value) and "2 more" in str(e.value)
    # mixing the two conventions is ambiguous and rejected
    with pytest.raises(ValueError, match=r"y must hold labels.*0\.0"):
        Problem(W, [-1, 0, 1, 1, -1, 0, 1, 1], loss="logistic")


def test_squares_accepts_any_real_y():
    W, _ = _small()
    y = np.linspace(-3, 3, 8)
    np.testing.assert_array_equal(Problem(W, y).y, y)


# ---------------------------------------------------------------- properties / methods


def test_properties_and_repr():
    W, y = _small()
    p = Problem(W, y, name="toy")
    assert (p.n, p.d, p.nnz, p.density, p.loss_code) == (8, 5, 40, 1.0, 0)
    W[W < 0] = 0.0
    q = Problem(sp.csr_matrix(W), (y > 0).astype(float), loss="logistic")
    assert q.is_sparse and q.loss_code == 1
    assert q.nnz == np.count_nonzero(W)
    assert q.density == pytest.approx(q.nnz / 40)
    r = repr(p)
    assert "toy" in r and "n=8" in r and "d=5" in r and "squares" in r and "dense" in r
    assert "CSR" in repr(q) and "logistic" in repr(q)


@pytest.mark.parametrize("loss", losses.LOSSES)
def test_methods_match_loss_module_and_dense_equals_csr(loss):
    rng = np.random.default_rng(5)
    W = rng.standard_normal((40, 15))
    W[rng.random(W.shape) < 0.5] = 0.0
    y = rng.standard_normal(40) if loss == "squares" else rng.choice([-1.0, 1.0], 40)
    x = rng.standard_normal(15)
    pd_, ps = Problem(W, y, loss), Problem(sp.coo_matrix(W), y, loss)
    assert pd_.objective(x) == losses.objective(W, y, x, loss)
    np.testing.assert_array_equal(pd_.gradient(x), losses.gradient(W, y, x, loss)[0])
    np.testing.assert_allclose(pd_.margins(x), W @ x, rtol=1e-15)
    assert ps.objective(x) == pytest.approx(pd_.objective(x), rel=1e-12)
    np.testing.assert_allclose(ps.gradient(x), pd_.gradient(x), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(ps.margins(x), pd_.margins(x), rtol=1e-12, atol=1e-15)
    avg = np.mean([ps.sample_gradient(x, i) for i in range(ps.n)], axis=0)
    np.testing.assert_allclose(avg, pd_.gradient(x), rtol=1e-12, atol=1e-15)


def test_x_shape_checked():
    W, y = _small()
    p = Problem(W, y)
    with pytest.raises(ValueError, match="x"):
        p.objective(np.ones(4))


def test_rel_error():
    W, y = _small()
    x_true = np.array([3.0, 0.0, 4.0, 0.0, 0.0])
    p = Problem(W, y, x_true=x_true)
    assert p.rel_error(x_true) == 0.0
    assert p.rel_error(np.zeros(5)) == pytest.approx(1.0)
    assert p.rel_error(np.array([0.0, 0.0, 4.0, 0.0, 0.0])) == pytest.approx(3.0 / 5.0)
    assert math.isnan(Problem(W, y).rel_error(np.zeros(5)))
    zero = Problem(W, y, x_true=np.zeros(5))
    assert zero.rel_error(np.array([0.0, 3.0, 0.0, 4.0, 0.0])) == pytest.approx(5.0)


@pytest.mark.parametrize("sparse", [False, True])
def test_sq_norms_cached_and_correct(sparse):
    W, y = _small(n=9, d=6, seed=4)
    W[W < 0] = 0.0
    W[3] = 0.0  # an empty row must still get a zero entry
    p = Problem(sp.csr_matrix(W) if sparse else W, y)
    np.testing.assert_allclose(p.col_sq_norms(), (W**2).sum(axis=0), rtol=1e-14)
    np.testing.assert_allclose(p.row_sq_norms(), (W**2).sum(axis=1), rtol=1e-14)
    assert p.col_sq_norms().shape == (6,) and p.row_sq_norms().shape == (9,)
    assert p.col_sq_norms() is p.col_sq_norms()
    assert p.row_sq_norms() is p.row_sq_norms()
    with pytest.raises(ValueError):
        p.row_sq_norms()[0] = 1.0  # cache is read-only


# ---------------------------------------------------------------- as_problem


def test_as_problem():
    W, y = _small()
    p = Problem(W, y)
    assert as_problem(p) is p
    assert as_problem(p, loss="squares") is p
    with pytest.raises(ValueError, match="loss"):
        as_problem(p, loss="logistic")
    q = as_problem((W, y))
    assert isinstance(q, Problem) and q.loss == "squares"
    r = as_problem([W, np.sign(y)], loss="logistic", x_true=np.zeros(5))
    assert r.loss == "logistic" and r.x_true is not None
    for bad in (W, (W, y, y), "data", None):
        with pytest.raises(TypeError, match=r"Problem.*\(W, y\)"):
            as_problem(bad)


# ---------------------------------------------------------------- generators


def test_classroom_default():
    p = make_regression(random_state=0)
    assert (p.n, p.d, p.loss, p.name) == (500, 1000, "squares", "classroom")
    assert np.count_nonzero(p.x_true) == 20
    assert not p.is_sparse
    assert make_regression("classroom", random_state=0).name == "classroom"


def test_setting1_sizes():
    p = make_regression(1, random_state=0)
    assert (p.n, p.d, np.count_nonzero(p.x_true), p.name) == (2500, 5000, 250, "setting1")
    assert p.W.flags.c_contiguous and p.W.dtype == np.float64
    # Sigma = I: unit column variance, no systematic row offset
    assert np.mean(p.W**2) == pytest.approx(1.0, abs=0.01)
    assert np.std(p.W.mean(axis=1)) < 0.03
    np.testing.assert_allclose(p.y, p.W @ p.x_true, atol=0.6)  # sigma = 0.1


def test_overrides_and_names():
    p = make_regression(n=60, d=80, random_state=0)
    assert (p.n, p.d, np.count_nonzero(p.x_true)) == (60, 80, 4)  # d // 20
    assert p.name == "regression(n=60,d=80)"
    q = make_regression(1, n=30, d=40, s_star=3, random_state=0)
    assert (q.n, q.d, np.count_nonzero(q.x_true)) == (30, 40, 3)
    assert q.name.startswith("regression(")
    assert make_regression(d=30, random_state=0).n == 500


def test_support_and_values():
    p = make_regression(n=50, d=300, s_star=40, random_state=3)
    nz = np.flatnonzero(p.x_true)
    assert nz.size == 40
    assert np.all(np.abs(p.x_true) <= 1.0)
    # both signs and a spread over [-1, 1]
    assert p.x_true[nz].min() < -0.5 and p.x_true[nz].max() > 0.5


def test_reproducible_and_seed_dependent():
    a = make_regression(n=40, d=60, s_star=5, correlation=0.3, random_state=7)
    b = make_regression(n=40, d=60, s_star=5, correlation=0.3, random_state=7)
    c = make_regression(n=40, d=60, s_star=5, correlation=0.3, random_state=8)
    np.testing.assert_array_equal(a.W, b.W)
    np.testing.assert_array_equal(a.y, b.y)
    np.testing.assert_array_equal(a.x_true, b.x_true)
    assert not np.array_equal(a.W, c.W)
    assert not np.array_equal(a.x_true, c.x_true)
    g = make_regression(
        n=40, d=60, s_star=5, correlation=0.3, random_state=np.random.default_rng(7)
    )
    np.testing.assert_array_equal(g.y, a.y)


def test_fixed_draw_order():
    # W is drawn first: the same seed gives the same W whatever s_star and noise_var are.
    a = make_regression(n=20, d=30, s_star=2, noise_var=0.0, random_state=1)
    b = make_regression(n=20, d=30, s_star=9, noise_var=1.0, random_state=1)
    np.testing.assert_array_equal(a.W, b.W)
    np.testing.assert_array_equal(a.y, a.W @ a.x_true)  # zero noise


@pytest.mark.parametrize("rho", [0.0, 0.1, 0.5])
def test_row_covariance(rho):
    p = make_regression(n=20000, d=5, s_star=2, correlation=rho, random_state=11)
    cov = np.cov(p.W, rowvar=False)
    assert np.allclose(np.diag(cov), 1.0, atol=0.03)
    off = cov[~np.eye(5, dtype=bool)]
    assert np.allclose(off, rho, atol=0.03)


def test_setting2_correlation_preset():
    # setting 2's Sigma (0.1 off the diagonal) without the 400 MB design
    p = make_regression(2, n=20000, d=5, s_star=2, random_state=12)
    cov = np.cov(p.W, rowvar=False)
    assert np.allclose(np.diag(cov), 1.0, atol=0.03)
    assert np.allclose(cov[~np.eye(5, dtype=bool)], 0.1, atol=0.03)


@pytest.mark.parametrize("noise_var", [0.01, 0.25])
def test_noise_variance(noise_var):
    p = make_regression(n=20000, d=10, s_star=3, noise_var=noise_var, random_state=2)
    resid = p.y - p.W @ p.x_true
    assert np.var(resid) == pytest.approx(noise_var, rel=0.05)
    assert abs(np.mean(resid)) < 4 * math.sqrt(noise_var / p.n)


def test_sparse_design():
    p = make_regression(n=2000, d=50, s_star=5, sparse_density=0.1, random_state=4)
    assert type(p.W) is sp.csr_matrix and p.W.has_canonical_format
    assert p.density == pytest.approx(0.1, rel=1e-3)
    col_var = np.asarray(p.W.multiply(p.W).mean(axis=0)).ravel()
    assert np.mean(col_var) == pytest.approx(1.0, abs=0.05)
    resid = p.y - p.W @ p.x_true
    assert np.var(resid) == pytest.approx(0.01, rel=0.15)
    q = make_regression(n=2000, d=50, s_star=5, sparse_density=0.1, random_state=4)
    assert (p.W != q.W).nnz == 0
    np.testing.assert_array_equal(p.y, q.y)


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"n": 0, "d": 5}, ValueError, "n must be a positive"),
        ({"n": 2.5, "d": 5}, TypeError, "n must be a positive"),
        ({"n": True, "d": 5}, TypeError, "n must be a positive"),
        ({"n": 5, "d": -1}, ValueError, "d must be a positive"),
        ({"n": 5, "d": 4, "s_star": 5}, ValueError, "s_star must be <= d"),
        ({"n": 5, "d": 4, "s_star": 0}, ValueError, "s_star"),
        ({"n": 5, "d": 4, "s_star": 1, "correlation": 1.0}, ValueError, "correlation"),
        ({"n": 5, "d": 4, "s_star": 1, "correlation": -0.1}, ValueError, "correlation"),
        ({"n": 5, "d": 4, "s_star": 1, "noise_var": -1.0}, ValueError, "noise_var"),
        ({"n": 5, "d": 4, "s_star": 1, "sparse_density": 0.0}, ValueError, "sparse_density"),
        ({"n": 5, "d": 4, "s_star": 1, "sparse_density": 1.5}, ValueError, "sparse_density"),
        (
            {"n": 5, "d": 4, "s_star": 1, "sparse_density": 0.5, "correlation": 0.1},
            ValueError,
            "correlation must be 0",
        ),
        ({"setting": 3}, ValueError, "setting"),
        ({"setting": "huge"}, ValueError, "setting"),
    ],
)
def test_make_regression_validation(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        make_regression(**kwargs)


def test_make_classification():
    p = make_classification(n=4000, d=200, s_star=10, signal=2.0, random_state=0)
    assert (p.n, p.d, p.loss, p.loss_code) == (4000, 200, "logistic", 1)
    assert set(np.unique(p.y)) == {-1.0, 1.0}
    nz = np.flatnonzero(p.x_true)
    assert nz.size == 10 and np.all(np.abs(p.x_true) <= 2.0)
    a = p.W @ p.x_true
    agree = np.mean(p.y == np.sign(a))
    # labels follow Bernoulli(sigmoid(a)): expected agreement is mean(sigmoid(|a|))
    assert agree > 0.7
    assert agree == pytest.approx(np.mean(expit(np.abs(a))), abs=0.03)
    assert p.objective(p.x_true) < p.objective(np.zeros(p.d))


def test_make_classification_reproducible_and_sparse():
    a = make_classification(n=100, d=50, s_star=5, random_state=3)
    b = make_classification(n=100, d=50, s_star=5, random_state=3)
    np.testing.assert_array_equal(a.W, b.W)
    np.testing.assert_array_equal(a.y, b.y)
    # W and x* are drawn exactly as in make_regression
    r = make_regression(n=100, d=50, s_star=5, random_state=3)
    np.testing.assert_array_equal(a.W, r.W)
    np.testing.assert_array_equal(a.x_true, r.x_true)
    s = make_classification(n=300, d=40, s_star=4, sparse_density=0.2, random_state=1)
    assert s.is_sparse and set(np.unique(s.y)) <= {-1.0, 1.0}
    with pytest.raises(ValueError, match="signal"):
        make_classification(signal=0.0)
    with pytest.raises(ValueError, match="s_star"):
        make_classification(d=10, s_star=11)
