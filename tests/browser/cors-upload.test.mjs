// A compressed upload from a page of another origin: Chromium, on a page served by a second local server, gzips
// lesson 001 with CompressionStream and POSTs it with Content-Encoding: gzip and a W3C traceparent, which makes
// the browser send a CORS preflight first (neither header is safelisted). The service runs with that origin in
// --cors-origins; the POST must be sent and answered 200 with lesson 001's weights (the service's own answer to
// the plain body), the reply's traceparent readable by the page (exposed) in the page's trace, and the service's
// access log must show the preflight (OPTIONS, 204) before the POST with its inflated length.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";
import { ARTIFACTS, CHROMIUM, REPO, spawnService, STEP_MS } from "./harness.mjs";

const LESSON = fs.readFileSync(path.join(REPO, "tests/lessons/lesson_001.json"), "utf8").trim();
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const LOG = path.join(ARTIFACTS, "cors-upload-server.log");

let server, serverExit, service, origin, originServer, context, page, profile;

// The other origin: one blank page.
function startOrigin() {
  originServer = http.createServer((req, res) => {
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" });
    res.end("<!doctype html><html lang=en><title>another origin</title><p>uploader</p></html>");
  });
  return new Promise((resolve) => originServer.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${originServer.address().port}`)));
}

function startService(allowed) {
  const s = spawnService(["--threads", "1", "--cors-origins", allowed], path.basename(LOG));
  server = s.proc;
  serverExit = s.exit;
  return s.url;
}

before(async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  origin = await startOrigin();
  service = await startService(origin);
  profile = fs.mkdtempSync(path.join(os.tmpdir(), "cors-chromium-"));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  page = context.pages()[0] || await context.newPage();
  page.setDefaultTimeout(STEP_MS);
});

after(async () => {
  if (context) await context.close();
  if (profile) fs.rmSync(profile, { recursive: true, force: true });
  if (originServer) originServer.close();
  if (server && server.exitCode === null) {
    server.kill("SIGTERM");
    const { code, signal } = await serverExit;
    assert.ok(code === 0 || signal === "SIGTERM", `server exit ${code} ${signal}`);
  }
});

test("a page of another origin POSTs a gzip body: preflight, 200, the lesson's weights, the trace", async () => {
  const plain = await (await fetch(service + "v1/attention", {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ ...JSON.parse(LESSON), return: ["weights"] }),
  })).json();
  await page.goto(origin + "/");
  const got = await page.evaluate(async ({ lesson, service, traceId }) => {
    const body = JSON.stringify({ ...JSON.parse(lesson), return: ["weights"] });
    const gzipped = await new Response(new Blob([body]).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer();
    const r = await fetch(service + "v1/attention", {
      method: "POST", body: gzipped,
      headers: { "Content-Type": "application/json", "Content-Encoding": "gzip",
                 traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
    return { status: r.status, json: await r.json(), traceparent: r.headers.get("traceparent"),
             sent: gzipped.byteLength, plain: body.length, origin: location.origin };
  }, { lesson: LESSON, service, traceId: TRACE_ID });
  assert.equal(got.origin, origin);
  assert.notEqual(new URL(service).origin, origin, "two origins");
  assert.equal(got.status, 200, JSON.stringify(got.json));
  assert.ok(got.sent < got.plain, `gzip sent ${got.sent} bytes for ${got.plain}`);
  assert.deepEqual(got.json.weights, plain.weights);
  assert.match(got.traceparent ?? "", new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`), "the reply's traceparent, exposed");
  // the access log: the preflight, then the POST with the inflated body
  let lines = [];
  for (const start = Date.now(); Date.now() - start < 2000; await new Promise((r) => setTimeout(r, 50))) {
    lines = fs.readFileSync(LOG, "utf8").split("\n").filter((l) => l.startsWith('{"time"')).map((l) => JSON.parse(l))
      .filter((l) => l.path === "/v1/attention" && l.trace_id !== undefined);
    if (lines.some((l) => l.method === "POST" && l.trace_id === TRACE_ID)) break;
  }
  const preflight = lines.findIndex((l) => l.method === "OPTIONS" && l.status === 204);
  const post = lines.findIndex((l) => l.method === "POST" && l.trace_id === TRACE_ID);
  assert.ok(preflight >= 0 && post > preflight, JSON.stringify(lines));
  assert.equal(lines[post].status, 200);
  assert.equal(lines[post].bytes_in, got.plain, "bytes_in is the inflated body");
});
