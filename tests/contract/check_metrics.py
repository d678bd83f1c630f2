#!/usr/bin/python3
"""GET /metrics as Prometheus reads it.

The exposition is parsed by Prometheus's own text-format parser (Debian's
python3-prometheus-client, prometheus_client.parser), after a server has
answered a computed /v1 request, a /v2 one, a refusal and a reply read by a
client that paused, so that every family has samples. Checked:
  - it parses, and every family is declared once with a HELP and a TYPE of
    counter, gauge or histogram;
  - names are attention_* or process_*, in snake case, in base units
    (_seconds, _bytes: no _ms, _kb, ...); a counter's samples end in _total,
    no other family's name does; a histogram is in seconds or bytes, its
    buckets cumulative up to le="+Inf", its _count that bucket's and its
    _sum there;
  - the process_* families are those prometheus_client's ProcessCollector
    makes on this machine, with the same types;
  - where a request's time went is three histograms, each holding the
    computed requests: attention_queue_wait_seconds,
    attention_compute_seconds and attention_encode_seconds;
  - attention_request_duration_seconds runs to the reply's last byte: a
    client that waits PAUSE_S before reading a reply bigger than the socket
    buffers adds that wait to it.

usage: check_metrics.py SERVER_BIN
"""
import json
import re
import socket
import sys
import time
import urllib.request

from prometheus_client import ProcessCollector
from prometheus_client.parser import text_string_to_metric_families

sys.path.insert(0, __file__.rsplit("/", 2)[0] + "/oracle")
from serverproc import Server  # noqa: E402

NAME = re.compile(r"^(attention|process)_[a-z][a-z0-9_]*[a-z0-9]$")
NOT_BASE_UNIT = re.compile(
    r"_(ms|msec|milliseconds|us|usec|microseconds|ns|nanoseconds|minutes|"
    r"hours|days|kb|kib|mb|mib|gb|gib|percent)(_|$)")
WORK_HISTOGRAMS = ("attention_queue_wait_seconds",
                   "attention_compute_seconds", "attention_encode_seconds")
# how long the slow client waits before reading its reply, and the reply's
# size: n tokens returning two n x n stages (about 14 MB of JSON), more
# than the server's socket buffer (tcp_wmem's 4 MiB at most) and the
# client's (its default, 128 KiB, grows only as it reads) hold, so the last
# byte waits for the client
PAUSE_S = 1.5
SLOW_N = 600

LESSON = {"x": [[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]],
          "w_q": [[1, 0], [0, 1], [1, 0], [0, 1]],
          "w_k": [[1, 0], [0, 1], [1, 0], [0, 1]],
          "w_v": [[1, 0], [0, 1], [1, 0], [0, 1]]}
V2 = {"id": "metrics-check", "inputs": [
    {"name": n, "shape": [2, 2], "datatype": "FP64", "data": [1, 0, 0, 1]}
    for n in ("x", "w_q", "w_k", "w_v")]}


def slow_body():
    x = [[((i * 7 + j * 3) % 11) / 11 - 0.5 for j in range(4)]
         for i in range(SLOW_N)]
    eye = [[float(i == j) for j in range(4)] for i in range(4)]
    return json.dumps({"x": x, "w_q": eye, "w_k": eye, "w_v": eye,
                       "return": ["scores", "weights"]}).encode()


def read_slowly(port, body):
    """POSTs body, waits PAUSE_S after the reply's headers, then reads it
    all; returns the bytes read."""
    s = socket.socket()
    s.connect(("127.0.0.1", port))
    s.sendall(b"POST /v1/attention HTTP/1.1\r\nHost: x\r\nConnection: close"
              b"\r\nContent-Type: application/json\r\nContent-Length: "
              + str(len(body)).encode() + b"\r\n\r\n" + body)
    got = s.recv(4096)
    time.sleep(PAUSE_S)
    while True:
        chunk = s.recv(1 << 20)
        if not chunk:
            break
        got += chunk
    s.close()
    return got


def duration_sum(families, route):
    for f in families.values():
        for s in f.samples:
            if (s.name == "attention_request_duration_seconds_sum"
                    and s.labels.get("route") == route):
                return s.value
    return None


def scrape(port):
    text = urllib.request.urlopen(
        f"http://127.0.0.1:{port}/metrics", timeout=30).read().decode()
    families = {}
    for family in text_string_to_metric_families(text):
        if family.name in families:
            raise AssertionError(f"{family.name} declared twice")
        families[family.name] = family
    return text, families


def histogram_faults(f):
    faults = []
    if not re.search(r"_(seconds|bytes)$", f.name):
        faults.append("a histogram in neither seconds nor bytes")
    series = {}
    for s in f.samples:
        key = tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))
        series.setdefault(key, []).append(s)
    for key, samples in series.items():
        buckets = [s for s in samples if s.name == f.name + "_bucket"]
        counts = [s.value for s in samples if s.name == f.name + "_count"]
        sums = [s for s in samples if s.name == f.name + "_sum"]
        values = [b.value for b in buckets]
        if not buckets or buckets[-1].labels.get("le") != "+Inf":
            faults.append(f"{key}: no le=\"+Inf\" bucket last")
        elif values != sorted(values):
            faults.append(f"{key}: buckets not cumulative")
        elif counts != [values[-1]] or len(sums) != 1:
            faults.append(f"{key}: _count or _sum missing or wrong")
    return faults


def family_faults(f, text):
    faults = []
    if not NAME.match(f.name):
        faults.append("not attention_* or process_* in snake case")
    if NOT_BASE_UNIT.search(f.name):
        faults.append("not in a base unit")
    if f.type not in ("counter", "gauge", "histogram"):
        faults.append(f"type {f.type} (undeclared?)")
    if not f.documentation:
        faults.append("no HELP")
    if f.type == "counter":
        # the parser names a counter's family without its _total
        faults += [f"sample {s.name} of a counter without _total"
                   for s in f.samples if s.name != f.name + "_total"]
        if f"# TYPE {f.name}_total counter" not in text:
            faults.append("counter declared without _total")
    elif f.name.endswith("_total"):
        faults.append(f"a {f.type} named _total")
    if f.type == "histogram":
        faults += histogram_faults(f)
    return faults


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    failures = []
    with Server(sys.argv[1], "--threads", "2") as server:
        assert server.post(LESSON)[0] == 200
        assert server.post(V2, "/v2/models/attention/infer")[0] == 200
        assert server.post({"x": [[1, 0], [0]]})[0] == 400
        _, before = scrape(server.port)
        start = duration_sum(before, "/v1/attention")
        reply = read_slowly(server.port, slow_body())
        if not reply.startswith(b"HTTP/1.1 200"):
            sys.exit(f"the slow client's reply: {reply[:200]!r}")
        time.sleep(0.2)  # the completion runs once the last byte is out
        text, families = scrape(server.port)
        added = duration_sum(families, "/v1/attention") - start
        print(f"metrics: a reply of {len(reply) / 1e6:.1f} MB read after "
              f"a {PAUSE_S} s pause added {added:.3f} s to "
              f"attention_request_duration_seconds")
        if added < PAUSE_S:
            failures.append("attention_request_duration_seconds: the reply "
                            f"read after {PAUSE_S} s added {added:.3f} s")
    for f in families.values():
        failures += [f"{f.name}: {x}" for x in family_faults(f, text)]
    for theirs in ProcessCollector(registry=None).collect():
        ours = families.get(theirs.name)
        if not ours or ours.type != theirs.type:
            failures.append(f"{theirs.name}: prometheus_client has a "
                            f"{theirs.type}, /metrics "
                            f"{ours.type if ours else 'nothing'}")
    for name in WORK_HISTOGRAMS:
        f = families.get(name)
        count = [s.value for s in f.samples if s.name == name + "_count"] \
            if f else []
        if f is None or f.type != "histogram" or count != [count[0]] or \
                count[0] < 3:
            failures.append(f"{name}: not a histogram of the 3 computed "
                            f"requests ({count})")
    print(f"metrics: {len(families)} families parsed by prometheus_client")
    for failure in failures:
        print("FAIL", failure)
    print(f"{0 if failures else 1} passed, {1 if failures else 0} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
