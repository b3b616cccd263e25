"""Evaluation seeds: ``--seeds 0-4`` / ``0,2,5``, checked before any work; the tuning seeds are
kept apart; ``--jobs`` and ``--scheduler`` checked alike."""

from __future__ import annotations

import sys

import pytest
from cli_errors import fails_cleanly as _fails_cleanly

from rgrasp_viz import reproduce as R
from rgrasp_viz.reproduce import _command as RCMD
from rgrasp_viz.reproduce import _command as command
from rgrasp_viz.reproduce import _parallel


@pytest.mark.parametrize("text, seeds", [
    ("0-4", [0, 1, 2, 3, 4]),
    ("0,2,5", [0, 2, 5]),
    ("1-3,7", [1, 2, 3, 7]),
    (" 3 ", [3]),
    ("9,2", [9, 2]),              # the order given
    ("5-5", [5]),
    ("998-999,1002", [998, 999, 1002]),  # around the tuning seeds 1000-1001
])
def test_seed_ranges_and_lists(text, seeds):
    assert R.parse_seeds(text) == seeds


def test_seeds_from_python_values():
    assert R.parse_seeds(4) == [4]
    assert R.parse_seeds([0, 3]) == [0, 3]
    assert R.parse_seeds(range(2)) == [0, 1]
    assert RCMD.DEFAULT_SEEDS == (0, 1, 2, 3, 4)
    args = command.check_run_args("fig1-setting1", quick=True)
    assert args["seeds"] == [0, 1, 2, 3, 4]  # five seeds by default, also with --quick
    assert command.check_run_args("fig1-setting1", seed=7)["seeds"] == [7]


@pytest.mark.parametrize("bad, why", [
    ("", "range such as 0-4"),
    ("  ", "range such as 0-4"),
    ("0,,1", "range such as 0-4"),
    ("a", "'a' in 'a' is none of these"),
    ("1.5", "none of these"),
    ("-1", "none of these"),
    ("0--3", "none of these"),
    ("4-2", "seed range '4-2' ends below its start"),
    ("0,1,0", "distinct; 0 repeated"),
    ("0-3,2", "distinct; 2 repeated"),
    ("1000", "1000 are tuning seeds"),
    ("999-1001", "1000, 1001 are tuning seeds"),
    ([], "at least one seed"),
    ([1, -2], "non-negative"),
    ([True], "non-negative"),
    (2.0, "list of non-negative integers"),
])
def test_bad_seeds_are_refused(bad, why):
    with pytest.raises(ValueError, match=None) as exc:
        R.parse_seeds(bad)
    assert why in str(exc.value), str(exc.value)


REP = ["reproduce", "fig1-setting1", "--quick", "--no-png"]


@pytest.mark.parametrize("value, needle", [
    ("4-2", "ends below its start"),
    ("x", "none of these"),
    ("1000-1001", "tuning seeds"),
    ("0,0", "repeated"),
])
def test_bad_seeds_on_the_command_line_fail_before_work(value, needle, tmp_path, capsys,
                                                         no_work):
    line = _fails_cleanly(REP + ["--seeds", value, "--out", str(tmp_path / "o")], capsys,
                          "argument --seeds", needle)
    assert line.startswith("rgrasp-viz reproduce: error:")
    assert not (tmp_path / "o").exists()


def test_seed_and_seeds_together_are_refused(tmp_path, capsys, no_work):
    _fails_cleanly(REP + ["--seed", "1", "--seeds", "0-4", "--out", str(tmp_path / "o")],
                   capsys, "seed or seeds, not both")
    with pytest.raises(ValueError, match="not both"):
        R.run("fig1-setting1", quick=True, seed=1, seeds="0-4", out=tmp_path / "o")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("jobs", ["0", "-2", "two", "1.5"])
def test_bad_jobs_fail_before_work(jobs, tmp_path, capsys, no_work):
    _fails_cleanly(REP + ["--jobs", jobs, "--out", str(tmp_path / "o")], capsys,
                   "argument --jobs", "positive integer")
    with pytest.raises(ValueError, match="positive integer"):
        R.run("fig1-setting1", quick=True, jobs=0, out=tmp_path / "o")


def test_scheduler_without_distributed_names_the_extra(tmp_path, capsys, monkeypatch,
                                                        no_work):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    line = _fails_cleanly(REP + ["--scheduler", "tcp://127.0.0.1:8786", "--out",
                                 str(tmp_path / "o")], capsys)
    assert "distributed" in line and "rgrasp_viz[parallel]" in line
    with pytest.raises(ImportError, match=r"rgrasp_viz\[parallel\]"):
        _parallel.run_tasks(abs, [1], scheduler="tcp://127.0.0.1:8786")
    with pytest.raises(ValueError, match="address of a Dask scheduler"):
        _parallel.run_tasks(abs, [1], scheduler="  ")
