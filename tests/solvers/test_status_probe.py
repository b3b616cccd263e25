"""The end-of-run minimiser probe: a least-squares run that stopped on a support one GraSP step
leaves is not CONVERGED (``HT_FIXED_POINT``), on correlated designs too; runs that end at a
minimiser's support stay CONVERGED; the probe's work is counted by the work rule and kept apart
from the run's passes."""

from __future__ import annotations

import warnings

import numpy as np
import numpy_reference as reference
import pytest

import rgrasp_viz as rv
from rgrasp_viz.exceptions import ConvergenceWarning
from rgrasp_viz.solvers._driver import SUPPORT_FACTOR, minimiser_probe
from rgrasp_viz.solvers._status import Status


def _quick(setting, seed):
    """The ``--quick`` synthetic problem of ``reproduce`` (setting 2: equicorrelated 0.1)."""
    return rv.make_regression(n=500, d=1000, s_star=50, correlation=0.1 if setting == 2 else 0.0,
                              random_state=seed)


def _svrght(prob, factor, seed):
    s = prob.default_s
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return rv.solve(prob, "svrght", s=s, eta=factor * rv.default_eta(prob, "svrght", s),
                        random_state=seed)


def _old_probe_ratio(prob, x, s):
    """``F(x)`` over the best of the former check (one FG-HT step of size ``1/rho(2s)``, ``H_s``,
    lstsq on its support; lstsq on ``supp(x)``), in NumPy."""
    def fit(S):
        z = np.zeros(prob.d)
        z[S] = np.linalg.lstsq(prob.W[:, S], prob.y, rcond=None)[0]
        return prob.objective(z)

    eta = rv.default_eta(prob, "fght", s)
    S = np.flatnonzero(reference.hard_threshold_ref(x - eta * prob.gradient(x), s))
    return prob.objective(x) / min(fit(S), fit(np.flatnonzero(x)))


def test_svrght_at_half_its_step_on_quick_setting_2_is_not_converged():
    """The issue's example: setting 2 quick, seed 0, SVRGHT at 0.5x its default step stopped
    CONVERGED at 226x the best objective of its sweep, 30 of 50 true coordinates."""
    prob = _quick(2, 0)
    s = prob.default_s
    with pytest.warns(ConvergenceWarning, match="HT_FIXED_POINT: fixed point of hard "
                                                   "thresholding, not a minimiser"):
        res = rv.solve(prob, "svrght", s=s, eta=0.5 * rv.default_eta(prob, "svrght", s),
                       random_state=0)
    assert res.status == Status.HT_FIXED_POINT and not res.success
    assert res.rel_error > 0.3
    # the support froze: the method's own short steps no longer change it
    np.testing.assert_array_equal(np.flatnonzero(res.trace.x(-1)),
                                  np.flatnonzero(res.trace.x(-4)))
    # the former check (one FG-HT step of size 1/rho(2s)) did not leave this support on the
    # correlated design; one GraSP step does, by far
    assert _old_probe_ratio(prob, res.x, s) < 2
    F_probe, F_own, S = reference.minimiser_probe_squares(prob.W, prob.y, res.x, s)
    assert F_own > 10 * F_probe
    # the message says why, with the numbers of the NumPy reference
    assert "one GraSP step from them" in res.message
    assert f"reaches F = {F_probe:.6g}" in res.message
    kept = int(np.isin(S, np.flatnonzero(res.x)).sum())
    assert f"sharing {kept} of its {s} columns" in res.message
    assert "may be too small" in res.message  # a step the user gave: named as the cause


@pytest.mark.parametrize("setting, seed, factor", [(2, 1, 0.25), (2, 1, 0.5), (2, 1, 1.0),
                                                   (1, 1, 1.0)])
def test_svrght_frozen_supports_of_the_sweep_are_not_converged(setting, seed, factor):
    """The other SVRGHT runs of the quick sweep (steps 0.25-4x, seeds 0-1) that stopped
    CONVERGED 1.3-2.6x above the best objective of their sweep."""
    prob = _quick(setting, seed)
    res = _svrght(prob, factor, seed)
    F_probe, F_own, _ = reference.minimiser_probe_squares(prob.W, prob.y, res.x,
                                                          prob.default_s)
    assert F_own > SUPPORT_FACTOR * F_probe
    assert res.status == Status.HT_FIXED_POINT and not res.success, res.message
    if factor == 1.0:  # the default rule's step: the message does not blame the user's step
        default = rv.solve(prob, "svrght", s=prob.default_s, random_state=seed, warn=False)
        assert default.trace.meta["eta"] == res.trace.meta["eta"]
        assert default.status == Status.HT_FIXED_POINT
        assert "at the default step size" in default.message


@pytest.mark.parametrize("method, factor", [("fght", 2.0), ("svrgsp+", 1.0), ("svrgsp", 0.5),
                                            ("svrght", 1.0)])
def test_runs_that_end_at_a_minimisers_support_stay_converged(method, factor):
    """On the same correlated design (setting 2 quick, seed 0), runs that stop within a few
    percent of the best objective are not flagged: the probe finds nothing materially lower."""
    prob = _quick(2, 0)
    s = prob.default_s
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = rv.solve(prob, method, s=s, eta=factor * rv.default_eta(prob, method, s),
                       random_state=0)
    assert res.status == Status.CONVERGED and res.success, res.message
    F_probe, F_own, _ = reference.minimiser_probe_squares(prob.W, prob.y, res.x, s)
    assert F_own <= SUPPORT_FACTOR * F_probe
    assert res.rel_error < 0.02


def test_the_probe_is_recorded_and_kept_apart_from_the_runs_passes():
    prob = _quick(2, 0)
    s = prob.default_s
    res = rv.solve(prob, "fght", s=s, eta=2 * rv.default_eta(prob, "fght", s), random_state=0)
    check = res.trace.meta["minimiser_check"]
    F_probe, F_own, _ = reference.minimiser_probe_squares(prob.W, prob.y, res.x, s)
    np.testing.assert_allclose([check["F_probe"], check["F_support"]], [F_probe, F_own],
                               rtol=1e-9)
    # work rule: the gradient at x (1 pass) and three exact fits (at least 1 pass each)
    assert check["passes"] >= 4 and float(check["passes"]).is_integer()
    assert check["time"] >= 0
    # the run's passes are its iterations' (the probe did not move the iterate)
    assert res.passes == res.trace.passes[-1]
    # a run stopped by a budget, and a logistic run, are not probed
    capped = rv.solve(prob, "fght", s=s, max_iter=3, warn=False)
    assert capped.status == Status.MAX_ITER and capped.trace.meta["minimiser_check"] is None
    clf = rv.make_classification(n=200, d=300, s_star=5, random_state=0)
    logistic = rv.solve(clf, "fght", s=6, random_state=0, warn=False)
    assert logistic.trace.meta["minimiser_check"] is None


def test_the_probe_keeps_always_select_columns():
    """With ``always_select``, the probe's pruning keeps the forced columns (like every
    thresholding), so a forced column never makes a run look frozen."""
    prob = _quick(2, 0)
    s = prob.default_s
    forced = [int(np.flatnonzero(prob.x_true == 0)[0])]  # a column the truth does not use
    res = rv.solve(prob, "fght", s=s, eta=2 * rv.default_eta(prob, "fght", s),
                   random_state=0, always_select=forced, warn=False)
    probe = minimiser_probe(prob, res.x, s, np.array(forced))
    assert forced[0] in probe["support"] and len(probe["support"]) == s + 1
    assert res.status in (Status.CONVERGED, Status.HT_FIXED_POINT)
    assert res.trace.meta["minimiser_check"]["F_probe"] == pytest.approx(probe["F_probe"])


def _frozen_htp_problem():
    """Columns in blocks of 10 sharing a factor (correlation 0.8): HTP at its default step
    freezes on a support one GraSP step leaves (n = 200, d = 100, 10 true coordinates)."""
    rng = np.random.default_rng(1)
    Z = rng.standard_normal((200, 100))
    F = rng.standard_normal((200, 11))
    W = np.sqrt(0.2) * Z + np.sqrt(0.8) * np.repeat(F, 10, axis=1)[:, :100]
    beta = np.zeros(100)
    beta[rng.choice(100, 10, replace=False)] = rng.uniform(-1, 1, 10)
    return rv.Problem(W, W @ beta + rng.standard_normal(200))


def test_a_run_without_the_probe_is_the_same_run_without_its_verdict():
    """``without_minimiser_probe`` leaves the run alone (iterates, best iterate, trace rows)
    and drops only the probe: the status the probe gives, its warning and its record."""
    from rgrasp_viz.solvers._driver import without_minimiser_probe

    prob = _frozen_htp_problem()
    with pytest.warns(ConvergenceWarning, match="HT_FIXED_POINT"):
        probed = rv.solve(prob, "htp", s=10)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        with without_minimiser_probe():
            plain = rv.solve(prob, "htp", s=10)
    assert probed.status == Status.HT_FIXED_POINT
    assert plain.status == Status.CONVERGED and plain.success
    assert probed.trace.meta["minimiser_check"] is not None
    assert plain.trace.meta["minimiser_check"] is None
    np.testing.assert_array_equal(plain.x, probed.x)
    np.testing.assert_array_equal(plain.x_best, probed.x_best)
    for key in ("objective", "passes", "support_size", "n_entered", "support_idx"):
        np.testing.assert_array_equal(plain.trace.arrays[key], probed.trace.arrays[key])
    # the block ends the switch, also when it is left by an exception
    with pytest.raises(RuntimeError), without_minimiser_probe():
        raise RuntimeError
    with pytest.warns(ConvergenceWarning, match="HT_FIXED_POINT"):
        assert rv.solve(prob, "htp", s=10).status == Status.HT_FIXED_POINT
