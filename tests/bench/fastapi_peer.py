"""A FastAPI + uvicorn + NumPy peer of POST /v1/attention, for the benchmark.

It is what a Python team would write for the same endpoint: the body parsed by
Starlette's request.json(), the arithmetic in NumPy (the lesson 002 way), the
answer built with .tolist() and serialised by FastAPI's JSONResponse.  It keeps
the server's JSON contract for the fields the benchmark sends:
  request   x (n, d); w_q, w_k, w_v as d×(h·d_k) or per-head stacks h×d×d_k;
            num_heads; w_o; scale; dtype ("float64" | "float32"); causal;
            return (any of q, k, v, scores, scaled_scores, weights,
            head_outputs, concat, output; default ["output", "weights"])
  response  the requested tensors, shapes, num_heads, head_dim, value_dim,
            scale, dtype, causal
and answers a malformed request with a 400 problem+json (status, title,
detail, code).  Run with:
  python3 -m uvicorn --app-dir tests/bench fastapi_peer:app --port PORT
"""
import math

import numpy as np
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse

app = FastAPI()

STAGES = ("q", "k", "v", "scores", "scaled_scores", "weights", "head_outputs",
          "concat", "output")
DEFAULT_RETURN = ["output", "weights"]


class BadRequest(Exception):
    pass


def as_heads(w, h, d, name):
    """A 2-D d×(h·d_k) projection or a per-head stack h×d×d_k → (d, h·d_k)."""
    if w.ndim == 3:
        if w.shape[1] != d:
            raise BadRequest(f"{name} must have {d} rows per head")
        return w.transpose(1, 0, 2).reshape(d, -1), w.shape[0]
    if w.ndim != 2 or w.shape[0] != d:
        raise BadRequest(f"{name} must be {d}×(h·d_k)")
    return w, h


def attention(body):
    dtype_name = body.get("dtype", "float64")
    if dtype_name not in ("float64", "float32"):
        raise BadRequest("dtype must be float64 or float32")
    dtype = np.float64 if dtype_name == "float64" else np.float32
    try:
        x = np.asarray(body["x"], dtype=dtype)
        ws = [np.asarray(body[k], dtype=dtype) for k in ("w_q", "w_k", "w_v")]
        w_o = np.asarray(body["w_o"], dtype=dtype) if "w_o" in body else None
    except (KeyError, ValueError, TypeError) as exc:
        raise BadRequest(f"missing or malformed tensor: {exc}")
    if x.ndim != 2:
        raise BadRequest("x must be n×d")
    n, d = x.shape
    h = body.get("num_heads")
    h_stack = None
    flat = []
    for name, w in zip(("w_q", "w_k", "w_v"), ws):
        w2, heads = as_heads(w, h, d, name)
        h_stack = heads if w.ndim == 3 else h_stack
        flat.append(w2)
    h = h or h_stack or 1
    if any(w.shape[1] % h for w in flat):
        raise BadRequest("projection widths must divide by num_heads")
    want = body.get("return", DEFAULT_RETURN)
    if not isinstance(want, list) or any(s not in STAGES for s in want):
        raise BadRequest("return must list stages")
    causal = bool(body.get("causal", False))

    def split(m):  # (n, h·w) -> (h, n, w)
        return m.reshape(n, h, -1).transpose(1, 0, 2)

    q, k, v = (split(x @ w) for w in flat)
    d_k, d_v = q.shape[2], v.shape[2]
    scale = body.get("scale") or 1.0 / math.sqrt(d_k)
    scores = q @ k.transpose(0, 2, 1)  # (h, n, n)
    scaled = scores * dtype(scale)
    masked = scaled
    if causal:
        masked = np.where(np.tril(np.ones((n, n), dtype=bool)), scaled,
                          -np.inf)
    e = np.exp(masked - masked.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    heads = weights @ v  # (h, n, d_v)
    concat = heads.transpose(1, 0, 2).reshape(n, h * d_v)
    output = concat @ w_o if w_o is not None else concat
    tensors = {"q": q, "k": k, "v": v, "scores": scores,
               "scaled_scores": scaled, "weights": weights,
               "head_outputs": heads, "concat": concat, "output": output}
    reply = {s: tensors[s].tolist() for s in want}
    reply.update(shapes={s: list(t.shape) for s, t in tensors.items()},
                 num_heads=h, head_dim=d_k, value_dim=d_v, scale=scale,
                 dtype=dtype_name, causal=causal)
    return reply


@app.post("/v1/attention")
async def post_attention(request: Request):
    try:
        body = await request.json()
        if not isinstance(body, dict):
            raise BadRequest("the body must be a JSON object")
        return JSONResponse(attention(body))
    except (BadRequest, ValueError) as exc:
        return JSONResponse({"status": 400, "title": "Bad Request",
                             "detail": str(exc), "code": "bad_request"},
                            status_code=400,
                            media_type="application/problem+json")


@app.get("/healthz")
async def healthz():
    return PlainTextResponse("ok")
