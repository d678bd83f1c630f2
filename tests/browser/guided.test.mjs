// End-to-end test of the visualizer page, the guided mode: the stages one at a time in pipeline order, each formula
// in the live numbers of the chosen cell, one colour scale, the predict-then-reveal exercise, keyboard and axe-core
// (harness.mjs: the server, Chromium and the helpers).
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import en from "../../server/web/words-en.js";
import es from "../../server/web/words-es.js";
import it from "../../server/web/words-it.js";
import tr from "../../server/web/words-tr.js";
import { api, ARTIFACTS, finalChecks, HERE, LESSONS, near, openPage, page, REPO, rendered, test } from "./harness.mjs";

openPage();
const CATALOGS = { en, es, it, tr };

const l = LESSONS["002"];
const lesson = { x: l.x, w_q: l.w_q, w_k: l.w_k, w_v: l.w_v, num_heads: 2 };
// Lesson 002's steps, in its own names: no mask step (nothing is hidden) and no W_o step (the lesson leaves it out).
const TITLES = ["Q, K, V", "QKᵀ", "skor = QKᵀ ÷ √(d // h)", "A = softmax(skor)", "Yh = A · Vh", "Y"];
// The guide's numbers by term: {term: [exact values]}.
const terms = () => page.evaluate(() => {
  const out = {};
  for (const n of document.querySelectorAll("#guided-formula .num")) (out[n.dataset.term] = out[n.dataset.term] || []).push(Number(n.dataset.exact));
  return out;
});
const visible = (id) => page.evaluate((i) => { const e = document.getElementById(i); return !!e && !e.closest("[hidden]"); }, id);
// Every axe-core finding inside the guide, whatever its impact.
async function axeFindings(selector) {
  await page.addScriptTag({ path: path.join(HERE, "node_modules/axe-core/axe.min.js") });
  const r = await page.evaluate((s) => window.axe.run(s, { resultTypes: ["violations"] }), selector);
  return r.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join("; ")}`);
}

test("guided mode: one stage at a time in pipeline order, by keyboard, each formula in the chosen cell's numbers", async () => {
  await rendered(() => page.click('button[data-preset="002"]'));
  const { json: A } = await api({ ...lesson, return: ["q", "k", "v", "scores", "scaled_scores", "masked_scores", "weights", "head_outputs", "concat", "output"] });
  assert.equal(await visible("guided"), false, "off until asked for");
  await page.click("#guided-toggle");
  await page.waitForSelector("#guided-h");
  assert.equal(await page.getAttribute("#guided-toggle", "aria-pressed"), "true");
  // one colour scale by default, the legends saying so
  assert.equal(await page.isChecked("#one-scale"), true);
  assert.match(await page.textContent("#h0-q .legend"), /one scale for Q, K and V$/);
  // step 1: Q, K and V only; Q[0, 0] = X[0] · column 0 of W_q
  assert.match(await page.textContent("#guided-h"), /^Step 1 of 6: Q, K, V/);
  for (const [id, on] of [["h0-q", true], ["h0-v", true], ["h0-scores", false], ["h0-weights", false], ["all-output", false], ["group-heads", false]])
    assert.equal(await visible(id), on, `${id} at step 1`);
  let t = await terms();
  assert.deepEqual(t.a.slice(0, 8), l.x[0]);
  assert.deepEqual(t.b.slice(0, 8), l.w_q.map((r) => r[0]));
  assert.equal(t.result[0], A.q[0][0][0]);
  // the keyboard walks the steps: Enter on "Next step", focus stays on it
  await page.focus("#guided-next");
  await page.keyboard.press("Enter");
  assert.match(await page.textContent("#guided-h"), /^Step 2 of 6: QKᵀ/);
  assert.equal(await page.evaluate(() => document.activeElement.id), "guided-next");
  assert.equal(await visible("h0-scores"), true);
  assert.equal(await visible("h0-scaled_scores"), false);
  // a click on a cell chooses it: (QKᵀ)[1 → 2] = Qh[0][1] · Kh[0][2]
  await page.click("#h0-scores td[data-row='1'][data-col='2']");
  t = await terms();
  assert.deepEqual(t.a, A.q[0][1]);
  assert.deepEqual(t.b, A.k[0][2]);
  assert.equal(t.result[0], A.scores[0][1][2]);
  const want = [null, null, A.scaled_scores[0][1][2], A.weights[0][1][2], A.head_outputs[0][1][0], A.concat[1][0]];
  for (let k = 2; k < 6; k++) {
    await page.focus("#guided-next");
    await page.keyboard.press("Enter");
    assert.match(await page.textContent("#guided-h"), new RegExp(`^Step ${k + 1} of 6: ${TITLES[k].replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
    assert.equal((await terms()).result[0], want[k], `step ${k + 1}'s value`);
  }
  // the last step: the concatenation, which is the output (the lesson applies no W_o); no step after it
  assert.equal(await visible("all-concat"), true);
  assert.equal(await visible("all-output"), false, "the output repeats the concatenation");
  assert.equal(await visible("h0-masked_scores"), false, "no key is hidden: the masked scores repeat the scaled ones");
  assert.match(await page.textContent("#guided"), /There is no W_o: Y is the final result\./);
  assert.equal(await page.isDisabled("#guided-next"), true);
  await page.click("#guided-prev");
  assert.match(await page.textContent("#guided-h"), /^Step 5 of 6: Yh = A · Vh/);
  assert.equal(await visible("all-concat"), false);
  // the softmax's formula: exp(skor − row max) ÷ the row's sum, as lesson 002's softmax writes it
  await page.click("#guided-prev");
  t = await terms();
  const row = A.scaled_scores[0][1], max = Math.max(...row), sum = row.reduce((s, v) => s + Math.exp(v - max), 0);
  assert.deepEqual([t.a[0], t.max[0]], [row[2], max]);
  assert.ok(Math.abs(t.sum[0] - sum) <= 1e-12 * sum, `the row's sum ${t.sum[0]} vs ${sum}`);
  assert.match(await page.textContent("#guided-formula"), /^A\[0\]\[tok1 → tok2\] = exp\(skor − max\) ÷ Σ exp\(skor − max\) = exp\(/);
  assert.match(await page.textContent("#guided"), /Subtracting the row's largest score changes no weight/);
  assert.deepEqual(await axeFindings("#guided"), []);
  await page.click("#guided-exit");
  assert.equal(await visible("guided"), false);
  for (const id of ["h0-scores", "h0-masked_scores", "h0-weights", "all-output", "group-heads"]) assert.equal(await visible(id), true, `${id} after leaving`);
  assert.equal(await page.evaluate(() => document.activeElement.id), "guided-toggle");
  await page.uncheck("#one-scale");
});

test("guided mode: predict a row of weights, every source of them hidden, then reveal them and the difference per entry", async () => {
  await rendered(() => page.click('button[data-preset="001"]'));
  const l1 = LESSONS["001"];
  const { json: A } = await api({ x: l1.x, w_q: l1.w_q, w_k: l1.w_k, w_v: l1.w_v, num_heads: 1, return: ["weights"] });
  await page.click("#guided-toggle");
  await page.waitForSelector("#guided-h");
  await page.click("#h0-q td[data-row='2'][data-col='0']"); // query 2
  for (let k = 0; k < 3; k++) await page.click("#guided-next");
  assert.match(await page.textContent("#guided-h"), /^Step 4 of 5: attention_weights = softmax\(scaled_scores\)/);
  // the explanation of a weight, open before predicting, works the softmax out
  await page.click("#h0-weights td[data-row='2'][data-col='1']");
  assert.equal(await page.locator("#explain [data-term='weight']").count(), 1);
  await page.check("#guided-predict");
  const row = A.weights[0][2];
  // hidden: the weights, their formula's numbers (the chosen weight, the row's max and sum), the explanation's
  assert.equal(await visible("h0-weights"), false, "the weights wait for the guess");
  assert.equal(await page.locator("#guided-formula .num").count(), 0, "no number in the formula");
  assert.match(await page.textContent("#guided-formula"), /^attention_weights\[word 3 → word 2\] = exp\(scaled_scores − max\) ÷ Σ exp\(scaled_scores − max\)/);
  assert.equal(await page.locator("#explain .num").count(), 0, "no number in the explanation");
  assert.match(await page.textContent("#explain"), /would give away the weights you are guessing/);
  for (const w of row) assert.ok(!(await page.innerText("#guided")).includes(await page.evaluate((v) => window.attentionVisualizer.fmt(v), w)), `weight ${w} shown`);
  const guesses = ["0.5", "0.25", ""];
  for (const [j, g] of guesses.entries()) await page.fill(`#guided input[data-key='${j}']`, g);
  await page.click("#guided-reveal");
  assert.equal(await visible("h0-weights"), true);
  assert.equal(await page.locator("#explain [data-term='weight']").count(), 1, "the explanation is back");
  const got = await page.$$eval("#guided .predict-table tbody tr", (trs) => trs.map((tr) => {
    const w = tr.querySelector("[data-term='weight']"), d = tr.querySelector("[data-term='diff']");
    return [Number(w.dataset.exact), d ? Number(d.dataset.exact) : tr.querySelector(".diff").textContent];
  }));
  assert.deepEqual(got, row.map((w, j) => [w, guesses[j] === "" ? "—" : Number(guesses[j]) - w]));
  assert.deepEqual(await axeFindings("#guided"), []);
  await page.click("#explain-close");
  await page.uncheck("#guided-predict");
  await page.click("#guided-exit");
  // lesson 002: every head's weights (small multiples, read on hover) wait for Reveal too
  await rendered(() => page.click('button[data-preset="002"]'));
  await page.click("#guided-toggle");
  for (let k = 0; k < 3; k++) await page.click("#guided-next");
  assert.equal(await visible("group-heads"), true, "every head's weights come with the softmax");
  await page.check("#guided-predict");
  assert.equal(await page.locator("#group-heads").isVisible(), false, "every head's weights wait for the guess");
  assert.equal(await page.locator("#h0-lines").isVisible(), false, "the head view waits for the guess");
  await page.click("#guided-reveal");
  assert.equal(await page.locator("#group-heads").isVisible(), true);
  await page.uncheck("#guided-predict");
  await page.click("#guided-exit");
  await page.uncheck("#one-scale");
});

// The words of the guide as a person reads them (innerText: what is on screen, hidden parts left out).
const guideText = () => page.innerText("#guided");
const BROKEN = /\bnull\b|\bundefined\b|\bNaN\b|\[object|⟦/;

test("guided mode: every step of every lesson reads as words, with no null, undefined, NaN or [object", async () => {
  for (const key of ["000", "001", "002"]) {
    await rendered(() => page.click(`button[data-preset="${key}"]`));
    await page.click("#guided-toggle");
    await page.waitForSelector("#guided-h");
    for (;;) {
      const text = await guideText(), where = `lesson ${key}, ${await page.textContent("#guided-h")}`;
      assert.doesNotMatch(text, BROKEN, `${where}: ${text}`);
      if (await page.locator("#guided-predict").count()) {
        await page.check("#guided-predict");
        assert.doesNotMatch(await guideText(), BROKEN, `${where}, predicting`);
        await page.click("#guided-reveal");
        assert.doesNotMatch(await guideText(), BROKEN, `${where}, revealed`);
        await page.uncheck("#guided-predict");
      }
      if (await page.isDisabled("#guided-next")) break;
      await page.click("#guided-next");
    }
    await page.click("#guided-exit");
  }
  await page.uncheck("#one-scale");
});

// The guide's headings, from step 1 to the last, and the text of each step.
async function walk() {
  const out = [];
  for (;;) {
    out.push({ h: await page.textContent("#guided-h"), text: await guideText(), hidden: await page.evaluate(() =>
      ["all-concat", "all-output", "h0-masked_scores"].filter((id) => document.getElementById(id)?.closest("[hidden]"))) });
    if (await page.isDisabled("#guided-next")) return out;
    await page.click("#guided-next");
  }
}

test("guided mode: each lesson's steps follow the lesson, in its names: 000 without the max or W_o, 001 without heads, concat or W_o", async () => {
  // lesson 000: two heads of per-head stacks, scores already ÷ √head_dim, softmax without the row max, no W_o
  await rendered(() => page.click('button[data-preset="000"]'));
  const l0 = LESSONS["000"];
  const { json: A } = await api({ x: l0.x, w_q: l0.w_q, w_k: l0.w_k, w_v: l0.w_v, num_heads: 2, return: ["scaled_scores", "weights"] });
  await page.click("#guided-toggle");
  let steps = await walk();
  assert.deepEqual(steps.map((s) => s.h.split(":")[1].trim()), ["Q, K, V", "QKᵀ", "scores = QKᵀ ÷ √head_dim",
    "attention_weights = softmax(scores)", "head_output = attention_weights · V", "multi_head_output"]);
  for (const s of steps) assert.doesNotMatch(s.text, /W_o/, `lesson 000 has no W_o: ${s.h}`);
  assert.match(steps[2].text, /In the lesson: scores = Q @ K\.T \/ np\.sqrt\(head_dim\)/);
  assert.match(steps[5].text, /multi_head_output is the final result, as in the lesson\./);
  await page.click("#guided-prev"); await page.click("#guided-prev"); // the softmax
  await page.click("#h0-scaled_scores td[data-row='0'][data-col='0']");
  const text = await page.textContent("#guided-formula");
  assert.match(text, /^attention_weights\[t0 → t0\] = exp\(scores\) ÷ Σ exp\(scores\) = exp\(/);
  assert.doesNotMatch(text, /\bmax\b/, "lesson 000 subtracts no max");
  assert.match(await guideText(), /The lesson does not subtract the row's largest score; subtracting it would change no weight/);
  const t = await terms(), row = A.scaled_scores[0][0];
  assert.equal(t.a[0], row[0]);
  near(t.sum[0], row.reduce((a, v) => a + Math.exp(v), 0), "Σ exp(scores)");
  near(t.e[0], Math.exp(row[0]), "exp(scores)");
  assert.equal(t.result[0], A.weights[0][0][0]);
  await page.click("#guided-exit");
  // lesson 001: one head, no W_o: five steps, the last one saying why nothing follows
  await rendered(() => page.click('button[data-preset="001"]'));
  await page.click("#guided-toggle");
  steps = await walk();
  assert.deepEqual(steps.map((s) => s.h.split(":")[1].trim()), ["Q, K, V", "scores = QKᵀ", "scaled_scores = scores ÷ √d_k",
    "attention_weights = softmax(scaled_scores)", "output = attention_weights · V"]);
  for (const s of steps) assert.deepEqual(s.hidden, ["all-concat", "all-output", "h0-masked_scores"], `${s.h}: the repeats stay hidden`);
  assert.match(steps[4].text, /With one head there is nothing to concatenate, and nothing is applied after it: output is the final result\./);
  assert.match(steps[3].text, /Subtracting the row's largest score changes no weight: it only keeps exp from overflowing\./);
  await page.click("#guided-exit");
  await page.uncheck("#one-scale");
});

// The softmax's line as shown: [text between, number text, …]; and its numbers read back as shown.
const readBack = (s) => Number(s.replace(/\u2212/g, "-"));
test("guided mode: the arithmetic adds up as shown: '=' only where the shown numbers give the shown result, no '− −', negative factors bracketed", async () => {
  for (const key of ["000", "002"]) {
    await rendered(() => page.click(`button[data-preset="${key}"]`));
    await page.click("#guided-toggle");
    const n = key === "000" ? 3 : 5;
    const text = async () => page.textContent("#guided-formula");
    // the scores' terms: negative factors in brackets, no "+ −"
    await page.click("#guided-next");
    assert.doesNotMatch(await text(), /[−+] −|·−/, `lesson ${key}: ${await text()}`);
    for (let k = 0; k < 2; k++) await page.click("#guided-next"); // the softmax
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) {
      await page.click(`#h0-scaled_scores td[data-row='${i}'][data-col='${j}']`);
      const line = await text(), where = `lesson ${key} (${i}, ${j}): ${line}`;
      assert.doesNotMatch(line, /[−+] −|·−/, where);
      // "exp(a − max) ÷ sum REL e ÷ sum REL weight": each "=" holds for the numbers as shown
      const first = await page.textContent("#guided-formula p:first-child");
      const m = /exp\(([^()]*(?:\([^()]*\))?)\) ÷ (\S+) (=|≈) (\S+) ÷ (\S+) (=|≈) (\S+)$/.exec(first);
      assert.ok(m, `the softmax line: ${first}`);
      const [, arg, sum, rel1, e, sum2, rel2, w] = m;
      const [x, y = "0"] = arg.split(" − ").map((z) => z.replace(/[()]/g, ""));
      const fmt = (v) => page.evaluate((z) => window.attentionVisualizer.fmt(z), v);
      if (rel1 === "=") assert.equal(await fmt(Math.exp(readBack(x) - readBack(y))), e, `'=' that does not hold as shown: ${where}`);
      if (rel2 === "=") assert.equal(await fmt(readBack(e) / readBack(sum2)), w, `'=' that does not hold as shown: ${where}`);
      assert.equal(sum, sum2);
    }
    await page.click("#guided-exit");
  }
  await page.uncheck("#one-scale");
});

test("guided mode opens in view at 1366×768; Next step keeps its buttons under the pointer, and the outline on the chosen cell", async () => {
  try {
    await page.setViewportSize({ width: 1366, height: 768 });
    await rendered(() => page.click('button[data-preset="000"]'));
    await page.evaluate(() => scrollTo(0, 0));
    await page.click("#guided-toggle");
    const box = async (sel) => page.$eval(sel, (e) => { const r = e.getBoundingClientRect(); return { x: r.left + r.width / 2, top: r.top, bottom: r.bottom }; });
    const g = await box("#guided-h");
    assert.ok(g.top >= 0 && g.bottom <= 768, `the guide's heading at ${g.top}–${g.bottom} of 768 px`);
    // choose query t1, key t2 at the scores, then walk with the pointer resting on "Next step"
    await page.click("#guided-next");
    await page.click("#h0-scores td[data-row='1'][data-col='2']");
    const outlined = () => page.$$eval(".card.guided-current td.hl-cell", (tds) => tds.map((td) => `${td.closest(".card").id} ${td.dataset.row},${td.dataset.col}`));
    for (;;) {
      if (await page.isDisabled("#guided-next")) break;
      const before = await box("#guided-next");
      await page.hover("#guided-next");
      await page.mouse.down(); await page.mouse.up();
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      const after = await box("#guided-next"), h = await page.textContent("#guided-h");
      // the button stays under the pointer, unless the page has no more to scroll; no cell comes under the pointer
      const under = await page.evaluate(([x, y]) => {
        const e = document.elementFromPoint(x, y), end = scrollY + innerHeight >= document.documentElement.scrollHeight - 1;
        return { cell: !!(e && e.closest(".card td[data-row]")), end };
      }, [before.x, (before.top + before.bottom) / 2]);
      assert.equal(under.cell, false, `${h}: a cell came under the pointer`);
      if (!under.end) assert.ok(Math.abs(after.top - before.top) <= 1, `${h}: "Next step" moved from ${before.top} to ${after.top}`);
      assert.match(await page.textContent("#guided-chosen"), /^The chosen cell: query t1, key t2/);
      const cells = await outlined();
      if (/softmax|scores/.test(h)) assert.deepEqual(cells.map((c) => c.split(" ")[1]), ["1,2"], `${h}: the outline`);
    }
    // the wheel scrolls the page under the pointer: the chosen cell and its outline stay
    await page.click("#guided-prev"); await page.click("#guided-prev"); // the softmax
    const was = await outlined();
    await page.screenshot({ path: path.join(ARTIFACTS, "guided-1366.png") });
    await page.hover("#h0-weights td[data-row='0'][data-col='0']");
    await page.mouse.wheel(0, 120);
    await page.evaluate(() => new Promise((r) => setTimeout(r, 200)));
    assert.deepEqual(await outlined(), was, "the outline stays on the chosen cell");
    assert.match(await page.textContent("#guided-chosen"), /^The chosen cell: query t1, key t2/);
    await page.click("#guided-exit");
    await page.uncheck("#one-scale");
  } finally {
    await page.setViewportSize({ width: 1280, height: 900 });
  }
});

test("guided mode: a causal mask adds the mask step, and a hidden key says why in the cell's own words", async () => {
  await rendered(() => page.click('button[data-preset="001"]'));
  await rendered(() => page.check("#causal"));
  try {
    await page.click("#guided-toggle");
    for (let k = 0; k < 3; k++) await page.click("#guided-next");
    assert.match(await page.textContent("#guided-h"), /^Step 4 of 6: masked_scores: hide the keys a query may not attend/);
    await page.click("#h0-masked_scores td[data-row='0'][data-col='2']");
    assert.equal(await page.textContent("#guided-formula"),
      "masked_scores[0][word 1 → word 3] = −∞: this query may not attend this key (causal: key word 3 comes after query word 1), so its weight will be 0");
    await page.click("#guided-exit");
  } finally {
    await rendered(() => page.uncheck("#causal"));
    await page.uncheck("#one-scale");
  }
});

// Each lesson in its own language (000 Spanish, 001 Italian, 002 Turkish): the guide's words are that catalog's,
// none of the English ones left (fragments of English messages that the language's own catalog does not share).
test("guided mode speaks each lesson's language: 000 in Spanish, 001 in Italian, 002 in Turkish, no English left", async () => {
  const english = Object.entries(CATALOGS.en).filter(([id]) => id.startsWith("guided."));
  const setLang = (code) => page.evaluate((c) => import(new URL("web/words.js", location.href)).then((m) => m.useLang(c)), code);
  try {
    for (const [key, code, next] of [["000", "es", "Paso siguiente"], ["001", "it", "Passo successivo"], ["002", "tr", "Sonraki adım"]]) {
      await rendered(() => page.click(`button[data-preset="${key}"]`));
      await setLang(code);
      await page.click("#guided-toggle");
      const own = Object.values(CATALOGS[code]).join("\n");
      const leftovers = english.flatMap(([id, text]) => (CATALOGS[code][id] === text ? [] : text.split(/\{\w+\}/)))
        .map((f) => f.trim()).filter((f) => /[a-z]{3,} [a-z]{2,}/i.test(f) && !own.includes(f));
      for (;;) {
        const text = await guideText(), where = `lesson ${key} in ${code}, ${await page.textContent("#guided-h")}`;
        assert.doesNotMatch(text, BROKEN, where);
        assert.match(text, new RegExp(next), where);
        for (const f of leftovers) assert.ok(!text.includes(f), `${where}: English left: "${f}"`);
        if (await page.locator("#guided-predict").count()) {
          await page.check("#guided-predict");
          for (const f of leftovers) assert.ok(!(await guideText()).includes(f), `${where}, predicting: English left: "${f}"`);
          await page.uncheck("#guided-predict");
        }
        if (await page.isDisabled("#guided-next")) break;
        await page.click("#guided-next");
      }
      await page.locator("#guided").screenshot({ path: path.join(ARTIFACTS, `guided-${key}-${code}.png`) });
      await page.click("#guided-exit");
    }
  } finally {
    await setLang("en");
    await page.uncheck("#one-scale");
  }
});

// Each line the guide quotes ("In the lesson: …") is one the lesson writes, word for word: found in its function
// of tests/lessons/lessons.py (the lessons transcribed; lesson 002's solution and its text's lines), a line
// broken inside brackets read as one.
test("guided mode quotes each lesson's own lines, word for word, at every step", async () => {
  const source = fs.readFileSync(path.join(REPO, "tests/lessons/lessons.py"), "utf8").replace(/,\s*\n\s*/g, ", ");
  const linesOf = (key) => source.split(`def lesson_${key}(`)[1].split("\ndef ")[0].split("\n").map((l) => l.trim());
  for (const key of ["000", "001", "002"]) {
    await rendered(() => page.click(`button[data-preset="${key}"]`));
    await page.click("#guided-toggle");
    await page.waitForSelector("#guided-h");
    const quoted = [];
    for (;;) {
      const line = await page.evaluate(() => document.querySelector("#guided .lesson-code code")?.textContent ?? null);
      if (line) quoted.push(line);
      if (await page.isDisabled("#guided-next")) break;
      await page.click("#guided-next");
    }
    await page.click("#guided-exit");
    assert.ok(quoted.length >= 4, `lesson ${key} quotes ${quoted.length} lines`);
    const own = linesOf(key);
    for (const line of quoted) assert.ok(own.includes(line), `lesson ${key} does not write "${line}"`);
  }
  await page.uncheck("#one-scale");
});

// The input as each lesson names it (lesson-names.js: 000's x, 001's and 002's X), in the lesson's language: the
// guide's projections read its rows, and the input's card beside the guide, and its cells' captions, say the same.
test("guided mode names each lesson's input as the lesson does: 000's x, 001's and 002's X, in the cards beside it too", async () => {
  const setLang = (code) => page.evaluate((c) => import(new URL("web/words.js", location.href)).then((m) => m.useLang(c)), code);
  // the query and key chosen earlier stay chosen: any row of x
  const cases = [["000", "es", "x", /^Q\[t\d, 0\] = x\[\d\] · columna 0 de W_q\[0\] = /, /^K\[t\d, 0\] = x\[\d\] · columna 0 de W_k\[0\] = /, "x[t1, 2]"],
                 ["001", "it", "X", /^Q\[word \d, 0\] = X\[\d\] · colonna 0 di W_q = /, /^K\[word \d, 0\] = X\[\d\] · colonna 0 di W_k = /, "X[word 2, 2]"],
                 ["002", "tr", "X", /^Qh\[0\]\[tok\d, 0\] = X\[\d\] · W_q matrisinin 0\. sütunu = /, /^Kh\[0\]\[tok\d, 0\] = X\[\d\] · W_k matrisinin 0\. sütunu = /,
                  "X[tok1, 2]"]];
  try {
    for (const [key, code, x, q, k, cell] of cases) {
      await rendered(() => page.click(`button[data-preset="${key}"]`));
      await setLang(code);
      await page.click("#guided-toggle");
      await page.waitForSelector("#guided-h");
      const lines = await page.$$eval("#guided-formula p", (ps) => ps.map((p) => p.textContent));
      assert.match(lines[0], q, `lesson ${key}`);
      assert.match(lines[1], k, `lesson ${key}`);
      assert.equal(await visible("input-x"), true, "the input's card stays beside the guide");
      assert.equal(await page.$eval("#input-x h3", (h) => h.firstChild.textContent), x, `lesson ${key}: the input's card`);
      await page.hover("#input-x td[data-row='1'][data-col='2']");
      assert.equal((await page.textContent("#input-x .readout")).split(" =")[0], cell, `lesson ${key}: a cell's caption`);
      await page.click("#guided-exit");
    }
  } finally {
    await setLang("en");
    await page.uncheck("#one-scale");
  }
});

finalChecks();
