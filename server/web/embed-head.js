/*
 * embed-head.js - <attention-head-view>: the page's head view (head-view.js:
 * a line from each query to each key, as thick and as dark as its weight)
 * of one head of a lesson, for a course page:
 *
 *   <script type="module" src="SERVICE/web/embed-head.js"></script>
 *   <attention-head-view lesson="002" head="1" lang="tr" editable></attention-head-view>
 *
 * It is an <attention-lesson> (embed.js: the same attributes, properties,
 * events and look) whose stage is the head view of the weights.  Its own
 * module, as the head view brings the page's view modules with it: a page
 * that shows only a stage loads less.  Its colours run from 0 to 1, the
 * page's default "One colour scale" (the legend says so).
 */
import { AttentionLesson, fire, inLang, langOf, nestedOf, widthOf } from "./embed.js";
import { makeResult } from "./reply.js";
import { headView } from "./head-view.js";
import { t } from "./words.js";
import { PRESETS } from "./presets.js";

export class AttentionHeadView extends AttentionLesson {
  get stage() { return "weights"; }
  set stage(s) { /* the head view shows the weights only */ }

  draw() {
    const res = this.result;
    if (!res) return;
    const code = langOf(this), p = this.preset;
    const body = { x: nestedOf(this.x), w_q: p.w_q, w_k: p.w_k, w_v: p.w_v, num_heads: p.num_heads, tokens: p.tokens };
    const R = makeResult(body, { ...res, ...res.stages });
    const head = Math.min(R.H - 1, Math.max(0, Number(this.getAttribute("head")) || 0));
    const lesson = this.getAttribute("lesson") in PRESETS ? this.getAttribute("lesson") : "001";
    inLang(code, () => {
      const f = this.frameFor(code);
      f.title.replaceChildren(this.own ? (this.own.title ? t(this.own.title) : "") : t(`lessons.${lesson}.title`),
        R.H > 1 ? ` · ${t("embed.head", { head })}` : "");
      f.card.replaceChildren(headView(R, head, widthOf(f.card)));
    });
    this.body.lang = code;
    this.body.removeAttribute("aria-busy");
    const W = res.stages.weights, [n, m] = W.shape.slice(-2);
    fire(this, "attention-render", { stage: "weights", head, shape: [n, m], data: Array.from(W.data.subarray(head * n * m, (head + 1) * n * m)),
                                     ms: res.ms });
  }
}

if (!customElements.get("attention-head-view")) customElements.define("attention-head-view", AttentionHeadView);
