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
export function ownName(key, stage, h) {
  const own = key && LESSON_NAMES[key] ? LESSON_NAMES[key][stage] : null;
  return own ? own.replace("[h]", `[${h}]`) : null;
}

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
export function lessonLine(key, stage, h) {
  if (!key || !LESSON_NAMES[key] || !(stage in LESSON_NAMES[key])) return null;
  const code = (s) => el("code", {}, s.replace("[h]", `[${h}]`)), own = LESSON_NAMES[key][stage];
  return el("span", { class: "lesson-name" }, ...(own !== null ? nodes("views.lesson.name", { lesson: key, name: code(own) })
    : nodes("views.lesson.unnamed_scores", { lesson: key, name: code(LESSON_NAMES[key].scaled_scores) })));
}
