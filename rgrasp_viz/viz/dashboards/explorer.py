"""The explorer: pick a method, drag its parameters, watch three live figures."""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict

import ipywidgets as widgets

from ...problems import as_problem, make_regression
from ...solvers import default_eta, solve
from ...solvers.registry import get_method, method_label, method_names, normalize_reading
from .. import figures as F
from .. import static
from .._cost import measured_threshold_cost
from ._widgets import empty_spec, esc, figure_widget, status_box, update_figure
from .controls import CONTROLS, build_controls, default_reading, eta_range, solve_kwargs
from .debounce import Debouncer

__all__ = ["Explorer", "explore"]


class Explorer(widgets.VBox):
    """Interactive solver: method picker, parameter controls, three live figures.

    Build it with :func:`explore`.  Every change of a widget re-solves (debounced, stale
    results dropped) and redraws the convergence plot (current run, plus the previous run on
    the same problem, dotted), the support raster and the thresholding timeline of the
    current run.  Diverging runs and errors are reported in :attr:`status`; the figures then
    keep showing the last good run.  The controls come from
    :data:`~rgrasp_viz.viz.dashboards.controls.CONTROLS`; those the current method does not
    use are disabled.

    Attributes
    ----------
    method : ipywidgets.Dropdown
        The method (description ``"method"``).
    controls : dict of str to ipywidgets widget
        One per row of ``CONTROLS``: ``"s"``, ``"eta"``, ``"J"``, ``"m"``, ``"batch_size"``,
        ``"inner"``, ``"seed"``, ``"n"``, ``"d"``, ``"noise"``; each widget's
        ``description`` is its key.
    sliders : dict of str to ipywidgets slider
        The sliders among :attr:`controls` (all but ``"inner"``).
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
                 batch_size=None, inner=None, n=500, d=1000, noise=0.01, seed=0,
                 max_iter=None, x="passes", debounce=0.1, reference="grasp", cost=None,
                 max_rows=150):
        super().__init__()
        method = get_method(method).name
        if reference not in ("grasp", None):
            raise ValueError("reference must be 'grasp' (a GraSP run gives F*) or None "
                             "(best over the plotted runs)")
        self.max_iter = max_iter
        self.x = x
        self.reference = reference
        self.cost = measured_threshold_cost if cost is None else cost
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
        prob = self._problem({"n": int(n), "d": int(d), "noise": float(noise),
                              "seed": int(seed)})[0]
        self.problem = prob
        if s is None:
            s = prob.default_s or max(1, min(prob.d, prob.d // 100 or 1))
        inner = default_reading() if inner is None else normalize_reading(inner)
        batch_size = max(1, round(math.sqrt(prob.n))) if batch_size is None else batch_size
        eta_default = default_eta(prob, method, int(s), inner, batch_size)
        values = {"s": int(s), "eta": float(eta) if eta is not None else eta_default,
                  "J": 2 * prob.n if J is None else int(J), "m": int(m),
                  "batch_size": int(batch_size), "inner": inner, "seed": int(seed),
                  "n": prob.n, "d": prob.d, "noise": float(noise)}

        self.method = widgets.Dropdown(
            options=[(method_label(k), k) for k in method_names()], value=method,
            description="method", style={"description_width": "64px"},
            layout=widgets.Layout(width="330px"))
        self.controls = build_controls(prob, values, eta_default)
        self.sliders = {k: w for k, w in self.controls.items()
                        if not isinstance(w, widgets.Dropdown)}
        if self._fixed is not None:
            for c in CONTROLS:
                if c.problem:
                    self.controls[c.key].disabled = True
        self.status = widgets.HTML(value=status_box("solving…", "busy"))
        self.debouncer = Debouncer(self._compute, self._apply, self._on_error,
                                   delay=debounce)

        # first solve, synchronously: the figures are born with their data
        out = None
        try:
            out = self._compute(self.params())
        except Exception as exc:  # noqa: BLE001 - shown in the dashboard
            self._on_error(exc)
        specs = out["specs"] if out and out.get("specs") else {
            k: empty_spec() for k in ("convergence", "raster", "timeline")}
        self.fig_convergence = figure_widget(specs["convergence"])
        self.fig_raster = figure_widget(specs["raster"])
        self.fig_timeline = figure_widget(specs["timeline"])
        if out is not None:
            self._apply(out, redraw=False)
        self._sync_enabled()

        self.method.observe(self._on_method, names="value")
        for key, w in self.controls.items():
            w.observe(self._on_reset if _control(key).resets_eta else self._on_change,
                      names="value")
        rows = {}
        for c in CONTROLS:
            rows.setdefault(c.row, []).append(self.controls[c.key])
        rows[0].insert(0, self.method)
        panel = widgets.VBox([widgets.HBox(rows[r], layout=widgets.Layout(flex_flow="row wrap"))
                              for r in sorted(rows)])
        self.children = [panel, self.status, self.fig_convergence, self.fig_timeline,
                         self.fig_raster]
        self.add_class("rgrasp-explore")

    # -- parameters ---------------------------------------------------------------------------
    _eta_range = staticmethod(eta_range)

    def params(self):
        """dict: the current control values, plus ``method``."""
        controls = getattr(self, "controls", None)
        if controls is None:
            raise RuntimeError("widgets not built yet")
        out = {k: w.value for k, w in controls.items()}
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
        for c in CONTROLS:
            if c.uses is not None:
                self.controls[c.key].disabled = not c.used_by(spec)

    def _on_method(self, change):
        self._on_reset(change)

    def _on_reset(self, change):
        if self._quiet:
            return
        self._quiet += 1
        try:
            self._defaults_changed()
        finally:
            self._quiet -= 1
        self.request()

    def _defaults_changed(self):
        """New method (or reading, or batch size): enable the controls it uses, move eta to
        its default step size."""
        self._sync_enabled()
        p = self.params()
        prob = self._problem(p)[0]
        eta = default_eta(prob, p["method"], min(int(p["s"]), prob.d), p["inner"],
                          min(int(p["batch_size"]), prob.n))
        w = self.controls["eta"]
        rng = eta_range(eta)
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
            self.status.value = status_box("solving…", "busy")
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
        kw = solve_kwargs(get_method(method), params, prob)
        res = solve(prob, method, max_iter=self.max_iter, warn=False, **kw)
        out = {"params": params, "result": res, "problem": prob, "key": key, "t0": t0,
               "specs": None}
        if res.status == 2:
            return out
        ref = self._reference(prob, key, kw["s"])
        prev = self.result if self._shown_key == key and self.result is not None else None
        out["previous"] = prev
        out["specs"] = self._specs(res, prev, ref)
        return out

    def _specs(self, res, prev, ref):
        runs = [prev, res] if prev is not None else [res]
        conv = F.convergence_spec(runs, x=self.x, y="both", fstar=ref)
        if prev is None:
            conv["data"] = [_blank(t) for t in conv["data"]] + conv["data"]
        else:
            for t in conv["data"][:2]:
                t["line"] = {**t["line"], "dash": "dot", "width": 1.5}
                t["opacity"] = 0.55
                t["name"] = f"previous: {t['name']}"
        return {"convergence": conv,
                "raster": F.support_raster_spec(res, max_rows=self.max_rows),
                "timeline": F.threshold_timeline_spec([res], x="passes", cost=self.cost)}

    def _apply(self, out, redraw=True):
        res = out["result"]
        p = out["params"]
        self.last_result = res
        self.problem = out["problem"]
        label = method_label(res.method)
        if res.status == 2:
            good = (f" The plots still show the last run that did not diverge "
                    f"(η = {self.result.trace.meta['eta']:.3g})." if self.result is not None
                    else "")
            self.error = f"{label} diverged: {res.message}."
            self.status.value = status_box(
                f"⚠ <b>{esc(label)} diverged</b> with η = "
                f"{p['eta']:.3g}: {esc(res.message)}.{esc(good)} Lower η.", "error")
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
        self.status.value = status_box(
            f"<b>{esc(label)}</b>: {esc(res.message)} · "
            f"{res.nit} iterations · {res.passes:.3g} passes · "
            f"{int(tr.n_thresholds[-1]):,} hard thresholdings · solver "
            f"{1e3 * res.time:.1f} ms{rel} · solve + redraw "
            f"{1e3 * self.last_duration:.0f} ms", kind)

    def _on_error(self, exc):
        self.error = f"{type(exc).__name__}: {exc}"
        self.status.value = status_box(f"✖ <b>Error</b>: {esc(self.error)}. The plots show "
                                       "the last successful run.", "error")

    # -- convenience ---------------------------------------------------------------------------
    @property
    def figures(self):
        """dict of str to FigureWidget: ``convergence``, ``raster``, ``timeline``."""
        return {"convergence": self.fig_convergence, "raster": self.fig_raster,
                "timeline": self.fig_timeline}

    def set(self, **values):
        """Set several controls at once and re-solve once.

        Parameters
        ----------
        **values
            Control keys (see :attr:`controls`) and/or ``method``.  A new method, reading or
            batch size moves ``eta`` to its default, unless ``eta`` is given too.
        """
        unknown = set(values) - set(self.controls) - {"method"}
        if unknown:
            raise KeyError(f"unknown parameters {sorted(unknown)}")
        meth = values.pop("method", None)
        self._quiet += 1
        try:
            reset = False
            if meth is not None and meth != self.method.value:
                self.method.value = meth
                reset = True
            for k, v in values.items():
                if k != "eta":
                    reset |= _control(k).resets_eta and self.controls[k].value != v
                    self.controls[k].value = v
            if reset:
                self._defaults_changed()
            if "eta" in values:
                self.controls["eta"].value = values["eta"]
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


def _control(key):
    return next(c for c in CONTROLS if c.key == key)


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
        Any registered method.
    **kwargs
        Initial values and options of :class:`Explorer`: ``s``, ``eta`` (default: the
        method's default step size), ``J`` (default ``2n``), ``m`` (6), ``batch_size``
        (default ``round(sqrt(n))``), ``inner`` (the reading of Algorithm 2; default that of
        :func:`rgrasp_viz.solve`), ``n``, ``d``, ``noise``, ``seed``, ``max_iter``,
        ``debounce`` (seconds, default 0.1; 0 solves synchronously in the caller's thread),
        ``reference`` (``"grasp"``: F* from a GraSP run, or None: best over the plotted
        runs), ``cost`` (thresholding cost model, see
        :func:`~rgrasp_viz.analysis.threshold_share`; default: measured on this machine with
        :func:`~rgrasp_viz.viz.measured_threshold_cost`; False: not estimated), ``max_rows``
        (support raster).

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
