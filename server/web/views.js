/*
 * views.js - the stages, in the order they are computed, as cards.
 */
import { shapeOf } from "./parse.js";
import { ui } from "./state.js";
import { $, el, range } from "./base.js";
import { maskForm } from "./form.js";
import { kvHead, slice } from "./reply.js";
import { exact, exactText, fmt } from "./format.js";
import { MatrixView } from "./matrix.js";
import { compareSlot, drawWhenSeen, headStrip, renderCompare, ropeText, seqStrip } from "./compare.js";
import { onPoint } from "./highlight.js";
import { headView } from "./head-view.js";
import { show as showGuided } from "./guided.js";
import { nodes, t } from "./words.js";

export let views = {};
export const PAIR_STAGES = ["scores", "scaled_scores", "masked_scores", "weights"]; // [h, n, m]

// Each lesson's own NumPy name for a stage (seeds: 000 Spanish, 001 Italian,
// 002 Turkish), never translated; "[h]" is the open head.  null: the lesson
// has no such matrix.  Lessons 000 and 002 divide by √d_k in the same line
// as Q·Kᵀ, so their `scores` / `skor` are the page's scaled scores.
export const LESSON_NAMES = {
  "000": { q: "Q", k: "K", v: "V", scores: null, scaled_scores: "scores", weights: "attention_weights",
           head_outputs: "head_output", concat: "multi_head_output", output: "multi_head_output" },
  "001": { q: "Q", k: "K", v: "V", scores: "scores", scaled_scores: "scaled_scores", weights: "attention_weights",
           head_outputs: "output", concat: "output", output: "output" },
  "002": { q: "Qh[h]", k: "Kh[h]", v: "Vh[h]", scores: null, scaled_scores: "skor[h]", weights: "A[h]",
           head_outputs: "Yh[h]", concat: "Y", output: "Y" },
};
// The lesson whose names the cards carry: the one the inputs came from, while
// the request still computes what that lesson computes (its heads, no mask,
// no scale of one's own, no position encoding, no W_o).
export function lessonOf(R) {
  const key = ui.source && ui.source.lesson, b = R.body;
  if (!key || !LESSON_NAMES[key] || mayMask(R) || b.scale !== undefined || b.rope || b.positional_encoding
      || b.w_o || b.out_proj_weight || b.q || R.B || R.m0 || R.slopes || R.Hkv !== R.H) return null;
  return key;
}
// A card's line naming the lesson's own variable, or saying it has none.
export function lessonNameNode(R, stage, h) {
  const key = lessonOf(R);
  if (!key || !(stage in LESSON_NAMES[key])) return null;
  const name = (s) => el("code", {}, s.replace("[h]", `[${h}]`)), own = LESSON_NAMES[key][stage];
  return el("span", { class: "lesson-name" }, ...(own !== null ? nodes("views.lesson.name", { lesson: key, name: name(own) })
    : nodes("views.lesson.unnamed_scores", { lesson: key, name: name(LESSON_NAMES[key].scaled_scores) })));
}

export function summaryItems(R) {
  const b = R.body, res = R.res;
  const scaleNote = b.scale === undefined ? `1/√${R.dk}` : "given";
  const masks = [res.causal ? "causal" : null, b.mask ? (maskForm(b.mask, !!R.B).kind === "add" ? "additive mask" : "mask") : null,
                 b.key_padding ? `${b.key_padding.filter(Boolean).length} padded key(s)` : null].filter(Boolean);
  return [
    el("span", {}, "heads ", el("b", {}, R.H)), el("span", {}, "d_k ", el("b", {}, R.dk)),
    el("span", {}, "d_v ", el("b", {}, R.dv)),
    el("span", { title: `exact: ${exact(R.scale, "float64")}` }, "scale ", el("b", {}, `${fmt(R.scale)} (${scaleNote})`)),
    el("span", {}, "dtype ", el("b", {}, res.dtype)), el("span", {}, "causal ", el("b", {}, String(res.causal))),
    el("span", { class: masks.length ? "on" : null }, "hidden keys ", el("b", {}, masks.length ? masks.join(", ") : "none")),
    res.shapes.x ? el("span", {}, "X ", el("b", {}, `(${res.shapes.x.join(", ")})`)) : el("span", {}, "Q, K, V ", el("b", {}, "given")),
    R.B ? el("span", { class: "on" }, "batch ", el("b", {}, `B = ${R.B}`)) : null,
    R.heads ? el("span", { title: "a big reply: the API's heads field; the small multiples come from a second request" },
                 "reply holds ", el("b", {}, `head ${R.heads.join(", ")}`)) : null,
    R.Hkv !== R.H ? el("span", { class: "on" }, "key/value heads ", el("b", {}, R.Hkv)) : null,
    res.shapes.context ? el("span", {}, "context ", el("b", {}, `(${res.shapes.context.join(", ")})`)) : null,
    b.w_o || b.out_proj_weight ? el("span", {}, "W_o ", el("b", {}, `(${res.shapes.concat.at(-1)}, ${res.shapes.output.at(-1)})`)) : null,
    b.layout === "torch" ? el("span", { class: "on" }, "layout ", el("b", {}, "torch")) : null,
    b.b_q || b.in_proj_bias ? el("span", { class: "on" }, "biases ", el("b", {}, "on")) : null,
    b.in_proj_weight || b.q_proj_weight ? el("span", { class: "on" }, "weights ", el("b", {}, "state_dict")) : null,
    b.positions || b.context_positions ? el("span", { class: "on" }, "positions ", el("b", {}, "given")) : null,
    b.window ? el("span", { class: "on" }, "window ", el("b", {}, b.window)) : null,
    b.rope ? el("span", { class: "on" }, "RoPE ", el("b", {}, ropeText(b.rope, R.dk))) : null,
    b.positional_encoding ? el("span", { class: "on" }, "positional encoding ", el("b", {}, b.positional_encoding)) : null,
    R.m0 ? el("span", { class: "on" }, "KV cache ", el("b", {}, `${R.m0} key${R.m0 === 1 ? "" : "s"}`)) : null,
    R.slopes ? el("span", { class: "on" }, "ALiBi ", el("b", {}, b.alibi ? "the paper's slopes" : "given slopes")) : null,
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

// Whether any key can be hidden (only then are the masked scores read for −∞).
export const mayMask = (R) => !!(R.res.causal || R.body.mask || R.body.key_padding || R.body.window);

// Whose mask a stage uses: this head's, this sequence's, or every one's.
export function maskScope(R) {
  const f = maskForm(R.body.mask, !!R.B);
  const who = [f.perSeq ? `sequence ${ui.selectedSeq}` : null, f.perHead ? `head ${ui.selectedHead}` : null].filter(Boolean);
  return who.length ? ` (the mask of ${who.join(", ")})` : "";
}

export function maskReasons(R) {
  const r = [];
  if (R.res.causal) r.push("causal: a key after the query");
  if (R.body.window) r.push(`window ${R.body.window}: a key ${R.body.window} or more positions away`);
  if (R.body.mask && maskForm(R.body.mask, !!R.B).kind === "bool") r.push("the mask's unticked pairs" + maskScope(R));
  if (R.body.key_padding) r.push("padded keys");
  return r;
}

export function makeView(R, stage, h, spec) {
  const s = slice(R, stage, h);
  const api = R.T[stage] ? R.T[stage].shape : null;
  const v = new MatrixView({
    stage, name: stage, dtype: R.dtype, rows: s.rows, cols: s.cols, src: s, off: s.off,
    shape: [s.rows, s.cols], from: api && api.length >= 3 ? `${stage} (${api.join(", ")})` : null,
    onPoint, lessonName: lessonNameNode(R, stage, h), ...spec });
  views[v.id] = v;
  return v;
}

export function group(id, title, extra) {
  const cards = el("div", { class: "cards" });
  const sec = el("section", { class: "panel group", id, "aria-labelledby": `${id}-h` },
    el("h2", { id: `${id}-h` }, title, extra || null));
  return { sec, cards, add(...nodes) { sec.append(...nodes); return this; } };
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
  const X = R.T.x_pe ? "(X + PE)" : "X", dims = `(${R.H}, ${n}, ${dk})`;
  const all = new MatrixView({ id: "split-q", stage: "q_all", name: "Q", title: t("views.card.q_all"), dtype: R.dtype, rows: n, cols: W,
    src: { data: q }, off: 0, shape: [n, W], rowLabels: R.ql, colLabels: range(W).map(String), kind: "div", onPoint: say,
    groups: range(R.H).map((k) => ({ start: k * dk, size: dk, label: `head ${k}` })),
    formula: `${X} · W_q${b.layout === "torch" ? "ᵀ" : ""}${b.b_q ? " + b_q" : ""}: one projection for all heads; head h owns columns h·${dk} … h·${dk} + ${dk - 1}` });
  const heads = range(R.H).map((k) => new MatrixView({ id: `split-qh${k}`, stage: "q_head", name: `Qh[${k}]`, title: `Qh[${k}]`, dtype: R.dtype,
    rows: n, cols: dk, src: slice(R, "q", k), off: slice(R, "q", k).off, shape: [n, dk], rowLabels: R.ql, colLabels: range(dk).map(String), kind: "div", onPoint: say,
    formula: `columns ${k * dk}…${(k + 1) * dk - 1} of Q, the ${k === 0 ? "first" : k === 1 ? "second" : `${k}th`} plane of Q.reshape(${n}, ${R.H}, ${dk}).transpose(1, 0, 2)`,
    caption: `head ${k}`, head: k }));
  heads.forEach((v) => Object.assign(v, { maxAbs: all.max, scaleNote: t("views.scale.one_split") }));
  all.scaleNote = t("views.scale.one_split");
  for (const v of [all, ...heads]) views[v.id] = v;
  const g = group("group-split", `Split into heads: Q (${n}, ${W}) → Qh ${dims}`,
    el("span", { class: "shape" }, `reshape (${n}, ${R.H}, ${dk}), transpose (1, 0, 2)`));
  g.add(el("p", { class: "hint" }, `K and V are split the same way${R.Hkv !== R.H ? `, into ${R.Hkv} key/value heads` : ""}; `
    + "each head then computes attention on its own plane."), g.cards);
  return [g, [all, ...heads]];
}

export function renderResult(R) {
  if (ui.selectedHead >= R.H) ui.selectedHead = 0;
  if (R.heads && !R.heads.includes(ui.selectedHead)) ui.selectedHead = R.heads[0];
  if (ui.selectedSeq >= Math.max(1, R.B)) ui.selectedSeq = 0;
  const h = ui.selectedHead, n = R.n, m = R.m, b = R.body;
  $("summary").replaceChildren(...summaryItems(R));
  const area = $("stage-area");
  views = {};
  // measure the width a card may take, once, with an empty group
  const probe = group("probe", "");
  probe.sec.append(probe.cards);
  area.replaceChildren(probe.sec);
  const avail = probe.cards.clientWidth - 20; // a card's padding and border
  const idx = (k) => range(k).map(String);
  const masked = mayMask(R) ? (() => {
    const s = slice(R, "masked_scores", h);
    let d = null;
    return (i, j) => (d || (d = s.data))[s.off + i * s.cols + j] === -Infinity;
  })() : null;
  const empty = emptyRows(R, h);
  const emptyNote = () => (empty.size ? [el("p", { class: "warn" }, `${[...empty].map((i) => R.ql[i]).join(", ")}: `
    + "no key left to attend, so every weight in the row is 0 and the head output is 0 (PyTorch gives NaN there).")] : []);
  const kvFrom = b.context ? "context" : "X";
  // A per-head stack (h, d, d_k) gives head h its own matrix W[h]; a 2-D W
  // gives it a block of d_k columns.
  const stacked = (w) => Array.isArray(w) && Array.isArray(w[0]) && Array.isArray(w[0][0]);
  const cols = stacked(b.w_q) ? `W_q[${h}], W_k[${kvHead(R, h)}], W_v[${kvHead(R, h)}] of the stacks`
    : `columns ${h * R.dk}…${(h + 1) * R.dk - 1}`;
  const part = (w, name, k) => (stacked(w) ? `${name}[${k}]` : name);
  const out = [], seqNote = R.B ? `, sequence ${ui.selectedSeq}` : "";
  const g = kvHead(R, h);

  // 1. the input (none when Q, K and V are given)
  const gi = group("group-input", R.B ? `Input, sequence ${ui.selectedSeq} of ${R.B}` : "Input");
  const inputs = R.T.x ? [makeView(R, "x", 0, { id: "input-x", title: "X", name: "x", kind: "div", rowLabels: R.ql,
    colLabels: idx(R.T.x.shape.at(-1)), formula: "one row per token, as sent", caption: "the input" + seqNote })] : [];
  const newKeys = R.kl.slice(R.m0); // the keys this request adds (after a cache's)
  if (b.context) inputs.push(makeView(R, "context", 0, { id: "input-context", title: t("views.card.context"), name: "context", kind: "div",
    rowLabels: newKeys, colLabels: idx(R.T.context.shape.at(-1)), formula: "the source of the keys and values" }));
  if (R.T.x_pe) inputs.push(makeView(R, "x_pe", 0, { id: "input-x_pe", title: "X + PE", name: "x_pe", kind: "div", rowLabels: R.ql,
    colLabels: idx(R.T.x_pe.shape.at(-1)), formula: "X plus the sinusoidal encoding of each token's position: what the projections see" }));
  gi.add(gi.cards);
  if (R.B) out.push([seqStrip(R), []]);
  if (inputs.length) out.push([gi, inputs]);

  // one projection split into heads (lesson 002's reshape)
  const split = splitViews(R);
  if (split) out.push(split);

  // every head at once: one click opens a head
  if (R.H > 1) out.push([headStrip(R), []]);

  // 2. one head, step by step
  const gh = group(`group-head`, R.H > 1 ? `Head ${h}` : "The head", R.H > 1 ? el("span", { class: "shape" }, cols) : null);
  const pv = (stage, spec) => makeView(R, stage, h, { id: `h${h}-${stage}`, caption: `head ${h}${seqNote}`, ...spec });
  const biased = b.b_q || b.in_proj_bias, wt = b.layout === "torch" || b.in_proj_weight || b.q_proj_weight ? "ᵀ" : "";
  const plus = (k) => (biased ? ` + b_${k}` : "");
  const X = R.T.x_pe ? "(X + PE)" : "X", ctx = b.context && R.T.x_pe ? "(context + PE)" : kvFrom;
  const shared = R.Hkv !== R.H ? `; key/value head ${g}, shared by query heads ${range(R.H).filter((k) => kvHead(R, k) === g).join(", ")}` : "";
  const steps = [
    [b.q ? "1 · Q, K and V as given" : "1 · project each token", [
      pv("q", { title: "Q", name: "q", kind: "div", rowLabels: R.ql, colLabels: idx(R.dk),
                formula: b.q ? "as given" : stacked(b.w_q)
                  ? `${X} · ${part(b.w_q, "W_q", h)}${wt}${plus("q")} (head ${h}'s own ${shapeOf(b.w_q[h]).dims.join("×")} matrix of the ${shapeOf(b.w_q).dims.join("×")} stack)`
                  : `${X} · W_q${wt}${plus("q")} (${R.H > 1 ? "this head's " + cols : "all columns"})` }),
      pv("k", { title: "K", name: "k", kind: "div", rowLabels: newKeys, colLabels: idx(R.dk),
                formula: (b.q ? "as given" : `${b.context ? ctx : X} · ${part(b.w_k, "W_k", g)}${wt}${plus("k")}`) + shared }),
      pv("v", { title: "V", name: "v", kind: "div", rowLabels: newKeys, colLabels: idx(R.dv),
                formula: (b.q ? "as given" : `${b.context ? ctx : X} · ${part(b.w_v, "W_v", g)}${wt}${plus("v")}`) + shared })]],
    ...(R.T.q_rope ? [["1½ · rotate by position (RoPE)", [
      pv("q_rope", { title: t("views.card.q_rope"), name: "q_rope", kind: "div", rowLabels: R.ql, colLabels: idx(R.dk),
                     formula: `each pair of Q's components turned by position·θ_i (${ropeText(b.rope, R.dk)})` }),
      pv("k_rope", { title: t("views.card.k_rope"), name: "k_rope", kind: "div", rowLabels: newKeys, colLabels: idx(R.dk),
                     formula: "K's pairs turned the same way, by each key's position" + shared })]]] : []),
    ...(R.T.k_cache ? [["1¾ · the KV cache", [
      pv("k_cache", { title: t("views.card.k_cache"), name: "k_cache", kind: "div", rowLabels: R.kl, colLabels: idx(R.dk),
                      formula: `${R.m0} cached key row${R.m0 === 1 ? "" : "s"} (past_k), then this request's K${R.T.k_rope ? " after RoPE" : ""}: the keys the scores use` + shared }),
      pv("v_cache", { title: t("views.card.v_cache"), name: "v_cache", kind: "div", rowLabels: R.kl, colLabels: idx(R.dv),
                      formula: `${R.m0} cached value row${R.m0 === 1 ? "" : "s"} (past_v), then this request's V` + shared })]]] : []),
    ["2 · compare queries with keys", [
      pv("scores", { title: t("views.card.scores"), name: "scores", kind: "div", rowLabels: R.ql, colLabels: R.kl, arrow: true,
                     formula: `${R.T.q_rope ? "Q after RoPE" : "Q"} · ${R.T.k_cache ? "K cache" : R.T.k_rope ? "K after RoPE" : "K"}ᵀ: query ↓ against key →` }),
      pv("scaled_scores", { title: t(b.scale === undefined ? "views.card.scaled_scores" : "views.card.scaled_scores_given"), name: "scaled_scores", kind: "div", rowLabels: R.ql, colLabels: R.kl, arrow: true,
                            formula: b.scale === undefined ? `scores ÷ √${R.dk} (= × ${fmt(R.scale)})` : `scores × ${exactText(b.scale, "float64")}` }),
      pv("masked_scores", { title: t("views.card.masked_scores"), name: "masked_scores", kind: "div", rowLabels: R.ql, colLabels: R.kl, arrow: true,
                            masked, emptyRows: empty, formula: [
                            b.mask && maskForm(b.mask, !!R.B).kind === "add" ? `the additive mask's numbers added${maskScope(R)}` : null,
                            R.slopes
                              ? `ALiBi: −${fmt(R.slopes[h])}·|p_i − p_j| added (head ${h}'s slope ${exactText(R.slopes[h], "float64")})` : null,
                            maskReasons(R).length
                              ? `−∞ where the query may not attend the key (${maskReasons(R).join("; ")})`
                              : R.slopes || b.mask ? null : "no key is hidden: the same as the scaled scores"].filter(Boolean).join("; ") })]],
    ["3 · softmax: scores become weights", [
      pv("weights", { title: t("views.card.weights"), name: "weights", kind: "seq", rowLabels: R.ql, colLabels: R.kl, arrow: true,
                      masked, emptyRows: empty, sum: true, notes: emptyNote(),
                      formula: "softmax of each row of the masked scores: query ↓ attends key →; each row sums to 1" })]],
    ["4 · mix the values", [
      pv("head_outputs", { title: t("views.card.head_outputs"), name: "head_outputs", kind: "div", rowLabels: R.ql, colLabels: idx(R.dv),
                           emptyRows: empty, formula: "weights · V: each query's weighted average of the value rows" })]],
  ];
  // One colour scale: Q, K and V (rotated and cached too) on one scale, every
  // score stage on another, so that the scaling shows and one colour is one
  // number from card to card; otherwise each card runs to its own maximum.
  const shown = [...steps.flatMap(([, vs]) => vs), ...(split ? split[1] : [])];
  if ($("one-scale").checked) {
    for (const [stages, note] of [[["q", "k", "v", "q_rope", "k_rope", "k_cache", "v_cache", "q_all", "q_head"], "views.scale.one_qkv"],
                                  [["scores", "scaled_scores", "masked_scores"], "views.scale.one_scores"]]) {
      const same = shown.filter((v) => stages.includes(v.stage));
      const M = Math.max(0, ...same.map((v) => v.max));
      for (const v of same) Object.assign(v, { maxAbs: M, scaleNote: t(note) });
    }
  }
  for (const [title, vs] of steps) {
    const cards = el("div", { class: "cards" });
    gh.sec.append(el("h3", { class: "step" }, title), cards);
    out.push([{ cards }, vs]);
  }

  // 3. all heads together
  const ga = group("group-all", (R.H > 1 ? "All heads together" : "Output") + (R.B ? `, sequence ${ui.selectedSeq}` : ""));
  const groups = R.H > 1 ? range(R.H).map((k) => ({ start: k * R.dv, size: R.dv, label: `head ${k}` })) : null;
  const whole = [
    makeView(R, "concat", 0, { id: "all-concat", title: t("views.card.concat"), name: "concat", kind: "div", rowLabels: R.ql,
      colLabels: idx(R.T.concat.shape.at(-1)), groups, formula: R.H > 1 ? "the head outputs side by side, head 0 first" : "the one head's output" }),
    makeView(R, "output", 0, { id: "all-output", title: t("views.card.output"), name: "output", kind: "div", rowLabels: R.ql,
      colLabels: idx(R.T.output.shape.at(-1)), formula: b.w_o || b.out_proj_weight
        ? `concat · W_o${wt}${b.b_o || b.out_proj_bias ? " + b_o" : ""}` : "no W_o: the output is the concatenation" })];
  ga.add(ga.cards);
  out.push([ga, whole]);

  for (const [g, vs] of out) {
    for (const v of vs) {
      if (!v.scaleNote) v.scaleNote = t(v.kind === "seq" ? "views.scale.weights.card" : "views.scale.own_card");
      v.layout(avail); g.cards.append(v.root);
    }
    if (vs.some((v) => v.stage === "weights")) g.cards.append(headView(R, h, avail));
  }
  area.replaceChildren(...out.filter(([g2]) => g2.sec && g2 !== ga).map(([g2]) => g2.sec), gh.sec, ga.sec);
  compareSlot();
  showGuided(R);
  drawWhenSeen();
  renderCompare(R, avail);
}

