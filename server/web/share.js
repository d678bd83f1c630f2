/*
 * share.js - share and export: the link that restores the page, .npy, CSV,
 * JSON, PNG, SVG, curl and the scripts.
 */
import { editors, lastGood, ui } from "./state.js";
import { $, ALL_STAGES, API, el, range } from "./base.js";
import { STATE_DICT_KEYS, concatWidth, identity, mask, maskForm, resizeMask, updateLabelNotes, updatePanelStates } from "./form.js";
import { compute, setStatus } from "./request.js";
import { slice } from "./reply.js";
import { PER_HEAD_STAGES } from "./fields.js";
import { writeControls } from "./controls.js";
import { exact, fmt } from "./format.js";
import { MASKED_RGB, PALETTES, ramp } from "./colour.js";
import { shorten, textWidth } from "./matrix.js";
import { views } from "./cards.js";
import { STAGE_WORDS } from "./lesson-names.js";
import { afterRenderHooks, answer, shortLink } from "./hooks.js";
import { endDecode, showControls } from "./lessons.js";
import { biasOf, projection, weightColumn } from "./explain.js";
import { modelViewDrawing } from "./head-view.js";
import { t } from "./words.js";

answer({ exportOptions }); // compare.js calls it through hooks.js once its panel is drawn

// The body without what the page adds for itself.
export function shareBody(R) {
  const { return: _ret, heads: _heads, ...b } = R.body; // the open head travels apart

  return b;
}

export let stateSeq = 0;

export function applyState(state) {
  const b = state.body;
  for (const k of ["x", "w_q", "w_k", "w_v", "q", "k", "v", "b_q", "b_k", "b_v", "b_o"]) if (b[k]) editors[k].setValue(b[k]);
  $("source-qkv").checked = !!b.q; $("source-x").checked = !b.q;
  $("use-bias").checked = !!b.b_q;
  const sd = Object.values(STATE_DICT_KEYS).filter((k) => b[k]);
  $("use-state-dict").checked = sd.length > 0;
  $("state_dict").value = sd.length ? `{${sd.map((k) => `"${k}": ${JSON.stringify(b[k])}`).join(",\n ")}}` : "";
  $("batch").value = b.x && Array.isArray(b.x[0][0]) ? b.x.length : b.q && Array.isArray(b.q[0][0][0]) ? b.q.length : "";
  $("use-cache").checked = !!b.past_k;
  for (const k of ["past_k", "past_v"]) if (b[k]) editors[k].setValue(b[k]);
  endDecode();
  writeControls(b); // every drawn control, as its row of controls.js writes it
  $("use-context").checked = !!b.context;
  editors.context.setValue(b.context || b.x || [[0]]);
  $("use-w_o").checked = !!b.w_o;
  editors.w_o.setValue(b.w_o || identity(concatWidth()));
  $("use-mask").checked = !!b.mask;
  $("use-padding").checked = !!b.key_padding;
  const batched = !!((b.x && Array.isArray(b.x[0][0])) || (b.q && Array.isArray(b.q[0][0][0])));
  const form = b.mask ? maskForm(b.mask, batched) : { perSeq: false, perHead: false, kind: "bool" };
  // a mask per head of a batch is sent as (B, h, n, m): read back per sequence and head
  const M = !b.mask ? [] : form.perSeq && form.perHead ? b.mask : form.perSeq ? b.mask.map((s) => [s]) : form.perHead ? [b.mask] : [[b.mask]];
  Object.assign(mask, { cells: M, seq: 0, head: 0, ...form });
  mask.bad.clear();
  const pads = b.key_padding ? (Array.isArray(b.key_padding[0]) ? b.key_padding : [b.key_padding]) : [];
  mask.keep = pads.map((r) => r.map((p) => !p));
  showControls();
  resizeMask();
  ui.selectedHead = state.head || 0; ui.selectedSeq = state.seq || 0;
  if (state.compare) {
    $("compare-kind").value = state.compare[0];
    for (const [k, id] of [[1, "compare-a"], [2, "compare-b"]]) $(id).replaceChildren(el("option", { value: state.compare[k] }, ""));
    $("compare-a").value = state.compare[1]; $("compare-b").value = state.compare[2];
  }
  ui.presetKey = null;
  $("preset-note").textContent = t("share.restored");
  updateLabelNotes(); updatePanelStates();
  compute();
}

export function download(name, type, data) {
  const a = el("a", { href: URL.createObjectURL(new Blob([data], { type })), download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

// NumPy's .npy format, version 1.0: magic, header length, a Python dict
// literal padded to a multiple of 64 bytes, then the little-endian numbers.
export function npyBytes(shape, data) {
  const descr = data instanceof Float32Array ? "<f4" : "<f8";
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape.join(", ")}${shape.length === 1 ? "," : ""}), }`;
  header += " ".repeat((64 - ((10 + header.length + 1) % 64)) % 64) + "\n";
  const out = new Uint8Array(10 + header.length + data.byteLength);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, header.length & 255, header.length >> 8]);
  out.set(new TextEncoder().encode(header), 10);
  out.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), 10 + header.length);
  return out;
}

// The stages of this result, and the compare panel's differences when shown.
export function exportOptions(R) {
  const keep = $("export-stage").value;
  const diffs = ["cmp-weights", "cmp-output"].filter((id) => views[id] && views[id].rows);
  $("export-stage").replaceChildren(...["x", ...ALL_STAGES].filter((s) => R.T[s]).map((s) => el("option", { value: s }, STAGE_WORDS.includes(s) ? t(`views.stage.${s}`) : s)),
    ...diffs.map((id) => el("option", { value: id }, views[id].title)),
    el("option", { value: "head-view" }, R.H > 1 ? t("share.option.head_view.head", { head: ui.selectedHead }) : t("share.option.head_view")),
    ...(R.H > 1 ? [el("option", { value: "model-view" }, t("share.option.model_view"))] : []));
  if ([...$("export-stage").options].some((o) => o.value === keep)) $("export-stage").value = keep;
  exportButtons();
}
// The head view and the model view are pictures: PNG and SVG only.
export const DRAWINGS = ["head-view", "model-view"];
export function exportButtons() {
  const picture = DRAWINGS.includes($("export-stage").value);
  document.querySelectorAll('[data-export="csv"], [data-export="npy"], [data-export="json"]').forEach((b) => { b.disabled = picture; });
}

export function exportStage(format) {
  const R = lastGood, stage = $("export-stage").value || "weights";
  const scale = exportScale(), atScale = scale > 1 ? `@${scale}x` : "";
  if (DRAWINGS.includes(stage)) {
    const d = stage === "head-view" ? views[`h${ui.selectedHead}-lines`].drawing() : modelViewDrawing(R);
    const name = (stage === "head-view" ? `head_view_head${ui.selectedHead}` : "model_view") + (R.B ? `_seq${ui.selectedSeq}` : "") + atScale;
    if (format === "svg") return download(`${name}.svg`, "image/svg+xml", heatmapSvg(frame(d), scale));
    if (format === "png") return heatmapPng(frame(d), scale).then((blob) => download(`${name}.png`, "image/png", blob));
    return undefined;
  }
  const diff = stage.startsWith("cmp-"); // a difference shown by the compare panel (float64)
  const t = diff ? { shape: views[stage].shape, data: views[stage].data } : R.T[stage];
  const value = (v) => (v === -Infinity ? null : v);
  if (format === "npy") return download(`${stage}.npy`, "application/octet-stream", npyBytes(t.shape, t.data));
  if (format === "json") {
    const nest = (off, dims) => (dims.length === 1 ? Array.from(t.data.subarray(off, off + dims[0]), value)
      : range(dims[0]).map((i) => nest(off + i * dims.slice(1).reduce((a, b) => a * b, 1), dims.slice(1))));
    return download(`${stage}.json`, "application/json",
      JSON.stringify({ stage, dtype: stage === "x" || diff ? "float64" : R.dtype, shape: t.shape, data: nest(0, t.shape) }));
  }
  // CSV and images: one matrix (the open head's slice of a per-head stage), labelled
  const view = diff ? views[stage] : Object.values(views).find((v) => v.stage === stage);
  const suffix0 = t.shape.length >= 3 && PER_HEAD_STAGES.includes(stage) ? `_head${ui.selectedHead}` : "";
  if (format === "svg") return download(`${stage}${suffix0}${atScale}.svg`, "image/svg+xml", heatmapSvg(frame(heatmap(view)), scale));
  if (format === "png") return heatmapPng(frame(heatmap(view)), scale).then((blob) => download(`${stage}${suffix0}${atScale}.png`, "image/png", blob));
  const s = diff ? { rows: view.rows, cols: view.cols, data: view.data, off: 0 } : slice(R, stage, ui.selectedHead);
  const quote = (x) => (/[",\n]/.test(x) ? `"${x.replace(/"/g, '""')}"` : x);
  const lines = [["", ...view.colLabels].map(quote).join(",")];
  for (let i = 0; i < s.rows; i++) {
    const row = range(s.cols).map((j) => { const v = s.data[s.off + i * s.cols + j]; return v === -Infinity ? "-inf" : exact(v, diff ? "float64" : R.dtype); });
    lines.push([quote(view.rowLabels[i]), ...row].join(","));
  }
  const suffix = t.shape.length === 3 ? `_head${ui.selectedHead}` : "";
  return download(`${stage}${suffix}.csv`, "text/csv", lines.join("\n") + "\n");
}


// One heatmap as shapes, drawn alike into SVG and PNG: the labels, one
// rectangle per cell in the card's colours (masked cells grey), and each
// number when the cells are wide enough for all of them; frame() adds its
// title and legend.
export function heatmap(view) {
  const R = lastGood, perHead = PER_HEAD_STAGES.includes(view.stage) && R.H > 1;
  const pal = PALETTES[view.kind], mono = "12px DejaVu Sans Mono, monospace", label = "11px DejaVu Sans, sans-serif";
  const texts = [], rects = [];
  let chars = 1;
  if (view.rows * view.cols <= 4096) for (let k = 0; k < view.rows * view.cols; k++) chars = Math.max(chars, fmt(view.data[view.off + k]).length);
  const numbers = view.rows * view.cols <= 4096 && view.cols <= 32;
  const cw = numbers ? Math.ceil(chars * textWidth("0", mono) + 10) : Math.max(2, Math.min(24, Math.floor(960 / view.cols)));
  const ch = numbers ? 20 : Math.max(2, Math.min(24, Math.floor(960 / view.rows)));
  const left = Math.ceil(Math.min(120, Math.max(...view.rowLabels.map((r) => textWidth(shorten(r, 12), label)))) + 10), top = 16;
  const every = numbers || cw >= 24 ? 1 : Math.ceil(24 / cw);
  for (let j = 0; j < view.cols; j += every)
    texts.push({ x: left + (j + 0.5) * cw, y: top - 5, text: shorten(view.colLabels[j], 10), font: label, anchor: "middle", fill: "#545c6b" });
  for (let i = 0; i < view.rows; i += (numbers || ch >= 12 ? 1 : Math.ceil(12 / ch)))
    texts.push({ x: left - 4, y: top + (i + 0.5) * ch + 4, text: shorten(view.rowLabels[i], 12), font: label, anchor: "end", fill: "#545c6b" });
  for (let i = 0; i < view.rows; i++) for (let j = 0; j < view.cols; j++) {
    const v = view.get(i, j), masked = view.isMasked(i, j), k = view.color(v);
    const rgb = masked ? MASKED_RGB : pal.rgb[k];
    rects.push({ x: left + j * cw, y: top + i * ch, w: cw, h: ch, fill: `rgb(${rgb.join(",")})`, row: i, col: j, value: exact(v, view.dtype) });
    if (numbers) texts.push({ x: left + (j + 1) * cw - 4, y: top + (i + 0.5) * ch + 4, text: masked && view.stage === "weights" ? "·" : fmt(v),
                              font: mono, anchor: "end", fill: masked ? "#000" : pal.ink[k] });
  }
  const what = { card: view.title, rows: view.rows, cols: view.cols, head: ui.selectedHead, seq: ui.selectedSeq };
  const title = t(`share.export.title${perHead ? ".head" : ""}${R.B ? ".seq" : ""}`, what);
  const seq = view.kind === "seq";
  return { width: left + view.cols * cw, height: top + view.rows * ch, rects, texts, title,
    subtitle: view.lessonName ? view.lessonName.textContent : null,
    legend: { lo: seq ? 0 : -view.max, hi: seq ? 1 : view.max, colours: [0, 64, 128, 192, 255].map((k) => pal.css[k]), note: view.scaleNote || null } };
}

// A picture for a slide: the drawing with its title (wrapped to the
// picture's width, never cut) above it and its legend (a colour bar from lo
// to hi and what the scale is) under it, all inside the picture.
export const FRAME_MIN_W = 480, FRAME_PAD = 12, TITLE_FONT = "bold 15px DejaVu Sans, sans-serif";
export const NOTE_FONT = "12px DejaVu Sans, sans-serif", LEGEND_BAR_W = 200, LEGEND_STEPS = 40;
export function wrapText(text, font, width) {
  const lines = [];
  let line = "";
  for (const word of String(text).split(/\s+/)) {
    const next = line ? `${line} ${word}` : word;
    if (line && textWidth(next, font) > width) { lines.push(line); line = word; } else line = next;
  }
  if (line) lines.push(line);
  return lines;
}
export function frame(d) {
  const pad = FRAME_PAD, W = Math.max(FRAME_MIN_W, Math.ceil(d.width) + 2 * pad), inner = W - 2 * pad;
  const texts = [], rects = [];
  let y = pad;
  for (const line of wrapText(d.title, TITLE_FONT, inner)) { y += 17; texts.push({ x: pad, y, text: line, font: TITLE_FONT, anchor: "start", fill: "#1d2330" }); }
  for (const line of d.subtitle ? wrapText(d.subtitle, NOTE_FONT, inner) : []) { y += 16; texts.push({ x: pad, y, text: line, font: NOTE_FONT, anchor: "start", fill: "#545c6b" }); }
  y += 12;
  const dx = Math.round((W - d.width) / 2), dy = y;
  const at = (o, keys) => { const c = { ...o }; for (const [k, by] of keys) c[k] = o[k] + by; return c; };
  rects.push(...d.rects.map((r) => at(r, [["x", dx], ["y", dy]])));
  texts.push(...d.texts.map((tx) => at(tx, [["x", dx], ["y", dy]])));
  const lines = (d.lines || []).map((l) => at(l, [["x1", dx], ["x2", dx], ["y1", dy], ["y2", dy]]));
  const images = (d.images || []).map((im) => at(im, [["x", dx], ["y", dy]]));
  y = dy + d.height + 16;
  if (d.legend) {
    const { lo, hi, note } = d.legend, colours = d.legend.colours || [0, 64, 128, 192, 255].map((k) => PALETTES.seq.css[k]);
    const rgb = ramp(colours.map((c) => `#${c.match(/\d+/g).map((v) => Number(v).toString(16).padStart(2, "0")).join("")}`));
    const loText = fmt(lo), hiText = hi === null ? t("views.scale.its_largest") : fmt(hi), x0 = pad + Math.ceil(textWidth(loText, NOTE_FONT)) + 6;
    texts.push({ x: pad, y: y + 10, text: loText, font: NOTE_FONT, anchor: "start", fill: "#1d2330" });
    for (let k = 0; k < LEGEND_STEPS; k++) {
      const c = rgb[Math.round((k / (LEGEND_STEPS - 1)) * 255)];
      rects.push({ x: x0 + (k * LEGEND_BAR_W) / LEGEND_STEPS, y, w: LEGEND_BAR_W / LEGEND_STEPS + 0.5, h: 12, fill: `rgb(${c.join(",")})` });
    }
    texts.push({ x: x0 + LEGEND_BAR_W + 6, y: y + 10, text: hiText, font: NOTE_FONT, anchor: "start", fill: "#1d2330" });
    y += 12;
    for (const line of note ? wrapText(note, NOTE_FONT, inner) : []) { y += 16; texts.push({ x: pad, y, text: line, font: NOTE_FONT, anchor: "start", fill: "#545c6b" }); }
  }
  return { width: W, height: Math.ceil(y + pad), rects, texts, lines, images };
}

// The sizes a picture is exported at: its CSS pixels times 1, 2 or 3 (a
// slide at 1920 px takes 2× or 3× of a 600 px picture without blur).
export const EXPORT_SCALES = [1, 2, 3];
export const exportScale = () => Number(($("export-scale") || { value: 1 }).value) || 1;

// A drawing (a heatmap, the head view, the model view) as SVG: its cells
// carry their exact values (data-value; data-head in the model view), its
// lines theirs (data-w); a big heatmap of the model view is one pixel image;
// the words are <text>.  At scale k its width and height are k times its
// viewBox.
export function heatmapSvg(hm, scale = 1) {
  const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/"/g, "&quot;");
  const fontOf = (f) => { const m = /^(bold )?(\d+)px (.*)$/.exec(f); return `font-size="${m[2]}"${m[1] ? ' font-weight="bold"' : ""} font-family="${esc(m[3])}"`; };
  const cell = (r) => (r.row === undefined ? "" : `${r.head === undefined ? "" : ` data-head="${r.head}"`} data-row="${r.row}" data-col="${r.col}" data-value="${r.value}"`);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${hm.width * scale}" height="${hm.height * scale}" viewBox="0 0 ${hm.width} ${hm.height}">\n`
    + `<rect width="100%" height="100%" fill="#fff"/>\n`
    + hm.rects.map((r) => `<rect x="${r.x}" y="${r.y}" width="${r.w}" height="${r.h}" fill="${r.fill}"${cell(r)}/>`).join("\n")
    + (hm.images || []).map((im) => `\n<image x="${im.x}" y="${im.y}" width="${im.w}" height="${im.h}" preserveAspectRatio="none" style="image-rendering:pixelated" href="${im.canvas.toDataURL("image/png")}"${im.head === undefined ? "" : ` data-head="${im.head}"`}/>`).join("")
    + (hm.lines || []).map((l) => `\n<line x1="${l.x1}" y1="${l.y1}" x2="${l.x2}" y2="${l.y2}" stroke="${l.stroke}" stroke-width="${l.width}" stroke-opacity="${l.opacity}" data-q="${l.q}" data-k="${l.k}" data-w="${l.w}"/>`).join("")
    + "\n" + hm.texts.map((tx) => `<text x="${tx.x}" y="${tx.y}" text-anchor="${tx.anchor}" fill="${tx.fill}" ${fontOf(tx.font)}>${esc(tx.text)}</text>`).join("\n")
    + "\n</svg>\n";
}
export function heatmapPng(hm, scale = 1) {
  const c = el("canvas", { width: hm.width * scale, height: hm.height * scale }), g = c.getContext("2d");
  g.scale(scale, scale);
  g.fillStyle = "#fff"; g.fillRect(0, 0, hm.width, hm.height);
  for (const r of hm.rects) { g.fillStyle = r.fill; g.fillRect(r.x, r.y, r.w, r.h); }
  g.imageSmoothingEnabled = false;
  for (const im of hm.images || []) g.drawImage(im.canvas, im.x, im.y, im.w, im.h);
  for (const l of hm.lines || []) {
    g.globalAlpha = Number(l.opacity); g.strokeStyle = l.stroke; g.lineWidth = Number(l.width);
    g.beginPath(); g.moveTo(l.x1, l.y1); g.lineTo(l.x2, l.y2); g.stroke();
  }
  g.globalAlpha = 1;
  for (const tx of hm.texts) {
    g.font = tx.font; g.fillStyle = tx.fill; g.textAlign = tx.anchor === "middle" ? "center" : tx.anchor === "end" ? "right" : "left";
    g.fillText(tx.text, tx.x, tx.y);
  }
  return new Promise((resolve) => c.toBlob(resolve, "image/png"));
}

export function curlCommand(R) {
  const url = new URL(API, location.href).href;
  const q = (s) => `'${s.replace(/'/g, "'\\''")}'`;
  return `curl -s ${q(url)} -H 'Content-Type: application/json' -d ${q(JSON.stringify(shareBody(R)))}`;
}

// A standalone script, in the lessons' conventions (row vectors, x @ W), that
// computes every stage from the same numbers and prints the weights and the
// output as JSON.  It carries a leading batch axis B throughout (1 without a
// batch) and writes only the steps the request uses.
// words-check: off (a Python script: code and its comments, for Python, not the page)
// A JSON value written as a Python literal, and as a NumPy array of dtype.
const pyText = (a) => JSON.stringify(a).replace(/true/g, "True").replace(/false/g, "False");
const npArray = (a) => `np.array(${pyText(a)}, dtype=dtype)`;

export function numpyScript(R) {
  const b = R.body, rope = b.rope === true ? {} : b.rope;
  const L = scriptHeader(R);
  scriptFunctions(b, rope, L);
  if (b.q) {
    L.push(`q = ${npArray(b.q)}  # (h, n, d_k)`, `k = ${npArray(b.k)}  # (h_kv, m, d_k)`, `v = ${npArray(b.v)}  # (h_kv, m, d_v)`,
           `batched = q.ndim == 4`, "q, k, v = (t if batched else t[None] for t in (q, k, v))  # a leading batch axis B");
  } else {
    scriptProjections(R, L);
  }
  scriptKeys(R, rope, L);
  scriptScores(R, L);
  scriptSoftmax(b, L);
  return L.join("\n") + "\n";
}

// The script's first lines: its imports, the dtype, the heads and the positions.
function scriptHeader(R) {
  return [
    "#!/usr/bin/python3",
    '"""Reproduces the attention visualizer\'s numbers with NumPy (row vectors, x @ W)."""',
    "import json",
    "",
    "import numpy as np",
    "",
    `dtype = np.${R.dtype}`,
    `num_heads = ${R.H}`,
    `num_kv_heads = ${R.Hkv === R.H ? "num_heads" : R.Hkv}  # key/value heads`,
    `p_q = np.array(${pyText(R.pq)})  # the queries' positions`,
    `p_k = np.array(${pyText(R.pk)})  # the keys' positions${R.m0 ? `: ${R.m0} cached, then this request's` : ""}`,
    `m0 = ${R.m0}  # keys already in the cache`,
  ];
}

// The functions the script needs: a sinusoidal encoding, RoPE.
function scriptFunctions(b, rope, L) {
  if (b.positional_encoding) L.push("", "",
    "def sinusoidal(pos, d):",
    '    """"Attention Is All You Need": sin(pos / 10000^(2i/d)) at component 2i, cos at 2i + 1."""',
    "    c = np.arange(d)",
    "    angle = pos[:, None] / 10000.0 ** ((c - c % 2) / d)",
    "    return np.where(c % 2 == 0, np.sin(angle), np.cos(angle)).astype(dtype)", "");
  if (rope) L.push("", "",
    "def rope(t, pos, base, dims, style):",
    '    """RoFormer: the first dims components of every head vector turn in pairs by pos·θ_i, θ_i = base^(−2i/dims)."""',
    "    angle = pos[:, None] * base ** (-2.0 * np.arange(dims // 2) / dims)  # (n, dims/2)",
    "    cos, sin = np.cos(angle).astype(dtype), np.sin(angle).astype(dtype)",
    "    first, second = (np.s_[..., : dims // 2], np.s_[..., dims // 2 : dims]) if style == \"half\" else (np.s_[..., 0:dims:2], np.s_[..., 1:dims:2])",
    "    out = t.copy()",
    "    out[first] = t[first] * cos - t[second] * sin",
    "    out[second] = t[second] * cos + t[first] * sin",
    "    return out", "");
}

// X (and the context) projected to every head's Q, K and V, from the
// lessons' weights or PyTorch's.
function scriptProjections(R, L) {
  const b = R.body, biased = b.b_q || b.in_proj_bias;
  L.push(`x = ${npArray(b.x)}`, b.context ? `context = ${npArray(b.context)}` : "context = x",
         "batched = x.ndim == 3", "xs, cs = (t if batched else t[None] for t in (x, context))  # (B, n, d), (B, m, d_c)");
  if (b.positional_encoding) L.push("xs = xs + sinusoidal(p_q, xs.shape[-1])  # X + PE",
    b.context ? "cs = cs + sinusoidal(p_k[m0:], cs.shape[-1])" : "cs = xs");
  scriptWeights(b, L);
  L.push("", "", "def heads(w, k):", '    """(d, k·d_k) split into k heads by columns -> (k, d, d_k); a per-head stack stays."""',
         "    return w if w.ndim == 3 else w.reshape(w.shape[0], k, -1).transpose(1, 0, 2)", "");
  if (biased) L.push("", "def bias(b, k):", '    """k·d_k numbers (or k × d_k) -> (k, 1, d_k), added to every row of its head."""',
                     "    return b.reshape(k, 1, -1)", "");
  L.push("",
    `q = np.stack([xs @ w for w in heads(w_q, num_heads)], axis=1)${biased ? " + bias(b_q, num_heads)" : ""}  # (B, h, n, d_k)`,
    `k = np.stack([cs @ w for w in heads(w_k, num_kv_heads)], axis=1)${biased ? " + bias(b_k, num_kv_heads)" : ""}  # (B, h_kv, m, d_k)`,
    `v = np.stack([cs @ w for w in heads(w_v, num_kv_heads)], axis=1)${biased ? " + bias(b_v, num_kv_heads)" : ""}  # (B, h_kv, m, d_v)`);
}

// The weights, in the lessons' layout (in×out).
function scriptWeights(b, L) {
  const sd = b.in_proj_weight || b.q_proj_weight;
  if (sd) {
    L.push("# PyTorch's nn.MultiheadAttention stores each weight out×in: transposed here to in×out");
    if (b.in_proj_weight) L.push(`in_proj_weight = ${npArray(b.in_proj_weight)}  # (3·e, e): [W_q; W_k; W_v]`,
                                 "w_q, w_k, w_v = (w.T for w in np.split(in_proj_weight, 3))");
    else for (const p of ["q", "k", "v"]) L.push(`w_${p} = ${npArray(b[`${p}_proj_weight`])}.T`);
    if (b.in_proj_bias) L.push(`b_q, b_k, b_v = np.split(${npArray(b.in_proj_bias)}, 3)`);
    if (b.out_proj_weight) L.push(`w_o = ${npArray(b.out_proj_weight)}.T`);
    if (b.out_proj_bias) L.push(`b_o = ${npArray(b.out_proj_bias)}`);
  } else {
    for (const k of ["w_q", "w_k", "w_v", "w_o", "b_q", "b_k", "b_v", "b_o"]) if (b[k]) L.push(`${k} = ${npArray(b[k])}`);
    if (b.layout === "torch") {
      L.push("", "", "def lesson(w):", '    """PyTorch\'s layout (out×in) turned in×out, as the lessons write it."""',
             "    return w.T if w.ndim == 2 else w.transpose(0, 2, 1)", "", "",
             `w_q, w_k, w_v = lesson(w_q), lesson(w_k), lesson(w_v)${b.w_o ? "\nw_o = lesson(w_o)" : ""}`);
    }
  }
}

// The keys turned by RoPE, after a cache's, and shared by query heads.
function scriptKeys(R, rope, L) {
  const b = R.body;
  if (rope) L.push(`q = rope(q, p_q, ${rope.base ?? 10000}, ${rope.dims ?? R.dk}, "${rope.style || "half"}")  # RoPE`,
                   `k = rope(k, p_k[m0:], ${rope.base ?? 10000}, ${rope.dims ?? R.dk}, "${rope.style || "half"}")`);
  if (b.past_k) L.push(`past_k = ${npArray(b.past_k)}  # the cache: keys after RoPE`, `past_v = ${npArray(b.past_v)}`,
    "k = np.concatenate([past_k if batched else past_k[None], k], axis=-2)  # (B, h_kv, m0 + m, d_k)",
    "v = np.concatenate([past_v if batched else past_v[None], v], axis=-2)");
  if (R.Hkv !== R.H) L.push("shared = np.arange(num_heads) * num_kv_heads // num_heads  # query head i reads key/value head i·h_kv // h",
                            "k, v = k[:, shared], v[:, shared]");
}

// The scores, scaled, and which keys each query may attend (or an added mask).
function scriptScores(R, L) {
  const b = R.body;
  L.push("scores = q @ k.swapaxes(-1, -2)  # (B, h, n, m)",
    b.scale === undefined ? "scaled = scores / np.sqrt(dtype(q.shape[-1]))" : `scaled = scores * dtype(${b.scale})`,
    "n, m = scores.shape[-2:]",
    "allowed = np.ones((scores.shape[0], 1, n, m), dtype=bool)  # (B, 1, n, m)");
  if (b.causal) L.push("allowed &= p_k[None, :] <= p_q[:, None]  # causal: no key after the query");
  if (b.window) L.push(`allowed &= np.abs(p_q[:, None] - p_k[None, :]) < ${b.window}  # the sliding window`);
  if (b.mask) {
    // (n, m), (h, n, m), (B, n, m) (one per sequence: a head axis added) or (B, h, n, m)
    const f = maskForm(b.mask, !!R.B), lead = f.perSeq && !f.perHead ? "[:, None]" : "";
    L.push(f.kind === "bool" ? `allowed = allowed & np.array(${pyText(b.mask)})${lead}  # the mask: true = may attend`
      : `scaled = scaled + np.array(${pyText(b.mask)}, dtype=dtype)${lead}  # the additive mask`);
  }
  if (b.key_padding) L.push(`allowed &= ~np.array(${pyText(b.key_padding)}).reshape(-1, 1, 1, m)  # padding keys`);
  if (R.slopes) L.push(`slopes = np.array(${pyText(R.slopes)})  # ALiBi: one per head`,
    "scaled = scaled - (slopes[:, None, None] * np.abs(p_q[:, None] - p_k[None, :])).astype(dtype)");
}

// Softmax, the heads' outputs, their concatenation, the output, printed.
function scriptSoftmax(b, L) {
  L.push(
    "masked = np.where(allowed, scaled, -np.inf)",
    "row_max = masked.max(axis=-1, keepdims=True)",
    "row_max = np.where(np.isfinite(row_max), row_max, 0)",
    "e = np.where(allowed, np.exp(np.where(allowed, masked - row_max, 0)), 0)",
    "total = e.sum(axis=-1, keepdims=True)",
    "weights = np.divide(e, total, out=np.zeros_like(e), where=total > 0)  # a row with no key: 0",
    "head_outputs = weights @ v  # (B, h, n, d_v)",
    "concat = head_outputs.transpose(0, 2, 1, 3).reshape(head_outputs.shape[0], n, -1)  # (B, n, h·d_v)",
    b.w_o || b.out_proj_weight ? `output = concat @ w_o${b.b_o || b.out_proj_bias ? " + b_o" : ""}` : "output = concat",
    "if not batched:",
    "    weights, output = weights[0], output[0]",
    'print(json.dumps({"weights": weights.tolist(), "output": output.tolist()}))');
}

// words-check: on
// What keeps nn.MultiheadAttention from computing this request, or null.
// It projects x (d = e = h·d_k, d_v = d_k; keys from e or a kdim-wide
// context), scales by 1/√d_k, has one head per key/value head and always an
// output projection (the identity stands in when there is none).
export function torchObstacle(R) {
  const b = R.body, e = R.H * R.dk;
  const ask = [[b.q, "share.torch.qkv"], [R.Hkv !== R.H, "share.torch.gqa"],
    [b.rope, "share.torch.rope"], [b.positional_encoding, "share.torch.pe"], [b.past_k, "share.torch.cache"],
    [R.slopes, "share.torch.alibi"], [b.window, "share.torch.window"], [b.positions || b.context_positions, "share.torch.positions"],
    [b.scale !== undefined, "share.torch.scale"], [R.dv !== R.dk, "share.torch.dv"],
    [R.T.x && R.T.x.shape.at(-1) !== e, "share.torch.width"], [R.T.output.shape.at(-1) !== e, "share.torch.out_width"]];
  const hit = ask.find(([when]) => when);
  return hit ? t(hit[1], { d: R.T.x ? R.T.x.shape.at(-1) : 0, e }) : null;
}

// A PyTorch script that loads the request's weights into
// nn.MultiheadAttention (PyTorch's layout: out×in) and prints its weights
// and output as JSON, or {reason} when the module computes something else.
// words-check: off (a Python script: code and its comments, for Python, not the page)
export function torchScript(R) {
  const reason = torchObstacle(R);
  if (reason) return { reason };
  const b = R.body, e = R.H * R.dk, py = (a) => JSON.stringify(a).replace(/true/g, "True").replace(/false/g, "False");
  const kdim = b.context ? R.T.context.shape.at(-1) : e;
  // each projection out×in: row c of head g is the column of W that makes it
  const outIn = (p) => { const P = projection(b, p); return range(R.H).flatMap((g) => range(R.dk).map((c) => weightColumn(P, g, R.dk, c))); };
  const biasOut = (p, k) => { const P = projection(b, p); return range(R.H).flatMap((g) => range(k).map((c) => biasOf(P, g, k, c) ?? 0)); };
  const O = projection(b, "o");
  const wo = O.W ? range(e).map((c) => weightColumn(O, 0, 0, c)) : identity(e);
  const bo = O.W ? range(e).map((c) => biasOf(O, 0, 0, c) ?? 0) : new Array(e).fill(0);
  const tdt = `torch.${R.dtype}`;
  const form = b.mask ? maskForm(b.mask, !!R.B) : null, lead = form && form.perSeq && !form.perHead ? "[:, None]" : "";
  const additive = form && form.kind === "add";
  const L = [
    "#!/usr/bin/python3",
    '"""Reproduces the attention visualizer\'s numbers with PyTorch\'s nn.MultiheadAttention."""',
    "import json",
    "",
    "import torch",
    "",
    `dtype = ${tdt}`,
    `x = torch.tensor(${py(b.x)}, dtype=dtype)`,
    b.context ? `context = torch.tensor(${py(b.context)}, dtype=dtype)` : "context = x",
    "batched = x.dim() == 3",
    "xs, cs = (t if batched else t[None] for t in (x, context))  # (B, n, d): batch_first",
    `mha = torch.nn.MultiheadAttention(${e}, ${R.H}, bias=True, kdim=${kdim}, vdim=${kdim}, batch_first=True, dtype=dtype)`,
    "# its weights are out×in (nn.Linear's layout), so y = x @ W.T + b",
    "state = {",
    kdim === e ? `    "in_proj_weight": torch.tensor(${py([...outIn("q"), ...outIn("k"), ...outIn("v")])}, dtype=dtype),`
      : ["q", "k", "v"].map((p) => `    "${p}_proj_weight": torch.tensor(${py(outIn(p))}, dtype=dtype),`).join("\n"),
    `    "in_proj_bias": torch.tensor(${py([...biasOut("q", R.dk), ...biasOut("k", R.dk), ...biasOut("v", R.dv)])}, dtype=dtype),`,
    `    "out_proj.weight": torch.tensor(${py(wo)}, dtype=dtype),${O.W ? "" : "  # no W_o: the identity"}`,
    `    "out_proj.bias": torch.tensor(${py(bo)}, dtype=dtype),`,
    "}",
    "mha.load_state_dict(state)",
    `allowed = torch.ones(${R.n}, ${R.m}, dtype=torch.bool)  # (n, m): true = may attend`,
    b.causal ? "allowed &= torch.ones_like(allowed).tril()  # causal" : null,
    b.mask && !additive ? `allowed = allowed & torch.tensor(${py(b.mask)})${lead}  # (n, m), or per head and/or sequence` : null,
    b.key_padding ? `key_padding_mask = torch.tensor(${py(b.key_padding)}).reshape(-1, ${R.m}).expand(xs.shape[0], -1)  # true = padding`
      : "key_padding_mask = None",
    // a float attn_mask is added to the scaled scores, as the API's additive mask
    ...(additive ? [
      `attn_mask = torch.zeros(allowed.shape, dtype=dtype).masked_fill(~allowed, float("-inf")) + torch.tensor(${py(b.mask)}, dtype=dtype)${lead}`
        + "  # a float mask is added (the padding stays boolean: PyTorch 1.13 ignores a float one)"]
      : ["attn_mask = ~allowed  # MultiheadAttention's boolean attn_mask means true = NOT allowed"]),
    "with torch.no_grad():",
    "    # a mask per head or sequence: (B·heads, n, m), as the module takes it",
    `    if attn_mask.dim() > 2:`,
    `        attn_mask = attn_mask.expand(xs.shape[0], ${R.H}, ${R.n}, ${R.m}).reshape(-1, ${R.n}, ${R.m})`,
    "    output, weights = mha(xs, cs, cs, attn_mask=attn_mask, key_padding_mask=key_padding_mask,",
    "                          need_weights=True, average_attn_weights=False)",
    "# a query with no key left (in some head): PyTorch gives NaN for its whole output row; the API gives",
    "# that head zero weights and a zero head output, so such rows are redone from the module's own weights",
    "if weights.isnan().any():",
    "    weights = torch.nan_to_num(weights, nan=0.0)",
    "    with torch.no_grad():",
    kdim === e ? `        w_v, b_v = mha.in_proj_weight[${2 * e}:], mha.in_proj_bias[${2 * e}:]`
      : `        w_v, b_v = mha.v_proj_weight, mha.in_proj_bias[${2 * e}:]`,
    `        v = (cs @ w_v.T + b_v).reshape(cs.shape[0], -1, ${R.H}, ${R.dk}).transpose(1, 2)  # (B, heads, m, d_k)`,
    `        redone = mha.out_proj((weights @ v).transpose(1, 2).reshape(xs.shape[0], -1, ${e}))`,
    "    empty = weights.sum(-1).eq(0).any(1)  # (B, n): a head with no key",
    "    output[empty] = redone[empty]",
    "if not batched:",
    "    output, weights = output[0], weights[0]",
    'print(json.dumps({"weights": weights.tolist(), "output": output.tolist()}))',
  ];
  return { script: L.filter((l) => l !== null).join("\n") + "\n" };
}


// words-check: on
// The address and the share link describe what is on show (false: a newer
// call wrote them); settle: nothing more is written after them.
export async function writeLink(R, settle = true) {
  const my = ++stateSeq;
  window.attentionVisualizer.stateSettled = false;
  const link = await shortLink(shareBody(R));
  if (my !== stateSeq) return false;
  history.replaceState(null, "", link.url);
  // a link too long to hand out still reloads this page; the snapshot is offered instead
  $("share-link").value = link.short ? link.url : "";
  $("copy-link").disabled = !link.short;
  $("link-too-long").hidden = link.short;
  $("link-length").textContent = link.url.length.toLocaleString("en");
  if (settle) Object.assign(window.attentionVisualizer, { stateUrl: location.href, stateSettled: true });
  return true;
}

export function init() {
  let renderSeq = 0; // a newer render writes its own scripts (a link rewritten meanwhile is this render's)
  afterRenderHooks.push(async (R) => {
    const my = ++renderSeq;
    await writeLink(R, false);
    if (my !== renderSeq) return;
    $("curl-command").value = curlCommand(R);
    $("numpy-script").value = numpyScript(R);
    const torch = torchScript(R);
    $("torch-script").value = torch.script || `# ${t("share.torch.none", { reason: torch.reason })}\n`;
    $("download-torch-script").disabled = !torch.script;
    exportOptions(R);
    window.attentionVisualizer.stateUrl = location.href;
    window.attentionVisualizer.stateSettled = true;
  });
  $("export-stage").addEventListener("change", exportButtons);
  // the pictures' size: 1×, 2× or 3× their CSS pixels
  document.querySelector('[data-export="svg"]').after(el("label", { class: "check", for: "export-scale" }, t("share.size")),
    el("select", { id: "export-scale" }, EXPORT_SCALES.map((k) => el("option", { value: k }, t("share.size.times", { scale: k })))));
  document.querySelectorAll("[data-export]").forEach((b) => b.addEventListener("click", () => exportStage(b.dataset.export)));
  $("copy-link").addEventListener("click", async () => {
    try { await navigator.clipboard.writeText($("share-link").value); setStatus(t("share.copied"), "ok"); }
    catch { $("share-link").select(); setStatus(t("share.copy_by_hand"), ""); }
  });
  $("download-script").addEventListener("click", () => download("attention.py", "text/x-python", numpyScript(lastGood)));
  $("download-torch-script").addEventListener("click", () => download("attention_torch.py", "text/x-python", torchScript(lastGood).script));
}
