/*
 * cards.js - what the views share of the cards on show: the registry of
 * matrix views by id (views.js fills it anew at each render; the compare
 * panel adds its own), the groups the cards sit in, whether and why a
 * result's keys can be hidden, and the lesson whose names the cards carry.
 */
import { ui } from "./state.js";
import { el } from "./base.js";
import { maskForm } from "./form.js";
import { t } from "./words.js";

export let views = {};
export const resetViews = () => { views = {}; };

// Whether any key can be hidden (only then are the masked scores read for −∞).
export const mayMask = (R) => !!(R.res.causal || R.body.mask || R.body.key_padding || R.body.window);

// Whose mask a stage uses: this head's, this sequence's, or every one's.
export function maskScope(R) {
  const f = maskForm(R.body.mask, !!R.B), seq = ui.selectedSeq, head = ui.selectedHead;
  if (f.perSeq && f.perHead) return t("views.mask.of_seq_head", { seq, head });
  if (f.perSeq) return t("views.mask.of_seq", { seq });
  if (f.perHead) return t("views.mask.of_head", { head });
  return null;
}

export function maskReasons(R) {
  const r = [];
  if (R.res.causal) r.push(t("views.mask.reason.causal"));
  if (R.body.window) r.push(t("views.mask.reason.window", { window: R.body.window }));
  if (R.body.mask && maskForm(R.body.mask, !!R.B).kind === "bool") {
    const scope = maskScope(R);
    r.push(scope ? t("views.mask.reason.unticked_of", { scope }) : t("views.mask.reason.unticked"));
  }
  if (R.body.key_padding) r.push(t("views.mask.reason.padded"));
  return r;
}

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
// The lesson whose names the cards carry: the one the inputs are (its X,
// weights and heads; lessons.js clears ui.presetKey at an edit), while the
// request still computes what that lesson computes (its heads, no mask,
// no scale of one's own, no position encoding, no W_o).
export function lessonOf(R) {
  const key = ui.presetKey, b = R.body; // null once a number of the lesson's is edited
  if (!key || !LESSON_NAMES[key] || mayMask(R) || b.scale !== undefined || b.rope || b.positional_encoding
      || b.w_o || b.out_proj_weight || b.q || R.B || R.m0 || R.slopes || R.Hkv !== R.H) return null;
  return key;
}

// The name a cell's label (`weights[t1 → t2] = …`, the explanation's
// heading, a readout) gives stage `stage` of head h: the lesson's own
// variable while the inputs are a lesson's, else the stage's word in the
// page's language; `fallback` for a stage with no word (q_rope, k_cache, …).
export const STAGE_WORDS = ["x", "q", "k", "v", "scores", "scaled_scores", "masked_scores", "weights", "head_outputs", "concat", "output"];
export function stageName(R, stage, h, fallback = stage) {
  const key = lessonOf(R), own = key && LESSON_NAMES[key][stage];
  if (own) return own.replace("[h]", `[${h}]`);
  return STAGE_WORDS.includes(stage) ? t(`views.stage.${stage}`) : fallback;
}

export function group(id, title, extra) {
  const cards = el("div", { class: "cards" });
  const sec = el("section", { class: "panel group", id, "aria-labelledby": `${id}-h` },
    el("h2", { id: `${id}-h` }, title, extra || null));
  return { sec, cards, add(...nodes) { sec.append(...nodes); return this; } };
}
