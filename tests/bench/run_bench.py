"""The benchmark: the core, the HTTP path and big requests, side by side.

    run_bench.py --server build/attention-server --bench-core build/bench/bench_core
                 [--fma-peak build/bench/fma_peak] [--quick] [--parts 1,2,3]
                 [--core-sizes NxDxH,...] [--core-threads 1,2]
                 [--rounds R] [--out FILE]

Part 1  the core (bench_core.c) against PyTorch's nn.MultiheadAttention and
        NumPy (contestants.py), each a long-lived process answering the same
        commands; plus OpenBLAS's sgemm/dgemm rate measured in the same rounds.
        The core runs twice: as this CPU allows, and capped at AVX2 with
        OpenBLAS's Haswell kernels (no AVX-512 kernels: every product by
        OpenBLAS), what a CPU without AVX-512 runs.  The anchors run twice
        too: with OpenBLAS as the environment loads it, and with the
        fastest kernel set that computes correctly here (blas_kernels.py:
        every candidate checked against float64, the pick printed); each
        round also measures one core's FMA peak (fma_peak.c), and the core
        is reported as a share of it.  With --ort-peer, ONNX Runtime's CPU
        provider runs the float32 rows without weights too, the same
        problem as one fused com.microsoft.MultiHeadAttention graph
        (ort_graphs.py, ort_peer.mjs --serve), its checksums checked.
Part 2  wrk against build/attention-server, a FastAPI + uvicorn + NumPy peer
        (fastapi_peer.py), nginx returning a static 200, and mhd_minimal.c (a
        libmicrohttpd server that reads the upload and answers a constant
        2 KB: this HTTP stack's ceiling); lesson-sized requests with 32 and 8
        connections, a mid-small one with 8.
Part 3  a mid-size and a large request, end to end, each server's peak
        resident memory (VmHWM) and its resident memory once it has been idle
        for a few seconds (ours keeps freed buffers while busy and gives them
        back when idle); ours also through the Open Inference Protocol (/v2,
        framed as tritonclient.http frames it: tests/oip/oip_client.py), with
        binary tensors and with JSON ones, which must give /v1's numbers.
Part 4  a batch of sequences against the same sequences one by one.
Part 5  fairness: lesson-sized requests alone, a stream of big requests
        alone, then both at once (the small ones' p99 and rate, the big
        stream's rate).
Every measurement is repeated in rounds; within a round the contestants take
turns (their order rotates each round), so a burst of load from elsewhere on
the machine hits all of them alike.  Tables report medians and ratios.

The run fails (exit 1) when the contestants disagree on the numbers, a server
answers something other than 200 or a wrong result, or wrk sees errors, so the
smoke target (--quick) is a test of the harness itself.
"""
import argparse
import base64
import http.client
import json
import math
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "oip"))
import blas_kernels  # noqa: E402
from oip_client import (InferInput, InferRequestedOutput,  # noqa: E402
                        inference_request)

OURS = "attention-server"
# our other routes in part 3: the Open Inference Protocol, binary and JSON
V2_BINARY, V2_JSON = f"{OURS} /v2 binary", f"{OURS} /v2 JSON"
PYTHON = sys.executable

CORE_SIZES = [(64, 64, 2), (256, 256, 4), (1024, 512, 8), (2048, 512, 8)]
QUICK_CORE_SIZES = [(64, 64, 2)]  # the smoke run checks the plumbing
DTYPES = ["float32", "float64"]
THREADS = [1, 2]
GEMM_SIZE, QUICK_GEMM_SIZE = 2048, 512
# Relative agreement demanded of the contestants' output checksums: float32
# accumulates in different orders (BLAS blocking, fused kernels), float64
# must agree to near its precision.
CHECK_RTOL = {"float32": 2e-4, "float64": 1e-9}
WRK_CONNECTIONS, WRK_THREADS = 8, 1
# The HTTP part's rows: a request body and wrk's connections.  32 saturate
# the servers (the p99 target is read there), 8 are the earlier load.
LESSON, N16 = "lesson 002 (n=5, d=8, h=2)", "n=16, d=64, h=4"
HTTP_ROWS = [(LESSON, 32), (LESSON, 8), (N16, 8)]
# the smoke run: both bodies and both connection counts, one row each
QUICK_HTTP_ROWS = [(LESSON, 32), (N16, 8)]
MINIMAL = "libmicrohttpd minimal"
# Part 5, fairness: one client streams big requests (float32, base64, about
# 0.4 s each here) while wrk sends lesson-sized ones on 4 connections.
FAIR_SIZE, FAIR_QUICK_SIZE = (4096, 512, 8), (512, 128, 4)
FAIR_SMALL_CONNECTIONS = 4
# part 5 run against --fair-baseline's server as well: its label
BASELINE = "baseline"
# Pause before every timed command or request.  An OpenBLAS thread that has
# just worked spins (sched_yield) for about 2^28 cycles, some 0.1 s here,
# before it sleeps: without the pause the contestant that ran before takes a
# core from the one being timed (a 2-thread row once took 100 ms instead of
# 60 ms that way).  Each contestant starts on a quiet machine.
QUIET_SECONDS = 0.2


def pause():
    """The pause before a timed command (none in the smoke run, which
    checks the harness, not the figures)."""
    if not QUICK:
        time.sleep(QUIET_SECONDS)


QUICK = False  # --quick: set once by main()
# After the big requests, how long the servers are left idle before their
# resident memory is read again: past the 5 s after which ours gives freed
# memory back (ALLOC_SETUP_IDLE_SECONDS); the smoke run does not wait.
IDLE_SECONDS, QUICK_IDLE_SECONDS = 6, 0.5


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


class BenchError(Exception):
    pass


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def attn_flops(n, d, h):
    """Multiply-adds ×2 of the forward pass with W_o (softmax not counted):
    Q, K, V and output projections 4·2·n·d², scores and weights @ V
    2·2·n²·d (summed over heads, d = h·d_k)."""
    return 8 * n * d * d + 4 * n * n * d


# ---- part 1: the core -------------------------------------------------------

class LineProcess:
    """A contestant answering one JSON line per command line."""

    def __init__(self, name, argv, env=None):
        self.name, self.argv, self.env = name, argv, env
        self.proc = self._start()

    def _start(self):
        return subprocess.Popen(self.argv, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True,
                                env=self.env)

    def restart(self):
        """A fresh process: new physical pages, so new cache-set luck."""
        self.close()
        self.proc = self._start()

    def ask(self, command):
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise BenchError(f"{self.name} exited on: {command}")
        answer = json.loads(line)
        if "error" in answer:
            raise BenchError(f"{self.name}: {answer['error']} on: {command}")
        return answer

    def close(self):
        try:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()


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


def run_core(args):
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


# ---- servers ----------------------------------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(port, path, proc, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise BenchError(f"server on port {port} exited early")
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", path)
            c.getresponse().read()
            c.close()
            return
        except OSError:
            time.sleep(0.1)
    raise BenchError(f"server on port {port} did not come up")


class Server:
    def __init__(self, name, argv, port=None, env=None, health="/healthz",
                 read_port=False, log_path=os.devnull):
        self.name = name
        self.log = open(log_path, "wb")
        self.proc = subprocess.Popen(
            argv, stdout=subprocess.PIPE if read_port else self.log,
            stderr=self.log, env=env, start_new_session=True)
        if read_port:
            line = self.proc.stdout.readline().decode()
            if "listening on http://" not in line:
                self.stop()
                raise BenchError(f"{name} did not start: {line!r}")
            port = int(line.split("listening on http://")[1].split()[0]
                       .rsplit(":", 1)[1])
            self.banner = line.strip()
        self.port = port
        wait_http(port, health, self.proc)

    def pids(self):
        """The server's process and its children (uvicorn's workers)."""
        out = subprocess.run(["ps", "-o", "pid=", "--ppid",
                              str(self.proc.pid)], capture_output=True,
                             text=True).stdout.split()
        return [self.proc.pid] + [int(p) for p in out]

    def vm_hwm_kib(self, field="VmHWM:"):
        """Largest VmHWM (or another /proc status field) among the server's
        processes (KiB)."""
        best = 0
        for pid in self.pids():
            try:
                with open(f"/proc/{pid}/status") as f:
                    for line in f:
                        if line.startswith(field):
                            best = max(best, int(line.split()[1]))
            except OSError:
                pass
        return best

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()
        self.log.close()


def start_ours(args, threads=None, server=None):
    argv = [server or args.server, "--listen", "127.0.0.1:0",
            "--max-body", str(64 << 20)]
    if threads:
        argv += ["--threads", str(threads)]
    return Server("attention-server", argv, read_port=True,
                  log_path=os.path.join(args.work, "attention-server.log"))


def start_fastapi(args, workers, blas_threads):
    port = free_port()
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(blas_threads))
    argv = [PYTHON, "-m", "uvicorn", "--app-dir", HERE, "fastapi_peer:app",
            "--host", "127.0.0.1", "--port", str(port), "--log-level",
            "warning", "--no-access-log"]
    if workers > 1:
        argv += ["--workers", str(workers)]
    return Server("fastapi", argv, port=port, env=env,
                  log_path=os.path.join(args.work, "fastapi.log"))


def start_nginx(args):
    prefix = os.path.join(args.work, "nginx")
    os.makedirs(prefix, exist_ok=True)
    port = free_port()
    conf = os.path.join(prefix, "nginx.conf")
    with open(conf, "w") as f:
        f.write(f"""# generated by tests/bench/run_bench.py: a static 200, the ceiling
daemon off;
worker_processes 2;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    client_max_body_size 64m;
    keepalive_requests 10000000;
    server {{
        listen 127.0.0.1:{port};
        location / {{ return 200 "ok\\n"; }}
    }}
}}
""")
    return Server("nginx", ["/usr/sbin/nginx", "-p", prefix, "-c", conf,
                            "-e", os.path.join(prefix, "error.log")],
                  port=port, health="/",
                  log_path=os.path.join(prefix, "stderr.log"))


# ---- request bodies -----------------------------------------------------------

def lesson002_body():
    """Lesson 002's X (5×8) and W_q, W_k, W_v (8×8), 2 heads."""
    rng = np.random.default_rng(0)
    n, d = 5, 8
    x = rng.normal(size=(n, d))
    w_q, w_k, w_v = rng.normal(size=(3, d, d))
    return {"x": x.tolist(), "w_q": w_q.tolist(), "w_k": w_k.tolist(),
            "w_v": w_v.tolist(), "num_heads": 2}


def random_body(n, d, h, seed, w_o=False, ret=None, dtype="float64"):
    """A /v1 body; float32 rounds its numbers to float32 and says so."""
    rng = np.random.default_rng(seed)
    body = {"x": rng.normal(size=(n, d)).astype(dtype).tolist(),
            "num_heads": h}
    for k in ("w_q", "w_k", "w_v") + (("w_o",) if w_o else ()):
        body[k] = (rng.normal(size=(d, d)) / math.sqrt(d)).astype(
            dtype).tolist()
    if ret:
        body["return"] = ret
    if dtype != "float64":
        body["dtype"] = dtype
    return body


def post(port, payload, conn=None):
    c = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    for attempt in (1, 2):
        try:
            c.request("POST", "/v1/attention", body=payload,
                      headers={"Content-Type": "application/json"})
            r = c.getresponse()
            break
        except (BrokenPipeError, ConnectionResetError,
                http.client.RemoteDisconnected):
            # a kept-alive connection the peer closed while it was idle
            # (uvicorn does after 5 s): opened again, as HTTP clients do
            if conn is None or attempt == 2:
                raise
            c.close()
    data = r.read()
    if conn is None:
        c.close()
    return r.status, data


def v2_body(body, binary):
    """(bytes, Inference-Header-Content-Length or None) of a /v1 body as an
    Open Inference Protocol request, its tensors binary or JSON."""
    inputs = []
    npdt, datatype = ((np.float32, "FP32") if body.get("dtype") == "float32"
                      else (np.float64, "FP64"))
    for k in ("x", "w_q", "w_k", "w_v", "w_o"):
        if k in body:
            a = np.asarray(body[k], dtype=npdt)
            inputs.append(InferInput(k, a.shape, datatype)
                          .set_data_from_numpy(a, binary_data=binary))
    outputs = [InferRequestedOutput(s, binary_data=binary)
               for s in body.get("return", ["weights", "output"])]
    return inference_request(inputs, outputs,
                             parameters={"num_heads": body["num_heads"]})


def post_v2(conn, payload):
    """POSTs an OIP request (bytes, header length); returns (status, body)."""
    data, json_size = payload
    headers = ({} if json_size is None else
               {"Inference-Header-Content-Length": str(json_size)})
    for attempt in (1, 2):
        try:
            conn.request("POST", "/v2/models/attention/infer", body=data,
                         headers=headers)
            r = conn.getresponse()
            break
        except (BrokenPipeError, ConnectionResetError,
                http.client.RemoteDisconnected):
            # a kept-alive connection the server closed after --idle-timeout
            # while other servers were timed: opened again, as post() does
            if attempt == 2:
                raise
            conn.close()
    return r.status, r.read(), r.getheader("Inference-Header-Content-Length")


def v2_outputs(answer):
    """{name: array} of an OIP reply, binary outputs read as tritonclient
    reads them."""
    status, data, length = answer
    if status != 200:
        raise BenchError(f"/v2 answered {status}: {data[:300]!r}")
    head = json.loads(data[:int(length)] if length else data)
    rest, out = data[int(length):] if length else b"", {}
    for o in head["outputs"]:
        size = o.get("parameters", {}).get("binary_data_size")
        if size is None:
            a = np.array([-np.inf if v is None else v for v in o["data"]])
        else:
            kind = {"FP64": "<f8", "FP32": "<f4"}[o["datatype"]]
            a, rest = np.frombuffer(rest[:size], kind), rest[size:]
        out[o["name"]] = a.reshape(o["shape"])
    return out


def check_v2_same_as_v1(v1_answer, v2_answer, fields, which):
    """/v2 gives /v1's very numbers."""
    v1, v2 = json.loads(v1_answer[1]), v2_outputs(v2_answer)
    for f in fields:
        # /v1 writes a float32 in its shortest digits: read back as float32
        if not np.array_equal(np.array(v1[f], dtype=v2[f].dtype), v2[f]):
            raise BenchError(f"{which} differs from /v1 on {f}")


def check_same_answer(name, body_obj, ours, theirs, fields, dtype="float64"):
    """Both servers answered 200 with the same tensors (fields), to the
    dtype's agreement (CHECK_RTOL)."""
    for who, (status, data) in (("attention-server", ours), (name, theirs)):
        if status != 200:
            raise BenchError(f"{who} answered {status}: {data[:300]!r}")
    a, b = json.loads(ours[1]), json.loads(theirs[1])
    for f in fields:
        if not np.allclose(np.array(a[f]), np.array(b[f]),
                           rtol=CHECK_RTOL[dtype],
                           atol=1e-3 * CHECK_RTOL[dtype]):
            raise BenchError(f"{name} and attention-server disagree on {f}")


# ---- part 2: HTTP throughput --------------------------------------------------

def run_wrk(args, port, body_path, seconds, connections=None):
    env = dict(os.environ, BENCH_BODY=body_path, BENCH_PATH="/v1/attention")
    connections = connections or WRK_CONNECTIONS
    out = subprocess.run(
        ["wrk", f"-t{WRK_THREADS}", f"-c{connections}", f"-d{seconds}s",
         "--timeout", "10s", "-s", os.path.join(HERE, "post.lua"),
         f"http://127.0.0.1:{port}/v1/attention"],
        capture_output=True, text=True, env=env, timeout=seconds + 60)
    lines = [l for l in out.stdout.splitlines() if l.startswith('{"requests"')]
    if out.returncode != 0 or not lines:
        raise BenchError(f"wrk failed: {out.stdout}{out.stderr}")
    r = json.loads(lines[-1])
    errors = sum(r[k] for k in ("connect_errors", "read_errors",
                                "write_errors", "status_errors", "timeouts"))
    if errors or r["requests"] == 0:
        raise BenchError(f"wrk saw {errors} errors, {r['requests']} requests "
                         f"on port {port}: {r}")
    r["rps"] = r["requests"] / (r["duration_us"] / 1e6)
    return r


def run_http(args):
    bodies = {
        LESSON: lesson002_body(),
        N16: random_body(16, 64, 4, seed=16),
    }
    paths = {}
    for label, b in bodies.items():
        path = os.path.join(args.work, f"body-{len(paths)}.json")
        with open(path, "w") as f:
            json.dump(b, f)
        paths[label] = path
    servers = {}
    try:
        servers["attention-server"] = start_ours(args)
        servers["fastapi"] = start_fastapi(args, workers=2, blas_threads=1)
        servers["nginx"] = start_nginx(args)
        if args.mhd_minimal:
            servers[MINIMAL] = Server(MINIMAL, [args.mhd_minimal],
                                      read_port=True)
        # every server answers, and the two that compute agree
        for label, b in bodies.items():
            payload = json.dumps(b).encode()
            check_same_answer("fastapi", b,
                              post(servers["attention-server"].port, payload),
                              post(servers["fastapi"].port, payload),
                              ["output", "weights"])
        names = list(servers)
        rows = QUICK_HTTP_ROWS if args.quick else HTTP_ROWS
        samples = {(row, s): [] for row in rows for s in names}
        for label in () if args.quick else bodies:  # warm-up, not counted
            for s in names:
                run_wrk(args, servers[s].port, paths[label], 1)
        for r in range(args.http_rounds):
            log(f"http round {r + 1}/{args.http_rounds}")
            order = names[r % len(names):] + names[:r % len(names)]
            for row in rows:
                label, connections = row
                for s in order:
                    samples[row, s].append(run_wrk(
                        args, servers[s].port, paths[label],
                        args.wrk_seconds, connections))
        banner = servers["attention-server"].banner
    finally:
        for s in servers.values():
            s.stop()
    return {"samples": samples, "rows": rows, "names": names,
            "banner": banner}


def http_medians(res, row, server):
    """(requests/s, p50 ms, p99 ms) of a server on a row: medians."""
    xs = res["samples"][row, server]
    return (median([x["rps"] for x in xs]),
            median([x["p50_us"] for x in xs]) / 1e3,
            median([x["p99_us"] for x in xs]) / 1e3)


def http_table(res):
    lines = ["| request | wrk -c | server | requests/s | p50 ms | p99 ms "
             "| ours ÷ this (req/s) |", "|---|---:|---|---:|---:|---:|---:|"]
    for row in res["rows"]:
        label, connections = row
        med = {s: http_medians(res, row, s) for s in res["names"]}
        ours = med["attention-server"][0]
        for s in res["names"]:
            rps, p50, p99 = med[s]
            lines.append(f"| {label} | {connections} | {s} | {rps:,.0f} "
                         f"| {p50:.3f} | {p99:.3f} | {ours / rps:.3g}× |")
    return lines


# ---- part 5: fairness ----------------------------------------------------------

def b64_tensor(a):
    """{"shape", "base64"} of a float32 array, as the API takes it."""
    a = np.ascontiguousarray(a, dtype="<f4")
    return {"shape": list(a.shape),
            "base64": base64.b64encode(a.tobytes()).decode()}


def fairness_body(n, d, h):
    """The big request of the fairness part: float32, base64 both ways,
    the output only."""
    rng = np.random.default_rng(n)
    body = {"x": b64_tensor(rng.normal(size=(n, d))), "num_heads": h,
            "dtype": "float32", "encoding": "base64", "return": ["output"]}
    for k in ("w_q", "w_k", "w_v"):
        body[k] = b64_tensor(rng.normal(size=(d, d)) / math.sqrt(d))
    return json.dumps(body).encode()


def big_stream(port, payload, stop, done):
    """Sends payload back to back on one connection until stop is set;
    appends each answered request's (start, end) times to done."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    while not stop.is_set():
        start = time.monotonic()
        status, _ = post(port, payload, conn)
        if status != 200:
            raise BenchError(f"big request answered {status}")
        done.append((start, time.monotonic()))
    conn.close()


def stream_latencies(port, payload, seconds):
    """Latencies (s) of payload sent back to back on one connection for
    `seconds`."""
    import threading
    stop, done = threading.Event(), []
    t = threading.Thread(target=big_stream, args=(port, payload, stop, done))
    t.start()
    time.sleep(seconds)
    stop.set()
    t.join()
    return [end - start for start, end in done]


def big_rate(port, payload, seconds, beside=None):
    """Big requests a second over `seconds` of a back-to-back stream,
    and what beside() returned, run meanwhile (or None)."""
    import threading
    stop, done = threading.Event(), []
    t = threading.Thread(target=big_stream, args=(port, payload, stop, done))
    t.start()
    while not done and t.is_alive():  # the stream is running: one answered
        time.sleep(0.01)
    start, first = time.monotonic(), len(done)
    result = beside() if beside else time.sleep(seconds)
    end, count = time.monotonic(), len(done) - first
    stop.set()
    t.join()
    return count / (end - start), result


def machine_busy():
    """(busy, total) time of all CPUs so far, in jiffies (/proc/stat)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v) - v[3] - v[4], sum(v)  # idle and iowait are not busy


def busy_cores(fn):
    """fn()'s result, and the CPUs the whole machine kept busy meanwhile
    (servers, load generators and all)."""
    busy0, total0 = machine_busy()
    result = fn()
    busy1, total1 = machine_busy()
    return result, os.cpu_count() * (busy1 - busy0) / max(1, total1 - total0)


# Part 5's measurements, each alone and beside the big stream: lesson
# 002's request (the fast lane), n=16, d=64, h=4 (work over the fast lane's
# threshold: a pool job) on FAIR_SMALL_CONNECTIONS connections, and a
# mid-size request stream on one connection (a pool job a few ms long).
FAIR_MID_SIZE, FAIR_QUICK_MID_SIZE = (256, 256, 8), (64, 64, 4)


def fairness_round(port, bodies, seconds):
    """One round against one server: each small load alone, the big
    stream alone, then each small load beside the big stream."""
    r = {}
    loads = {
        "lesson": lambda: run_wrk(None, port, bodies["lesson"], seconds,
                                  FAIR_SMALL_CONNECTIONS),
        "pool": lambda: run_wrk(None, port, bodies["pool"], seconds,
                                FAIR_SMALL_CONNECTIONS),
        "mid": lambda: stream_latencies(port, bodies["mid"], seconds),
    }
    for name, load in loads.items():
        pause()
        r[name + "_alone"], r[name + "_alone_cores"] = busy_cores(load)
    pause()
    r["big_alone"], r["big_alone_cores"] = big_rate(
        port, bodies["big"], seconds,
        lambda: busy_cores(lambda: time.sleep(seconds))[1])
    for name, load in loads.items():
        pause()
        r["big_beside_" + name], r[name + "_beside"] = big_rate(
            port, bodies["big"], seconds, load)
    return r


def run_fairness(args):
    n, d, h = FAIR_QUICK_SIZE if args.quick else FAIR_SIZE
    bodies = {"big": fairness_body(n, d, h),
              "mid": fairness_body(*(FAIR_QUICK_MID_SIZE if args.quick
                                     else FAIR_MID_SIZE))}
    for name, body in (("lesson", lesson002_body()),
                       ("pool", random_body(16, 64, 4, seed=16))):
        bodies[name] = os.path.join(args.work, f"fair-{name}.json")
        with open(bodies[name], "w") as f:
            json.dump(body, f)
    # ours, and the same measurements against --fair-baseline's server
    binaries = {OURS: args.server}
    if args.fair_baseline:
        binaries[BASELINE] = args.fair_baseline
    servers = {}
    res = {name: [] for name in binaries}
    try:
        for name, binary in binaries.items():
            servers[name] = start_ours(args, server=binary)
            if not args.quick:  # warm-up, not counted
                run_wrk(None, servers[name].port, bodies["lesson"], 1,
                        FAIR_SMALL_CONNECTIONS)
        names = list(servers)
        for r in range(args.http_rounds):
            log(f"fairness round {r + 1}/{args.http_rounds}")
            for name in names[r % len(names):] + names[:r % len(names)]:
                res[name].append(fairness_round(servers[name].port, bodies,
                                                args.wrk_seconds))
    finally:
        for srv in servers.values():
            srv.stop()
    return {"size": (n, d, h), "mid_size": FAIR_QUICK_MID_SIZE if args.quick
            else FAIR_MID_SIZE, "rounds": res}


def pct(xs, q):
    """The q-th percentile (0-100) of xs, nearest rank."""
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, math.ceil(q / 100 * len(xs)) - 1))]


def fairness_figures(rounds):
    """Medians over rounds: per load alone and beside the big stream its
    (requests/s, p50 ms, p99 ms), and the big stream's rate."""
    f = {}
    for load in ("lesson", "pool", "mid"):
        for where in ("alone", "beside"):
            xs = [r[f"{load}_{where}"] for r in rounds]
            if load == "mid":  # latencies of one connection's stream
                f[load, where] = (median([len(x) for x in xs]),
                                  median([pct(x, 50) for x in xs]) * 1e3,
                                  median([pct(x, 99) for x in xs]) * 1e3)
            else:
                f[load, where] = (median([x["rps"] for x in xs]),
                                  median([x["p50_us"] for x in xs]) / 1e3,
                                  median([x["p99_us"] for x in xs]) / 1e3)
        f["big", load] = median([r["big_beside_" + load] for r in rounds])
    f["big", "alone"] = median([r["big_alone"] for r in rounds])
    for load in ("lesson", "big"):
        f[load, "cores"] = median([r[load + "_alone_cores"] for r in rounds])
    return f


def fairness_table(res):
    mid = ", ".join(str(v) for v in res["mid_size"])
    labels = {"lesson": "lesson 002 (fast lane), wrk -c4",
              "pool": "n=16, d=64, h=4 (a pool job), wrk -c4",
              "mid": f"n, d, h = {mid} float32 (a pool job), one connection"}
    lines = ["| server | requests | where | req/s (mid: requests) | p50 ms "
             "| p99 ms | big req/s beside |",
             "|---|---|---|---:|---:|---:|---:|"]
    for server, rounds in res["rounds"].items():
        f = fairness_figures(rounds)
        lines.append(f"| {server} | big requests | alone | | | "
                     f"| {f['big', 'alone']:.2f} |")
        for load, label in labels.items():
            for where in ("alone", "beside"):
                rate, p50, p99 = f[load, where]
                big = f"{f['big', load]:.2f}" if where == "beside" else ""
                lines.append(f"| {server} | {label} | {where} | {rate:,.0f} "
                             f"| {p50:.3f} | {p99:.3f} | {big} |")
    if BASELINE in res["rounds"]:
        ours = fairness_figures(res["rounds"][OURS])
        base = fairness_figures(res["rounds"][BASELINE])
        def ratio(load, i):  # i: 1 p50, 2 p99
            return ours[load, "beside"][i] / base[load, "beside"][i]
        lines += ["", f"{OURS} ÷ {BASELINE}, beside the big stream: "
                  + "; ".join(f"{load} p99 {ratio(load, 2):.2f}×, "
                              f"p50 {ratio(load, 1):.2f}×"
                              for load in labels)
                  + "; the big stream's rate beside the lesson requests "
                  f"{ours['big', 'lesson'] / base['big', 'lesson']:.2f}×, "
                  f"alone {ours['big', 'alone'] / base['big', 'alone']:.2f}×."]
    return lines


def fairness_targets(res):
    f = fairness_figures(res["rounds"][OURS])
    rate, _, p99 = f["lesson", "beside"]
    share = rate / f["lesson", "alone"][0]
    big = f["big", "lesson"] / f["big", "alone"]
    need = 0.5 * f["lesson", "cores"] + 0.9 * f["big", "cores"]
    n, d, h = res["size"]
    return [f"- beside a stream of big requests (n={n}, d={d}, h={h}, "
            f"float32): lesson-sized p99 ≤ 5 ms: {p99:.2f} ms — "
            f"{verdict(p99 <= 5)}",
            f"- lesson-sized rate beside it ≥ 50% of alone: "
            f"{100 * share:.0f}% — {verdict(share >= 0.5)}",
            f"- the big stream keeps ≥ 90% of its rate alone: "
            f"{100 * big:.0f}% — {verdict(big >= 0.9)}",
            # the CPU the last two ask for at once, from each load alone
            f"- what the last two ask of the machine at once: "
            f"0.5 × {f['lesson', 'cores']:.2f} CPUs (the lesson load "
            f"alone, wrk included) + 0.9 × {f['big', 'cores']:.2f} (the big "
            f"stream alone, its client included) = {need:.2f} of the "
            f"{os.cpu_count()} CPUs here"]


# ---- part 3: big requests -----------------------------------------------------

# Part 3's mid-size and large requests (n, d, h); the smoke run sends
# small ones through the same code (its figures are not read)
BIG_SIZES = {"mid": (256, 256, 8), "large": (1024, 512, 8)}
BIG_QUICK_SIZES = {"mid": (64, 64, 4), "large": (128, 64, 4)}


def run_big(args):
    big = BIG_QUICK_SIZES if args.quick else BIG_SIZES
    mid, large = big["mid"], big["large"]
    shape = "n={}, d={}, h={}"
    sizes = [(f"mid: {shape.format(*mid)}, w_o, weights",
              random_body(*mid, seed=mid[0], w_o=True,
                          ret=["output", "weights"]), args.mid_reps,
              ["output", "weights"]),
             (f"large: {shape.format(*large)}, output only",
              random_body(*large, seed=large[0], ret=["output"]),
              args.large_reps, ["output"]),
             # the same problem in the datatype model servers exchange
             # (tritonclient's FP32); its JSON holds each float32 as the
             # float64 digits a client's json.dumps(a.tolist()) writes
             (f"large float32: {shape.format(*large)}, output only",
              random_body(*large, seed=large[0], ret=["output"],
                          dtype="float32"),
              args.large_reps, ["output"])]
    results, servers = [], {}
    try:
        for label, body, reps, fields in sizes:
            payload = json.dumps(body).encode()
            v2_payloads = {V2_BINARY: v2_body(body, True),
                           V2_JSON: v2_body(body, False)}
            dtype = body.get("dtype", "float64")
            del body
            if not servers:  # fresh per size (the smoke run keeps its pair)
                servers[OURS] = start_ours(args)
                # one process, so that its VmHWM is the whole server's;
                # NumPy may use both cores through OpenBLAS, as ours does
                # through its pool
                servers["fastapi"] = start_fastapi(args, workers=1,
                                                   blas_threads=2)
            conns = {s: http.client.HTTPConnection(
                "127.0.0.1", srv.port, timeout=600)
                for s, srv in servers.items()}
            base = {s: srv.vm_hwm_kib() for s, srv in servers.items()}
            first = {s: post(None, payload, conns[s]) for s in servers}
            check_same_answer("fastapi", None, first["attention-server"],
                              first["fastapi"], fields, dtype)
            # the same server through /v2, on a connection of its own
            for v2, v2_payload in v2_payloads.items():
                conns[v2] = http.client.HTTPConnection(
                    "127.0.0.1", servers[OURS].port, timeout=600)
                check_v2_same_as_v1(first[OURS],
                                    post_v2(conns[v2], v2_payload), fields, v2)
            lat = {s: [] for s in conns}
            names = list(conns)
            for r in range(reps):
                for s in names[r % len(names):] + names[:r % len(names)]:
                    pause()
                    start = time.perf_counter()
                    if s in v2_payloads:
                        status = post_v2(conns[s], v2_payloads[s])[0]
                    else:
                        status, data = post(None, payload, conns[s])
                    lat[s].append(time.perf_counter() - start)
                    if status != 200:
                        raise BenchError(f"{s} answered {status}")
            peak = {s: srv.vm_hwm_kib() for s, srv in servers.items()}
            # while requests come, freed buffers are kept for the next one;
            # once idle, memory goes back (the server waits 1 s for that)
            time.sleep(args.idle_seconds)
            idle = {s: srv.vm_hwm_kib("VmRSS:")
                    for s, srv in servers.items()}
            if not args.quick:
                stop_servers(servers)
            results.append({"label": label, "bytes": len(payload),
                            "v2_bytes": {v: len(p[0])
                                         for v, p in v2_payloads.items()},
                            "response_bytes": len(first[OURS][1]),
                            "lat": lat, "base": base, "peak": peak,
                            "idle": idle})
    finally:
        stop_servers(servers)
    return results


def stop_servers(servers):
    for srv in servers.values():
        srv.stop()
    servers.clear()


BATCH_SEQUENCES = 8  # B of the batch row: the size the API's users batch
BATCH_SIZE, BATCH_QUICK_SIZE = (256, 256, 8), (32, 32, 4)  # n, d, h


def run_batch(args):
    """B sequences in one request vs the same B sent one after another on
    one keep-alive connection (the same numbers either way)."""
    rng = np.random.default_rng(8)
    n, d, h = BATCH_QUICK_SIZE if args.quick else BATCH_SIZE
    weights = {k: (rng.normal(size=(d, d)) / math.sqrt(d)).tolist()
               for k in ("w_q", "w_k", "w_v", "w_o")}
    xs = rng.normal(size=(BATCH_SEQUENCES, n, d))
    common = dict(weights, num_heads=h, **{"return": ["output"]})
    batch = json.dumps(dict(common, x=xs.tolist())).encode()
    singles = [json.dumps(dict(common, x=x.tolist())).encode() for x in xs]
    srv = start_ours(args)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=600)
        status, data = post(None, batch, conn)
        whole = json.loads(data)["output"]
        for b, payload in enumerate(singles):
            status_one, one = post(None, payload, conn)
            if status != 200 or status_one != 200 or \
                    json.loads(one)["output"] != whole[b]:
                raise BenchError(f"batch sequence {b} differs from alone")
        lat = {"one batch": [], "one by one": []}
        for r in range(args.mid_reps):
            pause()
            start = time.perf_counter()
            post(None, batch, conn)
            lat["one batch"].append(time.perf_counter() - start)
            pause()
            start = time.perf_counter()
            for payload in singles:
                post(None, payload, conn)
            lat["one by one"].append(time.perf_counter() - start)
    finally:
        srv.stop()
    return {"lat": lat, "size": (n, d, h)}


def batch_table(res):
    lat, (n, d, _) = res["lat"], res["size"]
    one, each = median(lat["one batch"]), median(lat["one by one"])
    return ["| requests | median ms | ÷ one batch |", "|---|---:|---:|",
            f"| one request, x ({BATCH_SEQUENCES}, {n}, {d}) "
            f"| {one * 1e3:.1f} | 1 |",
            f"| {BATCH_SEQUENCES} requests, x ({n}, {d}) each, "
            f"keep-alive | {each * 1e3:.1f} | {each / one:.2f}× |"]


def big_table(results):
    lines = ["| request | server | median ms | peak RSS MiB (before) "
             "| RSS MiB once idle | this ÷ ours (time) |",
             "|---|---|---:|---:|---:|---:|"]
    for r in results:
        ours = median(r["lat"]["attention-server"])
        for s, xs in r["lat"].items():
            m = median(xs)
            size = r["v2_bytes"].get(s, r["bytes"])
            # /v2 runs in our process: its memory is in our rows
            server = OURS if s in r["v2_bytes"] else s
            lines.append(
                f"| {r['label']} ({size / 1e6:.1f} MB in) | {s} "
                f"| {m * 1e3:.1f} | {r['peak'][server] / 1024:.0f} "
                f"({r['base'][server] / 1024:.0f}) "
                f"| {r['idle'][server] / 1024:.0f} | {m / ours:.3g}× |")
    return lines


# ---- targets ----------------------------------------------------------

def verdict(ok):
    return "met" if ok else "**not met**"


def targets(core, web, big):
    """One line per target of issue 6, with the measured figure."""
    lines = []
    if core:
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
    if web:
        for row in [r for r in web["rows"] if r[0] == LESSON]:
            rps = {s: http_medians(web, row, s)[0] for s in web["names"]}
            ours = rps["attention-server"]
            c = f"wrk -t{WRK_THREADS} -c{row[1]}"
            if row[1] == WRK_CONNECTIONS:
                lines.append(f"- lesson-sized ≥ 30× FastAPI's requests/s "
                             f"({c}): {ours / rps['fastapi']:.2f}× — "
                             f"{verdict(ours >= 30 * rps['fastapi'])}")
            ceiling = (f"; the minimal libmicrohttpd server (this stack's "
                       f"ceiling) is {100 * rps[MINIMAL] / rps['nginx']:.0f}%"
                       f" of nginx, ours {100 * ours / rps[MINIMAL]:.0f}% of "
                       f"it" if MINIMAL in rps else "")
            lines.append(f"- lesson-sized ≥ 55% of nginx's constant 200 ({c})"
                         f": {100 * ours / rps['nginx']:.1f}%{ceiling} — "
                         f"{verdict(ours >= 0.55 * rps['nginx'])}")
        saturated = web["rows"][0]
        p99 = http_medians(web, saturated, "attention-server")[2]
        lines.append(f"- lesson-sized p99 at saturation (wrk -t{WRK_THREADS} "
                     f"-c{saturated[1]}) ≤ 1.5 ms: {p99:.2f} ms — "
                     f"{verdict(p99 <= 1.5)}")
    if big:
        r = big[0]
        x = median(r["lat"]["fastapi"]) / median(r["lat"]["attention-server"])
        lines.append(f"- mid-size ≥ 10× faster than FastAPI end to end: "
                     f"{x:.2f}× — {verdict(x >= 10)}")
        # read on the float32 problem, the datatype OIP clients send
        # (tritonclient's FP32); the float64 one printed beside it
        for r in big[1:]:
            x = median(r["lat"][OURS]) / median(r["lat"][V2_BINARY])
            if "float32" in r["label"]:
                lines.append(f"- large float32: binary /v2 ≥ 3× faster end "
                             f"to end than JSON /v1: {x:.2f}× — "
                             f"{verdict(x >= 3)}")
            else:
                lines.append(f"- large float64, beside it: binary /v2 "
                             f"{x:.2f}× faster end to end than JSON /v1 "
                             f"(its compute is twice float32's)")
    return lines


# ---- report -------------------------------------------------------------------

def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def git_state():
    """The commit measured, and whether the work tree differed from it."""
    try:
        return subprocess.run(["git", "describe", "--always", "--dirty"],
                              capture_output=True, text=True, cwd=HERE,
                              timeout=10).stdout.strip() or "unknown"
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor()


def timed(label, fn, args):
    start = time.monotonic()
    result = fn(args)
    log(f"{label}: {time.monotonic() - start:.1f} s")
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", required=True)
    ap.add_argument("--bench-core", required=True)
    ap.add_argument("--fma-peak",
                    help="fma_peak.c's binary: one core's FMA peak")
    ap.add_argument("--core-sizes",
                    help="part 1's sizes N x D x H, e.g. 1024x512x8,2048x512x8")
    ap.add_argument("--core-threads",
                    help="part 1's thread counts, e.g. 1 or 1,2")
    ap.add_argument("--core-dtypes",
                    help="part 1's dtypes: float32, float64 or both")
    ap.add_argument("--core-weights",
                    help="part 1's rows without (0) and with (1) the "
                    "weights handed back, e.g. 0 or 0,1")
    ap.add_argument("--ort-peer",
                    help="tests/bench/ort_peer.mjs (npm's onnxruntime-node "
                    "installed beside it): ONNX Runtime in part 1")
    ap.add_argument("--fair-baseline",
                    help="another build of the server: part 5 measures it "
                    "in the same rounds, side by side")
    ap.add_argument("--mhd-minimal",
                    help="mhd_minimal.c's binary, printed beside nginx")
    ap.add_argument("--work", default="build/bench",
                    help="folder for bodies, logs and nginx's config")
    ap.add_argument("--parts", default="1,2,3,4,5")
    ap.add_argument("--quick", action="store_true",
                    help="every part at small sizes, one round: checks the "
                    "harness, not the figures")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--sample-seconds", type=float, default=0.05,
                    help="least time of one core sample (calls are batched)")
    ap.add_argument("--http-rounds", type=int, default=3)
    ap.add_argument("--wrk-seconds", type=int, default=5)
    ap.add_argument("--mid-reps", type=int, default=7)
    ap.add_argument("--large-reps", type=int, default=5)
    ap.add_argument("--out", help="also write the table here")
    ap.add_argument("--command", default=" ".join(sys.argv),
                    help="the command shown as the way to reproduce")
    args = ap.parse_args()
    args.idle_seconds = QUICK_IDLE_SECONDS if args.quick else IDLE_SECONDS
    global QUICK
    QUICK = args.quick
    if args.quick:
        args.rounds, args.sample_seconds = 1, 0.005
        args.http_rounds, args.wrk_seconds = 1, 1
        args.mid_reps, args.large_reps = 1, 1
    args.work = os.path.abspath(args.work)
    os.makedirs(args.work, exist_ok=True)
    parts = {int(p) for p in args.parts.split(",")}
    for tool in ("wrk", "/usr/sbin/nginx"):
        if 2 in parts and not shutil.which(tool):
            raise SystemExit(f"{tool} is missing (make bench installs it)")

    # a pick of an earlier run is not this run's (part 1 writes it again)
    stale = os.path.join(args.work, blas_kernels.PICK_FILE)
    if os.path.exists(stale):
        os.remove(stale)
    load_before = loadavg()
    started = time.time()
    out = []
    try:
        core = timed("part 1 (core)", run_core, args) if 1 in parts else None
        web = timed("part 2 (HTTP)", run_http, args) if 2 in parts else None
        big = timed("part 3 (big)", run_big, args) if 3 in parts else None
        batch = timed("part 4 (batch)", run_batch, args) \
            if 4 in parts else None
        fair = timed("part 5 (fairness)", run_fairness, args) \
            if 5 in parts else None
    except BenchError as exc:
        log(f"bench FAILED: {exc}")
        return 1
    elapsed = time.time() - started
    out += [f"## Benchmark{' (quick: harness check, not numbers)' if args.quick else ''}",
            "",
            f"- reproduce: `{args.command}`",
            f"- code: {git_state()}; server {args.server}",
            f"- machine: {os.cpu_count()} CPUs, {cpu_model()}; load average "
            f"{load_before} before, {loadavg()} after ({elapsed:.0f} s)",
            f"- medians of {args.rounds} interleaved rounds (core), "
            f"{args.http_rounds} × {args.wrk_seconds} s wrk runs (HTTP), "
            f"{args.mid_reps} / {args.large_reps} requests (mid / large)"]
    if core:
        i = core["info"]
        out += [f"- core: BLAS {i['core']['blas_core']} single-threaded per "
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
        out += [
                "", "### Core: attn_forward() vs nn.MultiheadAttention and "
                "NumPy (x (n,d), W_q/W_k/W_v/W_o (d,d); ratios > 1: core "
                "faster)", ""] + core_table(core)
    if web:
        out += ["", "### HTTP: wrk, POST /v1/attention", "",
                f"wrk -t{WRK_THREADS}, keep-alive; "
                "no CPU pinning: servers and wrk share both cores. "
                f"attention-server with its defaults, access log on "
                f"({web['banner']}); "
                "FastAPI: uvicorn --workers 2, uvloop + httptools, no access "
                "log, OpenBLAS 1 thread per worker; nginx: 2 workers, "
                f"`return 200`; {MINIMAL}: tests/bench/mhd_minimal.c, one "
                "event thread per CPU, epoll, reads the upload and answers a "
                "constant 2 KB.", ""] + http_table(web)
    if big:
        out += ["", "### Big requests, end to end (one client, keep-alive)",
                "",
                "Fresh servers per size; FastAPI as one uvicorn process with "
                "OpenBLAS on 2 threads; peak RSS = VmHWM after the requests "
                "(VmHWM before the first in brackets); then VmRSS once the "
                f"server has been idle for {args.idle_seconds:g} s.", ""] + \
            big_table(big)
    if batch:
        n, d, h = batch["size"]
        out += ["", f"### A batch of {BATCH_SEQUENCES} sequences (n={n}, "
                f"d={d}, h={h}, w_o, output only) vs its sequences "
                "one by one", "",
                "One server, one keep-alive connection, the same numbers "
                "either way (checked).", ""] + batch_table(batch)
    if fair:
        n, d, h = fair["size"]
        out += ["", "### Fairness: small and mid-size requests beside big "
                "ones", "",
                f"attention-server with its defaults"
                + (f" ({BASELINE}: {args.fair_baseline}, the same "
                   "measurements in the same rounds, in turn)"
                   if args.fair_baseline else "")
                + f"; one client sends n={n}, d={d}, h={h} float32 requests "
                "(base64 both ways, the output only) back to back, while "
                f"wrk -t{WRK_THREADS} -c{FAIR_SMALL_CONNECTIONS} sends lesson "
                "002's request (the fast lane) or an n=16, d=64, h=4 one "
                "(a pool job), or one client sends mid-size requests back to "
                "back; each alone, then beside the big stream, in every "
                "round.", ""] + fairness_table(fair)
    out += ["", "### Targets", ""] + targets(core, web, big) + \
        (fairness_targets(fair) if fair else [])
    text = "\n".join(out) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
