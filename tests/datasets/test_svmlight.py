"""Tests of rgrasp_viz.datasets._svmlight: the bounds load_svmlight puts on its input."""

import pytest

from rgrasp_viz.datasets import MAX_FEATURES, load_svmlight

pytest.importorskip("sklearn.datasets")


@pytest.fixture
def small_file(tmp_path):
    path = tmp_path / "small.svm"
    path.write_text("1 1:0.5 3:2\n-1 2:1\n")
    return path


@pytest.mark.parametrize("n_features", [2**40, MAX_FEATURES + 1])
def test_an_n_features_beyond_the_bound_is_refused(small_file, n_features):
    with pytest.raises(ValueError, match=rf"n_features={n_features} exceeds "
                                         rf"max_features={MAX_FEATURES}"):
        load_svmlight(small_file, n_features=n_features)


def test_an_n_features_within_a_raised_bound_is_read(small_file):
    W, y = load_svmlight(small_file, n_features=MAX_FEATURES + 1,
                         max_features=MAX_FEATURES + 1)
    assert W.shape == (2, MAX_FEATURES + 1)
    assert W.nnz == 3 and list(y) == [1.0, -1.0]


def test_the_bound_is_checked_before_the_file_is_read(tmp_path):
    """Refused on the arguments alone: a malformed file behind them is never parsed."""
    path = tmp_path / "bad.svm"
    path.write_text("not a label\n")
    with pytest.raises(ValueError, match="exceeds max_features"):
        load_svmlight(path, n_features=2**40)
