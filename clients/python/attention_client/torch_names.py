"""PyTorch's calls in the server's terms: the ONE place where
nn.MultiheadAttention's and scaled_dot_product_attention's names, shapes and
mask senses become request fields, and the reply becomes what the module or
the function returns.  Each rule below says what the server does not take
yet; when it learns PyTorch's names, the rule goes.

Letters: N sequences, L queries, S keys, E embedding, h heads.
"""
import numpy as np

from .fields import as_numpy


def float_name(dtype):
    """The request's dtype of a NumPy or torch dtype."""
    name = str(dtype).replace("torch.", "")
    if name not in ("float64", "float32", "float16", "bfloat16"):
        raise TypeError(f"the server takes float64, float32, float16 or "
                        f"bfloat16, not {name}")
    return name


# ---- nn.MultiheadAttention -------------------------------------------------

def mha_request(module, query, key, value, key_padding_mask, attn_mask,
                need_weights, average_attn_weights, is_causal):
    """(fields, stages, finish): the request computing
    module(query, key, value, ...), and finish(result) → what it returns."""
    import torch

    if module.training and module.dropout > 0:
        raise ValueError("the server computes no dropout: call "
                         "module.eval() or build it with dropout=0")
    key = query if key is None else key
    value = key if value is None else value
    batched = query.dim() == 3
    dtype = float_name(module.out_proj.weight.dtype)

    rows = as_numpy  # (N, L, E), (L, N, E) or (L, E), as the module takes
    fields = {"x": rows(query), "num_heads": module.num_heads,
              "dtype": dtype}
    if batched:  # the server asks: its default is not the module's
        fields["batch_first"] = bool(module.batch_first)
    if module.add_zero_attn:  # refused by the server, which says why (422)
        fields["add_zero_attn"] = True
    weights = {k: as_numpy(v) for k, v in module.state_dict().items()}
    if key is query and value is query:
        pass
    elif key is value:
        fields["context"] = rows(key)
    else:
        # one context is both keys and values on the server: [key | value],
        # each projection reading its own columns (the others times zero)
        k_rows, v_rows = rows(key), rows(value)
        fields["context"] = np.concatenate([k_rows, v_rows], axis=-1)
        if "in_proj_weight" in weights:
            w = weights.pop("in_proj_weight")
            e = w.shape[1]
            weights.update(q_proj_weight=w[:e], k_proj_weight=w[e:2 * e],
                           v_proj_weight=w[2 * e:])
        wk, wv = weights["k_proj_weight"], weights["v_proj_weight"]
        weights["k_proj_weight"] = np.concatenate(
            [wk, np.zeros((wk.shape[0], v_rows.shape[-1]))], axis=1)
        weights["v_proj_weight"] = np.concatenate(
            [np.zeros((wv.shape[0], k_rows.shape[-1])), wv], axis=1)
    fields.update(weights)

    # the masks go under PyTorch's names, senses and shapes (a float
    # key_padding_mask is added to its keys' scores, as PyTorch 2 does)
    if attn_mask is not None:
        fields["attn_mask"] = as_numpy(attn_mask)
    if key_padding_mask is not None:
        p = as_numpy(key_padding_mask)
        fields["key_padding_mask"] = p.astype(bool) if p.dtype.kind in "bu" \
            else p
    if is_causal:
        fields["is_causal"] = True

    if need_weights and average_attn_weights:
        fields["average_attn_weights"] = True
    stages = ["output", "weights"] if need_weights else ["output"]
    device = module.out_proj.weight.device
    # the module's dtype (bfloat16 arrives as the float32 holding it)
    kind = module.out_proj.weight.dtype

    def finish(result):
        out = torch.from_numpy(np.array(result["output"])).to(device, kind)
        if not need_weights:
            return out, None
        w = result["weights"]  # (N, h, L, S), (h, L, S), or averaged
        return out, torch.from_numpy(np.array(w)).to(device, kind)

    return fields, stages, finish


# ---- a model's state_dict -------------------------------------------------

# the keys that make a module an attention module: its W_q (the server's
# rule for /v1's state_dict and module, which /v2 does not carry)
QUERY_KEYS = ("in_proj_weight", "q_proj_weight")


def attention_prefixes(state_dict):
    """The prefixes ("layers.0.self_attn.", or "" for the module's own
    state_dict) of the attention modules whose keys state_dict holds."""
    found = []
    for key in state_dict:
        for name in QUERY_KEYS:
            if key == name or key.endswith("." + name):
                prefix = key[:len(key) - len(name)]
                if prefix not in found:
                    found.append(prefix)
    return found


def state_dict_fields(fields):
    """fields with state_dict (a module's or a whole model's) and module
    replaced by the attention module's tensors under their own names:
    the module named by module (its prefix, "layers.1.self_attn"), else the
    one attention module state_dict holds; other modules' keys are left
    out."""
    fields = dict(fields)
    state_dict = fields.pop("state_dict")
    module = fields.pop("module", None)
    found = attention_prefixes(state_dict)
    names = ", ".join(f'"{p[:-1]}"' for p in found) or "none"
    if module is not None:
        prefix = module if module == "" or module.endswith(".") \
            else module + "."
        if prefix not in found:
            raise ValueError(f"module {module!r} is no attention module of "
                             f"the state_dict (its attention modules: "
                             f"{names})")
    elif len(found) != 1:
        raise ValueError(f"state_dict holds {len(found)} attention modules "
                         f"({names}): name one with module=" if found else
                         "state_dict holds no attention module (no "
                         "in_proj_weight or q_proj_weight)")
    else:
        prefix = found[0]
    for key, value in state_dict.items():
        if key.startswith(prefix):
            name = key[len(prefix):]
            if name in fields:
                raise ValueError(f"{name} is given both in state_dict and "
                                 f"as a field; send it once")
            fields[name] = value
    return fields


# ---- scaled_dot_product_attention -----------------------------------------

def sdpa_request(q, k, v, attn_mask, is_causal, scale):
    """(fields, stages, finish) for scaled_dot_product_attention(q, k, v,
    attn_mask, is_causal=is_causal, scale=scale): q (..., L, E), k
    (..., S, E), v (..., S, Ev); the leading dimensions become the server's
    (B, h)."""
    is_torch = not isinstance(q, np.ndarray) and hasattr(q, "detach")
    qa, ka, va = as_numpy(q), as_numpy(k), as_numpy(v)
    lead = qa.shape[:-2]
    # the server's q is (h, L, E) or (B, h, L, E): leading dims folded
    server_lead = (1,) if not lead else lead if len(lead) <= 2 else \
        (int(np.prod(lead[:-1])), lead[-1])

    def fold(a):
        a = np.broadcast_to(a, lead + a.shape[-2:])
        return a.reshape(server_lead + a.shape[-2:])

    dtype = float_name(q.dtype if is_torch else qa.dtype)
    fields = {"q": fold(qa), "k": fold(ka), "v": fold(va),
              "dtype": dtype}
    if attn_mask is not None:
        # the function's sense (booleans true = may attend), −∞ included;
        # the server broadcasts it as the function does, over its own
        # leading dimensions (B, h)
        mask = as_numpy(attn_mask)
        fields["attn_mask"] = mask if len(lead) <= 2 else fold(mask)
    if is_causal:
        fields["is_causal"] = True
    if scale is not None:
        fields["scale"] = float(scale)

    def finish(result):
        out = result["head_outputs"]
        out = out.reshape(lead + out.shape[-2:]) if lead else out[0]
        if not is_torch:
            return np.ascontiguousarray(out)
        import torch
        return torch.from_numpy(np.array(out)).to(q.device, q.dtype)

    return fields, ["head_outputs"], finish
