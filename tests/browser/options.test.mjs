// End-to-end test of the visualizer page, the request's options: weights and PyTorch, GQA, positions, batches, the mask builder, Q/K/V given, RoPE, the KV cache
// (harness.mjs: the server, Chromium and the helpers).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { api, assertPageShowsApi, cells, close, context, explanation, failed, finalChecks, LESSONS, near, openHead, openPage, page, panel, PYTHON, rendered, renders, runScript, runTorchScript, STAGES, stateWritten, test, transpose, values } from "./harness.mjs";

openPage();

test("weights: the torch layout, biases and a pasted state_dict; PyTorch's own module gives the page's numbers", async () => {
  const l = LESSONS["001"];
  await rendered(() => page.click('button[data-preset="001"]'));
  const plain = await values("h0-weights");
  await panel("weights-panel");
  // the torch layout shows the same weights transposed: the numbers stay
  const torchLayout = await rendered(() => page.selectOption("#layout", "torch"));
  assert.equal(torchLayout.layout, "torch");
  assert.deepEqual(torchLayout.w_q, transpose(l.w_q));
  assert.deepEqual(await values("h0-weights"), plain);
  assert.equal(await page.textContent("#h0-q .formula"), "X · W_qᵀ (all columns)");
  // biases start at zero; one of them, explained
  const zero = await rendered(() => page.check("#use-bias"));
  assert.deepEqual([zero.b_q, zero.b_k, zero.b_v], [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]);
  assert.equal(zero.b_o, undefined, "b_o only with W_o");
  const biased = await rendered(() => page.fill('#field-b_q input[aria-label="b_q column 1"]', "0.5"));
  assert.deepEqual(biased.b_q, [0, 0.5, 0, 0]);
  assert.equal(await page.textContent("#h0-q .formula"), "X · W_qᵀ + b_q (all columns)");
  assert.equal(await page.textContent("#weights-state"), "torch layout, biases");
  const { return: _r, ...body } = biased;
  const reply = await assertPageShowsApi(body);
  await page.click("#h0-q td[data-row='2'][data-col='1']");
  const ex = await explanation();
  assert.deepEqual(ex.x, l.x[2]);
  assert.deepEqual(ex.W_q, l.w_q.map((r) => r[1]), "row 1 of the torch-layout W_q");
  assert.deepEqual(ex.bias, [0.5]);
  close(ex.q[0], reply.json.q[0][2][1], "q with its bias");
  assert.match(await page.textContent("#explain"), /times row 1 of W_q \(out×in\)/);
  await page.click("#explain-close");
  // ticking the state_dict starts from these weights as PyTorch stores them
  const sd = await rendered(() => page.check("#use-state-dict"));
  assert.deepEqual(sd.in_proj_weight, [...transpose(l.w_q), ...transpose(l.w_k), ...transpose(l.w_v)]);
  assert.deepEqual(sd.in_proj_bias, [0, 0.5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
  for (const k of ["w_q", "w_k", "w_v", "layout", "b_q"]) assert.equal(sd[k], undefined, `${k} is not sent beside a state_dict`);
  assert.deepEqual(await values("h0-q"), reply.json.q.flat(2));
  // PyTorch's own printout of an nn.MultiheadAttention's state_dict, pasted as it prints, and its answer for X
  const want = JSON.parse(execFileSync(PYTHON, ["-c",
    "import json, sys, torch\ntorch.set_printoptions(precision=17)\ntorch.manual_seed(0)\n"
    + "m = torch.nn.MultiheadAttention(4, 2, batch_first=True, dtype=torch.float64)\n"
    + "with torch.no_grad():\n    m.in_proj_bias.uniform_(-1, 1)\n    m.out_proj.bias.uniform_(-1, 1)\n"
    + "x = torch.tensor(json.load(sys.stdin), dtype=torch.float64)[None]\n"
    + "out, w = m(x, x, x, need_weights=True, average_attn_weights=False)\n"
    + "print(json.dumps({'printed': str(m.state_dict()), 'output': out[0].tolist(), 'weights': w[0].tolist()}))"],
    { input: JSON.stringify(l.x) }).toString());
  const printed = want.printed;
  assert.match(printed, /^OrderedDict\(\[\('in_proj_weight', tensor\(\[\[/);
  await rendered(() => page.fill("#num_heads", "2"));
  const pasted = await rendered(() => page.fill("#state_dict", printed));
  assert.deepEqual(Object.keys(pasted).filter((k) => /proj/.test(k)).sort(),
                   ["in_proj_bias", "in_proj_weight", "out_proj_bias", "out_proj_weight"]);
  near(await values("all-output"), want.output, "output against nn.MultiheadAttention");
  near(await values("h0-weights"), want.weights[0], "head 0's weights against nn.MultiheadAttention");
  await openHead(1);
  near(await values("h1-weights"), want.weights[1], "head 1's weights against nn.MultiheadAttention");
  await openHead(0);
  assert.equal(await page.textContent("#all-output .formula"), "concat · W_oᵀ + b_o");
  await panel("weights-panel", false);
});

test("GQA, positions, a window and ALiBi: each one control, its stage shapes, its masked scores explained", async () => {
  const l = LESSONS["002"];
  await rendered(() => page.click('button[data-preset="002"]'));
  // one key/value head: W_k and W_v keep the first head's columns, both query heads read it
  const gqa = await rendered(() => page.fill("#num_kv_heads", "1"));
  assert.equal(gqa.num_kv_heads, 1);
  assert.deepEqual(gqa.w_k, l.w_k.map((r) => r.slice(0, 4)));
  assert.deepEqual(gqa.w_v, l.w_v.map((r) => r.slice(0, 4)));
  assert.equal(await page.getAttribute("#h0-k h3 .shape", "title"), "a slice of k (1, 5, 4)");
  assert.match(await page.textContent("#h0-k .formula"), /key\/value head 0, shared by query heads 0, 1$/);
  const k0 = await values("h0-k");
  await openHead(1);
  assert.deepEqual(await values("h1-k"), k0, "head 1 reads the same keys");
  await openHead(0);
  // positions, a window, causal and the paper's ALiBi slopes
  await panel("position-panel");
  await page.uncheck("#auto");
  await page.fill("#positions", "0, 1, 2, 5, 6");
  await page.fill("#window", "3");
  await page.check("#causal");
  await page.selectOption("#alibi", "paper");
  await page.check("#auto");
  const sent = await rendered(() => page.click("#compute"));
  assert.deepEqual([sent.positions, sent.window, sent.alibi, sent.causal], [[0, 1, 2, 5, 6], 3, true, true]);
  assert.equal(await page.textContent("#position-state"), "positions, window 3, ALiBi");
  const { return: _r, ...body } = sent;
  const reply = await assertPageShowsApi(body);
  assert.match(await page.textContent("#h0-masked_scores .formula"), /^ALiBi: −0\.0625·\|p_i − p_j\| added/);
  // key 1 is 4 positions from query 3 (position 5): outside the window
  await page.click("#h0-weights td[data-row='3'][data-col='1']");
  assert.match(await page.textContent("#explain"), /Masked: the score becomes −∞ \(outside the window: \|5 − 1\| ≥ 3\)/);
  // query 4 (position 6) and key 3 (position 5): ALiBi adds −slope·1
  await page.click("#h0-weights td[data-row='4'][data-col='3']");
  const ex = await explanation();
  assert.deepEqual(ex.slope, [2 ** -4]);
  close(ex.masked[0], reply.json.masked_scores[0][4][3], "scaled score plus ALiBi");
  close(ex.weight[0], reply.json.weights[0][4][3], "weight");
  await page.click("#explain-close");
  // one's own slopes start as the paper's
  const own = await rendered(() => page.selectOption("#alibi", "slopes"));
  assert.deepEqual(own.alibi_slopes, [2 ** -4, 2 ** -8]);
  assert.equal(own.alibi, undefined);
  const mine = await rendered(() => page.fill("#alibi_slopes", "0.5, 0.25"));
  assert.deepEqual(mine.alibi_slopes, [0.5, 0.25]);
  const { return: _r2, ...body2 } = mine;
  await assertPageShowsApi(body2);
  await panel("position-panel", false);
});

test("batch: B sequences through the same weights, one shown at a time, key padding per sequence", async () => {
  const l = LESSONS["001"];
  await rendered(() => page.click('button[data-preset="001"]'));
  await panel("batch-panel");
  const two = await rendered(() => page.fill("#batch", "2"));
  assert.deepEqual(two.x, [l.x, [l.x[1], l.x[2], l.x[0]]], "the second sequence: the first with its rows rotated");
  assert.equal(await page.getAttribute("#h0-weights h3 .shape", "title"), "a slice of weights (2, 1, 3, 3)");
  assert.equal(await page.textContent("#batch-state"), "B = 2");
  await panel("mask-panel");
  // padding with every key free is a request of its own: waited for, so
  // that the next render counted is the untick's
  await rendered(() => page.check("#use-padding"));
  const padded = await rendered(() => page.uncheck('input[aria-label="sequence 1: key word 1 may be attended"]'));
  assert.deepEqual(padded.key_padding, [[false, false, false], [true, false, false]]);
  const one = { w_q: l.w_q, w_k: l.w_k, w_v: l.w_v, num_heads: 1, tokens: l.tokens };
  await assertPageShowsApi({ ...one, x: l.x });
  await page.click('#group-seq button[data-seq="1"]');
  assert.equal(await page.getAttribute('#group-seq button[data-seq="1"]', "aria-pressed"), "true");
  await assertPageShowsApi({ ...one, x: two.x[1], key_padding: [true, false, false] });
  await page.click("#h0-q td[data-row='0'][data-col='0']");
  assert.deepEqual((await explanation()).x, l.x[1], "sequence 1's first row");
  await page.click("#explain-close");
  await rendered(() => page.uncheck("#use-padding"));
  await panel("mask-panel", false);
  const none = await rendered(() => page.fill("#batch", ""));
  assert.deepEqual(none.x, l.x);
  assert.equal(await page.locator("#group-seq").count(), 0);
  await panel("batch-panel", false);
});

test("mask builder: one mask per head, per sequence or both, and additive numbers; the page and both scripts agree with the API", async () => {
  const l = LESSONS["002"];
  const lesson = { w_q: l.w_q, w_k: l.w_k, w_v: l.w_v, num_heads: 2, tokens: l.tokens };
  const square = (f) => Array.from({ length: 5 }, (_, i) => Array.from({ length: 5 }, (_, j) => f(i, j)));
  const D = square((i, j) => i === j), L = square((i, j) => j <= i), A = square(() => true);
  // the mask the page would send now (the steps between two requests are taken with "update as I type" off)
  const sending = () => page.evaluate(() => window.attentionVisualizer.maskBody());
  const send = async () => { await page.check("#auto"); const body = await rendered(() => page.click("#compute")); await page.uncheck("#auto"); return body; };
  await rendered(() => page.click('button[data-preset="002"]'));
  await panel("mask-panel");
  await page.uncheck("#auto");
  await page.check("#use-mask");
  // one per head: head 0 the diagonal, head 1 the lower triangle
  await page.selectOption("#mask-per", "head");
  assert.deepEqual(await sending(), [A, A], "a new head's mask starts as the first one's");
  await page.click('button[data-fill="diag"]');
  await page.selectOption("#mask-head", "1");
  await page.click('button[data-fill="lower"]');
  const perHead = await send();
  assert.deepEqual(perHead.mask, [D, L], "(h, n, m)");
  assert.equal(await page.textContent("#mask-state"), "mask on (30 pairs hidden), one per head");
  await assertPageShowsApi({ x: l.x, ...lesson, mask: [D, L] });
  assert.match(await page.textContent("#h0-masked_scores .formula"), /the mask's unticked pairs \(the mask of head 0\)/);
  await page.click("#h0-weights td[data-row='3'][data-col='1']");
  assert.match(await page.textContent("#explain"), /the mask does not let this query attend this key/);
  await openHead(1);
  await page.click("#h1-weights td[data-row='3'][data-col='1']");
  assert.match(await page.textContent("#explain"), /Not masked/, "head 1's own mask lets query 3 see key 1");
  await page.click("#explain-close");
  await openHead(0);
  // a batch: a mask per head is sent per sequence (the API's rank-3 mask of a batch is per sequence)
  await panel("batch-panel");
  await page.fill("#batch", "2");
  assert.deepEqual(await sending(), [[D, L], [D, L]]);
  await page.selectOption("#mask-per", "both");
  await page.selectOption("#mask-seq", "1");
  await page.selectOption("#mask-head", "0");
  await page.click('button[data-fill="all"]');
  const both = await send();
  assert.deepEqual(both.mask, [[D, L], [A, L]], "(B, h, n, m)");
  await page.click('#group-seq button[data-seq="1"]');
  await assertPageShowsApi({ x: both.x[1], ...lesson, mask: [A, L] });
  await panel("share-panel");
  // one per sequence: each sequence keeps its head 0's mask
  await page.selectOption("#mask-per", "seq");
  assert.deepEqual(await sending(), [D, A], "(B, n, m)");
  // numbers: a tick becomes 0, no tick −1e9; −|i − j| for sequence 1; one number typed for sequence 0
  await page.selectOption("#mask-kind", "add");
  assert.deepEqual(await sending(), [D.map((r) => r.map((ok) => (ok ? 0 : -1e9))), square(() => 0)]);
  await page.click('button[data-fill="distance"]');
  assert.deepEqual((await sending())[1], square((i, j) => 0 - Math.abs(i - j)));
  await page.selectOption("#mask-seq", "0");
  const cell = 'input[aria-label="query tok3, key tok1: number added to the score"]';
  await page.fill(cell, "0.5");
  await page.check("#auto");
  const typed = await rendered(() => page.click("#compute"));
  assert.equal(typed.mask[0][3][1], 0.5);
  assert.equal(await page.textContent("#mask-state"), "additive mask on, one per sequence");
  await page.click('#group-seq button[data-seq="0"]');
  const reply = await assertPageShowsApi({ x: typed.x[0], ...lesson, mask: typed.mask[0] });
  assert.match(await page.textContent("#h0-masked_scores .formula"), /^the additive mask's numbers added \(the mask of sequence 0\)/);
  await page.click("#h0-weights td[data-row='3'][data-col='1']");
  const ex = await explanation();
  assert.deepEqual(ex.mask, [0.5]);
  close(ex.masked[0], reply.json.masked_scores[0][3][1], "the scaled score plus the mask's 0.5");
  close(ex.weight[0], reply.json.weights[0][3][1], "weight");
  await page.click("#explain-close");
  // a typo in the mask is named next to it, and nothing is sent
  const before = await renders();
  await failed(() => page.fill(cell, "0.5x"));
  assert.equal(await page.textContent("#err-mask"), 'Mask, query 3, key 1: "0.5x" is not a number');
  assert.equal(await renders(), before);
  await rendered(() => page.fill(cell, "0.5"));
  // the NumPy script adds the mask; a shared link restores it, numbers and form
  await stateWritten();
  const { return: _r2, ...body } = typed;
  const { json } = await api({ ...body, return: ["weights", "output"] });
  const out = await runScript();
  near(out.weights, json.weights, "the script's weights, an additive mask per sequence");
  near(out.output, json.output, "the script's output");
  // nn.MultiheadAttention adds a float attn_mask to the scaled scores, as the API (here (B, 1, n, m), sent as (B·h, n, m))
  const torchAdded = await runTorchScript();
  near(torchAdded.weights, json.weights, "nn.MultiheadAttention's weights, an additive mask per sequence");
  near(torchAdded.output, json.output, "nn.MultiheadAttention's output");
  const url = await page.evaluate(() => location.href);
  const other = await context.newPage();
  try {
    await other.goto(url);
    await other.waitForFunction(() => window.attentionVisualizer?.renders >= 1 && document.getElementById("results").dataset.state === "ok");
    assert.deepEqual(JSON.parse(await other.evaluate(() => window.attentionVisualizer.lastRequestBody)), typed);
    assert.deepEqual([await other.inputValue("#mask-kind"), await other.inputValue("#mask-per")], ["add", "seq"]);
  } finally {
    await other.close();
  }
  // as text (at any size, also past the grid's): the mask shown copied out, a NumPy printout pasted in
  await page.click("#mask-text-box > summary");
  await page.click("#mask-text-show");
  assert.deepEqual(JSON.parse(await page.inputValue("#mask-text")), typed.mask[0]);
  const far = square((i, j) => 0 - Math.abs(i - j) / 2);
  await page.fill("#mask-text", `array([${far.map((r) => `[${r.map((v) => v.toFixed(1)).join(", ")}]`).join(",\n       ")}])`);
  const pasted = await rendered(() => page.click("#mask-text-use"));
  assert.deepEqual(pasted.mask, [far, typed.mask[1]]);
  const unchanged = await renders();
  await page.fill("#mask-text", "[[0, 1]]");
  await page.click("#mask-text-use");
  assert.equal(await page.textContent("#err-mask"), "Mask as text: 1 × 2 numbers, the mask shown is 5 × 5");
  assert.equal(await renders(), unchanged, "a mask of the wrong shape is not sent");
  await rendered(() => page.click('button[data-preset="002"]')); // a lesson sets every option back
  for (const id of ["mask-panel", "batch-panel", "share-panel"]) await panel(id, false);
});

test("Q, K and V given directly: they start as the ones on show, and the pipeline starts at the scores", async () => {
  const l = LESSONS["002"];
  await rendered(() => page.click('button[data-preset="002"]'));
  const before = { weights: await values("h0-weights"), output: await values("all-output") };
  const { json } = await api({ x: l.x, w_q: l.w_q, w_k: l.w_k, w_v: l.w_v, num_heads: 2, return: ["q", "k", "v"] });
  const sent = await rendered(() => page.check("#source-qkv"));
  assert.deepEqual([sent.q, sent.k, sent.v], [json.q, json.k, json.v]);
  for (const k of ["x", "w_q", "w_k", "w_v", "num_heads"]) assert.equal(sent[k], undefined, `no ${k} beside q, k, v`);
  assert.deepEqual(await values("h0-weights"), before.weights);
  assert.deepEqual(await values("all-output"), before.output);
  assert.equal(await page.locator("#input-x").count(), 0);
  assert.equal(await page.textContent("#h0-q .formula"), "as given");
  assert.equal(await page.isVisible("#field-x"), false);
  assert.equal(await page.isDisabled("#decode-start"), true, "decoding projects X's rows");
  // one key/value head given: grouped-query attention, read from K's depth
  await page.uncheck("#auto");
  for (const k of ["k", "v"]) {
    await page.click(`#field-${k} .seg label:has(input[value="text"])`);
    await page.fill(`#text-${k}`, JSON.stringify([json[k][1]]));
  }
  await page.check("#auto");
  const shared = await rendered(() => page.click("#compute"));
  assert.equal(shared.k.length, 1);
  const { return: _r, ...body } = shared;
  await assertPageShowsApi(body);
  assert.match(await page.textContent("#h0-k .formula"), /^as given; key\/value head 0, shared by query heads 0, 1$/);
  await rendered(() => page.check("#source-x"));
  assert.equal(await page.isVisible("#field-x"), true);
});

test("Q, K and V given directly with a batch: B × heads × rows × d_k, one sequence shown at a time, padding per sequence", async () => {
  const l = LESSONS["002"];
  await rendered(() => page.click('button[data-preset="002"]'));
  await panel("batch-panel");
  const two = await rendered(() => page.fill("#batch", "2"));
  const { json } = await api({ x: two.x, w_q: l.w_q, w_k: l.w_k, w_v: l.w_v, num_heads: 2, return: ["q", "k", "v"] });
  const sent = await rendered(() => page.check("#source-qkv"));
  assert.deepEqual([sent.q, sent.k, sent.v], [json.q, json.k, json.v], "every sequence's Q, K and V, as on show");
  assert.equal(await page.inputValue("#batch"), "2");
  assert.equal(await page.isVisible("#batch"), true, "the batch control stays with Q, K and V given");
  assert.equal(await page.getAttribute("#h0-weights h3 .shape", "title"), "a slice of weights (2, 2, 5, 5)");
  // a third sequence: the second with each head's rows rotated
  const three = await rendered(() => page.fill("#batch", "3"));
  const rot = (t) => t.map((head) => [...head.slice(1), head[0]]);
  assert.deepEqual([three.q[2], three.k[2], three.v[2]], [rot(json.q[1]), rot(json.k[1]), rot(json.v[1])]);
  await panel("mask-panel");
  // padding with every key free is a request of its own: waited for, so
  // that the next render counted is the untick's
  await rendered(() => page.check("#use-padding"));
  const padded = await rendered(() => page.uncheck('input[aria-label="sequence 2: key tok0 may be attended"]'));
  const free = [false, false, false, false, false];
  assert.deepEqual(padded.key_padding, [free, free, [true, false, false, false, false]]);
  await page.click('#group-seq button[data-seq="2"]');
  await assertPageShowsApi({ q: three.q[2], k: three.k[2], v: three.v[2], key_padding: [true, false, false, false, false] });
  // the NumPy script computes the whole batch
  await stateWritten();
  const { return: _r, ...body } = padded;
  const { json: all } = await api({ ...body, return: ["weights", "output"] });
  const out = await runScript();
  near(out.weights, all.weights, "the script's weights");
  near(out.output, all.output, "the script's output");
  await rendered(() => page.uncheck("#use-padding"));
  const none = await rendered(() => page.fill("#batch", ""));
  assert.deepEqual([none.q, none.k, none.v], [json.q[0], json.k[0], json.v[0]], "no batch: the first sequence");
  await panel("mask-panel", false);
  await panel("batch-panel", false);
  await rendered(() => page.check("#source-x"));
});

test("the NumPy script and a shared link reproduce a batch with biases, PyTorch's layout, GQA, positions, a window, ALiBi", async () => {
  await rendered(() => page.click('button[data-preset="002"]'));
  const panels = ["weights-panel", "position-panel", "batch-panel", "wo-panel", "mask-panel"];
  for (const id of panels) await panel(id);
  await page.uncheck("#auto");
  await page.selectOption("#layout", "torch");
  await page.check("#use-bias");
  await page.fill('#field-b_k input[aria-label="b_k column 2"]', "0.25");
  await page.fill('#field-b_v input[aria-label="b_v column 5"]', "-1");
  await page.fill("#num_kv_heads", "1");
  await page.fill("#batch", "2");
  await page.fill("#positions", "3, 4, 5, 6, 9");
  await page.fill("#window", "4");
  await page.check("#causal");
  await page.selectOption("#alibi", "paper");
  await page.check("#use-w_o");
  await page.check("#use-padding");
  await page.uncheck('input[aria-label="sequence 1: key tok0 may be attended"]');
  await page.check("#auto");
  const sent = await rendered(() => page.click("#compute"));
  assert.deepEqual([sent.layout, sent.num_kv_heads, sent.x.length, sent.b_k[2], sent.window], ["torch", 1, 2, 0.25, 4]);
  await page.click('#group-seq button[data-seq="1"]');
  await openHead(1);
  await stateWritten();
  const { return: _r, ...body } = sent;
  const { json } = await api({ ...body, return: ["weights", "output"] });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "visualizer-script-"));
  try {
    fs.writeFileSync(path.join(dir, "attention.py"), await page.inputValue("#numpy-script"));
    const out = JSON.parse(execFileSync("/usr/bin/python3", [path.join(dir, "attention.py")]).toString());
    near(out.weights, json.weights, "the script's weights");
    near(out.output, json.output, "the script's output");
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const url = await page.evaluate(() => location.href);
  const want = await cells("h1-weights");
  const other = await context.newPage();
  try {
    await other.goto(url);
    await other.waitForFunction(() => window.attentionVisualizer?.renders >= 1 && document.getElementById("results").dataset.state === "ok");
    assert.deepEqual(JSON.parse(await other.evaluate(() => window.attentionVisualizer.lastRequestBody)), sent);
    assert.deepEqual(await other.evaluate(() => [...document.querySelectorAll("#h1-weights td[data-value]")].map((td) => ({
      row: Number(td.dataset.row), col: Number(td.dataset.col), value: td.dataset.value, text: td.textContent,
      title: td.title, masked: td.classList.contains("masked") }))), want, "the same sequence, head and numbers");
  } finally {
    await other.close();
  }
  await openHead(0);
  for (const id of panels) await panel(id, false);
  await rendered(() => page.click('button[data-preset="002"]')); // a lesson sets every option back
});



test("RoPE and the sinusoidal encoding: their stages in pipeline order, each turn and each encoding explained", async () => {
  await rendered(() => page.click('button[data-preset="001"]'));
  await panel("position-panel");
  const sent = await rendered(() => page.selectOption("#rope", "half"));
  assert.equal(sent.rope, true);
  assert.deepEqual(sent.return, ["q", "k", "v", "q_rope", "k_rope", ...STAGES.slice(3)]);
  const ids = await page.$$eval("#stage-area .card", (cs) => cs.map((c) => c.id));
  assert.deepEqual(ids.slice(0, 7), ["input-x", "h0-q", "h0-k", "h0-v", "h0-q_rope", "h0-k_rope", "h0-scores"]);
  const { return: _r, ...body } = sent;
  const reply = await assertPageShowsApi(body, ["q_rope", "k_rope"]);
  // a turned component: its pair, θ, the angle, cos and sin
  await page.click("#h0-q_rope td[data-row='2'][data-col='1']");
  const turn = await explanation();
  const q = reply.json.q[0][2], theta = 10000 ** (-2 / 4), angle = 2 * theta;
  assert.deepEqual([turn.component, turn.partner], [[q[1]], [q[3]]], "component 1 pairs with 1 + dims/2");
  assert.deepEqual([turn.theta, turn.angle], [[theta], [angle]]);
  close(turn.rope[0], reply.json.q_rope[0][2][1], "q after RoPE");
  // a weight is explained from the turned vectors the scores use
  await page.click("#h0-weights td[data-row='2'][data-col='0']");
  const w = await explanation();
  assert.deepEqual([w.q, w.k], [reply.json.q_rope[0][2], reply.json.k_rope[0][0]]);
  close(w.weight[0], reply.json.weights[0][2][0], "weight");
  await page.click("#explain-close");
  // RoFormer's interleaved pairs over 2 of the 4 dims, base 100; and the sinusoidal encoding
  await page.uncheck("#auto");
  await page.selectOption("#rope", "interleaved");
  await page.fill("#rope_dims", "2");
  await page.fill("#rope_base", "100");
  await page.selectOption("#positional_encoding", "sinusoidal");
  await page.check("#auto");
  const pe = await rendered(() => page.click("#compute"));
  assert.deepEqual([pe.rope, pe.positional_encoding], [{ base: 100, dims: 2, style: "interleaved" }, "sinusoidal"]);
  assert.equal(pe.return[0], "x_pe");
  assert.equal(await page.textContent("#position-state"), "RoPE, sinusoidal encoding");
  const { return: _r2, ...body2 } = pe;
  const reply2 = await assertPageShowsApi(body2, ["x_pe", "q_rope", "k_rope"]);
  assert.equal(await page.textContent("#h0-q .formula"), "(X + PE) · W_q (all columns)");
  await page.click("#input-x_pe td[data-row='2'][data-col='3']");
  const enc = await explanation();
  assert.deepEqual(enc.pe, [Math.cos(2 / 10000 ** (2 / 4))]);
  close(enc.x_pe[0], reply2.json.x_pe[2][3], "x + PE");
  await page.click("#h0-q td[data-row='1'][data-col='0']");
  assert.deepEqual((await explanation()).x, reply2.json.x_pe[1], "Q is projected from X + PE");
  await page.click("#h0-q_rope td[data-row='1'][data-col='3']");
  assert.match(await page.textContent("#explain"), /Component 3 is beyond RoPE's 2 dims: it passes through/);
  await page.click("#explain-close");
  const out = await runScript();
  near(out.weights, reply2.json.weights, "the script's weights");
  near(out.output, reply2.json.output, "the script's output");
  await panel("position-panel", false);
  await rendered(() => page.click('button[data-preset="001"]'));
});

test("KV cache: decoding X token by token, each step sending the cache the one before returned, gives one causal request's rows", async () => {
  const l = LESSONS["002"];
  await rendered(() => page.click('button[data-preset="002"]'));
  await panel("position-panel");
  await rendered(() => page.selectOption("#rope", "half"));
  await panel("cache-panel");
  const { json: whole } = await api({ x: l.x, w_q: l.w_q, w_k: l.w_k, w_v: l.w_v, num_heads: 2, rope: true,
                                      causal: true, return: ["weights", "output"] });
  let sent = await rendered(() => page.click("#decode-start"));
  assert.deepEqual([sent.x, sent.causal, sent.past_k], [[l.x[0]], true, undefined]);
  assert.ok(sent.return.includes("k_cache") && sent.return.includes("v_cache"));
  for (let t = 0; t < l.x.length; t++) {
    if (t > 0) {
      const before = JSON.parse(await page.evaluate(() => window.attentionVisualizer.lastRequestBody));
      const { json: prev } = await api({ ...before, return: ["k_cache", "v_cache"] });
      sent = await rendered(() => page.click("#decode-next"));
      assert.deepEqual([sent.past_k, sent.past_v], [prev.k_cache, prev.v_cache], `step ${t} sends the cache step ${t - 1} returned`);
      assert.deepEqual(sent.x, [l.x[t]]);
      assert.deepEqual(sent.tokens, [l.tokens[t]]);
    }
    for (let h = 0; h < 2; h++) {
      await openHead(h);
      near(await values(`h${h}-weights`), whole.weights[h][t].slice(0, t + 1), `step ${t} head ${h}'s weights`);
    }
    await openHead(0);
    near(await values("all-output"), whole.output[t], `step ${t}'s output`);
    assert.equal(await page.textContent("#h0-k_cache h3 .shape"), `(${t + 1}, 4)`);
  }
  assert.equal(await page.isDisabled("#decode-next"), true, "the last token has no next");
  assert.match(await page.textContent("#decode-state"), /^Token 4 of 5: X is its row; the cache holds tokens 0…3\.$/);
  assert.match(await page.textContent("#h0-k_cache .formula"), /^4 cached key rows \(past_k\), then this request's K after RoPE/);
  await page.click("#h0-k_cache td[data-row='1'][data-col='0']");
  assert.match(await page.textContent("#explain"), /Row 1 comes from past_k as sent/);
  await page.click("#explain-close");
  // linked highlighting: a cached key lights its cache rows only; the new key also its K row
  const lit = () => page.evaluate(() => Object.fromEntries(["h0-k", "h0-k_rope", "h0-k_cache", "h0-v_cache"].map((id) =>
    [id, [...new Set([...document.querySelectorAll(`#${id} td.hl`)].map((td) => td.dataset.row))]])));
  await page.hover("#h0-weights td[data-row='0'][data-col='1']");
  assert.deepEqual(await lit(), { "h0-k": [], "h0-k_rope": [], "h0-k_cache": ["1"], "h0-v_cache": ["1"] });
  await page.hover("#h0-weights td[data-row='0'][data-col='4']");
  assert.deepEqual(await lit(), { "h0-k": ["0"], "h0-k_rope": ["0"], "h0-k_cache": ["4"], "h0-v_cache": ["4"] });
  await page.mouse.move(0, 0);
  const { return: _r, ...body } = sent;
  const reply = await assertPageShowsApi(body, ["q_rope", "k_rope", "k_cache", "v_cache"]);
  const out = await runScript();
  near(out.weights, reply.json.weights, "the script's weights with the cache");
  near(out.output, reply.json.output, "the script's output with the cache");
  await panel("cache-panel", false);
  await panel("position-panel", false);
  await rendered(() => page.click('button[data-preset="002"]'));
});

test("cross-attention with a KV cache: the cached keys, then the context's, every cell the API's", async () => {
  const l = LESSONS["001"];
  const lesson = { x: l.x, w_q: l.w_q, w_k: l.w_k, w_v: l.w_v, num_heads: 1, tokens: l.tokens };
  await rendered(() => page.click('button[data-preset="001"]'));
  await panel("context-panel");
  await rendered(() => page.check("#use-context"));
  await page.click('#field-context .seg label:has(input[value="text"])');
  await rendered(() => page.fill("#text-context", "[[1, 0, 1, 0], [0, 2, 0, 2]]"));
  const { json: first } = await api({ ...lesson, context: [[1, 0, 1, 0], [0, 2, 0, 2]], return: ["k_cache", "v_cache"] });
  // the cache starts as this reply's keys and values: the context's two
  await panel("cache-panel");
  const cached = await rendered(() => page.check("#use-cache"));
  assert.deepEqual([cached.past_k, cached.past_v], [first.k_cache, first.v_cache]);
  // one more context row after the two cached keys
  const sent = await rendered(() => page.fill("#text-context", "[[0, 1, 1, 0]]"));
  assert.deepEqual(sent.context, [[0, 1, 1, 0]]);
  const { return: _r, ...body } = sent;
  const reply = await assertPageShowsApi(body, ["k_cache", "v_cache"]);
  assert.equal(await page.textContent("#h0-weights h3 .shape"), "(3, 3)");
  assert.deepEqual(await values("h0-k_cache"), [...first.k_cache[0].flat(), ...reply.json.k[0].flat()], "past_k, then the new key");
  assert.match(await page.textContent("#h0-k .formula"), /^context · W_k/);
  // a weight of the new key, explained from the cache's last row
  await page.click("#h0-weights td[data-row='1'][data-col='2']");
  const ex = await explanation();
  assert.deepEqual([ex.q, ex.k], [reply.json.q[0][1], reply.json.k_cache[0][2]]);
  close(ex.weight[0], reply.json.weights[0][1][2], "weight");
  await page.click("#explain-close");
  // the new key lights its context row, its K row and its cache row; a cached key only its cache rows
  const lit = () => page.evaluate(() => Object.fromEntries(["input-context", "h0-k", "h0-k_cache", "h0-v_cache"].map((id) =>
    [id, [...new Set([...document.querySelectorAll(`#${id} td.hl`)].map((td) => td.dataset.row))]])));
  await page.hover("#h0-weights td[data-row='0'][data-col='2']");
  assert.deepEqual(await lit(), { "input-context": ["0"], "h0-k": ["0"], "h0-k_cache": ["2"], "h0-v_cache": ["2"] });
  await page.hover("#h0-weights td[data-row='0'][data-col='1']");
  assert.deepEqual(await lit(), { "input-context": [], "h0-k": [], "h0-k_cache": ["1"], "h0-v_cache": ["1"] });
  await page.mouse.move(0, 0);
  await stateWritten();
  const out = await runScript();
  near(out.weights, reply.json.weights, "the script's weights, a context after a cache");
  near(out.output, reply.json.output, "the script's output");
  // the mask covers every key, the cached ones first
  await panel("mask-panel");
  const masked = await rendered(() => page.check("#use-mask"));
  assert.deepEqual(masked.mask, [[true, true, true], [true, true, true], [true, true, true]]);
  const hid = await rendered(() => page.uncheck('input[aria-label="query word 1 may attend key 0"]'));
  assert.equal(hid.mask[0][0], false);
  const w0 = (await cells("h0-weights"))[0];
  assert.ok(w0.masked && w0.value === "0", "the cached key 0 is hidden from query word 1");
  await rendered(() => page.uncheck("#use-mask"));
  await panel("mask-panel", false);
  await rendered(() => page.uncheck("#use-cache"));
  await rendered(() => page.uncheck("#use-context"));
  await panel("cache-panel", false);
  await panel("context-panel", false);
});

test("the PyTorch script: nn.MultiheadAttention loaded with the page's weights prints the API's numbers, or says why it cannot", async () => {
  await rendered(() => page.click('button[data-preset="002"]'));
  const panels = ["weights-panel", "batch-panel", "wo-panel", "mask-panel", "share-panel", "position-panel"];
  for (const id of panels) await panel(id);
  await page.uncheck("#auto");
  await page.check("#use-bias");
  await page.fill('#field-b_k input[aria-label="b_k column 2"]', "0.25");
  await page.fill('#field-b_q input[aria-label="b_q column 7"]', "-0.5");
  await page.check("#use-w_o");
  await page.fill('#field-w_o input[aria-label="W_o row 1 column 0"]', "0.75");
  await page.fill('#field-b_o input[aria-label="b_o column 3"]', "2");
  await page.fill("#batch", "2");
  await page.check("#causal");
  await page.check("#use-padding");
  await page.uncheck('input[aria-label="sequence 1: key tok0 may be attended"]'); // sequence 1's first query: no key left
  // head 1 may attend nothing: every row has one head without keys (PyTorch's NaN row), the other with
  await page.check("#use-mask");
  await page.selectOption("#mask-per", "head");
  await page.selectOption("#mask-head", "1");
  await page.click('button[data-fill="none"]');
  await page.check("#auto");
  const sent = await rendered(() => page.click("#compute"));
  await stateWritten();
  const { return: _r, ...body } = sent;
  const { json } = await api({ ...body, return: ["weights", "output"] });
  assert.deepEqual(json.weights[1][0][0], [0, 0, 0, 0, 0], "a query with no key left");
  assert.deepEqual(json.weights[0][1][2], [0, 0, 0, 0, 0], "head 1 may attend nothing");
  assert.equal(await page.isDisabled("#download-torch-script"), false);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "visualizer-torch-"));
  try {
    fs.writeFileSync(path.join(dir, "attention_torch.py"), await page.inputValue("#torch-script"));
    const out = JSON.parse(execFileSync(PYTHON, [path.join(dir, "attention_torch.py")]).toString());
    near(out.weights, json.weights, "nn.MultiheadAttention's weights");
    near(out.output, json.output, "nn.MultiheadAttention's output");
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  await rendered(() => page.selectOption("#rope", "half"));
  assert.equal(await page.inputValue("#torch-script"), "# nn.MultiheadAttention has no equivalent of this request: RoPE.\n");
  assert.equal(await page.isDisabled("#download-torch-script"), true);
  for (const id of panels) await panel(id, false);
  await rendered(() => page.click('button[data-preset="002"]'));
});

finalChecks();
