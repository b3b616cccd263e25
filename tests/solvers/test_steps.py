"""Tests of rgrasp_viz.solvers.steps: the scale check names where the data leave float64."""

import numpy as np
import pytest
import scipy.sparse as sp

import rgrasp_viz as rv


@pytest.mark.parametrize("sparse", [False, True])
def test_a_finite_column_too_large_for_float64_is_named(sparse):
    rng = np.random.default_rng(0)
    W = rng.standard_normal((30, 8))
    W[:, 5] = 1e308  # finite, but its squares overflow
    prob = rv.Problem(sp.csr_matrix(W) if sparse else W, rng.standard_normal(30))
    with pytest.raises(ValueError, match=r"too large for float64 arithmetic \(largest \|W\| = "
                                         r"1e\+308, in column 5: squares of entries overflow"):
        rv.solve(prob, "svrgsp", s=2, random_state=0)
