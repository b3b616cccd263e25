"""Statistical recovery: with default step sizes and iteration limits, the methods of the paper
recover a sparse ground truth.

Bounds are derived from the data, not from the solver's output:

* noiseless data (``noise_var=0``): the global minimiser is ``x*`` itself, so recovery is a
  pure optimisation question -- the relative error must be tiny and the whole support found;
* noisy data (the paper's sigma^2 = 0.01): no estimator beats the *oracle* least-squares fit
  on the true support, whose error we compute here independently.  An s-sparse estimator with
  s = 1.2 s* fits s - s* extra noise directions (and GraSP / SVRGSP prune instead of
  refitting), so we allow 3x the oracle error; a wrong support gives 15-45x.  With n = 500
  the oracle error is 0.006-0.009, so the ``rel_error <= 1e-2`` of the paper's plots is not
  statistically attainable at s = 60 for these sizes and is only required without noise;
* support: every *detectable* true coordinate must be selected -- those with
  ``|x*_j| >= 0.04``, about 9 noise standard deviations (sigma / sqrt(n) ~ 0.0045).  The
  uniform draw of x* sometimes produces entries such as 0.0007 that no estimator can
  distinguish from noise; requiring those would test luck, not the solvers.

Seeds are fixed and never dropped.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.special import expit

import rgrasp_viz as rv
from rgrasp_viz.exceptions import ConvergenceWarning

METHODS = tuple(m for m in rv.method_names() if m != "sght") + ("svrgsp|on_T", "svrgsp+|on_T")
"""Every registered method (SG-HT's plain stochastic steps stall at a noise floor above these
bounds) and our on-T variant of Algorithm 2 ("method|reading")."""
SEEDS = (0, 1, 2)
ORACLE_FACTOR = 3.0
DETECT_REG = 0.04


@functools.cache
def regression(seed, noise_var=0.01):
    return rv.make_regression(n=500, d=1000, s_star=50, noise_var=noise_var, random_state=seed)


@functools.cache
def classroom(seed):
    return rv.make_regression("classroom", random_state=seed)


@functools.cache
def classification(seed):
    return rv.make_classification(n=5000, d=500, s_star=10, signal=2.0, random_state=seed)


def oracle_ls_error(prob):
    """Relative error of least squares restricted to the true support (the best estimate)."""
    S = np.flatnonzero(prob.x_true)
    W = prob.W.toarray() if sp.issparse(prob.W) else prob.W
    coef = np.linalg.lstsq(W[:, S], prob.y, rcond=None)[0]
    x = np.zeros(prob.d)
    x[S] = coef
    return float(np.linalg.norm(x - prob.x_true) / np.linalg.norm(prob.x_true))


def oracle_logistic_error(prob):
    """Relative error of the logistic MLE restricted to the true support."""
    S = np.flatnonzero(prob.x_true)
    W, y = prob.W[:, S], prob.y

    def f(z):
        a = W @ z
        return (float(np.mean(np.logaddexp(0.0, -y * a))),
                -(W.T @ (y * expit(-y * a))) / len(y))

    z = minimize(f, np.zeros(len(S)), jac=True, method="BFGS", options={"gtol": 1e-10}).x
    x = np.zeros(prob.d)
    x[S] = z
    return float(np.linalg.norm(x - prob.x_true) / np.linalg.norm(prob.x_true))


def rel_error(x, x_true):
    return float(np.linalg.norm(x - x_true) / np.linalg.norm(x_true))


def solve(prob, method, s):
    method, _, inner = method.partition("|")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # max_iter is reported below
        return rv.solve(prob, method=method, s=s, random_state=0, inner=inner or "paper")


def missing(prob, x, threshold):
    """True coordinates with |x*_j| >= threshold that are not in supp(x)."""
    S = np.flatnonzero(np.abs(prob.x_true) >= threshold)
    return sorted(set(S.tolist()) - set(np.flatnonzero(x).tolist()))


def describe(res):
    return f"status={res.status} nit={res.nit} rel_error={res.rel_error:.3g} ({res.message})"


# -- scaled-down setting 1 (n=500, d=1000, s*=50, s=60) ---------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("method", METHODS)
def test_noiseless_setting1_exact_recovery(method, seed):
    prob = regression(seed, noise_var=0.0)
    res = solve(prob, method, s=60)
    err = rel_error(res.x, prob.x_true)
    assert err == pytest.approx(res.rel_error, rel=1e-9, abs=1e-15)
    assert err <= 1e-4, describe(res)  # far below the 1e-2 of the paper's plots
    assert set(np.flatnonzero(prob.x_true)) <= set(np.flatnonzero(res.x)), describe(res)
    assert np.count_nonzero(res.x) <= 60


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("method", METHODS)
def test_noisy_setting1_recovery(method, seed):
    prob = regression(seed)
    oracle = oracle_ls_error(prob)
    assert 0.003 < oracle < 0.02  # sanity of the data: sigma sqrt(s*/n) / ||x*||
    res = solve(prob, method, s=60)
    err = rel_error(res.x, prob.x_true)
    assert err <= ORACLE_FACTOR * oracle, f"oracle {oracle:.3g}; " + describe(res)
    assert missing(prob, res.x, DETECT_REG) == [], describe(res)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("method", METHODS)
def test_classroom_recovery(method, seed):
    prob = classroom(seed)
    oracle = oracle_ls_error(prob)
    res = solve(prob, method, s=24)
    err = rel_error(res.x, prob.x_true)
    assert err <= ORACLE_FACTOR * oracle, f"oracle {oracle:.3g}; " + describe(res)
    assert missing(prob, res.x, DETECT_REG) == [], describe(res)


@pytest.mark.parametrize("noise_var", [0.0, 0.01])
@pytest.mark.parametrize("method", ["svrgsp+", "svrght", "fght"])
def test_csr_input_recovers(method, noise_var):
    dense = regression(1, noise_var=noise_var)
    prob = rv.Problem(sp.csr_matrix(dense.W), dense.y, x_true=dense.x_true)
    assert prob.is_sparse
    res = solve(prob, method, s=60)
    err = rel_error(res.x, prob.x_true)
    if noise_var == 0.0:
        assert err <= 1e-4, describe(res)
        assert set(np.flatnonzero(prob.x_true)) <= set(np.flatnonzero(res.x)), describe(res)
    else:
        assert err <= ORACLE_FACTOR * oracle_ls_error(dense), describe(res)
        assert missing(prob, res.x, DETECT_REG) == [], describe(res)
    # the CSR kernels follow the same path as the dense ones (same seed, same indices)
    ref = solve(dense, method, s=60)
    assert err == pytest.approx(rel_error(ref.x, dense.x_true), rel=1e-3, abs=1e-9)


# -- sparse logistic regression -------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("method", METHODS)
def test_logistic_recovery(method, seed):
    """n = 5000, d = 500, s* = 10, nonzeros uniform on [-2, 2]; s = 12.

    (At n = 2000 with signal 3 the data are close to separable and even the exact MLE on a
    12-sparse support overshoots x* by 25-35%, so those sizes do not test the solvers.)
    """
    prob = classification(seed)
    oracle = oracle_logistic_error(prob)
    assert oracle < 0.1  # the problem is statistically well posed
    res = solve(prob, method, s=12)
    err = rel_error(res.x, prob.x_true)
    # The paper's SVRGSP moves z on all d coordinates for a whole epoch, i.e. it approximates
    # the *unconstrained* logistic fit, and only then cuts to T and to s entries: a less
    # accurate step 5 than the others (measured 0.24-0.37 here, against 0.09-0.17 for
    # SVRGSP+, whose m cuts per epoch keep z near |T| entries).
    bound = 0.45 if method == "svrgsp" else 0.3
    assert err <= bound, f"oracle {oracle:.3g}; " + describe(res)
    # per-coefficient MLE standard deviation is ~0.03 here: 0.25 is ~8 of them
    assert missing(prob, res.x, 0.25) == [], describe(res)
    assert res.fun < float(np.log(2.0))
