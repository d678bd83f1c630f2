// End-to-end test of the visualizer page, "Save as a page": one HTML file
// that opens from file:// with no server and shows the same numbers
// (harness.mjs: the server, Chromium and the helpers).
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { context, downloaded, finalChecks, openHead, openPage, page, panel, rendered, stateWritten, test } from "./harness.mjs";

openPage();

// Every stage card's cells: {card id: [[row, col, exact value, text]]}.
const allCells = (p) => p.evaluate(() => Object.fromEntries([...document.querySelectorAll("#stage-area .card")].map((card) =>
  [card.id, [...card.querySelectorAll("td[data-value]")].map((td) => [td.dataset.row, td.dataset.col, td.dataset.value, td.textContent])])));

test("save as a page: one file, opened from file:// with the server unreachable, shows the same cards", async () => {
  await rendered(() => page.click('button[data-preset="002"]'));
  await rendered(() => page.check("#causal"));
  await openHead(1);
  await stateWritten();
  await panel("share-panel");
  const want = await allCells(page);
  const body = await page.evaluate(() => window.attentionVisualizer.lastRequestBody);
  const saved = await downloaded(() => page.click("#save-page"));
  assert.equal(saved.name, "attention.html");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "visualizer-snapshot-"));
  const file = path.join(dir, "attention.html");
  fs.copyFileSync(saved.file, file);
  const html = fs.readFileSync(file, "utf8");
  console.log(`snapshot of lesson 002, causal: ${html.length} bytes`);
  assert.doesNotMatch(html, /(src|href)="web\//, "nothing read from the server");
  const other = await context.newPage();
  const asked = [];
  try {
    // the server is unreachable from this tab: every http request fails
    await other.route(/^https?:/, (route) => { asked.push(route.request().url()); return route.abort(); });
    await other.route(/^file:/, (route) => route.continue());
    await other.goto(`file://${file}`);
    await other.waitForFunction(() => window.attentionVisualizer?.renders >= 1 && document.getElementById("results").dataset.state === "ok");
    assert.equal(await other.evaluate(() => window.attentionVisualizer.lastRequestBody), body, "the saved request");
    assert.equal(await other.evaluate(() => location.protocol), "file:");
    const got = await allCells(other);
    assert.ok(Object.keys(got).includes("h1-weights"), "head 1 open");
    assert.deepEqual(got, want, "every card's numbers");
    assert.equal(await other.isChecked("#causal"), true);
    assert.match(await other.textContent("#snapshot-note"), /^A saved page/);
    assert.deepEqual(asked, [], "nothing asked of a server");
    // an edit it has no reply for needs the server: it says so
    await other.fill("#tokens", "a, b, c, d, e");
    await other.waitForSelector("#results[data-state=error]");
    assert.match(await other.textContent("#err-general"), /saved page/);
  } finally {
    await other.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  await panel("share-panel", false);
  await openHead(0);
  await rendered(() => page.uncheck("#causal"));
});

finalChecks();
