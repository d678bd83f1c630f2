"""Where a request's time goes in build/attention-server, under wrk load.

    profile_server.py --server build/attention-server [--body lesson|n16]
                      [--seconds 5] [--connections 8] [--work build/bench]

Starts the server, drives it with wrk (post.lua) and records it with
`perf record --call-graph dwarf` (cpu-clock, so only time on a CPU counts).
Every sample's call stack is then put in one bucket, by the frames that name
a known stage (JSON parse, decode, compute, number formatting, ...), else by
where it ran (libmicrohttpd, kernel).  Prints each bucket's
share and its CPU µs per request.
"""
import argparse
import collections
import json
import os
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402  (bodies, server start-up, wrk)

SAMPLE_HZ = 999
# how long perf may take to attach to the server on a loaded machine
PERF_ATTACH_SECONDS = 30
# buckets smaller than this share are summed into one row
MERGE_BELOW = 0.005

# The first bucket (in this order) with a pattern that matches any frame of a
# sample's stack takes the sample: sub-stages come before the stages that
# call them (parsing before decode_request, compute before the encoder that
# wraps it).  Patterns are matched against symbol names.
BUCKETS = [
    ("JSON parse, fast path (simdjson: parse_json_fast)",
     r"^parse_json_fast$|simdjson"),
    ("JSON parse, jansson (parse_json_jansson, json_loadb)",
     r"^parse_json_jansson$|^json_load"),
    ("JSON tree free (json_delete)", r"^json_delete$"),
    ("compute, textbook path (attn_forward_reference)",
     r"^attn_forward_reference$|^reference_f(32|64)$"),
    ("compute (attn_forward, BLAS, pool loops)",
     r"^attn_forward$|^forward_f(32|64)$|_task(_f(32|64))?$|"
     r"^pool_parallel_for$|^cblas_|^[sd]gemm_"),
    ("number formatting (numfmt)", r"^numfmt_|^encode_numbers$"),
    ("encode: response envelope", r"^encode_|^compute_and_encode$"),
    ("decode: validation, layouts, limits", r"^decode_"),
    ("error replies", r"^problem_"),
    ("access log", r"^access_log"),
]
PARSE_BUCKETS = [name for name, _ in BUCKETS[:2]]


def bucket_of(frames):
    """frames: [(symbol, dso)] from the leaf to the root."""
    for name, pattern in BUCKETS:
        if any(re.search(pattern, sym) for sym, _ in frames):
            return name
    if any("futex" in sym for sym, _ in frames):
        return "thread hand-offs (futex wait/wake, scheduling)"
    for sym, dso in frames:
        if dso.endswith("attention-server") and sym not in (
                "worker_main", "[unknown]"):
            return f"server, other ({sym})"
    leaf_dso = frames[0][1] if frames else ""
    in_mhd = any("libmicrohttpd" in dso for _, dso in frames)
    if "kernel" in leaf_dso:
        return ("kernel under libmicrohttpd (socket I/O, epoll)" if in_mhd
                else "kernel, other (scheduling, futex, page faults)")
    if in_mhd:
        return "libmicrohttpd (HTTP parsing, buffers)"
    if any(sym == "worker_main" for sym, _ in frames):
        return "pool worker, other (locks, wake-ups)"
    return "other"


def wait_for_perf(perf, data):
    """Returns once perf has written its file's header, and a little more,
    so that it samples the whole load that follows: on a loaded machine
    perf can take seconds to attach, and a 1 s load then went unrecorded."""
    if os.path.exists(data):
        os.unlink(data)
    deadline = time.monotonic() + PERF_ATTACH_SECONDS
    while time.monotonic() < deadline and perf.poll() is None:
        if os.path.exists(data) and os.path.getsize(data) > 0:
            break
        time.sleep(0.05)
    time.sleep(0.5)


def parse_perf_script(text):
    """Yields (thread name, frames) for every sample of `perf script`."""
    thread, frames = None, []
    for line in text.splitlines():
        if not line.strip():
            if thread is not None:
                yield thread, frames
            thread, frames = None, []
        elif not line[0].isspace():
            thread = line.split()[0]
        else:
            m = re.match(r"\s*[0-9a-f]+ (.*) \((.*)\)$", line)
            if m:
                sym = re.sub(r"\+0x[0-9a-f]+$", "", m.group(1))
                frames.append((sym.replace(" (inlined)", ""), m.group(2)))
    if thread is not None:
        yield thread, frames


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", required=True)
    ap.add_argument("--body", choices=["lesson", "n16"], default="lesson")
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--connections", type=int,
                    default=harness.WRK_CONNECTIONS,
                    help="wrk's connections (32 saturate the server)")
    ap.add_argument("--work", default="build/bench")
    args = ap.parse_args()
    args.work = os.path.abspath(args.work)
    os.makedirs(args.work, exist_ok=True)
    body = (harness.lesson002_body() if args.body == "lesson"
            else harness.random_body(16, 64, 4, seed=16))
    body_path = os.path.join(args.work, f"profile-{args.body}.json")
    with open(body_path, "w") as f:
        json.dump(body, f)
    data = os.path.join(args.work, "perf.data")
    server = harness.start_ours(args)
    try:
        harness.run_wrk(args, server.port, body_path, 1)  # warm-up
        perf = subprocess.Popen(
            ["perf", "record", "-q", "-e", "cpu-clock", "-F", str(SAMPLE_HZ),
             "--call-graph", "dwarf,16384", "-p", str(server.proc.pid),
             "-o", data], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_for_perf(perf, data)
        load = harness.run_wrk(args, server.port, body_path, args.seconds,
                               args.connections)
        perf.send_signal(signal.SIGINT)
        perf.wait(timeout=60)
    finally:
        server.stop()
    script = subprocess.run(
        ["perf", "script", "-i", data, "-F", "comm,tid,ip,sym,dso"],
        capture_output=True, text=True).stdout
    counts = collections.Counter()
    threads = collections.Counter()
    total = 0
    for thread, frames in parse_perf_script(script):
        counts[bucket_of(frames)] += 1
        threads[thread] += 1
        total += 1
    if total == 0:
        print("perf recorded no samples", file=sys.stderr)
        return 1
    requests = load["requests"]
    print(f"## Profile: {args.body} body, wrk -t{harness.WRK_THREADS} "
          f"-c{args.connections} {args.seconds} s under "
          f"perf ({requests} requests, {load['rps']:.0f} req/s while "
          f"profiled; perf slows the server)")
    print(f"\n{total} samples at {SAMPLE_HZ} Hz = {total / SAMPLE_HZ:.2f} CPU s;"
          f" {total / SAMPLE_HZ / requests * 1e6:.0f} CPU µs per request; "
          "threads: " + ", ".join(f"{t} {c / total:.0%}"
                                  for t, c in threads.most_common()))
    print("\n| where | share | CPU µs / request |\n|---|---:|---:|")
    small = [(n, c) for n, c in counts.items() if c / total < MERGE_BELOW]
    rows = [(n, c) for n, c in counts.most_common() if c / total >= MERGE_BELOW]
    if small:
        rows.append((f"rest: {len(small)} buckets under {MERGE_BELOW:.1%} each",
                     sum(c for _, c in small)))
    for name, c in rows:
        print(f"| {name} | {c / total:.1%} "
              f"| {c / SAMPLE_HZ / requests * 1e6:.1f} |")
    if not any(counts[name] for name in PARSE_BUCKETS):
        print("no sample in JSON parsing: the stacks were not unwound",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
