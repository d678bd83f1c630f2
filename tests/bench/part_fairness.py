"""Part 5 of run_bench.py: fairness.  Lesson-sized and mid-size requests
alone, a stream of big requests alone, then both at once."""
import base64
import http.client
import json
import math
import os
import threading
import time

import numpy as np

from harness import (OURS, WRK_THREADS, BenchError, lesson002_body, log,
                     median, pause, pct, post, random_body, run_wrk,
                     start_ours, verdict)

# Part 5, fairness: one client streams big requests (float32, base64, about
# 0.4 s each here) while wrk sends lesson-sized ones on 4 connections.
FAIR_SIZE, FAIR_QUICK_SIZE = (4096, 512, 8), (512, 128, 4)
FAIR_SMALL_CONNECTIONS = 4
# part 5 run against --fair-baseline's server as well: its label
BASELINE = "baseline"
# Part 5's measurements, each alone and beside the big stream: lesson
# 002's request (the fast lane), n=16, d=64, h=4 (work over the fast lane's
# threshold: a pool job) on FAIR_SMALL_CONNECTIONS connections, and a
# mid-size request stream on one connection (a pool job a few ms long).
FAIR_MID_SIZE, FAIR_QUICK_MID_SIZE = (256, 256, 8), (64, 64, 4)


def b64_tensor(a):
    """{"shape", "base64"} of a float32 array, as the API takes it."""
    a = np.ascontiguousarray(a, dtype="<f4")
    return {"shape": list(a.shape),
            "base64": base64.b64encode(a.tobytes()).decode()}


def fairness_body(n, d, h):
    """The big request of the fairness part: float32, base64 both ways,
    the output only."""
    rng = np.random.default_rng(n)
    body = {"x": b64_tensor(rng.normal(size=(n, d))), "num_heads": h,
            "dtype": "float32", "encoding": "base64", "return": ["output"]}
    for k in ("w_q", "w_k", "w_v"):
        body[k] = b64_tensor(rng.normal(size=(d, d)) / math.sqrt(d))
    return json.dumps(body).encode()


def big_stream(port, payload, stop, done):
    """Sends payload back to back on one connection until stop is set;
    appends each answered request's (start, end) times to done."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    while not stop.is_set():
        start = time.monotonic()
        status, _ = post(port, payload, conn)
        if status != 200:
            raise BenchError(f"big request answered {status}")
        done.append((start, time.monotonic()))
    conn.close()


def stream_latencies(port, payload, seconds):
    """Latencies (s) of payload sent back to back on one connection for
    `seconds`."""
    import threading
    stop, done = threading.Event(), []
    t = threading.Thread(target=big_stream, args=(port, payload, stop, done))
    t.start()
    time.sleep(seconds)
    stop.set()
    t.join()
    return [end - start for start, end in done]


def big_rate(port, payload, seconds, beside=None):
    """Big requests a second over `seconds` of a back-to-back stream,
    and what beside() returned, run meanwhile (or None)."""
    import threading
    stop, done = threading.Event(), []
    t = threading.Thread(target=big_stream, args=(port, payload, stop, done))
    t.start()
    while not done and t.is_alive():  # the stream is running: one answered
        time.sleep(0.01)
    start, first = time.monotonic(), len(done)
    result = beside() if beside else time.sleep(seconds)
    end, count = time.monotonic(), len(done) - first
    stop.set()
    t.join()
    return count / (end - start), result


def machine_busy():
    """(busy, total) time of all CPUs so far, in jiffies (/proc/stat)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v) - v[3] - v[4], sum(v)  # idle and iowait are not busy


def busy_cores(fn):
    """fn()'s result, and the CPUs the whole machine kept busy meanwhile
    (servers, load generators and all)."""
    busy0, total0 = machine_busy()
    result = fn()
    busy1, total1 = machine_busy()
    return result, os.cpu_count() * (busy1 - busy0) / max(1, total1 - total0)


def fairness_round(port, bodies, seconds):
    """One round against one server: each small load alone, the big
    stream alone, then each small load beside the big stream."""
    r = {}
    loads = {
        "lesson": lambda: run_wrk(None, port, bodies["lesson"], seconds,
                                  FAIR_SMALL_CONNECTIONS),
        "pool": lambda: run_wrk(None, port, bodies["pool"], seconds,
                                FAIR_SMALL_CONNECTIONS),
        "mid": lambda: stream_latencies(port, bodies["mid"], seconds),
    }
    for name, load in loads.items():
        pause()
        r[name + "_alone"], r[name + "_alone_cores"] = busy_cores(load)
    pause()
    r["big_alone"], r["big_alone_cores"] = big_rate(
        port, bodies["big"], seconds,
        lambda: busy_cores(lambda: time.sleep(seconds))[1])
    if r["big_alone"] == 0:  # every rate beside it would be read against 0
        raise BenchError(f"no big request finished in {seconds} s alone: "
                         "a longer --wrk-seconds, or a quieter machine")
    for name, load in loads.items():
        pause()
        r["big_beside_" + name], r[name + "_beside"] = big_rate(
            port, bodies["big"], seconds, load)
    return r


def run(args):
    n, d, h = FAIR_QUICK_SIZE if args.quick else FAIR_SIZE
    bodies = {"big": fairness_body(n, d, h),
              "mid": fairness_body(*(FAIR_QUICK_MID_SIZE if args.quick
                                     else FAIR_MID_SIZE))}
    for name, body in (("lesson", lesson002_body()),
                       ("pool", random_body(16, 64, 4, seed=16))):
        bodies[name] = os.path.join(args.work, f"fair-{name}.json")
        with open(bodies[name], "w") as f:
            json.dump(body, f)
    # ours, and the same measurements against --fair-baseline's server
    binaries = {OURS: args.server}
    if args.fair_baseline:
        binaries[BASELINE] = args.fair_baseline
    servers = {}
    res = {name: [] for name in binaries}
    try:
        for name, binary in binaries.items():
            servers[name] = start_ours(args, server=binary)
            if not args.quick:  # warm-up, not counted
                run_wrk(None, servers[name].port, bodies["lesson"], 1,
                        FAIR_SMALL_CONNECTIONS)
        names = list(servers)
        for r in range(args.http_rounds):
            log(f"fairness round {r + 1}/{args.http_rounds}")
            for name in names[r % len(names):] + names[:r % len(names)]:
                res[name].append(fairness_round(servers[name].port, bodies,
                                                args.wrk_seconds))
    finally:
        for srv in servers.values():
            srv.stop()
    return {"size": (n, d, h), "mid_size": FAIR_QUICK_MID_SIZE if args.quick
            else FAIR_MID_SIZE, "rounds": res}


def fairness_figures(rounds):
    """Medians over rounds: per load alone and beside the big stream its
    (requests/s, p50 ms, p99 ms), and the big stream's rate."""
    f = {}
    for load in ("lesson", "pool", "mid"):
        for where in ("alone", "beside"):
            xs = [r[f"{load}_{where}"] for r in rounds]
            if load == "mid":  # latencies of one connection's stream
                f[load, where] = (median([len(x) for x in xs]),
                                  median([pct(x, 50) for x in xs]) * 1e3,
                                  median([pct(x, 99) for x in xs]) * 1e3)
            else:
                f[load, where] = (median([x["rps"] for x in xs]),
                                  median([x["p50_us"] for x in xs]) / 1e3,
                                  median([x["p99_us"] for x in xs]) / 1e3)
        f["big", load] = median([r["big_beside_" + load] for r in rounds])
    f["big", "alone"] = median([r["big_alone"] for r in rounds])
    for load in ("lesson", "big"):
        f[load, "cores"] = median([r[load + "_alone_cores"] for r in rounds])
    return f


def fairness_table(res):
    mid = ", ".join(str(v) for v in res["mid_size"])
    labels = {"lesson": "lesson 002 (fast lane), wrk -c4",
              "pool": "n=16, d=64, h=4 (a pool job), wrk -c4",
              "mid": f"n, d, h = {mid} float32 (a pool job), one connection"}
    lines = ["| server | requests | where | req/s (mid: requests) | p50 ms "
             "| p99 ms | big req/s beside |",
             "|---|---|---|---:|---:|---:|---:|"]
    for server, rounds in res["rounds"].items():
        f = fairness_figures(rounds)
        lines.append(f"| {server} | big requests | alone | | | "
                     f"| {f['big', 'alone']:.2f} |")
        for load, label in labels.items():
            for where in ("alone", "beside"):
                rate, p50, p99 = f[load, where]
                big = f"{f['big', load]:.2f}" if where == "beside" else ""
                lines.append(f"| {server} | {label} | {where} | {rate:,.0f} "
                             f"| {p50:.3f} | {p99:.3f} | {big} |")
    if BASELINE in res["rounds"]:
        ours = fairness_figures(res["rounds"][OURS])
        base = fairness_figures(res["rounds"][BASELINE])
        def ratio(load, i):  # i: 1 p50, 2 p99
            return ours[load, "beside"][i] / base[load, "beside"][i]
        lines += ["", f"{OURS} ÷ {BASELINE}, beside the big stream: "
                  + "; ".join(f"{load} p99 {ratio(load, 2):.2f}×, "
                              f"p50 {ratio(load, 1):.2f}×"
                              for load in labels)
                  + "; the big stream's rate beside the lesson requests "
                  f"{ours['big', 'lesson'] / base['big', 'lesson']:.2f}×, "
                  f"alone {ours['big', 'alone'] / base['big', 'alone']:.2f}×."]
    return lines


def targets(res):
    f = fairness_figures(res["rounds"][OURS])
    rate, _, p99 = f["lesson", "beside"]
    share = rate / f["lesson", "alone"][0]
    big = f["big", "lesson"] / f["big", "alone"]
    need = 0.5 * f["lesson", "cores"] + 0.9 * f["big", "cores"]
    n, d, h = res["size"]
    return [f"- beside a stream of big requests (n={n}, d={d}, h={h}, "
            f"float32): lesson-sized p99 ≤ 5 ms: {p99:.2f} ms — "
            f"{verdict(p99 <= 5)}",
            f"- lesson-sized rate beside it ≥ 50% of alone: "
            f"{100 * share:.0f}% — {verdict(share >= 0.5)}",
            f"- the big stream keeps ≥ 90% of its rate alone: "
            f"{100 * big:.0f}% — {verdict(big >= 0.9)}",
            # the CPU the last two ask for at once, from each load alone
            f"- what the last two ask of the machine at once: "
            f"0.5 × {f['lesson', 'cores']:.2f} CPUs (the lesson load "
            f"alone, wrk included) + 0.9 × {f['big', 'cores']:.2f} (the big "
            f"stream alone, its client included) = {need:.2f} of the "
            f"{os.cpu_count()} CPUs here"]


def section(fair, args):
    n, d, h = fair["size"]
    return ["### Fairness: small and mid-size requests beside big ones", "",
            f"attention-server with its defaults"
            + (f" ({BASELINE}: {args.fair_baseline}, the same "
               "measurements in the same rounds, in turn)"
               if args.fair_baseline else "")
            + f"; one client sends n={n}, d={d}, h={h} float32 requests "
            "(base64 both ways, the output only) back to back, while "
            f"wrk -t{WRK_THREADS} -c{FAIR_SMALL_CONNECTIONS} sends lesson "
            "002's request (the fast lane) or an n=16, d=64, h=4 one "
            "(a pool job), or one client sends mid-size requests back to "
            "back; each alone, then beside the big stream, in every "
            "round.", ""] + fairness_table(fair)
