/*
 * model-view.js - a model bundle (the Python client's save_bundle: one JSON
 * file, docs/visualizer.md "Model bundles") as layers × heads of weights:
 * each layer's request is posted to the API as it is, each head's weights
 * drawn as a small multiple; a click opens that layer's whole pipeline in
 * the form and the cards.
 */
import { $, API, el, range } from "./base.js";
import { STATE_DICT_KEYS } from "./form.js";
import { parseReply } from "./request.js";
import { applyState } from "./share.js";
import { smallMultipleImage } from "./compare.js";
import { fmt } from "./format.js";
import { largestWeight, legendNodes, oneScale } from "./weight-scale.js";

// A small multiple's side in CSS pixels: at most this wide, however many keys.
const MULTIPLE_MAX_PX = 96, MULTIPLE_MIN_PX = 40;

export let bundle = null; // {name, layers: [{name, request, weights, masked}]}

// The bundle's layers, or an Error that says what is wrong with the file.
export function readBundle(text) {
  let b;
  try { b = JSON.parse(text); } catch (e) { throw new Error(`not JSON: ${e.message}`); }
  if (!b || !Array.isArray(b.layers) || !b.layers.length) throw new Error('no "layers": [{"name", "request"}, …] in it');
  return b.layers.map((l, i) => {
    if (!l || typeof l.request !== "object" || !l.request) throw new Error(`layer ${i} has no "request"`);
    return { name: String(l.name ?? `layer ${i}`), request: l.request };
  });
}

// The request as the form reads it: the state_dict's names as the API's
// (out_proj.weight → out_proj_weight); the page asks for its own stages.
export function formBody(request) {
  const b = {};
  for (const [k, v] of Object.entries(request)) if (k !== "return" && k !== "encoding") b[STATE_DICT_KEYS[k] || k] = v;
  return b;
}

// Every head's weights (and masked scores, for the grey of a hidden key) of
// one layer, as the API answers its request: (h, n, m), or (B, h, n, m) of
// which the first sequence is drawn.
async function askLayer(layer) {
  const hides = !!(layer.request.causal || layer.request.mask || layer.request.key_padding || layer.request.window);
  const body = { ...layer.request, encoding: "base64", return: hides ? ["weights", "masked_scores"] : ["weights"] };
  const resp = await fetch(API, { method: "POST", body: JSON.stringify(body),
                                  headers: { "Content-Type": "application/json", Accept: "application/json" } });
  const bytes = new Uint8Array(await resp.arrayBuffer());
  if (!resp.ok) {
    let p;
    try { p = JSON.parse(new TextDecoder().decode(bytes)); } catch { p = {}; }
    throw new Error(`${layer.name}: ${resp.status} ${p.title || ""}${p.detail ? `: ${p.detail}` : ""}`);
  }
  const res = parseReply(bytes);
  return { weights: res.weights, masked: res.masked_scores || null };
}

// Head h's plane of a (h, n, m) or (B, h, n, m) stage (sequence 0).
function plane(t, h) {
  const d = t.shape.length === 4 ? t.shape.slice(1) : t.shape, rows = d[1], cols = d[2];
  return { rows, cols, off: h * rows * cols, data: t.data };
}

// A head's weights, one pixel a cell, on the small multiples' colour scale
// to top (weight-scale.js).
function multiple(layer, li, h, top) {
  const w = plane(layer.weights, h), ms = layer.masked ? plane(layer.masked, h) : null;
  const side = Math.max(MULTIPLE_MIN_PX, Math.min(MULTIPLE_MAX_PX, 4 * w.cols));
  const c = el("canvas", { width: w.cols, height: w.rows, "aria-hidden": "true",
                           style: `width:${side}px;height:${Math.max(8, Math.round((side * w.rows) / w.cols))}px` });
  c.getContext("2d").putImageData(smallMultipleImage(w, ms, top, w.cols, w.rows), 0, 0);
  return el("button", { type: "button", class: "model-head", dataset: { layer: li, head: h },
    "aria-label": `Open layer ${li} (${layer.name}), head ${h}`, onclick: () => openLayer(li, h) }, c, `head ${h}`);
}

// With "One colour scale", every layer and head to the largest weight of
// any; apart, each head to its own largest weight.
function render() {
  const L = bundle.layers;
  const tops = L.map((layer) => range(layer.weights.shape.at(-3)).map((h) => largestWeight(plane(layer.weights, h))));
  const all = Math.max(0, ...tops.flat()), one = oneScale();
  const rows = L.map((layer, li) => el("div", { class: "model-layer", role: "group", "aria-label": `Layer ${li}: ${layer.name}` },
    el("p", { class: "model-name" }, el("b", {}, `layer ${li}`), ` ${layer.name}`,
      el("span", { class: "shape" }, `weights (${layer.weights.shape.join(", ")})`)),
    el("div", { class: "heads" }, tops[li].map((top, h) => multiple(layer, li, h, one ? all : top)))));
  const legend = one ? legendNodes(all, "one scale for every layer and head: its darkest is the largest weight of any")
    : legendNodes(null, "each head on its own scale, its darkest its largest weight: "
      + tops.map((t, li) => `layer ${li} ${t.map((top, h) => `head ${h} ${fmt(top)}`).join(", ")}`).join("; "));
  $("model-view").replaceChildren(
    el("p", { class: "hint" }, `${bundle.name}: ${L.length} layer${L.length === 1 ? "" : "s"} × heads; each square is a head's `
      + "weights, queries down, keys across, from 0 (light yellow) to the largest weight the legend names (dark blue), "
      + "grey where a key is hidden. A click opens that layer's whole pipeline below."),
    el("div", { class: "legend", id: "model-legend" }, ...legend), ...rows);
  $("model-panel").hidden = false;
}

// Opens layer li's request in the form (its pipeline in the cards), head h shown.
export function openLayer(li, h) {
  const layer = bundle.layers[li];
  document.querySelectorAll("#model-view .model-head").forEach((b) =>
    b.setAttribute("aria-pressed", String(Number(b.dataset.layer) === li && Number(b.dataset.head) === h)));
  applyState({ body: formBody(layer.request), head: h });
  $("preset-note").textContent = `Layer ${li} (${layer.name}) of ${bundle.name}.`;
}

// Reads a bundle file, asks for every layer's weights (one request at a time:
// a model's layers would otherwise all hold the server at once) and draws them.
export async function openBundle(file) {
  const status = $("model-status");
  status.textContent = `Reading ${file.name}…`;
  try {
    const layers = readBundle(await file.text());
    const done = [];
    for (const [i, layer] of layers.entries()) {
      status.textContent = `Asking for layer ${i + 1} of ${layers.length}…`;
      done.push({ ...layer, ...(await askLayer(layer)) });
    }
    bundle = { name: file.name, layers: done };
    render();
    status.textContent = `${file.name}: ${done.length} layers.`;
  } catch (e) {
    status.textContent = `${file.name} could not be shown: ${e.message}`;
  }
}

export function init() {
  $("one-scale").addEventListener("change", () => { if (bundle) render(); });
  $("bundle-file").addEventListener("change", (ev) => { const f = ev.target.files[0]; if (f) openBundle(f); });
  // a file dropped anywhere on the page
  document.addEventListener("dragover", (ev) => {
    if ([...ev.dataTransfer.types].includes("Files")) { ev.preventDefault(); ev.dataTransfer.dropEffect = "copy"; }
  });
  document.addEventListener("drop", (ev) => {
    const f = ev.dataTransfer.files[0];
    if (!f) return;
    ev.preventDefault();
    openBundle(f);
  });
}
