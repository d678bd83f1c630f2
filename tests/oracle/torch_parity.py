#!/usr/bin/python3
"""PyTorch as a second oracle: torch.nn.MultiheadAttention against the server.

Each case builds nn.MultiheadAttention(e, h, bias=True, batch_first, kdim,
vdim) in float64 or float32 with random weights and biases, runs it on
one sequence (every sixth case: a batch of 2-5, each sequence with its own
padded tail in key_padding_mask; every other batch sequence first,
batch_first=False, x (L, N, E) and the request's batch_first false) with need_weights=True and
average_attn_weights False (every third case True, the request then asking
for average_attn_weights too), and sends
the server the module's state_dict() as it is (in_proj_weight, in_proj_bias
or q/k/v_proj_weight, out_proj.weight, out_proj.bias) with num_heads; every
fourth case under a model's prefix in the state_dict member.
Cases vary self- and cross-attention,
kdim = vdim ≠ e (our one `context` is both key and value), key_padding_mask,
boolean attn_mask ((L, S), or (N·h, L, S) in a batch) and additive float
masks, each sent under PyTorch's name as the module takes it (attn_mask
means nn.MultiheadAttention's "true = masked out" when x is projected).

The server's output and per-head weights must equal PyTorch's to TOLERANCE
(relative to the largest magnitude), except in rows where every key is
hidden: PyTorch returns NaN there, the server zero weights and a zero head
output (docs/api.md), so that row's output is out_proj.bias; checked too.
"""
import argparse
import sys

import numpy as np
import torch

from serverproc import Server, default_server

TOLERANCE = {"float64": 1e-12, "float32": 1e-5}


def random_case(rng, i):
    """(module inputs, request) for case i."""
    dtype = "float32" if i % 3 == 2 else "float64"
    tdt = torch.float32 if dtype == "float32" else torch.float64
    heads = int(rng.integers(1, 5))
    e = heads * int(rng.integers(1, 6))
    n = int(rng.integers(1, 12))
    cross = i % 2 == 1
    kdim = int(rng.integers(1, 10)) if cross and i % 4 == 3 else e
    m = int(rng.integers(1, 15)) if cross else n
    torch.manual_seed(int(rng.integers(1 << 30)))
    batch = int(rng.integers(2, 6)) if i % 6 == 5 else 0
    # every other batch sequence first, the module's default layout
    batch_first = not (batch and i % 12 == 5)
    mha = torch.nn.MultiheadAttention(e, heads, bias=True,
                                      batch_first=batch_first, kdim=kdim,
                                      vdim=kdim, dtype=tdt)
    with torch.no_grad():  # PyTorch starts its biases at zero
        for name, p in mha.named_parameters():
            if name.endswith("bias"):
                p.normal_()
    seqs = batch or 1
    x = torch.tensor(rng.normal(size=(seqs, n, e)), dtype=tdt)
    ctx = torch.tensor(rng.normal(size=(seqs, m, kdim)), dtype=tdt) if cross \
        else x
    req = {"x": x.tolist() if batch else x[0].tolist(), "num_heads": heads,
           "dtype": dtype, "return": ["output", "weights"]}
    if cross:
        req["context"] = ctx.tolist() if batch else ctx[0].tolist()
    if batch:  # the module's batch_first, which a batch must say
        req["batch_first"] = batch_first
    if not batch_first:  # x (L, N, E) and context (S, N, E), as the module
        x, ctx = x.transpose(0, 1), ctx.transpose(0, 1)
        req.update(x=x.tolist(), batch_first=False)
        if cross:
            req["context"] = ctx.tolist()
    # the keys as state_dict() writes them; every fourth case as a model's
    # state_dict holds them, under the module's prefix in state_dict
    prefix = "encoder.layers.0.self_attn." if i % 4 == 1 else None
    for name, value in mha.state_dict().items():
        if prefix:
            req.setdefault("state_dict", {})[prefix + name] = value.tolist()
        else:
            req[name] = value.tolist()
    kwargs = {}
    if batch:
        lengths = rng.integers(1, m + 1, size=batch)
        padding = np.arange(m)[None, :] >= lengths[:, None]
        kwargs["key_padding_mask"] = torch.tensor(padding)
    elif i % 5 == 1:
        padding = rng.random(m) > 0.7
        kwargs["key_padding_mask"] = torch.tensor(padding[None, :])
    if i % 4 == 2:
        hidden = rng.random((n, m)) > 0.6
        kwargs["attn_mask"] = torch.tensor(hidden)
    elif batch and i % 12 == 11:
        # one per sequence and head, (N·h, L, S); key 0 is never padding
        # and stays visible, so no head of a row is left without a key
        hidden = rng.random((batch * heads, n, m)) > 0.6
        hidden[:, :, 0] = False
        kwargs["attn_mask"] = torch.tensor(hidden)
    elif i % 4 == 0 and i % 8 == 0:
        additive = rng.normal(size=(n, m))
        kwargs["attn_mask"] = torch.tensor(additive, dtype=tdt)
    # PyTorch's names, in the module's own senses and shapes
    for name, value in kwargs.items():
        req[name] = (value[0] if name == "key_padding_mask" and not batch
                     else value).tolist()
    # every third case the module's default, weights averaged over heads
    average = i % 3 == 1
    if average:
        req["average_attn_weights"] = True
    with torch.no_grad():
        out, weights = mha(x, ctx, ctx, need_weights=True,
                           average_attn_weights=average, **kwargs)
    if not batch:
        out, weights = out[0], weights[0]
    return out.numpy().astype(np.float64), \
        weights.numpy().astype(np.float64), req, mha


def compare(got, want, hidden_row, tolerance):
    """Relative error over rows PyTorch computed; those it left NaN (every
    key hidden) must equal hidden_row in ours.  Returns (error, number of
    such rows that differ)."""
    got = np.asarray(got, dtype=np.float64)
    nan_rows = np.isnan(want).any(axis=-1)
    ok = ~nan_rows
    scale = np.abs(want[ok]).max() if ok.any() else 1.0
    err = np.abs(got[ok] - want[ok]).max() / max(scale, 1e-300) \
        if ok.any() else 0.0
    # float32 replies are the shortest decimals of float32 values: compare
    # within the dtype's tolerance, not bit for bit with float64
    off = np.abs(got[nan_rows] - hidden_row) > tolerance * np.maximum(
        1.0, np.abs(hidden_row))
    wrong = int(np.count_nonzero(off.any(axis=-1))) if nan_rows.any() else 0
    return err, wrong


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", default=default_server())
    parser.add_argument("--cases", type=int, default=80)
    parser.add_argument("--seed", type=int, default=1913)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    failures, worst = 0, {"float64": 0.0, "float32": 0.0}
    with Server(args.server, "--threads", "2") as server:
        for i in range(args.cases):
            out, weights, req, mha = random_case(rng, i)
            status, body = server.post(req)
            if status != 200:
                print(f"case {i}: status {status}: {body}")
                failures += 1
                continue
            # the server's output is (n, e); weights (h, n, m)
            tol = TOLERANCE[req["dtype"]]
            b_o = mha.out_proj.bias.detach().numpy().astype(np.float64)
            e_out, z_out = compare(body["output"], out, b_o, tol)
            e_w, z_w = compare(body["weights"], weights, 0.0, tol)
            err = max(e_out, e_w)
            worst[req["dtype"]] = max(worst[req["dtype"]], err)
            if err > tol or z_out or z_w:
                print(f"case {i} ({req['dtype']}): output {e_out:.3g}, "
                      f"weights {e_w:.3g}, hidden rows wrong {z_out + z_w}")
                failures += 1
    print(f"torch parity: {args.cases} nn.MultiheadAttention cases, worst "
          f"relative error float64 {worst['float64']:.3g}, float32 "
          f"{worst['float32']:.3g}")
    print(f"{args.cases - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
