/*
 * editor.js - one editor per matrix: a grid and NumPy-style text.
 */
import { ClientError, GRID_MAX_CELLS, el, range } from "./base.js";
import { formatMatrix, parseMatrixText, parseNumber, shapeOf } from "./parse.js";
import { showFieldError } from "./field-errors.js";
import { msg, nodes, t } from "./words.js";
import { cellText } from "./format.js";

export const CELL_MIN_CHARS = 3;
// the width of a cell's input: its characters (monospace) and its padding and border
const cellWidth = (chars) => `width:calc(${chars}ch + 10px)`;

// The grid is one tab stop: arrow keys move between its cells (left and
// right once the caret reaches the edge of the number), as in a spreadsheet.
export class MatrixEditor {
  // label: a mathematical name ("W_q"), a msg() (words.js), or a function that
  // says the name of the moment (X's: the lesson's own x); hint: a message id.
  constructor(key, { label, hint, onChange, stack = "head" }) {
    this.key = key; this.label = label; this.hint = hint; this.onChange = onChange; this.stack = stack;
    this.value = null; this.parseError = null; this.cellErrors = new Set();
    this.mode = "grid";
    this.shapeBadge = el("span", { class: "shape", id: `shape-${key}` });
    this.modeNames = ["grid", "text"].map(() => el("span"));
    const radios = ["grid", "text"].map((m, k) => el("label", {},
      el("input", { type: "radio", name: `mode-${key}`, value: m, checked: m === "grid",
                    onchange: () => this.setMode(m) }), this.modeNames[k]));
    // a row or column more or less: [Δrows, Δcols, its messages' id (editor.<op>, editor.<op>.short)]
    this.opButtons = [[1, 0, "row.add"], [-1, 0, "row.remove"], [0, 1, "col.add"], [0, -1, "col.remove"]].map(([r, c, op]) =>
      el("button", { type: "button", class: "small", dataset: { op }, onclick: () => this.resize(r, c) }));
    this.ops = el("span", { class: "toolbar", style: "margin:0" }, ...this.opButtons);
    this.grid = el("div", { class: "grid-wrap", id: `grid-${key}` });
    this.grid.addEventListener("keydown", (ev) => this.navigate(ev));
    this.grid.addEventListener("focusin", (ev) => this.rove(ev.target));
    // a grid wider than its panel scrolls sideways, and says which columns are in view
    this.cue = el("p", { class: "scroll-cue", id: `cue-${key}`, hidden: true });
    this.grid.addEventListener("scroll", () => this.updateCue());
    new ResizeObserver(() => this.updateCue()).observe(this.grid);
    // autocomplete off: the browser keeps no copy of a big matrix in each history entry
    this.text = el("textarea", { id: `text-${key}`, spellcheck: "false", hidden: true, autocomplete: "off",
                                 "aria-describedby": `hint-${key} err-${key}` });
    this.text.addEventListener("input", () => this.fromText());
    this.bigNote = el("p", { class: "note", hidden: true });
    this.error = el("p", { class: "field-error", id: `err-${key}`, role: "alert", hidden: true });
    this.legend = el("legend", {});
    this.hintNode = el("p", { class: "hint", id: `hint-${key}` });
    this.modeGroup = el("span", { class: "seg", role: "radiogroup" }, radios);
    this.root = el("fieldset", { class: "panel editor", id: `field-${key}` },
      this.legend, this.hintNode, el("div", { class: "toolbar" }, this.modeGroup, this.ops),
      this.cue, this.grid, this.text, this.bigNote, this.error);
    this.relabel();
  }

  // The editor's name as read now ("W_q", or "Context" in the page's language).
  name() { return typeof this.label === "function" ? this.label() : typeof this.label === "string" ? this.label : t(this.label); }

  // Every word of the editor in the page's language (a new language calls it, then render()).
  relabel() {
    const name = this.name();
    this.legend.replaceChildren(name, this.shapeBadge);
    this.hintNode.replaceChildren(...nodes(this.hint), " ", ...nodes("editor.hint"));
    this.modeNames[0].textContent = t("editor.grid"); this.modeNames[1].textContent = t("editor.text");
    for (const b of this.opButtons) {
      b.textContent = t(`editor.${b.dataset.op}.short`);
      b.setAttribute("aria-label", t(`editor.${b.dataset.op}`, { name }));
    }
    this.modeGroup.setAttribute("aria-label", t("editor.mode", { name }));
    this.text.setAttribute("aria-label", t("editor.as_text", { name }));
    this.bigNote.textContent = t("editor.big", { cells: GRID_MAX_CELLS });
    this.updateBadge();
    // the grid's cells, named anew in place (a cell being typed in keeps its focus)
    for (const input of this.grid ? this.grid.querySelectorAll("input[data-pointer]") : []) {
      const d = input.dataset, head = d.head === "" ? null : Number(d.head);
      input.setAttribute("aria-label", this.cellName(head, Number(d.row), Number(d.col), d.pointer.split("/").length === 3));
    }
  }

  setValue(a) {
    this.value = a; this.parseError = null; this.cellErrors.clear();
    this.text.value = formatMatrix(a);
    this.render();
  }

  fromText() {
    try { this.value = parseMatrixText(this.text.value); this.parseError = null; }
    catch (e) { this.value = null; this.parseError = msg("editor.text.error", { name: this.label, problem: e.words || e.message }); }
    this.cellErrors.clear();
    this.updateBadge();
    this.onChange(this);
  }

  setMode(m) {
    if (m === "grid" && !this.gridShape()) {
      this.mode = "text";
      this.root.querySelector(`input[value="text"]`).checked = true;
      showFieldError(this.key, { client: true, words: this.parseError || msg("editor.no_grid", { name: this.label }) });
      return;
    }
    this.mode = m;
    this.render();
  }

  // "1d" for a row of numbers, "2d" for rows, "3d" for a stack of those, else null.
  gridShape() {
    const isRow = (r) => Array.isArray(r) && r.every((v) => typeof v === "number");
    const isMat = (m) => Array.isArray(m) && m.length > 0 && m.every(isRow);
    if (!this.value) return null;
    if (this.value.length > 0 && isRow(this.value)) return "1d";
    if (isMat(this.value)) return "2d";
    if (this.value.length > 0 && this.value.every(isMat)) return "3d";
    return null;
  }

  cells() { return this.value ? this.value.flat(2).length : 0; }

  updateBadge() {
    if (!this.value) { this.shapeBadge.textContent = "?"; return; }
    const { dims, ragged } = shapeOf(this.value);
    this.shapeBadge.textContent = ragged ? t("editor.ragged") : dims.join(" × ") + (dims.length === 3 ? ` ${t(`editor.per.${this.stack}`)}` : "");
  }

  render() {
    this.updateBadge();
    const shape = this.gridShape();
    const big = this.cells() > GRID_MAX_CELLS;
    this.bigNote.hidden = !big;
    const grid = this.mode === "grid" && shape && !big;
    this.root.querySelector(`input[value="${grid ? "grid" : "text"}"]`).checked = true;
    this.grid.hidden = !grid; this.text.hidden = !!grid; this.ops.hidden = !grid;
    this.grid.replaceChildren();
    if (!grid) return;
    if (shape === "1d") this.grid.append(this.table([this.value], null, true));
    else (shape === "2d" ? [this.value] : this.value).forEach((m, h) => this.grid.append(this.table(m, shape === "3d" ? h : null)));
    const first = this.grid.querySelector("input");
    if (first) first.tabIndex = 0;
    this.updateCue();
  }

  // "Columns 0–2 of 8 in view", while the grid is wider than its box.
  updateCue() {
    const wrap = this.grid, ths = [...wrap.querySelectorAll("table.edit:first-of-type thead th[scope=col]")];
    if (wrap.hidden || !wrap.clientWidth || wrap.scrollWidth <= wrap.clientWidth || !ths.length) { this.cue.hidden = true; return; }
    const box = wrap.getBoundingClientRect();
    const seen = ths.filter((th) => { const r = th.getBoundingClientRect(); return r.left >= box.left - 1 && r.right <= box.right + 1; });
    const more = seen.length ? [Number(seen[0].textContent) > 0 ? "←" : null, Number(seen.at(-1).textContent) < ths.length - 1 ? "→" : null]
      .filter(Boolean).join(" ") : "← →";
    this.cue.textContent = seen.length > 1
      ? t("editor.cue", { first: seen[0].textContent, last: seen.at(-1).textContent, cols: ths.length, more })
      : seen.length ? t("editor.cue.one", { column: seen[0].textContent, cols: ths.length, more })
        : t("editor.cue.none", { cols: ths.length, more });
    this.cue.hidden = false;
  }

  // Each input as wide as the longest number of its column: a lesson's
  // 17 significant digits are all in view.
  table(m, head, vector = false) {
    const cols = Math.max(...m.map((r) => r.length));
    const chars = range(cols).map((j) => Math.max(CELL_MIN_CHARS, ...m.map((r) => (j < r.length ? cellText(r[j]).length : 0))));
    const base = head === null ? `/${this.key}` : `/${this.key}/${head}`;
    const at = (i, j) => (vector ? `${base}/${j}` : `${base}/${i}/${j}`);
    return el("table", { class: "edit" },
      head === null ? null : el("caption", {}, t(`editor.stack.${this.stack}`, { k: String(head) })),
      el("thead", {}, el("tr", {}, el("th", {}), ...range(cols).map((j) => el("th", { scope: "col" }, j)))),
      el("tbody", {}, m.map((row, i) => el("tr", {},
        el("th", { scope: "row" }, i),
        row.map((v, j) => el("td", {}, el("input", {
          type: "text", inputmode: "decimal", value: cellText(v), title: cellText(v, true), tabindex: "-1", style: cellWidth(chars[j]),
          "aria-label": this.cellName(head, i, j, vector),
          dataset: { pointer: at(i, j), head: head === null ? "" : head, row: i, col: j, chars: chars[j] },
          oninput: (ev) => this.fromCell(ev.target, head, i, j, vector) })))))));
  }

  // "W_q row 1 column 2" (of head 0 in a stack), as a screen reader says a cell.
  cellName(head, i, j, vector) {
    const where = vector ? t("editor.cell.column", { column: String(j) }) : t("editor.cell", { row: String(i), column: String(j) });
    return head === null ? `${this.name()} ${where}`
      : `${this.name()} ${t(`editor.stack.${this.stack}`, { k: String(head) })} ${where}`;
  }

  // Keeps exactly one cell of the grid in the tab order: the last one focused.
  rove(input) {
    if (input.tagName !== "INPUT") return;
    this.grid.querySelectorAll('input[tabindex="0"]').forEach((n) => { if (n !== input) n.tabIndex = -1; });
    input.tabIndex = 0;
  }

  navigate(ev) {
    const inp = ev.target;
    if (inp.tagName !== "INPUT") return;
    const atStart = inp.selectionStart === 0 && inp.selectionEnd === 0;
    const atEnd = inp.selectionStart === inp.value.length;
    const move = { ArrowUp: [-1, 0], ArrowDown: [1, 0], Enter: [1, 0],
                   ArrowLeft: atStart ? [0, -1] : null, ArrowRight: atEnd ? [0, 1] : null }[ev.key];
    if (!move) return;
    const { head, row, col } = inp.dataset;
    const next = this.grid.querySelector(
      `input[data-head="${head}"][data-row="${Number(row) + move[0]}"][data-col="${Number(col) + move[1]}"]`);
    if (!next) return;
    ev.preventDefault();
    next.focus();
    next.select();
  }

  fromCell(input, head, i, j, vector) {
    const id = input.dataset.pointer;
    try {
      const v = parseNumber(input.value.trim(), { decimalComma: true });
      if (vector) this.value[j] = v;
      else (head === null ? this.value : this.value[head])[i][j] = v;
      this.cellErrors.delete(id);
      input.removeAttribute("aria-invalid");
      input.title = cellText(v, true);
      this.widen(input);
      this.text.value = formatMatrix(this.value);
    } catch (e) {
      this.cellErrors.add(id);
      input.setAttribute("aria-invalid", "true");
      this.cellError = new ClientError(id, msg(vector ? "editor.cell.error.column" : "editor.cell.error",
        { name: this.label, row: String(i), column: String(j), problem: e.words || e.message }));
    }
    this.onChange(this);
  }

  // A number typed longer than its column widens the column.
  widen(input) {
    const len = input.value.length;
    if (len <= Number(input.dataset.chars || CELL_MIN_CHARS)) return;
    const { head, col } = input.dataset;
    for (const n of this.grid.querySelectorAll(`input[data-head="${head}"][data-col="${col}"]`)) {
      n.style.width = cellWidth(len).slice(6); n.dataset.chars = len;
    }
    this.updateCue();
  }

  resize(dRows, dCols) {
    const shape = this.gridShape();
    if (!shape) return;
    if (shape === "1d") {
      if (dCols > 0) this.value.push(0);
      if (dCols < 0 && this.value.length > 1) this.value.pop();
      this.setValue(this.value);
      this.onChange(this);
      return;
    }
    const fix = (m) => {
      if (dRows > 0) m.push(new Array(m[0].length).fill(0));
      if (dRows < 0 && m.length > 1) m.pop();
      m.forEach((r) => { if (dCols > 0) r.push(0); if (dCols < 0 && r.length > 1) r.pop(); });
    };
    (shape === "2d" ? [this.value] : this.value).forEach(fix);
    this.setValue(this.value);
    this.onChange(this);
  }

  // The array to send; throws ClientError when the page already knows it is wrong.
  read() {
    if (this.parseError) throw new ClientError(`/${this.key}`, this.parseError);
    if (this.cellErrors.size) throw this.cellError;
    return this.value;
  }

  rows() { return this.value && Array.isArray(this.value) ? this.value.length : 0; }
  // Rows of one matrix: of each sequence in a batch, of each head in a stack.
  matRows() { return this.gridShape() === "3d" ? this.value[0].length : this.rows(); }
}

