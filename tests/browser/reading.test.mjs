// End-to-end test of the visualizer page, read as a person reads it: a sweep of a fixed list of states (each lesson,
// each guided step, the explanation, the head view, the compare panel, the share and export panel, the model view)
// in each language the page speaks at 375, 1366 and 1920 px: every state of every lesson at 1366 px; at 375 and
// 1920 px English reads the three lessons' core states and Spanish, Italian and Turkish every state of their own
// lesson (000, 001, 002).  reading-widths.test.mjs runs this file's sweep of Spanish, Italian and Turkish at 375
// and 1920 px, beside this one (READ_LANGS=es READ_WIDTHS=375 reads fewer, in either file).  In every state: no value printed as text
// (null, undefined, NaN, [object …]), no missing message (⟦id⟧), no English in a page of another language, no text
// cut or outside its box, every number the reply's as the one rule writes it; axe-core finds nothing moderate or
// worse (each state once at each width, in one language: axeHere).  Screenshots of a fixed list of states:
// tests/artifacts/read-<lang>-<width>-<state>.png; every fault found: tests/artifacts/<file>-faults.txt
// (harness.mjs: the server, Chromium and the helpers).
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import { LANG_NAMES } from "../../server/web/locale.js";
import { api, artifact, axeFindings, FILE, base, catalogs, clippedText, englishWords, finalChecks, LESSON_CODE, lessonNames, LESSONS, MATH_NAMES, numberFaults,
         numbersOf, openHead, openPage, page, panel, readable, rendered, shot, STAGES, test, wordFaults } from "./harness.mjs";

openPage();

// The languages the sweep reads, and the widths: a phone, a laptop, a projector.
// This file reads English at every width and the others at 1366 px; reading-widths.test.mjs the others at 375
// and 1920 px (two files, side by side).
const WIDTHS_PART = FILE === "reading-widths";
const SWEEP = WIDTHS_PART ? { es: [375, 1920], it: [375, 1920], tr: [375, 1920] }
  : { en: [375, 1366, 1920], es: [1366], it: [1366], tr: [1366] };
// At 375 and 1920 px a language other than English reads its own lesson (the lessons are written in Spanish,
// Italian and Turkish), in every state that shows a module's words: the lesson, an explanation, its guided
// steps, head 1, Compare, Share and the presentation (1920 px); English reads the three lessons' core states.
const OWN_LESSON = { es: "000", it: "001", tr: "002" };
const lessonsAt = (lang, width) => (width === FULL || !OWN_LESSON[lang] ? ["000", "001", "002"] : [OWN_LESSON[lang]]);
const allStates = (lang, width) => width === FULL || !!OWN_LESSON[lang];
const LANGS = process.env.READ_LANGS ? process.env.READ_LANGS.split(",") : Object.keys(SWEEP);
const widthsOf = (lang) => (process.env.READ_WIDTHS ? process.env.READ_WIDTHS.split(",").map(Number) : SWEEP[lang] || [1366]);
const FULL = 1366; // every state at this width; the core states at every width
const HEIGHT = { 375: 812, 1366: 768, 1920: 1080 };
// The states of the core list (every language × every width), and those screenshot (every language; the
// lessons at every width, the rest at FULL).
const CORE = (state) => /^lesson-\d+$|-guided-softmax$|-explain$/.test(state);
const SHOT_PART = [[/present/, "#presentation"], [/guided/, "#guided"], [/explain/, "#explain"], [/compare/, "#group-compare"], [/share/, "#share-panel"],
                   [/model-view/, "#model-panel"]];
const SHOTS = (state) => /^lesson-\d+$|^002-guided-softmax|^000-explain$|compare|^000-share$|model-view|present-(4|guided)/.test(state);

// axe-core reads a view's roles, names, contrast and layout, which the width changes and the language does not: each
// view is checked once at each width, in one language. English checks every state of every lesson at 1366 px and the
// core states at 375 and 1920 px; Turkish the other views at 375 and 1920 px, in lesson 002's states (the lesson with
// heads, the presentation and every view the other two show, with other numbers) and the model view. Spanish, Italian
// and Turkish each check one whole page at 1366 px, their own lesson's (the lang attributes, the names of the controls
// in their words). READ_LANGS or READ_WIDTHS (a partial sweep) check every state they read.
const AXE_EVERYWHERE = !!(process.env.READ_LANGS || process.env.READ_WIDTHS);
function axeHere(lang, width, state) {
  if (AXE_EVERYWHERE || (width === FULL && state === `lesson-${OWN_LESSON[lang]}`)) return true;
  return lang === (width === FULL || CORE(state) ? "en" : "tr");
}

const cats = await catalogs();
fs.rmSync(artifact("faults.txt"), { force: true });
const faults = []; // "lang width state: what"
const timing = { states: 0, axed: 0, started: Date.now() };
let known = null; // the numbers of the open lesson's reply and request
let LESSON_NAMES = null; // the lessons' own variables (harness.mjs lessonNames), read once the page is open

// Reads the page in its current state: words, boxes, numbers; axe-core where asked; a screenshot from the list.
// names: words the state shows that are not the page's (the names in a file the test opened).
async function read(lang, width, state, lesson, { axe = true, names = [] } = {}) {
  const allowed = [...names, ...MATH_NAMES, ...(LESSON_NAMES[lesson] || []), ...(LESSONS[lesson]?.tokens || []).flatMap((t) => t.split(/\s+/)),
                   ...Object.values(LANG_NAMES)];
  const english = lang === "en" ? null : englishWords(cats, lang, allowed);
  const at = `${lang} ${width} px ${state}:`;
  let t0 = Date.now();
  const lap = (what) => { timing[what] = (timing[what] || 0) + Date.now() - t0; t0 = Date.now(); };
  for (const f of wordFaults(await readable(), english)) faults.push(`${at} ${f}`);
  lap("words");
  for (const f of await clippedText()) faults.push(`${at} ${f}`);
  lap("boxes");
  for (const f of await numberFaults(known, lang)) faults.push(`${at} ${f}`);
  lap("numbers");
  if (axe && axeHere(lang, width, state)) {
    timing.axed++;
    for (const f of await axeFindings(axe === true ? "html" : axe)) faults.push(`${at} axe ${f}`);
    lap(axe === true ? "axePage" : "axePart");
  }
  if (SHOTS(state) && (width === FULL || /^lesson-|present/.test(state) || OWN_LESSON[lang])) {
    // what the window shows, scrolled to the part the state is about (the top of the page for a lesson)
    const part = SHOT_PART.find(([re]) => re.test(state))?.[1];
    if (part) await page.locator(part).first().scrollIntoViewIfNeeded();
    else await page.evaluate(() => scrollTo(0, 0));
    await shot(`read-${lang}-${width}-${state}.png`, { fullPage: false });
  }
  lap("shots");
  timing.states++;
}

// Opens the explanation of cell (i, j) of a card: a click on a table's cell, or the keyboard on a canvas.
async function explainCell(id, i, j) {
  if (await page.locator(`#${id} td[data-row]`).count()) return page.click(`#${id} td[data-row="${i}"][data-col="${j}"]`);
  await page.focus(`#${id} canvas.overlay`);
  for (let k = 0; k < i; k++) await page.keyboard.press("ArrowDown");
  for (let k = 0; k < j; k++) await page.keyboard.press("ArrowRight");
  await page.keyboard.press("Enter");
}

async function openLesson(key) {
  const l = LESSONS[key];
  const body = { x: l.x, w_q: l.w_q, w_k: l.w_k, w_v: l.w_v, num_heads: l.num_heads, return: STAGES };
  const reply = await api(body);
  known = numbersOf(reply.text, JSON.stringify(body));
  await rendered(() => page.click(`button[data-preset="${key}"]`));
}

// The guided steps of the open lesson (each lesson has its own: 001 has no heads, so no concat nor W_o step),
// each read; the softmax step also with its exercise, guessed and revealed.
async function guidedSteps(lang, width, key) {
  const all = allStates(lang, width);
  await page.click("#guided-toggle");
  await page.waitForSelector("#guided-h");
  for (let k = 1; ; k++) {
    const last = await page.isDisabled("#guided-next"), softmax = (await page.locator("#guided-predict").count()) > 0;
    const state = softmax ? `${key}-guided-softmax` : `${key}-guided-${k}`;
    // axe-core on the guide's first and last steps (the rest share their markup; the softmax's below)
    const axe = (k === 1 || last) && ["#guided", "#stage-area .guided-current"];
    if (all || CORE(state)) await read(lang, width, state, key, { axe });
    if (softmax && all) {
      await page.check("#guided-predict");
      await page.fill("#guided input[data-key='0']", "0.5");
      await read(lang, width, `${key}-guided-softmax-predict`, key);
      await page.click("#guided-reveal");
      await read(lang, width, `${key}-guided-softmax-revealed`, key, { axe: "#guided" });
      await page.uncheck("#guided-predict");
    }
    if (last) break;
    await page.click("#guided-next");
  }
  await page.click("#guided-exit");
}

// The presentation view (a projector: 1366 × 768 and 1920 × 1080): its first stage, its fourth (head 0's
// projection), and beside the guide's first step.
async function presentation(lang, width, key) {
  await page.click("#present-toggle");
  await page.waitForSelector("#presentation:not([hidden]) .present-body");
  await read(lang, width, `${key}-present-1`, key, { axe: "#presentation" });
  for (let k = 0; k < 3; k++) await page.keyboard.press("ArrowRight");
  await read(lang, width, `${key}-present-4`, key, { axe: false });
  await page.keyboard.press("Escape");
  await page.click("#guided-toggle");
  await page.click("#present-toggle");
  await page.waitForSelector("#presentation:not([hidden]) .present-guide:not([hidden])");
  await read(lang, width, `${key}-present-guided`, key, { axe: "#presentation" });
  await page.keyboard.press("Escape");
  await page.click("#guided-exit");
}

async function sweep(lang, width) {
  await page.setViewportSize({ width, height: HEIGHT[width] });
  for (const key of lessonsAt(lang, width)) {
    await openLesson(key);
    await read(lang, width, `lesson-${key}`, key);
    await explainCell("h0-weights", 1, 2);
    await page.waitForSelector("#explain:not([hidden])");
    await read(lang, width, `${key}-explain`, key, { axe: "#explain" });
    await page.click("#explain-close");
    await guidedSteps(lang, width, key);
    // lesson 002's presentation; at 1920 px a language's own lesson's too (at 1366 px lesson 002's stands for all)
    if ((key === "002" || (width !== FULL && OWN_LESSON[lang] === key)) && width !== 375) await presentation(lang, width, key);
    if (!allStates(lang, width)) continue;
    if (LESSONS[key].num_heads > 1) {
      await openHead(1);
      await read(lang, width, `${key}-head-1`, key, { axe: "#stage-area" });
      await panel("compare-panel");
      await page.selectOption("#compare-kind", "heads");
      await page.waitForSelector("#group-compare:not([hidden]) .card");
      await read(lang, width, `${key}-compare-heads`, key, { axe: ["#compare-panel", "#group-compare"] });
      await page.selectOption("#compare-kind", "off");
      await page.waitForFunction(() => document.getElementById("group-compare").hidden);
      await panel("compare-panel", false);
      await openHead(0);
    }
    await panel("share-panel");
    await read(lang, width, `${key}-share`, key, { axe: "#share-panel" });
    await panel("share-panel", false);
  }
  if (!allStates(lang, width)) return;
  // the model view: a bundle of two layers (lessons 002 and 000) opened by the file picker
  const layer = (key) => { const l = LESSONS[key]; return { x: l.x, w_q: l.w_q, w_k: l.w_k, w_v: l.w_v, num_heads: l.num_heads, return: ["output", "weights"] }; };
  const bundle = { layers: [{ name: "lesson 002", request: layer("002") }, { name: "lesson 000", request: layer("000") }] };
  await page.setInputFiles("#bundle-file", { name: "lessons.json", mimeType: "application/json", buffer: Buffer.from(JSON.stringify(bundle)) });
  await page.waitForSelector("#model-panel:not([hidden]) .model-head");
  // the bundle's names (its file's, its layers') are the test's words, as token labels are a student's; the
  // cards still show the lesson opened last
  await read(lang, width, "model-view", lessonsAt(lang, width).at(-1), { axe: "#model-panel",
    names: ["lessons", "lesson", ...LESSON_NAMES["002"], ...LESSON_NAMES["000"]] });
}

// Faults of one kind (the same words, other numbers, cells or states) once, with their count; all of them in
// tests/artifacts/<file>-faults.txt.
function kinds(list) {
  const seen = new Map();
  for (const f of list) {
    const key = f.replace(/^\S+ \d+ px \S+: /, "").replace(/[−-]?\d[\d.,]*/g, "#");
    if (!seen.has(key)) seen.set(key, { first: f, n: 0 });
    seen.get(key).n++;
  }
  return [...seen.values()].map(({ first, n }) => (n > 1 ? `${first} (and ${n - 1} more like it)` : first));
}

// The reader's own checks and the file picker: once, in this file (not again in reading-widths.test.mjs).
const once = WIDTHS_PART ? () => {} : test;

once("the reader finds each fault it looks for: a value as text, a missing key, English, cut text, a wrong number", async () => {
  await page.evaluate(() => {
    const box = document.createElement("div");
    box.id = "reader-fixture";
    box.innerHTML = `<p>weights</p><p id="f-null"></p><p>⟦guided.title⟧</p><p lang="es">Paso 1: the weights</p>
      <div style="width:60px;overflow:hidden;white-space:nowrap" id="f-cut">a sentence much wider than sixty pixels</div>
      <div style="width:60px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap" id="f-dots">another long sentence, cut short</div>
      <svg width="40" height="20" id="f-svg"><text x="0" y="15">a label wider than its picture</text></svg>
      <span class="num" data-exact="0.123456" data-term="result">0.124</span>
      <span id="f-code" title="una parte de weights (2, 3)" data-code="weights">(2, 3)</span><span id="f-title" title="una parte de weights">(2, 3)</span>`;
    box.querySelector("#f-null").replaceChildren("Predict first", null);
    document.getElementById("results").prepend(box);
  });
  try {
    const items = (await readable()).filter((it) => it.where.includes("reader-fixture") || it.where.startsWith("#f-"));
    const words = wordFaults(items, englishWords(cats, "es", []));
    assert.ok(words.some((f) => /Predict firstnull/.test(f)), `null: ${words}`);
    assert.ok(words.some((f) => /⟦guided.title⟧/.test(f)), "a missing key");
    assert.ok(words.some((f) => /English "the, weights"/.test(f)), `English: ${words}`);
    assert.ok(words.some((f) => /#f-title \(title\) English "weights"/.test(f)) && !words.some((f) => f.includes("#f-code")), `code in a title: ${words}`);
    const cut = await clippedText();
    for (const id of ["#f-cut cuts its content", "#f-dots cuts its text with an ellipsis", "lies outside #f-svg"])
      assert.ok(cut.some((f) => f.includes(id)), `${id}: ${cut}`);
    const numbers = await numberFaults(new Set(["0.5"]), "en");
    assert.ok(numbers.some((f) => /result shows "0.124", its value 0.123456 is written "0.123"/.test(f)), `numbers: ${numbers}`);
    assert.ok(numbers.some((f) => /result 0.123456 is none of the reply's numbers/.test(f)), `numbers: ${numbers}`);
  } finally {
    await page.evaluate(() => document.getElementById("reader-fixture").remove());
  }
});

// The words the sweep lets a page of another language show because a lesson's code names its arrays with them are
// names that lesson's own code writes left of an `=` (tests/lessons/lessons.py), its `scores`, `output` or `skor`: a
// name lesson-names.js gave a lesson that its code does not write would let that English word through unseen.
once("the lessons' own names a page of any language shows are names that lesson's own code assigns", async () => {
  await page.goto(base);
  await page.waitForFunction(() => window.attentionVisualizer?.renders >= 1);
  const names = await lessonNames();
  assert.deepEqual(Object.keys(names).sort(), Object.keys(LESSONS).sort());
  for (const [key, words] of [["000", ["scores", "attention_weights", "head_output"]], ["001", ["scores", "scaled_scores", "output"]], ["002", ["skor"]]])
    for (const w of words) assert.ok(names[key].includes(w), `lesson ${key}'s ${w}: ${names[key]}`);
  for (const [key, list] of Object.entries(names)) {
    const code = new Set(LESSON_CODE[key].match(/[A-Za-z_]\w*(?=(?:\s*,\s*[A-Za-z_]\w*)*\s*=[^=])|\bfor\s+\w+/g)
      .flatMap((m) => m.replace(/^for\s+/, "").split(/\s*,\s*/)));
    assert.deepEqual(list.filter((w) => !code.has(w)), [], `lesson ${key}'s names its code does not assign (tests/lessons/lessons.py)`);
  }
});

// A native control the browser labels in its own language (a file input's "Choose File", "No file chosen") is
// never on show: a button of the page, in the page's words, opens it.
once("no control speaks the browser's language: a file is chosen with a button in the page's words", async () => {
  await page.goto(`${base}?lang=tr`);
  await page.waitForFunction(() => window.attentionVisualizer?.renders >= 1);
  const native = await page.evaluate(() => [...document.querySelectorAll("input[type=file]")].filter((e) => e.checkVisibility()).map((e) => e.id));
  assert.deepEqual(native, [], "file inputs on show");
  assert.equal(await page.textContent("#bundle-choose"), cats.tr["page.bundle.choose"]);
  const [chooser] = await Promise.all([page.waitForEvent("filechooser"), page.click("#bundle-choose")]);
  assert.equal(await chooser.element().evaluate((e) => e.id), "bundle-file");
});

for (const lang of LANGS) {
  for (const width of widthsOf(lang)) {
    test(`${lang} at ${width} px: every state reads whole, in its language, its numbers the reply's`, async () => {
      const t0 = Date.now(), before = faults.length;
      await page.goto(`${base}?lang=${lang}`);
      await page.waitForFunction(() => window.attentionVisualizer?.renders >= 1 && document.getElementById("results").dataset.state === "ok");
      LESSON_NAMES ??= await lessonNames();
      try {
        await sweep(lang, width);
      } finally {
        await page.setViewportSize({ width: 1280, height: 900 });
      }
      console.log(`# reading ${lang} at ${width} px: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      const mine = faults.slice(before);
      if (mine.length) fs.appendFileSync(artifact("faults.txt"), mine.join("\n") + "\n");
      assert.deepEqual(kinds(mine), []);
    });
  }
}

test("the sweep's cost", () => {
  const s = (ms) => `${((ms || 0) / 1000).toFixed(0)} s`;
  console.log(`# reading: ${timing.states} states in ${s(Date.now() - timing.started)} (words ${s(timing.words)}, boxes ${s(timing.boxes)}, `
    + `numbers ${s(timing.numbers)}, axe-core on ${timing.axed} of them: ${s(timing.axePage)} on whole pages and ${s(timing.axePart)} on the parts a state changed, screenshots ${s(timing.shots)}); load ${os.loadavg()[0].toFixed(1)}`);
});

finalChecks();
