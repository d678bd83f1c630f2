// End-to-end test of the visualizer page, the lessons read exactly as they are
// written: each card names the matrices the lesson has
// (harness.mjs: the server, Chromium and the helpers).
import assert from "node:assert/strict";
import { finalChecks, openHead, openPage, page, rendered, test } from "./harness.mjs";

openPage();

const formula = (id) => page.textContent(`#${id} .formula`);

test("lesson 000: each head's cards name its own matrix of the 2×6×3 stacks, never columns of one matrix", async () => {
  await rendered(() => page.click('button[data-preset="000"]'));
  for (const h of [0, 1]) {
    await openHead(h);
    assert.equal(await formula(`h${h}-q`), `X · W_q[${h}] (head ${h}'s own 6×3 matrix of the 2×6×3 stack)`);
    assert.equal(await formula(`h${h}-k`), `X · W_k[${h}]`);
    assert.equal(await formula(`h${h}-v`), `X · W_v[${h}]`);
    assert.doesNotMatch(await page.textContent("#group-head"), /columns/);
    await page.click(`#h${h}-q td[data-row="0"][data-col="1"]`);
    assert.match(await page.textContent("#explain"), new RegExp(`times column 1 of W_q\\[${h}\\] \\(head ${h}'s own matrix\\)`));
  }
  // lesson 002's W_q is one 8×8 matrix: each head takes a block of its columns
  await rendered(() => page.click('button[data-preset="002"]'));
  await openHead(1);
  assert.equal(await formula("h1-q"), "X · W_q (this head's columns 4…7)");
  assert.equal(await formula("h1-k"), "X · W_k");
});

finalChecks();
