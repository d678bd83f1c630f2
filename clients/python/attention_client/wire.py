"""How arrays travel: the Open Inference Protocol's binary tensor data on
POST /v2/models/attention/infer, both ways.

Measured end to end against /v1's JSON and base64 forms, it is the fastest
(docs/python.md gives the figures and the command), so every request of the
client goes this way.  A request is the JSON header (inputs with their shape,
datatype and binary_data_size; the stages asked for as binary outputs; the
one-value fields as parameters) followed by each input's little-endian bytes
in input order; Inference-Header-Content-Length gives the header's length, and
the reply is framed the same way.
"""
import json
import re

import numpy as np

from .errors import AttentionError

# the request's dtype → the protocol's datatype and NumPy's little-endian type
# (bfloat16, which NumPy lacks, travels as its bits and arrives as float32)
FLOAT_TYPES = {"float64": ("FP64", "<f8"), "float32": ("FP32", "<f4"),
               "float16": ("FP16", "<f2"), "bfloat16": ("BF16", "<u2")}
NUMPY_OF = {"FP64": "<f8", "FP32": "<f4", "FP16": "<f2", "BF16": "<u2",
            "BOOL": "|b1", "INT64": "<i8", "INT32": "<i4"}


def bfloat16_bits(a):
    """The bfloat16 nearest to each number (ties to even, as PyTorch
    rounds), as uint16 bits."""
    a = np.asarray(a, "<f4")
    u = a.view("<u4").astype(np.uint64)
    bits = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(a)
    bits[nan] = ((u[nan] >> 16) | 0x40).astype(np.uint16)  # quiet
    return bits


def bfloat16_values(bits):
    """bfloat16 bits as the float32 numbers they are."""
    return (np.asarray(bits, np.uint32) << 16).view(np.float32)


# inputs of whole numbers, which the server takes as integers only
WHOLE_INPUTS = ("positions", "context_positions", "heads")


def narrow(name, a, dtype):
    """a in a 16-bit dtype (bfloat16 as its bits): a finite number past the
    type's range is refused here, as the server refuses it."""
    if dtype not in ("float16", "bfloat16"):
        return a
    a = np.asarray(a)
    with np.errstate(over="ignore"):
        typed = bfloat16_bits(a) if dtype == "bfloat16" else \
            a.astype("<f2")
    wide = bfloat16_values(typed) if dtype == "bfloat16" else typed
    past = np.isinf(wide) & np.isfinite(a)
    if past.any():
        largest = "3.38953e+38" if dtype == "bfloat16" else "65504"
        raise ValueError(f"{name}: {float(a[past].flat[0])!r} does not fit in "
                         f"{dtype} (largest {largest})")
    return typed


def as_input(name, array, dtype):
    """(input's JSON, its bytes): booleans as BOOL, whole numbers (positions,
    head indices) as INT64, every other number in the request's dtype."""
    a = np.asarray(array)
    if a.dtype.kind == "b":
        datatype, np_type = "BOOL", "|b1"
    elif name in WHOLE_INPUTS:
        datatype, np_type = "INT64", "<i8"
        if a.dtype.kind not in "iu" and not np.array_equal(a, np.trunc(a)):
            raise ValueError(f"{name} holds whole numbers")
    else:
        datatype, np_type = FLOAT_TYPES[dtype]
        a = narrow(name, a, dtype)
    data = np.ascontiguousarray(a, dtype=np_type).tobytes()
    return ({"name": name, "shape": list(a.shape), "datatype": datatype,
             "parameters": {"binary_data_size": len(data)}}, data)


def frame(tensors, parameters, stages, dtype):
    """The body of one inference request and its header's length.
    tensors: name → array; parameters: name → JSON value; stages: the
    outputs, or None for the server's default stages (every output in
    binary then)."""
    inputs, blobs = zip(*(as_input(n, a, dtype) for n, a in tensors.items())) \
        if tensors else ((), ())
    header = {"inputs": list(inputs)}
    if stages is None:
        parameters = dict(parameters, binary_data_output=True)
    else:
        header["outputs"] = [{"name": s, "parameters": {"binary_data": True}}
                             for s in stages]
    if parameters:
        header["parameters"] = parameters
    text = json.dumps(header, separators=(",", ":"), allow_nan=False).encode()
    return b"".join((text,) + tuple(blobs)), len(text)


def unframe(body, header_length):
    """(the reply's JSON, name → NumPy array) of a 200 reply."""
    if header_length is None:
        meta, rest = json.loads(body), b""
    else:
        meta, rest = json.loads(body[:header_length]), body[header_length:]
    arrays, at = {}, 0
    for out in meta.get("outputs", []):
        np_type = NUMPY_OF[out["datatype"]]
        size = out.get("parameters", {}).get("binary_data_size")
        if size is None:
            a = np.array(out["data"], dtype="<f4" if np_type == "<u2"
                         else np_type)
        else:
            a = np.frombuffer(rest[at:at + size], dtype=np_type)
            at += size
            if out["datatype"] == "BF16":
                a = bfloat16_values(a)
        arrays[out["name"]] = a.reshape(out["shape"])
    return meta, arrays


def error_of(status, body, input_names):
    """The AttentionError of a refusal.  /v2 points into its own request
    (`/inputs/3/parameters/binary_data_size`); the pointer is given in /v1's
    terms, the field's name (`/w_q`), which is what the caller wrote."""
    try:
        problem = json.loads(body)
    except ValueError:
        problem = None
    if not isinstance(problem, dict):
        text = body.decode("utf-8", "replace").strip()
        return AttentionError(status, None, None, text or f"HTTP {status}")
    detail = problem.get("error") or problem.get("detail") or ""
    return AttentionError(status, problem.get("code"),
                          field_pointer(problem.get("pointer"), input_names),
                          detail)


def field_pointer(pointer, input_names):
    """/inputs/i/... → /name; /parameters/p → /p; anything else as it is."""
    if not pointer:
        return None
    match = re.match(r"/inputs/(\d+)(/.*)?$", pointer)
    if match and int(match.group(1)) < len(input_names):
        return "/" + input_names[int(match.group(1))]
    match = re.match(r"/parameters/([^/]+)", pointer)
    if match:
        return "/" + match.group(1)
    return pointer
