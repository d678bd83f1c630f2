#!/usr/bin/python3
"""What a request can make the server hold is what it reserved, whatever
its body's shape: a body of empty objects costs jansson's tree 83 bytes a
byte, more than twice what parsing reserves (server/base/parse_budget.h),
and is refused with 413 limit_exceeded once it reaches its reservation
instead of being built whole; a body of empty token labels costs the tree
35 bytes a byte and the labels copied out of it 12 more, and they are
charged to the same reservation.

The attacks, each body as big as the budget admits:
- on /v1 (a `tokens` of `{}`) and on /v2 (a `window` parameter of `{}`):
  --memory-budget 64M --max-connections 256, one body at a time, then
  --memory-budget 256M --threads 8 --max-connections 256, four at once;
- on /v1, a `tokens` of `""` in one list (more labels than --max-tokens)
  and in lists of 8192 (one per sequence of a batch): --memory-budget 256M
  --max-connections 16, one body at a time.
While it runs the server's RSS is sampled every 10 ms: its peak must stay
within the budget plus the base of docs/reliability.md (64 MiB + 44 KiB a
connection), and 10 s after the last answer the RSS must be back within
16 MiB of where it was before the attack.  About 60 s in all.

usage: test_parse_memory.py SERVER_BIN"""
import sys
import threading
import time

from robustlib import (Failures, Server, connection_memory, http,
                       parse_bytes_per_body_byte)

MIB = 1 << 20
BASE_FIXED = 64 * MIB           # docs/reliability.md, Memory
BASE_PER_CONNECTION = connection_memory()  # server/http/framing.h
MAX_CONNECTIONS = 256
IDLE_RETURN = 16 * MIB          # back within this of the idle start ...
IDLE_RETURN_SECONDS = 10        # ... this long after the last answer


V1_HEAD = b'{"x":[[1]],"w_q":[[1]],"w_k":[[1]],"w_v":[[1]],"tokens":['
LABELS_PER_LIST = 8192          # --max-tokens' default


def labels_body(size, nested):
    """About `size` bytes of /v1 whose `tokens` are empty labels: one list,
    or lists of LABELS_PER_LIST."""
    count = (size - 300) // 3
    if not nested:
        return V1_HEAD + b'"",' * (count - 1) + b'""]}'
    one = b"[" + b'"",' * (LABELS_PER_LIST - 1) + b'""]'
    lists = max(1, count // LABELS_PER_LIST)
    return V1_HEAD + b",".join([one] * lists) + b"]}"


def attack_body(route, size):
    """About `size` bytes whose every byte but the tensors is `{},`."""
    fill = b"{}," * ((size - 300) // 3) + b"0"
    if route == "/v1/attention":
        return V1_HEAD + fill + b']}'
    inputs = ",".join('{"name":"%s","shape":[1,1],"datatype":"FP64",'
                      '"data":[1]}' % n for n in ("x", "w_q", "w_k", "w_v"))
    return (b'{"inputs":[' + inputs.encode() + b'],"parameters":'
            b'{"window":[' + fill + b']}}')


class Sampler(threading.Thread):
    def __init__(self, srv):
        super().__init__(daemon=True)
        self.srv, self.peak, self.stop = srv, 0, threading.Event()

    def run(self):
        while not self.stop.is_set():
            self.peak = max(self.peak, self.srv.rss_kib() * 1024)
            time.sleep(0.01)


def attack(f, binary, budget, threads, at_once, bodies, fill=0.95,
           connections=MAX_CONNECTIONS):
    """`bodies`: (what, route, the body of a size) to send, `at_once` of
    each together, each `fill` of the largest body whose upload and parsing
    the budget holds (one share of it each when several come at once)."""
    size = int(budget / at_once / (parse_bytes_per_body_byte() + 1) * fill)
    limit = budget + BASE_FIXED + connections * BASE_PER_CONNECTION
    srv = Server(binary, ["--memory-budget", str(budget),
                          "--threads", str(threads),
                          "--max-connections", str(connections),
                          "--max-connections-per-ip", str(connections)])
    try:
        http(srv.port, "GET", "/healthz")
        time.sleep(0.5)
        idle = srv.rss_kib() * 1024
        sampler = Sampler(srv)
        sampler.start()
        for what, route, make in bodies:
            body = make(size)
            answers = [None] * at_once

            def send(i):
                answers[i] = http(srv.port, "POST", route, body, timeout=120)

            senders = [threading.Thread(target=send, args=(i,))
                       for i in range(at_once)]
            for t in senders:
                t.start()
            for t in senders:
                t.join()
            for status, _, reply in answers:
                f.check(status == 413 and b'"limit_exceeded"' in reply,
                        f"{route}, {len(body) / MIB:.1f} MiB of {what}: 413 "
                        f"limit_exceeded ({status} {reply[:100]!r})")
        last = time.monotonic()
        back = None
        while time.monotonic() - last < IDLE_RETURN_SECONDS:
            if srv.rss_kib() * 1024 <= idle + IDLE_RETURN:
                back = time.monotonic() - last
                break
            time.sleep(0.1)
        sampler.stop.set()
        sampler.join()
        now = srv.rss_kib() * 1024
        print(f"  --memory-budget {budget >> 20}M --threads {threads}, "
              f"{at_once} at once: RSS idle {idle / MIB:.1f} MiB, peak "
              f"{sampler.peak / MIB:.1f} MiB (bound {limit / MIB:.1f}), "
              f"{now / MIB:.1f} MiB "
              + (f"{back:.1f} s" if back is not None
                 else f"{IDLE_RETURN_SECONDS} s")
              + " after the last answer", flush=True)
        f.check(sampler.peak <= limit,
                f"RSS peak {sampler.peak / MIB:.1f} MiB within the budget "
                f"plus the base ({limit / MIB:.1f} MiB)")
        f.check(back is not None,
                f"RSS back within {IDLE_RETURN >> 20} MiB of its idle "
                f"{idle / MIB:.1f} MiB within {IDLE_RETURN_SECONDS} s "
                f"({now / MIB:.1f} MiB)")
    finally:
        code = srv.terminate()
    f.check(code == 0, f"exit code {code} after SIGTERM")


def main():
    binary = sys.argv[1]
    f = Failures()
    trees = [("{}", route, lambda size, r=route: attack_body(r, size))
             for route in ("/v1/attention", "/v2/models/attention/infer")]
    labels = [('""', "/v1/attention", lambda size: labels_body(size, False)),
              ('[""]', "/v1/attention", lambda size: labels_body(size, True))]
    attack(f, binary, 64 * MIB, 2, 1, trees)
    attack(f, binary, 256 * MIB, 8, 4, trees)
    # one body at the largest size the budget admits: what the labels held
    # beyond the reservation passed the bound by 3 MiB
    attack(f, binary, 256 * MIB, 2, 1, labels, fill=0.999, connections=16)
    f.exit("test_parse_memory")


if __name__ == "__main__":
    main()
