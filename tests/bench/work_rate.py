#!/usr/bin/python3
"""The work estimate's rate: how many of api_attention_work()'s operations
one worker computes a second, for requests of narrow heads (many heads of
16, width 1: the issue's shape) and wide ones (a few heads of 64).  The
estimate counts what is slow when the rates agree; --max-work's default
(server/base/service_limits.h) is one core's rate times --compute-timeout.

The server runs with one worker, every request on it (--fast-lane off);
the shapes are sent in turn, ROUNDS times, and each one's fastest
computation (compute_ms of its access-log line) is kept, so that a
neighbour's load on a shared machine counts as little as it can.

usage: tests/bench/work_rate.py build/attention-server"""
import base64
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

ROUNDS = 5
# (n, d, heads, d_k, d_out): narrow heads first, then wide ones
SHAPES = [(1024, 1, 128, 16, 1), (1024, 64, 64, 16, 64),
          (1024, 256, 16, 16, 256), (1024, 1, 8, 64, 1),
          (1024, 256, 4, 64, 256), (1024, 512, 8, 64, 8)]


def matrix(rows, cols, seed):
    values = [(i * seed % 101) / 101 - 0.5 for i in range(rows * cols)]
    raw = struct.pack(f"<{len(values)}d", *values)
    return {"shape": [rows, cols], "base64": base64.b64encode(raw).decode()}


def body(n, d, heads, d_k, d_out):
    width = heads * d_k
    return json.dumps({
        "x": matrix(n, d, 37), "w_q": matrix(d, width, 13),
        "w_k": matrix(d, width, 17), "w_v": matrix(d, width, 19),
        "w_o": matrix(width, d_out, 11), "num_heads": heads,
        "return": ["output"]}).encode()


def main():
    log = tempfile.NamedTemporaryFile(suffix=".log", delete=False)
    srv = subprocess.Popen([sys.argv[1], "--listen", "127.0.0.1:0",
                            "--threads", "1", "--fast-lane", "off",
                            "--max-work", "0"],
                           stdout=subprocess.PIPE, stderr=log)
    line = srv.stdout.readline().decode()
    port = int(line.split("listening on http://")[1].split()[0]
               .rsplit(":", 1)[1])
    best = {}
    done = 0
    try:
        bodies = [body(*s) for s in SHAPES]
        for _ in range(ROUNDS):
            for shape, data in zip(SHAPES, bodies):
                req = urllib.request.Request(
                    f"http://127.0.0.1:{port}/v1/attention", data=data,
                    headers={"Content-Type": "application/json"})
                urllib.request.urlopen(req, timeout=600).read()
                done += 1
                lines = []
                while len(lines) < done:  # the log writes in batches
                    time.sleep(0.02)
                    with open(log.name) as f:
                        lines = [x for x in f if x.startswith('{"time"')]
                entry = json.loads(lines[-1])
                kept = best.get(shape)
                if not kept or entry["compute_ms"] < kept["compute_ms"]:
                    best[shape] = entry
    finally:
        srv.terminate()
        srv.wait()
        os.unlink(log.name)
    print("| n, d, heads × d_k, d_out | estimate (operations) | compute, "
          "best of 5 | rate (operations/s) |")
    print("| --- | --- | --- | --- |")
    for shape in SHAPES:
        e = best[shape]
        n, d, h, dk, dout = shape
        print(f"| {n}, {d}, {h} × {dk}, {dout} | {e['work_flops']:.3g} | "
              f"{e['compute_ms']:.0f} ms | "
              f"{e['work_flops'] / e['compute_ms'] * 1e3:.3g} |")


if __name__ == "__main__":
    main()
