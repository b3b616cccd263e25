"""A child process whose stderr is a terminal (a pseudo-terminal), as when a user runs it.

Progress bars (``tqdm``) are drawn only on a terminal; the tests that follow a run by its
progress (to interrupt it at a given stage) and the tests of the bars read the terminal.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time


class TtyRun:
    """``python -m rgrasp_viz ARGS`` with stderr on a 160-column pseudo-terminal.

    ``wait_for(text)`` reads the terminal until ``text`` appears; ``finish()`` waits for the
    exit and returns ``(returncode, stdout, terminal text)``.
    """

    def __init__(self, args, **kw):
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        env.pop("TQDM_DISABLE", None)
        self.proc = subprocess.Popen([sys.executable, "-m", "rgrasp_viz", *args], env=env,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=slave, text=True, **kw)
        os.close(slave)
        self.master = master
        self.seen = b""
        self.pid = self.proc.pid

    def _read(self, timeout):
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return False
        try:
            chunk = os.read(self.master, 65536)
        except OSError:  # EIO: the child closed the terminal
            chunk = b""
        self.seen += chunk
        return bool(chunk)

    @property
    def text(self):
        return self.seen.decode(errors="replace")

    def wait_for(self, text, timeout=300):
        """Read until ``text`` is on the terminal (AssertionError after ``timeout`` s)."""
        end = time.monotonic() + timeout
        while text not in self.text:
            left = end - time.monotonic()
            if left <= 0 or (not self._read(min(left, 1.0)) and self.proc.poll() is not None
                             and not self._read(0)):
                raise AssertionError(f"{text!r} never shown; terminal: {self.text[-2000:]!r}")
        return self.text

    def send_signal(self, sig):
        self.proc.send_signal(sig)

    def finish(self, timeout=300):
        end = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < end:
            self._read(0.2)  # keep the terminal drained, or the child blocks writing to it
        try:
            stdout, _ = self.proc.communicate(timeout=max(end - time.monotonic(), 1))
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        while self._read(0.2):
            pass
        self._close()
        return self.proc.returncode, stdout, self.text

    def kill(self):
        """Kill the child if it still runs (cleanup after a failed test)."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._close()

    def _close(self):
        if self.master is not None:
            os.close(self.master)
            self.master = None
