// End-to-end test of the visualizer page, the guided mode's split into heads: a click (or Enter) on a cell of
// Q or of a head's Qh chooses that query, column and head, and the first step's formula is written in its numbers
// (harness.mjs: the server, Chromium and the helpers).
import assert from "node:assert/strict";
import { api, finalChecks, LESSONS, openPage, page, rendered, test } from "./harness.mjs";

openPage();

const l = LESSONS["002"];
const lesson = { x: l.x, w_q: l.w_q, w_k: l.w_k, w_v: l.w_v, num_heads: 2 };
// The guide's numbers by term: {term: [exact values]}.
const terms = () => page.evaluate(() => {
  const out = {};
  for (const n of document.querySelectorAll("#guided-formula .num")) (out[n.dataset.term] = out[n.dataset.term] || []).push(Number(n.dataset.exact));
  return out;
});
const note = () => page.textContent("#guided-chosen");

test("guided mode: a cell of the split into heads chooses its query, column and head for the formula", async () => {
  await rendered(() => page.click('button[data-preset="002"]'));
  const { json: A } = await api({ ...lesson, return: ["q"] }); // (2, 5, 4): d_k = 4
  await page.click("#guided-toggle");
  await page.waitForSelector("#guided-h");
  assert.match(await page.textContent("#guided-h"), /^Step 1 of 6: Q, K, V/);
  assert.match(await note(), /^The chosen cell: query tok0, key tok0, column 0 of head 0\./);
  // Qh[1][2, 3]: head 1 opens, and Q[2, 3] = X[2] · column 1·4 + 3 of W_q
  await page.click("#split-qh1 td[data-row='2'][data-col='3']");
  await page.waitForSelector("#h1-q");
  assert.match(await note(), /^The chosen cell: query tok2, key tok0, column 3 of head 1\./);
  assert.equal(await page.getAttribute('#group-heads button[data-head="1"]', "aria-pressed"), "true");
  let t = await terms();
  assert.deepEqual(t.a.slice(0, 8), l.x[2]);
  assert.deepEqual(t.b.slice(0, 8), l.w_q.map((r) => r[7]));
  assert.equal(t.result[0], A.q[1][2][3]);
  // the words name the column the product uses: head 1's column 3 is column 1·4 + 3 = 7 of each d × d matrix
  const lines = (await page.innerText("#guided-formula")).split("\n").filter((line) => line.trim());
  for (const [k, w] of [[0, "W_q"], [1, "W_k"], [2, "W_v"]]) assert.match(lines[k], new RegExp(`· column 7 of ${w} = `), lines[k]);
  // Q's column 6 is head 1's column 2: the head stays, the formula follows
  await page.click("#split-q td[data-row='1'][data-col='6']");
  assert.match(await note(), /^The chosen cell: query tok1, key tok0, column 2 of head 1\./);
  t = await terms();
  assert.deepEqual(t.b.slice(0, 8), l.w_q.map((r) => r[6]));
  assert.equal(t.result[0], A.q[1][1][2]);
  // by keyboard: Enter on Q's column 1 opens head 0, and the focus stays on that cell
  await page.focus("#split-q td[data-row='1'][data-col='6']");
  for (const key of ["ArrowLeft", "ArrowLeft", "ArrowLeft", "ArrowLeft", "ArrowLeft", "ArrowDown"]) await page.keyboard.press(key);
  await page.keyboard.press("Enter");
  await page.waitForSelector("#h0-q");
  assert.match(await note(), /^The chosen cell: query tok2, key tok0, column 1 of head 0\./);
  assert.equal((await terms()).result[0], A.q[0][2][1]);
  assert.equal(await page.evaluate(() => { const td = document.activeElement; return `${td.closest(".card").id} ${td.dataset.row} ${td.dataset.col}`; }),
    "split-q 2 1");
  await page.click("#guided-exit");
  await page.uncheck("#one-scale");
});

finalChecks();
