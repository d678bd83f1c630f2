// End-to-end test of the visualizer page, the form: causal, mask and padding, W_o, cross-attention, labels, errors next to their field, pasted text
// (harness.mjs: the server, Chromium and the helpers).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { api, assertPageShowsApi, cells, failed, finalChecks, LESSONS, openHead, openPage, page, PYTHON, rendered, renders, shot, test } from "./harness.mjs";

openPage();

test("causal: the upper triangle of every head's weights is 0 and drawn as masked, not as a tiny weight", async () => {
  const lesson = LESSONS["002"];
  await rendered(() => page.click('button[data-preset="002"]'));
  const sent = await rendered(() => page.check("#causal"));
  assert.equal(sent.causal, true);
  for (const head of [0, 1]) {
    await openHead(head);
    const weights = await cells(`h${head}-weights`);
    for (const c of weights) {
      assert.equal(c.masked, c.col > c.row, `head ${head} (${c.row}, ${c.col}) masked only above the diagonal`);
      if (c.masked) assert.deepEqual([c.value, c.text], ["0", "·"]);
    }
    assert.equal(weights[0].value, "1", "the first query sees only itself");
    const masked = await cells(`h${head}-masked_scores`);
    masked.forEach((c) => assert.equal(c.value === "−∞", c.col > c.row));
    // a masked cell does not look like the smallest weight
    const looks = await page.evaluate((id) => {
      const style = (td) => getComputedStyle(td).backgroundImage + getComputedStyle(td).backgroundColor;
      const masked = document.querySelector(`#${id} td.masked`);
      const small = [...document.querySelectorAll(`#${id} td[data-value]:not(.masked)`)]
        .sort((a, b) => Number(a.dataset.value) - Number(b.dataset.value))[0];
      return [style(masked), style(small)];
    }, `h${head}-weights`);
    assert.notEqual(looks[0], looks[1]);
  }
  await openHead(0);
  assert.match(await page.textContent("#summary"), /causal true/);
  assert.match(await page.textContent("#h0-masked_scores .formula"), /causal/);
  await assertPageShowsApi({ x: lesson.x, w_q: lesson.w_q, w_k: lesson.w_k, w_v: lesson.w_v,
                             num_heads: 2, tokens: lesson.tokens, causal: true });
  await shot("causal.png");
  await rendered(() => page.uncheck("#causal"));
});

test("mask and key padding: both mean checked = may be attended; a closed panel still says what it hides", async () => {
  const lesson = LESSONS["001"];
  await rendered(() => page.click('button[data-preset="001"]'));
  assert.equal(await page.textContent("#mask-state"), "off");
  await page.click("#mask-panel > summary");
  await rendered(() => page.check("#use-mask"));
  const sent = await rendered(() => page.click('button[data-fill="diag"]'));
  assert.deepEqual(sent.mask, [[true, false, false], [false, true, false], [false, false, true]]);
  assert.deepEqual((await cells("h0-weights")).map((c) => c.value), ["1", "0", "0", "0", "1", "0", "0", "0", "1"]);

  await rendered(() => page.click('button[data-fill="all"]'));
  await rendered(() => page.check("#use-padding"));
  const keep = page.locator('input[aria-label="key word 1 may be attended"]');
  assert.equal(await keep.isChecked(), true, "a key starts as attended");
  const padded = await rendered(() => keep.uncheck());
  assert.deepEqual(padded.key_padding, [true, false, false], "unticked = padding");
  for (const c of (await cells("h0-weights")).filter((c) => c.col === 0)) assert.ok(c.masked && c.value === "0");
  await assertPageShowsApi({ x: lesson.x, w_q: lesson.w_q, w_k: lesson.w_k, w_v: lesson.w_v, num_heads: 1,
                             tokens: lesson.tokens, mask: padded.mask, key_padding: [true, false, false] });
  await page.click("#mask-panel > summary"); // closed: the summary line still tells
  assert.equal(await page.textContent("#mask-state"), "mask on (0 pairs hidden), 1 key padded");
  assert.match(await page.textContent("#summary"), /hidden keys mask, 1 padded key/);

  // a query that may attend no key: its row is all 0, and the page says why
  await page.click("#mask-panel > summary");
  await rendered(() => page.uncheck('input[aria-label="query word 3 may attend key word 2"]'));
  await rendered(() => page.uncheck('input[aria-label="query word 3 may attend key word 3"]'));
  assert.match(await page.textContent("#h0-weights .warn"), /^word 3: no key left to attend/);
  assert.deepEqual((await cells("h0-head_outputs")).slice(8).map((c) => c.value), ["0", "0", "0", "0"]);
  await rendered(() => page.uncheck("#use-mask"));
  await rendered(() => page.uncheck("#use-padding"));
  assert.equal(await page.textContent("#mask-state"), "off");
  await page.click("#mask-panel > summary");
});

test("W_o: lesson 002's own (its generator's next draw), else the identity; the output is concat · W_o", async () => {
  const l = LESSONS["002"];
  await rendered(() => page.click('button[data-preset="002"]'));
  await page.click("#wo-panel > summary");
  const sent = await rendered(() => page.check("#use-w_o"));
  assert.deepEqual(sent.w_o, l.w_o, "the lesson's W_o, not an identity it does not use");
  const { encoding: _e, ...body } = sent; // the page's request, in JSON
  const { json } = await api(body);
  assert.deepEqual((await cells("all-output")).map((c) => Number(c.value)), json.output.flat());
  assert.equal(await page.textContent("#all-output .formula"), "concat · W_o");
  assert.equal(await page.textContent("#wo-state"), "on");
  await rendered(() => page.uncheck("#use-w_o"));
  // a lesson without one: ticking it starts from the identity, so the output is the concatenation
  await rendered(() => page.click('button[data-preset="001"]'));
  const one = await rendered(() => page.check("#use-w_o"));
  assert.deepEqual(one.w_o, [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]);
  assert.deepEqual((await cells("all-output")).map((c) => c.value), (await cells("all-concat")).map((c) => c.value));
  await rendered(() => page.uncheck("#use-w_o"));
  await page.click("#wo-panel > summary");
});

test("lesson 002's reshape: Q (5×8) with each head's columns marked, and its split Qh (2, 5, 4)", async () => {
  const l = LESSONS["002"];
  await rendered(() => page.click('button[data-preset="002"]'));
  const { json } = await api({ x: l.x, w_q: l.w_q, w_k: l.w_k, w_v: l.w_v, num_heads: 2, return: ["q"] });
  assert.equal(await page.textContent("#group-split-h"), "Split into heads: Q (5, 8) → Qh (2, 5, 4)reshape (5, 2, 4), transpose (1, 0, 2)");
  // Q = X · W_q, every head at once: its cells are the heads' Q side by side
  const Q = json.q[0].map((row, i) => [...row, ...json.q[1][i]]);
  assert.deepEqual((await cells("split-q")).map((c) => Number(c.value)), Q.flat());
  assert.equal(await page.textContent("#split-q h3 .shape"), "(5, 8)");
  assert.deepEqual(await page.$$eval("#split-q th.group", (ths) => ths.map((t) => [t.textContent, t.colSpan])), [["head 0", 4], ["head 1", 4]]);
  assert.equal(await page.locator("#split-q tbody tr:first-child td.gstart").count(), 1, "a line where head 1's columns start");
  assert.equal(await page.getAttribute("#split-q tbody tr:first-child td.gstart", "data-col"), "4");
  // Qh[h] is columns 4h … 4h + 3 of Q
  for (const h of [0, 1]) {
    assert.deepEqual((await cells(`split-qh${h}`)).map((c) => Number(c.value)), json.q[h].flat());
    assert.match(await page.textContent(`#split-qh${h} .formula`), new RegExp(`^columns ${4 * h}…${4 * h + 3} of Q`));
  }
  // a per-head stack (lesson 000) has no such step
  await rendered(() => page.click('button[data-preset="000"]'));
  assert.equal(await page.locator("#group-split").count(), 0);
});

test("cross-attention: a 2-row context gives 3×2 weights labelled with its tokens", async () => {
  const lesson = LESSONS["001"];
  await rendered(() => page.click('button[data-preset="001"]'));
  await page.click("#context-panel > summary");
  await rendered(() => page.check("#use-context"));
  await page.click('#field-context .seg label:has(input[value="text"])');
  await rendered(() => page.fill("#text-context", "[[1, 0, 1, 0], [0, 2, 0, 2]]"));
  const cross = await rendered(() => page.fill("#context_tokens", "key A, key B"));
  assert.deepEqual(cross.context, [[1, 0, 1, 0], [0, 2, 0, 2]]);
  assert.deepEqual(cross.context_tokens, ["key A", "key B"]);
  const weights = await cells("h0-weights");
  assert.equal(weights.length, 6);
  // still lesson 001's numbers and names: its weights are `attention_weights`
  assert.ok(weights[1].title.startsWith("attention_weights[word 1 → key B] = "), weights[1].title);
  assert.equal(await page.textContent("#h0-weights h3 .shape"), "(3, 2)");
  assert.equal(await page.textContent("#input-context h3 .shape"), "(2, 4)");
  await assertPageShowsApi({ x: lesson.x, context: cross.context, w_q: lesson.w_q, w_k: lesson.w_k,
                             w_v: lesson.w_v, num_heads: 1, tokens: lesson.tokens,
                             context_tokens: ["key A", "key B"] });
  await rendered(() => page.uncheck("#use-context"));
  await page.click("#context-panel > summary");
});

test("labels: a row without one is labelled by its index (+ row, a pasted 4-row X, too many labels)", async () => {
  await rendered(() => page.click('button[data-preset="001"]'));
  const more = await rendered(() => page.click('#field-x button[aria-label="X: add row"]'));
  assert.equal(more.x.length, 4);
  assert.deepEqual(more.tokens, ["word 1", "word 2", "word 3", "3"]);
  assert.deepEqual(await page.$$eval("#h0-weights tbody th", (t) => t.map((x) => x.textContent)),
                   ["word 1", "word 2", "word 3", "3"]);
  await page.click('#field-x .seg label:has(input[value="text"])');
  const pasted = await rendered(() => page.fill("#text-x", "1 0 1 0\n0 2 0 2\n1 1 1 1\n0 0 1 1"));
  assert.deepEqual(pasted.tokens, ["word 1", "word 2", "word 3", "3"]);
  const fewer = await rendered(() => page.fill("#tokens", "a, b, c, d, e"));
  assert.deepEqual(fewer.tokens, ["a", "b", "c", "d"]);
  assert.match(await page.textContent("#tokens-note"), /X has 4 rows: the last 1 label is not used/);
});

test("naming the tokens is no edit of the numbers: the lesson's note and button stay", async () => {
  await rendered(() => page.click('button[data-preset="000"]'));
  const note = await page.textContent("#preset-note");
  assert.match(note, /^x \(3×6\), 2 heads/);
  await rendered(() => page.fill("#tokens", "el, gato, duerme"));
  assert.equal(await page.getAttribute('button[data-preset="000"]', "aria-pressed"), "true");
  assert.equal(await page.textContent("#preset-note"), note, "no \"Edited: … these are no longer its numbers\"");
  assert.doesNotMatch(await page.textContent("#preset-note"), /Edited/);
});

// One rule for minus signs: a grid cell shows "−" (U+2212) as every number the page shows, its text view ASCII
// NumPy; a cell reads "-" and "−" alike.
test("editors: a grid shows − as the page does, the text view ASCII -; both are read when typed", async () => {
  for (const key of ["x", "w_q"]) await page.click(`#field-${key} .seg label:has(input[value="grid"])`);
  await rendered(() => page.click('button[data-preset="000"]'));
  const shown = await page.$$eval("#grid-w_q input", (ins) => ins.map((i) => [i.value, i.title]));
  const negative = shown.filter(([v]) => /[-−]/.test(v));
  assert.ok(negative.length > 0, "lesson 000's W_q has negative numbers");
  for (const [v, title] of negative) {
    assert.match(v, /^−\d/, `a cell shows ${v}`);
    assert.doesNotMatch(v + title, /-/, `no ASCII minus in ${v} (${title})`);
  }
  assert.match(await page.inputValue("#text-w_q"), /-\d/, "the text view is ASCII, for Python");
  assert.doesNotMatch(await page.inputValue("#text-w_q"), /−/, "the text view is ASCII, for Python");
  for (const [typed, want] of [["-0.5", -0.5], ["−0.25", -0.25], ["−1e−3", -0.001]]) {
    const sent = await rendered(() => page.fill('#field-x input[data-row="0"][data-col="0"]', typed));
    assert.equal(sent.x[0][0], want, typed);
    assert.equal(await page.getAttribute('#field-x input[data-row="0"][data-col="0"]', "aria-invalid"), null, typed);
  }
  await rendered(() => page.click('button[data-preset="001"]'));
});

test("a lesson's note and button go once its numbers are edited", async () => {
  await rendered(() => page.click('button[data-preset="001"]'));
  await rendered(() => page.fill('#field-w_q input[aria-label="W_q row 0 column 0"]', "0.7"));
  assert.equal(await page.getAttribute('button[data-preset="001"]', "aria-pressed"), "false");
  assert.match(await page.textContent("#preset-note"), /^Edited: started from Lesson 001/);
  await rendered(() => page.click('button[data-preset="001"]'));
  assert.equal(await page.getAttribute('button[data-preset="001"]', "aria-pressed"), "true");
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
  assert.equal(reply.json.detail, "expected 4 elements (as in the first row), found 3");
  // the student's words, built from the code, the pointer and the detail's values
  assert.equal(await err.textContent(), "X, row 1 has 3 numbers, but the first row has 4: every row needs the same count "
    + "(the API's ragged_array at /x/1)");
  assert.equal(await page.getAttribute("#text-x", "aria-invalid"), "true");
  assert.equal(await page.isVisible("#err-general"), false);
  assert.match(await page.getAttribute("#results", "class"), /stale/);
  await shot("error-ragged.png");

  // fixing the row clears the message
  await rendered(() => page.fill("#text-x", "[[1, 0, 1, 0],\n [0, 2, 0, 2],\n [1, 1, 1, 1]]"));
  assert.equal(await err.isVisible(), false);
  assert.equal(await page.getAttribute("#text-x", "aria-invalid"), null);
});

test("errors: each pointer lands at its own field (num_heads, w_k from the grid, a typo)", async () => {
  await rendered(() => page.click('button[data-preset="001"]'));
  // 3 heads cannot split 4 columns
  await failed(() => page.fill("#num_heads", "3"));
  assert.equal(await page.getAttribute("#err-num_heads", "data-pointer"), "/num_heads");
  assert.equal(await page.textContent("#err-num_heads"), "3 heads do not divide the 4 columns of W_q: the number of heads "
    + "must divide 4, so 1, 2, or 4 heads work (the API's invalid_num_heads at /num_heads)");
  assert.equal(await page.getAttribute("#num_heads", "aria-invalid"), "true");
  await rendered(() => page.fill("#num_heads", "1"));

  // removing a row of W_k in the grid: W_k has 3 rows but X has 4 columns
  await failed(() => page.click('#field-w_k button[aria-label="W_k: remove row"]'));
  assert.equal(await page.getAttribute("#err-w_k", "data-pointer"), "/w_k");
  assert.equal(await page.textContent("#field-w_k #err-w_k"), "W_k has 3 rows but X has 4 columns: X @ W needs them equal; "
    + "its transpose fits: is it out × in, as PyTorch's nn.Linear.weight? Then choose the weight layout \"torch\" "
    + "(the API's shape_mismatch at /w_k)");
  await rendered(() => page.click('#field-w_k button[aria-label="W_k: add row"]'));

  // a typo is caught by the page itself, next to the cell's editor, and nothing is sent
  const before = await renders();
  await failed(() => page.fill('#field-w_q input[aria-label="W_q row 1 column 2"]', "0.3x"));
  assert.equal(await page.textContent("#err-w_q"), 'W_q row 1 column 2: "0.3x" is not a number');
  assert.equal(await renders(), before);
  await page.fill('#field-w_q input[aria-label="W_q row 1 column 2"]', "0,3");
  await page.waitForFunction(() => document.getElementById("err-w_q").textContent.includes("0,3"));
  assert.equal(await page.textContent("#err-w_q"), 'W_q row 1 column 2: "0,3" is ambiguous: write 0.3 for a decimal, or 0, 3 for two numbers');
  await rendered(() => page.fill('#field-w_q input[aria-label="W_q row 1 column 2"]', "0.3"));
  await shot("errors-fixed.png");
});

test("errors in a student's words: the status names the field, its message comes into view, a button goes to it", async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  try {
    await rendered(() => page.click('button[data-preset="002"]'));
    await page.evaluate(() => scrollTo(0, 0));
    await failed(() => page.click("#compute").then(() => page.fill("#num_heads", "3")));
    const words = "3 heads do not divide the 8 columns of W_q: the number of heads must divide 8, so 1, 2, 4, or 8 heads work";
    assert.equal(await page.textContent("#err-num_heads"), `${words} (the API's invalid_num_heads at /num_heads)`);
    assert.equal(await page.textContent("#status"), `Heads: ${words} Go to Heads`);
    const inView = () => page.evaluate(() => {
      const r = document.getElementById("err-num_heads").getBoundingClientRect();
      // within a pixel: scrolling moves whole pixels, the layout's edges are fractional
      return r.top >= -1 && r.bottom <= innerHeight + 1;
    });
    assert.ok(await inView(), "the message is on the screen");
    assert.equal(await page.evaluate(() => document.activeElement.id), "num_heads", "typing in Heads keeps its focus");
    // from anywhere, the status line's button goes back to the field
    await page.evaluate(() => scrollTo(0, document.body.scrollHeight));
    await page.click("#status button");
    assert.equal(await page.evaluate(() => document.activeElement.id), "num_heads");
    assert.ok(await inView(), "the message is on the screen again");
    // an editor's error: the focus goes to its text (typed in elsewhere)
    await rendered(() => page.fill("#num_heads", "2"));
    await page.click('#field-w_k .seg label:has(input[value="text"])');
    await page.uncheck("#auto");
    await page.fill("#text-w_k", "[[1, 2], [3, 4]]");
    await failed(() => page.click("#compute"));
    assert.equal(await page.textContent("#status"), "W_k: W_k has 2 rows but X has 8 columns: X @ W needs them equal Go to W_k");
    assert.equal(await page.evaluate(() => document.activeElement.id), "text-w_k");
    await page.check("#auto");
    await rendered(() => page.click('button[data-preset="002"]'));
  } finally {
    await page.setViewportSize({ width: 1280, height: 900 });
  }
});

test("key/value heads must divide heads: the page says so next to Key/value heads, and sends nothing", async () => {
  await rendered(() => page.click('button[data-preset="002"]'));
  await rendered(() => page.fill("#num_heads", "4"));
  const before = await renders();
  await failed(() => page.fill("#num_kv_heads", "3"));
  assert.equal(await page.textContent("#err-num_kv_heads"), "Key/value heads must divide Heads: 4 heads cannot share 3 "
    + "key/value heads evenly (each key/value head serves the same number of heads). Try 1, 2, or 4.");
  assert.equal(await page.getAttribute("#num_kv_heads", "aria-invalid"), "true");
  assert.equal(await renders(), before, "nothing was sent");
  const body = await rendered(() => page.fill("#num_kv_heads", "2"));
  assert.deepEqual([body.num_heads, body.num_kv_heads, body.w_k[0].length], [4, 2, 4]);
});

test("pasted text: NumPy and PyTorch printouts, whitespace rows, − signs; a decimal comma is refused", async () => {
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
  // PyTorch's printout, with its dtype and grad notes, and typeset minus signs
  const torch = "tensor([[ 1.0000e-01, −2.5000e+00,  3.0000e+00,  0.0000e+00,  1.0, 2.0, 3.0, 4.0],\n"
    + "        [−5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0]], dtype=torch.float64, requires_grad=True)";
  const t = await rendered(() => page.fill("#text-x", torch));
  assert.deepEqual(t.x, [[0.1, -2.5, 3, 0, 1, 2, 3, 4], [-5, 6, 7, 8, 9, 10, 11, 12]]);
  // "1,5" is a decimal comma or a missing space: refused, not split in two
  await failed(() => page.fill("#text-x", "1,5 2 3 4 5 6 7 8"));
  assert.match(await page.textContent("#err-x"), /line 1: "1,5" is ambiguous: write 1.5 for a decimal, or 1, 5 for two numbers/);
  const c2 = await rendered(() => page.fill("#text-x", "1.5, 2, 3, 4, 5, 6, 7, 8"));
  assert.deepEqual(c2.x, [[1.5, 2, 3, 4, 5, 6, 7, 8]]);
  // a per-head stack pasted as blocks separated by a blank line
  await rendered(() => page.click('button[data-preset="002"]'));
  await page.click('#field-w_v .seg label:has(input[value="text"])');
  const stack = [0, 1].map((hd) => lesson.w_v.map((r) => r.slice(4 * hd, 4 * hd + 4).join(" ")).join("\n")).join("\n\n");
  const c = await rendered(() => page.fill("#text-w_v", stack));
  assert.equal(c.w_v.length, 2);
  assert.deepEqual(c.w_v[1][7], lesson.w_v[7].slice(4, 8));
  // the same numbers as columns of one matrix: same weights (the pasted
  // stack is an edit, so its cells say "weights"; the lesson's say "A")
  const numbers = (cs) => cs.map(({ text, value }) => ({ text, value }));
  await openHead(1);
  const again = await cells("h1-weights");
  assert.ok(again[0].title.startsWith("weights[tok0 → tok0] = "), again[0].title);
  await rendered(() => page.click('button[data-preset="002"]'));
  await openHead(1);
  const lessons = await cells("h1-weights");
  assert.ok(lessons[0].title.startsWith("A[1][tok0 → tok0] = "), lessons[0].title);
  assert.deepEqual(numbers(lessons), numbers(again));
  await openHead(0);
});

test("a button that does nothing now looks it: Next token before decoding is faded and shows no hand", async () => {
  await rendered(() => page.click('button[data-preset="001"]'));
  const look = (id) => page.evaluate((i) => { const s = getComputedStyle(document.getElementById(i)); return [Number(s.opacity), s.cursor]; }, id);
  assert.equal(await page.isDisabled("#decode-next"), true);
  const [faded, hand] = await look("decode-next");
  assert.ok(faded < 0.6, `a disabled button's opacity: ${faded}`);
  assert.equal(hand, "default");
  assert.deepEqual(await look("decode-start"), [1, "pointer"], "a live button as before");
});

finalChecks(5);
