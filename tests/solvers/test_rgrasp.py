"""RGraSP as a framework: the method registry, Algorithm 1 with a pluggable step 5, HTP, and
a learner's own sub-problem solver, tested through the public API only."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from numpy_reference import hard_threshold_ref, top_k_ref

import rgrasp_viz as rv
from rgrasp_viz import analysis
from rgrasp_viz.viz import figures as F


@pytest.fixture(scope="module")
def prob():
    return rv.make_regression(n=120, d=200, s_star=5, random_state=3)


def gd_on_T(sub):
    """The issue's example: a few gradient steps on T (``sub.grad`` charges its pass)."""
    z = sub.x0.copy()
    for _ in range(20):
        z -= sub.eta * sub.grad(z)
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
    # passes: 1 gradient + the 20 sub.grad calls, each charging its own pass
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
        assert sub.loss == "squares"
        np.testing.assert_array_equal(sub.y, prob.y)
        assert not sub.y.flags.writeable and not sub.problem.W.flags.writeable
        assert sub.J == 2 * prob.n and sub.m == 6
        # the whole problem: x̂^{t-1} and grad F(x̂^{t-1}) on all d coordinates
        assert sub.x_hat.shape == sub.g_full.shape == (prob.d,)
        np.testing.assert_array_equal(sub.x_hat, a.trace.x(0))
        np.testing.assert_allclose(sub.g_full, prob.gradient(a.trace.x(0)), rtol=1e-12,
                                   atol=1e-14)
        np.testing.assert_array_equal(sub.x0, sub.x_hat[sub.T])
        np.testing.assert_array_equal(sub.g, sub.g_full[sub.T])
        # sub.grad and sub.fun charge 1 pass each; add_passes the rest: 1 + 1 + 1 + 0.5
        np.testing.assert_allclose(np.diff(a.trace.passes), 3.5)
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


# -- a step 5 as wide as the paper's: Algorithm 2 through the public API ---------------------


def algorithm2(sub, plus):
    """The paper's Algorithm 2 in plain NumPy, through the public API only: ``J`` SVRG steps
    from ``z^0 = x̂^{t-1}`` on all ``d`` coordinates with the full gradient, and (SVRGSP+)
    ``z <- H_|T|(z)`` every ``ceil(J/m)`` steps; least squares, so
    ``grad f_i(z) - grad f_i(x̂) = (w_i^T z - y_i - f_i'(w_i^T x̂)) w_i``."""
    W, y = sub.problem.W, sub.problem.y
    z = sub.x_hat.copy()
    every = -(-sub.J // sub.m)  # ceil(J / m)
    idx = sub.rng.integers(0, sub.n, size=sub.J)  # one draw per outer iteration
    for j, i in enumerate(idx):
        w = W[i].toarray().ravel() if sp.issparse(W) else W[i]
        c = (w @ z - y[i]) - sub.snap_dloss[i]
        z = z - sub.eta * (c * w + sub.g_full)
        if plus and (j + 1) % every == 0:
            z = rv.hard_threshold(z, len(sub.T))
    sub.add_passes(sub.J / sub.n)  # J component gradients
    return z  # on all d coordinates: Algorithm 1 zeroes it outside T


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("builtin", ["svrgsp", "svrgsp+"])
def test_algorithm_2_through_the_public_api_gives_the_builtins_iterates(prob, builtin,
                                                                         sparse):
    p = rv.Problem(sp.csr_matrix(prob.W), prob.y, x_true=prob.x_true) if sparse else prob
    s, J, m = 6, 100, 6
    eta = rv.default_eta(p, builtin, s)
    rv.register_method("alg2", subsolver=lambda sub: algorithm2(sub, builtin == "svrgsp+"))
    try:
        mine = rv.solve(p, "alg2", s=s, eta=eta, J=J, m=m, max_iter=5, tol=0, ftol=0,
                        random_state=4, warn=False)
    finally:
        rv.unregister_method("alg2")
    ref = rv.solve(p, builtin, s=s, eta=eta, J=J, m=m, max_iter=5, tol=0, ftol=0,
                   random_state=4, warn=False)
    assert mine.nit == ref.nit == 5
    for t in range(ref.nit + 1):
        np.testing.assert_allclose(mine.trace.x(t), ref.trace.x(t), rtol=1e-10, atol=1e-12)
        assert np.array_equal(mine.trace.support(t), ref.trace.support(t))
    np.testing.assert_allclose(mine.trace.passes, ref.trace.passes, rtol=1e-12)
    assert not np.allclose(ref.trace.x(5), ref.trace.x(4))  # the runs went somewhere


def algorithm2_counted(sub, threshold):
    """SVRGSP+'s Algorithm 2 in plain NumPy (dense least squares) that declares the work of
    each inner step before its thresholding and thresholds through ``threshold(sub, z, k)``
    (``sub.hard_threshold`` or ``rv.hard_threshold``), so that its thresholdings are recorded
    where the built-in's are."""
    W, y = sub.problem.W, sub.problem.y
    z = sub.x_hat.copy()
    every = -(-sub.J // sub.m)  # ceil(J / m)
    for j, i in enumerate(sub.rng.integers(0, sub.n, size=sub.J)):
        c = (W[i] @ z - y[i]) - sub.snap_dloss[i]
        z = z - sub.eta * (c * W[i] + sub.g_full)
        sub.add_passes(1 / sub.n)  # one component gradient
        if (j + 1) % every == 0:
            z = threshold(sub, z, len(sub.T))
    return z


@pytest.mark.parametrize("via", ["sub", "rv"])
def test_a_plugins_thresholdings_are_counted_like_the_builtins(prob, via):
    """A plug-in SVRGSP+ that thresholds 6 times per iteration (J = 120, m = 6) shows 6 inner
    thresholdings per iteration (7 with Algorithm 1's closing H_s), and its whole trace --
    iterates, passes, counts, the timeline's events -- is the built-in SVRGSP+'s."""
    threshold = {"sub": lambda sub, z, k: sub.hard_threshold(z, k),
                 "rv": lambda sub, z, k: rv.hard_threshold(z, k)}[via]
    s, J, m = 6, 120, 6
    eta = rv.default_eta(prob, "svrgsp+", s)
    rv.register_method("alg2plus", subsolver=lambda sub: algorithm2_counted(sub, threshold))
    try:
        mine = rv.solve(prob, "alg2plus", s=s, eta=eta, J=J, m=m, max_iter=5, tol=0, ftol=0,
                        random_state=4, warn=False)
    finally:
        rv.unregister_method("alg2plus")
    ref = rv.solve(prob, "svrgsp+", s=s, eta=eta, J=J, m=m, max_iter=5, tol=0, ftol=0,
                   random_state=4, warn=False)
    assert mine.nit == ref.nit == 5
    np.testing.assert_array_equal(np.diff(mine.trace.n_thresholds), [7] * 5)
    inner = mine.trace.ev_kind == 0
    np.testing.assert_array_equal(np.bincount(mine.trace.ev_iter[inner]), [0] + [6] * 5)
    np.testing.assert_array_equal(mine.trace.ev_step[inner] % 20, 0)  # every ceil(J/m) steps
    for t in range(ref.nit + 1):
        np.testing.assert_allclose(mine.trace.x(t), ref.trace.x(t), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(mine.trace.passes, ref.trace.passes, rtol=1e-12)
    for name in ("n_thresholds", "inner_entered", "inner_left", "inner_steps", "n_entered",
                 "n_left", "ev_iter", "ev_step", "ev_kind", "ev_in", "ev_out"):
        np.testing.assert_array_equal(getattr(mine.trace, name), getattr(ref.trace, name),
                                      err_msg=name)
    assert sum(mine.trace.ev_in[inner]) > 0  # the cuts did move coordinates
    for key in ("passes_head", "passes_per_step", "steps_per_iter"):
        assert mine.trace.meta[key] == pytest.approx(ref.trace.meta[key]), key
    np.testing.assert_allclose([e["passes"] for e in mine.trace.events()],
                               [e["passes"] for e in ref.trace.events()], rtol=1e-12)


def test_plugin_thresholdings_outside_a_solver_and_of_other_vectors(prob):
    """``rv.hard_threshold`` outside a solver records nothing; inside one, a vector that is
    neither on ``T`` nor on all coordinates is counted without entered/left; with
    ``record=False`` the count stays and the events go."""
    def odd(sub):
        rv.hard_threshold(np.arange(5.0), 2)  # neither |T| nor d long: counted, no in/out
        return sub.hard_threshold(sub.x0 - sub.eta * sub.grad(sub.x0), len(sub.T) - 1)

    rv.hard_threshold(np.arange(5.0), 2)
    rv.register_method("odd", subsolver=odd, eta=0.01)
    try:
        res = rv.solve(prob, "odd", s=6, max_iter=3, tol=0, ftol=0, warn=False)
        quiet = rv.solve(prob, "odd", s=6, max_iter=3, tol=0, ftol=0, warn=False, record=False)
    finally:
        rv.unregister_method("odd")
    np.testing.assert_array_equal(np.diff(res.trace.n_thresholds), [3] * 3)
    np.testing.assert_array_equal(quiet.trace.n_thresholds, res.trace.n_thresholds)
    inner = res.trace.ev_kind == 0
    assert inner.sum() == 6 and (quiet.trace.ev_kind == 0).sum() == 0
    # the odd vector: no coordinates counted; the cut on T: the smallest entry of T left,
    # placed after the pass sub.grad charged (n component gradients)
    np.testing.assert_array_equal(res.trace.ev_in[inner], [0, 0] * 3)
    np.testing.assert_array_equal(res.trace.ev_out[inner], [0, 1] * 3)
    np.testing.assert_array_equal(res.trace.ev_step[inner], [0, prob.n] * 3)


def test_a_plugins_work_sets_its_steps_on_the_timeline(prob):
    """A step 5 that does 20 passes of work (GD-SP: 20 ``sub.grad`` calls) spans 20 n
    component gradients per iteration on the timeline's step axis: its closing H_s sits at
    the end of its iteration there, as on the pass axis."""
    rv.register_method("gd20", subsolver=gd_on_T, eta=0.01)
    try:
        res = rv.solve(prob, "gd20", s=6, max_iter=3, tol=0, ftol=0, warn=False)
    finally:
        rv.unregister_method("gd20")
    tr = res.trace
    assert tr.meta["steps_per_iter"] == 20 * prob.n
    np.testing.assert_array_equal(tr.inner_steps[1:], [20 * prob.n] * 3)
    pos, kind = analysis.event_positions(tr, "steps")
    np.testing.assert_array_equal(pos[kind == 1], [20 * prob.n * t for t in (1, 2, 3)])
    pos, kind = analysis.event_positions(tr, "passes")
    np.testing.assert_allclose(pos[kind == 1], tr.passes[1:])


def _assert_same_runs(prob, first, second):
    """Algorithm 1 with ``first`` and with ``second`` as step 5 (same step size, 4 outer
    iterations) makes the same iterates and objectives, bit for bit."""
    rv.register_method("first_step5", subsolver=first, eta=0.01)
    rv.register_method("second_step5", subsolver=second, eta=0.01)
    try:
        a = rv.solve(prob, "first_step5", s=6, max_iter=4, tol=0, ftol=0, warn=False)
        b = rv.solve(prob, "second_step5", s=6, max_iter=4, tol=0, ftol=0, warn=False)
    finally:
        rv.unregister_method("first_step5")
        rv.unregister_method("second_step5")
    np.testing.assert_array_equal(a.trace.objective, b.trace.objective)
    np.testing.assert_array_equal(a.x, b.x)


def test_b_on_all_coordinates_is_zeroed_outside_T(prob):
    """Returning a length-d b is Algorithm 1's b with b|_{T^c} = 0: garbage outside T has no
    effect."""
    def on_T(sub):
        return sub.x0 - sub.eta * sub.g

    def on_d(sub):
        b = np.full(sub.d, 1e6)  # huge entries outside T would win H_s if they were kept
        b[sub.T] = sub.x0 - sub.eta * sub.g
        return b

    _assert_same_runs(prob, on_T, on_d)


def _mutators():
    def flip_labels(sub):
        sub.y *= -1

    def write_columns(sub):
        W = sub.W
        (W.data if sp.issparse(W) else W)[...] = 0.0

    def write_problem(sub):
        W = sub.problem.W
        if sp.issparse(W):
            W.data[0] = 1e9
        else:
            W[0, 0] = 1e9

    def write_problem_y(sub):
        sub.problem.y[:] = 0.0

    def write_csr_structure(sub):
        W = sub.problem.W
        if sp.issparse(W):
            W.indices[0] = 1
        else:
            W[:, 0] = 0.0

    def write_T(sub):  # Algorithm 1 reads T after step 5
        sub.T[0] = sub.T[-1]

    return [flip_labels, write_columns, write_problem, write_problem_y, write_csr_structure,
            write_T]


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("mutate", _mutators(), ids=lambda f: f.__name__)
def test_a_mutating_plugin_cannot_change_the_callers_data(prob, mutate, sparse):
    p = rv.Problem(sp.csr_matrix(prob.W), prob.y.copy(), x_true=prob.x_true) if sparse \
        else rv.Problem(prob.W.copy(), prob.y.copy(), x_true=prob.x_true)
    W0 = p.W.copy()
    y0 = p.y.copy()

    def plugin(sub):
        mutate(sub)
        return sub.x0

    rv.register_method("mutant", subsolver=plugin)
    try:
        with pytest.raises(ValueError, match="read-only"):
            rv.solve(p, "mutant", s=6, max_iter=2, warn=False)
    finally:
        rv.unregister_method("mutant")
    np.testing.assert_array_equal(p.y, y0)
    if sparse:
        assert (p.W != W0).nnz == 0
        np.testing.assert_array_equal(p.W.indices, W0.indices)
    else:
        np.testing.assert_array_equal(p.W, W0)


def test_a_plugin_that_edits_its_copies_or_rebinds_changes_nothing_outside(prob):
    """Vectors are copies, and rebinding sub.problem's arrays only changes the view."""
    y0 = prob.y.copy()

    def clean(sub):
        return sub.x0 - sub.eta * sub.grad(sub.x0)

    def messy(sub):
        b = sub.x0 - sub.eta * sub.grad(sub.x0)  # the next iteration's sub sees none of it
        sub.x0[:] = 0.0
        sub.g[:] = 1.0
        sub.x_hat[:] = 5.0
        sub.g_full *= 2.0
        sub.snap_dloss[:] = 0.0
        sub.problem.y = np.zeros(sub.n)  # a new array on the view, not on prob
        sub.problem.W = np.zeros((sub.n, sub.d))
        return b

    _assert_same_runs(prob, clean, messy)
    np.testing.assert_array_equal(prob.y, y0)


def test_hard_threshold_is_documented_for_step_5():
    doc = rv.hard_threshold.__doc__
    assert "step-5 solver" in doc and "sub.T" in doc
    np.testing.assert_array_equal(rv.hard_threshold([0.5, -3.0, 2.0, 2.0], 2),
                                  [0.0, -3.0, 2.0, 0.0])


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
    # the gradient + the exact fit charged by the work rule (test_exact checks the count):
    # at least the restricted gradient at the warm start, whole passes
    dp = np.diff(res.trace.passes)
    assert np.all(dp >= 2.0) and np.all(dp % 1 == 0)


def test_htp_converges_to_a_fixed_point(prob):
    res = rv.solve(prob, "htp", s=6)
    assert res.success and "relative change" in res.message
    assert res.rel_error < 0.05
