"""Part 1 of run_bench.py: the core (bench_core.c) against PyTorch's
nn.MultiheadAttention, NumPy and ONNX Runtime's fused MultiHeadAttention,
OpenBLAS's GEMM rate and one core's FMA peak, in the same rounds."""
import json
import math
import os
import subprocess

import blas_kernels
from harness import (HERE, PYTHON, CHECK_RTOL, BenchError, LineProcess,
                     attn_flops, log, median, pause, verdict)

CORE_SIZES = [(64, 64, 2), (256, 256, 4), (1024, 512, 8), (2048, 512, 8)]
QUICK_CORE_SIZES = [(64, 64, 2)]  # the smoke run checks the plumbing
DTYPES = ["float32", "float64"]
THREADS = [1, 2]
GEMM_SIZE, QUICK_GEMM_SIZE = 2048, 512

# the core capped at AVX2: the name of its contestant
AVX2 = "core-avx2"
# ONNX Runtime's fused MultiHeadAttention (--ort-peer): its contestant, and
# the rows it runs (float32; it hands back no weights)
ORT = "ORT MHA"


def ort_runs(case):
    return case[0] == "float32" and case[5] == 0


# PyTorch and NumPy with the fastest correct OpenBLAS kernels
# (blas_kernels.py), beside the same as the environment loads them
TORCH_BEST, NUMPY_BEST = "torch*", "numpy*"
# Seconds fma_peak spends on each of its cases (instruction set, dtype,
# chain count) in every core round: 12 cases, about 0.6 s a round.
FMA_SECONDS, FMA_QUICK_SECONDS = 0.05, 0.01
# The core's targets at (1024 and 2048, 512, 8), one thread, fused pass:
# this share of the FMA peak, this many times PyTorch's best.
PEAK_TARGET_PCT, TORCH_TARGET = 80, 1.5


def check_agreement(case, answers):
    dtype = case[0]
    ref = answers["core"]
    for name, a in answers.items():
        # ONNX Runtime's graph returns the output alone
        keys = ("sum", "abs_sum") if name == ORT else \
            ("sum", "abs_sum", "weight_sum")
        for key in keys:
            scale = max(abs(ref["abs_sum"]), 1.0) if key == "sum" else max(
                abs(ref[key]), 1.0)
            if abs(a[key] - ref[key]) > CHECK_RTOL[dtype] * scale:
                raise BenchError(
                    f"{name} disagrees with the core on {key} for {case}: "
                    f"{a[key]!r} vs {ref[key]!r}")


def parse_sizes(text):
    """"1024x512x8,2048x512x8" -> [(1024, 512, 8), (2048, 512, 8)]"""
    return [tuple(int(v) for v in size.split("x"))
            for size in text.split(",")]


def fma_peak(args, seconds):
    """fma_peak.c's answer: one core's float32 and float64 peaks (GFLOP/s),
    or None without the binary or on a CPU it refuses."""
    if not args.fma_peak:
        return None
    proc = subprocess.run([args.fma_peak, str(seconds)], capture_output=True,
                          text=True, timeout=120)
    if not proc.stdout.strip():
        raise BenchError(f"{args.fma_peak} printed nothing (exit status "
                         f"{proc.returncode}): {proc.stderr.strip()}")
    answer = json.loads(proc.stdout)
    if "error" in answer:
        log(f"fma_peak: {answer['error']}")
        return None
    return answer


def run(args):
    sizes = (parse_sizes(args.core_sizes) if args.core_sizes else
             QUICK_CORE_SIZES if args.quick else CORE_SIZES)
    threads = ([int(t) for t in args.core_threads.split(",")]
               if args.core_threads else THREADS)
    gemm_size = QUICK_GEMM_SIZE if args.quick else GEMM_SIZE
    target = args.sample_seconds
    # the anchors' best OpenBLAS kernels (blas_kernels.py), beside the
    # environment's default
    kernels = blas_kernels.pick(args.quick)
    with open(os.path.join(args.work, blas_kernels.PICK_FILE), "w") as f:
        json.dump(kernels, f)  # bench_variants.py runs with the same pick
    best_env = blas_kernels.env_for(kernels["best"])
    separate_best = kernels["best"] != kernels["default"]
    # libgomp's default busy-waiting turns every parallel region into a
    # fight for the CPU when the 2 cores are shared (measured here at
    # n=256: 90 ms a call with 2 threads against 4 ms passive); passive
    # waiting is PyTorch's better setting on this machine.
    omp = {"OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "passive")}
    contestant = [PYTHON, os.path.join(HERE, "contestants.py")]
    dtypes = args.core_dtypes.split(",") if args.core_dtypes else DTYPES
    weights = ([int(w) for w in args.core_weights.split(",")]
               if args.core_weights else [0, 1])
    cases = [(dt, n, d, h, t, w) for (n, d, h) in sizes for dt in dtypes
             for t in threads for w in weights]
    procs = {
        "core": LineProcess("core", [args.bench_core]),
        # as on a CPU with AVX2 and no AVX-512 (core/arch.h)
        AVX2: LineProcess(AVX2, [args.bench_core, "avx2"], env=dict(
            os.environ, OPENBLAS_CORETYPE="Haswell")),
        "torch": LineProcess("torch", contestant + ["torch"],
                             env=dict(os.environ, **omp)),
        "numpy": LineProcess("numpy", contestant + ["numpy"]),
    }
    gemm_procs = {"default": procs["core"]}
    if separate_best:
        procs[TORCH_BEST] = LineProcess(TORCH_BEST, contestant + ["torch"],
                                        env=dict(best_env, **omp))
        procs[NUMPY_BEST] = LineProcess(NUMPY_BEST, contestant + ["numpy"],
                                        env=best_env)
        gemm_procs["best"] = LineProcess("gemm best", [args.bench_core],
                                         env=best_env)
    if args.ort_peer and any(ort_runs(c) for c in cases):
        graphs = os.path.join(args.work, "ort")
        subprocess.run([PYTHON, os.path.join(HERE, "ort_graphs.py"), "--out",
                        graphs] + sorted({f"--size={c[1]},{c[2]},{c[3]}"
                                          for c in cases if ort_runs(c)}),
                       check=True)
        procs[ORT] = LineProcess(ORT, ["node", args.ort_peer, "--serve",
                                       graphs])

    def runs(name, case):
        return name != ORT or ort_runs(case)
    peaks = []
    try:
        info = {name: p.ask("info") for name, p in procs.items()}
        gemms = [(k, dt, t) for k in gemm_procs for dt in DTYPES
                 for t in threads]
        calls, times, gemm_calls, cpu_times = {}, {}, {}, {}
        gemm_times = {g: [] for g in gemms}
        # calibration, which also warms every contestant up and checks that
        # they compute the same numbers
        for case in cases:
            answers = {}
            for name, p in procs.items():
                if not runs(name, case):
                    continue
                cmd = "attn %s %d %d %d %d %d" % case
                a = p.ask(cmd + " 1")
                per_call = max(a["seconds"], 1e-6)
                calls[case, name] = max(1, math.ceil(target / per_call))
                times[case, name] = []
                answers[name] = a
            check_agreement(case, answers)
        for g in gemms:
            a = gemm_procs[g[0]].ask(f"gemm {g[1]} {gemm_size} {g[2]} 1")
            gemm_calls[g] = max(1, math.ceil(target / a["seconds"]))
        names = list(procs)
        for r in range(args.rounds):
            log(f"core round {r + 1}/{args.rounds}")
            order = names[r % len(names):] + names[:r % len(names)]
            # our core in a fresh process every round, warmed up by one
            # call per case: a long-lived process keeps the physical pages
            # it first got, and with them its cache-set luck (one copy of a
            # binary ran up to 6 % slower than another, all rounds long;
            # tests/bench/ab_core.py)
            for name in ("core", AVX2):
                if r > 0:
                    procs[name].restart()
                    for case in cases:
                        procs[name].ask("attn %s %d %d %d %d %d 1" % case)
            pause()
            peak = fma_peak(args, FMA_QUICK_SECONDS if args.quick
                            else FMA_SECONDS)
            if peak:
                peaks.append(peak)
            for g in gemms:
                pause()
                a = gemm_procs[g[0]].ask(
                    f"gemm {g[1]} {gemm_size} {g[2]} {gemm_calls[g]}")
                gemm_times[g].append(a["seconds"] / a["calls"])
            for case in cases:
                for name in order:
                    if not runs(name, case):
                        continue
                    cmd = "attn %s %d %d %d %d %d" % case
                    pause()
                    a = procs[name].ask(f"{cmd} {calls[case, name]}")
                    times[case, name].append(a["seconds"] / a["calls"])
                    if name == "core":  # the caller's CPU time too
                        cpu_times.setdefault(case, []).append(
                            a["cpu_seconds"] / a["calls"])
    finally:
        for p in list(procs.values()) + list(gemm_procs.values())[1:]:
            p.close()
    if not separate_best:  # the environment's kernels are the best ones
        for case in cases:
            times[case, TORCH_BEST] = times[case, "torch"]
            times[case, NUMPY_BEST] = times[case, "numpy"]
    gemm_rate = {g: 2 * gemm_size ** 3 / median(gemm_times[g]) / 1e9
                 for g in gemms}
    for dt in DTYPES:
        for t in threads:
            gemm_rate.setdefault(("best", dt, t), gemm_rate["default", dt, t])
    # the ceiling: the fastest any round measured (other work on the
    # machine only ever lowers a round's figure)
    peak = ({dt: max(p[dt] for p in peaks) for dt in DTYPES} if peaks
            else None)
    return {"info": info, "cases": cases, "times": times,
            "gemm_rate": gemm_rate, "gemm_size": gemm_size,
            "gemm_times": gemm_times, "kernels": kernels, "peak": peak,
            "peaks": peaks, "threads": threads, "cpu_times": cpu_times}


def core_peak_pct(res, case, seconds):
    """The core's rate on `case` as % of T × one core's FMA peak, or None."""
    dt, n, d, h, t, _ = case
    if not res["peak"]:
        return None
    return 100 * attn_flops(n, d, h) / seconds / 1e9 / (t * res["peak"][dt])


def core_table(res):
    k = res["kernels"]
    default = blas_kernels.kernel_name(k, "default")
    best = blas_kernels.kernel_name(k, "best")
    lines = [
        f"torch and numpy: OpenBLAS as this environment loads it "
        f"({default}); torch\\* and numpy\\*: with the fastest correct "
        f"kernel set ({best}, below). % of peak: the core's GFLOP/s ÷ "
        f"(T × one core's FMA peak); % of gemm: ÷ OpenBLAS's best GEMM "
        f"with T threads.", "",
        "| dtype | n, d, h | threads | weights | core ms | core AVX2 ms "
        "| torch ms | torch\\* ms | numpy ms | numpy\\* ms | ORT MHA ms "
        "| torch\\*/core | torch/core | torch/core AVX2 | numpy\\*/core "
        "| ORT/core | ORT/core AVX2 | core GFLOP/s | % of peak | % of gemm |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:"
        "|---:|---:|---:|---:|---:|---:|"]
    for case in res["cases"]:
        dt, n, d, h, t, w = case
        m = {name: median(res["times"][case, name]) for name in
             ("core", AVX2, "torch", TORCH_BEST, "numpy", NUMPY_BEST)}
        ort = res["times"].get((case, ORT))
        ort = median(ort) if ort else None
        core = m["core"]
        gflops = attn_flops(n, d, h) / core / 1e9
        pct = 100 * gflops / res["gemm_rate"]["best", dt, t]
        peak = core_peak_pct(res, case, core)
        lines.append(
            f"| {dt} | {n}, {d}, {h} | {t} | {'yes' if w else 'no'} "
            f"| {core * 1e3:.3f} | {m[AVX2] * 1e3:.3f} "
            f"| {m['torch'] * 1e3:.3f} | {m[TORCH_BEST] * 1e3:.3f} "
            f"| {m['numpy'] * 1e3:.3f} | {m[NUMPY_BEST] * 1e3:.3f} "
            + (f"| {ort * 1e3:.3f} " if ort else "| — ") +
            f"| {m[TORCH_BEST] / core:.2f}× | {m['torch'] / core:.2f}× "
            f"| {m['torch'] / m[AVX2]:.2f}× | {m[NUMPY_BEST] / core:.2f}× "
            + (f"| {ort / core:.2f}× | {ort / m[AVX2]:.2f}× " if ort
               else "| — | — ") +
            f"| {gflops:.1f} | "
            + (f"{peak:.0f}%" if peak is not None else "")
            + f" | {pct:.0f}% |")
    lines += ["", f"OpenBLAS GEMM ({res['gemm_size']}² square, same rounds):",
              "", "| kernels | dtype | BLAS threads | GFLOP/s |",
              "|---|---|---|---:|"]
    for (which, dt, t), rate in res["gemm_rate"].items():
        if which == "best" and k["best"] == k["default"] and \
                ("default", dt, t) in res["gemm_rate"]:
            continue
        label = (f"{default} (environment default)" if which == "default"
                 else f"{best} (best)")
        lines.append(f"| {label} | {'sgemm' if dt == 'float32' else 'dgemm'} "
                     f"| {t} | {rate:.1f} |")
    if res["peak"]:
        p = res["peaks"]
        lines += ["", f"FMA peak of one core (tests/bench/fma_peak.c, "
                  f"{p[0]['isa32']}, the fastest of {len(p)} rounds; each "
                  f"round's in brackets): float32 "
                  f"{res['peak']['float32']:.1f} GFLOP/s ("
                  + ", ".join(f"{x['float32']:.0f}" for x in p)
                  + f"), float64 {res['peak']['float64']:.1f} GFLOP/s ("
                  + ", ".join(f"{x['float64']:.0f}" for x in p) + ")."]
    else:
        lines += ["", "FMA peak: not measured (fma_peak refused this CPU "
                  "or was not given)."]
    lines += [""] + blas_kernels.table(k)
    return lines


def targets(core):
    """One line per target of the core, with the measured figure."""
    lines = []
    # against PyTorch with its best kernels (torch*): the honest anchor
    ratio = {c: median(core["times"][c, TORCH_BEST]) /
             median(core["times"][c, "core"]) for c in core["cases"]}
    worst = min(ratio, key=ratio.get)
    lines.append(f"- core never slower than PyTorch (best kernels): "
                 f"worst torch\\*/core "
                 f"{ratio[worst]:.2f}× at {worst[0]} n,d,h="
                 f"{worst[1]},{worst[2]},{worst[3]} T={worst[4]} "
                 f"weights={'yes' if worst[5] else 'no'} — "
                 f"{verdict(ratio[worst] >= 1)}")
    big_cases = [c for c in ratio if c[1] >= 1024]
    if big_cases:
        worst = min(big_cases, key=ratio.get)
        lines.append(f"- ≥ 1.5× PyTorch (best kernels) at n ≥ 1024: "
                     f"worst {ratio[worst]:.2f}× ({worst[0]} "
                     f"n={worst[1]} T={worst[4]} "
                     f"weights={'yes' if worst[5] else 'no'})"
                     f" — {verdict(ratio[worst] >= 1.5)}")
    for t in core["threads"]:
        c = ("float32", 1024, 512, 8, t, 0)
        if c in ratio:
            rate = attn_flops(1024, 512, 8) / median(
                core["times"][c, "core"]) / 1e9
            pct = 100 * rate / core["gemm_rate"]["best", "float32", t]
            lines.append(f"- ≥ 70% of sgemm (best kernels) at (1024, 512,"
                         f" 8) float32 without weights, T={t}: "
                         f"{pct:.0f}% — {verdict(pct >= 70)}")
    ort = {c: median(core["times"][c, ORT]) for c in core["cases"]
           if (c, ORT) in core["times"]}
    for name in ("core", AVX2):
        if ort:
            x = {c: t / median(core["times"][c, name])
                 for c, t in ort.items()}
            worst = min(x, key=x.get)
            lines.append(
                f"- {name} ≥ 1.2× faster than ONNX Runtime's fused "
                f"MultiHeadAttention, every float32 size and thread "
                f"count: worst ORT/{name} {x[worst]:.2f}× at n,d,h="
                f"{worst[1]},{worst[2]},{worst[3]} T={worst[4]} — "
                f"{verdict(x[worst] >= 1.2)}")
    # the fused pass (no weights asked), one thread, against the
    # hardware and against PyTorch at its best
    for dt in DTYPES:
        for n in (1024, 2048):
            c = (dt, n, 512, 8, 1, 0)
            if c not in ratio:
                continue
            pct = core_peak_pct(core, c, median(core["times"][c, "core"]))
            # the fastest round beside the median: the peak is the
            # fastest sample, and a loaded machine slows the median
            top = core_peak_pct(core, c, min(core["times"][c, "core"]))
            # per second of CPU time: what waiting for a CPU cost
            # left out
            cpu = core_peak_pct(core, c, median(core["cpu_times"][c]))
            if pct is not None:
                lines.append(
                    f"- fused {dt} pass at ({n}, 512, 8), one thread, "
                    f"≥ {PEAK_TARGET_PCT}% of the {dt} FMA peak: "
                    f"{pct:.0f}% (fastest round {top:.0f}%; per CPU "
                    f"second {cpu:.0f}%) — "
                    f"{verdict(pct >= PEAK_TARGET_PCT)}")
            lines.append(
                f"- fused {dt} pass at ({n}, 512, 8), one thread, "
                f"≥ {TORCH_TARGET}× PyTorch with its best kernels: "
                f"{ratio[c]:.2f}× — {verdict(ratio[c] >= TORCH_TARGET)}")
    return lines


def header(core):
    """The report header's lines on the contestants of part 1."""
    i = core["info"]
    out = [f"- core: BLAS {i['core']['blas_core']} single-threaded per "
           f"pool thread; T threads = pool of T−1 workers + the caller; "
           f"loops {i['core']['simd']}, products {i['core']['products']}",
           f"- core AVX2: the same capped at AVX2 (`--kernels avx2`), as "
           f"on a CPU without AVX-512: loops {i[AVX2]['simd']}, products "
           f"{i[AVX2]['products']}, BLAS {i[AVX2]['blas_core']}",
           f"- torch {i['torch']['torch']} ({i['torch']['blas']}), "
           f"numpy {i['numpy']['numpy']} ({i['numpy']['blas']})"
           + (f"; torch\\* ({i[TORCH_BEST]['blas']}), numpy\\* "
              f"({i[NUMPY_BEST]['blas']})" if TORCH_BEST in i else
              "; the environment's kernels are the fastest correct ones")
           + "; "
           f"T threads = torch.set_num_threads(T) and BLAS limited to T "
           f"(threadpoolctl); torch with OMP_WAIT_POLICY="
           f"{os.environ.get('OMP_WAIT_POLICY', 'passive')}"]
    if ORT in i:
        out += [f"- ORT MHA: ONNX Runtime {i[ORT]['ort']}'s CPU provider "
                f"(npm's onnxruntime-node), the same problem as one graph "
                f"with its fused com.microsoft.MultiHeadAttention "
                f"(tests/bench/ort_graphs.py), T intra-op threads; "
                f"float32 rows without weights only"]
    return out


def section(core, args):
    return ["### Core: attn_forward() vs nn.MultiheadAttention and NumPy "
            "(x (n,d), W_q/W_k/W_v/W_o (d,d); ratios > 1: core faster)",
            ""] + core_table(core)
