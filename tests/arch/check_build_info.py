#!/usr/bin/python3
"""Which architecture and kernels a server runs with: --version and /metrics.

    check_build_info.py --server PATH [--expect KEY=VALUE ...]

Runs `PATH --version`, then starts the server (serverproc.py) and reads
attention_build_info from GET /metrics; both must name the same
architecture, SIMD level and product path, and each --expect must hold (keys
arch, cpu, simd, products; cpu is --version's only).  PATH may be a wrapper
that runs the server under qemu: the check is what proves the run under test
took the path it was meant to (an emulated CPU without AVX-512 chose the AVX2
loops, the arm64 build runs the generic ones, ...).  The server's
environment passes through (ATTENTION_KERNELS caps the level).
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "oracle"))
from serverproc import Server  # noqa: E402

# A server under qemu starts in a second or two; this leaves room for a
# loaded machine.
VERSION_TIMEOUT_S = 60


def from_version(text):
    """arch, cpu, simd, products from --version's lines."""
    got = {}
    m = re.search(r"^architecture: (\S+) \(this CPU runs (\S+)\)$", text, re.M)
    if m:
        got["arch"], got["cpu"] = m.groups()
    m = re.search(r"^kernels: loops (\S+), products (\S+)$", text, re.M)
    if m:
        got["simd"], got["products"] = m.groups()
    return got


def from_metrics(text):
    m = re.search(r"^attention_build_info\{(.*)\} 1$", text, re.M)
    return dict(re.findall(r'(\w+)="([^"]*)"', m.group(1))) if m else {}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", required=True)
    ap.add_argument("--expect", action="append", default=[],
                    metavar="KEY=VALUE")
    args = ap.parse_args()
    version = subprocess.run([args.server, "--version"], capture_output=True,
                             text=True, timeout=VERSION_TIMEOUT_S).stdout
    by_version = from_version(version)
    with Server(args.server, "--threads", "2") as server:
        server.conn.request("GET", "/metrics")
        by_metrics = from_metrics(server.conn.getresponse().read().decode())
    print("   --version:", ", ".join(f"{k}={v}" for k, v in
                                      sorted(by_version.items())))
    print("   /metrics: ", ", ".join(f"{k}={v}" for k, v in
                                      sorted(by_metrics.items())))
    failures = []
    for key in ("arch", "simd", "products"):
        if key not in by_version or by_version[key] != by_metrics.get(key):
            failures.append(f"{key}: --version says {by_version.get(key)}, "
                            f"/metrics {by_metrics.get(key)}")
    for pair in args.expect:
        key, want = pair.split("=", 1)
        if by_version.get(key) != want:
            failures.append(f"{key} is {by_version.get(key)}, expected {want}")
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
