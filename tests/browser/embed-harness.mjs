// What embed.test.mjs and embed-timed.test.mjs share: the service, a course page of another origin
// (tests/browser/embed-course/) served by a second local server, Chromium, and lesson 001 as NumPy computes it.
// openCourse() starts them before a file's tests and stops them after; each file its own (ARTIFACTS/<file>-server.log).
import { after, before } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";
import { ARTIFACTS, CHROMIUM, HERE, PYTHON, REPO, spawnService, STEP_MS } from "./harness.mjs";

export const COURSE = path.join(HERE, "embed-course");
export const BUDGET_KB = 60; // the client and one element, gzip: what a course page loads before it shows a stage
export const FIRST_RENDER_MS = 300; // lesson 001 drawn after the element's module loaded, on a quiet machine
export const MAX_TOKENS = 256; // --max-tokens: the 256-token request of the transports' measure is taken, 257 tokens refused 413

// Lesson 001 (Italian) computed by NumPy as the lesson writes it (its inputs: tests/lessons/lesson_001.json).
export const LESSON = JSON.parse(fs.readFileSync(path.join(REPO, "tests/lessons/lesson_001.json"), "utf8"));
// x: the learner's X (default the lesson's); more: other inputs in place of the lesson's (w_q, …).
export const numpy = (x = LESSON.x, more = {}) => JSON.parse(execFileSync(PYTHON, ["-c", `
import json, sys
import numpy as np
L = json.loads(sys.argv[1])
X, W_q, W_k, W_v = (np.array(L[k]) for k in ("x", "w_q", "w_k", "w_v"))
Q = X @ W_q
K = X @ W_k
V = X @ W_v
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
`, JSON.stringify({ ...LESSON, ...more, x })]));
export const NUMPY = numpy();

let server, serverExit, courseServer, profile;
export let service, course, context, page;
export const pageErrors = [], outside = [];

function startService() {
  const s = spawnService(["--threads", "1", "--max-tokens", String(MAX_TOKENS)]);
  server = s.proc;
  serverExit = s.exit;
  return s.url;
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

export function openCourse() {
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

}

// got equals the lesson's numbers want (what: where they are shown) to 1e-12.
export const close = (got, want, what) => {
  assert.equal(got.length, want.length, `${what}: ${got.length} numbers, the lesson has ${want.length}`);
  got.forEach((v, k) => assert.ok(Math.abs(v - want[k]) <= 1e-12 * Math.max(1, Math.abs(want[k])), `${what}[${k}]: ${v} vs the lesson's ${want[k]}`));
};
