#!/usr/bin/python3
"""What one number of a reply costs to encode, in the work estimate's
operations: the time one worker spends writing a reply's numbers (the
access log's encode_ms) divided by how many there are, at one core's rate
(LIMIT_WORK_PER_CORE_SECOND, server/base/service_limits.h), so that
--max-work counts a big reply's encoding as the deadline sees it.

On a loaded machine a worker runs slower than one core's rate, the
encoding as much as the computation; so each number's cost is also given
at the rate the same worker computed, in the same rounds, one of
tests/bench/work_rate.py's shapes (n 1024, d 64, 64 heads of 16, d_out
64: its estimate over its compute_ms): that column is the one the
estimate takes, the encoding counted as the computation is.

The server runs with one worker, every request on it (--fast-lane off,
--max-work 0); each request returns the attention weights of n tokens
(full-precision softmax values, the most digits a JSON number takes), as
JSON numbers or base64 (float64 and float32); the kinds are sent in turn,
ROUNDS times, and each one's fastest encoding is kept, as
tests/bench/work_rate.py keeps each shape's fastest computation.

usage: tests/bench/encode_rate.py build/attention-server"""
import json
import sys

from worker_timing import ROUNDS, best_entries

RATE = 2e10  # LIMIT_WORK_PER_CORE_SECOND
N, D, HEADS = 1024, 4, 4  # weights: 4 x 1024 x 1024 numbers
# the shape whose computation calibrates the rate (work_rate.py's second)
CALIBRATION = ("calibration", 1024, 64, 64, 16, 64)
KINDS = [("JSON numbers, float64", "json", "float64"),
         ("JSON numbers, float32", "json", "float32"),
         ("base64, float64", "base64", "float64"),
         ("base64, float32", "base64", "float32")]


def matrix(rows, cols, seed):
    return [[((r * cols + c) * seed % 101) / 101 - 0.5 for c in range(cols)]
            for r in range(rows)]


def body(encoding, dtype):
    return json.dumps({
        "x": matrix(N, D, 37), "w_q": matrix(D, D * HEADS, 13),
        "w_k": matrix(D, D * HEADS, 17), "w_v": matrix(D, D * HEADS, 19),
        "num_heads": HEADS, "encoding": encoding, "dtype": dtype,
        "return": ["weights"]}).encode()


def calibration_body():
    _, n, d, heads, d_k, d_out = CALIBRATION
    width = heads * d_k
    return json.dumps({
        "x": matrix(n, d, 37), "w_q": matrix(d, width, 13),
        "w_k": matrix(d, width, 17), "w_v": matrix(d, width, 19),
        "w_o": matrix(width, d_out, 11), "num_heads": heads,
        "return": ["output"]}).encode()


def main():
    kinds = KINDS + [CALIBRATION]
    bodies = [body(k[1], k[2]) for k in KINDS] + [calibration_body()]
    best = best_entries(sys.argv[1], dict(zip(kinds, bodies)),
                        ("encode_ms", "compute_ms"))
    numbers = HEADS * N * N
    calibration = best[CALIBRATION]
    rate = calibration["work_flops"] / (calibration["compute_ms"] * 1e-3)
    print(f"| reply ({numbers:,} numbers) | encode, best of {ROUNDS} | "
          "per number | operations per number at 2e10/s | at this run's "
          f"rate ({rate:.3g}/s) |")
    print("| --- | --- | --- | --- | --- |")
    for kind in KINDS:
        ms = best[kind]["encode_ms"]
        print(f"| {kind[0]} | {ms:.0f} ms | {ms * 1e6 / numbers:.1f} ns | "
              f"{ms * 1e-3 * RATE / numbers:.0f} | "
              f"{ms * 1e-3 * rate / numbers:.0f} |")


if __name__ == "__main__":
    main()
