#!/usr/bin/python3
"""The fastest OpenBLAS kernel set that computes correctly on this CPU.

    blas_kernels.py [--quick] [--out FILE.json]

OpenBLAS reads OPENBLAS_CORETYPE once, when it is loaded, and this
environment sets it for every process (Haswell: 256-bit kernels, on a CPU
with 512-bit units).  The benchmark's anchors (OpenBLAS's GEMM, PyTorch,
NumPy) should run at their best, so each candidate kernel set is tried in a
process of its own (NumPy through OpenBLAS, one thread): it must load under
its own name, compute C = A @ B in float32 and float64 within CHECK_RTOL of a
reference (a candidate the CPU cannot run dies of SIGILL and is out), and
the fastest correct one, by the geometric mean of its sgemm and dgemm rates
(each the fastest of PICK_ROUNDS interleaved probes), is picked.  The environment's own setting stays in the report, labelled as
such.  Only the benchmark's anchors use the pick (run_bench.py,
bench_variants.py); the server and the tests never do.

`--probe SIZE CHECK` is the child's side: one JSON line with the loaded
core's name, sgemm and dgemm GFLOP/s at SIZE² and the relative errors (none
with CHECK 0: the later rounds only time).
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = sys.executable
# Kernel sets worth trying on x86-64 (OpenBLAS 0.3.21's names): the AVX-512
# ones, AVX2, AVX and SSE3, plus whatever the environment sets and what
# OpenBLAS picks when nothing is set (AUTODETECT).
CANDIDATES = ["SkylakeX", "Cooperlake", "Haswell", "Zen", "Sandybridge",
              "Prescott"]
AUTODETECT = "(autodetected)"
# GEMM sizes: timed, and checked against a long double reference (the
# reference is computed without BLAS, in O(CHECK³) long double operations;
# 191 is odd so that every kernel's edge cases run).
SIZE, QUICK_SIZE = 2048, 256
CHECK = 191
# Largest relative error (Frobenius norm of the difference ÷ that of the
# reference) accepted: float32 sums of 2048 products of numbers in [−1, 1]
# reach about 1e-6 (√k · 2⁻²⁴ with k = 2048 gives 3e-6 in the worst order);
# 1e-5 leaves room and still refuses a wrong kernel, whose error is of order
# 1.  float64 likewise at 2⁻⁵³.
CHECK_RTOL = {"float32": 1e-5, "float64": 1e-13}
# Best of this many calls times each GEMM (after one call that warms up).
TIMED_CALLS = 3
# Every candidate is probed this many times, in rotating order (the smoke
# run: once).
PICK_ROUNDS = 3
# The smoke run probes the environment's default and the next candidate
# (OpenBLAS's own pick): enough to check, time and compare, in 1 s.
QUICK_CANDIDATES = 2
# After the first round only the candidates within this share of the
# fastest are timed again (the others are 2-5x slower: noise cannot make
# them the pick).
CONTENDER_SHARE = 0.7
SEED_A, SEED_B = 6, 7  # bench_core.c's seeds of its gemm command
# run_bench.py's part 1 writes its pick here (in its --work folder), so
# that bench_variants.py, run after it by `make bench`, uses the same one
PICK_FILE = "blas_kernels.json"


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def environment_default():
    """The kernel set this environment loads: OPENBLAS_CORETYPE's value,
    or AUTODETECT."""
    return os.environ.get("OPENBLAS_CORETYPE") or AUTODETECT


def env_for(core):
    """os.environ with OpenBLAS set to `core` (AUTODETECT: unset)."""
    env = dict(os.environ)
    env.pop("OPENBLAS_CORETYPE", None)
    if core != AUTODETECT:
        env["OPENBLAS_CORETYPE"] = core
    return env


def probe(size, check):
    import numpy as np
    from threadpoolctl import threadpool_info, threadpool_limits
    sys.path.insert(0, HERE)
    from contestants import bench_value
    threadpool_limits(limits=1, user_api="blas")
    loaded = [i.get("architecture", "?") for i in threadpool_info()
              if i["user_api"] == "blas"]
    out = {"loaded": loaded[0] if loaded else "?"}
    for dtype, key in ((np.float32, "float32"), (np.float64, "float64")):
        a = bench_value(size * size, SEED_A, 1.0, dtype).reshape(size, size)
        b = bench_value(size * size, SEED_B, 1.0, dtype).reshape(size, size)
        c = a @ b
        best = math.inf
        for _ in range(TIMED_CALLS):
            start = time.perf_counter()
            c = a @ b
            best = min(best, time.perf_counter() - start)
        out[key + "_gflops"] = 2 * size ** 3 / best / 1e9
        if not check:  # a timing-only probe
            continue
        # the timed size against float64 of the same (float32-exact) inputs
        ref = a.astype(np.float64) @ b.astype(np.float64)
        err = [float(np.linalg.norm(c - ref) / np.linalg.norm(ref))]
        # an odd size against long double, computed without BLAS
        sa, sb = a[:check, :check], b[:check, :check]
        ref = np.einsum("ik,kj->ij", sa.astype(np.longdouble),
                        sb.astype(np.longdouble))
        got = (sa @ sb).astype(np.longdouble)
        err.append(float(np.linalg.norm((got - ref).astype(np.float64)) /
                         np.linalg.norm(ref.astype(np.float64))))
        out[key + "_error"] = max(err) if key == "float32" else err[1]
    return out


def geomean(row):
    """A candidate's rate so far: the geometric mean of its sgemm and dgemm
    GFLOP/s (0 before it ran)."""
    return math.sqrt(row.get("float32_gflops", 0) *
                     row.get("float64_gflops", 0))


def run_probe(name, size, check):
    """One probe of a candidate in a process of its own (check: the size of
    the long double check, 0 for none): its answer, or {"why": ...} when it
    did not run."""
    try:
        proc = subprocess.run(
            [PYTHON, os.path.abspath(__file__), "--probe", str(size),
             str(check)], env=dict(env_for(name), OPENBLAS_NUM_THREADS="1"),
            capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return {"why": "timed out"}
    if proc.returncode != 0:
        return {"why": f"died (signal {-proc.returncode})"
                if proc.returncode < 0 else
                f"failed: {proc.stderr.strip()[-200:]}"}
    return json.loads(proc.stdout)


def pick(quick=False):
    """Tries every candidate in PICK_ROUNDS interleaved rounds (each rate
    the fastest of its rounds: other work on the machine only slows a
    probe down); returns {"default", "best", "rows"}, rows being one dict
    per candidate (name, loaded, rates, errors, ok, why)."""
    size = QUICK_SIZE if quick else SIZE
    default = environment_default()
    names = [default] + [c for c in [AUTODETECT] + CANDIDATES
                         if c != default]
    if quick:  # the smoke run: the pick's plumbing, on two candidates
        names = names[:QUICK_CANDIDATES]
    rows = {name: {"name": name, "ok": False} for name in names}
    rounds = 1 if quick else PICK_ROUNDS
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            row = rows[name]
            if "why" in row and "loaded" not in row:
                continue  # it did not run: no second try
            if r > 0 and geomean(row) < CONTENDER_SHARE * max(
                    geomean(x) for x in rows.values()):
                continue  # far behind: timed once is enough
            # the results are checked once; later rounds only time
            got = run_probe(name, size, CHECK if r == 0 else 0)
            if "why" in got:
                row["why"] = got["why"]
                continue
            for k in ("float32_gflops", "float64_gflops"):
                row[k] = max(row.get(k, 0), got[k])
            for k in ("float32_error", "float64_error"):
                row[k] = max(row.get(k, 0), got.get(k, 0))
            row["loaded"] = got["loaded"]
    for row in rows.values():
        if "loaded" not in row:
            continue
        wrong = [k for k in CHECK_RTOL if not row[k + "_error"] <=
                 CHECK_RTOL[k]]
        row.pop("why", None)
        if row["name"] != AUTODETECT and \
                row["loaded"].lower() != row["name"].lower():
            row["why"] = f"OpenBLAS loaded {row['loaded']} instead"
        elif wrong:
            row["why"] = "wrong results in " + ", ".join(wrong)
        else:
            row["ok"] = True
        row["rate"] = geomean(row)
        log(f"OpenBLAS {row['name']}: {row.get('why', 'correct')}, sgemm "
            f"{row['float32_gflops']:.1f} GFLOP/s, dgemm "
            f"{row['float64_gflops']:.1f}")
    good = [r for r in rows.values() if r["ok"]]
    best = max(good, key=lambda r: r["rate"])["name"] if good else default
    return {"default": default, "best": best, "rows": list(rows.values()),
            "size": size, "rounds": rounds}


def pick_or_load(path, quick=False):
    """The pick saved at `path` when there is one, else a new pick."""
    if path and os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    return pick(quick)


def kernel_name(result, which):
    """The name a kernel set is loaded under: AUTODETECT's is what OpenBLAS
    picked."""
    name = result[which]
    if name == AUTODETECT:
        for r in result["rows"]:
            if r["name"] == name and "loaded" in r:
                return f"{r['loaded']} (autodetected)"
    return name


def table(result):
    """Markdown lines: one row per candidate, the pick named."""
    lines = [f"OpenBLAS kernel sets, one thread, {result['size']}² GEMM, "
             f"the fastest of up to {result['rounds']} probes, one for "
             f"those far behind "
             f"(this environment's default: "
             f"{kernel_name(result, 'default')}; picked, the fastest "
             f"correct: **{kernel_name(result, 'best')}**):", "",
             "| OPENBLAS_CORETYPE | loaded | sgemm GFLOP/s | dgemm GFLOP/s "
             "| float32 rel. error | float64 rel. error | verdict |",
             "|---|---|---:|---:|---:|---:|---|"]
    for r in result["rows"]:
        label = r["name"] + (" (environment default)"
                             if r["name"] == result["default"] else "")
        if "loaded" not in r:
            lines.append(f"| {label} | | | | | | {r['why']} |")
            continue
        verdict = "picked" if r["name"] == result["best"] else (
            "correct" if r["ok"] else r["why"])
        lines.append(f"| {label} | {r['loaded']} | {r['float32_gflops']:.1f} "
                     f"| {r['float64_gflops']:.1f} "
                     f"| {r['float32_error']:.1e} "
                     f"| {r['float64_error']:.1e} | {verdict} |")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--probe", nargs=2, type=int, metavar=("SIZE", "CHECK"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", help="write the result as JSON here")
    args = ap.parse_args()
    if args.probe:
        print(json.dumps(probe(*args.probe)))
        return 0
    result = pick(args.quick)
    print("\n".join(table(result)))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
