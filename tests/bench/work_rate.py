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
import struct
import sys

from worker_timing import ROUNDS, best_entries

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
    best = best_entries(sys.argv[1], {s: body(*s) for s in SHAPES},
                        ("compute_ms",))
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
