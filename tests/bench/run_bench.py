"""The benchmark: the core, the HTTP path and big requests, side by side.

    run_bench.py --server build/attention-server --bench-core build/bench/bench_core
                 [--fma-peak build/bench/fma_peak] [--quick] [--parts 1,2,3]
                 [--core-sizes NxDxH,...] [--core-threads 1,2]
                 [--rounds R] [--out FILE]

Part 1  the core (bench_core.c) against PyTorch's nn.MultiheadAttention and
        NumPy (contestants.py), each a long-lived process answering the same
        commands; plus OpenBLAS's sgemm/dgemm rate measured in the same rounds.
        The core runs twice: as this CPU allows, and capped at AVX2 with
        OpenBLAS's Haswell kernels (no AVX-512 kernels: every product by
        OpenBLAS), what a CPU without AVX-512 runs.  The anchors run twice
        too: with OpenBLAS as the environment loads it, and with the
        fastest kernel set that computes correctly here (blas_kernels.py:
        every candidate checked against float64, the pick printed); each
        round also measures one core's FMA peak (fma_peak.c), and the core
        is reported as a share of it.  With --ort-peer, ONNX Runtime's CPU
        provider runs the float32 rows without weights too, the same
        problem as one fused com.microsoft.MultiHeadAttention graph
        (ort_graphs.py, ort_peer.mjs --serve), its checksums checked.
Part 2  wrk against build/attention-server, a FastAPI + uvicorn + NumPy peer
        (fastapi_peer.py), nginx returning a static 200, and mhd_minimal.c (a
        libmicrohttpd server that reads the upload and answers a constant
        2 KB: this HTTP stack's ceiling); lesson-sized requests with 32 and 8
        connections, a mid-small one with 8.
Part 3  a mid-size and a large request, end to end, each server's peak
        resident memory (VmHWM) and its resident memory once it has been idle
        for a few seconds (ours keeps freed buffers while busy and gives them
        back when idle); ours also through the Open Inference Protocol (/v2,
        framed as tritonclient.http frames it: tests/oip/oip_client.py), with
        binary tensors and with JSON ones, which must give /v1's numbers.
Part 4  a batch of sequences against the same sequences one by one.
Part 5  fairness: lesson-sized requests alone, a stream of big requests
        alone, then both at once (the small ones' p99 and rate, the big
        stream's rate).
Each part is a module (part_core.py, part_http.py, part_big.py,
part_batch.py, part_fairness.py: run, section, targets) on the shared
harness (harness.py: contestants, servers, bodies, wrk).
Every measurement is repeated in rounds; within a round the contestants take
turns (their order rotates each round), so a burst of load from elsewhere on
the machine hits all of them alike.  Tables report medians and ratios.

The run fails (exit 1) when the contestants disagree on the numbers, a server
answers something other than 200 or a wrong result, or wrk sees errors, so the
smoke target (--quick) is a test of the harness itself.
"""
import argparse
import os
import shutil
import sys
import time

import blas_kernels
import harness
import part_batch
import part_big
import part_core
import part_fairness
import part_http
from harness import BenchError, cpu_model, git_state, loadavg, log, timed

# the parts in the order they run: number, name in the log, module
PARTS = [(1, "core", part_core), (2, "HTTP", part_http), (3, "big", part_big),
         (4, "batch", part_batch), (5, "fairness", part_fairness)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", required=True)
    ap.add_argument("--bench-core", required=True)
    ap.add_argument("--fma-peak",
                    help="fma_peak.c's binary: one core's FMA peak")
    ap.add_argument("--core-sizes",
                    help="part 1's sizes N x D x H, e.g. 1024x512x8,2048x512x8")
    ap.add_argument("--core-threads",
                    help="part 1's thread counts, e.g. 1 or 1,2")
    ap.add_argument("--core-dtypes",
                    help="part 1's dtypes: float32, float64 or both")
    ap.add_argument("--core-weights",
                    help="part 1's rows without (0) and with (1) the "
                    "weights handed back, e.g. 0 or 0,1")
    ap.add_argument("--ort-peer",
                    help="tests/bench/ort_peer.mjs (npm's onnxruntime-node "
                    "installed beside it): ONNX Runtime in part 1")
    ap.add_argument("--fair-baseline",
                    help="another build of the server: part 5 measures it "
                    "in the same rounds, side by side")
    ap.add_argument("--server-args",
                    help="more arguments for our server, after the "
                    "harness's own (the smoke run's refusal check)")
    ap.add_argument("--mhd-minimal",
                    help="mhd_minimal.c's binary, printed beside nginx")
    ap.add_argument("--work", default="build/bench",
                    help="folder for bodies, logs and nginx's config")
    ap.add_argument("--parts", default="1,2,3,4,5")
    ap.add_argument("--quick", action="store_true",
                    help="every part at small sizes, one round: checks the "
                    "harness, not the figures")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--sample-seconds", type=float, default=0.05,
                    help="least time of one core sample (calls are batched)")
    ap.add_argument("--http-rounds", type=int, default=3)
    ap.add_argument("--wrk-seconds", type=int, default=5)
    ap.add_argument("--mid-reps", type=int, default=7)
    ap.add_argument("--large-reps", type=int, default=5)
    ap.add_argument("--out", help="also write the table here")
    ap.add_argument("--command", default=" ".join(sys.argv),
                    help="the command shown as the way to reproduce")
    args = ap.parse_args()
    args.idle_seconds = (part_big.QUICK_IDLE_SECONDS if args.quick
                         else part_big.IDLE_SECONDS)
    harness.QUICK = args.quick
    if args.quick:
        args.rounds, args.sample_seconds = 1, 0.005
        args.http_rounds, args.wrk_seconds = 1, 1
        args.mid_reps, args.large_reps = 1, 1
    args.work = os.path.abspath(args.work)
    os.makedirs(args.work, exist_ok=True)
    parts = {int(p) for p in args.parts.split(",")}
    for tool in ("wrk", "/usr/sbin/nginx"):
        if 2 in parts and not shutil.which(tool):
            raise SystemExit(f"{tool} is missing (make bench installs it)")

    # a pick of an earlier run is not this run's (part 1 writes it again)
    stale = os.path.join(args.work, blas_kernels.PICK_FILE)
    if os.path.exists(stale):
        os.remove(stale)
    load_before = loadavg()
    started = time.time()
    results = {}
    try:
        for number, name, part in PARTS:
            if number in parts:
                results[part] = timed(f"part {number} ({name})", part.run,
                                      args)
    except BenchError as exc:
        log(f"bench FAILED: {exc}")
        return 1
    elapsed = time.time() - started
    out = [f"## Benchmark"
           f"{' (quick: harness check, not numbers)' if args.quick else ''}",
           "",
           f"- reproduce: `{args.command}`",
           f"- code: {git_state()}; server {args.server}",
           f"- machine: {os.cpu_count()} CPUs, {cpu_model()}; load average "
           f"{load_before} before, {loadavg()} after ({elapsed:.0f} s)",
           f"- medians of {args.rounds} interleaved rounds (core), "
           f"{args.http_rounds} × {args.wrk_seconds} s wrk runs (HTTP), "
           f"{args.mid_reps} / {args.large_reps} requests (mid / large)"]
    if part_core in results:
        out += part_core.header(results[part_core])
    for part, res in results.items():
        out += [""] + part.section(res, args)
    out += ["", "### Targets", ""]
    for part, res in results.items():
        out += part.targets(res)
    text = "\n".join(out) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
