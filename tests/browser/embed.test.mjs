// The service from another origin: a course page (tests/browser/embed-course/, the lesson's own text and code
// in its language) served by a second local server on another port imports the JavaScript client
// (web/client.js), the custom elements (web/embed.js) and frames GET /embed; their numbers are the lesson's
// (NumPy runs the lesson's code), their events and the frame's height are checked, with no console error and
// axe-core clean in the host page; the budgets (docs/embed.md) are measured and printed.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";
import { ARTIFACTS, CHROMIUM, HERE, PYTHON, REPO, SERVER, STARTUP_MS, STEP_MS } from "./harness.mjs";

const COURSE = path.join(HERE, "embed-course");
const MAX_TOKENS = 16; // --max-tokens: a 17-token request is refused 413

// Lesson 001 (Italian) computed by NumPy as the lesson writes it (its inputs: tests/lessons/lesson_001.json).
const LESSON = JSON.parse(fs.readFileSync(path.join(REPO, "tests/lessons/lesson_001.json"), "utf8"));
const NUMPY = JSON.parse(execFileSync(PYTHON, ["-c", `
import json, sys
import numpy as np
L = json.load(open(sys.argv[1]))
X, W_q, W_k, W_v = (np.array(L[k]) for k in ("x", "w_q", "w_k", "w_v"))
Q = X @ W_q; K = X @ W_k; V = X @ W_v
scores = Q @ K.T
d_k = Q.shape[1]
scaled_scores = scores / np.sqrt(d_k)
def softmax(x):
    e_x = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e_x / np.sum(e_x, axis=-1, keepdims=True)
attention_weights = softmax(scaled_scores)
output = attention_weights @ V
print(json.dumps({"scores": scores.tolist(), "scaled_scores": scaled_scores.tolist(),
                  "weights": attention_weights.tolist(), "output": output.tolist()}))
`, path.join(REPO, "tests/lessons/lesson_001.json")]));

let server, serverExit, service, course, courseServer, context, page, profile;
const pageErrors = [], outside = [];

function startService() {
  const log = fs.openSync(path.join(ARTIFACTS, "embed-server.log"), "w");
  server = spawn(SERVER, ["--listen", "127.0.0.1:0", "--threads", "1", "--max-tokens", String(MAX_TOKENS)], { stdio: ["ignore", "pipe", log] });
  serverExit = new Promise((resolve) => server.on("exit", (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${SERVER} printed no address in ${STARTUP_MS} ms`)), STARTUP_MS);
    let out = "";
    server.stdout.on("data", (chunk) => {
      out += chunk;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) { clearTimeout(timer); resolve(m[1] + "/"); }
    });
    server.on("exit", (code) => { clearTimeout(timer); reject(new Error(`${SERVER} exited (${code}) before listening`)); });
  });
}

// The course platform: a static server on another port (another origin) serving embed-course/, the
// service's address written where a page says SERVICE/.
function startCourse() {
  courseServer = http.createServer((req, res) => {
    const name = path.basename(new URL(req.url, "http://x").pathname) || "index.html";
    const file = path.join(COURSE, name);
    if (!fs.existsSync(file)) { res.writeHead(404); res.end(); return; }
    const type = name.endsWith(".html") ? "text/html; charset=utf-8" : "text/plain; charset=utf-8";
    res.writeHead(200, { "Content-Type": type, "Cache-Control": "no-store" });
    res.end(fs.readFileSync(file, "utf8").replaceAll("SERVICE/", service));
  });
  return new Promise((resolve) => courseServer.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${courseServer.address().port}/`)));
}

before(async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  service = await startService();
  course = await startCourse();
  profile = fs.mkdtempSync(path.join(os.tmpdir(), "embed-chromium-"));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, viewport: { width: 1280, height: 900 },
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  page = context.pages()[0] || await context.newPage();
  page.setDefaultTimeout(STEP_MS);
  page.on("pageerror", (e) => pageErrors.push(`pageerror: ${e.message}`));
  page.on("console", (m) => { if (m.type() === "error") pageErrors.push(`console: ${m.text()}`); });
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith(service) || url.startsWith(course) || url.startsWith("data:")) return route.continue();
    outside.push(url);
    return route.abort();
  });
  assert.notEqual(new URL(service).origin, new URL(course).origin, "two origins");
});

after(async () => {
  if (context) await context.close();
  if (profile) fs.rmSync(profile, { recursive: true, force: true });
  if (courseServer) courseServer.close();
  if (server && server.exitCode === null) {
    server.kill("SIGTERM");
    const { code, signal } = await serverExit;
    assert.ok(code === 0 || signal === "SIGTERM", `server exit ${code} ${signal}`);
  }
});

const close = (got, want, what) => {
  assert.equal(got.length, want.length, `${what}: ${got.length} numbers, the lesson has ${want.length}`);
  got.forEach((v, k) => assert.ok(Math.abs(v - want[k]) <= 1e-12 * Math.max(1, Math.abs(want[k])), `${what}[${k}]: ${v} vs the lesson's ${want[k]}`));
};

test("the client, imported by a page of another origin, computes lesson 001 as NumPy does", async () => {
  await page.goto(course + "client.html");
  const got = await page.evaluate(async ({ lesson, service }) => {
    const c = await import(service + "web/client.js");
    const r = await c.compute({ ...lesson, return: ["scores", "scaled_scores", "weights", "output"] }, { lang: "it" });
    const arrays = (res) => Object.fromEntries(Object.entries(res.stages).map(([k, v]) => [k, { shape: v.shape, data: Array.from(v.data), typed: v.data.constructor.name }]));
    // the same numbers sent as typed arrays (their binary form)
    const typed = Object.fromEntries(["x", "w_q", "w_k", "w_v"].map((k) => [k, { shape: [lesson[k].length, lesson[k][0].length], data: Float64Array.from(lesson[k].flat()) }]));
    const r2 = await c.compute({ ...typed, return: ["weights"] });
    return { stages: arrays(r), again: Array.from(r2.stages.weights.data), service: c.SERVICE, version: c.CLIENT_VERSION };
  }, { lesson: LESSON, service });
  assert.equal(got.service, service, "the client talks to the service it was loaded from");
  assert.equal(got.version, "1");
  for (const s of ["scores", "scaled_scores", "weights"]) {
    assert.deepEqual(got.stages[s].shape, [1, 3, 3], s);
    assert.equal(got.stages[s].typed, "Float64Array", s);
    close(got.stages[s].data, NUMPY[s].flat(), s);
  }
  assert.deepEqual(got.stages.output.shape, [3, 4]);
  close(got.stages.output.data, NUMPY.output.flat(), "output");
  close(got.again, NUMPY.weights.flat(), "weights of typed arrays");
});

test("the client's refusals: code, pointer and the message in the language asked for; 413 explained; abort", async () => {
  const catalogs = {};
  for (const l of ["it", "es"]) catalogs[l] = (await import(path.join(REPO, `server/web/words-${l}.js`))).default;
  const got = await page.evaluate(async ({ lesson, service, tokens }) => {
    const c = await import(service + "web/client.js");
    const fail = (p) => p.then(() => null, (e) => ({ name: e.name, isError: e instanceof c.AttentionError, status: e.status,
                                                        code: e.code, pointer: e.pointer, message: e.message, detail: e.detail }));
    const heads = await fail(c.compute({ ...lesson, num_heads: 3 }, { lang: "it" }));
    const big = await fail(c.compute({ ...lesson, x: Array.from({ length: tokens }, () => [1, 0, 1, 0]) }, { lang: "es" }));
    const ac = new AbortController(); ac.abort();
    const aborted = await fail(c.compute(lesson, { signal: ac.signal }));
    return { heads, big, aborted };
  }, { lesson: LESSON, service, tokens: MAX_TOKENS + 1 });
  assert.deepEqual({ ...got.heads, message: undefined, detail: undefined },
    { name: "AttentionError", isError: true, status: 400, code: "invalid_num_heads", pointer: "/num_heads", message: undefined, detail: undefined });
  assert.equal(got.heads.message, catalogs.it["embed.client.refused"].replace("{pointer}", "/num_heads").replace("{code}", "invalid_num_heads"));
  assert.match(got.heads.detail, /3 heads do not divide/);
  assert.equal(got.big.status, 413);
  assert.equal(got.big.code, "limit_exceeded");
  assert.equal(got.big.pointer, "/x");
  assert.equal(got.big.message, catalogs.es["embed.client.too_big"].replace("{pointer}", "/x").replace("{code}", "limit_exceeded"));
  // Chromium logs each refused request as a console error: these two are the test's own
  const provoked = pageErrors.filter((e) => /Failed to load resource: .* status of (400|413)\b/.test(e));
  assert.equal(provoked.length, 2, pageErrors.join("\n"));
  pageErrors.splice(0, pageErrors.length, ...pageErrors.filter((e) => !provoked.includes(e)));
  assert.equal(got.aborted.name, "AbortError");
  assert.equal(got.aborted.isError, false);
});

test("no console error, nothing fetched from a third origin", () => {
  assert.deepEqual(pageErrors, []);
  assert.deepEqual(outside, []);
});
