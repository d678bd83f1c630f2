"""What compressing a reply costs and saves: Accept-Encoding gzip and
deflate against no coding, for the lessons' shapes and a big request, each
asking for every stage.

    reply_coding.py --server build/attention-server [--rounds 5]

For each request: the reply's bytes as sent with each coding, the server's
CPU time per request (utime + stime of its process) and the median time
from sending the request to the last byte of the reply over loopback
(keep-alive, the body read as sent, not inflated), the codings interleaved
round by round (a round: `--repeat` requests of each, 1 for the big one).
A compressed reply is worth its extra time on a link slower than "pays
below": the bytes it saves divided by the time it adds.  The lessons' replies are below REPLY_CODING_MIN_BYTES and go out
uncompressed unless the client refuses identity ("identity;q=0, gzip"
forces it, to show what it would cost).  Last, the big reply compressed
in this process by zlib at levels 1 and 6 (one thread), for the level.
"""
import argparse
import http.client
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
STAGES = ["x_pe", "q", "k", "v", "q_rope", "k_rope", "k_cache", "v_cache",
          "scores", "scaled_scores", "masked_scores", "weights",
          "head_outputs", "concat", "output"]
# every stage is computed: causal (masked_scores), rope on two components
# of each head (q_rope, k_rope; lesson 000's heads are 3 wide),
# the sinusoidal encoding (x_pe)
EVERY_STAGE = {"causal": True, "rope": {"dims": 2},
               "positional_encoding": "sinusoidal", "return": STAGES}
CODINGS = [("none", None), ("gzip", "gzip"), ("deflate", "deflate"),
           ("forced gzip", "identity;q=0, gzip")]


def lesson(i):
    with open(os.path.join(ROOT, "tests", "lessons", f"lesson_00{i}.json")) as f:
        body = json.load(f)
    body.update(EVERY_STAGE)
    return f"lesson {i:03d}", body


def big(n, h, d):
    rng = random.Random(1)

    def mat(rows, cols):
        return [[rng.gauss(0, 1) for _ in range(cols)] for _ in range(rows)]
    body = {"x": mat(n, d), "num_heads": h, "w_q": mat(d, d),
            "w_k": mat(d, d), "w_v": mat(d, d), "w_o": mat(d, d)}
    body.update(EVERY_STAGE)
    return f"n {n}, d {d}, {h} heads", body


def start(server):
    proc = subprocess.Popen([server, "--listen", "127.0.0.1:0",
                             "--access-log", "off", "--compute-timeout", "0",
                             "--idle-timeout", "600"],
                            stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    port = int(re.search(r"127\.0\.0\.1:(\d+)", line).group(1))
    return proc, port


def post(conn, body, accept):
    headers = {"Content-Type": "application/json"}
    if accept:
        headers["Accept-Encoding"] = accept
    t = time.perf_counter()
    conn.request("POST", "/v1/attention", body, headers)
    reply = conn.getresponse()
    data = reply.read()
    elapsed = time.perf_counter() - t
    if reply.status != 200:
        sys.exit(f"{reply.status}: {data[:200]!r}")
    return data, reply.getheader("Content-Encoding"), elapsed


def cpu_seconds(pid):
    """utime + stime of process pid, all its threads."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(proc, port, name, request, rounds, repeat, codings=CODINGS):
    body = json.dumps(request).encode()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    sizes, plain = {}, None
    times = {c: [] for c, _ in codings}
    cpu = {c: 0.0 for c, _ in codings}
    for _ in range(rounds):
        for label, accept in codings:
            before = cpu_seconds(proc.pid)
            for _ in range(repeat):
                data, coding, elapsed = post(conn, body, accept)
                times[label].append(elapsed)
            cpu[label] += (cpu_seconds(proc.pid) - before) / repeat
            sizes[label] = (len(data), coding or "none")
            if coding is None:
                plain = data
            elif plain is not None:
                inflate = zlib.decompress(data, 31 if coding == "gzip" else 15)
                assert inflate == plain, f"{name}: {coding} does not inflate to the reply"
    conn.close()
    base_bytes, _ = sizes["none"]
    base_ms = statistics.median(times["none"]) * 1e3
    for label, _ in codings:
        size, coding = sizes[label]
        ms = statistics.median(times[label]) * 1e3
        cpu_ms = cpu[label] / rounds * 1e3
        pays = ""
        if coding != "none" and ms > base_ms:
            rate = (base_bytes - size) / ((ms - base_ms) / 1e3) / 1e6
            pays = f"{rate * 8:.0f} Mbit/s"
        elif coding != "none":
            pays = "always"
        print(f"| {name} | {label} | {coding} | {size:,} | {size / base_bytes:.2f} "
              f"| {cpu_ms:.2f} | {ms:.2f} | {pays} |")
    return plain


def levels(reply):
    for level in (1, 6):
        t = time.perf_counter()
        c = zlib.compressobj(level, zlib.DEFLATED, 31)
        size = len(c.compress(reply) + c.flush())
        s = time.perf_counter() - t
        print(f"| zlib level {level} | {size:,} | {size / len(reply):.3f} "
              f"| {s * 1e3:.0f} | {len(reply) / s / 1e6:.0f} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=200)
    args = ap.parse_args()
    proc, port = start(args.server)
    try:
        print("| request | Accept-Encoding | coding | bytes | ratio "
              "| server CPU ms | median ms | pays below |")
        print("| --- | --- | --- | ---: | ---: | ---: | ---: | --- |")
        for i in range(3):
            measure(proc, port, *lesson(i), args.rounds, args.repeat)
        reply = measure(proc, port, *big(256, 16, 256), args.rounds, 1,
                        CODINGS[:3])
    finally:
        proc.terminate()
        proc.wait()
    print()
    print("| the big reply, one thread | bytes | ratio | ms | MB/s |")
    print("| --- | ---: | ---: | ---: | ---: |")
    levels(reply)


if __name__ == "__main__":
    main()
