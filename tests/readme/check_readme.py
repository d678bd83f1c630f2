#!/usr/bin/python3
"""Runs every curl example of README.md and compares its output with the JSON
block that follows it ("prints").  Structure, strings and integers must be
identical; real numbers equal to 1e-14 relative (another BLAS kernel may
round the last bit differently; the lessons' own check is in run_lessons.py).
"""
import argparse
import json
import math
import os
import re
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "oracle"))
from serverproc import Server, default_server  # noqa: E402

EXAMPLE = re.compile(r"```sh\n(curl [^\n]+)\n```\nprints\n```json\n(.*?)\n```",
                     re.S)


def same(a, b, path="$"):
    if isinstance(a, float) or isinstance(b, float):
        if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
            return f"{path}: {a!r} vs {b!r}"
        ok = math.isclose(a, b, rel_tol=1e-14, abs_tol=1e-300)
        return None if ok else f"{path}: {a!r} vs {b!r}"
    if type(a) is not type(b):
        return f"{path}: {a!r} vs {b!r}"
    if isinstance(a, dict):
        if list(a) != list(b):
            return f"{path}: keys {list(a)} vs {list(b)}"
        for k in a:
            diff = same(a[k], b[k], f"{path}.{k}")
            if diff:
                return diff
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: length {len(a)} vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            diff = same(x, y, f"{path}[{i}]")
            if diff:
                return diff
        return None
    return None if a == b else f"{path}: {a!r} vs {b!r}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", default=default_server())
    parser.add_argument("--readme", default="README.md")
    parser.add_argument("--update", action="store_true",
                        help="rewrite each shown output with what it prints")
    args = parser.parse_args()
    with open(args.readme) as f:
        text = f.read()
    examples = EXAMPLE.findall(text)
    failed = 0
    with Server(args.server) as server:
        for command, shown in examples:
            argv = shlex.split(command.replace(
                "localhost:8080", f"127.0.0.1:{server.port}"))
            out = subprocess.run(argv, capture_output=True, text=True,
                                 check=True).stdout
            if args.update:
                text = text.replace(f"{command}\n```\nprints\n```json\n{shown}\n",
                                    f"{command}\n```\nprints\n```json\n"
                                    f"{out.strip()}\n", 1)
                shown = out
            diff = same(json.loads(out), json.loads(shown))
            print(("FAIL " if diff else "ok   ") + command[:100])
            if diff:
                print("     ", diff)
                failed += 1
    if args.update:
        with open(args.readme, "w") as f:
            f.write(text)
    if not examples:
        print("no examples found in", args.readme)
        failed = 1
    print(f"{len(examples) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
