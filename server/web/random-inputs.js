/*
 * random-inputs.js - the preset "Random inputs": X (n × d) and W_q, W_k,
 * W_v (d × d) for h heads, the same numbers for the same seed on any machine.
 *
 * The generator is Park and Miller's "minimal standard" (CACM 31(10), 1988):
 * s ← 16807·s mod (2³¹ − 1), seed 1 … 2³¹ − 2; each draw u = s / (2³¹ − 1)
 * becomes 2u − 1, uniform in (−1, 1).  The numbers are drawn row by row: X,
 * then W_q, W_k, W_v.  X is the draw; each W is the draw times 4/√d, so a
 * row of Q has a variance of about 16/9 whatever d (E[x²] = 1/3, E[w²] =
 * 16/(3d)) and the scaled scores spread enough for the weights to differ.
 * Every number is rounded to 3 decimals, so what the editors show is exact.
 */
import { range } from "./base.js";
import { msg } from "./words.js";

export const RANDOM_MAX_TOKENS = 256; // the largest the page draws promptly (docs/visualizer.md)
export const RANDOM_MAX_WIDTH = 256; // d: 256 columns of X, 256 × 256 weights
export const PM_MODULUS = 2147483647; // 2³¹ − 1, a prime
export const PM_MULTIPLIER = 16807; // 7⁵, a primitive root of the modulus
export const RANDOM_DEFAULT = { n: 64, d: 32, heads: 4, seed: 1 };

// The draws of a seed, each uniform in (−1, 1).
export function parkMiller(seed) {
  let s = seed;
  return () => { s = (s * PM_MULTIPLIER) % PM_MODULUS; return (2 * s) / PM_MODULUS - 1; };
}

// What is wrong with n, d, heads, seed (a msg(), words.js), or null when they make random inputs.
export function randomProblem({ n, d, heads, seed }) {
  const whole = (v, lo, hi) => Number.isInteger(v) && v >= lo && v <= hi;
  if (!whole(n, 1, RANDOM_MAX_TOKENS)) return msg("random.n", { max: String(RANDOM_MAX_TOKENS) });
  if (!whole(d, 1, RANDOM_MAX_WIDTH)) return msg("random.d", { max: String(RANDOM_MAX_WIDTH) });
  if (!whole(heads, 1, d) || d % heads) return msg("random.heads", { d: String(d) });
  if (!whole(seed, 1, PM_MODULUS - 2)) return msg("random.seed", { max: String(PM_MODULUS - 2) });
  return null;
}

// The request's inputs: {x, w_q, w_k, w_v, num_heads, tokens}.
export function randomBody({ n, d, heads, seed }) {
  const draw = parkMiller(seed), round = (v) => Math.round(v * 1000) / 1000 || 0; // no −0
  const matrix = (rows, scale) => range(rows).map(() => range(d).map(() => round(draw() * scale)));
  const x = matrix(n, 1), w = 4 / Math.sqrt(d);
  return { x, w_q: matrix(d, w), w_k: matrix(d, w), w_v: matrix(d, w), num_heads: heads, tokens: range(n).map((i) => `t${i}`) };
}

// A source's words: "random 64 × 32, 4 heads, seed 1" (a msg(), words.js).
export const randomTitle = (r) => msg("random.title", { size: `${r.n} × ${r.d}`, count: r.heads, seed: String(r.seed) });

// The query of a link that opens these inputs (?random=64x32&heads=4&seed=1), and back.
export const randomQuery = (r) => `random=${r.n}x${r.d}&heads=${r.heads}&seed=${r.seed}`;
export function randomFromQuery(params) {
  const m = /^(\d+)x(\d+)$/.exec(params.get("random") || "");
  if (!m) return null;
  const r = { n: Number(m[1]), d: Number(m[2]), heads: Number(params.get("heads") || 1), seed: Number(params.get("seed") || 1) };
  return randomProblem(r) ? null : r;
}
