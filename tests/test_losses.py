"""Tests of rgrasp_viz.losses against direct formulas and finite differences."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from rgrasp_viz.losses import (
    LOSS_CODES,
    LOSSES,
    curvature_bound,
    gradient,
    loss_derivative,
    objective,
    sample_gradient,
    sample_losses,
)


def _data(loss, sparse, n=30, d=12, seed=0):
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((n, d))
    if sparse:
        W[rng.random((n, d)) < 0.6] = 0.0
    x = rng.standard_normal(d) * 0.5
    y = rng.standard_normal(n) if loss == "squares" else rng.choice([-1.0, 1.0], size=n)
    return (sp.csr_matrix(W) if sparse else W), y, x


def _fd_gradient(W, y, x, loss, h=1e-6):
    g = np.empty_like(x)
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = h
        g[j] = (objective(W, y, x + e, loss) - objective(W, y, x - e, loss)) / (2 * h)
    return g


def test_loss_constants():
    assert LOSSES == ("squares", "logistic")
    assert LOSS_CODES == {"squares": 0, "logistic": 1}
    assert curvature_bound("squares") == 1.0
    assert curvature_bound("logistic") == 0.25


def test_unknown_loss_rejected():
    with pytest.raises(ValueError, match="loss.*squares.*logistic"):
        sample_losses(np.zeros(2), np.zeros(2), "hinge")
    with pytest.raises(ValueError, match="loss"):
        curvature_bound("hinge")


def test_squares_matches_formula():
    rng = np.random.default_rng(1)
    a, y = rng.standard_normal(50), rng.standard_normal(50)
    np.testing.assert_allclose(sample_losses(a, y, "squares"), 0.5 * (a - y) ** 2)
    np.testing.assert_allclose(loss_derivative(a, y, "squares"), a - y)


def test_logistic_matches_formula_moderate_margins():
    rng = np.random.default_rng(2)
    a = rng.uniform(-20, 20, 100)
    y = rng.choice([-1.0, 1.0], 100)
    np.testing.assert_allclose(sample_losses(a, y, "logistic"), np.log1p(np.exp(-y * a)))
    np.testing.assert_allclose(
        loss_derivative(a, y, "logistic"), -y / (1.0 + np.exp(y * a)), rtol=1e-12
    )


def test_logistic_large_margins_no_warnings():
    a = np.array([800.0, -800.0, 800.0, -800.0, 1e300, -1e300])
    y = np.array([1.0, 1.0, -1.0, -1.0, -1.0, -1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        losses = sample_losses(a, y, "logistic")
        deriv = loss_derivative(a, y, "logistic")
    # log(1 + exp(-t)) -> 0 for t -> +inf and -> -t for t -> -inf
    np.testing.assert_allclose(losses[:4], [0.0, 800.0, 800.0, 0.0], atol=1e-300)
    assert losses[4] == 1e300 and losses[5] == 0.0
    # -y * sigmoid(-y a): saturates to -y where the sample is misclassified, else to 0
    np.testing.assert_allclose(deriv, [0.0, -1.0, 1.0, 0.0, 1.0, 0.0], atol=1e-300)
    assert np.all(np.isfinite(losses)) and np.all(np.isfinite(deriv))


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("sparse", [False, True])
def test_objective_formula(loss, sparse):
    W, y, x = _data(loss, sparse)
    a = np.asarray(W @ x)
    if loss == "squares":
        expected = np.sum((y - a) ** 2) / (2 * len(y))
    else:
        expected = np.mean(np.log1p(np.exp(-y * a)))
    assert objective(W, y, x, loss) == pytest.approx(expected, rel=1e-13)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("sparse", [False, True])
def test_gradient_matches_finite_differences(loss, sparse):
    W, y, x = _data(loss, sparse)
    g, margins = gradient(W, y, x, loss)
    np.testing.assert_allclose(margins, W @ x, rtol=1e-14)
    fd = _fd_gradient(W, y, x, loss)
    assert np.linalg.norm(g - fd) <= 1e-6 * np.linalg.norm(g)


@pytest.mark.parametrize("loss", LOSSES)
def test_gradient_reuses_margins(loss):
    W, y, x = _data(loss, False)
    g1, m = gradient(W, y, x, loss)
    g2, m2 = gradient(W, y, x, loss, margins=m)
    np.testing.assert_array_equal(g1, g2)
    np.testing.assert_array_equal(m, m2)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("sparse", [False, True])
def test_sample_gradients_average_to_full_gradient(loss, sparse):
    W, y, x = _data(loss, sparse)
    n = W.shape[0]
    avg = np.mean([sample_gradient(W, y, x, i, loss) for i in range(n)], axis=0)
    np.testing.assert_allclose(avg, gradient(W, y, x, loss)[0], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("loss", LOSSES)
def test_sample_gradient_is_dense_and_matches_row_formula(loss):
    W, y, x = _data(loss, True)
    for i in (0, 7, -1):
        g = sample_gradient(W, y, x, i, loss)
        assert isinstance(g, np.ndarray) and g.shape == (W.shape[1],)
        row = W.toarray()[i]
        coef = loss_derivative(np.array([row @ x]), np.array([y[i]]), loss)[0]
        np.testing.assert_allclose(g, coef * row, rtol=1e-13, atol=1e-15)
    with pytest.raises(IndexError):
        sample_gradient(W, y, x, W.shape[0], loss)


@pytest.mark.parametrize("loss", LOSSES)
def test_dense_and_csr_agree(loss):
    Wd, y, x = _data(loss, True, n=40, d=25, seed=3)
    Ws = sp.csr_matrix(Wd)
    assert objective(Ws, y, x, loss) == pytest.approx(objective(Wd, y, x, loss), rel=1e-12)
    np.testing.assert_allclose(
        gradient(Ws, y, x, loss)[0], gradient(Wd, y, x, loss)[0], rtol=1e-12, atol=1e-15
    )
    for i in range(Wd.shape[0]):
        np.testing.assert_allclose(
            sample_gradient(Ws, y, x, i, loss),
            sample_gradient(Wd, y, x, i, loss),
            rtol=1e-12,
            atol=1e-15,
        )


def test_curvature_bound_bounds_second_derivative():
    # Second derivative of the logistic loss wrt the margin, by central differences.
    a = np.linspace(-10, 10, 2001)
    y = np.ones_like(a)
    h = 1e-4
    second = (loss_derivative(a + h, y, "logistic") - loss_derivative(a - h, y, "logistic")) / (
        2 * h
    )
    assert second.max() <= curvature_bound("logistic") + 1e-8
    assert second.max() == pytest.approx(0.25, abs=1e-6)
