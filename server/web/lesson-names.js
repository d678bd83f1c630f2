/*
 * lesson-names.js - the name a stage goes by where a student reads it (a
 * cell's label `attention_weights[t1 → t2] = …`, a card's title, a
 * readout): the lesson's own NumPy variable while the inputs are a
 * lesson's, else the stage's word in the reader's language.  The page
 * (views.js, compare.js, guided.js) and the course page's elements
 * (embed.js and the elements built on it) name stages through it alone, so
 * that both say the same; it sits just above the ground, as small as the
 * embed's byte budget wants it.
 */
import { ui } from "./state.js";
import { el } from "./base.js";
import { nodes, t } from "./words.js";

// Whether any key can be hidden (only then are the masked scores read for −∞).
export const mayMask = (R) => !!(R.res.causal || R.body.mask || R.body.key_padding || R.body.window);

// Each lesson's own NumPy names (seeds: 000 Spanish, 001 Italian, 002
// Turkish), never translated, declared here alone: the cards, the guide,
// the explanations and the course page's elements all read them from here.
//   stages  its name for each stage the page shows ("[h]": the open head,
//           written when the lesson's arrays carry the head as their first
//           index); null: the lesson has no such matrix.  Lessons 000 and
//           002 divide by √d_k in the same line as Q·Kᵀ, so their `scores`
//           / `skor` are the page's scaled scores.
//   heads   its list of every head's output, concatenated (000's loop
//           appends to it; 002's Yh holds them already: stages.head_outputs)
//   dk      what it takes the square root of
//   stable  whether its softmax subtracts the row's max (000's does not)
//   wo      false: it applies no W_o at all (002's is optional)
//   code    its own line of code for each step of the guide (guided.js), as
//           the lesson writes it (002: its solution's and its text's lines;
//           tests/lessons/lessons.py holds them all)
export const LESSON_NAMES = {
  "000": {
    stages: { x: "x", q: "Q", k: "K", v: "V", scores: null, scaled_scores: "scores", weights: "attention_weights",
              head_outputs: "head_output", concat: "multi_head_output", output: "multi_head_output" },
    heads: "attention_outputs", dk: "head_dim", stable: false, wo: false,
    code: { qkv: "Q = x @ W_q[head]", scale: "scores = Q @ K.T / np.sqrt(head_dim)",
            softmax: "attention_weights = np.exp(scores) / np.sum(np.exp(scores), axis=-1, keepdims=True)",
            mix: "head_output = attention_weights @ V", concat: "multi_head_output = np.concatenate(attention_outputs, axis=-1)" },
  },
  "001": {
    stages: { x: "X", q: "Q", k: "K", v: "V", scores: "scores", scaled_scores: "scaled_scores", weights: "attention_weights",
              head_outputs: "output", concat: "output", output: "output" },
    heads: null, dk: "d_k", stable: true,
    code: { qkv: "Q = X @ W_q", scores: "scores = Q @ K.T", scale: "scaled_scores = scores / np.sqrt(d_k)",
            softmax: "attention_weights = softmax(scaled_scores)", mix: "output = attention_weights @ V" },
  },
  "002": {
    stages: { x: "X", q: "Qh[h]", k: "Kh[h]", v: "Vh[h]", scores: null, scaled_scores: "skor[h]", weights: "A[h]",
              head_outputs: "Yh[h]", concat: "Y", output: "Y" },
    heads: null, dk: "(d // h)", stable: true,
    code: { qkv: "Qh, Kh, Vh = bol(X @ W_q), bol(X @ W_k), bol(X @ W_v)",
            scale: "skor = Qh @ Kh.transpose(0, 2, 1) / np.sqrt(d // h)",
            softmax: "A = softmax(Qh @ Kh.transpose(0, 2, 1) / np.sqrt(d // h), eksen=-1)",
            mix: "Yh = softmax(skor) @ Vh", concat: "Y = Yh.transpose(1, 0, 2).reshape(n, d)" },
  },
};
// The lesson that gets its heads by reshaping one d × d projection: the
// page's split of Q into heads (any such input's) goes by its names.
export const SPLIT_LESSON = "002";

// The page's lesson whose names the cards carry: the one the inputs are (its
// X, weights and heads; lessons.js clears ui.presetKey at an edit), while
// the request still computes what that lesson computes (its heads, no mask,
// no scale of one's own, no position encoding, no W_o).
export function lessonOf(R) {
  const key = ui.presetKey, b = R.body; // null once a number of the lesson's is edited
  if (!key || !LESSON_NAMES[key] || mayMask(R) || b.scale !== undefined || b.rope || b.positional_encoding
      || b.w_o || b.out_proj_weight || b.q || R.B || R.m0 || R.slopes || R.Hkv !== R.H) return null;
  return key;
}

// Lesson `key`'s own name for stage `stage` of head h, or null (no lesson, or
// the lesson has no such matrix).
// h null: the name of every head's array at once (lesson 002's `Qh`).
export function ownName(key, stage, h) {
  const own = key && LESSON_NAMES[key] ? LESSON_NAMES[key].stages[stage] : null;
  return own ? own.replace("[h]", h === null ? "" : `[${h}]`) : null;
}
// The split of Q into heads (views.js): head h's plane, or (h null) all of them.
export const splitName = (h) => ownName(SPLIT_LESSON, "q", h);

// The name stage `stage` of head h goes by (key: the lesson whose names the
// inputs carry, or null): the lesson's variable, else the stage's word in
// the current language; `fallback` for a stage with no word (q_rope, k_cache, …).
export const STAGE_WORDS = ["x", "q", "k", "v", "scores", "scaled_scores", "masked_scores", "weights", "head_outputs", "concat", "output"];
export function nameIn(key, stage, h, fallback = stage) {
  return ownName(key, stage, h) || (STAGE_WORDS.includes(stage) ? t(`views.stage.${stage}`) : fallback);
}
// The same for the page's result R (lessonOf says the lesson).
export const stageName = (R, stage, h, fallback = stage) => nameIn(lessonOf(R), stage, h, fallback);

// A card title's line naming lesson `key`'s own variable for the stage, or
// saying the lesson has none; null when there is no lesson or the lesson
// does not compute that stage.
// The input's card needs none: its title is the lesson's name.
export function lessonLine(key, stage, h) {
  if (!key || !LESSON_NAMES[key] || stage === "x" || !(stage in LESSON_NAMES[key].stages)) return null;
  const code = (s) => el("code", {}, s), own = ownName(key, stage, h);
  return el("span", { class: "lesson-name" }, ...(own !== null ? nodes("views.lesson.name", { lesson: key, name: code(own) })
    : nodes("views.lesson.unnamed_scores", { lesson: key, name: code(ownName(key, "scaled_scores", h)) })));
}
