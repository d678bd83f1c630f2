#!/usr/bin/python3
"""A failed allocation is answered 503 (out_of_memory, Retry-After) and the
process lives on: the server runs with an LD_PRELOAD malloc that refuses
every allocation of 100 MiB or more, and gets a request whose (h, n, n)
weights need 128 MiB, then ordinary requests.

usage: test_alloc_failure.py SERVER_BIN FAILMALLOC_SO"""
import json
import random
import sys

from robustlib import Failures, Server, attention_body, check_ok, http

REFUSE_FROM = 100 << 20  # bytes: malloc() of this much or more fails
# weights (4, 2048, 2048) in float64 = 128 MiB, within every default limit
BIG = {"n": 2048, "d": 8, "heads": 4}


def main():
    binary, shim = sys.argv[1], sys.argv[2]
    rng = random.Random(7)
    f = Failures()
    server = Server(binary, env={"LD_PRELOAD": shim,
                                 "FAILMALLOC_MIN_BYTES": str(REFUSE_FROM)})
    try:
        big = attention_body(rng, BIG["n"], BIG["d"], BIG["heads"],
                             {"return": ["weights"]})
        for attempt in range(3):
            status, headers, body = http(server.port, "POST", "/v1/attention",
                                         big, timeout=60)
            doc = json.loads(body) if body else {}
            print(f"  request needing 128 MiB with malloc refusing "
                  f"{REFUSE_FROM >> 20} MiB: {status} {doc.get('code')}, "
                  f"Retry-After {headers.get('retry-after')}")
            f.check(status == 503 and doc.get("code") == "out_of_memory",
                    f"attempt {attempt + 1}: 503 out_of_memory")
            f.check(headers.get("retry-after") == "1", "with Retry-After")
            small = attention_body(rng, 8, 8, 2)
            status, _, body = http(server.port, "POST", "/v1/attention", small)
            try:
                check_ok(status, body, "a small request after it")
                f.check(True, "a small request after it is served 200")
            except AssertionError as e:
                f.check(False, str(e))
        status, _, _ = http(server.port, "GET", "/healthz")
        f.check(status == 200, "/healthz still 200")
    finally:
        code = server.terminate()
    f.check(code == 0, f"exit code 0 after SIGTERM (got {code})")
    f.exit("test_alloc_failure")


if __name__ == "__main__":
    main()
