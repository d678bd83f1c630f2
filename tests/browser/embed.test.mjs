// The service from another origin: a course page (tests/browser/embed-course/, the lesson's own text and code
// in its language) served by a second local server on another port imports the JavaScript client
// (web/client.js), the custom elements (web/embed.js) and frames GET /embed; their numbers are the lesson's
// (NumPy runs the lesson's code), their events and the frame's height are checked, with no console error and
// axe-core clean in the host page. embed-timed.test.mjs times them (the transports, the budgets of docs/embed.md).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ARTIFACTS, HERE, PYTHON, REPO } from "./harness.mjs";
import { close, context, course, LESSON, MAX_TOKENS, numpy, NUMPY, openCourse, outside, page, pageErrors, service } from "./embed-harness.mjs";

openCourse();

test("the client, imported by a page of another origin, computes lesson 001 as NumPy does", async () => {
  await page.goto(course + "client.html");
  const got = await page.evaluate(async ({ lesson, service }) => {
    const c = await import(service + "web/client.js");
    const r = await c.compute({ ...lesson, return: ["scores", "scaled_scores", "weights", "output"] }, { lang: "it" });
    const arrays = (res) => Object.fromEntries(Object.entries(res.stages).map(([k, v]) => [k, { shape: v.shape, data: Array.from(v.data), typed: v.data.constructor.name }]));
    // the same numbers sent as typed arrays (their binary form)
    const typed = Object.fromEntries(["x", "w_q", "w_k", "w_v"].map((k) => [k, { shape: [lesson[k].length, lesson[k][0].length], data: Float64Array.from(lesson[k].flat()) }]));
    const r2 = await c.compute({ ...typed, return: ["weights"] });
    // the 2-byte types: sent as JSON numbers (typed arrays too), their 2-byte replies read as float32
    const halves = {};
    for (const dtype of ["float16", "bfloat16"]) {
      const h = await c.compute({ ...typed, dtype, return: ["weights"] });
      halves[dtype] = { dtype: h.dtype, typed: h.stages.weights.data.constructor.name, data: Array.from(h.stages.weights.data) };
    }
    return { stages: arrays(r), again: Array.from(r2.stages.weights.data), halves, service: c.SERVICE, version: c.CLIENT_VERSION,
             transport: r.transport, shapes: r.shapes, fields: Object.keys(r).sort() };
  }, { lesson: LESSON, service });
  assert.equal(got.service, service, "the client talks to the service it was loaded from");
  assert.equal(got.transport, "v2", "the binary /v2 form, the faster one (docs/embed.md)");
  assert.deepEqual(got.shapes, { scores: [1, 3, 3], scaled_scores: [1, 3, 3], weights: [1, 3, 3], output: [3, 4] });
  assert.deepEqual(got.fields, ["bytes", "causal", "dtype", "head_dim", "num_heads", "scale", "shapes", "stages", "transport", "value_dim"]);
  assert.equal(got.version, "1");
  for (const s of ["scores", "scaled_scores", "weights"]) {
    assert.deepEqual(got.stages[s].shape, [1, 3, 3], s);
    assert.equal(got.stages[s].typed, "Float64Array", s);
    close(got.stages[s].data, NUMPY[s].flat(), s);
  }
  assert.deepEqual(got.stages.output.shape, [3, 4]);
  close(got.stages.output.data, NUMPY.output.flat(), "output");
  close(got.again, NUMPY.weights.flat(), "weights of typed arrays");
  // half a step of each type at the weights' size (about 0.35), with the inputs rounded to it: 2⁻¹¹ and 2⁻⁸ relative
  for (const [dtype, tol] of [["float16", 2 ** -10], ["bfloat16", 2 ** -7]]) {
    const h = got.halves[dtype];
    assert.equal(h.dtype, dtype);
    assert.equal(h.typed, "Float32Array", dtype);
    assert.equal(h.data.length, 9, dtype);
    h.data.forEach((v, k) => assert.ok(Math.abs(v - NUMPY.weights.flat()[k]) <= tol, `${dtype} weight ${k}: ${v} vs the lesson's ${NUMPY.weights.flat()[k]}`));
  }
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

// The numbers a shadow root's matrix holds (their exact values) and its cells' text.
const shadowCells = (id) => page.evaluate((id) => [...document.getElementById(id).shadowRoot.querySelectorAll("td[data-value]")]
  .map((td) => ({ value: Number(td.dataset.value), text: td.textContent })), id);
const eventsOf = (type, id) => page.evaluate(([type, id]) => window.events.filter((e) => e.type === type && e.id === id), [type, id]);
const waitEvents = (type, id, n) => page.waitForFunction(([type, id, n]) =>
  window.events.filter((e) => e.type === type && e.id === id).length >= n, [type, id, n]);

test("a course page of another origin: <attention-lesson> shows lesson 001's weights as NumPy computes them, in Italian", async () => {
  await page.goto(course + "lesson-001.html");
  await waitEvents("attention-render", "pesi", 1);
  const cells = await shadowCells("pesi");
  close(cells.map((c) => c.value), NUMPY.weights.flat(), "the element's weights");
  // Italian numbers: a decimal comma (0,5 not 0.5); the element's words in Italian
  assert.ok(cells.every((c) => !/\./.test(c.text)) && cells.some((c) => /,/.test(c.text)), cells.map((c) => c.text).join(" "));
  const words = await page.evaluate(() => document.getElementById("pesi").shadowRoot.querySelector(".embed-title").textContent);
  const it = (await import(path.join(REPO, "server/web/words-it.js"))).default;
  assert.equal(words, it["lessons.001.title"]);
  const [render] = await eventsOf("attention-render", "pesi");
  assert.deepEqual(render.detail.shape, [3, 3]);
  close(render.detail.data, NUMPY.weights.flat(), "attention-render's data");
  assert.equal(await page.evaluate(() => document.documentElement.lang), "it", "the host's <html lang> is left as it was");
});

test("the host's CSS neither breaks the elements nor is broken by theirs; a custom property themes them", async () => {
  const got = await page.evaluate(() => {
    const root = document.getElementById("pesi").shadowRoot, td = root.querySelector("td[data-value]");
    const hostTd = document.querySelector("#host-table td");
    return { card: getComputedStyle(root.querySelector(".card")).display, tdPad: getComputedStyle(td).paddingTop,
             tdFont: getComputedStyle(td).fontSize, hostPad: getComputedStyle(hostTd).paddingTop,
             hostBorder: getComputedStyle(hostTd).borderTopWidth, hostLayout: getComputedStyle(document.getElementById("host-table")).tableLayout,
             ink: getComputedStyle(root.querySelector(".embed-title")).color, font: getComputedStyle(root.querySelector(".embed-title")).fontFamily };
  });
  assert.notEqual(got.card, "none", "the host's .card rule does not hide the element's card");
  assert.equal(got.tdPad, "4px", "the element's cells keep the page's padding");
  assert.equal(got.tdFont, "12px");
  assert.equal(got.hostPad, "17px", "the host's table keeps its own padding");
  assert.equal(got.hostBorder, "4px");
  assert.equal(got.hostLayout, "auto", "the page's table.mat rule (table-layout: fixed) does not leak out");
  assert.equal(got.ink, "rgb(20, 40, 120)", "--attention-ink themes the element");
  assert.match(got.font, /Georgia/, "--attention-font themes the element");
});

test("the learner edits X in Italian (2,5): attention-change, then the weights of the new X as NumPy computes them", async () => {
  const renders = (await eventsOf("attention-render", "pesi")).length;
  const input = page.locator("#pesi").locator('input[data-row="0"][data-col="1"]');
  await input.fill("2,5");
  await input.press("Tab");
  await waitEvents("attention-render", "pesi", renders + 1);
  const [change] = await eventsOf("attention-change", "pesi");
  assert.deepEqual({ row: change.detail.row, col: change.detail.col, value: change.detail.value }, { row: 0, col: 1, value: 2.5 });
  const x = LESSON.x.map((r) => r.slice());
  x[0][1] = 2.5;
  assert.deepEqual(change.detail.x, x);
  close((await shadowCells("pesi")).map((c) => c.value), numpy(x).weights.flat(), "the weights of the edited X");
  // a word that is no number: said next to the grid in Italian, nothing sent
  await input.fill("due");
  await input.press("Tab");
  const note = await page.evaluate(() => document.getElementById("pesi").shadowRoot.querySelector(".embed-note").textContent);
  assert.match(note, /due/);
  assert.equal(await input.getAttribute("aria-invalid"), "true");
  assert.equal((await eventsOf("attention-change", "pesi")).length, 1);
  await input.fill("0");
  await input.press("Tab");
  await waitEvents("attention-render", "pesi", renders + 2);
});

test("a click on a weight fires attention-point with its query, key and exact value", async () => {
  await page.locator("#pesi").locator('td[data-row="2"][data-col="1"]').click();
  await waitEvents("attention-point", "pesi", 1);
  const [p] = await eventsOf("attention-point", "pesi");
  assert.deepEqual({ row: p.detail.row, col: p.detail.col, stage: p.detail.stage }, { row: 2, col: 1, stage: "weights" });
  close([p.detail.value], [NUMPY.weights[2][1]], "the pointed weight");
});

test("<attention-head-view> draws one line per pair with lesson 001's weight, as NumPy computes it", async () => {
  await waitEvents("attention-render", "linee", 1);
  const lines = await page.evaluate(() => [...document.getElementById("linee").shadowRoot.querySelectorAll("svg line")]
    .map((l) => ({ q: Number(l.dataset.q), k: Number(l.dataset.k), w: Number(l.dataset.w) })));
  assert.equal(lines.length, 9);
  for (const l of lines) close([l.w], [NUMPY.weights[l.q][l.k]], `line ${l.q} → ${l.k}`);
  const it = (await import(path.join(REPO, "server/web/words-it.js"))).default;
  const title = await page.evaluate(() => document.getElementById("linee").shadowRoot.querySelector("h3").textContent);
  assert.ok(title.startsWith(it["hv.title"]), title);
});

test("<attention-matrix> draws the numbers of its data property, with its labels", async () => {
  await page.evaluate(() => { document.getElementById("matrice").data = [[1.5, -2], [0.25, 1000]]; });
  const cells = await shadowCells("matrice");
  assert.deepEqual(cells.map((c) => c.value), [1.5, -2, 0.25, 1000]);
  assert.deepEqual(cells.map((c) => c.text), ["1,5", "−2", "0,25", "1000"]);
  const labels = await page.evaluate(() => [...document.getElementById("matrice").shadowRoot.querySelectorAll("th")].map((th) => th.textContent));
  assert.deepEqual(labels.filter(Boolean), ["c", "d", "a", "b"]);
});

test("the iframe: its stage as NumPy computes it, its height told to the parent, the message API", async () => {
  const frame = page.frameLocator("#frame");
  await page.waitForFunction(() => window.received.some((m) => m.type === "attention:render"));
  const first = await page.evaluate(() => window.received.find((m) => m.type === "attention:render"));
  assert.equal(first.stage, "scaled_scores");
  close(first.data, NUMPY.scaled_scores.flat(), "the frame's scaled scores");
  // the frame is as tall as its page says: no scroll bar, nothing cut
  await page.waitForFunction(async () => {
    const f = document.getElementById("frame"), told = window.received.filter((m) => m.type === "attention:height").at(-1);
    return told && f.getBoundingClientRect().height >= told.height && told.height > 150;
  });
  const inner = await frame.locator("html").evaluate((h) => ({ height: Math.ceil(h.getBoundingClientRect().height), scroll: h.scrollHeight }));
  const told = await page.evaluate(() => window.received.filter((m) => m.type === "attention:height").at(-1).height);
  assert.equal(told, inner.height, "the height told is the frame's page's");
  const outer = await page.evaluate(() => document.getElementById("frame").clientHeight);
  assert.ok(outer >= inner.scroll, `the frame (${outer} px) holds its page (${inner.scroll} px)`);
  // go to a step, then set the inputs
  const renders = () => page.evaluate(() => window.received.filter((m) => m.type === "attention:render"));
  let n = (await renders()).length;
  await page.evaluate(() => document.getElementById("frame").contentWindow.postMessage({ type: "attention:go", stage: "weights" }, "*"));
  await page.waitForFunction((n) => window.received.filter((m) => m.type === "attention:render").length > n, n);
  let last = (await renders()).at(-1);
  assert.equal(last.stage, "weights");
  close(last.data, NUMPY.weights.flat(), "weights after attention:go");
  const x = [[1, 1, 0, 0], [0, 2, 0, 2], [1, 1, 1, 1]];
  n = (await renders()).length;
  await page.evaluate((x) => document.getElementById("frame").contentWindow.postMessage({ type: "attention:set-inputs", x }, "*"), x);
  await page.waitForFunction((n) => window.received.filter((m) => m.type === "attention:render").length > n, n);
  last = (await renders()).at(-1);
  close(last.data, numpy(x).weights.flat(), "weights after attention:set-inputs");
  assert.equal(await frame.locator("html").getAttribute("lang"), "it");
  await page.locator("#frame").screenshot({ path: path.join(ARTIFACTS, "embed-frame.png") });
  const it = (await import(path.join(REPO, "server/web/words-it.js"))).default;
  assert.equal(await frame.locator("td[data-value]").first().evaluate((td) => td.ownerDocument.title),
               it["embed.frame.title"].replace("{stage}", it["views.card.weights"]));
});

test("the iframe opens a share link's state (#s=, as the page writes it); the message API moves it", async () => {
  const frame = page.frameLocator("#frame"), renders = () => page.evaluate(() => window.received.filter((m) => m.type === "attention:render"));
  const x = LESSON.x.map((r) => r.slice()), w_q = LESSON.w_q.map((r) => r.slice());
  x[0][1] = 2.5;
  w_q[2][3] = -1;
  // the page's own writer (link-state.js): X changed, then X and W_q changed
  const [onlyX, both] = await page.evaluate(async ({ service, x, w_q, lesson }) => {
    const { packState, bodyDifference } = await import(service + "web/link-state.js");
    return [await packState({ b: bodyDifference({ x: lesson.x }, { x }), h: 0, o: 1 }),
            await packState({ b: bodyDifference({ x: lesson.x, w_q: lesson.w_q }, { x, w_q }), h: 0 })];
  }, { service, x, w_q, lesson: LESSON });
  const open = async (src) => {
    await page.evaluate((src) => { window.received = []; document.getElementById("frame").src = src; }, src);
    await page.waitForFunction(() => window.received.some((m) => m.type === "attention:render"));
    return (await renders()).at(-1);
  };
  let last = await open(`${service}embed?lesson=001&stage=weights&lang=it#s=${onlyX}`);
  close(last.data, numpy(x).weights.flat(), "the link's X, its weights");
  const it = (await import(path.join(REPO, "server/web/words-it.js"))).default;
  assert.equal(await frame.locator(".embed-title").textContent(), it["lessons.001.title"], "a link that changed X only is the lesson");
  // the message API on it: a step by its index (4: scores), then the inputs
  let n = (await renders()).length;
  await page.evaluate(() => document.getElementById("frame").contentWindow.postMessage({ type: "attention:go", step: 4 }, "*"));
  await page.waitForFunction((n) => window.received.filter((m) => m.type === "attention:render").length > n, n);
  last = (await renders()).at(-1);
  assert.equal(last.stage, "scores");
  close(last.data, numpy(x).scores.flat(), "the link's scores after attention:go");
  const y = [[0, 1, 0, 1], [1, 0, 0, 0], [2, 0, 1, 0]];
  n = (await renders()).length;
  await page.evaluate((y) => document.getElementById("frame").contentWindow.postMessage({ type: "attention:set-inputs", x: y }, "*"), y);
  await page.waitForFunction((n) => window.received.filter((m) => m.type === "attention:render").length > n, n);
  close((await renders()).at(-1).data, numpy(y).scores.flat(), "scores after attention:set-inputs");
  // a new fragment (the parent sets it; no reload): X and W_q changed, the body the link's
  n = (await renders()).length;
  await page.evaluate((both) => { const f = document.getElementById("frame"); f.src = f.src.split("#")[0] + "#s=" + both; }, both);
  await page.waitForFunction((n) => window.received.filter((m) => m.type === "attention:render").length > n, n);
  last = (await renders()).at(-1);
  assert.equal(last.stage, "scores");
  close(last.data, numpy(x, { w_q }).scores.flat(), "the second link's scores (its X and W_q)");
  assert.equal(await frame.locator(".embed-title").textContent(), it["links.restored.from"].replace("{source}", it["lessons.001.name"]));
  // the frame as the other tests found it
  await open(`${service}embed?lesson=001&stage=scaled_scores&lang=it`);
});

test("axe-core finds nothing in the course page with the elements drawn", async () => {
  await page.addScriptTag({ path: path.join(HERE, "node_modules/axe-core/axe.min.js") });
  const r = await page.evaluate(() => window.axe.run(document, { resultTypes: ["violations"], iframes: false }));
  const found = r.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  assert.deepEqual(found, []);
  await page.screenshot({ path: path.join(ARTIFACTS, "embed-course.png"), fullPage: true });
});

// Lesson 000 (Spanish, two heads) computed by NumPy as the lesson writes it: per head Q, scores (already ÷ √head_dim)
// and its softmax without the row's max.
const L000 = JSON.parse(fs.readFileSync(path.join(REPO, "tests/lessons/lesson_000.json"), "utf8"));
const NUMPY_000 = JSON.parse(execFileSync(PYTHON, ["-c", `
import json, sys
import numpy as np
L = json.loads(sys.argv[1])
x, W_q, W_k, W_v = (np.array(L[k]) for k in ("x", "w_q", "w_k", "w_v"))
head_dim = x.shape[1] // L["num_heads"]
out = {"q": [], "scores": [], "weights": []}
for head in range(L["num_heads"]):
    Q = x @ W_q[head]
    K = x @ W_k[head]
    scores = Q @ K.T / np.sqrt(head_dim)
    attention_weights = np.exp(scores) / np.sum(np.exp(scores), axis=-1, keepdims=True)
    out["q"].append(Q.tolist()); out["scores"].append(scores.tolist()); out["weights"].append(attention_weights.tolist())
print(json.dumps(out))
`, JSON.stringify(L000)]));

test("<attention-guided> in a Spanish course page: lesson 000 step by step as NumPy computes it, attention-step, axe-core clean", async () => {
  await page.goto(course + "guided-000.html");
  await waitEvents("attention-render", "guia", 1);
  const es = (await import(path.join(REPO, "server/web/words-es.js"))).default;
  const guide = () => page.evaluate(() => {
    const root = document.getElementById("guia").shadowRoot;
    return { heading: root.querySelector(".guided-heading").textContent, code: root.querySelector(".lesson-code")?.textContent || "",
             result: Number(root.querySelector('.guided-formula [data-term="result"]').dataset.exact),
             focus: root.activeElement ? root.activeElement.className : "" };
  });
  // step 1 of 6: Q of head 0, the lesson's own line; the words Spanish
  close((await shadowCells("guia")).map((c) => c.value), NUMPY_000.q[0].flat(), "Q of head 0");
  let g = await guide();
  assert.ok(g.heading.startsWith(es["guided.heading"].split("{")[0]), g.heading);
  assert.match(g.heading, /1\D+6/);
  assert.match(g.code, /Q = x @ W_q\[head\]/);
  close([g.result], [NUMPY_000.q[0][0][0]], "the formula's Q[0, 0]");
  assert.equal((await eventsOf("attention-step", "guia")).length, 0, "no step event before the learner moves");
  // Next three times: QKᵀ, ÷ √head_dim, softmax; an event each, the focus kept on Next
  const next = page.locator("#guia").locator("button.guided-next");
  for (let k = 1; k <= 3; k++) {
    await next.click();
    await waitEvents("attention-step", "guia", k);
  }
  const steps = (await eventsOf("attention-step", "guia")).map((e) => e.detail);
  assert.deepEqual(steps.map((s) => [s.step, s.count, s.kind, s.stage]),
                   [[1, 6, "scores", "scores"], [2, 6, "scale", "scaled_scores"], [3, 6, "softmax", "weights"]]);
  close((await shadowCells("guia")).map((c) => c.value), NUMPY_000.weights[0].flat(), "the weights of head 0");
  g = await guide();
  assert.match(g.code, /attention_weights = np\.exp\(scores\)/, "lesson 000's softmax, as it writes it");
  assert.match(g.focus, /guided-next/);
  // a click on a weight: the formula is written for that query and key
  await page.locator("#guia").locator('td[data-row="2"][data-col="1"]').click();
  await page.waitForFunction(() => window.events.some((e) => e.type === "attention-point" && e.id === "guia"));
  close([(await guide()).result], [NUMPY_000.weights[0][2][1]], "the formula's weight of query 2, key 1");
  // the other head, by its attribute
  await page.evaluate(() => document.getElementById("guia").setAttribute("head", "1"));
  await page.waitForFunction(() => document.getElementById("guia").shadowRoot.querySelector("td[data-value]") &&
    window.events.filter((e) => e.type === "attention-render" && e.id === "guia").at(-1).detail.head === 1);
  close((await shadowCells("guia")).map((c) => c.value), NUMPY_000.weights[1].flat(), "the weights of head 1");
  close([(await guide()).result], [NUMPY_000.weights[1][2][1]], "head 1's weight of query 2, key 1");
  await page.addScriptTag({ path: path.join(HERE, "node_modules/axe-core/axe.min.js") });
  const r = await page.evaluate(() => window.axe.run(document, { resultTypes: ["violations"] }));
  assert.deepEqual(r.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`), []);
  await page.screenshot({ path: path.join(ARTIFACTS, "embed-guided.png"), fullPage: true });
});

// A cell's caption in a course page says what the visualizer says of the same cell: the lesson's own variable
// (lesson-names.js: lesson 000's attention_weights and scores, lesson 002's A[h]), its tokens and exact value,
// in the element's language; each element's card names the variable as the page's card does.
const CAPTIONS = [
  { id: "n000", tag: "attention-guided", lesson: "000", lang: "es", attrs: { step: "3" }, card: "h0-weights", row: 2, col: 1,
    cell: "attention_weights[t2 → t1]", line: "lección 000: attention_weights" },
  { id: "n000s", tag: "attention-lesson", lesson: "000", lang: "es", attrs: { stage: "scaled_scores", head: "1" }, card: "h1-scaled_scores",
    row: 0, col: 2, head: 1, cell: "scores[t0 → t2]", line: "lección 000: scores" },
  { id: "n001", tag: "attention-lesson", lesson: "001", lang: "it", attrs: { stage: "weights" }, card: "h0-weights", row: 2, col: 1,
    cell: "attention_weights[word 3 → word 2]", line: "lezione 001: attention_weights" },
  { id: "n002", tag: "attention-lesson", lesson: "002", lang: "tr", attrs: { stage: "weights", head: "1" }, card: "h1-weights",
    row: 3, col: 0, head: 1, cell: "A[1][tok3 → tok0]", line: "ders 002: A[1]" },
];
test("a cell's caption in every element names the lesson's variable as the visualizer does (es, it, tr)", async () => {
  await page.goto(course + "guided-000.html");
  await page.evaluate((specs) => {
    for (const c of specs) {
      const node = Object.assign(document.createElement(c.tag), { id: c.id });
      for (const [k, v] of Object.entries({ lesson: c.lesson, lang: c.lang, ...c.attrs })) node.setAttribute(k, v);
      document.querySelector("main").append(node);
    }
  }, CAPTIONS);
  const embedSays = async (c) => {
    await waitEvents("attention-render", c.id, 1);
    await page.locator(`#${c.id}`).locator(`td[data-row="${c.row}"][data-col="${c.col}"]`).hover();
    return page.evaluate((id) => { const root = document.getElementById(id).shadowRoot;
      return { caption: root.querySelector(".readout").textContent, line: root.querySelector("h3 .lesson-name")?.textContent ?? null }; }, c.id);
  };
  const vis = await context.newPage();
  vis.on("pageerror", (e) => pageErrors.push(`pageerror: ${e.message}`));
  vis.on("console", (m) => { if (m.type() === "error") pageErrors.push(`console: ${m.text()}`); });
  try {
    for (const c of CAPTIONS) {
      if (vis.url() !== `${service}?lesson=${c.lesson}&lang=${c.lang}`) await vis.goto(`${service}?lesson=${c.lesson}&lang=${c.lang}`);
      await vis.waitForFunction(() => window.attentionVisualizer?.renders >= 1 && document.getElementById("results").dataset.state === "ok");
      if (c.head) await vis.locator(`#group-heads button[data-head="${c.head}"]`).click();
      const cell = vis.locator(`#${c.card} td[data-row="${c.row}"][data-col="${c.col}"]`);
      await cell.hover();
      const pageSays = { caption: await vis.textContent(`#${c.card} .readout`), line: await vis.textContent(`#${c.card} h3 .lesson-name`) };
      assert.equal(pageSays.line, c.line, `the visualizer's card, lesson ${c.lesson} in ${c.lang}`);
      // the cell's exact value as the service computed it, with the language's decimal comma
      const value = (await cell.getAttribute("data-value")).replace(".", ",").replace("-", "−");
      assert.equal(pageSays.caption, `${c.cell} = ${value}`, `the visualizer's caption, lesson ${c.lesson} in ${c.lang}`);
      assert.deepEqual(await embedSays(c), pageSays, `<${c.tag} lesson="${c.lesson}" lang="${c.lang}">`);
    }
  } finally { await vis.close(); }
  // the head as lesson 002 and the page say it in Turkish (çok başlı dikkat: baş), and as the Spanish page says it
  const titles = await page.evaluate(() => ["n002", "n000s"].map((id) => document.getElementById(id).shadowRoot.querySelector(".embed-title").textContent));
  assert.deepEqual(titles, ["Ders 002 — tek bir projeksiyonu yeniden şekillendirerek çok başlı dikkat · baş 1",
                            "Lección 000 — multi-cabeza con pesos por cabeza · cabeza 1"]);
  await page.screenshot({ path: path.join(ARTIFACTS, "embed-captions.png"), fullPage: true });
});

// The input as each lesson names it (lesson-names.js: 000's x, 001's and 002's X) in every element: the input
// stage's title and its cells' captions, the editor's caption and its cells' names, the projections' titles and
// the guide's formula; once the learner changes x, it is the lesson's no more, and the stage's word (X) returns.
test("every element names the lesson's input as the lesson does: 000's x, 001's and 002's X; X once the learner changed it", async () => {
  await page.goto(course + "guided-000.html");
  const specs = [{ id: "in000", lesson: "000", lang: "es", stage: "x", editable: "" }, { id: "q000", lesson: "000", lang: "es", stage: "q" },
                 { id: "in001", lesson: "001", lang: "it", stage: "x" }, { id: "in002", lesson: "002", lang: "tr", stage: "x" }];
  await page.evaluate((all) => {
    for (const { id, ...attrs } of all) {
      const node = Object.assign(document.createElement("attention-lesson"), { id });
      for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
      document.querySelector("main").append(node);
    }
  }, specs);
  const reads = async (id) => {
    await page.locator(`#${id}`).locator('td[data-row="1"][data-col="2"]').hover();
    return page.evaluate((i) => {
      const root = document.getElementById(i).shadowRoot, grid = root.querySelector(".embed-x");
      return { title: root.querySelector("h3").firstChild.textContent, caption: root.querySelector(".readout").textContent.split(" =")[0],
               editor: grid ? grid.caption.textContent : null, cell: grid ? grid.querySelector('input[data-row="1"][data-col="2"]').getAttribute("aria-label") : null };
    }, id);
  };
  for (const id of ["in000", "q000", "in001", "in002", "guia"]) await waitEvents("attention-render", id, 1);
  assert.deepEqual(await reads("in000"), { title: "x, la entrada", caption: "x[t1, 2]",
    editor: "x, la entrada de la lección: cambie un número y esta etapa se vuelve a calcular", cell: "x, fila 1, columna 2" });
  assert.equal((await reads("q000")).title, "Q = x · W_q");
  assert.deepEqual(await reads("in001"), { title: "X, l'input", caption: "X[word 2, 2]", editor: null, cell: null });
  assert.deepEqual(await reads("in002"), { title: "X, girdi", caption: "X[tok1, 2]", editor: null, cell: null });
  // the guide's first step: Q of head 0 under the title the element gives it, its formula reading x's row
  const guide = await page.evaluate(() => { const root = document.getElementById("guia").shadowRoot;
    return { title: root.querySelector("h3").firstChild.textContent, formula: root.querySelector(".guided-formula p").textContent }; });
  assert.equal(guide.title, "Q = x · W_q");
  assert.ok(guide.formula.startsWith("Q[t0, 0] = x[0] · columna 0 de W_q[0] = "), guide.formula);
  // the learner changes a number of x: no longer the lesson's x
  const input = page.locator("#in000").locator('input[data-row="0"][data-col="0"]');
  await input.fill("0,7");
  await input.press("Tab");
  await waitEvents("attention-render", "in000", 2);
  assert.deepEqual(await reads("in000"), { title: "X, la entrada", caption: "X[t1, 2]",
    editor: "X, la entrada de la lección: cambie un número y esta etapa se vuelve a calcular", cell: "X, fila 1, columna 2" });
});

test("<attention-guided>: Enter on a cell writes the formula for it; the cell keeps the focus and its caption", async () => {
  await page.goto(course + "guided-000.html");
  await waitEvents("attention-render", "guia", 1);
  await page.evaluate(() => document.getElementById("guia").setAttribute("step", "3"));
  await page.waitForFunction(() => window.events.some((e) => e.type === "attention-render" && e.id === "guia" && e.detail.stage === "weights"));
  const said = () => page.evaluate(() => {
    const root = document.getElementById("guia").shadowRoot, td = root.activeElement;
    return { focus: td && td.dataset.row ? [Number(td.dataset.row), Number(td.dataset.col)] : null, value: td ? td.dataset.value : null,
             caption: root.querySelector(".readout").textContent, result: Number(root.querySelector('.guided-formula [data-term="result"]').dataset.exact) };
  });
  // the matrix's one tab stop, then the arrow keys to query 2, key 1, then Enter
  await page.locator("#guia").locator('td[tabindex="0"]').focus();
  for (const key of ["ArrowDown", "ArrowDown", "ArrowRight", "Enter"]) await page.keyboard.press(key);
  await waitEvents("attention-point", "guia", 1);
  let g = await said();
  assert.deepEqual(g.focus, [2, 1], "the chosen cell keeps the focus");
  assert.equal(g.caption, `attention_weights[t2 → t1] = ${g.value.replace(".", ",")}`);
  close([g.result], [NUMPY_000.weights[0][2][1]], "the formula's weight of query 2, key 1");
  // the arrow keys go on from there
  await page.keyboard.press("ArrowUp");
  g = await said();
  assert.deepEqual(g.focus, [1, 1]);
  assert.equal(g.caption, `attention_weights[t1 → t1] = ${g.value.replace(".", ",")}`);
});

test("no console error, nothing fetched from a third origin", () => {
  assert.deepEqual(pageErrors, []);
  assert.deepEqual(outside, []);
});
