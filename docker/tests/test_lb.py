"""Load-balancer test: nginx with the repository's docker/nginx.conf in front of three attention servers.

    /usr/bin/python3 docker/tests/test_lb.py --server build/attention-server --nginx-conf docker/nginx.conf

Everything listens on 127.0.0.1. The nginx configuration is docker/nginx.conf with only the lines marked
`# lb-test:` rewritten (listen address and upstream addresses; each upstream keeps the parameters written there).
Each server writes one JSON access-log line per request on stderr, with the X-Request-ID the client sent: the test
counts, per instance, the requests it served.

1. spread    sequential lesson requests through nginx reach all three instances, each request exactly once.
2. failover  under a bounded load (client threads, a fixed request count), SIGKILL one instance: every client
             request still gets 200 with the right numbers (nginx retries on another instance).
3. drain     SIGTERM an instance that holds an in-flight request (body half sent) and an idle keep-alive
             connection, under a bounded load through nginx: it refuses new connections, answers /readyz with 503
             on the kept-alive connection, finishes the in-flight request with 200 and the right numbers, exits 0
             with a clean stop; no client request through nginx fails.
"""
import argparse
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lessons  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tests", "oracle"))
import reference  # noqa: E402

INSTANCES = 3
SERVER_THREADS = 1        # 3 instances + nginx + the client on 2 shared CPUs
SERVER_GRACE = 15         # --grace: seconds a draining instance waits for in-flight requests
START_TIMEOUT = 15        # seconds for a process to start listening
SPREAD_REQUESTS = 60      # sequential requests: 20 per instance if spread evenly
LOAD_CLIENTS = 4          # concurrent client connections to nginx
LOAD_REQUESTS = 300       # requests per load phase (bounded in count ...)
LOAD_DEADLINE = 120       # ... and in seconds
LOAD_SHAPE = (96, 48, 4)  # n, d, h of the load requests: a few ms of parsing and compute each, so some are in
                          # flight at any moment
LOAD_BODIES = 4           # distinct load bodies, answers precomputed with NumPy


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise RuntimeError(f"timed out after {timeout}s waiting for {what}")



def json_lines(path):
    """The lines of a log file that are JSON objects, in order."""
    entries = []
    with open(path) as f:
        for line in f:
            try:
                entries.append(json.loads(line))
            except ValueError:
                pass
    return entries

class Server:
    """One build/attention-server on a loopback port chosen by the kernel."""

    def __init__(self, binary, work, name, port=0):
        self.name = name
        self.err_path = os.path.join(work, f"{name}.stderr")
        self.out_path = os.path.join(work, f"{name}.stdout")
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(
                [binary, "--listen", f"127.0.0.1:{port}", "--threads", str(SERVER_THREADS),
                 "--grace", str(SERVER_GRACE)], stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        wait_for(lambda: os.path.getsize(self.out_path) > 0 or self.proc.poll() is not None, START_TIMEOUT,
                 f"{name} to start")
        line = open(self.out_path).readline()
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+) ", line)
        if not m:
            raise RuntimeError(f"{name}: unexpected first line {line!r}")
        self.port = int(m.group(1))

    def log(self):
        """The access-log lines (JSON objects with a request_id) and the events, in order."""
        return json_lines(self.err_path)

    def served(self, prefix):
        """Request ids starting with prefix that this instance answered with 200."""
        return [e["request_id"] for e in self.log()
                if e.get("request_id", "").startswith(prefix) and e.get("status") == 200]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class Nginx:
    def __init__(self, conf_path, work, upstream_ports):
        self.port = free_port()
        self.work = work
        self.conf = os.path.join(work, "nginx.conf")
        self.access_path = os.path.join(work, "nginx.access.log")
        self.error_path = os.path.join(work, "nginx.error.log")
        with open(conf_path) as f:
            text = f.read()
        with open(self.conf, "w") as f:
            f.write(self.rewrite(text, upstream_ports))
        pid = os.path.join(work, "nginx.pid")
        base = ["nginx", "-p", work, "-e", self.error_path, "-c", self.conf,
                "-g", f"daemon off; pid {pid}; error_log {self.error_path} info;"]
        check = subprocess.run(base + ["-t"], capture_output=True, text=True)
        if check.returncode != 0:
            raise RuntimeError(f"nginx -t rejects the test copy of {conf_path}:\n{check.stderr}")
        with open(self.access_path, "wb") as out:
            self.proc = subprocess.Popen(base, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        wait_for(self.listening, START_TIMEOUT, "nginx to listen")

    def rewrite(self, text, ports):
        """Rewrite only the lines marked `# lb-test:`; fail if the file lost its markers."""
        out, seen = [], set()
        for line in text.splitlines():
            if "# lb-test: upstream servers" in line:
                m = re.match(r"(\s*)server\s+\S+(\s+[^;]*)?;", line)
                if not m:
                    raise RuntimeError(f"unexpected upstream line: {line!r}")
                params = (m.group(2) or "").rstrip()
                out += [f"{m.group(1)}server 127.0.0.1:{p}{params};" for p in ports]
                seen.add("upstream")
            elif "# lb-test: listen" in line:
                indent = re.match(r"\s*", line).group(0)
                out.append(f"{indent}listen 127.0.0.1:{self.port};")
                seen.add("listen")
            else:
                out.append(line)
        if seen != {"upstream", "listen"}:
            raise RuntimeError(f"docker/nginx.conf lacks the `# lb-test:` markers (found {sorted(seen)})")
        return "\n".join(out) + "\n"

    def listening(self):
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
            return True
        except OSError:
            return False

    def access_log(self):
        return json_lines(self.access_path)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)  # graceful: finish what is in flight
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# ---- load --------------------------------------------------------------------------------------------------------

def attention_reference(body):
    """The output NumPy computes for body (tests/oracle/reference.py)."""
    return reference.attention(body)["output"]


def load_bodies():
    rng = np.random.default_rng(5)
    n, d, h = LOAD_SHAPE
    bodies = []
    for _ in range(LOAD_BODIES):
        body = {"x": rng.normal(size=(n, d)).tolist(), "num_heads": h, "return": ["output"]}
        for w in ("w_q", "w_k", "w_v"):
            body[w] = (rng.normal(size=(d, d)) / np.sqrt(d)).tolist()
        bodies.append((json.dumps(body).encode(), attention_reference(body)))
    return bodies


class Load:
    """LOAD_CLIENTS threads, each with a keep-alive connection to nginx, sending requests until LOAD_REQUESTS have
    been sent in all or LOAD_DEADLINE passed. Every answer is checked: status, echoed X-Request-ID, numbers."""

    def __init__(self, port, prefix, bodies):
        self.port, self.prefix, self.bodies = port, prefix, bodies
        self.lock = threading.Lock()
        self.next = 0
        self.sent = 0
        self.ok = 0
        self.failures = []
        self.latencies = []
        self.progress = threading.Event()  # set once a third of the requests are answered
        self.threads = [threading.Thread(target=self.client, daemon=True) for _ in range(LOAD_CLIENTS)]

    def start(self):
        self.t0 = time.monotonic()
        for t in self.threads:
            t.start()
        return self

    def take(self):
        with self.lock:
            if self.next >= LOAD_REQUESTS or time.monotonic() - self.t0 > LOAD_DEADLINE:
                return None
            self.next += 1
            return self.next - 1

    def client(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        while (i := self.take()) is not None:
            body, want = self.bodies[i % len(self.bodies)]
            rid = f"{self.prefix}-{i}"
            t = time.monotonic()
            try:
                conn.request("POST", "/v1/attention", body=body,
                             headers={"Content-Type": "application/json", "X-Request-ID": rid})
                resp = conn.getresponse()
                payload = resp.read()
                problem = None
                if resp.status != 200:
                    problem = f"{rid}: status {resp.status}: {payload[:200]!r}"
                elif resp.getheader("X-Request-ID") != rid:
                    problem = f"{rid}: X-Request-ID echoed as {resp.getheader('X-Request-ID')!r}"
                else:
                    got = np.array(json.loads(payload)["output"])
                    err = lessons.relative_error(got, want)
                    if not err <= lessons.REL_TOL:
                        problem = f"{rid}: output relative error {err:.3g}"
            except (OSError, http.client.HTTPException, ValueError, KeyError) as e:
                problem = f"{rid}: {type(e).__name__}: {e}"
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            with self.lock:
                self.sent += 1
                self.latencies.append(time.monotonic() - t)
                if problem:
                    self.failures.append(problem)
                else:
                    self.ok += 1
                if self.sent * 3 >= LOAD_REQUESTS:
                    self.progress.set()
        conn.close()

    def finish(self):
        for t in self.threads:
            t.join(LOAD_DEADLINE + 60)
        self.seconds = time.monotonic() - self.t0
        return self

    def summary(self):
        lat = np.array(self.latencies) * 1e3
        return (f"{self.sent} requests in {self.seconds:.2f}s ({self.sent / self.seconds:.0f}/s), "
                f"{self.ok} ok, {len(self.failures)} failed; latency ms p50 {np.percentile(lat, 50):.1f} "
                f"p99 {np.percentile(lat, 99):.1f} max {lat.max():.1f}")


def retried(nginx, prefix):
    """nginx log entries for this prefix that needed more than one upstream attempt."""
    return [e for e in nginx.access_log()
            if e.get("request_id", "").startswith(prefix) and "," in e.get("upstream_status", "")]


# ---- the tests ---------------------------------------------------------------------------------------------------

class Failed(Exception):
    pass


def expect(cond, message):
    if not cond:
        raise Failed(message)


def test_spread(nginx, servers):
    for i in range(SPREAD_REQUESTS):
        lesson = list(lessons.LESSONS)[i % 3]
        rid = f"spread-{i}"
        status, headers, payload = lessons.post(f"http://127.0.0.1:{nginx.port}", lesson, {"X-Request-ID": rid})
        problems = lessons.check_answer(lesson, status, payload)
        expect(not problems, f"{rid}: {problems}")
        expect(headers.get("X-Request-ID") == rid, f"{rid}: X-Request-ID echoed as {headers.get('X-Request-ID')}")
    time.sleep(0.2)  # the access log line is written when the request completes
    counts = [len(s.served("spread-")) for s in servers]
    print(f"   spread of {SPREAD_REQUESTS} sequential lesson requests: "
          + ", ".join(f"{s.name} {c}" for s, c in zip(servers, counts)))
    expect(sum(counts) == SPREAD_REQUESTS, f"{sum(counts)} requests served, {SPREAD_REQUESTS} sent")
    expect(all(c > 0 for c in counts), "an instance received no request")
    # least_conn over idle instances falls back to round robin: no instance should take more than half
    expect(max(counts) <= SPREAD_REQUESTS // 2, f"uneven spread {counts}")
    ids = sorted(i for s in servers for i in s.served("spread-"))
    expect(ids == sorted(f"spread-{i}" for i in range(SPREAD_REQUESTS)), "each request served exactly once")


def test_failover(nginx, servers, bodies):
    victim = servers[0]
    load = Load(nginx.port, "failover", bodies).start()
    expect(load.progress.wait(LOAD_DEADLINE), "the load made no progress")
    before = len(victim.served("failover-"))
    victim.proc.kill()  # SIGKILL: in-flight requests and open connections die with it
    victim.proc.wait()
    t_kill = time.monotonic() - load.t0
    load.finish()
    print(f"   {load.summary()}")
    counts = {s.name: len(s.served("failover-")) for s in servers}
    again = retried(nginx, "failover-")
    print(f"   {victim.name} SIGKILLed at {t_kill:.2f}s after serving {before}; served per instance {counts}; "
          f"{len(again)} requests retried by nginx on another instance")
    for e in again[:5]:
        print(f"     retried {e['request_id']}: upstreams {e['upstream']} statuses {e['upstream_status']}")
    expect(not load.failures, f"{len(load.failures)} client-visible failures, e.g. {load.failures[:3]}")
    expect(load.sent == LOAD_REQUESTS, f"only {load.sent} of {LOAD_REQUESTS} requests sent")
    expect(before > 0, f"{victim.name} served nothing before it was killed")
    expect(all(counts[s.name] > 0 for s in servers[1:]), "a surviving instance served nothing")
    return load, again


def raw_partial_post(port, body, rid, split):
    """Open a connection and send the headers and the first `split` bytes of a POST body."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    head = (f"POST /v1/attention HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nX-Request-ID: {rid}\r\nConnection: close\r\n\r\n").encode()
    sock.sendall(head + body[:split])
    return sock


def read_response(sock):
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    head, _, payload = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, head.decode(), payload


def test_drain(nginx, servers, bodies):
    target = servers[1]
    port = target.port
    # an idle keep-alive connection, opened before the drain
    keep = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    keep.request("GET", "/readyz")
    r = keep.getresponse()
    r.read()
    expect(r.status == 200, f"/readyz before SIGTERM: {r.status}")
    # an in-flight request: headers and half of the body sent
    lesson_body = lessons.request_body("002")
    sock = raw_partial_post(port, lesson_body, "drain-inflight", len(lesson_body) // 2)
    time.sleep(0.2)  # let the server see the headers: the request is now active

    load = Load(nginx.port, "drain", bodies).start()
    expect(load.progress.wait(LOAD_DEADLINE), "the load made no progress")
    t_term = time.monotonic()
    target.proc.send_signal(signal.SIGTERM)
    wait_for(lambda: '"event":"draining"' in open(target.err_path).read(), 5, "the draining event")

    # unready on the kept-alive connection, told to close it
    keep.request("GET", "/readyz")
    r = keep.getresponse()
    ready_body = r.read()
    ready_status, ready_conn = r.status, r.getheader("Connection")
    keep.close()
    # no new connection
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        refused = False
    except ConnectionRefusedError:
        refused = True
    alive_while_inflight = target.proc.poll() is None

    # the in-flight request completes
    sock.sendall(lesson_body[len(lesson_body) // 2:])
    status, head, payload = read_response(sock)
    sock.close()
    problems = lessons.check_answer("002", status, payload)
    try:
        code = target.proc.wait(timeout=SERVER_GRACE + 5)
    except subprocess.TimeoutExpired:
        code = None
    t_exit = time.monotonic() - t_term
    load.finish()
    log = target.log()
    stopped = [e for e in log if e.get("event") == "stopped"]
    drain_at = next(i for i, e in enumerate(log) if e.get("event") == "draining")
    after = [e for e in log[drain_at:] if e.get("request_id", "").startswith(("drain-", "drain-inflight"))]
    print(f"   {load.summary()}")
    print(f"   {target.name} after SIGTERM: /readyz {ready_status} (Connection: {ready_conn}) on a kept-alive "
          f"connection, new connections {'refused' if refused else 'ACCEPTED'}, in-flight request {status}, "
          f"exit code {code} after {t_exit:.2f}s, {len(after)} requests completed while draining "
          f"({sum(e.get('status') == 200 for e in after)} with 200); "
          f"{len(retried(nginx, 'drain-'))} load requests retried by nginx")
    expect(ready_status == 503, f"/readyz while draining answered {ready_status}")
    expect(json.loads(ready_body).get("status") == 503, f"/readyz body {ready_body[:200]!r}")
    expect(ready_conn and ready_conn.lower() == "close", "no Connection: close while draining")
    expect(refused, "the draining instance still accepts connections")
    expect(alive_while_inflight, "the instance exited with a request in flight")
    expect(not problems, f"in-flight request: {problems}")
    expect(code == 0, f"exit code {code} after SIGTERM")
    expect(stopped and stopped[-1].get("clean") is True, f"stop event {stopped}")
    expect(all(e.get("status") in (200, 503) for e in after if e.get("path") == "/v1/attention"),
           "a request failed while draining")
    expect(not load.failures, f"{len(load.failures)} client-visible failures, e.g. {load.failures[:3]}")
    expect(load.sent == LOAD_REQUESTS, f"only {load.sent} of {LOAD_REQUESTS} requests sent")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", required=True)
    ap.add_argument("--nginx-conf", required=True)
    ap.add_argument("--work", default=None, help="directory for logs (default: a temporary one)")
    args = ap.parse_args()
    if args.work:
        os.makedirs(args.work, exist_ok=True)
        for f in os.listdir(args.work):
            os.unlink(os.path.join(args.work, f))
    work = os.path.abspath(args.work or tempfile.mkdtemp(prefix="lb-test."))
    servers, nginx = [], None
    passed = failed = 0
    try:
        servers = [Server(args.server, work, f"instance-{i + 1}") for i in range(INSTANCES)]
        nginx = Nginx(args.nginx_conf, work, [s.port for s in servers])
        print(f"   nginx on 127.0.0.1:{nginx.port} -> " + ", ".join(f"{s.name} :{s.port}" for s in servers))
        bodies = load_bodies()
        for name, run in (("requests spread over all three instances", lambda: test_spread(nginx, servers)),
                          ("an instance killed under load: no client-visible failure",
                           lambda: test_failover(nginx, servers, bodies)),
                          ("SIGTERM: unready, refuses new connections, drains in-flight requests",
                           lambda: test_drain(nginx, servers, bodies))):
            try:
                run()
                print(f"ok   {name}")
                passed += 1
            except (Failed, RuntimeError) as e:
                print(f"FAIL {name}: {e}")
                failed += 1
    finally:
        if nginx:
            nginx.stop()
        for s in servers:
            s.stop()
    print(f"logs in {work}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
