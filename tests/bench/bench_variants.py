#!/usr/bin/python3
"""Modern attention in the core, beside the plain pass and PyTorch.

    bench_variants.py --bench-core build/bench/bench_core [--rounds 3]
                      [--quick] [--out FILE]

Part A, at (n, d, h) = (1024, 512, 8), float32, one thread: the plain fused
pass, then causal, a sliding window of 256, ALiBi, RoPE, grouped-query heads
(h_kv = 2) and all of them at once, each as bench_core.c's `variant` command;
beside each, torch.nn.MultiheadAttention (one thread) where it has an
equivalent (an attention mask: causal and the window as boolean masks, ALiBi
as an additive (h, n, n) one; PyTorch 1.13 has no rotary embedding nor
grouped-query heads), once with OpenBLAS as the environment loads it and
once with the fastest correct kernel set (blas_kernels.py), each in a
process of its own.  Part B, the two targets of the fast path:
  - grouped-query heads, h = 16, h_kv = 4 at n = 1024, d = 2048: at least
    1.3x faster than h_kv = 16 (K and V are a quarter as wide);
  - a window of 256 at n = 8192, d = 512, h = 8: at most 1/6 of the time
    without one (key blocks the window hides are skipped).  Judged on the
    attention itself (x to Q, K, V and the heads' concatenation), whose
    arithmetic the issue's "about 1/9" counts; the same with W_o is printed
    beside it.  Each row also prints what the multiply-adds alone predict
    for a window of w (2w - 1 keys a row: |p_i - p_j| < w).
Part C: a batch of B = 8 sequences of (256, 512, 8) in one forward pass
within 10 % of the same sequences one by one (the same code runs each; the
end-to-end comparison over HTTP is run_bench.py's part 4).
Every figure is the median of --rounds interleaved rounds; each target line
says "met" or "not met".  --quick runs tiny sizes once (the smoke test: the
commands work, the script does not rot).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import blas_kernels


class Core:
    """bench_core.c, driven line by line."""

    def __init__(self, binary):
        self.proc = subprocess.Popen([binary], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)

    def variant(self, n, d, h, kv=0, rope=0, alibi=0, window=0, causal=0,
                w_o=1):
        self.proc.stdin.write(f"variant float32 {n} {d} {h} {kv} {rope} "
                              f"{alibi} {window} {causal} {w_o} 1 1\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        if "error" in answer:
            sys.exit(f"bench_core: {answer['error']}")
        return answer["seconds"]

    def batch(self, sequences, n, d, h, threads):
        """(seconds of one batched forward, of the same sequences alone)."""
        self.proc.stdin.write(f"batch float32 {sequences} {n} {d} {h} "
                              f"{threads} 1\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        if "error" in answer:
            sys.exit(f"bench_core: {answer['error']}")
        return answer["batch"], answer["one_by_one"]

    def close(self):
        self.proc.stdin.write("quit\n")
        self.proc.stdin.close()
        self.proc.wait()


def alibi_slopes(h):
    """The paper's slopes for 8 heads, repeated (bench_core.c's)."""
    return np.array([2.0 ** (-8.0 * (k % 8 + 1) / 8) for k in range(h)])


class TorchWorker:
    """nn.MultiheadAttention, one thread (its own and OpenBLAS's), in eval
    mode with batch_first and zero biases as contestants.py sets it up for
    its fastest path, with an attention mask standing for the variant.
    Runs in a process of its own (`--torch-worker`), since OpenBLAS's kernel
    set is chosen once, when the process loads it."""

    def __init__(self):
        import torch
        from threadpoolctl import threadpool_limits
        self.torch = torch
        torch.set_num_threads(1)
        self.limits = threadpool_limits(limits=1, user_api="blas")

    def time(self, n, d, h, mask_kind, window=0):
        torch = self.torch
        mha = torch.nn.MultiheadAttention(d, h, batch_first=True)
        mha.eval()
        with torch.no_grad():
            mha.in_proj_bias.zero_()
            mha.out_proj.bias.zero_()
        x = torch.randn(1, n, d)
        pos = torch.arange(n)
        ahead = pos[None, :] - pos[:, None]  # (n, n) p_j − p_i
        mask = None
        if mask_kind == "causal":
            mask = ahead > 0  # True: may not attend
        elif mask_kind == "window":
            mask = ahead.abs() >= window
        elif mask_kind == "alibi":
            slopes = torch.tensor(alibi_slopes(h), dtype=torch.float32)
            mask = -slopes[:, None, None] * ahead.abs()[None].float()
        with torch.inference_mode():
            start = time.perf_counter()
            mha(x, x, x, attn_mask=mask, need_weights=False)
            return time.perf_counter() - start


def torch_worker():
    """The child's side: `n d h mask window` per line, seconds back."""
    worker = TorchWorker()
    for line in sys.stdin:
        n, d, h, mask, window = line.split()
        print(worker.time(int(n), int(d), int(h), mask, int(window)),
              flush=True)


class Torch:
    """A TorchWorker process with OpenBLAS's kernels as `env` sets them."""

    def __init__(self, env):
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--torch-worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)

    def time(self, n, d, h, mask_kind, window=0):
        self.proc.stdin.write(f"{n} {d} {h} {mask_kind} {window}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            sys.exit("bench_variants: the PyTorch worker died")
        return float(line)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


# (name, bench_core variant arguments, PyTorch's mask or None)
def part_a(n, d, h):
    return [
        ("plain", dict(), "none"),
        ("causal", dict(causal=1), "causal"),
        ("window 256", dict(window=256), "window"),
        ("ALiBi", dict(alibi=1), "alibi"),
        ("RoPE", dict(rope=1), None),
        ("grouped-query, h_kv = 2", dict(kv=2), None),
        ("causal + window + ALiBi + RoPE + h_kv = 2",
         dict(causal=1, window=256, alibi=1, rope=1, kv=2), None),
    ]


def predicted_share(n, d, h, window, w_o):
    """The multiply-adds of self-attention with a window of `window` over
    those without one: projections (three, four with W_o, n · d · d each)
    plus Q Kᵀ and weights · V over the keys each row sees (|i - j| <
    window)."""
    projections = (4 if w_o else 3) * n * d * d
    seen = sum(min(i + window - 1, n - 1) - max(i - window + 1, 0) + 1
               for i in range(n))
    return (projections + 2 * seen * d) / (projections + 2 * n * n * d)


def median_rounds(rounds, jobs):
    """Runs every job once to warm up, then once per round, interleaved;
    medians by job."""
    for job in jobs:
        job()
    times = [[] for _ in jobs]
    for _ in range(rounds):
        for i, job in enumerate(jobs):
            times[i].append(job())
    return [statistics.median(t) for t in times]


def main():
    if sys.argv[1:] == ["--torch-worker"]:
        torch_worker()
        return 0
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench-core", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--blas-kernels",
                    help="run_bench.py's pick of OpenBLAS kernels (JSON), "
                    "used when the file exists; else a pick of its own")
    ap.add_argument("--out")
    args = ap.parse_args()
    rounds = 1 if args.quick else args.rounds
    n, d, h = (64, 64, 8) if args.quick else (1024, 512, 8)
    # PyTorch as the environment loads OpenBLAS, and with the fastest
    # correct kernel set (blas_kernels.py) when that is another one
    kernels = blas_kernels.pick_or_load(args.blas_kernels, args.quick)
    core = Core(args.bench_core)
    torches = [Torch(dict(os.environ))]
    if kernels["best"] != kernels["default"]:
        torches.append(Torch(blas_kernels.env_for(kernels["best"])))
    default_name = blas_kernels.kernel_name(kernels, "default")
    best_name = blas_kernels.kernel_name(kernels, "best")
    lines = ["## Modern attention in the core (float32, one thread)", "",
             f"Part A: (n, d, h) = ({n}, {d}, {h}); medians of {rounds} "
             f"interleaved rounds, printed by `{' '.join(sys.argv)}`. "
             f"PyTorch: OpenBLAS as this environment loads it "
             f"({default_name}); PyTorch\\*: with the fastest correct "
             f"kernel set ({best_name})"
             + ("." if len(torches) > 1 else ", the same."), "",
             "| variant | ours (ms) | vs plain | PyTorch MHA (ms) | "
             "PyTorch / ours | PyTorch\\* MHA (ms) | PyTorch\\* / ours |",
             "|---|---|---|---|---|---|---|"]
    rows = part_a(n, d, h)
    jobs = []
    for _, kw, mask in rows:
        jobs.append(lambda kw=kw: core.variant(n, d, h, **kw))
        for torch in torches if mask else []:
            jobs.append(lambda mask=mask, torch=torch:
                        torch.time(n, d, h, mask, 256))
    medians = iter(median_rounds(rounds, jobs))
    plain = None
    for name, _, mask in rows:
        ours = next(medians)
        plain = plain or ours
        theirs = [next(medians) for _ in torches] if mask else []
        theirs += theirs[:1] * (2 - len(theirs)) if theirs else []
        lines.append(
            f"| {name} | {ours * 1e3:.1f} | {ours / plain:.2f}x | "
            + (" | ".join(f"{t * 1e3:.1f} | {t / ours:.2f}x"
                          for t in theirs) + " |" if theirs
               else "no equivalent | | | |"))
    for torch in torches:
        torch.close()

    # part B: the fast path's two targets
    gqa = (128, 256, 16) if args.quick else (1024, 2048, 16)
    win = (1024, 64, 8) if args.quick else (8192, 512, 8)
    (full_kv, grouped, no_window, window, no_window_o,
     window_o) = median_rounds(rounds, [
        lambda: core.variant(*gqa, kv=16),
        lambda: core.variant(*gqa, kv=4),
        lambda: core.variant(*win, w_o=0),
        lambda: core.variant(*win, window=256, w_o=0),
        lambda: core.variant(*win),
        lambda: core.variant(*win, window=256),
    ])
    # part C: a batch in the core, on both threads
    bat = (2, 32, 64, 8) if args.quick else (8, 256, 512, 8)
    pairs = []
    for _ in range(rounds * 3 + 1):
        pairs.append(core.batch(*bat, threads=2))
    core.close()
    together = statistics.median(p[0] for p in pairs[1:] or pairs)
    alone = statistics.median(p[1] for p in pairs[1:] or pairs)
    speedup = full_kv / grouped
    share = window / no_window

    def verdict(ok):
        if args.quick:
            return "not judged at --quick's sizes"
        return "met" if ok else "not met"
    lines += ["", "Part B: the fast path's targets", "",
              f"- grouped-query heads, (n, d, h) = {gqa}: h_kv = 16 "
              f"{full_kv * 1e3:.1f} ms, h_kv = 4 {grouped * 1e3:.1f} ms: "
              f"{speedup:.2f}x faster (target at least 1.3x: "
              f"{verdict(speedup >= 1.3)})",
              f"- sliding window, (n, d, h) = {win}, no W_o: no window "
              f"{no_window * 1e3:.1f} ms, window 256 {window * 1e3:.1f} ms: "
              f"1/{1 / share:.1f} of the time (multiply-adds alone: "
              f"1/{1 / predicted_share(*win, 256, False):.1f}; target at "
              f"most 1/6: {verdict(share <= 1 / 6)})",
              f"- the same with W_o: no window {no_window_o * 1e3:.1f} ms, "
              f"window 256 {window_o * 1e3:.1f} ms: "
              f"1/{no_window_o / window_o:.1f} of the time (multiply-adds "
              f"alone: 1/{1 / predicted_share(*win, 256, True):.1f})",
              "", "Part C: a batch in the core (two threads)", "",
              f"- B = {bat[0]} sequences of (n, d, h) = {bat[1:]} in one "
              f"forward pass {together * 1e3:.1f} ms, one by one "
              f"{alone * 1e3:.1f} ms: {together / alone:.2f}x (target within "
              f"10 %: {verdict(together <= 1.1 * alone)})"]
    report = "\n".join(lines) + "\n"
    print(report)
    if args.out:
        with open(args.out, "w") as f:
            f.write(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
