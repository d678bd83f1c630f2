// ort_peer.mjs - times one ONNX graph of tests/bench/ort_graphs.py in ONNX
// Runtime's CPU provider (npm's onnxruntime-node, tests/bench/ort/):
//   node ort_peer.mjs MODEL.onnx N D THREADS CALLS
// x is bench_core's input (bench_value with seed 1, amplitude 1), so the
// checksums compare with bench_core's `attn float32 N D H ...` answer.
// Prints one JSON line: {"seconds": total of CALLS runs after one warm-up,
// "calls", "sum", "abs_sum"} (the sums of the output, in double).
import { createRequire } from "node:module";

const require = createRequire(new URL("./ort/", import.meta.url));
const ort = require("onnxruntime-node");

const [model, n, d, threads, calls] = process.argv.slice(2);
const count = Number(n) * Number(d);
const x = new Float32Array(count);
for (let i = 0; i < count; i++) {
  // bench_core.c's bench_value(i, 1, 1.0), exact in doubles below 2^53
  const u = Number((BigInt(i) * 2654435761n + 40503n) & 0xffffffffn);
  x[i] = (u / 4294967296.0) * 2 - 1;
}
const session = await ort.InferenceSession.create(model, {
  intraOpNumThreads: Number(threads),
  interOpNumThreads: 1,
  executionMode: "sequential",
});
const feeds = { x: new ort.Tensor("float32", x, [1, Number(n), Number(d)]) };
let out = (await session.run(feeds)).out;
const start = process.hrtime.bigint();
for (let c = 0; c < Number(calls); c++) out = (await session.run(feeds)).out;
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
let sum = 0;
let absSum = 0;
for (const v of out.data) {
  sum += v;
  absSum += Math.abs(v);
}
const answer = { seconds, calls: Number(calls), sum, abs_sum: absSum };
console.log(JSON.stringify(answer));
