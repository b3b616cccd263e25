"""``rv.cuts_per_epoch``: the one formula for SVRGSP+'s number of ``H_|T|`` cuts per epoch, equal
to what the epoch kernels do."""

from __future__ import annotations

import numpy as np
import pytest

import rgrasp_viz as rv


@pytest.mark.parametrize("J, m", [(60, 6), (100, 6), (120, 7), (50, 50), (37, 1), (90, 20)])
def test_cuts_per_epoch_is_what_the_kernels_do(J, m):
    prob = rv.make_regression(n=50, d=80, s_star=3, random_state=0)
    res = rv.solve(prob, "svrgsp+", s=4, J=J, m=m, max_iter=3, tol=0, ftol=0,
                   random_state=0, warn=False)
    inner = res.trace.ev_kind == 0
    per_epoch = np.bincount(res.trace.ev_iter[inner], minlength=4)[1:]
    expected = J // -(-J // m)  # floor(J / ceil(J/m)), written out
    assert rv.cuts_per_epoch(J, m) == expected
    np.testing.assert_array_equal(per_epoch, [expected] * 3)
    # Algorithm 1's closing H_s: one more thresholding per outer iteration
    np.testing.assert_array_equal(np.diff(res.trace.n_thresholds), [expected + 1] * 3)


def test_cuts_per_epoch_is_m_only_when_m_divides_J():
    assert rv.cuts_per_epoch(60, 6) == 6
    assert rv.cuts_per_epoch(1000, 6) == 5  # every 167 steps
    assert rv.cuts_per_epoch(5000, 6) == 5  # setting 1, J = 2n
    assert rv.cuts_per_epoch(1000, 12) == 11
    assert all(rv.cuts_per_epoch(J, m) <= m for J in range(1, 80) for m in range(1, J + 1))


@pytest.mark.parametrize("J, m, exc", [(0, 1, ValueError), (10, 0, ValueError),
                                       (10, 11, ValueError), (10.0, 2, TypeError),
                                       (10, True, TypeError)])
def test_cuts_per_epoch_checks_its_arguments(J, m, exc):
    with pytest.raises(exc, match="J must|m must"):
        rv.cuts_per_epoch(J, m)
