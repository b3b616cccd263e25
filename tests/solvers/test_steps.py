"""Tests of rgrasp_viz.solvers._steps: the scale check names where the data leave float64, and a
dense solve copies none of its data."""

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


@pytest.mark.parametrize("method", ["fght", "svrgsp", "grasp"])
def test_a_dense_solve_makes_no_copy_of_the_data(method):
    """Validation (finiteness), the scale check and the solve allocate far less than the
    matrix (NumPy's allocations, as tracemalloc counts them): no full copy, no temporary of
    its size. benchmarks/bench_memory.py measures the whole process's peak."""
    import tracemalloc

    rng = np.random.default_rng(0)
    W = rng.standard_normal((4000, 400))
    y = W[:, :3] @ np.ones(3)
    rv.solve((W[:40], y[:40]), method, s=3, max_iter=2, warn=False)  # compile outside
    tracemalloc.start()
    try:
        rv.solve((W, y), method, s=3, max_iter=3, warn=False, record=False, random_state=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 0.25 * W.nbytes, peak / W.nbytes
