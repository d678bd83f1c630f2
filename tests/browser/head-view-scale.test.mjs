// End-to-end test of the visualizer page, the head view's colour scale: the small multiples' scale (0 to the
// largest weight of any head with "One colour scale", else to the head's own), its legend saying what the darkest
// colour is, so that at 64 keys the weights show (harness.mjs: the server, Chromium and the helpers).
import assert from "node:assert/strict";
import { api, base, finalChecks, openPage, page, test } from "./harness.mjs";

openPage();

test("head view: coloured on the small multiples' scale, to the largest weight, and its legend says which", async () => {
  await page.goto(`${base}?random=64x32&heads=4&seed=1`);
  await page.waitForFunction(() => window.attentionVisualizer?.renders >= 1 && document.getElementById("results").dataset.state === "ok");
  const body = JSON.parse(await page.evaluate(() => window.attentionVisualizer.lastRequestBody));
  const { x, w_q, w_k, w_v, num_heads } = body;
  const { json } = await api({ x, w_q, w_k, w_v, num_heads, return: ["weights"] });
  const W = json.weights; // (4, 64, 64)
  const tops = W.map((m) => Math.max(...m.flat())), all = Math.max(...tops);
  const { css } = await page.evaluate(() => window.attentionVisualizer.PALETTES.seq);
  const fmt = (v) => page.evaluate((a) => window.attentionVisualizer.fmt(a), v);
  // 64 × 64 pairs: query 0's lines; its strongest, and its colour on a scale to `top`
  const row = W[0][0], w = Math.max(...row), k = row.indexOf(w);
  assert.ok(w < 0.5, `every weight of 64 keys is small (${w}): on a scale to 1 its line would be pale`);
  const line = async () => page.$eval(`#h0-lines line[data-q="0"][data-k="${k}"]`, (l) => {
    const c = getComputedStyle(l);
    return { w: Number(l.dataset.w), stroke: c.stroke, width: Number(l.getAttribute("stroke-width")), opacity: Number(c.strokeOpacity) };
  });
  const rgb = (c) => c.replaceAll(",", ", "); // the palette's "rgb(8,29,88)" as the computed style writes it
  const look = (top) => ({ w, stroke: rgb(css[Math.round((w / top) * 255)]), width: Number((0.5 + 5 * (w / top)).toFixed(2)),
                           opacity: Number((0.6 + 0.4 * (w / top)).toFixed(3)) });
  try {
    // apart, each head runs to its own largest weight
    await page.uncheck("#one-scale");
    await page.waitForFunction(() => document.querySelector("#h0-lines .legend")?.textContent.includes("own scale"));
    assert.deepEqual(await line(), look(tops[0]));
    assert.equal(await page.textContent("#h0-lines .legend"), `0${await fmt(tops[0])}head 0's own scale: its darkest is its largest weight`);
    assert.equal(await page.textContent("#heads-legend"), `0its largesteach head on its own scale, its darkest its largest weight: `
      + (await Promise.all(tops.map(async (t, h) => `head ${h} ${await fmt(t)}`))).join(", "));
    // one colour scale: every head, the head view and the small multiples, to the largest weight of any head
    await page.check("#one-scale");
    await page.waitForFunction(() => document.querySelector("#h0-lines .legend")?.textContent.includes("one scale"));
    assert.deepEqual(await line(), look(all));
    const one = `0${await fmt(all)}one scale for every head: its darkest is the largest weight of any head`;
    assert.equal(await page.textContent("#h0-lines .legend"), one);
    assert.equal(await page.textContent("#heads-legend"), one);
  } finally {
    await page.uncheck("#one-scale");
  }
});

finalChecks();
