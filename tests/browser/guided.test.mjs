// End-to-end test of the visualizer page, the guided mode: the stages one at a time in pipeline order, each formula
// in the live numbers of the chosen cell, one colour scale, the predict-then-reveal exercise, keyboard and axe-core
// (harness.mjs: the server, Chromium and the helpers).
import assert from "node:assert/strict";
import path from "node:path";
import { api, finalChecks, HERE, LESSONS, openPage, page, rendered, test } from "./harness.mjs";

openPage();

const l = LESSONS["002"];
const lesson = { x: l.x, w_q: l.w_q, w_k: l.w_k, w_v: l.w_v, num_heads: 2 };
const TITLES = ["Q, K, V", "QKᵀ", "÷ √d_k", "mask", "softmax", "· V", "concat", "W_o"];
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
  assert.match(await page.textContent("#guided-h"), /^Step 1 of 8: Q, K, V/);
  for (const [id, on] of [["h0-q", true], ["h0-v", true], ["h0-scores", false], ["h0-weights", false], ["all-output", false], ["group-heads", false]])
    assert.equal(await visible(id), on, `${id} at step 1`);
  let t = await terms();
  assert.deepEqual(t.a.slice(0, 8), l.x[0]);
  assert.deepEqual(t.b.slice(0, 8), l.w_q.map((r) => r[0]));
  assert.equal(t.result[0], A.q[0][0][0]);
  // the keyboard walks the steps: Enter on "Next step", focus stays on it
  await page.focus("#guided-next");
  await page.keyboard.press("Enter");
  assert.match(await page.textContent("#guided-h"), /^Step 2 of 8: QKᵀ/);
  assert.equal(await page.evaluate(() => document.activeElement.id), "guided-next");
  assert.equal(await visible("h0-scores"), true);
  assert.equal(await visible("h0-scaled_scores"), false);
  // a click on a cell chooses it: scores[1 → 2] = Q[1] · K[2]
  await page.click("#h0-scores td[data-row='1'][data-col='2']");
  t = await terms();
  assert.deepEqual(t.a, A.q[0][1]);
  assert.deepEqual(t.b, A.k[0][2]);
  assert.equal(t.result[0], A.scores[0][1][2]);
  const want = [null, null, A.scaled_scores[0][1][2], A.masked_scores[0][1][2], A.weights[0][1][2], A.head_outputs[0][1][0],
                A.concat[1][0], A.output[1][0]];
  for (let k = 2; k < 8; k++) {
    await page.focus("#guided-next");
    await page.keyboard.press("Enter");
    assert.match(await page.textContent("#guided-h"), new RegExp(`^Step ${k + 1} of 8: ${TITLES[k].replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
    assert.equal((await terms()).result[0], want[k], `step ${k + 1}'s value`);
  }
  // the last step: the output, the W_o this lesson does not apply, and no step after it
  assert.equal(await visible("all-output"), true);
  assert.match(await page.textContent("#guided-formula"), /no W_o, the output is the concatenation/);
  assert.equal(await page.isDisabled("#guided-next"), true);
  await page.click("#guided-prev");
  assert.match(await page.textContent("#guided-h"), /^Step 7 of 8: concat/);
  assert.equal(await visible("all-output"), false);
  // the softmax's formula: exp(score − row max) ÷ the row's sum
  for (let k = 0; k < 2; k++) await page.click("#guided-prev");
  t = await terms();
  const row = A.masked_scores[0][1], max = Math.max(...row), sum = row.reduce((s, v) => s + Math.exp(v - max), 0);
  assert.deepEqual([t.a[0], t.max[0]], [row[2], max]);
  assert.ok(Math.abs(t.sum[0] - sum) <= 1e-12 * sum, `the row's sum ${t.sum[0]} vs ${sum}`);
  assert.deepEqual(await axeFindings("#guided"), []);
  await page.click("#guided-exit");
  assert.equal(await visible("guided"), false);
  for (const id of ["h0-scores", "h0-weights", "all-output", "group-heads"]) assert.equal(await visible(id), true, `${id} after leaving`);
  assert.equal(await page.evaluate(() => document.activeElement.id), "guided-toggle");
  await page.uncheck("#one-scale");
});

test("guided mode: predict a row of weights, then reveal them and the difference per entry", async () => {
  await rendered(() => page.click('button[data-preset="001"]'));
  const l1 = LESSONS["001"];
  const { json: A } = await api({ x: l1.x, w_q: l1.w_q, w_k: l1.w_k, w_v: l1.w_v, num_heads: 1, return: ["weights"] });
  await page.click("#guided-toggle");
  await page.waitForSelector("#guided-h");
  await page.click("#h0-q td[data-row='2'][data-col='0']"); // query 2
  for (let k = 0; k < 4; k++) await page.click("#guided-next");
  assert.match(await page.textContent("#guided-h"), /^Step 5 of 8: softmax/);
  await page.check("#guided-predict");
  assert.equal(await visible("h0-weights"), false, "the weights wait for the guess");
  const guesses = ["0.5", "0.25", ""];
  for (const [j, g] of guesses.entries()) await page.fill(`#guided input[data-key='${j}']`, g);
  await page.click("#guided-reveal");
  assert.equal(await visible("h0-weights"), true);
  const got = await page.$$eval("#guided .predict-table tbody tr", (trs) => trs.map((tr) => {
    const w = tr.querySelector("[data-term='weight']"), d = tr.querySelector("[data-term='diff']");
    return [Number(w.dataset.exact), d ? Number(d.dataset.exact) : tr.querySelector(".diff").textContent];
  }));
  assert.deepEqual(got, A.weights[0][2].map((w, j) => [w, guesses[j] === "" ? "—" : Number(guesses[j]) - w]));
  assert.deepEqual(await axeFindings("#guided"), []);
  await page.click("#guided-exit");
  await page.uncheck("#one-scale");
});

// The words of the guide as a person reads them (innerText: what is on screen, hidden parts left out).
const guideText = () => page.innerText("#guided");
const BROKEN = /\bnull|undefined|NaN|\[object|⟦/;

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

finalChecks();
