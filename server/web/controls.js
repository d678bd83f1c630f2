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
import { REQUEST_FIELDS } from "./fields.js";
import { msg } from "./words.js";

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
