"""The command line's argument errors, as a user sees them."""

from __future__ import annotations

import pytest

from rgrasp_viz import _cli as cli


def fails_cleanly(argv, capsys, *needles):
    """``rgrasp-viz ARGV`` exits 2 with one line on stderr (``rgrasp-viz …: error: …``, no
    traceback, nothing on stdout) that contains every needle; returns that line."""
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("rgrasp-viz"), lines[0]
    assert "error:" in lines[0] and "Traceback" not in captured.err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]
