"""The explorer: pick a method, drag its parameters, watch three live figures."""

from __future__ import annotations

import contextlib
import copy
import math
import re
import threading
import time
from collections import OrderedDict

import ipywidgets as widgets

from ..._problems import as_problem, make_regression
from ...analysis import same_iterates
from ...solvers import Status, check_params, default_eta, solve
from ...solvers._registry import get_method, method_label, method_names, run_label
from .. import figures as F
from ._base import Dashboard
from ._controls import (
    CONTROLS,
    build_controls,
    default_reading,
    eta_range,
    reading_note,
    solve_kwargs,
    stopping,
    stopping_text,
)
from ._debounce import Debouncer
from ._widgets import (
    MAX_MARKS,
    check_options,
    check_reference,
    esc,
    figure_widget,
    status_box,
    status_kind,
    status_note,
    update_figure,
    view_fstar,
)

__all__ = ["Explorer", "explore"]

S_STAR_PER_D = 50
"""The synthetic problem of the explorer has ``s* = max(1, round(d / S_STAR_PER_D))`` true
nonzeros (the classroom problem: d = 1000, s* = 20)."""


def synthetic_s_star(d):
    """``s*`` of the explorer's synthetic problem with ``d`` features."""
    return max(1, round(int(d) / S_STAR_PER_D))


class Explorer(Dashboard):
    """Interactive solver: method picker, parameter controls, three live figures.

    Build it with :func:`explore`.  Every change of a widget re-solves (debounced, stale
    results dropped) and redraws the convergence plot (current run, plus the previous run on
    the same problem, dotted, with the parameter that differs in the legend -- not when it
    repeats the current run), the support raster and the thresholding timeline of the
    current run.  Gaps are measured against an ``F*`` below every run shown
    (:func:`~rgrasp_viz.viz.dashboards._widgets.view_fstar`).  The status line says what the
    run did: its status (green only when CONVERGED with an estimate that is not poor; a
    note says why a converged run is amber), ``s``, ``s*`` and ``s/s*`` (with a warning
    when ``s < s*`` or when the ``d`` slider changed ``s*``), ``η`` with ``(default rule)``
    or ``(chosen)``, and the halvings of a default step size.  A diverged
    run is drawn dotted next to the last run that did not diverge.  Every method stops by
    the same rule (:data:`~rgrasp_viz.viz.dashboards._controls.STOPPING`).  The controls come from
    :data:`~rgrasp_viz.viz.dashboards._controls.CONTROLS`; those the current method does not
    use are disabled; the reading control (``"inner"``) has its explanation next to it.

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
    reading_note : ipywidgets.HTML
        The one-line explanation of the reading chosen in ``controls["inner"]``.
    eta_reset : ipywidgets.Button
        "default η": back to the method's default step size (:meth:`reset_eta`).
    status : ipywidgets.HTML
        Outcome of the last solve (status, s and s*, warnings, divergence or error message).
        Once there are figures, the page shows it as the caption of the convergence figure,
        drawn in the same step as the figure.
    fig_convergence, fig_raster, fig_timeline : Figure
    result : SolveResult or None
        The run the figures show (the last one that did not diverge).
    previous : SolveResult or None
        The run before it (drawn dotted when on the same problem).
    last_result : SolveResult or None
        The most recent solve, diverged or not.
    error : str or None
        The message shown for the last solve if it failed or diverged, else None.
    warnings : list of str
        The warnings of the status line (``s < s*``, ``s*`` changed by ``d``, ...).
    problem : Problem
        The problem of the last solve.
    rule : dict
        The stopping keywords of every solve.
    debouncer : Debouncer
    """

    def __init__(self, problem=None, method="svrgsp+", *, s=None, eta=None, J=None, m=6,
                 batch_size=None, inner=None, n=500, d=1000, noise=0.01, seed=0,
                 max_iter=None, max_passes=None, tol=None, ftol=None, patience=None,
                 x="passes", debounce=0.1, reference="exact", cost=None, max_rows=60):
        # everything is checked before any widget exists (solve's own checks and errors)
        opts = check_options(debounce=debounce, max_rows=max_rows)
        debounce, max_rows = opts.get("debounce", debounce), opts.get("max_rows", max_rows)
        method = get_method(method).name
        check_reference(reference)
        if x not in ("passes", "time", "iteration"):
            raise ValueError(f"x must be 'passes', 'time' or 'iteration', got {x!r}")
        rule = stopping(max_passes=max_passes, tol=tol, ftol=ftol, patience=patience,
                        max_iter=max_iter)
        fixed = None if problem is None else as_problem(problem)
        if fixed is not None:
            n, d = fixed.n, fixed.d
            prob = fixed
        else:
            prob = make_regression(n=n, d=d, s_star=synthetic_s_star(d), noise_var=noise,
                                   random_state=seed)
        inner = default_reading() if inner is None else inner
        params = check_params(prob, method, s=s, eta=eta, J=J, m=m, inner=inner,
                              batch_size=batch_size, **rule)
        super().__init__()
        self.rule = rule
        self.x = x
        self.max_iter = rule["max_iter"]
        self.reference = reference
        # no share-of-time estimate by default: it divided a model by this machine's
        # timing of the run, which moved with the load (27 % -> 100 % for one run)
        self.cost = False if cost is None else cost
        self.max_rows = max_rows
        self.result = self.previous = self.last_result = None
        self.error = None
        self.warnings = []
        self.last_duration = math.nan
        self._lock = threading.Lock()
        self._problems = OrderedDict()
        self._quiet = 0
        self._shown_key = None
        self._eta_default = eta is None  # the slider sits on the method's default step
        self._s_star_seen = prob.s_star
        self._fixed = fixed
        if fixed is None:
            self._problems[(int(n), int(d), round(float(noise), 6), int(seed))] = prob
        self.problem = prob
        values = {"s": params.s, "eta": params.eta, "J": params.J, "m": params.m,
                  "batch_size": params.batch_size, "inner": params.inner, "seed": int(seed),
                  "n": prob.n, "d": prob.d, "noise": float(noise)}

        self.method = widgets.Dropdown(
            options=[(method_label(k), k) for k in method_names()], value=method,
            description="method", style={"description_width": "64px"},
            layout=widgets.Layout(width="330px"))
        eta_default = (params.eta if params.eta_rule == "default" else
                       default_eta(prob, method, params.s, params.inner, params.batch_size))
        self.controls = build_controls(prob, values, eta_default)
        self.sliders = {k: w for k, w in self.controls.items()
                        if not isinstance(w, widgets.Dropdown)}
        self.reading_note = widgets.HTML(reading_note(params.inner))
        self.eta_reset = widgets.Button(
            description="default η", tooltip="back to the method's default step size (the "
            "default rule, with its safeguard)", layout=widgets.Layout(width="96px"))
        self.eta_reset.on_click(lambda _: self.reset_eta())
        if self._fixed is not None:
            for c in CONTROLS:
                if c.problem:
                    self.controls[c.key].disabled = True
        self._follow_ranges()
        self.status = widgets.HTML(value=status_box("solving…", "busy"))
        self.debouncer = Debouncer(self._compute, self._apply, self._on_error,
                                   delay=debounce, on_busy=self._on_busy)

        # first solve, synchronously: the figures are born with their data
        out = None
        try:
            out = self._compute(self.params())
        except Exception as exc:  # noqa: BLE001 - shown in the dashboard
            self._on_error(exc)
        specs = (out or {}).get("specs") or {}
        self.fig_convergence = figure_widget(specs.get("convergence") or _empty())
        self.fig_raster = figure_widget(specs.get("raster") or _empty())
        self.fig_timeline = figure_widget(specs.get("timeline") or _empty())
        # the status line is drawn with the convergence figure (its caption: one message)
        self.fig_convergence.caption = self.status.value
        self.status.observe(self._status_changed, names="value")
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
        rows[0].insert(rows[0].index(self.controls["eta"]) + 1, self.eta_reset)
        reading_row = next(c.row for c in CONTROLS if c.key == "inner")
        rows[reading_row].append(self.reading_note)
        self._panel = widgets.VBox([widgets.HBox(rows[r],
                                                 layout=widgets.Layout(flex_flow="row wrap"))
                                    for r in sorted(rows)])
        self._set_children()
        self.add_class("rgrasp-explore")

    def _set_children(self):
        """The controls and the status line; the figures once there is a run to draw (an
        explorer whose first solve failed shows its message, never empty plots)."""
        if not hasattr(self, "_panel"):  # still in __init__
            return
        figs = [self.fig_convergence, self.fig_timeline, self.fig_raster]
        shown = self.last_result is not None
        # with figures, the status line is the convergence figure's caption, drawn with it
        kids = [self._panel, *(figs if shown else [self.status])]
        if list(self.children) != kids:
            self.children = kids

    # -- parameters ---------------------------------------------------------------------------
    _eta_range = staticmethod(eta_range)

    def params(self):
        """dict: the current control values, plus ``method`` and ``eta_default`` (True while
        the eta slider sits on the method's default step size, which then solves with the
        default rule and its safeguard)."""
        controls = getattr(self, "controls", None)
        if controls is None:
            raise RuntimeError("widgets not built yet")
        out = {k: w.value for k, w in controls.items()}
        out["method"] = self.method.value
        out["eta_default"] = bool(self._eta_default)
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
            prob = make_regression(n=n, d=d, s_star=synthetic_s_star(d), noise_var=noise,
                                   random_state=seed)
            with self._lock:
                self._problems[key] = prob
                while len(self._problems) > 4:
                    self._problems.popitem(last=False)
        return prob, key

    # -- observers ----------------------------------------------------------------------------
    def _sync_enabled(self):
        spec = get_method(self.method.value)
        for c in CONTROLS:
            if c.uses is not None:
                self.controls[c.key].disabled = not c.used_by(spec)
        if hasattr(self, "eta_reset"):
            self.eta_reset.disabled = not spec.has_step

    def reset_eta(self):
        """Back to the method's default step size: the eta slider moves to it and the run is
        solved with the default rule (and its safeguard) again; the status line says
        ``η (default rule)``."""
        with self._quietly():
            self._defaults_changed()
        self.request()

    @contextlib.contextmanager
    def _quietly(self):
        """A context in which control changes made by the explorer itself re-solve nothing
        (the observers return at once); nests."""
        self._quiet += 1
        try:
            yield
        finally:
            self._quiet -= 1

    def _follow_ranges(self):
        """Keep the slider ranges consistent with each other: ``s <= d``, ``m <= J``,
        ``batch_size <= n`` (a slider shows the clamped value, nothing is clamped unseen)."""
        c = self.controls
        c["s"].max = max(1, min(c["d"].value if self._fixed is None else self.problem.d,
                                max(c["s"].max, 4 * c["s"].value, 40)))
        c["m"].max = max(1, min(max(30, c["m"].value), c["J"].value))
        n = c["n"].value if self._fixed is None else self.problem.n
        c["batch_size"].max = max(1, min(max(c["batch_size"].max, c["batch_size"].value), n))

    def _on_method(self, change):
        self._on_reset(change)

    def _on_reset(self, change):
        if self._quiet:
            return
        if change["owner"] is self.controls["inner"]:
            self.reading_note.value = reading_note(change["new"])
        self.reset_eta()

    def _defaults_changed(self):
        """New method (or reading, or batch size): enable the controls it uses, move eta to
        its default step size."""
        self._sync_enabled()
        p = self.params()
        prob = self._problem(p)[0]
        eta = default_eta(prob, p["method"], min(int(p["s"]), prob.d), p["inner"],
                          min(int(p["batch_size"]), prob.n))
        self._set_eta(eta)
        self._eta_default = True

    def _set_eta(self, eta):
        w = self.controls["eta"]
        rng = eta_range(eta)
        with self._quietly():
            # widen first so that the new value is never clamped
            w.min, w.max = min(w.min, rng["min"]), max(w.max, rng["max"])
            w.value = eta
            w.min, w.max = rng["min"], rng["max"]

    def _on_change(self, change):
        if self._quiet:
            return
        owner = change["owner"]
        if owner is self.controls["eta"]:
            old, new = change.get("old"), change["new"]
            if (self._eta_default and old and new and old > 0 and new > 0
                    and abs(math.log(new / old)) < 1e-6):
                # the page echoing the default value back, rounded: nobody chose a step size
                return
            self._eta_default = False  # the learner chose a step size
        if owner in (self.controls["J"], self.controls["n"], self.controls["d"]):
            with self._quietly():
                self._follow_ranges()
        self.request()

    def request(self):
        """Re-solve with the current widget values (debounced; see :class:`Debouncer`)."""
        if self.debouncer.delay > 0:
            self.status.value = status_box("solving…", "busy")
        self.debouncer.request(self.params())

    # -- compute (worker thread) and apply ----------------------------------------------------
    def _compute(self, params):
        t0 = time.perf_counter()
        prob, key = self._problem(params)
        method = params["method"]
        kw = solve_kwargs(get_method(method), params, prob)
        if params.get("eta_default"):
            kw.pop("eta", None)  # the default rule, with its safeguard
        res = solve(prob, method, warn=False, **self.rule, **kw)
        prev_good = self.result if self._shown_key == key and self.result is not None else None
        if prev_good is not None and _same_run(prev_good, res):
            prev_good = None  # the same run again: one curve, not a "previous" twin
        out = {"params": params, "result": res, "problem": prob, "key": key, "t0": t0,
               "specs": None}
        if res.status == Status.DIVERGED:
            # drawn dotted next to the last run that did not diverge; the raster and the
            # timeline keep showing that run (or the diverged one when there is none)
            out["specs"] = {"convergence": self._convergence(prev_good, res, prob)}
            if self.result is None:
                out["specs"].update(self._moments(res))
            return out
        out["previous"] = prev_good
        out["specs"] = {"convergence": self._convergence(prev_good, res, prob),
                        **self._moments(res)}
        return out

    def _convergence(self, prev, res, prob):
        runs = [prev, res] if prev is not None else [res]
        fstar = view_fstar(prob, runs, self.reference)
        conv = F.convergence_spec(runs, x=self.x, y="both", fstar=fstar)
        if prev is None:
            conv["data"] = [_blank(t) for t in conv["data"]] + conv["data"]
        else:
            n_panels = len(conv["data"]) // 2
            for t in conv["data"][:n_panels]:
                t["line"] = {**t["line"], "dash": "dot"}
                t["opacity"] = 0.6
                t["name"] = f"previous: {t['name']}"
            if res.status != Status.DIVERGED:
                for t in conv["data"][n_panels:]:  # the current run in its method's style
                    t["line"] = {**t["line"], "dash": "solid",
                                 "color": F.method_color(res.method)}
        return conv

    def _moments(self, res):
        return {"raster": F.support_raster_spec(res, max_rows=self.max_rows),
                "timeline": F.threshold_timeline_spec([res], x="passes", cost=self.cost,
                                                      max_marks=MAX_MARKS)}

    def _status_changed(self, change):
        self.fig_convergence.caption = change["new"]

    def _apply(self, out, redraw=True):
        # the convergence figure and the status line leave in one message, first (the
        # innermost hold is released first), then the timeline and the raster
        with (self.fig_raster.hold_sync(), self.fig_timeline.hold_sync(),
              self.fig_convergence.hold_sync()):
            self._apply_held(out, redraw)

    def _apply_held(self, out, redraw):
        res = out["result"]
        prob = out["problem"]
        self.last_result = res
        self.problem = prob
        specs = out["specs"] or {}
        if redraw:
            for key, fw in (("convergence", self.fig_convergence),
                            ("timeline", self.fig_timeline), ("raster", self.fig_raster)):
                if key in specs:
                    update_figure(fw, specs[key])
        meta = res.trace.meta
        if meta.get("eta_rule") == "default" and self._eta_default:
            self._set_eta(meta["eta_initial"])  # the default of the new setting (e.g. s)
        self.warnings = self._warnings(res, prob)
        label = run_label(res.method, meta.get("inner"))
        if res.status == Status.DIVERGED:
            good = (f" Drawn dotted next to the last run that did not diverge "
                    f"(η = {self.result.trace.meta['eta']:.3g})." if self.result is not None
                    else " Drawn dotted (it leaves the plot at ▲).")
            self.error = f"{label} diverged: {res.message}."
            self.last_duration = time.perf_counter() - out["t0"]
            self.status.value = status_box(
                f"⚠ <b>{esc(label)} DIVERGED</b> with η = "
                f"{meta['eta']:.3g}: {esc(res.message)}.{esc(good)} Lower η."
                + self._details(res, prob), "error")
            self._set_children()
            return
        self.previous = out.get("previous")
        self.result = res
        self._shown_key = out["key"]
        self.error = None
        self.last_duration = time.perf_counter() - out["t0"]
        tr = res.trace
        kind = status_kind(res)  # a CONVERGED poor estimate is amber, and says why
        if kind == "ok" and self.warnings:
            kind = "warn"
        note = status_note(res)
        note = f" <span class='rgrasp-status-note'>({esc(note)})</span>" if note else ""
        rel = f" · rel. error {res.rel_error:.2e}" if math.isfinite(res.rel_error) else ""
        self.status.value = status_box(
            f"<b>{esc(label)}</b> <b class='rgrasp-status-name'>{res.status.name}</b>{note}: "
            f"{esc(res.message)} · {res.nit} iterations · {res.passes:.3g} passes · "
            f"{int(tr.n_thresholds[-1]):,} hard thresholdings · solver "
            f"{1e3 * res.time:.1f} ms{rel} · solve + redraw "
            f"{1e3 * self.last_duration:.0f} ms" + self._details(res, prob), kind)
        self._set_children()

    def _warnings(self, res, prob):
        """What the learner should know about the run just made (plain text)."""
        out = []
        s_star = prob.s_star
        s = int(res.trace.meta["s"])
        if s_star is not None and s < s_star:
            out.append(f"s = {s} < s* = {s_star}: H_s keeps fewer coordinates than x* has, "
                       "so x* cannot be recovered; a small objective or 'converged' does not "
                       "mean the true support was found")
        if (self._fixed is None and s_star is not None and self._s_star_seen is not None
                and s_star != self._s_star_seen):
            out.append(f"the d slider changed s*: d = {prob.d} gives s* = d/{S_STAR_PER_D} = "
                       f"{s_star} (it was {self._s_star_seen})")
        self._s_star_seen = s_star
        meta = res.trace.meta
        halvings = int(meta.get("eta_halvings", 0) or 0)
        if halvings:
            out.append(f"the default step size η = {meta['eta_initial']:.3g} diverged: "
                       f"halved {halvings}× to η = {meta['eta']:.3g} "
                       f"({meta.get('safeguard_passes', 0):.3g} passes of abandoned attempts "
                       "counted)")
        return out

    def _details(self, res, prob):
        """The second line of the status: s, s*, s/s*, the reading, warnings, the rule."""
        meta = res.trace.meta
        s = int(meta["s"])
        s_star = prob.s_star
        parts = [f"s = {s}"]
        if s_star:
            parts += [f"s* = {s_star}", f"s/s* = {s / s_star:.2g}"]
        if get_method(res.method).readings:
            parts.append(f"inner = {meta.get('inner')}")
        if get_method(res.method).has_step:
            chosen = "default rule" if meta.get("eta_rule") == "default" else "chosen"
            parts.append(f"η = {meta['eta']:.3g} ({chosen})")
        html = "<br>" + " · ".join(esc(p) for p in parts)
        for w in self.warnings:
            html += f"<br>⚠ {esc(w)}"
        html += (f"<br><small class='rgrasp-rule'>{esc(stopping_text(self.rule))}</small>")
        return html

    def _error_hint(self):
        return ("The plots show the last successful run." if self.last_result is not None
                else "Nothing to plot yet: change a control to solve again.")

    # -- convenience ---------------------------------------------------------------------------
    @property
    def figures(self):
        """dict of str to Figure: ``convergence``, ``raster``, ``timeline``."""
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
        with self._quietly():
            reset = False
            if meth is not None and get_method(meth).name != self.method.value:
                self.method.value = get_method(meth).name
                reset = True
            for k, v in values.items():
                if k != "eta":
                    reset |= _control(k).resets_eta and self.controls[k].value != v
                    self.controls[k].value = v
            self._follow_ranges()
            if "inner" in values:
                self.reading_note.value = reading_note(self.controls["inner"].value)
            if reset:
                self._defaults_changed()
            if "eta" in values:
                self.controls["eta"].value = values["eta"]
                self._eta_default = False
        self.request()

    def static_figures(self):
        """What a page without a kernel shows: the three figures (convergence, thresholding
        timeline, support raster) as they are now, or none, with the reason, before any
        run could be drawn.

        Returns
        -------
        title : str
            ``rv.explore (<method>, last solve)``, followed by the error or divergence
            message of the last solve, if any.
        figures : list of dict
            Copies of the figure specs shown (empty when nothing was solved).
        """
        res = self.last_result
        if res is None:  # nothing was solved: no figures, the reason
            return f"rv.explore: {self.error or 'no run to show'}", []
        title = f"rv.explore ({res.trace.method}, last solve)"
        if self.error:  # e.g. a run that diverged on purpose: drawn, and said
            title = f"{title}: {self.error}"
        figs = [self.fig_convergence, self.fig_timeline, self.fig_raster]
        return title, [copy.deepcopy(fw.to_plotly_json()) for fw in figs]


def _same_run(a, b):
    """Whether ``b`` repeats ``a``: the same iterates with nothing told apart in the legend
    (e.g. the page echoing a slider value back, rounded).  Identical runs whose settings
    differ (m on T) stay side by side: that they coincide is the lesson."""
    if a.method != b.method or not same_iterates(a.trace, b.trace):
        return False
    la, lb = (re.sub(r" #\d+$", "", lab) for lab in F.run_labels([a, b]))
    return la == lb


def _control(key):
    return next(c for c in CONTROLS if c.key == key)


def _empty():
    return {"data": [], "layout": {"template": F.TEMPLATE, "height": 300}}


def _blank(trace_dict):
    out = dict(trace_dict)
    out["x"] = []
    out["y"] = []
    if "marker" in out:
        out["marker"] = {**out["marker"], "size": 6, "symbol": "circle"}
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
        Any registered method name or alias (``"FG-HT"``).
    **kwargs
        Initial values and options of :class:`Explorer`: ``s``, ``eta`` (default: the
        method's default step size, solved with the default rule and its safeguard), ``J``
        (default ``2n``), ``m`` (6), ``batch_size`` (default ``round(sqrt(n))``), ``inner``
        (the reading of Algorithm 2; default that of :func:`rgrasp_viz.solve`), ``n``,
        ``d``, ``noise``, ``seed``, the stopping rule shared by every method (``max_passes``,
        ``tol``, ``ftol``, ``patience``, ``max_iter``; defaults
        :data:`~rgrasp_viz.viz.dashboards._controls.STOPPING`), ``x`` (convergence axis),
        ``debounce`` (seconds, default 0.1; 0 solves synchronously in the caller's thread),
        ``reference`` (``"exact"``: F* from the shared reference without a re-run, below
        every run shown, see :func:`rgrasp_viz.reference.reference`; or None: the lowest
        objective of the runs shown), ``cost`` (thresholding cost model, see
        :func:`~rgrasp_viz.analysis.threshold_share`; default None or False: not estimated,
        since a share of measured solver time moves with the machine's load; pass e.g.
        :func:`~rgrasp_viz.viz.measured_threshold_cost` to show it anyway), ``max_rows``
        (support raster).  They are checked as :func:`rgrasp_viz.solve` checks them, with the
        same errors, before any work.

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

