"""The estimators' swap-score kernel (rgrasp_viz._kernels.swaps) against the NumPy
expression it fuses, bit for bit, including the entries it must not score."""

from __future__ import annotations

import numpy as np
import pytest

from rgrasp_viz._kernels.swaps import swap_scores


def _numpy_scores(M, J, free_pos, bk, g, C, e, rss, floor):
    MJ = M[np.ix_(J, free_pos)]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        num = np.multiply(bk[None, :], MJ)
        num /= g[None, :]
        num += C[J, None]
        den = np.square(MJ, out=MJ)
        den /= g[None, :]
        den += e[J, None]
        val = np.square(num, out=num)
        val /= den
        np.subtract(rss + (bk ** 2 / g)[None, :], val, out=val)
    ok = den > floor[:, None]
    ok &= np.isfinite(val)
    val[~ok] = np.inf
    return val


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_swap_scores_match_numpy_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    d, k = 60, 7
    M = rng.standard_normal((d, k))
    J = np.sort(rng.choice(d, 40, replace=False)).astype(np.int64)
    free_pos = np.array([0, 2, 3, 5, 6], dtype=np.int64)
    bk = rng.standard_normal(len(free_pos))
    g = rng.uniform(0.1, 2.0, len(free_pos))
    g[1] = 0.0  # a singular fit's pivot: never scored
    C = rng.standard_normal(d)
    e = rng.uniform(-0.5, 2.0, d)  # some denominators at or below the floor
    e[J[3]] = np.inf  # a non-finite score
    floor = np.full(len(J), 1e-3)
    rss = 7.5
    with np.errstate(divide="ignore", invalid="ignore"):
        base = rss + (bk ** 2 / g)
    got = swap_scores(M, J, free_pos, bk, g, C, e, base, floor)
    ref = _numpy_scores(M, J, free_pos, bk, g, C, e, rss, floor)
    np.testing.assert_array_equal(got, ref)
    assert np.isinf(got[:, 1]).all() and np.isinf(got).any() and np.isfinite(got).sum() > 50
