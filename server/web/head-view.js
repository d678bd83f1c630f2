/*
 * head-view.js - the head view: lines from each query to the keys it
 * attends, and the model view's drawing.
 */
import { ui } from "./state.js";
import { el, range } from "./base.js";
import { anyHead, slice } from "./reply.js";
import { exact } from "./format.js";
import { MASKED_RGB, PALETTES, luminance } from "./colour.js";
import { shorten, textWidth } from "./matrix.js";
import { views } from "./cards.js";
import { mayMask } from "./lesson-names.js";
import { legendNodes, listOf, weightScaleWords, weightShade, weightTop } from "./weight-scale.js";
import { t } from "./words.js";

// bertviz's head view on SVG: queries on the left, keys on the right, one
// line per pair, as thick and as dark as its weight on the small multiples'
// scale (weight-scale.js: 0 to 1 with "One colour scale", else 0 to the
// head's largest weight; the legend says which).  A line's colour starts at
// the palette's first colour with LINE_CONTRAST against white (WCAG's 3:1
// for graphics), so that the small weights of many keys are thin lines one
// can see, not pale yellow on white.  Past HEAD_VIEW_MAX_LINES pairs only the
// chosen query's lines are drawn (arrow keys or pointing choose it).
export const HEAD_VIEW_MAX_LINES = 2500;
export const LINE_CONTRAST = 3;
export const LINE_FIRST = PALETTES.seq.rgb.findIndex((c) => 1.05 / (luminance(c) + 0.05) >= LINE_CONTRAST);
export const SVG_NS = "http://www.w3.org/2000/svg";
const lineShade = (t) => LINE_FIRST + Math.round(t * (255 - LINE_FIRST));
// The line colours from a weight of 0 to the scale's end, for a legend.
export const LINE_COLOURS = [0, 0.25, 0.5, 0.75, 1].map((t) => PALETTES.seq.css[lineShade(t)]);
// A line's stroke, width and opacity for weight w on a scale to top.
export function lineLook(w, top) {
  const t = top > 0 ? Math.min(1, Math.max(0, w) / top) : 0;
  return { stroke: PALETTES.seq.css[lineShade(t)], width: (1 + 4 * t).toFixed(2), opacity: "1" };
}
export function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== null && v !== undefined) node.setAttribute(k, v);
  node.append(...children);
  return node;
}

// A picture's title in the page's language: its words for one head (of a
// sequence of a batch), or for the only head.
export function headTitle(R, h, id) {
  if (R.B) return t(`${id}.head_seq`, { head: h, seq: ui.selectedSeq });
  return t(R.H > 1 ? `${id}.head` : id, { head: h });
}

// The head view as a drawing to export (share.js frames it: title and legend
// inside): every pair's line, or (past HEAD_VIEW_MAX_LINES pairs) the chosen
// query's, as on the page.
export function headViewDrawing(R, h, chosen) {
  const W = slice(R, "weights", h), n = R.n, m = R.m, dense = n * m > HEAD_VIEW_MAX_LINES;
  const rowH = Math.max(3, Math.min(18, 640 / Math.max(n, m))), every = Math.ceil(11 / rowH);
  const label = "11px DejaVu Sans, sans-serif", top = 0, darkest = weightTop(R, h);
  const side = Math.ceil(Math.max(40, ...R.ql.map((q) => textWidth(shorten(q, 12), label)), ...R.kl.map((k) => textWidth(shorten(k, 12), label)))) + 10;
  const width = Math.max(480, 2 * side + 240);
  const y = (i) => top + (i + 0.5) * rowH;
  const texts = [];
  for (let i = 0; i < n; i += every) texts.push({ x: side - 6, y: y(i) + 4, text: shorten(R.ql[i], 12), font: label, anchor: "end", fill: "#545c6b" });
  for (let j = 0; j < m; j += every) texts.push({ x: width - side + 6, y: y(j) + 4, text: shorten(R.kl[j], 12), font: label, anchor: "start", fill: "#545c6b" });
  const lines = [];
  for (let i = 0; i < n; i++) {
    if (dense && i !== chosen) continue;
    for (let j = 0; j < m; j++) {
      const w = W.data[W.off + i * m + j];
      if (w > 0) lines.push({ x1: side, y1: y(i), x2: width - side, y2: y(j), ...lineLook(w, darkest), q: i, k: j, w: exact(w, R.dtype) });
    }
  }
  const { top: end, note } = weightScaleWords(R, [h]);
  return { width, height: Math.ceil(top + Math.max(n, m) * rowH + 4), rects: [], texts, lines,
    title: headTitle(R, h, "hv.export.title"), subtitle: dense ? t("hv.export.one_query", { query: R.ql[chosen] }) : null,
    legend: { lo: 0, hi: end, colours: LINE_COLOURS, note } };
}

// The model view (every head's weights side by side) as a drawing to export:
// up to four heads a row, a cell per pair (masked grey) while a head has at
// most 4 096 pairs, else one pixel per pair in an image.  A head's column is
// as wide as its label, so no two labels meet.
export function modelViewDrawing(R) {
  const n = R.n, m = R.m, pal = PALETTES.seq.rgb, label = "12px DejaVu Sans, sans-serif";
  const cs = Math.max(1, Math.min(24, Math.floor(240 / Math.max(n, m)))), per = Math.min(R.H, 4), gap = 16, top = 18;
  const headW = m * cs, headH = n * cs;
  const names = range(R.H).map((k) => t("mv.export.head", { head: k }));
  const colW = Math.max(headW, Math.ceil(Math.max(...names.map((s) => textWidth(s, label))))) + gap;
  const tops = range(R.H).map((k) => weightTop(R, k));
  const texts = [], rects = [], images = [];
  for (let k = 0; k < R.H; k++) {
    const W = anyHead(R, "weights", k), ms = mayMask(R) ? anyHead(R, "masked_scores", k) : null;
    const x0 = (k % per) * colW, y0 = top + Math.floor(k / per) * (headH + top + gap);
    texts.push({ x: x0, y: y0 - 5, text: names[k], font: label, anchor: "start", fill: "#1d2330" });
    const colour = (p) => (ms && ms.data[ms.off + p] === -Infinity ? MASKED_RGB : pal[weightShade(W.data[W.off + p], tops[k])]);
    if (n * m <= 4096) {
      for (let i = 0; i < n; i++) for (let j = 0; j < m; j++) rects.push({ x: x0 + j * cs, y: y0 + i * cs, w: cs, h: cs,
        fill: `rgb(${colour(i * m + j).join(",")})`, head: k, row: i, col: j, value: exact(W.data[W.off + i * m + j], R.dtype) });
    } else {
      const c = el("canvas", { width: m, height: n }), img = new ImageData(m, n);
      for (let p = 0; p < n * m; p++) { const col = colour(p); img.data.set([col[0], col[1], col[2], 255], 4 * p); }
      c.getContext("2d").putImageData(img, 0, 0);
      images.push({ x: x0, y: y0, w: headW, h: headH, canvas: c, head: k });
    }
  }
  const rowsOfHeads = Math.ceil(R.H / per), { top: end, note } = weightScaleWords(R, range(R.H));
  const title = R.B ? t("mv.export.title_seq", { n, m, seq: ui.selectedSeq }) : t("mv.export.title", { n, m });
  return { width: per * colW - gap, height: rowsOfHeads * (headH + top + gap) - gap, rects, texts, images, title,
    subtitle: mayMask(R) ? t("mv.export.masked") : null, legend: { lo: 0, hi: end, colours: null, note } };
}

export function headView(R, h, avail) {
  const W = slice(R, "weights", h), n = R.n, m = R.m;
  const dense = n * m > HEAD_VIEW_MAX_LINES;
  const rowH = Math.max(3, Math.min(18, 640 / Math.max(n, m)));
  const every = Math.ceil(11 / rowH);
  const width = Math.min(avail, 460), side = 90, height = Math.max(n, m) * rowH + 8;
  const y = (i) => 4 + (i + 0.5) * rowH;
  const readout = el("p", { class: "readout", "aria-live": "polite" }, " "), top = weightTop(R, h), scale = weightScaleWords(R, [h]);
  const lines = svg("g", { class: "lines" });
  const root = svg("svg", { width, height, viewBox: `0 0 ${width} ${height}`, tabindex: "0", role: "img",
    "aria-label": t("hv.aria", { head: h }) });
  const labels = svg("g", { class: "labels", "font-size": "11", fill: "#545c6b" });
  for (let i = 0; i < n; i += every) labels.append(svg("text", { x: side - 6, y: y(i), "text-anchor": "end", "dominant-baseline": "middle" }, shorten(R.ql[i], 12)));
  for (let j = 0; j < m; j += every) labels.append(svg("text", { x: width - side + 6, y: y(j), "dominant-baseline": "middle" }, shorten(R.kl[j], 12)));
  root.append(lines, labels);
  let chosen = 0;
  const draw = () => {
    lines.replaceChildren();
    for (let i = 0; i < n; i++) {
      if (dense && i !== chosen) continue;
      for (let j = 0; j < m; j++) {
        const w = W.data[W.off + i * m + j];
        if (w <= 0) continue;
        const look = lineLook(w, top);
        lines.append(svg("line", { x1: side, y1: y(i), x2: width - side, y2: y(j), stroke: look.stroke,
          "stroke-width": look.width, "stroke-opacity": look.opacity, "data-q": i, "data-k": j, "data-w": exact(w, R.dtype) }));
      }
    }
  };
  const choose = (i) => {
    chosen = Math.max(0, Math.min(n - 1, i));
    if (dense) draw();
    lines.querySelectorAll("line").forEach((l) => l.classList.toggle("dim", Number(l.dataset.q) !== chosen));
    const row = range(m).map((j) => [W.data[W.off + chosen * m + j], j]).sort((a, b) => b[0] - a[0]).slice(0, 3);
    readout.textContent = t("hv.attends_most", { query: R.ql[chosen], list: listOf(row.map(([w, j]) => t("hv.key_weight", { key: R.kl[j], weight: w }))) });
  };
  draw();
  root.addEventListener("keydown", (ev) => {
    const step = { ArrowUp: -1, ArrowDown: 1, PageUp: -10, PageDown: 10 }[ev.key];
    if (step) { ev.preventDefault(); choose(chosen + step); }
  });
  root.addEventListener("focus", () => choose(chosen));
  root.addEventListener("mousemove", (ev) => {
    const r = root.getBoundingClientRect();
    if (ev.clientX - r.left < width / 2) choose(Math.floor((ev.clientY - r.top - 4) / rowH));
  });
  root.addEventListener("mouseleave", () => lines.querySelectorAll("line.dim").forEach((l) => l.classList.remove("dim")));
  const card = el("div", { class: "card", id: `h${h}-lines`, dataset: { stage: "lines" } },
    el("h3", {}, t("hv.title"), el("span", { class: "shape" }, `${n} → ${m}`)),
    el("p", { class: "formula" }, dense ? t("hv.formula.dense", { n, m }) : t("hv.formula")),
    el("div", { class: "scroll" }, root), readout,
    el("div", { class: "legend" }, ...legendNodes(scale.top, scale.note, LINE_COLOURS)));
  // linked highlighting: a pointed weight lights its line
  views[card.id] = { id: card.id, drawing: () => headViewDrawing(R, h, chosen), mark(marks) {
    lines.querySelectorAll("line.hl").forEach((l) => l.classList.remove("hl"));
    if (!marks) return;
    for (const [i, j] of marks.cells || []) {
      if (dense && i !== chosen) choose(i);
      const l = lines.querySelector(`line[data-q="${i}"][data-k="${j}"]`);
      if (l) l.classList.add("hl");
    }
  } };
  return card;
}

