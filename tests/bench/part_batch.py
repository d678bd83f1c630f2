"""Part 4 of run_bench.py: a batch of sequences in one request against the
same sequences one by one."""
import http.client
import json
import math
import time

import numpy as np

from harness import BenchError, median, pause, post, start_ours

BATCH_SEQUENCES = 8  # B of the batch row: the size the API's users batch
BATCH_SIZE, BATCH_QUICK_SIZE = (256, 256, 8), (32, 32, 4)  # n, d, h


def answer(reply, which):
    """The output of a 200 reply; anything else fails the run."""
    status, data = reply
    if status != 200:
        raise BenchError(f"{which} answered {status}: {data[:300]!r}")
    return json.loads(data)["output"]


def run(args):
    """B sequences in one request vs the same B sent one after another on
    one keep-alive connection (the same numbers either way)."""
    rng = np.random.default_rng(8)
    n, d, h = BATCH_QUICK_SIZE if args.quick else BATCH_SIZE
    weights = {k: (rng.normal(size=(d, d)) / math.sqrt(d)).tolist()
               for k in ("w_q", "w_k", "w_v", "w_o")}
    xs = rng.normal(size=(BATCH_SEQUENCES, n, d))
    common = dict(weights, num_heads=h, **{"return": ["output"]})
    batch = json.dumps(dict(common, x=xs.tolist())).encode()
    singles = [json.dumps(dict(common, x=x.tolist())).encode() for x in xs]
    srv = start_ours(args)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=600)
        whole = answer(post(None, batch, conn), "the batch")
        for b, payload in enumerate(singles):
            if answer(post(None, payload, conn), f"sequence {b}") != whole[b]:
                raise BenchError(f"batch sequence {b} differs from alone")
        lat = {"one batch": [], "one by one": []}
        for r in range(args.mid_reps):
            pause()
            start = time.perf_counter()
            post(None, batch, conn)
            lat["one batch"].append(time.perf_counter() - start)
            pause()
            start = time.perf_counter()
            for payload in singles:
                post(None, payload, conn)
            lat["one by one"].append(time.perf_counter() - start)
    finally:
        srv.stop()
    return {"lat": lat, "size": (n, d, h)}


def batch_table(res):
    lat, (n, d, _) = res["lat"], res["size"]
    one, each = median(lat["one batch"]), median(lat["one by one"])
    return ["| requests | median ms | ÷ one batch |", "|---|---:|---:|",
            f"| one request, x ({BATCH_SEQUENCES}, {n}, {d}) "
            f"| {one * 1e3:.1f} | 1 |",
            f"| {BATCH_SEQUENCES} requests, x ({n}, {d}) each, "
            f"keep-alive | {each * 1e3:.1f} | {each / one:.2f}× |"]


def section(batch, args):
    n, d, h = batch["size"]
    return [f"### A batch of {BATCH_SEQUENCES} sequences (n={n}, d={d}, "
            f"h={h}, w_o, output only) vs its sequences one by one", "",
            "One server, one keep-alive connection, the same numbers "
            "either way (checked).", ""] + batch_table(batch)


def targets(batch):
    return []  # the batch part has none: its table is read as it is
