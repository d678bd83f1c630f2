// End-to-end test of the visualizer page, "Save as a page": one HTML file
// that opens from file:// with no server and shows the same numbers
// (harness.mjs: the server, Chromium and the helpers).
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { catalogs, context, downloaded, finalChecks, openHead, openPage, page, panel, rendered, stateWritten, test } from "./harness.mjs";

openPage();

// Every stage card's cells: {card id: [[row, col, exact value, text]]}.
const allCells = (p) => p.evaluate(() => Object.fromEntries([...document.querySelectorAll("#stage-area .card")].map((card) =>
  [card.id, [...card.querySelectorAll("td[data-value]")].map((td) => [td.dataset.row, td.dataset.col, td.dataset.value, td.textContent])])));

// Saves the page, opens the file from file:// in a tab with every http request refused, and
// returns its size, the cards it shows, what it sent, and the http requests it tried.
async function savedAndOpened(check) {
  const saved = await downloaded(() => page.click("#save-page"));
  assert.equal(saved.name, "attention.html");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "visualizer-snapshot-"));
  const file = path.join(dir, "attention.html");
  fs.copyFileSync(saved.file, file);
  const html = fs.readFileSync(file, "utf8");
  assert.doesNotMatch(html, /(src|href)="web\//, "nothing read from the server");
  const other = await context.newPage();
  const asked = [];
  try {
    await other.route(/^https?:/, (route) => { asked.push(route.request().url()); return route.abort(); });
    await other.route(/^file:/, (route) => route.continue());
    await other.goto(`file://${file}`);
    await other.waitForFunction(() => window.attentionVisualizer?.renders >= 1 && document.getElementById("results").dataset.state === "ok",
      null, { timeout: 60_000 });
    assert.equal(await other.evaluate(() => location.protocol), "file:");
    const out = { bytes: Buffer.byteLength(html), cards: await allCells(other),
                  body: await other.evaluate(() => window.attentionVisualizer.lastRequestBody), asked };
    if (check) await check(other);
    return out;
  } finally {
    await other.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test("save as a page: one file, opened from file:// with the server unreachable, shows the same cards", async () => {
  await rendered(() => page.click('button[data-preset="002"]'));
  await rendered(() => page.check("#causal"));
  await openHead(1);
  await stateWritten();
  await panel("share-panel");
  const want = await allCells(page);
  const body = await page.evaluate(() => window.attentionVisualizer.lastRequestBody);
  const got = await savedAndOpened(async (other) => {
    assert.equal(await other.isChecked("#causal"), true);
    assert.match(await other.textContent("#snapshot-note"), /^A saved page/);
    assert.equal(await other.isDisabled("#save-page"), true, "a saved page saves no further page");
    // an edit it has no reply for needs the server: it says so
    await other.fill("#tokens", "a, b, c, d, e");
    await other.waitForSelector("#results[data-state=error]");
    assert.match(await other.textContent("#err-general"), /saved page/);
  });
  console.log(`snapshot of lesson 002, causal: ${got.bytes} bytes`);
  assert.equal(got.body, body, "the saved request");
  assert.ok(Object.keys(got.cards).includes("h1-weights"), "head 1 open");
  assert.deepEqual(got.cards, want, "every card's numbers");
  assert.deepEqual(got.asked, [], "nothing asked of a server");
  // 64 random tokens, the size a teacher hands out
  await page.click("#random-box > summary");
  await rendered(() => page.click("#random-make"), 60_000);
  await page.click("#random-box > summary");
  await stateWritten();
  const want64 = await allCells(page);
  const got64 = await savedAndOpened();
  console.log(`snapshot of random 64 × 32, 4 heads: ${got64.bytes} bytes`);
  assert.deepEqual(got64.cards, want64, "64 tokens: every card's numbers");
  assert.deepEqual(got64.asked, []);
  await panel("share-panel", false);
  await rendered(() => page.click('button[data-preset="001"]'));
});

// In Italian: the saved page keeps the language it was saved in, too.
test("a saved page says plainly it has no server (no file:// link or curl, no server timing, no HTTP 503), in its language", async () => {
  await rendered(() => page.click('button[data-preset="000"]'));
  await page.click('#lang-switch button[lang="it"]');
  await page.waitForFunction(() => document.documentElement.lang === "it"); // its catalog loaded first
  await stateWritten();
  await panel("share-panel");
  try {
    await savedAndOpened(async (other) => {
      assert.equal(await other.evaluate(() => document.documentElement.lang), "it");
      assert.equal(await other.textContent("#compute"), "Calcola");
      assert.match(await other.textContent("#snapshot-note"), /^Una pagina salvata/);
      await other.evaluate(() => { document.getElementById("share-panel").open = true; });
      assert.equal(await other.isVisible("#share-link"), false, "no share link to a file:// address");
      assert.equal(await other.isVisible("#copy-link"), false);
      assert.equal(await other.isVisible("#curl-command"), false, "no curl to file:///…/v1/attention");
      assert.doesNotMatch(await other.evaluate(() => document.body.innerText), /file:\/\//, "no file:// address shown");
      const status = await other.textContent("#status");
      assert.doesNotMatch(status, /server e rete|server and network/);
      assert.match(status, /^Una pagina salvata: questi numeri sono stati calcolati dal server quando la pagina è stata salvata/);
      assert.match(await other.textContent("#save-page-hint"), /non ha un server/);
      // an edit: the saved page has no server, said as such
      await other.fill('#field-x input[data-row="0"][data-col="0"]', "0,5");
      await other.waitForSelector("#results[data-state=error]");
      const err = await other.textContent("#err-general");
      assert.match(err, /^Questa pagina salvata non ha un server/);
      assert.doesNotMatch(err + await other.textContent("#status"), /503|HTTP|API/);
      // every language's words are in the file: the switch loads each catalog with no server
      const cats = await catalogs();
      for (const code of ["es", "tr", "en", "it"]) {
        await other.click(`#lang-switch button[lang="${code}"]`);
        await other.waitForFunction((c) => document.documentElement.lang === c, code);
        assert.equal(await other.textContent("#compute"), cats[code]["page.compute"], code);
        assert.doesNotMatch(await other.evaluate(() => document.body.innerText), /⟦|null|undefined/, code);
      }
    });
  } finally {
    await panel("share-panel", false);
    await page.click('#lang-switch button[lang="en"]');
    await page.waitForFunction(() => document.documentElement.lang === "en"); // its catalog loaded first
    await stateWritten();
  }
});

finalChecks();
