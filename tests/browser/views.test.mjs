// End-to-end test of the visualizer page, the views: compare, accessibility (axe-core), the head view
// (harness.mjs: the server, Chromium and the helpers).
import assert from "node:assert/strict";
import fs from "node:fs";
import { api, axeViolations, bigCase, downloaded, explanation, finalChecks, LESSONS, openHead, openPage, page, panel, rendered, svgCells, test, typeCase, values } from "./harness.mjs";

openPage();

test("one colour scale: Q, K and V share one scale, the score stages another, and the legends say so", async () => {
  await rendered(() => page.click('button[data-preset="002"]'));
  const colour = (id) => page.$eval(`#${id} td[data-row="0"][data-col="0"]`, (td) => getComputedStyle(td).backgroundColor);
  const legend = (id) => page.textContent(`#${id} .legend`);
  try {
    await page.check("#one-scale");
    await page.waitForFunction(() => document.querySelector("#h0-scores .legend").textContent.includes("one scale"));
    assert.notEqual(await colour("h0-scores"), await colour("h0-scaled_scores"), "scaling by 1/√4 shows as a paler colour");
    for (const id of ["h0-scores", "h0-scaled_scores", "h0-masked_scores"]) {
      assert.equal(await legend(id), await legend("h0-scores"));
      assert.match(await legend(id), /one scale for every score stage$/);
    }
    for (const id of ["h0-q", "h0-k", "h0-v"]) assert.match(await legend(id), /one scale for Q, K and V$/);
    assert.equal(await legend("h0-q"), await legend("h0-v"));
    await page.uncheck("#one-scale");
    await page.waitForFunction(() => !document.querySelector("#h0-scores .legend").textContent.includes("one scale"));
    assert.equal(await colour("h0-scores"), await colour("h0-scaled_scores"), "apart, each card runs to its own maximum");
  } finally {
    await page.uncheck("#one-scale");
  }
});

test("compare: two heads, float64 against float32, with and without the masks, as a difference heatmap", async () => {
  const l = LESSONS["002"];
  const lesson = { x: l.x, w_q: l.w_q, w_k: l.w_k, w_v: l.w_v, num_heads: 2, tokens: l.tokens };
  await rendered(() => page.click('button[data-preset="002"]'));
  await panel("compare-panel");
  const compared = async (action) => {
    await action();
    await page.waitForFunction(() => document.getElementById("group-compare")?.dataset.state === "ok");
  };
  const { json: f64 } = await api({ ...lesson, return: ["weights", "output"] });
  await compared(() => page.selectOption("#compare-kind", "heads"));
  assert.equal(await page.textContent("#compare-state"), "head 0 − head 1");
  assert.deepEqual(await values("cmp-weights"), f64.weights[0].flat().map((a, k) => a - f64.weights[1].flat()[k]));
  assert.equal(await page.textContent("#cmp-weights h3 .shape"), "(5, 5)");
  await page.click("#cmp-weights td[data-row='2'][data-col='1']");
  const ex = await explanation();
  assert.deepEqual([ex.a, ex.b], [[f64.weights[0][2][1]], [f64.weights[1][2][1]]]);
  await page.click("#explain-close");
  // the other precision: a second request, the open head's weights and the outputs subtracted
  const { json: f32 } = await api({ ...lesson, dtype: "float32", return: ["weights", "output"] });
  await compared(() => page.selectOption("#compare-kind", "dtype"));
  // a float32 reply's shortest decimals read back through Math.fround are its numbers
  const dw = f64.weights[0].flat().map((a, k) => a - Math.fround(f32.weights[0].flat()[k]));
  assert.deepEqual(await values("cmp-weights"), dw);
  assert.deepEqual(await values("cmp-output"), f64.output.flat().map((a, k) => a - Math.fround(f32.output.flat()[k])));
  // a difference heatmap exports as any other: its SVG carries the differences
  await panel("share-panel");
  await page.selectOption("#export-stage", "cmp-weights");
  const svg = await downloaded(() => page.click('button[data-export="svg"]'));
  assert.equal(svg.name, "cmp-weights.svg");
  assert.deepEqual(svgCells(fs.readFileSync(svg.file, "utf8")).map((r) => r.value), dw);
  await panel("share-panel", false);
  assert.ok(dw.some((d) => d !== 0) && Math.max(...dw.map(Math.abs)) < 1e-6, "float32 differs in its last digits");
  // the masks: causal weights minus the unmasked ones
  const { json: causal } = await api({ ...lesson, causal: true, return: ["weights", "output"] });
  await rendered(() => page.check("#causal"));
  await compared(() => page.selectOption("#compare-kind", "mask"));
  assert.deepEqual(await values("cmp-weights"), causal.weights[0].flat().map((a, k) => a - f64.weights[0].flat()[k]));
  assert.equal(await page.textContent("#compare-state"), "with − without the masks");
  await page.selectOption("#compare-kind", "off");
  await page.waitForFunction(() => document.getElementById("group-compare").hidden);
  await panel("compare-panel", false);
  await rendered(() => page.uncheck("#causal"));
});


test("axe-core finds no serious or critical accessibility violation (lessons, canvas, explanation, phone)", async () => {
  await rendered(() => page.click('button[data-preset="002"]'));
  await page.click("#mask-panel > summary");
  await page.click("#share-panel > summary");
  // and every control of the API's features: biases, positions, RoPE, the cache, a batch, the compare panel,
  // the mask builder (one per head, as numbers)
  const more = ["weights-panel", "position-panel", "cache-panel", "batch-panel", "compare-panel"];
  for (const id of more) await panel(id);
  await page.check("#use-bias");
  await page.check("#use-cache");
  await page.check("#use-mask");
  await page.selectOption("#mask-per", "head");
  await page.selectOption("#mask-kind", "add");
  await page.selectOption("#alibi", "slopes");
  await page.selectOption("#compare-kind", "heads");
  assert.deepEqual(await axeViolations(), [], "lesson 002, every panel open");
  await page.selectOption("#compare-kind", "off");
  for (const id of more) await panel(id, false);
  await rendered(() => page.click('button[data-preset="002"]'));
  await page.click('#h0-weights td[data-row="1"][data-col="2"]');
  assert.deepEqual(await axeViolations(), [], "with an explanation open");
  await page.click("#explain-close");
  await page.click("#mask-panel > summary");
  await page.click("#share-panel > summary");
  await typeCase(bigCase(64, 32, 4));
  assert.deepEqual(await axeViolations(), [], "64 tokens: canvases");
  await page.setViewportSize({ width: 390, height: 844 });
  try {
    await rendered(() => page.click('button[data-preset="001"]'));
    assert.deepEqual(await axeViolations(), [], "a phone");
  } finally {
    await page.setViewportSize({ width: 1280, height: 900 });
  }
});

test("head view: one SVG line per pair, as thick as its weight; long inputs draw one query's lines", async () => {
  const l = LESSONS["002"];
  await rendered(() => page.click('button[data-preset="002"]'));
  await openHead(1);
  const { json } = await api({ x: l.x, w_q: l.w_q, w_k: l.w_k, w_v: l.w_v, num_heads: 2, return: ["weights"] });
  const lines = () => page.$$eval("#h1-lines line", (ls) => ls.map((x) => [Number(x.dataset.q), Number(x.dataset.k), Number(x.dataset.w),
    Number(x.getAttribute("stroke-width"))]));
  const drawn = await lines();
  assert.equal(drawn.length, 25, "5 × 5 pairs, every weight above 0");
  for (const [q, k, w, width] of drawn) {
    assert.equal(w, json.weights[1][q][k]);
    assert.equal(width, Number((0.5 + 5 * w).toFixed(2)));
  }
  await page.hover('#h1-weights td[data-row="2"][data-col="3"]');
  assert.deepEqual(await page.$$eval("#h1-lines line.hl", (ls) => ls.map((x) => [x.dataset.q, x.dataset.k])), [["2", "3"]]);
  await page.focus("#h1-lines svg");
  await page.keyboard.press("ArrowDown");
  assert.match(await page.textContent("#h1-lines .readout"), /^tok1 attends most: /);
  await openHead(0);
  const c = bigCase(64, 32, 4);
  await typeCase(c);
  assert.equal(await page.locator("#h0-lines line").count(), 64, "64 × 64 pairs: only query 0's lines");
  await page.focus("#h0-lines svg");
  await page.keyboard.press("ArrowDown");
  assert.deepEqual(new Set(await page.$$eval("#h0-lines line", (ls) => ls.map((x) => x.dataset.q))), new Set(["1"]));
});

finalChecks();
