"""Dashboards: :func:`explore`, :func:`play`, :func:`compare` (ipywidgets + plotly FigureWidget).

Each dashboard is an ``ipywidgets.VBox`` (it displays itself in Jupyter, JupyterLab and
Voila) with its widgets, its ``FigureWidget``\\ s and its last result as attributes, so
notebooks and tests can drive it from Python.

Rules followed everywhere:

* every ``FigureWidget`` is built with its full data and layout in the constructor, and later
  changes are made inside ``batch_update()`` (one message per figure and change);
* animation uses an ipywidgets ``Play`` linked to a slider, never plotly frames;
* figures come from the pure builders of :mod:`rgrasp_viz.viz.figures`; solving goes
  through :func:`rgrasp_viz.solve` (no kernel is touched here).

Re-solving in :class:`Explorer` goes through a :class:`Debouncer`: changes arriving within
``debounce`` seconds of each other cause one solve with the latest values, a result that is
already out of date when it arrives is dropped, and ``debounce=0`` runs everything
synchronously in the caller's thread (tests, benchmarks).
"""

from __future__ import annotations

import asyncio
import html
import math
import threading
import time
from collections import OrderedDict

import ipywidgets as widgets
import numpy as np
import plotly.graph_objects as go
from plotly.basedatatypes import Undefined as _UNDEFINED

from ..problems import as_problem, make_regression
from ..solvers import default_eta, solve
from ..solvers.registry import get_method, method_names
from . import figures as F
from . import static

__all__ = ["Comparison", "Debouncer", "Explorer", "Player", "compare", "explore", "play"]



# -- debounced, stale-dropping execution -------------------------------------------------------


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


# -- FigureWidget updates ----------------------------------------------------------------------


def _figure_widget(spec):
    """A FigureWidget holding the full data and layout of ``spec`` from the start."""
    return go.FigureWidget(spec)


def update_figure(fw, spec):
    """Make ``fw`` show ``spec`` (a builder's ``*_spec`` output) with one batched update.

    When the traces keep their number and types (the usual case: builders emit a fixed
    structure), every trace property and layout entry of ``spec`` is applied as one
    ``plotly_update`` inside ``fw.batch_update()`` -- one message to the browser, no
    per-property validation (the specs come from the builders, whose output is validated
    whenever a ``go.Figure`` is made from them).  Otherwise the traces are replaced first.

    Parameters
    ----------
    fw : plotly.graph_objects.FigureWidget
    spec : dict
        ``{"data": [trace dicts], "layout": {...}}``.
    """
    data, layout = spec["data"], spec["layout"]
    relayout = {k: v for k, v in layout.items() if k != "template"}
    same = len(fw.data) == len(data) and all(
        t.type == d.get("type", "scatter") for t, d in zip(fw.data, data, strict=True))
    if not same or any(k not in fw.layout for k in relayout):
        # new structure (e.g. the first run to show): validated assignments
        if not same:
            fw.data = ()
            fw.add_traces(data)
        with fw.batch_update():
            for key, val in relayout.items():
                fw.layout[key] = val
        return
    keys = []
    for d in data:
        keys += [k for k in d if k != "type" and k not in keys]
    restyle = {k: [d.get(k, _UNDEFINED) for d in data] for k in keys}
    with fw.batch_update():
        fw.plotly_update(restyle_data=restyle, relayout_data=relayout,
                         trace_indexes=list(range(len(data))))


def _esc(text):
    return html.escape(str(text))


def _box(text, kind):
    colors = {"ok": ("#1B5E20", "#E8F5E9"), "warn": ("#8A4B00", "#FFF4E5"),
              "error": ("#8B0000", "#FDECEA"), "busy": ("#333333", "#F2F2F2")}
    fg, bg = colors[kind]
    return (f'<div class="rgrasp-status rgrasp-{kind}" style="color:{fg};background:{bg};'
            f'padding:4px 8px;border-radius:4px;font-size:13px">{text}</div>')


# -- explore -----------------------------------------------------------------------------------


def _slider_layout(width="330px"):
    return widgets.Layout(width=width)


_STYLE = {"description_width": "48px"}


class Explorer(widgets.VBox):
    """Interactive solver: method picker, parameter sliders, three live figures.

    Build it with :func:`explore`.  Every change of a widget re-solves (debounced, stale
    results dropped) and redraws the convergence plot (current run, plus the previous run on
    the same problem, dotted), the support raster and the thresholding timeline of the
    current run.  Diverging runs and errors are reported in :attr:`status`; the figures then
    keep showing the last good run.

    Attributes
    ----------
    method : ipywidgets.Dropdown
        The method (description ``"method"``).
    sliders : dict of str to ipywidgets slider
        ``"s"``, ``"eta"``, ``"J"``, ``"m"``, ``"n"``, ``"d"``, ``"noise"``, ``"seed"``; each
        slider's ``description`` is its key.
    status : ipywidgets.HTML
        Outcome of the last solve (success, divergence or error message).
    fig_convergence, fig_raster, fig_timeline : plotly.graph_objects.FigureWidget
    result : SolveResult or None
        The run the figures show (the last one that did not diverge).
    previous : SolveResult or None
        The run before it (drawn dotted when on the same problem).
    last_result : SolveResult or None
        The most recent solve, diverged or not.
    error : str or None
        The message shown for the last solve if it failed or diverged, else None.
    problem : Problem
        The problem of the last solve.
    debouncer : Debouncer
    """

    def __init__(self, problem=None, method="svrgsp+", *, s=None, eta=None, J=None, m=6,
                 n=500, d=1000, noise=0.01, seed=0, max_iter=None, x="passes",
                 debounce=0.1, reference="grasp", cost=None, max_rows=150):
        super().__init__()
        method = get_method(method).name
        if reference not in ("grasp", None):
            raise ValueError("reference must be 'grasp' (a GraSP run gives F*) or None "
                             "(best over the plotted runs)")
        self.max_iter = max_iter
        self.x = x
        self.reference = reference
        self.cost = cost
        self.max_rows = max_rows
        self.result = self.previous = self.last_result = None
        self.error = None
        self.last_duration = math.nan
        self._lock = threading.Lock()
        self._problems = OrderedDict()
        self._refs = OrderedDict()
        self._quiet = 0
        self._shown_key = None

        self._fixed = None if problem is None else as_problem(problem)
        if self._fixed is not None:
            n, d = self._fixed.n, self._fixed.d
        params0 = {"n": int(n), "d": int(d), "noise": float(noise), "seed": int(seed)}
        prob = self._problem({**params0})[0]
        self.problem = prob
        if s is None:
            s = prob.default_s or max(1, min(prob.d, prob.d // 100 or 1))
        eta_default = default_eta(prob, method, int(s))
        eta0 = float(eta) if eta is not None else eta_default
        J = 2 * prob.n if J is None else int(J)

        lay = _slider_layout()
        self.method = widgets.Dropdown(
            options=[(F.method_label(k), k) for k in method_names()], value=method,
            description="method", style={"description_width": "56px"}, layout=lay)
        smax = min(prob.d, max(4 * int(s), 40))
        self.sliders = {
            "s": widgets.IntSlider(value=int(s), min=1, max=smax, description="s",
                                   style=_STYLE, layout=lay),
            "eta": widgets.FloatLogSlider(value=eta0, base=10, description="eta",
                                          readout_format=".3g", style=_STYLE, layout=lay,
                                          **self._eta_range(eta_default, eta0)),
            "J": widgets.IntSlider(value=J, min=10, max=max(10 * prob.n, J), step=10,
                                   description="J", style=_STYLE, layout=lay),
            "m": widgets.IntSlider(value=int(m), min=1, max=30, description="m",
                                   style=_STYLE, layout=lay),
            "n": widgets.IntSlider(value=prob.n, min=50, max=max(3000, prob.n), step=50,
                                   description="n", style=_STYLE, layout=lay),
            "d": widgets.IntSlider(value=prob.d, min=50, max=max(5000, prob.d), step=50,
                                   description="d", style=_STYLE, layout=lay),
            "noise": widgets.FloatSlider(value=float(noise), min=0.0, max=0.5, step=0.005,
                                         readout_format=".3f", description="noise",
                                         style=_STYLE, layout=lay),
            "seed": widgets.IntSlider(value=int(seed), min=0, max=100, description="seed",
                                      style=_STYLE, layout=lay),
        }
        tips = {"s": "sparsity level s", "eta": "step size η (log scale)",
                "J": "inner steps per epoch", "m": "SVRGSP+: H_|T| per epoch",
                "n": "samples", "d": "features", "noise": "noise variance σ²",
                "seed": "random seed (data and sampled indices)"}
        for key, w in self.sliders.items():
            w.tooltip = tips[key]
        if self._fixed is not None:
            for key in ("n", "d", "noise"):
                self.sliders[key].disabled = True
        self.status = widgets.HTML(value=_box("solving…", "busy"))
        self.debouncer = Debouncer(self._compute, self._apply, self._on_error,
                                   delay=debounce)

        # first solve, synchronously: the figures are born with their data
        out = None
        try:
            out = self._compute(self.params())
        except Exception as exc:  # noqa: BLE001 - shown in the dashboard
            self._on_error(exc)
        specs = out["specs"] if out and out.get("specs") else self._empty_specs()
        self.fig_convergence = _figure_widget(specs["convergence"])
        self.fig_raster = _figure_widget(specs["raster"])
        self.fig_timeline = _figure_widget(specs["timeline"])
        if out is not None:
            self._apply(out, redraw=False)
        self._sync_enabled()

        self.method.observe(self._on_method, names="value")
        for w in self.sliders.values():
            w.observe(self._on_change, names="value")
        sl = self.sliders
        controls = widgets.VBox([
            widgets.HBox([self.method, sl["s"], sl["eta"]]),
            widgets.HBox([sl["J"], sl["m"], sl["seed"]]),
            widgets.HBox([sl["n"], sl["d"], sl["noise"]]),
        ])
        self.children = [controls, self.status, self.fig_convergence, self.fig_timeline,
                         self.fig_raster]
        self.add_class("rgrasp-explore")

    # -- parameters ---------------------------------------------------------------------------
    @staticmethod
    def _eta_range(eta, also=None):
        """Log10 range of the eta slider: the default step size / 100 to x 100 (stretched to
        include ``also``, a user's initial value)."""
        lo = hi = math.log10(eta)
        if also is not None and also > 0:
            lo, hi = min(lo, math.log10(also)), max(hi, math.log10(also))
        return {"min": lo - 2.0, "max": hi + 2.0, "step": 0.02}

    def params(self):
        """dict: the current widget values (method, s, eta, J, m, n, d, noise, seed)."""
        sl = getattr(self, "sliders", None)
        if sl is None:
            raise RuntimeError("widgets not built yet")
        out = {k: w.value for k, w in sl.items()}
        out["method"] = self.method.value
        return out

    def _problem(self, params):
        if self._fixed is not None:
            return self._fixed, ("fixed",)
        key = (int(params["n"]), int(params["d"]), round(float(params["noise"]), 6),
               int(params["seed"]))
        with self._lock:
            prob = self._problems.get(key)
        if prob is None:
            n, d, noise, seed = key
            prob = make_regression(n=n, d=d, s_star=max(1, round(d / 50)), noise_var=noise,
                                   random_state=seed)
            with self._lock:
                self._problems[key] = prob
                while len(self._problems) > 4:
                    self._problems.popitem(last=False)
        return prob, key

    def _reference(self, prob, key, s):
        if self.reference is None:
            return None
        rkey = (key, s)
        with self._lock:
            ref = self._refs.get(rkey)
        if ref is None:
            ref = solve(prob, "grasp", s=s, warn=False).trace
            with self._lock:
                self._refs[rkey] = ref
                while len(self._refs) > 8:
                    self._refs.popitem(last=False)
        return ref

    # -- observers ----------------------------------------------------------------------------
    def _sync_enabled(self):
        spec = get_method(self.method.value)
        self.sliders["J"].disabled = not spec.epoch
        self.sliders["m"].disabled = not spec.uses_m
        self.sliders["eta"].disabled = not spec.has_step  # GraSP solves on T exactly

    def _on_method(self, change):
        if self._quiet:
            return
        self._quiet += 1
        try:
            self._method_changed()
        finally:
            self._quiet -= 1
        self.request()

    def _method_changed(self):
        """New method: enable its sliders, move eta to its default step size."""
        self._sync_enabled()
        p = self.params()
        prob = self._problem(p)[0]
        eta = default_eta(prob, p["method"], min(int(p["s"]), prob.d))
        w = self.sliders["eta"]
        rng = self._eta_range(eta)
        # widen first so that the new value is never clamped
        w.min, w.max = min(w.min, rng["min"]), max(w.max, rng["max"])
        w.value = eta
        w.min, w.max = rng["min"], rng["max"]

    def _on_change(self, change):
        if self._quiet:
            return
        self.request()

    def request(self):
        """Re-solve with the current widget values (debounced; see :class:`Debouncer`)."""
        if self.debouncer.delay > 0:
            self.status.value = _box("solving…", "busy")
        self.debouncer.request(self.params())

    def wait(self, timeout=30.0):
        """Block until the latest change has been solved and drawn.

        Parameters
        ----------
        timeout : float, default 30

        Returns
        -------
        bool
            False on timeout.
        """
        return self.debouncer.wait(timeout)

    # -- compute (worker thread) and apply ----------------------------------------------------
    def _compute(self, params):
        t0 = time.perf_counter()
        prob, key = self._problem(params)
        method = params["method"]
        s = max(1, min(int(params["s"]), prob.d))
        kw = {"s": s, "eta": float(params["eta"]), "random_state": int(params["seed"]),
              "max_iter": self.max_iter, "warn": False}
        if get_method(method).epoch:
            kw["J"] = int(params["J"])
            kw["m"] = max(1, min(int(params["m"]), int(params["J"])))
        res = solve(prob, method, **kw)
        out = {"params": params, "result": res, "problem": prob, "key": key, "t0": t0,
               "specs": None}
        if res.status == 2:
            return out
        ref = self._reference(prob, key, s)
        prev = self.result if self._shown_key == key and self.result is not None else None
        out["previous"] = prev
        out["specs"] = self._specs(res, prev, ref)
        return out

    def _specs(self, res, prev, ref):
        runs = [prev, res] if prev is not None else [res]
        conv = F.convergence_spec(runs, x=self.x, y="both", fstar=ref)
        if prev is None:
            blank = [_blank(tr) for tr in conv["data"]]
            conv["data"] = blank + conv["data"]
        else:
            for tr in conv["data"][:2]:
                tr["line"] = {**tr["line"], "dash": "dot", "width": 1.5}
                tr["opacity"] = 0.55
                tr["name"] = f"previous: {tr['name']}"
        return {"convergence": conv,
                "raster": F.support_raster_spec(res, max_rows=self.max_rows),
                "timeline": F.threshold_timeline_spec([res], x="passes", cost=self.cost)}

    def _empty_specs(self):
        lay = {"template": F.TEMPLATE, "height": 300,
               "title": {"text": "no run to show yet", "x": 0.02}}
        return {k: {"data": [], "layout": dict(lay)} for k in ("convergence", "raster",
                                                                "timeline")}

    def _apply(self, out, redraw=True):
        res = out["result"]
        p = out["params"]
        self.last_result = res
        self.problem = out["problem"]
        if res.status == 2:
            good = (f" The plots still show the last run that did not diverge "
                    f"(η = {self.result.trace.meta['eta']:.3g})." if self.result is not None
                    else "")
            self.error = f"{F.method_label(res.method)} diverged: {res.message}."
            self.status.value = _box(
                f"⚠ <b>{_esc(F.method_label(res.method))} diverged</b> with η = "
                f"{p['eta']:.3g}: {_esc(res.message)}.{_esc(good)} Lower η.", "error")
            self.last_duration = time.perf_counter() - out["t0"]
            return
        self.previous = out.get("previous")
        self.result = res
        self._shown_key = out["key"]
        self.error = None
        if redraw:
            specs = out["specs"]
            update_figure(self.fig_convergence, specs["convergence"])
            update_figure(self.fig_raster, specs["raster"])
            update_figure(self.fig_timeline, specs["timeline"])
        self.last_duration = time.perf_counter() - out["t0"]
        tr = res.trace
        kind = "ok" if res.status == 0 else "warn"
        rel = f" · rel. error {res.rel_error:.2e}" if math.isfinite(res.rel_error) else ""
        self.status.value = _box(
            f"<b>{_esc(F.method_label(res.method))}</b>: {_esc(res.message)} · "
            f"{res.nit} iterations · {res.passes:.3g} passes · "
            f"{int(tr.n_thresholds[-1]):,} hard thresholdings · solver "
            f"{1e3 * res.time:.1f} ms{rel} · solve + redraw "
            f"{1e3 * self.last_duration:.0f} ms", kind)

    def _on_error(self, exc):
        self.error = f"{type(exc).__name__}: {exc}"
        self.status.value = _box(f"✖ <b>Error</b>: {_esc(self.error)}. The plots show the "
                                 "last successful run.", "error")

    # -- convenience ---------------------------------------------------------------------------
    @property
    def figures(self):
        """dict of str to FigureWidget: ``convergence``, ``raster``, ``timeline``."""
        return {"convergence": self.fig_convergence, "raster": self.fig_raster,
                "timeline": self.fig_timeline}

    def set(self, **values):
        """Set several widgets at once and re-solve once.

        Parameters
        ----------
        **values
            Slider keys (``s``, ``eta``, ``J``, ``m``, ``n``, ``d``, ``noise``, ``seed``)
            and/or ``method``.
        """
        unknown = set(values) - set(self.sliders) - {"method"}
        if unknown:
            raise KeyError(f"unknown parameters {sorted(unknown)}")
        meth = values.pop("method", None)
        self._quiet += 1
        try:
            if meth is not None and meth != self.method.value:
                self.method.value = meth
                self._method_changed()  # eta -> the method's default, unless given below
            for k, v in values.items():
                self.sliders[k].value = v
        finally:
            self._quiet -= 1
        self.request()

    def close(self):
        """Stop the background worker and close the widgets."""
        self.debouncer.close()
        super().close()

    def _repr_mimebundle_(self, **kwargs):
        """The live widget, plus a static copy of the figures for pages without a kernel
        (:func:`rgrasp_viz.viz.static.explorer_bundle`)."""
        return static.explorer_bundle(self, super()._repr_mimebundle_(**kwargs))


def _blank(trace_dict):
    out = dict(trace_dict)
    out["x"] = []
    out["y"] = []
    if "marker" in out:
        out["marker"] = {**out["marker"], "size": 6}
    out["showlegend"] = False
    out["name"] = "previous run"
    return out


def explore(problem=None, method="svrgsp+", **kwargs):
    """Open the interactive explorer: pick a method, drag ``s``, ``eta``, ``J``, ``m``...

    Parameters
    ----------
    problem : Problem or (W, y), optional
        Fixed data.  Default: synthetic regression (``rv.make_regression``) whose size
        (``n``, ``d``), noise and seed are sliders too; ``n=500, d=1000`` is the classroom
        problem (``s* = d / 50``).
    method : str, default "svrgsp+"
    **kwargs
        Initial values and options of :class:`Explorer`: ``s``, ``eta`` (default: the
        method's default step size), ``J`` (default ``2n``), ``m`` (6), ``n``, ``d``,
        ``noise``, ``seed``, ``max_iter``, ``debounce`` (seconds, default 0.1; 0 solves
        synchronously in the caller's thread), ``reference`` (``"grasp"``: F* from a GraSP
        run, or None: best over the plotted runs), ``cost`` (thresholding cost model, see
        :func:`~rgrasp_viz.viz.figures.threshold_share`), ``max_rows`` (support raster).

    Returns
    -------
    Explorer
        An ``ipywidgets.VBox``; display it (last expression of a cell) to interact.

    Examples
    --------
    >>> import rgrasp_viz as rv
    >>> dash = rv.explore(debounce=0)            # doctest: +SKIP
    >>> dash.sliders["eta"].value = 0.005        # re-solves and redraws  # doctest: +SKIP
    >>> dash.result.trace.meta["eta"]            # doctest: +SKIP
    0.005
    """
    return Explorer(problem, method, **kwargs)


# -- play --------------------------------------------------------------------------------------


def replay_frames(trace):
    """The moments a replay steps through: ``[(t, step), ...]`` in order.

    ``(t, None)`` is ``x^t`` (the end of outer iteration ``t``); ``(t, j)`` is the inner
    iterate after step ``j`` of iteration ``t`` (only when the run recorded iterates).

    Parameters
    ----------
    trace : Trace or SolveResult

    Returns
    -------
    frames : list of (int, int or None)
    passes : ndarray of float
        The effective pass of each frame.
    """
    trace = F._as_trace(trace)
    frames = [(0, None)]
    pos = [0.0]
    passes = np.asarray(trace.passes, dtype=np.float64)
    ck_pos = F.checkpoint_positions(trace) if trace.has_iterates else np.empty(0)
    ck_iter = np.asarray(trace.ck_iter)
    ck_step = np.asarray(trace.ck_step)
    for t in range(1, len(trace)):
        if trace.has_iterates:
            for k in np.flatnonzero(ck_iter == t):
                frames.append((t, int(ck_step[k])))
                pos.append(float(ck_pos[k]))
        frames.append((t, None))
        pos.append(float(passes[t]))
    return frames, np.maximum.accumulate(np.asarray(pos))


class Player(widgets.VBox):
    """Step-by-step replay of one recorded run (build it with :func:`play`).

    Attributes
    ----------
    play : ipywidgets.Play
        Drives :attr:`slider` (linked).
    slider : ipywidgets.IntSlider
        Frame index (description ``"step"``).
    prev_button, next_button : ipywidgets.Button
    label : ipywidgets.HTML
        Where the replay is: iteration, inner step, passes, objective, thresholdings so far.
    fig_coefficients, fig_support, fig_progress : plotly.graph_objects.FigureWidget
        ``|x|`` with threshold, ``x*`` and ``Z``; the support raster with a moving cursor;
        the objective so far.
    trace : Trace
    frames : list of (int, int or None)
        See :func:`replay_frames`.
    """

    def __init__(self, result_or_trace, *, interval=200, max_rows=120, start=0):
        super().__init__()
        self.trace = F._as_trace(result_or_trace)
        self.frames, self.frame_passes = replay_frames(self.trace)
        self._ev_pos = np.sort(F.event_positions(self.trace, "passes")[0])
        last = len(self.frames) - 1
        start = int(start) % len(self.frames)
        self.play = widgets.Play(value=start, min=0, max=last, step=1, interval=int(interval),
                                 description="play")
        self.slider = widgets.IntSlider(value=start, min=0, max=last, description="step",
                                        continuous_update=True,
                                        layout=widgets.Layout(width="480px"))
        self._link = widgets.link((self.play, "value"), (self.slider, "value"))
        self.prev_button = widgets.Button(description="◀", tooltip="previous step",
                                          layout=widgets.Layout(width="40px"))
        self.next_button = widgets.Button(description="▶", tooltip="next step",
                                          layout=widgets.Layout(width="40px"))
        self.prev_button.on_click(lambda _: self.step(-1))
        self.next_button.on_click(lambda _: self.step(+1))
        self.label = widgets.HTML()
        t, step = self.frames[start]
        self.fig_coefficients = _figure_widget(F.coefficients_spec(self.trace, t, step))
        self.fig_support = _figure_widget(F.support_raster_spec(
            self.trace, max_rows=max_rows, cursor=self._cursor(t, step)))
        self.fig_progress = _figure_widget(F.progress_spec(self.trace, t, step))
        self._cursor_index = next(i for i, d in enumerate(self.fig_support.data)
                                  if (d.meta or {}).get("role") == "cursor")
        self._update_label(start)
        self.slider.observe(self._on_frame, names="value")
        hint = "" if self.trace.has_iterates else (
            " (outer iterations only: solve with record_iterates=True to replay inner steps)")
        self.children = [
            widgets.HBox([self.play, self.prev_button, self.next_button, self.slider]),
            widgets.HTML(f"<small>{F.method_label(self.trace.method)} — "
                         f"{len(self.frames)} frames{_esc(hint)}</small>"),
            self.label, self.fig_coefficients, self.fig_progress, self.fig_support]
        self.add_class("rgrasp-play")

    @property
    def frame(self):
        """(int, int or None): the ``(t, step)`` currently shown."""
        return self.frames[self.slider.value]

    def step(self, k=1):
        """Move ``k`` frames (clamped to the run).

        Parameters
        ----------
        k : int, default 1
        """
        self.slider.value = int(min(max(self.slider.value + k, 0), len(self.frames) - 1))

    def _cursor(self, t, step):
        if step is None:
            return float(t)
        per = int(self.trace.meta.get("steps_per_iter", 0) or 0)
        return t - 1 + (step / per if per else 1.0)

    def _update_label(self, i):
        t, step = self.frames[i]
        pos = self.frame_passes[i]
        n_thr = int(np.searchsorted(self._ev_pos, pos + 1e-12, side="right"))
        if self.trace.meta.get("events_truncated"):
            n_thr = int(self.trace.n_thresholds[t if step is None else t - 1])
        where = f"x<sup>{t}</sup>" if step is None else f"iteration {t}, inner step {step}"
        self.label.value = (f"<b>{where}</b> · {pos:.3g} passes · {n_thr:,} hard "
                            f"thresholdings so far")

    def _on_frame(self, change):
        i = int(change["new"])
        t, step = self.frames[i]
        update_figure(self.fig_coefficients, F.coefficients_spec(self.trace, t, step))
        update_figure(self.fig_progress, F.progress_spec(self.trace, t, step))
        cur = self._cursor(t, step)
        with self.fig_support.batch_update():
            self.fig_support.data[self._cursor_index].x = [cur, cur]
        self._update_label(i)

    def _repr_mimebundle_(self, **kwargs):
        """The live widget, plus a static copy of the figures for pages without a kernel
        (:func:`rgrasp_viz.viz.static.player_bundle`)."""
        return static.player_bundle(self, super()._repr_mimebundle_(**kwargs))


def play(result_or_trace, **kwargs):
    """Replay a recorded run inner step by inner step, with linked views.

    Parameters
    ----------
    result_or_trace : SolveResult or Trace
        Inner steps are available when the run was solved with ``record_iterates=True``
        (every ``record_every`` steps); otherwise the replay steps through outer iterations.
    **kwargs
        ``interval`` (ms per frame of the Play widget, default 200), ``max_rows`` (support
        raster), ``start`` (first frame).

    Returns
    -------
    Player
        An ``ipywidgets.VBox``: Play, step buttons and slider; ``|x|`` with threshold,
        ``x*`` and ``Z``; the objective so far; the support raster with a cursor.
    """
    return Player(result_or_trace, **kwargs)


# -- compare -----------------------------------------------------------------------------------


class Comparison(widgets.VBox):
    """Several methods on one problem and seed, replayed in sync (build with :func:`compare`).

    The shared playback axis is effective passes: at position ``P`` every method shows its
    last recorded state at or before ``P``.

    Attributes
    ----------
    results : dict of str to SolveResult
    problem : Problem
    play : ipywidgets.Play
    slider : ipywidgets.IntSlider
        Index into :attr:`grid` (description ``"passes"``).
    grid : ndarray of float
        The pass positions the slider steps through.
    summary : ipywidgets.HTML
        Final numbers per method: iterations, passes, solver time, thresholdings, their
        estimated share of solver time, final objective and error.
    counts : ipywidgets.HTML
        Live numbers at the slider position.
    fig_convergence, fig_timeline : plotly.graph_objects.FigureWidget
    fig_coefficients : dict of str to FigureWidget
    """

    def __init__(self, problem=None, methods=("svrght", "svrgsp", "svrgsp+"), *, s=None,
                 random_state=0, record_iterates=True, interval=150, n_ticks=200,
                 reference="grasp", cost=None, **solve_kwargs):
        super().__init__()
        if isinstance(methods, str):
            methods = (methods,)
        methods = [str(m).lower() for m in methods]
        if not methods:
            raise ValueError("give at least one method")
        if len(set(methods)) != len(methods):
            raise ValueError(f"methods repeat: {methods}")
        self.problem = (make_regression("classroom", random_state=random_state)
                        if problem is None else as_problem(problem))
        solve_kwargs.setdefault("warn", False)
        self.results = {m: solve(self.problem, m, s=s, random_state=random_state,
                                 record_iterates=record_iterates, **solve_kwargs)
                        for m in methods}
        runs = list(self.results.values())
        ok = [r for r in runs if r.status != 2]
        s_used = runs[0].trace.meta["s"]
        self.reference = None
        if reference == "grasp":
            self.reference = (self.results["grasp"] if "grasp" in self.results else
                              solve(self.problem, "grasp", s=s_used, warn=False))
        self.shares = {m: F.threshold_share(r, cost) for m, r in self.results.items()}
        shown = ok or runs
        self.fig_convergence = _figure_widget(
            F.convergence_spec(shown, x="passes", y="both", fstar=self.reference))
        self.fig_timeline = _figure_widget(
            F.threshold_timeline_spec(runs, x="passes", cost=cost))
        self._frames = {m: replay_frames(r) for m, r in self.results.items()}
        self._ev_pos = {m: np.sort(F.event_positions(r, "passes")[0])
                        for m, r in self.results.items()}
        finite = [float(np.nanmax(np.where(np.isfinite(r.trace.passes), r.trace.passes,
                                           np.nan))) for r in runs]
        top = max(finite) if finite else 1.0
        self.grid = np.linspace(0.0, top, int(n_ticks) + 1)
        self.fig_coefficients = {}
        for m, r in self.results.items():
            t, step = self._state(m, 0.0)
            self.fig_coefficients[m] = _figure_widget(F.coefficients_spec(r, t, step))
        self.play = widgets.Play(value=0, min=0, max=len(self.grid) - 1, step=1,
                                 interval=int(interval), description="play")
        self.slider = widgets.IntSlider(value=0, min=0, max=len(self.grid) - 1,
                                        description="passes", readout=False,
                                        layout=widgets.Layout(width="480px"))
        self._link = widgets.link((self.play, "value"), (self.slider, "value"))
        self.position = widgets.HTML()
        self.summary = widgets.HTML(self._summary_html())
        self.counts = widgets.HTML()
        self._show(0, redraw=False)
        self.slider.observe(lambda ch: self._show(int(ch["new"])), names="value")
        self.children = [
            self.summary,
            widgets.HBox([self.play, self.slider, self.position]),
            self.counts, self.fig_convergence, self.fig_timeline,
            *self.fig_coefficients.values()]
        self.add_class("rgrasp-compare")

    def _state(self, method, pos):
        frames, fpos = self._frames[method]
        i = max(int(np.searchsorted(fpos, pos + 1e-12, side="right")) - 1, 0)
        return frames[i]

    def state_at(self, pos):
        """What every method shows at ``pos`` effective passes.

        Parameters
        ----------
        pos : float

        Returns
        -------
        dict of str to dict
            Per method: ``t``, ``step`` (frame shown), ``thresholdings`` (operations
            recorded up to ``pos``), ``passes`` (of the frame), ``time`` (solver seconds
            up to the last completed outer iteration).
        """
        out = {}
        for m, r in self.results.items():
            t, step = self._state(m, pos)
            tr = r.trace
            done = t if step is None else t - 1
            n_thr = int(np.searchsorted(self._ev_pos[m], pos + 1e-12, side="right"))
            if tr.meta.get("events_truncated"):
                n_thr = int(tr.n_thresholds[done])
            frames, fpos = self._frames[m]
            i = max(int(np.searchsorted(fpos, pos + 1e-12, side="right")) - 1, 0)
            out[m] = {"t": t, "step": step, "thresholdings": n_thr,
                      "passes": float(fpos[i]), "time": float(tr.time[done])}
        return out

    def _summary_html(self):
        rows = []
        best = min((r.fun for r in self.results.values() if r.status != 2), default=np.nan)
        for m, r in self.results.items():
            sh = self.shares[m]
            share = f"≈{100 * sh['share']:.0f}%" if math.isfinite(sh["share"]) else "n/a"
            color = F.method_color(m)
            rows.append(
                f"<tr><td style='color:{color}'><b>{_esc(F.method_label(m))}</b></td>"
                f"<td>{_esc('diverged' if r.status == 2 else 'ok')}</td>"
                f"<td>{r.nit}</td><td>{r.passes:.3g}</td><td>{1e3 * r.time:.1f}</td>"
                f"<td>{sh['count']:,}</td><td>{share}</td>"
                f"<td>{r.fun - best:.2e}</td><td>{r.rel_error:.2e}</td></tr>")
        head = ("<tr><th>method</th><th>status</th><th>iterations</th><th>passes</th>"
                "<th>solver ms</th><th>hard thresholdings</th><th>their share (est.)</th>"
                "<th>F − best F</th><th>rel. error</th></tr>")
        src = next(iter(self.shares.values()))["source"]
        return (f"<table class='rgrasp-summary' style='border-collapse:collapse'>{head}"
                f"{''.join(rows)}</table><small>{_esc(F._short(src, 300))}</small>")

    def _show(self, k, redraw=True):
        pos = float(self.grid[k])
        state = self.state_at(pos)
        if redraw:
            for m, st in state.items():
                update_figure(self.fig_coefficients[m],
                              F.coefficients_spec(self.results[m], st["t"], st["step"]))
        cursor = [{"type": "line", "xref": xr, "yref": "paper", "x0": pos, "x1": pos,
                   "y0": 0, "y1": 1, "line": {"color": "black", "width": 1, "dash": "dot"}}
                  for xr in ("x", "x2")]
        with self.fig_convergence.batch_update():
            self.fig_convergence.layout.shapes = cursor
        with self.fig_timeline.batch_update():
            self.fig_timeline.layout.shapes = cursor
        self.position.value = f"<b>{pos:.3g}</b> passes"
        cells = []
        for m, st in state.items():
            inner = "" if st["step"] is None else f", step {st['step']}"
            cells.append(f"<td style='color:{F.method_color(m)};padding-right:18px'>"
                         f"<b>{_esc(F.method_label(m))}</b>: iteration {st['t']}{inner} · "
                         f"{st['thresholdings']:,} H so far · solver "
                         f"{1e3 * st['time']:.1f} ms</td>")
        cells = "".join(cells)
        self.counts.value = f"<table><tr>{cells}</tr></table>"

    def _repr_mimebundle_(self, **kwargs):
        """The live widget, plus a static copy of the figures for pages without a kernel
        (:func:`rgrasp_viz.viz.static.comparison_bundle`)."""
        return static.comparison_bundle(self, super()._repr_mimebundle_(**kwargs))


def compare(problem=None, methods=("svrght", "svrgsp", "svrgsp+"), **kwargs):
    """Run several methods on one problem and seed and replay them side by side.

    Parameters
    ----------
    problem : Problem or (W, y), optional
        Default: the classroom regression problem (n=500, d=1000).
    methods : sequence of str, default ("svrght", "svrgsp", "svrgsp+")
    **kwargs
        ``s``, ``random_state`` (default 0, the same for every method), ``record_iterates``
        (default True: replay inside epochs), ``interval`` (ms per Play frame),
        ``n_ticks`` (slider positions), ``reference`` (``"grasp"`` or None, for F*),
        ``cost`` (thresholding cost model), and any other :func:`rgrasp_viz.solve`
        keyword (``eta``, ``J``, ``m``, ``max_iter``, ...), applied to every method.

    Returns
    -------
    Comparison
        An ``ipywidgets.VBox``: a summary table (iterations, passes, solver time,
        thresholdings and their estimated cost), a shared Play/slider over effective
        passes, live counts, convergence and thresholding timeline with a cursor, and one
        coefficient view per method.
    """
    return Comparison(problem, methods, **kwargs)

