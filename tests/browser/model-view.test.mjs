// End-to-end test of the visualizer page, the model view: a bundle of two
// layers (the Python client's save_bundle format, docs/visualizer.md "Model
// bundles", made here) opened by the file picker and by a drop, drawn as
// layers × heads of the API's weights; a click opens a layer's pipeline
// (harness.mjs: the server, Chromium and the helpers).
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { api, assertPageShowsApi, axeViolations, finalChecks, openPage, page, rendered, test } from "./harness.mjs";

openPage();

// Two layers of nn.MultiheadAttention(4, 2) as save_bundle writes them: the
// module's state_dict names, every array nested, "return" as the client asks.
function layer(seed, causal) {
  let s = seed;
  const rnd = () => { s = (s * 16807) % 2147483647; return Math.round(((s / 2147483647) * 2 - 1) * 1000) / 1000; };
  const mat = (r, c) => Array.from({ length: r }, () => Array.from({ length: c }, rnd));
  return { x: mat(5, 4), num_heads: 2, dtype: "float64", in_proj_weight: mat(12, 4), in_proj_bias: mat(1, 12)[0],
           "out_proj.weight": mat(4, 4), "out_proj.bias": mat(1, 4)[0], ...(causal ? { causal: true } : {}),
           return: ["output", "weights"] };
}
const BUNDLE = { layers: [{ name: "layers.0.self_attn", request: layer(11, false) },
                          { name: "layers.1.self_attn", request: layer(23, true) }] };
const bundleFile = () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "visualizer-bundle-")), "bundle.json");
  fs.writeFileSync(file, JSON.stringify(BUNDLE));
  return file;
};
const multiples = () => page.locator("#model-view .model-head");

// Each small multiple's pixels are the palette's colours of the API's
// weights of that layer and head (grey where causal hides a key), on a scale
// from 0 to 1 with "One colour scale" (the default), or from 0 to the
// head's largest weight; the legend names it.
async function assertMultiplesShowApi(one = true) {
  assert.equal(await multiples().count(), 4);
  const fmt = (v) => page.evaluate((a) => window.attentionVisualizer.fmt(a), v);
  const replies = [];
  for (const { request } of BUNDLE.layers) {
    const { status, json } = await api({ ...request, return: ["weights", "masked_scores"] });
    assert.equal(status, 200);
    replies.push(json);
  }
  const tops = replies.map((json) => json.weights.map((m) => Math.max(...m.flat())));
  for (const [li, json] of replies.entries()) {
    for (const h of [0, 1]) {
      const got = await page.evaluate(([l, k]) => {
        const c = document.querySelector(`#model-view button[data-layer="${l}"][data-head="${k}"] canvas`);
        const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
        const pal = window.attentionVisualizer.PALETTES.seq.rgb;
        return { w: c.width, h: c.height, px: Array.from({ length: d.length / 4 }, (_, p) => [d[4 * p], d[4 * p + 1], d[4 * p + 2]]), pal };
      }, [li, h]);
      assert.deepEqual([got.h, got.w], [5, 5]);
      const top = one ? 1 : tops[li][h];
      const want = json.weights[h].flat().map((w, p) => (json.masked_scores[h].flat()[p] === null ? [196, 196, 196]
        : got.pal[Math.round((w / top) * 255)]));
      assert.deepEqual(got.px, want, `layer ${li} head ${h}`);
    }
  }
  const own = [];
  for (const [li, t] of tops.entries()) own.push(`layer ${li} head 0 ${await fmt(t[0])}, head 1 ${await fmt(t[1])}`);
  assert.equal(await page.textContent("#model-legend"), one
    ? "01every layer and head from 0 to 1: one colour is one weight everywhere"
    : `0its largesteach head on its own scale, its darkest its largest weight: ${own.join("; ")}`);
}

test("model view: a bundle opened by the file picker shows layers × heads of the API's weights", async () => {
  await page.setInputFiles("#bundle-file", bundleFile());
  await page.waitForFunction(() => /bundle\.json: 2 layers/.test(document.getElementById("model-status").textContent));
  assert.equal(await page.isVisible("#model-panel"), true);
  assert.deepEqual(await page.locator("#model-view .model-layer").evaluateAll((ls) => ls.map((l) => l.getAttribute("aria-label"))),
                   ["Layer 0: layers.0.self_attn", "Layer 1: layers.1.self_attn"]);
  await assertMultiplesShowApi();
  assert.deepEqual(await axeViolations(), []);
  await page.uncheck("#one-scale");
  await assertMultiplesShowApi(false);
  await page.check("#one-scale");
});

test("model view: a click on a layer's head opens that layer's whole pipeline, that head shown", async () => {
  const { request } = BUNDLE.layers[1];
  const sent = await rendered(() => page.click('#model-view button[data-layer="1"][data-head="1"]'));
  assert.equal(sent.causal, true);
  assert.deepEqual(sent.in_proj_weight, request.in_proj_weight);
  assert.deepEqual(sent.out_proj_weight, request["out_proj.weight"]);
  assert.deepEqual(sent.x, request.x);
  await page.waitForSelector("#h1-weights");
  assert.equal(await page.getAttribute('#model-view button[data-layer="1"][data-head="1"]', "aria-pressed"), "true");
  assert.match(await page.textContent("#preset-note"), /Layer 1 \(layers\.1\.self_attn\) of bundle\.json/);
  const { return: _r, ...body } = request;
  await assertPageShowsApi(body);
  // by keyboard: focus layer 0's head 0 and press Enter
  const before = await page.evaluate(() => window.attentionVisualizer.renders);
  await page.focus('#model-view button[data-layer="0"][data-head="0"]');
  await page.keyboard.press("Enter");
  await page.waitForFunction((n) => window.attentionVisualizer.renders > n
    && JSON.parse(window.attentionVisualizer.lastRequestBody).causal === undefined, before);
});

test("model view: a bundle dropped on the page opens as the file picker's does", async () => {
  await page.evaluate((text) => {
    const dt = new DataTransfer();
    dt.items.add(new File([text], "dropped.json", { type: "application/json" }));
    document.body.dispatchEvent(new DragEvent("dragover", { dataTransfer: dt, bubbles: true, cancelable: true }));
    document.body.dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, JSON.stringify(BUNDLE));
  await page.waitForFunction(() => /dropped\.json: 2 layers/.test(document.getElementById("model-status").textContent));
  await assertMultiplesShowApi();
});

test("model view: a file that is not a bundle says so and keeps the page", async () => {
  await page.evaluate(() => {
    const dt = new DataTransfer();
    dt.items.add(new File(['{"layer": []}'], "other.json", { type: "application/json" }));
    document.body.dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
  });
  await page.waitForFunction(() => /other\.json could not be shown: no "layers"/.test(document.getElementById("model-status").textContent));
  assert.equal(await multiples().count(), 4); // the last bundle stays
});

finalChecks();
