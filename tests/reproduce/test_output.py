"""``reproduce``'s output folder is complete or absent, never a mix: faults injected.

Ctrl-C or SIGTERM in the middle of a run, a disk that fills up part-way (a tiny tmpfs when
root, a writer made to fail otherwise and always), two runs on the same folder at once, a
re-run without PNGs, and the leftovers of a process that died (SIGKILL).  Runs in a child
process are followed through their progress bar on a pseudo-terminal (tests/_support/ttyrun.py).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from filelock import FileLock
from ttyrun import TtyRun

from rgrasp_viz import Trace
from rgrasp_viz import _cli as cli
from rgrasp_viz import reproduce as R
from rgrasp_viz.exceptions import OutputError
from rgrasp_viz.reproduce import _experiments as RE
from rgrasp_viz.reproduce import _output as output
from rgrasp_viz.reproduce import _report as report
from rgrasp_viz.reproduce._output import OutputFolder

pytest.importorskip("plotly")

QUICK = ["reproduce", "fig1-setting1", "--quick", "--no-png", "--no-tune"]
"""One seed (each test names it), the recorded steps: the output folder is what is tested."""


def snapshot(folder):
    """``{relative path: sha256}`` of every file under ``folder``."""
    folder = Path(folder)
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def assert_complete_run(out, seed):
    """``out`` holds one complete run of ``seed``: every file, all from that run."""
    settings = json.loads((out / "run.json").read_text())
    assert settings["seed"] == seed and settings["seeds"] == [seed]
    names = {p.name for p in (out / "traces").iterdir()}
    assert names == {m.replace("+", "plus") + ".npz" for m in RE.METHODS}
    for name in names:
        assert Trace.load(out / "traces" / name).meta["random_state"] == seed, name
    assert f"evaluation seeds {seed} (" in (out / "claims.md").read_text()
    for fig in ("passes.html", "time.html"):
        assert (out / fig).stat().st_size > 0


def assert_nothing_beside(out):
    """No temporary folder or old run left beside ``out``; at most its lock file, unlocked
    (a lock file stays in place: see rgrasp_viz/reproduce/_output.py)."""
    beside = sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))
    assert beside in ([], [f".{out.name}.lock"]), beside
    if beside:
        lock = FileLock(os.fspath(out.parent / beside[0]))
        lock.acquire(timeout=0)  # free: raises filelock.Timeout if someone still holds it
        lock.release()


FIRST_LABEL = f"running 1 seed x {len(RE.METHODS)} methods"
"""The progress bar's step while the methods run: the solving has begun."""


@pytest.fixture(scope="module")
def seed0_run(tmp_path_factory):
    """A finished seed-0 quick run (its folder is copied by the tests that overwrite it)."""
    out = tmp_path_factory.mktemp("seed0") / "run"
    R.run("fig1-setting1", quick=True, out=out, png=False, progress=False, budget=20, seed=0,
          tune_steps=False)
    return out


def copy_run(src, dest):
    import shutil

    shutil.copytree(src, dest)
    return dest


# -- Ctrl-C -------------------------------------------------------------------------------------


@pytest.mark.parametrize("when", [FIRST_LABEL, "claims"], ids=["solving", "judging"])
def test_ctrl_c_during_a_rerun_leaves_the_previous_run(seed0_run, tmp_path, when):
    out = copy_run(seed0_run, tmp_path / "run")
    before = snapshot(out)
    run = TtyRun(QUICK + ["--seed", "7", "--out", str(out)])
    try:
        # Ctrl-C once the bar says the methods run (about 1.5 s after the start), or the
        # claims (the last stage before the figures, traces and tables are written)
        run.wait_for(when)
        run.send_signal(signal.SIGINT)
        code, stdout, stderr = run.finish(timeout=120)
    finally:
        run.kill()
    assert code == 130, stderr
    assert "interrupted; nothing partial was written" in stderr
    assert "Traceback" not in stderr and "Wrote" not in stdout
    assert snapshot(out) == before  # the seed-0 run, byte for byte
    assert_complete_run(out, 0)
    assert_nothing_beside(out)


def test_interrupt_while_writing_leaves_the_previous_run(seed0_run, tmp_path, monkeypatch):
    out = copy_run(seed0_run, tmp_path / "run")
    before = snapshot(out)
    real = report.write_text

    def interrupted(path, text, **kw):
        if Path(path).name == "run.json":  # traces, figures and claims.md are already there
            raise KeyboardInterrupt
        return real(path, text, **kw)

    monkeypatch.setattr(report, "write_text", interrupted)
    assert cli.main(QUICK + ["--seed", "7", "--budget", "6", "--out", str(out)]) == 130
    assert snapshot(out) == before
    assert_nothing_beside(out)


def test_interrupt_surfacing_as_a_cleanup_error_is_still_an_interrupt(seed0_run, tmp_path,
                                                                      monkeypatch):
    """Ctrl-C inside ``np.savez_compressed`` reaches us as zipfile's ValueError ("Can't close
    the ZIP file while there is an open writing handle"), raised while handling the
    KeyboardInterrupt: still exit code 130, the previous run kept."""
    out = copy_run(seed0_run, tmp_path / "run")
    before = snapshot(out)

    def save(self, path):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise ValueError("Can't close the ZIP file while there is an open writing "
                             "handle on it.") from None

    monkeypatch.setattr(Trace, "save", save)
    assert cli.main(QUICK + ["--seed", "7", "--budget", "6", "--out", str(out)]) == 130
    assert snapshot(out) == before
    assert_nothing_beside(out)


# -- a write that fails part-way --------------------------------------------------------------


def test_write_failing_part_way_leaves_the_previous_run(seed0_run, tmp_path, monkeypatch,
                                                        capsys):
    out = copy_run(seed0_run, tmp_path / "run")
    before = snapshot(out)
    real = report.write_text

    def disk_full(path, text, **kw):
        if Path(path).name == "run.json":
            real(path, text[: len(text) // 2])  # half of it, then the disk is full
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(path, text, **kw)

    monkeypatch.setattr(report, "write_text", disk_full)
    code = cli.main(QUICK + ["--seed", "7", "--budget", "6", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 1
    errors = [line for line in err.splitlines() if "error" in line]
    assert errors == [err.splitlines()[-1]]  # after the progress lines, one error line
    assert "error: could not write the outputs" in err and "No space left" in err
    assert "Traceback" not in err
    assert snapshot(out) == before
    assert_nothing_beside(out)


@pytest.fixture
def tiny_tmpfs(tmp_path):
    """A 14 MB tmpfs: room for one quick run without PNGs (~10 MB), not for two."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root; test_write_failing_part_way_... covers this")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=14m", "tmpfs", str(mnt)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def test_disk_full_part_way_leaves_the_previous_run(tiny_tmpfs, capsys):
    out = tiny_tmpfs / "run"
    assert cli.main(QUICK + ["--seed", "0", "--budget", "6", "--out", str(out)]) == 0
    before = snapshot(out)
    used = os.statvfs(tiny_tmpfs)
    capsys.readouterr()
    code = cli.main(QUICK + ["--seed", "7", "--budget", "6", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 1
    assert "No space left on device" in err and f"{out} was left as it was" in err
    assert "Traceback" not in err
    assert snapshot(out) == before
    assert_complete_run(out, 0)
    assert_nothing_beside(out)
    assert os.statvfs(tiny_tmpfs).f_bfree == used.f_bfree  # the partial run is gone


# -- two runs at once ---------------------------------------------------------------------------


def test_second_run_on_the_same_folder_is_refused(tmp_path):
    out = tmp_path / "run"
    first = TtyRun(QUICK + ["--seed", "0", "--budget", "20", "--out", str(out)])
    try:
        first.wait_for(FIRST_LABEL)  # it holds the folder now
        first.send_signal(signal.SIGSTOP)  # and keeps it, however fast this machine is
        try:
            second = subprocess.run([sys.executable, "-m", "rgrasp_viz", *QUICK, "--seed",
                                     "7", "--out", str(out)], capture_output=True, text=True,
                                    timeout=120)
        finally:
            first.send_signal(signal.SIGCONT)
        code, stdout, stderr = first.finish(timeout=300)
    finally:
        first.kill()
    assert second.returncode == 2, second.stderr
    assert second.stdout == "" and "Traceback" not in second.stderr
    lines = second.stderr.splitlines()
    assert len(lines) == 1
    assert f"another reproduce run (pid {first.pid}) is writing {out}" in lines[0]
    assert code == 0, stderr
    assert "Wrote 10 files" in stdout
    assert_complete_run(out, 0)
    assert_nothing_beside(out)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_killed_rerun_keeps_the_previous_run_and_the_next_run_takes_over(seed0_run, tmp_path,
                                                                         sig):
    """SIGTERM: the run removes its temporary folder, then ends by SIGTERM.  SIGKILL: its temporary
    folder and lock file stay behind (nothing can run in a killed process), the lock goes
    with the process, and the next run takes it over and removes the leftovers."""
    out = copy_run(seed0_run, tmp_path / "run")
    before = snapshot(out)
    run = TtyRun(QUICK + ["--seed", "7", "--out", str(out)])
    try:
        run.wait_for(FIRST_LABEL)
        run.send_signal(sig)
        code, stdout, stderr = run.finish(timeout=120)
    finally:
        run.kill()
    assert code == -sig, stderr  # ended by the signal (after cleaning up, for SIGTERM)
    assert "Traceback" not in stderr and "Wrote" not in stdout
    assert snapshot(out) == before  # the seed-0 run, byte for byte
    partial = sorted(tmp_path.glob(".run.partial-*"))
    if sig == signal.SIGTERM:
        assert partial == []
        assert_nothing_beside(out)
    else:
        assert [p.name.split("-")[1] for p in partial] == [str(run.pid)]  # the dead run's
    assert cli.main(QUICK + ["--seed", "3", "--budget", "6", "--out", str(out)]) == 0
    assert_complete_run(out, 3)
    assert_nothing_beside(out)


def test_lock_is_exclusive_and_released(tmp_path):
    out = tmp_path / "run"
    with OutputFolder(out) as a:
        with pytest.raises(OutputError, match=f"pid {os.getpid()}"):
            OutputFolder(out).__enter__()
        (a.stage / "run.json").write_text("{}")
        a.commit()
    assert (out / "run.json").read_text() == "{}"
    with OutputFolder(out) as b:  # free again
        b.commit()
    assert list(out.iterdir()) == []
    assert_nothing_beside(out)


# -- re-runs, and what a dead process leaves --------------------------------------------------


def test_rerun_without_png_leaves_no_stale_png(tmp_path, monkeypatch):
    import importlib

    from rgrasp_viz.viz import figures

    export = importlib.import_module("rgrasp_viz.viz._export")  # the module, not the function

    monkeypatch.setattr(figures, "find_chromium", lambda: "/usr/bin/chromium")
    monkeypatch.setattr(export, "find_chromium", lambda: "/usr/bin/chromium")
    monkeypatch.setattr(export, "_write_png",
                        lambda fig, path, w, h, scale: Path(path).write_bytes(b"\x89PNG\r\n"))
    out = tmp_path / "run"
    rep = R.run("fig1-setting1", quick=True, out=out, png=True, progress=False, budget=3,
                seed=0, tune_steps=False)
    assert {"passes.png", "time.png"} <= {p.name for p in out.iterdir()}
    assert len(rep.files) == 12
    rep = R.run("fig1-setting1", quick=True, out=out, png=False, progress=False, budget=3,
                seed=3, tune_steps=False)
    assert not list(out.glob("*.png"))
    assert len(rep.files) == 10 and sorted(rep.files) == sorted(
        p for p in out.rglob("*") if p.is_file())
    assert_complete_run(out, 3)
    assert_nothing_beside(out)


def _commit_one_file(out, text):
    with OutputFolder(out) as folder:
        (folder.stage / "run.json").write_text(text)
        folder.commit()
    return folder


def test_swap_without_renameat2(seed0_run, tmp_path, monkeypatch):
    monkeypatch.setattr(output, "_exchange", lambda a, b: False)
    out = copy_run(seed0_run, tmp_path / "run")
    _commit_one_file(out, "new")
    assert snapshot(out) == {"run.json": hashlib.sha256(b"new").hexdigest()}
    assert_nothing_beside(out)


def test_leftovers_of_a_dead_run_are_cleaned_and_a_set_aside_run_restored(seed0_run,
                                                                          tmp_path):
    out = tmp_path / "run"
    # died between the two renames of the fallback swap: the previous run is set aside
    copy_run(seed0_run, tmp_path / ".run.old-abc")
    (tmp_path / ".run.partial-xyz").mkdir()
    (tmp_path / ".run.partial-xyz" / "run.json").write_text("{half")
    (tmp_path / ".run.lock").write_text("12345\n")  # its lock file (no longer locked)
    before = snapshot(seed0_run)
    with OutputFolder(out):  # entered and left without a commit: nothing new
        pass
    assert snapshot(out) == before
    assert_nothing_beside(out)


def test_foreign_folder_is_never_replaced(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work")
    with pytest.raises(OutputError, match="thesis.tex"):
        R.run("fig1-setting1", quick=True, out=out, png=False, progress=False, budget=6)
    assert (out / "thesis.tex").read_text() == "years of work"
    assert_nothing_beside(out)


def test_out_through_a_symbolic_link_replaces_the_target(seed0_run, tmp_path):
    target = copy_run(seed0_run, tmp_path / "target")
    link = tmp_path / "link"
    link.symlink_to(target, target_is_directory=True)
    folder = _commit_one_file(link, "new")
    assert folder.out == target and link.is_symlink()
    assert (link / "run.json").read_text() == "new" and list(target.iterdir()) == [
        target / "run.json"]
    assert_nothing_beside(target)
