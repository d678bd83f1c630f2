/*
 * presentation.js - the presentation view: what a teacher projects.  One
 * stage at a time (the input, the split into heads, every head's weights,
 * each step of the open head, all heads together) at the full width of the
 * screen, enlarged to fill it, the form and its editors out of sight, the
 * arrow keys (or PageUp/PageDown, or the buttons) moving from stage to stage,
 * Escape leaving.  With the guided mode on, its text stands beside the stage
 * and the arrow keys take its steps.  The stage is a still copy of the page's
 * (canvases copied too): pointing and the explanations stay on the page.
 */
import { $, el } from "./base.js";
import { guided, stepCount } from "./guided.js";
import { afterRenderHooks } from "./hooks.js";
import { t } from "./words.js";

export const PRESENT_MAX_ZOOM = 3; // larger still blurs nothing, but a 3×3 matrix at 4× is a wall of colour
export const PRESENT_MIN_ZOOM = 1;

let on = false, index = 0, overlay = null;

// The page's stages, in the order they are computed: [{node, title, group}]
// (group: the section's heading alone, a head's or "All heads together").
export function stages() {
  const out = [];
  const area = $("stage-area");
  for (const sec of area.querySelectorAll(":scope > section")) {
    if (sec.hidden) continue;
    const head = sec.querySelector(":scope > h2");
    const steps = sec.querySelectorAll(":scope > h3.step");
    const group = head ? head.firstChild.textContent : "";
    if (!steps.length) { out.push({ node: sec, title: group, group }); continue; }
    for (const h3 of steps) {
      let cards = h3.nextElementSibling; // the guide may stand between a step's heading and its cards
      while (cards && !cards.classList.contains("cards")) cards = cards.nextElementSibling;
      if (h3.hidden || !cards || [...cards.children].every((c) => c.hidden)) continue;
      out.push({ node: cards, title: t("present.stage_title", { group, step: h3.textContent }), group });
    }
  }
  return out;
}

// A still copy of a node: its canvases' pixels copied, nothing focusable.
function still(node) {
  const copy = node.cloneNode(true);
  copy.querySelectorAll("#guided").forEach((g) => g.remove()); // the guide stands beside the stage, not in it
  const from = node.querySelectorAll("canvas"), to = copy.querySelectorAll("canvas");
  from.forEach((c, k) => { if (c.width && c.height) to[k].getContext("2d").drawImage(c, 0, 0); });
  copy.removeAttribute("id");
  copy.querySelectorAll("[id]").forEach((n) => n.removeAttribute("id"));
  copy.inert = true;
  return copy;
}

// The stage on show: with the guided mode, the one its current step reveals.
function current(list) {
  if (guided.on) {
    const card = $("stage-area").querySelector(".card.guided-current:not([hidden])");
    const k = card ? list.findIndex((s) => s.node.contains(card)) : -1;
    if (k >= 0) return k;
  }
  return Math.max(0, Math.min(list.length - 1, index));
}

// The bar's words: the slide's title and which slide it is of how many; with
// the guide beside, only the section's name and the guide's step (its own
// counter, in its words: the arrow keys take its steps), so that the bar
// counts nothing the guide's "Step n of N" does not.
function bar(list, s, beside) {
  overlay.querySelector(".present-title").textContent = s ? (beside ? s.group : s.title) : "";
  overlay.querySelector(".present-count").textContent = beside ? t("present.count.guide", stepCount())
    : list.length ? t("present.count", { stage: index + 1, stages: list.length }) : "";
  const hint = overlay.querySelector(".present-hint");
  hint.dataset.i18n = beside ? "present.hint.guide" : "present.hint";
  hint.textContent = t(hint.dataset.i18n);
}

function draw() {
  if (!on) return;
  const list = stages();
  index = current(list);
  const s = list[index], stage = overlay.querySelector(".present-stage"), aside = overlay.querySelector(".present-guide");
  const guide = $("guided");
  const beside = guided.on && guide && !guide.hidden;
  bar(list, s, beside);
  overlay.classList.toggle("with-guide", beside);
  const text = beside ? still(guide) : null;
  if (text) text.querySelectorAll(".toolbar").forEach((b) => b.remove()); // its steps are the arrow keys here
  aside.replaceChildren(...(text ? [text] : []));
  aside.hidden = !beside;
  const body = s ? still(s.node) : el("p", {}, t("present.empty"));
  body.hidden = false;
  body.classList.add("present-body");
  stage.replaceChildren(body);
  // as large as the stage's box takes, up to PRESENT_MAX_ZOOM; a stage wider
  // than the screen at 1× wraps its cards instead
  body.style.zoom = "1";
  const W = stage.clientWidth - 8, H = stage.clientHeight - 8;
  if (body.scrollWidth > W) body.style.width = "auto";
  const w = body.scrollWidth, h = body.scrollHeight;
  const zoom = Math.max(PRESENT_MIN_ZOOM, Math.min(PRESENT_MAX_ZOOM, W / Math.max(1, w), H / Math.max(1, h)));
  body.style.zoom = String(Math.floor(zoom * 100) / 100);
  overlay.querySelector(".present-prev").disabled = guided.on ? !!($("guided-prev") || {}).disabled : index === 0;
  overlay.querySelector(".present-next").disabled = guided.on ? !!($("guided-next") || {}).disabled : index >= list.length - 1;
}

// One stage on (d = 1) or back (d = −1): the guided mode's step when it is on.
export function move(d) {
  if (guided.on) {
    const b = $(d > 0 ? "guided-next" : "guided-prev");
    if (b && !b.disabled) b.click();
  } else index += d;
  draw();
  overlay.querySelector(d > 0 ? ".present-next" : ".present-prev").focus();
}

export function setPresenting(want) {
  on = want;
  $("present-toggle").setAttribute("aria-pressed", String(on));
  for (const n of document.body.children) if (n !== overlay) n.inert = on;
  overlay.hidden = !on;
  document.documentElement.classList.toggle("presenting", on);
  index = 0; // from the first stage (the guided mode's: its own step)
  if (on) { draw(); overlay.querySelector(".present-next").focus(); } else $("present-toggle").focus();
}

function keys(ev) {
  if (!on) return;
  const d = { ArrowRight: 1, ArrowDown: 1, PageDown: 1, " ": 1, ArrowLeft: -1, ArrowUp: -1, PageUp: -1 }[ev.key];
  if (ev.key === "Escape") { ev.preventDefault(); setPresenting(false); } else if (d) { ev.preventDefault(); move(d); }
}

export function init() {
  overlay = el("div", { id: "presentation", class: "presentation", role: "dialog", "aria-modal": "true",
                        "aria-labelledby": "present-title", hidden: true },
    el("div", { class: "present-bar" },
      el("h2", { class: "present-title", id: "present-title" }),
      el("span", { class: "present-count", "aria-live": "polite" }),
      el("button", { type: "button", class: "present-prev", dataset: { i18n: "present.prev" }, onclick: () => move(-1) }, t("present.prev")),
      el("button", { type: "button", class: "present-next primary", dataset: { i18n: "present.next" }, onclick: () => move(1) },
        t("present.next")),
      el("button", { type: "button", class: "present-exit small", dataset: { i18n: "present.exit" },
                      onclick: () => setPresenting(false) }, t("present.exit"))),
    el("div", { class: "present-main" }, el("div", { class: "present-stage" }),
      // a region that scrolls takes the focus, so a keyboard can scroll it too
      el("section", { class: "present-guide", hidden: true, tabindex: "0", "aria-label": t("present.guide"),
                    dataset: { i18nAriaLabel: "present.guide" } })),
    el("p", { class: "present-hint", dataset: { i18n: "present.hint" } }, t("present.hint")));
  document.body.append(overlay);
  $("guided-toggle").after(el("button", { type: "button", id: "present-toggle", "aria-pressed": "false",
    dataset: { i18n: "present.button" }, onclick: () => setPresenting(!on) }, t("present.button")));
  // the main controls first: a second skip link, to the guided mode and the presentation
  const skip = document.querySelector("a.skip");
  if (skip) skip.after(el("a", { class: "skip", href: "#guided-toggle", dataset: { i18n: "present.skip" }, onclick: (ev) => { ev.preventDefault(); $("guided-toggle").focus(); } },
    t("present.skip")));
  document.addEventListener("keydown", keys);
  afterRenderHooks.push(() => draw());
  window.addEventListener("resize", () => draw());
}
