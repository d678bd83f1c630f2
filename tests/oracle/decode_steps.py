#!/usr/bin/python3
"""Decoding with the KV cache: n one-token requests, each sending the
k_cache and v_cache the one before returned as past_k and past_v, give the
rows of one causal request over all n tokens.

Each case is a random model (grouped-query heads, RoPE of either style,
biases, w_o, sometimes the sinusoidal encoding, ALiBi or a sliding window)
and n tokens; the one-shot request is causal, the steps are not (a single
new token sees every cached key anyway).  Compared: every step's output row
and the final cache with the one-shot request's output and k_cache/v_cache,
and, in a batch, each sequence's; float64 to 1e-12, float32 to 1e-5.
"""
import argparse
import sys

import numpy as np

from reference import from_wire, relative_error
from serverproc import Server, default_server

TOLERANCE = {"float64": 1e-12, "float32": 1e-5}


def random_model(rng, case):
    dtype = "float32" if case % 2 else "float64"
    kv_heads = int(rng.integers(1, 4))
    heads = kv_heads * int(rng.integers(1, 4))
    d, d_k, d_v = (int(rng.integers(2, 17)), 2 * int(rng.integers(1, 5)),
                   int(rng.integers(1, 9)))
    n = int(rng.integers(2, 13))
    batch = int(rng.integers(1, 4)) if case % 3 == 2 else 0
    lead = (batch,) if batch else ()
    model = {
        "dtype": dtype, "num_heads": heads, "num_kv_heads": kv_heads,
        "w_q": rng.normal(size=(d, heads * d_k)).tolist(),
        "w_k": rng.normal(size=(d, kv_heads * d_k)).tolist(),
        "w_v": rng.normal(size=(d, kv_heads * d_v)).tolist(),
        "b_q": rng.normal(size=heads * d_k).tolist(),
        "b_k": rng.normal(size=kv_heads * d_k).tolist(),
        "w_o": rng.normal(size=(heads * d_v, d)).tolist(),
        "rope": {"style": "interleaved"} if case % 2 else True,
    }
    if case % 4 == 1:
        model["positional_encoding"] = "sinusoidal"
    if case % 5 == 2:
        model["alibi"] = True
    if case % 5 == 3:
        model["window"] = int(rng.integers(1, n + 1))
    x = rng.normal(size=lead + (n, d))
    return model, x, batch


def run_case(server, rng, case):
    model, x, batch = random_model(rng, case)
    dtype = model["dtype"]
    n = x.shape[-2]
    cache = ["output", "k_cache", "v_cache"]
    status, whole = server.post(dict(model, x=x.tolist(), causal=True,
                                     **{"return": cache}))
    if status != 200:
        print(f"case {case}: one-shot request: {status} {whole}")
        return float("inf")
    past = None
    rows = []
    for t in range(n):
        step = dict(model, x=x[..., t:t + 1, :].tolist(), **{"return": cache})
        if past:
            step["past_k"], step["past_v"] = past
        status, body = server.post(step)
        if status != 200:
            print(f"case {case} step {t}: {status} {body}")
            return float("inf")
        rows.append(from_wire(body["output"]))
        past = body["k_cache"], body["v_cache"]
        if body["shapes"]["k_cache"][-2] != t + 1:
            print(f"case {case} step {t}: the cache holds "
                  f"{body['shapes']['k_cache'][-2]} positions, not {t + 1}")
            return float("inf")
    errors = [relative_error(np.concatenate(rows, axis=-2),
                             from_wire(whole["output"])),
              relative_error(from_wire(past[0]), from_wire(whole["k_cache"])),
              relative_error(from_wire(past[1]), from_wire(whole["v_cache"]))]
    worst = max(errors)
    if worst > TOLERANCE[dtype]:
        print(f"case {case} ({dtype}, batch {batch}): output, k_cache, "
              f"v_cache relative errors {errors}")
    return worst


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", default=default_server())
    parser.add_argument("--cases", type=int, default=24)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    failures, worst = 0, {"float64": 0.0, "float32": 0.0}
    with Server(args.server, "--threads", "2") as server:
        for case in range(args.cases):
            dtype = "float32" if case % 2 else "float64"
            err = run_case(server, rng, case)
            worst[dtype] = max(worst[dtype], err)
            failures += err > TOLERANCE[dtype]
    print(f"decoding: {args.cases} cases of one-token steps against one "
          f"causal request, worst relative error float64 "
          f"{worst['float64']:.3g}, float32 {worst['float32']:.3g}")
    print(f"{args.cases - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
