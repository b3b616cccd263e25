"""The output folder of a run: complete or absent, never a mix, one writer at a time.

A run writes into a temporary folder beside ``--out`` (``.NAME.partial-PID-XXXX``) and swaps it
into place only once every file is there, so a reader finds the previous complete run or the
new complete run (a ``--no-png`` re-run leaves no stale PNGs; Ctrl-C or a full disk leave
the previous run as it was).  On Linux the swap is one atomic ``renameat2(RENAME_EXCHANGE)``;
elsewhere two renames (the previous run is restored by the next run if the process dies
between them).  A lock file beside ``--out`` (``.NAME.lock``, a :class:`filelock.FileLock`)
makes a second run on the same ``--out`` refuse at once with a message instead of both
writing.

A run stopped by Ctrl-C or SIGTERM removes its temporary folder and releases its lock before
it exits (after SIGTERM, by SIGTERM's default action, as it would have without us).  A run
killed outright (SIGKILL, a power cut) leaves its temporary folder behind; its lock goes with
the process, and the next run on the same ``--out`` takes the lock over and removes the
leftovers (restoring a previous run left aside mid-swap).  The lock file itself, empty, stays
beside ``--out``.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import shutil
import signal
import sys
import tempfile
import threading
from pathlib import Path

from filelock import FileLock, Timeout

from ..exceptions import OutputError

__all__ = ["OUTPUT_NAMES", "OutputFolder", "check_out"]

OUTPUT_NAMES = frozenset({"passes.html", "time.html", "passes.png", "time.png", "steps.html",
                          "steps.png", "map.html", "map.png", "claims.md", "run.json",
                          "traces"})
"""Entries a run writes in its folder (``traces/`` holds ``*.npz`` only)."""






def _nearest_existing(path):
    for p in (path, *path.parents):
        if os.path.lexists(p):
            return p
    return Path(path.anchor or ".")


def _looks_like_a_run(folder):
    """Names in ``folder`` that a run does not write (empty: replaceable)."""
    odd = []
    for entry in os.scandir(folder):
        if entry.name not in OUTPUT_NAMES:
            odd.append(entry.name)
        elif entry.name == "traces":
            if not entry.is_dir(follow_symlinks=False):
                odd.append(entry.name)
                continue
            odd += [f"traces/{e.name}" for e in os.scandir(entry.path)
                    if not (e.name.endswith(".npz") and e.is_file(follow_symlinks=False))]
        elif not entry.is_file(follow_symlinks=False):
            odd.append(entry.name)
    return sorted(odd)


def check_out(out):
    """Check an output folder before any work.

    Parameters
    ----------
    out : str or path-like

    Returns
    -------
    pathlib.Path
        The absolute path (symbolic links resolved: a linked folder is replaced, not the link).

    Raises
    ------
    OutputError
        When ``out`` is a file, is inside a file, is in a folder that cannot be written, or
        is an existing folder holding anything a run does not write.
    """
    path = Path(os.path.realpath(os.path.expanduser(os.fspath(out))))  # a link: its target
    if path.parent == path:
        raise OutputError(f"--out {path} is a file-system root; name a folder inside it")
    if os.path.lexists(path):
        if not path.is_dir():
            raise OutputError(f"--out {path} is a file, not a folder")
        try:
            odd = _looks_like_a_run(path)
        except OSError as exc:
            raise OutputError(f"--out {path} cannot be read: {exc.strerror}") from None
        if odd:
            shown = ", ".join(odd[:5]) + (f" and {len(odd) - 5} more" if len(odd) > 5 else "")
            raise OutputError(f"--out {path} holds files a run does not write ({shown}); it "
                              "would be replaced: choose a new or empty folder")
    anchor = _nearest_existing(path.parent)
    if not anchor.is_dir():
        raise OutputError(f"--out {path} is inside {anchor}, which is a file")
    if not os.access(anchor, os.W_OK | os.X_OK):
        why = "is read-only" if _read_only_fs(anchor) else "is not writable"
        raise OutputError(f"--out {path}: the folder {anchor} {why}")
    return path


def _read_only_fs(path):
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


# -- the lock ---------------------------------------------------------------------------------


class _Lock:
    """An exclusive, non-blocking :class:`filelock.FileLock` on ``path``.

    The operating system releases it when its process dies (even by SIGKILL), so the next
    run takes it over; the lock file itself stays in place (removing it would let two runs
    lock two different files).  A refused run names the holder's process id, read from the
    name of the holder's temporary folder (``.NAME.partial-PID-XXXX``) when it has one.
    """

    def __init__(self, path, out):
        self.out = out
        self._lock = FileLock(os.fspath(path))

    def acquire(self):
        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            raise OutputError(f"another reproduce run{_holder(self.out)} is writing "
                              f"{self.out}; wait for it to finish or choose another "
                              "--out") from None

    def release(self):
        if self._lock.is_locked:
            self._lock.release()


def _holder(out):
    """`` (pid N)`` of the run whose temporary folder is beside ``out``, or ``""``."""
    for p in sorted(out.parent.glob(f".{out.name}.partial-*")):
        pid = p.name[len(f".{out.name}.partial-"):].split("-")[0]
        if pid.isdigit():
            return f" (pid {pid})"
    return ""


class _Terminated(SystemExit):
    """SIGTERM, raised so that the run's folder is cleaned up before the process ends."""


def _terminated(signum, frame):
    raise _Terminated(128 + signum)


@contextlib.contextmanager
def _sigterm_unwinds():
    """While a run holds its folder, SIGTERM unwinds the run (its temporary folder is
    removed and its lock released, as with Ctrl-C), then ends the process by SIGTERM as it
    would have without us.  Only when SIGTERM has its default action, in the main thread."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL):
        yield
        return
    signal.signal(signal.SIGTERM, _terminated)
    try:
        yield
    except _Terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)  # the default action: the process ends here
        raise
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


# -- the swap ---------------------------------------------------------------------------------


def _exchange(a, b):
    """Swap two existing paths atomically (Linux ``renameat2``); False when unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                          ctypes.c_uint]
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (22, 38, 95):  # EINVAL, ENOSYS, EOPNOTSUPP: not supported here
        return False
    raise OSError(err, os.strerror(err), os.fspath(b))


@contextlib.contextmanager
def _sigint_deferred():
    """Hold Ctrl-C (and SIGTERM, when :func:`_sigterm_unwinds` handles it) for the few
    system calls of the swap, then deliver it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught = []
    held = [signal.SIGINT]
    if signal.getsignal(signal.SIGTERM) is _terminated:
        held.append(signal.SIGTERM)
    previous = {sig: signal.signal(sig, lambda signum, frame: caught.append(signum))
                for sig in held}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if signal.SIGTERM in caught:
            _terminated(signal.SIGTERM, None)
        if caught:
            raise KeyboardInterrupt


class OutputFolder:
    """Context manager: lock ``out``, give a temporary folder to fill, swap it in on commit.

    Parameters
    ----------
    out : str or path-like
        Checked with :func:`check_out`.

    Examples
    --------
    >>> with OutputFolder("runs/a") as folder:        # doctest: +SKIP
    ...     (folder.stage / "run.json").write_text("{}")
    ...     folder.commit()

    Leaving the block without :meth:`commit` (an exception, Ctrl-C) removes the temporary
    folder and leaves ``out`` as it was.
    """

    def __init__(self, out):
        self.out = check_out(out)
        self.stage = None
        self.committed = False
        self._lock = _Lock(self.out.parent / f".{self.out.name}.lock", self.out)
        self._sigterm = None

    def __enter__(self):
        try:
            self.out.parent.mkdir(parents=True, exist_ok=True)
            self._lock.acquire()
        except OutputError:
            raise
        except OSError as exc:
            raise OutputError(f"--out {self.out}: cannot write in {self.out.parent}: "
                              f"{exc.strerror}") from None
        try:
            self._sigterm = _sigterm_unwinds()
            self._sigterm.__enter__()
            self._recover()
            self.out = check_out(self.out)  # it may have changed before the lock was ours
            self.stage = Path(tempfile.mkdtemp(prefix=f".{self.out.name}.partial-{os.getpid()}-",
                                               dir=self.out.parent))
        except BaseException:
            self._release(*sys.exc_info())
            raise
        return self

    def _release(self, *exc):
        try:
            self._lock.release()
        finally:
            if self._sigterm is not None:
                sigterm, self._sigterm = self._sigterm, None
                sigterm.__exit__(*(exc or (None, None, None)))

    def _leftovers(self, kind):
        return sorted(self.out.parent.glob(f".{self.out.name}.{kind}-*"))

    def _recover(self):
        """Restore a previous run left aside by a process that died mid-swap; remove
        temporary folders of runs that died (the lock is ours, so none is in use)."""
        old = self._leftovers("old")
        if old and not os.path.lexists(self.out):
            os.rename(old[-1], self.out)
            old = old[:-1]
        for p in old + self._leftovers("partial"):
            shutil.rmtree(p, ignore_errors=True)

    def commit(self):
        """Swap the filled temporary folder into place (the previous run is then removed)."""
        os.chmod(self.stage, 0o777 & ~_umask())  # mkdtemp's 0o700 would end up on ``out``
        gone = None
        try:
            with _sigint_deferred():
                if not os.path.lexists(self.out):
                    os.rename(self.stage, self.out)
                elif _exchange(self.stage, self.out):
                    gone = self.stage  # now holds the previous run
                else:
                    gone = Path(tempfile.mkdtemp(prefix=f".{self.out.name}.old-",
                                                 dir=self.out.parent))
                    os.rmdir(gone)
                    os.rename(self.out, gone)
                    try:
                        os.rename(self.stage, self.out)
                    except OSError:
                        os.rename(gone, self.out)
                        raise
                self.committed = True
        finally:
            if self.committed and gone is not None:
                shutil.rmtree(gone, ignore_errors=True)

    def __exit__(self, *exc):
        try:
            if not self.committed and self.stage is not None:
                shutil.rmtree(self.stage, ignore_errors=True)
        finally:
            self._release(*exc)
        return False


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
