"""The estimators' logistic refit kernel (rgrasp_viz._kernels.newton): damped Newton on the
weighted, ridge-penalised logistic loss over a few dense columns, against scipy's minimiser
and the NumPy reference iteration."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from rgrasp_viz._kernels.newton import logistic_newton_dense


def _objective(A, y, w, lam, b):
    return (float(np.mean(w * np.logaddexp(0.0, -y * (A @ b))))
            + 0.5 * float(lam @ (b * b)))


def _problem(seed, n=150, k=4, weighted=False):
    rng = np.random.default_rng(seed)
    A = np.column_stack([rng.standard_normal((n, k - 1)), np.ones(n)])  # an intercept column
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-A @ rng.standard_normal(k))), 1.0, -1.0)
    w = rng.uniform(0.2, 3.0, n) if weighted else np.ones(n)
    lam = np.r_[np.full(k - 1, 1e-3), 0.0]  # the intercept is not penalised
    return A, y, w, lam


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_newton_reaches_the_minimiser(seed, weighted):
    A, y, w, lam = _problem(seed, weighted=weighted)
    b, ok = logistic_newton_dense(A, y, w, lam, np.zeros(A.shape[1]), 50)
    assert ok
    ref = minimize(lambda z: _objective(A, y, w, lam, z), np.zeros(A.shape[1]),
                   method="BFGS", options={"gtol": 1e-12})
    assert _objective(A, y, w, lam, b) <= ref.fun * (1 + 1e-12)
    np.testing.assert_allclose(b, ref.x, rtol=1e-5, atol=1e-7)
    # the gradient vanishes at the result
    p = 1 / (1 + np.exp(y * (A @ b)))
    grad = -(A.T @ (w * y * p)) / len(y) + lam * b
    assert np.max(np.abs(grad)) < 1e-9


def test_newton_matches_the_numpy_reference_iteration():
    """The estimators' NumPy ``_newton`` (the same iteration, sums in NumPy's order) from a
    warm start, as in a swap check: the same point to the iteration's tolerance."""
    from rgrasp_viz._estimators import _newton

    A, y, w, lam = _problem(3, n=300, k=6, weighted=True)
    start = np.r_[np.zeros(5), 0.3]
    b, ok = logistic_newton_dense(A, y, w, lam, start, 50)
    ref = _newton(A, y, start.copy(), lam, w)
    assert ok
    np.testing.assert_allclose(b, ref, rtol=1e-8, atol=1e-10)
    assert _objective(A, y, w, lam, b) == pytest.approx(_objective(A, y, w, lam, ref),
                                                        rel=1e-14)


def test_an_indefinite_newton_system_is_reported():
    """A negative ridge makes the system indefinite: the kernel says so (the estimators then
    fall back to the NumPy iteration with its least-squares solve) and returns a finite
    point."""
    A, y, w, _ = _problem(4, n=40, k=3)
    b, ok = logistic_newton_dense(A, y, w, np.full(3, -10.0), np.zeros(3), 50)
    assert not ok
    assert np.all(np.isfinite(b))


@pytest.mark.parametrize("weighted", [False, True])
def test_the_counting_newton_makes_the_same_iterates(weighted):
    """``logistic_newton_dense_work`` is the same iteration (bit for bit) and charges the
    evaluations until the gradient met the work rule: fewer for a looser rule, all of them
    for an unreachable one, none beyond the start's when the start already meets it."""
    from rgrasp_viz._kernels.newton import logistic_newton_dense_work

    A, y, w, lam = _problem(5, n=200, k=5, weighted=weighted)
    start = np.zeros(5)
    b, ok = logistic_newton_dense(A, y, w, lam, start, 50)
    b2, ok2, tight = logistic_newton_dense_work(A, y, w, lam, start, 50, 1e-6, 0.0)
    assert ok and ok2
    np.testing.assert_array_equal(b, b2)
    _, _, loose = logistic_newton_dense_work(A, y, w, lam, start, 50, 1e-1, 0.0)
    _, _, never = logistic_newton_dense_work(A, y, w, lam, start, 50, 0.0, 0.0)
    _, _, at_start = logistic_newton_dense_work(A, y, w, lam, start, 50, 1.0, 0.0)
    assert at_start == 1 and 1 < loose <= tight <= never
