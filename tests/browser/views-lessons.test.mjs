// End-to-end test of the visualizer page, the cards as a student of each lesson reads them: each card's title
// says which matrix it is (QKᵀ before the division, the scaled scores after it) and which of the lesson's own
// variables it is (lesson 000's and 002's `scores` / `skor` are already divided by √d_k); and the Compare
// result drawn under its control, in view (harness.mjs: the server, Chromium and the helpers).
import assert from "node:assert/strict";
import { api, finalChecks, LESSONS, openHead, openPage, page, panel, rendered, shown, test } from "./harness.mjs";

openPage();

const title = (id) => page.$eval(`#${id} h3`, (h) => h.textContent);
const cell = (id, i, j) => page.$eval(`#${id} td[data-row="${i}"][data-col="${j}"]`, (td) => td.textContent);

test("lesson 000: its `scores` is the scaled scores' card, and the QKᵀ card says it is not the lesson's", async () => {
  await rendered(() => page.click('button[data-preset="000"]'));
  const l = LESSONS["000"];
  const { json } = await api({ x: l.x, w_q: l.w_q, w_k: l.w_k, w_v: l.w_v, num_heads: 2, return: ["scores", "scaled_scores"] });
  assert.match(await title("h0-scores"), /^QKᵀ \(raw scores, not yet divided by √d_k\)not in lesson 000: its scores is already divided by √d_k \(the next card\)\(3, 3\)/);
  assert.match(await title("h0-scaled_scores"), /^Scaled scores = QKᵀ\/√d_klesson 000: scores\(3, 3\)/);
  assert.match(await title("h0-weights"), /lesson 000: attention_weights/);
  assert.match(await title("h0-head_outputs"), /lesson 000: head_output/);
  assert.match(await title("all-concat"), /lesson 000: multi_head_output/);
  // the student's own scores[t0, t0] (Q @ K.T / np.sqrt(head_dim)) is the number in the card that says `scores`
  assert.equal(await cell("h0-scaled_scores", 0, 0), shown(json.scaled_scores[0][0][0]));
  assert.notEqual(await cell("h0-scores", 0, 0), await cell("h0-scaled_scores", 0, 0));
});

test("lesson 001 names both: scores (QKᵀ) and scaled_scores", async () => {
  await rendered(() => page.click('button[data-preset="001"]'));
  assert.match(await title("h0-scores"), /^QKᵀ \(raw scores, not yet divided by √d_k\)lesson 001: scores\(/);
  assert.match(await title("h0-scaled_scores"), /^Scaled scores = QKᵀ\/√d_klesson 001: scaled_scores\(/);
  assert.match(await title("h0-weights"), /lesson 001: attention_weights/);
});

test("lesson 002: skor[h] of the open head is the scaled scores; an edit that masks keys drops the lesson's names", async () => {
  await rendered(() => page.click('button[data-preset="002"]'));
  assert.match(await title("h0-scaled_scores"), /lesson 002: skor\[0\]/);
  assert.match(await title("h0-scores"), /not in lesson 002: its skor\[0\] is already divided by √d_k/);
  await openHead(1);
  assert.match(await title("h1-scaled_scores"), /lesson 002: skor\[1\]/);
  assert.match(await title("h1-q"), /lesson 002: Qh\[1\]/);
  await rendered(() => page.check("#causal"));
  assert.doesNotMatch(await title("h1-scaled_scores"), /lesson/, "the lesson has no mask: its skor is not the masked pipeline's");
  await rendered(() => page.uncheck("#causal"));
  await openHead(0);
});

test("compare: the result is drawn right under its control and brought into view", async () => {
  await panel("compare-panel");
  try {
    await page.selectOption("#compare-kind", "heads");
    await page.waitForSelector("#group-compare[data-state=ok]");
    const where = await page.evaluate(() => ({ control: document.getElementById("compare-panel").getBoundingClientRect().bottom,
      result: document.getElementById("group-compare").getBoundingClientRect().top, H: window.innerHeight }));
    assert.ok(where.result - where.control >= 0 && where.result - where.control < 40, `the result is ${where.result - where.control} px below its control`);
    assert.ok(where.result >= -1 && where.result < where.H, `the result's top at ${where.result} px, the window ${where.H} px high`);
    assert.match(await page.textContent("#group-compare h2"), /^Compare: head 0 − head 1/);
  } finally {
    await page.selectOption("#compare-kind", "off");
    await panel("compare-panel", false);
  }
});

finalChecks();
