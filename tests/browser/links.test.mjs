// End-to-end test of the visualizer page, random inputs and short links: the
// preset "Random inputs" (Park–Miller), links that name their source and carry
// only what was typed (harness.mjs: the server, Chromium and the helpers).
import assert from "node:assert/strict";
import { base, context, finalChecks, openHead, openPage, page, rendered, stateWritten, test } from "./harness.mjs";

openPage();

// Park and Miller's minimal standard, as docs/visualizer.md states the preset:
// X the draws 2u − 1, each W the draws times 4/√d, rounded to 3 decimals.
function parkMillerInputs(n, d, heads, seed) {
  let s = seed;
  const draw = () => { s = (s * 16807) % 2147483647; return (2 * s) / 2147483647 - 1; };
  const round = (v) => Math.round(v * 1000) / 1000 || 0;
  const mat = (rows, k) => Array.from({ length: rows }, () => Array.from({ length: d }, () => round(draw() * k)));
  const x = mat(n, 1), w = 4 / Math.sqrt(d);
  return { x, w_q: mat(d, w), w_k: mat(d, w), w_v: mat(d, w), num_heads: heads, tokens: Array.from({ length: n }, (_, i) => `t${i}`) };
}
const sent = async (p = page) => JSON.parse(await p.evaluate(() => window.attentionVisualizer.lastRequestBody));
const inputsOf = (b) => ({ x: b.x, w_q: b.w_q, w_k: b.w_k, w_v: b.w_v, num_heads: b.num_heads, tokens: b.tokens });

// Opens url in a new tab and returns what it sent and shows, then closes it.
async function opened(url) {
  const other = await context.newPage();
  try {
    await other.goto(url);
    await other.waitForFunction(() => window.attentionVisualizer?.renders >= 1 && document.getElementById("results").dataset.state === "ok",
      null, { timeout: 60_000 });
    return {
      body: await sent(other),
      head: await other.evaluate(() => document.querySelector("#group-heads button[aria-pressed='true']")?.dataset.head ?? "0"),
      panels: await other.evaluate(() => [...document.querySelectorAll("details.panel.optional[open]")].map((d) => d.id)),
      oneScale: await other.isChecked("#one-scale"),
      explained: (await other.isVisible("#explain")) ? await other.textContent("#explain-h") : null,
      note: await other.textContent("#preset-note"),
    };
  } finally {
    await other.close();
  }
}

test("random inputs: two clicks show 64 tokens, Park–Miller from the seed; ?random= opens them", async () => {
  await page.click("#random-box > summary");
  const body = await rendered(() => page.click("#random-make"), 60_000);
  assert.deepEqual(inputsOf(body), parkMillerInputs(64, 32, 4, 1), "64 × 32, 4 heads, seed 1 by default");
  assert.match(await page.textContent("#preset-note"), /^Random inputs: random 64 × 32, 4 heads, seed 1/);
  await page.fill("#random-n", "300");
  await page.click("#random-make");
  assert.equal(await page.textContent("#random-error"), "Tokens n must be a whole number from 1 to 256.");
  await page.fill("#random-n", "5");
  await page.fill("#random-d", "6");
  await page.fill("#random-heads", "4");
  await page.click("#random-make");
  assert.equal(await page.textContent("#random-error"), "Heads must divide d = 6.");
  await page.fill("#random-heads", "3");
  await page.fill("#random-seed", "42");
  const small = await rendered(() => page.click("#random-make"));
  assert.deepEqual(inputsOf(small), parkMillerInputs(5, 6, 3, 42));
  const got = await opened(`${base}?random=5x6&heads=3&seed=42`);
  assert.deepEqual(inputsOf(got.body), parkMillerInputs(5, 6, 3, 42), "the link opens the same numbers");
  await page.click("#random-box > summary");
});

test("short links: a lesson or a seed and what was typed, under 2,000 characters; the head, panels, colour scale and explanation come back", async () => {
  const lengths = [];
  const cases = [["lesson 002", null], ["random 64", [64, 64, 16]], ["random 128", [128, 64, 16]], ["random 256", [256, 64, 16]]];
  for (const [name, r] of cases) {
    if (!r) await rendered(() => page.click('button[data-preset="002"]'));
    else {
      await page.click("#random-box > summary");
      for (const [id, v] of [["n", r[0]], ["d", r[1]], ["heads", r[2]], ["seed", 7]]) await page.fill(`#random-${id}`, String(v));
      await rendered(() => page.click("#random-make"), 60_000);
      await page.click("#random-box > summary");
    }
    // head 1 open, two panels, one colour scale; typed: the causal mask, one number of W_q, labels
    await page.check("#one-scale");
    await openHead(1);
    await page.click("#position-panel > summary");
    await page.click("#share-panel > summary");
    if (!r) await page.click('#h1-weights td[data-row="2"][data-col="1"]'); // an explanation open
    await rendered(() => page.check("#causal"), 60_000);
    const w = (await sent()).w_q;
    w[0][0] = 0.5;
    if (!(await page.locator("#text-w_q").isVisible())) await page.click('#field-w_q .seg label:has(input[value="text"])');
    await rendered(() => page.fill("#text-w_q", JSON.stringify(w)), 60_000);
    await rendered(() => page.fill("#tokens", "the, cat, sat"), 60_000);
    await stateWritten(60_000);
    const link = await page.inputValue("#share-link");
    lengths.push(`${name}: ${link.length}`);
    assert.ok(link.length > 0 && link.length <= 2000, `${name}: a link of ${link.length} characters`);
    assert.equal(await page.isVisible("#link-too-long"), false);
    assert.match(link, r ? new RegExp(`\\?random=${r[0]}x${r[1]}&heads=${r[2]}&seed=7#s=`) : /\?lesson=002#s=/);
    const want = await sent();
    const got = await opened(link);
    assert.deepEqual(got.body, want, `${name}: the same request`);
    assert.equal(got.head, "1");
    assert.deepEqual(got.panels.sort(), ["position-panel", "share-panel"]);
    assert.equal(got.oneScale, true);
    assert.equal(got.explained, r ? null : "weights[sat → cat], head 1: how it was computed");
    if (!r) await page.click("#explain-close");
    assert.match(got.note, /^Restored from a link/);
    await page.click("#position-panel > summary");
    await page.click("#share-panel > summary");
    await page.uncheck("#one-scale");
    await openHead(0);
  }
  console.log(`short link lengths (characters, on ${base}): ${lengths.join(", ")}`);
  await rendered(() => page.click('button[data-preset="001"]'));
});

test("a link too long says so and offers the snapshot; an older #state= link still opens", async () => {
  await rendered(() => page.click('button[data-preset="002"]'));
  await page.click("#share-panel > summary");
  // typed from scratch: 48 × 32 numbers of X no source has
  let s = 3;
  const rnd = () => { s = (s * 16807) % 2147483647; return (s % 2000000) / 1e6 - 1; };
  const x = Array.from({ length: 48 }, () => Array.from({ length: 8 }, rnd));
  await page.click('#field-x .seg label:has(input[value="text"])');
  await rendered(() => page.fill("#text-x", JSON.stringify(x)));
  assert.equal(await page.inputValue("#share-link"), "");
  assert.equal(await page.isVisible("#link-too-long"), true);
  const len = Number((await page.textContent("#link-length")).replace(/,/g, ""));
  assert.ok(len > 2000, `${len} characters`);
  assert.equal(await page.isDisabled("#copy-link"), true);
  // the address still reloads the page
  const got = await opened(await page.evaluate(() => location.href));
  assert.deepEqual(got.body.x, x);
  await page.click('#field-x .seg label:has(input[value="grid"])');
  await page.click("#share-panel > summary");
  // the #state= link the Python client writes: the whole body, deflated
  const state = await page.evaluate(async () => {
    const json = JSON.stringify({ body: { x: [[1, 0], [0, 1]], w_q: [[1, 0], [0, 1]], w_k: [[1, 0], [0, 1]], w_v: [[1, 0], [0, 1]], num_heads: 1 } });
    const stream = new Blob([json]).stream().pipeThrough(new CompressionStream("deflate-raw"));
    const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
    return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  });
  const old = await opened(`${base}#state=${state}`);
  assert.deepEqual(old.body.x, [[1, 0], [0, 1]]);
  assert.equal(old.body.num_heads, 1);
  await rendered(() => page.click('button[data-preset="001"]'));
});

finalChecks();
