/*
 * embed-guided.js - <attention-guided>: the page's guided mode (guided.js:
 * the steps of a lesson in the order it computes them, each with the
 * lesson's line of code and its formula written out in the numbers of one
 * chosen cell) for a course page:
 *
 *   <script type="module" src="SERVICE/web/embed-guided.js"></script>
 *   <attention-guided lesson="000" lang="es" step="0"></attention-guided>
 *
 * It is an <attention-lesson> (embed.js: the same attributes, properties,
 * events and look) that shows one step at a time: "Previous step" and "Next
 * step" move through them (or the `step` attribute, from 0), the step's
 * matrix below its formula; a click (or Enter) on a cell chooses the cell
 * the formula is written for.  It fires attention-step ({step, count, kind,
 * stage, head}) when the step changes.  Its own module, as the guide brings
 * the page's modules with it.
 */
import { AttentionLesson, fire, inLang, langOf, nestedOf } from "./embed.js";
import { makeResult } from "./reply.js";
import { stepNodes } from "./guided.js";
import { ui } from "./state.js";
import { el } from "./base.js";
import { nodes } from "./words.js";

// The matrix each step shows (the card the page's guide outlines).
export const STEP_STAGE = { qkv: "q", scores: "scores", scale: "scaled_scores", mask: "masked_scores", softmax: "weights",
                            mix: "head_outputs", concat: "concat", wo: "output" };

export class AttentionGuided extends AttentionLesson {
  static observedAttributes = [...AttentionLesson.observedAttributes, "step"];
  constructor() { super(); this.cell = { i: 0, j: 0, c: 0, o: 0 }; this.kind = "qkv"; }
  get stage() { return STEP_STAGE[this.kind]; }
  set stage(s) { /* the step says which stage is on show */ }
  get step() { return Math.max(0, Math.floor(Number(this.getAttribute("step")) || 0)); }
  set step(n) { this.setAttribute("step", String(n)); }
  attributeChangedCallback(name, was, now) {
    if (name === "step") { if (this.isConnected && was !== now) this.draw(); return; }
    super.attributeChangedCallback(name, was, now);
  }

  // The guide above the step's matrix, made with the frame.
  frameFor(code) {
    const f = super.frameFor(code);
    if (!f.guide) { f.guide = el("div", { class: "embed-guide guided" }); f.card.before(f.guide); }
    return f;
  }

  // R as the page makes it: the lesson's names while X is the lesson's.
  resultOf() {
    const p = this.preset, x = nestedOf(this.x), { title: _t, return: _r, ...own } = this.own || {};
    const body = this.own ? { ...own, x } : { x, w_q: p.w_q, w_k: p.w_k, w_v: p.w_v, num_heads: p.num_heads, tokens: p.tokens };
    return { R: makeResult(body, { ...this.result, ...this.result.stages }), lesson: this.lessonKey() };
  }

  draw() {
    if (!this.result) return;
    const code = langOf(this), { R, lesson } = this.resultOf();
    const head = Math.min(R.H - 1, Math.max(0, Number(this.getAttribute("head")) || 0));
    const keepKey = ui.presetKey;
    ui.presetKey = lesson; // the names of the lesson on show (lesson-names.js lessonOf)
    let s;
    try { s = inLang(code, () => stepNodes(R, this.step, this.cell, head)); } finally { ui.presetKey = keepKey; }
    const moved = this.shownStep !== undefined && s.step !== this.shownStep; // the learner moved (not the first drawing)
    Object.assign(this, { kind: s.kind, cell: s.cell, shownStep: s.step });
    super.draw();
    inLang(code, () => {
      const button = (id, d, extra) => el("button", { type: "button", class: `guided-${id}`, ...extra,
        onclick: () => { this.focusAfter = id; this.step = s.step + d; } }, ...nodes(`guided.${id}`));
      this.frame.guide.replaceChildren(el("p", { class: "guided-heading" }, ...s.heading),
        el("div", { class: "toolbar" }, button("prev", -1, { disabled: s.step === 0 }),
          button("next", 1, { class: `guided-next primary`, disabled: s.step === s.steps.length - 1 })),
        ...(s.code ? [s.code] : []), el("div", { class: "guided-formula", "aria-live": "polite" }, ...s.formula));
    });
    const again = this.focusAfter && this.frame.guide.querySelector(`.guided-${this.focusAfter}`);
    if (again) (again.disabled ? this.frame.guide.querySelector("button:not([disabled])") : again).focus();
    this.focusAfter = null;
    if (moved) fire(this, "attention-step", { step: s.step, count: s.steps.length, kind: s.kind, stage: this.stage, head });
  }

  // A cell chosen: the query, key or column the formula is written for (as the page's guide chooses).
  point(code, view, i, j, how) {
    super.point(code, view, i, j, how);
    if (how !== "activate" || i === null) return;
    const st = this.stage, c = this.cell;
    if (["scores", "scaled_scores", "masked_scores", "weights"].includes(st)) Object.assign(c, { i, j });
    else if (st === "q" || st === "head_outputs" || st === "concat") Object.assign(c, { i, c: j });
    else if (st === "output") Object.assign(c, { i, o: j });
    const focused = view.root.contains(this.shadowRoot.activeElement); // chosen by the keyboard (Enter)
    this.draw();
    // the matrix is drawn anew: the chosen cell keeps the cursor, the focus and its caption
    this.view.moveTo(i, j, focused);
    super.point(code, this.view, i, j, "focus");
  }
}

if (!customElements.get("attention-guided")) customElements.define("attention-guided", AttentionGuided);
