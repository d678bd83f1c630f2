// End-to-end test of the visualizer page (server/web/index.html) in Debian's
// headless Chromium, driven by playwright-core.
//
// It starts build/attention-server on a free port, opens GET /, and checks
// what a student sees against what the API answers for the same request:
// every heatmap cell (and every other stage's cell) must carry exactly the
// number text the API returned.  The lesson numbers come from
// tools/gen_presets.py --json (NumPy, the lessons' own seeds), so the test
// also proves each preset sends the lesson's own X and weights.
//
//   ATTENTION_SERVER=build/attention-server node --test tests/browser/
//
// Screenshots go to tests/artifacts/ (git-ignored).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "../..");
const SERVER = path.resolve(REPO, process.env.ATTENTION_SERVER || "build/attention-server");
const PYTHON = process.env.PYTHON || "/usr/bin/python3";
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const ARTIFACTS = path.resolve(REPO, process.env.ARTIFACTS || "tests/artifacts");
const STARTUP_MS = 10_000; // the server prints its address well within this
const STEP_MS = 15_000; // one render: a request plus drawing, normally < 100 ms
const STAGES = ["q", "k", "v", "scores", "scaled_scores", "masked_scores",
                "weights", "head_outputs", "concat", "output"];
const PER_HEAD = STAGES.slice(0, 8);

const LESSONS = JSON.parse(execFileSync(PYTHON, [path.join(REPO, "tools/gen_presets.py"), "--json"]));

let server, serverExit, base, context, page, profile;
const outside = []; // requests the page made to any other origin
const pageErrors = []; // uncaught exceptions and console errors

/* ---- the server ---------------------------------------------------------- */

function startServer() {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const log = fs.openSync(path.join(ARTIFACTS, "browser-server.log"), "w");
  server = spawn(SERVER, ["--listen", "127.0.0.1:0", "--threads", "1"],
                 { stdio: ["ignore", "pipe", log] });
  serverExit = new Promise((resolve) => server.on("exit", (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${SERVER} printed no address in ${STARTUP_MS} ms`)), STARTUP_MS);
    let out = "";
    server.stdout.on("data", (chunk) => {
      out += chunk;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) { clearTimeout(timer); resolve(m[1] + "/"); }
    });
    server.on("error", (e) => { clearTimeout(timer); reject(e); });
    server.on("exit", (code) => { clearTimeout(timer); reject(new Error(`${SERVER} exited (${code}) before listening`)); });
  });
}

async function api(body) {
  const resp = await fetch(base + "v1/attention", {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  });
  const text = await resp.text();
  return { status: resp.status, text, json: JSON.parse(text) };
}

// The literal number texts of one tensor in an API response, in row-major
// order, read from the raw body (not re-formatted through a JS number).  The
// tensor is the `"name":[[` member; `shapes` holds `"name":[1,…` instead.
function rawTensor(text, name) {
  const start = text.indexOf(`"${name}":[[`);
  assert.ok(start >= 0, `the API response has no ${name} tensor`);
  let i = start + name.length + 3, depth = 0;
  for (; i < text.length; i++) {
    if (text[i] === "[") depth++;
    else if (text[i] === "]" && --depth === 0) break;
  }
  return text.slice(start + name.length + 3, i + 1).match(/-?\d[\d.eE+-]*|null/g);
}

/* ---- the page ------------------------------------------------------------ */

const renders = () => page.evaluate(() => window.attentionVisualizer.renders);

// Runs action, then waits until the page has drawn a newer successful result.
async function rendered(action) {
  const before = await renders();
  await action();
  await page.waitForFunction((n) => window.attentionVisualizer.renders > n
    && document.getElementById("results").dataset.state === "ok", before, { timeout: STEP_MS });
  return JSON.parse(await page.evaluate(() => window.attentionVisualizer.lastRequestBody));
}

async function failed(action) {
  await action();
  await page.waitForSelector("#results[data-state=error]", { timeout: STEP_MS });
}

// data-value of every cell of one stage's table(s), row-major, heads first.
function cellValues(stage, heads) {
  return page.evaluate(({ stage, heads }) => {
    const ids = heads === null ? [`all-${stage}`] : Array.from({ length: heads }, (_, h) => `h${h}-${stage}`);
    return ids.flatMap((id) => [...document.querySelectorAll(`#${id} td[data-value]`)].map((td) => td.dataset.value));
  }, { stage, heads });
}

async function heatmap(head) {
  return page.evaluate((h) => [...document.querySelectorAll(`#h${h}-weights td[data-value]`)].map((td) => ({
    row: Number(td.dataset.row), col: Number(td.dataset.col), value: td.dataset.value, title: td.title,
  })), head);
}

const shot = (name, opts = {}) => page.screenshot({ path: path.join(ARTIFACTS, name), fullPage: true, ...opts });

// Every stage the page shows equals, text for text, the API's answer to `body`.
async function assertPageShowsApi(body) {
  const reply = await api({ ...body, return: STAGES });
  assert.equal(reply.status, 200, reply.text);
  const heads = reply.json.num_heads;
  for (const stage of STAGES) {
    const want = rawTensor(reply.text, stage);
    const got = await cellValues(stage, PER_HEAD.includes(stage) ? heads : null);
    assert.deepEqual(got, want, `${stage}: the page's cells differ from the API's numbers`);
  }
  return reply;
}

before(async () => {
  base = await startServer();
  profile = fs.mkdtempSync(path.join(os.tmpdir(), "visualizer-chromium-"));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  page = context.pages()[0] || await context.newPage();
  page.setDefaultTimeout(STEP_MS);
  page.on("pageerror", (e) => pageErrors.push(`pageerror: ${e.message}`));
  page.on("console", (m) => { if (m.type() === "error") pageErrors.push(`console: ${m.text()}`); });
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith(base) || url.startsWith("data:")) return route.continue();
    outside.push(url);
    return route.abort();
  });
  await page.goto(base);
  await page.waitForFunction(() => window.attentionVisualizer?.renders >= 1
    && document.getElementById("results").dataset.state === "ok");
});

after(async () => {
  if (context) await context.close();
  if (profile) fs.rmSync(profile, { recursive: true, force: true });
  if (server && server.exitCode === null) {
    server.kill("SIGTERM");
    const { code, signal } = await serverExit;
    assert.ok(code === 0 || signal === "SIGTERM", `server exit ${code} ${signal}`);
  }
});

/* ---- the tests ------------------------------------------------------------ */

test("GET / serves the page: HTML that loads nothing from elsewhere", async () => {
  const resp = await fetch(base);
  assert.equal(resp.status, 200);
  assert.match(resp.headers.get("content-type"), /^text\/html/);
  const html = await resp.text();
  assert.doesNotMatch(html, /(src|href)\s*=\s*["']?(https?:)?\/\//i, "no external scripts, styles or links");
  assert.match(html, /fetch\(API/);
  assert.match(html, /const API = "v1\/attention"/, "a relative API URL, so a path prefix works");
  assert.equal(await page.title(), "Attention, step by step — visualizer");
});

for (const key of ["001", "000", "002"]) {
  test(`lesson ${key}: the preset sends the lesson's numbers and every cell equals the API's`, async () => {
    const lesson = LESSONS[key];
    const sent = await rendered(() => page.click(`button[data-preset="${key}"]`));
    for (const name of ["x", "w_q", "w_k", "w_v", "num_heads", "tokens"])
      assert.deepEqual(sent[name], lesson[name], `the preset's ${name} is the lesson's`);
    assert.deepEqual(sent.return, STAGES, "the page asks for every stage");
    assert.equal(await page.getAttribute(`button[data-preset="${key}"]`, "aria-pressed"), "true");

    // the test's own request: the lesson's numbers, weights only
    const own = { x: lesson.x, w_q: lesson.w_q, w_k: lesson.w_k, w_v: lesson.w_v,
                  num_heads: lesson.num_heads, tokens: lesson.tokens, return: ["weights"] };
    const reply = await api(own);
    assert.equal(reply.status, 200, reply.text);
    const weights = rawTensor(reply.text, "weights");
    const n = lesson.x.length, h = lesson.num_heads;
    assert.equal(weights.length, h * n * n);
    for (let head = 0; head < h; head++) {
      const cells = await heatmap(head);
      assert.equal(cells.length, n * n, `head ${head} heatmap is ${n}×${n}`);
      cells.forEach((c, k) => {
        assert.deepEqual([c.row, c.col], [Math.floor(k / n), k % n]);
        const want = weights[head * n * n + k];
        assert.equal(c.value, want, `head ${head} cell (${c.row}, ${c.col})`);
        assert.equal(Number(c.value), reply.json.weights[head][c.row][c.col]);
        assert.ok(c.title.endsWith(`= ${want}`), `hover shows the exact value: ${c.title}`);
        assert.ok(c.title.includes(`${lesson.tokens[c.row]} → ${lesson.tokens[c.col]}`), c.title);
      });
      const rowLabels = await page.$$eval(`#h${head}-weights tbody th`, (ths) => ths.map((t) => t.textContent));
      assert.deepEqual(rowLabels, lesson.tokens, "rows are labelled with the tokens");
      const colLabels = await page.$$eval(`#h${head}-weights thead th[scope=col]`, (ths) => ths.map((t) => t.textContent));
      assert.deepEqual(colLabels, [...lesson.tokens, "Σ"]);
    }
    await assertPageShowsApi(own);

    // each stage's shape, as the API gives it
    const stacked = Array.isArray(lesson.w_q[0][0]); // (h, d, d_k) or (d, h·d_k)
    const dk = stacked ? lesson.w_q[0][0].length : lesson.w_q[0].length / h;
    const badge = (id) => page.textContent(`#${id} h3 .shape`);
    assert.equal(await badge("h0-q"), `(${n}, ${dk})`);
    assert.equal(await badge("h0-weights"), `(${n}, ${n})`);
    assert.equal(await page.getAttribute("#h0-weights h3 .shape", "title"), `a slice of weights (${h}, ${n}, ${n})`);
    assert.equal(await badge("all-concat"), `(${n}, ${h * dk})`);
    assert.equal(await page.locator("section.head").count(), h);
    if (key === "002") {
      // the lesson prints (2, 5, 4) (2, 5, 5) (5, 8) and True (rows sum to 1)
      assert.equal(await page.getAttribute("#h1-q h3 .shape", "title"), "a slice of q (2, 5, 4)");
      assert.equal(await page.getAttribute("#h1-weights h3 .shape", "title"), "a slice of weights (2, 5, 5)");
      assert.equal(await badge("all-output"), "(5, 8)");
      const sums = await page.$$eval("table.heat td.sum", (tds) => tds.map((t) => t.textContent));
      assert.deepEqual(sums, new Array(10).fill("1.000"));
    }
    await shot(`lesson-${key}.png`);
    if (key === "002") {
      await page.screenshot({ path: path.join(ARTIFACTS, "visualizer.png"), clip: { x: 0, y: 0, width: 1280, height: 1500 },
                              fullPage: true });
    }
  });
}

test("causal: the upper triangle of every head's weights becomes exactly 0", async () => {
  const lesson = LESSONS["002"];
  await rendered(() => page.click('button[data-preset="002"]'));
  const upper = (cells) => cells.filter((c) => c.col > c.row);
  const open = [...await heatmap(0), ...await heatmap(1)];
  assert.ok(upper(open).some((c) => c.value !== "0"), "without causal some query attends a later key");

  const sent = await rendered(() => page.check("#causal"));
  assert.equal(sent.causal, true);
  for (const head of [0, 1]) {
    const cells = await heatmap(head);
    assert.equal(upper(cells).length, 10);
    for (const c of upper(cells)) assert.equal(c.value, "0", `head ${head} (${c.row}, ${c.col})`);
    assert.equal(cells[0].value, "1", "the first query sees only itself");
    const masked = await page.$$eval(`#h${head}-masked_scores td[data-value]`, (tds) => tds.map((t) => [t.dataset.value, t.textContent]));
    masked.forEach(([value, shown], k) => {
      if (k % 5 > Math.floor(k / 5)) assert.deepEqual([value, shown], ["null", "−∞"]);
      else assert.notEqual(value, "null");
    });
  }
  const reply = await assertPageShowsApi({ x: lesson.x, w_q: lesson.w_q, w_k: lesson.w_k, w_v: lesson.w_v,
                                           num_heads: 2, tokens: lesson.tokens, causal: true });
  assert.equal(reply.json.causal, true);
  assert.match(await page.textContent("#summary"), /causal true/);
  await shot("causal.png");

  await rendered(() => page.uncheck("#causal"));
  assert.deepEqual([...await heatmap(0), ...await heatmap(1)], open, "unchecking restores the full weights");
});

test("mask and key padding: a diagonal mask gives identity weights, a padded key gets none", async () => {
  const lesson = LESSONS["001"];
  await rendered(() => page.click('button[data-preset="001"]'));
  await page.click("#mask-panel > summary");
  await rendered(() => page.check("#use-mask"));
  const sent = await rendered(() => page.click('button[data-fill="diag"]'));
  assert.deepEqual(sent.mask, [[true, false, false], [false, true, false], [false, false, true]]);
  assert.deepEqual((await heatmap(0)).map((c) => c.value), ["1", "0", "0", "0", "1", "0", "0", "0", "1"]);

  await rendered(() => page.click('button[data-fill="all"]'));
  await rendered(() => page.check("#use-padding"));
  const padded = await rendered(() => page.check('input[aria-label="key word 1 is padding"]'));
  assert.deepEqual(padded.key_padding, [true, false, false]);
  const cells = await heatmap(0);
  for (const c of cells.filter((c) => c.col === 0)) assert.equal(c.value, "0");
  await assertPageShowsApi({ x: lesson.x, w_q: lesson.w_q, w_k: lesson.w_k, w_v: lesson.w_v, num_heads: 1,
                             tokens: lesson.tokens, mask: padded.mask, key_padding: [true, false, false] });
});

test("W_o and cross-attention: identity W_o keeps the concatenation; a 2-row context gives 3×2 weights", async () => {
  const lesson = LESSONS["001"];
  await rendered(() => page.click('button[data-preset="001"]'));
  await page.click("#wo-panel > summary");
  const sent = await rendered(() => page.click("#wo-identity"));
  assert.deepEqual(sent.w_o, [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]);
  assert.deepEqual(await cellValues("output", null), await cellValues("concat", null));
  assert.equal(await page.textContent("#all-output .formula"), "concat · W_o");
  await rendered(() => page.uncheck("#use-w_o"));

  await page.click("#context-panel > summary");
  await rendered(() => page.check("#use-context"));
  await page.click('#field-context .seg label:has(input[value="text"])');
  await rendered(() => page.fill("#text-context", "[[1, 0, 1, 0], [0, 2, 0, 2]]"));
  const cross = await rendered(() => page.fill("#context_tokens", "key A, key B"));
  assert.deepEqual(cross.context, [[1, 0, 1, 0], [0, 2, 0, 2]]);
  assert.deepEqual(cross.context_tokens, ["key A", "key B"]);
  const cells = await heatmap(0);
  assert.equal(cells.length, 6);
  assert.ok(cells[1].title.startsWith("weights[word 1 → key B] = "), cells[1].title);
  assert.equal(await page.textContent("#h0-weights h3 .shape"), "(3, 2)");
  await assertPageShowsApi({ x: lesson.x, context: cross.context, w_q: lesson.w_q, w_k: lesson.w_k,
                             w_v: lesson.w_v, num_heads: 1, tokens: lesson.tokens,
                             context_tokens: ["key A", "key B"] });
  await rendered(() => page.uncheck("#use-context"));
});

test("errors: a ragged X is shown next to the X editor with the API's own words", async () => {
  await rendered(() => page.click('button[data-preset="001"]'));
  await page.click('#field-x .seg label:has(input[value="text"])');
  const ragged = "[[1, 0, 1, 0],\n [0, 2, 0],\n [1, 1, 1, 1]]";
  await failed(() => page.fill("#text-x", ragged));
  const err = page.locator("#field-x #err-x");
  assert.ok(await err.isVisible(), "the message sits inside the X editor");
  assert.equal(await err.getAttribute("data-pointer"), "/x/1");
  assert.equal(await err.getAttribute("data-code"), "ragged_array");
  const lesson = LESSONS["001"];
  const reply = await api({ x: [[1, 0, 1, 0], [0, 2, 0], [1, 1, 1, 1]], w_q: lesson.w_q, w_k: lesson.w_k,
                            w_v: lesson.w_v, num_heads: 1, tokens: lesson.tokens });
  assert.equal(reply.status, 400);
  assert.equal(reply.json.pointer, "/x/1");
  assert.equal(await err.textContent(), `ragged_array at /x/1: ${reply.json.detail}`);
  assert.equal(await page.getAttribute("#text-x", "aria-invalid"), "true");
  assert.equal(await page.isVisible("#err-general"), false);
  assert.match(await page.getAttribute("#results", "class"), /stale/);
  await shot("error-ragged.png");

  // fixing the row clears the message
  await rendered(() => page.fill("#text-x", "[[1, 0, 1, 0],\n [0, 2, 0, 2],\n [1, 1, 1, 1]]"));
  assert.equal(await err.isVisible(), false);
  assert.equal(await page.getAttribute("#text-x", "aria-invalid"), null);
});

test("errors: each pointer lands at its own field (num_heads, w_k from the grid, tokens, a typo)", async () => {
  await rendered(() => page.click('button[data-preset="001"]'));
  // 3 heads cannot split 4 columns
  await failed(() => page.fill("#num_heads", "3"));
  assert.equal(await page.getAttribute("#err-num_heads", "data-pointer"), "/num_heads");
  assert.match(await page.textContent("#err-num_heads"), /^invalid_num_heads at \/num_heads: 3 heads do not divide/);
  assert.equal(await page.getAttribute("#num_heads", "aria-invalid"), "true");
  await rendered(() => page.fill("#num_heads", "1"));

  // removing a row of W_k in the grid: W_k has 3 rows but X has 4 columns
  await failed(() => page.click('#field-w_k button[aria-label="W_k: remove row"]'));
  assert.equal(await page.getAttribute("#err-w_k", "data-pointer"), "/w_k");
  assert.match(await page.textContent("#field-w_k #err-w_k"), /^shape_mismatch at \/w_k: w_k has 3 rows/);
  await rendered(() => page.click('#field-w_k button[aria-label="W_k: add row"]'));

  // two labels for three tokens
  await failed(() => page.fill("#tokens", "a, b"));
  assert.match(await page.textContent("#err-tokens"), /^shape_mismatch at \/tokens: tokens has 2 labels for 3 tokens/);
  await rendered(() => page.fill("#tokens", "a, b, c"));
  assert.deepEqual((await heatmap(0)).slice(0, 3).map((c) => c.title.split(" = ")[0]),
                   ["weights[a → a]", "weights[a → b]", "weights[a → c]"]);

  // a typo is caught by the page itself, next to the cell's editor, and nothing is sent
  const before = await renders();
  await failed(() => page.fill('#field-w_q input[aria-label="W_q row 1 column 2"]', "0.3x"));
  assert.equal(await page.textContent("#err-w_q"), 'W_q row 1 column 2: "0.3x" is not a number');
  assert.equal(await renders(), before);
  await rendered(() => page.fill('#field-w_q input[aria-label="W_q row 1 column 2"]', "0.3"));
  await shot("errors-fixed.png");
});

test("pasted NumPy printouts and whitespace rows are read exactly", async () => {
  const lesson = LESSONS["002"];
  await rendered(() => page.click('button[data-preset="002"]'));
  await page.click('#field-x .seg label:has(input[value="text"])');
  // NumPy's own repr of X (17 significant digits survive the round trip)
  const printed = execFileSync(PYTHON, ["-c",
    "import numpy as np, json, sys; np.set_printoptions(precision=17, floatmode='unique', linewidth=90);"
    + "print(repr(np.array(json.load(sys.stdin))))"], { input: JSON.stringify(lesson.x) }).toString();
  assert.match(printed, /^array\(\[\[/);
  const a = await rendered(() => page.fill("#text-x", printed));
  assert.deepEqual(a.x, lesson.x);
  const rows = lesson.x.map((r) => r.map(String).join("  ")).join("\n");
  const b = await rendered(() => page.fill("#text-x", `${rows}\n`));
  assert.deepEqual(b.x, lesson.x);
  // a per-head stack pasted as blocks separated by a blank line
  await page.click('#field-w_v .seg label:has(input[value="text"])');
  const stack = [0, 1].map((hd) => lesson.w_v.map((r) => r.slice(4 * hd, 4 * hd + 4).join(" ")).join("\n")).join("\n\n");
  const c = await rendered(() => page.fill("#text-w_v", stack));
  assert.equal(c.w_v.length, 2);
  assert.deepEqual(c.w_v[1][7], lesson.w_v[7].slice(4, 8));
  // the same numbers as columns of one matrix: same weights
  const again = await heatmap(1);
  await rendered(() => page.click('button[data-preset="002"]'));
  assert.deepEqual(await heatmap(1), again);
});

test("narrow screen: no sideways scrolling at 390 px, and every control has a name", async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  try {
    await rendered(() => page.click('button[data-preset="002"]'));
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 390, `page is ${width} px wide at a 390 px viewport`);
    await shot("narrow-390.png");
  } finally {
    await page.setViewportSize({ width: 1280, height: 900 });
  }
  const unnamed = await page.evaluate(() => [...document.querySelectorAll("input, select, textarea, button")]
    .filter((e) => !(e.getAttribute("aria-label") || e.labels?.length || e.textContent.trim()
                     || e.getAttribute("aria-labelledby")))
    .map((e) => e.outerHTML.slice(0, 80)));
  assert.deepEqual(unnamed, []);
});

test("the page talked only to its own server and raised no errors", () => {
  assert.deepEqual(outside, []);
  // Chromium logs each 4xx answer; the four are the API errors provoked above
  // (ragged X, num_heads, w_k, tokens).
  const provoked = /Failed to load resource: the server responded with a status of 400/;
  assert.equal(pageErrors.filter((e) => provoked.test(e)).length, 4);
  assert.deepEqual(pageErrors.filter((e) => !provoked.test(e)), []);
});
