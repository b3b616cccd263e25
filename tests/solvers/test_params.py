"""Input validation of ``rv.solve`` (and the Problem it builds).

Every bad input must be rejected at the boundary with a ValueError or TypeError whose message
names the offending argument -- never with an error from deep inside NumPy or Numba.  Valid
edge cases (tiny n, d = 1, s = d, m = J, ...) must run.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import rgrasp_viz as rv

ALL = ("fght", "grasp", "sght", "svrght", "svrgsp", "svrgsp+")


def data(n=20, d=10, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)), rng.standard_normal(n)


def check_raises(match, *args, exc=(ValueError, TypeError), **kwargs):
    """``solve(*args, **kwargs)`` must raise ``exc`` naming the argument, not a Numba error."""
    kwargs.setdefault("warn", False)
    kwargs.setdefault("random_state", 0)
    with pytest.raises(exc, match=match) as info:
        rv.solve(*args, **kwargs)
    module = type(info.value).__module__
    assert not module.startswith("numba"), f"Numba error leaked: {info.value!r}"
    return info.value


@pytest.fixture(scope="module")
def prob():
    W, y = data()
    x_true = np.zeros(10)
    x_true[[1, 4]] = [1.0, -1.0]
    return rv.Problem(W, y, x_true=x_true)


# -- data -----------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ALL)
def test_mismatched_shapes(method):
    W, y = data()
    check_raises(r"\by\b", (W, y[:-1]), method=method, s=2)
    check_raises(r"\by\b", (W, np.ones((20, 2))), method=method, s=2)


def test_W_not_2d():
    W, y = data()
    check_raises(r"\bW\b", (W[0], y), s=2)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_nonfinite_W(bad, sparse):
    W, y = data()
    W[3, 4] = bad
    if sparse:
        W = sp.csr_matrix(W)
    check_raises(r"\bW\b", (W, y), s=2, exc=ValueError)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nonfinite_y(bad):
    W, y = data()
    y[5] = bad
    check_raises(r"\by\b", (W, y), s=2, exc=ValueError)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nonfinite_x_true(bad):
    W, y = data()
    x_true = np.zeros(10)
    x_true[2] = bad
    check_raises("x_true", (W, y), s=2, x_true=x_true, exc=ValueError)


def test_x_true_wrong_shape():
    W, y = data()
    check_raises("x_true", (W, y), s=2, x_true=np.zeros(9))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nonfinite_x0(prob, bad):
    x0 = np.zeros(10)
    x0[7] = bad
    check_raises("x0", prob, s=2, x0=x0, exc=ValueError)


@pytest.mark.parametrize("shape", [(9,), (11,), (10, 1), (1, 10), ()])
def test_x0_wrong_shape(prob, shape):
    check_raises("x0", prob, s=2, x0=np.zeros(shape))


def test_x0_not_numeric(prob):
    check_raises("x0", prob, s=2, x0=["a"] * 10)


def test_x0_complex_rejected(prob):
    """Problem rejects complex W/y/x_true with a TypeError; x0 must not silently drop the
    imaginary part either."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_raises("x0", prob, s=2, x0=np.ones(10) * (1 + 1j))


def test_complex_W_rejected():
    W, y = data()
    check_raises(r"\bW\b", (W * 1j, y), s=2, exc=TypeError)


@pytest.mark.parametrize(("n", "d"), [(0, 10), (10, 0), (0, 0)])
def test_empty_data(n, d):
    check_raises("empty|W", (np.zeros((n, d)), np.zeros(n)), s=1, exc=ValueError)


def test_empty_sparse_data():
    check_raises("empty|W", (sp.csr_matrix((0, 5)), np.zeros(0)), s=1, exc=ValueError)


def test_problem_not_problem_or_tuple():
    W, _ = data()
    check_raises("Problem", W, s=2, exc=TypeError)


# -- sparsity level -------------------------------------------------------------------------


@pytest.mark.parametrize("s", [0, -1, 11, 1000])
def test_s_out_of_range(prob, s):
    check_raises(r"\bs\b", prob, s=s, exc=ValueError)


@pytest.mark.parametrize("s", [2.5, 3.0, True, False, np.True_, "3", [3]])
def test_s_not_integer(prob, s):
    check_raises(r"\bs\b", prob, s=s)


def test_s_numpy_integer_accepted(prob):
    res = rv.solve(prob, method="fght", s=np.int64(3), max_iter=2, warn=False)
    assert res.trace.meta["s"] == 3
    assert np.count_nonzero(res.x) <= 3


# -- step size and epoch parameters -------------------------------------------------------------


@pytest.mark.parametrize("eta", [0.0, -1e-3, np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("method", ["fght", "svrght", "svrgsp+"])
def test_eta_bad_value(prob, method, eta):
    check_raises("eta", prob, method=method, s=2, eta=eta)


@pytest.mark.parametrize("eta", ["0.1", True, [0.1], 1j])
def test_eta_bad_type(prob, eta):
    check_raises("eta", prob, s=2, eta=eta, exc=TypeError)


@pytest.mark.parametrize("J", [0, -5])
def test_J_nonpositive(prob, J):
    check_raises(r"\bJ\b", prob, method="svrght", s=2, J=J)


@pytest.mark.parametrize("J", [2.5, "10", True])
def test_J_not_integer(prob, J):
    check_raises(r"\bJ\b", prob, method="svrght", s=2, J=J)


@pytest.mark.parametrize("m", [0, -1])
def test_m_nonpositive(prob, m):
    check_raises(r"\bm\b", prob, method="svrgsp+", s=2, m=m)


def test_m_greater_than_J(prob):
    check_raises(r"\bm\b", prob, method="svrgsp+", s=2, J=5, m=6, exc=ValueError)


def test_m_not_integer(prob):
    check_raises(r"\bm\b", prob, method="svrgsp+", s=2, m=2.5)


@pytest.mark.parametrize("batch_size", [0, -1, 21, 2.5])
def test_batch_size(prob, batch_size):
    check_raises("batch_size", prob, method="sght", s=2, batch_size=batch_size)


@pytest.mark.parametrize("max_iter", [0, -1, 1.5])
def test_max_iter(prob, max_iter):
    check_raises("max_iter", prob, s=2, max_iter=max_iter)


@pytest.mark.parametrize("tol", [-1e-9, -1.0, np.nan, "small"])
def test_tol(prob, tol):
    check_raises("tol", prob, s=2, tol=tol)


def test_ftol_negative(prob):
    check_raises("ftol", prob, s=2, ftol=-1.0)


@pytest.mark.parametrize("patience", [0, -2, 1.5, True, "3"])
def test_patience(prob, patience):
    check_raises("patience", prob, s=2, patience=patience)


@pytest.mark.parametrize("record_every", [0, -3])
def test_record_every(prob, record_every):
    check_raises("record_every", prob, method="svrght", s=2, record_every=record_every)


def test_max_events_negative(prob):
    check_raises("max_events", prob, method="svrght", s=2, max_events=-1)


@pytest.mark.parametrize("inner", ["bogus", "FULL ", None])
def test_inner(prob, inner):
    check_raises("inner", prob, method="svrgsp", s=2, inner=inner)


def test_callback_not_callable(prob):
    check_raises("callback", prob, s=2, callback="print", exc=TypeError)


@pytest.mark.parametrize("random_state", ["seed", -1, 1.5])
def test_random_state_bad(prob, random_state):
    check_raises("random_state", prob, method="svrght", s=2, random_state=random_state)


# -- method and loss ------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["bogus", "", "svrg", "rgrasp"])
def test_unknown_method(prob, method):
    err = check_raises("method", prob, method=method, s=2, exc=ValueError)
    assert "svrgsp+" in str(err)  # the message lists the valid choices


@pytest.mark.parametrize("method", [3, None, ["fght"]])
def test_method_not_string(prob, method):
    check_raises("method", prob, method=method, s=2, exc=TypeError)


@pytest.mark.parametrize("loss", ["hinge", "Squares", ""])
def test_unknown_loss(loss):
    W, y = data()
    check_raises("loss", (W, y), loss=loss, s=2, exc=ValueError)


def test_loss_conflicts_with_problem(prob):
    check_raises("loss", prob, loss="logistic", s=2, exc=ValueError)


@pytest.mark.parametrize("labels", [(1.0, 2.0), (-1.0, 0.0, 1.0), (0.5, -1.0)])
def test_logistic_labels_rejected(labels):
    W, _ = data()
    y = np.resize(np.array(labels), 20)
    check_raises("label", (W, y), loss="logistic", s=2, exc=ValueError)


def test_logistic_labels_01_accepted_and_converted():
    W, _ = data()
    rng = np.random.default_rng(1)
    y01 = (rng.random(20) < 0.5).astype(float)
    ypm = np.where(y01 == 1.0, 1.0, -1.0)
    y_before = y01.copy()
    a = rv.solve((W, y01), loss="logistic", method="svrgsp+", s=3, random_state=0,
                 max_iter=3, warn=False)
    b = rv.solve((W, ypm), loss="logistic", method="svrgsp+", s=3, random_state=0,
                 max_iter=3, warn=False)
    np.testing.assert_array_equal(y01, y_before)  # the caller's labels are untouched
    np.testing.assert_array_equal(a.x, b.x)
    assert a.fun == b.fun
    # F(x) with +-1 labels, computed independently
    assert a.fun == pytest.approx(float(np.mean(np.logaddexp(0.0, -ypm * (W @ a.x)))),
                                  rel=1e-10)


# -- valid edge cases must run ------------------------------------------------------------------


@pytest.mark.parametrize(("n", "d"), [(1, 1), (2, 5), (3, 1), (5, 5)])
def test_tiny_problems_run_with_defaults(n, d):
    """Default m=6 must not make tiny data sets (n < 3, so J = 2n < 6) unusable."""
    W, y = data(n, d, seed=2)
    errors = {}
    for method in ALL:
        try:
            res = rv.solve((W, y), method=method, s=1, random_state=0, max_iter=3, warn=False)
        except (ValueError, TypeError) as exc:
            errors[method] = str(exc)
            continue
        assert res.x.shape == (d,)
        assert np.count_nonzero(res.x) <= 1
    assert not errors, f"valid input rejected: {errors}"


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("method", ALL)
def test_edge_parameters_run(method, sparse):
    W, y = data(12, 6, seed=3)
    if sparse:
        W = sp.csr_matrix(W)
    for kw in (dict(s=6), dict(s=1, J=1, m=1), dict(s=3, J=7, m=7), dict(s=2, batch_size=12),
               dict(s=2, batch_size=1, record_every=1, record_iterates=True),
               dict(s=2, inner="full", max_events=0), dict(s=2, tol=0.0, ftol=0.0)):
        res = rv.solve((W, y), method=method, random_state=0, max_iter=2, warn=False, **kw)
        assert np.all(np.isfinite(res.x))
        assert np.count_nonzero(res.x) <= kw["s"]
        assert res.fun == pytest.approx(0.5 * float(np.mean((W @ res.x - y) ** 2)), rel=1e-10)


def test_x0_is_hard_thresholded(prob):
    x0 = np.arange(10, dtype=float)
    res = rv.solve(prob, method="fght", s=3, x0=x0, max_iter=1, warn=False)
    np.testing.assert_array_equal(res.trace.x(0), np.r_[np.zeros(7), 7.0, 8.0, 9.0])
    np.testing.assert_array_equal(x0, np.arange(10.0))  # caller's x0 untouched


def test_validation_does_not_mutate_inputs():
    W, y = data()
    W0, y0 = W.copy(), y.copy()
    rv.solve((W, y), method="svrgsp+", s=2, random_state=0, max_iter=2, warn=False)
    np.testing.assert_array_equal(W, W0)
    np.testing.assert_array_equal(y, y0)
