/*
 * weight-scale.js - the colour scale of a whole head's attention weights
 * (the small multiples, the head view, the model view): from 0 to a largest
 * weight, not to 1, so that with many keys, where every weight is small, the
 * weights still show.  "One colour scale" (the page's option) puts every
 * head on one scale, to the largest weight of any head; without it each head
 * runs to its own largest weight.
 */
import { $, el, range } from "./base.js";
import { ui } from "./state.js";
import { anyHead } from "./reply.js";
import { fmt } from "./format.js";
import { PALETTES } from "./colour.js";

export const oneScale = () => $("one-scale").checked;

// The largest weight of a head's plane {rows, cols, off, data}.
export function largestWeight(s) {
  const d = s.data;
  let top = 0;
  for (let p = 0; p < s.rows * s.cols; p++) if (d[s.off + p] > top) top = d[s.off + p];
  return top;
}

// Each head's largest weight (of the sequence on show): read once per reply,
// sequence and set of every head's weights, then kept while only the open
// head changes.
let memo = { R: null, all: null, seq: -1, tops: null };
export function headTops(R) {
  if (memo.R !== R || memo.all !== R.all || memo.seq !== ui.selectedSeq) {
    const tops = range(R.H).map((k) => largestWeight(anyHead(R, "weights", k)));
    memo = { R, all: R.all, seq: ui.selectedSeq, tops };
  }
  return memo.tops;
}

// The weight head k's darkest colour stands for.
export function weightTop(R, k) {
  const tops = headTops(R);
  return oneScale() ? Math.max(0, ...tops) : tops[k];
}

// A weight's index in the sequential palette (0 … 255) on a scale from 0 to top.
export const weightShade = (w, top) => (top > 0 ? Math.round(Math.min(1, Math.max(0, w) / top) * 255) : 0);

// A legend's nodes: the palette from 0 to top (null: to each head's own
// largest weight), then the note of whose weight the darkest colour is.
export function legendNodes(top, note) {
  const pal = PALETTES.seq.css;
  const bar = el("span", { class: "bar", style: `background:linear-gradient(90deg,${[0, 64, 128, 192, 255].map((k) => pal[k]).join(",")})` });
  return ["0", bar, top === null ? "its largest" : fmt(top), el("span", { class: "scale-note" }, note)];
}

// The legend of the heads drawn (one, for the head view).
export function weightLegend(R, heads) {
  if (oneScale() && R.H > 1) return legendNodes(weightTop(R, heads[0]), "one scale for every head: its darkest is the largest weight of any head");
  if (heads.length === 1) return legendNodes(weightTop(R, heads[0]), `${R.H > 1 ? `head ${heads[0]}'s own scale: ` : ""}its darkest is its largest weight`);
  const tops = headTops(R);
  return legendNodes(null, `each head on its own scale, its darkest its largest weight: ${heads.map((k) => `head ${k} ${fmt(tops[k])}`).join(", ")}`);
}
