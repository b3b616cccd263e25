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
without that figure asks the kernel for it.
"""

from __future__ import annotations

import contextlib
import functools
from pathlib import Path

import plotly
import plotly.graph_objects as go
import traitlets
from ipywidgets.widgets.widget import _remove_buffers
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

async function render({ model, el }) {
  el.classList.add("rgrasp-figure");
  const fig = {data: decode(model.get("_widget_data")) || [],
               layout: decode(model.get("_widget_layout")) || {}, seq: -1};
  let drawn = null;
  let chain = Promise.resolve();
  const plotlyReady = plotlyFor(model);
  const draw = async () => {
    const Plotly = await plotlyReady;
    const key = fig.seq;
    if (drawn === key && key >= 0) return;
    drawn = key;
    await Plotly.react(el, fig.data.slice(), fig.layout,
                       {displaylogo: false, responsive: true});
    el.dataset.rgraspSeq = String(key);
  };
  const schedule = () => { chain = chain.then(draw).catch((e) => console.error(e)); };
  const onMsg = (msg, buffers) => {
    if (!msg || msg.kind !== "rgrasp-figure") return;
    const part = decode(putBuffers(msg.figure, msg.buffer_paths, buffers));
    if (msg.full) {
      fig.data = part.data;
      fig.layout = part.layout;
    } else if (msg.seq === fig.seq + 1 && fig.seq >= 0) {
      for (const [i, t] of Object.entries(part.traces || {})) fig.data[Number(i)] = t;
      if (part.layout) fig.layout = part.layout;
      fig.data.length = msg.n_traces;
    } else {
      if (msg.seq > fig.seq) model.send({kind: "rgrasp-sync"});  // missed one: ask again
      return;
    }
    fig.seq = msg.seq;
    schedule();
  };
  model.on("msg:custom", onMsg);
  schedule();  // the state the widget was created with, until the kernel answers
  model.send({kind: "rgrasp-sync"});
  return () => {
    model.off("msg:custom", onMsg);
    plotlyReady.then((Plotly) => Plotly.purge(el)).catch(() => {});
  };
}

export default { render };
"""


class LiveFigure(go.FigureWidget):
    """A ``FigureWidget`` whose browser view is always a fresh render of its Python state.

    Changes made in Python (``update_figure``, ``batch_update``, property assignments, ...)
    reach the page as whole traces and layout, drawn with ``Plotly.react``; see the module
    notes for why.  Inside :meth:`hold`, changes are collected and sent once.

    The page marks each figure with the last change it drew (:attr:`seq`) in its
    ``data-rgrasp-seq`` attribute.
    """

    _esm = _ESM
    _rg_plotly_version = traitlets.Unicode("").tag(sync=True)
    _rg_plotly_src = traitlets.Unicode("").tag(sync=True)

    def __init__(self, *args, **kwargs):
        self._rg_seq = 0
        self._held = 0
        self._pending = None
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

    def _changed(self, traces=(), layout=False, full=False):
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
                   "n_traces": len(self._data), "figure": state["figure"],
                   "buffer_paths": [p[1:] for p in paths]}, buffers=buffers)

    def _on_custom_msg(self, _widget, content, _buffers):
        kind = content.get("kind") if isinstance(content, dict) else None
        if kind == "rgrasp-sync":
            self._send_figure(full=True)
        elif kind == "rgrasp-plotly-request":
            self.send({"kind": "rgrasp-plotly", "source": _plotly_js()})
