// ort_peer.mjs - times ONNX graphs of tests/bench/ort_graphs.py in ONNX
// Runtime's CPU provider (npm's onnxruntime-node, tests/bench/ort/):
//   node ort_peer.mjs MODEL.onnx N D THREADS CALLS
//       one graph: prints one JSON line, {"seconds": total of CALLS runs
//       after one warm-up, "cpu_seconds": the process's CPU time over them
//       (every thread's), "calls", "sum", "abs_sum"} (the sums of the
//       output, in double)
//   node ort_peer.mjs --serve DIR
//       a contestant of run_bench.py's part 1: one command a line, one JSON
//       line back, as bench_core answers them:
//         attn float32 N D H THREADS 0 CALLS   DIR/fused-N-D-H.onnx (fused
//             MultiHeadAttention), its session made with THREADS intra-op
//             threads and warmed up on first use; the answer as above
//         info   {"ort": version};   quit
// x is bench_core's input (bench_value with seed 1, amplitude 1), so the
// checksums compare with bench_core's `attn float32 N D H ...` answer.
import { createInterface } from "node:readline";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(new URL("./ort/", import.meta.url));
const ort = require("onnxruntime-node");

function input(n, d) {
  const count = n * d;
  const x = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    // bench_core.c's bench_value(i, 1, 1.0), exact in doubles below 2^53
    const u = Number((BigInt(i) * 2654435761n + 40503n) & 0xffffffffn);
    x[i] = (u / 4294967296.0) * 2 - 1;
  }
  return { x: new ort.Tensor("float32", x, [1, n, d]) };
}

async function open(model, n, d, threads) {
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: "sequential",
  });
  const feeds = input(n, d);
  await session.run(feeds); // the warm-up
  return { session, feeds };
}

async function time({ session, feeds }, calls) {
  let out;
  const start = process.hrtime.bigint();
  const cpuStart = process.cpuUsage();
  for (let c = 0; c < calls; c++) out = (await session.run(feeds)).out;
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const cpu = process.cpuUsage(cpuStart);
  let sum = 0;
  let absSum = 0;
  for (const v of out.data) {
    sum += v;
    absSum += Math.abs(v);
  }
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  return { seconds, cpu_seconds: cpuSeconds, calls, sum, abs_sum: absSum };
}

async function serve(dir) {
  const sessions = new Map(); // "N D H THREADS" -> {session, feeds}
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    const word = line.trim().split(/\s+/);
    let answer;
    try {
      if (word[0] === "quit") break;
      if (word[0] === "info") {
        answer = { ort: require("onnxruntime-node/package.json").version };
      } else if (word[0] === "attn" && word[1] === "float32" &&
                 word[6] === "0" && word.length === 8) {
        const [n, d, h, threads, , calls] = word.slice(2).map(Number);
        const key = `${n} ${d} ${h} ${threads}`;
        if (!sessions.has(key))
          sessions.set(key, await open(path.join(dir, `fused-${n}-${d}-${h}.onnx`),
                                       n, d, threads));
        answer = await time(sessions.get(key), calls);
      } else {
        answer = { error: "not a command of ort_peer.mjs --serve" };
      }
    } catch (e) {
      answer = { error: String(e) };
    }
    console.log(JSON.stringify(answer));
  }
}

const argv = process.argv.slice(2);
if (argv[0] === "--serve") {
  await serve(argv[1]);
} else {
  const [model, n, d, threads, calls] = argv;
  const opened = await open(model, Number(n), Number(d), Number(threads));
  console.log(JSON.stringify(await time(opened, Number(calls))));
}
