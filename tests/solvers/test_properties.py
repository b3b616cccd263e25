"""Property tests: hard thresholding / top_k, and invariants of every solver's trace."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy_reference import hard_threshold_ref, top_k_ref

import rgrasp_viz as rv
from rgrasp_viz._problems import Problem, make_classification, make_regression

# tol-based stopping only: disable the objective-stagnation stop when solve has one
NO_FTOL = {"ftol": 0.0} if "ftol" in inspect.signature(rv.solve).parameters else {}

SETTINGS = settings(deadline=None, max_examples=60,
                    suppress_health_check=[HealthCheck.too_slow])

# -- top_k / hard_threshold ---------------------------------------------------------------------


def _check_top_k(v, k):
    v = np.asarray(v, dtype=np.float64)
    p = v.shape[0]
    idx = rv.top_k(v, k)
    assert idx.dtype == np.int64
    assert idx.shape == (max(0, min(k, p)),)
    assert np.all(np.diff(idx) > 0)  # ascending, no repeats
    np.testing.assert_array_equal(idx, top_k_ref(v, k))
    h = rv.hard_threshold(v, k)
    np.testing.assert_array_equal(h, hard_threshold_ref(v, k))
    return idx, h


finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
small_ints = st.integers(-3, 3).map(float)


@SETTINGS
@given(v=st.lists(st.one_of(finite, small_ints), min_size=0, max_size=60),
       data=st.data())
def test_top_k_small_vectors(v, data):
    k = data.draw(st.integers(0, len(v) + 3), label="k")
    _check_top_k(v, k)


@SETTINGS
@given(v=st.lists(small_ints, min_size=1, max_size=2000), data=st.data())
def test_top_k_heavy_ties(v, data):
    k = data.draw(st.integers(0, len(v) + 1), label="k")
    _check_top_k(v, k)


@SETTINGS
@given(p=st.integers(0, 3000), data=st.data())
def test_top_k_all_zero(p, data):
    k = data.draw(st.integers(0, p + 2), label="k")
    idx, h = _check_top_k(np.zeros(p), k)
    np.testing.assert_array_equal(idx, np.arange(min(k, p)))  # lowest indices win the tie
    assert not np.any(h)


def test_top_k_k_zero_and_k_ge_len():
    v = np.array([3.0, -1.0, 2.0])
    assert rv.top_k(v, 0).size == 0
    np.testing.assert_array_equal(rv.hard_threshold(v, 0), np.zeros(3))
    for k in (3, 4, 100):
        np.testing.assert_array_equal(rv.top_k(v, k), [0, 1, 2])
        np.testing.assert_array_equal(rv.hard_threshold(v, k), v)
    assert rv.top_k(np.zeros(0), 0).size == 0
    assert rv.top_k(np.zeros(0), 5).size == 0
    # signed zeros tie with each other; the lower index wins
    np.testing.assert_array_equal(rv.top_k(np.array([0.0, -0.0, 0.0, -0.0]), 2), [0, 1])
    np.testing.assert_array_equal(rv.top_k(np.array([-2.0, 2.0, -2.0]), 2), [0, 1])


def test_hard_threshold_does_not_modify_input():
    v = np.array([1.0, -5.0, 3.0, 0.5])
    before = v.copy()
    out = rv.hard_threshold(v, 2)
    np.testing.assert_array_equal(v, before)
    np.testing.assert_array_equal(out, [0.0, -5.0, 3.0, 0.0])


_KINDS = ("gauss", "ints", "mostly_zero", "plus_minus_one", "increasing", "decreasing",
          "few_values", "strided_big", "strided_small", "heavy_tail")


def _large_vector(kind, p, seed):
    rng = np.random.default_rng(seed)
    if kind == "gauss":
        return rng.standard_normal(p)
    if kind == "ints":
        return rng.integers(-5, 6, size=p).astype(float)
    if kind == "mostly_zero":
        v = np.zeros(p)
        nz = rng.choice(p, size=max(1, p // 100), replace=False)
        v[nz] = rng.standard_normal(nz.size)
        return v
    if kind == "plus_minus_one":
        return rng.choice([-1.0, 1.0], size=p)
    if kind == "increasing":
        return np.arange(p, dtype=float)
    if kind == "decreasing":
        return -np.arange(p, dtype=float)[::-1] * 0.5 + p
    if kind == "few_values":
        return rng.choice([0.0, 1.0, -1.0, 2.0, -2.0, 3.0], size=p,
                          p=[0.5, 0.2, 0.2, 0.05, 0.04, 0.01])
    # positions the strided sample of the selection kernel looks at (multiples of p // 128)
    stride = max(1, p // 128)
    v = rng.standard_normal(p) * 1e-3
    if kind == "strided_big":  # the sample overestimates: the threshold estimate overshoots
        v[::stride] = 1e6 + rng.integers(0, 3, size=v[::stride].size)
        return v
    if kind == "strided_small":  # the sample underestimates: nearly every index a candidate
        v[::stride] = 0.0
        return v
    return rng.standard_cauchy(p)  # heavy_tail


@settings(deadline=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(p=st.sampled_from([10_000, 100_000]), kind=st.sampled_from(_KINDS),
       seed=st.integers(0, 2**32 - 1), data=st.data())
def test_top_k_large_vectors(p, kind, seed, data):
    v = _large_vector(kind, p, seed)
    k = data.draw(st.one_of(st.integers(1, p), st.integers(1, 300), st.integers(p - 300, p)),
                  label="k")
    _check_top_k(v, k)


@pytest.mark.parametrize("p", [513, 10_000, 100_000])
@pytest.mark.parametrize("kind", _KINDS)
def test_top_k_large_vectors_edge_k(p, kind):
    v = _large_vector(kind, p, seed=p)
    for k in (1, 2, 127, 128, 129, p // 128, p // 2, p - 1, p):
        _check_top_k(v, k)


@SETTINGS
@given(v=st.lists(st.one_of(finite, small_ints), min_size=0, max_size=80), data=st.data())
def test_hard_threshold_idempotent_and_fixes_sparse_vectors(v, data):
    v = np.asarray(v, dtype=np.float64)
    s = data.draw(st.integers(0, len(v) + 2), label="s")
    h = rv.hard_threshold(v, s)
    assert np.count_nonzero(h) <= s
    np.testing.assert_array_equal(rv.hard_threshold(h, s), h)
    # any s-sparse vector is a fixed point
    w = np.zeros_like(v)
    if len(v) and s:
        pos = data.draw(st.lists(st.integers(0, len(v) - 1), max_size=s, unique=True),
                        label="pos")
        w[pos] = v[pos]
    np.testing.assert_array_equal(rv.hard_threshold(w, s), w)


# -- invariants of the solvers' traces ----------------------------------------------------------

N, D, S = 50, 30, 4
J = 80
M = 6
BATCH = 6
METHOD_CASES = [
    ("fght", "restricted"), ("grasp", "restricted"), ("sght", "restricted"),
    ("svrght", "restricted"), ("svrgsp", "restricted"), ("svrgsp", "full"),
    ("svrgsp+", "restricted"), ("svrgsp+", "full"),
]
SP_METHODS = ("grasp", "svrgsp", "svrgsp+")


def _problem(loss, seed, sparse, n=N, d=D):
    if loss == "squares":
        p = make_regression(n=n, d=d, s_star=3, random_state=seed)
    else:
        p = make_classification(n=n, d=d, s_star=3, random_state=seed)
    W = p.W
    return Problem(sp.csr_matrix(W) if sparse else W, p.y, loss=p.loss), W


def _eta(method, W):
    if method in ("fght", "grasp"):
        return 0.5 * W.shape[0] / np.linalg.norm(W, 2) ** 2
    return 0.5 / np.max(np.sum(W * W, axis=1))


def _run(prob, W, method, inner, seed, s=S, max_iter=4):
    return rv.solve(prob, method=method, s=s, eta=_eta(method, W), J=J, m=M,
                    max_iter=max_iter, tol=0, random_state=seed, inner=inner,
                    batch_size=BATCH, warn=False, **NO_FTOL)


@pytest.mark.parametrize("method, inner", METHOD_CASES)
@settings(deadline=None, max_examples=6, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), loss=st.sampled_from(["squares", "logistic"]),
       sparse=st.booleans())
def test_trace_invariants(method, inner, seed, loss, sparse):
    prob, W = _problem(loss, seed, sparse)
    res = _run(prob, W, method, inner, seed)
    tr = res.trace
    nit = res.nit
    assert nit >= 1 and tr.n_iter == nit
    n_steps = max(1, N // BATCH)
    for t in range(nit + 1):
        x = tr.x(t)
        supp = np.flatnonzero(x)
        assert supp.size <= S
        np.testing.assert_array_equal(tr.support(t), supp)
        assert tr.support_size[t] == supp.size
        # the recorded objective is F at the recorded iterate
        np.testing.assert_allclose(tr.objective[t], prob.objective(x), rtol=1e-13, atol=0)
    # a run stopped by a divergence keeps the iterate before it; the trace holds both
    last = -2 if res.status == 2 and "diverged at iteration" in res.message else -1
    np.testing.assert_array_equal(res.x, tr.x(last))
    assert res.fun == tr.objective[last]

    # Z, T (Algorithm 1)
    if method in SP_METHODS:
        assert tr.Z(0).size == 0 and tr.T(0).size == 0
        for t in range(1, nit + 1):
            Z, T = tr.Z(t), tr.T(t)
            assert Z.size == min(2 * S, D)
            assert np.all(np.diff(Z) > 0) and np.all(np.diff(T) > 0)
            assert T.size <= 3 * S
            assert np.all(np.isin(Z, T))
            assert np.all(np.isin(tr.support(t - 1), T))
            assert np.all(np.isin(tr.support(t), T))
            # x^t = H_s(b^t) with b^t supported on T
            b = tr.b(t)
            assert np.all(b[np.setdiff1d(np.arange(D), T)] == 0)
            np.testing.assert_array_equal(tr.x(t), hard_threshold_ref(b, S))
            # Z: the 2s largest |grad F(x^{t-1})|
            g = prob.gradient(tr.x(t - 1))
            g = g[0] if isinstance(g, tuple) else g
            np.testing.assert_array_equal(Z, top_k_ref(g, 2 * S))
    else:
        for t in range(nit + 1):
            assert tr.Z(t).size == 0 and tr.T(t).size == 0

    # effective passes
    dp = np.diff(tr.passes)
    assert tr.passes[0] == 0
    if method == "fght":
        np.testing.assert_allclose(dp, 1.0, rtol=0, atol=1e-12)
    elif method == "sght":
        np.testing.assert_allclose(dp, n_steps * BATCH / N, rtol=0, atol=1e-12)
    elif method in ("svrght", "svrgsp", "svrgsp+"):
        np.testing.assert_allclose(dp, 1.0 + J / N, rtol=0, atol=1e-12)
    else:  # grasp: 1 (gradient) + the work rule's count for the exact fit (solvers._exact:
        # CG iterations for least squares, L-BFGS evaluations for logistic; the gradient at
        # the warm start is step 2's): whole passes, test_exact checks the counts
        assert np.all(dp >= 1.0) and np.all(dp == np.round(dp))
    np.testing.assert_allclose(res.passes, tr.passes[-1], rtol=1e-12)

    # inner steps and thresholding counts
    assert tr.inner_steps[0] == 0
    if method in ("svrght", "svrgsp", "svrgsp+"):
        np.testing.assert_array_equal(tr.inner_steps[1:], J)
    if method == "sght":
        np.testing.assert_array_equal(tr.inner_steps[1:], n_steps)
    per = {"svrght": J, "sght": n_steps, "svrgsp+": J // math.ceil(J / M) + 1}.get(method, 1)
    np.testing.assert_array_equal(tr.n_thresholds, per * np.arange(nit + 1))
    assert len(tr.ev_iter) == tr.n_thresholds[-1]
    # entered/left bookkeeping agrees with the recorded supports
    for t in range(1, nit + 1):
        assert tr.n_entered[t] == np.setdiff1d(tr.support(t), tr.support(t - 1)).size
        assert tr.n_left[t] == np.setdiff1d(tr.support(t - 1), tr.support(t)).size


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@settings(deadline=None, max_examples=5, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000))
def test_grasp_least_squares_normal_equations(sparse, seed):
    prob, W = _problem("squares", seed, sparse)
    y = prob.y
    res = _run(prob, W, "grasp", "restricted", seed)
    tr = res.trace
    for t in range(1, res.nit + 1):
        T = tr.T(t)
        bT = tr.b(t)[T]
        WT = W[:, T]
        r = WT.T @ (WT @ bT - y)
        scale = np.linalg.norm(WT, 2) ** 2 * (np.linalg.norm(bT) + 1.0)
        assert np.max(np.abs(r)) <= 1e-10 * scale


@pytest.mark.parametrize("method, inner", [c for c in METHOD_CASES if c[0] in SP_METHODS])
def test_support_pursuit_when_2s_exceeds_d(method, inner):
    """With 2s > d, Z is every coordinate, and T = all d coordinates."""
    d, s = 8, 5
    prob, W = _problem("squares", 0, False, n=40, d=d)
    res = rv.solve(prob, method=method, s=s, eta=_eta(method, W), J=J, m=M, max_iter=3,
                   tol=0, random_state=0, inner=inner, warn=False, **NO_FTOL)
    for t in range(1, res.nit + 1):
        np.testing.assert_array_equal(res.trace.Z(t), np.arange(d))
        np.testing.assert_array_equal(res.trace.T(t), np.arange(d))
        assert np.count_nonzero(res.trace.x(t)) <= s


@pytest.mark.parametrize("loss", ["squares", "logistic"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_fght_fixed_point(loss, sparse):
    prob, W = _problem(loss, 11, sparse)
    eta = _eta("fght", W) * (4.0 if loss == "logistic" else 1.0)
    res = rv.solve(prob, method="fght", s=S, eta=eta, max_iter=20_000, tol=1e-14,
                   warn=False, **NO_FTOL)
    assert res.status == 0, res.message
    x = res.x
    assert 0 < np.count_nonzero(x) <= S
    again = rv.solve(prob, method="fght", s=S, eta=eta, max_iter=1, tol=0, x0=x, warn=False,
                     **NO_FTOL)
    np.testing.assert_allclose(again.trace.x(0), x, atol=0, rtol=0)
    np.testing.assert_allclose(again.x, x, atol=1e-9, rtol=0)
    # and the fixed-point equation itself
    g = prob.gradient(x)
    g = g[0] if isinstance(g, tuple) else g
    np.testing.assert_allclose(hard_threshold_ref(x - eta * g, S), x, atol=1e-9, rtol=0)
