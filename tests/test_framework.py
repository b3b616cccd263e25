"""RGraSP as a framework: the method registry, Algorithm 1 with a pluggable step 5, HTP, and
a learner's own sub-problem solver, tested through the public API only."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from reference import hard_threshold_ref, top_k_ref

import rgrasp_viz as rv
from rgrasp_viz.viz import figures as F


@pytest.fixture(scope="module")
def prob():
    return rv.make_regression(n=120, d=200, s_star=5, random_state=3)


def gd_on_T(sub):
    """The issue's example: a few gradient steps on T."""
    z = sub.x0.copy()
    for _ in range(20):
        z -= sub.eta * sub.grad(z)
        sub.add_passes(1)
    return z


@pytest.fixture
def gdsp():
    spec = rv.register_method("gdsp", subsolver=gd_on_T, label="GD-SP", color="#7B3294")
    yield spec
    if "gdsp" in rv.method_names():
        rv.unregister_method("gdsp")


# -- the registry -------------------------------------------------------------------------------


def test_registry_lists_the_paper_methods_and_htp():
    assert rv.method_names(paper_only=True) == ("fght", "grasp", "sght", "svrght", "svrgsp",
                                                "svrgsp+")
    assert "htp" in rv.method_names() and "htp" not in rv.method_names(paper_only=True)
    specs = [rv.get_method(m) for m in rv.method_names()]
    assert len({s.color for s in specs}) == len(specs)
    assert len({s.label for s in specs}) == len(specs)
    # aliases and case resolve to one entry
    assert rv.get_method("FG-HT") is rv.get_method("fght") is rv.get_method(" iht ")
    assert rv.get_method("SVRGSP_plus").name == "svrgsp+"


def test_registry_flags_drive_the_defaults(prob):
    for name in rv.method_names():
        spec = rv.get_method(name)
        res = rv.solve(prob, name, s=6, max_iter=2, random_state=0, warn=False)
        meta = res.trace.meta
        assert meta["max_iter"] == spec.max_iter or res.nit <= 2
        assert meta["patience"] == spec.patience
        # methods of Algorithm 1 record Z and T; the others do not
        assert (len(res.trace.T(1)) > 0) == spec.framework, name
        # stochastic methods record inner checkpoints
        assert (len(res.trace.ck_iter) > 0) == spec.stochastic, name
        if not spec.has_step:
            assert name == "grasp"


def test_unknown_method_lists_the_registered_ones(prob):
    with pytest.raises(ValueError, match="unknown method 'nope'.*'htp'"):
        rv.solve(prob, "nope", s=3)
    with pytest.raises(TypeError, match="method must be a string"):
        rv.solve(prob, 3, s=3)


def test_builtins_cannot_be_unregistered():
    with pytest.raises(ValueError, match="built-in"):
        rv.unregister_method("svrgsp")


# -- Algorithm 1 with a pluggable step 5 ---------------------------------------------------------


def _rgrasp_ref(prob, s, n_iter, solver):
    """Algorithm 1 in NumPy with ``solver(x, T) -> b_T`` as step 5."""
    W, y, n = prob.W, prob.y, prob.n
    x = np.zeros(prob.d)
    xs, Ts = [x], []
    for _ in range(n_iter):
        g = W.T @ (W @ x - y) / n
        Z = top_k_ref(g, 2 * s)
        T = np.union1d(Z, np.flatnonzero(x))
        b = np.zeros(prob.d)
        b[T] = solver(x, T)
        x = hard_threshold_ref(b, s)
        xs.append(x)
        Ts.append(T)
    return xs, Ts


def test_registered_solver_runs_algorithm_1(prob, gdsp):
    """Same iterates as a NumPy Algorithm 1 with the same step 5 (and the same eta)."""
    eta = 0.02

    def gd_ref(x, T):
        WT = prob.W[:, T]
        z = x[T].copy()
        for _ in range(20):
            z -= eta * WT.T @ (WT @ z - prob.y) / prob.n
        return z

    res = rv.solve(prob, "gdsp", s=6, eta=eta, max_iter=5, tol=0, ftol=0, warn=False)
    xs, Ts = _rgrasp_ref(prob, 6, res.nit, gd_ref)
    for t in range(res.nit + 1):
        np.testing.assert_allclose(res.trace.x(t), xs[t], rtol=1e-10, atol=1e-12)
    for t in range(1, res.nit + 1):
        np.testing.assert_array_equal(res.trace.T(t), Ts[t - 1])
    # passes: 1 gradient + the 20 declared by the solver, per iteration
    np.testing.assert_allclose(np.diff(res.trace.passes), 21.0)
    assert res.trace.meta["eta_rule"] == "user"


def test_subproblem_carries_what_the_contract_promises(prob):
    seen = {}

    def probe(sub):
        seen.setdefault("subs", []).append(sub)
        assert sub.x0.shape == sub.g.shape == sub.T.shape
        assert sub.W.shape == (sub.n, len(sub.T))
        np.testing.assert_allclose(sub.g, sub.grad(sub.x0), rtol=1e-10, atol=1e-13)
        full = np.zeros(sub.d)
        full[sub.T] = sub.x0
        assert sub.fun(sub.x0) == pytest.approx(prob.objective(full), rel=1e-12)
        assert isinstance(sub.rng, np.random.Generator)
        seen.setdefault("draws", []).append(sub.rng.integers(0, 10**9))
        sub.add_passes(0.5)
        return sub.x0 - sub.eta * sub.g

    rv.register_method("probe", subsolver=probe, eta=0.01)
    try:
        a = rv.solve(prob, "probe", s=6, max_iter=3, random_state=7, tol=0, ftol=0,
                     warn=False)
        draws_a = seen.pop("draws")
        b = rv.solve(prob, "probe", s=6, max_iter=3, random_state=7, tol=0, ftol=0,
                     warn=False)
        assert seen["draws"] == draws_a  # the run's generator: reproducible
        assert a.trace.equals(b.trace)
        sub = seen["subs"][0]
        assert sub.eta == 0.01 and sub.iteration == 1 and sub.s == 6
        assert sub.loss == "squares" and sub.y is prob.y
        np.testing.assert_allclose(np.diff(a.trace.passes), 1.5)
        with pytest.raises(ValueError, match="non-negative"):
            sub.add_passes(-1)
        with pytest.raises(ValueError, match="shape"):
            sub.grad(np.zeros(3))
    finally:
        rv.unregister_method("probe")


def test_registered_solver_default_step_is_the_subproblem_rule(prob, gdsp):
    res = rv.solve(prob, "gdsp", s=6, max_iter=2, warn=False)
    assert res.trace.meta["eta"] == pytest.approx(
        1.0 / rv.solvers.restricted_smoothness(prob, 18))


def test_registered_solver_on_csr_and_logistic(gdsp):
    dense = rv.make_classification(n=300, d=80, s_star=4, random_state=0)
    csr = rv.Problem(sp.csr_matrix(dense.W), dense.y, loss="logistic", x_true=dense.x_true)
    a = rv.solve(dense, "gdsp", s=5, max_iter=4, tol=0, ftol=0, warn=False)
    b = rv.solve(csr, "gdsp", s=5, max_iter=4, tol=0, ftol=0, warn=False)
    np.testing.assert_allclose(a.trace.objective, b.trace.objective, rtol=1e-10)
    assert a.trace.objective[-1] < a.trace.objective[0]


def test_registered_method_works_everywhere(prob, gdsp, tmp_path):
    res = rv.solve(prob, "gdsp", s=6, random_state=0)
    assert res.success and res.rel_error < 0.05
    # trace round trip
    path = tmp_path / "gdsp.npz"
    res.trace.save(path)
    tr = rv.Trace.load(path)
    assert tr.equals(res.trace) and tr.method == "gdsp"
    # figures: label and colour from the registry
    fig = F.convergence([res])
    assert any(t.name == "GD-SP" and t.line.color == "#7B3294" for t in fig.data)
    F.support_raster(res)
    F.threshold_timeline([res])
    slack = F.slack_descent(res.trace, prob)
    assert len(slack.data) > 0
    # dashboards
    ex = rv.explore(prob, method="gdsp", debounce=0, s=6)
    try:
        assert ex.result is not None and ex.result.method == "gdsp"
        assert ("GD-SP", "gdsp") in ex.method.options
        assert ex.sliders["J"].disabled and ex.sliders["m"].disabled
        assert not ex.sliders["eta"].disabled
    finally:
        ex.close()
    cmp_ = rv.compare(prob, methods=["svrgsp", "gdsp"], s=6)
    assert set(cmp_.results) == {"svrgsp", "gdsp"}


def test_unregistered_method_is_gone(prob):
    rv.register_method("tmp", subsolver=gd_on_T)
    assert "tmp" in rv.method_names()
    rv.unregister_method("TMP")
    assert "tmp" not in rv.method_names()
    with pytest.raises(ValueError, match="unknown method"):
        rv.solve(prob, "tmp", s=3)


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(name="", subsolver=gd_on_T), TypeError, "non-empty"),
    (dict(name="x", subsolver=3), TypeError, "callable"),
    (dict(name="svrgsp", subsolver=gd_on_T), ValueError, "already registered"),
    (dict(name="fg-ht", subsolver=gd_on_T), ValueError, "already registered"),
    (dict(name="x", subsolver=gd_on_T, eta=-1.0), ValueError, "eta"),
    (dict(name="x", subsolver=gd_on_T, eta="nope"), ValueError, "rule"),
    (dict(name="x", subsolver=gd_on_T, max_iter=0), ValueError, "max_iter"),
])
def test_register_method_checks_its_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        rv.register_method(**kwargs)
    assert "x" not in rv.method_names()


def test_bad_subsolver_output_is_named(prob):
    rv.register_method("bad", subsolver=lambda sub: np.zeros(3))
    rv.register_method("nan", subsolver=lambda sub: np.full(len(sub.T), np.nan))
    try:
        with pytest.raises(ValueError, match="'bad' must return b on T, of shape"):
            rv.solve(prob, "bad", s=4)
        res = rv.solve(prob, "nan", s=4, warn=False)
        assert res.status == rv.Status.DIVERGED and "non-finite" in res.message
    finally:
        rv.unregister_method("bad")
        rv.unregister_method("nan")


# -- HTP: one implementation + one registry entry ----------------------------------------------


def _htp_ref(prob, s, eta, n_iter):
    W, y, n = prob.W, prob.y, prob.n
    x = np.zeros(prob.d)
    xs = [x]
    for _ in range(n_iter):
        g = W.T @ (W @ x - y) / n
        S = top_k_ref(x - eta * g, s)
        x = np.zeros(prob.d)
        x[S] = np.linalg.lstsq(W[:, S], y, rcond=None)[0]
        xs.append(x)
    return xs


@pytest.mark.parametrize("sparse", [False, True])
def test_htp_matches_reference(prob, sparse):
    eta = rv.default_eta(prob, "htp", 6)
    p = rv.Problem(sp.csr_matrix(prob.W), prob.y, x_true=prob.x_true) if sparse else prob
    res = rv.solve(p, "htp", s=6, max_iter=4, tol=0, ftol=0, warn=False)
    xs = _htp_ref(prob, 6, eta, res.nit)
    for t in range(res.nit + 1):
        np.testing.assert_allclose(res.trace.x(t), xs[t], rtol=1e-8, atol=1e-10)
    assert res.trace.n_thresholds[-1] == res.nit
    # the gradient + the exact fit's sweeps over the data (none when S did not change on
    # dense data: the Gram matrix of W_S is kept from the previous iteration)
    dp = np.diff(res.trace.passes)
    assert dp[0] == 2.0 and np.all(dp >= (2.0 if sparse else 1.0)) and np.all(dp % 1 == 0)


def test_htp_converges_to_a_fixed_point(prob):
    res = rv.solve(prob, "htp", s=6)
    assert res.success and "relative change" in res.message
    assert res.rel_error < 0.05
