// End-to-end test of the visualizer page, the budget: one edit's page work at 32, 128 and 256 tokens
// (harness.mjs: the server, Chromium and the helpers).
import assert from "node:assert/strict";
import os from "node:os";
import { api, bigCase, EDIT_BUDGET_MS, explanation, finalChecks, openPage, page, rendered, shot, test, typeCase } from "./harness.mjs";

openPage();

test("one edit costs the page at most 300 ms at n = 32, 128 and 256 (8 and 16 heads); a matrix off screen is drawn when scrolled to", async () => {
  const lines = [];
  const load = () => Math.max(1, os.loadavg()[0] / os.cpus().length);
  for (const [n, h] of [[32, 8], [128, 8], [256, 16], [256, 8]]) {
    await typeCase(bigCase(n, 64, h), 60_000);
    const runs = [];
    for (const scale of ["0.3", "0.4"]) {
      await rendered(() => page.fill("#scale", scale), 60_000);
      runs.push(await page.evaluate(() => window.attentionVisualizer.timings));
    }
    const best = runs.reduce((a, b) => (b.page_ms < a.page_ms ? b : a));
    const busy = load();
    lines.push(`n=${n} d=64 h=${h}: page ${best.page_ms.toFixed(0)} ms per edit (decode ${best.decode_ms.toFixed(0)}, `
      + `draw ${best.render_ms.toFixed(0)}, frame ${best.frame_ms.toFixed(0)}); server and transfer `
      + `${best.server_ms.toFixed(0)} ms for ${(best.reply_bytes / 1e6).toFixed(1)} MB; load ${busy.toFixed(1)} per core`);
    if (n === 256 && h === 8) await shot("tokens-256.png");
    const worst = await page.evaluate(() => document.documentElement.scrollHeight);
    assert.ok(worst < 12000, `the page is ${worst} px tall at n = ${n}`);
    assert.ok(best.page_ms <= EDIT_BUDGET_MS * busy, lines[lines.length - 1]);
  }
  // what each edit leaves in the page's history entry stays small: no mask checkbox while no mask is
  // used (256 × 256 of them took seconds per edit), no copy of the big text boxes
  assert.equal(await page.locator("#mask-grid input, #padding-area input").count(), 0);
  const linkMs = await page.evaluate(() => { const t = performance.now(); history.replaceState(null, "", location.href); return performance.now() - t; });
  assert.ok(linkMs <= 100 * load(), `keeping the state in the URL took ${linkMs.toFixed(0)} ms`);
  // at 256 tokens the weights wait below the first screen, undrawn, until scrolled to
  await page.evaluate(() => scrollTo(0, 0));
  assert.equal(await page.locator("#h0-weights canvas").count(), 0, "the weights are not drawn before they are seen");
  assert.equal(await page.locator("#h0-weights .pending").count(), 1);
  await page.locator("#h0-weights").scrollIntoViewIfNeeded();
  await page.waitForSelector("#h0-weights canvas.overlay");
  const { json } = await api({ ...bigCase(256, 64, 8), scale: 0.4, return: ["weights"], encoding: "base64" });
  const weights = new Float64Array(Uint8Array.from(Buffer.from(json.weights.base64, "base64")).buffer); // (8, 256, 256)
  await page.focus("#h0-weights canvas.overlay");
  for (const k of ["ArrowDown", "ArrowRight", "ArrowRight"]) await page.keyboard.press(k);
  assert.equal(await page.textContent("#h0-weights .readout"), `weights[1 → 2] = ${String(weights[256 + 2]).replace(/-/g, "−")}`);
  // so big a reply holds the open head only (the API's heads); the small multiples come from every head's weights
  assert.deepEqual(JSON.parse(await page.evaluate(() => window.attentionVisualizer.lastRequestBody)).heads, [0]);
  const small = await page.evaluate(() => { const c = document.querySelector('#group-heads button[data-head="3"] canvas');
    return Array.from(c.getContext("2d").getImageData(2, 1, 1, 1).data.slice(0, 3)); });
  const seq = await page.evaluate(() => window.attentionVisualizer.PALETTES.seq.rgb);
  // 120 px for 256 keys: pixel (2, 1) is the largest of rows 2–3, keys 4–5, on the scale of head 3's largest
  // weight (no "One colour scale": each head its own)
  const top = weights.subarray(3 * 65536, 4 * 65536).reduce((a, b) => Math.max(a, b), 0);
  const block = Math.max(...[2, 3].flatMap((i) => [4, 5].map((j) => weights[3 * 65536 + i * 256 + j])));
  assert.deepEqual(small, seq[Math.round((block / top) * 255)], "head 3's small multiple is its weights");
  const other = await rendered(() => page.click('#group-heads button[data-head="3"]'), 60_000);
  assert.deepEqual(other.heads, [3], "opening head 3 asks for it");
  await page.locator("#h3-weights").scrollIntoViewIfNeeded();
  await page.waitForSelector("#h3-weights canvas.overlay");
  await page.focus("#h3-weights canvas.overlay");
  for (const k of ["ArrowDown", "ArrowRight", "ArrowRight"]) await page.keyboard.press(k);
  assert.equal(await page.textContent("#h3-weights .readout"), `weights[1 → 2] = ${String(weights[3 * 65536 + 256 + 2]).replace(/-/g, "−")}`);
  // head 3 is still head 3 of 8 key/value heads: its K is explained from its own columns of W_k
  assert.doesNotMatch(await page.textContent("#summary"), /key\/value heads/);
  await page.focus("#h3-k canvas.overlay");
  await page.keyboard.press("ArrowRight");
  await page.keyboard.press("Enter");
  assert.deepEqual((await explanation()).W_k, bigCase(256, 64, 8).w_k.map((r) => r[3 * 8 + 1]), "column 25 of W_k");
  await page.click("#explain-close");
  await page.fill("#scale", "");
  console.log(lines.map((l) => `# timing ${l}`).join("\n"));
});

finalChecks();
