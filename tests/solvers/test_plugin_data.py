"""A registered step-5 solver (a plug-in) works on a
read-only copy of the data, which no route leads back from to the caller's arrays."""

import numpy as np
import pytest
import scipy.sparse as sp

import rgrasp_viz as rv
from rgrasp_viz.solvers import SubProblem
from rgrasp_viz.solvers._rgrasp import read_only_problem


def _reopen_flags(sub):
    """Make the arrays writable again through their flags, then write."""
    for a in (sub.problem.y, sub.y, sub.problem.W.data if sp.issparse(sub.problem.W)
              else sub.problem.W):
        a.setflags(write=True)
        a[...] = 0.0


def _through_base(sub):
    """Walk each array's ``.base`` chain and write into the first writable array on it."""
    W = sub.problem.W
    for a in (sub.problem.y, sub.y, W.data if sp.issparse(W) else W):
        b = a
        while isinstance(b, np.ndarray):
            if b.flags.writeable:
                b[...] = 0.0
                break
            try:
                b.setflags(write=True)
                b[...] = 0.0
                break
            except ValueError:
                b = b.base


@pytest.fixture
def prob():
    return rv.make_regression(n=60, d=40, s_star=3, random_state=0)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("route", [_reopen_flags, _through_base], ids=lambda f: f.__name__)
def test_a_plugin_cannot_reach_the_callers_data(prob, route, sparse):
    W = sp.csr_matrix(prob.W) if sparse else prob.W.copy()
    y = prob.y.copy()
    p = rv.Problem(W, y)
    assert p.W is W and p.y is y  # canonical input is stored as is: the caller's arrays
    W0, y0 = W.copy(), y.copy()
    errors = []

    def plugin(sub):
        try:
            route(sub)
        except ValueError as exc:  # refused: fine too, the point is what happens to W, y
            errors.append(exc)
        return sub.x0

    rv.register_method("reacher", subsolver=plugin)
    try:
        rv.solve(p, "reacher", s=6, max_iter=2, warn=False)
    finally:
        rv.unregister_method("reacher")
    np.testing.assert_array_equal(y, y0)
    if sparse:
        np.testing.assert_array_equal(W.data, W0.data)
        np.testing.assert_array_equal(W.indices, W0.indices)
    else:
        np.testing.assert_array_equal(W, W0)
    if route is _reopen_flags:
        assert errors and "WRITEABLE" in str(errors[0])


def _bases(a):
    """``a`` and the arrays of its ``.base`` chain."""
    out = []
    while isinstance(a, np.ndarray):
        out.append(a)
        a = a.base
    return out


def test_the_copy_is_made_once_and_shares_no_memory_with_the_caller(prob):
    ro = read_only_problem(prob)
    for mine, theirs in ((ro.W, prob.W), (ro.y, prob.y), (ro.x_true, prob.x_true)):
        np.testing.assert_array_equal(mine, theirs)
        assert not np.shares_memory(mine, theirs)
        assert all(b is not theirs for b in _bases(mine))
        with pytest.raises(ValueError):
            mine.setflags(write=True)
    again = read_only_problem(ro)  # a view of the same copy, no second copy
    assert np.shares_memory(again.W, ro.W) and np.shares_memory(again.y, ro.y)
    sub = SubProblem(ro, np.arange(4), np.zeros(4), np.zeros(4), 0.1,
                     np.random.default_rng(0), 2, 1)
    assert np.shares_memory(sub.problem.W, ro.W) and np.shares_memory(sub.y, ro.y)
    assert not np.shares_memory(sub.problem.W, prob.W)
