// End-to-end test of the visualizer page, share and export: the link, .npy, CSV, JSON, curl, the NumPy script, PNG and SVG
// (harness.mjs: the server, Chromium and the helpers).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { api, cells, context, downloaded, finalChecks, LESSONS, near, openHead, openPage, page, panel, pngPixels, PYTHON, rendered, shown, STAGES, stateWritten, svgCells, test } from "./harness.mjs";

openPage();

test("share: the page's URL reproduces it (inputs, options, the open head) in a fresh tab", async () => {
  await rendered(() => page.click('button[data-preset="002"]'));
  await rendered(() => page.check("#causal"));
  await rendered(() => page.fill("#tokens", "a, b, c, d, e"));
  await openHead(1);
  await stateWritten();
  assert.match(await page.evaluate(() => location.search + location.hash), /^\?lesson=002#s=/, "the lesson and what was typed");
  const url = await page.evaluate(() => location.href);
  const sent = JSON.parse(await page.evaluate(() => window.attentionVisualizer.lastRequestBody));
  const want = await cells("h1-weights");
  const other = await context.newPage();
  try {
    await other.goto(url);
    await other.waitForFunction(() => window.attentionVisualizer?.renders >= 1 && document.getElementById("results").dataset.state === "ok");
    assert.deepEqual(JSON.parse(await other.evaluate(() => window.attentionVisualizer.lastRequestBody)), sent);
    const got = await other.evaluate(() => [...document.querySelectorAll("#h1-weights td[data-value]")].map((td) => ({
      row: Number(td.dataset.row), col: Number(td.dataset.col), value: td.dataset.value, text: td.textContent,
      title: td.title, masked: td.classList.contains("masked") })));
    assert.deepEqual(got, want, "the same head open, the same numbers");
    assert.equal(await other.isChecked("#causal"), true);
  } finally {
    await other.close();
  }
  await openHead(0);
  await rendered(() => page.uncheck("#causal"));
});


test("export: .npy, CSV and JSON of a stage parse to the API's tensors; curl and the NumPy script reproduce it", async () => {
  const l = LESSONS["002"];
  await rendered(() => page.click('button[data-preset="002"]'));
  const body = { x: l.x, w_q: l.w_q, w_k: l.w_k, w_v: l.w_v, num_heads: 2, tokens: l.tokens, causal: true };
  await rendered(() => page.check("#causal"));
  await stateWritten();
  await page.click("#share-panel > summary");
  const { json } = await api({ ...body, return: STAGES });
  const check = (script, arg) => JSON.parse(execFileSync(PYTHON, ["-c", script, arg]).toString());
  // .npy: NumPy reads the file; its numbers are the API's, its shape the API's
  await page.selectOption("#export-stage", "weights");
  const npy = await downloaded(() => page.click('button[data-export="npy"]'));
  assert.equal(npy.name, "weights.npy");
  const loaded = check("import numpy as np, json, sys; a = np.load(sys.argv[1]);"
    + " print(json.dumps({'shape': a.shape, 'dtype': str(a.dtype), 'data': a.tolist()}))", npy.file);
  assert.deepEqual(loaded.shape, [2, 5, 5]);
  assert.equal(loaded.dtype, "float64");
  assert.deepEqual(loaded.data, json.weights);
  // CSV of the open head's q, labelled; JSON of the output, with −∞ as null in masked scores
  await page.selectOption("#export-stage", "q");
  const csv = await downloaded(() => page.click('button[data-export="csv"]'));
  assert.equal(csv.name, "q_head0.csv");
  const rows = fs.readFileSync(csv.file, "utf8").trim().split("\n").map((r) => r.split(","));
  assert.deepEqual(rows[0], ["", "0", "1", "2", "3"]);
  assert.deepEqual(rows.slice(1).map((r) => r[0]), l.tokens);
  assert.deepEqual(rows.slice(1).map((r) => r.slice(1).map(Number)), json.q[0]);
  await page.selectOption("#export-stage", "masked_scores");
  const js = await downloaded(() => page.click('button[data-export="json"]'));
  const parsed = JSON.parse(fs.readFileSync(js.file, "utf8"));
  assert.deepEqual([parsed.stage, parsed.shape], ["masked_scores", [2, 5, 5]]);
  assert.deepEqual(parsed.data, json.masked_scores);
  // the curl command, run by a shell, answers the page's numbers
  const curl = await page.inputValue("#curl-command");
  assert.match(curl, /^curl -s 'http:\/\/127\.0\.0\.1:\d+\/v1\/attention' -H 'Content-Type: application\/json' -d '/);
  const answered = JSON.parse(execFileSync("/bin/sh", ["-c", curl]).toString());
  assert.deepEqual(answered.weights, json.weights);
  assert.deepEqual(answered.output, json.output);
  // the NumPy script, run by Debian's python3, prints the API's weights and output to 1e-12
  const script = await page.inputValue("#numpy-script");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "visualizer-script-"));
  try {
    fs.writeFileSync(path.join(dir, "attention.py"), script);
    const out = JSON.parse(execFileSync("/usr/bin/python3", [path.join(dir, "attention.py")]).toString());
    const near = (a, b, what) => a.flat(3).forEach((v, k) => {
      const w = b.flat(3)[k];
      assert.ok(Math.abs(v - w) <= 1e-12 * Math.max(1, Math.abs(w)), `${what} ${k}: ${v} vs the API's ${w}`);
    });
    near(out.weights, json.weights, "weights");
    near(out.output, json.output, "output");
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  await page.click("#share-panel > summary");
  await rendered(() => page.uncheck("#causal"));
});

// The title of an exported SVG: its bold lines, as one sentence.
const titleOf = (svgText) => [...svgText.matchAll(/<text[^>]*font-weight="bold"[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]).join(" ");

test("PNG and SVG of a heatmap: the open head's cells in the card's colours, each cell's exact value in the SVG", async () => {
  const l = LESSONS["002"];
  await rendered(() => page.click('button[data-preset="002"]'));
  await rendered(() => page.check("#causal"));
  await openHead(1);
  await stateWritten();
  await panel("share-panel");
  const { json } = await api({ x: l.x, w_q: l.w_q, w_k: l.w_k, w_v: l.w_v, num_heads: 2, causal: true, return: ["weights", "q"] });
  const palettes = await page.evaluate(() => ({ seq: window.attentionVisualizer.PALETTES.seq.rgb, div: window.attentionVisualizer.PALETTES.div.rgb }));
  await page.selectOption("#export-stage", "weights");
  const svgFile = await downloaded(() => page.click('button[data-export="svg"]'));
  assert.equal(svgFile.name, "weights_head1.svg");
  const svgText = fs.readFileSync(svgFile.file, "utf8");
  const rects = svgCells(svgText);
  assert.equal(rects.length, 25);
  for (const r of rects) {
    const w = json.weights[1][r.row][r.col], masked = r.col > r.row;
    assert.equal(r.value, w, `cell (${r.row}, ${r.col})`);
    assert.equal(r.fill, masked ? "rgb(196,196,196)" : `rgb(${palettes.seq[Math.round(w * 255)].join(",")})`);
  }
  assert.match(svgText, new RegExp(`>${shown(json.weights[1][3][2])}</text>`), "the numbers are written");
  assert.equal(titleOf(svgText), "Attention weights = softmax, head 1 (5×5)");
  // the PNG draws the same cells: its pixels are the SVG's colours
  const png = await downloaded(() => page.click('button[data-export="png"]'));
  assert.equal(png.name, "weights_head1.png");
  const img = await pngPixels(png.file, rects.map((r) => [r.x + 1, r.y + 1]));
  const [, width, height] = /<svg[^>]* width="(\d+)" height="(\d+)"/.exec(svgText);
  assert.deepEqual([img.width, img.height], [Number(width), Number(height)]);
  img.px.forEach((p, k) => assert.equal(`rgb(${p.join(",")})`, rects[k].fill, `PNG cell (${rects[k].row}, ${rects[k].col})`));
  // a diverging stage: Q of the open head, around 0
  await page.selectOption("#export-stage", "q");
  const q = svgCells(fs.readFileSync((await downloaded(() => page.click('button[data-export="svg"]'))).file, "utf8"));
  assert.deepEqual(q.map((r) => r.value), json.q[1].flat());
  const M = Math.max(...json.q[1].flat().map(Math.abs));
  q.forEach((r) => assert.equal(r.fill, `rgb(${palettes.div[Math.round(((r.value / M + 1) / 2) * 255)].join(",")})`));
  await panel("share-panel", false);
  await openHead(0);
  await rendered(() => page.uncheck("#causal"));
});


test("PNG and SVG of the head view and of the model view: every line and every head's cell carries the API's weight", async () => {
  const l = LESSONS["002"];
  await rendered(() => page.click('button[data-preset="002"]'));
  await rendered(() => page.check("#causal"));
  await openHead(1);
  await stateWritten();
  await panel("share-panel");
  const { json } = await api({ x: l.x, w_q: l.w_q, w_k: l.w_k, w_v: l.w_v, num_heads: 2, causal: true, return: ["weights"] });
  // the head view: one line per pair a query may attend, as on the page
  await page.selectOption("#export-stage", "head-view");
  assert.equal(await page.isDisabled('button[data-export="csv"]'), true, "a picture: PNG and SVG only");
  const svgFile = await downloaded(() => page.click('button[data-export="svg"]'));
  assert.equal(svgFile.name, "head_view_head1.svg");
  const svgText = fs.readFileSync(svgFile.file, "utf8");
  const lines = [...svgText.matchAll(/<line x1="([\d.]+)" y1="([\d.]+)" x2="([\d.]+)" y2="([\d.]+)" stroke="(rgb\([\d,]+\))" stroke-width="([\d.]+)" stroke-opacity="([\d.]+)" data-q="(\d+)" data-k="(\d+)" data-w="([^"]+)"\/>/g)]
    .map((m) => ({ x1: Number(m[1]), y1: Number(m[2]), x2: Number(m[3]), y2: Number(m[4]), stroke: m[5], width: Number(m[6]), q: Number(m[8]), k: Number(m[9]), w: Number(m[10]) }));
  assert.equal(lines.length, 15, "causal: the 15 pairs a query may attend");
  const seq = await page.evaluate(() => window.attentionVisualizer.PALETTES.seq);
  // a line's colour: the palette from its first colour at 3:1 against white
  const first0 = await page.evaluate(() => window.attentionVisualizer.PALETTES.seq.rgb
    .findIndex((c) => 1.05 / (window.attentionVisualizer.luminance(c) + 0.05) >= 3));
  for (const ln of lines) { // on the scale from 0 to 1 (the default)
    assert.ok(ln.k <= ln.q, `no line to a later key (${ln.q} → ${ln.k})`);
    assert.equal(ln.w, json.weights[1][ln.q][ln.k]);
    assert.equal(ln.width, Number((1 + 4 * ln.w).toFixed(2)));
    assert.equal(ln.stroke, seq.css[first0 + Math.round(ln.w * (255 - first0))]);
  }
  assert.equal(titleOf(svgText), "Head view, head 1: each query (left) to the keys it attends (right), as thick and dark as the weight");
  assert.match(svgText, /<text[^>]*>tok4<\/text>/, "the tokens label both sides");
  // the PNG draws the same lines: the middle of query 0's only line (weight 1) is the palette's darkest, a corner white
  const png = await downloaded(() => page.click('button[data-export="png"]'));
  assert.equal(png.name, "head_view_head1.png");
  const first = lines.find((ln) => ln.q === 0);
  const [, width, height] = /<svg[^>]* width="(\d+)" height="(\d+)"/.exec(svgText);
  const img = await pngPixels(png.file, [[Math.round((first.x1 + first.x2) / 2), Math.round(first.y1)], [2, Number(height) - 2]]);
  assert.deepEqual([img.width, img.height], [Number(width), Number(height)]);
  assert.deepEqual(img.px, [seq.rgb[255], [255, 255, 255]]);
  // the model view: every head's weights, masked cells grey, each cell's exact value
  await page.selectOption("#export-stage", "model-view");
  const mv = await downloaded(() => page.click('button[data-export="svg"]'));
  assert.equal(mv.name, "model_view.svg");
  const mvText = fs.readFileSync(mv.file, "utf8");
  const rects = [...mvText.matchAll(/<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" fill="(rgb\([\d,]+\))" data-head="(\d+)" data-row="(\d+)" data-col="(\d+)" data-value="([^"]+)"\/>/g)]
    .map((m) => ({ x: Number(m[1]), y: Number(m[2]), w: Number(m[3]), fill: m[5], head: Number(m[6]), row: Number(m[7]), col: Number(m[8]), value: Number(m[9]) }));
  assert.equal(rects.length, 50, "2 heads × 5 × 5");
  for (const r of rects) {
    const w = json.weights[r.head][r.row][r.col];
    assert.equal(r.value, w, `head ${r.head} (${r.row}, ${r.col})`);
    assert.equal(r.fill, r.col > r.row ? "rgb(196,196,196)" : `rgb(${seq.rgb[Math.round(w * 255)].join(",")})`);
  }
  assert.match(mvText, />head 1<\/text>/);
  const mvPng = await downloaded(() => page.click('button[data-export="png"]'));
  const px = await pngPixels(mvPng.file, rects.map((r) => [r.x + r.w / 2, r.y + r.w / 2]));
  px.px.forEach((p, k) => assert.equal(`rgb(${p.join(",")})`, rects[k].fill, `PNG head ${rects[k].head} (${rects[k].row}, ${rects[k].col})`));
  await page.selectOption("#export-stage", "weights");
  assert.equal(await page.isDisabled('button[data-export="csv"]'), false);
  await panel("share-panel", false);
  await openHead(0);
  await rendered(() => page.uncheck("#causal"));
});

// Every <text> of an SVG drawn by the page: its box in the picture's own
// units (the viewBox), and the picture's size.
function svgBoxes(svgText) {
  return page.evaluate((text) => {
    const host = document.createElement("div");
    host.innerHTML = text;
    document.body.append(host);
    const svgEl = host.querySelector("svg"), vb = svgEl.viewBox.baseVal;
    const boxes = [...svgEl.querySelectorAll("text")].map((t) => { const b = t.getBBox(); return { text: t.textContent, x: b.x, y: b.y, w: b.width, h: b.height }; });
    host.remove();
    return { width: Number(svgEl.getAttribute("width")), height: Number(svgEl.getAttribute("height")), vw: vb.width, vh: vb.height, boxes };
  }, svgText);
}
const overlap = (a, b) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

test("slide-ready: lesson 000's weights, the head view and the model view at 1×, 2× and 3×, every word inside the picture", async () => {
  await rendered(() => page.click('button[data-preset="000"]'));
  await stateWritten();
  await panel("share-panel");
  try {
    for (const stage of ["weights", "head-view", "model-view"]) {
      await page.selectOption("#export-stage", stage);
      let one = null;
      for (const k of [1, 2, 3]) {
        await page.selectOption("#export-scale", String(k));
        const svgFile = await downloaded(() => page.click('button[data-export="svg"]'));
        const text = fs.readFileSync(svgFile.file, "utf8");
        const pic = await svgBoxes(text);
        assert.deepEqual([pic.width, pic.height], [k * pic.vw, k * pic.vh], `${stage} ${k}×: the SVG's size`);
        if (k === 1) {
          one = pic;
          assert.ok(pic.vw >= 480, `${stage}: ${pic.vw} px wide, a slide's picture`);
          for (const b of pic.boxes) {
            assert.ok(b.x >= 0 && b.y >= 0 && b.x + b.w <= pic.vw && b.y + b.h <= pic.vh,
              `${stage}: "${b.text}" at ${JSON.stringify(b)} outside ${pic.vw}×${pic.vh}`);
          }
          for (const [i, a] of pic.boxes.entries()) for (const b of pic.boxes.slice(i + 1)) {
            if (/^head \d+$/.test(a.text) && /^head \d+$/.test(b.text)) assert.ok(!overlap(a, b), `"${a.text}" and "${b.text}" overlap`);
          }
          const title = titleOf(text);
          assert.match(title, { "weights": /^Attention weights = softmax, head 0 \(3×3\)$/, "head-view": /^Head view, head 0: /,
                                "model-view": /^Every head's attention weights \(3×3 each\)/ }[stage]);
          if (stage === "weights") assert.match(text, />lesson 000: attention_weights</);
          assert.match(text, /from 0 to 1/, `${stage}: the legend says the scale`);
        }
        const png = await downloaded(() => page.click('button[data-export="png"]'));
        assert.equal(png.name.includes(`@${k}x`), k > 1, png.name);
        const img = await pngPixels(png.file, [[0, 0]]);
        assert.deepEqual([img.width, img.height], [k * one.vw, k * one.vh], `${stage} ${k}×: the PNG's size`);
      }
    }
  } finally {
    await page.selectOption("#export-scale", "1");
    await page.selectOption("#export-stage", "weights");
    await panel("share-panel", false);
  }
});

finalChecks();
