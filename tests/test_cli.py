"""The command line checks every argument before any work: one line on stderr, exit code 2."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from cli_errors import fails_cleanly as _fails_cleanly

from rgrasp_viz import _cli as cli
from rgrasp_viz.reproduce import _command as command
from rgrasp_viz.solvers._registry import method_names

REP = ["reproduce", "fig1-setting1", "--quick", "--no-png"]


@pytest.mark.parametrize("budget", ["nan", "0", "-5", "inf", "-inf", "lots"])
def test_bad_budget(budget, tmp_path, capsys, no_work):
    line = _fails_cleanly(REP + [f"--budget={budget}", "--out", str(tmp_path / "o")], capsys,
                          "--budget", "positive finite", repr(budget))
    assert line.startswith("rgrasp-viz reproduce: error: argument --budget")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("budget", ["1e308", "1e6", "100001"])
def test_unbounded_budget_is_refused(budget, tmp_path, capsys, no_work):
    """An effectively unbounded budget is refused before any work (the cap is MAX_BUDGET)."""
    line = _fails_cleanly(REP + ["--budget", budget, "--out", str(tmp_path / "o")], capsys,
                          "--budget", "at most 100000", repr(budget))
    assert line.startswith("rgrasp-viz reproduce: error: argument --budget")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("budget", [1e308, 2 * command.MAX_BUDGET])
def test_unbounded_budget_is_refused_by_run(budget, tmp_path, no_work):
    from rgrasp_viz import reproduce

    with pytest.raises(ValueError, match="at most 100000"):
        reproduce.run("fig1-setting1", quick=True, out=tmp_path / "o", budget=budget)
    assert not (tmp_path / "o").exists()


def test_largest_budget_passes_the_check(tmp_path):
    args = command.check_run_args("fig1-setting1", tmp_path / "o", budget="1e5", quick=True)
    assert args["budget"] == command.MAX_BUDGET == 1e5
    parser = cli.build_parser()
    assert parser.parse_args(REP + ["--budget", "1e5"]).budget == 1e5


@pytest.mark.parametrize("seed", ["-1", "1.5", "x"])
def test_bad_seed(seed, tmp_path, capsys, no_work):
    _fails_cleanly(REP + ["--seed", seed, "--out", str(tmp_path / "o")], capsys,
                   "--seed", "non-negative integer")


def test_bad_reading(tmp_path, capsys, no_work):
    _fails_cleanly(REP + ["--inner", "both", "--out", str(tmp_path / "o")], capsys,
                   "--inner", "'paper'", "'on_T'")


def test_unknown_experiment(capsys, no_work):
    _fails_cleanly(["reproduce", "fig9"], capsys, "invalid choice: 'fig9'")


def test_out_naming_a_file(tmp_path, capsys, no_work):
    f = tmp_path / "taken.txt"
    f.write_text("mine")
    _fails_cleanly(REP + ["--out", str(f)], capsys, str(f), "is a file, not a folder")
    _fails_cleanly(REP + ["--out", str(f / "sub")], capsys, "inside", "which is a file")
    assert f.read_text() == "mine"


def test_out_holding_other_files_is_refused_not_replaced(tmp_path, capsys, no_work):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    (out / "run.json").write_text("{}")
    _fails_cleanly(REP + ["--out", str(out)], capsys, "notes.txt", "new or empty folder")
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt", "run.json"]


@pytest.fixture
def unwritable(tmp_path):
    """A folder this process cannot write in: read-only tmpfs as root, chmod 555 otherwise."""
    d = tmp_path / "ro"
    d.mkdir()
    if os.geteuid() == 0:
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(d)],
                           capture_output=True)
        if r.returncode != 0:
            pytest.skip(f"root without mount permission: {r.stderr.decode().strip()}")
        yield d
        subprocess.run(["umount", str(d)], check=True)
    else:
        d.chmod(0o555)
        yield d
        d.chmod(0o755)


def test_out_in_an_unwritable_folder(unwritable, capsys, no_work):
    _fails_cleanly(REP + ["--out", str(unwritable / "run")], capsys, str(unwritable),
                   "--out")
    _fails_cleanly(REP + ["--out", str(unwritable / "a" / "b")], capsys, str(unwritable))


def test_data_dir_naming_a_file(tmp_path, capsys, no_work):
    f = tmp_path / "f"
    f.write_text("")
    _fails_cleanly(["reproduce", "fig2-rcv1", "--quick", "--data-dir", str(f), "--out",
                    str(tmp_path / "o")], capsys, "is a file, not a folder")


@pytest.mark.parametrize("argv, needles", [
    (["demo", "--setting", "3"], ["--setting", "classroom, 1, 2", "'3'"]),
    (["demo", "--methods", ","], ["--methods", "names no method"]),
    (["demo", "--methods", " , ,"], ["--methods", "names no method"]),
    (["demo", "--methods", "fght,omp"], ["--methods", "unknown method 'omp'"]),
    (["demo", "--seed", "-1"], ["--seed", "non-negative"]),
])
def test_demo_bad_arguments(argv, needles, capsys, no_work):
    _fails_cleanly(argv, capsys, *needles)


def test_demo_runs_the_methods_asked_for(capsys):
    assert cli.main(["demo", "--methods", "FG-HT, grasp", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    table = [line.split()[0] for line in out.splitlines()
             if line.split() and line.split()[0] in {"FG-HT", "GraSP", "SVRGSP"}]
    assert table == ["FG-HT", "GraSP"]  # registry labels, aliases accepted
    assert "seed 1" in out


def test_demo_default_is_the_papers_six():
    parser = cli.build_parser()
    args = parser.parse_args(["demo"])
    assert args.methods == list(method_names(paper_only=True))


def test_bad_argument_from_the_shell_is_one_line_exit_2(tmp_path):
    for argv in (["reproduce", "fig1-setting1", "--budget", "nan"],
                 ["demo", "--setting", "3"],
                 ["reproduce", "fig1-setting1", "--out", __file__]):
        r = subprocess.run([sys.executable, "-m", "rgrasp_viz", *argv], capture_output=True,
                           text=True, cwd=tmp_path, timeout=120)
        assert r.returncode == 2, (argv, r.stderr)
        assert r.stdout == ""
        assert len(r.stderr.splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr
        assert not (tmp_path / "rgrasp-reproduce").exists()
