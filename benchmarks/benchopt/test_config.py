"""``benchopt test`` hooks: the benchmark runs in rgrasp_viz's own environment (the `bench`
or `test` extra), so the tests that build a fresh conda environment per solver or dataset
are skipped."""

import pytest


def check_test_solver_install(solver_class):
    pytest.skip("solvers are installed with rgrasp_viz's bench extra, not per conda env")


def check_test_dataset_install(dataset_class):
    pytest.skip("datasets need nothing beyond rgrasp_viz's bench extra")
