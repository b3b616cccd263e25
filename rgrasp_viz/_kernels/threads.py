"""Thread count of the kernels, and a small pool that runs fixed chunks of work.

The full-gradient kernels split their rows into a fixed set of chunks that depends only on
the shape of the data (see :func:`rgrasp_viz._kernels.gradient.row_chunks`), compute one
partial result per chunk and add the partial results in chunk order.  Which thread computes
which chunk therefore never changes a result: every thread count gives the same bits.

Threads claim chunks one at a time from a shared counter (the calling thread works too), so
on a machine whose cores are busy with other processes a worker that is not scheduled simply
takes fewer chunks.  The chunk kernels are compiled with ``nogil=True``; without Numba (no GIL
release, e.g. in JupyterLite where threads do not exist) everything runs on the calling
thread.

Control: :func:`set_num_threads` or the environment variable ``RGRASP_VIZ_NUM_THREADS`` (a
positive integer); by default the kernels use the CPUs that other processes leave free
(:func:`get_num_threads`), because on a machine whose cores are all busy a second thread
mostly waits (for a core, or for the Python lock between chunks) and slows the call down.
"""

from __future__ import annotations

import itertools
import operator
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from ._jit import HAVE_NUMBA

ENV_VAR = "RGRASP_VIZ_NUM_THREADS"

_state = {"threads": None, "pool": None, "pool_size": 0, "pid": None}
_lock = threading.Lock()


def _available_cpus():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not on every platform
        return os.cpu_count() or 1


def _parse(value, source):
    try:
        k = int(value, 10) if isinstance(value, str) else operator.index(value)
    except (TypeError, ValueError):
        raise ValueError(f"{source} must be a positive integer, got {value!r}") from None
    if k < 1 or isinstance(value, bool):
        raise ValueError(f"{source} must be a positive integer, got {value!r}")
    return k


def _configured():
    """``RGRASP_VIZ_NUM_THREADS`` as an int, or ``None`` when unset (automatic)."""
    env = os.environ.get(ENV_VAR, "").strip()
    return _parse(env, ENV_VAR) if env else None


class _CpuMeter:
    """Estimate of the CPUs that other processes leave free, refreshed at most every 0.5 s.

    Linux: from ``/proc/stat`` (busy time of the whole machine) minus this process's own CPU
    time over the last interval; elsewhere, or before a first interval: from the 1-minute
    load average (which counts this process as about one busy CPU).
    """

    INTERVAL = 0.5

    def __init__(self):
        self.last = None  # (monotonic time, busy ticks, total ticks, own seconds)
        self.free = None

    @staticmethod
    def _sample():
        with open("/proc/stat", "rb") as fh:
            fields = [int(v) for v in fh.readline().split()[1:9]]
        t = os.times()
        idle = fields[3] + fields[4]
        return time.monotonic(), sum(fields) - idle, sum(fields), t.user + t.system

    def free_cpus(self, cpus):
        now = time.monotonic()
        if self.last is not None and now - self.last[0] < self.INTERVAL:
            return self.free
        try:
            sample = self._sample()
        except (OSError, ValueError, IndexError):
            sample = None
        if sample is not None and self.last is not None and sample[2] > self.last[2]:
            ticks = sample[2] - self.last[2]
            busy = (sample[1] - self.last[1]) / ticks * cpus  # CPUs busy, all processes
            hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
            own = (sample[3] - self.last[3]) * hz / ticks * cpus  # CPUs busy, this process
            self.free = cpus - max(0.0, busy - own)
        else:
            try:
                self.free = cpus - max(0.0, os.getloadavg()[0] - 1.0)
            except (AttributeError, OSError):  # pragma: no cover - not on every platform
                self.free = float(cpus)
        self.last = sample if sample is not None else (now, 0, 0, 0.0)
        return self.free


_meter = _CpuMeter()


def get_num_threads():
    """The number of threads the full-gradient kernels use for their next call.

    A number set with :func:`set_num_threads` or ``RGRASP_VIZ_NUM_THREADS``; otherwise
    (automatic) the CPUs of this process that other processes leave free, at least 1: a
    thread that the operating system does not schedule holds up the whole call.  Always 1
    without Numba.

    Returns
    -------
    int
    """
    if not HAVE_NUMBA:
        return 1
    if _state["threads"] is None:
        _state["threads"] = _configured() or 0  # 0: automatic
    if _state["threads"]:
        return _state["threads"]
    cpus = _available_cpus()
    if cpus <= 1:
        return 1
    return max(1, min(cpus, int(_meter.free_cpus(cpus) + 0.5)))


def set_num_threads(k=None):
    """Set how many threads the full-gradient kernels use.

    Results do not depend on this number (the work is split the same way for every thread
    count), only the speed does.  Small problems always run on one thread.

    Parameters
    ----------
    k : int, "auto" or None
        A positive integer; ``"auto"`` for the CPUs that other processes leave free;
        ``None`` restores the default (``RGRASP_VIZ_NUM_THREADS``, else automatic).

    Returns
    -------
    int or str
        The previous setting (``"auto"`` when automatic).
    """
    if _state["threads"] is None:
        _state["threads"] = _configured() or 0
    previous = _state["threads"] or "auto"
    if k is None:
        _state["threads"] = _configured() or 0
    elif isinstance(k, str) and k == "auto":
        _state["threads"] = 0
    else:
        _state["threads"] = _parse(k, "num_threads")
    return previous


def _pool(workers):
    """The shared executor with at least ``workers`` threads (re-made after a fork)."""
    with _lock:
        pid = os.getpid()
        if _state["pool"] is None or _state["pid"] != pid or _state["pool_size"] < workers:
            if _state["pool"] is not None and _state["pid"] == pid:
                _state["pool"].shutdown(wait=False)
            _state["pool"] = ThreadPoolExecutor(max_workers=workers,
                                                thread_name_prefix="rgrasp_viz")
            _state["pool_size"] = workers
            _state["pid"] = pid
        return _state["pool"]


MAIN, WORKER, STOLEN = 0, 1, 2
"""How a chunk was computed (the ``mode`` argument of the ``compute`` callback of
:func:`run_chunks`): by the calling thread, by a worker, or by the calling thread again
because the worker that claimed it had not finished in time."""


def run_chunks(compute, n_chunks, n_threads, on_workers_done=None):
    """Call ``compute(c, mode)`` once for every chunk ``c = 0 .. n_chunks-1`` that counts.

    The calling thread and up to ``n_threads - 1`` pool threads claim chunks one at a time.
    ``mode`` says who computes (:data:`MAIN`, :data:`WORKER`, :data:`STOLEN`); ``compute``
    must write a worker's results only to scratch space of this call, because a worker can
    be overtaken: once every chunk is claimed, the calling thread waits for each chunk a
    worker still holds at most about twice the time its own chunks took, then computes that
    chunk itself (``STOLEN``) and ignores the worker's copy.  So a worker that the operating
    system does not schedule (a machine busy with other processes) delays the call by a
    fraction of a chunk, not by a time slice.  A worker that finishes after the call
    returned still writes its scratch: ``on_workers_done()`` is called (from whichever
    thread finishes last) once no worker of this call runs any more, to release that space.

    Returns
    -------
    list of int
        The mode of the copy that counts, per chunk.
    """
    n_threads = min(int(n_threads), int(n_chunks))
    modes = [MAIN] * n_chunks
    if n_threads <= 1:
        for c in range(n_chunks):
            compute(c, MAIN)
        if on_workers_done is not None:
            on_workers_done()
        return modes
    counter = itertools.count()  # next() on itertools.count is atomic under the GIL
    done = [threading.Event() for _ in range(n_chunks)]
    mine = [False] * n_chunks
    live = {"workers": n_threads - 1}
    live_lock = threading.Lock()

    def worker():
        try:
            while True:
                c = next(counter)
                if c >= n_chunks:
                    return
                compute(c, WORKER)
                done[c].set()
        finally:
            with live_lock:
                live["workers"] -= 1
                last = live["workers"] == 0
            if last and on_workers_done is not None:
                on_workers_done()

    pool = _pool(n_threads - 1)
    for _ in range(n_threads - 1):
        pool.submit(worker)
    spent, count = 0.0, 0
    while True:
        c = next(counter)
        if c >= n_chunks:
            break
        t0 = time.perf_counter()
        compute(c, MAIN)
        spent += time.perf_counter() - t0
        count += 1
        mine[c] = True
    patience = 2.0 * spent / count + 1e-4 if count else 1e-3
    for c in range(n_chunks):
        if mine[c]:
            continue
        if done[c].wait(patience):
            modes[c] = WORKER
        else:
            compute(c, STOLEN)
            modes[c] = STOLEN
    return modes


class BlasThreads:
    """Limit BLAS / LAPACK to the kernels' thread count for a block (threadpoolctl, if present).

    A multi-threaded BLAS on a machine whose cores are busy waits for a descheduled thread
    at every barrier, even on small matrices; the kernels' count (:func:`get_num_threads`)
    already says how many CPUs are free.  Used around the solver's linear algebra and the
    driver's objective evaluations.

    Parameters
    ----------
    limit : int, optional
        At most this many threads (e.g. 1 for linear algebra too small to gain from more).
    """

    _libs = None  # the BLAS libraries' controllers, found once (threadpoolctl)

    def __init__(self, limit=None):
        self.limit = limit  # None: the kernels' count; else at most this many

    @classmethod
    def _blas(cls):
        if cls._libs is None:
            try:
                from threadpoolctl import ThreadpoolController  # optional: with scikit-learn
            except ImportError:  # pragma: no cover - optional dependency
                cls._libs = ()
            else:
                cls._libs = tuple(ThreadpoolController().select(user_api="blas")
                                  .lib_controllers)
        return cls._libs

    def __enter__(self):
        # each library's count is read and set directly (a microsecond each): a block whose
        # libraries already run the wanted count -- a nested block, or a machine whose
        # kernels use one thread -- changes nothing and restores nothing
        self._restore = ()
        libs = BlasThreads._blas()
        if not libs:
            return self
        if self.limit is not None and int(self.limit) <= 1:
            k = 1  # whatever the kernels' count: no need to read it
        else:
            k = get_num_threads() if self.limit is None else max(1, min(int(self.limit),
                                                                         get_num_threads()))
        changed = [(lib, b) for lib in libs if (b := lib.get_num_threads()) != k]
        for lib, _ in changed:
            lib.set_num_threads(k)
        self._restore = changed
        return self

    def __exit__(self, *exc):
        for lib, b in self._restore:
            lib.set_num_threads(b)
        return False
