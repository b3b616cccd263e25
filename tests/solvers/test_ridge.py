"""The optional ridge term ``l2``: ``F(x) + (l2/2)||x||^2`` everywhere the objective shows."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import rgrasp_viz as rv


def test_problem_checks_l2():
    W, y = np.eye(3), np.ones(3)
    for bad in (-1.0, np.nan, np.inf, "0.1", True):
        with pytest.raises(ValueError, match="l2 must be a non-negative finite number"):
            rv.Problem(W, y, l2=bad)
    assert "l2=0.5" in repr(rv.Problem(W, y, l2=0.5))


@pytest.mark.parametrize("loss", ["squares", "logistic"])
@pytest.mark.parametrize("sparse", [False, True])
def test_objective_and_gradient_include_the_ridge_term(loss, sparse):
    rng = np.random.default_rng(0)
    W = rng.standard_normal((30, 8))
    y = np.sign(rng.standard_normal(30)) if loss == "logistic" else rng.standard_normal(30)
    x = rng.standard_normal(8)
    p0 = rv.Problem(sp.csr_matrix(W) if sparse else W, y, loss=loss)
    p = rv.Problem(sp.csr_matrix(W) if sparse else W, y, loss=loss, l2=0.3)
    assert p.objective(x) == pytest.approx(p0.objective(x) + 0.15 * x @ x, rel=1e-13)
    np.testing.assert_allclose(p.gradient(x), p0.gradient(x) + 0.3 * x, rtol=1e-13)
    np.testing.assert_allclose(p.sample_gradient(x, 4), p0.sample_gradient(x, 4) + 0.3 * x,
                               rtol=1e-13)


def test_grasp_with_ridge_solves_the_ridge_subproblem():
    prob = rv.make_regression(n=80, d=120, s_star=4, random_state=0)
    l2 = 0.05
    p = rv.Problem(prob.W, prob.y, x_true=prob.x_true, l2=l2)
    res = rv.solve(p, "grasp", s=5, max_iter=3, tol=0, ftol=0, warn=False)
    for t in range(1, res.nit + 1):
        T = res.trace.T(t)
        WT = p.W[:, T]
        b = np.linalg.solve(WT.T @ WT / p.n + l2 * np.eye(len(T)), WT.T @ p.y / p.n)
        np.testing.assert_allclose(res.trace.b(t)[T], b, rtol=1e-8, atol=1e-12)
    assert res.fun == pytest.approx(p.objective(res.x), rel=1e-12)
    assert res.trace.meta["l2"] == l2


def test_ridge_gives_graSP_a_logistic_minimiser_on_separable_data():
    rng = np.random.default_rng(1)
    W = rng.standard_normal((40, 60))
    y = np.sign(W[:, :3] @ np.array([3.0, -2.0, 2.0]))  # separable on 3 coordinates
    plain = rv.solve(rv.Problem(W, y, loss="logistic"), "grasp", s=3, warn=False)
    assert plain.status == rv.Status.DIVERGED and "separable" in plain.message
    assert "l2=" in plain.message  # the message suggests the ridge term
    ridge = rv.solve(rv.Problem(W, y, loss="logistic", l2=1e-2), "grasp", s=3, warn=False)
    assert ridge.status != rv.Status.DIVERGED and np.all(np.isfinite(ridge.x))
    assert np.linalg.norm(ridge.x) < 100


@pytest.mark.parametrize("method, inner", [("fght", "paper"), ("sght", "paper"),
                                           ("svrght", "paper"), ("svrgsp", "paper"),
                                           ("svrgsp+", "paper"), ("svrgsp+", "on_T")])
@pytest.mark.parametrize("loss", ["squares", "logistic"])
@pytest.mark.parametrize("sparse", [False, True])
def test_every_method_with_ridge_matches_the_reference(method, inner, loss, sparse):
    """Same index sequence => the same iterates as the NumPy reference of F + (l2/2)||x||^2."""
    import numpy_reference as ref

    base = (rv.make_regression(n=60, d=90, s_star=4, random_state=2) if loss == "squares"
            else rv.make_classification(n=60, d=90, s_star=4, random_state=2))
    W = sp.csr_matrix(base.W) if sparse else base.W
    l2 = 0.05
    prob = rv.Problem(W, base.y, loss=loss, x_true=base.x_true, l2=l2)
    eta = 0.5 * rv.default_eta(prob, method, 5, inner=inner, batch_size=6)
    res = rv.solve(prob, method, s=5, eta=eta, J=50, m=6, batch_size=6, inner=inner,
                   max_iter=3, tol=0, ftol=0, random_state=4, warn=False)
    want = ref.run(method, base.W, base.y, loss, s=5, eta=eta, n_iter=res.nit, J=50, m=6,
                   batch=6, random_state=4, inner=inner, lam=l2)["x"]
    for t in range(res.nit + 1):
        np.testing.assert_allclose(res.trace.x(t), want[t], rtol=1e-9, atol=1e-11)
    assert res.trace.objective[-1] == pytest.approx(prob.objective(res.x), rel=1e-12)
