/*
 * short-link.js - the link to this page: it names how the inputs were made
 * (?lesson=002, or ?random=64x32&heads=4&seed=1) and carries in its fragment
 * only what was typed since, compressed; and the preset "Random inputs".
 *
 *   #s=  base64url(deflate-raw(JSON {b, h, q, c, p, o})):
 *        b  the body's difference from the source's (a key's new value, null
 *           for a key removed; a nested array of the same length as its
 *           source's as {"~": [[index, difference], …]} when that is shorter)
 *        h, q  the open head and sequence; c the compare panel's choices;
 *        p  the open panels' ids; o  1 when "One colour scale" is on;
 *        e  the explained cell [card id, row, column], when one is
 *   #state=  the older link (the Python client writes it): the whole body.
 * The fragment never reaches the server.
 */
import { lastGood, ui } from "./state.js";
import { langQuery, onLangChange } from "./locale.js";
import { msg } from "./words.js";
import { say } from "./page-words.js";
import { $ } from "./base.js";
import { PRESETS } from "./presets.js";
import { loadPreset } from "./lessons.js";
import { applyState, writeLink } from "./share.js";
import { bodyDifference, bodyPatched, packState, sourceBody, unpackState } from "./link-state.js";
import { explainAfterRender, explained } from "./explain.js";
import { RANDOM_DEFAULT, randomBody, randomFromQuery, randomProblem, randomQuery, randomTitle } from "./random-inputs.js";
import { answer } from "./hooks.js";

answer({ shortLink }); // share.js writes the link through hooks.js

export const SHORT_LINK_MAX = 2000; // characters: what a chat, a course platform or a QR code takes whole

export const sourceQuery = (source) => (!source ? "" : source.lesson ? `?lesson=${source.lesson}` : `?${randomQuery(source.random)}`);

const openPanels = () => [...document.querySelectorAll("details.panel.optional[open]")].map((d) => d.id).filter(Boolean);

// The link to what is on show: {url, short} (short: it fits SHORT_LINK_MAX).
export async function shortLink(body) {
  const state = { b: bodyDifference(sourceBody(ui.source), body), h: ui.selectedHead, q: ui.selectedSeq,
    c: [$("compare-kind").value, $("compare-a").value, $("compare-b").value], p: openPanels(), o: $("one-scale").checked ? 1 : 0,
    e: explained ? [explained.id, explained.i, explained.j] : undefined };
  // the language travels in the query, beside the source (?lesson=002&lang=tr)
  const query = [sourceQuery(ui.source).slice(1), langQuery()].filter(Boolean).join("&");
  const url = `${location.href.split(/[?#]/)[0]}${query ? `?${query}` : ""}#s=${await packState(state)}`;
  return { url, short: url.length <= SHORT_LINK_MAX };
}

// Marks where the inputs came from, and says so (note: a msg(), words.js).
export function setSource(source, note) {
  ui.source = source;
  document.querySelectorAll("#presets button").forEach((b) => b.setAttribute("aria-pressed", String(!!source && b.dataset.preset === source.lesson)));
  if (note) say($("preset-note"), note.id, note.params);
}

export function loadRandom(r) {
  applyState({ body: randomBody(r) });
  setSource({ random: r }, msg("links.random", { title: randomTitle(r) }));
}

// A link's state put back: the source's body with the link's difference,
// the panels and the colour scale before the request goes.
export function restore(source, s) {
  document.querySelectorAll("details.panel.optional").forEach((d) => { d.open = (s.p || []).includes(d.id); });
  $("one-scale").checked = !!s.o;
  if (s.e) explainAfterRender(...s.e);
  applyState({ body: bodyPatched(sourceBody(source), s.b || {}), head: s.h, seq: s.q, compare: s.c });
  // a lesson's link that changed none of its numbers shows the lesson (its names on the cards)
  if (source && source.lesson && !["x", "w_q", "w_k", "w_v", "num_heads"].some((k) => k in (s.b || {}))) ui.presetKey = source.lesson;
  setSource(source, !source ? msg("links.restored")
    : msg("links.restored.from", { source: source.lesson ? msg(`lessons.${source.lesson}.name`) : randomTitle(source.random) }));
}

// The page as its address says: #s= (with its source), the older #state=,
// ?random=…, ?lesson=…, else lesson 001.
export function openFromAddress() {
  const params = new URLSearchParams(location.search);
  const lesson = params.get("lesson"), random = randomFromQuery(params);
  const source = random ? { random } : lesson in PRESETS ? { lesson } : null;
  const short = /^#s=([\w-]+)$/.exec(location.hash), old = /^#state=([\w-]+)$/.exec(location.hash);
  const fallback = () => { loadPreset("001"); setSource({ lesson: "001" }); };
  if (short) unpackState(short[1]).then((s) => restore(source, s), fallback);
  else if (old) unpackState(old[1]).then((s) => { applyState(s); setSource(null); }, fallback);
  else if (random) loadRandom(random);
  else { const key = source ? lesson : "001"; loadPreset(key); setSource({ lesson: key }); }
}

export function init() {
  // a lesson's button (lessons.js loads it) makes the lesson the source
  $("presets").addEventListener("click", (ev) => {
    const b = ev.target.closest("button[data-preset]");
    if (b) setSource({ lesson: b.dataset.preset });
  });
  // the link carries the open panels and the colour scale too
  const relink = () => { if (lastGood) writeLink(lastGood); };
  $("one-scale").addEventListener("change", relink);
  $("explain").addEventListener("explained", relink);
  document.querySelectorAll("details.panel.optional").forEach((d) => d.addEventListener("toggle", relink));
  onLangChange(relink); // the link keeps the language
  for (const [k, v] of Object.entries(RANDOM_DEFAULT)) $(`random-${k}`).value = v;
  $("random-make").addEventListener("click", () => {
    const r = Object.fromEntries(Object.keys(RANDOM_DEFAULT).map((k) => [k, Number($(`random-${k}`).value)]));
    const problem = randomProblem(r);
    say($("random-error"), problem && problem.id, problem && problem.params); $("random-error").hidden = !problem;
    if (!problem) loadRandom(r);
  });
}
