/*
 * weight-scale.js - the colour scale of a whole head's attention weights
 * (the small multiples, the head view, the model view).  "One colour scale"
 * (the page's option, on by default) draws every head from 0 to 1: a weight
 * is a share of the row, so a near-uniform head (lesson 000's 0.19 … 0.44)
 * stays pale and a sharp one dark, and one colour is one weight in every
 * head.  Turned off, each head runs to its own largest weight, so that with
 * many keys, where every weight is small, a head's pattern still shows; the
 * legend then names each head's darkest weight.
 */
import { $, el, range } from "./base.js";
import { ui } from "./state.js";
import { anyHead } from "./reply.js";
import { PALETTES } from "./colour.js";
import { lang } from "./locale.js";
import { nodes, t } from "./words.js";

export const oneScale = () => $("one-scale")?.checked ?? true; // an embed (embed-head.js) has no such box: the page's default
export const WEIGHT_MAX = 1; // a softmax weight's largest possible value: the shared scale's end

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
  return oneScale() ? WEIGHT_MAX : headTops(R)[k];
}

// A weight's index in the sequential palette (0 … 255) on a scale from 0 to top.
export const weightShade = (w, top) => (top > 0 ? Math.round(Math.min(1, Math.max(0, w) / top) * 255) : 0);

// Items said as one list in the page's language ("head 0 0.7, head 1 0.4").
export const listOf = (items) => new Intl.ListFormat(lang(), { style: "short", type: "unit" }).format(items);

// A legend's nodes: the palette from 0 to top (null: to each head's own
// largest weight), then the note of whose weight the darkest colour is.
export function legendNodes(top, note, colours = [0, 64, 128, 192, 255].map((k) => PALETTES.seq.css[k])) {
  const bar = el("span", { class: "bar", style: `background:linear-gradient(90deg,${colours.join(",")})` });
  return [...nodes("views.scale.number", { value: 0 }), bar,
    top === null ? t("views.scale.its_largest") : t("views.scale.number", { value: top }), el("span", { class: "scale-note" }, note)];
}

// The legend's words for the heads drawn (one, for the head view), and the
// end of its scale (null: each head its own).
export function weightScaleWords(R, heads) {
  if (oneScale()) return { top: WEIGHT_MAX, note: t(R.H > 1 ? "views.scale.weights.fixed_heads" : "views.scale.weights.fixed") };
  const tops = headTops(R);
  if (heads.length === 1) {
    return { top: tops[heads[0]], note: t(R.H > 1 ? "views.scale.weights.own_head" : "views.scale.weights.own", { head: heads[0] }) };
  }
  return { top: null, note: t("views.scale.weights.own_each", {
    list: listOf(heads.map((k) => t("views.scale.head_top", { head: k, top: tops[k] }))) }) };
}

// The legend of the heads drawn (one, for the head view).
export function weightLegend(R, heads) {
  const { top, note } = weightScaleWords(R, heads);
  return legendNodes(top, note);
}
