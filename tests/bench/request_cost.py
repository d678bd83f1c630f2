"""What one lesson-sized request costs the server, counted so that the
neighbours' load cannot move it: instructions, or CPU seconds, per request.

    request_cost.py SERVER_A [SERVER_B] --work build/bench
                    [--requests 3000] [--connections 8] [--rounds 3]
                    [--cpu-seconds 4]

Two measures, each build in turn, the order reversed every other round:

- instructions per request (valgrind's callgrind, user space only: it
  counts what the process executes, whatever else runs on the machine):
  the server runs under callgrind with counting off; after a warm-up
  counting is switched on for exactly --requests requests (lesson 002's
  body over --connections keep-alive connections), then off;
- CPU µs per request (user + system, the kernel's socket I/O included):
  /proc/PID/stat of the server across --cpu-seconds of wrk -t1 with the
  same body, divided by the requests wrk counted.  The waiting for a CPU is
  not in it, but a loaded machine still moves it (caches, the scheduler):
  compare builds in one run only.

Prints each build's medians, and B ÷ A when two builds are given.
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
import http.client

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402  (bodies, server start-up, wrk)

# requests sent before counting starts: the first ones fault in pages and
# grow libmicrohttpd's and our buffers once
WARMUP_REQUESTS = 200


def send(port, body, count, connections):
    """count POSTs of body over `connections` keep-alive connections; each
    must be answered 200."""
    failures = []

    def one_connection(share):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        for _ in range(share):
            status, _ = harness.post(port, body, conn)
            if status != 200:
                failures.append(status)
        conn.close()

    shares = [count // connections + (i < count % connections)
              for i in range(connections)]
    threads = [threading.Thread(target=one_connection, args=(s,))
               for s in shares]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        raise harness.BenchError(f"{len(failures)} answers not 200: "
                                 f"{failures[:5]}")


def callgrind_total(path):
    """The events of a callgrind output file: its `totals:` line (the
    `summary:` line at its top is written before counting ends)."""
    with open(path) as f:
        for line in f:
            if line.startswith("totals:"):
                return int(line.split()[1])
    raise harness.BenchError(f"no totals in {path}")


def instructions_per_request(args, server, body, tag):
    out = os.path.join(args.work, f"callgrind.{tag}.out")
    argv = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
            f"--callgrind-out-file={out}", server, "--listen",
            "127.0.0.1:0", "--access-log", args.access_log]
    srv = harness.Server(tag, argv, read_port=True,
                         log_path=os.path.join(args.work, f"{tag}.log"))
    try:
        send(srv.port, body, WARMUP_REQUESTS, args.connections)
        ctl = ["callgrind_control", "-i"]
        subprocess.run(ctl + ["on", str(srv.proc.pid)], check=True,
                       capture_output=True)
        send(srv.port, body, args.requests, args.connections)
        subprocess.run(ctl + ["off", str(srv.proc.pid)], check=True,
                       capture_output=True)
    finally:
        srv.stop()
    return callgrind_total(out) / args.requests


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks  # utime + stime


def cpu_us_per_request(args, server, body_path):
    srv = harness.Server("attention-server", [
        server, "--listen", "127.0.0.1:0", "--access-log", args.access_log],
        read_port=True, log_path=os.path.join(args.work, "cost.log"))
    try:
        harness.run_wrk(args, srv.port, body_path, 1, args.connections)
        before = cpu_seconds(srv.proc.pid)
        r = harness.run_wrk(args, srv.port, body_path, args.cpu_seconds,
                            args.connections)
        after = cpu_seconds(srv.proc.pid)
    finally:
        srv.stop()
    return (after - before) / r["requests"] * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("servers", nargs="+", help="one or two server binaries")
    ap.add_argument("--work", default="build/bench")
    ap.add_argument("--requests", type=int, default=3000)
    ap.add_argument("--connections", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cpu-seconds", type=int, default=4)
    ap.add_argument("--access-log", default="on",
                    help="the server's --access-log (its default: on)")
    ap.add_argument("--no-cpu", action="store_true",
                    help="instructions only")
    ap.add_argument("--no-instructions", action="store_true",
                    help="CPU time only (no valgrind)")
    args = ap.parse_args()
    if len(args.servers) > 2:
        sys.exit("at most two servers")
    os.makedirs(args.work, exist_ok=True)
    body = json.dumps(harness.lesson002_body())
    body_path = os.path.join(args.work, "cost_body.json")
    with open(body_path, "w") as f:
        f.write(body)
    names = ["A", "B"][:len(args.servers)]
    instr = {n: [] for n in names}
    cpu = {n: [] for n in names}
    for r in range(args.rounds):
        order = list(zip(names, args.servers))
        for name, server in order if r % 2 == 0 else order[::-1]:
            if not args.no_instructions:
                instr[name].append(instructions_per_request(args, server,
                                                            body, name))
            if not args.no_cpu:
                cpu[name].append(cpu_us_per_request(args, server, body_path))
            harness.log(f"round {r + 1}: {name}"
                        + ("" if args.no_instructions else
                           f" {instr[name][-1]:,.0f} instructions/request")
                        + ("" if args.no_cpu else
                           f" {cpu[name][-1]:.1f} CPU µs/request"))
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    print(f"lesson 002 body, {args.connections} keep-alive connections, "
          f"{args.rounds} rounds (medians), access log {args.access_log}; "
          f"load average {load} at the end")
    med = {}
    for name, server in zip(names, args.servers):
        med[name] = (statistics.median(instr[name]) if instr[name] else None,
                     statistics.median(cpu[name]) if cpu[name] else None)
        parts = []
        if med[name][0] is not None:
            parts.append(f"{med[name][0]:,.0f} instructions/request over "
                         f"{args.requests} requests (callgrind, user space)")
        if med[name][1] is not None:
            parts.append(f"{med[name][1]:.1f} CPU µs/request (user + "
                         f"system, wrk -t1 -c{args.connections} "
                         f"-d{args.cpu_seconds}s; rounds "
                         + ", ".join(f"{x:.1f}" for x in cpu[name]) + ")")
        print(f"{name} = {server}: " + "; ".join(parts))
    if len(names) == 2:
        ratios = [f"{what} {med['B'][i] / med['A'][i]:.3f}"
                  for i, what in enumerate(("instructions", "CPU"))
                  if med["A"][i]]
        print("B / A: " + ", ".join(ratios))


if __name__ == "__main__":
    main()
