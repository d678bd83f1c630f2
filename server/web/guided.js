/*
 * guided.js - the guided mode: the steps of the open head revealed one at a
 * time in the order the lesson computes them (Q, K, V → QKᵀ → ÷√d_k → mask
 * → softmax → ·V → concat → W_o; a step that does nothing for these inputs is
 * left out), each with its formula written out in the live numbers of one
 * chosen cell (a click on any cell chooses it), in the lesson's own names and
 * as the lesson writes it; and an optional exercise: guess a row of weights,
 * with every source of the answer hidden until Reveal.  Its words come from
 * the catalogs (words-*.js, section "guided").
 */
import { $, el, range } from "./base.js";
import { lastGood, ui } from "./state.js";
import { kvHead, slice } from "./reply.js";
import { fmt } from "./format.js";
import { onLangChange } from "./locale.js";
import { nodes, t } from "./words.js";
import { maskReasons, views } from "./cards.js";
import { LESSON_NAMES, lessonOf, mayMask, ownName } from "./lesson-names.js";
import { anchorMarks, clearMarks, markLinks } from "./highlight.js";
import { maskWhy, refreshExplain, withhold } from "./explain.js";
import { afterRender, renderResult } from "./hooks.js";

// The guide's names: the lesson's own (lesson-names.js, never translated:
// its input, its scaled scores, its weights and head output, its lines of
// code), whether its arrays carry the head as their first index (lesson
// 002's Qh[h]) and whether its softmax subtracts the row's max; inputs of
// no lesson (or changed past what it computes) use the API's names.
const API_NAMES = { x: "X", q: "Q", k: "K", v: "V", raw: "scores", scaled: "scaled_scores", dk: "d_k", weights: "weights",
                    head: "head_outputs", concat: "concat", perHead: true, stable: true, code: {} };
export function guideNames(key) {
  const L = LESSON_NAMES[key];
  if (!L) return API_NAMES;
  const own = (stage) => ownName(key, stage, null);
  return { x: own("x"), q: own("q"), k: own("k"), v: own("v"), raw: own("scores"), scaled: own("scaled_scores"), dk: L.dk,
           weights: own("weights"), head: own("head_outputs"), heads: L.heads, concat: own("concat"),
           perHead: L.stages.q.includes("[h]"), stable: L.stable, wo: L.wo, code: L.code };
}
// The lesson whose names the cards carry (lesson-names.js: while the inputs compute what it computes), else the API's.
const lessonNames = (R) => guideNames(lessonOf(R));

// The steps, in pipeline order, and the cards (their data-stage) each reveals.
export const STEP_STAGES = {
  qkv: ["q", "k", "v", "q_rope", "k_rope", "k_cache", "v_cache", "q_all", "q_head"], scores: ["scores"],
  scale: ["scaled_scores"], mask: ["masked_scores"], softmax: ["weights", "lines"], mix: ["head_outputs"],
  concat: ["concat"], wo: ["output"],
};
const STAGE_KIND = Object.fromEntries(Object.entries(STEP_STAGES).flatMap(([k, ss]) => ss.map((s) => [s, k])));
// Whether a key can be hidden or moved (a mask, padding, a window, ALiBi): else the mask step does nothing.
const masking = (R) => mayMask(R) || !!R.body.mask || !!R.slopes;
const hasWo = (R) => !!(R.body.w_o || R.body.out_proj_weight);
// The steps these inputs have: no mask step when nothing is hidden, no concat with one head, no W_o step without W_o.
export function stepsFor(R) {
  return ["qkv", "scores", "scale", masking(R) && "mask", "softmax", "mix", R.H > 1 && "concat", hasWo(R) && "wo"].filter(Boolean);
}
export const MAX_TERMS = 8; // a sum of more terms is written as its first and last ones
export const PREDICT_MAX_KEYS = 16; // the exercise asks for a row of at most this many weights
const WITHHELD = ["weights", "lines", "head_outputs", "concat", "output"]; // stages that show the guessed weights

// The guide's state: its step, the chosen cell (query i, key j, column c of
// the head, column o of the output) and the exercise's guesses.
export const guided = { on: false, step: 0, i: 0, j: 0, c: 0, o: 0, predict: false, guesses: null, revealed: false };
let steps = ["qkv"]; // the steps of the inputs on show
// The step on show, from 1, and how many there are: what "Step n of N" counts.
export const stepCount = () => ({ step: guided.step + 1, steps: steps.length });
const kind = () => steps[guided.step];
const predicting = () => guided.on && guided.predict && !guided.revealed && kind() === "softmax";

const num = (v, dtype, term) => el("span", { class: "num", dataset: { exact: String(v), term } }, fmt(v));
const code = (s) => el("code", {}, s);
const p = (id, params, attrs = {}) => el("p", attrs, ...nodes(id, params));
const at = (s, i, j) => s.data[s.off + i * s.cols + j];
// A number as the page shows it (three significant digits): what a reader can redo the arithmetic with.
const shown = (v) => (Math.abs(v) >= 999.5 && Math.abs(v) < 9999.5 ? Math.round(v) : Number(v.toPrecision(3)));
// "=" when the numbers as shown give the result as shown, else "≈".
const rel = (fromShown, exact) => (fmt(fromShown) === fmt(exact) ? "=" : "≈");
// A number as a factor or a subtrahend: bracketed when negative ("0.829·(−0.322)", "a − (−2.61)").
const factor = (v, dtype, term) => (v < 0 ? ["(", num(v, dtype, term), ")"] : [num(v, dtype, term)]);

// Σ a_t·b_t written out: every term while there are at most MAX_TERMS, else
// the first and the last ones around an ellipsis; and the sum's relation
// to the result `v` (tail: what follows the terms, such as a bias).
function dotTerms(as, bs, dtype, v) {
  const k = as.length, show = k <= MAX_TERMS ? range(k) : [0, 1, 2, null, k - 2, k - 1];
  const parts = [];
  for (const t of show) {
    if (parts.length) parts.push(" + ");
    if (t === null) { parts.push(...nodes("guided.terms.more", { count: k })); continue; }
    parts.push(...(parts.length ? factor(as[t], dtype, "a") : [num(as[t], dtype, "a")]), "·", ...factor(bs[t], dtype, "b"));
  }
  const sum = k <= MAX_TERMS ? as.reduce((s, a, t) => s + shown(a) * shown(bs[t]), 0) : v;
  return { terms: el("span", {}, ...parts), rel: rel(sum, v) };
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

// Names indexed as the lesson indexes them: skor[1][tok0 → tok2], Q[tok0, 3].
function lhs(N, name, h, a, b, pair) {
  return code(`${name}${N.perHead && h !== null ? `[${h}]` : ""}[${a}${pair ? " → " : ", "}${b}]`);
}

// "Q[i, c] = X[i] · column k of W_q = … = value" for one projection.
function projection(R, N, which, row, hd, src) {
  const s = slice(R, which, ui.selectedHead), c = guided.c % s.cols, v = at(s, row, c);
  const name = N[which], key = `w_${which}`;
  const left = lhs(N, name, hd, which === "q" ? R.ql[row] : R.kl[row + R.m0], c, false);
  const X = R.T[src] ? slice(R, src, 0) : null, W = weightColumn(R.body, key, hd, c, s.cols);
  if (R.body.q || !X || !W || W.length !== X.cols) return p(R.body.q ? "guided.qkv.given" : "guided.qkv.opaque", { lhs: left, value: num(v, R.dtype, name) });
  // the column the product uses: head hd's own matrix's column c, or column hd·width + c of one matrix (a row when out × in)
  const stacked = Array.isArray(R.body[key][0][0]), k = stacked ? c : hd * s.cols + c;
  const x = range(X.cols).map((t) => at(X, row, t)), d = dotTerms(x, W, R.dtype, v);
  const bias = R.body[`b_${which}`] ? ` + b_${which}` : "";
  const from = src === "x_pe" ? `(${N.x} + PE)` : src === "context" ? "context" : N.x;
  return p(!stacked && R.body.layout === "torch" ? "guided.qkv.row" : "guided.qkv.column", {
    lhs: left, src: code(`${from}[${row}]`), col: k, w: code(`W_${which}${stacked ? `[${hd}]` : ""}`),
    terms: el("span", {}, d.terms, bias), rel: bias ? "=" : d.rel, value: num(v, R.dtype, "result") });
}

// The formula of each step, for the chosen cell, as nodes.
const FORMULAS = {
  qkv(R, N) {
    const src = R.T.x_pe ? "x_pe" : "x", kv = R.body.context ? "context" : src, g = kvHead(R, ui.selectedHead);
    const jNew = Math.max(0, guided.j - R.m0);
    return [projection(R, N, "q", guided.i, ui.selectedHead, src),
            projection(R, N, "k", Math.min(jNew, slice(R, "k", 0).rows - 1), g, kv),
            projection(R, N, "v", Math.min(jNew, slice(R, "v", 0).rows - 1), g, kv)];
  },
  scores(R, N) {
    const h = ui.selectedHead, qs = R.T.q_rope ? "q_rope" : "q", ks = R.T.k_cache ? "k_cache" : R.T.k_rope ? "k_rope" : "k";
    const Q = slice(R, qs, h), K = slice(R, ks, h), jk = ks === "k_cache" ? guided.j : guided.j - R.m0;
    const v = at(slice(R, "scores", h), guided.i, guided.j);
    const d = dotTerms(range(Q.cols).map((t) => at(Q, guided.i, t)), range(K.cols).map((t) => at(K, jk, t)), R.dtype, v);
    const ix = (n) => `${n}${N.perHead ? `[${h}]` : ""}`;
    return [p("guided.scores.line", { lhs: N.raw ? lhs(N, N.raw, h, R.ql[guided.i], R.kl[guided.j], true) : code(`(QKᵀ)[${R.ql[guided.i]} → ${R.kl[guided.j]}]`),
      q: code(`${ix(N.q)}[${guided.i}]`), k: code(`${ix(N.k)}[${jk}]`), terms: d.terms, rel: d.rel, value: num(v, R.dtype, "result") })];
  },
  scale(R, N) {
    const h = ui.selectedHead, a = at(slice(R, "scores", h), guided.i, guided.j), v = at(slice(R, "scaled_scores", h), guided.i, guided.j);
    const left = lhs(N, N.scaled, h, R.ql[guided.i], R.kl[guided.j], true), raw = code(N.raw || "QKᵀ");
    if (R.body.scale !== undefined)
      return [p("guided.scale.given", { lhs: left, raw, a: factor(a, R.dtype, "a"), scale: num(R.scale, "float64", "scale"),
        rel: rel(shown(a) * shown(R.scale), v), value: num(v, R.dtype, "result") })];
    return [p("guided.scale.root", { lhs: left, raw, dk: code(N.dk), a: num(a, R.dtype, "a"), n: R.dk,
      rel: rel(shown(a) / Math.sqrt(R.dk), v), value: num(v, R.dtype, "result") })];
  },
  mask(R, N) {
    const h = ui.selectedHead, a = at(slice(R, "scaled_scores", h), guided.i, guided.j), v = at(slice(R, "masked_scores", h), guided.i, guided.j);
    const left = lhs(N, "masked_scores", h, R.ql[guided.i], R.kl[guided.j], true), scaled = code(N.scaled);
    if (v === -Infinity) return [p("guided.mask.hidden", { lhs: left, why: maskWhy(R, guided.i, guided.j) })];
    if (v === a) return [p("guided.mask.open", { lhs: left, scaled, value: num(v, R.dtype, "result") })];
    return [p("guided.mask.added", { lhs: left, scaled, a: num(a, R.dtype, "a"), b: factor(v - a, "float64", "b"),
      rel: rel(shown(a) + shown(v - a), v), value: num(v, R.dtype, "result") })];
  },
  softmax(R, N) {
    const h = ui.selectedHead, M = slice(R, masking(R) ? "masked_scores" : "scaled_scores", h), i = guided.i, j = guided.j;
    const row = range(M.cols).map((t) => at(M, i, t)), live = row.filter((s) => s !== -Infinity);
    const s = masking(R) ? "masked_scores" : N.scaled, left = lhs(N, N.weights, h, R.ql[i], R.kl[j], true);
    const notes = [masking(R) ? null : p("guided.softmax.noMask", { s }, { class: "note" }),
      p(N.stable ? "guided.softmax.maxStable" : "guided.softmax.maxPlain", {}, { class: "note" })];
    if (predicting()) return [p(N.stable ? "guided.softmax.stableHidden" : "guided.softmax.plainHidden", { lhs: left, s }),
      p("guided.predict.hidden", {}, { class: "note" }), ...notes];
    if (!live.length) return [p("guided.softmax.empty", { query: R.ql[i] })];
    const max = N.stable ? Math.max(...live) : 0, e = row.map((x) => (x === -Infinity ? 0 : Math.exp(x - max)));
    const sum = e.reduce((a, b) => a + b, 0), w = at(slice(R, "weights", h), i, j);
    const exp = N.stable ? Math.exp(shown(row[j]) - shown(max)) : Math.exp(shown(row[j]));
    return [p(N.stable ? "guided.softmax.stable" : "guided.softmax.plain", { lhs: left, s,
      a: num(row[j], R.dtype, "a"), max: factor(max, R.dtype, "max"),
      sum: num(sum, "float64", "sum"), rel1: rel(exp, e[j]), e: num(e[j], "float64", "e"), sum2: num(sum, "float64", "sum"),
      rel2: rel(shown(e[j]) / shown(sum), w), value: num(w, R.dtype, "result") }),
      p("guided.softmax.sumOne", {}, { class: "note" }), ...notes];
  },
  mix(R, N) {
    const h = ui.selectedHead, W = slice(R, "weights", h), V = slice(R, R.T.v_cache ? "v_cache" : "v", h);
    const c = guided.c % V.cols, v = at(slice(R, "head_outputs", h), guided.i, c);
    const d = dotTerms(range(W.cols).map((t) => at(W, guided.i, t)), range(V.rows).map((t) => at(V, t, c)), R.dtype, v);
    const ix = (n) => `${n}${N.perHead ? `[${h}]` : ""}`;
    return [p("guided.mix.line", { lhs: lhs(N, N.head, h, R.ql[guided.i], c, false), w: code(`${ix(N.weights)}[${guided.i}]`), c,
      v: code(ix(N.v)), terms: d.terms, rel: d.rel, value: num(v, R.dtype, "result") }),
      R.H === 1 && !hasWo(R) ? p("guided.mix.isOutput", { name: code(N.head) }, { class: "note" }) : null];
  },
  concat(R, N) {
    const h = ui.selectedHead, c = guided.c % R.dv, col = h * R.dv + c, C = slice(R, "concat", 0), name = N.concat || "concat";
    return [p("guided.concat.line", { lhs: lhs(N, name, null, R.ql[guided.i], col, false),
      src: lhs({ ...N, perHead: true }, N.heads || N.head, h, guided.i, c, false), head: h, first: h * R.dv, last: h * R.dv + R.dv - 1,
      value: num(at(C, guided.i, col), R.dtype, "result") }),
      hasWo(R) ? null : p(N.wo === false ? "guided.concat.final" : "guided.concat.noWo", { name: code(name) }, { class: "note" })];
  },
  wo(R, N) {
    const C = slice(R, "concat", 0), O = slice(R, "output", 0), o = guided.o % O.cols, v = at(O, guided.i, o), b = R.body;
    const W = b.w_o && !b.out_proj_weight ? weightColumn(b, "w_o", 0, o, 0) : null;
    const src = code(`${R.H > 1 ? N.concat || "concat" : N.head}[${guided.i}]`), left = lhs(N, "output", null, R.ql[guided.i], o, false);
    if (!W) return [p("guided.wo.opaque", { lhs: left, src, o, value: num(v, R.dtype, "result") })];
    const d = dotTerms(range(C.cols).map((t) => at(C, guided.i, t)), W, R.dtype, v);
    return [p(b.layout === "torch" ? "guided.wo.row" : "guided.wo.column", { lhs: left, src, o,
      terms: el("span", {}, d.terms, b.b_o ? " + b_o" : ""), rel: b.b_o ? "=" : d.rel, value: num(v, R.dtype, "result") })];
  },
};

// The exercise: a guess per key of the chosen query's row, then the
// difference per entry (guess − weight).
function exercise(R) {
  const h = ui.selectedHead, W = slice(R, "weights", h), i = guided.i;
  if (W.cols > PREDICT_MAX_KEYS) return p("guided.predict.tooMany", { max: PREDICT_MAX_KEYS, count: W.cols }, { class: "note" });
  if (!guided.guesses || guided.guesses.length !== W.cols) guided.guesses = new Array(W.cols).fill("");
  const rows = range(W.cols).map((j) => {
    const g = guided.guesses[j], w = at(W, i, j), gv = Number(g);
    return el("tr", {}, el("th", { scope: "row" }, R.kl[j]),
      el("td", {}, el("input", { type: "text", inputmode: "decimal", value: g, size: 6,
        "aria-label": t("guided.predict.guessLabel", { query: R.ql[i], key: R.kl[j] }),
        dataset: { key: j }, oninput: (ev) => { guided.guesses[j] = ev.target.value; } })),
      guided.revealed ? el("td", {}, num(w, R.dtype, "weight")) : null,
      guided.revealed ? el("td", { class: "diff" }, g.trim() === "" || !Number.isFinite(gv) ? "—" : num(gv - w, "float64", "diff")) : null);
  });
  const th = (id) => el("th", { scope: "col" }, ...nodes(id));
  return el("div", { class: "predict" },
    p("guided.predict.hint", { query: R.ql[i] }, { class: "hint" }),
    el("table", { class: "predict-table" }, el("thead", {}, el("tr", {}, th("guided.predict.key"), th("guided.predict.guess"),
      guided.revealed ? th("guided.predict.weight") : null, guided.revealed ? th("guided.predict.diff") : null)),
    el("tbody", {}, rows)),
    el("button", { type: "button", class: "small", id: "guided-reveal", onclick: () => { guided.revealed = !guided.revealed; show(R, "guided-reveal"); } },
      ...nodes(guided.revealed ? "guided.predict.hide" : "guided.predict.reveal")));
}

// Which cards the step reveals: those of this step and the steps before it;
// a card of a step these inputs leave out stays hidden (it repeats the one
// before it).  While predicting, every source of the weights is hidden.
function reveal() {
  const area = $("stage-area"), on = guided.on, hide = predicting();
  for (const card of area.querySelectorAll(".card[data-stage]")) {
    const k = STAGE_KIND[card.dataset.stage], at = steps.indexOf(k);
    card.hidden = on && k !== undefined && (at < 0 || at > guided.step || (hide && WITHHELD.includes(card.dataset.stage)));
    card.classList.toggle("guided-current", on && at >= 0 && at === guided.step);
  }
  for (const h3 of area.querySelectorAll("h3.step")) {
    const cards = h3.nextElementSibling;
    h3.hidden = on && !!cards && [...cards.children].every((c) => c.hidden);
  }
  for (const sec of area.querySelectorAll("section.group")) {
    const cards = [...sec.querySelectorAll(".card")];
    if (sec.id !== "group-compare" && cards.length) sec.hidden = on && cards.every((c) => c.hidden);
  }
  const heads = $("group-heads");
  if (heads) heads.hidden = on && (guided.step < steps.indexOf("softmax") || hide);
  $("results").classList.toggle("guided-predicting", hide);
}

// The card and cell the guide explains at this step: the outline stays on it.
function chosenCell(R) {
  const h = ui.selectedHead, k = kind(), pair = [guided.i, guided.j];
  const at = { qkv: ["q", [guided.i, guided.c % R.dk]], scores: ["scores", pair], scale: ["scaled_scores", pair],
               mask: ["masked_scores", pair], softmax: [predicting() ? (masking(R) ? "masked_scores" : "scaled_scores") : "weights", pair],
               mix: ["head_outputs", [guided.i, guided.c % R.dv]] }[k];
  const [id, cell] = at ? [`h${h}-${at[0]}`, at[1]] : k === "concat" ? ["all-concat", [guided.i, h * R.dv + (guided.c % R.dv)]] : ["all-output", [guided.i, guided.o]];
  return views[id] ? [views[id], ...cell] : null;
}

// The nodes of a list that are there: replaceChildren would write a null as "null".
const present = (...xs) => xs.flat().filter((x) => x !== null && x !== undefined && x !== false);

// Draws the guide above the current step's cards (focus kept on the button
// that had it); `focusId` names a button to focus after.
let box = null; // the guide's node, moved to the step it explains
export function show(R, focusId) {
  box = box || $("guided");
  const had = focusId || (document.activeElement && box.contains(document.activeElement) ? document.activeElement.id : null);
  if (R) steps = stepsFor(R);
  guided.step = Math.min(guided.step, steps.length - 1);
  reveal();
  if (!guided.on || !R) { box.hidden = true; box.replaceChildren(); $("summary-panel").after(box); anchorMarks(null); return; }
  clampCell(R);
  const N = lessonNames(R), k = kind(), last = steps.length - 1, button = (id, msg, attrs) => el("button", { type: "button", id, ...attrs }, ...nodes(msg));
  box.hidden = false;
  box.replaceChildren(...present(
    el("h2", { id: "guided-h" }, ...heading(R, N, k)),
    el("div", { class: "toolbar" },
      button("guided-prev", "guided.prev", { disabled: guided.step === 0, onclick: () => go(-1) }),
      button("guided-next", "guided.next", { class: "primary", disabled: guided.step === last, onclick: () => go(1) }),
      button("guided-exit", "guided.exit", { class: "small", onclick: () => setGuided(false) })),
    N.code[k] ? p("guided.lessonCode", { code: code(N.code[k]) }, { class: "lesson-code" }) : null,
    el("div", { class: "guided-formula", id: "guided-formula", "aria-live": "polite" }, ...present(FORMULAS[k](R, N))),
    p(R.H > 1 ? "guided.chosenHead" : "guided.chosen", { query: R.ql[guided.i], key: R.kl[guided.j], column: guided.c % R.dk, head: ui.selectedHead }, { class: "note", id: "guided-chosen" }),
    k === "softmax" ? el("label", { class: "check" }, el("input", { type: "checkbox", id: "guided-predict", checked: guided.predict,
      onchange: (ev) => { guided.predict = ev.target.checked; guided.revealed = false; show(R, "guided-predict"); } }), ...nodes("guided.predict.toggle")) : null,
    k === "softmax" && guided.predict ? exercise(R) : null));
  const first = $("stage-area").querySelector(".card.guided-current:not([hidden])") || $("stage-area").querySelector(".card.guided-current");
  const anchor = first ? first.parentNode : null;
  if (anchor && anchor.parentNode && box.nextSibling !== anchor) anchor.parentNode.insertBefore(box, anchor);
  anchorMarks(() => chosenCell(R));
  const cell = chosenCell(R);
  if (cell) markLinks(...cell); else clearMarks();
  refreshExplain();
  const again = had && $(had);
  if (again && !again.disabled) again.focus({ preventScroll: true });
  else if (had) ($("guided-next").disabled ? $("guided-prev") : $("guided-next")).focus({ preventScroll: true });
}

// "Step n of N: title" of step k, its formula in the lesson's names.
function heading(R, N, k) {
  const what = { qkv: "Q, K, V", scores: N.raw ? `${N.raw} = QKᵀ` : "QKᵀ",
                 scale: `${N.scaled} = ${N.raw || "QKᵀ"} ${R.body.scale === undefined ? `÷ √${N.dk}` : "× scale"}`,
                 mask: "masked_scores", softmax: `${N.weights} = softmax(${masking(R) ? "masked_scores" : N.scaled})`,
                 mix: `${N.head} = ${N.weights} · ${N.v}`, concat: N.concat || "concat", wo: `output = ${R.H > 1 ? N.concat || "concat" : N.head} · W_o` }[k];
  const title = k === "scale" && R.body.scale !== undefined ? "guided.step.scaleGiven" : `guided.step.${k}`;
  return nodes("guided.heading", { n: steps.indexOf(k) + 1, count: steps.length, title: nodes(title, { what: code(what) }) });
}

// Step `step` of the guide of R for the chosen cell (`cell`: {i, j, c, o})
// of head `head`, drawn elsewhere than the page (embed-guided.js, a course
// page's <attention-guided>): its kind, the steps there are, its heading,
// the lesson's line and the formula, as nodes.  The page's guide is left as it was.
export function stepNodes(R, step, cell, head) {
  const keep = { ...guided }, keepSteps = steps, keepHead = ui.selectedHead;
  steps = stepsFor(R);
  Object.assign(guided, { on: false, predict: false, step: Math.max(0, Math.min(steps.length - 1, step)), ...cell });
  ui.selectedHead = head;
  try {
    clampCell(R);
    const N = lessonNames(R), k = kind();
    return { kind: k, step: guided.step, steps: steps.slice(), cell: { i: guided.i, j: guided.j, c: guided.c, o: guided.o },
             heading: heading(R, N, k), code: N.code[k] ? p("guided.lessonCode", { code: code(N.code[k]) }, { class: "lesson-code" }) : null,
             formula: present(FORMULAS[k](R, N)) };
  } finally { Object.assign(guided, keep); steps = keepSteps; ui.selectedHead = keepHead; }
}

function clampCell(R) {
  guided.i = Math.min(guided.i, R.n - 1); guided.j = Math.min(guided.j, R.m - 1);
  guided.c = Math.min(guided.c, Math.max(R.dk, R.dv) - 1); guided.o = Math.min(guided.o, R.T.output.shape.at(-1) - 1);
}

// The guide moves to the step it explains; the page scrolls by as much, so
// that its buttons stay under the pointer (and no other cell comes under it).
function go(d) {
  const id = d > 0 ? "guided-next" : "guided-prev", before = $(id).getBoundingClientRect().top;
  guided.step = Math.max(0, Math.min(steps.length - 1, guided.step + d));
  show(lastGood, id);
  scrollBy({ top: $(id).getBoundingClientRect().top - before, behavior: "instant" });
}

// On: from the first step, one colour scale for every card (the legends say
// so), and the guide scrolled into view.
export function setGuided(on) {
  Object.assign(guided, { on, step: 0, revealed: false, guesses: null });
  $("guided-toggle").setAttribute("aria-pressed", String(on));
  if (on) $("one-scale").checked = true;
  if (lastGood) renderResult(lastGood); else show(null);
  if (on && lastGood) $("guided").scrollIntoView({ block: "start", behavior: "instant" });
  if (!on) { clearMarks(); $("guided-toggle").focus(); }
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
  // an explanation that would show the weights being guessed waits for Reveal
  withhold((stage) => predicting() && WITHHELD.includes(stage));
  onLangChange(() => { if (guided.on && lastGood) show(lastGood); });
}
