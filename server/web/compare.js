/*
 * compare.js - compare: the difference of two sets of weights.
 */
import { lastGood, ui } from "./state.js";
import { $, API, el, range } from "./base.js";
import { anyHead, parseReply, slice } from "./reply.js";
import { exactText } from "./format.js";
import { MASKED_RGB, PALETTES } from "./colour.js";
import { LAZY_MARGIN_PX, MatrixView } from "./matrix.js";
import { group, views } from "./cards.js";
import { mayMask, stageName } from "./lesson-names.js";
import { onPoint } from "./highlight.js";
import { afterRender, compute, exportOptions, renderResult } from "./hooks.js";
import { weightLegend, weightShade, weightTop } from "./weight-scale.js";
import { t } from "./words.js";

// "heads" subtracts two heads of this result; "dtype" and "mask" ask the API
// again (the other precision; no causal, mask, padding or window) and
// subtract the open head's weights and the outputs.
// The result is drawn right under its control (the Compare panel), and a
// change of the control brings it into view.
export let compareSeq = 0, revealCompare = false;
export function compareSlot() {
  const old = $("group-compare");
  const slot = el("section", { class: "panel group", id: "group-compare", "aria-labelledby": "group-compare-h", hidden: true });
  if (old) old.replaceWith(slot); else $("compare-panel").after(slot);
  return slot;
}
export function updateCompareControls(R) {
  const kind = $("compare-kind").value;
  for (const id of ["compare-a", "compare-b"]) {
    const sel = $(id), keep = sel.value;
    sel.replaceChildren(...range(R ? R.H : 1).map((k) => el("option", { value: k }, t("cmp.head", { head: k }))));
    const clash = id === "compare-b" && keep === $("compare-a").value && R && R.H > 1; // B starts as another head than A
    sel.value = keep !== "" && R && Number(keep) < R.H && !clash ? keep : id === "compare-b" && R && R.H > 1 ? String(Number($("compare-a").value) === 1 ? 0 : 1) : "0";
    sel.closest("label").hidden = kind !== "heads";
  }
  $("compare-state").textContent = kind === "heads" ? t("cmp.state.heads", { a: Number($("compare-a").value), b: Number($("compare-b").value) })
    : t(`cmp.state.${kind}`);
  $("compare-state").classList.toggle("on", kind !== "off");
}
export async function renderCompare(R, avail) {
  const my = ++compareSeq, kind = $("compare-kind").value, slot = $("group-compare");
  updateCompareControls(R);
  if (kind === "off" || !slot) return;
  const h = ui.selectedHead, labels = { rowLabels: R.ql, colLabels: R.kl };
  let pairs, names;
  if (kind === "heads") {
    const a = Number($("compare-a").value), b = Number($("compare-b").value);
    pairs = [["weights", anyHead(R, "weights", a), anyHead(R, "weights", b), labels]];
    names = [t("cmp.head", { head: a }), t("cmp.head", { head: b })];
  } else {
    const { return: _r, ...body } = R.body;
    const other = kind === "dtype" ? { ...body, dtype: R.dtype === "float64" ? "float32" : "float64" } : { ...body };
    if (kind === "mask") for (const k of ["causal", "mask", "key_padding", "window"]) delete other[k];
    slot.dataset.state = "pending";
    let R2;
    try {
      const resp = await fetch(API, { method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ ...other, return: ["weights", "output"], encoding: "base64" }) });
      const bytes = new Uint8Array(await resp.arrayBuffer());
      if (!resp.ok) throw new Error(JSON.parse(new TextDecoder().decode(bytes)).detail);
      R2 = { ...R, T: parseReply(bytes), body: other };
    } catch (e) {
      if (my !== compareSeq) return;
      slot.hidden = false; slot.dataset.state = "error";
      slot.replaceChildren(el("h2", { id: "group-compare-h" }, t("cmp.title")), el("p", { class: "warn" }, t("cmp.failed", { detail: e.message })));
      return;
    }
    if (my !== compareSeq || lastGood !== R) return;
    const first = kind === "mask" || R.dtype === "float64";
    const pick = (stage, hh) => (first ? [slice(R, stage, hh), slice(R2, stage, hh)] : [slice(R2, stage, hh), slice(R, stage, hh)]);
    pairs = [["weights", ...pick("weights", h), labels],
             ["output", ...pick("output", 0), { rowLabels: R.ql, colLabels: range(R.T.output.shape.at(-1)).map(String) }]];
    names = kind === "dtype" ? ["float64", "float32"] : [t("cmp.with_masks"), t("cmp.without_masks")];
  }
  const cards = el("div", { class: "cards" });
  const notes = [];
  for (const [stage, A, B, lab] of pairs) {
    const diff = new Float64Array(A.rows * A.cols), da = A.data, db = B.data;
    let big = 0;
    for (let k = 0; k < diff.length; k++) {
      const a = da[A.off + k], b = db[B.off + k];
      diff[k] = a === b ? 0 : a - b; // −∞ − −∞ (a masked score twice) is 0
      if (Math.abs(diff[k]) > big) big = Math.abs(diff[k]);
    }
    const v = new MatrixView({ id: `cmp-${stage}`, stage: `diff-${stage}`, name: t(`cmp.name.${stage}`), dtype: "float64",
      rows: A.rows, cols: A.cols, src: { data: diff }, off: 0, shape: [A.rows, A.cols], kind: "div", ...lab,
      arrow: stage === "weights", onPoint, title: t(`cmp.card.${stage}`, { a: names[0], b: names[1] }),
      formula: t(stage === "weights" && kind !== "heads" ? "cmp.formula.head_weights" : `cmp.formula.${stage}`, { head: h, a: names[0], b: names[1], largest: big }),
      scaleNote: t("cmp.scale"),
      parts: [A, B, names] });
    views[v.id] = v;
    v.layout(avail);
    cards.append(v.root);
    notes.push(big);
  }
  slot.replaceChildren(el("h2", { id: "group-compare-h" }, t("cmp.heading", { a: names[0], b: names[1] }),
    el("span", { class: "shape" }, t(kind === "heads" ? "cmp.from.this" : "cmp.from.second"))), cards);
  slot.hidden = false; slot.dataset.state = "ok"; slot.dataset.largest = notes.join(" ");
  if (revealCompare) { revealCompare = false; slot.scrollIntoView({ block: "nearest" }); }
  drawWhenSeen();
  exportOptions(R);
}

// Draws the waiting matrices on (or near) the screen now, the others when
// scrolling brings them near.
export let seenObserver = null;
export function drawWhenSeen() {
  if (seenObserver) seenObserver.disconnect();
  const waiting = Object.values(views).filter((v) => v.mode === "lazy");
  if (!waiting.length) return;
  const byRoot = new Map(waiting.map((v) => [v.root, v]));
  seenObserver = new IntersectionObserver((entries) => {
    for (const e of entries) {
      const v = byRoot.get(e.target);
      if (e.isIntersecting && v && v.mode === "lazy") { seenObserver.unobserve(e.target); v.draw(); }
    }
  }, { rootMargin: `${LAZY_MARGIN_PX}px` });
  const H = window.innerHeight;
  for (const v of waiting) {
    const r = v.root.getBoundingClientRect();
    if (r.bottom > -LAZY_MARGIN_PX && r.top < H + LAZY_MARGIN_PX) v.draw();
    else seenObserver.observe(v.root);
  }
}

// RoPE's settings in words: its style, base and dims.
export function ropeText(rope, dk) {
  const r = rope === true ? {} : rope;
  return t(r.style === "interleaved" ? "views.rope.interleaved" : "views.rope.half", { base: String(r.base ?? 10000), dims: r.dims ?? dk });
}

// A batch: one button per sequence; a click shows that sequence's stages.
export function seqStrip(R) {
  const g = group("group-seq", t("views.seq.title"), el("span", { class: "shape" }, `B = ${R.B}`));
  g.sec.append(el("div", { class: "toolbar", role: "group", "aria-label": t("views.seq.group") }, range(R.B).map((b) =>
    el("button", { type: "button", class: "small", "aria-pressed": String(b === ui.selectedSeq), dataset: { seq: b },
      onclick: () => { ui.selectedSeq = b; renderResult(lastGood); afterRender(lastGood); } }, t("views.seq.button", { seq: b })))));
  return g;
}

// Shows the head selectedHead: at once, or (when the reply holds another head only) after asking for it.
export function openHead() {
  if (lastGood.heads && !lastGood.heads.includes(ui.selectedHead)) compute();
  else { renderResult(lastGood); afterRender(lastGood); }
}

// Small multiples: every head's weights, each a button that opens its head.
// Coloured from 0 to a largest weight (weight-scale.js: of any head with one
// colour scale, else the head's own; the legend says which), so that at 128
// tokens, where a peaked weight may be 0.1, it still shows; a pixel that
// stands for several cells takes their largest weight, so no peak is lost
// when a head is drawn smaller than n × m.
export const SMALL_MULTIPLE_MAX_PX = 120;
export function smallMultipleImage(s, ms, top, w, h) {
  const pal = PALETTES.seq.rgb, img = new ImageData(w, h);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) {
    const i0 = Math.floor((y * s.rows) / h), i1 = Math.max(i0 + 1, Math.floor(((y + 1) * s.rows) / h));
    const j0 = Math.floor((x * s.cols) / w), j1 = Math.max(j0 + 1, Math.floor(((x + 1) * s.cols) / w));
    let big = -1;
    for (let i = i0; i < i1; i++) for (let j = j0; j < j1; j++) {
      const p = i * s.cols + j;
      if (!(ms && ms.data[ms.off + p] === -Infinity)) big = Math.max(big, s.data[s.off + p]);
    }
    const col = big < 0 ? MASKED_RGB : pal[weightShade(big, top)];
    img.data.set([col[0], col[1], col[2], 255], 4 * (y * w + x));
  }
  return img;
}
export function headStrip(R) {
  const g = group("group-heads", t("views.heads.title"), el("span", { class: "shape" }, t("views.heads.choose")));
  const side = Math.max(48, Math.min(SMALL_MULTIPLE_MAX_PX, Math.floor(480 / Math.ceil(Math.sqrt(R.H)))));
  const heads = range(R.H).map((k) => [anyHead(R, "weights", k), mayMask(R) ? anyHead(R, "masked_scores", k) : null]);
  const readout = el("p", { class: "readout", id: "heads-readout", "aria-live": "polite" }, " ");
  const cur = [0, 0]; // the keyboard's cell, the same in every head
  const say = (k, i, j) => {
    const [s] = heads[k];
    readout.textContent = t("views.heads.readout", { head: k, name: stageName(R, "weights", k), query: R.ql[i], key: R.kl[j], value: exactText(s.data[s.off + i * s.cols + j], R.dtype) });
  };
  const wrap = el("div", { class: "heads", role: "group", "aria-label": t("views.heads.group") });
  heads.forEach(([s, ms], k) => {
    const w = Math.min(s.cols, side), hgt = Math.max(8, Math.round((side * s.rows) / s.cols)), h = Math.min(s.rows, hgt);
    const c = el("canvas", { width: w, height: h, "aria-hidden": "true", style: `width:${side}px;height:${hgt}px` });
    c.getContext("2d").putImageData(smallMultipleImage(s, ms, weightTop(R, k), w, h), 0, 0);
    const cursor = el("span", { class: "sm-cursor", hidden: true });
    const place = () => {
      Object.assign(cursor.style, { left: `${(cur[1] * side) / s.cols}px`, top: `${(cur[0] * hgt) / s.rows}px`,
        width: `${Math.max(3, side / s.cols)}px`, height: `${Math.max(3, hgt / s.rows)}px` });
    };
    const b = el("button", { type: "button", "aria-pressed": String(k === ui.selectedHead), dataset: { head: k },
      "aria-label": t("views.heads.button_label", { head: k }), "aria-describedby": "heads-readout",
      onclick: () => { ui.selectedHead = k; openHead(); } },
      el("span", { class: "sm-plot" },
        el("span", { class: "sm-x", "aria-hidden": "true" }, t("views.heads.keys", { last: s.cols - 1 })),
        el("span", { class: "sm-y", "aria-hidden": "true" }, t("views.heads.queries", { last: s.rows - 1 })),
        el("span", { class: "sm-canvas" }, c, cursor)), t("views.heads.button", { head: k }));
    c.addEventListener("mousemove", (ev) => {
      const r = c.getBoundingClientRect();
      const i = Math.min(s.rows - 1, Math.floor(((ev.clientY - r.top) / r.height) * s.rows));
      const j = Math.min(s.cols - 1, Math.floor(((ev.clientX - r.left) / r.width) * s.cols));
      if (i >= 0 && j >= 0) say(k, i, j);
    });
    b.addEventListener("focus", () => { cursor.hidden = false; place(); say(k, cur[0], cur[1]); });
    b.addEventListener("blur", () => { cursor.hidden = true; });
    b.addEventListener("keydown", (ev) => {
      const step = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] }[ev.key];
      if (!step) return;
      ev.preventDefault();
      cur[0] = Math.max(0, Math.min(s.rows - 1, cur[0] + step[0])); cur[1] = Math.max(0, Math.min(s.cols - 1, cur[1] + step[1]));
      place(); say(k, cur[0], cur[1]);
    });
    wrap.append(b);
  });
  const legend = el("div", { class: "legend", id: "heads-legend" }, ...weightLegend(R, range(R.H)),
    mayMask(R) ? [el("span", { class: "swatch masked" }), t("views.masked")] : null);
  g.sec.append(wrap, legend, readout,
    el("p", { class: "note" }, t("views.heads.note")));
  return g;
}


export function init() {
  for (const id of ["compare-kind", "compare-a", "compare-b"])
    $(id).addEventListener("change", () => {
      revealCompare = true;
      if (lastGood) { renderResult(lastGood); afterRender(lastGood); } else updateCompareControls(null);
    });
}
