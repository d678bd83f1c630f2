#!/usr/bin/python3
"""Slow clients cannot hold the service: slowhttptest (slowloris and slow
body) runs against a server with short --idle-timeout/--request-timeout while
a normal client keeps being served within 1 s; a client that trickles one
byte a second (below the idle timeout) is cut off by the whole-request
deadline, in the header phase and in the body phase.

usage: test_slow.py SERVER_BIN"""
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time

from robustlib import Failures, Server, attention_body, check_ok, http

IDLE_TIMEOUT = 2       # s, --idle-timeout
REQUEST_TIMEOUT = 5    # s, --request-timeout
ATTACK_SECONDS = 20    # length of each slowhttptest run
ATTACK_CONNECTIONS = 400
NORMAL_LATENCY_MAX = 1.0   # s, the most a normal client may wait
# A trickled connection must be closed by the deadline; allow the event
# loop's timer granularity on top.
DEADLINE_SLACK = 2.0


class Prober(threading.Thread):
    """A normal client: a health check and a small attention request on
    fresh connections, every 100 ms, each timed."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port = port
        self.stop = threading.Event()
        self.latencies = []
        self.errors = []

    def run(self):
        rng = random.Random(7)
        while not self.stop.is_set():
            for kind in ("healthz", "attention"):
                t0 = time.monotonic()
                try:
                    if kind == "healthz":
                        s, _, b = http(self.port, "GET", "/healthz",
                                       timeout=5)
                        ok = s == 200
                    else:
                        s, _, b = http(self.port, "POST", "/v1/attention",
                                       attention_body(rng, 4, 8), timeout=5)
                        check_ok(s, b, "probe")
                        ok = True
                except Exception as e:  # noqa: BLE001
                    ok, s = False, repr(e)
                dt = time.monotonic() - t0
                self.latencies.append(dt)
                if not ok:
                    self.errors.append((kind, s))
            self.stop.wait(0.1)


def trickle(port, phase):
    """Opens a connection and sends one byte a second: the request line and
    headers (phase "headers") or, after complete headers, the body (phase
    "body").  Returns the seconds until the server closed the connection
    (or None if it was still open after 4 × the deadline)."""
    body = attention_body(random.Random(1), 2, 2)
    head = (f"POST /v1/attention HTTP/1.1\r\nHost: x\r\n"
            f"Content-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(0.9)
    t0 = time.monotonic()
    try:
        if phase == "body":
            s.sendall(head)
            data = body
        else:
            data = head
        for i in range(len(data)):
            if time.monotonic() - t0 > 4 * REQUEST_TIMEOUT:
                return None
            try:
                s.send(data[i:i + 1])
            except OSError:
                return time.monotonic() - t0
            try:
                got = s.recv(4096)
                if got == b"":
                    return time.monotonic() - t0
                # a reply (e.g. 408) and then a close is fine too
                return time.monotonic() - t0
            except socket.timeout:
                pass
            except OSError:
                return time.monotonic() - t0
        return None
    finally:
        s.close()


def attack(port, mode, workdir):
    prefix = os.path.join(workdir, f"slow-{mode}")
    cmd = ["slowhttptest", "-c", str(ATTACK_CONNECTIONS), "-r", "200",
           "-i", "1", "-l", str(ATTACK_SECONDS), "-p", "3", "-g",
           "-o", prefix]
    if mode == "slowloris":
        cmd += ["-H", "-u", f"http://127.0.0.1:{port}/"]
    else:
        cmd += ["-B", "-s", "65536", "-f", "application/json",
                "-u", f"http://127.0.0.1:{port}/v1/attention"]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         timeout=ATTACK_SECONDS + 60)
    # CSV: seconds,closed,pending,connected,service available
    rows = []
    try:
        with open(prefix + ".csv") as f:
            for line in f.read().splitlines()[1:]:
                parts = line.split(",")
                if len(parts) >= 5:
                    rows.append([int(p) for p in parts[:5]])
    except FileNotFoundError:
        pass
    return out.returncode, out.stdout.decode(errors="replace"), rows


def main():
    binary = sys.argv[1]
    f = Failures()
    srv = Server(binary, ["--idle-timeout", str(IDLE_TIMEOUT),
                          "--request-timeout", str(REQUEST_TIMEOUT),
                          "--max-connections", "2000",
                          "--max-connections-per-ip", "1000",
                          "--threads", "2"])
    workdir = tempfile.mkdtemp(prefix="robust-slow-")
    try:
        for phase in ("headers", "body"):
            took = trickle(srv.port, phase)
            f.check(took is not None and
                    took <= REQUEST_TIMEOUT + DEADLINE_SLACK,
                    f"one byte/s in the {phase}: closed after "
                    f"{'never' if took is None else f'{took:.1f} s'} "
                    f"(deadline {REQUEST_TIMEOUT} s, idle {IDLE_TIMEOUT} s)")
        for mode in ("slowloris", "slowbody"):
            prober = Prober(srv.port)
            prober.start()
            t0 = time.monotonic()
            rc, text, rows = attack(srv.port, mode, workdir)
            took = time.monotonic() - t0
            prober.stop.set()
            prober.join()
            lat = sorted(prober.latencies)
            p50 = lat[len(lat) // 2] if lat else float("nan")
            p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] if lat else 0
            worst = lat[-1] if lat else float("inf")
            peak = max((r[3] for r in rows), default=0)
            closed = rows[-1][1] if rows else 0
            print(f"  {mode}: slowhttptest rc {rc} after {took:.0f} s "
                  f"(ends early once the server closed them all), "
                  f"{ATTACK_CONNECTIONS} "
                  f"connections asked, peak connected {peak}, closed by "
                  f"server {closed}; normal client: {len(lat)} requests, "
                  f"p50 {p50 * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, "
                  f"max {worst * 1000:.1f} ms, errors {len(prober.errors)}",
                  flush=True)
            f.check(rc == 0 and rows, f"{mode}: slowhttptest ran "
                    f"(rc {rc}) {text[-300:] if rc else ''}")
            f.check(not prober.errors,
                    f"{mode}: normal client never failed "
                    f"({prober.errors[:3]})")
            f.check(worst < NORMAL_LATENCY_MAX,
                    f"{mode}: normal client served within "
                    f"{NORMAL_LATENCY_MAX:.0f} s (max {worst * 1000:.1f} ms)")
            # connections opened in the first seconds must have been cut
            # by the deadline long before the end of the attack
            f.check(closed > 0, f"{mode}: the server closed slow "
                    f"connections ({closed})")
        s, _, b = http(srv.port, "POST", "/v1/attention",
                       attention_body(random.Random(3), 3, 4))
        f.check(s == 200, "server still answers after the attacks")
    finally:
        code = srv.terminate()
    f.check(code == 0, f"exit code {code} after SIGTERM")
    f.exit("test_slow")


if __name__ == "__main__":
    main()
