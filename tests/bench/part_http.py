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
# Our server again with one flag more, each a contestant of its own on the
# lesson-sized rows only (2 rows × --http-rounds × --wrk-seconds each: 30 s
# at the defaults): the event threads pinned one per CPU, and one event
# thread, whose p99 at saturation tell how much of ours is the event
# threads waiting for a CPU that wrk shares (docs/performance.md, part 2).
OURS_VARIANTS = {
    f"{OURS} --pin-event-threads on": ["--pin-event-threads", "on"],
    f"{OURS} --event-threads 1": ["--event-threads", "1"],
}


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
        for name, flags in OURS_VARIANTS.items():
            servers[name] = start_ours(args, extra=flags, name=name)
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
        samples = {(row, s): [] for row in rows for s in names
                   if runs_row(s, row)}
        for label in () if args.quick else bodies:  # warm-up, not counted
            for s in names:
                if runs_row(s, (label, None)):
                    run_wrk(args, servers[s].port, paths[label], 1)
        for r in range(args.http_rounds):
            log(f"http round {r + 1}/{args.http_rounds}")
            order = names[r % len(names):] + names[:r % len(names)]
            for row in rows:
                label, connections = row
                for s in [s for s in order if runs_row(s, row)]:
                    samples[row, s].append(run_wrk(
                        args, servers[s].port, paths[label],
                        args.wrk_seconds, connections))
        banner = servers["attention-server"].banner
    finally:
        for s in servers.values():
            s.stop()
    return {"samples": samples, "rows": rows, "names": names,
            "banner": banner}


def runs_row(server, row):
    """Whether a server is measured on a row: our variants only on the
    lesson-sized ones."""
    return server not in OURS_VARIANTS or row[0] == LESSON


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
        names = [s for s in res["names"] if (row, s) in res["samples"]]
        med = {s: http_medians(res, row, s) for s in names}
        ours = med["attention-server"][0]
        for s in names:
            rps, p50, p99 = med[s]
            lines.append(f"| {label} | {connections} | {s} | {rps:,.0f} "
                         f"| {p50:.3f} | {p99:.3f} | {ours / rps:.3g}× |")
    return lines


def targets(web):
    """One line per target of the HTTP path, with the measured figure: at
    saturation (wrk -c32) the lesson-sized rate against nginx's constant
    200 and FastAPI, and its p99; the nginx share at -c8 beside it.  Each
    line gives our defaults' figure and verdict, then each variant's."""
    lines = []
    for row in [r for r in web["rows"] if r[0] == LESSON]:
        names = [s for s in web["names"] if (row, s) in web["samples"]]
        rps = {s: http_medians(web, row, s)[0] for s in names}
        ours = [s for s in names if s == OURS or s in OURS_VARIANTS]
        c = f"wrk -t{WRK_THREADS} -c{row[1]}"

        def each(figure, ok):
            """ours's figure and verdict, then each variant's"""
            parts = [f"{figure(s)} — {verdict(ok(s))}" for s in ours]
            flags = [" with " + s[len(OURS) + 1:] + ": " for s in ours[1:]]
            return parts[0] + "".join(
                f";{f}{p}" for f, p in zip(flags, parts[1:]))

        ceiling = (f" (the minimal libmicrohttpd server, this stack's "
                   f"ceiling: {100 * rps[MINIMAL] / rps['nginx']:.0f}%"
                   f" of nginx)" if MINIMAL in rps else "")
        lines.append(
            f"- lesson-sized ≥ {NGINX_SHARE:.0%} of nginx's constant 200 "
            f"({c}){ceiling}: " + each(
                lambda s: f"{100 * rps[s] / rps['nginx']:.1f}%",
                lambda s: rps[s] >= NGINX_SHARE * rps["nginx"]))
        if row[1] != SATURATED:
            continue
        lines.append(
            f"- lesson-sized ≥ {FASTAPI_TIMES}× FastAPI's requests/s "
            f"({c}): " + each(
                lambda s: f"{rps[s] / rps['fastapi']:.2f}×",
                lambda s: rps[s] >= FASTAPI_TIMES * rps["fastapi"]))
        p99 = {s: http_medians(web, row, s)[2] for s in ours}
        lines.append(
            f"- lesson-sized p99 at saturation ({c}) ≤ {P99_MS:g} ms: " +
            each(lambda s: f"{p99[s]:.2f} ms", lambda s: p99[s] <= P99_MS))
    return lines


def section(web, args):
    return ["### HTTP: wrk, POST /v1/attention", "",
            f"wrk -t{WRK_THREADS}, keep-alive; "
            "no CPU pinning: servers and wrk share both cores. "
            f"attention-server with its defaults, access log on "
            f"({web['banner']}), and again with "
            + " and with ".join(f"`{s[len(OURS) + 1:]}`"
                                for s in OURS_VARIANTS) +
            " (lesson-sized rows); "
            "FastAPI: uvicorn --workers 2, uvloop + httptools, no access "
            "log, OpenBLAS 1 thread per worker; nginx: 2 workers, "
            f"`return 200`; {MINIMAL}: tests/bench/mhd_minimal.c, one "
            "event thread per CPU, epoll, reads the upload and answers a "
            "constant 2 KB.", ""] + http_table(web)
