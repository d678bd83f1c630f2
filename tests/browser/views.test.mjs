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
      assert.match(await legend(id), /one scale for every score stage \(QKᵀ, scaled, masked\)$/);
    }
    for (const id of ["h0-q", "h0-k", "h0-v"]) assert.match(await legend(id), /one scale for Q, K and V$/);
    assert.equal(await legend("h0-q"), await legend("h0-v"));
    await page.uncheck("#one-scale");
    await page.waitForFunction(() => !document.querySelector("#h0-scores .legend").textContent.includes("one scale"));
    assert.equal(await colour("h0-scores"), await colour("h0-scaled_scores"), "apart, each card runs to its own maximum");
    assert.match(await legend("h0-scores"), /this card's own scale, to its largest magnitude$/);
  } finally {
    await page.check("#one-scale");
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

// A matrix measures its numbers in the --mono of the element it is drawn in: an embed's shadow root (or a course
// page) sets its own, which document.body does not hold.
test("a matrix measures its numbers in its own element's --mono (a shadow root's), not the page body's", async () => {
  const got = await page.evaluate(async () => {
    const { monoFont } = await import(new URL("web/matrix.js", location.href));
    const host = document.body.appendChild(document.createElement("div"));
    const inner = host.attachShadow({ mode: "open" }).appendChild(document.createElement("div"));
    inner.style.setProperty("--mono", '"Liberation Mono", monospace');
    const out = { inside: monoFont(inner), page: monoFont(document.querySelector("#results") || document.body) };
    host.remove();
    return out;
  });
  assert.match(got.inside, /^1[12]px "Liberation Mono", monospace$/);
  assert.match(got.page, /^1[12]px ui-monospace/);
});

test("head view: one SVG line per pair, as thick as its weight on the head's scale; long inputs draw one query's lines", async () => {
  const l = LESSONS["002"];
  await rendered(() => page.click('button[data-preset="002"]'));
  await openHead(1);
  const { json } = await api({ x: l.x, w_q: l.w_q, w_k: l.w_k, w_v: l.w_v, num_heads: 2, return: ["weights"] });
  const lines = () => page.$$eval("#h1-lines line", (ls) => ls.map((x) => [Number(x.dataset.q), Number(x.dataset.k), Number(x.dataset.w),
    Number(x.getAttribute("stroke-width"))]));
  const drawn = await lines(); // "One colour scale" (the default): every head from 0 to 1
  assert.equal(drawn.length, 25, "5 × 5 pairs, every weight above 0");
  for (const [q, k, w, width] of drawn) {
    assert.equal(w, json.weights[1][q][k]);
    assert.equal(width, Number((1 + 4 * w).toFixed(2)));
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

test("every head's weights: a legend, query and key axes, exact values by pointer and keys; 128 tokens' peaks show", async () => {
  const c = bigCase(128, 32, 4);
  await typeCase(c);
  await page.check("#one-scale");
  const { json } = await api({ ...c, return: ["weights"] });
  const W = json.weights; // (4, 128, 128)
  const top = Math.max(...W.flat(2));
  const { PALETTES } = await page.evaluate(() => ({ PALETTES: window.attentionVisualizer.PALETTES }));
  // the legend: colour → value, from 0 to 1 in every head ("One colour scale"); apart, each head to its own largest
  assert.equal(await page.textContent("#heads-legend"), "01every head from 0 to 1: one colour is one weight in every head");
  await page.uncheck("#one-scale");
  await page.waitForFunction(() => document.getElementById("heads-legend").textContent.includes("own scale"));
  // axes on each head
  for (let k = 0; k < 4; k++) {
    assert.equal(await page.textContent(`#group-heads button[data-head="${k}"] .sm-x`), "key 0…127 →");
    assert.equal(await page.textContent(`#group-heads button[data-head="${k}"] .sm-y`), "query 0…127 ↓");
  }
  // the largest weight is the darkest colour, in the pixel that holds it (120 px for 128 keys)
  const k = W.findIndex((m) => m.flat().includes(top)), at = W[k].flat().indexOf(top), [i, j] = [Math.floor(at / 128), at % 128];
  // pixel x of 120 stands for cells ⌊x·128/120⌋ … ⌊(x + 1)·128/120⌋ − 1
  const pixel = (cell) => { let x = 0; while (x + 1 < 120 && Math.floor(((x + 1) * 128) / 120) <= cell) x++; return x; };
  const px = await page.evaluate(([h, x, y]) => Array.from(document.querySelector(`#group-heads button[data-head="${h}"] canvas`)
    .getContext("2d").getImageData(x, y, 1, 1).data.slice(0, 3)), [k, pixel(j), pixel(i)]);
  assert.deepEqual(px, PALETTES.seq.rgb[255], "the peak is drawn dark, not blank");
  // every row's peak is drawn in its colour on the legend's scale: none is lost to the 120 px of 128 keys
  const image = await page.evaluate((h) => Array.from(document.querySelector(`#group-heads button[data-head="${h}"] canvas`)
    .getContext("2d").getImageData(0, 0, 120, 120).data), k);
  for (let r = 0; r < 128; r++) {
    const peak = Math.max(...W[k][r]), c = W[k][r].indexOf(peak), o = 4 * (pixel(r) * 120 + pixel(c));
    // the pixel shows the largest weight of the cells it stands for: the peak, or a larger neighbour's
    let block = 0;
    for (let i = 0; i < 128; i++) for (let j = 0; j < 128; j++) if (pixel(i) === pixel(r) && pixel(j) === pixel(c)) block = Math.max(block, W[k][i][j]);
    const want = PALETTES.seq.rgb[Math.round((block / top) * 255)];
    assert.deepEqual(image.slice(o, o + 3), want, `head ${k}, query ${r}'s peak`);
  }
  // the pointer reads a weight's exact value (lesson 002: a cell is 24 px wide)
  await rendered(() => page.click('button[data-preset="002"]'));
  const l = LESSONS["002"];
  const { json: small } = await api({ x: l.x, w_q: l.w_q, w_k: l.w_k, w_v: l.w_v, num_heads: 2, return: ["weights"] });
  await page.locator(`#group-heads button[data-head="1"] canvas`).scrollIntoViewIfNeeded();
  const box = await page.locator(`#group-heads button[data-head="1"] canvas`).boundingBox();
  await page.mouse.move(box.x + ((3 + 0.5) * box.width) / 5, box.y + ((2 + 0.5) * box.height) / 5);
  assert.equal(await page.textContent("#heads-readout"), `head 1: A[1][tok2 → tok3] = ${String(small.weights[1][2][3]).replace(/-/g, "−")}`);
  // and so do the keys, on a focused head
  await page.focus(`#group-heads button[data-head="1"]`);
  for (const key of ["ArrowDown", "ArrowRight", "ArrowRight"]) await page.keyboard.press(key);
  assert.equal(await page.textContent("#heads-readout"), `head 1: A[1][tok1 → tok2] = ${String(small.weights[1][1][2]).replace(/-/g, "−")}`);
  await page.check("#one-scale");
});

finalChecks();
