#!/usr/bin/python3
"""A small concurrent client load against a server we start (for the TSan,
ASan and valgrind runs): each thread sends a fixed mix of valid, invalid and
routing requests, fresh and keep-alive connections, and checks every status.

usage: load.py SERVER_BIN [--wrapper 'valgrind ...'] [--threads N]
               [--requests N] [--timeout S] [--expect-exit 0]
Exits non-zero when any request got an unexpected answer, or when the server
does not exit with --expect-exit after SIGTERM."""
import argparse
import http.client as httpclient
import json
import random
import shlex
import subprocess
import sys
import threading
import time

from robustlib import Failures, Server, attention_body, http

MIX = ("small", "heads", "invalid", "unknown_field", "not_found", "healthz",
       "keepalive", "causal", "big", "modern")


def one(port, kind, rng, timeout):
    if kind == "small":
        s, _, b = http(port, "POST", "/v1/attention",
                       attention_body(rng, 4, 8), timeout=timeout)
        return s == 200 and "output" in json.loads(b), s
    if kind == "heads":
        s, _, b = http(port, "POST", "/v1/attention",
                       attention_body(rng, 16, 16, 4, {"return": [
                           "weights", "output", "masked_scores"]}),
                       timeout=timeout)
        return s == 200, s
    if kind == "causal":
        s, _, b = http(port, "POST", "/v1/attention",
                       attention_body(rng, 6, 4, 2, {"causal": True,
                                                     "dtype": "float32"}),
                       timeout=timeout)
        return s == 200, s
    if kind == "modern":
        # RoPE, the sinusoidal encoding, a KV cache of 3 positions, grouped
        # heads, a window and per-head masks through every pass of the core,
        # the reply cut to two of the four heads
        cache = [[[rng.uniform(-1, 1) for _ in range(4)] for _ in range(3)]
                 for _ in range(2)]
        s, _, b = http(port, "POST", "/v1/attention",
                       attention_body(rng, 9, 16, 4, {
                           "num_kv_heads": 2, "rope": {"style": "interleaved"},
                           "positional_encoding": "sinusoidal",
                           "w_k": [[rng.uniform(-1, 1) for _ in range(8)]
                                   for _ in range(16)],
                           "w_v": [[rng.uniform(-1, 1) for _ in range(8)]
                                   for _ in range(16)],
                           "past_k": cache, "past_v": cache, "window": 4,
                           "causal": True, "mask": [[[True] * 12] * 9] * 4,
                           "heads": [3, 1],
                           "return": ["x_pe", "q_rope", "k_cache", "weights",
                                      "output"]}),
                       timeout=timeout)
        if s != 200:
            return False, s
        doc = json.loads(b)
        return (doc["shapes"]["k_cache"] == [2, 12, 4] and
                doc["shapes"]["weights"] == [2, 9, 12] and
                len(doc["weights"]) == 2), s
    if kind == "big":
        # tensors past 64 KiB of text: parsed row by row on the pool
        # (server/json/parse_rows.cpp); (4, 128, 128) weights: formatted in pieces
        # on the pool and sent as parts (server/base/buf_chain.h)
        s, _, b = http(port, "POST", "/v1/attention",
                       attention_body(rng, 128, 128, 4,
                                      {"return": ["output", "weights"]}),
                       timeout=timeout)
        if s != 200:
            return False, s
        doc = json.loads(b)
        return (len(doc["output"]) == 128 and len(doc["weights"]) == 4 and
                len(doc["weights"][3][127]) == 128), s
    if kind == "invalid":
        s, _, b = http(port, "POST", "/v1/attention", b'{"x":[[1,2],[3]]',
                       timeout=timeout)
        return s == 400 and json.loads(b)["code"] == "invalid_json", s
    if kind == "unknown_field":
        s, _, b = http(port, "POST", "/v1/attention",
                       b'{"x":[[1]],"W_q":[[1]],"w_k":[[1]],"w_v":[[1]]}',
                       timeout=timeout)
        return s == 400 and json.loads(b)["pointer"] == "/W_q", s
    if kind == "not_found":
        s, _, _ = http(port, "GET", "/nope", timeout=timeout)
        return s == 404, s
    if kind == "healthz":
        s, _, _ = http(port, "GET", "/healthz", timeout=timeout)
        return s == 200, s
    # three requests on one keep-alive connection
    c = httpclient.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        for _ in range(3):
            c.request("POST", "/v1/attention", attention_body(rng, 3, 4),
                      {"Content-Type": "application/json"})
            r = c.getresponse()
            r.read()
            if r.status != 200:
                return False, r.status
        return True, 200
    finally:
        c.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("server")
    ap.add_argument("--wrapper", default="")
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--requests", type=int, default=40,
                    help="per thread")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--server-threads", type=int, default=2)
    ap.add_argument("--expect-exit", type=int, default=0)
    ap.add_argument("--term-timeout", type=float, default=300.0)
    ap.add_argument("--tsan", action="store_true",
                    help="ThreadSanitizer build: its deferred signal "
                    "handling can leave SIGTERM undelivered in an idle "
                    "process; kill it then instead of failing (the drain "
                    "path is tested without TSan by test_faults.py)")
    args = ap.parse_args()

    srv = Server(args.server, ["--threads", str(args.server_threads)],
                 wrapper=shlex.split(args.wrapper),
                 start_timeout=120.0)
    f = Failures()
    bad = []
    lock = threading.Lock()

    def worker(tid):
        rng = random.Random(tid)
        for i in range(args.requests):
            kind = MIX[(i + tid) % len(MIX)]
            try:
                ok, status = one(srv.port, kind, rng, args.timeout)
            except Exception as e:  # noqa: BLE001 - any failure is a finding
                ok, status = False, repr(e)
            if not ok:
                with lock:
                    bad.append((kind, status))

    t0 = time.monotonic()
    threads = [threading.Thread(target=worker, args=(t,))
               for t in range(args.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.monotonic() - t0
    total = args.threads * args.requests
    print(f"load: {total} requests from {args.threads} threads in "
          f"{took:.1f} s, {len(bad)} unexpected", flush=True)
    f.check(not bad, f"every answer as expected (first bad: {bad[:5]})")
    try:
        code = srv.terminate(timeout=args.term_timeout)
    except subprocess.TimeoutExpired:
        srv.kill()
        if not args.tsan:
            raise
        print("  note  TSan build did not act on SIGTERM within "
              f"{args.term_timeout:.0f} s (deferred signal); killed", flush=True)
        code = None
    if code is not None:
        f.check(code == args.expect_exit,
                f"server exit code {code} after SIGTERM (want "
                f"{args.expect_exit}); log {srv.log_path}")
    f.exit("load")


if __name__ == "__main__":
    main()
