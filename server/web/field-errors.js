/*
 * field-errors.js - each request field's place on the page, and its errors
 * next to it.
 */
import { $, el } from "./base.js";
import { editors } from "./state.js";
import { REQUEST_FIELDS } from "./fields.js";
import { FIELD_ROWS, drawn, idOf } from "./controls.js";
import { onLangChange } from "./locale.js";
import { msg, nodes, orList } from "./words.js";

// How the page shows the request's fields (REQUEST_FIELDS, generated from the
// server's schema table) is controls.js's table: a field's first row gives
// the name a student reads, whether a control of the same id sets it, the
// panel it sits in.  A field without a row has no control of its own: its
// errors are shown at the top, under its JSON name; a "slot" row sends a
// field's errors to another field's place (PyTorch's names come from the
// pasted state_dict).
const shown = REQUEST_FIELDS.map((f) => f.name).filter((k) => FIELD_ROWS[k] && !FIELD_ROWS[k].slot);
// Every place an error can be shown (an element err-NAME each); "general": the top of the form.
export const ERROR_SLOTS = [...shown, "general"];
// The names students read, by field (a field without a row: its JSON name).
// (a string is a mathematical name, the same in every language; a msg() a word)
export const FIELD_NAMES = Object.fromEntries(REQUEST_FIELDS.map((f) => [f.name, (FIELD_ROWS[f.name] || {}).name || f.name]));
const hasControl = (k) => drawn(FIELD_ROWS[k]) || FIELD_ROWS[k].kind === "paste";
export const FIELD_CONTROLS = Object.fromEntries(shown.filter(hasControl).map((k) => [k, idOf(FIELD_ROWS[k])]));
export const FIELD_PANELS = Object.fromEntries(shown.filter((k) => FIELD_ROWS[k].panel).map((k) => [k, FIELD_ROWS[k].panel]));

export function clearErrors() {
  showing.clear();
  for (const k of ERROR_SLOTS) { const e = $(`err-${k}`); e.hidden = true; e.replaceChildren(); }
  document.querySelectorAll("[aria-invalid='true']:not(table.edit input)").forEach((n) => n.removeAttribute("aria-invalid"));
  document.querySelectorAll("table.edit input.flag").forEach((n) => n.classList.remove("flag"));
}

// The field a JSON Pointer names: "/x/1" → "x"; no or unknown pointer → "general".
export function fieldOf(pointer) {
  const raw = (pointer || "").split("/")[1], top = (FIELD_ROWS[raw] || {}).slot || raw;
  return top && ERROR_SLOTS.includes(top) && top !== "general" ? top : "general";
}

// The errors on show, by field: a new language writes them again.
const showing = new Map();
onLangChange(() => { for (const [field, [problem, body]] of showing) showFieldError(field, problem, body, false); });

// Shows a field's error: a client's ({client: true, words: msg()}) or the
// API's problem, in the student's words (studentWords) with the API's own
// code and pointer after them, for a teacher or a bug report.
export function showFieldError(field, problem, body, open = true) {
  const slot = $(`err-${field}`);
  showing.set(field, [problem, body]);
  const parts = [...nodes(problem.client ? problem.words : studentWords(problem, body))];
  if (!problem.client && problem.code)
    parts.push(" ", el("span", { class: "api", title: problem.detail || null }, ...nodes(problem.pointer ? "errors.api.code_at" : "errors.api.code",
      { code: el("span", { class: "code" }, problem.code), pointer: el("code", {}, problem.pointer || "") })));
  slot.replaceChildren(...parts);
  slot.dataset.pointer = problem.pointer || "";
  slot.dataset.code = problem.code || (problem.client ? "client" : "");
  slot.hidden = false;
  if (!open) return;
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

// A field as the page names it, from the API's name ("w_q" → W_q, num_heads → Heads).
const nameOf = (api) => (FIELD_ROWS[api] && FIELD_ROWS[api].name) || api;
// The place a pointer names: "/x/1/2" → X, row 1, column 2.
function placeOf(pointer) {
  const [, top, ...rest] = (pointer || "").split("/");
  const field = nameOf(top), idx = rest.filter((r) => /^\d+$/.test(r)).map(Number);
  if (!top) return msg("errors.place.request");
  if (idx.length >= 2) return msg("errors.place.cell", { field, row: idx.at(-2), column: idx.at(-1) });
  if (idx.length === 1) return msg("errors.place.row", { field, row: idx[0] });
  return msg("errors.place.field", { field });
}
export const divisors = (n) => Array.from({ length: n }, (_, j) => j + 1).filter((k) => n % k === 0);

// The API's problem in the student's words, in the page's language: built
// from its code, its pointer and the values its detail names (the API
// speaks English: its detail is kept as the code's title, for a teacher).
// body: the request, for what the detail does not say.
export function studentWords(problem, body = {}) {
  const d = problem.detail || "", code = problem.code, at = placeOf(problem.pointer);
  let m;
  if (code === "invalid_num_heads" && (m = /(\d+) heads do not divide the (\d+) columns of (\w+)/.exec(d)))
    return msg("errors.api.heads_divide", { heads: Number(m[1]), width: Number(m[2]), field: nameOf(m[3]),
                                            counts: () => orList(divisors(Number(m[2]))) });
  if (code === "invalid_num_heads" && (m = /at least 1, got (\S+)/.exec(d))) return msg("errors.api.heads_min", { got: m[1] });
  if (code === "ragged_array" && (m = /expected (\d+) elements.*found (\d+)/.exec(d)))
    return msg("errors.api.ragged", { place: at, expected: Number(m[1]), found: Number(m[2]) });
  // a weight whose transpose fits: the API names the layout that reads it
  const hint = /its transpose fits: is it out×in/.test(d) ? msg("errors.api.transpose.torch")
    : /its transpose fits: is it in×out/.test(d) ? msg("errors.api.transpose.lesson") : null;
  const withHint = (words) => (hint ? msg("errors.api.with_hint", { words, hint }) : words);
  if (code === "shape_mismatch" && (m = /^(\w+) has (\d+) rows but (\w+) has (\d+) columns/.exec(d)))
    return withHint(msg("errors.api.rows_columns", { a: nameOf(m[1]), rows: Number(m[2]), b: nameOf(m[3]), columns: Number(m[4]) }));
  if (code === "shape_mismatch" && (m = /^(\w+) has (\d+) columns but (\w+) has (\d+) columns/.exec(d)))
    return withHint(msg("errors.api.columns_columns", { a: nameOf(m[1]), cols: Number(m[2]), b: nameOf(m[3]), columns: Number(m[4]) }));
  if (code === "invalid_scale") return msg("errors.api.scale");
  if (code === "wrong_type" && /expected a number/.test(d)) return msg("errors.api.number", { place: at });
  if (problem.status >= 500) return msg("errors.api.busy");
  if (problem.status === 413) return msg("errors.api.too_large", { place: at });
  return msg("errors.api.other", { place: at });
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
