/*
 * reply.js - the numbers of one reply: read from its bytes, per head, per
 * sequence, ALiBi's slopes.
 */
import { ui } from "./state.js";
import { ALL_STAGES, range } from "./base.js";
import { shapeOf } from "./parse.js";
import { KV_STAGES, PER_HEAD_STAGES } from "./fields.js";

// R: the request body and every stage as a flat typed array with its shape;
// x and context come from the body (the numbers sent).  B is the batch size
// (0: no batch), Hkv the key/value heads, pq and pk the positions.
export function makeResult(body, res) {
  const T = {};
  for (const s of ALL_STAGES) if (res[s]) T[s] = res[s];
  const tensor = (a) => ({ shape: shapeOf(a).dims, data: Float64Array.from(a.flat(2)) });
  if (body.x) T.x = tensor(body.x);
  if (body.context) T.context = tensor(body.context);
  const sh = res.shapes, n = sh.scores[sh.scores.length - 2], m = sh.scores[sh.scores.length - 1];
  // key/value heads: k's depth, unless the reply holds named heads only (then as sent)
  const B = sh.concat.length === 3 ? sh.concat[0] : 0;
  const Hkv = !body.heads ? sh.k[sh.k.length - 3] : body.k ? shapeOf(body.k).dims.at(-3)
    : body.num_kv_heads ?? (shapeOf(body.w_k || [[0]]).dims.length === 3 ? body.w_k.length : res.num_heads);
  const ql = res.tokens || range(n).map(String);
  // with a cache the m₀ cached keys hold positions 0..m₀−1, the new tokens follow
  const m0 = body.past_k ? shapeOf(body.past_k).dims.at(-2) : 0, mNew = m - m0;
  const cached = range(m0).map((j) => (ui.decode && ui.decode.labels[j]) || String(j));
  const kl = res.context_tokens ? [...cached, ...res.context_tokens].slice(-m)
    : !body.context && !body.q && m - m0 === n ? [...cached, ...ql] : !body.context && m === n ? ql : range(m).map(String);
  const pq = body.positions || range(n).map((i) => m0 + i);
  const pk = [...range(m0), ...(body.context_positions || (body.context || body.q ? range(mNew).map((i) => m0 + i) : pq))];
  const slopes = body.alibi_slopes || (body.alibi ? alibiSlopes(res.num_heads) : null);
  return { body, res, dtype: res.dtype, H: res.num_heads, Hkv, B, n, m, m0, dk: res.head_dim, dv: res.value_dim,
           scale: res.scale, T, ql, kl, pq, pk, slopes, heads: body.heads || null, all: null, allKey: null };
}

// The page asks for every stage in the binary encoding: client.js reads a
// reply's bytes (each stage decoded the first time it is read).
export { parseReply } from "./client.js";

// ALiBi's slopes for h heads, as its reference code: for h a power of two
// 2^(−8k/h), k = 1..h; otherwise the largest power of two p below h, then
// every other slope of 2p.
export function alibiSlopes(h) {
  const pow2 = (k) => range(k).map((i) => (2 ** (-8 / k)) ** (i + 1));
  const p = 2 ** Math.floor(Math.log2(h));
  return p === h ? pow2(h) : [...pow2(p), ...pow2(2 * p).filter((_, i) => i % 2 === 0).slice(0, h - p)];
}

// The key/value head query head h reads (grouped-query attention).
export const kvHead = (R, h) => Math.floor((h * R.Hkv) / R.H);

// Nested arrays of a stage as the page shows it (the sequence on show), or
// with every sequence of a batch (all).
export function nested(R, stage, all = false) {
  const t = R.T[stage], dims = t.shape.length > 3 && !all ? t.shape.slice(1) : t.shape;
  const off0 = t.shape.length > 3 && !all ? ui.selectedSeq * dims.reduce((a, b) => a * b, 1) : 0;
  const walk = (off, ds) => (ds.length === 1 ? Array.from(t.data.subarray(off, off + ds[0]))
    : range(ds[0]).map((i) => walk(off + i * ds.slice(1).reduce((a, b) => a * b, 1), ds.slice(1))));
  return walk(off0, dims);
}

// Head h's slice of an [h, rows, cols] stage (of the sequence on show in a
// batch; k and v of the head's key/value head), or a whole 2-D one.
export function slice(R, stage, h) {
  const t = R.T[stage];
  let dims = t.shape, off = 0;
  if (dims.length > (PER_HEAD_STAGES.includes(stage) ? 3 : 2)) {
    off = ui.selectedSeq * dims.slice(1).reduce((a, b) => a * b, 1);
    dims = dims.slice(1);
  }
  // data is read (and so decoded) only when used
  if (dims.length === 2) return { rows: dims[0], cols: dims[1], get data() { return t.data; }, off };
  // a reply of named heads: plane j is heads[j]'s (its key/value head's, for k and v)
  const g = R.heads ? R.heads.indexOf(h) : KV_STAGES.includes(stage) ? kvHead(R, h) : h;
  return { rows: dims[1], cols: dims[2], get data() { return t.data; }, off: off + g * dims[1] * dims[2] };
}
// Head h's weights or masked scores, from the reply, or from the request for
// every head's when the reply holds the open head only.
export function anyHead(R, stage, h) {
  if (R.heads && R.all) return slice({ ...R, T: R.all, heads: null }, stage, h);
  if (!R.heads || R.heads.includes(h)) return slice(R, stage, h);
  const s = slice(R, stage, R.heads[0]); // that request failed: a blank of the same size
  return { rows: s.rows, cols: s.cols, data: new Float64Array(s.rows * s.cols), off: 0 };
}

