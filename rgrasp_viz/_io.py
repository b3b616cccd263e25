"""Atomic file output: a file the package writes is either complete or not there.

Everything is first written to a temporary file in the destination's own folder (same file
system), flushed to disk, then moved into place with :func:`os.replace`, which is atomic:
a reader sees the old complete file or the new complete file, never a truncated one, and a
write that fails part-way (full disk, Ctrl-C) leaves the previous file untouched.

A process killed while writing (SIGKILL, a power cut) cannot remove its temporary file, so
temporary files are named after their destination and their writer,
``.<name>.tmp-<pid>-<random><suffix>``, and the next write to the same destination removes
those whose writer is no longer running.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from pathlib import Path

__all__ = ["atomic_path", "write_bytes", "write_text"]

_UMASK = os.umask(0o022)
os.umask(_UMASK)  # read once (at import): files get the usual 0o666 & ~umask permissions


@contextlib.contextmanager
def atomic_path(path, suffix=None):
    """Context manager yielding a temporary path to write; moved onto ``path`` on success.

    Parameters
    ----------
    path : str or path-like
        The final destination.
    suffix : str, optional
        Suffix of the temporary file (default: that of ``path``), for writers that choose
        the format from the name (``.npz``, ``.png``).

    Yields
    ------
    pathlib.Path
        Write the content here.  On an exception (including ``KeyboardInterrupt``) it is
        removed and ``path`` is left as it was.
    """
    path = Path(path)
    suffix = path.suffix if suffix is None else suffix
    remove_stale_temps(path, suffix)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.tmp-{os.getpid()}-", suffix=suffix,
                               dir=path.parent)
    os.close(fd)
    tmp = Path(tmp)
    os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp's 0o600 would otherwise end up on ``path``
    try:
        yield tmp
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def temp_pattern(path, suffix=None):
    """The regular expression of the temporary files of :func:`atomic_path` for ``path``
    (group 1: the writer's process id)."""
    path = Path(path)
    suffix = path.suffix if suffix is None else suffix
    return re.compile(rf"\.{re.escape(path.name)}\.tmp-(\d+)-[A-Za-z0-9_]+"
                      rf"{re.escape(suffix)}")


def _running(pid):
    """Whether a process ``pid`` exists (on this machine)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. PermissionError: it exists, owned by someone else
        return True
    return True


def remove_stale_temps(path, suffix=None):
    """Remove the temporary files a killed writer of ``path`` left next to it (those of
    processes that no longer run; never this process's own).

    Returns
    -------
    list of pathlib.Path
        The files removed.
    """
    path = Path(path)
    pattern = temp_pattern(path, suffix)
    removed = []
    try:
        names = os.listdir(path.parent)
    except OSError:
        return removed
    for name in names:
        m = pattern.fullmatch(name)
        if m is None:
            continue
        pid = int(m.group(1))
        if pid == os.getpid() or _running(pid):
            continue
        with contextlib.suppress(OSError):
            (path.parent / name).unlink()
            removed.append(path.parent / name)
    return removed


def write_bytes(path, data):
    """Write ``data`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def write_text(path, text, encoding="utf-8"):
    """Write ``text`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding=encoding)
