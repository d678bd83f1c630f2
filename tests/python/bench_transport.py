#!/usr/bin/python3
"""How the Python client's arrays should travel: one request end to end
(arrays encoded, posted, the reply read back into NumPy arrays) as /v1 JSON,
/v1 base64 ({"shape", "base64"} both ways) and /v2 binary tensor data, at a
few sizes, median of ROUNDS after a warm-up.  Standard library and NumPy
only, on one keep-alive connection, so only the transport differs.

    tests/python/bench_transport.py [--server build/attention-server]
"""
import argparse
import base64
import http.client
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "oracle"))
from serverproc import Server, default_server  # noqa: E402

ROUNDS = 15
STAGES = ["output", "weights"]
# (B, n, d, h): the (4, 16, 64), a long sequence, a wide batch
SIZES = [(4, 16, 64, 4), (1, 256, 256, 8), (8, 128, 128, 8)]


def arrays(b, n, d):
    rng = np.random.default_rng(0)
    return {"x": rng.normal(size=(b, n, d)), "w_q": rng.normal(size=(d, d)),
            "w_k": rng.normal(size=(d, d)), "w_v": rng.normal(size=(d, d))}


def post(conn, path, body, headers):
    conn.request("POST", path, body=body, headers=headers)
    resp = conn.getresponse()
    data = resp.read()
    if resp.status != 200:
        raise RuntimeError(data[:200])
    return resp, data


def v1_json(conn, a, h):
    body = {k: v.tolist() for k, v in a.items()}
    body.update(num_heads=h, **{"return": STAGES})
    _, data = post(conn, "/v1/attention", json.dumps(body).encode(),
                   {"Content-Type": "application/json"})
    reply = json.loads(data)
    return {s: np.array(reply[s]) for s in STAGES}, len(data)


def v1_base64(conn, a, h):
    body = {k: {"shape": list(v.shape),
                "base64": base64.b64encode(v.astype("<f8").tobytes()).decode()}
            for k, v in a.items()}
    body.update(num_heads=h, encoding="base64", **{"return": STAGES})
    _, data = post(conn, "/v1/attention", json.dumps(body).encode(),
                   {"Content-Type": "application/json"})
    reply = json.loads(data)
    return {s: np.frombuffer(base64.b64decode(reply[s]["base64"]), "<f8")
            .reshape(reply[s]["shape"]) for s in STAGES}, len(data)


def v2_binary(conn, a, h):
    raw = [v.astype("<f8").tobytes() for v in a.values()]
    head = json.dumps({
        "inputs": [{"name": k, "shape": list(v.shape), "datatype": "FP64",
                    "parameters": {"binary_data_size": len(r)}}
                   for (k, v), r in zip(a.items(), raw)],
        "outputs": [{"name": s, "parameters": {"binary_data": True}}
                    for s in STAGES],
        "parameters": {"num_heads": h}}).encode()
    resp, data = post(conn, "/v2/models/attention/infer",
                      b"".join([head] + raw),
                      {"Inference-Header-Content-Length": str(len(head))})
    size = int(resp.getheader("Inference-Header-Content-Length"))
    reply, out, at = json.loads(data[:size]), {}, size
    for o in reply["outputs"]:
        n = o["parameters"]["binary_data_size"]
        out[o["name"]] = np.frombuffer(data[at:at + n], "<f8") \
            .reshape(o["shape"])
        at += n
    return out, len(data)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", default=default_server())
    args = parser.parse_args()
    ways = [("v1 json", v1_json), ("v1 base64", v1_base64),
            ("v2 binary", v2_binary)]
    with Server(args.server, "--threads", "2") as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port,
                                          timeout=120)
        for b, n, d, h in SIZES:
            a = arrays(b, n, d)
            want = None
            for name, way in ways:
                got, size = way(conn, a, h)  # warm-up, and same numbers
                if want is None:
                    want = got
                for s in STAGES:
                    assert np.array_equal(got[s], want[s]), (name, s)
                times = []
                for _ in range(ROUNDS):
                    t = time.perf_counter()
                    way(conn, a, h)
                    times.append(time.perf_counter() - t)
                print(f"B={b} n={n} d={d} h={h} {name:9}: "
                      f"{statistics.median(times) * 1e3:7.1f} ms median, "
                      f"reply {size / 1e3:8.0f} KB")
        conn.close()


if __name__ == "__main__":
    main()
