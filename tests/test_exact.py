"""GraSP's exact least-squares sub-problem (:mod:`rgrasp_viz.solvers._exact`).

Against a direct solve (NumPy's SVD-based ``lstsq`` on ``W_T``, minimum-norm, with the ridge
term as extra rows), to 1e-10 relative, on dense and CSR data, for both solvers:

* tall and well conditioned; wider than tall; rank deficient (repeated and dependent
  columns); ill-conditioned (the refinement path); with a ridge term;
* a sequence of supports that overlap, as in GraSP: the Gram entries kept from earlier
  supports give the same answer as a fresh solve, and the passes are counted (1 sweep when
  columns entered, 0 when ``T`` did not change, more for refinement);
* the conjugate-gradient solver uses its warm start;
* GraSP itself: passes are 1 (gradient) + the sub-problem's, and its iterates match the
  NumPy reference, also on rank-deficient data.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import rgrasp_viz as rv
from rgrasp_viz.solvers._exact import RestrictedLeastSquares, restricted_least_squares

sys.path.insert(0, os.path.dirname(__file__))
import reference as ref  # noqa: E402

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
        _, passes = RestrictedLeastSquares(as_kind(W, sparse), y, 30).solve(SUPPORTS[0])
        assert passes > 1  # refinement from W_T made the difference


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_kept_gram_entries_and_pass_counts(sparse):
    W, y = design("tall", seed=3)
    solver = RestrictedLeastSquares(as_kind(W, sparse), y, 30)
    counts = []
    for T in SUPPORTS + [SUPPORTS[-1]]:  # the last support twice: nothing enters
        b, passes = solver.solve(T)
        fresh, _ = restricted_least_squares(W, y, T)
        assert rel(b, fresh) < 1e-12
        counts.append(passes)
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
    cold, p_cold = restricted_least_squares(as_kind(W, sparse), y, T, method="cg")
    warm, p_warm = restricted_least_squares(as_kind(W, sparse), y, T, method="cg",
                                            b0=exact + 1e-12 * np.ones(len(T)))
    assert rel(cold, exact) < RTOL and rel(warm, exact) < RTOL
    assert p_warm < p_cold / 2
    assert p_cold >= 10  # one pass per iteration, counted


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
    steps = np.diff(res.trace.passes)
    # 1 (gradient) + 1 (the sweep that formed the new Gram entries) + refinement or a
    # rank-revealing solve if any; on dense data an unchanged T adds nothing to the gradient
    assert steps[0] == 2.0 and np.all(steps >= (1.0 if not sparse else 2.0))
    if kind == "rank-deficient":
        assert steps.max() >= 3.0  # both copies of the column in T: the singular path
