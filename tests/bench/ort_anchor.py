"""The core against ONNX Runtime's CPU provider, side by side: for each size,
rounds in turn of bench_core (`attn float32 N D H T 0 CALLS`, a fresh
process, once per --level), ONNX Runtime's fused com.microsoft.MultiHeadAttention
graph and its plain-ops graph (tests/bench/ort_graphs.py, run by
ort_peer.mjs, each a fresh node process); the checksums must agree, or the
run fails.

    ort_anchor.py --bench-core build/bench/bench_core --work DIR
                  [--size 1024,512,8]... [--threads 1] [--rounds 3]
                  [--calls 3] [--level avx2]... [--no-plain]

Prints one Markdown row per size and core level: medians of wall-clock ms
per call and ORT ÷ core (above 1: the core is faster); with one thread, also
the medians of CPU ms per call (the core's calling thread, ONNX Runtime's
process) and their ratio, which a loaded machine's wait for a CPU does not
move.  --level caps the core's SIMD level (bench_core LEVEL; "best": none),
repeatable: the levels then run in the same rounds.  ONNX Runtime picks its
own kernels for the CPU.  --no-plain leaves out the plain-ops graph (it
holds the (h, n, n) scores: 1 GiB at n = 16384).
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


def run_core(args, level, n, d, h):
    cmd = f"attn float32 {n} {d} {h} {args.threads} 0 1\n" \
          f"attn float32 {n} {d} {h} {args.threads} 0 {args.calls}\nquit\n"
    out = subprocess.run([args.bench_core] + ([level] if level != "best"
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


def measure(args, graphs, n, d, h):
    """{contestant: [wall ms per call], ...}, the same for CPU ms; false
    when a graph disagrees with the core."""
    names = [f"core {lv}" for lv in args.level] + ["fused"] + \
        (["plain"] if args.plain else [])
    wall = {k: [] for k in names}
    cpu = {k: [] for k in names}
    ok = True
    core_answer = None
    for r in range(args.rounds):
        for who in names if r % 2 == 0 else names[::-1]:
            if who.startswith("core "):
                got = run_core(args, who[5:], n, d, h)
                core_answer = core_answer or got
            else:
                got = run_ort(args, os.path.join(
                    graphs, f"{who}-{n}-{d}-{h}.onnx"), n, d)
            if core_answer and not agree(got, core_answer):
                print(f"{n},{d},{h}: {who} disagrees: {got} against the "
                      f"core's {core_answer}", file=sys.stderr)
                ok = False
            wall[who].append(got["seconds"] / got["calls"] * 1e3)
            cpu[who].append(got["cpu_seconds"] / got["calls"] * 1e3)
    return ({k: statistics.median(v) for k, v in wall.items()},
            {k: statistics.median(v) for k, v in cpu.items()}, ok)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench-core", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--size", action="append")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=3)
    ap.add_argument("--level", action="append")
    ap.add_argument("--no-plain", dest="plain", action="store_false")
    args = ap.parse_args()
    args.level = args.level or ["best"]
    sizes = args.size or ["1024,512,8", "2048,512,8"]
    graphs = os.path.join(args.work, "ort")
    subprocess.run([sys.executable, os.path.join(HERE, "ort_graphs.py"),
                    "--out", graphs] + [f"--size={s}" for s in sizes],
                   check=True)
    one = args.threads == 1
    plain = args.plain
    print("| n, d, h | threads | core level | core ms | ORT fused MHA ms | "
          + ("ORT plain ms | " if plain else "") + "fused/core | "
          + ("plain/core | " if plain else "")
          + ("core CPU ms | ORT fused CPU ms | fused/core, CPU |"
             if one else ""))
    print("|---|---|---|---:|---:|" + ("---:|" if plain else "") + "---:|"
          + ("---:|" if plain else "") + ("---:|---:|---:|" if one else ""))
    failed = False
    for size in sizes:
        n, d, h = (int(v) for v in size.split(","))
        wall, cpu, ok = measure(args, graphs, n, d, h)
        failed = failed or not ok
        for lv in args.level:
            core = f"core {lv}"
            row = (f"| {n}, {d}, {h} | {args.threads} | {lv} | "
                   f"{wall[core]:.1f} | {wall['fused']:.1f} | ")
            if plain:
                row += f"{wall['plain']:.1f} | "
            row += f"{wall['fused'] / wall[core]:.2f}× | "
            if plain:
                row += f"{wall['plain'] / wall[core]:.2f}× | "
            if one:
                row += (f"{cpu[core]:.1f} | {cpu['fused']:.1f} | "
                        f"{cpu['fused'] / cpu[core]:.2f}× |")
            print(row, flush=True)
    if failed:
        sys.exit("ort_anchor: the checksums disagree")


if __name__ == "__main__":
    main()
