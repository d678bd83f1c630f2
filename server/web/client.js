/*
 * client.js - the service's JavaScript client: one request to the
 * service's attention, its reply's stages as typed arrays with their shapes, its
 * refusals as AttentionError (the problem's code and pointer, a message in
 * the language asked for).  The page itself sends its requests through it
 * (request.js); a course page imports it from another origin:
 *
 *   import { compute } from "SERVICE/web/client.js"; // SERVICE: the service's address
 *   const r = await compute({ x, w_q, w_k, w_v, return: ["weights"] }, { lang: "es" });
 *   r.stages.weights.shape; // [1, 4, 4]
 *   r.stages.weights.data;  // Float64Array(16)
 *
 * The transport is the binary /v2 form (the Open Inference Protocol's
 * binary tensor data, both ways: every float tensor travels as its IEEE
 * bytes after a small JSON header, each stage of the reply is a typed array
 * over its bytes); a request /v2 does not take goes to /v1 with
 * "encoding": "base64" both ways (only the small JSON around the base64
 * strings goes through JSON.parse; each stage's numbers are decoded the
 * first time they are read).  Either way, the same result.  By default it
 * talks to the service it was loaded from (import.meta.url); a page that
 * loaded it some other way names the service with `base`.
 *
 * Ground: it imports nothing; a refusal's message reads one catalog
 * (words-LANG.js beside it) when it happens.  Types: JSDoc, which
 * TypeScript reads (`// @ts-check`, or `checkJs`).
 */
// @ts-check

/**
 * A tensor: numbers in row-major order and the shape they fill.
 * @typedef {{ shape: number[], data: Float64Array | Float32Array }} Tensor
 */
/**
 * A request: POST /v1/attention's body (docs/api.md); any numeric field may
 * be nested arrays or a Tensor (sent in the binary form).
 * @typedef {Record<string, unknown>} AttentionRequest
 */
/**
 * A reply: the service's description of the computation and every stage
 * returned, each a Tensor (`shapes`: their shapes); `bytes` the reply's
 * length and `transport` the form it travelled in.
 * @typedef {{ dtype: "float64" | "float32" | "float16" | "bfloat16", num_heads: number, head_dim: number, value_dim: number,
 *   scale: number, causal: boolean, shapes: Record<string, number[]>, tokens?: unknown,
 *   stages: Record<string, Tensor>, bytes: number, transport: "v1" | "v2" }} AttentionResult
 */
/**
 * Options of compute().
 * @typedef {{ signal?: AbortSignal, lang?: string, base?: string | URL, token?: string, transport?: "v1" | "v2" }} ComputeOptions
 */

/** The version of this module's interface; a change that breaks a caller changes it. */
export const CLIENT_VERSION = "1";
/** The endpoint, relative to the service's root. */
export const ENDPOINT = "v1/attention";
/** The languages a refusal's message is written in (the page's). */
export const MESSAGE_LANGS = ["en", "es", "it", "tr"];

/** The service this module was loaded from ("" when its address has no path: a saved page's data: URL). */
export const SERVICE = (() => {
  try {
    const u = new URL("../", import.meta.url);
    return u.protocol === "http:" || u.protocol === "https:" ? u.href : "";
  } catch { return ""; }
})();

/** A refusal of the service (or no answer at all: status 0). */
export class AttentionError extends Error {
  /**
   * @param {{ status: number, code: string, pointer?: string, detail?: string, retryAfter?: number | null,
   *   problem?: Record<string, unknown> | null, message: string }} p
   */
  constructor(p) {
    super(p.message);
    this.name = "AttentionError";
    /** the HTTP status, 0 when the service did not answer */
    this.status = p.status;
    /** the problem's code (docs/api.md's table), "unreachable" or "aborted" */
    this.code = p.code;
    /** RFC 6901 pointer to the field at fault, "" for the whole request */
    this.pointer = p.pointer || "";
    /** the service's own words (English) */
    this.detail = p.detail || "";
    /** seconds to wait before a retry (503), else null */
    this.retryAfter = p.retryAfter ?? null;
    /** the problem document as the service sent it */
    this.problem = p.problem || null;
  }
}

/* ---- the request's body ----------------------------------------------- */

/** @param {any} v @returns {v is Tensor} */
const isTensor = (v) => v !== null && typeof v === "object" && Array.isArray(v.shape) && ArrayBuffer.isView(v.data);

/** @param {Uint8Array} bytes */
export function encodeBase64(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

/**
 * The JSON text of a request: every Tensor in the binary form (in the
 * request's dtype), and the reply asked in base64.
 * @param {AttentionRequest} request
 */
export function requestText(request) {
  const Arr = request.dtype === "float32" ? Float32Array : Float64Array;
  const half = HALF_TYPES.includes(String(request.dtype)), body = {};
  for (const [k, v] of Object.entries(request)) {
    if (!isTensor(v)) { body[k] = v; continue; }
    // a half type's numbers as JSON numbers: the service rounds them to the type, as it documents
    if (half) { body[k] = nestedArrays(v); continue; }
    const a = v.data instanceof Arr ? v.data : Arr.from(v.data);
    body[k] = { shape: v.shape, base64: encodeBase64(new Uint8Array(a.buffer, a.byteOffset, a.byteLength)) };
  }
  return JSON.stringify({ ...body, encoding: "base64" });
}

/** The 2-byte types: numbers sent and returned in them, computed in float32. */
export const HALF_TYPES = ["float16", "bfloat16"];
const nestedArrays = (v) => {
  const walk = (off, dims) => (dims.length <= 1 ? Array.from(v.data.subarray(off, off + (dims[0] ?? 1)))
    : Array.from({ length: dims[0] }, (_, i) => walk(off + i * dims.slice(1).reduce((a, b) => a * b, 1), dims.slice(1))));
  return walk(0, v.shape);
};

/* ---- the reply's bytes ------------------------------------------------ */

// IEEE 754 binary16 (float16) or bfloat16 numbers, little-endian, as float32.
export function fromHalf(raw, dtype) {
  const h = new Uint16Array(raw.buffer, raw.byteOffset, raw.byteLength / 2), out = new Float32Array(h.length);
  if (dtype === "bfloat16") { new Uint32Array(out.buffer).set(Array.from(h, (b) => b << 16)); return out; }
  for (let k = 0; k < h.length; k++) {
    const b = h[k], sign = b & 0x8000 ? -1 : 1, e = (b >> 10) & 31, f = b & 1023;
    out[k] = sign * (e === 0 ? f * 2 ** -24 : e === 31 ? (f ? NaN : Infinity) : (1 + f / 1024) * 2 ** (e - 15));
  }
  return out;
}

export const B64_INDEX = (() => {
  const t = new Uint8Array(256);
  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".split("").forEach((c, i) => { t[c.charCodeAt(0)] = i; });
  return t;
})();
/** The bytes of the base64 text src[start, end). */
export function decodeBase64(src, start, end) {
  let pad = 0;
  if (end > start && src[end - 1] === 61) pad++;
  if (end - 1 > start && src[end - 2] === 61) pad++;
  const out = new Uint8Array(((end - start) / 4) * 3 - pad), T = B64_INDEX;
  const full = end - start - (pad ? 4 : 0);
  let o = 0, i = start;
  for (; i < start + full; i += 4) {
    const v = (T[src[i]] << 18) | (T[src[i + 1]] << 12) | (T[src[i + 2]] << 6) | T[src[i + 3]];
    out[o] = v >> 16; out[o + 1] = (v >> 8) & 255; out[o + 2] = v & 255; o += 3;
  }
  if (pad) {
    const v = (T[src[i]] << 18) | (T[src[i + 1]] << 12) | (T[src[i + 2]] << 6);
    out[o++] = v >> 16;
    if (pad === 1) out[o] = (v >> 8) & 255;
  }
  return out;
}

// A stage whose numbers are decoded the first time they are read.
// Arr: the typed array of the reply's numbers, or a half type's name (read as float32).
export function lazyStage(shape, bytes, start, end, Arr) {
  let data = null;
  return { shape, get data() {
    if (!data) {
      const raw = decodeBase64(bytes, start, end);
      data = typeof Arr === "string" ? fromHalf(raw, Arr) : new Arr(raw.buffer, 0, raw.byteLength / Arr.BYTES_PER_ELEMENT);
    }
    return data;
  } };
}

export const BASE64_KEY = new TextEncoder().encode('"base64":"');
/**
 * A reply's bytes read: its JSON, each {shape, base64} member a lazy Tensor
 * in place.
 * @param {Uint8Array} bytes
 */
export function parseReply(bytes) {
  const text = [], blobs = [], dec = new TextDecoder();
  let pos = 0;
  for (let i = bytes.indexOf(BASE64_KEY[0]); i >= 0; i = bytes.indexOf(BASE64_KEY[0], i + 1)) {
    let k = 1;
    while (k < BASE64_KEY.length && bytes[i + k] === BASE64_KEY[k]) k++;
    if (k < BASE64_KEY.length) continue;
    const start = i + k, end = bytes.indexOf(34, start); // the closing quote
    text.push(dec.decode(bytes.subarray(pos, start)), `#${blobs.length}`);
    blobs.push([start, end]);
    pos = i = end;
  }
  text.push(dec.decode(bytes.subarray(pos)));
  const res = JSON.parse(text.join(""));
  // little-endian, as every browser's host; a half type's 2 bytes read as float32
  const Arr = HALF_TYPES.includes(res.dtype) ? res.dtype : res.dtype === "float32" ? Float32Array : Float64Array;
  for (const s of Object.keys(res.shapes || {})) {
    if (!res[s] || typeof res[s].base64 !== "string") continue;
    const [start, end] = blobs[Number(res[s].base64.slice(1))];
    res[s] = lazyStage(res[s].shape, bytes, start, end, Arr);
  }
  return res;
}

/* ---- the binary /v2 form (the Open Inference Protocol's binary tensor data) */

/** The /v2 inference endpoint, relative to the service's root. */
export const V2_ENDPOINT = "v2/models/attention/infer";
const V2_TYPES = { float64: "FP64", float32: "FP32", float16: "FP16", bfloat16: "BF16" };
const WHOLE = ["positions", "context_positions", "heads"]; // /v2 takes them as INT64
const V1_ONLY = ["state_dict", "module", "context_tokens", "encoding"]; // fields /v2 does not take

// Nested arrays of one kind (numbers, or booleans), every level as long as
// its dimension: {shape, flat, bool}; else null (/v1 says what is wrong).
function flatArrays(v) {
  const shape = [];
  for (let a = v; Array.isArray(a); a = a[0]) shape.push(a.length);
  if (shape.includes(0)) return null;
  const flat = [];
  let ok = true;
  const walk = (a, d) => {
    if (d === shape.length) { flat.push(a); return; }
    if (!Array.isArray(a) || a.length !== shape[d]) { ok = false; return; }
    for (const b of a) if (ok) walk(b, d + 1);
  };
  walk(v, 0);
  const bool = ok && flat.every((x) => typeof x === "boolean");
  return ok && (bool || flat.every((x) => typeof x === "number")) ? { shape, flat, bool } : null;
}

/**
 * A request in the binary /v2 form: the JSON header and the bytes after it
 * (every float tensor as little-endian numbers of the request's dtype, a
 * half type's as JSON numbers), the reply's stages asked as binary data; or
 * null for a request /v2 does not take (state_dict, module,
 * context_tokens, a batch's or a wrong tokens list, ragged arrays, a
 * null): /v1
 * computes it, or says what is wrong with it.
 * @param {AttentionRequest} request
 * @returns {{ header: string, parts: Uint8Array[] } | null}
 */
export function v2Body(request) {
  const dtype = String(request.dtype || "float64"), type = V2_TYPES[dtype];
  if (!type || V1_ONLY.some((k) => request[k] !== undefined)) return null;
  const Arr = dtype === "float32" ? Float32Array : Float64Array, half = HALF_TYPES.includes(dtype);
  const inputs = [], parameters = {}, parts = [];
  let rows = null;
  for (const [name, v] of Object.entries(request)) {
    if (v === undefined || name === "dtype" || name === "return" || name === "tokens") continue; // undefined: absent, as in JSON
    if (v === null) return null;
    /** @type {{ shape: number[], data: ArrayLike<number | boolean>, bool: boolean } | null} */
    let t = null;
    if (isTensor(v)) t = { shape: v.shape, data: v.data, bool: false };
    else if (Array.isArray(v)) {
      const f = flatArrays(v);
      if (!f) return null;
      t = { shape: f.shape, data: f.flat, bool: f.bool };
    }
    if (!t) { parameters[name] = v; continue; }
    if (name === "x") rows = t.shape.length === 2 ? t.shape[0] : -1;
    const input = { name, shape: t.shape };
    if (t.bool) Object.assign(input, { datatype: "BOOL", data: Array.from(t.data) });
    else if (WHOLE.includes(name)) Object.assign(input, { datatype: "INT64", data: Array.from(t.data) });
    else if (half) Object.assign(input, { datatype: type, data: Array.from(t.data) });
    else {
      const a = t.data instanceof Arr ? t.data : Arr.from(/** @type {ArrayLike<number>} */ (t.data)), bytes = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
      Object.assign(input, { datatype: type, parameters: { binary_data_size: bytes.length } });
      parts.push(bytes);
    }
    inputs.push(input);
  }
  // the labels stay here (/v2 takes none): a list that does not label x's rows goes to /v1, which refuses it
  if (request.tokens !== undefined && !(Array.isArray(request.tokens) && request.tokens.length === rows
                                && request.tokens.every((s) => typeof s === "string"))) return null;
  const body = { inputs, parameters };
  if (Array.isArray(request.return)) body.outputs = request.return.map((name) => ({ name, parameters: { binary_data: true } }));
  else body.parameters = { ...parameters, binary_data_output: true };
  return { header: JSON.stringify(body), parts };
}

// A /v2 reply's bytes (its JSON header `length` bytes long, each output's
// binary data after it, in order) as a reply of /v1: the service's
// parameters, and each stage a Tensor.
export function parseV2Reply(bytes, length, request) {
  const head = JSON.parse(new TextDecoder().decode(bytes.subarray(0, length)));
  const dtype = String(request.dtype || "float64"), res = { dtype, ...head.parameters, shapes: {} };
  if (Array.isArray(request.tokens)) res.tokens = request.tokens;
  const Arr = HALF_TYPES.includes(dtype) ? dtype : dtype === "float32" ? Float32Array : Float64Array;
  let at = length;
  for (const o of head.outputs || []) {
    const size = o.parameters && o.parameters.binary_data_size;
    // a copy: the data of an output need not start at a multiple of its type's size
    const raw = bytes.slice(at, at + size);
    at += size;
    res.shapes[o.name] = o.shape;
    res[o.name] = { shape: o.shape, data: typeof Arr === "string" ? fromHalf(raw, Arr) : new Arr(raw.buffer, 0, size / Arr.BYTES_PER_ELEMENT) };
  }
  return res;
}

// A /v2 pointer as the same request's /v1 pointer: /parameters/num_heads is
// /num_heads, /inputs/2/… the field of input 2.
function v1Pointer(pointer, header) {
  const m = /^\/(parameters|inputs)\/([^/]+)/.exec(pointer || "");
  if (!m) return pointer || "";
  if (m[1] === "parameters") return `/${m[2]}`;
  const input = JSON.parse(header).inputs[Number(m[2])];
  return input ? `/${input.name}` : "";
}

/* ---- refusals, in the language asked for ------------------------------ */

const catalogs = {};
// The message `id` of words-LANG.js with its {placeholders} filled; the
// service's own detail when the catalog cannot be read (a saved page).
async function message(langCode, id, params, fallback) {
  const code = MESSAGE_LANGS.includes(langCode) ? langCode : "en";
  try {
    catalogs[code] = catalogs[code] || (await import(new URL(`./words-${code}.js`, import.meta.url).href)).default;
  } catch { return fallback; }
  const text = catalogs[code][id];
  return text === undefined ? fallback : text.replace(/\{(\w+)\}/g, (_, k) => String(params[k] ?? ""));
}

// Each status the service refuses with, the words that say what to do.
const STATUS_WORDS = {
  400: "embed.client.refused", 401: "embed.client.unauthorized", 404: "embed.client.refused",
  413: "embed.client.too_big", 415: "embed.client.refused", 422: "embed.client.cannot_compute",
  429: "embed.client.busy", 503: "embed.client.busy",
};

/** @returns {Promise<AttentionError>} */
// header: the /v2 request's JSON, whose pointers are said as /v1's.
async function refusal(resp, bytes, langCode, header = null) {
  let problem = null;
  try { problem = JSON.parse(new TextDecoder().decode(bytes)); } catch { /* not a problem document */ }
  const code = (problem && problem.code) || `http_${resp.status}`;
  const pointer = header ? v1Pointer(problem && problem.pointer, header) : (problem && problem.pointer) || "";
  const retry = Number(resp.headers.get("Retry-After")) || null;
  // /v1's problem document says it in `detail`, /v2's in `error`
  const detail = (problem && (problem.detail || problem.error)) || "";
  const id = STATUS_WORDS[resp.status] ? STATUS_WORDS[resp.status] + (pointer ? "" : ".whole") : "embed.client.status";
  const words = await message(langCode, id, { code, pointer, status: resp.status, seconds: retry ?? "" }, detail || code);
  return new AttentionError({ status: resp.status, code, pointer, detail, retryAfter: retry, problem, message: words });
}

const docLang = () => (typeof document !== "undefined" && document.documentElement.lang || "en").toLowerCase().split("-")[0];

/* ---- one request ------------------------------------------------------ */

/**
 * Sends the request text as it is and answers the response with its bytes
 * (the page's transport: it keeps the bytes, and words a refusal itself).
 * @param {string} text @param {{ signal?: AbortSignal, base?: string | URL, token?: string }} [opts]
 * @returns {Promise<{ resp: Response, bytes: Uint8Array }>}
 */
export async function send(text, { signal, base = SERVICE, token } = {}) {
  const url = base === "" ? ENDPOINT : new URL(ENDPOINT, base).href;
  const headers = { "Content-Type": "application/json", Accept: "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  const resp = await fetch(url, { method: "POST", body: text, signal, headers });
  return { resp, bytes: new Uint8Array(await resp.arrayBuffer()) };
}

/**
 * Sends a request in the binary /v2 form (v2Body) and answers the response
 * with its bytes and the length of its JSON header.
 * @param {{ header: string, parts: Uint8Array[] }} body
 * @param {{ signal?: AbortSignal, base?: string | URL, token?: string }} [opts]
 * @returns {Promise<{ resp: Response, bytes: Uint8Array, length: number }>}
 */
export async function sendV2(body, { signal, base = SERVICE, token } = {}) {
  const url = base === "" ? V2_ENDPOINT : new URL(V2_ENDPOINT, base).href, header = new TextEncoder().encode(body.header);
  const headers = { "Content-Type": "application/octet-stream", "Inference-Header-Content-Length": String(header.length) };
  if (token) headers.Authorization = `Bearer ${token}`;
  // one buffer: Chromium sends a Blob's parts through a slower path
  const sent = new Uint8Array(body.parts.reduce((n, p) => n + p.length, header.length));
  let at = 0;
  for (const p of [header, ...body.parts]) { sent.set(p, at); at += p.length; }
  const resp = await fetch(url, { method: "POST", body: sent, signal, headers });
  const bytes = new Uint8Array(await resp.arrayBuffer());
  return { resp, bytes, length: Number(resp.headers.get("Inference-Header-Content-Length")) || bytes.length };
}

/**
 * The transport compute() uses: "v2", the binary /v2 form (a request /v2
 * does not take goes to /v1), or "v1", /v1 with every tensor in base64
 * (docs/embed.md measures both).
 */
export const TRANSPORT = "v2";

/**
 * Computes a request: every stage it returns as a Tensor.  Rejects with an
 * AttentionError (a refusal, or no answer), or the signal's AbortError.
 * @param {AttentionRequest} request
 * @param {ComputeOptions} [opts]
 * @returns {Promise<AttentionResult>}
 */
export async function compute(request, { signal, lang, base = SERVICE, token, transport = TRANSPORT } = {}) {
  const langCode = lang || docLang(), v2 = transport === "v2" ? v2Body(request) : null;
  /** @type {{ resp: Response, bytes: Uint8Array, length?: number }} */
  let got;
  try { got = v2 ? await sendV2(v2, { signal, base, token }) : await send(requestText(request), { signal, base, token }); }
  catch (e) {
    if (e && e.name === "AbortError") throw e;
    const why = String(e && e.message);
    throw new AttentionError({ status: 0, code: "unreachable", detail: why,
      message: await message(langCode, "embed.client.unreachable", { why }, why) });
  }
  if (!got.resp.ok) throw await refusal(got.resp, got.bytes, langCode, v2 && v2.header);
  const res = v2 ? parseV2Reply(got.bytes, got.length, request) : parseReply(got.bytes), stages = {}, shapes = {};
  for (const s of Object.keys(res.shapes || {})) {
    if (res[s] && res[s].shape) { stages[s] = res[s]; shapes[s] = res[s].shape; delete res[s]; }
  }
  delete res.encoding;
  return { ...res, shapes, stages, bytes: got.bytes.length, transport: v2 ? "v2" : "v1" };
}
