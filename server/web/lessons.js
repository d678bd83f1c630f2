/*
 * lessons.js - the lesson presets and what each control of the form changes.
 */
import { decoding, editors, lastGood, ui } from "./state.js";
import { onLangChange } from "./locale.js";
import { msg, t } from "./words.js";
import { say } from "./page-words.js";
import { PRESETS } from "./presets.js";
import { writeControls } from "./controls.js";
import { $, el, range } from "./base.js";
import { shapeOf } from "./parse.js";
import { batchSize, concatWidth, direct, fitBiases, identity, mask, qkvDepth, queryLabels, renderMask, resizeMask, updateLabelNotes, updatePanelStates } from "./form.js";
import { changed, compute, setStatus } from "./request.js";
import { alibiSlopes, nested } from "./reply.js";
import { renderResult } from "./views.js";
import { answer } from "./hooks.js";

answer({ updatePresetState }); // request.js calls it after an edit, through hooks.js

export function loadPreset(key) {
  const p = PRESETS[key];
  const copy = (a) => JSON.parse(JSON.stringify(a));
  for (const k of ["x", "w_q", "w_k", "w_v"]) editors[k].setValue(copy(p[k]));
  writeControls({ num_heads: p.num_heads, tokens: p.tokens }); // every other control of controls.js at its default
  for (const id of ["use-mask", "use-padding", "use-w_o", "use-context", "use-bias", "use-state-dict"]) $(id).checked = false;
  $("batch").value = ""; $("source-x").checked = true;
  $("use-cache").checked = false; endDecode();
  Object.assign(mask, { cells: [], keep: [], kind: "bool", perSeq: false, perHead: false, seq: 0, head: 0 });
  mask.bad.clear();
  resizeMask();
  // the lesson's own W_o (lesson 002's), else the identity of the concatenation's width
  editors.w_o.setValue(p.w_o ? copy(p.w_o) : identity(concatWidth()));
  editors.context.setValue(copy(p.x));
  showControls();
  ui.presetKey = key;
  document.querySelectorAll("#presets button").forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.preset === key)));
  say($("preset-note"), `lessons.${key}.note`);
  ui.selectedHead = 0; ui.selectedSeq = 0;
  updateLabelNotes(); updatePanelStates();
  compute();
}

// Which editors and panels apply: Q, K, V given directly take the place of X
// and every weight; a state_dict takes the place of W_q, W_k, W_v, biases, W_o.
export function showControls() {
  const d = direct(), sd = $("use-state-dict").checked;
  $("editors").hidden = d; $("qkv-editors").hidden = !d;
  for (const id of ["weights-panel", "wo-panel", "context-panel"]) $(id).hidden = d;
  for (const id of ["num_heads", "num_kv_heads"]) $(id).disabled = d;
  for (const k of ["w_q", "w_k", "w_v"]) editors[k].root.hidden = sd;
  $("state-dict-area").hidden = !sd;
  $("bias-slot").hidden = !$("use-bias").checked || sd;
  editors.b_o.root.hidden = !$("use-w_o").checked;
  $("alibi-slopes-field").hidden = $("alibi").value !== "slopes";
  $("cache-slot").hidden = !$("use-cache").checked;
  for (const id of ["rope_base", "rope_dims"]) $(id).disabled = $("rope").value === "off";
  $("positional_encoding").disabled = d;
  $("decode-next").disabled = !decoding() || ui.decode.t >= ui.decode.x.length - 1 || d;
  $("decode-start").disabled = d; // decoding projects X's rows
}

// A lesson stays marked only while X, the weights and the heads are its
// own; after an edit the note says where the numbers came from.  The token
// labels are words, not numbers: a student naming the rows ("el, gato,
// duerme") still has the lesson's numbers.
export function updatePresetState() {
  if (!ui.presetKey) return;
  const p = PRESETS[ui.presetKey];
  const same = ["x", "w_q", "w_k", "w_v"].every((k) => JSON.stringify(editors[k].value) === JSON.stringify(p[k]))
    && Number($("num_heads").value) === p.num_heads;
  if (same) return;
  document.querySelectorAll("#presets button").forEach((b) => b.setAttribute("aria-pressed", "false"));
  say($("preset-note"), "lessons.edited", { lesson: msg(`lessons.${ui.presetKey}.name`) });
  ui.presetKey = null;
}



// Regroups the heads of a weight (or bias) from `from` heads to `to`: new
// head g is old head ⌊g·from/to⌋, so going to fewer key/value heads keeps
// the first ones' numbers and going back repeats them.
// byRows: a matrix whose heads are groups of rows (PyTorch's layout, a bias
// stack); otherwise groups of columns.  Stacks and vectors regroup whole.
export function regroup(w, from, to, byRows) {
  const pick = (g) => Math.floor((g * from) / to);
  if (!Array.isArray(w) || from === to) return w;
  const parts = (len) => range(to).flatMap((g) => range(len / from).map((t) => pick(g) * (len / from) + t));
  if (!Array.isArray(w[0])) return parts(w.length).map((t) => w[t]); // a vector
  if (Array.isArray(w[0][0]) || byRows) return parts(w.length).map((t) => JSON.parse(JSON.stringify(w[t])));
  return w.map((r) => parts(r.length).map((t) => r[t]));
}
export let kvBefore = null; // the key/value heads W_k and W_v were last fitted to
// Switching the layout shows the same weights transposed: the numbers stay.
// Ticking the state_dict starts from the weights on show, as PyTorch stores them.
export function stateDictText() {
  const torch = $("layout").value === "torch", T = (m) => m[0].map((_, j) => m.map((r) => r[j]));
  const asTorch = (k) => { const w = editors[k].value; if (editors[k].gridShape() !== "2d") throw new TypeError(k); return torch ? w : T(w); };
  const d = { in_proj_weight: [...asTorch("w_q"), ...asTorch("w_k"), ...asTorch("w_v")] };
  if ($("use-bias").checked) d.in_proj_bias = ["b_q", "b_k", "b_v"].flatMap((k) => editors[k].value.flat());
  if ($("use-w_o").checked) {
    d["out_proj.weight"] = asTorch("w_o");
    if ($("use-bias").checked) d["out_proj.bias"] = editors.b_o.value.flat();
  }
  return `{${Object.entries(d).map(([k, v]) => `"${k}": ${JSON.stringify(v)}`).join(",\n ")}}`;
}
// Q, K and V given directly start as the ones on show (every sequence of a
// batch); the batch size follows the inputs in use.
// A batch of B sequences: a new one is the one before it with its rows
// rotated (X and the context; with Q, K and V given, each head's rows).
export const rotateRows = (mat) => [...mat.slice(1), mat[0]].map((r) => r.slice());

// Decoding: X's rows one at a time, causal, each step sending the cache the
// step before returned (k_cache, v_cache) and one new row.
export function endDecode() { ui.decode = null; say($("decode-state"), null); }
export function decodeStep() {
  const t = ui.decode.t;
  editors.x.setValue([ui.decode.x[t].slice()]);
  $("tokens").value = ui.decode.labels[t];
  resizeMask();
  say($("decode-state"), t === 0 ? "lessons.decode.first" : "lessons.decode.next", { t: String(t), n: String(ui.decode.x.length), last: String(t - 1) });
  showControls(); updatePanelStates();
  compute();
}
export let resizeTimer = null;


// The lesson buttons, their titles in the page's language, and what redraws
// the cards without a request (the one-scale box, a new language).
function initPresets() {
  $("one-scale").addEventListener("change", () => { if (lastGood) renderResult(lastGood); });
  for (const key of Object.keys(PRESETS)) {
    $("presets").append(el("button", { type: "button", "aria-pressed": "false", dataset: { preset: key },
      onclick: () => loadPreset(key) }));
  }
  // each lesson's title, in the page's language
  const titles = () => document.querySelectorAll("#presets button[data-preset]")
    .forEach((b) => { b.textContent = t(`lessons.${b.dataset.preset}.title`); });
  titles();
  // a new language redraws every word from the numbers on show: no request
  onLangChange(() => { titles(); updatePanelStates(); if (lastGood) renderResult(lastGood); });
}

// The edits of W_o, the scale, the tokens, the masks, the positions and
// the key/value heads (each one sends the request again).
function initEdits() {
  $("wo-identity").addEventListener("click", () => {
    editors.w_o.setValue(identity(concatWidth()));
    $("use-w_o").checked = true;
    changed();
  });
  $("use-w_o").addEventListener("change", () => {
    // a W_o that does not fit the concatenation starts as its identity
    const w = editors.w_o.value, k = concatWidth();
    if ($("use-w_o").checked && (!Array.isArray(w) || w.length !== k)) editors.w_o.setValue(identity(k));
    changed();
  });
  for (const id of ["num_heads", "scale", "tokens", "context_tokens"])
    $(id).addEventListener("input", () => { if (id.endsWith("tokens")) renderMask(); changed(); });
  for (const id of ["dtype", "causal"]) $(id).addEventListener("change", () => changed());
  for (const id of ["use-mask", "use-padding", "use-context"])
    $(id).addEventListener("change", () => { renderMask(); changed(id === "use-context" ? undefined : null); });
  for (const id of ["positions", "context_positions", "window", "alibi_slopes", "state_dict"])
    $(id).addEventListener("input", () => changed(null));
  $("use-w_o").addEventListener("change", () => { if ($("use-bias").checked) fitBiases(); showControls(); });
  $("num_kv_heads").addEventListener("focus", () => { kvBefore = Number($("num_kv_heads").value) || Number($("num_heads").value) || 1; });
  $("num_kv_heads").addEventListener("input", () => {
    const H = Number($("num_heads").value) || 1, to = Number($("num_kv_heads").value) || H;
    const from = kvBefore || H;
    if (Number.isInteger(to) && to >= 1 && H % to === 0 && from !== to) {
      const torch = $("layout").value === "torch";
      for (const k of ["w_k", "w_v"]) editors[k].setValue(regroup(editors[k].value, from, to, torch));
      for (const k of ["b_k", "b_v"]) if (Array.isArray(editors[k].value)) editors[k].setValue(regroup(editors[k].value, from, to, true));
      kvBefore = to;
    }
    changed(null);
  });
}

// The layout of the weights, their biases and state_dict, ALiBi, and
// where Q, K and V come from.
function initWeights() {
  $("layout").addEventListener("change", () => {
    const T = (m) => m[0].map((_, j) => m.map((r) => r[j]));
    for (const k of ["w_q", "w_k", "w_v", "w_o"]) {
      const w = editors[k].gridShape();
      if (w === "2d") editors[k].setValue(T(editors[k].value));
      else if (w === "3d") editors[k].setValue(editors[k].value.map(T));
    }
    changed(null);
  });
  $("use-bias").addEventListener("change", () => { if ($("use-bias").checked) fitBiases(); showControls(); changed(null); });
  $("use-state-dict").addEventListener("change", () => {
    if ($("use-state-dict").checked && $("state_dict").value.trim() === "") {
      try { $("state_dict").value = stateDictText(); } catch { /* weights PyTorch cannot hold in one in_proj_weight */ }
    }
    showControls(); changed(null);
  });
  $("alibi").addEventListener("change", () => {
    if ($("alibi").value === "slopes" && $("alibi_slopes").value.trim() === "")
      $("alibi_slopes").value = alibiSlopes(lastGood ? lastGood.H : Number($("num_heads").value) || 1).join(", ");
    showControls(); changed(null);
  });
  for (const id of ["source-x", "source-qkv"]) $(id).addEventListener("change", () => {
    if (direct() && lastGood && lastGood.T.x && !lastGood.heads) for (const k of ["q", "k", "v"]) editors[k].setValue(nested(lastGood, k, true));
    $("batch").value = direct() ? (qkvDepth(editors.q) === 4 ? editors.q.value.length : "")
      : editors.x.gridShape() === "3d" ? editors.x.value.length : "";
    showControls(); renderMask(); changed();
  });
}

// A batch of sequences, rotary positions and a cache of keys and values.
function initBatchAndCache() {
  $("batch").addEventListener("input", () => {
    const B = batchSize();
    const eds = direct() ? [editors.q, editors.k, editors.v] : [editors.x, editors.context];
    for (const ed of eds) {
      if (!Array.isArray(ed.value)) continue;
      const batched = direct() ? qkvDepth(ed) === 4 : ed.gridShape() === "3d";
      const seqs = batched ? ed.value : [ed.value];
      if (!B) { ed.setValue(seqs[0]); continue; }
      while (seqs.length < B) { const last = seqs[seqs.length - 1]; seqs.push(direct() ? last.map(rotateRows) : rotateRows(last)); }
      ed.setValue(seqs.slice(0, B));
    }
    changed();
  });
  for (const id of ["rope_base", "rope_dims"]) $(id).addEventListener("input", () => changed(null));
  for (const id of ["rope", "positional_encoding"]) $(id).addEventListener("change", () => { showControls(); changed(null); });
  $("use-cache").addEventListener("change", () => {
    // a cache starts as this reply's keys and values, unless the one already typed fits them
    // (the same rank, key/value heads and widths: not one left from another lesson)
    const fits = (ed, stage) => Array.isArray(ed.value) && lastGood && lastGood.T[stage]
      && JSON.stringify(shapeOf(ed.value).dims.filter((_, a, d) => a !== d.length - 2))
         === JSON.stringify(lastGood.T[stage].shape.filter((_, a, d) => a !== d.length - 2));
    if ($("use-cache").checked && lastGood && !lastGood.heads && !(fits(editors.past_k, "k") && fits(editors.past_v, "v"))) {
      const kc = lastGood.T.k_cache ? "k_cache" : lastGood.T.k_rope ? "k_rope" : "k";
      // every sequence's, in a batch
      editors.past_k.setValue(nested(lastGood, kc, true)); editors.past_v.setValue(nested(lastGood, lastGood.T.v_cache ? "v_cache" : "v", true));
    }
    showControls(); changed(); // the mask and padding cover the cached keys too
  });
}

// Decoding X a row at a time, sending the form, and a window resized.
function initDecoding() {
  $("decode-start").addEventListener("click", () => {
    const x = editors.x.value;
    if (editors.x.gridShape() !== "2d" || x.length < 2) { setStatus(msg("lessons.decode.short"), "bad"); return; }
    ui.decode = { x: x.map((r) => r.slice()), labels: queryLabels(x.length), t: 0 };
    $("causal").checked = true; $("use-cache").checked = false; $("positions").value = "";
    ui.presetKey = null; say($("preset-note"), "lessons.decode.note");
    document.querySelectorAll("#presets button").forEach((b) => b.setAttribute("aria-pressed", "false"));
    decodeStep();
  });
  $("decode-next").addEventListener("click", () => {
    if (!decoding() || !lastGood || !lastGood.T.k_cache) return;
    editors.past_k.setValue(nested(lastGood, "k_cache")); editors.past_v.setValue(nested(lastGood, "v_cache"));
    $("use-cache").checked = true;
    ui.decode.t++;
    decodeStep();
  });
  $("inputs").addEventListener("submit", (ev) => { ev.preventDefault(); compute(); });
  window.addEventListener("resize", () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => { if (lastGood) renderResult(lastGood); }, 150);
  });
}

export function init() {
  initPresets();
  initEdits();
  initWeights();
  initBatchAndCache();
  initDecoding();
}
