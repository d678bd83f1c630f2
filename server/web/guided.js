/*
 * guided.js - the guided mode: the stages of the open head revealed one at a
 * time in the order they are computed (Q, K, V → QKᵀ → ÷√d_k → mask →
 * softmax → ·V → concat → W_o), each with its formula written out in the
 * live numbers of one chosen cell (a click on any cell chooses it), and an
 * optional exercise: guess a row of weights, then see the difference.
 */
import { $, el, range } from "./base.js";
import { ui } from "./state.js";
import { lastGood } from "./request.js";
import { kvHead, slice } from "./reply.js";
import { exact, fmt, MINUS } from "./format.js";
import { maskReasons, renderResult, views } from "./views.js";
import { afterRender } from "./highlight.js";

// The steps, in pipeline order, and the cards (their data-stage) each reveals.
export const GUIDED_STEPS = [
  { title: "Q, K, V: project each token", stages: ["q", "k", "v", "q_rope", "k_rope", "k_cache", "v_cache", "q_all", "q_head"] },
  { title: "QKᵀ: compare each query with each key", stages: ["scores"] },
  { title: "÷ √d_k: scale the scores", stages: ["scaled_scores"] },
  { title: "mask: hide the keys a query may not attend", stages: ["masked_scores"] },
  { title: "softmax: each row of scores becomes weights", stages: ["weights", "lines"] },
  { title: "· V: mix the value rows by the weights", stages: ["head_outputs"] },
  { title: "concat: the heads side by side", stages: ["concat"] },
  { title: "W_o: the output projection", stages: ["output"] },
];
const STAGE_STEP = Object.fromEntries(GUIDED_STEPS.flatMap((s, k) => s.stages.map((st) => [st, k])));
const SMALL_MULTIPLES_STEP = STAGE_STEP.weights; // every head's weights: shown with the softmax
export const MAX_TERMS = 8; // a sum of more terms is written as its first and last ones
export const PREDICT_MAX_KEYS = 16; // the exercise asks for a row of at most this many weights

// The guide's state: its step, the chosen cell (query i, key j, column c of
// the head, column o of the output) and the exercise's guesses.
export const guided = { on: false, step: 0, i: 0, j: 0, c: 0, o: 0, predict: false, guesses: null, revealed: false };

const num = (v, dtype, term) => el("span", { class: "num", dataset: { exact: exact(v, dtype), term } }, fmt(v));
const at = (s, i, j) => s.data[s.off + i * s.cols + j];

// Σ a_t·b_t written out: every term while there are at most MAX_TERMS, else
// the first and the last ones around an ellipsis.
function dotTerms(as, bs, dtype) {
  const k = as.length, show = k <= MAX_TERMS ? range(k) : [0, 1, 2, null, k - 2, k - 1];
  const parts = [];
  for (const t of show) {
    if (parts.length) parts.push(" + ");
    if (t === null) { parts.push(`… (${k} terms)`); continue; }
    parts.push(num(as[t], dtype, "a"), "·", num(bs[t], dtype, "b"));
  }
  return parts;
}

// The weight column `col` of projection `key` for head `hd`, as sent (a
// per-head stack, a d × (heads·d_k) matrix, or PyTorch's out × in), or null.
function weightColumn(b, key, hd, col, width) {
  const w = b[key];
  if (!Array.isArray(w) || b.in_proj_weight || b.q_proj_weight) return null;
  if (Array.isArray(w[0][0])) return w[hd].map((r) => r[col]);
  const c = hd * width + col;
  return b.layout === "torch" ? w[c].slice() : w.map((r) => r[c]);
}

// "Q[i, c] = X[i]·W_q[:, col] = … = value" for one projection.
function projection(R, name, stage, row, key, hd, src) {
  const h = ui.selectedHead, s = slice(R, stage, h), c = guided.c % s.cols, v = at(s, row, c);
  const lab = `${name}[${stage === "q" ? R.ql[row] : R.kl[row + R.m0]}, ${c}]`;
  const X = R.T[src] ? slice(R, src, 0) : null, W = weightColumn(R.body, key, hd, c, s.cols);
  if (R.body.q || !X || !W || W.length !== X.cols) return el("p", {}, `${lab} = `, num(v, R.dtype, name), R.body.q ? " (as given)" : "");
  const x = range(X.cols).map((t) => at(X, row, t));
  const bias = R.body[`b_${name.toLowerCase()}`];
  // the column the product uses: head hd's own matrix's column c, or column hd·width + c of one matrix (a row when out × in)
  const stacked = Array.isArray(R.body[key][0][0]), k = stacked ? c : hd * s.cols + c, wname = key.replace("w_", "W_");
  return el("p", {}, `${lab} = ${src === "x_pe" ? "(X + PE)" : src === "context" ? "context" : "X"}[${row}] · `
    + `${!stacked && R.body.layout === "torch" ? "row" : "column"} ${k} of ${wname}${stacked ? `[${hd}]` : ""} = `,
  ...dotTerms(x, W, R.dtype), bias ? " + bias" : "", " = ", num(v, R.dtype, "result"));
}

// The formula of each step, for the chosen cell, as nodes.
const FORMULAS = [
  (R) => {
    const src = R.T.x_pe ? "x_pe" : "x", kv = R.body.context ? "context" : src, g = kvHead(R, ui.selectedHead);
    const jNew = Math.max(0, guided.j - R.m0);
    return [projection(R, "Q", "q", guided.i, "w_q", ui.selectedHead, src),
            projection(R, "K", "k", Math.min(jNew, slice(R, "k", 0).rows - 1), "w_k", g, kv),
            projection(R, "V", "v", Math.min(jNew, slice(R, "v", 0).rows - 1), "w_v", g, kv)];
  },
  (R) => {
    const h = ui.selectedHead, qs = R.T.q_rope ? "q_rope" : "q", ks = R.T.k_cache ? "k_cache" : R.T.k_rope ? "k_rope" : "k";
    const Q = slice(R, qs, h), K = slice(R, ks, h), jk = ks === "k_cache" ? guided.j : guided.j - R.m0;
    const v = at(slice(R, "scores", h), guided.i, guided.j);
    return [el("p", {}, `scores[${R.ql[guided.i]} → ${R.kl[guided.j]}] = Q[${guided.i}] · K[${jk}] = `,
      ...dotTerms(range(Q.cols).map((t) => at(Q, guided.i, t)), range(K.cols).map((t) => at(K, jk, t)), R.dtype),
      " = ", num(v, R.dtype, "result"))];
  },
  (R) => {
    const h = ui.selectedHead, a = at(slice(R, "scores", h), guided.i, guided.j), v = at(slice(R, "scaled_scores", h), guided.i, guided.j);
    const by = R.body.scale === undefined ? [` ÷ √${R.dk} = `, num(a, R.dtype, "a"), " × ", num(R.scale, "float64", "scale")]
      : [" × scale = ", num(a, R.dtype, "a"), " × ", num(R.scale, "float64", "scale")];
    return [el("p", {}, `scaled[${R.ql[guided.i]} → ${R.kl[guided.j]}] = scores`, ...by, " = ", num(v, R.dtype, "result"))];
  },
  (R) => {
    const h = ui.selectedHead, a = at(slice(R, "scaled_scores", h), guided.i, guided.j), v = at(slice(R, "masked_scores", h), guided.i, guided.j);
    const lab = `masked[${R.ql[guided.i]} → ${R.kl[guided.j]}]`;
    if (v === -Infinity) return [el("p", {}, `${lab} = −∞: this query may not attend this key (${maskReasons(R).join("; ") || "the mask"}), so its weight will be 0`)];
    if (v === a) return [el("p", {}, `${lab} = scaled = `, num(v, R.dtype, "result"), ": nothing hides this key")];
    return [el("p", {}, `${lab} = scaled + (mask or ALiBi) = `, num(a, R.dtype, "a"), " + ", num(v - a, "float64", "b"), " = ", num(v, R.dtype, "result"))];
  },
  (R) => {
    const h = ui.selectedHead, M = slice(R, "masked_scores", h), i = guided.i;
    const row = range(M.cols).map((t) => at(M, i, t)), max = Math.max(...row);
    const e = row.map((s) => (s === -Infinity ? 0 : Math.exp(s - max))), sum = e.reduce((a, b) => a + b, 0);
    const v = at(slice(R, "weights", h), i, guided.j);
    return [el("p", {}, `weights[${R.ql[i]} → ${R.kl[guided.j]}] = exp(masked − row max) ÷ Σ over the row = exp(`,
      num(row[guided.j], R.dtype, "a"), ` ${MINUS} `, num(max, R.dtype, "max"), ") ÷ ", num(sum, "float64", "sum"), " = ",
      num(e[guided.j], "float64", "e"), " ÷ ", num(sum, "float64", "sum"), " = ", num(v, R.dtype, "result")),
      el("p", { class: "note" }, `The row's ${M.cols} weights sum to 1.`)];
  },
  (R) => {
    const h = ui.selectedHead, W = slice(R, "weights", h), V = slice(R, R.T.v_cache ? "v_cache" : "v", h);
    const c = guided.c % V.cols, v = at(slice(R, "head_outputs", h), guided.i, c);
    return [el("p", {}, `head output[${R.ql[guided.i]}, ${c}] = weights[${guided.i}] · column ${c} of V = `,
      ...dotTerms(range(W.cols).map((t) => at(W, guided.i, t)), range(V.rows).map((t) => at(V, t, c)), R.dtype), " = ", num(v, R.dtype, "result"))];
  },
  (R) => {
    const h = ui.selectedHead, c = guided.c % R.dv, col = h * R.dv + c, C = slice(R, "concat", 0);
    return [el("p", {}, `concat[${R.ql[guided.i]}, ${col}] = head ${h}'s output[${guided.i}, ${c}] (head h fills columns h·${R.dv} … h·${R.dv} + ${R.dv - 1}) = `,
      num(at(C, guided.i, col), R.dtype, "result"))];
  },
  (R) => {
    const C = slice(R, "concat", 0), O = slice(R, "output", 0), o = guided.o % O.cols, v = at(O, guided.i, o);
    const b = R.body, W = b.w_o && !b.out_proj_weight ? weightColumn({ ...b, w_o: b.w_o }, "w_o", 0, o, 0) : null;
    if (!b.w_o && !b.out_proj_weight) return [el("p", {}, `output[${R.ql[guided.i]}, ${o}] = concat[${guided.i}, ${o}] = `, num(v, R.dtype, "result"), ": no W_o, the output is the concatenation")];
    if (!W) return [el("p", {}, `output[${R.ql[guided.i]}, ${o}] = concat[${guided.i}] · column ${o} of W_o = `, num(v, R.dtype, "result"))];
    return [el("p", {}, `output[${R.ql[guided.i]}, ${o}] = concat[${guided.i}] · column ${o} of W_o = `,
      ...dotTerms(range(C.cols).map((t) => at(C, guided.i, t)), W, R.dtype), b.b_o ? " + b_o" : "", " = ", num(v, R.dtype, "result"))];
  },
];

// The exercise: a guess per key of the chosen query's row, then the
// difference per entry (guess − weight).
function exercise(R) {
  const h = ui.selectedHead, W = slice(R, "weights", h), i = guided.i;
  if (W.cols > PREDICT_MAX_KEYS) return el("p", { class: "note" }, `The exercise asks for rows of at most ${PREDICT_MAX_KEYS} keys; this row has ${W.cols}.`);
  if (!guided.guesses || guided.guesses.length !== W.cols) guided.guesses = new Array(W.cols).fill("");
  const rows = range(W.cols).map((j) => {
    const g = guided.guesses[j], w = at(W, i, j), gv = Number(g);
    return el("tr", {}, el("th", { scope: "row" }, R.kl[j]),
      el("td", {}, el("input", { type: "text", inputmode: "decimal", value: g, size: 6, "aria-label": `Your guess of the weight ${R.ql[i]} → ${R.kl[j]}`,
        dataset: { key: j }, oninput: (ev) => { guided.guesses[j] = ev.target.value; } })),
      guided.revealed ? el("td", {}, num(w, R.dtype, "weight")) : null,
      guided.revealed ? el("td", { class: "diff" }, g.trim() === "" || !Number.isFinite(gv) ? "—" : num(gv - w, "float64", "diff")) : null);
  });
  return el("div", { class: "predict" },
    el("p", { class: "hint" }, `Guess the weights of query ${R.ql[i]} (its row sums to 1), then reveal them.`),
    el("table", { class: "predict-table" }, el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "key"), el("th", { scope: "col" }, "your guess"),
      guided.revealed ? el("th", { scope: "col" }, "weight") : null, guided.revealed ? el("th", { scope: "col" }, "guess − weight") : null)),
    el("tbody", {}, rows)),
    el("button", { type: "button", class: "small", id: "guided-reveal", onclick: () => { guided.revealed = !guided.revealed; show(R, "guided-reveal"); } },
      guided.revealed ? "Hide the weights" : "Reveal the weights"));
}

// Which cards the step reveals; the step's heading goes when its cards do.
function reveal() {
  const area = $("stage-area");
  for (const card of area.querySelectorAll(".card[data-stage]")) {
    const k = STAGE_STEP[card.dataset.stage];
    const hideForGuess = guided.predict && !guided.revealed && guided.step === STAGE_STEP.weights && k === STAGE_STEP.weights;
    card.hidden = guided.on && k !== undefined && (k > guided.step || hideForGuess);
    card.classList.toggle("guided-current", guided.on && k === guided.step);
  }
  for (const h3 of area.querySelectorAll("h3.step")) {
    const cards = h3.nextElementSibling;
    h3.hidden = guided.on && !!cards && [...cards.children].every((c) => c.hidden);
  }
  const all = $("group-all");
  if (all) all.hidden = guided.on && guided.step < STAGE_STEP.concat;
  const heads = $("group-heads");
  if (heads) heads.hidden = guided.on && guided.step < SMALL_MULTIPLES_STEP;
}

// The nodes of a list that are there: replaceChildren would write a null as "null".
const present = (...xs) => xs.flat().filter((x) => x !== null && x !== undefined && x !== false);

// Draws the guide above the current step's cards (focus kept on the button
// that had it); `focusId` names a button to focus after.
let box = null; // the guide's node, moved to the step it explains
export function show(R, focusId) {
  box = box || $("guided");
  const had = focusId || (document.activeElement && box.contains(document.activeElement) ? document.activeElement.id : null);
  reveal();
  if (!guided.on || !R) { box.hidden = true; box.replaceChildren(); $("summary-panel").after(box); return; }
  clampCell(R);
  const step = GUIDED_STEPS[guided.step], last = GUIDED_STEPS.length - 1;
  box.hidden = false;
  box.replaceChildren(...present(
    el("h2", { id: "guided-h" }, `Step ${guided.step + 1} of ${GUIDED_STEPS.length}: ${step.title}`),
    el("div", { class: "guided-formula", id: "guided-formula", "aria-live": "polite" }, ...FORMULAS[guided.step](R)),
    el("p", { class: "note" }, `The chosen cell: query ${R.ql[guided.i]}, key ${R.kl[guided.j]}, column ${guided.c % R.dk}`
      + `${R.H > 1 ? ` of head ${ui.selectedHead}` : ""}. Click or tap any cell (or focus it and press Enter) to choose another.`),
    guided.step === STAGE_STEP.weights ? el("label", { class: "check" }, el("input", { type: "checkbox", id: "guided-predict", checked: guided.predict,
      onchange: (ev) => { guided.predict = ev.target.checked; guided.revealed = false; show(R, "guided-predict"); } }), "Predict first: guess this row of weights") : null,
    guided.step === STAGE_STEP.weights && guided.predict ? exercise(R) : null,
    el("div", { class: "toolbar" },
      el("button", { type: "button", id: "guided-prev", disabled: guided.step === 0, onclick: () => go(-1) }, "Previous step"),
      el("button", { type: "button", id: "guided-next", class: "primary", disabled: guided.step === last, onclick: () => go(1) }, "Next step"),
      el("button", { type: "button", id: "guided-exit", class: "small", onclick: () => setGuided(false) }, "Leave the guided mode"))));
  const first = $("stage-area").querySelector(`.card.guided-current:not([hidden])`) || $("stage-area").querySelector(".card[data-stage='weights']");
  const anchor = first ? first.parentNode : null;
  if (anchor && anchor.parentNode && box.nextSibling !== anchor) anchor.parentNode.insertBefore(box, anchor);
  const again = had && $(had);
  if (again && !again.disabled) again.focus();
  else if (had) $("guided-next").disabled ? $("guided-prev").focus() : $("guided-next").focus();
}

function clampCell(R) {
  guided.i = Math.min(guided.i, R.n - 1); guided.j = Math.min(guided.j, R.m - 1);
  guided.c = Math.min(guided.c, Math.max(R.dk, R.dv) - 1); guided.o = Math.min(guided.o, R.T.output.shape.at(-1) - 1);
}

function go(d) {
  guided.step = Math.max(0, Math.min(GUIDED_STEPS.length - 1, guided.step + d));
  show(lastGood, d > 0 ? "guided-next" : "guided-prev");
  const cur = $("stage-area").querySelector(".card.guided-current:not([hidden])");
  if (cur) cur.scrollIntoView({ block: "nearest" });
}

// On: from the first step, one colour scale for every card (the legends say so).
export function setGuided(on) {
  guided.on = on; guided.step = 0;
  $("guided-toggle").setAttribute("aria-pressed", String(on));
  if (on) $("one-scale").checked = true;
  if (lastGood) renderResult(lastGood); else show(null);
  if (!on) $("guided-toggle").focus();
}

// A cell chosen in any card: the query, key and column it stands for (in
// the split into heads, also the head: a cell of another head opens it).
function choose(card) {
  const v = views[card.id], R = lastGood;
  if (!v || !v.cur || !R) return;
  const [r, c] = v.cur, s = card.dataset.stage;
  if (s === "q_all" || s === "q_head") { chooseSplit(R, card.id, r, c, s === "q_all" ? Math.floor(c / R.dk) : v.head); return; }
  if (["scores", "scaled_scores", "masked_scores", "weights"].includes(s)) Object.assign(guided, { i: r, j: c });
  else if (["q", "q_rope", "head_outputs", "x", "x_pe"].includes(s)) Object.assign(guided, { i: r, c: s.startsWith("x") ? guided.c : c });
  else if (["k", "v", "k_rope"].includes(s)) Object.assign(guided, { j: r + R.m0, c });
  else if (["k_cache", "v_cache"].includes(s)) Object.assign(guided, { j: r, c });
  else if (s === "concat") Object.assign(guided, { i: r, c: c % R.dv });
  else if (s === "output") Object.assign(guided, { i: r, o: c });
  else return;
  guided.guesses = null; guided.revealed = false;
  show(R);
}

// Query r, column c of head hd's Q, chosen in a card of the split (the card
// `id`); the cell keeps the focus when the head changes and the cards are
// drawn again.
function chooseSplit(R, id, r, c, hd) {
  Object.assign(guided, { i: r, c: c % R.dk, guesses: null, revealed: false });
  if (hd === ui.selectedHead) { show(R); return; }
  const had = document.activeElement && document.activeElement.closest("td[data-row]");
  ui.selectedHead = hd;
  renderResult(R);
  afterRender(R);
  const v = views[id];
  if (v && v.mode === "table") v.moveTo(r, c, !!had);
}

export function init() {
  $("guided-toggle").addEventListener("click", () => setGuided(!guided.on));
  const pick = (ev) => {
    if (!guided.on) return;
    const card = ev.target.closest && ev.target.closest(".card[data-stage]");
    if (card && (ev.type === "click" || ev.key === "Enter" || ev.key === " ")) choose(card);
  };
  $("stage-area").addEventListener("click", pick);
  $("stage-area").addEventListener("keydown", pick);
}
