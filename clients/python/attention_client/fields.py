"""Request fields as the caller writes them (/v1's names, NumPy arrays,
torch tensors, lists) → what travels, and → /v1's JSON body (the form a
shared link and a bundle hold)."""
import base64

import numpy as np

# fields the client handles itself: the dtype is the inputs' datatype, the
# stages are the outputs (need_weights false: output alone), labels stay
# with the Result, and the client picks the reply's encoding
CLIENT_FIELDS = ("dtype", "return", "need_weights", "tokens",
                 "context_tokens", "encoding")


def as_numpy(value):
    """A torch tensor (without touching torch), array or nested list; a
    torch.bfloat16 tensor, which NumPy has no type for, as float32 (which
    holds each of its values)."""
    if hasattr(value, "detach") and hasattr(value, "cpu"):
        value = value.detach().cpu()
        if str(value.dtype) == "torch.bfloat16":
            value = value.float()
        return value.numpy()
    return np.asarray(value)


def plain(value):
    """A parameter as JSON: NumPy scalars and arrays to Python values."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


def split(fields, tensor_names):
    """(tensors, parameters) of the fields the server computes from:
    tensor_names are the server's inputs (its model metadata)."""
    tensors, parameters = {}, {}
    for name, value in fields.items():
        if name in CLIENT_FIELDS:
            continue
        if name in tensor_names:
            tensors[name] = as_numpy(value)
        else:
            parameters[name] = plain(value)
    return tensors, parameters


def json_mask(name, mask, fields):
    """A mask holding −∞ in JSON, which has none: booleans when its other
    numbers are all 0 (in the field's sense: attn_mask projecting x is
    nn.MultiheadAttention's, true = masked out, and key_padding_mask true =
    padding; otherwise true = may attend), else the binary form."""
    hidden = np.isneginf(mask)
    if not np.where(hidden, 0.0, mask).any():
        true_hides = name == "key_padding_mask" or \
            (name == "attn_mask" and "q" not in fields)
        return (hidden if true_hides else ~hidden).tolist()
    little = mask.astype(mask.dtype.newbyteorder("<"))
    return {"shape": list(mask.shape),
            "base64": base64.b64encode(little.tobytes()).decode()}


def v1_body(fields, stages=None, arrays=False):
    """/v1's JSON body of the same request: nested lists (a mask holding −∞
    as json_mask says; NumPy arrays with `arrays`, for a writer that stops
    early), the labels, and `return` when stages are given (a shared link
    leaves it out, and need_weights, which return replaces)."""
    body = {}
    for name, value in fields.items():
        if name in ("return", "need_weights", "encoding"):
            continue
        a = value if isinstance(value, (str, bool, int, float, dict)) \
            else as_numpy(value)
        if isinstance(a, np.ndarray) and a.dtype.kind == "f" and \
                np.isneginf(a).any():
            body[name] = json_mask(name, a, fields)
            continue
        body[name] = (a if arrays else a.tolist()) \
            if isinstance(a, np.ndarray) else plain(a)
    if stages is not None:
        body["return"] = list(stages)
    return body
