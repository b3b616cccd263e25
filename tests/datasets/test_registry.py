"""Tests of rgrasp_viz.datasets._registry: what fetch accepts as a binary data set."""

import pytest

from rgrasp_viz.datasets import RemoteDataset, fetch

pytest.importorskip("sklearn.datasets")

_ROWS = "1 1:0.5 3:2\n{} 2:1\n{} 1:1 2:1\n"


@pytest.mark.parametrize("label", ["1", "-1", "0", "7"])
def test_a_file_with_one_label_is_refused(tmp_path, label):
    path = tmp_path / "one.svm"
    path.write_text(_ROWS.replace("1 1:0.5", f"{label} 1:0.5").format(label, label))
    with pytest.raises(ValueError, match=rf"found one label value \({float(label)!r}\) on "
                                         "all 3 samples"):
        fetch(path)


def test_a_cached_registered_file_with_one_label_is_refused(tmp_path):
    spec = RemoteDataset(name="one", url="http://127.0.0.1:9/one.bz2", filename="one.bz2",
                         n_samples=3, n_features=3)
    (tmp_path / "one").write_text(_ROWS.format(1, 1))  # the decompressed twin, in the cache
    with pytest.raises(ValueError, match="found one label value"):
        fetch(spec, data_dir=tmp_path, download=False)


def test_two_labels_still_map_to_plus_minus_one(tmp_path):
    path = tmp_path / "two.svm"
    path.write_text(_ROWS.format(0, 1))
    W, y = fetch(path, return_X_y=True)
    assert W.shape == (3, 3)
    assert list(y) == [1.0, -1.0, 1.0]
