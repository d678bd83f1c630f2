/*
 * base.js - the stages a request asks for, the page's DOM helpers ($, el,
 * range) and the errors it finds before asking the API.
 */
import { CACHE_STAGES, CORE_STAGES, STAGE_NEEDS } from "./fields.js";
import { decoding } from "./state.js";
import { t } from "./words.js";

export const API = "v1/attention"; // relative: works behind a path prefix
// Every stage the API computes, in its order; a request asks for those its
// options make (the core's STAGE_NEEDS: x_pe with the sinusoidal encoding of
// an x, q_rope and k_rope with RoPE), and for the cache's only with a cache
// (without one they would repeat K and V).
export const ALL_STAGES = CORE_STAGES;
export function stagesFor(body) {
  const gives = { sinusoidal: body.positional_encoding === "sinusoidal", x: !!body.x, rope: !!body.rope };
  return ALL_STAGES.filter((s) => (STAGE_NEEDS[s] || []).every((c) => gives[c])
    && (!CACHE_STAGES.includes(s) || !!body.past_k || decoding()));
}
export const AUTO_DELAY_MS = 300; // typing pause before an automatic request
// Past this many numbers in each [h, n, m] stage (8 heads of 181 × 181), the
// page asks for the open head's stages only (the API's `heads`: 1/h of the
// bytes) and, in a second request, for every head's weights (and masked
// scores, when a key can be hidden) for the small multiples: at 256 tokens and
// 8 heads, 8.8 MB instead of 23.4 (14 MB with masked scores).
export const ONE_HEAD_CELLS = 1 << 18;
export const GRID_MAX_CELLS = 1024; // a bigger matrix is edited as text: 1 input per cell gets slow

export const $ = (id) => document.getElementById(id);
export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(node.dataset, v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}
export const range = (k) => Array.from({ length: k }, (_, j) => j);

/* ---- errors the page finds before asking the API ---------------------- */

// words: the message, msg(id, params) (words.js), shown in the language of
// the moment; message: its text now.
export class ClientError extends Error {
  constructor(pointer, words) { super(t(words)); this.pointer = pointer; this.words = words; }
}

