"""Atomic output: the file is complete or untouched, and no temporary file is left."""

from __future__ import annotations

import os

import pytest

from rgrasp_viz import _io


def test_write_text_replaces_and_leaves_no_temporary(tmp_path):
    p = tmp_path / "a.txt"
    _io.write_text(p, "old")
    _io.write_text(p, "new")
    assert p.read_text() == "new"
    assert sorted(os.listdir(tmp_path)) == ["a.txt"]
    assert (p.stat().st_mode & 0o777) == (0o666 & ~_io._UMASK)


def test_failed_write_keeps_the_old_file(tmp_path):
    p = tmp_path / "a.bin"
    _io.write_bytes(p, b"complete")
    with pytest.raises(RuntimeError, match="disk full"), _io.atomic_path(p) as tmp:
        tmp.write_bytes(b"half")
        raise RuntimeError("disk full")
    assert p.read_bytes() == b"complete"
    assert sorted(os.listdir(tmp_path)) == ["a.bin"]


def test_interrupt_keeps_the_old_file(tmp_path):
    p = tmp_path / "a.bin"
    _io.write_bytes(p, b"complete")
    with pytest.raises(KeyboardInterrupt), _io.atomic_path(p) as tmp:
        tmp.write_bytes(b"half")
        raise KeyboardInterrupt
    assert p.read_bytes() == b"complete"
    assert sorted(os.listdir(tmp_path)) == ["a.bin"]


def test_temporary_keeps_the_suffix(tmp_path):
    with _io.atomic_path(tmp_path / "t.npz") as tmp:
        assert tmp.suffix == ".npz" and tmp.parent == tmp_path
        tmp.write_bytes(b"x")
    assert (tmp_path / "t.npz").read_bytes() == b"x"
