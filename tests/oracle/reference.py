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

Modern attention, each from its paper or model code: grouped-query heads
(repeat_interleave), ALiBi (Press et al.), Mistral's sliding window, RoPE
(RoFormer; Llama's rotate_half or GPT-J's interleaved pairs), the sinusoidal
encoding of "Attention Is All You Need", and a KV cache (keys after RoPE and
values of positions 0 … m₀ − 1, the new ones appended).
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


def sinusoidal(positions, width):
    """PE(pos, 2i) = sin(pos / 10000^(2i/width)), PE(pos, 2i+1) = cos(...)."""
    col = np.arange(width)
    angle = positions[:, None] / np.power(10000.0, (2 * (col // 2)) / width)
    return np.where(col % 2 == 0, np.sin(angle), np.cos(angle))


def rope(t, positions, base, dims, style, dtype):
    """RoPE on (heads, rows, d_k): the first `dims` components turn in pairs
    by position · base^(−2i/dims); cos and sin in float64, then the dtype."""
    inv_freq = np.power(float(base), -np.arange(0, dims, 2) / dims)
    angle = positions[:, None].astype(np.float64) * inv_freq[None, :]
    cos, sin = np.cos(angle).astype(dtype), np.sin(angle).astype(dtype)
    out = t.copy()
    if style == "interleaved":  # RoFormer / GPT-J: (2i, 2i + 1)
        x1, x2 = t[..., 0:dims:2], t[..., 1:dims:2]
        out[..., 0:dims:2] = x1 * cos - x2 * sin
        out[..., 1:dims:2] = x2 * cos + x1 * sin
    else:  # Llama / GPT-NeoX rotate_half: (i, i + dims/2)
        half = dims // 2
        x1, x2 = t[..., :half], t[..., half:dims]
        out[..., :half] = x1 * cos - x2 * sin
        out[..., half:dims] = x2 * cos + x1 * sin
    return out


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
    n, m_new = x.shape[0], ctx.shape[0]

    # positions: queries after the cache's m₀, new keys at theirs (self-
    # attention) or at context_positions; cached keys at 0 … m₀ − 1
    past = np.shape(req["past_k"])[1] if "past_k" in req else 0
    pos_q = np.asarray(req.get("positions", np.arange(past, past + n)),
                       dtype=np.int64)
    if "context_positions" in req:
        pos_new = np.asarray(req["context_positions"], dtype=np.int64)
    elif "context" not in req and m_new == n:
        pos_new = pos_q
    else:
        pos_new = np.arange(past, past + m_new)
    pos_k = np.concatenate([np.arange(past), pos_new]).astype(np.int64)
    m = past + m_new
    stages = {}
    if req.get("positional_encoding") == "sinusoidal":
        x = x + sinusoidal(pos_q, x.shape[1]).astype(dtype)
        stages["x_pe"] = x
        ctx = ctx + sinusoidal(pos_new, ctx.shape[1]).astype(dtype) \
            if "context" in req else x

    q = np.stack([x @ w_q[h] for h in range(heads)])          # (h, n, d_k)
    k = np.stack([ctx @ w_k[h] for h in range(kv_heads)])     # (h_kv, m, d_k)
    v = np.stack([ctx @ w_v[h] for h in range(kv_heads)])     # (h_kv, m, d_v)
    # biases: h·w numbers (or an h×w stack), head h owns the h-th w of them
    for name, stage, count in (("b_q", q, heads), ("b_k", k, kv_heads),
                               ("b_v", v, kv_heads)):
        if name in req:
            b = np.asarray(req[name], dtype=dtype).reshape(count, 1, -1)
            stage += b
    q_used, k_new = q, k
    if req.get("rope", False) is not False:
        spec = req["rope"] if isinstance(req["rope"], dict) else {}
        args = (spec.get("base", 10000), spec.get("dims", d_k),
                spec.get("style", "half"), dtype)
        q_used = stages["q_rope"] = rope(q, pos_q, *args)
        k_new = stages["k_rope"] = rope(k, pos_new, *args)
    k_cache, v_cache = k_new, v
    if past:
        k_cache = np.concatenate([np.asarray(req["past_k"], dtype=dtype),
                                  k_new], axis=1)
        v_cache = np.concatenate([np.asarray(req["past_v"], dtype=dtype), v],
                                 axis=1)
    k_rep = np.repeat(k_cache, heads // kv_heads, axis=0)     # (h, m, d_k)
    v_rep = np.repeat(v_cache, heads // kv_heads, axis=0)     # (h, m, d_v)
    scores = q_used @ k_rep.transpose(0, 2, 1)             # (h, n, m)
    if "scale" in req:
        scaled = scores * dtype(req["scale"])
    else:
        scaled = scores / np.sqrt(d_k).astype(dtype)

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
    if "mask" in req:  # (n, m) for every head, or (h, n, m) one each
        mask = np.asarray(req["mask"])
        if mask.dtype == bool:
            hidden = hidden | ~mask
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
    return {**stages, "q": q, "k": k, "v": v, "k_cache": k_cache,
            "v_cache": v_cache, "scores": scores,
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
