"""Progress bars (rgrasp_viz/_progress.py): drawn on a terminal, silent elsewhere or when off.

The policy for ``reproduce`` and ``rv.animate``: ``progress=False`` writes nothing; with
progress on, a terminal gets a ``tqdm`` bar, a pipe or a file gets no bar (``reproduce``
still writes its notes, one line each).  Frames of ``rv.animate`` are rendered by a stub here
(no browser needed).
"""

from __future__ import annotations

import io
import os
import select
import sys

import numpy as np
import pytest

import rgrasp_viz as rv
from rgrasp_viz import _progress
from rgrasp_viz import reproduce as R
from rgrasp_viz.reproduce import _experiments as RE
from rgrasp_viz.reproduce import _tuning as RT
from rgrasp_viz.viz import _animate as A


@pytest.fixture
def tty_stderr(monkeypatch):
    """A function that puts ``sys.stderr`` on a pseudo-terminal (call it in the test body:
    pytest's output capture sets ``sys.stderr`` again after the fixtures) and returns a
    function reading what was written there."""
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    stream = open(slave, "w", buffering=1)  # noqa: SIM115 - closed below
    assert stream.isatty()

    def read():
        """Everything written so far (the terminal passes it on asynchronously: read until
        it has been quiet for a second)."""
        stream.flush()
        chunks = []
        while select.select([master], [], [], 1.0)[0]:
            chunk = os.read(master, 65536)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks).decode(errors="replace")

    def attach():
        monkeypatch.setattr(sys, "stderr", stream)
        return read

    yield attach
    monkeypatch.undo()
    stream.close()
    os.close(master)


def _count(bar, n):
    with bar:
        for _ in range(n):
            bar.update()


def test_bar_draws_on_a_terminal(tty_stderr):
    read = tty_stderr()
    _count(_progress.bar(3, "counting", True, "thing"), 3)
    shown = read()
    assert "counting" in shown and "3/3" in shown and "thing" in shown


def test_bar_is_silent_off_a_terminal_and_when_disabled(tty_stderr, monkeypatch):
    read = tty_stderr()
    _count(_progress.bar(3, "counting", False), 3)
    assert read() == ""  # disabled: nothing, even on a terminal
    pipe = io.StringIO()  # not a terminal
    monkeypatch.setattr(sys, "stderr", pipe)
    _count(_progress.bar(3, "counting", True), 3)
    assert pipe.getvalue() == ""


def test_note_is_one_line_when_enabled(capfd):
    _progress.note(True, "note: something to know")
    _progress.note(False, "never shown")
    assert capfd.readouterr().err == "note: something to know\n"


# -- reproduce ----------------------------------------------------------------------------------


def test_reproduce_progress_false_prints_nothing(tmp_path, capfd):
    R.run("fig1-setting1", quick=True, out=tmp_path / "run", png=False, progress=False,
          budget=3)
    assert capfd.readouterr() == ("", "")


def test_reproduce_off_a_terminal_prints_only_its_notes(tmp_path, capfd):
    R.run("fig1-setting1", quick=True, out=tmp_path / "run", png=False, budget=3)
    captured = capfd.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == ["note: PNG export skipped (--no-png)"]


def test_reproduce_bar_on_a_terminal_names_each_step(tmp_path, tty_stderr):
    read = tty_stderr()
    R.run("fig1-setting1", quick=True, out=tmp_path / "run", png=False, budget=3,
          seeds="0-1")
    shown = read()
    assert "fig1-setting1 --quick" in shown
    # one step per tuning task (a method's grid on a tuning seed), per seed, claims, files
    for m in RE.METHODS:
        assert f"tuned {RT.factor_key(m, 'paper')} on seed 1001" in shown, m
    assert "seed 0: 6 methods and F* done" in shown and "seed 1: 6 methods" in shown
    steps = 2 * len(RE.METHODS) + 2 + 2
    assert f"{steps}/{steps}" in shown
    assert "writing the files" in shown
    assert "note: PNG export skipped (--no-png)" in shown


# -- rv.animate (frames rendered by a stub) -----------------------------------------------------


@pytest.fixture
def stub_render(monkeypatch):
    """Frames as small PNGs of a colour that changes per frame; no browser, no kaleido."""
    pytest.importorskip("PIL")
    from PIL import Image

    count = [0]

    def render(fig, chromium):
        count[0] += 1
        buf = io.BytesIO()
        Image.new("RGB", (64, 48), (count[0] * 7 % 256, 40, 90)).save(buf, format="PNG")
        return buf.getvalue()

    monkeypatch.setattr(A, "_requirements", lambda mp4: (None, None))
    monkeypatch.setattr(A, "_render", render)
    return count


@pytest.fixture(scope="module")
def runs():
    prob = rv.make_regression(n=60, d=20, s_star=3, random_state=0)
    return [rv.solve(prob, m, s=3, J=30, max_iter=2, record_iterates=True, record_every=5,
                     random_state=0, warn=False) for m in ("svrght", "svrgsp")]


def test_animate_progress_false_prints_nothing(runs, stub_render, tmp_path, capfd):
    anim = rv.animate(runs, tmp_path / "a.gif", max_frames=6, mp4=False, progress=False)
    assert anim.n_frames == stub_render[0] >= 2
    assert capfd.readouterr() == ("", "")


def test_animate_off_a_terminal_prints_nothing(runs, stub_render, tmp_path, capfd):
    rv.animate(runs, tmp_path / "a.gif", max_frames=6, mp4=False)
    assert capfd.readouterr() == ("", "")


def test_animate_bar_on_a_terminal(runs, stub_render, tmp_path, tty_stderr):
    read = tty_stderr()
    anim = rv.animate(runs, tmp_path / "a.gif", max_frames=6, mp4=False)
    shown = read()
    assert "rv.animate" in shown and f"{anim.n_frames}/{anim.n_frames}" in shown
    assert "frame" in shown


def test_animate_callable_progress_replaces_the_bar(runs, stub_render, tmp_path, tty_stderr):
    read = tty_stderr()
    seen = []
    anim = rv.animate(runs, tmp_path / "a.gif", max_frames=6, mp4=False,
                      progress=lambda i, n: seen.append((i, n)))
    assert seen == [(i, anim.n_frames) for i in range(1, anim.n_frames + 1)]
    assert read() == ""
    assert np.isfinite(anim.seconds)
