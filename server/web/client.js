/*
 * client.js - the service's JavaScript client: one request to POST
 * /v1/attention, its reply's stages as typed arrays with their shapes, its
 * refusals as AttentionError (the problem's code and pointer, a message in
 * the language asked for).  The page itself sends its requests through it
 * (request.js); a course page imports it from another origin:
 *
 *   import { compute } from "SERVICE/web/client.js"; // SERVICE: the service's address
 *   const r = await compute({ x, w_q, w_k, w_v, return: ["weights"] }, { lang: "es" });
 *   r.stages.weights.shape; // [1, 4, 4]
 *   r.stages.weights.data;  // Float64Array(16)
 *
 * The transport is /v1 with "encoding": "base64" both ways: a typed array
 * travels as its IEEE bytes, and a reply is decoded from its bytes (only the
 * small JSON around the base64 strings goes through JSON.parse; each
 * stage's numbers are decoded the first time they are read).  By default it
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
 * returned, each a Tensor.
 * @typedef {{ dtype: "float64" | "float32" | "float16" | "bfloat16", num_heads: number, head_dim: number, value_dim: number,
 *   scale: number, causal: boolean, shapes: Record<string, number[]>, tokens?: unknown,
 *   stages: Record<string, Tensor>, bytes: number }} AttentionResult
 */
/**
 * Options of compute().
 * @typedef {{ signal?: AbortSignal, lang?: string, base?: string | URL, token?: string }} ComputeOptions
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
async function refusal(resp, bytes, langCode) {
  let problem = null;
  try { problem = JSON.parse(new TextDecoder().decode(bytes)); } catch { /* not a problem document */ }
  const code = (problem && problem.code) || `http_${resp.status}`;
  const pointer = (problem && problem.pointer) || "";
  const retry = Number(resp.headers.get("Retry-After")) || null;
  const detail = (problem && problem.detail) || "";
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
 * Computes a request: every stage it returns as a Tensor.  Rejects with an
 * AttentionError (a refusal, or no answer), or the signal's AbortError.
 * @param {AttentionRequest} request
 * @param {ComputeOptions} [opts]
 * @returns {Promise<AttentionResult>}
 */
export async function compute(request, { signal, lang, base = SERVICE, token } = {}) {
  const langCode = lang || docLang();
  let got;
  try { got = await send(requestText(request), { signal, base, token }); }
  catch (e) {
    if (e && e.name === "AbortError") throw e;
    const why = String(e && e.message);
    throw new AttentionError({ status: 0, code: "unreachable", detail: why,
      message: await message(langCode, "embed.client.unreachable", { why }, why) });
  }
  if (!got.resp.ok) throw await refusal(got.resp, got.bytes, langCode);
  const res = parseReply(got.bytes), stages = {};
  for (const s of Object.keys(res.shapes || {})) if (res[s] && res[s].shape) { stages[s] = res[s]; delete res[s]; }
  return { ...res, stages, bytes: got.bytes.length };
}
