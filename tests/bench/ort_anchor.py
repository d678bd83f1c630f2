"""The core against ONNX Runtime's CPU provider, side by side: for each size,
rounds in turn of bench_core (`attn float32 N D H T 0 CALLS`, a fresh
process), ONNX Runtime's fused com.microsoft.MultiHeadAttention graph and its
plain-ops graph (tests/bench/ort_graphs.py, run by ort_peer.mjs, each a fresh
node process); the checksums must agree, or the run fails.

    ort_anchor.py --bench-core build/bench/bench_core --work DIR
                  [--size 1024,512,8]... [--threads 1] [--rounds 3]
                  [--calls 3] [--level avx2]

Prints one Markdown row per size: medians of wall-clock ms per call and
ORT ÷ core (above 1: the core is faster).  --level caps the core's SIMD
level (bench_core LEVEL); ONNX Runtime picks its own kernels for the CPU.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# checksums: |Σ|x|| within this relative distance, Σx within this share
# of Σ|x| (float32 sums of different orders)
ABS_SUM_REL = 1e-5
SUM_SHARE = 1e-5


def run_core(args, n, d, h):
    cmd = f"attn float32 {n} {d} {h} {args.threads} 0 1\n" \
          f"attn float32 {n} {d} {h} {args.threads} 0 {args.calls}\nquit\n"
    out = subprocess.run([args.bench_core] + ([args.level] if args.level
                                              else []),
                         input=cmd, capture_output=True, text=True,
                         check=True).stdout.splitlines()
    return json.loads(out[1])


def run_ort(args, model, n, d):
    out = subprocess.run(["node", os.path.join(HERE, "ort_peer.mjs"), model,
                          str(n), str(d), str(args.threads),
                          str(args.calls)],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def agree(a, b):
    scale = max(a["abs_sum"], b["abs_sum"])
    return (abs(a["abs_sum"] - b["abs_sum"]) <= ABS_SUM_REL * scale and
            abs(a["sum"] - b["sum"]) <= SUM_SHARE * scale)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench-core", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--size", action="append")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=3)
    ap.add_argument("--level")
    args = ap.parse_args()
    sizes = args.size or ["1024,512,8", "2048,512,8"]
    graphs = os.path.join(args.work, "ort")
    subprocess.run([sys.executable, os.path.join(HERE, "ort_graphs.py"),
                    "--out", graphs] + [f"--size={s}" for s in sizes],
                   check=True)
    print(f"| n, d, h | threads | core ms | ORT fused MHA ms | ORT plain ms | "
          f"fused/core | plain/core |")
    print("|---|---|---:|---:|---:|---:|---:|")
    failed = False
    for size in sizes:
        n, d, h = (int(v) for v in size.split(","))
        times = {"core": [], "fused": [], "plain": []}
        for r in range(args.rounds):
            order = ["core", "fused", "plain"]
            for who in order if r % 2 == 0 else order[::-1]:
                if who == "core":
                    got = run_core(args, n, d, h)
                else:
                    got = run_ort(args, os.path.join(
                        graphs, f"{who}-{n}-{d}-{h}.onnx"), n, d)
                    if not agree(got, core_answer):
                        print(f"{size}: ORT {who} disagrees: {got} against "
                              f"the core's {core_answer}", file=sys.stderr)
                        failed = True
                if who == "core":
                    core_answer = got
                times[who].append(got["seconds"] / got["calls"] * 1e3)
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"| {n}, {d}, {h} | {args.threads} | {med['core']:.1f} | "
              f"{med['fused']:.1f} | {med['plain']:.1f} | "
              f"{med['fused'] / med['core']:.2f}× | "
              f"{med['plain'] / med['core']:.2f}× |")
    if failed:
        sys.exit("ort_anchor: the checksums disagree")


if __name__ == "__main__":
    main()
