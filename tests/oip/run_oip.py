#!/usr/bin/python3
"""The Open Inference Protocol (/v2) against the server's own /v1.

Every test drives the release server through oip_client.py, which frames
requests and reads replies as tritonclient.http does:
  - health, readiness and metadata answer what the protocol says, and the
    model's metadata lists exactly the schema's tensors and the core's
    stages (from the build of tests/contract/print_schema.c);
  - the three lessons and ORACLE_CASES of the oracle's random requests (the
    lessons' forms, PyTorch's, grouped heads, batches, q/k/v given) give,
    through /v2, the very bytes /v1 gives (its base64 encoding), with JSON
    tensors and with binary ones, both ways;
  - binary framing both ways: Inference-Header-Content-Length, each output's
    binary_data_size and their order, binary_data_output and a per-output
    binary_data overriding it, binary inputs beside JSON ones, BOOL masks,
    FP32, −∞ in a binary masked_scores;
  - every error a client can provoke, with its status, code, message and
    pointer, exactly; and the HTTP layer's errors on /v2 (404, 405, 401,
    413) in the protocol's {"error": ...} shape.
"""
import argparse
import base64
import json
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "oracle"))
sys.path.insert(0, os.path.join(HERE, "..", "lessons"))
from lessons import LESSONS  # noqa: E402
from oip_client import (NP_OF, Client, InferInput,  # noqa: E402
                        InferRequestedOutput, InferenceServerException,
                        inference_request)
from serverproc import Server, default_server  # noqa: E402
import run_oracle  # noqa: E402

MODEL = "attention"
INFER = f"/v2/models/{MODEL}/infer"
ORACLE_CASES = 50
# the /v1 members that are not tensors and travel as request parameters
NOT_PARAMETERS = ("dtype", "return", "encoding", "tokens", "context_tokens")

failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("  FAIL", what)


# ---- requests: /v1 body → OIP -------------------------------------------


def oip_inputs(req, binary):
    """The tensors of a /v1 request as InferInputs (binary or JSON data)."""
    npdt = np.float32 if req.get("dtype") == "float32" else np.float64
    inputs = []
    for name, value in req.items():
        if name in NOT_PARAMETERS or not isinstance(value, list):
            continue
        a = np.asarray(value)
        if a.dtype.kind in "iu" and (name.endswith("positions") or
                                     name == "heads"):
            a = a.astype(np.int64)  # whole numbers travel as INT64
        elif a.dtype != bool:
            a = a.astype(npdt)
        datatype = {np.dtype(bool): "BOOL", np.dtype(np.float32): "FP32",
                    np.dtype(np.float64): "FP64",
                    np.dtype(np.int64): "INT64"}[a.dtype]
        inputs.append(InferInput(name, a.shape, datatype)
                      .set_data_from_numpy(a, binary_data=binary))
    return inputs


def oip_parameters(req):
    return {k: v for k, v in req.items()
            if k not in NOT_PARAMETERS and not isinstance(v, list)}


def v1_bytes(server, req):
    """{stage: little-endian bytes} of /v1's answer in base64."""
    status, body = server.post(dict(req, encoding="base64"))
    if status != 200:
        raise AssertionError(f"/v1 answered {status}: {body}")
    return {s: base64.b64decode(body[s]["base64"]) for s in req["return"]}


def v2_bytes(client, req, binary_in, binary_out):
    """{stage: little-endian bytes} of /v2's answer to the same request."""
    dtype = np.float32 if req.get("dtype") == "float32" else np.float64
    outputs = [InferRequestedOutput(s, binary_data=binary_out)
               for s in req["return"]]
    result = client.infer(MODEL, oip_inputs(req, binary_in), outputs,
                          parameters=oip_parameters(req))
    got = {}
    for s in req["return"]:
        # as tritonclient reads it: JSON data (a masked key of
        # masked_scores is the string "-inf") or binary, by the datatype
        a = result.as_numpy(s)
        got[s] = np.ascontiguousarray(a, dtype=np.dtype(dtype)
                                      .newbyteorder("<")).tobytes()
    return got


def in_dtype(req):
    """req with every number of a tensor representable in its dtype, as the
    protocol sends it (/v1 takes alibi_slopes as float64 in a float32
    request; an FP32 input cannot)."""
    npdt = np.float32 if req.get("dtype") == "float32" else np.float64
    out = dict(req)
    for name, value in req.items():
        a = np.asarray(value) if isinstance(value, list) else None
        if name not in NOT_PARAMETERS and a is not None and a.dtype.kind == "f":
            out[name] = a.astype(npdt).astype(np.float64).tolist()
    return out


def same_as_v1(server, client, req, what):
    req = in_dtype(req)
    want = v1_bytes(server, req)
    for binary_in, binary_out in ((False, False), (True, True),
                                  (True, False)):
        got = v2_bytes(client, req, binary_in, binary_out)
        for s in req["return"]:
            expect(got[s] == want[s],
                   f"{what}: {s} differs from /v1 (binary inputs "
                   f"{binary_in}, binary outputs {binary_out})")


# ---- tests --------------------------------------------------------------


def test_health_and_metadata(server, client, schema):
    expect(client.is_server_live(), "server live")
    expect(client.is_server_ready(), "server ready")
    expect(client.is_model_ready(MODEL), "model ready")
    expect(not client.is_model_ready("gpt"), "an unknown model is not ready")
    for path, body in (("/v2/health/live", b'{"live":true}\n'),
                       ("/v2/health/ready", b'{"ready":true}\n'),
                       ("/v2/models/attention/ready",
                        b'{"name":"attention","ready":true}\n')):
        status, _, got = client.request("GET", path)
        expect(status == 200 and got == body, f"GET {path}: {status} {got}")
    meta = client.get_server_metadata()
    expect(meta == {"name": "attention", "version": meta.get("version"),
                    "extensions": ["binary_tensor_data", "model_configuration",
                                   "statistics", "model_repository"]}
           and meta["version"], f"server metadata {meta}")
    model = client.get_model_metadata(MODEL)
    leaf = {"number": "FP64", "boolean": "BOOL", "either": "BOOL"}
    # whole-number inputs (positions, heads) are listed as INT64
    inputs = [{"name": f["name"],
               "datatype": "INT64" if f["whole"] else leaf[f["leaf"]],
               "shape": [-1] * f["min_rank"]}
              for f in schema["fields"] if f["kind"] == "tensor"]
    ranks = {"x_pe": 2, "concat": 2, "output": 2}
    outputs = [{"name": s, "datatype": "FP64",
                "shape": [-1] * ranks.get(s, 3)} for s in schema["stages"]]
    expect(model == {"name": "attention", "versions": ["1"],
                     "platform": "attention",
                     "inputs": inputs, "outputs": outputs},
           f"model metadata {json.dumps(model)[:300]}")


def test_triton_extensions(server, client, schema):
    """The model configuration, statistics and repository, as tritonclient
    asks for them: every tensor of the metadata in the configuration, the
    statistics counting what this test sends, the one model indexed."""
    model = client.get_model_metadata(MODEL)
    for version in ("", "1"):
        config = client.get_model_config(MODEL, version)
        expect(config["name"] == MODEL and config["max_batch_size"] == 0,
               f"config {json.dumps(config)[:200]}")
        for key, listed in (("input", model["inputs"]),
                            ("output", model["outputs"])):
            want = [{"name": t["name"], "data_type": "TYPE_" + t["datatype"],
                     "dims": t["shape"]} for t in listed]
            got = [{k: t[k] for k in ("name", "data_type", "dims")}
                   for t in config[key]]
            expect(got == want, f"config {key}s: {got[:3]} vs {want[:3]}")
    # statistics: before and after one success (a batch of 2) and one
    # refusal, which count as Triton counts them
    before = client.get_inference_statistics(MODEL)["model_stats"][0]
    x = np.arange(8.0).reshape(2, 2, 2)
    eye = np.eye(2)
    inputs = []
    for name, a in (("x", x), ("w_q", eye), ("w_k", eye), ("w_v", eye)):
        i = InferInput(name, a.shape, "FP64")
        i.set_data_from_numpy(a)
        inputs.append(i)
    client.infer(MODEL, inputs)
    try:
        client.infer(MODEL, inputs[:1])
        expect(False, "an inference without weights succeeded")
    except InferenceServerException:
        pass
    for name, version in ((MODEL, ""), (MODEL, "1"), ("", "")):
        after = client.get_inference_statistics(name, version)
        stat = after["model_stats"][0]
        expect(len(after["model_stats"]) == 1 and stat["name"] == MODEL
               and stat["version"] == "1", f"stats {after}")
        got, was = stat["inference_stats"], before["inference_stats"]
        expect(stat["inference_count"] - before["inference_count"] == 2 and
               stat["execution_count"] - before["execution_count"] == 1 and
               got["success"]["count"] - was["success"]["count"] == 1 and
               got["fail"]["count"] - was["fail"]["count"] == 1 and
               stat["last_inference"] >= before["last_inference"] and
               stat["last_inference"] > 0,
               f"stats counted {stat} after {before}")
        for d in ("success", "fail", "queue", "compute_input",
                  "compute_infer", "compute_output"):
            expect(got[d]["ns"] > was[d]["ns"] or d == "queue",
                   f"stats {d}: {got[d]} after {was[d]}")
        expect(got["compute_infer"]["ns"] < got["success"]["ns"],
               f"compute_infer within success: {got}")
    index = client.get_model_repository_index()
    expect(index == [{"name": MODEL, "version": "1", "state": "READY",
                      "reason": ""}], f"repository index {index}")
    client.load_model(MODEL)
    try:
        client.unload_model(MODEL)
        expect(False, "the built-in model was unloaded")
    except InferenceServerException as e:
        expect(e.status == 422 and "cannot be unloaded" in str(e),
               f"unload: {e.status} {e}")
    for path in ("/v2/models/gpt/config", "/v2/models/gpt/stats",
                 "/v2/repository/models/gpt/load"):
        status, _, body = client.request("GET" if "load" not in path
                                         else "POST", path)
        expect(status == 404 and b'"error"' in body, f"{path}: {status}")


def test_lessons_match_v1(server, client):
    for number, lesson in LESSONS.items():
        request, expected = lesson()
        req = dict(request, **{"return": list(expected)})
        same_as_v1(server, client, req, f"lesson {number}")
        # and its numbers are the lesson's
        got = v2_bytes(client, req, True, True)
        for stage, want in expected.items():
            a = np.frombuffer(got[stage], "<f8").reshape(want.shape)
            expect(np.abs(a - want).max() <= 1e-13 * np.abs(want).max(),
                   f"lesson {number}: {stage} is not the lesson's")


def test_oracle_cases_match_v1(server, client):
    rng = np.random.default_rng(16)
    # the lessons' forms, then PyTorch's forms, grouped heads, positions,
    # windows and ALiBi, batches and q, k, v given directly, then RoPE (its
    # object as a parameter), the sinusoidal encoding and a KV cache (past_k
    # and past_v as inputs) and some heads only, as the oracle builds them
    third = ORACLE_CASES // 3
    indices = list(range(third)) + list(
        range(run_oracle.PARITY_FROM, run_oracle.PARITY_FROM + third)) + list(
        range(run_oracle.MODERN_FROM,
              run_oracle.MODERN_FROM + ORACLE_CASES - 2 * third))
    for i in indices:
        req = run_oracle.random_request(rng, i)
        if i >= run_oracle.PARITY_FROM:
            if i % 4 == 1:
                run_oracle.grouped(rng, req)
            run_oracle.add_biases(rng, req, i)
            if i % 5 == 2:
                run_oracle.add_positional(rng, req, i)
            if i >= run_oracle.MODERN_FROM:
                run_oracle.add_modern(rng, req, i)
            if i % 3 == 0:
                req, _ = run_oracle.batch_of(rng, req, i)
            chosen = (run_oracle.some_heads(req, i)
                      if i >= run_oracle.MODERN_FROM else None)
            req = (run_oracle.given_form(req)[0] if i % 3 == 1
                   else run_oracle.torch_form(req, i))
            if chosen:  # some query heads only, an INT64 input
                req = dict(req, heads=chosen[0])
        same_as_v1(server, client, req, f"oracle request {i}")
    print(f"  {len(indices)} oracle requests, 3 framings each")


def test_float32_inputs_of_every_kind(server, client):
    """An FP32 request's inputs are read as sent (binary FP32 is kept as
    float32): weights, an additive mask, ALiBi slopes, a KV cache and the
    INT64 positions and heads beside them give /v1's very bytes."""
    rng = np.random.default_rng(32)
    n, past, d, h = 5, 3, 8, 2
    req = {"dtype": "float32", "num_heads": h, "causal": True,
           "x": rng.normal(size=(n, d)).tolist(),
           "past_k": rng.normal(size=(h, past, d // h)).tolist(),
           "past_v": rng.normal(size=(h, past, d // h)).tolist(),
           "mask": rng.normal(size=(n, past + n)).tolist(),
           "alibi_slopes": [0.75, 0.0625],
           "positions": list(range(past, past + n)),
           "heads": [1, 0],
           "return": ["output", "weights", "k_cache"]}
    for w in ("w_q", "w_k", "w_v", "w_o"):
        req[w] = (rng.normal(size=(d, d)) / 3).tolist()
    same_as_v1(server, client, req, "float32 inputs of every kind")


def test_half_precision_inputs(server, client):
    """FP16 inputs (JSON and binary) and BF16 ones (binary, from float32
    arrays as tritonclient sends them) give /v1's very bytes in float16 and
    bfloat16, both ways: the reply in the inputs' datatype."""
    rng = np.random.default_rng(16)
    n, d, h = 6, 8, 2
    wide = {"x": rng.normal(size=(n, d)), "mask": rng.normal(size=(n, n))}
    for w in ("w_q", "w_k", "w_v", "w_o"):
        wide[w] = rng.normal(size=(d, d)) / 3
    stages = ["output", "weights", "q"]
    for dtype, datatype in (("float16", "FP16"), ("bfloat16", "BF16")):
        # numbers of the type: float16 through NumPy, bfloat16 as the
        # float32 whose lower two bytes are zero
        typed = {k: v.astype(np.float16).astype(np.float32)
                 if dtype == "float16" else
                 (v.astype(np.float32).view(np.uint32) & 0xFFFF0000)
                 .view(np.float32) for k, v in wide.items()}
        req = {k: v.astype(np.float64).tolist() for k, v in typed.items()}
        want = v1_bytes(server, dict(req, dtype=dtype, num_heads=h,
                                     causal=True, **{"return": stages}))
        for binary_in in ((False, True) if dtype == "float16" else (True,)):
            for binary_out in (False, True):
                inputs = [InferInput(k, v.shape, datatype).set_data_from_numpy(
                    v.astype(np.float16) if dtype == "float16" else v,
                    binary_data=binary_in) for k, v in typed.items()]
                result = client.infer(MODEL, inputs, [
                    InferRequestedOutput(s, binary_data=binary_out)
                    for s in stages], parameters={"num_heads": h,
                                                  "causal": True})
                for s in stages:
                    out = result.get_output(s)
                    a = result.as_numpy(s)
                    got = a.astype("<f2").tobytes() if dtype == "float16" \
                        else np.ascontiguousarray(a, "<f4").view("<u2")[
                            ..., 1::2].tobytes()
                    expect(out["datatype"] == datatype and got == want[s],
                           f"{datatype} {s}: differs from /v1 (binary "
                           f"inputs {binary_in}, outputs {binary_out})")


def lesson_inputs():
    x = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    eye = np.eye(2)
    return x, eye


def small_inputs(binary=True, dtype=np.float64):
    x, eye = lesson_inputs()
    name = "FP32" if dtype == np.float32 else "FP64"
    return [InferInput(n, a.shape, name).set_data_from_numpy(
        a.astype(dtype), binary_data=binary)
        for n, a in (("x", x), ("w_q", eye), ("w_k", eye), ("w_v", eye))]


def test_positions_in_every_integer_datatype(server, client):
    """positions as INT8 to INT64 and UINT8 to UINT64, in JSON data and in
    binary data, give /v1's bytes."""
    x, eye = lesson_inputs()
    positions = [0, 2, 120]
    req = {"x": x.tolist(), "w_q": eye.tolist(), "w_k": eye.tolist(),
           "w_v": eye.tolist(), "positions": positions, "rope": True,
           "return": ["output"]}
    want = v1_bytes(server, req)["output"]
    for datatype in ("INT64", "INT32", "INT16", "INT8", "UINT64", "UINT32",
                     "UINT16", "UINT8"):
        for binary in (False, True):
            inputs = small_inputs(binary) + [
                InferInput("positions", (3,), datatype).set_data_from_numpy(
                    np.array(positions, NP_OF[datatype]), binary_data=binary)]
            result = client.infer(MODEL, inputs,
                                  [InferRequestedOutput("output")],
                                  parameters={"rope": True})
            got = np.ascontiguousarray(result.as_numpy("output"),
                                       dtype="<f8").tobytes()
            expect(got == want, f"positions as {datatype} (binary {binary}) "
                                "differ from /v1's")
    print("  positions in 8 integer datatypes, JSON and binary")


def test_binary_framing(server, client):
    # tritonclient's default: binary inputs, no outputs listed → every
    # output binary (binary_data_output), in the stages' order
    body, json_size = inference_request(small_inputs(), None, "7")
    header = json.loads(body[:json_size])
    expect(header["parameters"] == {"binary_data_output": True} and
           "outputs" not in header and
           len(body) == json_size + (6 + 3 * 4) * 8,
           "the request's JSON then the 4 inputs' bytes")
    status, headers, data = client.request(
        "POST", INFER, body,
        {"Inference-Header-Content-Length": str(json_size)})
    length = int(headers.get("inference-header-content-length", 0))
    header = json.loads(data[:length])
    expect(status == 200 and
           headers["content-type"] == "application/octet-stream",
           f"binary reply: {status} {headers.get('content-type')}")
    expect(header["id"] == "7" and header["model_name"] == "attention",
           "id and model_name echoed")
    expect([(o["name"], o["parameters"]["binary_data_size"])
            for o in header["outputs"]] == [("weights", 72), ("output", 48)]
           and len(data) == length + 72 + 48,
           f"outputs and sizes {header['outputs']}")
    result = client.infer(MODEL, small_inputs())
    weights = result.as_numpy("weights")
    expect(weights.shape == (1, 3, 3) and weights.dtype == np.float64 and
           weights[0, 0, 0] == 0.4011120926797859,
           f"weights read from the binary part: {weights}")

    # outputs in the order asked, one JSON, one binary
    result = client.infer(MODEL, small_inputs(), [
        InferRequestedOutput("output", binary_data=False),
        InferRequestedOutput("scores", binary_data=True)])
    names = [o["name"] for o in result.get_response()["outputs"]]
    expect(names == ["output", "scores"], f"outputs in request order {names}")
    expect("data" in result.get_output("output") and
           "data" not in result.get_output("scores"),
           "output as JSON, scores as binary")
    expect(result.as_numpy("scores").tolist() ==
           [[[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [1.0, 1.0, 2.0]]],
           "scores from the binary part")

    # binary_data_output with one output overriding it
    status, headers, data = client.request("POST", INFER, json.dumps({
        "inputs": [i.tensor() for i in small_inputs(binary=False)],
        "parameters": {"binary_data_output": True},
        "outputs": [{"name": "weights"},
                    {"name": "output",
                     "parameters": {"binary_data": False}}]}).encode())
    length = int(headers["inference-header-content-length"])
    header = json.loads(data[:length])
    expect(len(data) == length + 72 and
           header["outputs"][0]["parameters"] == {"binary_data_size": 72} and
           "data" in header["outputs"][1],
           "binary_data_output: weights binary, output JSON by its own "
           "parameter")

    # a JSON-only reply has no Inference-Header-Content-Length
    status, headers, data = client.request("POST", INFER, json.dumps({
        "inputs": [i.tensor() for i in small_inputs(binary=False)]}).encode(),
        {"Content-Type": "application/json"})
    expect(status == 200 and "inference-header-content-length" not in headers
           and headers["content-type"] == "application/json",
           "JSON in, JSON out: no header length")

    # binary and JSON inputs mixed, a BOOL mask in binary, FP32
    x, eye = lesson_inputs()
    mask = np.array([[True, False, True], [True, True, False],
                     [False, False, False]])
    inputs = [InferInput("x", (3, 2), "FP32").set_data_from_numpy(
                  x.astype(np.float32), binary_data=False),
              InferInput("mask", (3, 3), "BOOL").set_data_from_numpy(mask)]
    inputs += [InferInput(n, (2, 2), "FP32").set_data_from_numpy(
                   eye.astype(np.float32), binary_data=(n != "w_k"))
               for n in ("w_q", "w_k", "w_v")]
    result = client.infer(MODEL, inputs, [
        InferRequestedOutput("masked_scores"),
        InferRequestedOutput("weights", binary_data=False)])
    masked = result.as_numpy("masked_scores")
    expect(masked.dtype == np.float32 and np.isneginf(masked[0, 0, 1]) and
           np.isneginf(masked[0, 2]).all(), "−∞ in a binary masked_scores")
    weights = result.get_output("weights")
    expect(weights["datatype"] == "FP32" and weights["data"][6:] == [0, 0, 0]
           and weights["data"][0] == 0.5,
           f"FP32 weights as JSON {weights['data']}")

    # nested JSON data reads as flat row-major data
    status, _, data = client.request("POST", INFER, json.dumps({
        "inputs": [{"name": "x", "shape": [3, 2], "datatype": "FP64",
                    "data": [[1, 0], [0, 1], [1, 1]]}] +
        [{"name": n, "shape": [2, 2], "datatype": "FP64",
          "data": [[1, 0], [0, 1]]} for n in ("w_q", "w_k", "w_v")],
        "outputs": [{"name": "scores"}]}).encode())
    expect(status == 200 and json.loads(data)["outputs"][0]["data"] ==
           [1, 0, 1, 0, 1, 1, 1, 1, 2], f"nested data: {status} {data[:200]}")


# (what, body or (json, bytes after it, header length), status, code,
#  error, pointer)
def error_cases():
    x = {"name": "x", "shape": [3, 2], "datatype": "FP64",
         "data": [1, 0, 0, 1, 1, 1]}
    weights = [{"name": n, "shape": [2, 2], "datatype": "FP64",
                "data": [1, 0, 0, 1]} for n in ("w_q", "w_k", "w_v")]

    def req(inputs=None, **more):
        return dict({"inputs": [x] + weights if inputs is None else inputs},
                    **more)

    def with_x(**change):
        return req([dict(x, **change)] + weights)

    x_binary = {"name": "x", "shape": [3, 2], "datatype": "FP64",
                "parameters": {"binary_data_size": 48}}
    six = np.arange(6, dtype="<f8").tobytes()
    return [
        ("not JSON", b"{", 400, "invalid_json",
         "invalid JSON at line 1, column 1: string or '}' expected near end "
         "of file",
         None),
        ("empty body", b"", 400, "invalid_json",
         "the request body is empty; send an inference request", None),
        ("not an object", [1], 400, "invalid_body",
         "an inference request is a JSON object", ""),
        ("unknown member", req(model_version="1"), 400, "unknown_field",
         'unknown member "model_version" of an inference request (members '
         'are id, parameters, inputs, outputs)', "/model_version"),
        ("another model named", req(model_name="gpt"), 400, "invalid_body",
         'model_name must be "attention", the model of this path',
         "/model_name"),
        ("id not a string", req(id=7), 400, "wrong_type",
         "id must be a string", "/id"),
        ("missing inputs", {"outputs": []}, 400, "missing_field",
         "an inference request needs inputs: x (or q, k and v) and the "
         "weights", "/inputs"),
        ("inputs not an array", {"inputs": {}}, 400, "wrong_type",
         "inputs must be an array of tensors", "/inputs"),
        ("an input not an object", req([7]), 400, "wrong_type",
         "an input is an object with name, shape, datatype and data",
         "/inputs/0"),
        ("unknown input", req([dict(x, name="W_q")] + weights), 400,
         "unknown_field",
         "unknown input \"W_q\"; did you mean \"w_q\"? (inputs are ",
         "/inputs/0/name"),
        ("input without a name", req([{"shape": [1]}]), 400, "missing_field",
         "an input needs a name (inputs are ", "/inputs/0/name"),
        ("duplicate input", req([x, x] + weights), 400, "conflicting_fields",
         "input x appears twice, as inputs/0 and inputs/1", "/inputs/1/name"),
        ("unknown member of an input", with_x(dims=[3, 2]), 400,
         "unknown_field", 'unknown member "dims" of an input (members are '
         'name, shape, datatype, parameters, data)', "/inputs/0/dims"),
        ("a member name longer than a pointer holds",
         with_x(**{"y" * 200: 1}), 400, "unknown_field",
         'unknown member "' + "y" * 64 + '" of an input', "/inputs/0"),
        ("no datatype", req([{k: v for k, v in x.items() if k != "datatype"}]
                            + weights), 400, "missing_field",
         "input x needs a datatype (FP64, FP32, FP16 or BF16)", "/inputs/0/datatype"),
        ("FP8", with_x(datatype="FP8"), 400, "invalid_datatype",
         "input x: datatype FP8 is not taken; x takes FP64, FP32, FP16 or "
         "BF16",
         "/inputs/0/datatype"),
        ("BYTES", with_x(datatype="BYTES"), 400, "invalid_datatype",
         "input x: datatype BYTES is not taken; x takes FP64, FP32, FP16 or "
         "BF16",
         "/inputs/0/datatype"),
        ("BOOL numbers", with_x(datatype="BOOL"), 400, "invalid_datatype",
         "input x: datatype BOOL is not taken; x takes FP64, FP32, FP16 or "
         "BF16",
         "/inputs/0/datatype"),
        ("INT64 x", with_x(datatype="INT64"), 400, "invalid_datatype",
         "input x: datatype INT64 is not taken; x takes FP64, FP32, FP16 or "
         "BF16",
         "/inputs/0/datatype"),
        ("INT32 mask", req([x] + weights + [
            {"name": "mask", "shape": [3, 3], "datatype": "INT32",
             "data": [0] * 9}]), 400, "invalid_datatype",
         "input mask: datatype INT32 is not taken; mask takes BOOL, FP64, "
         "FP32, FP16 or BF16", "/inputs/4/datatype"),
        ("BOOL positions", req([x] + weights + [
            {"name": "positions", "shape": [3], "datatype": "BOOL",
             "data": [True, False, True]}]), 400, "invalid_datatype",
         "input positions: datatype BOOL is not taken; positions takes INT64, "
         "INT32, INT16, INT8, UINT64, UINT32, UINT16 or UINT8",
         "/inputs/4/datatype"),
        ("FP64 positions", req([x] + weights + [
            {"name": "positions", "shape": [3], "datatype": "FP64",
             "data": [0, 1, 2]}]), 400, "invalid_datatype",
         "input positions: datatype FP64 is not taken; positions takes INT64, "
         "INT32, INT16, INT8, UINT64, UINT32, UINT16 or UINT8",
         "/inputs/4/datatype"),
        ("INT64 data past 2^53 - 1, quoted as sent", req([x] + weights + [
            {"name": "positions", "shape": [3], "datatype": "INT64",
             "data": [0, 1, 2 ** 53 + 1]}]), 400, "wrong_type",
         "input positions is INT64: expected a whole number from "
         "-9007199254740991 to 9007199254740991, found 9007199254740993",
         "/inputs/4/data/2"),
        ("UINT8 data out of its range", req([x] + weights + [
            {"name": "positions", "shape": [3], "datatype": "UINT8",
             "data": [0, 1, 256]}]), 400, "wrong_type",
         "input positions is UINT8: expected a whole number from 0 to 255, "
         "found 256", "/inputs/4/data/2"),
        ("UINT64 binary data past 2^53 - 1",
         (req([x] + weights + [{"name": "positions", "shape": [3],
                                "datatype": "UINT64",
                                "parameters": {"binary_data_size": 24}}]),
          np.array([0, 1, 2 ** 53 + 1], "<u8").tobytes(), None), 400,
         "number_out_of_range", "input positions is UINT64: element 2 is "
         "9007199254740993, beyond 0 to 9007199254740991",
         "/inputs/4/parameters/binary_data_size"),
        ("INT64 key_padding", req([x] + weights + [
            {"name": "key_padding", "shape": [3], "datatype": "INT64",
             "data": [0, 0, 1]}]), 400, "invalid_datatype",
         "input key_padding: datatype INT64 is not taken; key_padding takes "
         "BOOL", "/inputs/4/datatype"),
        ("a fraction in INT64 data", req([x] + weights + [
            {"name": "positions", "shape": [3], "datatype": "INT64",
             "data": [0, 1.5, 2]}]), 400, "wrong_type",
         "input positions is INT64: expected a whole number from "
         "-9007199254740991 to 9007199254740991, found 1.5",
         "/inputs/4/data/1"),
        ("INT32 data out of its range", req([x] + weights + [
            {"name": "positions", "shape": [3], "datatype": "INT32",
             "data": [0, 1, 2 ** 32]}]), 400, "wrong_type",
         "input positions is INT32: expected a whole number from "
         "-2147483648 to 2147483647, found 4294967296", "/inputs/4/data/2"),
        ("INT32 data one past its largest", req([x] + weights + [
            {"name": "positions", "shape": [3], "datatype": "INT32",
             "data": [0, 1, 2 ** 31]}]), 400, "wrong_type",
         "input positions is INT32: expected a whole number from "
         "-2147483648 to 2147483647, found 2147483648", "/inputs/4/data/2"),
        ("FP32 beside FP64", req([dict(x, datatype="FP32")] + weights), 400,
         "invalid_datatype", "input w_q is FP64 but inputs/0 is FP32: every "
         "floating-point input of a request has one datatype, the request's "
         "dtype",
         "/inputs/1/datatype"),
        ("FP key_padding", req([x] + weights + [
            {"name": "key_padding", "shape": [3], "datatype": "FP64",
             "data": [0, 0, 1]}]), 400, "invalid_datatype",
         "input key_padding: datatype FP64 is not taken; key_padding takes "
         "BOOL", "/inputs/4/datatype"),
        ("no shape", req([{k: v for k, v in x.items() if k != "shape"}]
                         + weights), 400, "missing_field",
         "input x needs a shape (2 or 3 dimensions)", "/inputs/0/shape"),
        ("rank 1", with_x(shape=[6]), 400, "wrong_rank",
         "input x must have 2 or 3 dimensions, its shape has 1",
         "/inputs/0/shape"),
        ("a fractional dimension", with_x(shape=[3, 2.5]), 400, "wrong_type",
         "input x: shape holds whole numbers, at most 1e+15",
         "/inputs/0/shape"),
        ("an empty dimension", with_x(shape=[0, 2], data=[]), 400,
         "empty_array", "input x must not be empty: its shape is [0, 2]",
         "/inputs/0/shape"),
        ("shape and data disagree", with_x(data=[1, 0, 0, 1, 1]), 400,
         "shape_mismatch",
         "input x: shape [3, 2] holds 6 elements but data has 5",
         "/inputs/0/data"),
        ("data nested too deep", with_x(data=[[[1, 0]], [[0, 1]], [[1, 1]]]),
         400, "wrong_rank",
         "input x: data nests deeper than its shape's 2 dimensions",
         "/inputs/0/data"),
        ("nested data against its shape", with_x(data=[[1, 0, 0],
                                                        [1, 1, 1]]),
         400, "shape_mismatch",
         "input x: nested data follows its shape [3, 2], which has 3 "
         "elements here, not 2", "/inputs/0/data"),
        ("a row of nested data against its shape",
         with_x(data=[[1, 0], [0, 1, 1], [1]]), 400, "shape_mismatch",
         "input x: nested data follows its shape [3, 2], which has 2 "
         "elements here, not 3", "/inputs/0/data/1"),
        ("a string in data", with_x(data=[[1, 0], [0, 1], [1, "a"]]), 400,
         "wrong_type", "input x: expected a number, found a string",
         "/inputs/0/data/2/1"),
        ("a number in BOOL data", req([x] + weights + [
            {"name": "key_padding", "shape": [3], "datatype": "BOOL",
             "data": [0, 0, 1]}]), 400, "wrong_type",
         "input key_padding is BOOL: expected true or false, found a number",
         "/inputs/4/data/0"),
        ("no data", req([{k: v for k, v in x.items() if k != "data"}]
                        + weights), 400, "missing_field",
         "input x needs data, or binary_data_size with its bytes after the "
         "JSON", "/inputs/0/data"),
        ("data and binary_data_size",
         with_x(parameters={"binary_data_size": 48}), 400,
         "invalid_binary_data",
         "input x has both data and binary_data_size; send one",
         "/inputs/0/data"),
        ("unknown input parameter", with_x(parameters={"shm": 1}), 400,
         "unknown_field", 'input x: unknown parameter "shm" (an input takes '
         'binary_data_size)', "/inputs/0/parameters/shm"),
        ("float32 overflow", req([dict(x, datatype="FP32",
                                       data=[1, 0, 0, 1, 1, 1e39])] +
                                 [dict(w, datatype="FP32") for w in weights]),
         400, "number_out_of_range",
         "input x: 1e+39 does not fit in float32 (largest 3.40282e+38)",
         "/inputs/0/data/5"),
        ("float16 overflow", req([dict(x, datatype="FP16",
                                       data=[1, 0, 0, 1, 1e5, 1])] +
                                 [dict(w, datatype="FP16") for w in weights]),
         400, "number_out_of_range",
         "input x: 100000 does not fit in float16 (largest 65504)",
         "/inputs/0/data/4"),
        ("shapes that do not fit", with_x(shape=[2, 3]), 400,
         "shape_mismatch",
         "w_q has 2 rows but x has 3 columns: x @ W needs them equal",
         "/inputs/1"),
        ("no x", req(weights), 400, "missing_field",
         "x is required (or q, k and v)", "/inputs"),
        ("parameters not an object", req(parameters=[1]), 400, "wrong_type",
         "parameters must be an object of name: value", "/parameters"),
        ("unknown parameter", req(parameters={"temperature": 1}), 400,
         "unknown_field", 'unknown parameter "temperature" (parameters are ',
         "/parameters/temperature"),
        ("a tensor's name mistyped as a parameter",
         req(parameters={"W_o": 1}), 400, "unknown_field",
         'unknown parameter "W_o"; did you mean the input "w_o"? (parameters '
         "are ", "/parameters/W_o"),
        ("a tensor as a parameter", req(parameters={"w_o": 1}), 400,
         "unknown_field", "w_o is a tensor: send it as an input",
         "/parameters/w_o"),
        ("dtype as a parameter", req(parameters={"dtype": "float32"}), 400,
         "invalid_dtype", "the dtype is the datatype of the numeric inputs "
         "(FP64, FP32, FP16 or BF16), not a parameter", "/parameters/dtype"),
        ("return as a parameter", req(parameters={"return": "weights"}), 400,
         "invalid_return", "name the stages to return as outputs",
         "/parameters/return"),
        ("need_weights as a parameter, which outputs say",
         req(parameters={"need_weights": False}), 400, "conflicting_fields",
         'need_weights is not a /v2 parameter: /v2\'s outputs name the '
         'stages to return. For need_weights false, ask for the output '
         'alone, "outputs": [{"name": "output"}]; for true, leave outputs '
         'out (weights and output)', "/parameters/need_weights"),
        ("num_heads not a number", req(parameters={"num_heads": "two"}), 400,
         "wrong_type", "num_heads must be an integer",
         "/parameters/num_heads"),
        ("num_heads not dividing", req(parameters={"num_heads": 3}), 400,
         "invalid_num_heads",
         "parameter num_heads: 3 heads do not divide the 2 columns of w_q",
         "/parameters/num_heads"),
        ("scale 0", req(parameters={"scale": 0}), 400, "invalid_scale",
         "scale must be a positive number, got 0", "/parameters/scale"),
        ("binary_data_output not a boolean",
         req(parameters={"binary_data_output": 1}), 400, "wrong_type",
         "binary_data_output must be true or false",
         "/parameters/binary_data_output"),
        ("unknown output", req(outputs=[{"name": "attention"}]), 400,
         "invalid_return", 'unknown output "attention" (outputs are x_pe, q, '
         'k, v, q_rope, k_rope, k_cache, v_cache, scores, scaled_scores, '
         'masked_scores, weights, head_outputs, concat, output)',
         "/outputs/0/name"),
        ("output twice", req(outputs=[{"name": "weights"}] * 2), 400,
         "conflicting_fields", "output weights is asked for twice",
         "/outputs/1/name"),
        ("unknown output parameter", req(outputs=[
            {"name": "weights", "parameters": {"classification": 3}}]), 400,
         "unknown_field", 'output weights: unknown parameter '
         '"classification" (an output takes binary_data)',
         "/outputs/0/parameters/classification"),
        # binary framing
        ("header length past the body", (req(), b"", 10 ** 6), 400,
         "invalid_binary_data", "Inference-Header-Content-Length is 1000000 "
         "but the body has ", None),
        ("header length not a number", (req(), b"", "12a"), 400,
         "invalid_binary_data", "Inference-Header-Content-Length must be the "
         "byte count of the body's JSON", None),
        ("header length cutting the JSON", (req(), b"", 5), 400,
         "invalid_json", "the JSON header (the first "
         "Inference-Header-Content-Length bytes) is invalid JSON at line 1, "
         "column 5: ", None),
        ("binary size of another shape",
         (req([dict(x_binary, parameters={"binary_data_size": 40})] +
              weights), six[:40], None), 400, "invalid_binary_data",
         "input x: binary_data_size is 40 but shape [3, 2] of FP64 takes 48 "
         "bytes", "/inputs/0/parameters/binary_data_size"),
        ("binary input without binary data", req([x_binary] + weights), 400,
         "invalid_binary_data", "input x has binary_data_size 48 but the "
         "body has no binary data after its JSON "
         "(Inference-Header-Content-Length gives the JSON's length)",
         "/inputs/0/parameters/binary_data_size"),
        ("binary data shorter than its sizes",
         (req([x_binary] + weights), six[:32], None), 400,
         "invalid_binary_data", "input x: its 48 bytes run past the body, "
         "which has 32 bytes of binary data left for it",
         "/inputs/0/parameters/binary_data_size"),
        ("binary data longer than its sizes",
         (req([x_binary] + weights), six + b"\0" * 8, None), 400,
         "invalid_binary_data", "the body has 56 bytes of binary data after "
         "its JSON, but the inputs' binary_data_size add up to 48",
         "/inputs"),
        ("a BOOL byte that is not 0 or 1",
         (req([x] + weights + [{"name": "key_padding", "shape": [3],
                                "datatype": "BOOL",
                                "parameters": {"binary_data_size": 3}}]),
          b"\0\2\0", None), 400, "wrong_type",
         "input key_padding: byte 1 is 2; a BOOL is one byte, 0 or 1",
         "/inputs/4/parameters/binary_data_size"),
        ("NaN in binary data",
         (req([x_binary] + weights),
          np.array([1, 0, 0, 1, np.nan, 1], "<f8").tobytes(), None), 400,
         "number_out_of_range", "input x: element 4 is not a finite number",
         "/inputs/0/parameters/binary_data_size"),
        ("∞ far into FP32 binary data (kept as float32)",
         (req([dict(x_binary, shape=[2500, 2], datatype="FP32",
                    parameters={"binary_data_size": 20000})] +
              [dict(w, datatype="FP32") for w in weights]),
          np.where(np.arange(5000) == 4999, np.inf, 1).astype(
              "<f4").tobytes(), None), 400,
         "number_out_of_range", "input x: element 4999 is not a finite number",
         "/inputs/0/parameters/binary_data_size"),
    ]


def send_case(client, body):
    headers = {}
    if isinstance(body, tuple):
        header, after, length = body
        text = json.dumps(header).encode()
        headers["Inference-Header-Content-Length"] = str(
            len(text) if length is None else length)
        data = text + after
    elif isinstance(body, bytes):
        data = body
    else:
        data = json.dumps(body).encode()
    return client.request("POST", INFER, data, headers)


def test_errors(server, client):
    cases = error_cases()
    for what, body, status, code, message, pointer in cases:
        got_status, headers, data = send_case(client, body)
        try:
            got = json.loads(data)
        except ValueError:
            got = {"error": data.decode(errors="replace")}
        ok = (got_status == status and got.get("code") == code and
              got.get("error", "").startswith(message) and
              got.get("pointer") == (pointer if pointer is not None else "")
              and headers["content-type"] == "application/json")
        expect(ok, f"{what}: {got_status} {got}")
    print(f"  {len(cases)} error cases")


def test_http_errors_in_the_protocols_shape(server, client):
    for method, path, status, code, message in (
            ("GET", INFER, 405, "method_not_allowed",
             f"{INFER} does not accept GET; allowed: POST, OPTIONS"),
            ("POST", "/v2/health/live", 405, "method_not_allowed",
             "/v2/health/live does not accept POST; allowed: GET, HEAD, "
             "OPTIONS"),
            ("GET", "/v2/models/gpt", 404, "not_found",
             'unknown model "gpt"; this server serves one model, '
             '"attention"'),
            ("POST", "/v2/models/gpt/infer", 404, "not_found",
             'unknown model "gpt"; this server serves one model, '
             '"attention"'),
            ("GET", "/v2/models/attention/versions/2", 404, "not_found",
             'model attention has no version "2"; its one version is "1"'),
            ("GET", "/v2/models/attention/status", 404, "not_found",
             "no such route of model attention"),
            ("GET", "/v2/trace/setting", 404, "not_found",
             "no such path; the Open Inference Protocol's routes are")):
        got_status, headers, data = client.request(
            method, path, b"{}" if method == "POST" else None)
        got = json.loads(data)
        expect(got_status == status and got["code"] == code and
               got["error"].startswith(message) and
               headers["content-type"] == "application/json",
               f"{method} {path}: {got_status} {got}")
    try:
        client.infer("gpt", small_inputs())
        expect(False, "an unknown model answers")
    except InferenceServerException as e:
        expect(e.status == 404 and str(e).startswith('unknown model "gpt"'),
               f"tritonclient's view of a 404: {e.status} {e}")
    # every /v2 route is counted under its own label
    status, _, data = client.request("GET", "/metrics")
    text = data.decode()
    for label in (INFER, "/v2/health/live", "/v2/*"):
        expect(f'route="{label}"' in text, f"metrics label {label}")


def test_auth_and_limits(binary):
    with tempfile.NamedTemporaryFile("w", suffix=".key") as key:
        key.write("s3cret\n")
        key.flush()
        with Server(binary, "--api-key-file", key.name, "--max-body",
                    "2048") as server:
            client = Client(server.port)
            status, headers, data = client.request(
                "POST", INFER, json.dumps({"inputs": []}).encode())
            got = json.loads(data)
            expect(status == 401 and got["code"] == "unauthorized" and
                   got["error"].startswith("a valid bearer token is "
                                           "required") and
                   headers.get("www-authenticate") ==
                   'Bearer realm="attention"',
                   f"infer without a token: {status} {got}")
            expect(client.is_server_ready() and
                   client.get_model_metadata(MODEL)["name"] == MODEL,
                   "health and metadata stay open")
            client.headers["Authorization"] = "Bearer s3cret"
            result = client.infer(MODEL, small_inputs())
            expect(result.as_numpy("output").shape == (3, 2),
                   "infer with the token")
            status, _, data = client.request("POST", INFER, b" " * 4096)
            got = json.loads(data)
            expect(status == 413 and got["code"] == "body_too_large" and
                   got["error"] == "the body is larger than 2048 bytes "
                   "(--max-body)", f"a body over --max-body: {status} {got}")
            client.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", default=default_server())
    parser.add_argument("--print-schema", required=True,
                        help="the build of tests/contract/print_schema.c")
    args = parser.parse_args()
    import subprocess
    schema = json.loads(subprocess.run([args.print_schema], check=True,
                                       capture_output=True, text=True).stdout)
    tests = [test_health_and_metadata, test_triton_extensions,
             test_lessons_match_v1,
             test_oracle_cases_match_v1, test_float32_inputs_of_every_kind,
             test_half_precision_inputs,
             test_positions_in_every_integer_datatype,
             test_binary_framing, test_errors,
             test_http_errors_in_the_protocols_shape]
    passed = 0
    with Server(args.server, "--threads", "2") as server:
        client = Client(server.port)
        for test in tests:
            before = len(failures)
            print(test.__name__)
            if test in (test_health_and_metadata, test_triton_extensions):
                test(server, client, schema)
            else:
                test(server, client)
            passed += len(failures) == before
        client.close()
    print("test_auth_and_limits")
    before = len(failures)
    test_auth_and_limits(args.server)
    passed += len(failures) == before
    total = len(tests) + 1
    print(f"{passed} passed, {total - passed} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
