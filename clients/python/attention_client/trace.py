"""client.trace(model, *inputs): every nn.MultiheadAttention of a model,
called as the model calls it, computed again by the server and checked.

The model runs once.  Each attention module's forward is wrapped for that run
(a forward hook of PyTorch 1.13 does not see keyword arguments, and
nn.TransformerEncoderLayer passes its masks as keywords), so each call's
query, key, value and masks are kept with the module's output.  The model
runs with gradients enabled: PyTorch's fused encoder path, taken without
them in eval mode, never calls the attention modules.  Each call becomes one
request for every head's weights and the output; the server's output must
equal the module's to rtol (relative to its largest magnitude).

A bundle (Trace.save_bundle) is one JSON file, the page's model view
(docs/visualizer.md): {"layers": [{"name": "layers.0.self_attn",
"request": /v1's body}, ...]} in the order the model called them.
"""
import inspect
import json

import numpy as np

from .fields import as_numpy
from .html import trace_html
from .torch_names import mha_request

# the 16-bit types: their own step at 1 (2⁻¹⁰, 2⁻⁷) and a few more, as the
# module computes in them and the server in float32 rounded once
RTOL = {"float64": 1e-10, "float32": 1e-4, "float16": 1e-2,
        "bfloat16": 1e-1}


class Layer:
    """One attention call: its module's name, the server's Result (every
    head's weights and the output, in the server's shapes), the module's own
    output and the server's as the module returns it, and their relative
    difference."""

    def __init__(self, name, result, module_output, output, error):
        self.name, self.result = name, result
        self.module_output, self.output, self.error = \
            module_output, output, error

    @property
    def weights(self):
        return self.result["weights"]

    def __repr__(self):
        return f"<Layer {self.name} error {self.error:.3g}>"


class Trace:
    """The layers in the order the model called them."""

    def __init__(self, layers, output):
        self.layers = layers
        self.output = output  # what the model returned

    def __len__(self):
        return len(self.layers)

    def __iter__(self):
        return iter(self.layers)

    def __getitem__(self, i):
        return self.layers[i]

    def bundle(self):
        return {"layers": [{"name": layer.name,
                            "request": layer.result.request}
                           for layer in self.layers]}

    def save_bundle(self, path):
        """Writes the bundle (one JSON file) for the page's model view."""
        with open(path, "w") as f:
            json.dump(self.bundle(), f, separators=(",", ":"),
                      allow_nan=False)

    def _repr_html_(self):
        return trace_html(self.layers)


def relative_error(got, want):
    """max |got − want| / max |want| over the rows the module computed
    (a query with no key left is NaN in PyTorch)."""
    got, want = as_numpy(got).astype(float), as_numpy(want).astype(float)
    ok = np.isfinite(want)
    if not ok.any():
        return 0.0
    scale = max(np.abs(want[ok]).max(), 1e-300)
    return float(np.abs(got[ok] - want[ok]).max() / scale)


def trace(client, model, inputs, kwargs, rtol):
    import torch

    calls = []
    wrapped = []
    for name, module in model.named_modules():
        if isinstance(module, torch.nn.MultiheadAttention):
            wrapped.append(module)
            module.forward = recorder(name, module, calls)
    try:
        with torch.enable_grad():
            output = model(*inputs, **kwargs)
    finally:
        for module in wrapped:
            del module.forward  # the class's forward again
    if wrapped and not calls:
        raise RuntimeError("the model called none of its attention modules "
                           "(a fused path): give its parameters "
                           "requires_grad")
    layers = [check(client, rtol, *call) for call in calls]
    bad = [f"{layer.name} ({layer.error:.3g})" for layer in layers
           if layer.error > (rtol or RTOL[layer.result.parameters["dtype"]])]
    if bad:
        raise ValueError("the server's output differs from the module's: "
                         + ", ".join(bad))
    return Trace(layers, output)


def recorder(name, module, calls):
    forward = module.forward
    signature = inspect.signature(forward)

    def record(*args, **kwargs):
        out = forward(*args, **kwargs)
        call = signature.bind(*args, **kwargs)
        call.apply_defaults()
        calls.append((name, module, dict(call.arguments), out))
        return out
    return record


def check(client, rtol, name, module, args, out):
    fields, stages, finish = mha_request(
        module, args["query"], args["key"], args["value"],
        args.get("key_padding_mask"), args.get("attn_mask"),
        need_weights=True, average_attn_weights=False,
        is_causal=args.get("is_causal", False))
    result = client.attention(stages=stages, **fields)
    server_output = finish(result)[0]
    return Layer(name, result, out[0], server_output,
                 relative_error(server_output, out[0]))
