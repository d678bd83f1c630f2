"""What serving the embedded assets' coded forms from memory saves: GET /
with Accept-Encoding: gzip under wrk against two server binaries side by
side (one that compresses the page per request, one that serves the form
made at start-up), and what making the forms costs at start-up.

    static_coding.py --old OLD_BINARY --new NEW_BINARY [--rounds 5]

Each server runs with one event thread and one worker, so that its
process's CPU time (utime + stime) is the event thread's.  A round runs
`wrk -t1 -c8 -d5s` against each in turn; the figures are the medians over
rounds of requests/s and of server CPU µs per request.  Then each binary
is started `--starts` times, alternately: the time from exec to the first
/healthz answer, and the process's VmRSS then (medians).
"""
import argparse
import os
import re
import socket
import statistics
import subprocess
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")


def serve(binary, port):
    return subprocess.Popen(
        [binary, "--listen", f"127.0.0.1:{port}", "--event-threads", "1",
         "--threads", "1"], stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)


def wait_answer(port):
    """Connects as soon as the server listens and reads a /healthz reply."""
    while True:
        try:
            s = socket.create_connection(("127.0.0.1", port))
            break
        except OSError:
            time.sleep(0.0002)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    while s.recv(65536):
        pass
    s.close()


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def wrk_round(pid, port):
    before = cpu_seconds(pid)
    out = subprocess.run(
        ["wrk", "-t1", "-c8", "-d5s", "-H", "Accept-Encoding: gzip",
         f"http://127.0.0.1:{port}/"], capture_output=True, text=True).stdout
    used = cpu_seconds(pid) - before
    count = int(re.search(r"(\d+) requests in", out).group(1))
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    return rate, used / count * 1e6


def start_once(binary, port):
    t0 = time.perf_counter()
    p = serve(binary, port)
    wait_answer(port)
    ms = (time.perf_counter() - t0) * 1000
    rss = next(int(line.split()[1]) for line in open(f"/proc/{p.pid}/status")
               if line.startswith("VmRSS"))
    p.terminate()
    p.wait()
    return ms, rss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--starts", type=int, default=21)
    args = ap.parse_args()
    binaries = {"old": (args.old, 18732), "new": (args.new, 18731)}
    servers = {k: serve(b, port) for k, (b, port) in binaries.items()}
    for k, (_, port) in binaries.items():
        wait_answer(port)
        if servers[k].poll() is not None:
            raise SystemExit(f"{k}: port {port} is taken by another server")
    runs = {k: [] for k in binaries}
    for _ in range(args.rounds):
        for k, (_, port) in binaries.items():
            runs[k].append(wrk_round(servers[k].pid, port))
    for p in servers.values():
        p.terminate()
        p.wait()
    starts = {k: [] for k in binaries}
    for _ in range(args.starts):
        for k, (b, port) in binaries.items():
            starts[k].append(start_once(b, port + 10))
    print("| binary | GET / gzip, req/s | server CPU µs/request | start-up ms "
          "| VmRSS KiB |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for k in binaries:
        print(f"| {k} | {statistics.median(r[0] for r in runs[k]):.0f} "
              f"| {statistics.median(r[1] for r in runs[k]):.1f} "
              f"| {statistics.median(s[0] for s in starts[k]):.1f} "
              f"| {statistics.median(s[1] for s in starts[k]):.0f} |")


if __name__ == "__main__":
    main()
