"""Attention in NumPy, written from the three lessons (../shared/seeds).

Row vectors and projections x @ W (lessons 000-002); head h of a d×(h·d_k)
projection is columns h·d_k … (h+1)·d_k − 1, the same numbers as a per-head
stack W[h] (lesson 000 vs 002); scores Q Kᵀ scaled by 1/√d_k; softmax with
the row maximum subtracted (lesson 001); heads concatenated on the last axis,
then an optional @ W_o (lesson 002).  Extensions the service documents:
causal / boolean / additive masks and key padding hide keys (−∞), a query row
with no key left gets all-zero weights, `context` is the key/value source, and
biases b_q, b_k, b_v, b_o are added after their projections.  Requests here
are in the lessons' layout: run_oracle.py rewrites them into PyTorch's.
"""
import math

import numpy as np


def split_heads(w, heads):
    """(d, h·w) or (h, d, w) → (h, d, w)."""
    w = np.asarray(w)
    if w.ndim == 3:
        return w
    d, width = w.shape
    return w.reshape(d, heads, width // heads).transpose(1, 0, 2)


def alibi_slopes(n):
    """ALiBi's head slopes, as the paper's reference code (ofirpress/attention_
    with_linear_biases) computes them."""
    def power_of_2(k):
        start = 2 ** (-2 ** -(math.log2(k) - 3))
        return [start * start ** i for i in range(k)]
    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + alibi_slopes(2 * closest)[0::2][:n - closest]


def attention(req):
    """Every stage of the forward pass for a request dict, as NumPy arrays."""
    dtype = np.float32 if req.get("dtype") == "float32" else np.float64
    x = np.asarray(req["x"], dtype=dtype)
    ctx = np.asarray(req["context"], dtype=dtype) if "context" in req else x
    stacked = [np.asarray(req[k]).ndim == 3 for k in ("w_q", "w_k", "w_v")]
    heads = req.get("num_heads")
    if heads is None:
        heads = len(req["w_q"]) if stacked[0] else next(
            (len(req[k]) for k, s in zip(("w_k", "w_v"), stacked[1:]) if s
             and "num_kv_heads" not in req), 1)
    # grouped-query attention: h_kv key/value heads, each shared by h / h_kv
    # consecutive query heads (torch.repeat_interleave over the head axis)
    kv_heads = req.get("num_kv_heads", heads)
    w_q = split_heads(np.asarray(req["w_q"], dtype=dtype), heads)
    w_k = split_heads(np.asarray(req["w_k"], dtype=dtype), kv_heads)
    w_v = split_heads(np.asarray(req["w_v"], dtype=dtype), kv_heads)
    d_k = w_q.shape[2]
    n, m = x.shape[0], ctx.shape[0]

    q = np.stack([x @ w_q[h] for h in range(heads)])          # (h, n, d_k)
    k = np.stack([ctx @ w_k[h] for h in range(kv_heads)])     # (h_kv, m, d_k)
    v = np.stack([ctx @ w_v[h] for h in range(kv_heads)])     # (h_kv, m, d_v)
    # biases: h·w numbers (or an h×w stack), head h owns the h-th w of them
    for name, stage, count in (("b_q", q, heads), ("b_k", k, kv_heads),
                               ("b_v", v, kv_heads)):
        if name in req:
            b = np.asarray(req[name], dtype=dtype).reshape(count, 1, -1)
            stage += b
    k_rep = np.repeat(k, heads // kv_heads, axis=0)           # (h, m, d_k)
    v_rep = np.repeat(v, heads // kv_heads, axis=0)           # (h, m, d_v)
    scores = q @ k_rep.transpose(0, 2, 1)                  # (h, n, m)
    if "scale" in req:
        scaled = scores * dtype(req["scale"])
    else:
        scaled = scores / np.sqrt(d_k).astype(dtype)

    # positions: queries at p_i, keys at p_j (self-attention: the same)
    pos_q = np.asarray(req.get("positions", np.arange(n)), dtype=np.int64)
    if "context_positions" in req:
        pos_k = np.asarray(req["context_positions"], dtype=np.int64)
    elif "context" not in req and m == n:
        pos_k = pos_q
    else:
        pos_k = np.arange(m)
    ahead = pos_k[None, :] - pos_q[:, None]                # (n, m) p_j − p_i
    hidden = np.zeros((n, m), dtype=bool)
    if req.get("causal"):
        hidden |= ahead > 0
    if "window" in req:  # Mistral's sliding window (|p_i − p_j| < w)
        hidden |= np.abs(ahead) >= req["window"]
    alibi = None
    if req.get("alibi"):
        alibi = np.asarray(alibi_slopes(heads))
    elif "alibi_slopes" in req:
        alibi = np.asarray(req["alibi_slopes"], dtype=np.float64)
    bias = np.zeros((n, m), dtype=dtype)
    if "mask" in req:
        mask = np.asarray(req["mask"])
        if mask.dtype == bool:
            hidden |= ~mask
        else:
            bias = mask.astype(dtype)
    if "key_padding" in req:
        hidden |= np.asarray(req["key_padding"], dtype=bool)[None, :]
    if alibi is not None:  # −slope_h · |p_i − p_j| (Press et al. 2022)
        bias = bias + (-alibi[:, None, None] * np.abs(ahead)[None]).astype(
            dtype)
    masked = np.where(hidden, dtype(-np.inf), scaled + bias)

    row_max = masked.max(axis=-1, keepdims=True)
    empty = np.isneginf(row_max)
    e = np.exp(masked - np.where(empty, 0, row_max))
    sums = e.sum(axis=-1, keepdims=True)
    weights = np.where(empty, 0, e / np.where(empty, 1, sums))
    head_outputs = weights @ v_rep                         # (h, n, d_v)
    concat = np.concatenate(list(head_outputs), axis=-1)   # (n, h·d_v)
    output = concat @ np.asarray(req["w_o"], dtype=dtype) if "w_o" in req \
        else concat
    if "b_o" in req:
        output = output + np.asarray(req["b_o"], dtype=dtype)
    return {"q": q, "k": k, "v": v, "scores": scores,
            "scaled_scores": scaled, "masked_scores": masked,
            "weights": weights, "head_outputs": head_outputs,
            "concat": concat, "output": output}


def from_wire(value):
    """JSON tensor → float64 array; null (a masked score) → −∞."""
    arr = np.asarray(value, dtype=object)
    arr[arr == None] = -np.inf  # noqa: E711  (element-wise comparison)
    return arr.astype(np.float64)


def relative_error(got, want):
    """max |got − want| / max |want| over finite entries; −∞ must match."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        return np.inf
    if not np.array_equal(np.isneginf(got), np.isneginf(want)):
        return np.inf
    finite = np.isfinite(want)
    if not finite.any():
        return 0.0
    diff = np.abs(got[finite] - want[finite]).max()
    scale = np.abs(want[finite]).max()
    return diff / scale if scale > 0 else diff
