"""Debounced, stale-dropping execution of slow work triggered by widgets.

A learner dragging a slider sends many values in a row; only the latest one matters.  A
:class:`Debouncer` waits for a quiet period, computes once with the latest value and drops a
result that is already out of date when it arrives.  A computation that does not return (a
learner's step-5 solver stuck in a loop) never freezes the dashboard: it runs in a thread of
its own, the dashboard is told how long it has been running, and a newer request starts a
new computation whose result is shown (the stuck one's result, should it ever come, is
dropped).
"""

from __future__ import annotations

import asyncio
import threading
import time

__all__ = ["Debouncer"]


class Debouncer:
    """Run ``compute(params)`` for the latest request only, then ``apply(result)``.

    Parameters
    ----------
    compute : callable
        ``compute(params) -> result``; may take long (or never return).  It runs in a worker
        thread of its own (one per computation), so it must not touch widgets.
    apply : callable
        ``apply(result)``; called only for a result computed from the latest request.
        Inside a Jupyter kernel (a running asyncio event loop, e.g. JupyterLab or Voila)
        ``apply``, ``on_error`` and ``on_busy`` run on the kernel's own thread, because
        widget and FigureWidget state is not thread-safe: updates sent from a worker thread
        while the kernel handles messages from the browser can be lost; the quiet period is
        a timer on that loop.  Without an event loop (scripts, tests) they run in worker
        threads; with ``delay == 0`` everything runs in the caller's thread.
    on_error : callable
        ``on_error(exception)`` when ``compute`` or ``apply`` raises (for the latest request).
    delay : float, default 0.1
        Quiet time in seconds: a request waits until no newer request arrived for ``delay``
        seconds.  ``0`` (or less) is the synchronous mode: :meth:`request` computes and applies
        before returning.
    on_busy : callable, optional
        ``on_busy(seconds)`` every ``tick`` seconds while the computation of the latest
        request runs (from ``tick`` seconds on: quick ones never call it), e.g. to show
        "solving… 12 s".
    tick : float, default 1.0
        Seconds between two ``on_busy`` calls.
    supersede_after : float, default 3.0
        A newer request waits for the computation in flight to end (usually the quickest
        way to its own result: no two solves compete for the CPUs), but not longer than
        until that computation has run ``supersede_after`` seconds: then it starts anyway,
        and the older result is dropped when it comes.

    Attributes
    ----------
    n_computed : int
        Calls of ``compute`` that returned so far.
    n_applied : int
        Results applied (or errors reported).
    n_dropped : int
        Results thrown away because a newer request arrived while computing.
    """

    def __init__(self, compute, apply, on_error, delay=0.1, *, on_busy=None, tick=1.0,
                 supersede_after=3.0):
        self.compute = compute
        self.apply = apply
        self.on_error = on_error
        self.on_busy = on_busy
        self.delay = float(delay or 0.0)
        self.tick = float(tick)
        self.supersede_after = float(supersede_after)
        self.n_computed = 0
        self.n_applied = 0
        self.n_dropped = 0
        self._cond = threading.Condition()
        self._apply_lock = threading.Lock()  # one apply at a time (thread mode)
        self._gen = 0  # id of the latest request
        self._done = 0  # id of the latest request fully handled
        self._started = 0  # id of the latest request whose computation started
        self._inflight = {}  # id -> monotonic start time of computations running
        self._results = {}  # kernel mode: id -> (result, error) waiting for the loop
        self._params = None
        self._due = 0.0
        self._closed = False
        self._thread = None
        self._timer = None  # pending asyncio timer (kernel mode)
        self._behind = False  # the timer waits for a computation in flight (kernel mode)
        self._ticker = None  # pending asyncio on_busy timer (kernel mode)
        self._loop = None  # the kernel's event loop (kernel mode)

    @property
    def synchronous(self):
        """bool: True when requests are handled in the caller's thread."""
        return self.delay <= 0

    def request(self, params):
        """Ask for ``params`` to be computed and applied (superseding older requests).

        Parameters
        ----------
        params : object
            Passed to ``compute``.
        """
        if self.synchronous:
            with self._cond:
                self._gen += 1
                gen = self._gen
                self._started = gen
            self._finish(gen, *self._call(params))
            return
        loop = _running_loop()
        if loop is not None:
            # kernel mode: restart the quiet-period timer; only the last request runs
            with self._cond:
                if self._closed:
                    return
                self._gen += 1
                self._params = params
            self._loop = loop
            if self._timer is not None:
                self._timer.cancel()
            self._behind = False
            self._timer = loop.call_later(self.delay, self._fire)
            return
        with self._cond:
            if self._closed:
                return
            self._gen += 1
            self._params = params
            self._due = time.monotonic() + self.delay
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop_thread, daemon=True,
                                                name="rgrasp-viz-debouncer")
                self._thread.start()
            self._cond.notify_all()

    # -- computing and handling one result ----------------------------------------------------
    def _call(self, params):
        try:
            return self.compute(params), None
        except Exception as exc:  # noqa: BLE001 - shown to the user by on_error
            return None, exc

    def _finish(self, gen, result, error):
        """Count a finished computation; apply it if it is still the latest request (in
        kernel mode on the loop thread, else in the calling thread)."""
        with self._cond:
            self.n_computed += 1
            self._inflight.pop(gen, None)
            stale = gen != self._gen or self._closed
            if stale:
                self.n_dropped += 1
                self._cond.notify_all()
        if stale:
            return False
        with self._apply_lock:
            try:
                if error is None:
                    self.apply(result)
                else:
                    self.on_error(error)
            except Exception as exc:  # noqa: BLE001
                self.on_error(exc)
        with self._cond:
            self.n_applied += 1
            self._done = max(self._done, gen)
            self._cond.notify_all()
        return True

    def _start(self, gen, params, kernel):
        """Run the computation of request ``gen`` in a thread of its own (lock held)."""
        self._started = gen
        self._inflight[gen] = time.monotonic()

        def work():
            result, error = self._call(params)
            if not kernel:
                self._finish(gen, result, error)
                return
            with self._cond:
                self._results[gen] = (result, error)
                self._cond.notify_all()
            try:
                self._loop.call_soon_threadsafe(self._deliver)
            except RuntimeError:  # the loop is closed: nothing left to show it on
                pass

        threading.Thread(target=work, daemon=True, name=f"rgrasp-viz-compute-{gen}").start()

    def _wait_needed(self, now):
        """Seconds the latest request must still wait before it starts (lock held): its
        quiet period, then the computation in flight (up to ``supersede_after``)."""
        wait = self._due - now
        if self._inflight:
            newest = max(self._inflight.values())
            wait = max(wait, newest + self.supersede_after - now)
        return wait

    def _busy_seconds(self, now):
        """How long the latest request has been computing (None when it is not)."""
        t0 = self._inflight.get(self._gen)
        return None if t0 is None else now - t0

    # -- kernel mode: everything on the event loop's thread -----------------------------------
    def _fire(self):
        self._timer = None
        self._behind = False
        with self._cond:
            if self._closed or self._done == self._gen or self._started == self._gen:
                return
            wait = self._wait_needed(time.monotonic()) if self._inflight else 0.0
            if wait > 0:  # a computation is running: wait for it (or supersede it later)
                self._timer = self._loop.call_later(wait, self._fire)
                self._behind = True
                return
            self._start(self._gen, self._params, kernel=True)
        self._schedule_tick()

    def _deliver(self):
        """Handle the results the worker threads left (on the loop thread)."""
        with self._cond:
            ready = sorted(self._results.items())
            self._results.clear()
        for gen, (result, error) in ready:
            self._finish(gen, result, error)
        with self._cond:
            waiting = (not self._closed and self._started != self._gen
                       and self._done != self._gen)
        if waiting and self._behind:  # a newer request waited for the one that just ended
            self._timer.cancel()
            self._fire()

    def _schedule_tick(self):
        if self.on_busy is None or self._ticker is not None or self._loop is None:
            return
        self._ticker = self._loop.call_later(self.tick, self._tick)

    def _tick(self):
        self._ticker = None
        with self._cond:
            seconds = None if self._closed else self._busy_seconds(time.monotonic())
        if seconds is None:
            return
        self.on_busy(seconds)
        self._schedule_tick()

    # -- thread mode: a dispatcher thread -----------------------------------------------------
    def _loop_thread(self):
        next_tick = None
        while True:
            busy = None
            with self._cond:
                if self._closed:
                    return
                now = time.monotonic()
                if self._started != self._gen and self._done != self._gen:
                    wait = self._wait_needed(now)
                    if wait <= 0:
                        self._start(self._gen, self._params, kernel=False)
                        next_tick = now + self.tick
                        continue
                else:
                    wait = None
                seconds = self._busy_seconds(now)
                if seconds is not None and self.on_busy is not None:
                    if next_tick is None:
                        next_tick = now + self.tick
                    if now >= next_tick:
                        busy = seconds
                        next_tick = now + self.tick
                    else:
                        wait = min(wait, next_tick - now) if wait is not None \
                            else next_tick - now
                else:
                    next_tick = None
                if busy is None:
                    self._cond.wait(wait)
                    continue
            self.on_busy(busy)  # outside the lock: it updates widgets

    # -- waiting and closing ------------------------------------------------------------------
    @property
    def idle(self):
        """bool: True when the latest request has been handled."""
        with self._cond:
            return self._done == self._gen

    @property
    def running(self):
        """float or None: seconds the computation of the latest request has been running."""
        with self._cond:
            return self._busy_seconds(time.monotonic())

    def wait(self, timeout=30.0):
        """Block until the latest request has been handled.

        Parameters
        ----------
        timeout : float, default 30
            Seconds.

        Returns
        -------
        bool
            False when the timeout expired first.
        """
        if self._loop is not None and _running_loop() is self._loop:
            # kernel mode, on the loop's thread: blocking would stall the loop that applies
            # results, so start the latest request now and handle its result here
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            with self._cond:
                if not self._closed and self._started != self._gen \
                        and self._done != self._gen:
                    self._start(self._gen, self._params, kernel=True)
                latest = self._gen
                ok = self._cond.wait_for(
                    lambda: self._closed or self._done == self._gen
                    or latest in self._results, timeout)
            self._deliver()
            return ok
        with self._cond:
            return self._cond.wait_for(lambda: self._done == self._gen or self._closed,
                                       timeout)

    def close(self):
        """Stop the worker thread (pending requests are abandoned; results of computations
        still running are dropped)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        for attr in ("_timer", "_ticker"):
            timer = getattr(self, attr)
            if timer is not None:
                timer.cancel()
                setattr(self, attr, None)


def _running_loop():
    """The asyncio loop running in this thread (a Jupyter kernel's), else None."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
