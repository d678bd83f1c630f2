"""Where the event threads' time goes at saturation: wrk -t1 with lesson
002's body against a fresh server per run, each configuration in turn,
and for each event thread its share of a CPU running, its share waiting
for one, and its involuntary switches a second (the scheduler's own
counts, /proc/PID/task/TID/schedstat and status), across the timed run.

    event_threads.py SERVER --work build/bench [--rounds 3] [--seconds 5]
                     [--connections 32]

The configurations: the defaults, --pin-event-threads on, and
--event-threads 1.  A thread's CPU share is also how many of the
connections it holds: each event thread serves the connections it
accepted.  Run it on a machine doing nothing else, as every timing.
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402  (bodies, server start-up, wrk)

CONFIGS = [("defaults", []),
           ("--pin-event-threads on", ["--pin-event-threads", "on"]),
           ("--event-threads 1", ["--event-threads", "1"])]
# libmicrohttpd's names for its event threads (one, or a pool of them)
EVENT_THREAD_NAMES = ("MHD-worker", "MHD-single")
WARMUP_SECONDS = 1


def thread_counts(pid):
    """{tid: (ns running, ns waiting, involuntary switches)} of the event
    threads."""
    counts = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        task = f"/proc/{pid}/task/{tid}"
        with open(f"{task}/comm") as f:
            if f.read().strip() not in EVENT_THREAD_NAMES:
                continue
        with open(f"{task}/schedstat") as f:
            run, wait = (int(x) for x in f.read().split()[:2])
        with open(f"{task}/status") as f:
            invol = next(int(line.split()[1]) for line in f
                         if line.startswith("nonvoluntary_ctxt_switches"))
        counts[int(tid)] = (run, wait, invol)
    return counts


def one_run(args, body_path, name, flags):
    srv = harness.start_ours(args, extra=flags, name="attention-server")
    try:
        harness.run_wrk(args, srv.port, body_path, WARMUP_SECONDS,
                        args.connections)
        harness.pause()
        before, start = thread_counts(srv.proc.pid), time.monotonic()
        r = harness.run_wrk(args, srv.port, body_path, args.seconds,
                            args.connections)
        after, took = thread_counts(srv.proc.pid), time.monotonic() - start
    finally:
        srv.stop()
    threads = []
    for tid in sorted(after):
        d = [a - b for a, b in zip(after[tid], before.get(tid, (0, 0, 0)))]
        threads.append(f"{100 * d[0] / 1e9 / took:.0f} / "
                       f"{100 * d[1] / 1e9 / took:.0f} / {d[2] / took:,.0f}")
    return (f"| {name} | {r['rps']:,.0f} | {r['p99_us'] / 1e3:.2f} | "
            + "; ".join(threads) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("server")
    ap.add_argument("--work", default="build/bench")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--connections", type=int, default=32)
    args = ap.parse_args()
    args.work = os.path.abspath(args.work)
    os.makedirs(args.work, exist_ok=True)
    body_path = os.path.join(args.work, "event-threads-body.json")
    with open(body_path, "w") as f:
        json.dump(harness.lesson002_body(), f)
    print(f"load average {harness.loadavg()} before; wrk -t1 "
          f"-c{args.connections} -d{args.seconds}s, lesson 002's body\n")
    print("| server | requests/s | p99 ms | each event thread: % running"
          " / % waiting for a CPU / involuntary switches a second |")
    print("|---|---:|---:|---|")
    for r in range(args.rounds):
        for name, flags in CONFIGS:
            print(one_run(args, body_path, name, flags), flush=True)
    print(f"\nload average {harness.loadavg()} after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
