"""The player: a recorded run replayed inner step by inner step, with linked views."""

from __future__ import annotations

import copy
import numbers

import ipywidgets as widgets
import numpy as np

from ..._trace import dimension_problem
from ...analysis import as_trace, event_positions, frame_iteration, replay_frames, thresholds_until
from ...solvers._registry import method_label
from .. import figures as F
from ._base import Dashboard
from ._widgets import (
    PLAY_INTERVAL,
    check_options,
    esc,
    figure_widget,
    fixed_plot_area,
    legend_lists_every_trace,
    play_frames,
    replay_control,
    spec_patch,
)

__all__ = ["Player", "play"]


class Player(Dashboard):
    """Step-by-step replay of one recorded run (build it with :func:`play`).

    Attributes
    ----------
    slider : Replay
        The replay control (description ``"step"``): play / pause, a step either way and a
        slider; its ``value`` is the frame index.  The page plays the replay; the kernel
        hears the frame where it stopped.
    play : Replay
        The same control as :attr:`slider`.
    label : ipywidgets.HTML
        Where the replay is: iteration, inner step, passes, thresholdings so far (for Python;
        the page shows the same line as the title of :attr:`fig_coefficients`, drawn with
        each frame, so it never lags the figures).
    fig_coefficients, fig_support, fig_progress : Figure
        ``|x|`` with threshold, ``x*`` and ``Z``; the support raster with a moving cursor;
        the objective so far.
    trace : Trace
    frames : list of (int, int or None)
        See :func:`~rgrasp_viz.analysis.replay_frames`.
    """

    def __init__(self, result_or_trace, *, interval=PLAY_INTERVAL, max_rows=60, start=0):
        opts = check_options(interval=interval, max_rows=max_rows)
        interval, max_rows = opts.get("interval", interval), opts.get("max_rows", max_rows)
        if isinstance(start, (bool, np.bool_)) or not isinstance(start, numbers.Integral):
            raise TypeError(f"start must be an integer (a frame index), got {start!r}")
        trace = as_trace(result_or_trace)
        too_big = dimension_problem(trace.meta["d"])
        if too_big:  # every frame makes dense vectors of length d
            raise ValueError(f"cannot replay this trace: {too_big}")
        super().__init__()
        self.trace = trace
        self.frames, self.frame_passes = replay_frames(self.trace)
        self._ev_pos = np.sort(event_positions(self.trace, "passes")[0])
        last = len(self.frames) - 1
        if not -len(self.frames) <= int(start) <= last:
            raise ValueError(f"start must be a frame index in [{-len(self.frames)}, {last}] "
                             f"(this replay has {len(self.frames)} frames), got {start}")
        start = int(start) % len(self.frames)
        self.slider = replay_control(
            len(self.frames), interval, "step", value=start,
            readouts=[_where(t, step) for t, step in self.frames])
        self.play = self.slider  # one control: play / pause, a step either way, a slider
        self.label = widgets.HTML()
        t, step = self.frames[start]
        self._ymax = F.coefficient_range(self.trace)  # the |x| axis stays put
        self.fig_coefficients = figure_widget(self._coefficients(start))
        raster = fixed_plot_area(F.support_raster_spec(  # the page draws the cursor
            self.trace, max_rows=max_rows, cursor=frame_iteration(self.trace, t, step)))
        self.fig_support = figure_widget(raster)
        self.fig_progress = figure_widget(F.progress_spec(self.trace, t, step))
        # every frame computed once here; the page steps them while playing
        play_frames(self.fig_coefficients, self.slider,
                    lambda i: spec_patch(self._coefficients(i)))
        play_frames(self.fig_progress, self.slider, lambda i: spec_patch(
            F.progress_spec(self.trace, *self.frames[i])))
        play_frames(self.fig_support, self.slider, lambda i: {"layout": {"shapes": F.with_cursor(
            raster, frame_iteration(self.trace, *self.frames[i]))["layout"]["shapes"]}})
        self._update_label(start)
        self.slider.observe(lambda ch: self._update_label(int(ch["new"])), names="value")
        hint = "" if self.trace.has_iterates else (
            " (outer iterations only: solve with record_iterates=True to replay inner steps)")
        # the status line is the title of the coefficients figure, drawn with each frame
        self.children = [
            self.slider,
            widgets.HTML(f"<small>{esc(method_label(self.trace.method))} — "
                         f"{len(self.frames)} frames{esc(hint)}</small>"),
            self.fig_coefficients, self.fig_progress, self.fig_support]
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
        self.slider.step(k)

    def _status(self, i):
        """The status line of frame ``i`` (HTML): where the replay is, passes, thresholdings
        so far."""
        t, step = self.frames[i]
        pos = self.frame_passes[i]
        n_thr = thresholds_until(self.trace, pos, t, step, self._ev_pos)
        where = f"x<sup>{t}</sup>" if step is None else f"iteration {t}, inner step {step}"
        return f"<b>{where}</b> · {pos:.3g} passes · {n_thr:,} hard thresholdings so far"

    def _coefficients(self, i):
        """The coefficients figure of frame ``i``, its title led by the status line (so the
        page draws both in one step)."""
        spec = F.coefficients_spec(self.trace, *self.frames[i], ymax=self._ymax)
        title = spec["layout"]["title"]["text"].replace("<br><sup>", " · ", 1)
        title = title.replace("</sup>", "")
        spec["layout"]["title"] = {**spec["layout"]["title"],
                                   "text": f"{self._status(i)}<br><sup>{title}</sup>"}
        # the page draws the moving replay's traces; the legend, drawn once, lists them all
        return fixed_plot_area(legend_lists_every_trace(spec))

    def _update_label(self, i):
        self.label.value = self._status(i)

    def static_figures(self):
        """What a page without a kernel shows: the *end* of the replay (its first frame is
        the empty starting point): coefficients, objective and the support raster with the
        cursor on the last step.

        Returns
        -------
        title : str
            ``rv.play (<method>), last of <n> steps``.
        figures : list of dict
            New figure specs, in display order.
        """
        t, step = self.frames[-1]
        raster = copy.deepcopy(self.fig_support.to_plotly_json())
        figs = [F.coefficients_spec(self.trace, t, step), F.progress_spec(self.trace, t, step),
                F.with_cursor(raster, frame_iteration(self.trace, t, step))]
        return f"rv.play ({self.trace.method}), last of {len(self.frames)} steps", figs


def _where(t, step):
    return f"iteration {t}" if step is None else f"iteration {t}, step {step}"


def play(result_or_trace, **kwargs):
    """Replay a recorded run inner step by inner step, with linked views.

    Parameters
    ----------
    result_or_trace : SolveResult, Trace or fitted estimator
        The run to replay (a fitted estimator replays its ``trace_``).  Inner steps are
        available when the run was solved with ``record_iterates=True`` (every
        ``record_every`` steps); otherwise the replay steps through outer iterations.
    **kwargs
        ``interval`` (ms per frame while playing, default ``PLAY_INTERVAL``; the page plays
        frames computed once and shipped with the figures), ``max_rows``
        (support raster), ``start`` (first frame).

    Returns
    -------
    Player
        An ``ipywidgets.VBox``: the replay control (play, step buttons, slider); ``|x|``
        with threshold, ``x*`` and ``Z``; the objective so far; the support raster with a cursor.
    """
    return Player(result_or_trace, **kwargs)
