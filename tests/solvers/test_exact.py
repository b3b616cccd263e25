"""GraSP's exact least-squares sub-problem (:mod:`rgrasp_viz.solvers._exact`).

Against a direct solve (NumPy's SVD-based ``lstsq`` on ``W_T``, minimum-norm, with the ridge
term as extra rows), to 1e-10 relative, on dense and CSR data, for both solvers:

* tall and well conditioned; wider than tall; rank deficient (repeated and dependent
  columns); ill-conditioned (the refinement path); with a ridge term;
* a sequence of supports that overlap, as in GraSP: the Gram entries kept from earlier
  supports give the same answer as a fresh solve, and the sweeps actually made are recorded
  (1 when columns entered, 0 when ``T`` did not change, more for refinement);
* the conjugate-gradient solver uses its warm start;
* the work rule: whatever computes ``b``, a solve is charged the restricted gradients a
  plain NumPy conjugate gradient evaluates from the warm start to ``WORK_RTOL``, and a
  logistic fit the L-BFGS evaluations to the same tolerance;
* GraSP and HTP themselves, both losses: passes per iteration are 1 (gradient) + that count
  (+1 for HTP's gradient at its warm start), GraSP >= 5 per iteration on setting 1, and
  logistic GraSP stays within ``max_passes``; GraSP's iterates match the NumPy reference,
  also on rank-deficient data.
"""

from __future__ import annotations

import numpy as np
import numpy_reference as ref
import pytest
import scipy.sparse as sp

import rgrasp_viz as rv
from rgrasp_viz import losses
from rgrasp_viz.solvers._exact import (
    WORK_RTOL,
    RestrictedLeastSquares,
    restricted_least_squares,
)

METHODS = ["cholesky", "cg"]
RTOL = 1e-10


def direct(W, y, T, lam=0.0):
    """Minimum-norm minimiser of ||W_T b - y||^2 / (2n) + lam/2 ||b||^2 (SVD, NumPy)."""
    WT = (W.toarray() if sp.issparse(W) else W)[:, T]
    n, m = WT.shape
    if lam:
        WT = np.vstack([WT, np.sqrt(n * lam) * np.eye(m)])
        y = np.concatenate([y, np.zeros(m)])
    return np.linalg.lstsq(WT, y, rcond=None)[0]


def rel(a, b):
    return np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300)


def design(kind, seed=0):
    rng = np.random.default_rng(seed)
    n, d = (25, 40) if kind == "wide" else (80, 40)
    W = rng.standard_normal((n, d))
    if kind == "rank-deficient":
        W[:, 5] = W[:, 7]
        W[:, 9] = 2.0 * W[:, 3] - W[:, 1]
    if kind == "ill-conditioned":  # kappa(W_T) ~ 1e4: the normal equations lose 8 digits
        W[:, 5] = W[:, 7] + 1e-4 * rng.standard_normal(n)
    return W, rng.standard_normal(n)


def cg_evaluations(W, y, T, z0, rtol=WORK_RTOL):
    """The work rule in plain NumPy: conjugate gradients on the normal equations of
    ``min ||W_T z - y||^2 / (2n)`` from ``z0``; restricted gradients evaluated (the one at
    ``z0`` included) until ``||gradient||_inf <= rtol * max(||gradient at z0||_inf,
    ||gradient at 0||_inf)``."""
    WT = (W.toarray() if sp.issparse(W) else W)[:, T]
    A, rhs = WT.T @ WT, WT.T @ y
    z = np.array(z0, dtype=float)
    r = rhs - A @ z
    target, evals = rtol * max(np.abs(r).max(), np.abs(rhs).max()), 1
    if np.abs(r).max() <= target:
        return evals
    p, rr = r.copy(), r @ r
    for _ in range(10 * len(T) + 10):
        q = A @ p
        evals += 1
        if not p @ q > 0:
            break
        alpha = rr / (p @ q)
        z, r = z + alpha * p, r - alpha * q
        if np.abs(r).max() <= target:
            break
        p, rr = r + (r @ r) / rr * p, r @ r
    return evals


def as_kind(W, sparse):
    return sp.csr_matrix(W) if sparse else W


SUPPORTS = [np.arange(0, 30), np.arange(3, 33), np.r_[1, 3, 5, 7, 9, 20:30], np.arange(3, 33)]


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("kind", ["tall", "wide", "rank-deficient", "ill-conditioned", "ridge"])
def test_matches_a_direct_solve(kind, method, sparse):
    W, y = design("tall" if kind == "ridge" else kind)
    lam = 0.05 if kind == "ridge" else 0.0
    solver = RestrictedLeastSquares(as_kind(W, sparse), y, 30, lam=lam, method=method)
    for T in SUPPORTS:
        b, passes = solver.solve(T)
        assert rel(b, direct(W, y, T, lam)) < RTOL, (kind, method, T)
        assert passes >= 0
    if kind == "ill-conditioned" and method == "cholesky":
        solver = RestrictedLeastSquares(as_kind(W, sparse), y, 30)
        solver.solve(SUPPORTS[0])
        assert solver.last_sweeps > 1  # refinement from W_T made the difference


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_kept_gram_entries_and_pass_counts(sparse):
    W, y = design("tall", seed=3)
    solver = RestrictedLeastSquares(as_kind(W, sparse), y, 30)
    counts = []
    for T in SUPPORTS + [SUPPORTS[-1]]:  # the last support twice: nothing enters
        b, passes = solver.solve(T)
        fresh, _ = restricted_least_squares(W, y, T)
        assert rel(b, fresh) < 1e-12
        counts.append(solver.last_sweeps)
        assert passes == cg_evaluations(W, y, T, np.zeros(len(T)))  # the work rule
    assert counts[:4] == [1.0, 1.0, 1.0, 1.0]
    assert counts[4] == (1.0 if sparse else 0.0)  # dense: the Gram matrix is kept in slots
    if not sparse:  # the kept Gram matrix is W_T^T W_T for the current slot order
        m = len(SUPPORTS[-1])
        B, order = solver._cols.B, solver._known[:m]
        np.testing.assert_allclose(solver._G[:m, :m], W[:, order].T @ W[:, order],
                                   rtol=1e-13, atol=1e-12)
        np.testing.assert_array_equal(B[:, :m], W[:, order])


def test_support_larger_than_cap_grows_the_slots():
    W, y = design("tall", seed=4)
    solver = RestrictedLeastSquares(W, y, 5)
    b, _ = solver.solve(np.arange(5))
    assert rel(b, direct(W, y, np.arange(5))) < RTOL
    b, _ = solver.solve(np.arange(2, 30))
    assert rel(b, direct(W, y, np.arange(2, 30))) < RTOL
    assert solver.cap == 28


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_cg_uses_its_warm_start(sparse):
    W, y = design("tall", seed=5)
    T = SUPPORTS[0]
    exact = direct(W, y, T)
    cold = RestrictedLeastSquares(as_kind(W, sparse), y, len(T), method="cg")
    warm = RestrictedLeastSquares(as_kind(W, sparse), y, len(T), method="cg")
    b_cold, _ = cold.solve(T)
    b_warm, _ = warm.solve(T, b0=exact + 1e-12 * np.ones(len(T)))
    assert rel(b_cold, exact) < RTOL and rel(b_warm, exact) < RTOL
    assert warm.last_sweeps < cold.last_sweeps / 2
    assert cold.last_sweeps >= 10  # one pass per iteration, counted


def test_bad_arguments():
    W, y = design("tall")
    with pytest.raises(ValueError, match="method must be one of"):
        RestrictedLeastSquares(W, y, 10, method="qr")
    with pytest.raises(ValueError, match="lam must be >= 0"):
        RestrictedLeastSquares(W, y, 10, lam=-1.0)
    with pytest.raises(ValueError, match="lam must be >= 0"):
        RestrictedLeastSquares(W, y, 10, lam=float("nan"))
    with pytest.raises(ValueError, match="cap must be a positive integer"):
        RestrictedLeastSquares(W, y, 0)
    solver = RestrictedLeastSquares(W, y, 10)
    with pytest.raises(ValueError, match=r"\|T\| must be between 1 and d = 40"):
        solver.solve(np.array([], dtype=np.int64))


# -- in GraSP ---------------------------------------------------------------------------------


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("kind", ["tall", "rank-deficient"])
def test_grasp_iterates_and_passes(kind, sparse):
    prob = rv.make_regression(n=60, d=50, s_star=4, random_state=1)
    W = prob.W.copy()
    if kind == "rank-deficient":
        W[:, 10] = W[:, 11]
    p = rv.Problem(as_kind(W, sparse), prob.y, x_true=prob.x_true)
    res = rv.solve(p, method="grasp", s=5, max_iter=6, tol=0, ftol=0, warn=False)
    expected = ref.grasp_squares(W, prob.y, 5, res.nit)
    for t in range(res.nit + 1):
        np.testing.assert_allclose(res.trace.x(t), expected["x"][t], rtol=0, atol=1e-10)
    # the work rule: 1 (step 2's gradient, which is also the restricted gradient at the warm
    # start) + the iterations of a NumPy conjugate gradient from x^{t-1} on T
    steps = np.diff(res.trace.passes)
    for t in range(1, res.nit + 1):
        T = res.trace.T(t)
        iters = cg_evaluations(W, prob.y, T, res.trace.x(t - 1)[T]) - 1
        assert steps[t - 1] == 1 + iters, (t, steps[t - 1], iters)



def lbfgs_evaluations(W, y, T, z0, rtol=WORK_RTOL):
    """The work rule for the logistic loss: L-BFGS (SciPy's, from ``z0``) evaluations until
    ``||gradient||_inf <= rtol * max(||gradient at z0||_inf, ||gradient at 0||_inf)`` is
    first met.  The loss and its
    derivative are the package's (tested in test_losses), so that rounding, which decides
    the count when the warm start is already nearly optimal, is the same."""
    WT = W[:, T]
    n, seen = len(y), []

    def fun(z):
        a = WT @ z
        f = np.mean(losses.sample_losses(a, y, "logistic"))
        g = WT.T @ losses.loss_derivative(a, y, "logistic") / n
        seen.append(np.abs(g).max())
        return f, g

    scipy_optimize = pytest.importorskip("scipy.optimize")
    scipy_optimize.minimize(fun, z0, jac=True, method="L-BFGS-B",
                            options={"maxiter": 500, "gtol": 1e-10, "ftol": 1e-15})
    g_zero = np.abs(WT.T @ y).max() / (2 * n)  # f'(0) = -y/2
    hit = [k for k, v in enumerate(seen, 1) if v <= rtol * max(seen[0], g_zero)]
    return hit[0] if hit else len(seen)


def test_grasp_passes_per_iteration_on_setting_1():
    """The issue's effect: charged by the work rule, GraSP costs >= 5 passes per iteration on
    setting 1 (the Cholesky on the kept Gram matrix used to be charged 1)."""
    prob = rv.make_regression(1, random_state=0)
    res = rv.solve(prob, "grasp", max_iter=3, tol=0, ftol=0, warn=False)
    assert np.all(np.diff(res.trace.passes) >= 5)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_htp_passes_follow_the_work_rule(sparse):
    prob = rv.make_regression(n=60, d=50, s_star=4, random_state=1)
    p = rv.Problem(as_kind(prob.W, sparse), prob.y, x_true=prob.x_true)
    res = rv.solve(p, "htp", s=5, max_iter=5, tol=0, ftol=0, warn=False)
    steps = np.diff(res.trace.passes)
    for t in range(1, res.nit + 1):
        S = res.trace.support(t)
        # 1 (gradient) + the CG's evaluations from x^{t-1} on S, its first gradient included
        # (x^{t-1} need not live on S)
        assert steps[t - 1] == 1 + cg_evaluations(prob.W, prob.y, S, res.trace.x(t - 1)[S])


@pytest.fixture(scope="module")
def logistic():
    return rv.make_classification(n=300, d=60, s_star=4, random_state=2)


def test_logistic_grasp_and_htp_passes_follow_the_work_rule(logistic):
    prob = logistic
    grasp = rv.solve(prob, "grasp", s=4, max_iter=4, tol=0, ftol=0, warn=False)
    htp = rv.solve(prob, "htp", s=4, max_iter=4, tol=0, ftol=0, warn=False)
    assert grasp.nit >= 2 and htp.nit >= 2
    for t in range(1, grasp.nit + 1):
        T = grasp.trace.T(t)
        evals = lbfgs_evaluations(prob.W, prob.y, T, grasp.trace.x(t - 1)[T])
        # step 2's gradient is the one L-BFGS starts from: charged once
        assert np.diff(grasp.trace.passes)[t - 1] == 1 + evals - 1
    for t in range(1, htp.nit + 1):
        S = htp.trace.support(t)
        evals = lbfgs_evaluations(prob.W, prob.y, S, htp.trace.x(t - 1)[S])
        assert np.diff(htp.trace.passes)[t - 1] == 1 + evals


def test_logistic_grasp_respects_the_pass_budget(logistic):
    free = rv.solve(logistic, "grasp", s=4, max_iter=10, tol=0, ftol=0, warn=False)
    assert free.passes > 12  # enough work that a budget of 12 has to cut a fit short
    res = rv.solve(logistic, "grasp", s=4, max_iter=10, tol=0, ftol=0, max_passes=12,
                   warn=False)
    assert res.passes <= 12 and res.status in (rv.Status.MAX_PASSES, rv.Status.DIVERGED)


@pytest.mark.parametrize("method", ["htp", "grasp"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_newton_exact_logistic_fits_reach_the_lbfgs_minimisers(logistic, method, sparse):
    """Inside ``logistic_exact_by_newton`` (the estimators' runs) the exact fits on a ridge
    problem are Newton's: the same supports and iterates as L-BFGS's to tight tolerance,
    charged by the work rule on Newton's evaluations (never more passes in all); the block
    changes nothing on a problem without a ridge term, and nothing outside it."""
    from rgrasp_viz.solvers._subsolvers import logistic_exact_by_newton

    W = sp.csr_matrix(logistic.W) if sparse else logistic.W
    ridge = rv.Problem(W, logistic.y, loss="logistic", l2=1e-3)
    kw = dict(s=4, max_iter=5, warn=False)
    plain = rv.solve(ridge, method, **kw)
    with logistic_exact_by_newton():
        newton = rv.solve(ridge, method, **kw)
        no_ridge = rv.solve(rv.Problem(W, logistic.y, loss="logistic"), method, **kw)
    again = rv.solve(ridge, method, **kw)
    assert newton.nit == plain.nit and newton.status == plain.status
    for t in range(plain.nit + 1):
        np.testing.assert_array_equal(newton.trace.support(t), plain.trace.support(t))
        np.testing.assert_allclose(newton.trace.x(t), plain.trace.x(t), rtol=1e-7,
                                   atol=1e-9)
    assert 0 < newton.passes <= plain.passes
    np.testing.assert_array_equal(again.x, plain.x)
    assert again.passes == plain.passes
    ref_no_ridge = rv.solve(rv.Problem(W, logistic.y, loss="logistic"), method, **kw)
    np.testing.assert_array_equal(no_ridge.x, ref_no_ridge.x)
    assert no_ridge.passes == ref_no_ridge.passes
