/*
 * embed-frame.js - GET /embed: one stage of a lesson in a frame, for a
 * platform that only allows iframes (docs/embed.md).
 *
 *   /embed?lesson=001&stage=weights&lang=it[&head=0][&editable]
 *   /embed?random=5x6&heads=3&seed=42&stage=scores   (a short link's source)
 *   /embed?lesson=001&lang=it#s=…   (a share link's state: its source's
 *                                    inputs with the link's changes, its head)
 *
 * It tells its parent its height each time it changes, and what the learner
 * does; the parent may set the inputs or go to another step:
 *   frame → parent  {type: "attention:height", height}   (CSS pixels)
 *                   {type: "attention:render", stage, head, shape, data}
 *                   {type: "attention:change", row, col, value, x}
 *                   {type: "attention:error", status, code, pointer, message}
 *   parent → frame  {type: "attention:set-inputs", x}    (nested arrays)
 *                   {type: "attention:go", stage}  or  {type: "attention:go", step}  (an index of STEPS)
 * Messages to the parent go to any origin (they hold the lesson's numbers,
 * nothing private); those from elsewhere than the parent are ignored.
 */
import { LANGS } from "./locale.js";
import { AttentionLesson, STEPS, inLang, stageTitle } from "./embed.js";
import { msg, t, useLang } from "./words.js";
import { randomBody, randomFromQuery, randomTitle } from "./random-inputs.js";
import { PRESETS } from "./presets.js";
import { bodyPatched, sourceBody, unpackState } from "./link-state.js";
import { nameIn } from "./lesson-names.js";

export const MESSAGE_PREFIX = "attention:";

// A share link's state (#s=…, as the page writes it) put on the element: the
// source's body with the link's changes, and its open head.  A lesson whose
// link changed only X stays the lesson (its title, its editable X); any other
// change makes the body the element's request.  A fragment that is no state
// is left aside (the source alone is shown).
export async function openLink(node, source, packed) {
  let s;
  try { s = await unpackState(packed); } catch { return false; }
  const b = (s && s.b) || {}, body = bodyPatched(sourceBody(source), b);
  if (!Array.isArray(body.x) || !Array.isArray(body.x[0]) || Array.isArray(body.x[0][0])) return false; // one sequence's X
  if (Number.isInteger(s.h)) node.setAttribute("head", String(s.h));
  if (source && source.lesson && Object.keys(b).every((k) => k === "x")) node.inputs = { x: body.x };
  else {
    const title = !source ? msg("links.restored")
      : msg("links.restored.from", { source: source.lesson ? msg(`lessons.${source.lesson}.name`) : randomTitle(source.random) });
    node.request = { ...body, title };
  }
  return true;
}

export function start(search = location.search, hash = location.hash) {
  const q = new URLSearchParams(search), code = LANGS.includes(q.get("lang")) ? q.get("lang") : "en";
  useLang(code); // its words load while the lesson computes (the element awaits them before it draws)
  const node = new AttentionLesson();
  node.setAttribute("lang", code);
  for (const a of ["lesson", "stage", "head"]) if (q.get(a)) node.setAttribute(a, q.get(a));
  if (q.has("editable")) node.setAttribute("editable", "");
  const random = randomFromQuery(q), source = random ? { random } : q.get("lesson") in PRESETS ? { lesson: q.get("lesson") } : null;
  if (random) node.request = { ...randomBody(random), title: randomTitle(random) };
  const link = (h) => /^#s=([\w-]+)$/.exec(h);
  window.addEventListener("hashchange", () => { if (link(location.hash)) openLink(node, source, link(location.hash)[1]); });
  const tell = (type, detail) => { if (window.parent !== window) window.parent.postMessage({ ...detail, type: MESSAGE_PREFIX + type }, "*"); };
  for (const e of ["render", "change", "error"]) node.addEventListener(`attention-${e}`, (ev) => tell(e, ev.detail));
  node.addEventListener("attention-render", (ev) => {
    document.title = inLang(code, () => t("embed.frame.title", { stage: stageTitle(ev.detail.stage, nameIn(node.lessonKey(), "x", 0)) }));
  });
  let last = -1;
  new ResizeObserver(() => {
    const height = Math.ceil(document.documentElement.getBoundingClientRect().height);
    if (height !== last) { last = height; tell("height", { height }); }
  }).observe(document.documentElement);
  window.addEventListener("message", (ev) => {
    if (ev.source !== window.parent || !ev.data || typeof ev.data.type !== "string") return;
    const m = ev.data;
    if (m.type === MESSAGE_PREFIX + "set-inputs" && Array.isArray(m.x)) node.inputs = { x: m.x };
    if (m.type === MESSAGE_PREFIX + "go") {
      const stage = typeof m.step === "number" ? STEPS[m.step] : m.stage;
      if (STEPS.includes(stage)) node.stage = stage;
    }
  });
  // the element is drawn once the link's state is on it (no first request for the source alone)
  const put = () => { document.getElementById("embed").append(node); return node; };
  return link(hash) ? openLink(node, source, link(hash)[1]).then(put) : put();
}

start();
