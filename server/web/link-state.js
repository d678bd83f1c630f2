/*
 * link-state.js - the state a share link carries in its fragment (#s=,
 * short-link.js writes it): packed and unpacked, and the body it stands for
 * (its source's, with the link's difference).  The page (short-link.js,
 * share.js) and GET /embed's frame (embed-frame.js) read links with it.
 *
 *   #s=  base64url(deflate-raw(JSON {b, h, q, c, p, o, e})): b the body's
 *        difference from its source's (short-link.js says each field)
 */
import { PRESETS } from "./presets.js";
import { randomBody } from "./random-inputs.js";

// A state in a link's fragment (never sent to the server): deflated JSON in
// base64url.
export async function packState(state) {
  const stream = new Blob([JSON.stringify(state)]).stream().pipeThrough(new CompressionStream("deflate-raw"));
  const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
export async function unpackState(text) {
  const bin = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  return JSON.parse(await new Response(stream).text());
}

// The body a source makes: a lesson's numbers, or the seed's.
export function sourceBody(source) {
  if (!source) return {};
  if (source.lesson) {
    const p = PRESETS[source.lesson];
    return { x: p.x, w_q: p.w_q, w_k: p.w_k, w_v: p.w_v, num_heads: p.num_heads, tokens: p.tokens };
  }
  return randomBody(source.random);
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const isPatch = (v) => v !== null && typeof v === "object" && !Array.isArray(v) && Array.isArray(v["~"]);

// What turns `from` into `to` (undefined: nothing).
export function difference(from, to) {
  if (same(from, to)) return undefined;
  if (!Array.isArray(from) || !Array.isArray(to) || from.length !== to.length) return to;
  const parts = [];
  to.forEach((v, k) => { const d = difference(from[k], v); if (d !== undefined) parts.push([k, d]); });
  const patch = { "~": parts };
  return JSON.stringify(patch).length < JSON.stringify(to).length ? patch : to;
}
export function patched(from, d) {
  if (!isPatch(d)) return d;
  const out = from.slice();
  for (const [k, dk] of d["~"]) out[k] = patched(from[k], dk);
  return out;
}
export function bodyDifference(base, body) {
  const b = {};
  for (const k of new Set([...Object.keys(base), ...Object.keys(body)])) {
    if (!(k in body)) b[k] = null;
    else { const d = difference(base[k], body[k]); if (d !== undefined) b[k] = d; }
  }
  return b;
}
export function bodyPatched(base, b) {
  const body = { ...base };
  for (const [k, d] of Object.entries(b)) { if (d === null) delete body[k]; else body[k] = patched(base[k], d); }
  return body;
}

