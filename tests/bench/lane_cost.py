"""What an event thread may compute: what handing a request to a worker
costs, beside what requests of growing size cost to compute on the event
thread itself.

    lane_cost.py --server build/attention-server [--seconds 2] [--rounds 5]
                 [--work build/bench] [--quick]

1. The hand-off.  Lesson 002's request (n=5, d=8, h=2) against the server
   with --fast-lane off (every request to a worker: suspend, queue, wake a
   worker, resume, wake the event thread) and --fast-lane all (computed on
   the event thread), in interleaved rounds of wrk: with one connection
   (-c1, one request at a time) the p50 latencies differ by the hand-off's
   waiting; with 32 (-c32) the server's CPU time (utime + stime of
   /proc/PID/stat) per request differs by the hand-off's CPU.
2. The work.  A ladder of requests (n, d, h, the default return) sent one at
   a time to the server with --fast-lane all; the access log gives each
   request's time on the event thread (work_ms: decode, compute, encode)
   and its estimated work (work_flops, api_attention_work()).

An event thread should compute only what costs less than the hand-off's
waiting: the thresholds of service_limits.h (LIMIT_FAST_LANE_MAX_BODY and
LIMIT_FAST_LANE_MAX_FLOPS) are read off this table.
"""
import argparse
import http.client
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402  (bodies, server start-up, wrk)

# (n, d, h) of the ladder, from the lesson's size up to where the work is
# well past any hand-off: wider requests (more JSON per token: decoding
# dominates), then longer ones of width 4 (small bodies, n² scores and
# weights in the reply: computing and encoding dominate).
LADDER = [(5, 8, 2), (8, 16, 2), (16, 32, 2), (16, 64, 4), (32, 64, 4),
          (64, 64, 4), (16, 4, 1), (32, 4, 1), (64, 4, 1), (128, 4, 1),
          (256, 4, 1)]
QUICK_LADDER = LADDER[:2] + LADDER[6:7]
REPEATS, QUICK_REPEATS = 60, 5


def start(args, lane, log_name):
    argv = [args.server, "--listen", "127.0.0.1:0", "--fast-lane", lane]
    return harness.Server(f"attention-server --fast-lane {lane}", argv,
                            read_port=True,
                            log_path=os.path.join(args.work, log_name))


def cpu_seconds(pid):
    """utime + stime of process pid, all its threads."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wrk(port, body_path, connections, seconds):
    return harness.run_wrk(None, port, body_path, seconds, connections)


def hand_off(args, body_path):
    servers = {lane: start(args, lane, f"lane-{lane}.log")
               for lane in ("off", "all")}
    samples = {(lane, c): [] for lane in servers for c in (1, 32)}
    try:
        for lane, s in servers.items():  # warm-up
            wrk(s.port, body_path, 32, 1)
        for r in range(args.rounds):
            order = list(servers)[r % 2:] + list(servers)[:r % 2]
            for c in (1, 32):
                for lane in order:
                    pid = servers[lane].proc.pid
                    before = cpu_seconds(pid)
                    r = wrk(servers[lane].port, body_path, c, args.seconds)
                    r["cpu_us"] = ((cpu_seconds(pid) - before) * 1e6 /
                                   r["requests"])
                    samples[lane, c].append(r)
    finally:
        for s in servers.values():
            s.stop()
    out = {}
    for lane in servers:
        out[lane] = {
            "p50_c1_us": statistics.median(x["p50_us"]
                                           for x in samples[lane, 1]),
            "rps_c32": statistics.median(x["rps"] for x in samples[lane, 32]),
            "cpu_us": statistics.median(x["cpu_us"]
                                        for x in samples[lane, 32]),
        }
    return out


def ladder(args):
    rungs = QUICK_LADDER if args.quick else LADDER
    repeats = QUICK_REPEATS if args.quick else REPEATS
    log_path = os.path.join(args.work, "lane-ladder.log")
    server = start(args, "all", "lane-ladder.log")
    sizes = {}
    try:
        conn = http.client.HTTPConnection("127.0.0.1", server.port,
                                          timeout=60)
        for i, (n, d, h) in enumerate(rungs):
            payload = json.dumps(harness.random_body(n, d, h, seed=i))
            sizes[i] = len(payload)
            for k in range(repeats):
                conn.request("POST", "/v1/attention", body=payload,
                             headers={"Content-Type": "application/json",
                                      "X-Request-ID": f"ladder-{i}-{k}"})
                r = conn.getresponse()
                r.read()
                if r.status != 200:
                    raise harness.BenchError(f"{(n, d, h)}: {r.status}")
        conn.close()
    finally:
        server.stop()  # writes every access-log line
    work, flops = {}, {}
    with open(log_path) as f:
        for line in f:
            e = json.loads(line)
            rid = e.get("request_id", "")
            if rid.startswith("ladder-"):
                i = int(rid.split("-")[1])
                work.setdefault(i, []).append(e["work_ms"] * 1e3)
                flops[i] = e["work_flops"]
    return [(rungs[i], sizes[i], flops[i], statistics.median(work[i]))
            for i in range(len(rungs))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", required=True)
    ap.add_argument("--work", default="build/bench")
    ap.add_argument("--seconds", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.seconds, args.rounds = 1, 1
    os.makedirs(args.work, exist_ok=True)
    body_path = os.path.join(args.work, "lane-lesson.json")
    with open(body_path, "w") as f:
        json.dump(harness.lesson002_body(), f)

    cost = hand_off(args, body_path)
    off, inline = cost["off"], cost["all"]
    print("## The hand-off: lesson 002, --fast-lane off (workers) vs all "
          f"(event thread), medians of {args.rounds} interleaved rounds of "
          f"wrk -t1 -d{args.seconds}s\n")
    print("| lane | p50 µs, -c1 | req/s, -c32 | CPU µs per request |")
    print("|---|---:|---:|---:|")
    for name, c in (("workers (off)", off), ("event thread (all)", inline)):
        print(f"| {name} | {c['p50_c1_us']:.0f} | {c['rps_c32']:,.0f} "
              f"| {c['cpu_us']:.1f} |")
    print(f"\nthe hand-off adds {off['p50_c1_us'] - inline['p50_c1_us']:.0f}"
          f" µs of waiting and {off['cpu_us'] - inline['cpu_us']:.1f} CPU µs "
          "to each request\n")

    print("## The work on the event thread (--fast-lane all, one request at "
          "a time, access log's work_ms)\n")
    print("| n, d, h | body bytes | work_flops | work µs (median) |")
    print("|---|---:|---:|---:|")
    for (n, d, h), size, flops, us in ladder(args):
        print(f"| {n}, {d}, {h} | {size:,} | {flops:,} | {us:.0f} |")


if __name__ == "__main__":
    main()
