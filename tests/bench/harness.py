"""The benchmark's shared harness: contestants as processes and servers,
the request bodies, wrk, the pause before a timed command, and the
report's small helpers.  run_bench.py's parts (part_*.py) and the other
tools of tests/bench build on it."""
import http.client
import json
import math
import os
import platform
import re
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OURS = "attention-server"
PYTHON = sys.executable
# Relative agreement demanded of the contestants' output checksums: float32
# accumulates in different orders (BLAS blocking, fused kernels), float64
# must agree to near its precision.
CHECK_RTOL = {"float32": 2e-4, "float64": 1e-9}
WRK_CONNECTIONS, WRK_THREADS = 8, 1
# Pause before every timed command or request.  An OpenBLAS thread that has
# just worked spins (sched_yield) for about 2^28 cycles, some 0.1 s here,
# before it sleeps: without the pause the contestant that ran before takes a
# core from the one being timed (a 2-thread row once took 100 ms instead of
# 60 ms that way).  Each contestant starts on a quiet machine.
QUIET_SECONDS = 0.2
# --quick, the smoke run: set once by run_bench.py's main()
QUICK = False


def pause():
    """The pause before a timed command (none in the smoke run, which
    checks the harness, not the figures)."""
    if not QUICK:
        time.sleep(QUIET_SECONDS)


class BenchError(Exception):
    pass


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def pct(xs, q):
    """The q-th percentile (0-100) of xs, nearest rank."""
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, math.ceil(q / 100 * len(xs)) - 1))]


def verdict(ok):
    return "met" if ok else "**not met**"


def attn_flops(n, d, h):
    """Multiply-adds ×2 of the forward pass with W_o (softmax not counted):
    Q, K, V and output projections 4·2·n·d², scores and weights @ V
    2·2·n²·d (summed over heads, d = h·d_k)."""
    return 8 * n * d * d + 4 * n * n * d


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


def stop_servers(servers):
    for srv in servers.values():
        srv.stop()
    servers.clear()


def start_ours(args, threads=None, server=None, extra=(), name=OURS):
    """Our server with the harness's flags, then --server-args, then
    `extra` (a contestant's own); its access log in WORK/NAME.log."""
    argv = [server or args.server, "--listen", "127.0.0.1:0",
            "--max-body", str(64 << 20)]
    if threads:
        argv += ["--threads", str(threads)]
    argv += shlex.split(getattr(args, "server_args", None) or "")
    argv += list(extra)
    log_name = re.sub(r"[^A-Za-z0-9.-]+", "_", name)
    return Server(name, argv, read_port=True,
                  log_path=os.path.join(args.work, f"{log_name}.log"))


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


# ---- requests -----------------------------------------------------------------

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


# ---- the report's header ------------------------------------------------------

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
