#!/usr/bin/python3
"""Bounded soak: wrk drives a mix of valid, invalid and large requests at
the server for --seconds (>= 60) while /proc/PID/status VmRSS is sampled
every second.  Passes when there is no unexpected 5xx (a 503 with
Retry-After under deliberate overload is counted apart), every valid kind
got its expected status, wrk saw no socket errors, and resident memory
after warm-up stays flat within 10 % (median of the last 10 s against the
median of the first 10 s after warm-up).

usage: test_soak.py SERVER_BIN [--seconds 60]"""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time

from robustlib import Failures, Server, attention_body, matrix

# RSS before this is not judged: malloc's arenas and the block cache grow
# with the requests served until they hold a busy mix's working set, which
# takes tens of seconds (docs/reliability.md, the soak's row)
WARMUP_SECONDS = 40
RSS_GROWTH_MAX = 0.10  # after warm-up, flat within 10 %
WINDOW_SECONDS = 10    # RSS compared as medians of 10 s windows (below)
CONNECTIONS = 8        # wrk connections: workers (2) + queue (6); a worker that
MAX_QUEUE = 6          # helps another job's loop leaves the queue full: 503s


def write_bodies(d):
    rng = random.Random(2024)
    bodies = {
        "small.json": attention_body(rng, 8, 16, 2),
        "heads.json": attention_body(rng, 32, 32, 4, {
            "return": ["weights", "output"], "causal": True}),
        "invalid.json": b'{"x": [[1, 2], [3]], "w_q": [[1]]}',
        "unknown_field.json": json.dumps({
            "x": matrix(rng, 2, 2), "W_q": matrix(rng, 2, 2),
            "w_k": matrix(rng, 2, 2), "w_v": matrix(rng, 2, 2)}).encode(),
        # ~ 0.5 MB of JSON and a 256 × 256 × 4 heads weights reply
        "large.json": attention_body(rng, 256, 128, 4, {
            "return": ["weights", "output"]}),
        # more numbers than --max-elements allows: 413 after the body
        "too_many.json": attention_body(rng, 128, 64),
        # valid input whose scores overflow: 422
        "overflow.json": json.dumps({
            "x": [[1e200, 1e200]], "w_q": [[1e200], [1e200]],
            "w_k": [[1e200], [1e200]], "w_v": [[1], [1]]}).encode(),
    }
    for name, body in bodies.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(body)
    return {k: len(v) for k, v in bodies.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("server")
    ap.add_argument("--seconds", type=int, default=60)
    args = ap.parse_args()
    f = Failures()
    d = tempfile.mkdtemp(prefix="robust-soak-")
    sizes = write_bodies(d)
    srv = Server(args.server, ["--threads", "2", "--max-queue",
                               str(MAX_QUEUE), "--max-elements", "12000"])
    samples = []
    stop = threading.Event()

    def sampler():
        t0 = time.monotonic()
        while not stop.wait(1.0):
            samples.append((time.monotonic() - t0, srv.rss_kib()))

    th = threading.Thread(target=sampler, daemon=True)
    th.start()
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "soak.lua")
    try:
        out = subprocess.run(
            ["wrk", "-t", "2", "-c", str(CONNECTIONS), "-d",
             f"{args.seconds}s", "--timeout", "10s", "-s", script,
             f"http://127.0.0.1:{srv.port}", "--", d],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            timeout=args.seconds + 60)
    finally:
        stop.set()
        th.join()
        code = srv.terminate()
    text = out.stdout.decode(errors="replace")
    print(text, flush=True)
    statuses = dict((int(k), int(v)) for k, v in
                    re.findall(r"(\d{3})=(\d+)", text))
    m = re.search(r"SOAK retry_503 (\d+) unexpected_5xx (\d+)", text)
    retry_503, bare_5xx = (int(m.group(1)), int(m.group(2))) if m else (-1, -1)
    m = re.search(r"SOAK requests (\d+) errors_connect (\d+) errors_read "
                  r"(\d+) errors_write (\d+) errors_timeout (\d+)", text)
    total, *errors = [int(g) for g in m.groups()] if m else (0, -1, -1, -1, -1)

    # Memory in use follows what is in flight at the sampling instant (a
    # large request holds tens of MiB for a moment), so single samples are
    # noise; a leak is a trend.  The median of the first window after
    # warm-up is compared with the median of the last window.
    after = [kib for t, kib in samples if t >= WARMUP_SECONDS]
    first = sorted(after[:WINDOW_SECONDS])
    final = sorted(after[-WINDOW_SECONDS:])
    base = first[len(first) // 2] if first else 0
    last = final[len(final) // 2] if final else 0
    peak = max(after) if after else 0
    growth = (last - base) / base if base else float("inf")
    print(f"SOAK summary: {args.seconds} s, {total} requests "
          f"({total / args.seconds:.0f}/s) with bodies of "
          f"{min(sizes.values())} B to {max(sizes.values()) // 1024} KiB; "
          f"statuses {dict(sorted(statuses.items()))}; 503 with Retry-After "
          f"{retry_503}; unexpected 5xx {bare_5xx}; socket errors "
          f"{sum(errors)}", flush=True)
    print(f"SOAK memory: VmRSS median {base / 1024:.1f} MiB in the "
          f"{WINDOW_SECONDS} s after a {WARMUP_SECONDS} s warm-up, "
          f"{last / 1024:.1f} MiB in the last {WINDOW_SECONDS} s: growth "
          f"{growth * 100:+.1f} %; peak {peak / 1024:.1f} MiB "
          f"({len(samples)} samples, 1/s)", flush=True)
    f.check(out.returncode == 0 and total > 0, f"wrk ran ({out.returncode})")
    f.check(bare_5xx == 0, f"no unexpected 5xx ({bare_5xx})")
    f.check(set(statuses) <= {200, 400, 413, 422, 503},
            f"only expected statuses ({sorted(statuses)})")
    for s in (200, 400, 413, 422):
        f.check(statuses.get(s, 0) > 0, f"status {s} seen")
    f.check(sum(errors) == 0, f"no socket errors ({errors})")
    f.check(growth <= RSS_GROWTH_MAX,
            f"RSS after warm-up flat within {RSS_GROWTH_MAX * 100:.0f} % "
            f"({growth * 100:+.1f} %)")
    f.check(code == 0, f"exit code {code} after SIGTERM")
    f.exit("test_soak")


if __name__ == "__main__":
    main()
