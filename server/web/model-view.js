/*
 * model-view.js - a model bundle (the Python client's save_bundle: one JSON
 * file, docs/visualizer.md "Model bundles") as layers × heads of weights:
 * each layer's request is posted to the API as it is, each head's weights
 * drawn as a small multiple; a click opens that layer's whole pipeline in
 * the form and the cards.
 */
import { $, API, el, range } from "./base.js";
import { STATE_DICT_KEYS } from "./form.js";
import { parseReply } from "./reply.js";
import { applyState } from "./share.js";
import { smallMultipleImage } from "./compare.js";
import { WEIGHT_MAX, largestWeight, legendNodes, listOf, oneScale } from "./weight-scale.js";
import { t } from "./words.js";

// A small multiple's side in CSS pixels: at most this wide, however many keys.
const MULTIPLE_MAX_PX = 96, MULTIPLE_MIN_PX = 40;

export let bundle = null; // {name, layers: [{name, request, weights, masked}]}

// The bundle's layers, or an Error that says what is wrong with the file.
export function readBundle(text) {
  let b;
  try { b = JSON.parse(text); } catch (e) { throw new Error(t("mv.error.json", { detail: e.message })); }
  if (!b || !Array.isArray(b.layers) || !b.layers.length) throw new Error(t("mv.error.layers"));
  return b.layers.map((l, i) => {
    if (!l || typeof l.request !== "object" || !l.request) throw new Error(t("mv.error.request", { layer: i }));
    return { name: String(l.name ?? t("mv.layer", { layer: i })), request: l.request };
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
    throw new Error(t("mv.error.api", { layer: layer.name, status: String(resp.status), detail: [p.title, p.detail].filter(Boolean).join(": ") }));
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
    "aria-label": t("mv.open", { layer: li, name: layer.name, head: h }), onclick: () => openLayer(li, h) }, c, t("mv.export.head", { head: h }));
}

// With "One colour scale", every layer and head from 0 to 1; apart, each
// head to its own largest weight.
function render() {
  const L = bundle.layers;
  const tops = L.map((layer) => range(layer.weights.shape.at(-3)).map((h) => largestWeight(plane(layer.weights, h))));
  const one = oneScale();
  const rows = L.map((layer, li) => el("div", { class: "model-layer", role: "group", "aria-label": t("mv.layer_group", { layer: li, name: layer.name }) },
    el("p", { class: "model-name" }, el("b", {}, t("mv.layer", { layer: li })), " ", layer.name,
      el("span", { class: "shape" }, `(${layer.weights.shape.join(", ")})`)),
    el("div", { class: "heads" }, tops[li].map((top, h) => multiple(layer, li, h, one ? WEIGHT_MAX : top)))));
  const legend = one ? legendNodes(WEIGHT_MAX, t("mv.scale.fixed"))
    : legendNodes(null, t("views.scale.weights.own_each", { list: tops.map((tp, li) => t("mv.scale.layer_tops",
      { layer: li, list: listOf(tp.map((top, h) => t("views.scale.head_top", { head: h, top }))) })).join("; ") }));
  $("model-view").replaceChildren(
    el("p", { class: "hint" }, t("mv.hint", { name: bundle.name, layers: L.length })),
    el("div", { class: "legend", id: "model-legend" }, ...legend), ...rows);
  $("model-panel").hidden = false;
}

// Opens layer li's request in the form (its pipeline in the cards), head h shown.
export function openLayer(li, h) {
  const layer = bundle.layers[li];
  document.querySelectorAll("#model-view .model-head").forEach((b) =>
    b.setAttribute("aria-pressed", String(Number(b.dataset.layer) === li && Number(b.dataset.head) === h)));
  applyState({ body: formBody(layer.request), head: h });
  $("preset-note").textContent = t("mv.note", { layer: li, name: layer.name, bundle: bundle.name });
}

// Reads a bundle file, asks for every layer's weights (one request at a time:
// a model's layers would otherwise all hold the server at once) and draws them.
export async function openBundle(file) {
  const status = $("model-status");
  status.textContent = t("mv.status.reading", { file: file.name });
  try {
    const layers = readBundle(await file.text());
    const done = [];
    for (const [i, layer] of layers.entries()) {
      status.textContent = t("mv.status.asking", { layer: i + 1, layers: layers.length });
      done.push({ ...layer, ...(await askLayer(layer)) });
    }
    bundle = { name: file.name, layers: done };
    render();
    status.textContent = t("mv.status.done", { file: file.name, layers: done.length });
  } catch (e) {
    status.textContent = t("mv.status.failed", { file: file.name, detail: e.message });
  }
}

export function init() {
  $("one-scale").addEventListener("change", () => { if (bundle) render(); });
  $("bundle-choose").addEventListener("click", () => $("bundle-file").click());
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
