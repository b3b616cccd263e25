// The page side of rgrasp_viz's replay control (rgrasp_viz/viz/dashboards/_figure.py).
//
// Play / pause, one step back or forward, and a slider over the replay's positions.  While it
// plays, the page keeps time (requestAnimationFrame: position = elapsed / interval) and tells
// the figures of the replay where it is, and whether it moves (plays, or its slider is
// dragged), with a page event; the kernel hears the position only when the replay stops
// (pause, end, a step, the slider let go).

const EVENT = "rgrasp-replay";

function registry() {
  if (!globalThis.__rgraspReplays) globalThis.__rgraspReplays = {};
  return globalThis.__rgraspReplays;
}

function button(text, title, cls) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = text;
  b.title = title;
  b.className = "rgrasp-replay-button " + cls;
  b.style.cssText = "min-width:36px;height:28px;margin-right:4px;cursor:pointer";
  return b;
}

function render({model, el}) {
  el.classList.add("rgrasp-replay");
  el.style.cssText = "display:flex;align-items:center;gap:4px;flex-wrap:wrap;margin:4px 0";
  const play = button("play", "play / pause", "rgrasp-replay-play");
  play.style.minWidth = "64px";
  const prev = button("◀", "previous position", "rgrasp-replay-prev");
  const next = button("▶", "next position", "rgrasp-replay-next");
  const label = document.createElement("label");
  label.className = "rgrasp-replay-label";
  label.style.cssText = "margin:0 6px 0 8px";
  const range = document.createElement("input");
  range.type = "range";
  range.className = "rgrasp-replay-range";
  range.min = "0";
  range.step = "1";
  range.style.cssText = "width:420px";
  const readout = document.createElement("span");
  readout.className = "rgrasp-replay-readout";
  readout.style.cssText = "margin-left:8px;font-size:13px;min-width:120px";
  el.append(play, prev, next, label, range, readout);
  // keys pressed on the control move it, never the notebook around it (JupyterLab handles
  // arrow keys on their way up, and cancels them)
  el.setAttribute("data-lm-suppress-shortcuts", "true");
  el.addEventListener("keydown", (e) => e.stopPropagation());

  let index = model.get("value");
  let raf = null;
  let t0 = 0;
  let start = 0;
  let dragging = false; // the slider held by the pointer

  const max = () => model.get("max");
  const show = () => {
    label.textContent = model.get("description") || "";
    range.max = String(max());
    range.setAttribute("aria-label", model.get("description") || "position");
    range.value = String(index);
    const texts = model.get("readouts") || [];
    readout.textContent = texts.length > index ? texts[index] : `${index} / ${max()}`;
    play.textContent = raf === null ? "play" : "pause";
    el.dataset.rgraspIndex = String(index);
    el.dataset.rgraspPlaying = raf === null ? "0" : "1";
  };
  const publish = (i) => {
    index = Math.min(Math.max(Math.round(i), 0), max());
    registry()[model.get("key")] = index;
    show();
    globalThis.dispatchEvent(new CustomEvent(EVENT,
      {detail: {key: model.get("key"), index, moving: raf !== null || dragging}}));
  };
  const commit = () => { // the kernel hears where the replay stopped
    if (model.get("value") !== index) {
      model.set("value", index);
      model.save_changes();
    }
  };
  const tick = (now) => {
    if (raf === null) return;
    const k = start + Math.floor((now - t0) / Math.max(model.get("interval"), 1));
    if (k >= max()) {
      publish(max());
      stop();
      return;
    }
    if (k !== index) publish(k);
    raf = requestAnimationFrame(tick);
  };
  const stop = () => {
    if (raf !== null) cancelAnimationFrame(raf);
    raf = null;
    publish(index); // the figures hear that the replay rests here
    commit();
  };
  const begin = () => {
    if (index >= max()) publish(0);
    start = index;
    t0 = performance.now();
    raf = requestAnimationFrame(tick);
    show();
  };
  play.addEventListener("click", () => (raf === null ? begin() : stop()));
  prev.addEventListener("click", () => { stop(); publish(index - 1); commit(); });
  next.addEventListener("click", () => { stop(); publish(index + 1); commit(); });
  const letGo = () => {
    globalThis.removeEventListener("pointerup", letGo);
    globalThis.removeEventListener("pointercancel", letGo);
    if (!dragging) return;
    dragging = false;
    publish(index); // the figures hear that the replay rests here
  };
  // the slider is let go wherever the pointer is then (off the slider too)
  range.addEventListener("pointerdown", () => {
    dragging = true;
    globalThis.addEventListener("pointerup", letGo);
    globalThis.addEventListener("pointercancel", letGo);
  });
  range.addEventListener("input", () => {
    if (raf !== null) { cancelAnimationFrame(raf); raf = null; }
    publish(Number(range.value));
  });
  range.addEventListener("change", () => {
    letGo();
    commit();
  });

  const onValue = () => { // set by the kernel (Python): show it, unless playing
    if (raf === null && model.get("value") !== index) publish(model.get("value"));
  };
  const onMax = () => { if (index > max()) publish(max()); else show(); };
  model.on("change:value", onValue);
  model.on("change:max", onMax);
  model.on("change:readouts", show);
  model.on("change:description", show);
  publish(index);

  return () => {
    if (raf !== null) cancelAnimationFrame(raf);
    raf = null;
    globalThis.removeEventListener("pointerup", letGo);
    globalThis.removeEventListener("pointercancel", letGo);
    model.off("change:value", onValue);
    model.off("change:max", onMax);
    model.off("change:readouts", show);
    model.off("change:description", show);
  };
}

export default {render};
