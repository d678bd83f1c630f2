"""Shared helpers of the robustness tests: start the server, talk raw HTTP,
sample its memory.  Standard library only (run with /usr/bin/python3)."""
import base64
import json
import os
import random
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time


class Server:
    """attention-server started on 127.0.0.1:0; the port is read from its
    first stdout line.  stderr (access log, sanitizer reports) goes to a
    file so that a full pipe can never block the server."""

    def __init__(self, binary, args=(), wrapper=(), env=None, log=None,
                 start_timeout=30.0):
        self.log_path = log or f"/tmp/robust-server-{os.getpid()}.log"
        self.log = open(self.log_path, "wb")
        full_env = dict(os.environ)
        full_env.update(env or {})
        self.proc = subprocess.Popen(
            list(wrapper) + [binary, "--listen", "127.0.0.1:0"] + list(args),
            stdout=subprocess.PIPE, stderr=self.log, env=full_env)
        self.port = None
        deadline = time.monotonic() + start_timeout
        line = b""
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if line or self.proc.poll() is not None:
                break
        text = line.decode(errors="replace")
        if "listening on http://" not in text:
            self.kill()
            raise RuntimeError(f"server did not start: {text!r}; see "
                               f"{self.log_path}")
        self.port = int(text.split("listening on http://")[1].split()[0]
                        .rsplit(":", 1)[1])
        # keep draining stdout so the server never blocks on it
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()

    @property
    def pid(self):
        return self.proc.pid

    def rss_kib(self):
        """VmRSS of the server process in KiB (the real binary, also when
        a wrapper such as valgrind runs it: then it is valgrind's)."""
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise RuntimeError("no VmRSS")

    def completed_requests(self, path="/v1/attention"):
        """Access-log lines (one per finished request, answered or not)
        for path so far."""
        needle = f'"path":"{path}"'.encode()
        with open(self.log_path, "rb") as f:
            return sum(needle in line for line in f)

    def wait_completed(self, count, timeout=60.0, path="/v1/attention"):
        """Waits until the access log holds count lines for path; returns
        whether it does."""
        deadline = time.monotonic() + timeout
        while self.completed_requests(path) < count:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)
        return True

    def terminate(self, timeout=60.0):
        """SIGTERM, wait, return the exit code.

        Under ThreadSanitizer a signal handler runs only when the thread
        that received the signal leaves its blocking call; an idle event
        thread never does.  So while the process lives, a connection attempt
        every 2 s wakes the event thread (refused once the server stopped
        listening, which is fine).  Without TSan the server exits long
        before the first one."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        try:
            while True:
                try:
                    return self.proc.wait(
                        min(2.0, max(0.0, deadline - time.monotonic())))
                except subprocess.TimeoutExpired:
                    if time.monotonic() >= deadline:
                        raise
                try:
                    socket.create_connection(("127.0.0.1", self.port),
                                             timeout=1).close()
                except OSError:
                    pass
        finally:
            self.log.close()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


PARSE_BUDGET_H = os.path.join(os.path.dirname(__file__), "..", "..",
                              "server", "base", "parse_budget.h")


def parse_bytes_per_body_byte():
    """PARSE_BUDGET_PER_BODY_BYTE: what the server reserves for parsing
    each byte of a body, on top of the byte itself."""
    with open(PARSE_BUDGET_H) as f:
        return int(re.search(r"#define PARSE_BUDGET_PER_BODY_BYTE (\d+)",
                             f.read()).group(1))


FRAMING_H = os.path.join(os.path.dirname(__file__), "..", "..",
                         "server", "http", "framing.h")


def connection_memory():
    """FRAMING_CONNECTION_MEMORY: what libmicrohttpd holds for each open
    connection, in bytes (part of the base beyond the budget)."""
    with open(FRAMING_H) as f:
        kib = re.search(r"#define FRAMING_CONNECTION_MEMORY "
                        r"\(\(size_t\)(\d+) << 10\)", f.read())
    return int(kib.group(1)) << 10


def http(port, method, path, body=b"", headers=None, timeout=30.0):
    """One request on a fresh connection; returns (status, headers, body).
    Raw socket so that nothing is hidden (retries, pooling)."""
    hdrs = {"Host": f"127.0.0.1:{port}", "Connection": "close"}
    if body or method == "POST":
        hdrs["Content-Type"] = "application/json"
        hdrs["Content-Length"] = str(len(body))
    hdrs.update(headers or {})
    head = f"{method} {path} HTTP/1.1\r\n" + "".join(
        f"{k}: {v}\r\n" for k, v in hdrs.items()) + "\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(head.encode() + body)
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    return parse_response(data)


def parse_response(data):
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    if not lines or not lines[0].startswith("HTTP/1."):
        raise RuntimeError(f"not an HTTP response: {data[:80]!r}")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return status, headers, body


def matrix(rng, rows, cols):
    return [[round(rng.uniform(-1, 1), 4) for _ in range(cols)]
            for _ in range(rows)]


def attention_body(rng, n, d, heads=1, extra=None):
    """A valid request: x (n, d), weights (d, d) split into `heads`."""
    doc = {"x": matrix(rng, n, d), "w_q": matrix(rng, d, d),
           "w_k": matrix(rng, d, d), "w_v": matrix(rng, d, d),
           "num_heads": heads}
    doc.update(extra or {})
    return json.dumps(doc).encode()


def narrow_heads_body(n, heads=128, d_k=16):
    """The work a small body can ask for: x (n, 1) as base64; w_q, w_k and
    w_v (1, heads * d_k); w_o back to width 1.  At n 8192 (175 KB) it holds
    both workers of a 2-CPU machine for about 30 s, most of it in the
    narrow heads."""
    def b64(shape, values):
        raw = struct.pack(f"<{len(values)}d", *values)
        return {"shape": shape, "base64": base64.b64encode(raw).decode()}
    width = heads * d_k
    x = b64([n, 1], [(i * 37 % 101) / 101 - 0.5 for i in range(n)])
    w = b64([1, width], [(j * 13 % 7) / 7 - 0.5 for j in range(width)])
    w_o = b64([width, 1], [(j * 11 % 5) / 5 - 0.5 for j in range(width)])
    return json.dumps({"x": x, "w_q": w, "w_k": w, "w_v": w, "w_o": w_o,
                       "num_heads": heads, "return": ["output"]}).encode()


def check_ok(status, body, what):
    if status != 200:
        raise AssertionError(f"{what}: status {status}: {body[:200]!r}")
    doc = json.loads(body)
    if "output" not in doc:
        raise AssertionError(f"{what}: no output in {body[:200]!r}")


class Failures:
    """Collects assertion failures so a test prints all of them."""

    def __init__(self):
        self.items = []

    def check(self, cond, message):
        print(("  ok    " if cond else "  FAIL  ") + message, flush=True)
        if not cond:
            self.items.append(message)

    def exit(self, name):
        if self.items:
            print(f"{name}: {len(self.items)} failure(s)", flush=True)
            sys.exit(1)
        print(f"{name}: all checks passed", flush=True)
