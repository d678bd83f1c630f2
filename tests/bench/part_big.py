"""Part 3 of run_bench.py: a mid-size and a large request end to end,
through /v1 and the Open Inference Protocol (/v2), against a FastAPI peer;
each server's peak and idle resident memory."""
import http.client
import json
import os
import sys
import time

import numpy as np

from harness import (HERE, OURS, BenchError, check_same_answer, median,
                     pause, post, random_body, start_fastapi, start_ours,
                     stop_servers, verdict)

sys.path.insert(0, os.path.join(HERE, "..", "oip"))
from oip_client import (InferInput, InferRequestedOutput,  # noqa: E402
                        inference_request)

# our other routes in part 3: the Open Inference Protocol, binary and JSON
V2_BINARY, V2_JSON = f"{OURS} /v2 binary", f"{OURS} /v2 JSON"

# After the big requests, how long the servers are left idle before their
# resident memory is read again: past the 5 s after which ours gives freed
# memory back (ALLOC_SETUP_IDLE_SECONDS); the smoke run does not wait.
IDLE_SECONDS, QUICK_IDLE_SECONDS = 6, 0.5

# Part 3's mid-size and large requests (n, d, h); the smoke run sends
# small ones through the same code (its figures are not read)
BIG_SIZES = {"mid": (256, 256, 8), "large": (1024, 512, 8)}
BIG_QUICK_SIZES = {"mid": (64, 64, 4), "large": (128, 64, 4)}


def v2_body(body, binary):
    """(bytes, Inference-Header-Content-Length or None) of a /v1 body as an
    Open Inference Protocol request, its tensors binary or JSON."""
    inputs = []
    npdt, datatype = ((np.float32, "FP32") if body.get("dtype") == "float32"
                      else (np.float64, "FP64"))
    for k in ("x", "w_q", "w_k", "w_v", "w_o"):
        if k in body:
            a = np.asarray(body[k], dtype=npdt)
            inputs.append(InferInput(k, a.shape, datatype)
                          .set_data_from_numpy(a, binary_data=binary))
    outputs = [InferRequestedOutput(s, binary_data=binary)
               for s in body.get("return", ["weights", "output"])]
    return inference_request(inputs, outputs,
                             parameters={"num_heads": body["num_heads"]})


def post_v2(conn, payload):
    """POSTs an OIP request (bytes, header length); returns (status, body)."""
    data, json_size = payload
    headers = ({} if json_size is None else
               {"Inference-Header-Content-Length": str(json_size)})
    for attempt in (1, 2):
        try:
            conn.request("POST", "/v2/models/attention/infer", body=data,
                         headers=headers)
            r = conn.getresponse()
            break
        except (BrokenPipeError, ConnectionResetError,
                http.client.RemoteDisconnected):
            # a kept-alive connection the server closed after --idle-timeout
            # while other servers were timed: opened again, as post() does
            if attempt == 2:
                raise
            conn.close()
    return r.status, r.read(), r.getheader("Inference-Header-Content-Length")


def v2_outputs(answer):
    """{name: array} of an OIP reply, binary outputs read as tritonclient
    reads them."""
    status, data, length = answer
    if status != 200:
        raise BenchError(f"/v2 answered {status}: {data[:300]!r}")
    head = json.loads(data[:int(length)] if length else data)
    rest, out = data[int(length):] if length else b"", {}
    for o in head["outputs"]:
        size = o.get("parameters", {}).get("binary_data_size")
        if size is None:
            a = np.array([-np.inf if v is None else v for v in o["data"]])
        else:
            kind = {"FP64": "<f8", "FP32": "<f4"}[o["datatype"]]
            a, rest = np.frombuffer(rest[:size], kind), rest[size:]
        out[o["name"]] = a.reshape(o["shape"])
    return out


def check_v2_same_as_v1(v1_answer, v2_answer, fields, which):
    """/v2 gives /v1's very numbers."""
    v1, v2 = json.loads(v1_answer[1]), v2_outputs(v2_answer)
    for f in fields:
        # /v1 writes a float32 in its shortest digits: read back as float32
        if not np.array_equal(np.array(v1[f], dtype=v2[f].dtype), v2[f]):
            raise BenchError(f"{which} differs from /v1 on {f}")


def run(args):
    big = BIG_QUICK_SIZES if args.quick else BIG_SIZES
    mid, large = big["mid"], big["large"]
    shape = "n={}, d={}, h={}"
    sizes = [(f"mid: {shape.format(*mid)}, w_o, weights",
              random_body(*mid, seed=mid[0], w_o=True,
                          ret=["output", "weights"]), args.mid_reps,
              ["output", "weights"]),
             (f"large: {shape.format(*large)}, output only",
              random_body(*large, seed=large[0], ret=["output"]),
              args.large_reps, ["output"]),
             # the same problem in the datatype model servers exchange
             # (tritonclient's FP32); its JSON holds each float32 as the
             # float64 digits a client's json.dumps(a.tolist()) writes
             (f"large float32: {shape.format(*large)}, output only",
              random_body(*large, seed=large[0], ret=["output"],
                          dtype="float32"),
              args.large_reps, ["output"])]
    results, servers = [], {}
    try:
        for label, body, reps, fields in sizes:
            payload = json.dumps(body).encode()
            v2_payloads = {V2_BINARY: v2_body(body, True),
                           V2_JSON: v2_body(body, False)}
            dtype = body.get("dtype", "float64")
            del body
            if not servers:  # fresh per size (the smoke run keeps its pair)
                servers[OURS] = start_ours(args)
                # one process, so that its VmHWM is the whole server's;
                # NumPy may use both cores through OpenBLAS, as ours does
                # through its pool
                servers["fastapi"] = start_fastapi(args, workers=1,
                                                   blas_threads=2)
            conns = {s: http.client.HTTPConnection(
                "127.0.0.1", srv.port, timeout=600)
                for s, srv in servers.items()}
            base = {s: srv.vm_hwm_kib() for s, srv in servers.items()}
            first = {s: post(None, payload, conns[s]) for s in servers}
            check_same_answer("fastapi", None, first["attention-server"],
                              first["fastapi"], fields, dtype)
            # the same server through /v2, on a connection of its own
            for v2, v2_payload in v2_payloads.items():
                conns[v2] = http.client.HTTPConnection(
                    "127.0.0.1", servers[OURS].port, timeout=600)
                check_v2_same_as_v1(first[OURS],
                                    post_v2(conns[v2], v2_payload), fields, v2)
            lat = {s: [] for s in conns}
            names = list(conns)
            for r in range(reps):
                for s in names[r % len(names):] + names[:r % len(names)]:
                    pause()
                    start = time.perf_counter()
                    if s in v2_payloads:
                        status = post_v2(conns[s], v2_payloads[s])[0]
                    else:
                        status, data = post(None, payload, conns[s])
                    lat[s].append(time.perf_counter() - start)
                    if status != 200:
                        raise BenchError(f"{s} answered {status}")
            peak = {s: srv.vm_hwm_kib() for s, srv in servers.items()}
            # while requests come, freed buffers are kept for the next one;
            # once idle, memory goes back (the server waits 1 s for that)
            time.sleep(args.idle_seconds)
            idle = {s: srv.vm_hwm_kib("VmRSS:")
                    for s, srv in servers.items()}
            if not args.quick:
                stop_servers(servers)
            results.append({"label": label, "bytes": len(payload),
                            "v2_bytes": {v: len(p[0])
                                         for v, p in v2_payloads.items()},
                            "response_bytes": len(first[OURS][1]),
                            "lat": lat, "base": base, "peak": peak,
                            "idle": idle})
    finally:
        stop_servers(servers)
    return results


def big_table(results):
    lines = ["| request | server | median ms | peak RSS MiB (before) "
             "| RSS MiB once idle | this ÷ ours (time) |",
             "|---|---|---:|---:|---:|---:|"]
    for r in results:
        ours = median(r["lat"]["attention-server"])
        for s, xs in r["lat"].items():
            m = median(xs)
            size = r["v2_bytes"].get(s, r["bytes"])
            # /v2 runs in our process: its memory is in our rows
            server = OURS if s in r["v2_bytes"] else s
            lines.append(
                f"| {r['label']} ({size / 1e6:.1f} MB in) | {s} "
                f"| {m * 1e3:.1f} | {r['peak'][server] / 1024:.0f} "
                f"({r['base'][server] / 1024:.0f}) "
                f"| {r['idle'][server] / 1024:.0f} | {m / ours:.3g}× |")
    return lines


def targets(big):
    """One line per target of the big requests, with the measured figure."""
    lines = []
    r = big[0]
    x = median(r["lat"]["fastapi"]) / median(r["lat"]["attention-server"])
    lines.append(f"- mid-size ≥ 10× faster than FastAPI end to end: "
                 f"{x:.2f}× — {verdict(x >= 10)}")
    # read on the float32 problem, the datatype OIP clients send
    # (tritonclient's FP32); the float64 one printed beside it
    for r in big[1:]:
        x = median(r["lat"][OURS]) / median(r["lat"][V2_BINARY])
        if "float32" in r["label"]:
            lines.append(f"- large float32: binary /v2 ≥ 3× faster end "
                         f"to end than JSON /v1: {x:.2f}× — "
                         f"{verdict(x >= 3)}")
        else:
            lines.append(f"- large float64, beside it: binary /v2 "
                         f"{x:.2f}× faster end to end than JSON /v1 "
                         f"(its compute is twice float32's)")
    return lines


def section(big, args):
    return ["### Big requests, end to end (one client, keep-alive)", "",
            "Fresh servers per size; FastAPI as one uvicorn process with "
            "OpenBLAS on 2 threads; peak RSS = VmHWM after the requests "
            "(VmHWM before the first in brackets); then VmRSS once the "
            f"server has been idle for {args.idle_seconds:g} s.", ""] + \
        big_table(big)
