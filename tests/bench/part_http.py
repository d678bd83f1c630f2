"""Part 2 of run_bench.py: wrk against the server, a FastAPI peer, nginx's
constant 200 and a minimal libmicrohttpd server, side by side."""
import json
import os

from harness import (OURS, WRK_THREADS, Server, log,
                     lesson002_body, median, post, random_body, run_wrk,
                     check_same_answer, start_fastapi, start_nginx,
                     start_ours, verdict)

# The HTTP part's rows: a request body and wrk's connections.  32 saturate
# the servers (the p99 target is read there), 8 are the earlier load.
LESSON, N16 = "lesson 002 (n=5, d=8, h=2)", "n=16, d=64, h=4"
HTTP_ROWS = [(LESSON, 32), (LESSON, 8), (N16, 8)]
# the smoke run: both bodies and both connection counts, one row each
QUICK_HTTP_ROWS = [(LESSON, 32), (N16, 8)]
MINIMAL = "libmicrohttpd minimal"
# The lesson-sized targets, read at SATURATED connections: this share of
# nginx's constant 200 (the ceiling of any HTTP server on the same cores),
# this many times FastAPI's rate, this p99 (32 connections of one wrk
# thread are a closed loop: the mean latency is 32 ÷ the rate).
SATURATED, NGINX_SHARE, FASTAPI_TIMES, P99_MS = 32, 0.55, 5, 5.0


def run(args):
    bodies = {
        LESSON: lesson002_body(),
        N16: random_body(16, 64, 4, seed=16),
    }
    paths = {}
    for label, b in bodies.items():
        path = os.path.join(args.work, f"body-{len(paths)}.json")
        with open(path, "w") as f:
            json.dump(b, f)
        paths[label] = path
    servers = {}
    try:
        servers["attention-server"] = start_ours(args)
        servers["fastapi"] = start_fastapi(args, workers=2, blas_threads=1)
        servers["nginx"] = start_nginx(args)
        if args.mhd_minimal:
            servers[MINIMAL] = Server(MINIMAL, [args.mhd_minimal],
                                      read_port=True)
        # every server answers, and the two that compute agree
        for label, b in bodies.items():
            payload = json.dumps(b).encode()
            check_same_answer("fastapi", b,
                              post(servers["attention-server"].port, payload),
                              post(servers["fastapi"].port, payload),
                              ["output", "weights"])
        names = list(servers)
        rows = QUICK_HTTP_ROWS if args.quick else HTTP_ROWS
        samples = {(row, s): [] for row in rows for s in names}
        for label in () if args.quick else bodies:  # warm-up, not counted
            for s in names:
                run_wrk(args, servers[s].port, paths[label], 1)
        for r in range(args.http_rounds):
            log(f"http round {r + 1}/{args.http_rounds}")
            order = names[r % len(names):] + names[:r % len(names)]
            for row in rows:
                label, connections = row
                for s in order:
                    samples[row, s].append(run_wrk(
                        args, servers[s].port, paths[label],
                        args.wrk_seconds, connections))
        banner = servers["attention-server"].banner
    finally:
        for s in servers.values():
            s.stop()
    return {"samples": samples, "rows": rows, "names": names,
            "banner": banner}


def http_medians(res, row, server):
    """(requests/s, p50 ms, p99 ms) of a server on a row: medians."""
    xs = res["samples"][row, server]
    return (median([x["rps"] for x in xs]),
            median([x["p50_us"] for x in xs]) / 1e3,
            median([x["p99_us"] for x in xs]) / 1e3)


def http_table(res):
    lines = ["| request | wrk -c | server | requests/s | p50 ms | p99 ms "
             "| ours ÷ this (req/s) |", "|---|---:|---|---:|---:|---:|---:|"]
    for row in res["rows"]:
        label, connections = row
        med = {s: http_medians(res, row, s) for s in res["names"]}
        ours = med["attention-server"][0]
        for s in res["names"]:
            rps, p50, p99 = med[s]
            lines.append(f"| {label} | {connections} | {s} | {rps:,.0f} "
                         f"| {p50:.3f} | {p99:.3f} | {ours / rps:.3g}× |")
    return lines


def targets(web):
    """One line per target of the HTTP path, with the measured figure: at
    saturation (wrk -c32) the lesson-sized rate against nginx's constant
    200 and FastAPI, and its p99; the nginx share at -c8 beside it."""
    lines = []
    for row in [r for r in web["rows"] if r[0] == LESSON]:
        rps = {s: http_medians(web, row, s)[0] for s in web["names"]}
        ours = rps[OURS]
        c = f"wrk -t{WRK_THREADS} -c{row[1]}"
        ceiling = (f"; the minimal libmicrohttpd server (this stack's "
                   f"ceiling) is {100 * rps[MINIMAL] / rps['nginx']:.0f}%"
                   f" of nginx, ours {100 * ours / rps[MINIMAL]:.0f}% of "
                   f"it" if MINIMAL in rps else "")
        lines.append(f"- lesson-sized ≥ {NGINX_SHARE:.0%} of nginx's constant"
                     f" 200 ({c}): {100 * ours / rps['nginx']:.1f}%{ceiling}"
                     f" — {verdict(ours >= NGINX_SHARE * rps['nginx'])}")
        if row[1] != SATURATED:
            continue
        lines.append(f"- lesson-sized ≥ {FASTAPI_TIMES}× FastAPI's "
                     f"requests/s ({c}): {ours / rps['fastapi']:.2f}× — "
                     f"{verdict(ours >= FASTAPI_TIMES * rps['fastapi'])}")
        p99 = http_medians(web, row, OURS)[2]
        lines.append(f"- lesson-sized p99 at saturation ({c}) ≤ "
                     f"{P99_MS:g} ms: {p99:.2f} ms — "
                     f"{verdict(p99 <= P99_MS)}")
    return lines


def section(web, args):
    return ["### HTTP: wrk, POST /v1/attention", "",
            f"wrk -t{WRK_THREADS}, keep-alive; "
            "no CPU pinning: servers and wrk share both cores. "
            f"attention-server with its defaults, access log on "
            f"({web['banner']}); "
            "FastAPI: uvicorn --workers 2, uvloop + httptools, no access "
            "log, OpenBLAS 1 thread per worker; nginx: 2 workers, "
            f"`return 200`; {MINIMAL}: tests/bench/mhd_minimal.c, one "
            "event thread per CPU, epoll, reads the upload and answers a "
            "constant 2 KB.", ""] + http_table(web)
