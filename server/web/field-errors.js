/*
 * field-errors.js - each request field's place on the page, and its errors
 * next to it.
 */
import { $, el } from "./base.js";
import { editors } from "./form.js";
import { REQUEST_FIELDS } from "./fields.js";

// How the page shows the request's fields (REQUEST_FIELDS, generated from the
// server's schema table): the name a student reads, whether a control of the
// same id sets it, the panel it sits in.  A field without a row here has no
// control of its own: its errors are shown at the top, under its JSON name;
// `slot` sends a field's errors to another field's place (PyTorch's names
// come from the pasted state_dict).
const FIELD_UI = {
  x: { label: "X" }, context: { label: "Context", panel: "context-panel" },
  w_q: { label: "W_q" }, w_k: { label: "W_k" }, w_v: { label: "W_v" }, w_o: { label: "W_o", panel: "wo-panel" },
  mask: { label: "Mask", panel: "mask-panel" }, key_padding: { label: "Key padding", panel: "mask-panel" },
  num_heads: { label: "Heads", control: true }, scale: { label: "Scale", control: true },
  dtype: { label: "dtype", control: true }, causal: { label: "Causal", control: true },
  tokens: { label: "Tokens", control: true },
  context_tokens: { label: "Context tokens", control: true, panel: "context-panel" },
  b_q: { label: "b_q", panel: "weights-panel" }, b_k: { label: "b_k", panel: "weights-panel" },
  b_v: { label: "b_v", panel: "weights-panel" }, b_o: { label: "b_o", panel: "weights-panel" },
  layout: { label: "Weight layout", control: true, panel: "weights-panel" },
  in_proj_weight: { slot: "state_dict" }, in_proj_bias: { slot: "state_dict" },
  out_proj_weight: { slot: "state_dict" }, out_proj_bias: { slot: "state_dict" },
  q_proj_weight: { slot: "state_dict" }, k_proj_weight: { slot: "state_dict" }, v_proj_weight: { slot: "state_dict" },
  q: { label: "Q" }, k: { label: "K" }, v: { label: "V" },
  num_kv_heads: { label: "Key/value heads", control: true },
  positions: { label: "Positions", control: true, panel: "position-panel" },
  context_positions: { label: "Key positions", control: true, panel: "position-panel" },
  window: { label: "Window", control: true, panel: "position-panel" },
  alibi: { label: "ALiBi", control: true, panel: "position-panel" },
  alibi_slopes: { label: "ALiBi slopes", control: true, panel: "position-panel" },
  rope: { label: "RoPE", control: true, panel: "position-panel" },
  positional_encoding: { label: "Positional encoding", control: true, panel: "position-panel" },
  past_k: { label: "past_k", panel: "cache-panel" }, past_v: { label: "past_v", panel: "cache-panel" },
};
// The page's own places for errors: the pasted state_dict, and the top of the form.
const PAGE_SLOTS = { state_dict: { label: "state_dict", control: true, panel: "weights-panel" }, general: {} };

const shown = REQUEST_FIELDS.map((f) => f.name).filter((k) => FIELD_UI[k] && !FIELD_UI[k].slot);
const place = (k) => FIELD_UI[k] || PAGE_SLOTS[k];
// Every place an error can be shown (an element err-NAME each).
export const ERROR_SLOTS = [...shown, ...Object.keys(PAGE_SLOTS)];
// The names students read, by field (a field without a row: its JSON name).
export const FIELD_NAMES = Object.fromEntries(REQUEST_FIELDS.map((f) => [f.name, (FIELD_UI[f.name] || {}).label || f.name])
  .concat([["state_dict", "state_dict"]]));
export const FIELD_CONTROLS = Object.fromEntries(ERROR_SLOTS.filter((k) => place(k).control).map((k) => [k, k]));
export const FIELD_PANELS = Object.fromEntries(ERROR_SLOTS.filter((k) => place(k).panel).map((k) => [k, place(k).panel]));

export function clearErrors() {
  for (const k of ERROR_SLOTS) { const e = $(`err-${k}`); e.hidden = true; e.replaceChildren(); }
  document.querySelectorAll("[aria-invalid='true']:not(table.edit input)").forEach((n) => n.removeAttribute("aria-invalid"));
  document.querySelectorAll("table.edit input.flag").forEach((n) => n.classList.remove("flag"));
}

// The field a JSON Pointer names: "/x/1" → "x"; no or unknown pointer → "general".
export function fieldOf(pointer) {
  const raw = (pointer || "").split("/")[1], top = (FIELD_UI[raw] || {}).slot || raw;
  return top && ERROR_SLOTS.includes(top) && top !== "general" ? top : "general";
}

export function showFieldError(field, problem) {
  const slot = $(`err-${field}`);
  const parts = [];
  parts.push(problem.client ? problem.detail : studentWords(problem.detail || problem.title || "the request failed"));
  // the API's own code and pointer after the words, for a teacher or a bug report
  if (!problem.client)
    parts.push(" ", el("span", { class: "api" }, "(the API's ", el("span", { class: "code" }, problem.code || `HTTP ${problem.status}`),
      problem.pointer ? [" at ", el("code", {}, problem.pointer)] : null, ")"));
  slot.replaceChildren(...parts);
  slot.dataset.pointer = problem.pointer || "";
  slot.dataset.code = problem.code || (problem.client ? "client" : "");
  slot.hidden = false;
  if (FIELD_PANELS[field]) $(FIELD_PANELS[field]).open = true;
  if (FIELD_CONTROLS[field]) $(FIELD_CONTROLS[field]).setAttribute("aria-invalid", "true");
  const ed = editors[field];
  if (ed) {
    ed.text.setAttribute("aria-invalid", "true");
    // flag the grid cells under the pointer, e.g. every cell of row /x/1
    const p = problem.pointer || "";
    ed.grid.querySelectorAll("input[data-pointer]").forEach((inp) => {
      const q = inp.dataset.pointer;
      if (p.split("/").length > 2 && (q === p || q.startsWith(p + "/"))) inp.classList.add("flag");
    });
  }
}


// The API's names in a message as the page names them: "the 8 columns of
// w_q" → "the 8 columns of W_q", num_heads → Heads.
export function studentWords(text) {
  return text.replace(/\b(?:[a-z]+(?:_[a-z]+)+|[xqkv])\b/g, (w) => (FIELD_NAMES[w] && FIELD_UI[w] ? FIELD_NAMES[w] : w));
}

// What a student edits to fix a field: its control, or its editor's text
// box when shown, else the grid's flagged cell (or first cell).
function controlOf(field) {
  if (FIELD_CONTROLS[field]) return $(FIELD_CONTROLS[field]);
  const ed = editors[field];
  if (!ed) return null;
  if (ed.text.offsetParent) return ed.text;
  return ed.grid.querySelector("input.flag") || ed.grid.querySelector("input");
}

// Brings a field's message into view (the least scroll that shows it) and
// puts the focus on what fixes it, unless the student is typing in a box
// (always when asked: the status line's button).
export function revealError(field, focus = false) {
  const slot = $(`err-${field}`), r = slot.getBoundingClientRect();
  if (r.top < 0 || r.bottom > innerHeight) slot.scrollIntoView({ block: "nearest" });
  const target = controlOf(field);
  const typing = document.activeElement && document.activeElement.matches("input, textarea, select");
  if (target && (focus || !typing)) {
    target.focus({ preventScroll: true });
    if (focus) slot.scrollIntoView({ block: "nearest" });
  }
}
