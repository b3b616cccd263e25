"""The comparison: several methods on one problem and seed, stopped by one rule, replayed in
sync."""

from __future__ import annotations

import copy
import math

import ipywidgets as widgets
import numpy as np

from ..._problems import as_problem, make_regression
from ...analysis import event_positions, frame_at, replay_frames, thresholds_until
from ...solvers import Status, check_params, solve
from ...solvers._registry import get_method, method_color, run_label
from .. import figures as F
from ._base import Dashboard
from ._controls import M_TOOLTIP, default_reading, reading_control, stopping, stopping_text
from ._debounce import Debouncer
from ._widgets import (
    MAX_MARKS,
    PLAY_INTERVAL,
    check_options,
    check_reference,
    esc,
    figure_widget,
    fixed_plot_area,
    legend_lists_every_trace,
    play_frames,
    replay_control,
    spec_patch,
    status_box,
    status_kind,
    status_note,
    update_figure,
    view_fstar,
)

__all__ = ["Comparison", "compare"]

_SOLVE_KEYS = ("eta", "J", "batch_size", "record_every")



class Comparison(Dashboard):
    """Several methods on one problem and seed, replayed in sync (build with :func:`compare`).

    Every method stops by the same rule (:data:`~rgrasp_viz.viz.dashboards._controls.STOPPING`:
    one pass budget, one ``tol``, one ``ftol`` and ``patience``), so the table's iterations,
    passes and times compare like with like; the table and the convergence plot measure the
    objective against one ``F*`` (:attr:`fstar`), whose source they show.  A reading control
    (``"inner"``) and an ``m`` slider re-solve the methods they change (``m``: the methods
    that use it; the reading: the methods that have readings).  The shared playback axis is
    effective passes: at position ``P`` every method shows its last recorded state at or
    before ``P``; the page draws the replay's frames itself.

    Attributes
    ----------
    results : dict of str to SolveResult
    problem : Problem
    fstar : FStar
        The ``F*`` of the table and the convergence plot.
    reference : None
        Kept for compatibility: ``F*`` no longer comes from a separate run (see
        :attr:`fstar`).
    rule : dict
        The stopping keywords every method was solved with.
    reading : ipywidgets.Dropdown
        The reading of Algorithm 2 (description ``"inner"``); :attr:`reading_note` explains
        it.
    m_slider : ipywidgets.IntSlider
        SVRGSP+'s ``m`` (description ``"m"``; disabled when no method uses it).
    status : ipywidgets.HTML
        What the last (re-)solve did.
    slider : Replay
        The replay control (description ``"passes"``): play / pause, a step either way, a
        slider; its ``value`` indexes :attr:`grid`.  The page plays the replay; the kernel
        hears the position where it stopped.
    play : Replay
        The same control as :attr:`slider`.
    grid : ndarray of float
        The pass positions the slider steps through.
    summary : ipywidgets.HTML
        Final numbers per method: status, iterations, passes, solver time, thresholdings,
        their estimated share of solver time, ``F − F*`` and the error; ``F*``'s source and
        the stopping rule below.
    counts : ipywidgets.HTML
        Live numbers at the slider position.
    fig_convergence, fig_timeline : Figure
    fig_coefficients : dict of str to Figure
    """

    _busy_what = "solving every method it changes"
    _wait_timeout = 60.0

    def __init__(self, problem=None, methods=("svrght", "svrgsp", "svrgsp+"), *, s=None,
                 random_state=0, record_iterates=True, interval=PLAY_INTERVAL, n_ticks=200,
                 reference="exact", cost=None, inner=None, m=None, max_passes=None, tol=None,
                 ftol=None, patience=None, max_iter=None, debounce=0.2, **solve_kwargs):
        opts = check_options(debounce=debounce, n_ticks=n_ticks, interval=interval)
        debounce = opts.get("debounce", debounce)
        n_ticks, interval = opts.get("n_ticks", n_ticks), opts.get("interval", interval)
        if isinstance(methods, str):
            methods = (methods,)
        methods = [get_method(mth).name for mth in methods]
        if not methods:
            raise ValueError("give at least one method")
        if len(set(methods)) != len(methods):
            raise ValueError(f"methods repeat: {methods}")
        check_reference(reference)
        unknown = set(solve_kwargs) - set(_SOLVE_KEYS) - {"warn"}
        if unknown:
            raise TypeError(f"compare() got unexpected keyword(s) {sorted(unknown)}")
        solve_kwargs.pop("warn", None)
        prob = (make_regression("classroom", random_state=random_state)
                if problem is None else as_problem(problem))
        self.rule = stopping(max_passes=max_passes, tol=tol, ftol=ftol, patience=patience,
                             max_iter=max_iter)
        inner = default_reading() if inner is None else inner
        m0 = 6 if m is None else m
        for mth in methods:  # every argument checked as solve checks it, before any work
            check_params(prob, mth, s=s, inner=inner, m=m0 if get_method(mth).uses_m else None,
                         **self.rule, **solve_kwargs)
        super().__init__()
        self.problem = prob
        self.methods = methods
        self.random_state = random_state
        self.record_iterates = record_iterates
        self.n_ticks = int(n_ticks)
        # no share-of-time estimate by default: it divided a model by this machine's
        # timing of the run, which moved with the load (27 % -> 100 % for one run)
        self.cost = False if cost is None else cost
        self._reference_kind = reference
        self._s = s
        self._solve_kwargs = solve_kwargs
        self.error = None

        self.reading, self.reading_note = reading_control(inner)
        uses_m = any(get_method(mth).uses_m for mth in methods)
        self.m_slider = widgets.IntSlider(value=int(m0), min=1, max=max(30, int(m0)),
                                          description="m", disabled=not uses_m,
                                          style={"description_width": "64px"},
                                          layout=widgets.Layout(width="330px"))
        self.m_slider.tooltip = M_TOOLTIP
        self.status = widgets.HTML()
        out = self._compute({"inner": self.reading.value, "m": self.m_slider.value})
        self._take(out)
        specs = out["specs"]
        self.fig_convergence = figure_widget(specs["convergence"])
        self.fig_timeline = figure_widget(specs["timeline"])
        self.fig_coefficients = {mth: figure_widget(specs["coefficients"][mth])
                                 for mth in methods}
        self.slider = replay_control(len(self.grid), interval, "passes",
                                     readouts=_readouts(self.grid))
        self.play = self.slider  # one control: play / pause, a step either way, a slider
        self.position = widgets.HTML()
        self.summary = widgets.HTML(self._summary_html())
        self.counts = widgets.HTML()
        self._set_frames()
        self.slider.observe(lambda ch: self._show(int(ch["new"])), names="value")
        self._show(0)
        self._status_line()
        self.debouncer = Debouncer(self._compute, self._apply, self._on_error, delay=debounce,
                                   on_busy=self._on_busy)
        self.reading.observe(self._on_control, names="value")
        self.m_slider.observe(self._on_control, names="value")
        self.children = [
            self.summary,
            widgets.HBox([self.reading, self.m_slider],
                         layout=widgets.Layout(flex_flow="row wrap")),
            self.reading_note, self.status,
            self.slider, self.counts, self.fig_convergence, self.fig_timeline,
            *self.fig_coefficients.values()]
        self.add_class("rgrasp-compare")

    # -- solving --------------------------------------------------------------------------------
    def _compute(self, params):
        inner, m = params["inner"], int(params["m"])
        results = {}
        solved = getattr(self, "_solved", {})
        for mth in self.methods:
            spec = get_method(mth)
            # a control re-solves only the methods it changes (m: SVRGSP+; the reading: the
            # methods that have readings); the others keep their run
            key = (mth, inner if spec.readings else None, m if spec.uses_m else None)
            res = solved.get(key)
            if res is None:
                res = solve(self.problem, mth, s=self._s, random_state=self.random_state,
                            record_iterates=self.record_iterates, warn=False,
                            inner=inner, m=m if spec.uses_m else None, **self.rule,
                            **self._solve_kwargs)
            results[mth] = res
        self._solved = {(mth, inner if get_method(mth).readings else None,
                         m if get_method(mth).uses_m else None): r
                        for mth, r in results.items()}
        runs = list(results.values())
        ref = None
        fstar = view_fstar(self.problem, runs, self._reference_kind)
        shares = {mth: F.threshold_share(r, self.cost) for mth, r in results.items()}
        frames = {mth: replay_frames(r) for mth, r in results.items()}
        finite = [float(np.nanmax(np.where(np.isfinite(r.trace.passes), r.trace.passes,
                                           np.nan))) for r in runs]
        top = max(finite) if finite else 1.0
        grid = np.linspace(0.0, top, self.n_ticks + 1)
        ymax = {mth: F.coefficient_range(r) for mth, r in results.items()}
        state0 = {mth: frames[mth][0][frame_at(frames[mth][1], 0.0)] for mth in results}
        coef = {mth: self._coef_spec(mth, r, *state0[mth], ymax[mth])
                for mth, r in results.items()}
        specs = {"convergence": F.convergence_spec(runs, x="passes", y="both", fstar=fstar),
                 "timeline": F.threshold_timeline_spec(runs, x="passes", cost=self.cost,
                                                       max_marks=MAX_MARKS),
                 "coefficients": coef}
        for key in ("convergence", "timeline"):
            specs[key]["layout"]["shapes"] = _cursor(0.0)
            fixed_plot_area(specs[key])  # the page draws the cursor
        return {"params": params, "results": results, "reference": ref, "fstar": fstar,
                "shares": shares, "frames": frames, "grid": grid, "ymax": ymax,
                "specs": specs}

    def _take(self, out):
        self.results = out["results"]
        self.reference = out["reference"]
        self.fstar = out["fstar"]
        self.shares = out["shares"]
        self._frames = out["frames"]
        self._ymax = out["ymax"]
        self._ev_pos = {mth: np.sort(event_positions(r, "passes")[0])
                        for mth, r in self.results.items()}
        self.grid = out["grid"]

    def _apply(self, out):
        self._take(out)
        self.error = None
        specs = out["specs"]
        last = len(self.grid) - 1
        with self.slider.hold_sync():
            self.slider.max = last
            self.slider.value = min(self.slider.value, last)
            self.slider.readouts = _readouts(self.grid)
        # each figure gets its new state and its frames in one message
        self._set_frames(specs)
        self.summary.value = self._summary_html()
        self._show(self.slider.value)
        self._status_line()

    def _on_control(self, change):
        if self.debouncer.delay > 0:
            self.status.value = status_box("solving every method it changes…", "busy")
        self.debouncer.request({"inner": self.reading.value, "m": self.m_slider.value})

    def _status_line(self):
        rd = self.reading.value
        m = self.m_slider.value
        bad = [run_label(mth, rd) for mth, r in self.results.items()
               if r.status == Status.DIVERGED]
        text = (f"Solved with inner = <b>{esc(rd)}</b>, m = {m} · "
                f"{esc(stopping_text(self.rule))}")
        if bad:
            text += f" ⚠ {esc(', '.join(bad))} diverged (dotted in the plot)."
        self.status.value = status_box(text, "warn" if bad else "ok")

    # -- the replay -----------------------------------------------------------------------------
    def _set_frames(self, specs=None):
        """Compute every figure's replay frames once (the page steps them); with ``specs``,
        show the new figures in the same message as their frames."""
        cursors = lambda i: {"layout": {"shapes": _cursor(float(self.grid[i]))}}  # noqa: E731
        figs = [(self.fig_convergence, "convergence", cursors, None),
                (self.fig_timeline, "timeline", cursors, None)]
        for mth, fw in self.fig_coefficients.items():
            figs.append((fw, mth, lambda i, mth=mth: self._coef_patch(mth, i),
                         lambda i, mth=mth: self._state(mth, float(self.grid[i]))))
        for fw, name, make, key in figs:
            with fw.hold_sync():
                if specs is not None:
                    spec = (specs["coefficients"][name] if name in self.fig_coefficients
                            else specs[name])
                    update_figure(fw, spec)
                play_frames(fw, self.slider, make, key=key)

    def _coef_patch(self, mth, i):
        t, step = self._state(mth, float(self.grid[i]))
        return spec_patch(self._coef_spec(mth, self.results[mth], t, step, self._ymax[mth]))

    def _coef_spec(self, mth, result, t, step, ymax):
        """One method's coefficients, compact: the legend once (first method), a lower
        figure (three of them are redrawn at every tick of the replay)."""
        spec = F.coefficients_spec(result, t, step, ymax=ymax)
        lay = spec["layout"]
        lay["height"] = 270
        lay["margin"] = {**lay["margin"], "t": 50, "b": 40 if mth != self.methods[0] else 80}
        lay["showlegend"] = mth == self.methods[0]
        # the legend, drawn once, lists the marks of every figure at every position
        return fixed_plot_area(legend_lists_every_trace(spec))

    def _state(self, method, pos):
        frames, fpos = self._frames[method]
        return frames[frame_at(fpos, pos)]

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
        for mth, r in self.results.items():
            frames, fpos = self._frames[mth]
            i = frame_at(fpos, pos)
            t, step = frames[i]
            tr = r.trace
            done = t if step is None else t - 1
            out[mth] = {"t": t, "step": step,
                        "thresholdings": thresholds_until(tr, pos, t, step, self._ev_pos[mth]),
                        "passes": float(fpos[i]), "time": float(tr.time[done])}
        return out

    def _summary_html(self):
        rd = self.reading.value
        rows = []
        estimated = any(math.isfinite(sh["share"]) for sh in self.shares.values())
        for mth, r in self.results.items():
            sh = self.shares[mth]
            share = f"≈{100 * sh['share']:.0f}%" if math.isfinite(sh["share"]) else "n/a"
            share = f"<td>{share}</td>" if estimated else ""
            kind = status_kind(r)  # a CONVERGED poor estimate is amber, and says why
            color = {"ok": "#1B5E20", "warn": "#8A4B00", "error": "#8B0000"}[kind]
            note = status_note(r)
            note = (f"<br><small class='rgrasp-status-note'>{esc(note)}</small>" if note
                    else "")
            gap = self.fstar.gap(r.fun)
            gap_text = ("diverged" if r.status == Status.DIVERGED
                        else f"{float(gap):.2e}" if np.isfinite(gap) else "n/a")
            rows.append(
                f"<tr><td style='color:{method_color(mth)}'><b>{esc(run_label(mth, rd))}</b>"
                f"</td><td class='rgrasp-status-{kind}' style='color:{color}'>"
                f"{esc(r.status.name)}{note}</td>"
                f"<td>{r.nit}</td><td>{r.passes:.3g}</td><td>{1e3 * r.time:.1f}</td>"
                f"<td>{sh['count']:,}</td>{share}"
                f"<td>{gap_text}</td><td>{r.rel_error:.2e}</td></tr>")
        head = ("<tr><th>method</th><th>status</th><th>iterations</th><th>passes</th>"
                "<th>solver ms</th><th>hard thresholdings</th>"
                + ("<th>their share (est.)</th>" if estimated else "")
                + "<th>F − F*</th><th>rel. error</th></tr>")
        share_src = next(iter(self.shares.values()))["source"] if estimated else ""
        note = (f"{esc(self.fstar.source)} (the same F* as in the convergence plot). "
                f"{esc(stopping_text(self.rule))}")
        return (f"<table class='rgrasp-summary' style='border-collapse:collapse'>{head}"
                f"{''.join(rows)}</table><div class='rgrasp-summary-note' "
                f"style='font-size:12px'>{note}</div><small>{esc(share_src[:300])}</small>")

    def _show(self, k):
        k = int(min(max(k, 0), len(self.grid) - 1))
        pos = float(self.grid[k])
        state = self.state_at(pos)
        self.position.value = f"<b>{pos:.3g}</b> passes"
        rd = self.reading.value
        cells = []
        for mth, st in state.items():
            inner = "" if st["step"] is None else f", step {st['step']}"
            cells.append(f"<td style='color:{method_color(mth)};padding-right:18px'>"
                         f"<b>{esc(run_label(mth, rd))}</b>: iteration {st['t']}{inner} · "
                         f"{st['thresholdings']:,} H so far · solver "
                         f"{1e3 * st['time']:.1f} ms</td>")
        self.counts.value = f"<table><tr>{''.join(cells)}</tr></table>"

    def static_figures(self):
        """What a page without a kernel shows: the end of the shared axis of effective
        passes (convergence and thresholding timeline without the playback cursor, which
        means nothing on a static page, then each method's coefficients there).

        Returns
        -------
        title : str
            ``rv.compare (<methods>), end of the runs``.
        figures : list of dict
            New figure specs, in display order.
        """
        figs = []
        for fw in (self.fig_convergence, self.fig_timeline):
            spec = copy.deepcopy(fw.to_plotly_json())
            spec["layout"] = {k: v for k, v in spec["layout"].items() if k != "shapes"}
            figs.append(spec)
        end = self.state_at(float(self.grid[-1]))
        figs += [F.coefficients_spec(self.results[m], st["t"], st["step"])
                 for m, st in end.items()]
        return f"rv.compare ({', '.join(self.results)}), end of the runs", figs


def _readouts(grid):
    return [f"{float(g):.3g} passes" for g in grid]


def _cursor(pos):
    return [{"type": "line", "name": "cursor", "xref": xr, "yref": "paper", "x0": pos,
             "x1": pos, "y0": 0, "y1": 1, "line": {"color": "black", "width": 1, "dash": "dot"}}
            for xr in ("x", "x2")]


def compare(problem=None, methods=("svrght", "svrgsp", "svrgsp+"), **kwargs):
    """Run several methods on one problem and seed, stopped by one rule, and replay them side
    by side.

    Parameters
    ----------
    problem : Problem or (W, y), optional
        Default: the classroom regression problem (n=500, d=1000).
    methods : sequence of str, default ("svrght", "svrgsp", "svrgsp+")
        Registered method names or aliases ("FG-HT").
    **kwargs
        ``s``, ``random_state`` (default 0, the same for every method), ``inner`` (the
        reading of Algorithm 2; default that of :func:`rgrasp_viz.solve`; a control switches
        it), ``m`` (SVRGSP+, default 6; a slider), the stopping rule shared by every method
        (``max_passes``, ``tol``, ``ftol``, ``patience``, ``max_iter``; defaults
        :data:`~rgrasp_viz.viz.dashboards._controls.STOPPING`), ``eta``, ``J``,
        ``batch_size``, ``record_every`` (applied to every method that uses them),
        ``record_iterates`` (default True: replay inside epochs), ``interval`` (ms per Play
        tick), ``n_ticks`` (slider positions), ``reference`` (``"exact"``: F* below every
        run shown, from :func:`rgrasp_viz.reference.reference` without a re-run; None: the
        lowest
        objective of the runs shown),
        ``cost`` (thresholding cost model; default None or False: not
        estimated), ``debounce`` (seconds before a control change re-solves; 0: at once).
        Every argument is checked as :func:`rgrasp_viz.solve` checks it, before any work.

    Returns
    -------
    Comparison
        An ``ipywidgets.VBox``: a summary table (status, iterations, passes, solver time,
        thresholdings and their estimated cost, ``F − F*``), the reading and ``m`` controls,
        a shared Play/slider over effective passes, live counts, convergence and
        thresholding timeline with a cursor, and one coefficient view per method.
    """
    return Comparison(problem, methods, **kwargs)
