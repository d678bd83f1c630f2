/*
 * controls.js - the page's control table: one row per control of a request
 * field, read by everything that shows, reads or writes a field.
 *
 * REQUEST_FIELDS (fields.js, generated from the server's schema table) says
 * which fields a request has; a row here says how the page offers one: the
 * name a student reads in its errors, its kind of control, the panel it sits
 * in, its label and placeholder messages, the hints that describe it, and
 * how its value goes into a request body and comes back from one.
 * index.html holds a <template data-controls="P"> where the controls of
 * place P go and a <template data-errors="P"> where their error slots go
 * (renderControls); field-errors.js takes each field's name, slot and panel
 * from the rows; form.js's readBody and share.js's applyState read and write
 * the values through them.  A field of REQUEST_FIELDS without a row is in
 * NO_CONTROL, with the reason.
 *
 * A row: field (its request field), id (the control's element, else the
 * field's name), name (the field's name in errors: a mathematical name, the
 * same in every language, or a msg()), kind ("number", "text", "select",
 * "check": rendered here; "matrix": a MatrixEditor of form.js; "paste": a
 * text box of index.html; "slot": errors sent to another field's place),
 * panel (the <details> opened to show its error), says (its label's message
 * id, or math: a mathematical label), blank (its placeholder's message id;
 * attrs.placeholder: a mathematical one), hints (ids of what describes it),
 * options ([value, message id or math] of a select: the first one is what
 * an absent field means), value (how its value is read and written: a CODEC
 * name, or read/write of its own).
 */
import { $, ClientError, el } from "./base.js";
import { REQUEST_FIELDS } from "./fields.js";
import { parseList, parseNumber } from "./parse.js";
import { msg, t } from "./words.js";

// Fields of the schema the page has no control for (why: beside each).
export const NO_CONTROL = [
  "return", // the page asks for the stages it draws (base.js's stagesFor)
  "encoding", // the page reads JSON numbers
  "heads", // asked for by readBody itself: the open head, when a reply is big
  "out_proj.weight", "out_proj.bias", // state_dict names: from the pasted state_dict
  "attn_mask", "key_padding_mask", "is_causal", // PyTorch's names of mask, key_padding, causal
  "average_attn_weights", "need_weights", "batch_first", // the page shows each head's weights; a batch is first
  "bias_k", "bias_v", "add_zero_attn", "module", // nn.MultiheadAttention's options the page does not offer
];

const SETTINGS = undefined; // the Settings section: always open, no panel
const W = "weights-panel", P = "position-panel", C = "context-panel";
const matrix = (field, name, panel) => ({ field, name, kind: "matrix", panel });
const toTorch = (field) => ({ field, kind: "slot", slot: "state_dict" });

// Every control, in the order the page shows them (and a body lists them).
export const CONTROLS = [
  matrix("x", "X"), matrix("context", msg("field.context"), C),
  matrix("w_q", "W_q"), matrix("w_k", "W_k"), matrix("w_v", "W_v"), matrix("w_o", "W_o", "wo-panel"),
  matrix("mask", msg("field.mask"), "mask-panel"), matrix("key_padding", msg("field.key_padding"), "mask-panel"),
  { field: "num_heads", name: msg("field.num_heads"), kind: "number", panel: SETTINGS, says: "page.heads",
    attrs: { min: 1, step: 1, value: 1, inputmode: "numeric" }, value: "whole", when: "weights" },
  { field: "dtype", name: "dtype", kind: "select", panel: SETTINGS, says: "page.dtype",
    options: [["float64", { math: "float64" }], ["float32", { math: "float32" }]], value: "choice" },
  { field: "scale", name: msg("field.scale"), kind: "text", panel: SETTINGS, says: "page.scale",
    attrs: { inputmode: "decimal", placeholder: "1/√d_k" }, hints: ["scale-hint"], value: "decimal" },
  { field: "tokens", name: msg("field.tokens"), kind: "text", panel: SETTINGS, says: "page.tokens", wide: true,
    blank: "page.tokens.placeholder", hints: ["tokens-note"], value: "labels", rows: "n" },
  { field: "num_kv_heads", name: msg("field.num_kv_heads"), kind: "number", panel: SETTINGS, says: "page.kv",
    attrs: { min: 1, step: 1, inputmode: "numeric" }, blank: "page.kv.placeholder", hints: ["kv-hint"],
    value: "whole", when: "weights" },
  { field: "causal", name: msg("field.causal"), kind: "check", panel: SETTINGS, says: "page.causal", wide: true, value: "flag" },
  matrix("b_q", "b_q", W), matrix("b_k", "b_k", W), matrix("b_v", "b_v", W), matrix("b_o", "b_o", W),
  { field: "layout", name: msg("field.layout"), kind: "select", panel: W, says: "page.layout", lone: true,
    options: [["lesson", "page.layout.lesson"], ["torch", "page.layout.torch"]], hints: ["layout-hint"],
    value: "choice", when: "own weights" },
  { field: "state_dict", name: "state_dict", kind: "paste", panel: W },
  toTorch("in_proj_weight"), toTorch("in_proj_bias"), toTorch("out_proj_weight"), toTorch("out_proj_bias"),
  toTorch("q_proj_weight"), toTorch("k_proj_weight"), toTorch("v_proj_weight"),
  matrix("q", "Q"), matrix("k", "K"), matrix("v", "V"),
  { field: "positional_encoding", name: msg("field.positional_encoding"), kind: "select", panel: P, says: "page.pe",
    options: [["none", "page.pe.none"], ["sinusoidal", "page.pe.sinusoidal"]], hints: ["pe-hint"],
    value: "choice", when: "weights" },
  { field: "rope", name: "RoPE", kind: "select", panel: P, says: { math: "RoPE" }, hints: ["rope-hint"],
    options: [["off", "page.off"], ["half", "page.rope.half"], ["interleaved", "page.rope.interleaved"]], value: "rope" },
  { field: "rope", id: "rope_base", name: msg("field.rope_base"), kind: "text", panel: P, says: "page.rope.base",
    attrs: { inputmode: "decimal", placeholder: "10000" }, hints: ["rope-hint"], value: "part", part: "base" },
  { field: "rope", id: "rope_dims", name: msg("field.rope_dims"), kind: "number", panel: P, says: "page.rope.dims",
    attrs: { min: 2, step: 2, inputmode: "numeric", placeholder: "d_k" }, hints: ["rope-hint"], value: "part", part: "dims" },
  { field: "positions", name: msg("field.positions"), kind: "text", panel: P, says: "page.positions", wide: true,
    attrs: { inputmode: "numeric", placeholder: "0, 1, 2, …" }, hints: ["positions-hint"], value: "list" },
  { field: "context_positions", name: msg("field.context_positions"), kind: "text", panel: P, says: "page.kpositions",
    wide: true, attrs: { inputmode: "numeric" }, blank: "page.kpositions.placeholder", hints: ["positions-hint"], value: "list" },
  { field: "window", name: msg("field.window"), kind: "number", panel: P, says: "page.window",
    attrs: { min: 1, step: 1, inputmode: "numeric" }, blank: "page.window.placeholder", hints: ["window-hint"], value: "whole" },
  { field: "alibi", name: "ALiBi", kind: "select", panel: P, says: { math: "ALiBi" }, hints: ["alibi-hint"],
    options: [["off", "page.off"], ["paper", "page.alibi.paper"], ["slopes", "page.alibi.mine"]], value: "alibi" },
  { field: "alibi_slopes", name: msg("field.alibi_slopes"), kind: "text", panel: P, says: "page.alibi.slopes", wide: true,
    wrap: "alibi-slopes-field", attrs: { inputmode: "decimal" }, hints: ["alibi-hint"], value: "slopes" },
  { field: "context_tokens", name: msg("field.context_tokens"), kind: "text", panel: C, says: "page.context.tokens",
    lone: true, value: "labels", rows: "m", when: "context" },
  matrix("past_k", "past_k", "cache-panel"), matrix("past_v", "past_v", "cache-panel"),
];
export const idOf = (row) => row.id || row.field;
// The rows whose controls are drawn here (the rest are the form's editors and boxes).
export const DRAWN = ["number", "text", "select", "check"];
export const drawn = (row) => DRAWN.includes(row.kind);
// Each field's first row: its name, its panel, its error slot.
export const FIELD_ROWS = Object.fromEntries(CONTROLS.filter((r, i) => CONTROLS.findIndex((s) => s.field === r.field) === i)
  .map((r) => [r.field, r]));
// Fields a row names that the schema lacks, and schema fields with neither a row nor a reason (both empty).
export function tableGaps() {
  const schema = new Set(REQUEST_FIELDS.map((f) => f.name));
  return { unknown: CONTROLS.map((r) => r.field).filter((f) => !schema.has(f)),
           missing: [...schema].filter((f) => !FIELD_ROWS[f] && !NO_CONTROL.includes(f)),
           both: NO_CONTROL.filter((f) => FIELD_ROWS[f] || !schema.has(f)) };
}

// ---- reading and writing values
export function splitLabels(text) {
  return text.trim() === "" ? null : text.split(",").map((s) => s.trim());
}
// k labels from a comma-separated field: missing ones are the row's index.
export function labelsFor(id, k) {
  const given = splitLabels($(id).value);
  return Array.from({ length: k }, (_, i) => (given && given[i] !== undefined && given[i] !== "" ? given[i] : String(i)));
}
// Comma- or space-separated numbers from a text field (parse.js's rule for
// a decimal comma), or undefined when empty.  name: the field's name (a msg()).
export function numberList(id, name) {
  const text = $(id).value.trim();
  if (text === "") return undefined;
  try { return parseList(text); } catch (e) { throw new ClientError(`/${id}`, msg("form.field.error", { field: name, problem: e.words || e.message })); }
}
export function wholeNumber(id, name) {
  const text = $(id).value.trim();
  if (text === "") return undefined;
  const v = Number(text);
  if (!Number.isFinite(v)) throw new ClientError(`/${id}`, msg("form.field.number", { field: name }));
  return v;
}
function decimal(id, name, pointer = `/${id}`) {
  const text = $(id).value.trim();
  if (text === "") return undefined;
  try { return parseNumber(text, { decimalComma: true }); }
  catch (e) { throw new ClientError(pointer, msg("form.field.error", { field: name, problem: e.words || e.message })); }
}
const ropeOf = (b) => (b.rope === true ? {} : b.rope);
const blankIfNone = (v) => (v === undefined ? "" : v);

// How a control's value is read into a body (read(row, ctx): the value, or
// undefined for none) and written back from one (write(body, row): the
// control's value, or its checked state for a check box).
export const CODECS = {
  whole: { read: (r) => wholeNumber(idOf(r), r.name), write: (b, r) => blankIfNone(b[r.field]) },
  decimal: { read: (r) => decimal(idOf(r), r.name), write: (b, r) => (b[r.field] === undefined ? "" : String(b[r.field])) },
  list: { read: (r) => numberList(idOf(r), r.name), write: (b, r) => (b[r.field] ? b[r.field].join(", ") : "") },
  labels: { read: (r, c) => (splitLabels($(idOf(r)).value) ? labelsFor(idOf(r), c[r.rows]) : undefined),
            write: (b, r) => (b[r.field] ? b[r.field].join(", ") : "") },
  choice: { read: (r) => ($(idOf(r)).value === r.options[0][0] ? undefined : $(idOf(r)).value),
            write: (b, r) => b[r.field] || r.options[0][0] },
  flag: { read: (r) => $(idOf(r)).checked || undefined, write: (b, r) => !!b[r.field] },
  // ALiBi: the paper's slopes are alibi: true; my slopes are alibi_slopes
  alibi: { read: (r) => ($(idOf(r)).value === "paper" || undefined), write: (b) => (b.alibi ? "paper" : b.alibi_slopes ? "slopes" : "off") },
  slopes: { read: (r) => ($("alibi").value === "slopes" ? numberList(idOf(r), r.name) || [] : undefined),
            write: (b) => (b.alibi_slopes ? b.alibi_slopes.join(", ") : "") },
  // RoPE: one object from its style and its parts (true when it has none of them)
  rope: { read: readRope, write: (b) => (ropeOf(b) ? ropeOf(b).style || "half" : "off") },
  part: { read: () => undefined, write: (b, r) => (ropeOf(b) ? blankIfNone(ropeOf(b)[r.part]) : "") },
};
function readRope(r) {
  if ($(idOf(r)).value === "off") return undefined;
  const rope = {}, base = decimal("rope_base", msg("field.rope_base"), "/rope/base"), dims = wholeNumber("rope_dims", msg("field.rope_dims"));
  if (base !== undefined) rope.base = base;
  if (dims !== undefined) rope.dims = dims;
  if ($(idOf(r)).value === "interleaved") rope.style = "interleaved";
  return Object.keys(rope).length ? rope : true;
}

// The drawn controls' values into body (in the table's order).  ctx: n and m
// (the rows of the queries and keys, for labels) and which rows apply:
// weights (X and the weights given, not Q, K, V), own weights (and no
// state_dict), context (cross-attention).
export function readControls(body, ctx) {
  for (const row of CONTROLS) {
    if (!row.value || (row.when && !ctx[row.when])) continue;
    const v = CODECS[row.value].read(row, ctx);
    if (v !== undefined) body[row.field] = v;
  }
  return body;
}
// A body's values into the drawn controls (an absent field: its default).
export function writeControls(body) {
  for (const row of CONTROLS.filter((r) => r.value)) {
    const v = CODECS[row.value].write(body, row);
    if (row.kind === "check") $(idOf(row)).checked = v; else $(idOf(row)).value = v;
  }
}

// ---- drawing
const LONE = "display:flex;flex-direction:column;gap:3px;font-size:0.88rem;font-weight:600"; // a field outside a grid
const words = (w) => (w.math ? w.math : el("span", { "data-i18n": w }, t(w)));
const describedBy = (row) => [...(row.hints || []), `err-${row.field}`].join(" ");

// A control of a row, its label around it.
export function controlOf(row) {
  const id = idOf(row), common = { id, "aria-describedby": describedBy(row) };
  if (row.kind === "check")
    return el("div", { class: "wide" }, el("label", { class: "check", for: id }, el("input", { type: "checkbox", ...common }), " ", words(row.says)));
  const input = row.kind === "select"
    ? el("select", common, row.options.map(([value, w]) => (w.math ? el("option", { value }, w.math) : el("option", { value, "data-i18n": w }, t(w)))))
    : el("input", { type: row.kind, ...common, ...row.attrs, placeholder: row.blank ? t(row.blank) : (row.attrs || {}).placeholder,
                    "data-i18n-placeholder": row.blank });
  return el("label", { class: row.wide ? "field wide" : "field", for: id, id: row.wrap, hidden: !!row.wrap, style: row.lone ? LONE : null },
    words(row.says), " ", input);
}
// An error slot of each field drawn here, in the order of their first rows.
export const errorSlotOf = (field) => el("p", { class: "field-error", id: `err-${field}`, role: "alert", hidden: true });

// Fills index.html's templates: <template data-controls="P"> with the
// controls of place P (a panel's id, "settings" for the Settings section),
// <template data-errors="P"> with their error slots.
export function renderControls(root = document) {
  const place = (row) => row.panel || "settings";
  for (const tpl of root.querySelectorAll("template[data-controls]"))
    tpl.replaceWith(...CONTROLS.filter((r) => drawn(r) && place(r) === tpl.dataset.controls).map(controlOf));
  for (const tpl of root.querySelectorAll("template[data-errors]"))
    tpl.replaceWith(...Object.values(FIELD_ROWS).filter((r) => drawn(r) && place(r) === tpl.dataset.errors).map((r) => errorSlotOf(r.field)));
}
