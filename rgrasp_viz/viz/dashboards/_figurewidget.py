"""The dashboards' figure widget: a plotly ``FigureWidget`` whose page shows exactly the
figure Python holds, however it was changed.

Two things go wrong with the stock ``FigureWidget`` front end in a browser, and this class
replaces that front end (the Python side, ``fig.data``, ``fig.layout``, ``batch_update`` ...,
is plotly's own):

* Incremental updates are applied with ``Plotly.update`` / ``Plotly.restyle``, which clear
  the type of every axis whose traces get new ``x`` or ``y`` unless the same message sets
  it; plotly.py leaves unchanged layout keys out of its messages, so plotly.js guesses the
  type again from the data.  A category axis labelled with numbers ("120", "51★") then
  becomes linear: the support raster's rows squeeze together and its markers detach.
* Each stock widget imports its own 5 MB copy of plotly.js as an ES module, and anywidget
  gives a model 2 s to initialise; on a busy machine that fails, and the widget's
  incremental update messages (a trait set, then reset to ``None``) are never applied.

Here every change is sent as whole traces and a whole layout (only those that changed, as
plotly.py reports them), and the page draws them with ``Plotly.react`` -- the result is the
same as a fresh render of the figure Python holds.  A view that appears later (or misses a
message) asks the kernel for the whole figure.  plotly.js (the copy plotly.py ships) is loaded
once per page and shared by all figures: the first figure of a kernel carries it, and a page
without that figure asks the kernel for it.  The figure follows the width of its cell (a
``ResizeObserver`` resizes it when the cell's width changes, in the same loop as the draws:
never while ``Plotly.react`` is drawing).

Replays (:meth:`LiveFigure.set_frames`): a player's figures change at every tick of a Play
widget, faster than a round trip through a busy kernel allows.  The page therefore holds the
frames itself -- fetched from the kernel in chunks ahead of the one shown -- and draws frame
``i`` as soon as the value of the replay's slider becomes ``i`` in the page (the figure listens
to the slider's model there; the Play widget moves the slider through a ``jslink``); the kernel
applies the same frame to the Python figure without sending it back.  Page and Python thus end
on the same figure, which is again a builder's fresh output.
"""

from __future__ import annotations

import collections
import contextlib
import functools
from pathlib import Path

import plotly
import plotly.graph_objects as go
import traitlets
from ipywidgets.widgets.widget import _remove_buffers
from plotly.basedatatypes import Undefined as _UNDEFINED
from plotly.serializers import _py_to_js

__all__ = ["LiveFigure"]


@functools.lru_cache(maxsize=1)
def _plotly_js():
    return (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_text(
        encoding="utf-8")


@functools.lru_cache(maxsize=1)
def _plotly_js_version():
    from plotly.offline import get_plotlyjs_version

    return get_plotlyjs_version()


_SOURCE_SENT = []

_ESM = r"""
const TYPED = {int8: Int8Array, uint8: Uint8Array, int16: Int16Array, uint16: Uint16Array,
               int32: Int32Array, uint32: Uint32Array, float32: Float32Array,
               float64: Float64Array};

function decode(v) {  // plotly.py's widget serialization -> plotly.js input
  if (v === "_undefined_") return undefined;
  if (Array.isArray(v)) return v.map(decode);
  if (v && typeof v === "object") {
    if (v.buffer instanceof DataView && TYPED[v.dtype]) {
      const T = TYPED[v.dtype];
      const b = v.buffer;
      return new T(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
    }
    const out = {};
    for (const k of Object.keys(v)) out[k] = decode(v[k]);
    return out;
  }
  return v;
}

function putBuffers(obj, paths, buffers) {
  (paths || []).forEach((path, i) => {
    let o = obj;
    for (const key of path.slice(0, -1)) o = o[key];
    o[path[path.length - 1]] = buffers[i];
  });
  return obj;
}

function shared() {  // one plotly.js per page, shared by every figure
  const g = globalThis;
  if (!g.__rgraspPlotlyShared) {
    const sh = {started: false, requested: false};
    sh.promise = new Promise((resolve, reject) => { sh.resolve = resolve; sh.reject = reject; });
    g.__rgraspPlotlyShared = sh;
    g.__rgraspPlotly = sh.promise;
  }
  return g.__rgraspPlotlyShared;
}

function loadSource(source) {
  const sh = shared();
  if (sh.started) return;
  sh.started = true;
  const g = globalThis;
  const before = g.Plotly;
  const url = URL.createObjectURL(new Blob([source], {type: "text/javascript"}));
  const script = document.createElement("script");
  script.src = url;
  script.onload = () => {
    const P = g.Plotly;
    if (before) g.Plotly = before;  // leave another library's Plotly in place
    URL.revokeObjectURL(url);
    sh.resolve(P);
  };
  script.onerror = () => sh.reject(new Error("rgrasp_viz: plotly.js did not load"));
  document.head.appendChild(script);
}

function plotlyFor(model) {
  const sh = shared();
  const g = globalThis;
  if (!sh.started && g.Plotly && g.Plotly.react &&
      g.Plotly.version === model.get("_rg_plotly_version")) {
    sh.started = true;
    sh.resolve(g.Plotly);
  }
  const source = model.get("_rg_plotly_src");
  if (source) {
    loadSource(source);  // the first figure of a kernel carries plotly.js
  } else if (!sh.started && !sh.requested) {
    sh.requested = true;  // otherwise ask the kernel for it, once
    const onMsg = (msg) => {
      if (!msg || msg.kind !== "rgrasp-plotly") return;
      model.off("msg:custom", onMsg);
      loadSource(msg.source);
    };
    model.on("msg:custom", onMsg);
    model.send({kind: "rgrasp-plotly-request"});
  }
  return sh.promise;
}

const CONFIG = {displaylogo: false, responsive: true};
const CHUNK = 40;  // frames per request
const AHEAD = 60;  // keep this many frames ahead of the one shown
const KEEP = 400;  // frames kept in the page at most

async function driverModel(model, host) {  // the widget whose value picks the frame
  const ref = model.get("_rg_driver");
  if (!ref) return null;
  if (host && host.getModel) return host.getModel(ref);
  return model.widget_manager.get_model(ref.slice(ref.indexOf(":") + 1));
}

async function render({ model, el, host }) {
  el.classList.add("rgrasp-figure");
  el.style.width = "100%";

  const fig = {data: decode(model.get("_widget_data")) || [],
               layout: decode(model.get("_widget_layout")) || {}, seq: -1, frame: -1};
  let version = 0;
  let drawnVersion = -1;
  let drawing = false;
  let lastDrawMs = 0;  // how long the last Plotly.react took
  const marked = (ms) => {  // what the page drew, for tests and benchmarks
    el.dataset.rgraspDrawMs = ms.toFixed(1);
    el.dataset.rgraspFrame = String(fig.frame);
    el.dataset.rgraspDraws = String(Number(el.dataset.rgraspDraws || 0) + 1);
  };
  let alive = true;
  let resizeWanted = false;  // the cell's width changed: resize once the drawing is done
  const plotlyReady = plotlyFor(model);
  // draw the latest state; changes that arrive meanwhile are drawn once, afterwards.  A
  // resize runs in the same loop, never during a Plotly.react: measured mid-draw, the
  // figure's box can be momentarily collapsed, and a resize read then kept a figure at
  // height 0 (compare's coefficient panels, once, after the first play)
  const draw = async () => {
    if (drawing) return;
    drawing = true;
    try {
      const Plotly = await plotlyReady;
      while (alive && (drawnVersion !== version || resizeWanted)) {
        if (drawnVersion !== version) {
          const v = version;
          const t0 = performance.now();
          await Plotly.react(el, fig.data.slice(), fig.layout, CONFIG);
          lastDrawMs = performance.now() - t0;
          drawnVersion = v;
          el.dataset.rgraspSeq = String(fig.seq);
          marked(lastDrawMs);
        } else {
          resizeWanted = false;
          if (el._fullLayout && el.clientWidth) await Plotly.Plots.resize(el);
        }
        if (el._fullLayout) el.dataset.rgraspHeight = String(el._fullLayout.height);
      }
    } catch (e) {
      console.error(e);
    } finally {
      drawing = false;
    }
  };
  const changed = () => { version += 1; draw(); };
  // a replay redraws a figure whose data changed at most every 4 draw times (50-100 ms), so
  // that several figures playing together leave the page time for the cheap frames (cursor
  // lines) and for input; the latest frame is always drawn (trailing timer)
  let lastFrameDraw = -Infinity;
  let trailing = null;
  const frameChanged = () => {
    const gap = Math.min(100, Math.max(50, 4 * lastDrawMs));
    const wait = lastFrameDraw + gap - performance.now();
    if (wait <= 0) {
      lastFrameDraw = performance.now();
      changed();
    } else if (trailing === null) {
      trailing = setTimeout(() => {
        trailing = null;
        lastFrameDraw = performance.now();
        changed();
      }, wait);
    }
  };
  // a frame that changes only the layout (a replay's cursor line): Plotly.relayout redraws
  // what changed, where Plotly.react would redraw the whole figure (about 40x slower here)
  const relayoutOnly = (patch) => {
    if (drawing || resizeWanted || drawnVersion !== version || !el._fullLayout) return false;
    version += 1;
    const v = version;
    drawing = true;
    const t0 = performance.now();
    plotlyReady
      .then((Plotly) => Plotly.relayout(el, structuredClone(patch)))
      .then(() => {
        drawnVersion = v;
        marked(performance.now() - t0);
      })
      .catch((e) => console.error(e))
      .finally(() => { drawing = false; if (alive && drawnVersion !== version) draw(); });
    return true;
  };

  // -- frames of a replay, held by the page -----------------------------------------------
  const frames = new Map();
  let shown = null;  // the frame patch drawn last
  let framesKey = model.get("_rg_frames_key");
  let pending = null;  // first index of the chunk requested, if any
  let driver = null;  // e.g. the slider of a player: its value is the frame to show
  const wanted = () => (driver ? driver.get("value") : -1);
  const applyFrame = (i) => {
    const p = frames.get(i);
    if (!p) return false;
    if (p === shown && drawnVersion === version) {  // the same frame again: nothing to draw
      fig.frame = i;
      el.dataset.rgraspFrame = String(i);
      return true;
    }
    shown = p;
    const traces = Object.entries(p.data || {});
    for (const [k, t] of traces) fig.data[Number(k)] = t;
    if (p.layout) fig.layout = Object.assign({}, fig.layout, p.layout);
    fig.frame = i;
    if (!(traces.length === 0 && p.layout && relayoutOnly(p.layout))) frameChanged();
    return true;
  };
  const request = (start) => {
    const n = model.get("_rg_frames_count");
    if (pending !== null || start < 0 || start >= n) return;
    pending = start;
    model.send({kind: "rgrasp-frames-request", key: framesKey, start,
                stop: Math.min(n, start + CHUNK)});
  };
  const prefetch = (i) => {
    const n = model.get("_rg_frames_count");
    for (let j = Math.max(i, 0); j < Math.min(n, i + AHEAD); j++) {
      if (!frames.has(j)) { request(j); return; }
    }
  };
  const onFrame = () => {
    const i = wanted();
    if (i < 0 || model.get("_rg_frames_count") <= 0) return;
    if (fig.frame !== i && !applyFrame(i)) {
      if (pending !== null && !(i >= pending && i < pending + CHUNK)) pending = null;
      request(i);
      return;
    }
    prefetch(i + 1);
  };
  const onFramesKey = async () => {
    frames.clear();
    shown = null;
    framesKey = model.get("_rg_frames_key");
    pending = null;
    fig.frame = -1;
    if (driver) driver.off("change:value", onFrame);
    driver = null;
    try {
      driver = await driverModel(model, host);
    } catch (e) {
      console.error(e);
    }
    if (!driver || !alive) return;
    driver.on("change:value", onFrame);
    prefetch(Math.max(wanted(), 0));
  };
  const onFrames = (msg, buffers) => {
    if (msg.key !== framesKey) return;
    const got = decode(putBuffers(msg.frames, msg.buffer_paths, buffers));
    let prev = null;  // {same: true}: the frame before it, the same object
    got.forEach((p, k) => {
      const q = p && p.same ? prev : p;
      frames.set(msg.start + k, q);
      prev = q;
    });
    if (frames.size > KEEP) {  // forget the frames farthest from the one shown
      const i = wanted();
      const far = [...frames.keys()].sort((a, b) => Math.abs(b - i) - Math.abs(a - i));
      far.slice(0, frames.size - KEEP).forEach((k) => frames.delete(k));
    }
    pending = null;
    onFrame();
  };

  const onMsg = (msg, buffers) => {
    if (!msg) return;
    if (msg.kind === "rgrasp-frames") { onFrames(msg, buffers); return; }
    if (msg.kind !== "rgrasp-figure") return;
    const part = decode(putBuffers(msg.figure, msg.buffer_paths, buffers));
    shown = null;
    if (msg.full) {
      fig.data = part.data;
      fig.layout = part.layout;
      fig.frame = msg.frame;
    } else if (msg.seq === fig.seq + 1 && fig.seq >= 0) {
      for (const [i, t] of Object.entries(part.traces || {})) fig.data[Number(i)] = t;
      if (part.layout) fig.layout = part.layout;
      fig.data.length = msg.n_traces;
    } else {
      if (msg.seq > fig.seq) model.send({kind: "rgrasp-sync"});  // missed one: ask again
      return;
    }
    fig.seq = msg.seq;
    changed();
  };
  model.on("msg:custom", onMsg);
  model.on("change:_rg_frames_key", onFramesKey);
  changed();  // the state the widget was created with, until the kernel answers
  model.send({kind: "rgrasp-sync"});
  if (model.get("_rg_frames_count") > 0) onFramesKey();

  // follow the width of the cell: drawn before it was laid out, plotly.js falls back to 700 px.
  // Only a new width resizes (a height change is the figure's own drawing), and the resize
  // waits for the draw loop (see draw)
  let lastWidth = 0;
  let queued = false;
  const observer = new ResizeObserver(() => {
    const w = el.clientWidth;
    if (!w || w === lastWidth || queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      const now = el.clientWidth;
      if (!alive || !now || now === lastWidth) return;
      lastWidth = now;
      resizeWanted = true;
      draw();
    });
  });
  observer.observe(el);
  return () => {
    alive = false;
    if (trailing !== null) clearTimeout(trailing);
    observer.disconnect();
    model.off("msg:custom", onMsg);
    model.off("change:_rg_frames_key", onFramesKey);
    if (driver) driver.off("change:value", onFrame);
    plotlyReady.then((Plotly) => Plotly.purge(el)).catch(() => {});
  };
}

export default { render };
"""


def _same_patch(a, b):
    """Whether two frame patches draw the same thing: the same trace objects (frames between
    two recorded moments share them) and equal layout entries."""
    return (a["data"].keys() == b["data"].keys()
            and all(a["data"][k] is b["data"][k] for k in a["data"])
            and a["layout"] == b["layout"])


class LiveFigure(go.FigureWidget):
    """A ``FigureWidget`` whose browser view is always a fresh render of its Python state.

    Changes made in Python (``update_figure``, ``batch_update``, property assignments, ...)
    reach the page as whole traces and layout, drawn with ``Plotly.react``; see the module
    notes for why.  Inside :meth:`hold`, changes are collected and sent once.  A replay's
    frames are drawn by the page itself (:meth:`set_frames`).

    The page marks each figure with the last change it drew (:attr:`seq`) in its
    ``data-rgrasp-seq`` attribute, the frame shown in ``data-rgrasp-frame`` and the number
    of draws in ``data-rgrasp-draws``.
    """

    _esm = _ESM
    _rg_plotly_version = traitlets.Unicode("").tag(sync=True)
    _rg_plotly_src = traitlets.Unicode("").tag(sync=True)
    _rg_driver = traitlets.Unicode("").tag(sync=True)
    _rg_frames_key = traitlets.Int(0).tag(sync=True)
    _rg_frames_count = traitlets.Int(0).tag(sync=True)

    def __init__(self, *args, **kwargs):
        self._rg_seq = 0
        self._held = 0
        self._silent = 0
        self._pending = None
        self._frame_make = None
        self._frame = -1
        self._driver = None
        self._frame_cache = collections.OrderedDict()
        super().__init__(*args, **kwargs)
        self._rg_plotly_version = _plotly_js_version()
        if not _SOURCE_SENT:  # the first figure of the kernel carries plotly.js
            _SOURCE_SENT.append(True)
            self._rg_plotly_src = _plotly_js()
        self.on_msg(self._on_custom_msg)

    @property
    def seq(self):
        """int: changes sent so far."""
        return self._rg_seq

    # -- what changed -----------------------------------------------------------------------
    @contextlib.contextmanager
    def hold(self):
        """Collect the changes made inside the ``with`` block and send them as one."""
        self._held += 1
        try:
            yield self
        finally:
            self._held -= 1
            if not self._held and self._pending is not None:
                pending, self._pending = self._pending, None
                self._send_changes(**pending)

    @contextlib.contextmanager
    def _silenced(self):
        """Changes made inside change the Python figure only (the page made them itself)."""
        self._silent += 1
        try:
            yield self
        finally:
            self._silent -= 1

    def _changed(self, traces=(), layout=False, full=False):
        if self._silent:
            return
        if self._held:
            p = self._pending or {"traces": set(), "layout": False, "full": False}
            p["traces"] |= set(traces)
            p["layout"] |= bool(layout)
            p["full"] |= bool(full)
            self._pending = p
        else:
            self._send_changes(set(traces), bool(layout), bool(full))

    # plotly.py calls these after changing its Python state; each becomes one message
    def _send_update_msg(self, restyle_data, relayout_data, trace_indexes=None,
                         source_view_id=None):
        traces = self._normalize_trace_indexes(trace_indexes) if restyle_data else ()
        self._changed(traces=traces, layout=bool(relayout_data))

    def _send_restyle_msg(self, restyle_data, trace_indexes=None, source_view_id=None):
        self._changed(traces=self._normalize_trace_indexes(trace_indexes))

    def _send_relayout_msg(self, layout_data, source_view_id=None):
        self._changed(layout=True)

    def _send_addTraces_msg(self, new_traces_data):  # noqa: N802 - plotly's name
        self._changed(full=True)

    def _send_deleteTraces_msg(self, delete_inds):  # noqa: N802 - plotly's name
        self._changed(full=True)

    def _send_moveTraces_msg(self, current_inds, new_inds):  # noqa: N802 - plotly's name
        self._changed(full=True)

    def _send_removeLayoutProps_msg(self, remove_props):  # noqa: N802 - plotly's name
        self._changed(layout=True)

    def _send_removeTraceProps_msg(self, trace_index, remove_props):  # noqa: N802
        self._changed(traces=(trace_index,))

    def _send_animate_msg(self, styles_data, relayout_data, trace_indexes, animation_opts):
        self._changed(full=True)

    # -- frames of a replay --------------------------------------------------------------------
    def set_frames(self, count, make, driver):
        """Give the figure ``count`` frames; ``driver.value`` picks the one shown.

        The page fetches the frames in chunks ahead of the one shown and draws frame ``i`` as
        soon as ``driver.value`` becomes ``i`` there (a slider linked to a Play widget in the
        page: no round trip through the kernel); Python applies the same frame to this figure
        without sending it, whoever changed ``driver.value``.

        Parameters
        ----------
        count : int
        make : callable
            ``make(i) -> {"data": {trace index: trace dict}, "layout": {key: value}}``: the
            traces and top-level layout entries frame ``i`` replaces (whole), from a figure
            builder's spec.  Called once per frame (cached).
        driver : ipywidgets.Widget
            A widget with an integer ``value`` (e.g. an ``IntSlider``).  The figure shows
            frame ``driver.value`` from now on.
        """
        if driver is not self._driver:  # the same driver keeps its place among observers
            if self._driver is not None:
                self._driver.unobserve(self._on_driver, names="value")
            driver.observe(self._on_driver, names="value")
        self._frame_make = make
        self._frame_cache.clear()
        self._driver = driver
        with self.hold_sync():
            self._rg_frames_key += 1
            self._rg_frames_count = int(count)
            self._rg_driver = f"anywidget:{driver.model_id}"
        self._apply_frame(int(driver.value))

    @property
    def frame(self):
        """int: the frame shown (-1: none)."""
        return self._frame

    def _on_driver(self, change):
        self._apply_frame(int(change["new"]))

    def frame_patch(self, i):
        """The patch of frame ``i`` (see :meth:`set_frames`)."""
        patch = self._frame_cache.get(i)
        if patch is None:
            patch = self._frame_make(i)
            patch = {"data": {int(k): v for k, v in (patch.get("data") or {}).items()},
                     "layout": dict(patch.get("layout") or {})}
            self._frame_cache[i] = patch
            while len(self._frame_cache) > 512:
                self._frame_cache.popitem(last=False)
        else:
            self._frame_cache.move_to_end(i)
        return patch

    def _apply_frame(self, i):
        if self._frame_make is None or not 0 <= i < self._rg_frames_count:
            return
        self._frame = i
        patch = self.frame_patch(i)
        traces, layout = patch["data"], patch["layout"]
        idx = sorted(traces)
        restyle = {}
        for n, i_tr in enumerate(idx):
            new = traces[i_tr]
            old = self._data[i_tr]
            for key in set(new) | set(old):
                if key in ("type", "uid"):
                    continue
                restyle.setdefault(key, [_UNDEFINED] * len(idx))[n] = new.get(key)
        with self._silenced():  # the page draws this frame from its own copy
            self.plotly_update(restyle_data=restyle, relayout_data=layout,
                               trace_indexes=idx)

    # -- to the page -------------------------------------------------------------------------
    def _send_changes(self, traces, layout, full):
        if not full and not traces and not layout:
            return
        self._rg_seq += 1
        if full:
            self._send_figure(full=True)
            return
        part = {"traces": {str(i): self._data[i] for i in sorted(traces)
                           if 0 <= i < len(self._data)}}
        if layout:
            part["layout"] = self._layout
        self._send_figure(full=False, part=part)

    def _send_figure(self, full, part=None):
        if self.comm is None:  # closed
            return
        figure = {"data": self._data, "layout": self._layout} if full else part
        state, paths, buffers = _remove_buffers({"figure": _py_to_js(figure, None)})
        self.send({"kind": "rgrasp-figure", "full": full, "seq": self._rg_seq,
                   "frame": self._frame, "n_traces": len(self._data),
                   "figure": state["figure"], "buffer_paths": [p[1:] for p in paths]},
                  buffers=buffers)

    def _send_frames(self, key, start, stop):
        if self.comm is None or key != self._rg_frames_key or self._frame_make is None:
            return
        start = max(int(start), 0)
        stop = min(int(stop), self._rg_frames_count)
        frames, prev = [], None
        for i in range(start, stop):
            patch = self.frame_patch(i)
            if prev is not None and _same_patch(patch, prev):
                frames.append({"same": True})  # the page reuses (and need not redraw) it
            else:
                frames.append({"data": {str(k): v for k, v in patch["data"].items()},
                               "layout": patch["layout"]})
            prev = patch
        state, paths, buffers = _remove_buffers({"frames": _py_to_js(frames, None)})
        self.send({"kind": "rgrasp-frames", "key": key, "start": start,
                   "frames": state["frames"], "buffer_paths": [p[1:] for p in paths]},
                  buffers=buffers)

    def _on_custom_msg(self, _widget, content, _buffers):
        kind = content.get("kind") if isinstance(content, dict) else None
        if kind == "rgrasp-sync":
            self._send_figure(full=True)
        elif kind == "rgrasp-frames-request":
            self._send_frames(content.get("key"), content.get("start", 0),
                              content.get("stop", 0))
        elif kind == "rgrasp-plotly-request":
            self.send({"kind": "rgrasp-plotly", "source": _plotly_js()})
