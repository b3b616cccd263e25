// The page side of rgrasp_viz's figure widget (rgrasp_viz/viz/dashboards/_figure.py).
//
// A figure is drawn with plotly.js's public API only: Plotly.react for a whole figure sent by
// the kernel; for the frames of a replay, which the page holds in binary buffers and steps
// itself, Plotly.animate (points moved in place) and Plotly.relayout, or Plotly.update; and
// Plotly.Plots.resize when the width of the cell changes.  On a figure whose plot area is
// fixed, a replay's cursor, and the scatter traces a replay changes while it moves, are drawn
// by the page over the figure (marks.js: pageCursors, drawMarks).  plotly.js is the copy
// plotly.py ships, fetched from the kernel once per page and shared by every figure.

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

// What one state of the replay changes, per trace: {trace index: {dotted path: value}}, and
// the layout's {dotted path: value}.  Only the traces and keys that change are listed.
function stateChanges(fr, s) {
  const data = new Map();
  const put = (trace, path, value) => {
    if (!data.has(trace)) data.set(trace, {});
    data.get(trace)[path] = value;
  };
  for (const a of fr.arrays) {
    // handed to plotly.js as a plain Array: Plotly.animate expands the dotted keys of a frame
    // by walking every object that is not an Array, a typed array's elements one by one
    put(a.trace, a.path, Array.from(a.values.subarray(a.offsets[s], a.offsets[s + 1])));
  }
  const extra = fr.extra[s] || {};
  for (const [t, keys] of Object.entries(extra.data || {})) {
    for (const [path, value] of Object.entries(keys)) put(Number(t), path, value);
  }
  return {data, layout: Object.assign({}, extra.layout || {})};
}

// Whether a value of a frame equals the one shown before: arrays element by element (NaN never
// equals: such a value is drawn again), anything else by identity.
function sameValue(a, b) {
  if (a === b) return true;
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// Drop from a state's changes the trace values that equal what the figure shows already
// (`shown`: "trace|path" -> value, kept up to date here): a trace whose values all stay is
// then neither recomputed nor redrawn by plotly.js.
function unchangedDropped(ch, shown) {
  for (const [t, keys] of [...ch.data.entries()]) {
    for (const [path, value] of Object.entries(keys)) {
      const k = t + "|" + path;
      if (shown.has(k) && sameValue(shown.get(k), value)) delete keys[path];
      else shown.set(k, value);
    }
    if (!Object.keys(keys).length) ch.data.delete(t);
  }
  return ch;
}

// `base` (a trace) with the values of `flat` ({dotted path: value}) set, in a copy of each
// object on their paths (`base` is not changed).
function withValues(base, flat) {
  const out = Object.assign({}, base);
  for (const [path, value] of Object.entries(flat)) {
    const keys = path.split(".");
    let o = out;
    for (const k of keys.slice(0, -1)) o = (o[k] = Object.assign({}, o[k]));
    o[keys[keys.length - 1]] = value;
  }
  return out;
}

const nest = (flat) => withValues({}, flat); // {"marker.symbol": v} -> {marker: {symbol: v}}

// Trace types whose points plotly.js moves in place (Plotly.animate without a redraw); any
// other change of a frame is drawn by a full Plotly.update.
const MOVABLE = new Set(["scatter", "bar"]);
// Layout keys of a frame that are not drawn (read by hover and text templates only).
const QUIET = /^meta(\.|$)/;
// Layout keys whose change must go through Plotly.update (axes: the point-moving path keeps
// the axes as they are).
const AXES = /^[xy]axis[0-9]*(\.|$)/;
// Layout keys of a frame that are text (a title): while a replay plays they are redrawn at most
// every TEXT_MS (a number changing faster cannot be read); where it rests, at once.
const TEXT = /^title(\.|$)/;
const TEXT_MS = 500;
// Whether the axes of a trace hold still (a range of their own): points moved in place keep
// the axes as they are, so a trace on an autoranged axis is drawn by Plotly.update, which
// ranges it again as a fresh drawing would.
function heldAxes(gd, trace) {
  return [["xaxis", trace.xaxis], ["yaxis", trace.yaxis]].every(([name, ref]) => {
    const ax = (gd.layout || {})[ref ? name + ref.slice(1) : name];
    return !!ax && Array.isArray(ax.range) && ax.autorange !== true;
  });
}

const IMMEDIATE = {transition: {duration: 0}, frame: {duration: 0, redraw: false},
  mode: "immediate"};

// Draw one state of the replay on top of the figure, as cheaply as plotly.js's public API
// allows: the points of scatter and bar traces moved in place (Plotly.animate, no redraw),
// the drawn layout keys that change (a title, the cursor's shapes) by Plotly.relayout, the
// quiet ones (meta) stored without drawing; Plotly.update for anything else.  The text keys
// (TEXT) are drawn only when `textNow` says it is time and a relayout or update is drawn
// anyway (one call, not two); else they are returned, for the caller to draw when it is
// time.  Returns {waited: whether plotly.js waited for an animation frame itself
// (Plotly.animate draws in the next one), text: the text keys not drawn, textDrawn: whether
// this state's text was drawn}.  `changes`: the state's changes (stateChanges).  `shown` holds
// the trace values of the states drawn since the figure was (see unchangedDropped).
// `cursors`, where the page draws the figure's cursors (see pageCursors): a function given
// the state's cursor shapes, which are then not handed to plotly.js (the other shapes are,
// when they change).
async function drawState(Plotly, gd, changes, textNow, shown, cursors) {
  const ch = unchangedDropped(changes, shown);
  if (cursors && "shapes" in ch.layout) {
    const split = splitShapes(ch.layout.shapes);
    cursors(split.cursors);
    if (JSON.stringify(split.others) === JSON.stringify(gd.layout.shapes || [])) {
      delete ch.layout.shapes;
    } else {
      ch.layout.shapes = split.others;
    }
  }
  const traces = [...ch.data.keys()].sort((a, b) => a - b);
  const drawn = {};
  const quiet = {};
  const text = {};
  for (const [k, v] of Object.entries(ch.layout)) {
    (QUIET.test(k) ? quiet : TEXT.test(k) ? text : drawn)[k] = v;
  }
  const movable = traces.every((t) => MOVABLE.has((gd.data[t] || {}).type || "scatter") &&
    heldAxes(gd, gd.data[t])) && !Object.keys(drawn).some((k) => AXES.test(k));
  if (!movable) {
    const restyle = {};
    traces.forEach((t, k) => {
      for (const [path, value] of Object.entries(ch.data.get(t))) {
        if (!restyle[path]) restyle[path] = traces.map(() => undefined);
        restyle[path][k] = value;
      }
    });
    await Plotly.update(gd, restyle, ch.layout, traces);
    return {waited: false, text: {}, textDrawn: Object.keys(text).length > 0};
  }
  if (traces.length) {
    await Plotly.animate(gd, {data: traces.map((t) => nest(ch.data.get(t))), traces},
      IMMEDIATE);
  }
  if (Object.keys(quiet).length) {
    const q = nest(quiet);
    gd.layout.meta = Object.assign({}, gd.layout.meta, q.meta);
  }
  const withText = textNow && Object.keys(drawn).length > 0 && Object.keys(text).length > 0;
  if (Object.keys(drawn).length) {
    await Plotly.relayout(gd, withText ? Object.assign(drawn, text) : drawn);
  }
  return {waited: traces.length > 0, text: withText ? {} : text, textDrawn: withText};
}

const nextPaint = () => new Promise((r) => requestAnimationFrame(() => r()));

// After the page has painted (the task after an animation frame's), or after 100 ms where it
// does not paint (a hidden tab).
const afterPaint = () => new Promise((resolve) => {
  let done = false;
  const go = () => {
    if (!done) {
      done = true;
      resolve();
    }
  };
  requestAnimationFrame(() => setTimeout(go, 0));
  setTimeout(go, 100);
});

// Run `draw` (a whole figure's drawing) once the previous one, of any figure of the page, has
// been painted.  A kernel's change often redraws several figures (a slider of rv.explore:
// three), each Plotly.react tens of ms of the page's one thread: drawn back to back, the first
// would reach the screen only once the last was computed.  The dashboards send first the
// figure a learner watches.
function inTurn(draw) {
  const g = globalThis;
  const run = (g.__rgraspDrawTurn || Promise.resolve()).then(draw);
  g.__rgraspDrawTurn = run.catch(() => {}).then(afterPaint);
  return run;
}

// -- the view ----------------------------------------------------------------------------------

async function render({model, el}) {
  el.classList.add("rgrasp-figure");
  el.style.width = "100%";
  // a layer of its own: what changes in this figure (a replay's frame) is rasterised again
  // without the rest of the page, and changes elsewhere leave this figure's tiles alone
  el.style.willChange = "transform";
  const caption = document.createElement("div");
  caption.className = "rgrasp-figure-caption";
  const gd = document.createElement("div");
  gd.className = "rgrasp-figure-plot";
  gd.style.width = "100%";
  // the figure, and what the page draws over it: the traces of a moving replay (a canvas,
  // see drawMarks), then the cursors (see pageCursors)
  const holder = document.createElement("div");
  holder.className = "rgrasp-figure-holder";
  holder.style.cssText = "position:relative;width:100%";
  const canvas = document.createElement("canvas");
  canvas.className = "rgrasp-figure-marks";
  canvas.style.cssText = "position:absolute;left:0;top:0;pointer-events:none;display:none";
  holder.append(gd, canvas);
  el.appendChild(caption);
  el.appendChild(holder);

  let alive = true;
  let figure = null; // the whole figure last sent by the kernel (JSON)
  let frames = null; // the replay's frames, decoded
  let reactWanted = true;
  let resizeWanted = false;
  let wanted = model.get("_frame"); // replay position to show (-1: none)
  let shownState = -1; // frame state drawn on top of `figure` (-1: none)
  const shown = new Map(); // trace values those states drew ("trace|path" -> value)
  let drawing = false;
  let lastWidth = 0;
  let text = null; // text keys of the state shown, not drawn yet
  let textAt = -Infinity; // when text was last drawn
  let textTimer = null;
  let moving = false; // whether the replay followed moves (plays, or its slider is dragged)
  let cursors = null; // the cursor shapes the page draws (null: plotly.js draws them)
  let reacted = false; // whether plotly.js has drawn the figure (a resize needs a drawing)
  // While the replay moves, the page draws the scatter traces its frames change (see
  // drawMarks), and every trace after the first of them (in plotly.js's order: what plotly.js
  // draws over them, the page does), and plotly.js's copies of these traces are hidden; where
  // it rests, plotly.js draws them again.  `layer`: {first, traces} -- that first trace and
  // the indices of those the page draws; false where the page cannot draw them; null: not
  // planned yet (planned at the first move after a drawing).
  let layer = null;
  let layerOn = false; // plotly.js's copies hidden, the canvas shows the traces
  let layerLost = false; // the canvas could not follow a change of the axes (zoom)
  let marks = null; // the traces the canvas shows

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
    layer = null;
    reactWanted = true; // back to the base figure, then the wanted frame on top
  };
  const setCaption = () => {
    // HTML written by the kernel (user text escaped there), like an ipywidgets HTML widget
    caption.innerHTML = model.get("caption") || "";
    caption.style.display = model.get("caption") ? "" : "none";
  };
  const mark = () => {
    // data-rgrasp-frame: the replay position drawn; data-rgrasp-text: "stale" while its title
    // still shows an earlier position (a moving replay redraws text every TEXT_MS);
    // data-rgrasp-marks: who draws the traces the replay changes ("page" while it moves, see
    // drawMarks; else "plotly")
    gd.dataset.rgraspText = text ? "stale" : "current";
    gd.dataset.rgraspMarks = layerOn ? "page" : "plotly";
    gd.dataset.rgraspFrame = String(wanted);
    gd.dataset.rgraspDraws = String(Number(gd.dataset.rgraspDraws || 0) + 1);
  };

  // a figure without a width of its own is drawn at the width of its box, given to plotly.js
  // (it would otherwise measure the page at every change of a replay)
  const sized = (layout) => (layout.width !== undefined || !(gd.clientWidth > 0) ? layout
    : Object.assign({}, layout, {width: gd.clientWidth, autosize: false}));

  const plotlyReady = plotlyFor(model);
  // the cursors the page draws, where the layout plotly.js holds says they are (axis ranges
  // included: autoranged by plotly.js, or zoomed by the user)
  const placeCursors = () => {
    if (cursors !== null && gd.layout) drawCursors(holder, gd.layout, cursors);
  };
  const setCursors = (shapes) => { cursors = shapes; }; // placed once the state is drawn
  // the layout handed to Plotly.react: the figure's at the width of its box, without the
  // cursors when the page draws them
  const layoutToDraw = () => {
    const layout = sized(structuredClone(figure.layout));
    if (!pageCursors(layout)) {
      cursors = null;
      drawCursors(holder, {}, []);
      return layout;
    }
    const split = splitShapes(layout.shapes);
    cursors = split.cursors;
    return Object.assign({}, layout, {shapes: split.others});
  };
  // -- the traces the page draws while the replay moves --
  const planLayer = () => {
    if (!frames || !frames.traces.length || !fixedArea(gd.layout) || coveredArea(gd.layout)) {
      return false;
    }
    const first = Math.min(...frames.traces);
    const traces = [];
    for (let t = first; t < figure.data.length; t++) {
      if (!drawable(figure.data[t])) return false;
      traces.push(t);
    }
    return {first, traces};
  };
  // the traces the page draws at the state whose changes are `ch` (null: one it cannot draw),
  // shown or hidden as the user left them in plotly.js (a click on the legend)
  const layerTraces = (ch) => {
    const out = [];
    for (let t = layer.first; t < figure.data.length; t++) {
      let tr = ch.data.has(t) ? withValues(figure.data[t], ch.data.get(t)) : figure.data[t];
      const visible = (gd.data[t] || {}).visible;
      if (visible !== tr.visible) tr = withValues(tr, {visible});
      if (!drawable(tr)) return null;
      out.push(tr);
    }
    return out;
  };
  const showMarks = (traces) => {
    const ok = drawMarks(canvas, gd.layout, traces);
    canvas.style.display = ok ? "" : "none";
    marks = ok ? traces : null;
    return ok;
  };
  // the axes changed (a zoom, a resize): the canvas follows them, or hands back to plotly.js
  const placeMarks = () => {
    if (layerOn && marks !== null && !showMarks(marks)) {
      layerLost = true;
      pump();
    }
  };
  // plotly.js's copies of the traces the page draws hidden (the canvas shows them already):
  // one point that is not a number each.  (Moved to no points at all, every trace of a
  // plotly.js 4 figure would lose its drawing at the next Plotly.animate: one not animated
  // too.)
  const handOver = async (Plotly) => {
    const t = layer.traces;
    await Plotly.animate(gd, {data: t.map(() => ({x: [NaN], y: [NaN]})), traces: t},
      IMMEDIATE);
    for (const i of t) {
      shown.set(i + "|x", [NaN]);
      shown.set(i + "|y", [NaN]);
    }
    layerOn = true;
  };
  // the changes `ch` of a state plotly.js draws after the page did: every trace the page drew
  // gets its points back (the figure's, where the state does not change them)
  const handBack = (ch) => {
    for (const t of layer.traces) {
      const keys = ch.data.get(t) || {};
      for (const p of ["x", "y"]) if (!(p in keys)) keys[p] = figure.data[t][p];
      ch.data.set(t, keys);
    }
  };
  const hideMarks = () => {
    layerOn = false;
    layerLost = false;
    marks = null;
    canvas.style.display = "none";
  };

  // text is drawn at once where the replay rests, else once TEXT_MS have passed
  const textTime = () => !moving || performance.now() - textAt >= TEXT_MS;
  const textDue = () => !!text && textTime();
  const drawText = async () => {
    const Plotly = await plotlyReady;
    const t = text;
    text = null;
    textAt = performance.now();
    await Plotly.relayout(gd, t);
    gd.dataset.rgraspText = "current";
  };
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
          await inTurn(async () => {
            reactWanted = false; // a figure sent while this one waited its turn is drawn now
            setCaption();
            // plotly.js gets copies: it writes into what it draws, and `figure` stays the
            // figure the kernel sent (a state's values are set on it, see layerTraces)
            await Plotly.react(gd, structuredClone(figure.data), layoutToDraw(), CONFIG);
          });
          // from the first drawing on, the page follows the user's zooms
          if (!reacted) {
            gd.on("plotly_relayout", () => {
              placeCursors();
              placeMarks();
            });
            // a trace shown or hidden (the legend): the page draws the state again
            gd.on("plotly_restyle", () => {
              if (!layerOn) return;
              shownState = -1;
              pump();
            });
          }
          reacted = true;
          hideMarks();
          layer = null;
          placeCursors();
          shownState = -1;
          shown.clear();
          text = null;
          mark();
          continue;
        }
        if (resizeWanted) {
          resizeWanted = false;
          if (!layerOn) layer = null; // planned again on the new size (a first width)
          if (reacted && gd.clientWidth > 0) {
            if (figure.layout.width !== undefined) await Plotly.Plots.resize(gd);
            else if (cursors === null && pageCursors(sized(figure.layout))) reactWanted = true;
            else await Plotly.relayout(gd, {width: gd.clientWidth});
          }
          continue;
        }
        if (textDue()) {
          await drawText();
          continue;
        }
        const ok = frames && wanted >= 0 && wanted < frames.n;
        const s = ok ? frames.index[wanted] : -1;
        if (layerOn && s < 0) { // no position: the whole figure, drawn by plotly.js
          reactWanted = true;
          continue;
        }
        const back = layerOn && (!moving || layerLost);
        if (back) shownState = -1; // the replay rests: plotly.js draws the traces again
        if (s < 0 || s === shownState) {
          if (ok && gd.dataset.rgraspFrame !== String(wanted)) gd.dataset.rgraspFrame = String(wanted);
          if (text && textTimer === null) { // its turn comes: draw it then
            textTimer = setTimeout(() => { textTimer = null; pump(); },
              Math.max(0, TEXT_MS - (performance.now() - textAt)));
          }
          break;
        }
        const ch = stateChanges(frames, s);
        if (moving && !back) {
          if (layer === null) layer = planLayer();
          const traces = layer ? layerTraces(ch) : null;
          if (traces && showMarks(traces)) {
            if (!layerOn) await handOver(Plotly);
            for (const t of layer.traces) ch.data.delete(t); // drawn by the page
          } else if (layerOn) {
            shownState = -1;
            layerLost = true;
            continue;
          }
        }
        if (back) handBack(ch);
        const drew = await drawState(Plotly, gd, ch, textTime(), shown,
          cursors === null ? null : setCursors);
        if (back) hideMarks(); // plotly.js has drawn the traces
        placeCursors(); // where the state put them, on the axes as they are now
        shownState = s;
        if (drew.textDrawn) {
          text = null; // drawn with this state: an earlier one's pending text is older
          textAt = performance.now();
        } else if (Object.keys(drew.text).length) text = drew.text;
        if (textDue()) await drawText();
        mark();
        if (!drew.waited) await nextPaint();
      }
    } catch (e) {
      console.error(e);
      shown.clear(); // what a failed draw left on the figure is not known: draw all again
    } finally {
      drawing = false;
    }
  };

  const onReplay = (ev) => {
    const d = ev.detail || {};
    if (!d.key || d.key !== model.get("_replay")) return;
    wanted = d.index;
    moving = d.moving === true;
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
    if (textTimer !== null) clearTimeout(textTimer);
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
