/*
 * cards.js - what the views share of the cards on show: the registry of
 * matrix views by id (views.js fills it anew at each render; the compare
 * panel adds its own), the groups the cards sit in, whether and why a
 * result's keys can be hidden (the names the cards carry: lesson-names.js).
 */
import { ui } from "./state.js";
import { el } from "./base.js";
import { maskForm } from "./form.js";
import { t } from "./words.js";
import { mayMask } from "./lesson-names.js";

export let views = {};
export const resetViews = () => { views = {}; };

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

export function group(id, title, extra) {
  const cards = el("div", { class: "cards" });
  const sec = el("section", { class: "panel group", id, "aria-labelledby": `${id}-h` },
    el("h2", { id: `${id}-h` }, title, extra || null));
  return { sec, cards, add(...nodes) { sec.append(...nodes); return this; } };
}
