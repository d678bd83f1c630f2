// End-to-end test of the visualizer page, the weights' colour scale (weight-scale.js): by default ("One colour
// scale") every head, the small multiples and the head view run from 0 to 1, so that lesson 000's near-uniform
// weights (0.19 … 0.44) stay pale where a sharp head is dark, and the score stages share one scale, so that the
// division by √d_k shows; apart, each head runs to its own largest weight, its legend saying so; and the head
// view's lines at 64 keys stay visible (harness.mjs: the server, Chromium and the helpers).
import assert from "node:assert/strict";
import { api, base, finalChecks, LESSONS, openPage, page, rendered, test } from "./harness.mjs";

openPage();

const pixelsOf = (h) => page.evaluate((k) => {
  const c = document.querySelector(`#group-heads button[data-head="${k}"] canvas`);
  const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data, out = [];
  for (let p = 0; p < d.length; p += 4) out.push([d[p], d[p + 1], d[p + 2]]);
  return out;
}, h);

test("lesson 000 by default: weights from 0 to 1 (not as peaked as a sharp head), scores and scaled scores apart", async () => {
  assert.equal(await page.isChecked("#one-scale"), true, "one colour scale is the default");
  await rendered(() => page.click('button[data-preset="000"]'));
  const l = LESSONS["000"];
  const { json } = await api({ x: l.x, w_q: l.w_q, w_k: l.w_k, w_v: l.w_v, num_heads: 2, return: ["weights"] });
  const { PALETTES } = await page.evaluate(() => ({ PALETTES: window.attentionVisualizer.PALETTES }));
  const seq = PALETTES.seq.rgb;
  for (const h of [0, 1]) {
    const top = Math.max(...json.weights[h].flat());
    assert.ok(top < 0.5, `lesson 000's head ${h} is near uniform (largest weight ${top})`);
    // the small multiple: its darkest pixel is its largest weight on the scale to 1, not the palette's end
    const px = await pixelsOf(h), want = seq[Math.round(top * 255)];
    assert.ok(px.some((p) => p.join() === want.join()), `head ${h}: its largest weight drawn as ${want}`);
    assert.ok(!px.some((p) => p.join() === seq[255].join()), `head ${h}: no pixel as dark as a weight of 1`);
  }
  assert.equal(await page.textContent("#heads-legend"), "01every head from 0 to 1: one colour is one weight in every head");
  // the head view: lines as thick as the weight on the scale to 1 (a weight of 1 would be 5 px)
  const widths = await page.$$eval("#h0-lines line", (ls) => ls.map((x) => Number(x.getAttribute("stroke-width"))));
  assert.ok(Math.max(...widths) < 3, `lesson 000's widest line ${Math.max(...widths)} px, not a sharp head's 5`);
  assert.equal(await page.textContent("#h0-lines .legend"), "01every head from 0 to 1: one colour is one weight in every head");
  // the score stages on one scale: QKᵀ and QKᵀ/√3 do not look the same
  const colour = (id) => page.$eval(`#${id} td[data-row="0"][data-col="0"]`, (td) => getComputedStyle(td).backgroundColor);
  assert.notEqual(await colour("h0-scores"), await colour("h0-scaled_scores"));
});

test("each head its own scale when asked, its legend naming each head's darkest weight", async () => {
  await page.goto(`${base}?random=64x32&heads=4&seed=1`);
  await page.waitForFunction(() => window.attentionVisualizer?.renders >= 1 && document.getElementById("results").dataset.state === "ok");
  const body = JSON.parse(await page.evaluate(() => window.attentionVisualizer.lastRequestBody));
  const { x, w_q, w_k, w_v, num_heads } = body;
  const { json } = await api({ x, w_q, w_k, w_v, num_heads, return: ["weights"] });
  const tops = json.weights.map((m) => Math.max(...m.flat()));
  const fmt = (v) => page.evaluate((a) => window.attentionVisualizer.fmt(a), v);
  try {
    await page.uncheck("#one-scale");
    await page.waitForFunction(() => document.querySelector("#h0-lines .legend")?.textContent.includes("own scale"));
    assert.equal(await page.textContent("#h0-lines .legend"), `0${await fmt(tops[0])}head 0's own scale: its darkest is its largest weight`);
    assert.equal(await page.textContent("#heads-legend"), `0its largesteach head on its own scale, its darkest its largest weight: `
      + (await Promise.all(tops.map(async (t, h) => `head ${h} ${await fmt(t)}`))).join(", "));
  } finally {
    await page.check("#one-scale");
  }
});

test("head view at 64 keys: every line at least 3:1 against white and 1 px wide, on the scale to 1", async () => {
  await page.waitForFunction(() => document.querySelector("#h0-lines .legend")?.textContent.includes("from 0 to 1"));
  const lines = await page.$$eval("#h0-lines line", (ls) => ls.map((l) => ({ stroke: getComputedStyle(l).stroke,
    width: Number(l.getAttribute("stroke-width")), opacity: Number(getComputedStyle(l).strokeOpacity), w: Number(l.dataset.w) })));
  assert.equal(lines.length, 64, "64 × 64 pairs: query 0's lines");
  const contrast = await page.evaluate((ls) => ls.map((l) => {
    // the line over white at its opacity
    const rgb = l.stroke.match(/\d+/g).map(Number).map((c) => c * l.opacity + 255 * (1 - l.opacity));
    return 1.05 / (window.attentionVisualizer.luminance(rgb) + 0.05);
  }), lines);
  for (const [k, c] of contrast.entries()) {
    assert.ok(c >= 3, `line ${k} (weight ${lines[k].w}): contrast ${c.toFixed(2)} against white`);
    assert.ok(lines[k].width >= 1, `line ${k}: ${lines[k].width} px`);
  }
});

finalChecks();
