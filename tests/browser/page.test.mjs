// End-to-end test of the visualizer page, the page and the lessons: what GET / serves, each lesson's numbers, the stage order, the one rule for numbers
// (harness.mjs: the server, Chromium and the helpers).
import assert from "node:assert/strict";
import path from "node:path";
import { ARTIFACTS, assertPageShowsApi, base, cells, finalChecks, LESSONS, openHead, openPage, page, rendered, shot, shown, STAGES, test } from "./harness.mjs";

openPage();

test("GET / serves the page: HTML, its stylesheet and modules from web/, nothing from elsewhere", async () => {
  const resp = await fetch(base);
  assert.equal(resp.status, 200);
  assert.match(resp.headers.get("content-type"), /^text\/html/);
  const html = await resp.text();
  const external = /(src|href|from|import)\s*\(?\s*["']?(https?:)?\/\//i;
  assert.doesNotMatch(html, external, "no external scripts, styles or links");
  assert.match(html, /<link rel="stylesheet" href="web\/style.css">/, "relative: a path prefix works");
  assert.match(html, /<script type="module" src="web\/main.js">/);
  const css = await fetch(new URL("web/style.css", base));
  assert.equal(css.headers.get("content-type"), "text/css; charset=utf-8");
  // every module main.js imports, and theirs: served as JavaScript, relative imports only
  const modules = new Map(), todo = ["main.js"];
  while (todo.length) {
    const name = todo.pop();
    if (modules.has(name)) continue;
    const r = await fetch(new URL(`web/${name}`, base));
    assert.equal(r.status, 200, name);
    assert.equal(r.headers.get("content-type"), "text/javascript; charset=utf-8", name);
    const text = await r.text();
    assert.doesNotMatch(text, external, `${name}: nothing from elsewhere`);
    modules.set(name, text);
    for (const [, dep] of text.matchAll(/^import .* from "\.\/([\w-]+\.js)";$/gm)) todo.push(dep);
  }
  assert.ok(modules.has("fields.js"), "the request fields, generated from the schema table");
  assert.ok([...modules.values()].some((t) => /fetch\(API/.test(t)));
  assert.ok([...modules.values()].some((t) => /const API = "v1\/attention"/.test(t)), "a relative API URL, so a path prefix works");
  const missing = await fetch(new URL("web/no-such-file.js", base));
  assert.equal(missing.status, 404);
  assert.equal((await missing.json()).code, "not_found");
  assert.equal(await page.title(), "Attention, step by step — visualizer");
  const order = await page.$$eval("#presets button", (bs) => bs.map((b) => b.dataset.preset));
  assert.deepEqual(order, ["000", "001", "002"], "the lesson buttons in the lessons' order");
});

for (const key of ["000", "001", "002"]) {
  test(`lesson ${key}: the preset sends the lesson's numbers and every cell equals the API's`, async () => {
    const lesson = LESSONS[key];
    const sent = await rendered(() => page.click(`button[data-preset="${key}"]`));
    for (const name of ["x", "w_q", "w_k", "w_v", "num_heads", "tokens"])
      assert.deepEqual(sent[name], lesson[name], `the preset's ${name} is the lesson's`);
    assert.deepEqual(sent.return, STAGES, "the page asks for every stage");
    assert.equal(await page.getAttribute(`button[data-preset="${key}"]`, "aria-pressed"), "true");
    assert.equal(await page.textContent("#preset-note"), lesson.note);

    const own = { x: lesson.x, w_q: lesson.w_q, w_k: lesson.w_k, w_v: lesson.w_v,
                  num_heads: lesson.num_heads, tokens: lesson.tokens };
    const reply = await assertPageShowsApi(own);
    const n = lesson.x.length, h = lesson.num_heads;
    for (let head = 0; head < h; head++) {
      await openHead(head);
      const weights = await cells(`h${head}-weights`);
      assert.equal(weights.length, n * n, `head ${head} heatmap is ${n}×${n}`);
      weights.forEach((c, k) => {
        assert.deepEqual([c.row, c.col], [Math.floor(k / n), k % n]);
        // the title is read by a person: the exact value with its minus signs typeset (U+2212)
        // named as the lesson names the weights (000 and 001: attention_weights; 002: A[h])
        const name = key === "002" ? `A[${head}]` : "attention_weights";
        assert.equal(c.title, `${name}[${lesson.tokens[c.row]} → ${lesson.tokens[c.col]}] = ${c.value.replace(/-/g, "\u2212")}`);
      });
      const rowLabels = await page.$$eval(`#h${head}-weights tbody th`, (ths) => ths.map((t) => t.textContent));
      assert.deepEqual(rowLabels, lesson.tokens, "rows are labelled with the tokens");
      const colLabels = await page.$$eval(`#h${head}-weights thead th[scope=col]`, (ths) => ths.map((t) => t.textContent));
      assert.deepEqual(colLabels, [...lesson.tokens, "Σ"]);
    }
    await openHead(0);

    // each stage's shape, as the API gives it
    const stacked = Array.isArray(lesson.w_q[0][0]); // (h, d, d_k) or (d, h·d_k)
    const dk = stacked ? lesson.w_q[0][0].length : lesson.w_q[0].length / h;
    const badge = (id) => page.textContent(`#${id} h3 .shape`);
    assert.equal(await badge("h0-q"), `(${n}, ${dk})`);
    assert.equal(await badge("h0-weights"), `(${n}, ${n})`);
    assert.equal(await page.getAttribute("#h0-weights h3 .shape", "title"), `a slice of weights (${h}, ${n}, ${n})`);
    assert.equal(await badge("all-concat"), `(${n}, ${h * dk})`);
    assert.equal(await badge("input-x"), `(${n}, ${lesson.x[0].length})`);
    assert.equal(await page.locator("#group-heads button").count(), h > 1 ? h : 0, "one small multiple per head");
    if (key === "002") {
      // the lesson prints (2, 5, 4) (2, 5, 5) (5, 8) and True (rows sum to 1)
      await openHead(1);
      assert.equal(await page.getAttribute("#h1-q h3 .shape", "title"), "a slice of q (2, 5, 4)");
      assert.equal(await page.getAttribute("#h1-weights h3 .shape", "title"), "a slice of weights (2, 5, 5)");
      assert.equal(await badge("all-output"), "(5, 8)");
      const sums = await page.$$eval("#h1-weights td.sum", (tds) => tds.map((t) => t.textContent));
      assert.deepEqual(sums, new Array(5).fill("1"));
      // the concatenation marks which columns came from which head
      const marks = await page.$$eval("#all-concat th.group", (ths) => ths.map((t) => [t.textContent, t.colSpan]));
      assert.deepEqual(marks, [["head 0", 4], ["head 1", 4]]);
      await openHead(0);
    }
    assert.equal(reply.json.num_heads, h);
    await shot(`lesson-${key}.png`);
    if (key === "002") {
      await page.screenshot({ path: path.join(ARTIFACTS, "visualizer.png"), clip: { x: 0, y: 0, width: 1280, height: 1500 },
                              fullPage: true });
    }
  });
}

test("stages read in the order they are computed: X, Q split into heads, Q, K, V, scores, weights, outputs", async () => {
  await rendered(() => page.click('button[data-preset="002"]'));
  const ids = await page.$$eval("#stage-area .card", (cs) => cs.map((c) => c.id));
  assert.deepEqual(ids, ["input-x", "split-q", "split-qh0", "split-qh1", "h0-q", "h0-k", "h0-v", "h0-scores", "h0-scaled_scores", "h0-masked_scores",
                         "h0-weights", "h0-lines", "h0-head_outputs", "all-concat", "all-output"]);
});

test("a page that draws no frame (a tab in the background) still finishes a render and writes its link", async () => {
  await rendered(() => page.click('button[data-preset="001"]'));
  // the page's own requestAnimationFrame never calls back, as in a hidden tab
  await page.evaluate(() => { window.shownRaf = window.requestAnimationFrame; window.requestAnimationFrame = () => 0; });
  try {
    const t0 = Date.now();
    const sent = await rendered(() => page.fill("#tokens", "one, two, three"), 5_000);
    assert.deepEqual(sent.tokens, ["one", "two", "three"]);
    assert.ok(Date.now() - t0 >= 1000, "it waited for a frame first");
    const timings = await page.evaluate(() => window.attentionVisualizer.timings);
    assert.ok(timings.frame_ms >= 1000, `frame_ms ${timings.frame_ms}: the wait is counted`);
  } finally {
    await page.evaluate(() => { window.requestAnimationFrame = window.shownRaf; });
  }
  await rendered(() => page.click('button[data-preset="001"]'));
});

test("one rule for numbers: 3 significant digits, no trailing zeros, U+2212 minus, exponents only outside [0.001, 10000)", async () => {
  const got = await page.evaluate(() => [0.00128, 7.5e-5, 0, 0.2, -0.5, 999.7, 1234.5, 12345, 1e-7, -Infinity, 0.0999996, 1, -3.2e-5]
    .map(window.attentionVisualizer.fmt));
  assert.deepEqual(got, ["0.00128", "7.5e−5", "0", "0.2", "−0.5", "1000", "1235", "1.23e4", "1e−7", "−∞", "0.1", "1", "−3.2e−5"]);
  for (const v of [0.00128, 7.5e-5, 0.2, -0.5, 1234.5, 12345, 1e-7, 0.0999996, 1, -3.2e-5]) {
    assert.equal(shown(v), await page.evaluate((x) => window.attentionVisualizer.fmt(x), v));
  }
});

finalChecks();
