"""The Python contestants of the core benchmark: PyTorch and NumPy.

Run as `contestants.py torch` or `contestants.py numpy`; answers the same line
commands as bench_core.c (see its header), one JSON line per command, so that
run_bench.py can drive all three side by side:
    attn DTYPE N D H THREADS WEIGHTS CALLS
    info
    quit
Inputs are made by bench_value(), the NumPy twin of bench_core.c's, so every
contestant computes on the same numbers and the checksums must agree.

Threads: THREADS = T sets OpenBLAS's thread count to T (threadpoolctl) and, for
PyTorch, torch.set_num_threads(T) as well (its OpenMP intra-op pool).
"""
import json
import math
import sys
import time

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

SEED_X, SEED_WQ, SEED_WK, SEED_WV, SEED_WO = 1, 2, 3, 4, 5


def bench_value(count, seed, amp, dtype):
    """bench_core.c's bench_value() for i in [0, count), as `dtype`."""
    i = np.arange(count, dtype=np.uint64)
    u = (i * np.uint64(2654435761) + np.uint64(seed * 40503)) & np.uint64(
        0xFFFFFFFF)
    v = u.astype(np.float64) / 4294967296.0 * 2 * amp - amp
    return v.astype(dtype)


def make_inputs(n, d, dtype):
    """x (n, d) and W_q, W_k, W_v, W_o (d, d) in the lessons' x @ W layout."""
    w_amp = 1.0 / math.sqrt(d)
    x = bench_value(n * d, SEED_X, 1.0, dtype).reshape(n, d)
    ws = [bench_value(d * d, seed, w_amp, dtype).reshape(d, d)
          for seed in (SEED_WQ, SEED_WK, SEED_WV, SEED_WO)]
    return x, ws


def numpy_attention(x, w_q, w_k, w_v, w_o, h, want_weights):
    """The lesson 002 way: one projection per matrix, reshaped into heads.

    x (n, d); W (d, d); returns output (n, d) and weights (h, n, n) or None.
    """
    n, d = x.shape
    d_k = d // h

    def split(m):  # (n, d) -> (h, n, d_k)
        return m.reshape(n, h, d_k).transpose(1, 0, 2)

    q, k, v = split(x @ w_q), split(x @ w_k), split(x @ w_v)
    scores = q @ k.transpose(0, 2, 1)  # (h, n, n)
    scores *= x.dtype.type(1.0 / math.sqrt(d_k))
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    heads = scores @ v  # (h, n, d_k)
    concat = heads.transpose(1, 0, 2).reshape(n, d)
    return concat @ w_o, (scores if want_weights else None)


class NumpyContestant:
    name = "numpy"

    def setup(self, n, d, h, dtype):
        self.x, self.ws = make_inputs(n, d, dtype)
        self.h = h

    def set_threads(self, threads):
        self.limits = threadpool_limits(limits=threads, user_api="blas")

    def call(self, want_weights):
        return numpy_attention(self.x, *self.ws, self.h, want_weights)

    def info(self):
        return {"numpy": np.__version__, "blas": blas_description()}


class TorchContestant:
    name = "torch"

    def __init__(self):
        import torch
        self.torch = torch

    def setup(self, n, d, h, dtype):
        torch = self.torch
        x, (w_q, w_k, w_v, w_o) = make_inputs(n, d, dtype)
        tdtype = torch.float32 if dtype == np.float32 else torch.float64
        # The core has no biases, but PyTorch 1.13's fused fast path
        # (_native_multi_head_attention, taken with need_weights=False in
        # eval mode, batch_first) requires them: zero biases, a negligible
        # n·4d additions, give it its best path.
        mha = torch.nn.MultiheadAttention(d, h, bias=True, batch_first=True,
                                          dtype=tdtype)
        mha.eval()
        with torch.no_grad():
            # PyTorch computes x @ W.T, the lessons x @ W
            mha.in_proj_weight.copy_(
                torch.from_numpy(np.concatenate([w_q.T, w_k.T, w_v.T])))
            mha.out_proj.weight.copy_(torch.from_numpy(np.ascontiguousarray(
                w_o.T)))
            mha.in_proj_bias.zero_()
            mha.out_proj.bias.zero_()
        self.mha = mha
        self.x = torch.from_numpy(x).unsqueeze(0)  # (1, n, d)

    def set_threads(self, threads):
        self.torch.set_num_threads(threads)
        self.limits = threadpool_limits(limits=threads, user_api="blas")

    def call(self, want_weights):
        with self.torch.inference_mode():
            out, weights = self.mha(self.x, self.x, self.x,
                                    need_weights=want_weights,
                                    average_attn_weights=False)
        out = out[0].numpy()
        return out, (weights[0].numpy() if want_weights else None)

    def info(self):
        return {"torch": self.torch.__version__,
                "blas": blas_description()}


def blas_description():
    return ", ".join(f"{i['internal_api']} {i.get('version')} "
                     f"{i.get('architecture', '')}".strip()
                     for i in threadpool_info() if i["user_api"] == "blas")


def run_attn(contestant, args):
    dtype_name, n, d, h, threads, weights, calls = args
    n, d, h, threads, calls = int(n), int(d), int(h), int(threads), int(calls)
    want = weights == "1"
    dtype = {"float32": np.float32, "float64": np.float64}[dtype_name]
    contestant.setup(n, d, h, dtype)
    contestant.set_threads(threads)
    result = None
    start = time.perf_counter()
    for _ in range(calls):
        result = None  # drop the previous output inside the timed loop
        result = contestant.call(want)
    seconds = time.perf_counter() - start
    out, weights_out = result
    return {"seconds": seconds, "calls": calls,
            "sum": float(out.sum(dtype=np.float64)),
            "abs_sum": float(np.abs(out).sum(dtype=np.float64)),
            "weight_sum": float(weights_out.sum(dtype=np.float64))
            if want else 0.0}


def main():
    kind = sys.argv[1]
    contestant = TorchContestant() if kind == "torch" else NumpyContestant()
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        try:
            if words[0] == "quit":
                break
            if words[0] == "info":
                answer = contestant.info()
            elif words[0] == "attn" and len(words) == 8:
                answer = run_attn(contestant, words[1:])
            else:
                answer = {"error": "unknown command"}
        except Exception as exc:  # reported to the driver, which stops
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
