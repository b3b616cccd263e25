// The page side of rgrasp_viz's figure widget (rgrasp_viz/viz/dashboards/_figure.py).
//
// A figure is drawn with plotly.js's public API only: Plotly.react for a whole figure sent by
// the kernel, Plotly.update (restyle + relayout in one call) for the frames of a replay, which
// the page holds in binary buffers and steps itself, and Plotly.Plots.resize when the width of
// the cell changes.  plotly.js is the copy plotly.py ships, fetched from the kernel once per
// page and shared by every figure.

const CONFIG = {displaylogo: false, responsive: false};
const EVENT = "rgrasp-replay";

// -- one plotly.js per page ----------------------------------------------------------------

function shared() {
  const g = globalThis;
  if (!g.__rgraspPlotlyShared) {
    const sh = {started: false, requested: false};
    sh.promise = new Promise((resolve, reject) => {
      sh.resolve = resolve;
      sh.reject = reject;
    });
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
    if (before) g.Plotly = before; // leave another library's Plotly in place
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
      g.Plotly.version === model.get("_plotly_version")) {
    sh.started = true; // the page has this very plotly.js already
    sh.resolve(g.Plotly);
  }
  if (!sh.started && !sh.requested) {
    sh.requested = true; // ask the kernel, once per page
    const onMsg = (msg, buffers) => {
      if (!msg || msg.kind !== "plotly-js") return;
      model.off("msg:custom", onMsg);
      const b = buffers[0];
      const bytes = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
      loadSource(new TextDecoder().decode(bytes));
    };
    model.on("msg:custom", onMsg);
    model.send({kind: "plotly-js-request"});
  }
  return sh.promise;
}

// -- frames of a replay ----------------------------------------------------------------------

function typed(view, T) { // a DataView from the kernel -> an aligned typed array (a copy)
  if (!view) return new T(0);
  const buf = view.buffer.slice(view.byteOffset, view.byteOffset + view.byteLength);
  return new T(buf);
}

function decodeFrames(f) {
  if (!f || !f.n) return null;
  return {
    key: f.key,
    n: f.n,
    index: typed(f.index, Int32Array),
    traces: f.traces,
    arrays: (f.arrays || []).map((a) => ({
      trace: a.trace, path: a.path,
      values: typed(a.values, {i4: Int32Array, f4: Float32Array, f8: Float64Array}[a.dtype]),
      offsets: typed(a.offsets, Int32Array),
    })),
    extra: JSON.parse(f.json || "[]"),
  };
}

// The restyle/relayout of one state of the replay: only the traces and keys that change.
function stateUpdate(fr, s) {
  const idx = fr.traces;
  const slot = new Map(idx.map((t, k) => [t, k]));
  const restyle = {};
  const put = (trace, path, value) => {
    if (!restyle[path]) restyle[path] = idx.map(() => undefined);
    restyle[path][slot.get(trace)] = value;
  };
  for (const a of fr.arrays) {
    put(a.trace, a.path, a.values.subarray(a.offsets[s], a.offsets[s + 1]));
  }
  const extra = fr.extra[s] || {};
  for (const [t, keys] of Object.entries(extra.data || {})) {
    for (const [path, value] of Object.entries(keys)) put(Number(t), path, value);
  }
  return {restyle, relayout: Object.assign({}, extra.layout || {}), traces: idx};
}

const nextPaint = () => new Promise((r) => requestAnimationFrame(() => r()));

// -- the view ----------------------------------------------------------------------------------

async function render({model, el}) {
  el.classList.add("rgrasp-figure");
  el.style.width = "100%";
  const caption = document.createElement("div");
  caption.className = "rgrasp-figure-caption";
  const gd = document.createElement("div");
  gd.className = "rgrasp-figure-plot";
  gd.style.width = "100%";
  el.appendChild(caption);
  el.appendChild(gd);

  let alive = true;
  let figure = null; // the whole figure last sent by the kernel (JSON)
  let frames = null; // the replay's frames, decoded
  let reactWanted = true;
  let resizeWanted = false;
  let wanted = model.get("_frame"); // replay position to show (-1: none)
  let shownState = -1; // frame state drawn on top of `figure` (-1: none)
  let drawing = false;
  let lastWidth = 0;

  const loadFigure = () => {
    figure = JSON.parse(model.get("_figure") || '{"data": [], "layout": {}}');
    const h = (figure.layout || {}).height;
    // the figure's box keeps its height whatever happens to plotly's own drawing
    gd.style.minHeight = (h ? h : 450) + "px";
    reactWanted = true;
  };
  const loadFrames = () => {
    frames = decodeFrames(model.get("_frames"));
    shownState = -1;
    reactWanted = true; // back to the base figure, then the wanted frame on top
  };
  const setCaption = () => {
    // HTML written by the kernel (user text escaped there), like an ipywidgets HTML widget
    caption.innerHTML = model.get("caption") || "";
    caption.style.display = model.get("caption") ? "" : "none";
  };
  const mark = () => {
    gd.dataset.rgraspFrame = String(wanted);
    gd.dataset.rgraspDraws = String(Number(gd.dataset.rgraspDraws || 0) + 1);
    if (gd._fullLayout) gd.dataset.rgraspHeight = String(gd._fullLayout.height);
  };

  const plotlyReady = plotlyFor(model);
  // one loop draws everything, at most once per animation frame: a whole figure (react), a
  // resize, then the latest replay position asked for (positions asked for meanwhile are
  // skipped: the page shows where the replay is, never a backlog)
  const pump = async () => {
    if (drawing) return;
    drawing = true;
    try {
      const Plotly = await plotlyReady;
      while (alive) {
        if (reactWanted) {
          reactWanted = false;
          setCaption();
          await Plotly.react(gd, figure.data, figure.layout, CONFIG);
          shownState = -1;
          mark();
          continue;
        }
        if (resizeWanted) {
          resizeWanted = false;
          if (gd._fullLayout && gd.clientWidth > 0) await Plotly.Plots.resize(gd);
          continue;
        }
        const ok = frames && wanted >= 0 && wanted < frames.n;
        const s = ok ? frames.index[wanted] : -1;
        if (s < 0 || s === shownState) {
          if (ok && gd.dataset.rgraspFrame !== String(wanted)) gd.dataset.rgraspFrame = String(wanted);
          break;
        }
        const up = stateUpdate(frames, s);
        await Plotly.update(gd, up.restyle, up.relayout, up.traces);
        shownState = s;
        mark();
        await nextPaint();
      }
    } catch (e) {
      console.error(e);
    } finally {
      drawing = false;
    }
  };

  const onReplay = (ev) => {
    const d = ev.detail || {};
    if (!d.key || d.key !== model.get("_replay")) return;
    wanted = d.index;
    pump();
  };
  const onFigure = () => { loadFigure(); pump(); };
  const onFrames = () => { loadFrames(); pump(); };
  const onFrame = () => { wanted = model.get("_frame"); pump(); };
  const onCaption = () => {
    // a caption sent with a figure (one message) is drawn with it, by the loop; alone, at
    // once.  The microtask runs after every change event of the message has fired
    queueMicrotask(() => { if (!reactWanted) setCaption(); });
  };
  model.on("change:_figure", onFigure);
  model.on("change:_frames", onFrames);
  model.on("change:_frame", onFrame);
  model.on("change:caption", onCaption);
  globalThis.addEventListener(EVENT, onReplay);

  loadFigure();
  frames = decodeFrames(model.get("_frames"));
  const replays = globalThis.__rgraspReplays || {};
  if (model.get("_replay") in replays) wanted = replays[model.get("_replay")];
  setCaption();

  // follow the width of the cell: drawn before it was laid out, plotly.js falls back to
  // 700 px.  Only a new, non-zero width resizes, in the draw loop (never during a draw)
  const observer = new ResizeObserver(() => {
    const w = gd.clientWidth;
    if (!w || w === lastWidth) return;
    lastWidth = w;
    resizeWanted = true;
    pump();
  });
  observer.observe(gd);
  pump();

  return () => {
    alive = false;
    observer.disconnect();
    globalThis.removeEventListener(EVENT, onReplay);
    model.off("change:_figure", onFigure);
    model.off("change:_frames", onFrames);
    model.off("change:_frame", onFrame);
    model.off("change:caption", onCaption);
    plotlyReady.then((Plotly) => Plotly.purge(gd)).catch(() => {});
  };
}

export default {render};
