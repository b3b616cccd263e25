"""Faithful defaults and honest statuses: the paper's Algorithm 2 by default (so ``m``
matters), named statuses, no progress is not success, a run that ends above ``F(x0)`` has
diverged whatever stopped it, default step sizes never diverge, degenerate data is named."""

from __future__ import annotations

import warnings

import numpy as np
import numpy_reference as reference
import pytest
import scipy.sparse as sp

import rgrasp_viz as rv
from rgrasp_viz.exceptions import ConvergenceWarning
from rgrasp_viz.solvers._status import MESSAGES, Status


def problems():
    return [rv.make_regression(n=200, d=400, s_star=8, random_state=1),
            rv.make_regression(n=300, d=600, s_star=10, correlation=0.1, random_state=2),
            rv.make_classification(n=400, d=300, s_star=6, random_state=3)]


# -- the paper's Algorithm 2 is the default, and m matters -------------------------------------


@pytest.mark.parametrize("k", range(3))
def test_default_reading_is_the_papers_and_m_changes_the_run(k):
    prob = problems()[k]
    s = prob.default_s
    runs = {m: rv.solve(prob, "svrgsp+", s=s, m=m, random_state=0, max_iter=6, tol=0, ftol=0,
                        warn=False) for m in (1, 6, 30)}
    plain = rv.solve(prob, "svrgsp", s=s, random_state=0, max_iter=6, tol=0, ftol=0,
                     warn=False)
    assert all(r.trace.meta["inner"] == "paper" for r in [*runs.values(), plain])
    objs = [r.trace.objective for r in runs.values()]
    for i in range(len(objs)):
        for j in range(i + 1, len(objs)):
            assert not np.allclose(objs[i], objs[j], rtol=1e-9), (i, j)
    # the paper's m = 6 differs from SVRGSP (m = 1 cuts only after the last inner step,
    # where Algorithm 1's H_s on T follows anyway, so it may coincide with SVRGSP)
    assert not np.allclose(runs[6].trace.objective, plain.trace.objective, rtol=1e-9)
    # SVRGSP+ thresholds inside the epoch, SVRGSP never does
    assert runs[30].trace.n_thresholds[-1] > runs[6].trace.n_thresholds[-1] > \
        plain.trace.n_thresholds[-1] == 6


def test_on_T_variant_makes_m_irrelevant_and_is_labelled():
    prob = problems()[0]
    runs = [rv.solve(prob, "svrgsp+", s=10, m=m, inner="on_T", random_state=0, max_iter=5,
                     tol=0, ftol=0, warn=False) for m in (1, 6, 30)]
    plain = rv.solve(prob, "svrgsp", s=10, inner="on_T", random_state=0, max_iter=5, tol=0,
                     ftol=0, warn=False)
    for r in runs:
        for t in range(r.nit + 1):  # same supports, same objective
            np.testing.assert_array_equal(r.trace.support(t), plain.trace.support(t))
        np.testing.assert_allclose(r.trace.objective, plain.trace.objective, rtol=1e-12)
    assert rv.solvers.run_label("svrgsp+", runs[0].trace.meta["inner"]) == "SVRGSP+ (on T)"
    assert rv.solvers.run_label("svrgsp+", "paper") == "SVRGSP+"
    assert rv.solvers.run_label("fght", "on_T") == "FG-HT"  # no reading: no mark


def test_older_reading_names_are_accepted_and_others_rejected():
    prob = problems()[0]
    a = rv.solve(prob, "svrgsp", s=10, inner="full", max_iter=2, random_state=0, warn=False)
    b = rv.solve(prob, "svrgsp", s=10, inner="restricted", max_iter=2, random_state=0,
                 warn=False)
    assert a.trace.meta["inner"] == "paper" and b.trace.meta["inner"] == "on_T"
    with pytest.raises(ValueError, match="inner must be 'paper'"):
        rv.solve(prob, "svrgsp", s=10, inner="T")


@pytest.mark.parametrize("name, setting", [("classroom", "classroom"),
                                           ("setting 1, quick", dict(n=500, d=1000, s_star=50)),
                                           ("setting 2, quick",
                                            dict(n=500, d=1000, s_star=50, correlation=0.1))])
@pytest.mark.parametrize("inner", ["paper", "on_T"])
@pytest.mark.parametrize("method", ["svrgsp", "svrgsp+"])
def test_both_readings_converge_with_their_default_steps(name, setting, inner, method):
    prob = (rv.make_regression(setting, random_state=0) if isinstance(setting, str)
            else rv.make_regression(**setting, random_state=0))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = rv.solve(prob, method, inner=inner, random_state=0)
    # converged, or (keeping on swapping noise coordinates, s = 1.2 s*) honestly "stalled"
    # at the noise floor -- never diverged, never a halved step
    assert res.status in (Status.CONVERGED, Status.STALLED), res.message
    # a STALLED run says so with a warning; a converged one is silent
    said = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    if res.status == Status.CONVERGED:
        assert said == [], said
    else:
        assert len(said) == 1 and "STALLED" in said[0], said
    assert res.trace.meta["eta_halvings"] == 0
    assert res.rel_error < 0.03, res.rel_error


# -- named statuses --------------------------------------------------------------------------------


def test_status_is_a_named_enum_with_one_message_table():
    prob = problems()[0]
    res = rv.solve(prob, "fght", s=10)
    assert isinstance(res.status, Status) and res.status is Status.CONVERGED
    assert res.success is True and res.trace.meta["status_name"] == "CONVERGED"
    assert [s.value for s in Status] == [0, 1, 2, 3, 4, 5, 6, 99]
    assert {s for s in Status if s.success} == {Status.CONVERGED}
    assert Status.MAX_ITER in MESSAGES and Status.NO_PROGRESS in MESSAGES
    assert all(isinstance(s.description, str) and s.description for s in Status)
    assert "not converged" in Status.STALLED.description


def test_no_progress_is_not_success():
    prob = rv.make_regression("classroom", random_state=0)
    with pytest.warns(ConvergenceWarning, match="NO_PROGRESS: no progress"):
        res = rv.solve(prob, "fght", s=24, eta=1e-8)
    assert res.status == Status.NO_PROGRESS and not res.success
    assert res.message.startswith("no progress") and "step size may be too small" in res.message
    assert res.rel_error > 0.99


def test_pass_budget_is_a_status():
    prob = problems()[0]
    res = rv.solve(prob, "svrgsp+", s=10, max_passes=7, tol=0, ftol=0, random_state=0,
                   warn=False)
    assert res.status == Status.MAX_PASSES and not res.success
    assert res.passes >= 7 > res.trace.passes[-2]
    assert "pass budget" in res.message
    with pytest.raises(ValueError, match="max_passes"):
        rv.solve(prob, "fght", s=10, max_passes=0)


def _blow_up(**kwargs):
    """SVRGSP+ on T with a step a few times too large: the objective jumps far above F(x0)
    and then hovers there (a bounded blow-up)."""
    prob = rv.make_regression(n=200, d=300, s_star=10, random_state=0)
    eta = 8 * rv.default_eta(prob, "svrgsp+", 12, inner="on_T")
    return rv.solve(prob, "svrgsp+", s=12, eta=eta, inner="on_T", random_state=0,
                    warn=False, **kwargs)


@pytest.mark.parametrize("stop", ["callback", "max_passes", "max_iter"])
def test_ending_above_the_start_is_divergence_whatever_stopped_it(stop):
    def cb(info):
        if info.nit >= 3:
            raise StopIteration

    kwargs = {"callback": dict(callback=cb), "max_passes": dict(max_passes=9.0),
              "max_iter": dict(max_iter=3)}[stop]
    res = _blow_up(**kwargs)
    assert res.trace.objective[-1] > res.trace.objective[0]
    assert res.status == Status.DIVERGED and "rose" in res.message


def test_svrght_above_its_default_step_stopped_by_callback_is_divergence():
    prob = rv.make_regression("classroom", random_state=0)
    eta = 1.5 * rv.default_eta(prob, "svrght", 24)

    def cb(info):
        if info.nit >= 4:
            raise StopIteration

    res = rv.solve(prob, "svrght", s=24, eta=eta, callback=cb, random_state=0, warn=False)
    if res.fun > res.trace.objective[0]:
        assert res.status == Status.DIVERGED
    else:
        assert res.status == Status.CALLBACK


# -- converged means near the method's own optimum ------------------------------------------------


def _breast_cancer():
    datasets = pytest.importorskip("sklearn.datasets")
    X, y = datasets.load_breast_cancer(return_X_y=True)  # shipped with scikit-learn
    X = (X - X.mean(0)) / X.std(0)
    return rv.Problem(X, np.where(y == 1, 1.0, -1.0), loss="logistic", name="breast cancer")


@pytest.mark.parametrize("case", ["breast-cancer", "classroom", "classification"])
@pytest.mark.parametrize("method, inner", [("svrgsp", "paper"), ("svrgsp+", "paper"),
                                           ("svrgsp", "on_T"), ("fght", "paper"),
                                           ("svrght", "paper"), ("sght", "paper"),
                                           ("grasp", "paper")])
def test_a_converged_run_ends_within_1_percent_of_a_10x_budget(case, method, inner):
    """A run reported as converged ends within 1 % of the loss the same method reaches with
    10x the budget and no stopping rule; otherwise its status says it has not converged (on a
    small real data set, logistic loss, s = 5, the stochastic methods hover on a plateau
    before a support change lowers the loss by 10-30 %)."""
    prob, s = {"breast-cancer": (_breast_cancer, 5),
               "classroom": (lambda: rv.make_regression("classroom", random_state=0), 24),
               "classification": (lambda: rv.make_classification(n=300, d=800, s_star=8,
                                                                 random_state=2), 10)}[case]
    prob = prob()
    res = rv.solve(prob, method, s=s, inner=inner, random_state=0, warn=False)
    if res.status != Status.CONVERGED:
        assert res.status in (Status.STALLED, Status.MAX_ITER, Status.HT_FIXED_POINT), \
            res.message
        assert not res.success
        return
    long = rv.solve(prob, method, s=s, inner=inner, random_state=0, warn=False, tol=0,
                    ftol=0, max_iter=10 * res.trace.meta["max_iter"],
                    max_passes=10 * res.passes)
    assert res.fun <= 1.01 * long.fun, (res.fun, long.fun)


def test_stalled_is_reported_with_the_hover():
    with pytest.warns(ConvergenceWarning, match="STALLED: stalled"):
        res = rv.solve(_breast_cancer(), "svrgsp", s=5, inner="on_T", random_state=0)
    assert res.status == Status.STALLED and not res.success
    assert res.message.startswith("stalled") and "not converged" in res.message


# -- the default step size never diverges ------------------------------------------------------


@pytest.mark.parametrize("n, d, s_star, seed", [(50, 100, 3, 0), (50, 100, 3, 1),
                                                (80, 200, 5, 2), (100, 300, 8, 3),
                                                (60, 150, 4, 4)])
@pytest.mark.parametrize("method", ["svrght", "sght", "fght", "svrgsp", "svrgsp+", "htp"])
def test_default_step_never_diverges_on_small_problems(method, n, d, s_star, seed):
    prob = rv.make_regression(n=n, d=d, s_star=s_star, random_state=seed)
    res = rv.solve(prob, method, random_state=seed, warn=False)
    assert res.status != Status.DIVERGED, res.message
    meta = res.trace.meta
    assert meta["eta"] == pytest.approx(meta["eta_initial"] / 2 ** meta["eta_halvings"])
    assert res.trace.passes[0] == meta["safeguard_passes"]
    assert (meta["safeguard_passes"] > 0) == (meta["eta_halvings"] > 0)


def test_safeguard_halves_svrght_on_the_issue_example():
    prob = rv.make_regression(n=50, d=100, s_star=3, random_state=0)
    res = rv.solve(prob, "svrght", random_state=0)
    assert res.status == Status.CONVERGED and res.trace.meta["eta_halvings"] >= 1
    # the abandoned attempts' work is counted: the run starts after it
    assert res.trace.passes[0] > 0 and res.passes > res.trace.passes[0]
    # a generator is rewound for the restart: same run as with the seed
    gen = rv.solve(prob, "svrght", random_state=np.random.default_rng(0))
    assert gen.trace.meta["eta_halvings"] == res.trace.meta["eta_halvings"]


def test_a_step_the_user_gives_is_never_changed():
    prob = rv.make_regression(n=50, d=100, s_star=3, random_state=0)
    eta = rv.default_eta(prob, "svrght", 4)
    res = rv.solve(prob, "svrght", s=4, eta=eta, random_state=0, warn=False)
    assert res.trace.meta["eta"] == eta and res.trace.meta["eta_halvings"] == 0
    assert res.trace.meta["eta_rule"] == "user"


# -- degenerate data ----------------------------------------------------------------------


@pytest.mark.parametrize("sparse", [False, True])
def test_all_zero_design_is_named(sparse):
    W = np.zeros((20, 30))
    prob = rv.Problem(sp.csr_matrix(W) if sparse else W, np.ones(20))
    with pytest.raises(ValueError, match="W is all zeros"):
        rv.solve(prob, "svrgsp+", s=3)
    with pytest.raises(ValueError, match="W is all zeros"):
        rv.default_eta(prob, "fght", 3)
    # with a step of one's own: nothing moves, and the status says so
    with pytest.warns(ConvergenceWarning, match="NO_PROGRESS"):
        res = rv.solve(prob, "fght", s=3, eta=0.1)
    assert res.status == Status.NO_PROGRESS and "fixed point" in res.message


@pytest.mark.parametrize("scale, word", [(1e155, "too large"), (1e-160, "too small")])
@pytest.mark.parametrize("sparse", [False, True])
def test_extreme_scale_is_named(scale, word, sparse):
    base = rv.make_regression(n=40, d=60, s_star=3, random_state=0)
    W = base.W * scale
    prob = rv.Problem(sp.csr_matrix(W) if sparse else W, base.y)
    with pytest.raises(ValueError, match=f"entries of W are {word}.*rescale"):
        rv.solve(prob, "svrgsp", s=4)


# -- statuses that speak up ---------------------------------------------------------------------


def _no_convergence_warning(**kwargs):
    """solve(...) with every ConvergenceWarning turned into an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        return rv.solve(**kwargs)


def _diverging():
    prob = problems()[0]
    return dict(problem=prob, method="svrght", s=10, random_state=0,
                eta=1e3 * rv.default_eta(prob, "svrght", 10))


def test_diverged_warns_and_warn_false_silences_it():
    with pytest.warns(ConvergenceWarning, match="svrght: DIVERGED: diverged"):
        res = rv.solve(**_diverging())
    assert res.status == Status.DIVERGED
    quiet = _no_convergence_warning(**_diverging(), warn=False)
    assert quiet.status == Status.DIVERGED and quiet.message == res.message


def test_a_diverged_grasp_does_not_return_silently():
    prob = rv.make_classification(n=500, d=1000, s_star=20, random_state=1)
    with pytest.warns(ConvergenceWarning, match="grasp: DIVERGED") as rec:
        res = rv.solve(prob, "grasp", random_state=0, ftol=0)
    assert res.status == Status.DIVERGED and not res.success
    assert "GraSP has no step size" in str(rec[0].message)


def test_stalled_and_no_progress_are_silenced_by_warn_false():
    prob = rv.make_regression("classroom", random_state=0)
    res = _no_convergence_warning(problem=prob, method="fght", s=24, eta=1e-8, warn=False)
    assert res.status == Status.NO_PROGRESS
    res = _no_convergence_warning(problem=rv.make_classification(n=500, d=1000, s_star=20,
                                                                 random_state=1),
                                  method="grasp", random_state=0, warn=False)
    assert res.status == Status.STALLED


@pytest.mark.parametrize("budget", ["max_iter", "max_passes"])
@pytest.mark.parametrize("method", ["fght", "svrgsp+"])
def test_a_tiny_step_is_named_as_the_likely_cause(method, budget):
    """1e-4 x the default step: the run ends at its budget having hardly moved F; the message
    and the warning say the step size is the likely cause."""
    prob = rv.make_regression("classroom", random_state=0)
    eta = 1e-4 * rv.default_eta(prob, method, 24)
    kwargs = {"max_iter": dict(max_iter=20), "max_passes": dict(max_passes=20)}[budget]
    with pytest.warns(ConvergenceWarning, match="step size eta=.* is likely too small"):
        res = rv.solve(prob, method, s=24, eta=eta, random_state=0, **kwargs)
    assert res.status == (Status.MAX_ITER if budget == "max_iter" else Status.MAX_PASSES)
    moved = 1 - res.fun / res.trace.objective[0]
    assert 0 < moved < 0.1
    assert f"moved by only {moved:.2%}" in res.message and "likely too small" in res.message
    quiet = _no_convergence_warning(problem=prob, method=method, s=24, eta=eta,
                                    random_state=0, warn=False, **kwargs)
    assert quiet.message == res.message
    # the default step moves F a lot within the same budget: no hint, and a budget that
    # runs out is no warning of its own
    fine = _no_convergence_warning(problem=prob, method=method, s=24, random_state=0,
                                   max_passes=20)
    assert "likely too small" not in fine.message


def _spurious_fixed_point():
    """SVRGHT with 0.3 x its default step: on this problem it stops at a support that is a
    fixed point of its (small) hard-thresholding steps, far from the best one."""
    prob = rv.make_regression(n=300, d=600, s_star=12, random_state=0)
    s = prob.default_s
    return dict(problem=prob, method="svrght", s=s, random_state=0,
                eta=0.3 * rv.default_eta(prob, "svrght", s))


def test_a_fixed_point_of_hard_thresholding_is_flagged_not_converged():
    with pytest.warns(ConvergenceWarning, match="HT_FIXED_POINT: fixed point of hard "
                                                   "thresholding, not a minimiser"):
        res = rv.solve(**_spurious_fixed_point())
    assert res.status == Status.HT_FIXED_POINT and not res.success
    assert "may be too small" in res.message
    prob = _spurious_fixed_point()["problem"]
    # the iterates did stop (a fixed point) ...
    np.testing.assert_allclose(res.trace.x(-1), res.trace.x(-2), rtol=0, atol=1e-6)
    # ... but one GraSP step from there (NumPy here: 2s gradient entries merged with the
    # support, lstsq, pruned to s, lstsq) lowers F below the fit on the run's own support by
    # more than SUPPORT_FACTOR: what the message reports
    F_probe, F_own, _ = reference.minimiser_probe_squares(prob.W, prob.y, res.x,
                                                          res.trace.meta["s"])
    assert F_own > 1.2 * F_probe
    assert f"reaches F = {F_probe:.6g}" in res.message
    assert f"(F = {F_own:.6g})" in res.message
    check = res.trace.meta["minimiser_check"]
    np.testing.assert_allclose([check["F_probe"], check["F_support"]], [F_probe, F_own],
                               rtol=1e-9)
    assert check["passes"] >= 3
    quiet = _no_convergence_warning(**_spurious_fixed_point(), warn=False)
    assert quiet.status == Status.HT_FIXED_POINT
    # the default step on the same problem converges to a minimiser, not flagged
    kwargs = _spurious_fixed_point()
    del kwargs["eta"]
    good = _no_convergence_warning(**kwargs)
    assert good.status == Status.CONVERGED and good.success


@pytest.mark.slow
def test_svrght_at_half_its_step_on_setting_1_is_flagged():
    """The issue's example: SVRGHT at 0.5 x its default step on setting 1 stopped
    CONVERGED at relative error 0.20."""
    prob = rv.make_regression(1, random_state=0)
    s = prob.default_s
    res = rv.solve(prob, "svrght", s=s, eta=0.5 * rv.default_eta(prob, "svrght", s),
                   random_state=0, warn=False)
    assert res.status == Status.HT_FIXED_POINT and not res.success
    assert res.rel_error > 0.1
