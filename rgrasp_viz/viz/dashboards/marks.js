// What the page draws over a figure itself, without plotly.js (rgrasp_viz/viz/dashboards/
// figure.js uses it; _figure.py puts the two files into one module, this one first: it
// declares functions and constants only).
//
// plotly.js's public API changes a drawn figure only through calls (Plotly.animate, relayout,
// update) that compute the defaults of the whole figure again, every trace and every axis.  A
// replay steps through tens of positions per second.  Where the plot area of a figure is fixed
// -- layout.margin.autoexpand false (plotly.js keeps the margins as given: nothing pushes
// them), a width and a height of its own -- and its axes have ranges of their own, where a
// value is drawn follows from the layout alone, by the formula plotly.js documents: the
// margins as given, an axis's domain a fraction of the plot area, its range mapped linearly
// (in log10 units on a "log" axis).  There the page draws two things itself:
//
// - a replay's cursor, a vertical line moved by a CSS transform (see drawCursors);
// - while a replay moves (plays, or its slider is dragged), the scatter traces it changes, on
//   a canvas over the figure, with plotly.js's own geometry: its symbol paths, dash lengths
//   and gaps (see drawMarks).  Where the replay rests, plotly.js draws them again (hover).

// Whether plotly.js keeps the plot area of `layout` where the layout says.
function fixedArea(layout) {
  return !!layout && !!layout.margin && layout.margin.autoexpand === false &&
    typeof layout.width === "number" && typeof layout.height === "number";
}

const num = (v, d) => (typeof v === "number" ? v : d);

// The axis `name` ("xaxis", "yaxis2", ...) of a fixed plot area as a map from values to
// pixels from the figure's top-left corner (x rightwards, y downwards): {px(v), lo, hi (the
// pixels of its domain)}; null where the layout does not fix it (no range, an axis drawn over
// another or scaled to one, a type other than linear or log).  The range is the one plotly.js
// wrote back after its last drawing; `held`: only a range of the axis's own (not autoranged:
// plotly.js would range it again with the data it is given).
function axisMap(layout, name, held = false) {
  const ax = layout[name];
  if (!ax || !Array.isArray(ax.range) || ax.range.length !== 2 ||
      (held && ax.autorange === true) || ax.overlaying || ax.scaleanchor ||
      !(ax.type === undefined || ax.type === "linear" || ax.type === "log")) return null;
  const r0 = Number(ax.range[0]);
  const r1 = Number(ax.range[1]);
  if (!Number.isFinite(r0) || !Number.isFinite(r1) || r0 === r1) return null;
  const m = layout.margin || {};
  const dom = Array.isArray(ax.domain) ? ax.domain : [0, 1];
  const across = name[0] === "x";
  // plotly.js's defaults: l = r = 80, t = 100, b = 80
  const a = across ? num(m.l, 80) : layout.height - num(m.b, 80);
  const b = across ? layout.width - num(m.r, 80) : num(m.t, 100);
  const p0 = a + (b - a) * dom[0];
  const p1 = a + (b - a) * dom[1];
  const log = ax.type === "log";
  return {
    lo: Math.min(p0, p1),
    hi: Math.max(p0, p1),
    // null, a non-number, or a non-positive value on a log axis: NaN (not drawn)
    px: (v) => {
      if (typeof v !== "number") return NaN;
      const u = log ? (v > 0 ? Math.log10(v) : NaN) : v;
      return p0 + (p1 - p0) * (u - r0) / (r1 - r0);
    },
  };
}

// "x" -> "xaxis", "y3" -> "yaxis3"
const axisName = (ref, letter) => letter + "axis" + (ref || letter).slice(1);

// plotly.js's dash lengths: "dot" max(w, 3) px on and off, "dash" three times that,
// "longdash" five times ([]: solid; null: a dash the page does not draw).
function dashPattern(dash, w) {
  const d = Math.max(w || 1, 3);
  if (dash === undefined || dash === "solid") return [];
  const k = {dot: 1, dash: 3, longdash: 5}[dash];
  return k ? [k * d, k * d] : null;
}

// -- cursors ---------------------------------------------------------------------------------
//
// A replay's cursor is a shape named "cursor": a vertical line across the plot area (yref
// "paper", x0 = x1, on an x axis).  plotly.js moves a shape only by Plotly.relayout; on a
// fixed plot area the page draws the cursors itself, as lines over the figure.

const isCursor = (sh) => !!sh && sh.name === "cursor" && sh.type === "line" &&
  sh.yref === "paper" && typeof sh.x0 === "number" && sh.x0 === sh.x1 &&
  /^x[0-9]*$/.test(sh.xref || "x");

// Whether the page draws the cursors of `layout` (as given to Plotly.react) itself.
function pageCursors(layout) {
  return (layout.shapes || []).some(isCursor) && fixedArea(layout);
}

// `shapes` split into the cursors and the others.
function splitShapes(shapes) {
  const cursors = [];
  const others = [];
  for (const sh of shapes || []) (isCursor(sh) ? cursors : others).push(sh);
  return {cursors, others};
}

// Where the cursor `sh` is drawn, in pixels from the figure's left edge (null: outside its
// axis's range, or on an axis whose range the layout does not fix).
function cursorPixel(layout, sh) {
  const map = axisMap(layout, axisName(sh.xref, "x"));
  if (!map) return null;
  const x = map.px(sh.x0);
  return x >= map.lo - 1e-6 && x <= map.hi + 1e-6 ? x : null;
}

// The CSS background of a line `w` pixels wide drawn with plotly.js's `dash`.
function dashBackground(color, dash, w) {
  const on = (dashPattern(dash, w) || [])[0];
  if (!on) return color;
  return `repeating-linear-gradient(to bottom, ${color} 0 ${on}px, transparent ${on}px ` +
    `${2 * on}px)`;
}

// Draw `cursors` (shapes) as lines in `holder`, over the figure whose layout is `layout`.  A
// line's look is set when it changes; a move is a transform (the compositor's work).
function drawCursors(holder, layout, cursors) {
  const m = layout.margin || {};
  const t = num(m.t, 100);
  const b = num(m.b, 80);
  const lines = [...holder.querySelectorAll(":scope > .rgrasp-cursor")];
  while (lines.length > cursors.length) lines.pop().remove();
  while (lines.length < cursors.length) {
    const div = document.createElement("div");
    div.className = "rgrasp-cursor";
    div.style.cssText = "position:absolute;left:0;pointer-events:none;will-change:transform";
    holder.appendChild(div);
    lines.push(div);
  }
  cursors.forEach((sh, k) => {
    const div = lines[k];
    const line = sh.line || {};
    const w = num(line.width, 2);
    const x = cursorPixel(layout, sh);
    div.dataset.x = String(sh.x0);
    div.dataset.xref = sh.xref || "x";
    const look = [w, line.dash, line.color, t, layout.height - t - b].join("|");
    if (div.dataset.look !== look) {
      div.dataset.look = look;
      div.style.width = w + "px";
      div.style.top = t + "px";
      div.style.height = Math.max(layout.height - t - b, 0) + "px";
      div.style.background = dashBackground(line.color || "#444", line.dash, w);
    }
    const shown = x !== null && w > 0;
    const where = shown ? `translateX(${x - w / 2}px)` : "none";
    if (div.dataset.where !== where) { // unchanged: nothing touched
      div.dataset.where = where;
      div.style.display = shown ? "" : "none";
      if (shown) div.style.transform = where;
    }
  });
}

// -- traces drawn while a replay moves -------------------------------------------------------
//
// The traces the page can draw: scatter traces in mode "lines" (linear segments, broken where
// a value is missing, as plotly.js's default connectgaps false does) or "markers" (the symbols
// of SYMBOLS, filled or "-open"), with colours, widths and sizes given as single values (a
// marker symbol may vary by point).  A trace the page cannot draw leaves the whole figure to
// plotly.js.

// plotly.js's symbol paths for a marker of radius r (size / 2), numbers rounded to 2 places
// as plotly.js rounds them; `line`: drawn as a stroke only (plotly.js's noFill symbols).
const round2 = (v) => Math.round(v * 100) / 100;
const SYMBOLS = {
  circle: (r) => {
    const s = round2(r);
    return `M${s},0A${s},${s} 0 1,1 0,-${s}A${s},${s} 0 0,1 ${s},0Z`;
  },
  square: (r) => {
    const s = round2(r);
    return `M${s},${s}H-${s}V-${s}H${s}Z`;
  },
  diamond: (r) => {
    const d = round2(r * 1.3);
    return `M${d},0L0,${d}L-${d},0L0,-${d}Z`;
  },
  "triangle-up": (r) => {
    const t = round2(r * 2 / Math.sqrt(3));
    return `M-${t},${round2(r / 2)}H${t}L0,-${round2(r)}Z`;
  },
  "triangle-down": (r) => {
    const t = round2(r * 2 / Math.sqrt(3));
    return `M-${t},-${round2(r / 2)}H${t}L0,${round2(r)}Z`;
  },
  "line-ew": (r) => `M${round2(r * 1.4)},0H-${round2(r * 1.4)}`,
  "line-ns": (r) => `M0,${round2(r * 1.4)}V-${round2(r * 1.4)}`,
};
const LINE_SYMBOLS = new Set(["line-ew", "line-ns"]);

// {base, open} of a symbol name the page draws (a line symbol only "-open": drawn in the
// marker's colour), else null.
function symbolOf(name) {
  if (name === undefined) return {base: "circle", open: false};
  if (typeof name !== "string") return null;
  const open = name.endsWith("-open");
  const base = open ? name.slice(0, -5) : name;
  if (!(base in SYMBOLS) || (LINE_SYMBOLS.has(base) && !open)) return null;
  return {base, open};
}

const isColor = (c) => typeof c === "string" && c.length > 0;
const isSize = (v) => v === undefined || (typeof v === "number" && v >= 0);
const isArrayLike = (a) => Array.isArray(a) || ArrayBuffer.isView(a);

// Whether the page draws `trace` (a trace of gd.data, with a replay's values set) as
// plotly.js would.
function drawable(trace) {
  if (!trace || (trace.type || "scatter") !== "scatter") return false;
  if (trace.visible === false || trace.visible === "legendonly") return true; // nothing drawn
  if (!isArrayLike(trace.x) || !isArrayLike(trace.y)) return false;
  if (trace.fill !== undefined && trace.fill !== "none") return false;
  if (trace.selectedpoints !== undefined || !isSize(trace.opacity)) return false;
  const line = trace.line || {};
  if (trace.mode === "lines") {
    return isColor(line.color) && isSize(line.width) && dashPattern(line.dash, 1) !== null &&
      (line.shape === undefined || line.shape === "linear");
  }
  if (trace.mode !== "markers") return false;
  const mk = trace.marker || {};
  const ml = mk.line || {};
  const symbols = [...new Set(isArrayLike(mk.symbol) ? mk.symbol : [mk.symbol])].map(symbolOf);
  // a filled symbol with an outline needs the outline's colour (an open one is drawn in the
  // marker's colour)
  const outlined = ml.width > 0 && symbols.some((sym) => sym && !sym.open);
  return isColor(mk.color) && isSize(mk.size) && isSize(mk.opacity) && isSize(ml.width) &&
    (!outlined || isColor(ml.color)) && mk.gradient === undefined &&
    mk.sizeref === undefined && mk.angle === undefined && mk.standoff === undefined &&
    symbols.every((sym) => sym !== null);
}

// Whether plotly.js draws anything over the traces of `layout` that the page's canvas would
// cover (shapes other than cursors, images, annotations).
function coveredArea(layout) {
  const shapes = (layout.shapes || []).filter((sh) => !isCursor(sh));
  return shapes.length > 0 || (layout.images || []).length > 0 ||
    (layout.annotations || []).length > 0;
}

const paths = new Map(); // "symbol|r" -> Path2D, shared by every figure of the page

function symbolPath(base, r) {
  const key = base + "|" + r;
  let p = paths.get(key);
  if (!p) {
    p = new Path2D(SYMBOLS[base](r));
    paths.set(key, p);
  }
  return p;
}

// Draw `trace` (drawable) on `ctx` (CSS pixels of the figure), clipped to the plot area of its
// axes.  Returns whether its axes let the page place it.
function drawTrace(ctx, layout, trace, dpr) {
  if (trace.visible === false || trace.visible === "legendonly") return true;
  const X = axisMap(layout, axisName(trace.xaxis, "x"), true);
  const Y = axisMap(layout, axisName(trace.yaxis, "y"), true);
  if (!X || !Y) return false;
  const xs = trace.x;
  const ys = trace.y;
  const n = Math.min(xs.length, ys.length);
  ctx.save();
  ctx.beginPath();
  ctx.rect(X.lo, Y.lo, X.hi - X.lo, Y.hi - Y.lo);
  ctx.clip();
  ctx.globalAlpha = num(trace.opacity, 1);
  if (trace.mode === "lines") {
    const line = trace.line;
    const w = num(line.width, 2);
    if (w > 0) {
      ctx.beginPath();
      let pen = false;
      for (let i = 0; i < n; i++) {
        const px = X.px(xs[i]);
        const py = Y.px(ys[i]);
        if (!Number.isFinite(px) || !Number.isFinite(py)) {
          pen = false; // a gap
          continue;
        }
        if (pen) ctx.lineTo(px, py);
        else ctx.moveTo(px, py);
        pen = true;
      }
      ctx.lineWidth = w;
      ctx.strokeStyle = line.color;
      ctx.setLineDash(dashPattern(line.dash, w));
      ctx.stroke();
    }
  } else {
    const mk = trace.marker;
    const ml = mk.line || {};
    const r = num(mk.size, 6) / 2;
    const each = isArrayLike(mk.symbol);
    const mlw = num(ml.width, 0);
    ctx.globalAlpha *= num(mk.opacity, 1);
    ctx.setLineDash([]);
    for (let i = 0; i < n; i++) {
      const px = X.px(xs[i]);
      const py = Y.px(ys[i]);
      if (!Number.isFinite(px) || !Number.isFinite(py)) continue;
      const sym = symbolOf(each ? mk.symbol[i] : mk.symbol);
      const p = symbolPath(sym.base, r);
      ctx.setTransform(dpr, 0, 0, dpr, dpr * px, dpr * py);
      if (sym.open) { // plotly.js: the marker's colour, the line's width or 1
        ctx.lineWidth = mlw || 1;
        ctx.strokeStyle = mk.color;
        ctx.stroke(p);
      } else {
        ctx.fillStyle = mk.color;
        ctx.fill(p);
        if (mlw > 0) {
          ctx.lineWidth = mlw;
          ctx.strokeStyle = ml.color;
          ctx.stroke(p);
        }
      }
    }
  }
  ctx.restore();
  return true;
}

// Draw `traces` (gd.data's order) on `canvas`, which covers the figure of `layout`: cleared,
// sized to the figure (device pixels), then each trace.  Returns false (and leaves the canvas
// clear) where a trace cannot be drawn by the page.
function drawMarks(canvas, layout, traces) {
  const dpr = globalThis.devicePixelRatio || 1;
  const w = Math.round(layout.width * dpr);
  const h = Math.round(layout.height * dpr);
  if (canvas.width !== w || canvas.height !== h) {
    canvas.width = w;
    canvas.height = h;
    canvas.style.width = layout.width + "px";
    canvas.style.height = layout.height + "px";
  }
  const ctx = canvas.getContext("2d");
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.clearRect(0, 0, w, h);
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  for (const tr of traces) {
    if (!drawTrace(ctx, layout, tr, dpr)) {
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.clearRect(0, 0, w, h);
      return false;
    }
  }
  return true;
}
