#!/usr/bin/python3
"""Bounded memory under any client: whatever clients do, the server's
resident memory stays within --memory-budget plus a fixed base, and goes
back to where it started once they stop.

Each phase runs while a sampler reads the server's RSS every 20 ms:
- slow readers: clients ask for replies of about 23 MB and read them a few
  bytes at a time; the replies' bytes stay counted in the budget until they
  are sent, so the clients beyond it get 503 with Retry-After, and every
  slow reader is cut off once --request-timeout plus its reply's size at
  --min-send-rate has passed; the access log's bytes_out says how much of
  the reply was sent, not its size;
- stalled uploads: clients declare bodies of 2 MiB, send nearly all of
  them and stop; each body is reserved from its Content-Length, so those
  beyond the budget (with what parsing them would need) get 503 before a
  byte of their body is read, and the deadline cuts the stalled ones;
- many connections: keep-alive clients on every connection the server
  allows, small and mid-size requests mixed;
then the load stops, and within 10 s the RSS is back within 64 MiB of what
it was at the start (freed memory is given back once the server is idle).

usage: test_memory.py SERVER_BIN [--sanitized]
With --sanitized (an ASan build) the phases and their answers are checked
but not the RSS bound: AddressSanitizer's shadow memory and quarantine are
not the server's."""
import json
import random
import socket
import sys
import threading
import time

from robustlib import (Failures, Server, attention_body, connection_memory,
                       http, parse_bytes_per_body_byte, parse_response)

MIB = 1 << 20
BUDGET = 128 * MIB            # --memory-budget
REQUEST_TIMEOUT = 3           # s, --request-timeout
MIN_SEND_RATE = 8 * MIB       # bytes/s, --min-send-rate
MAX_CONNECTIONS = 96          # --max-connections (and per IP)
# What the server holds beyond its budget: the process itself (code,
# libraries, thread stacks, allocator bookkeeping) plus libmicrohttpd's
# memory per connection (FRAMING_CONNECTION_MEMORY).  docs/reliability.md
# explains both figures.
BASE_FIXED = 64 * MIB
BASE_PER_CONNECTION = connection_memory()  # server/http/framing.h
RSS_LIMIT = BUDGET + BASE_FIXED + MAX_CONNECTIONS * BASE_PER_CONNECTION
IDLE_RETURN = 64 * MIB        # back within this of the idle start ...
IDLE_RETURN_SECONDS = 10      # ... within this long after the load stops
WATCHER_TICK = 0.25           # s, conn_deadline.c's granularity

SLOW_READERS = 8
UPLOADS = 50
UPLOAD_BYTES = 2 * MIB


class Sampler(threading.Thread):
    """Reads the server's VmRSS every 20 ms until stopped."""

    def __init__(self, srv):
        super().__init__(daemon=True)
        self.srv = srv
        self.samples = []
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            try:
                self.samples.append((time.monotonic(),
                                     self.srv.rss_kib() * 1024))
            except (OSError, RuntimeError):
                return
            time.sleep(0.02)

    def peak(self, since=0.0):
        return max((r for t, r in self.samples if t >= since), default=0)


def reserved_bytes(port):
    """attention_memory_reserved_bytes from /metrics."""
    _, _, body = http(port, "GET", "/metrics")
    for line in body.decode().splitlines():
        if line.startswith("attention_memory_reserved_bytes "):
            return int(float(line.split()[1]))
    raise AssertionError("no attention_memory_reserved_bytes in /metrics")


def reserved_after_load(port, load_end):
    """The bytes still reserved once the last replies are released, and how
    long after the load that was: read until none are, for at most
    IDLE_RETURN_SECONDS."""
    while True:
        left, after = reserved_bytes(port), time.monotonic() - load_end
        if left == 0 or after >= IDLE_RETURN_SECONDS:
            return left, after
        time.sleep(0.1)


def log_entries(srv):
    with open(srv.log_path, "rb") as f:
        for line in f:
            if line.startswith(b'{"time"'):
                yield json.loads(line)


def request_head(length, extra=""):
    return (f"POST /v1/attention HTTP/1.1\r\nHost: x\r\n"
            f"Content-Type: application/json\r\n{extra}"
            f"Content-Length: {length}\r\n\r\n").encode()


def big_reply_body(rng):
    """A small body (n = 512, d = 8, 4 heads) whose weights [4, 512, 512]
    come back as about 23 MB of JSON."""
    return attention_body(rng, 512, 8, 4, {"return": ["weights"]})


def slow_reader(port, body, result, i):
    """Sends the request, then reads its reply 2 KiB every 100 ms (20 KiB/s,
    far below --min-send-rate) through a small receive buffer; an answer
    other than 200 is read whole at once.  Records the answer's head, how
    the connection ended and when."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32 << 10)
    s.settimeout(60)
    data = b""
    t0 = time.monotonic()
    try:
        s.connect(("127.0.0.1", port))
        s.sendall(request_head(len(body), f"X-Request-ID: slow-{i}\r\n")
                  + body)
        while b"\r\n\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        if b" 200 " not in head.split(b"\r\n")[0]:
            length = int(head.lower().split(b"content-length: ")[1]
                         .split(b"\r\n")[0])
            while len(rest) < length:
                rest += s.recv(4096)
            result[i] = ("answered", head + b"\r\n\r\n" + rest,
                         time.monotonic() - t0)
            return
        while s.recv(2048):
            time.sleep(0.1)
        result[i] = ("closed", head, time.monotonic() - t0)
    except OSError as e:
        result[i] = (type(e).__name__, data, time.monotonic() - t0)
    finally:
        s.close()


def phase_slow_readers(f, srv, rng):
    body = big_reply_body(rng)
    results = [None] * SLOW_READERS
    threads = [threading.Thread(target=slow_reader,
                                args=(srv.port, body, results, i))
               for i in range(SLOW_READERS)]
    for t in threads:
        t.start()
        time.sleep(0.05)
    for t in threads:
        t.join(120)
    statuses = []
    for how, data, took in results:
        line = data.split(b"\r\n", 1)[0].decode("latin-1")
        status = int(line.split()[1]) if line.startswith("HTTP/1.1") else 0
        statuses.append(status)
        if status == 503:
            f.check(b"\r\nRetry-After: " in data,
                    "a 503 for a reply over the budget has Retry-After")
    served = statuses.count(200)
    print(f"  slow readers: {SLOW_READERS} asked for ~23 MB replies: "
          f"{served} × 200 (read slowly), {statuses.count(503)} × 503",
          flush=True)
    f.check(served >= 1 and statuses.count(503) >= 1,
            "some slow readers are served, those beyond the budget get 503")
    f.check(served + statuses.count(503) == SLOW_READERS,
            f"every slow reader got 200 or 503 ({statuses})")
    # every 200 was cut off before its reply was read, within its deadline
    srv.wait_completed(SLOW_READERS, timeout=30)
    sizes = {}
    for e in log_entries(srv):
        if e["request_id"].startswith("slow-") and e["status"] == 200:
            sizes[e["request_id"]] = e
    f.check(len(sizes) == served, f"{served} slow replies in the access log")
    for rid, e in sorted(sizes.items()):
        f.check(not e["completed"] and 0 < e["bytes_out"] < 4 * MIB,
                f"{rid}: cut off, bytes_out {e['bytes_out']} is what was "
                f"sent, not the reply's size")
    for (how, data, took), status in zip(results, statuses):
        if status == 200:
            limit = REQUEST_TIMEOUT + 30e6 / MIN_SEND_RATE + 2 * WATCHER_TICK
            f.check(took < limit + 2.0,
                    f"a slow reader was cut off after {took:.1f} s (deadline "
                    f"{REQUEST_TIMEOUT} s + reply / --min-send-rate)")
    f.check(reserved_bytes(srv.port) == 0,
            "their replies' memory is released once they are cut off")


def stalled_upload(port, length, sent, result, i, release):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.sendall(request_head(length))
        try:
            s.settimeout(0.5)
            early = s.recv(4096)
        except socket.timeout:
            early = b""
        if early:
            result[i] = early
            s.close()
            return
        s.settimeout(30)
        try:
            s.sendall(b"[" * sent)
        except OSError:
            pass
        release.wait(30)
        data = b""
        try:
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
        except OSError:
            pass
        result[i] = data or b"(closed without an answer)"
        s.close()
    except OSError as e:
        result[i] = repr(e).encode()


def phase_stalled_uploads(f, srv):
    # one that even an idle budget never holds with its parsing (36 bytes a
    # byte): 413 at once, without Retry-After (a retry could never help)
    status, hdrs, body = None, None, None
    with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:
        s.sendall(request_head(16 * MIB) + b"[" * 65536)
        data = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        except OSError:
            pass
    status, hdrs, body = parse_response(data)
    f.check(status == 413 and b"limit_exceeded" in body
            and "retry-after" not in hdrs,
            f"a 16 MiB body that the {BUDGET >> 20} MiB budget never holds "
            f"with its parsing: 413 at once, no Retry-After ({status})")

    results = [None] * UPLOADS
    release = threading.Event()
    threads = [threading.Thread(target=stalled_upload,
                                args=(srv.port, UPLOAD_BYTES,
                                      UPLOAD_BYTES - 4096, results, i,
                                      release))
               for i in range(UPLOADS)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    reserved = reserved_bytes(srv.port)
    release.set()
    for t in threads:
        t.join(60)
    early = [r for r in results if r and r.startswith(b"HTTP/1.1 503")]
    cut = [r for r in results if r == b"(closed without an answer)"]
    print(f"  stalled uploads: {UPLOADS} × {UPLOAD_BYTES >> 20} MiB declared:"
          f" {len(early)} × 503 before reading, {len(cut)} read, stalled and "
          f"cut off; {reserved >> 20} MiB reserved while they stalled",
          flush=True)
    f.check(len(early) >= 1 and all(b"\r\nRetry-After: " in r
                                    for r in early),
            "uploads beyond the budget: 503 with Retry-After before reading")
    f.check(len(early) + len(cut) == UPLOADS,
            f"every stalled upload was refused or cut off "
            f"({[r[:40] for r in results if r not in early and r not in cut]})")
    per_body = UPLOAD_BYTES * (1 + parse_bytes_per_body_byte())
    f.check(reserved == len(cut) * per_body,
            f"each stalled body and its parsing are counted in the budget "
            f"({reserved >> 20} MiB reserved for {len(cut)} bodies of "
            f"{per_body >> 20} MiB)")


def read_answer(s):
    """One HTTP answer from s: (status, head in lower case)."""
    data = bytearray()
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            raise ConnectionError("closed before an answer")
        data += chunk
    head, _, rest = bytes(data).partition(b"\r\n\r\n")
    head = head.lower()
    length = int(head.split(b"content-length: ")[1].split(b"\r\n")[0])
    left = length - len(rest)
    buf = bytearray(1 << 20)
    while left > 0:
        got = s.recv_into(buf, min(left, len(buf)))
        if not got:
            raise ConnectionError("closed in the middle of an answer")
        left -= got
    return int(head.split()[1]), head


def keepalive_client(port, bodies, stop, counts, i):
    k = 0
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        while not stop.is_set():
            body = bodies[k % len(bodies)]
            k += 1
            s.sendall(request_head(len(body)) + body)
            status, head = read_answer(s)
            counts[i][status] = counts[i].get(status, 0) + 1
            if b"connection: close" in head:
                s.close()
                s = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.close()
    except OSError as e:
        counts[i]["error"] = f"{e!r} after {k} requests"


def phase_many_connections(f, srv, rng, seconds):
    bodies = [attention_body(rng, 4, 8), attention_body(rng, 64, 32, 2),
              attention_body(rng, 128, 64, 4, {"return": ["weights"]})]
    stop = threading.Event()
    clients = MAX_CONNECTIONS - 4
    counts = [dict() for _ in range(clients)]
    threads = [threading.Thread(target=keepalive_client,
                                args=(srv.port, bodies, stop, counts, i))
               for i in range(clients)]
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join(60)
    total = {}
    for c in counts:
        for k, v in c.items():
            if k != "error":
                total[k] = total.get(k, 0) + v
    errors = [c["error"] for c in counts if "error" in c]
    print(f"  many connections: {clients} keep-alive clients for "
          f"{seconds} s: {dict(sorted(total.items()))}", flush=True)
    f.check(not errors, f"no client failed ({errors[:3]})")
    f.check(set(total) <= {200, 503} and total.get(200, 0) > 0,
            "every answer is 200 or 503")


def main():
    binary = sys.argv[1]
    sanitized = "--sanitized" in sys.argv[2:]
    f = Failures()
    srv = Server(binary, ["--threads", "2",
                          "--memory-budget", str(BUDGET),
                          "--request-timeout", str(REQUEST_TIMEOUT),
                          "--min-send-rate", str(MIN_SEND_RATE),
                          "--max-connections", str(MAX_CONNECTIONS),
                          "--max-connections-per-ip", str(MAX_CONNECTIONS)])
    sampler = Sampler(srv)
    try:
        rng = random.Random(14)
        for _ in range(3):  # warm-up: the first requests map the libraries
            http(srv.port, "POST", "/v1/attention", attention_body(rng, 4, 8))
        time.sleep(0.5)
        idle_start = srv.rss_kib() * 1024
        sampler.start()
        phase_slow_readers(f, srv, rng)
        phase_stalled_uploads(f, srv)
        phase_many_connections(f, srv, rng, 2 if sanitized else 4)
        load_end = time.monotonic()
        peak = sampler.peak()
        back = None
        # (an ASan build keeps freed blocks in its quarantine: its RSS is not
        # judged, and not waited for)
        while (not sanitized
               and time.monotonic() - load_end < IDLE_RETURN_SECONDS):
            rss = srv.rss_kib() * 1024
            if rss <= idle_start + IDLE_RETURN:
                back = time.monotonic() - load_end
                break
            time.sleep(0.1)
        sampler.stop.set()
        final = srv.rss_kib() * 1024
        print(f"  RSS: idle start {idle_start / MIB:.1f} MiB, peak "
              f"{peak / MIB:.1f} MiB (budget {BUDGET >> 20} MiB + base "
              f"{(RSS_LIMIT - BUDGET) / MIB:.1f} MiB allowed), "
              f"{final / MIB:.1f} MiB "
              + (f"{back:.1f} s after the load stopped" if back is not None
                 else "when the load stopped" if sanitized
                 else f"{IDLE_RETURN_SECONDS} s after the load stopped"),
              flush=True)
        if not sanitized:
            f.check(peak <= RSS_LIMIT,
                    f"RSS peak {peak / MIB:.1f} MiB within the budget plus "
                    f"the base ({RSS_LIMIT / MIB:.1f} MiB)")
            f.check(back is not None,
                    f"RSS back within {IDLE_RETURN >> 20} MiB of its idle "
                    f"start within {IDLE_RETURN_SECONDS} s")
        left, after = reserved_after_load(srv.port, load_end)
        f.check(left == 0, f"nothing reserved at the end ({left} bytes "
                f"{after:.1f} s after the load stopped)")
    finally:
        sampler.stop.set()
        code = srv.terminate()
    f.check(code == 0, f"exit code {code} after SIGTERM")
    f.exit("test_memory")


if __name__ == "__main__":
    main()
