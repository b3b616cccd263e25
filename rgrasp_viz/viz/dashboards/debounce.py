"""Debounced, stale-dropping execution of slow work triggered by widgets.

A learner dragging a slider sends many values in a row; only the latest one matters.  A
:class:`Debouncer` waits for a quiet period, computes once with the latest value and drops a
result that is already out of date when it arrives.
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
        ``compute(params) -> result``; may take long.  Inside a Jupyter kernel (a running
        asyncio event loop, e.g. JupyterLab or Voila) the quiet period is a timer on that
        loop and ``compute`` and ``apply`` run on the kernel's own thread, because widget
        and FigureWidget state is not thread-safe: updates sent from a worker thread while
        the kernel handles messages from the browser can be lost.  Without an event loop
        (scripts, tests) they run in a worker thread; with ``delay == 0`` in the caller's
        thread.
    apply : callable
        ``apply(result)``; called only for a result computed from the latest request.
    on_error : callable
        ``on_error(exception)`` when ``compute`` or ``apply`` raises (for the latest request).
    delay : float, default 0.1
        Quiet time in seconds: a request waits until no newer request arrived for ``delay``
        seconds.  ``0`` (or less) is the synchronous mode: :meth:`request` computes and applies
        before returning.

    Attributes
    ----------
    n_computed : int
        Calls of ``compute`` so far.
    n_applied : int
        Results applied (or errors reported).
    n_dropped : int
        Results thrown away because a newer request arrived while computing.
    """

    def __init__(self, compute, apply, on_error, delay=0.1):
        self.compute = compute
        self.apply = apply
        self.on_error = on_error
        self.delay = float(delay or 0.0)
        self.n_computed = 0
        self.n_applied = 0
        self.n_dropped = 0
        self._cond = threading.Condition()
        self._gen = 0  # id of the latest request
        self._done = 0  # id of the latest request fully handled
        self._params = None
        self._due = 0.0
        self._closed = False
        self._thread = None
        self._timer = None  # pending asyncio timer (kernel mode)

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
            self._run(gen, params)
            return
        loop = _running_loop()
        if loop is not None:
            # kernel mode: restart the quiet-period timer; only the last request runs
            with self._cond:
                if self._closed:
                    return
                self._gen += 1
                self._params = params
            if self._timer is not None:
                self._timer.cancel()
            self._timer = loop.call_later(self.delay, self._fire)
            return
        with self._cond:
            if self._closed:
                return
            self._gen += 1
            self._params = params
            self._due = time.monotonic() + self.delay
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, daemon=True,
                                                name="rgrasp-viz-debouncer")
                self._thread.start()
            self._cond.notify_all()

    def _run(self, gen, params):
        try:
            result, error = self.compute(params), None
        except Exception as exc:  # noqa: BLE001 - shown to the user by on_error
            result, error = None, exc
        with self._cond:
            self.n_computed += 1
            stale = gen != self._gen
            if stale:
                self.n_dropped += 1
        if not stale:
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
        return not stale

    def _fire(self):
        self._timer = None
        with self._cond:
            if self._closed or self._done == self._gen:
                return
            gen, params = self._gen, self._params
        self._run(gen, params)

    def _loop(self):
        while True:
            with self._cond:
                while self._done == self._gen and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                while True:  # debounce: wait for a quiet period
                    remaining = self._due - time.monotonic()
                    if remaining <= 0 or self._closed:
                        break
                    self._cond.wait(remaining)
                if self._closed:
                    return
                gen, params = self._gen, self._params
            self._run(gen, params)

    @property
    def idle(self):
        """bool: True when the latest request has been handled."""
        with self._cond:
            return self._done == self._gen

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
        if self._timer is not None and _running_loop() is not None:
            # kernel mode: blocking would stall the loop that runs the timer; flush now
            self._timer.cancel()
            self._fire()
        with self._cond:
            return self._cond.wait_for(lambda: self._done == self._gen or self._closed,
                                       timeout)

    def close(self):
        """Stop the worker thread (pending requests are abandoned)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def _running_loop():
    """The asyncio loop running in this thread (a Jupyter kernel's), else None."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
