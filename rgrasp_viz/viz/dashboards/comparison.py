"""The comparison: several methods on one problem and seed, replayed in sync."""

from __future__ import annotations

import math

import ipywidgets as widgets
import numpy as np

from ...analysis import event_positions, frame_at, replay_frames, thresholds_until
from ...problems import as_problem, make_regression
from ...solvers import solve
from ...solvers.registry import get_method, method_color, method_label
from .. import figures as F
from .. import static
from .._cost import measured_threshold_cost
from ..figures._base import short
from ._widgets import esc, figure_widget, update_figure

__all__ = ["Comparison", "compare"]


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
        methods = [get_method(m).name for m in methods]
        if not methods:
            raise ValueError("give at least one method")
        if len(set(methods)) != len(methods):
            raise ValueError(f"methods repeat: {methods}")
        cost = measured_threshold_cost if cost is None else cost
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
        self.fig_convergence = figure_widget(
            F.convergence_spec(ok or runs, x="passes", y="both", fstar=self.reference))
        self.fig_timeline = figure_widget(
            F.threshold_timeline_spec(runs, x="passes", cost=cost))
        self._frames = {m: replay_frames(r) for m, r in self.results.items()}
        self._ev_pos = {m: np.sort(event_positions(r, "passes")[0])
                        for m, r in self.results.items()}
        finite = [float(np.nanmax(np.where(np.isfinite(r.trace.passes), r.trace.passes,
                                           np.nan))) for r in runs]
        top = max(finite) if finite else 1.0
        self.grid = np.linspace(0.0, top, int(n_ticks) + 1)
        self.fig_coefficients = {}
        for m, r in self.results.items():
            t, step = self._state(m, 0.0)
            self.fig_coefficients[m] = figure_widget(F.coefficients_spec(r, t, step))
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
        for m, r in self.results.items():
            frames, fpos = self._frames[m]
            i = frame_at(fpos, pos)
            t, step = frames[i]
            tr = r.trace
            done = t if step is None else t - 1
            out[m] = {"t": t, "step": step,
                      "thresholdings": thresholds_until(tr, pos, t, step, self._ev_pos[m]),
                      "passes": float(fpos[i]), "time": float(tr.time[done])}
        return out

    def _summary_html(self):
        rows = []
        best = min((r.fun for r in self.results.values() if r.status != 2), default=np.nan)
        for m, r in self.results.items():
            sh = self.shares[m]
            share = f"≈{100 * sh['share']:.0f}%" if math.isfinite(sh["share"]) else "n/a"
            rows.append(
                f"<tr><td style='color:{method_color(m)}'><b>{esc(method_label(m))}</b></td>"
                f"<td>{esc('diverged' if r.status == 2 else 'ok')}</td>"
                f"<td>{r.nit}</td><td>{r.passes:.3g}</td><td>{1e3 * r.time:.1f}</td>"
                f"<td>{sh['count']:,}</td><td>{share}</td>"
                f"<td>{r.fun - best:.2e}</td><td>{r.rel_error:.2e}</td></tr>")
        head = ("<tr><th>method</th><th>status</th><th>iterations</th><th>passes</th>"
                "<th>solver ms</th><th>hard thresholdings</th><th>their share (est.)</th>"
                "<th>F − best F</th><th>rel. error</th></tr>")
        src = next(iter(self.shares.values()))["source"]
        return (f"<table class='rgrasp-summary' style='border-collapse:collapse'>{head}"
                f"{''.join(rows)}</table><small>{esc(short(src, 300))}</small>")

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
            cells.append(f"<td style='color:{method_color(m)};padding-right:18px'>"
                         f"<b>{esc(method_label(m))}</b>: iteration {st['t']}{inner} · "
                         f"{st['thresholdings']:,} H so far · solver "
                         f"{1e3 * st['time']:.1f} ms</td>")
        self.counts.value = f"<table><tr>{''.join(cells)}</tr></table>"

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
        Registered method names.
    **kwargs
        ``s``, ``random_state`` (default 0, the same for every method), ``record_iterates``
        (default True: replay inside epochs), ``interval`` (ms per Play frame),
        ``n_ticks`` (slider positions), ``reference`` (``"grasp"`` or None, for F*),
        ``cost`` (thresholding cost model; default measured on this machine, False: not
        estimated), and any other :func:`rgrasp_viz.solve` keyword (``eta``, ``J``, ``m``,
        ``max_iter``, ...), applied to every method.

    Returns
    -------
    Comparison
        An ``ipywidgets.VBox``: a summary table (iterations, passes, solver time,
        thresholdings and their estimated cost), a shared Play/slider over effective
        passes, live counts, convergence and thresholding timeline with a cursor, and one
        coefficient view per method.
    """
    return Comparison(problem, methods, **kwargs)
