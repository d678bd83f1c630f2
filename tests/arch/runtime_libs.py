#!/usr/bin/python3
"""The libraries a binary loads in a root hold exactly the packages expected.

    runtime_libs.py --root DIR --trace FILE --packages FILE

FILE of --trace is what the dynamic loader printed for the binary with
LD_TRACE_LOADED_OBJECTS=1 (what `ldd` shows), run in the root (under
qemu-aarch64 -L DIR); DIR.files maps every path of the root to its package
(debian_root.py).  Fails when a library was not found, was found outside the
root's packages, or when the packages holding the loaded libraries are not
exactly those of --packages (one name a line: the runtime stage's list).
"""
import argparse
import os
import re
import sys

# "\tlibfoo.so.1 => /usr/lib/.../libfoo.so.1 (0x...)" or, for the loader,
# "\t/lib/ld-linux-aarch64.so.1 (0x...)"
LOADED = re.compile(r"^\s*(?:(\S+) => )?(\S+) \(0x[0-9a-f]+\)$")


def inside(root, path):
    """path (as the program in the root sees it) resolved within the root."""
    real = os.path.realpath(root + path)
    return real[len(root):] if real.startswith(root + "/") else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", required=True)
    ap.add_argument("--trace", required=True)
    ap.add_argument("--packages", required=True)
    args = ap.parse_args()
    root = os.path.realpath(args.root)
    owner = {}
    with open(args.root + ".files") as f:
        for line in f:
            path, package = line.rstrip("\n").split("\t")
            real = inside(root, path)
            if real:
                owner.setdefault(real, package)
    with open(args.packages) as f:
        expected = {line.strip() for line in f if line.strip()}
    failures, holders = [], set()
    with open(args.trace) as f:
        trace = f.read()
    for line in trace.splitlines():
        if "not found" in line:
            failures.append(f"not in the root: {line.strip()}")
            continue
        m = LOADED.match(line)
        if not m or m.group(2).startswith("linux-vdso"):
            continue
        real = inside(root, m.group(2))
        package = owner.get(real)
        print(f"   {m.group(1) or m.group(2):28} {real} ({package})")
        if not package:
            failures.append(f"{m.group(2)} is no file of the root's packages")
        else:
            holders.add(package)
    if not holders:
        failures.append("the trace lists no library")
    if holders != expected:
        failures.append(f"loaded from {sorted(holders - expected)} beyond the "
                        f"list; listed but not loaded: "
                        f"{sorted(expected - holders)}")
    for f in failures:
        print("FAILED:", f)
    print(f"   {len(holders)} packages hold the loaded libraries"
          + ("" if failures else ": exactly the runtime stage's list"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
