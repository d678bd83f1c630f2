/*
 * explain.js - explain any number: its formula with the live numbers.
 */
import { lastGood, ui } from "./state.js";
import { $, el, range } from "./base.js";
import { shapeOf } from "./parse.js";
import { kvHead, nested, slice } from "./reply.js";
import { exactText, fmt, focusExact } from "./format.js";
import { views } from "./cards.js";
import { STAGE_WORDS, stageName } from "./lesson-names.js";
import { PAIR_STAGES } from "./fields.js";
import { afterRenderHooks } from "./hooks.js";
import { nodes, t } from "./words.js";
import { onLangChange } from "./locale.js";

// The arithmetic behind one cell, redone here in float64 from the numbers the
// API returned (q, k, v, the weights) and the numbers sent (X, W), each term
// shown; the API's own value stands beside the result.  Every number carries
// data-exact (its full value) so it can be checked.
export const EXPLAIN_MAX_TERMS = 64; // longer sums show their first terms; the sum is over all

export const full = (v) => (Object.is(v, -0) ? "-0" : String(v)); // every bit of the double, the sign of zero too
export function num(v, term, extra = {}) {
  return focusExact(el("span", { class: "num", dataset: { term, exact: full(v), ...extra } }, fmt(v)), v, "float64");
}
// The API's number beside the page's, its stage named as the page's cards name
// it (the raw product "QKᵀ": lesson 000's `scores` and 002's `skor` are scaled);
// a stage with no word (q_rope, x_pe) by the API's field name.
export function apiNum(R, v, stage) {
  return el("span", { class: "api" }, ...nodes("explain.api", { stage: STAGE_WORDS.includes(stage) ? t(`views.stage.${stage}`) : el("code", {}, stage),
    value: focusExact(el("span", { class: "num", dataset: { term: `api-${stage}`, exact: full(v) } }, fmt(v)), v, R.dtype) }));
}
export function rowOf(R, stage, h, i) {
  const s = slice(R, stage, h);
  return Array.from(s.data.subarray(s.off + i * s.cols, s.off + (i + 1) * s.cols));
}
// One projection as sent, whatever its names and layout: W (the matrix or
// stack), torch (out×in), row0 (its first row inside in_proj_weight), the
// bias b and its offset inside in_proj_bias, and a name to show.
export function projection(b, p) {
  if (b.in_proj_weight || b.q_proj_weight) {
    const k = { q: 0, k: 1, v: 2 }[p];
    if (p === "o") return { W: b.out_proj_weight, torch: true, row0: 0, b: b.out_proj_bias, b0: 0, name: "out_proj_weight" };
    const own = b[`${p}_proj_weight`], e = (b.in_proj_weight || own).length / (own ? 1 : 3);
    return { W: own || b.in_proj_weight, torch: true, row0: own ? 0 : k * e, b: b.in_proj_bias, b0: k * (b.q_proj_weight ? b.q_proj_weight.length : e),
             name: own ? `${p}_proj_weight` : "in_proj_weight" };
  }
  return { W: b[`w_${p}`], torch: b.layout === "torch", row0: 0, b: b[`b_${p}`], b0: 0, name: `W_${p}` };
}
// Column c of head g of a projection (the weights that make output column c), and its bias.
export function weightColumn(P, g, width, c) {
  const W = P.W;
  if (Array.isArray(W[0][0])) return P.torch ? W[g][c].slice() : W[g].map((r) => r[c]);
  return P.torch ? W[P.row0 + g * width + c].slice() : W.map((r) => r[g * width + c]);
}
export function biasOf(P, g, width, c) {
  if (!P.b) return null;
  return Array.isArray(P.b[0]) ? P.b[g][c] : P.b[P.b0 + g * width + c];
}

// a · b term by term: a table of the products and their sum (in index
// order); names: the terms' data-term, heads: their columns' headings.
export function dotTable(labels, a, b, names, labelName, heads = names) {
  let sum = 0;
  const rows = [];
  a.forEach((x, t) => {
    const p = x * b[t];
    sum += p;
    if (t < EXPLAIN_MAX_TERMS) rows.push(el("tr", {}, el("th", { scope: "row" }, labels[t]),
      el("td", {}, num(x, names[0], { t })), el("td", {}, num(b[t], names[1], { t })), el("td", {}, num(p, "product", { t }))));
  });
  const more = a.length > EXPLAIN_MAX_TERMS ? el("p", { class: "note" }, ...nodes("explain.moreTerms", { count: a.length - EXPLAIN_MAX_TERMS })) : null;
  const table = el("table", {}, el("thead", {}, el("tr", {}, el("th", { scope: "col" }, labelName),
    el("th", { scope: "col" }, heads[0]), el("th", { scope: "col" }, heads[1]), el("th", { scope: "col" }, ...nodes("explain.product")))),
    el("tbody", {}, rows));
  return { sum, nodes: [table, more] };
}

// The mask's entry for head h's query i and key j (of the sequence on show), as sent.
export function maskValue(R, h, i, j) {
  const M = R.body.mask;
  if (!M) return undefined;
  const r = shapeOf(M).dims.length;
  return (r === 2 ? M : r === 4 ? M[ui.selectedSeq][h] : R.B ? M[ui.selectedSeq] : M[h])[i][j];
}

export function maskWhy(R, i, j) {
  const b = R.body, why = [], pi = R.pq[i], pj = R.pk[j], key = R.kl[j], query = R.ql[i];
  if (R.res.causal && pj > pi) why.push(t(b.positions || b.context_positions ? "explain.why.causalAt" : "explain.why.causal", { key, query, pi, pj }));
  if (b.window && Math.abs(pi - pj) >= b.window) why.push(t("explain.why.window", { pi, pj, window: b.window }));
  if (b.mask && maskValue(R, ui.selectedHead, i, j) === false) why.push(t("explain.why.mask"));
  const pad = b.key_padding && (R.B ? b.key_padding[ui.selectedSeq] : b.key_padding);
  if (pad && pad[j]) why.push(t("explain.why.padding", { key }));
  return why.join("; ") || t("explain.why.hidden");
}

// Steps from q_i and k_j to the weight (i, j), up to `upto`.
export function explainPair(R, h, i, j, upto) {
  // the vectors the scores use: after RoPE, and the cache's keys
  const q = rowOf(R, R.T.q_rope ? "q_rope" : "q", h, i), k = rowOf(R, R.T.k_cache ? "k_cache" : R.T.k_rope ? "k_rope" : "k", h, j);
  const steps = [];
  const dot = dotTable(range(R.dk).map(String), q, k, ["q", "k"], "t");
  const score = dot.sum;
  steps.push(el("li", {}, ...nodes("explain.pair.dot", { q: R.T.q_rope ? t("explain.name.qRope") : "Q",
    k: R.T.k_cache ? t("explain.name.kCache") : R.T.k_rope ? t("explain.name.kRope") : "K", query: R.ql[i], key: R.kl[j], score: num(score, "score") }),
    apiNum(R, slice(R, "scores", h).data[slice(R, "scores", h).off + i * R.m + j], "scores"), ...dot.nodes));
  if (upto === "scores") return steps;
  const scaled = R.body.scale === undefined ? score / Math.sqrt(R.dk) : score * R.scale;
  const sc = slice(R, "scaled_scores", h);
  steps.push(el("li", {}, ...(R.body.scale === undefined ? nodes("explain.pair.root", { dk: R.dk, value: num(scaled, "scaled") })
    : nodes("explain.pair.times", { scale: exactText(R.scale, "float64"), value: num(scaled, "scaled") })), apiNum(R, sc.data[sc.off + i * R.m + j], "scaled_scores")));
  if (upto === "scaled_scores") return steps;
  const ms = rowOf(R, "masked_scores", h, i);
  const added = maskValue(R, h, i, j), additive = typeof added === "number";
  if (ms[j] === -Infinity) steps.push(el("li", {}, ...nodes("explain.pair.masked", { why: maskWhy(R, i, j) })));
  else if (R.slopes || additive) {
    // as the API: the mask's number first, then ALiBi's term
    const withMask = additive ? scaled + added : scaled;
    const parts = additive ? nodes("explain.pair.additive", { mask: num(added, "mask"), value: num(withMask, R.slopes ? "with-mask" : "masked") }) : [];
    if (R.slopes) {
      const dist = Math.abs(R.pq[i] - R.pk[j]), bias = -R.slopes[h] * dist;
      parts.push(...(additive ? ["; "] : []), ...nodes("explain.pair.alibi", { slope: num(R.slopes[h], "slope"), pi: R.pq[i], pj: R.pk[j],
        bias: num(bias, "alibi"), value: num(withMask + bias, "masked") }));
    }
    steps.push(el("li", {}, ...parts, apiNum(R, ms[j], "masked_scores")));
  } else steps.push(el("li", {}, ...nodes("explain.pair.open")));
  if (upto === "masked_scores") return steps;
  // softmax over the row: exp(s − max) / Σ exp(s − max)
  const live = ms.filter((s) => s !== -Infinity);
  if (live.length === 0) {
    steps.push(el("li", {}, ...nodes("explain.pair.empty", { query: R.ql[i] })));
    return steps;
  }
  const M = Math.max(...live);
  const e = ms.map((s) => (s === -Infinity ? 0 : Math.exp(s - M)));
  let S = 0;
  for (const x of e) S += x;
  const w = e[j] / S;
  const rows = ms.slice(0, EXPLAIN_MAX_TERMS).map((s, t) => el("tr", { class: t === j ? "this" : null },
    el("th", { scope: "row" }, R.kl[t]), el("td", {}, s === -Infinity ? "−∞" : num(s, "row-score", { t })),
    el("td", {}, num(e[t], "exp", { t }))));
  const W = slice(R, "weights", h);
  const th = (id) => el("th", { scope: "col" }, ...nodes(id));
  steps.push(el("li", {}, ...nodes("explain.pair.softmax", { max: num(M, "max"), sum: num(S, "row-sum") }),
    el("table", {}, el("thead", {}, el("tr", {}, th("explain.head.key"), th("explain.head.score"), th("explain.head.exp"))), el("tbody", {}, rows))));
  // "=" only when the numbers as shown give the weight as shown
  const shown = (v) => Number(v.toPrecision(3)), rel = fmt(shown(e[j]) / shown(S)) === fmt(w) ? "=" : "≈";
  steps.push(el("li", {}, ...nodes("explain.pair.share", { e: num(e[j], "exp-this"), sum: num(S, "row-sum-again"), rel, value: num(w, "weight") }),
    apiNum(R, W.data[W.off + i * R.m + j], "weights")));
  return steps;
}

export function explainSteps(R, view, i, j) {
  const h = ui.selectedHead, b = R.body, st = view.stage;
  if (PAIR_STAGES.includes(st)) return explainPair(R, h, i, j, st);
  if (st === "head_outputs") {
    const w = rowOf(R, "weights", h, i), vs = slice(R, "v", h);
    const vcol = range(R.m).map((t) => vs.data[vs.off + t * R.dv + j]);
    const dot = dotTable(R.kl, w, vcol, [t("explain.head.weight"), "v"], t("explain.head.key"));
    return [el("li", {}, ...nodes("explain.mix", { query: R.ql[i], j, value: num(dot.sum, "output") }),
      apiNum(R, view.get(i, j), "head_outputs"), ...dot.nodes)];
  }
  if ((st === "q" || st === "k" || st === "v") && b.x) {
    const fromX = st === "q" || !b.context, src0 = fromX ? b.x : b.context;
    // with the sinusoidal encoding the projections read X + PE (the API's x_pe; the context's computed here)
    const src = fromX && R.T.x_pe ? nested(R, "x_pe") : (R.B ? src0[ui.selectedSeq] : src0).map((r, t) =>
      (b.positional_encoding ? r.map((xv, c) => xv + sinusoidal(R.pk[R.m0 + t], c, r.length)) : r));
    const P = projection(b, st), width = st === "v" ? R.dv : R.dk, g = st === "q" ? h : kvHead(R, h);
    const col = weightColumn(P, g, width, j);
    const input = stageName(R, "x", 0); // the lesson's own name while the inputs are a lesson's
    const dot = dotTable(range(src[0].length).map(String), src[i], col, [fromX ? "x" : "context", `W_${st}`], "s",
                         [fromX ? input : "context", `W_${st}`]);
    const stacked = Array.isArray(P.W[0][0]);
    const where = stacked ? t(P.torch ? "explain.proj.stackRow" : "explain.proj.stackCol", { j, w: P.name, g })
      : t(P.torch ? "explain.proj.torchRow" : "explain.proj.col", { j: P.torch ? P.row0 + g * width + j : g * width + j, w: P.name });
    const bias = biasOf(P, g, width, j);
    const from = fromX ? (R.T.x_pe ? `${input} + PE` : input) : t(b.positional_encoding ? "explain.src.contextPe" : "explain.src.context");
    const steps = [el("li", {}, ...nodes("explain.proj.line", { row: view.rowLabels[i], src: from, where, value: num(dot.sum, bias === null ? st : "product-sum") }),
      bias === null ? apiNum(R, view.get(i, j), st) : null, ...dot.nodes)];
    if (bias !== null) steps.push(el("li", {}, ...nodes("explain.bias", { b: `b_${st}`, bias: num(bias, "bias"), value: num(dot.sum + bias, st) }), apiNum(R, view.get(i, j), st)));
    return steps;
  }
  if (st === "concat") {
    const hh = Math.floor(j / R.dv);
    return [el("li", {}, ...nodes("explain.concat", { j, c: j % R.dv, h: hh, value: num(view.get(i, j), "concat") }))];
  }
  if (st === "output") {
    const P = projection(b, "o");
    if (!P.W) return [el("li", {}, ...nodes("explain.out.none", { value: num(view.get(i, j), "output") }))];
    const c = slice(R, "concat", 0), row = Array.from(c.data.subarray(c.off + i * c.cols, c.off + (i + 1) * c.cols));
    const dot = dotTable(range(c.cols).map(String), row, weightColumn(P, 0, 0, j), ["concat", "W_o"], "r");
    const bias = biasOf(P, 0, 0, j);
    const steps = [el("li", {}, ...nodes(P.torch ? "explain.out.row" : "explain.out.col", { row: view.rowLabels[i], j, w: P.name,
      value: num(dot.sum, bias === null ? "output" : "product-sum") }), bias === null ? apiNum(R, view.get(i, j), "output") : null, ...dot.nodes)];
    if (bias !== null) steps.push(el("li", {}, ...nodes("explain.bias", { b: "b_o", bias: num(bias, "bias"), value: num(dot.sum + bias, "output") }), apiNum(R, view.get(i, j), "output")));
    return steps;
  }
  if (view.parts) {
    const [A, B, names] = view.parts, k = i * view.cols + j;
    return [el("li", {}, ...nodes("explain.parts", { a: names[0], av: num(A.data[A.off + k], "a"), b: names[1], bv: num(B.data[B.off + k], "b"),
      value: num(view.get(i, j), "difference") }))];
  }
  if (st === "x_pe") {
    const x = (R.B ? b.x[ui.selectedSeq] : b.x)[i][j], d = R.T.x_pe.shape.at(-1), pe = sinusoidal(R.pq[i], j, d), k2 = j - (j % 2);
    return [el("li", {}, ...nodes("explain.xpe", { x: num(x, "x"), pos: R.pq[i], fn: j % 2 ? "cos" : "sin", k: k2, d, pe: num(pe, "pe"),
      value: num(x + pe, "x_pe") }), apiNum(R, view.get(i, j), "x_pe"))];
  }
  if (st === "q_rope" || st === "k_rope") return explainRope(R, view, h, i, j);
  if ((st === "k_cache" || st === "v_cache") && i < R.m0)
    return [el("li", {}, ...nodes("explain.cache.past", { i, past: st === "k_cache" ? "past_k" : "past_v", value: num(view.get(i, j), st) }))];
  if (st === "k_cache" || st === "v_cache") {
    const from = st === "v_cache" ? "v" : R.T.k_rope ? "k_rope" : "k";
    return [el("li", {}, ...nodes("explain.cache.new", { i, from: from === "k_rope" ? t("explain.name.kRope") : from.toUpperCase(), r: i - R.m0, m0: R.m0,
      value: num(rowOf(R, from, h, i - R.m0)[j], from) }), apiNum(R, view.get(i, j), st))];
  }
  return [el("li", {}, ...nodes(b.q && ["q", "k", "v"].includes(st) ? "explain.given" : "explain.sent", { value: num(view.get(i, j), st) }))];
}

// "Attention Is All You Need"'s encoding of position pos, component c of d:
// sin(pos / 10000^(2i/d)) at c = 2i, cos at c = 2i + 1.
export function sinusoidal(pos, c, d) {
  const angle = pos / 10000 ** ((c - (c % 2)) / d);
  return c % 2 ? Math.cos(angle) : Math.sin(angle);
}

// RoPE on one component: its pair partner, the angle position·θ_i, and the turn.
export function explainRope(R, view, h, i, j) {
  const r = R.body.rope === true ? {} : R.body.rope, dims = r.dims ?? R.dk, base = r.base ?? 10000;
  const from = view.stage === "q_rope" ? "q" : "k", row = rowOf(R, from, h, i);
  const pos = from === "q" ? R.pq[i] : R.pk[R.m0 + i];
  if (j >= dims) return [el("li", {}, ...nodes("explain.rope.pass", { j, dims, value: num(row[j], "rope") }), apiNum(R, view.get(i, j), view.stage))];
  const half = r.style === "interleaved" ? null : dims / 2;
  const pair = half ? (j < half ? j + half : j - half) : j ^ 1, k = half ? j % half : j >> 1, first = half ? j < half : j % 2 === 0;
  const theta = base ** ((-2 * k) / dims), angle = pos * theta, c = Math.cos(angle), sn = Math.sin(angle);
  const value = first ? row[j] * c - row[pair] * sn : row[j] * c + row[pair] * sn;
  return [el("li", {}, ...nodes("explain.rope.pair", { a: Math.min(j, pair), b: Math.max(j, pair), which: from === "q" ? "Q" : "K", base, k2: 2 * k, dims,
    theta: num(theta, "theta"), pos, angle: num(angle, "angle") }),
    el("br"), ...nodes(first ? "explain.rope.first" : "explain.rope.second", { from, j, pair, x: num(row[j], "component"), cos: num(c, "cos"),
      y: num(row[pair], "partner"), sin: num(sn, "sin"), value: num(value, "rope") }), apiNum(R, view.get(i, j), view.stage))];
}

// A stage whose explanation would give away what the student is guessing
// (the guided mode's exercise sets it): its explanation waits.
let withheld = () => false;
export function withhold(f) { withheld = f; }

export let explained = null; // [view id, i, j]
export function explain(view, i, j, focus = true) {
  const R = lastGood;
  explained = { id: view.id, i, j, from: view };
  $("explain-h").textContent = t(R.H > 1 && !["x", "context", "concat", "output"].includes(view.stage) ? "explain.titleHead" : "explain.title",
    { label: view.label(i, j), head: ui.selectedHead });
  if (withheld(view.stage)) $("explain-body").replaceChildren(el("p", { class: "note" }, ...nodes("explain.withheld")));
  else $("explain-body").replaceChildren(el("ol", {}, explainSteps(R, view, i, j)), ...(R.dtype === "float32"
    ? [el("p", { class: "note" }, ...nodes("explain.float32"))] : []));
  $("explain").hidden = false;
  $("explain").dataset.stage = view.stage;
  if (focus) { $("explain").focus({ preventScroll: true }); uncover(view, i, j); $("explain").dispatchEvent(new Event("explained")); }
}
// The open explanation drawn again (the exercise hid or revealed its numbers).
export function refreshExplain() {
  const v = explained && views[explained.id];
  if (v && !$("explain").hidden && explained.i < v.rows && explained.j < v.cols) explain(v, explained.i, explained.j, false);
}
// Opens the explanation of cell (i, j) of view `id` once a render has drawn it (a link's).
export function explainAfterRender(id, i, j) { explained = { id, i, j }; }
// The box of cell (i, j) on screen: its table cell, or its square of the canvas.
function cellBox(view, i, j) {
  if (view.mode === "table") return view.cells[i][j].getBoundingClientRect();
  const r = view.over.getBoundingClientRect(), top = r.top + view.top + i * view.ch;
  return { top, bottom: top + view.ch };
}
// The panel sits at the bottom of the screen: a cell it would cover is
// scrolled to the middle of the space above it (twice at most: the panel
// moves when the page's end comes into view).
function uncover(view, i, j) {
  for (let pass = 0; pass < 2; pass++) {
    const cell = cellBox(view, i, j), top = $("explain").getBoundingClientRect().top;
    if (cell.top >= 0 && cell.bottom <= top) return;
    scrollBy({ top: (cell.top + cell.bottom) / 2 - top / 2, behavior: "instant" });
  }
}
export function closeExplain() {
  const back = explained && views[explained.id];
  $("explain").hidden = true;
  explained = null;
  $("explain").dispatchEvent(new Event("explained"));
  const target = back && (back.mode === "table" ? back.cells[back.cur[0]][back.cur[1]] : back.over);
  if (target) target.focus();
}


export function init() {
  $("explain-close").addEventListener("click", closeExplain);
  $("explain").addEventListener("keydown", (ev) => { if (ev.key === "Escape") closeExplain(); });
  onLangChange(refreshExplain);
  afterRenderHooks.push(() => {
    // a new result: the open explanation follows it, or closes if its cell is gone
    if (!explained) return;
    const v = views[explained.id];
    if (v && explained.i < v.rows && explained.j < v.cols) explain(v, explained.i, explained.j, false);
    else { $("explain").hidden = true; explained = null; }
  });
}
