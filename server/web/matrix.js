/*
 * matrix.js - a matrix on screen: a table of numbers, or a canvas when they
 * do not fit.
 */
import { el, range } from "./base.js";
import { exact, exactText, fmt } from "./format.js";
import { MASKED_RGB, PALETTES } from "./colour.js";
import { t } from "./words.js";

export const TABLE_MAX_ROWS = 64; // more rows: a canvas (a table that tall is a wall of numbers)
// A matrix of more cells is drawn only when it comes near the screen: at 256
// tokens the cards below the first screen would cost most of an edit.
export const LAZY_CELLS = 8192, LAZY_MARGIN_PX = 300;
export const CELL_MAX_PX = 28, GRID_MAX_H = 640, LABEL_FONT = '11px system-ui, "DejaVu Sans", sans-serif';
export let measureCtx = null;
export function textWidth(text, font) {
  measureCtx = measureCtx || document.createElement("canvas").getContext("2d");
  if (measureCtx.fontSet !== font) { measureCtx.font = font; measureCtx.fontSet = font; }
  return measureCtx.measureText(text).width;
}
// The table's font: 12 px, 11 px on a phone (as the CSS says), in the --mono
// of the element drawn (inside an embed's shadow root, a course page's own).
export const monoFont = (node) => `${matchMedia("(max-width: 600px)").matches ? 11 : 12}px `
  + (getComputedStyle(node).getPropertyValue("--mono").trim()
     || getComputedStyle(document.documentElement).getPropertyValue("--mono").trim() || "monospace"); // not in a document yet
export const shorten = (s, k) => (s.length > k ? s.slice(0, k - 1) + "…" : s);

export class MatrixView {
  // spec: id, stage, name, title, formula, shape, from, rows, cols, src (its
  // numbers: src.data from off), rowLabels, colLabels, kind ("seq" | "div"),
  // masked(i, j), groups, sum, dtype, arrow (labels read "row → col"),
  // onPoint(view, i, j, how).  Nothing reads the numbers before the matrix is drawn.
  constructor(spec) {
    Object.assign(this, spec);
    this.cur = [0, 0]; this.zoom = 1; this.marks = null; this.mode = null;
    this.legendNode = el("div", { class: "legend", "aria-hidden": "true" });
    this.readout = el("p", { class: "readout", "aria-live": "polite" }, " ");
    this.body = el("div", { class: "scroll" });
    this.zoomBar = el("span", { class: "zoom", hidden: true },
      el("button", { type: "button", class: "small", "aria-label": t("views.zoom_out", { card: this.title }), onclick: () => this.setZoom(this.zoom / 2) }, "−"),
      el("button", { type: "button", class: "small", "aria-label": t("views.zoom_in", { card: this.title }), onclick: () => this.setZoom(this.zoom * 2) }, "+"));
    this.root = el("div", { class: "card", id: this.id, dataset: { stage: this.stage } },
      el("h3", {}, this.title, this.lessonName || null,
        // the API tensor a slice is of is named as the API writes it: code, whatever the language (data-code)
        el("span", { class: "shape", title: this.from ? t("views.slice_of", { stage: this.from }) : t("views.shape"),
                     dataset: this.from ? { code: this.stage } : {} }, "(" + this.shape.join(", ") + ")"),
        this.zoomBar),
      this.formula ? el("p", { class: "formula" }, this.formula) : null,
      this.body, this.readout, this.legendNode, ...(this.notes || []));
  }

  get data() { return this.src.data; }
  // the largest magnitude, the diverging palette's end
  get max() {
    if (this.maxAbs === undefined) {
      let M = 0;
      const d = this.data;
      for (let k = 0; k < this.rows * this.cols; k++) {
        const a = Math.abs(d[this.off + k]);
        if (a > M && a !== Infinity) M = a;
      }
      this.maxAbs = M;
    }
    return this.maxAbs;
  }
  get(i, j) { return this.data[this.off + i * this.cols + j]; }
  isMasked(i, j) { return this.masked ? this.masked(i, j) : false; }
  color(v) {
    const t = this.kind === "seq" ? Math.min(1, Math.max(0, v)) : this.max > 0 ? (v / this.max + 1) / 2 : 0.5;
    return Math.round(t * 255);
  }
  label(i, j) {
    return this.arrow ? `${this.name}[${this.rowLabels[i]} → ${this.colLabels[j]}]`
                      : `${this.name}[${this.rowLabels[i]}, ${this.colLabels[j]}]`;
  }
  describe(i, j) {
    const v = this.get(i, j);
    return t(this.isMasked(i, j) ? "views.cell.masked" : "views.cell", { cell: this.label(i, j), value: exactText(v, this.dtype) });
  }

  legend() {
    const pal = PALETTES[this.kind];
    const bar = el("span", { class: "bar", style: `background:linear-gradient(90deg,${[0, 64, 128, 192, 255].map((k) => pal.css[k]).join(",")})` });
    const lo = this.kind === "seq" ? "0" : fmt(-this.max), hi = this.kind === "seq" ? "1" : fmt(this.max);
    let anyMasked = false;
    if (this.masked) for (let i = 0; i < this.rows && !anyMasked; i++) for (let j = 0; j < this.cols; j++) if (this.isMasked(i, j)) { anyMasked = true; break; }
    this.legendNode.replaceChildren(lo, bar, hi, ...(this.scaleNote ? [el("span", { class: "scale-note" }, this.scaleNote)] : []),
      ...(anyMasked ? [el("span", { class: "swatch masked" }), t("views.masked")] : []));
  }

  // Lays the matrix out in `avail` CSS pixels: a table when every number fits
  // whole, else a canvas that fits (numbers hidden, colour and the readout kept).
  layout(avail) {
    this.avail = avail;
    if (this.rows * this.cols > LAZY_CELLS) { this.placeholder(); return; }
    this.draw();
  }

  // A big matrix waits, in a box of its canvas's size, until it nears the
  // screen (see drawWhenSeen): an edit draws only what can be seen.
  placeholder() {
    this.mode = "lazy";
    const fitW = Math.min(CELL_MAX_PX, Math.max(1, this.avail - 40) / this.cols);
    const ch = Math.max(1, Math.min(fitW, GRID_MAX_H / this.rows));
    this.body.className = "canvas-wrap";
    this.body.replaceChildren(el("div", { class: "pending", style: `width:${Math.min(this.avail, Math.ceil(40 + this.cols * fitW))}px;`
      + `height:${Math.ceil(18 + this.rows * ch)}px` }));
  }

  draw() {
    this.legend();
    const avail = this.avail;
    const mono = monoFont(this.root), charW = textWidth("0", mono);
    if (this.rows > TABLE_MAX_ROWS || this.cols * (3 * charW + 12) > avail) { this.buildCanvas(); return; }
    // each column as wide as its longest number (or label): one long number (6.21e−4) widens its column only
    const chars = new Array(this.cols).fill(1);
    for (let k = 0; k < this.rows * this.cols; k++) {
      const len = fmt(this.data[this.off + k]).length, j = k % this.cols;
      if (len > chars[j]) chars[j] = len;
    }
    const colW = chars.map((c, j) => Math.ceil(Math.max(c * charW, textWidth(shorten(this.colLabels[j], 10), LABEL_FONT)) + 6 + 2)); // padding, and a pixel of slack each side
    const rowW = Math.ceil(Math.max(...this.rowLabels.map((r) => textWidth(shorten(r, 12), LABEL_FONT))) + 8 + 2);
    const sumW = Math.ceil(4 * charW + 6 + 2);
    const width = (withSum) => rowW + colW.reduce((a, w) => a + w, 0) + (withSum ? sumW : 0) + 2 * (this.cols + 2 + (withSum ? 1 : 0));
    if (this.rows <= TABLE_MAX_ROWS && width(false) <= avail) {
      this.buildTable(colW, rowW, this.sum && width(true) <= avail ? sumW : 0);
    } else {
      this.buildCanvas();
    }
  }

  buildTable(colW, rowW, sumW) {
    this.mode = "table";
    this.zoomBar.hidden = true;
    const pal = PALETTES[this.kind];
    const cols = [el("col", { style: `width:${rowW}px` }), ...range(this.cols).map((j) => el("col", { style: `width:${colW[j]}px` })),
                  sumW ? el("col", { style: `width:${sumW}px` }) : null];
    const head = [];
    if (this.groups) {
      head.push(el("tr", {}, el("td", {}), this.groups.map((g, k) => el("th", {
        scope: "colgroup", colspan: g.size, class: k ? "group gstart" : "group" }, g.label))));
    }
    const gstart = new Set((this.groups || []).slice(1).map((g) => g.start));
    head.push(el("tr", {}, el("td", {}), this.colLabels.map((c, j) => el("th", {
      scope: "col", title: c, class: gstart.has(j) ? "gstart" : null }, shorten(c, 10))),
      sumW ? el("th", { scope: "col", title: t("views.row_sum") }, "Σ") : null));
    this.cells = [];
    const rows = range(this.rows).map((i) => {
      const tds = range(this.cols).map((j) => {
        const v = this.get(i, j), k = this.color(v), masked = this.isMasked(i, j);
        const td = el("td", {
          class: [masked ? "masked" : "", gstart.has(j) ? "gstart" : ""].join(" ").trim() || null,
          style: masked ? null : `background:${pal.css[k]};color:${pal.ink[k]}`,
          title: this.describe(i, j),
          dataset: { row: i, col: j, value: exact(v, this.dtype) } }, masked && this.stage === "weights" ? "·" : fmt(v));
        return td;
      });
      this.cells.push(tds);
      const empty = this.emptyRows && this.emptyRows.has(i);
      let sum = 0;
      if (sumW) for (let j = 0; j < this.cols; j++) sum += this.get(i, j);
      return el("tr", {}, el("th", { scope: "row", title: empty ? t("views.row_empty", { row: this.rowLabels[i] }) : this.rowLabels[i],
                                     class: empty ? "empty-row" : null }, shorten(this.rowLabels[i], 12)),
                tds, sumW ? el("td", { class: "sum" }, fmt(sum)) : null);
    });
    const table = el("table", { class: "mat", "aria-label": this.caption ? t("views.table_label", { card: this.title, caption: this.caption }) : this.title },
      el("colgroup", {}, cols), el("thead", {}, head), el("tbody", {}, rows));
    this.cells[this.cur[0]][this.cur[1]].tabIndex = 0;
    table.addEventListener("mouseover", (ev) => { const c = this.cellOf(ev.target); if (c) this.onPoint(this, c[0], c[1], "hover"); });
    table.addEventListener("mouseleave", () => this.onPoint(this, null, null, "leave"));
    table.addEventListener("click", (ev) => { const c = this.cellOf(ev.target); if (c) { this.moveTo(c[0], c[1], false); this.onPoint(this, c[0], c[1], "activate"); } });
    table.addEventListener("focusin", (ev) => { const c = this.cellOf(ev.target); if (c) this.onPoint(this, c[0], c[1], "focus"); });
    table.addEventListener("keydown", (ev) => this.key(ev));
    this.table = table;
    this.body.className = "scroll";
    this.body.replaceChildren(table);
  }

  cellOf(node) {
    const td = node.closest && node.closest("td[data-row]");
    return td ? [Number(td.dataset.row), Number(td.dataset.col)] : null;
  }

  key(ev) {
    const [i, j] = this.cur;
    const step = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1],
                   PageUp: [-10, 0], PageDown: [10, 0], Home: [0, -j], End: [0, this.cols - 1 - j] }[ev.key];
    if (step) {
      ev.preventDefault();
      const ni = Math.max(0, Math.min(this.rows - 1, i + step[0])), nj = Math.max(0, Math.min(this.cols - 1, j + step[1]));
      this.moveTo(ni, nj, true);
      this.onPoint(this, ni, nj, "focus");
    } else if (ev.key === "Enter" || ev.key === " ") {
      ev.preventDefault();
      this.onPoint(this, i, j, "activate");
    }
  }

  moveTo(i, j, focus) {
    if (this.mode === "table") {
      const old = this.cells[this.cur[0]][this.cur[1]];
      old.removeAttribute("tabindex");
      this.cur = [i, j];
      const td = this.cells[i][j];
      td.tabIndex = 0;
      if (focus) td.focus();
    } else {
      this.cur = [i, j];
      this.drawOverlay();
    }
  }

  setZoom(z) {
    this.zoom = Math.max(1, Math.min(16, z));
    this.buildCanvas();
  }

  buildCanvas() {
    this.mode = "canvas";
    this.cells = null;
    const dpr = window.devicePixelRatio || 1, { rowEvery, rowText } = this.canvasGeometry(dpr);
    this.zoomBar.hidden = false;
    const W = Math.ceil(this.left + this.gridW), Hh = Math.ceil(this.top + this.gridH);
    const mk = (cls) => {
      const c = el("canvas", { class: cls, width: Math.round(W * dpr), height: Math.round(Hh * dpr),
                               style: `width:${W}px;height:${Hh}px` });
      c.getContext("2d").scale(dpr, dpr);
      return c;
    };
    // one canvas on the page; the drawn cells and labels are kept off-page in
    // `base`, and each highlight repaints from it (fewer, cheaper layers)
    const base = mk("base"), over = mk("overlay");
    const g = base.getContext("2d");
    this.paintCells(g);
    this.paintNumbers(g);
    this.paintLabels(g, rowEvery, rowText);
    this.listenOverlay(over);
    this.base = base; this.over = over;
    this.body.className = "canvas-wrap";
    this.body.replaceChildren(over);
    this.drawOverlay();
  }

  // The cells' size and the grid's place on the canvas (this.cw, ch, left,
  // top, gridW, gridH), at zoom, for a device pixel ratio of dpr; which rows
  // are labelled, and how.
  canvasGeometry(dpr) {
    const avail = this.avail;
    const fitW = Math.min(CELL_MAX_PX, Math.max(1, avail - 40) / this.cols);
    const cw = fitW * this.zoom;
    const ch = Math.max(1, Math.min(fitW, GRID_MAX_H / this.rows)) * this.zoom;
    const rowEvery = Math.ceil(12 / ch);
    const rowText = (i) => (rowEvery === 1 ? shorten(this.rowLabels[i], 12) : String(i));
    let left = 4;
    for (let i = 0; i < this.rows; i += rowEvery) left = Math.max(left, textWidth(rowText(i), LABEL_FONT) + 6);
    left = Math.ceil(Math.min(left, 96));
    const top = this.groups ? 18 : 16;
    const maxDim = 8192 / dpr;
    const gridW = Math.min(this.cols * cw, maxDim - left), gridH = Math.min(this.rows * ch, maxDim - top);
    Object.assign(this, { cw: gridW / this.cols, ch: gridH / this.rows, left, top, gridW, gridH });
    return { rowEvery, rowText };
  }

  // The cells drawn into g, one pixel each, scaled up without smoothing.
  paintCells(g) {
    const { left, top, gridW, gridH } = this;
    const img = new ImageData(this.cols, this.rows), px = img.data, pal = PALETTES[this.kind].rgb;
    for (let i = 0; i < this.rows; i++) for (let j = 0; j < this.cols; j++) {
      const v = this.get(i, j), o = 4 * (i * this.cols + j);
      const c = this.isMasked(i, j) ? MASKED_RGB : pal[this.color(v)];
      px[o] = c[0]; px[o + 1] = c[1]; px[o + 2] = c[2]; px[o + 3] = 255;
    }
    const off = el("canvas", { width: this.cols, height: this.rows });
    off.getContext("2d").putImageData(img, 0, 0);
    g.imageSmoothingEnabled = false;
    g.drawImage(off, left, top, gridW, gridH);
    // masked cells hatched when big enough to see it
    if (this.masked && this.cw >= 6 && this.ch >= 6) {
      g.strokeStyle = "#8a8a8a"; g.lineWidth = 1;
      for (let i = 0; i < this.rows; i++) for (let j = 0; j < this.cols; j++) if (this.isMasked(i, j)) {
        const x = left + j * this.cw, y = top + i * this.ch;
        g.beginPath(); g.moveTo(x, y + this.ch); g.lineTo(x + this.cw, y); g.stroke();
      }
    }
  }

  // The numbers drawn into g, all or none: when zoomed in far enough for
  // every one to fit.
  paintNumbers(g) {
    const { left, top } = this;
    const mono = monoFont(this.root), charW = textWidth("0", mono);
    if (this.ch >= 14 && this.cw >= 3 * charW + 6 && this.rows * this.cols <= 20000) {
      let chars = 1;
      for (let k = 0; k < this.rows * this.cols; k++) chars = Math.max(chars, fmt(this.data[this.off + k]).length);
      if (chars * charW + 6 <= this.cw) {
        const ink = PALETTES[this.kind].ink;
        g.font = mono; g.textAlign = "right"; g.textBaseline = "middle";
        for (let i = 0; i < this.rows; i++) for (let j = 0; j < this.cols; j++) {
          const v = this.get(i, j);
          g.fillStyle = this.isMasked(i, j) ? "#000" : ink[this.color(v)];
          g.fillText(fmt(v), left + (j + 1) * this.cw - 3, top + (i + 0.5) * this.ch);
        }
      }
    }
  }

  // The rows' labels (every rowEvery-th, as rowText writes it), the columns'
  // labels or their groups', drawn into g.
  paintLabels(g, rowEvery, rowText) {
    const { left, top, gridH } = this, colText = (j) => (this.groups ? "" : this.colLabels[j]);
    g.fillStyle = "#545c6b"; g.font = LABEL_FONT; g.textAlign = "right"; g.textBaseline = "middle";
    for (let i = 0; i < this.rows; i += rowEvery) g.fillText(rowText(i), left - 4, top + (i + 0.5) * this.ch);
    g.textAlign = "center"; g.textBaseline = "bottom";
    if (this.groups) {
      g.fillStyle = "#1d2330"; g.strokeStyle = "#1d2330"; g.lineWidth = 2;
      for (const grp of this.groups) {
        const x0 = left + grp.start * this.cw, w = grp.size * this.cw;
        if (textWidth(grp.label, LABEL_FONT) < w) g.fillText(grp.label, x0 + w / 2, top - 3);
        if (grp.start) { g.beginPath(); g.moveTo(x0, top - 14); g.lineTo(x0, top + gridH); g.stroke(); }
      }
    } else {
      const labelW = this.cw < 8 ? Infinity : Math.max(...this.colLabels.map((c) => textWidth(shorten(c, 10), LABEL_FONT)));
      const colEvery = labelW + 4 <= this.cw ? 1 : Math.ceil((textWidth(String(this.cols), LABEL_FONT) + 6) / this.cw);
      for (let j = 0; j < this.cols; j += colEvery)
        g.fillText(colEvery === 1 ? shorten(colText(j), 10) : String(j), left + (j + 0.5) * this.cw, top - 2);
    }
  }

  // The overlay canvas: its name for a screen reader, and what the pointer
  // and the keys do on it.
  listenOverlay(over) {
    over.tabIndex = 0;
    over.setAttribute("role", "img");
    over.setAttribute("aria-label", t(this.caption ? "views.canvas_label.caption" : "views.canvas_label",
      { card: this.title, rows: this.rows, cols: this.cols, caption: this.caption || "" }));
    over.addEventListener("mousemove", (ev) => { const c = this.canvasCell(ev); if (c) this.onPoint(this, c[0], c[1], "hover"); });
    over.addEventListener("mouseleave", () => this.onPoint(this, null, null, "leave"));
    over.addEventListener("click", (ev) => { const c = this.canvasCell(ev); if (c) { this.moveTo(c[0], c[1], false); this.onPoint(this, c[0], c[1], "activate"); } });
    over.addEventListener("focus", () => this.onPoint(this, this.cur[0], this.cur[1], "focus"));
    over.addEventListener("blur", () => this.drawOverlay());
    over.addEventListener("keydown", (ev) => this.key(ev));
  }

  canvasCell(ev) {
    const r = this.over.getBoundingClientRect();
    const j = Math.floor((ev.clientX - r.left - this.left) / this.cw), i = Math.floor((ev.clientY - r.top - this.top) / this.ch);
    return i >= 0 && j >= 0 && i < this.rows && j < this.cols ? [i, j] : null;
  }

  // Linked highlighting: rows, columns and cells that belong to the pointed cell.
  mark(marks) {
    this.marks = marks;
    if (this.mode === "table") {
      this.table.querySelectorAll(".hl, .hl-cell").forEach((n) => n.classList.remove("hl", "hl-cell"));
      if (!marks) return;
      for (const i of marks.rows || []) if (this.cells[i]) this.cells[i].forEach((td) => td.classList.add("hl"));
      for (const j of marks.cols || []) this.cells.forEach((r) => r[j] && r[j].classList.add("hl"));
      for (const [i, j] of marks.cells || []) if (this.cells[i] && this.cells[i][j]) this.cells[i][j].classList.add("hl-cell");
    } else if (this.mode === "canvas") this.drawOverlay();
  }

  drawOverlay() {
    if (!this.over) return;
    const g = this.over.getContext("2d"), { left, top, cw, ch, gridW, gridH } = this;
    g.clearRect(0, 0, left + gridW + 2, top + gridH + 2);
    g.drawImage(this.base, 0, 0, this.base.width, this.base.height, 0, 0, this.base.width / (window.devicePixelRatio || 1),
                this.base.height / (window.devicePixelRatio || 1));
    const m = this.marks;
    g.lineWidth = 2; g.strokeStyle = "#e65100";
    if (m) {
      for (const i of m.rows || []) g.strokeRect(left + 1, top + i * ch, gridW - 2, Math.max(ch, 2));
      for (const j of m.cols || []) g.strokeRect(left + j * cw, top + 1, Math.max(cw, 2), gridH - 2);
      g.lineWidth = 3;
      for (const [i, j] of m.cells || []) g.strokeRect(left + j * cw - 1, top + i * ch - 1, Math.max(cw, 3) + 2, Math.max(ch, 3) + 2);
    }
    if (document.activeElement === this.over) {
      const [i, j] = this.cur;
      g.strokeStyle = "#1d2330"; g.lineWidth = 2;
      g.strokeRect(left + j * cw - 2, top + i * ch - 2, Math.max(cw, 3) + 4, Math.max(ch, 3) + 4);
    }
  }
}

