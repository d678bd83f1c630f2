#!/usr/bin/python3
"""Why PyTorch is slow in make bench here: its batched product.

    torch_bmm.py [--heads 8] [--n 1024] [--d-k 64]

Times, on one thread, torch.bmm of (h, n, d_k) @ (h, d_k, n), the shape of
nn.MultiheadAttention's Q Kᵀ at (n, d, h) = (1024, 512, 8), beside the same
h products as torch.mm one by one; the fastest of 5 calls each.  Debian's
PyTorch 1.13 takes several times longer for the batched form, which is where
its MHA spends its time (torch.profiler: aten::bmm), whatever OpenBLAS kernel
set it is given.
"""
import argparse
import time

import torch


def fastest(call, repeats=5):
    call()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--d-k", type=int, default=64)
    args = ap.parse_args()
    torch.set_num_threads(1)
    q = torch.randn(args.heads, args.n, args.d_k)
    k = torch.randn(args.heads, args.d_k, args.n)
    batched = fastest(lambda: torch.bmm(q, k))
    one_by_one = fastest(lambda: [q[i] @ k[i] for i in range(args.heads)])
    shape = f"({args.heads}, {args.n}, {args.d_k}) @ ({args.heads}, " \
            f"{args.d_k}, {args.n})"
    print(f"torch {torch.__version__}, one thread, {shape}: torch.bmm "
          f"{batched * 1e3:.1f} ms, {args.heads} x torch.mm "
          f"{one_by_one * 1e3:.1f} ms ({batched / one_by_one:.1f}x)")


if __name__ == "__main__":
    main()
