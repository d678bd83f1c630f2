// End-to-end test of the visualizer page, explain any number, and linked highlighting
// (harness.mjs: the server, Chromium and the helpers).
import assert from "node:assert/strict";
import { api, catalogs, close, explanation, finalChecks, LESSONS, openHead, openPage, page, rendered, shot, test } from "./harness.mjs";

openPage();

test("explain a weight: q_i and k_j, their products and sum, the scale, the mask, exp, the row sum, the division", async () => {
  const l = LESSONS["002"];
  await rendered(() => page.click('button[data-preset="002"]'));
  const body = { x: l.x, w_q: l.w_q, w_k: l.w_k, w_v: l.w_v, num_heads: 2, causal: true };
  await rendered(() => page.check("#causal"));
  await openHead(1);
  const { json } = await api({ ...body, return: ["q", "k", "v", "scores", "scaled_scores", "masked_scores", "weights"] });
  const [h, i, j] = [1, 3, 2];
  await page.click(`#h1-weights td[data-row="${i}"][data-col="${j}"]`);
  assert.equal(await page.isVisible("#explain"), true);
  assert.equal(await page.textContent("#explain-h"), "weights[tok3 → tok2], head 1: how it was computed");
  const got = await explanation();
  const q = json.q[h][i], k = json.k[h][j];
  assert.deepEqual(got.q, q, "the query row is the API's q");
  assert.deepEqual(got.k, k, "the key row is the API's k");
  assert.deepEqual(got.product, q.map((x, t) => x * k[t]));
  const score = q.reduce((s, x, t) => s + x * k[t], 0);
  assert.deepEqual(got.score, [score]);
  close(score, json.scores[h][i][j], "score");
  assert.deepEqual(got.scaled, [score / 2], "÷ √d_k = 2");
  close(score / 2, json.scaled_scores[h][i][j], "scaled score");
  const row = json.masked_scores[h][i].map((s) => (s === null ? -Infinity : s));
  assert.deepEqual(row.slice(4), [-Infinity], "causal: the last key is masked for query 3");
  const M = Math.max(...row.slice(0, 4));
  const e = row.map((s) => (s === -Infinity ? 0 : Math.exp(s - M)));
  const S = e.reduce((a, b) => a + b, 0);
  assert.deepEqual(got.max, [M]);
  assert.deepEqual(got.exp, e);
  assert.deepEqual(got["row-sum"], [S]);
  assert.deepEqual(got.weight, [e[j] / S]);
  close(e[j] / S, json.weights[h][i][j], "weight");
  assert.deepEqual(got["api-weights"], [json.weights[h][i][j]]);
  assert.match(await page.textContent("#explain"), /Not masked/);

  // a masked cell says why
  await page.click(`#h1-weights td[data-row="1"][data-col="4"]`);
  assert.match(await page.textContent("#explain"), /Masked: the score becomes −∞ \(causal: key tok4 comes after query tok1\)/);
  // by keyboard: Enter on a focused cell opens it, Escape closes it and returns to the cell
  await page.click("#explain-close");
  await page.focus("#h1-head_outputs td[tabindex='0']");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("Enter");
  assert.equal(await page.isVisible("#explain"), true);
  const out = await explanation();
  const w = json.weights[h][1], vcol = json.v[h].map((r) => r[0]);
  assert.deepEqual(out.weight, w);
  assert.deepEqual(out.v, vcol);
  assert.deepEqual(out.product, w.map((x, t) => x * vcol[t]));
  const { json: o } = await api({ ...body, return: ["head_outputs"] });
  close(out.output[0], o.head_outputs[h][1][0], "head output");
  await page.keyboard.press("Escape");
  assert.equal(await page.isVisible("#explain"), false);
  assert.equal(await page.evaluate(() => document.activeElement.dataset.row + document.activeElement.dataset.col), "10");
  // by touch, on a Q cell: X row times a column of W_q
  await page.tap("#h1-q td[data-row='0'][data-col='1']");
  const qx = await explanation();
  assert.deepEqual(qx.x, l.x[0]);
  assert.deepEqual(qx.W_q, l.w_q.map((r) => r[4 + 1]), "head 1's column 1 is column 5 of W_q");
  close(qx.q[0], json.q[h][0][1], "q");
  await shot("explain.png");
  await page.click("#explain-close");
  await openHead(0);
  await rendered(() => page.uncheck("#causal"));
});

test("one formatter in an explanation: the API's number as the page's, U+2212 for every minus, the exact value on focus", async () => {
  const l = LESSONS["002"];
  await rendered(() => page.click('button[data-preset="002"]'));
  const { json } = await api({ x: l.x, w_q: l.w_q, w_k: l.w_k, w_v: l.w_v, num_heads: 2, return: ["scaled_scores"] });
  // a negative scaled score of head 0
  const [i, j] = (() => { for (const [a, row] of json.scaled_scores[0].entries()) for (const [b, v] of row.entries()) if (v < 0) return [a, b]; })();
  const v = json.scaled_scores[0][i][j];
  await page.click(`#h0-scaled_scores td[data-row="${i}"][data-col="${j}"]`);
  const apiNum = page.locator('#explain [data-term="api-scaled_scores"]');
  const fmt = (x) => page.evaluate((y) => window.attentionVisualizer.fmt(y), x);
  assert.equal(await apiNum.textContent(), await fmt(v), "the API's number in the page's one format");
  assert.ok((await apiNum.textContent()).startsWith("\u2212"));
  await apiNum.focus();
  assert.equal(await apiNum.textContent(), String(v).replace("-", "\u2212"), "its exact value while it has the focus");
  await page.keyboard.press("Tab");
  assert.equal(await apiNum.textContent(), await fmt(v));
  assert.doesNotMatch(await page.textContent("#explain-body"), /(^|[^\w.])-\d/, "no ASCII hyphen as a minus sign");
});

// Lesson 000's `scores` (and 002's `skor`) are already divided by √d_k: the explanation names the API's raw
// product as the cards do (QKᵀ), never by the word a lesson uses for the scaled matrix.
test("an explanation names the API's raw product QKᵀ, never the lessons' word scores/skor, in every language", async () => {
  const cats = await catalogs(), useLang = (c) => page.evaluate((code) => import(new URL("web/words.js", location.href)).then((m) => m.useLang(code)), c);
  await rendered(() => page.click('button[data-preset="000"]'));
  try {
    for (const code of ["es", "it", "tr", "en"]) {
      await useLang(code);
      await page.click('#h0-weights td[data-row="0"][data-col="0"]');
      await page.waitForSelector('#explain [data-term="api-scores"]');
      const said = await page.$$eval("#explain .api", (spans) => spans.map((s) => [s.querySelector(".num").dataset.term, s.textContent, s.querySelector(".num").textContent]));
      const raw = said.find(([term]) => term === "api-scores");
      assert.equal(raw[1], cats[code]["explain.api"].replace("{stage}", cats[code]["views.stage.scores"]).replace("{value}", raw[2]), code);
      // the dot product's line names its result QKᵀ, not the word the lessons use for the scaled matrix
      const dot = await page.locator("#explain li").first().textContent();
      assert.match(dot, /QKᵀ = /, `${code}: ${dot}`);
      assert.doesNotMatch(dot, /\b(score|puntuación|punteggio|skor) =/, `${code}: ${dot}`);
      for (const [term, text] of said) assert.doesNotMatch(text.replace(/scaled_scores|masked_scores/g, ""), /\bscores\b|\bskor\b/, `${code} ${term}: ${text}`);
      await page.keyboard.press("Escape");
    }
  } finally {
    await useLang("en");
  }
});

test("linked highlighting: pointing at weight (i, j) outlines row i of Q and the output, row j of K and V, both rows of X", async () => {
  await rendered(() => page.click('button[data-preset="002"]'));
  await page.hover('#h0-weights td[data-row="2"][data-col="3"]');
  const lit = await page.evaluate(() => {
    const out = {};
    for (const card of document.querySelectorAll("#stage-area .card")) {
      const rows = new Set(), cellsLit = [];
      card.querySelectorAll("td.hl").forEach((td) => rows.add(`${td.dataset.row}`));
      card.querySelectorAll("td.hl-cell").forEach((td) => cellsLit.push(`${td.dataset.row},${td.dataset.col}`));
      out[card.id] = { rows: [...rows].sort(), cells: cellsLit };
    }
    return out;
  });
  for (const id of ["h0-q", "h0-head_outputs", "all-concat", "all-output"]) assert.deepEqual(lit[id].rows, ["2"], id);
  assert.deepEqual(lit["input-x"].rows, ["2", "3"], "X row 2 is the query, row 3 the key");
  for (const id of ["h0-k", "h0-v"]) assert.deepEqual(lit[id].rows, ["3"], id);
  for (const id of ["h0-scores", "h0-scaled_scores", "h0-masked_scores", "h0-weights"]) assert.deepEqual(lit[id].cells, ["2,3"], id);
  await page.mouse.move(0, 0);
  assert.equal(await page.locator("#stage-area td.hl, #stage-area td.hl-cell").count(), 0, "leaving clears the marks");
});

// Where the explanation sits: its height, the explained cell's box, and the cells outlined.
const explainLayout = (id, i, j) => page.evaluate(([id, i, j]) => {
  const panel = document.getElementById("explain").getBoundingClientRect();
  const cell = document.querySelector(`#${id} td[data-row="${i}"][data-col="${j}"]`).getBoundingClientRect();
  const lit = [...document.querySelectorAll(`#${id} td.hl-cell`)].map((td) => `${td.dataset.row},${td.dataset.col}`);
  return { vh: innerHeight, panelTop: panel.top, panelHeight: panel.height, cellTop: cell.top, cellBottom: cell.bottom, lit };
}, [id, i, j]);

test("the explanation takes at most 40 % of the screen, never covers its cell, and outlines that cell (desktop, phone)", async () => {
  try {
    for (const [width, height, how] of [[1280, 800, "click"], [390, 844, "tap"]]) {
      await page.setViewportSize({ width, height });
      await rendered(() => page.click('button[data-preset="002"]'));
      await rendered(() => page.check("#causal"));
      // a cell low in the weights card, and a cell near the top of the page's results
      for (const [id, i, j] of [["h0-weights", 4, 1], ["h0-q", 0, 2], ["h0-head_outputs", 3, 0]]) {
        const sel = `#${id} td[data-row="${i}"][data-col="${j}"]`;
        await page.locator(sel).scrollIntoViewIfNeeded();
        await (how === "tap" ? page.tap(sel) : page.click(sel));
        await page.waitForFunction(() => !document.getElementById("explain").hidden);
        await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
        const at = await explainLayout(id, i, j);
        const where = `${id} (${i}, ${j}) at ${width} px`;
        assert.ok(at.panelHeight <= 0.4 * at.vh + 0.5, `${where}: the panel is ${at.panelHeight} of ${at.vh} px`);
        assert.ok(at.cellTop >= 0 && at.cellBottom <= at.panelTop, `${where}: the cell (${at.cellTop}–${at.cellBottom}) is under the panel (from ${at.panelTop})`);
        assert.deepEqual(at.lit, [`${i},${j}`], `${where}: the cell outlined`);
        if (!id.endsWith("weights")) assert.deepEqual(await explainLayout("h0-weights", 0, 0).then((a) => a.lit), [], `${where}: no weight outlined`);
        await page.click("#explain-close");
      }
      if (width === 390) await shot("explain-390.png");
    }
  } finally {
    await page.setViewportSize({ width: 1280, height: 900 });
    await rendered(() => page.uncheck("#causal"));
  }
});

finalChecks();
