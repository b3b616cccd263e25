"""The explorer's controls, from one table.

One :class:`Control` per parameter the explorer lets a learner change: its key (also the
widget's description), widget kind, range, tooltip, where it sits, and which methods use it
-- read from the method registry's flags (``has_step``, ``epoch``, ``uses_m``,
``uses_batch``, ``readings``), so a newly registered method gets the right controls enabled
without touching this file.
"""

from __future__ import annotations

import dataclasses
import html
import inspect
import math
from collections.abc import Callable

import ipywidgets as widgets

from ...solvers import cuts_per_epoch, solve
from ...solvers._registry import READINGS, normalize_reading

__all__ = ["CONTROLS", "M_TOOLTIP", "STOPPING", "Control", "build_controls", "default_reading",
           "eta_range", "reading_control", "reading_note", "solve_kwargs", "stopping",
           "stopping_text"]


STOPPING = {"max_passes": 100.0, "tol": 1e-7, "ftol": 1e-6, "patience": 5, "max_iter": 10_000}
"""The one stopping rule of every run a dashboard shows, whatever its method: a pass budget,
the fixed-point test and the stagnation test with one ``ftol`` and one ``patience`` (instead
of each method's own defaults), so that iterations, passes and times in one table compare like
with like.  ``max_iter`` is only a safety net: the pass budget ends a run first."""


def stopping(**given):
    """The stopping keywords of a dashboard's solves: :data:`STOPPING`, with the values given
    (``None`` keeps the default)."""
    unknown = set(given) - set(STOPPING)
    if unknown:
        raise TypeError(f"unknown stopping keyword(s) {sorted(unknown)}")
    return {k: (v if given.get(k) is None else given[k]) for k, v in STOPPING.items()}


def stopping_text(rule):
    """One sentence saying how every run of a view was stopped (for tables and status
    lines)."""
    parts = [f"at most {rule['max_passes']:g} effective passes"]
    if rule["max_iter"] < STOPPING["max_iter"]:
        parts.append(f"at most {rule['max_iter']} iterations")
    parts.append(f"a fixed point (tol = {rule['tol']:g})")
    if rule["ftol"] > 0:
        parts.append(f"or no relative improvement above ftol = {rule['ftol']:g} in "
                     f"{rule['patience']} iterations")
    return "Every run stops by the same rule: " + ", ".join(parts) + "."


def reading_note(key):
    """HTML: the one-line explanation of reading ``key`` of Algorithm 2, shown next to the
    reading control."""
    r = READINGS[normalize_reading(key)]
    who = "ours" if r.ours else "the paper's"
    return (f'<div class="rgrasp-reading" style="font-size:12px;color:#444;max-width:640px">'
            f"<b>{key}</b> ({who}): {html.escape(r.summary)}</div>")


def reading_control(value):
    """The reading control (a Dropdown described ``"inner"``) and its explanation (an HTML
    widget that follows it)."""
    w = widgets.Dropdown(value=normalize_reading(value), description="inner", style=_STYLE,
                         layout=widgets.Layout(**_LAYOUT), **_reading_options(None, value))
    w.tooltip = "; ".join(f"{k}: {r.summary}" for k, r in READINGS.items())
    note = widgets.HTML(reading_note(w.value))
    w.observe(lambda ch: setattr(note, "value", reading_note(ch["new"])), names="value")
    return w, note


def eta_range(eta, also=None):
    """Log10 range of the eta slider: the default step size / 100 to x 100 (stretched to
    include ``also``, a user's initial value)."""
    lo = hi = math.log10(eta)
    if also is not None and also > 0:
        lo, hi = min(lo, math.log10(also)), max(hi, math.log10(also))
    return {"min": lo - 2.0, "max": hi + 2.0, "step": 0.02}


def default_reading():
    """The reading of Algorithm 2 that :func:`rgrasp_viz.solve` uses when not told."""
    return normalize_reading(inspect.signature(solve).parameters["inner"].default)


@dataclasses.dataclass(frozen=True)
class Control:
    """One control of the explorer.

    Parameters
    ----------
    key : str
        Parameter name; the widget's description.
    kind : {"int", "float", "log", "choice"}
        IntSlider, FloatSlider, FloatLogSlider (base 10) or Dropdown.
    tooltip : str
    row : int
        Row of the control panel (the method picker opens row 0).
    bounds : callable
        ``bounds(problem, value) -> dict`` of widget keywords (``min``, ``max``, ``step``,
        ``options``) for the problem shown and the initial value.
    uses : callable, optional
        ``uses(spec) -> bool`` for a :class:`~rgrasp_viz.solvers._registry.MethodSpec`; the
        control is disabled for methods that do not use it.  None: every method uses it.
    solve_key : str, optional
        The :func:`rgrasp_viz.solve` keyword it sets (None: a parameter of the synthetic
        problem, not of the solve).
    problem : bool
        A parameter of the synthetic problem (disabled when the data are fixed).
    resets_eta : bool
        Changing it moves ``eta`` to the default step size of the new setting.
    """

    key: str
    kind: str
    tooltip: str
    row: int
    bounds: Callable
    uses: Callable | None = None
    solve_key: str | None = None
    problem: bool = False
    resets_eta: bool = False

    def used_by(self, spec):
        """bool: whether the method of ``spec`` uses this control."""
        return self.uses is None or bool(self.uses(spec))


M_TOOLTIP = (f"SVRGSP+: H_|T| every ceil(J/m) inner steps, i.e. floor(J/ceil(J/m)) cuts per "
             f"epoch (rv.cuts_per_epoch; m = 6 gives {cuts_per_epoch(60, 6)} cuts at J = 60, "
             f"{cuts_per_epoch(1000, 6)} at J = 1000)")
"""The tooltip of every ``m`` control (one wording for the explorer and the comparison)."""


def _reading_options(problem, value):
    return {"options": [(key + (" (ours)" if r.ours else " (Algorithm 2)"), key)
                        for key, r in READINGS.items()]}


CONTROLS = (
    Control("s", "int", "sparsity level s", 0, solve_key="s",
            bounds=lambda p, v: {"min": 1, "max": min(p.d, max(4 * int(v), 40))}),
    Control("eta", "log", "step size η (log scale)", 0, solve_key="eta",
            uses=lambda spec: spec.has_step, bounds=lambda p, v: {}),  # see Explorer
    Control("J", "int", "inner steps per epoch", 1, solve_key="J",
            uses=lambda spec: spec.epoch,
            bounds=lambda p, v: {"min": min(10, int(v)), "max": max(10 * p.n, int(v)),
                                 "step": 10 if int(v) % 10 == 0 else 1}),
    Control("m", "int", M_TOOLTIP, 1, solve_key="m",
            uses=lambda spec: spec.uses_m,
            bounds=lambda p, v: {"min": 1, "max": max(30, int(v))}),
    Control("batch_size", "int", "SG-HT: samples per mini-batch", 1, solve_key="batch_size",
            uses=lambda spec: spec.uses_batch, resets_eta=True,
            bounds=lambda p, v: {"min": 1, "max": max(p.n, int(v))}),
    Control("inner", "choice", "; ".join(f"{k}: {r.summary}" for k, r in READINGS.items()),
            2, solve_key="inner", uses=lambda spec: bool(spec.readings), resets_eta=True,
            bounds=_reading_options),
    Control("seed", "int", "random seed (data and sampled indices)", 2,
            solve_key="random_state",
            bounds=lambda p, v: {"min": 0, "max": max(100, int(v))}),
    Control("n", "int", "samples", 3, problem=True,
            bounds=lambda p, v: {"min": min(50, p.n), "max": max(3000, p.n),
                                 "step": 50 if p.n % 50 == 0 else 1}),
    Control("d", "int", "features", 3, problem=True,
            bounds=lambda p, v: {"min": min(50, p.d), "max": max(5000, p.d),
                                 "step": 50 if p.d % 50 == 0 else 1}),
    Control("noise", "float", "noise variance σ²", 3, problem=True,
            bounds=lambda p, v: {"min": 0.0, "max": max(0.5, float(v)), "step": 0.005,
                                 "readout_format": ".3f"}),
)
"""The explorer's controls, in display order within each row."""

_STYLE = {"description_width": "64px"}
_LAYOUT = {"width": "330px"}


def build_controls(problem, values, eta_default):
    """The widgets of :data:`CONTROLS` with their initial ``values`` (dict key -> value).

    Parameters
    ----------
    problem : Problem
        The problem shown first (ranges depend on ``n`` and ``d``).
    values : dict
        Initial value per key.
    eta_default : float
        The method's default step size (the eta slider spans it / 100 to x 100).

    Returns
    -------
    dict of str to ipywidgets.Widget
    """
    out = {}
    for c in CONTROLS:
        value = values[c.key]
        kw = {"description": c.key, "style": _STYLE, "layout": widgets.Layout(**_LAYOUT)}
        if c.kind == "int":
            w = widgets.IntSlider(value=int(value), **c.bounds(problem, value), **kw)
        elif c.kind == "float":
            w = widgets.FloatSlider(value=float(value), **c.bounds(problem, value), **kw)
        elif c.kind == "log":
            w = widgets.FloatLogSlider(value=float(value), base=10, readout_format=".3g",
                                       **eta_range(eta_default, value), **kw)
        elif c.kind == "choice":
            w = widgets.Dropdown(value=value, **c.bounds(problem, value), **kw)
        else:  # pragma: no cover - the table above is the only input
            raise ValueError(f"unknown control kind {c.kind!r}")
        w.tooltip = c.tooltip
        out[c.key] = w
    return out


def solve_kwargs(spec, params, problem):
    """The :func:`rgrasp_viz.solve` keywords of the controls that ``spec``'s method uses.

    ``s`` is clipped to ``d``, ``m`` to ``J`` and the batch size to ``n``.

    Parameters
    ----------
    spec : MethodSpec
    params : dict
        Control values (as :meth:`Explorer.params` returns them).
    problem : Problem

    Returns
    -------
    dict
    """
    kw = {}
    for c in CONTROLS:
        if c.solve_key is None or not c.used_by(spec):
            continue
        v = params[c.key]
        kw[c.solve_key] = v if c.kind == "choice" else (float(v) if c.kind in ("float", "log")
                                                        else int(v))
    kw["s"] = max(1, min(kw["s"], problem.d))
    if "m" in kw and "J" in kw:
        kw["m"] = max(1, min(kw["m"], kw["J"]))
    if "batch_size" in kw:
        kw["batch_size"] = max(1, min(kw["batch_size"], problem.n))
    return kw
