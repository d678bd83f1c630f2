#!/usr/bin/python3
"""How far the server's float16 and bfloat16 replies are from PyTorch's
float32 result on the same inputs: nn.MultiheadAttention modules whose
weights, biases and inputs are float16 (bfloat16) values, sent in that type
through the client, against the same module and inputs in float32 (where
each of those values is exact).  The server computes in float32 and rounds
each number of the reply to the type once, so the error should be that
rounding: at most half a step of the type at each number (2⁻¹¹ of it for
float16, 2⁻⁸ for bfloat16), plus float32's own differences.  Prints, per
configuration and type, the largest error of the output and of the weights
relative to the largest magnitude of each, and the largest error of any
number relative to itself (docs/api.md quotes them).

    /usr/bin/python3 tests/python/half_precision.py [--server build/attention-server]
"""
import argparse
import copy
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))

# (embed_dim, num_heads, batch, tokens): a lesson's size, a small model's,
# and one of width 512
CONFIGS = [(16, 2, 2, 8), (64, 4, 2, 64), (512, 8, 1, 128)]
TYPES = [torch.float16, torch.bfloat16]


def errors(client, e, h, batch, tokens, kind, seed=0):
    """(output's, weights' error relative to their largest magnitude, the
    largest error of a number relative to itself)."""
    torch.manual_seed(seed)
    module = torch.nn.MultiheadAttention(e, h, batch_first=True).eval()
    with torch.no_grad():
        for name, p in module.named_parameters():
            if name.endswith("bias"):
                p.normal_()
    module = module.to(kind)
    x = torch.randn(batch, tokens, e).to(kind)
    out, weights = client.mha(module, x, x, x, average_attn_weights=False)
    wide = copy.deepcopy(module).float()
    with torch.no_grad():
        want, want_weights = wide(x.float(), x.float(), x.float(),
                                  average_attn_weights=False)
    assert out.dtype == kind and weights.dtype == kind

    def relative(got, ref):
        return ((got.float() - ref).abs().max() / ref.abs().max()).item()

    def own(got, ref):
        big = ref.abs() > 1e-3  # away from the subnormals
        return ((got.float() - ref).abs()[big] / ref.abs()[big]).max().item()
    return (relative(out, want), relative(weights, want_weights),
            max(own(out, want), own(weights, want_weights)))


def main():
    sys.path.insert(0, os.path.join(HERE, "..", "oracle"))
    sys.path.insert(0, os.path.join(HERE, "..", "..", "clients", "python"))
    from serverproc import Server
    from attention_client import Client
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", default="build/attention-server")
    args = parser.parse_args()
    with Server(os.path.abspath(args.server), "--threads", "2") as server, \
            Client(f"http://127.0.0.1:{server.port}") as client:
        print("| E, h, B, n | dtype | output | weights | any number, of itself |")
        print("| --- | --- | --- | --- | --- |")
        for e, h, batch, tokens in CONFIGS:
            for kind in TYPES:
                out, weights, own = errors(client, e, h, batch, tokens, kind)
                name = str(kind).replace("torch.", "")
                print(f"| {e}, {h}, {batch}, {tokens} | {name} | {out:.2g} "
                      f"| {weights:.2g} | {own:.2g} |")
        server.proc.stdout.close()


if __name__ == "__main__":
    main()
