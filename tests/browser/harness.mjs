// The harness of the visualizer's end-to-end tests (*.test.mjs here): the
// page (server/web/) in Debian's headless Chromium, driven by playwright-core.
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
// Each test file opens the page once (openPage) on a server of its own and
// ends with finalChecks.
//
// Screenshots go to tests/artifacts/ (git-ignored).
import { after, before, beforeEach, test as nodeTest } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(HERE, "../..");
export const SERVER = path.resolve(REPO, process.env.ATTENTION_SERVER || "build/attention-server");
export const PYTHON = process.env.PYTHON || "/usr/bin/python3";
export const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
export const ARTIFACTS = path.resolve(REPO, process.env.ARTIFACTS || "tests/artifacts");
export const STARTUP_MS = 10_000; // the server prints its address well within this
export const STEP_MS = 15_000; // one render: a request plus drawing, normally < 100 ms
export const STAGES = ["q", "k", "v", "scores", "scaled_scores", "masked_scores",
                "weights", "head_outputs", "concat", "output"];
export const PER_HEAD = STAGES.slice(0, 8);

export const LESSONS = JSON.parse(execFileSync(PYTHON, [path.join(REPO, "tools/gen_presets.py"), "--json"]));

// Chromium keeps the bitmaps of the frames it draws in shared memory: in
// /dev/shm when that has room (a tmpfs, memory), else in files under /tmp,
// which share the disk with everything else.  Playwright picks /tmp always
// (--disable-dev-shm-usage, for containers whose /dev/shm is 64 MiB).
export const SHM = "/dev/shm";
export const SHM_MIN_MIB = 1024;
export const freeMiB = (dir) => { try { const f = fs.statfsSync(dir); return Math.floor((f.bavail * f.bsize) / 2 ** 20); } catch { return 0; } };

let server, serverExit, profile;
export let context;
export let base, page;
export const outside = []; // requests the page made to any other origin
export const pageErrors = []; // uncaught exceptions and console errors
export const CHROMIUM_LOG = path.join(ARTIFACTS, "chromium.log"); // Chromium's own log (--log-file)
export const CHROMIUM_LOG_LINES = 8; // of it, the newest, quoted with a note of health
// What the page and the browser were doing when a test failed or the page
// stopped drawing frames; make test-browser prints it after a failure.
export const HEALTH = path.join(ARTIFACTS, "browser-health.txt");

/* ---- the server ---------------------------------------------------------- */

export function startServer() {
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

export async function api(body) {
  const resp = await fetch(base + "v1/attention", {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  });
  const text = await resp.text();
  return { status: resp.status, text, json: JSON.parse(text) };
}

// The literal number texts of one tensor in an API response, in row-major
// order, read from the raw body (not re-formatted through a JS number).  The
// tensor is the `"name":[[` member; `shapes` holds `"name":[1,…` instead.
export function rawTensor(text, name) {
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

export const stamp = () => new Date().toISOString().slice(11, 23);

// The animation frames the page draws in `ms`, or -1 when it does not answer.
// Playwright's clicks wait for two frames (an element must hold still), and
// the page counts a render once a frame has shown it: a page that draws no
// frame fails every step.
export function framesIn(ms) {
  const count = page.evaluate((ms) => new Promise((resolve) => {
    let n = 0, counting = true;
    const tick = () => { if (counting) { n++; requestAnimationFrame(tick); } };
    requestAnimationFrame(tick);
    setTimeout(() => { counting = false; resolve(n); }, ms);
  }), ms);
  return Promise.race([count, new Promise((resolve) => setTimeout(() => resolve(-1), ms + 2000))]);
}

// One line: the page's frames and state, the server's health, the load.
export async function pageHealth() {
  const frames = await framesIn(1000);
  const state = await Promise.race([
    page.evaluate(() => ({
      visibility: document.visibilityState, focus: document.hasFocus(),
      results: document.getElementById("results").dataset.state,
      renders: window.attentionVisualizer.renders, settled: window.attentionVisualizer.stateSettled,
      status: document.getElementById("status").textContent, dialogs: document.querySelectorAll("dialog[open]").length })),
    new Promise((resolve) => setTimeout(() => resolve("no answer in 2 s"), 2000)),
  ]).catch((e) => `evaluate failed: ${e.message.split("\n")[0]}`);
  const healthz = await fetch(base + "healthz", { signal: AbortSignal.timeout(2000) }).then((r) => r.status, (e) => e.name);
  return `frames in 1 s: ${frames}; page ${JSON.stringify(state)}; server /healthz ${healthz}; `
    + `load ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}; free MiB: ${SHM} ${freeMiB(SHM)}, `
    + `${os.tmpdir()} ${freeMiB(os.tmpdir())}`;
}

// Appends lines to the health notes, with what Chromium logged since the last
// note (not its complaints about the machine's missing D-Bus).
export let chromiumLogRead = 0;
export function noteHealth(lines) {
  let logged = [];
  try {
    const log = fs.readFileSync(CHROMIUM_LOG, "utf8");
    logged = log.slice(chromiumLogRead).split("\n").filter((l) => l && !/dbus|bluez/i.test(l)).slice(-CHROMIUM_LOG_LINES);
    chromiumLogRead = log.length;
  } catch { /* Chromium has not written it */ }
  fs.appendFileSync(HEALTH, [...lines, ...logged.map((l) => `  chromium: ${l.slice(0, 300)}`)].join("\n") + "\n");
}

// A test that, when it fails, notes what the page was doing.
export function test(name, fn) {
  return nodeTest(name, async (t) => {
    try {
      return await fn(t);
    } catch (e) {
      noteHealth([`${stamp()} failed: "${name}": ${String(e.message).split("\n")[0]}; ${await pageHealth()}`]);
      throw e;
    }
  });
}

export const renders = () => page.evaluate(() => window.attentionVisualizer.renders);

// Runs action, then waits until the page has drawn a newer successful result.
export async function rendered(action, timeout = STEP_MS) {
  const before = await renders();
  await action();
  await page.waitForFunction((n) => window.attentionVisualizer.renders > n
    && document.getElementById("results").dataset.state === "ok", before, { timeout });
  await stateWritten(timeout);
  return JSON.parse(await page.evaluate(() => window.attentionVisualizer.lastRequestBody));
}

// The share link, the scripts and the exports are written after the drawing
// (the state is compressed first): wait until they describe what is on show.
// A link equal to the address alone is not enough: the last render's link is
// that too until the new one is written.
export function stateWritten(timeout = STEP_MS) {
  return page.waitForFunction(() => window.attentionVisualizer.stateSettled
    && window.attentionVisualizer.stateUrl === location.href, null, { timeout });
}

export async function failed(action) {
  await action();
  await page.waitForSelector("#results[data-state=error]", { timeout: STEP_MS });
}

// Opens head h (the small multiples are buttons; one head needs none).
export async function openHead(h) {
  const button = page.locator(`#group-heads button[data-head="${h}"]`);
  if (await button.count()) await button.click();
  await page.waitForSelector(`#h${h}-weights`);
}

// The cells of one stage card: exact value, shown text, classes.
export function cells(id) {
  return page.evaluate((id) => [...document.querySelectorAll(`#${id} td[data-value]`)].map((td) => ({
    row: Number(td.dataset.row), col: Number(td.dataset.col), value: td.dataset.value, text: td.textContent,
    title: td.title, masked: td.classList.contains("masked") })), id);
}

// The page's one rule for numbers, as docs/visualizer.md states it.
export function shown(v) {
  if (v === null) return "−∞";
  if (v === 0) return "0";
  const a = Math.abs(v), trim = (s) => (s.includes(".") ? s.replace(/\.?0+$/, "") : s);
  let s;
  if (a >= 1e-3 && a < 999.5) s = trim(v.toPrecision(3));
  else if (a >= 999.5 && a < 9999.5) s = String(Math.round(v));
  else s = v.toExponential(2).replace(/^(.*)e\+?/, (_, m) => `${trim(m)}e`);
  return s.replace(/-/g, "\u2212");
}

// A screenshot is an artifact, not a check: one that Chromium does not take
// within a step (a full page of canvases on a loaded machine) is noted in
// browser-health.txt and the test goes on.
export async function shot(name, opts = {}) {
  try {
    await page.screenshot({ path: path.join(ARTIFACTS, name), fullPage: true, ...opts });
  } catch (e) {
    if (e.name !== "TimeoutError") throw e;
    noteHealth([`${stamp()} screenshot ${name} not taken: ${String(e.message).split("\n")[0]}`]);
  }
}

// Every stage the page shows equals the API's answer to `body`, number for
// number (the page shows the shortest text of the same double), and its text
// follows the one rule; a masked weight shows "·".
// extra: the stages beyond STAGES the request's options make (q_rope, x_pe, …).
export async function assertPageShowsApi(body, extra = []) {
  const reply = await api({ ...body, return: [...STAGES, ...extra] });
  assert.equal(reply.status, 200, reply.text);
  const heads = reply.json.num_heads;
  const compare = (id, want, what) => cells(id).then((got) => {
    assert.equal(got.length, want.length, `${what}: ${got.length} cells, the API has ${want.length}`);
    got.forEach((c, k) => {
      const v = want[k];
      assert.equal(c.value === "−∞" ? null : Number(c.value), v, `${what} cell ${k}: ${c.value} ≠ ${v}`);
      if (!c.masked || !id.endsWith("weights")) assert.equal(c.text, shown(v), `${what} cell ${k} shows ${c.text}`);
      else assert.equal(c.text, "·");
    });
  });
  for (let h = 0; h < heads; h++) {
    await openHead(h);
    for (const stage of [...PER_HEAD, ...extra.filter((s) => s !== "x_pe")]) {
      // k and v: the key/value head this query head reads (grouped-query attention)
      const g = ["k", "v", "k_rope", "k_cache", "v_cache"].includes(stage) ? Math.floor((h * reply.json.shapes.k[0]) / heads) : h;
      await compare(`h${h}-${stage}`, reply.json[stage][g].flat(), `head ${h} ${stage}`);
    }
  }
  for (const stage of ["concat", "output"]) await compare(`all-${stage}`, reply.json[stage].flat(), stage);
  if (body.x) await compare("input-x", body.x.flat(), "x"); // none when q, k and v are given
  if (extra.includes("x_pe")) await compare("input-x_pe", reply.json.x_pe.flat(), "x_pe");
  await openHead(0);
  return reply;
}

// Random-looking but fixed numbers with 3 decimals: an n-token case.
export function bigCase(n, d, h) {
  let s = 7;
  const rnd = () => { s = (s * 16807) % 2147483647; return Math.round(((s / 2147483647) * 2 - 1) * 1000) / 1000; };
  const mat = (r, c) => Array.from({ length: r }, () => Array.from({ length: c }, rnd));
  return { x: mat(n, d), w_q: mat(d, d), w_k: mat(d, d), w_v: mat(d, d), num_heads: h };
}

// Types a case into the page's text editors (the way a student pastes it),
// with "update as I type" off so no half-typed case is sent, then computes.
export async function typeCase(c, timeout = STEP_MS) {
  await page.uncheck("#auto");
  await page.fill("#tokens", "");
  await page.fill("#num_heads", String(c.num_heads));
  for (const key of ["w_q", "w_k", "w_v", "x"]) {
    if (!(await page.locator(`#text-${key}`).isVisible())) await page.click(`#field-${key} .seg label:has(input[value="text"])`);
    await page.fill(`#text-${key}`, JSON.stringify(c[key]));
  }
  await page.check("#auto");
  return rendered(() => page.click("#compute"), timeout);
}

// Opens the page before a file's tests (on a server of its own) and closes both after.
export function openPage() {
  // Every test starts on a page that draws frames.  In CI, Chromium has stopped
  // drawing the page for longer than a step's timeout while the page answered,
  // raised no error and the server was healthy; if it does, this notes it and
  // wakes the page: brought to the front, then resized, then reloaded.
  beforeEach(async (t) => {
    if (!page || (await framesIn(500)) > 0) return;
    const lines = [`${stamp()} before "${t.name}": no frame in 500 ms; ${await pageHealth()}`];
    const remedies = [
      ["brought to the front", () => page.bringToFront()],
      ["resized", async () => {
        await page.setViewportSize({ width: 1281, height: 900 });
        await page.setViewportSize({ width: 1280, height: 900 });
      }],
      ["reloaded", async () => {
        await page.reload();
        await page.waitForFunction(() => window.attentionVisualizer?.renders >= 1
          && document.getElementById("results").dataset.state === "ok");
      }],
    ];
    for (const [what, remedy] of remedies) {
      await remedy();
      const frames = await framesIn(500);
      lines.push(`  ${what}: ${frames} frames in 500 ms`);
      if (frames > 0) break;
    }
    noteHealth(lines);
  });

  before(async () => {
    base = await startServer();
    profile = fs.mkdtempSync(path.join(os.tmpdir(), "visualizer-chromium-"));
    fs.rmSync(CHROMIUM_LOG, { force: true });
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      ignoreDefaultArgs: freeMiB(SHM) >= SHM_MIN_MIB ? ["--disable-dev-shm-usage"] : [],
      headless: true,
      viewport: { width: 1280, height: 900 },
      hasTouch: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--enable-logging", `--log-file=${CHROMIUM_LOG}`],
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
}

/* ---- helpers of several files -------------------------------------------- */

// Every stage card shows its matrix whole: nothing cut, no sideways scroll.
export async function assertNothingClipped(where) {
  const clipped = await page.evaluate(() => {
    const bad = [];
    for (const card of document.querySelectorAll("#stage-area .card")) {
      for (const box of [card, ...card.querySelectorAll(".scroll, .canvas-wrap")])
        if (box.scrollWidth > box.clientWidth) bad.push(`${card.id}: ${box.className || "card"} ${box.scrollWidth} > ${box.clientWidth}`);
      for (const cell of card.querySelectorAll("td, th"))
        if (cell.scrollWidth > cell.clientWidth) { bad.push(`${card.id}: cell "${cell.textContent}" ${cell.scrollWidth} > ${cell.clientWidth}`); break; }
    }
    if (document.documentElement.scrollWidth > window.innerWidth) bad.push(`page ${document.documentElement.scrollWidth} px wide`);
    return bad;
  });
  assert.deepEqual(clipped, [], `${where}: clipped`);
}

// The numbers of the open explanation, by term: {term: [exact values]}.
export function explanation() {
  return page.evaluate(() => {
    const out = {};
    for (const n of document.querySelectorAll("#explain .num[data-term]")) (out[n.dataset.term] = out[n.dataset.term] || []).push(Number(n.dataset.exact));
    return out;
  });
}

export const close = (a, b, what) => assert.ok(Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(b)), `${what}: ${a} vs the API's ${b}`);

export async function downloaded(action) {
  const [dl] = await Promise.all([page.waitForEvent("download"), action()]);
  return { name: dl.suggestedFilename(), file: await dl.path() };
}

// The cells of an exported SVG heatmap: geometry, colour and exact value.
export function svgCells(text) {
  return [...text.matchAll(/<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" fill="(rgb\([\d,]+\))" data-row="(\d+)" data-col="(\d+)" data-value="([^"]+)"\/>/g)]
    .map((m) => ({ x: Number(m[1]), y: Number(m[2]), w: Number(m[3]), h: Number(m[4]), fill: m[5], row: Number(m[6]), col: Number(m[7]), value: Number(m[8]) }));
}

// Pixels of a downloaded PNG at the given points, and its size.
export function pngPixels(file, points) {
  return page.evaluate(async ([b64, pts]) => {
    const im = new Image();
    im.src = `data:image/png;base64,${b64}`;
    await im.decode();
    const c = document.createElement("canvas");
    c.width = im.width; c.height = im.height;
    const g = c.getContext("2d");
    g.drawImage(im, 0, 0);
    return { width: im.width, height: im.height, px: pts.map(([x, y]) => Array.from(g.getImageData(x, y, 1, 1).data.slice(0, 3))) };
  }, [fs.readFileSync(file).toString("base64"), points]);
}

// axe-core (npm) run inside the page, on the states a student sees.
export async function axeViolations() {
  await page.addScriptTag({ path: path.join(HERE, "node_modules/axe-core/axe.min.js") });
  const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ["violations"] }));
  return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join("; ")}`);
}

// The page's own numbers against an independent computation, to 1e-12.
export const near = (got, want, what) => {
  const a = [got].flat(4), b = [want].flat(4);
  assert.equal(a.length, b.length, `${what}: ${a.length} numbers, expected ${b.length}`);
  a.forEach((v, k) => assert.ok(Math.abs(v - b[k]) <= 1e-12 * Math.max(1, Math.abs(b[k])), `${what} ${k}: ${v} vs ${b[k]}`));
};

export const transpose = (m) => m[0].map((_, j) => m.map((r) => r[j]));

export const values = async (id) => (await cells(id)).map((c) => Number(c.value));

// Opens (or closes) an optional panel whatever state an earlier test left it in.
export const panel = (id, open = true) => page.evaluate(([i, o]) => { document.getElementById(i).open = o; }, [id, open]);

// The page's PyTorch script, run by Debian's python3 with its PyTorch: its weights and output.
export async function runTorchScript() {
  await stateWritten();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "visualizer-torch-"));
  try {
    fs.writeFileSync(path.join(dir, "attention_torch.py"), await page.inputValue("#torch-script"));
    return JSON.parse(execFileSync(PYTHON, [path.join(dir, "attention_torch.py")]).toString());
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// The page's NumPy script, run by Debian's python3: its weights and output.
export async function runScript() {
  await stateWritten();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "visualizer-script-"));
  try {
    fs.writeFileSync(path.join(dir, "attention.py"), await page.inputValue("#numpy-script"));
    return JSON.parse(execFileSync("/usr/bin/python3", [path.join(dir, "attention.py")]).toString());
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// Page work for one edit (reading the form, decoding the reply, drawing, the
// next frame; not the server's time nor the transfer), at n tokens × 64 wide,
// 8 heads, the best of 2 edits.  The budget holds on an idle machine; on one
// shared with other work it grows with the load (runnable tasks per core,
// from the 1-minute load average), which the printed line shows.
// docs/visualizer.md quotes the figures this prints.
export const EDIT_BUDGET_MS = 300;

// The file's last test: nothing left the server's origin, no error but the
// API's 400s the file provoked.
export function finalChecks(provoked = 0) {
  test("the page talked only to its own server and raised no errors", () => {
    assert.deepEqual(outside, []);
    // Chromium logs each 4xx answer: `provoked`, the API errors the file's tests
    // provoke (the errors tests: ragged X, num_heads, w_k).
    const status400 = /Failed to load resource: the server responded with a status of 400/;
    assert.equal(pageErrors.filter((e) => status400.test(e)).length, provoked);
    assert.deepEqual(pageErrors.filter((e) => !status400.test(e)), []);
  });
}
