"""Every recorded iterate of ``rv.solve`` against the pure-NumPy reference
(tests/_support/numpy_reference.py).

Small problems (n=60, d=40, s=5), dense and CSR, squares and logistic, explicit step sizes,
``tol=0`` so that every run does its ``max_iter`` iterations (unless it reaches an exact
fixed point), and the documented random-index protocol.
"""

from __future__ import annotations

import inspect
import math

import numpy as np
import numpy_reference as ref
import pytest
import scipy.sparse as sp

import rgrasp_viz as rv
from rgrasp_viz._problems import Problem, make_classification, make_regression

# tol=0 must mean "run max_iter iterations": disable the objective-stagnation stop when
# this version of solve has one
NO_FTOL = {"ftol": 0.0} if "ftol" in inspect.signature(rv.solve).parameters else {}

N, D, S = 60, 40, 5
J_DEFAULT, M_DEFAULT = 150, 4  # ceil(150/4) = 38: only floor(150/38) = 3 inner H_|T|
BATCH = 7  # n_steps = 60 // 7 = 8 (the last 4 samples of a "pass" are not drawn)
MAX_ITER = 4
ATOL = 1e-10


def _data(loss, seed=0, n=N, d=D):
    if loss == "squares":
        p = make_regression(n=n, d=d, s_star=4, noise_var=0.01, random_state=seed)
    else:
        p = make_classification(n=n, d=d, s_star=4, signal=1.0, random_state=seed)
    return p.W, p.y


def _problem(W, y, loss, sparse):
    return Problem(sp.csr_matrix(W) if sparse else W, y, loss=loss)


def _eta(method, W):
    if method in ("fght", "grasp"):
        return 0.5 * W.shape[0] / np.linalg.norm(W, 2) ** 2
    return 0.5 / np.max(np.sum(W * W, axis=1))


# (method, inner) pairs; inner only matters for svrgsp(+)
CASES = [
    ("fght", "restricted"),
    ("grasp", "restricted"),
    ("sght", "restricted"),
    ("svrght", "restricted"),
    ("svrgsp", "restricted"),
    ("svrgsp", "full"),
    ("svrgsp+", "restricted"),
    ("svrgsp+", "full"),
]


def _params():
    out = []
    for method, inner in CASES:
        for loss in ("squares", "logistic"):
            if method == "grasp" and loss == "logistic":
                continue  # L-BFGS sub-problem: see test_grasp_logistic_* below
            for sparse in (False, True):
                tag = f"{method}-{inner}-{loss}-{'csr' if sparse else 'dense'}"
                out.append(pytest.param(method, inner, loss, sparse, id=tag))
    return out


def _expected_thresholds_per_iter(method, J, m, n_steps):
    if method == "svrght":
        return J
    if method == "svrgsp+":
        return J // math.ceil(J / m) + 1
    if method == "sght":
        return n_steps
    return 1  # fght, grasp, svrgsp


def _solve(prob, method, inner, eta, seed, J=J_DEFAULT, m=M_DEFAULT, max_iter=MAX_ITER,
           x0=None):
    return rv.solve(prob, method=method, s=S, eta=eta, J=J, m=m, max_iter=max_iter, tol=0,
                    random_state=seed, inner=inner, batch_size=BATCH, x0=x0, warn=False,
                    **NO_FTOL)


@pytest.mark.parametrize("method, inner, loss, sparse", _params())
@pytest.mark.parametrize("seed", [3])
def test_iterates_match_reference(method, inner, loss, sparse, seed):
    W, y = _data(loss, seed=seed)
    eta = _eta(method, W)
    prob = _problem(W, y, loss, sparse)
    res = _solve(prob, method, inner, eta, seed)
    tr = res.trace
    nit = res.nit
    assert tr.n_iter == nit
    assert nit >= 1
    if method != "grasp":
        assert nit == MAX_ITER, res.message  # tol=0: no early exit for these
    assert res.status in (0, 1), res.message

    out = ref.run(method, W, y, loss, s=S, eta=eta, n_iter=nit, J=J_DEFAULT, m=M_DEFAULT,
                  batch=BATCH, random_state=seed, inner=inner)
    for t in range(nit + 1):
        np.testing.assert_allclose(tr.x(t), out["x"][t], atol=ATOL, rtol=0,
                                   err_msg=f"x^{t}")
    np.testing.assert_allclose(res.x, out["x"][nit], atol=ATOL, rtol=0)
    # the runs must actually move (otherwise the comparison is vacuous)
    assert np.count_nonzero(out["x"][nit]) > 0

    if method in ("grasp", "svrgsp", "svrgsp+"):
        assert tr.T(0).size == 0 and tr.Z(0).size == 0
        for t in range(1, nit + 1):
            np.testing.assert_array_equal(tr.T(t), out["T"][t - 1], err_msg=f"T^{t}")
            np.testing.assert_array_equal(tr.Z(t), out["Z"][t - 1], err_msg=f"Z^{t}")
            np.testing.assert_allclose(tr.b(t), out["b"][t - 1], atol=ATOL, rtol=0,
                                       err_msg=f"b^{t}")


@pytest.mark.parametrize("method, inner, loss, sparse", _params())
def test_threshold_counts(method, inner, loss, sparse):
    W, y = _data(loss, seed=1)
    prob = _problem(W, y, loss, sparse)
    res = _solve(prob, method, inner, _eta(method, W), seed=1)
    tr = res.trace
    n_steps = max(1, N // BATCH)
    per = _expected_thresholds_per_iter(method, J_DEFAULT, M_DEFAULT, n_steps)
    expected = per * np.arange(res.nit + 1)
    np.testing.assert_array_equal(tr.n_thresholds, expected)
    assert len(tr.ev_iter) == tr.n_thresholds[-1]
    assert len(tr.events()) == tr.n_thresholds[-1]
    # events per iteration
    for t in range(1, res.nit + 1):
        assert np.count_nonzero(tr.ev_iter == t) == per


@pytest.mark.parametrize("J, m", [(120, 6), (120, 7), (150, 4), (7, 7), (10, 1), (10, 3)])
@pytest.mark.parametrize("inner", ["restricted", "full"])
def test_svrgsp_plus_threshold_schedule(J, m, inner):
    """SVRGSP+ thresholds after steps ceil(J/m), 2 ceil(J/m), ... plus the outer H_s."""
    W, y = _data("squares", seed=2)
    prob = _problem(W, y, "squares", False)
    eta = _eta("svrgsp+", W)
    res = _solve(prob, "svrgsp+", inner, eta, seed=2, J=J, m=m, max_iter=2)
    tr = res.trace
    every = math.ceil(J / m)
    inner_steps = np.arange(every, J + 1, every)
    assert np.diff(tr.n_thresholds).tolist() == [len(inner_steps) + 1] * res.nit
    for t in range(1, res.nit + 1):
        sel = tr.ev_iter == t
        np.testing.assert_array_equal(tr.ev_step[sel & (tr.ev_kind == 0)], inner_steps)
        assert np.count_nonzero(sel & (tr.ev_kind == 1)) == 1
    out = ref.run("svrgsp+", W, y, "squares", s=S, eta=eta, n_iter=res.nit, J=J, m=m,
                  random_state=2, inner=inner)
    for t in range(res.nit + 1):
        np.testing.assert_allclose(tr.x(t), out["x"][t], atol=ATOL, rtol=0)


@pytest.mark.parametrize("method", ["sght", "svrght", "svrgsp", "svrgsp+"])
def test_generator_random_state_and_x0(method):
    """A Generator as random_state, and a (non-sparse) x0 that solve must threshold first."""
    W, y = _data("squares", seed=4)
    prob = _problem(W, y, "squares", False)
    eta = _eta(method, W)
    x0 = np.random.default_rng(99).standard_normal(D) * 0.1
    res = _solve(prob, method, "full", eta, np.random.default_rng(7), x0=x0, max_iter=3)
    out = ref.run(method, W, y, "squares", s=S, eta=eta, n_iter=res.nit, J=J_DEFAULT,
                  m=M_DEFAULT, batch=BATCH, random_state=np.random.default_rng(7),
                  inner="full", x0=x0)
    np.testing.assert_allclose(res.trace.x(0), ref.hard_threshold_ref(x0, S), atol=0, rtol=0)
    for t in range(res.nit + 1):
        np.testing.assert_allclose(res.trace.x(t), out["x"][t], atol=ATOL, rtol=0)


# -- GraSP with the logistic loss (L-BFGS on T) ------------------------------------------------


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_grasp_logistic_subproblem(sparse):
    """Each GraSP-logistic iteration: T from x^{t-1}; b minimises F on T; x^t = H_s(b)."""
    W, y = _data("logistic", seed=5, n=200)
    prob = _problem(W, y, "logistic", sparse)
    res = rv.solve(prob, method="grasp", s=S, max_iter=3, tol=0, random_state=0, warn=False,
                   **NO_FTOL)
    tr = res.trace
    assert res.status in (0, 1), res.message
    for t in range(1, res.nit + 1):
        x_prev = tr.x(t - 1)
        g = ref.grad(W, y, x_prev, "logistic")
        Z, T = ref._support_pursuit(g, x_prev, S)
        np.testing.assert_array_equal(tr.Z(t), Z)
        np.testing.assert_array_equal(tr.T(t), T)
        b = tr.b(t)
        assert np.all(b[np.setdiff1d(np.arange(D), T)] == 0)
        # first-order optimality of b on T ...
        gb = ref.grad(W, y, b, "logistic")
        assert np.max(np.abs(gb[T])) < 1e-6
        # ... and agreement with an independent solver of the same sub-problem
        b_ref = ref.grasp_logistic_subproblem(W, y, T, x_prev[T])
        np.testing.assert_allclose(b[T], b_ref, atol=1e-5, rtol=0)
        # the closing H_s is exact
        np.testing.assert_allclose(tr.x(t), ref.hard_threshold_ref(b, S), atol=0, rtol=0)
        assert np.count_nonzero(tr.x(t)) <= S


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_grasp_logistic_fixed_point(sparse):
    """At convergence: x = H_s(b) with b stationary on T, and one more GraSP step stays put.

    (The gradient at x itself restricted to supp(x) need not vanish: b minimises F over T,
    |T| <= 3s, and x = H_s(b) drops b's small entries outside supp(x).)
    """
    W, y = _data("logistic", seed=6, n=200)
    prob = _problem(W, y, "logistic", sparse)
    res = rv.solve(prob, method="grasp", s=S, max_iter=50, tol=1e-12, warn=False, **NO_FTOL)
    assert res.status == 0, res.message
    x = res.x
    supp = np.flatnonzero(x)
    assert 0 < supp.size <= S
    tr = res.trace
    b, T = tr.b(-1), tr.T(-1)
    assert np.all(np.isin(supp, T))
    np.testing.assert_allclose(x, ref.hard_threshold_ref(b, S), atol=0, rtol=0)
    assert np.max(np.abs(ref.grad(W, y, b, "logistic")[T])) < 1e-6
    again = rv.solve(prob, method="grasp", s=S, max_iter=1, tol=0, x0=x, warn=False, **NO_FTOL)
    np.testing.assert_allclose(again.x, x, atol=1e-6, rtol=0)


# -- heavy ties: integer-valued data make many gradient entries exactly equal ------------------


def _tied_data(seed=0, n=N, d=D):
    rng = np.random.default_rng(seed)
    W = rng.integers(-1, 2, size=(n, d)).astype(np.float64)
    W[:, ::3] = W[:, [0]]  # identical columns -> exactly tied gradient entries
    y = rng.integers(-2, 3, size=n).astype(np.float64)
    return W, y


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("method, inner", CASES)
def test_iterates_match_reference_with_ties(method, inner, sparse):
    W, y = _tied_data(seed=8)
    eta = _eta(method, W)
    prob = _problem(W, y, "squares", sparse)
    g0 = ref.grad(W, y, np.zeros(D), "squares")
    assert len(np.unique(np.abs(g0))) < D // 2  # the first H_s / Z really has ties
    res = _solve(prob, method, inner, eta, seed=8, max_iter=3)
    out = ref.run(method, W, y, "squares", s=S, eta=eta, n_iter=res.nit, J=J_DEFAULT,
                  m=M_DEFAULT, batch=BATCH, random_state=8, inner=inner)
    for t in range(res.nit + 1):
        np.testing.assert_allclose(res.trace.x(t), out["x"][t], atol=ATOL, rtol=0,
                                   err_msg=f"x^{t}")
    if method in ("grasp", "svrgsp", "svrgsp+"):
        for t in range(1, res.nit + 1):
            np.testing.assert_array_equal(res.trace.Z(t), out["Z"][t - 1])
            np.testing.assert_array_equal(res.trace.T(t), out["T"][t - 1])


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("method, inner", [c for c in CASES if c[0] not in ("fght", "grasp")])
def test_last_inner_checkpoint_is_the_epoch_result(method, inner, sparse):
    """With record_iterates, the snapshot after the last inner step is x^t (SG-HT, SVRGHT)
    or b^t on T (SVRGSP(+); zero off T in the restricted reading)."""
    W, y = _data("squares", seed=3)
    prob = _problem(W, y, "squares", sparse)
    res = rv.solve(prob, method=method, s=S, eta=_eta(method, W), J=120, m=6, max_iter=3,
                   tol=0, random_state=3, inner=inner, batch_size=6, record_every=10,
                   record_iterates=True, warn=False, **NO_FTOL)
    tr = res.trace
    for t in range(1, res.nit + 1):
        sel = np.flatnonzero(tr.ck_iter == t)
        assert tr.ck_step[sel].tolist() == list(range(10, 10 * len(sel) + 1, 10))
        last = tr.ck_x[sel[-1]]
        if method in ("sght", "svrght"):
            np.testing.assert_array_equal(last, tr.x(t))
        else:
            T = tr.T(t)
            np.testing.assert_array_equal(last[T], tr.b(t)[T])
            if inner == "restricted":
                assert not np.any(np.delete(last, T))
        np.testing.assert_allclose(tr.ck_objective[sel],
                                   [prob.objective(z) for z in tr.ck_x[sel]], rtol=1e-13)
