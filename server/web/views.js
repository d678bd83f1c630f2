/*
 * views.js - the stages, in the order they are computed, as cards.
 */
import { shapeOf } from "./parse.js";
import { editors, ui } from "./state.js";
import { $, el, range } from "./base.js";
import { maskForm } from "./form.js";
import { group, maskReasons, maskScope, resetViews, views } from "./cards.js";
import { lessonLine, lessonOf, mayMask, splitName, stageName } from "./lesson-names.js";
import { kvHead, slice } from "./reply.js";
import { exactText, fmt } from "./format.js";
import { MatrixView } from "./matrix.js";
import { compareSlot, drawWhenSeen, headStrip, renderCompare, ropeText, seqStrip } from "./compare.js";
import { onPoint } from "./highlight.js";
import { headView } from "./head-view.js";
import { show as showGuided } from "./guided.js";
import { nodes, t } from "./words.js";
import { listOf } from "./weight-scale.js";
import { lang } from "./locale.js";
import { answer } from "./hooks.js";

answer({ renderResult }); // compare.js and guided.js redraw through hooks.js

// A card's line naming the lesson's own variable, or saying it has none.
export const lessonNameNode = (R, stage, h) => lessonLine(lessonOf(R), stage, h);

// A message in the plural form of count (Intl.PluralRules of the page's
// language): the id ending ".one" or ".other".
export const plural = (id, count, params = {}) =>
  t(`${id}.${new Intl.PluralRules(lang()).select(count) === "one" ? "one" : "other"}`, { count, ...params });

// One item of the summary: its words, the value in bold.
const item = (id, value, attrs = {}, params = {}) => el("span", attrs, ...nodes(id, { ...params, value: el("b", {}, value) }));
const on = { class: "on" };
export function summaryItems(R) {
  const b = R.body, res = R.res;
  const masks = [res.causal ? t("views.sum.hide.causal") : null,
                 b.mask ? t(maskForm(b.mask, !!R.B).kind === "add" ? "views.sum.hide.additive" : "views.sum.hide.mask") : null,
                 b.key_padding ? plural("views.sum.hide.padded", b.key_padding.flat().filter(Boolean).length) : null].filter(Boolean);
  return [
    item("views.sum.heads", fmt(R.H)), item("views.sum.dk", fmt(R.dk)), item("views.sum.dv", fmt(R.dv)),
    item("views.sum.scale", t(b.scale === undefined ? "views.sum.scale.default" : "views.sum.scale.given", { scale: R.scale, dk: R.dk }),
         { title: t("views.sum.exact", { value: exactText(R.scale, "float64") }) }),
    item("views.sum.dtype", res.dtype), item("views.sum.causal", t(res.causal ? "views.sum.causal.on" : "views.sum.causal.off")),
    item("views.sum.hidden", masks.length ? listOf(masks) : t("views.sum.none"), masks.length ? on : {}),
    res.shapes.x ? item("views.sum.x", `(${res.shapes.x.join(", ")})`, {}, { name: stageName(R, "x", 0) }) : item("views.sum.qkv", t("views.sum.given")),
    R.B ? item("views.sum.batch", `B = ${R.B}`, on) : null,
    R.heads ? item("views.sum.reply_holds", listOf(R.heads.map((k) => t("views.heads.button", { head: k }))), { title: t("views.sum.reply_holds.why") }) : null,
    R.Hkv !== R.H ? item("views.sum.kv_heads", fmt(R.Hkv), on) : null,
    res.shapes.context ? item("views.sum.context", `(${res.shapes.context.join(", ")})`) : null,
    b.w_o || b.out_proj_weight ? item("views.sum.wo", `(${res.shapes.concat.at(-1)}, ${res.shapes.output.at(-1)})`) : null,
    b.layout === "torch" ? item("views.sum.layout", "torch", on) : null,
    b.b_q || b.in_proj_bias ? item("views.sum.biases", t("views.sum.on"), on) : null,
    b.in_proj_weight || b.q_proj_weight ? item("views.sum.weights", "state_dict", on) : null,
    b.positions || b.context_positions ? item("views.sum.positions", t("views.sum.given"), on) : null,
    b.window ? item("views.sum.window", fmt(b.window), on) : null,
    b.rope ? item("views.sum.rope", ropeText(b.rope, R.dk), on) : null,
    b.positional_encoding ? item("views.sum.pe", b.positional_encoding, on) : null,
    R.m0 ? item("views.sum.cache", plural("views.sum.cache.keys", R.m0), on) : null,
    R.slopes ? item("views.sum.alibi", t(b.alibi ? "views.sum.alibi.paper" : "views.sum.alibi.given"), on) : null,
  ].filter(Boolean);
}

// Rows of head h whose queries may attend no key (every masked score −∞).
export function emptyRows(R, h) {
  const out = new Set();
  if (!mayMask(R)) return out;
  const s = slice(R, "masked_scores", h), d = s.data;
  for (let i = 0; i < s.rows; i++) {
    let all = true;
    for (let j = 0; j < s.cols && all; j++) all = d[s.off + i * s.cols + j] === -Infinity;
    if (all) out.add(i);
  }
  return out;
}

export function makeView(R, stage, h, spec) {
  const s = slice(R, stage, h);
  const api = R.T[stage] ? R.T[stage].shape : null;
  const v = new MatrixView({
    stage, name: stage, dtype: R.dtype, rows: s.rows, cols: s.cols, src: s, off: s.off,
    shape: [s.rows, s.cols], from: api && api.length >= 3 ? `${stage} (${api.join(", ")})` : null,
    onPoint, lessonName: lessonNameNode(R, stage, h), ...spec, name: stageName(R, stage, h, spec.name || stage) });
  views[v.id] = v;
  return v;
}

// Q = X·W_q for every head at once, (n, h·d_k) with each head's columns
// marked, then its split Qh = Q.reshape(n, h, d_k).transpose(1, 0, 2): the
// lesson that gets its heads by reshaping one d × d projection (a per-head
// stack has no such step).  Lesson-sized inputs only (lesson 002's Q has 40
// numbers): it repeats every head's Q, and at 32 tokens × 8 heads of 8 it
// would add 2 048 cells, screens of them, to every edit.
export const SPLIT_MAX_CELLS = 512;
export function splitViews(R) {
  const b = R.body, w = b.w_q, W = R.H * R.dk;
  const whole = Array.isArray(w) && Array.isArray(w[0]) && !Array.isArray(w[0][0]) && !b.q && !b.in_proj_weight && !b.q_proj_weight;
  if (R.H < 2 || !whole || R.heads || !R.T.x || R.n * W > SPLIT_MAX_CELLS) return null;
  const n = R.n, dk = R.dk, q = new Float64Array(n * W);
  for (let k = 0; k < R.H; k++) {
    const s = slice(R, "q", k);
    for (let i = 0; i < n; i++) for (let c = 0; c < dk; c++) q[i * W + k * dk + c] = s.data[s.off + i * dk + c];
  }
  const say = (v, i, j, how) => { if (how !== "leave") v.readout.textContent = v.describe(i, j); };
  const X = R.T.x_pe ? `(${stageName(R, "x", 0)} + PE)` : stageName(R, "x", 0), dims = `(${R.H}, ${n}, ${dk})`;
  const all = new MatrixView({ id: "split-q", stage: "q_all", name: "Q", title: t("views.card.q_all"), dtype: R.dtype, rows: n, cols: W,
    src: { data: q }, off: 0, shape: [n, W], rowLabels: R.ql, colLabels: range(W).map(String), kind: "div", onPoint: say,
    groups: range(R.H).map((k) => ({ start: k * dk, size: dk, label: t("cmp.head", { head: k }) })),
    formula: t("views.split.formula", { product: `${X} · W_q${b.layout === "torch" ? "ᵀ" : ""}${b.b_q ? " + b_q" : ""}`, first: `h·${dk}`, last: `h·${dk} + ${dk - 1}` }) });
  const heads = range(R.H).map((k) => new MatrixView({ id: `split-qh${k}`, stage: "q_head", name: splitName(k), title: splitName(k), dtype: R.dtype,
    rows: n, cols: dk, src: slice(R, "q", k), off: slice(R, "q", k).off, shape: [n, dk], rowLabels: R.ql, colLabels: range(dk).map(String), kind: "div", onPoint: say,
    formula: nodes("views.split.head_formula", { first: k * dk, last: (k + 1) * dk - 1, plane: k, code: el("code", {}, `Q.reshape(${n}, ${R.H}, ${dk}).transpose(1, 0, 2)[${k}]`) }), // words-check: NumPy code
    caption: t("cmp.head", { head: k }), head: k }));
  heads.forEach((v) => Object.assign(v, { maxAbs: all.max, scaleNote: t("views.scale.one_split") }));
  all.scaleNote = t("views.scale.one_split");
  for (const v of [all, ...heads]) views[v.id] = v;
  const g = group("group-split", t("views.split.title", { from: `Q (${n}, ${W})`, to: `${splitName(null)} ${dims}` }),
    el("code", { class: "shape" }, `reshape (${n}, ${R.H}, ${dk}), transpose (1, 0, 2)`)); // words-check: NumPy code
  g.add(el("p", { class: "hint" }, R.Hkv !== R.H ? t("views.split.hint_kv", { kv: R.Hkv }) : t("views.split.hint")), g.cards);
  return [g, [all, ...heads]];
}

// The head and sequence shown, kept within what the reply holds.
function clampChoice(R) {
  if (ui.selectedHead >= R.H) ui.selectedHead = 0;
  if (R.heads && !R.heads.includes(ui.selectedHead)) ui.selectedHead = R.heads[0];
  if (ui.selectedSeq >= Math.max(1, R.B)) ui.selectedSeq = 0;
}

// The width a card may take, measured once with an empty group in area.
function cardWidth(area) {
  const probe = group("probe", "");
  probe.sec.append(probe.cards);
  area.replaceChildren(probe.sec);
  // less a card's padding and border, as the stylesheet sets them (narrower on a phone)
  const card = probe.cards.appendChild(el("div", { class: "card" })), cs = getComputedStyle(card);
  return probe.cards.clientWidth - ["paddingLeft", "paddingRight", "borderLeftWidth", "borderRightWidth"].reduce((a, k) => a + parseFloat(cs[k]), 0);
}

const idx = (k) => range(k).map(String);
// A per-head stack (h, d, d_k) gives head h its own matrix W[h]; a 2-D W
// gives it a block of d_k columns.
const stacked = (w) => Array.isArray(w) && Array.isArray(w[0]) && Array.isArray(w[0][0]);
const part = (w, name, k) => (stacked(w) ? `${name}[${k}]` : name);

// What head h's cards share: its hidden scores and empty rows, its columns
// of W, its caption, the key/value head g it reads and the keys this request adds.
function headFacts(R, h) {
  const b = R.body;
  const masked = mayMask(R) ? (() => {
    const s = slice(R, "masked_scores", h);
    let d = null;
    return (i, j) => (d || (d = s.data))[s.off + i * s.cols + j] === -Infinity;
  })() : null;
  const empty = emptyRows(R, h);
  const emptyNote = () => (empty.size ? [el("p", { class: "warn" }, t("views.empty_rows", { rows: listOf([...empty].map((i) => R.ql[i])) }))] : []);
  const kvFrom = b.context ? "context" : stageName(R, "x", 0);
  const cols = stacked(b.w_q) ? t("views.head.stacks", { mats: `W_q[${h}], W_k[${kvHead(R, h)}], W_v[${kvHead(R, h)}]` })
    : t("views.head.columns", { first: h * R.dk, last: (h + 1) * R.dk - 1 });
  const caption = R.B ? t("views.caption.head_seq", { head: h, seq: ui.selectedSeq }) : t("cmp.head", { head: h });
  return { h, masked, empty, emptyNote, kvFrom, cols, caption, g: kvHead(R, h), newKeys: R.kl.slice(R.m0) };
}

// 1. the input (none when Q, K and V are given): its group and its cards.
function inputGroup(R, newKeys) {
  const b = R.body;
  const gi = group("group-input", R.B ? t("views.input.title_seq", { seq: ui.selectedSeq, seqs: R.B }) : t("views.input.title"));
  const inputs = R.T.x ? [makeView(R, "x", 0, { id: "input-x", title: stageName(R, "x", 0), name: "x", kind: "div", rowLabels: R.ql,
    colLabels: idx(R.T.x.shape.at(-1)), formula: t("views.input.formula"),
    caption: R.B ? t("views.caption.input_seq", { seq: ui.selectedSeq }) : t("views.caption.input") })] : [];
  if (b.context) inputs.push(makeView(R, "context", 0, { id: "input-context", title: t("views.card.context"), name: "context", kind: "div",
    rowLabels: newKeys, colLabels: idx(R.T.context.shape.at(-1)), formula: t("views.context.formula") }));
  if (R.T.x_pe) inputs.push(makeView(R, "x_pe", 0, { id: "input-x_pe", title: "X + PE", name: "x_pe", kind: "div", rowLabels: R.ql,
    colLabels: idx(R.T.x_pe.shape.at(-1)), formula: t("views.x_pe.formula") }));
  gi.add(gi.cards);
  return [gi, inputs];
}

// The pieces of head f.h's formulas: the input's name, the transpose and
// bias marks, the key/value head's sharing, the word for a given matrix.
function formulaFacts(R, f) {
  const b = R.body;
  const biased = b.b_q || b.in_proj_bias, wt = b.layout === "torch" || b.in_proj_weight || b.q_proj_weight ? "ᵀ" : "";
  const plus = (k) => (biased ? ` + b_${k}` : "");
  const X = R.T.x_pe ? `(${stageName(R, "x", 0)} + PE)` : stageName(R, "x", 0), ctx = b.context && R.T.x_pe ? "(context + PE)" : f.kvFrom;
  const sharedBy = R.Hkv !== R.H ? t("views.head.shared", { kv: f.g, heads: listOf(range(R.H).filter((k) => kvHead(R, k) === f.g).map(String)) }) : null;
  const shared = (s) => (sharedBy ? t("views.formula.and", { first: s, second: sharedBy }) : s);
  return { ...f, wt, plus, X, ctx, shared, given: t("views.formula.given") };
}

// What hides head h's scores (an additive mask, ALiBi, the reasons a
// score is −∞), joined by "and"; null when nothing is said.
function maskFormula(R, h) {
  const b = R.body;
  const maskParts = [
    b.mask && maskForm(b.mask, !!R.B).kind === "add"
      ? (maskScope(R) ? t("views.formula.additive_of", { scope: maskScope(R) }) : t("views.formula.additive")) : null,
    R.slopes ? t("views.formula.alibi", { term: `−${fmt(R.slopes[h])}·|p_i − p_j|`, head: h, slope: exactText(R.slopes[h], "float64") }) : null,
    maskReasons(R).length ? t("views.formula.hidden", { reasons: maskReasons(R).reduce((a, c) => t("views.formula.and", { first: a, second: c })) })
      : R.slopes || b.mask ? null : t("views.formula.none_hidden")].filter(Boolean);
  return maskParts.length ? maskParts.reduce((a, c) => t("views.formula.and", { first: a, second: c })) : null;
}

// Q, K and V of head f.h (given or projected), rotated, after a cache's keys.
function projectSteps(R, f, pv) {
  const b = R.body, { h, g, newKeys, cols, X, ctx, wt, plus, shared, given } = f;
  return [
    [t(b.q ? "views.step.given" : "views.step.project"), [
      pv("q", { title: "Q", name: "q", kind: "div", rowLabels: R.ql, colLabels: idx(R.dk),
                formula: b.q ? given : stacked(b.w_q)
                  ? t("views.formula.q_stack", { product: `${X} · ${part(b.w_q, "W_q", h)}${wt}${plus("q")}`, head: h,
                      shape: shapeOf(b.w_q[h]).dims.join("×"), stack: shapeOf(b.w_q).dims.join("×") })
                  : R.H > 1 ? t("views.formula.q_cols", { product: `${X} · W_q${wt}${plus("q")}`, cols })
                    : t("views.formula.q_all", { product: `${X} · W_q${wt}${plus("q")}` }) }),
      pv("k", { title: "K", name: "k", kind: "div", rowLabels: newKeys, colLabels: idx(R.dk),
                formula: shared(b.q ? given : `${b.context ? ctx : X} · ${part(b.w_k, "W_k", g)}${wt}${plus("k")}`) }),
      pv("v", { title: "V", name: "v", kind: "div", rowLabels: newKeys, colLabels: idx(R.dv),
                formula: shared(b.q ? given : `${b.context ? ctx : X} · ${part(b.w_v, "W_v", g)}${wt}${plus("v")}`) })]],
    ...(R.T.q_rope ? [[t("views.step.rope"), [
      pv("q_rope", { title: t("views.card.q_rope"), name: "q_rope", kind: "div", rowLabels: R.ql, colLabels: idx(R.dk),
                     formula: t("views.formula.q_rope", { rope: ropeText(b.rope, R.dk) }) }),
      pv("k_rope", { title: t("views.card.k_rope"), name: "k_rope", kind: "div", rowLabels: newKeys, colLabels: idx(R.dk),
                     formula: shared(t("views.formula.k_rope")) })]]] : []),
    ...(R.T.k_cache ? [[t("views.step.cache"), [
      pv("k_cache", { title: t("views.card.k_cache"), name: "k_cache", kind: "div", rowLabels: R.kl, colLabels: idx(R.dk),
                      formula: shared(plural(R.T.k_rope ? "views.formula.k_cache_rope" : "views.formula.k_cache", R.m0)) }),
      pv("v_cache", { title: t("views.card.v_cache"), name: "v_cache", kind: "div", rowLabels: R.kl, colLabels: idx(R.dv),
                      formula: shared(plural("views.formula.v_cache", R.m0)) })]]] : []),
  ];
}

// The scores of head f.h (raw, scaled, masked), its weights and its output.
function scoreSteps(R, f, pv) {
  const b = R.body, { masked, empty, emptyNote } = f, maskText = maskFormula(R, f.h);
  return [
    [t("views.step.scores"), [
      // named QKᵀ, not `scores`: lessons 000 and 002 call the scaled matrix `scores` / `skor`
      pv("scores", { title: t("views.card.scores"), name: "QKᵀ", kind: "div", rowLabels: R.ql, colLabels: R.kl, arrow: true,
                     formula: t("views.formula.scores", { product: `${R.T.q_rope ? t("views.card.q_rope") : "Q"} · ${R.T.k_cache ? t("views.card.k_cache")
                       : R.T.k_rope ? t("views.card.k_rope") : "K"}ᵀ` }) }),
      pv("scaled_scores", { title: t(b.scale === undefined ? "views.card.scaled_scores" : "views.card.scaled_scores_given"), name: "scaled_scores", kind: "div", rowLabels: R.ql, colLabels: R.kl, arrow: true,
                            formula: b.scale === undefined ? t("views.formula.scaled", { dk: R.dk, scale: R.scale })
                              : t("views.formula.scaled_given", { scale: exactText(b.scale, "float64") }) }),
      pv("masked_scores", { title: t("views.card.masked_scores"), name: "masked_scores", kind: "div", rowLabels: R.ql, colLabels: R.kl, arrow: true,
                            masked, emptyRows: empty, formula: maskText })]],
    [t("views.step.softmax"), [
      pv("weights", { title: t("views.card.weights"), name: "weights", kind: "seq", rowLabels: R.ql, colLabels: R.kl, arrow: true,
                      masked, emptyRows: empty, sum: true, notes: emptyNote(), formula: t("views.formula.weights") })]],
    [t("views.step.mix"), [
      pv("head_outputs", { title: t("views.card.head_outputs"), name: "head_outputs", kind: "div", rowLabels: R.ql, colLabels: idx(R.dv),
                           emptyRows: empty, formula: t("views.formula.head_outputs") })]],
  ];
}

// One colour scale: Q, K and V (rotated and cached too) on one scale, every
// score stage on another, so that the scaling shows and one colour is one
// number from card to card; otherwise each card runs to its own maximum.
function oneScale(shown) {
  if (!$("one-scale").checked) return;
  for (const [stages, note] of [[["q", "k", "v", "q_rope", "k_rope", "k_cache", "v_cache", "q_all", "q_head"], "views.scale.one_qkv"],
                                [["scores", "scaled_scores", "masked_scores"], "views.scale.one_scores"]]) {
    const same = shown.filter((v) => stages.includes(v.stage));
    const M = Math.max(0, ...same.map((v) => v.max));
    for (const v of same) Object.assign(v, { maxAbs: M, scaleNote: t(note) });
  }
}

// 3. all heads together: the concatenation and the output.
function allGroup(R, wt) {
  const b = R.body;
  const ga = group("group-all", t(`views.all.${R.H > 1 ? "heads" : "one"}${R.B ? "_seq" : ""}`, { seq: ui.selectedSeq }));
  const groups = R.H > 1 ? range(R.H).map((k) => ({ start: k * R.dv, size: R.dv, label: t("cmp.head", { head: k }) })) : null;
  const whole = [
    makeView(R, "concat", 0, { id: "all-concat", title: t("views.card.concat"), name: "concat", kind: "div", rowLabels: R.ql,
      colLabels: idx(R.T.concat.shape.at(-1)), groups, formula: t(R.H > 1 ? "views.formula.concat" : "views.formula.concat_one") }),
    makeView(R, "output", 0, { id: "all-output", title: t("views.card.output"), name: "output", kind: "div", rowLabels: R.ql,
      colLabels: idx(R.T.output.shape.at(-1)), formula: b.w_o || b.out_proj_weight
        ? `concat · W_o${wt}${b.b_o || b.out_proj_bias ? " + b_o" : ""}` : t("views.formula.no_wo") })];
  ga.add(ga.cards);
  return [ga, whole];
}

// Each card laid out to the width avail, into its group (the weights'
// group gets head h's picture of its weights too).
function placeCards(R, h, out, avail) {
  for (const [g, vs] of out) {
    for (const v of vs) {
      if (!v.scaleNote) v.scaleNote = t(v.kind === "seq" ? "views.scale.weights.card" : "views.scale.own_card");
      v.layout(avail); g.cards.append(v.root);
    }
    if (vs.some((v) => v.stage === "weights")) g.cards.append(headView(R, h, avail));
  }
}

export function renderResult(R) {
  clampChoice(R);
  if (editors.x) editors.x.relabel(); // the input's name: the lesson's own while the result is a lesson's
  const h = ui.selectedHead;
  $("summary").replaceChildren(...summaryItems(R));
  const area = $("stage-area");
  resetViews();
  const avail = cardWidth(area);
  const f = headFacts(R, h), out = [];

  const [gi, inputs] = inputGroup(R, f.newKeys);
  if (R.B) out.push([seqStrip(R), []]);
  if (inputs.length) out.push([gi, inputs]);

  // one projection split into heads (lesson 002's reshape)
  const split = splitViews(R);
  if (split) out.push(split);

  // every head at once: one click opens a head
  if (R.H > 1) out.push([headStrip(R), []]);

  // 2. one head, step by step
  const gh = group(`group-head`, R.H > 1 ? t("views.heads.button", { head: h }) : t("views.head.only"), R.H > 1 ? el("span", { class: "shape" }, f.cols) : null);
  const pv = (stage, spec) => makeView(R, stage, h, { id: `h${h}-${stage}`, caption: f.caption, ...spec });
  const ff = formulaFacts(R, f);
  const steps = [...projectSteps(R, ff, pv), ...scoreSteps(R, ff, pv)];
  oneScale([...steps.flatMap(([, vs]) => vs), ...(split ? split[1] : [])]);
  for (const [title, vs] of steps) {
    const cards = el("div", { class: "cards" });
    gh.sec.append(el("h3", { class: "step" }, title), cards);
    out.push([{ cards }, vs]);
  }

  const [ga, whole] = allGroup(R, ff.wt);
  out.push([ga, whole]);
  placeCards(R, h, out, avail);
  area.replaceChildren(...out.filter(([g2]) => g2.sec && g2 !== ga).map(([g2]) => g2.sec), gh.sec, ga.sec);
  compareSlot();
  showGuided(R);
  drawWhenSeen();
  renderCompare(R, avail);
}

