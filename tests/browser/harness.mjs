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
// Screenshots go to tests/artifacts/ (git-ignored).  The files run side by
// side (suite.mk), so what a file writes there carries its name: the logs
// and notes of the harness are artifact("server.log") and the like, i.e.
// tests/artifacts/page-server.log for page.test.mjs; a file's own
// screenshots and logs take names no other file uses (best: artifact(…)).
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

// The test file this process runs (node --test runs each file in a process
// of its own), without ".test.mjs": the first part of its artifacts' names.
export const FILE = path.basename(process.argv[1] || "browser", ".test.mjs");
// ARTIFACTS/<FILE>-<what>: an artifact of this file, beside those of the
// files running at the same time.
export const artifact = (what) => path.join(ARTIFACTS, `${FILE}-${what}`);

let server, serverExit, profile;
export let context;
export let base, page;
export const outside = []; // requests the page made to any other origin
export const pageErrors = []; // uncaught exceptions and console errors
export const CHROMIUM_LOG = artifact("chromium.log"); // Chromium's own log (--log-file)
export const CHROMIUM_LOG_LINES = 8; // of it, the newest, quoted with a note of health
// What the page and the browser were doing when a test failed or the page
// stopped drawing frames; make test-browser prints every file's after the run.
export const HEALTH = artifact("health.txt");

/* ---- the server ---------------------------------------------------------- */

// Starts the service with `args` beside its listen address, its stderr into
// ARTIFACTS/`logName` (a name that starts with the file's: "cors-upload-server.log";
// default artifact("server.log")): { proc, exit (a promise of { code, signal
// }), url (a promise of its address, rejected if it exits or is silent first) }.
export function spawnService(args, logName = path.basename(artifact("server.log"))) {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const log = fs.openSync(path.join(ARTIFACTS, logName), "w");
  const proc = spawn(SERVER, ["--listen", "127.0.0.1:0", ...args], { stdio: ["ignore", "pipe", log] });
  const exit = new Promise((resolve) => proc.on("exit", (code, signal) => resolve({ code, signal })));
  const url = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${SERVER} printed no address in ${STARTUP_MS} ms`)), STARTUP_MS);
    let out = "";
    proc.stdout.on("data", (chunk) => {
      out += chunk;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) { clearTimeout(timer); resolve(m[1] + "/"); }
    });
    proc.on("error", (e) => { clearTimeout(timer); reject(e); });
    proc.on("exit", (code) => { clearTimeout(timer); reject(new Error(`${SERVER} exited (${code}) before listening`)); });
  });
  return { proc, exit, url };
}

export function startServer() {
  const s = spawnService(["--threads", "1"]);
  server = s.proc;
  serverExit = s.exit;
  return s.url;
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

// Whether the page draws a frame within `ms`: true at its first frame (a
// page that draws answers in one frame's time, not in `ms`), false when none
// came or the page did not answer.
export function drawsAFrame(ms) {
  const drawn = page.evaluate((ms) => new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    requestAnimationFrame(() => { clearTimeout(timer); resolve(true); });
  }), ms);
  return Promise.race([drawn, new Promise((resolve) => setTimeout(() => resolve(false), ms + 2000))]);
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
    if (!page || (await drawsAFrame(500))) return;
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

// A 3× picture of every head is encoded as a PNG in the page before its
// download starts: seconds on a busy machine, more than one render's STEP_MS.
export const DOWNLOAD_MS = 60_000;
// Once in a few runs, on a quiet machine, Chromium gives no "download"
// event for an export click (the page settled, no error; the clean-clone
// run of 7710b47, an SVG of slide-ready's loop): the click is made once
// more, and said on the output, so a lost click is seen, not hidden.
const DOWNLOAD_FIRST_MS = 20_000;
export async function downloaded(action) {
  let dl;
  try {
    [dl] = await Promise.all([page.waitForEvent("download", { timeout: DOWNLOAD_FIRST_MS }), action()]);
  } catch (e) {
    if (e.name !== "TimeoutError") throw e;
    console.log(`# download: no "download" event ${DOWNLOAD_FIRST_MS / 1000} s after the click; clicked again`);
    [dl] = await Promise.all([page.waitForEvent("download", { timeout: DOWNLOAD_MS }), action()]);
  }
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

/* ---- reading the page as a person does ----------------------------------- */

// What a person reads or hears in the visible page: each visible text node
// (with the element it sits in) and the names a screen reader speaks
// (aria-label, title, placeholder, alt, a visible select's options).  Code a
// student copies (the scripts, the curl command, inputs' values) is not prose
// and is left out; so are the names an element's data-code lists (an API name
// in its title, which no <code> can mark).
export function readable() {
  return page.evaluate(() => {
    const out = [];
    const shownEl = (e) => e.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true });
    const where = (e) => {
      const parts = [];
      for (let n = e; n && n !== document.body && parts.length < 4; n = n.parentElement) {
        parts.unshift(n.id ? `#${n.id}` : n.tagName.toLowerCase() + (n.classList.length ? `.${[...n.classList].join(".")}` : ""));
        if (n.id) break;
      }
      return parts.join(" > ");
    };
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let t = walker.nextNode(); t; t = walker.nextNode()) {
      const e = t.parentElement;
      if (!t.data.trim() || !e || e.closest("script, style, textarea, option, noscript") || !shownEl(e)) continue;
      out.push({ kind: "text", where: where(e), text: t.data.replace(/\s+/g, " ").trim(),
                 context: (e.closest("p, li, h1, h2, h3, h4, td, th, button, label, summary, figcaption, caption, text, .card") || e)
                   .textContent.replace(/\s+/g, " ").trim().slice(0, 160),
                 code: !!e.closest("code, pre") });
    }
    for (const e of document.body.querySelectorAll("[aria-label], [title], [placeholder], [alt], [aria-description], [aria-roledescription]")) {
      if (!shownEl(e) || e.closest("[aria-hidden=true]")) continue;
      for (const a of ["aria-label", "title", "placeholder", "alt", "aria-description", "aria-roledescription"]) {
        const v = e.getAttribute(a);
        if (v && v.trim()) out.push({ kind: a, where: where(e), text: v.replace(/\s+/g, " ").trim(), context: v.slice(0, 160), code: false,
                                      codeNames: (e.dataset.code || "").split(/\s+/).filter(Boolean) });
      }
    }
    for (const s of document.body.querySelectorAll("select")) {
      if (!shownEl(s)) continue;
      for (const o of s.options) out.push({ kind: "option", where: where(s), text: o.text.trim(), context: o.text.trim(), code: false });
    }
    return out;
  });
}

// Words a page never shows: JavaScript's values printed as text, and a
// message id the catalog of the page's language lacks (words.js writes ⟦id⟧).
// "null" between letters (Italian "nulla") is a word, not a value.
export const BROKEN = /(?<!\p{L})(null|undefined|NaN)(?!\p{L})|\[object|⟦/u;

// The page's catalogs (server/web/words-*.js), loaded as the page loads them.
export async function catalogs() {
  const out = {};
  for (const code of ["en", "es", "it", "tr"])
    out[code] = (await import(path.join(REPO, `server/web/words-${code}.js`))).default;
  return out;
}

// The words of a text, lower case; a name with an underscore or a digit
// (masked_scores, W_q, float64, tok0) is a name, not a word of a language.
export const proseWords = (text) => (text.toLowerCase().match(/[\p{L}\p{M}\p{N}_]+/gu) || []).filter((w) => !/[_\d]/.test(w));

// The words of a catalog's messages (placeholders and markup out), lower case.
export function catalogWords(catalog) {
  const words = new Set();
  for (const text of Object.values(catalog))
    for (const w of proseWords(String(text).replace(/\{\w+\}/g, " "))) words.add(w);
  return words;
}

// English a page of another language must not show: the words of the
// English catalog and common English words, less those the page's own catalog
// uses (a name it keeps: softmax, NumPy, float64) and `allowed` (mathematical
// names, the lesson's variables and token labels).  Words of one or two
// letters (Q, K, d_k, "a", "no") are not judged.
export const ENGLISH_COMMON = `the of and to is are each with from this that these its by for on as at be or not into
which what how row rows column columns head heads key keys query queries weight weights token tokens step next
previous show hide open close load lesson compute scores scaled output value values matrix matrices sum over
every one two three per your guess reveal mode guided chosen cell click tap focus press enter choose another
exact number numbers change watch page link copy save download stage stages layer layers scale colour color
largest smallest darkest light dark lines line view model compare difference first second mask masked hidden
none off all only when then than here there after before computed shown side time results result`.split(/\s+/);
// English words no Spanish, Italian or Turkish sentence uses, even where its own catalog holds them (a
// translation that left "Grouped-query attention" in English would otherwise allow itself).
export const ENGLISH_ONLY = `the of and with which this that these from into your what how when then than here there
grouped`.split(/\s+/);
export function englishWords(cats, lang, allowed = []) {
  const own = new Set([...catalogWords(cats[lang])].filter((w) => !ENGLISH_ONLY.includes(w))), allow = new Set(allowed.map((w) => w.toLowerCase()));
  const english = new Set([...catalogWords(cats.en), ...ENGLISH_COMMON]);
  return new Set([...english].filter((w) => w.length >= 3 && !own.has(w) && !allow.has(w)));
}

// Mathematical names, in any language.
export const MATH_NAMES = ["softmax", "concat", "dtype", "float64", "float32", "numpy", "pytorch", "alibi", "rope",
  "gqa", "json", "csv", "png", "svg", "npy", "curl", "exp", "max", "sqrt", "api", "http", "state_dict", "llama",
  "roformer", "mistral", "nn.multiheadattention", "scaled_dot_product_attention", "in_proj_weight", "attn_mask"];
// The lessons' own variables, in any language (000: scores; 001: scores,
// output; 002: skor): { key: [name, …] }, read from the page's one table of
// them (server/web/lesson-names.js: each stage's name, the list of heads,
// what √ is taken of, the left side of each line of code), so the page must
// be open.  LESSON_CODE: each lesson's own code, where each must be written.
export async function lessonNames() {
  const table = await page.evaluate(async () => (await import(new URL("web/lesson-names.js", document.baseURI).href)).LESSON_NAMES);
  const ids = (s) => String(s ?? "").match(/[A-Za-z_]\w*/g) || [];
  return Object.fromEntries(Object.entries(table).map(([key, l]) => [key, [...new Set([...Object.values(l.stages), l.heads, l.dk,
    ...Object.values(l.code).map((line) => line.split(" = ")[0])].flatMap(ids))]]));
}
export const LESSON_CODE = Object.fromEntries(fs.readFileSync(path.join(REPO, "tests/lessons/lessons.py"), "utf8")
  .split(/^def lesson_/m).slice(1).map((f) => [f.slice(0, 3), f]));

// Reads the visible page and returns what a person would find wrong with its
// words: a broken value or key, and (in a page of another language than
// English) English words, each with where it is and the sentence around it.
export function wordFaults(items, english) {
  const bad = [];
  for (const it of items) {
    if (BROKEN.test(it.text)) bad.push(`${it.where} (${it.kind}): "${it.context}"`);
    if (!english || it.code) continue;
    const words = proseWords(it.text).filter((w) => english.has(w) && !(it.codeNames || []).includes(w));
    if (words.length) bad.push(`${it.where} (${it.kind}) English "${[...new Set(words)].join(", ")}": "${it.context}"`);
  }
  return [...new Set(bad)];
}

// Every element whose text or content a person cannot read whole: a box that
// clips (overflow hidden or clip, an SVG) holding more than it shows, text cut
// by an ellipsis, text running out of its own box, text outside a clipping
// ancestor, and a page wider than the window.  A scroll box is not a fault
// (its content is one scroll away; the layout tests give wide ones a cue);
// visually hidden text for screen readers (.sr-only) is heard, not seen.
export function clippedText() {
  return page.evaluate(() => {
    const bad = [], SLACK = 1;
    const shownEl = (e) => e.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true });
    const where = (e) => {
      const parts = [];
      for (let n = e; n && n !== document.body && parts.length < 4; n = n.parentElement) {
        parts.unshift(n.id ? `#${n.id}` : n.tagName.toLowerCase() + (n.classList?.length ? `.${[...n.classList].join(".")}` : ""));
        if (n.id) break;
      }
      return parts.join(" > ");
    };
    const says = (e) => `"${(e.textContent || "").replace(/\s+/g, " ").trim().slice(0, 90)}"`;
    const srOnly = (e) => !!e.closest(".sr-only");
    const clips = (e) => {
      if (e instanceof SVGSVGElement) return getComputedStyle(e).overflow !== "visible";
      const st = getComputedStyle(e);
      return /hidden|clip/.test(st.overflowX) || /hidden|clip/.test(st.overflowY);
    };
    const scrolls = (st) => /auto|scroll/.test(st.overflowX + st.overflowY);
    for (const e of document.body.querySelectorAll("*")) {
      if (!shownEl(e) || srOnly(e)) continue;
      if (e instanceof SVGElement && !(e instanceof SVGSVGElement)) continue;
      const st = getComputedStyle(e);
      if (st.display === "inline" || st.display === "contents" || e.clientWidth === 0) continue;
      const wide = e.scrollWidth > e.clientWidth + SLACK, tall = e.scrollHeight > e.clientHeight + SLACK;
      const ownText = [...e.childNodes].some((n) => n.nodeType === 3 && n.data.trim());
      if (e.tagName === "CANVAS" || e.tagName === "IMG" || e.tagName === "INPUT" || e.tagName === "SELECT" || e.tagName === "TEXTAREA") continue;
      if (st.textOverflow === "ellipsis" && wide) bad.push(`${where(e)} cuts its text with an ellipsis (${e.scrollWidth} > ${e.clientWidth} px): ${says(e)}`);
      else if (!(e instanceof SVGSVGElement) && clips(e) && ((/hidden|clip/.test(st.overflowX) && wide) || (/hidden|clip/.test(st.overflowY) && tall)))
        bad.push(`${where(e)} cuts its content (${e.scrollWidth}×${e.scrollHeight} in ${e.clientWidth}×${e.clientHeight} px): ${says(e)}`);
      else if (ownText && !scrolls(st) && wide && st.overflowX === "visible")
        bad.push(`${where(e)}: its text runs out of its box (${e.scrollWidth} > ${e.clientWidth} px): ${says(e)}`);
    }
    // each visible text (in HTML or SVG) inside every clipping ancestor, and inside the window's width
    const range = document.createRange(), view = document.documentElement.clientWidth;
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const reported = new Set();
    for (let t = walker.nextNode(); t; t = walker.nextNode()) {
      const e = t.parentElement;
      if (!t.data.trim() || !e || e.closest("script, style, textarea, option") || srOnly(e) || !shownEl(e)) continue;
      range.selectNodeContents(t);
      const r = range.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      let inScroll = false;
      for (let a = e.parentElement; a && a !== document.documentElement && !inScroll; a = a.parentElement)
        inScroll = !(a instanceof SVGElement) && scrolls(getComputedStyle(a));
      if (!inScroll && r.right > view + SLACK && !reported.has(e)) {
        reported.add(e);
        bad.push(`${where(e)} reaches ${Math.round(r.right + scrollX)} px, past the window's ${view} px: "${t.data.trim().slice(0, 90)}"`);
      }
      for (let a = e.parentElement; a && a !== document.documentElement; a = a.parentElement) {
        if (!clips(a)) continue;
        if (!(a instanceof SVGSVGElement) && scrolls(getComputedStyle(a))) continue;
        const b = a.getBoundingClientRect();
        const l = b.left + (a.clientLeft || 0), top = b.top + (a.clientTop || 0);
        const w = a instanceof SVGSVGElement ? b.width : a.clientWidth, h = a instanceof SVGSVGElement ? b.height : a.clientHeight;
        if (r.left < l - SLACK || r.right > l + w + SLACK || r.top < top - SLACK || r.bottom > top + h + SLACK) {
          const key = `${where(e)}|${where(a)}`;
          if (!reported.has(key)) { reported.add(key); bad.push(`${where(e)}: "${t.data.trim().slice(0, 90)}" lies outside ${where(a)}, which clips it`); }
          break;
        }
      }
    }
    if (document.documentElement.scrollWidth > window.innerWidth)
      bad.push(`the page is ${document.documentElement.scrollWidth} px wide in a ${window.innerWidth} px window`);
    return bad;
  });
}

// The one rule for numbers in a language: shown()'s digits with the
// language's decimal separator.
export const decimalMark = (lang) => new Intl.NumberFormat(lang).formatToParts(1.5).find((p) => p.type === "decimal").value;
export const shownIn = (v, lang) => (lang === "en" ? shown(v) : shown(v).replace(".", decimalMark(lang)));

// Every number the page shows in a cell or a formula (td[data-value],
// .num[data-exact]) written by the one rule from its exact value, and that
// value one of `known` (the reply's and the request's numbers, as
// String(Number(text))) where it is a stage's cell or a formula's result.
export async function numberFaults(known, lang) {
  const got = await page.evaluate(() => {
    const shownEl = (e) => e.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true });
    return [...document.querySelectorAll("td[data-value], .num[data-exact]")].filter((e) => shownEl(e) && e !== document.activeElement)
      .map((e) => ({ id: e.closest("[id]")?.id, text: e.textContent, exact: e.dataset.value ?? e.dataset.exact, term: e.dataset.term ?? "cell",
                     masked: e.classList.contains("masked"), stage: e.closest(".card")?.dataset.stage ?? "" }));
  });
  const bad = [];
  for (const n of got) {
    const v = n.exact === "−∞" ? -Infinity : Number(n.exact.replace(/\u2212/g, "-"));
    if (n.exact !== "−∞" && Number.isNaN(v)) { bad.push(`#${n.id} ${n.term}: exact value "${n.exact}"`); continue; }
    const want = n.masked && n.stage === "weights" ? "·" : v === -Infinity ? "−∞" : shownIn(v, lang);
    if (n.text !== want) bad.push(`#${n.id} ${n.term} shows "${n.text}", its value ${n.exact} is written "${want}"`);
    if ((n.term === "cell" || n.term === "result") && known && v !== -Infinity && !known.has(String(v)) && !n.id?.startsWith("cmp"))
      bad.push(`#${n.id} ${n.term} ${n.exact} is none of the reply's numbers`);
  }
  return bad;
}

// Every number of an API reply (and of the request sent), as String(Number).
export function numbersOf(...texts) {
  const out = new Set();
  for (const t of texts) for (const m of t.match(/-?\d[\d.eE+-]*/g) || []) out.add(String(Number(m)));
  return out;
}

// axe-core's findings of `impact` or worse (moderate: anything a person
// using a screen reader or a keyboard would notice), inside `selectors` (one
// or a list: the parts of the page a state changed).
export async function axeFindings(selectors = "html", impacts = ["moderate", "serious", "critical"]) {
  if (!(await page.evaluate(() => !!window.axe))) await page.addScriptTag({ path: path.join(HERE, "node_modules/axe-core/axe.min.js") });
  const include = [selectors].flat().map((s) => [s]);
  const r = await page.evaluate((inc) => window.axe.run({ include: inc.filter(([s]) => document.querySelector(s)) },
                                                        { resultTypes: ["violations"] }), include);
  return r.violations.filter((v) => impacts.includes(v.impact))
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join("; ")}`);
}
