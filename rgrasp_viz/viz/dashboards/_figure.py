"""The dashboards' figure widget and replay control: anywidgets of our own.

:class:`Figure` shows a plotly figure given as a builder's spec (``{"data": [...],
"layout": {...}}``, or anything with ``to_plotly_json()``).  The whole figure travels as JSON
(:func:`plotly.io.to_json`) and the page draws it with ``Plotly.react``: the result is the
same as a fresh render of the figure Python holds.  Its JavaScript is ``figure.js`` (the view)
and ``marks.js`` (what the page draws over a figure), next to this file; it uses plotly.js's
public API only, and plotly.js is the copy plotly.py ships
(:func:`plotly.offline.get_plotlyjs`), fetched from the kernel once per page.

A replay (:class:`Replay`, ``replay.js``) is played by the page: the frames of every figure
are computed once in Python (:func:`encode_frames`: the arrays that change as binary NumPy
buffers, the few other values that change as JSON), shipped once, and stepped by the page --
each tick updates only the traces and layout entries that change: points of scatter and bar
traces on axes with a range of their own are moved in place (``Plotly.animate`` without a
redraw), a title is redrawn at most twice a second while the replay plays and at once where
it rests, anything else goes through ``Plotly.update``.  On a figure whose plot area is fixed
(``margin.autoexpand`` false, see :func:`~rgrasp_viz.viz.dashboards._widgets.fixed_plot_area`)
and whose axes have ranges of their own, the page draws over the figure, placed from the
layout alone, a replay's cursor (a vertical line shape named ``"cursor"``; elsewhere its shapes
are relaid out), and, while the replay moves (plays, or its slider is dragged), the scatter
traces it changes, on a canvas, with plotly.js's symbol paths and dash lengths; where the
replay rests, plotly.js draws them again (hover works there).  A figure
without a width of its own is given its box's width (plotly.js would otherwise measure the
page at every frame), and a small layout-only template is written into the layout the page
gets (:func:`_template_inlined`).  The kernel hears the position only where the replay
stopped; the figures then apply the same frame to the figure Python holds (without sending it
back), so page and Python agree.
"""

from __future__ import annotations

import copy
import functools
import json
import re
import uuid
from pathlib import Path

import anywidget
import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import traitlets
from plotly.offline import get_plotlyjs, get_plotlyjs_version
from plotly.utils import PlotlyJSONEncoder

__all__ = ["Figure", "Frames", "Replay", "encode_frames"]

_HERE = Path(__file__).parent

BINARY_KEYS = frozenset({"x", "y", "customdata"})
"""Trace keys whose per-frame values travel as binary buffers when they are 1-d numbers:
int32 when every value is an integer (coordinates), else float32 (what a screen can show;
the figure Python holds keeps float64), float64 when float32 cannot hold a value."""


def _module(*names):
    """One ES module from the JavaScript files ``names`` next to this file, in order: each but
    the last declares functions and constants only (no ``import`` or ``export``) for those
    after it; the last exports the widget's view."""
    return "\n".join((_HERE / name).read_text(encoding="utf-8") for name in names)


@functools.lru_cache(maxsize=1)
def _plotly_js():
    return get_plotlyjs().encode("utf-8")


@functools.lru_cache(maxsize=1)
def _plotly_js_version():
    return get_plotlyjs_version()


def _as_spec(fig):
    if hasattr(fig, "to_plotly_json"):
        fig = fig.to_plotly_json()
    if not isinstance(fig, dict) or not isinstance(fig.get("data", []), (list, tuple)):
        raise TypeError(f"a figure must be a plotly figure or a dict with 'data' and 'layout', "
                        f"got {type(fig).__name__}")
    return {"data": list(fig.get("data") or []), "layout": dict(fig.get("layout") or {})}


_AXIS = re.compile(r"^[xy]axis[0-9]*$")
_CARTESIAN = frozenset({"scatter", "scattergl", "bar", "heatmap", "histogram", "box"})


def _defaults_set(obj, defaults):
    """``obj`` (a new dict) with the entries of ``defaults`` it does not set, dicts merged."""
    out = dict(obj)
    for k, v in defaults.items():
        if k not in out:
            out[k] = copy.deepcopy(v)
        elif isinstance(v, dict) and isinstance(out[k], dict):
            out[k] = _defaults_set(out[k], v)
    return out


def _template_inlined(spec):
    """``spec`` with a small layout-only template written into its layout (a new spec).

    plotly.js looks up every attribute it computes in the figure's template as well, at every
    drawing, a replay's every step included; for a template of a few layout values (the
    builders' :data:`~rgrasp_viz.viz.figures.TEMPLATE`) that is work for nothing.  Its values
    are set where the figure leaves them unset: layout entries, and every x and y axis of the
    figure (those of the layout and those its traces name), as plotly.js would apply them.
    Any other template (trace templates, numbered axes, ``*defaults``) or a figure with
    non-cartesian traces is left as it is.
    """
    layout = spec["layout"]
    tpl = layout.get("template")
    if not isinstance(tpl, dict) or set(tpl) - {"layout"}:
        return spec
    tl = tpl.get("layout") or {}
    if not isinstance(tl, dict) or any(k.endswith("defaults") or (_AXIS.match(k) and k[5:])
                                       for k in tl):
        return spec
    if any(tr.get("type", "scatter") not in _CARTESIAN for tr in spec["data"]):
        return spec
    axes = {k for k in layout if _AXIS.match(k)}
    for tr in spec["data"]:
        for name in ("x", "y"):
            ref = tr.get(f"{name}axis") or name
            axes.add(f"{name}axis{ref[1:]}")
    out = _defaults_set({k: v for k, v in layout.items() if k != "template"},
                        {k: v for k, v in tl.items() if not _AXIS.match(k)})
    for ax in sorted(axes):
        if isinstance(tl.get(ax[:5]), dict):
            out[ax] = _defaults_set(out.get(ax) or {}, tl[ax[:5]])
    return {"data": spec["data"], "layout": out}


# -- frames ---------------------------------------------------------------------------------


def _flatten(obj, prefix=""):
    """``{"marker": {"size": 7}}`` -> ``{"marker.size": 7}`` (lists are leaves)."""
    out = {}
    for k, v in obj.items():
        path = f"{prefix}{k}"
        if isinstance(v, dict) and v:
            out.update(_flatten(v, path + "."))
        else:
            out[path] = v
    return out


def _numbers(v):
    """``v`` as a 1-d float64 array when it is a 1-d array of numbers, else None.  A missing
    value (None) is NaN: plotly.js draws neither."""
    if isinstance(v, np.ndarray):
        a = v
    elif isinstance(v, (list, tuple)) and all(
            e is None or (isinstance(e, (int, float, np.integer, np.floating))
                          and not isinstance(e, bool))
            for e in v):
        a = np.asarray([np.nan if e is None else e for e in v], dtype=np.float64)
    else:
        return None
    if a.ndim != 1 or a.dtype.kind not in "iuf":
        return None
    return a.astype(np.float64)


def _integers(a):
    """Whether every value of ``a`` is an integer that int32 holds exactly."""
    if not len(a):
        return True
    finite = np.isfinite(a).all()
    return bool(finite and np.all(a == np.round(a)) and np.abs(a).max() < 2**31)


def _fits_float32(a):
    """Whether float32 holds every finite value of ``a`` (a diverged run's may not)."""
    finite = a[np.isfinite(a)]
    return not len(finite) or float(np.abs(finite).max()) < 1e38


def _same(a, b):
    na, nb = _numbers(a), _numbers(b)
    if na is not None and nb is not None:
        return na.shape == nb.shape and np.array_equal(na, nb, equal_nan=True)
    return _dumps(a) == _dumps(b)


def _dumps(v):
    return json.dumps(v, cls=PlotlyJSONEncoder, sort_keys=True)


def _set_path(obj, path, value):
    keys = path.split(".")
    for k in keys[:-1]:
        nxt = obj.get(k)
        nxt = dict(nxt) if isinstance(nxt, dict) else {}
        obj[k] = nxt
        obj = nxt
    obj[keys[-1]] = value


class Frames:
    """The frames of a replay for one figure, as computed by :func:`encode_frames`.

    Attributes
    ----------
    n : int
        Replay positions.
    index : ndarray of int32, shape (n,)
        The state each position shows (positions between two recorded moments share one).
    states : list of dict
        ``{"data": {trace index: {path: value}}, "layout": {path: value}}``: what each state
        changes (dotted paths, e.g. ``"marker.symbol"``), only the entries that differ
        between states.
    payload : dict
        What the page receives: the index and the changing 1-d number arrays as binary
        buffers (int32, float32 or float64 values, see :data:`BINARY_KEYS`, with int32 offsets per
        state), the rest as JSON text.
    """

    _count = 0

    def __init__(self, index, states):
        Frames._count += 1
        self.index = np.ascontiguousarray(index, dtype=np.int32)
        self.n = len(self.index)
        self.states = states
        self.payload = self._pack()

    def _pack(self):
        traces = sorted({int(i) for st in self.states for i in st["data"]})
        arrays, extra = [], [{"data": {}, "layout": st["layout"]} for st in self.states]
        paths = {}
        for st in self.states:
            for i, keys in st["data"].items():
                for path in keys:
                    paths.setdefault((int(i), path), None)
        for (i, path) in sorted(paths):
            vals = [st["data"].get(i, {}).get(path) for st in self.states]
            nums = [_numbers(v) for v in vals]
            if path in BINARY_KEYS and all(v is not None for v in nums):
                offsets = np.zeros(len(nums) + 1, dtype=np.int32)
                offsets[1:] = np.cumsum([len(v) for v in nums])
                values = np.concatenate(nums) if nums else np.empty(0)
                dtype = ("<i4" if _integers(values) else
                         "<f4" if _fits_float32(values) else "<f8")
                arrays.append({"trace": i, "path": path, "dtype": dtype[1:],
                               "values": np.ascontiguousarray(values, dtype).tobytes(),
                               "offsets": offsets.astype("<i4").tobytes()})
            else:
                for k, v in enumerate(vals):
                    extra[k]["data"].setdefault(str(i), {})[path] = v
        return {"key": Frames._count, "n": self.n, "traces": traces,
                "index": self.index.astype("<i4").tobytes(), "arrays": arrays,
                "json": json.dumps(extra, cls=PlotlyJSONEncoder)}

    def apply(self, spec, i):
        """``spec`` showing position ``i`` (a new dict; ``spec`` is not modified)."""
        st = self.states[int(self.index[int(i)])]
        data = list(spec["data"])
        for t, keys in st["data"].items():
            tr = copy.deepcopy(data[int(t)])
            for path, v in keys.items():
                _set_path(tr, path, v)
            data[int(t)] = tr
        layout = copy.deepcopy(spec["layout"])
        for path, v in st["layout"].items():
            _set_path(layout, path, v)
        return {"data": data, "layout": layout}


def encode_frames(n, make, key=None):
    """The frames of a replay of ``n`` positions, computed once.

    Parameters
    ----------
    n : int
    make : callable
        ``make(i) -> {"data": {trace index: trace dict}, "layout": {key: value}}``: the traces
        and top-level layout entries position ``i`` shows (e.g. from a figure builder's
        spec, see :func:`~rgrasp_viz.viz.dashboards._widgets.spec_patch`).
    key : callable, optional
        ``key(i)``: positions with the same key show the same state, computed once (e.g. the
        recorded moment ``(t, step)`` shown at a pass position).

    Returns
    -------
    Frames
        Only what differs between states is kept: a key whose value is the same at every
        position belongs to the figure itself.
    """
    n = int(n)
    if n < 1:
        raise ValueError(f"a replay needs at least one position, got {n}")
    ids, index, raw = {}, np.empty(n, dtype=np.int32), []
    for i in range(n):
        k = key(i) if key is not None else i
        if k not in ids:
            ids[k] = len(raw)
            p = make(i)
            raw.append({"data": {int(t): _flatten(tr) for t, tr in (p.get("data") or {}).items()},
                        "layout": _flatten(dict(p.get("layout") or {}))})
        index[i] = ids[k]
    first = raw[0]
    states = [{"data": {}, "layout": {}} for _ in raw]
    for t, keys in first["data"].items():
        for path in keys:
            vals = [r["data"].get(t, {}).get(path) for r in raw]
            if any(not _same(v, vals[0]) for v in vals[1:]):
                for st, v in zip(states, vals, strict=True):
                    st["data"].setdefault(t, {})[path] = v
    for path in first["layout"]:
        vals = [r["layout"].get(path) for r in raw]
        if any(not _same(v, vals[0]) for v in vals[1:]):
            for st, v in zip(states, vals, strict=True):
                st["layout"][path] = v
    return Frames(index, states)


# -- the widgets ----------------------------------------------------------------------------


class Replay(anywidget.AnyWidget):
    """A replay control played by the page: play / pause, a step either way, a slider.

    ``value`` is the position shown; the page changes it while playing without telling the
    kernel, and sets it here where the replay stops (pause, end, a step, the slider let go).
    Setting ``value`` from Python moves the replay in the page.  Figures follow it with
    :meth:`Figure.set_frames`.

    Parameters
    ----------
    max : int
        Last position.
    value : int, default 0
    interval : int
        Milliseconds per position while playing.
    description : str
        Shown before the slider.
    """

    _esm = _HERE / "replay.js"
    value = traitlets.Int(0).tag(sync=True)
    max = traitlets.Int(0).tag(sync=True)
    interval = traitlets.Int(50).tag(sync=True)
    description = traitlets.Unicode("").tag(sync=True)
    readouts = traitlets.List(traitlets.Unicode()).tag(sync=True)
    key = traitlets.Unicode("").tag(sync=True)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.key = uuid.uuid4().hex

    @traitlets.validate("value")
    def _clamp(self, proposal):
        return int(min(max(int(proposal["value"]), 0), self.max))

    def step(self, k=1):
        """Move ``k`` positions (clamped)."""
        self.value = self.value + int(k)


class Figure(anywidget.AnyWidget):
    """A plotly figure in the page, drawn with ``Plotly.react`` from the figure Python holds.

    Parameters
    ----------
    spec : dict or plotly figure
        ``{"data": [...], "layout": {...}}`` (a builder's ``*_spec``) or a ``go.Figure``.

    Notes
    -----
    The page marks the drawing element with ``data-rgrasp-frame`` (the replay position
    shown), ``data-rgrasp-text`` (``"stale"`` while a playing replay's title still shows an
    earlier position) and ``data-rgrasp-draws``.
    """

    _esm = _module("marks.js", "figure.js")
    _figure = traitlets.Unicode("").tag(sync=True)
    _frames = traitlets.Dict().tag(sync=True)
    _frame = traitlets.Int(-1).tag(sync=True)
    _replay = traitlets.Unicode("").tag(sync=True)
    _plotly_version = traitlets.Unicode("").tag(sync=True)
    caption = traitlets.Unicode("").tag(sync=True)
    """HTML drawn above the figure, with it (a status line; user text escaped by the caller)."""

    def __init__(self, spec=None, **kwargs):
        super().__init__(**kwargs)
        self._base = {"data": [], "layout": {}}
        self._spec = None
        self._go = None
        self._frames_obj = None
        self._replay_widget = None
        self._plotly_version = _plotly_js_version()
        self.on_msg(self._on_custom_msg)
        if spec is not None:
            self.show(spec)

    # -- what Python holds ------------------------------------------------------------------
    @property
    def spec(self):
        """dict: the figure shown (the replay's position applied), ``{"data", "layout"}``."""
        if self._spec is None:
            f, i = self._frames_obj, self._frame
            self._spec = f.apply(self._base, i) if f is not None and 0 <= i < f.n else self._base
        return self._spec

    def to_plotly_json(self):
        """The figure shown, as ``go.Figure.to_plotly_json()`` gives it."""
        return self.spec

    @property
    def figure(self):
        """plotly.graph_objects.Figure: a validated copy of the figure shown."""
        if self._go is None:
            self._go = go.Figure(self.spec)
        return self._go

    @property
    def data(self):
        """The traces shown (``figure.data``)."""
        return self.figure.data

    @property
    def layout(self):
        """The layout shown (``figure.layout``)."""
        return self.figure.layout

    @property
    def frame(self):
        """int: the replay position shown (-1: none)."""
        return self._frame

    @property
    def replay_frames(self):
        """Frames or None: the replay's frames (:meth:`set_frames`)."""
        return self._frames_obj

    # -- changes ------------------------------------------------------------------------------
    def show(self, spec, caption=None):
        """Show ``spec`` (one message; with ``caption``, the caption is drawn with it).

        Parameters
        ----------
        spec : dict or plotly figure
        caption : str, optional
            HTML for :attr:`caption`.
        """
        self._base = _as_spec(spec)
        self._spec = self._go = None
        text = pio.to_json(_template_inlined(self._base), validate=False)
        with self.hold_sync():
            self._figure = text
            if caption is not None:
                self.caption = caption

    def patch(self, traces=None, layout=None):
        """Replace whole traces (``{index: trace dict}``) and top-level layout entries of the
        figure, and show it (one message)."""
        base = {"data": list(self._base["data"]), "layout": dict(self._base["layout"])}
        for i, tr in (traces or {}).items():
            base["data"][int(i)] = tr
        base["layout"].update(layout or {})
        self.show(base)

    def set_frames(self, frames, replay):
        """Give the figure a replay's frames; it shows position ``replay.value`` from now on.

        The page steps the frames itself while ``replay`` plays (no message); Python applies
        position ``replay.value`` whenever the kernel hears it.

        Parameters
        ----------
        frames : Frames
            From :func:`encode_frames`, computed on the figure :meth:`show` was given.
        replay : Replay
        """
        if replay is not self._replay_widget:
            if self._replay_widget is not None:
                self._replay_widget.unobserve(self._on_replay, names="value")
            replay.observe(self._on_replay, names="value")
            self._replay_widget = replay
        self._frames_obj = frames
        self._spec = self._go = None
        with self.hold_sync():
            self._replay = replay.key
            self._frames = frames.payload
            self._frame = int(replay.value)

    def _on_replay(self, change):
        self._spec = self._go = None
        self._frame = int(change["new"])

    def _on_custom_msg(self, _widget, content, _buffers):
        if isinstance(content, dict) and content.get("kind") == "plotly-js-request":
            self.send({"kind": "plotly-js"}, buffers=[_plotly_js()])
