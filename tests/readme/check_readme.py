#!/usr/bin/python3
"""Runs every curl example of README.md and docs/*.md and compares its output
with the JSON block that follows it ("prints"), and every Python example
with the text that follows it.  Structure, strings and
integers must be identical; real numbers equal to TOLERANCE times the
largest magnitude of the member of the reply they are in (a stage), for the
reason TOLERANCE's comment gives; the run ends by saying how many numbers
were not identical and by how much (the lessons' own check is in
run_lessons.py).  Every relative link of these files must name a file that
exists.

    check_readme.py [--server BIN] [--kernels LEVEL] [--update] [FILE.md ...]

--kernels runs the server on another instruction set's kernels (avx2 or
generic: attention-server --kernels), to see what another CPU prints.

An example is a ```sh block holding one `curl ...` line, then the word
`prints`, then a ```json block, pretty-printed or not; an object of it
whose last member is "…": "…" is shortened (ELIDED).  A Python example is a ```python block, then
`prints`, then a ```text block; in a file that has one, every ```python block
runs, in order, in one interpreter (a notebook's cells: tests/readme/
run_cells.py), with clients/python on the path, and each example must print
exactly its text.  http://localhost:8080 names the test's server in both.
Without FILE arguments: README.md and every docs/*.md.
"""
import argparse
import glob
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
PY_CELL = re.compile(r"```python\n(.*?)\n```(\nprints\n```text\n(.*?)\n```)?",
                     re.S)
HERE = os.path.dirname(os.path.abspath(__file__))
CLIENT = os.path.join(HERE, "..", "..", "clients", "python")
# [text](target): a target without a scheme is a path from the file's folder
LINK = re.compile(r"\]\(([^)\s]+)\)")


# How far a printed real number may be from the one shown, as a share of the
# largest magnitude in the same member of the reply (a stage: "output",
# "weights").  The products run on the widest kernels the CPU has (AVX-512,
# AVX2 or OpenBLAS's own), which add in different orders, so the last bits
# of a sum differ from one CPU to another: lesson 002's output differs in 6
# of its 40 numbers between AVX-512 and AVX2, by at most 6.2e-16 of the
# largest.  Scaled by the stage, not by the number itself: a sum that
# nearly cancels (-0.0061 beside 2.3) keeps the absolute rounding of its
# large terms, so relative to itself it may be 3e-14 away on another CPU and
# still be the same computation.  1e-14 is about 45 units in the last place
# of the largest number, and far below what a wrong mask, scale or layout
# moves (1e-3 and more).
TOLERANCE = 1e-14

# A shown object shortened: its last member "…": "…" stands for members of
# the printed one left out, which must hold the others, in their order, and
# at least one more (README.md's lesson shows some of its shapes).
ELIDED = "…"

# what the comparisons saw: numbers compared, those not identical, and the
# largest difference as a share of its stage's largest magnitude
SEEN = {"numbers": 0, "inexact": 0, "largest": 0.0}


def largest(value):
    """The largest magnitude among the numbers of value (0 if none)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return abs(value)
    items = value.values() if isinstance(value, dict) else \
        value if isinstance(value, list) else ()
    return max((largest(v) for v in items), default=0.0)


def same(a, b, path="$", scale=None):
    """None when a (printed) is b (shown), else where they differ; reals
    within TOLERANCE of their stage's largest magnitude (scale)."""
    if isinstance(a, float) or isinstance(b, float):
        if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
            return f"{path}: {a!r} vs {b!r}"
        size = max(scale or 0.0, abs(a), abs(b), 1e-300)
        SEEN["numbers"] += 1
        if a != b:
            SEEN["inexact"] += 1
            SEEN["largest"] = max(SEEN["largest"], abs(a - b) / size)
        ok = abs(a - b) <= TOLERANCE * size
        return None if ok else f"{path}: {a!r} vs {b!r}"
    if type(a) is not type(b):
        return f"{path}: {a!r} vs {b!r}"
    if isinstance(a, dict):
        keys = list(a)
        if b.get(ELIDED) == ELIDED:  # shown shortened: its keys, in order
            keys = [k for k in a if k in b]
            if keys + [ELIDED] != list(b) or len(keys) == len(a):
                return f"{path}: keys {list(a)} vs {list(b)}"
        elif keys != list(b):
            return f"{path}: keys {list(a)} vs {list(b)}"
        for k in keys:
            diff = same(a[k], b[k], f"{path}.{k}",
                        largest(b[k]) if scale is None else scale)
            if diff:
                return diff
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: length {len(a)} vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            diff = same(x, y, f"{path}[{i}]", scale)
            if diff:
                return diff
        return None
    return None if a == b else f"{path}: {a!r} vs {b!r}"


def broken_links(doc, text):
    """Relative link targets of `doc` that name no existing file."""
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue
        path = os.path.join(os.path.dirname(doc), target.split("#")[0])
        if not os.path.exists(path):
            broken.append(target)
    return broken


def check_file(server, doc, update):
    """Runs doc's examples; returns (examples, failures)."""
    with open(doc) as f:
        text = f.read()
    examples = EXAMPLE.findall(text)
    failed = 0
    for command, shown in examples:
        argv = shlex.split(command.replace(
            "localhost:8080", f"127.0.0.1:{server.port}"))
        out = subprocess.run(argv, capture_output=True, text=True,
                             check=True).stdout
        if update:
            text = text.replace(f"{command}\n```\nprints\n```json\n{shown}\n",
                                f"{command}\n```\nprints\n```json\n"
                                f"{out.strip()}\n", 1)
            shown = out
        diff = same(json.loads(out), json.loads(shown))
        shown_part = command.split(" -d ", 1)[-1]
        print(("FAIL " if diff else "ok   ") + f"{doc}: {shown_part[:70]}")
        if diff:
            print("     ", diff)
            failed += 1
    found, bad, text = check_python(server, doc, text, update)
    failed += bad
    for target in broken_links(doc, text):
        print(f"FAIL {doc}: the link ({target}) names no file")
        failed += 1
    if update:
        with open(doc, "w") as f:
            f.write(text)
    return len(examples) + found, failed


def check_python(server, doc, text, update):
    """Runs doc's Python cells if it has a Python example; returns
    (examples, failures, text with the outputs when updating)."""
    cells = PY_CELL.findall(text)
    if not any(prints for _, prints, _ in cells):
        return 0, 0, text
    here, shown_as = f"127.0.0.1:{server.port}", "localhost:8080"
    run = subprocess.run(
        [sys.executable, os.path.join(HERE, "run_cells.py")],
        input=json.dumps([c.replace(shown_as, here) for c, _, _ in cells]),
        capture_output=True, text=True,
        env=dict(os.environ, PYTHONPATH=os.path.abspath(CLIENT)))
    if run.returncode != 0:
        print(f"FAIL {doc}: the Python cells did not run: {run.stderr}")
        return 1, 1, text
    outputs = [o.replace(here, shown_as).rstrip("\n")
               for o in json.loads(run.stdout)]
    examples = failed = 0
    for (code, prints, shown), out in zip(cells, outputs + [None] * (
            len(cells) - len(outputs))):
        last = code.strip().splitlines()[-1][:60]
        if out is None:
            print(f"FAIL {doc}: not run (a cell before it failed): {last}")
            failed += 1
            continue
        if not prints:
            if "Traceback (most recent call last)" in out:
                print(f"FAIL {doc}: {last}\n{out}")
                failed += 1
            continue
        examples += 1
        if update:
            text = text.replace(f"{code}\n```{prints}",
                                f"{code}\n```\nprints\n```text\n{out}\n```",
                                1)
            shown = out
        ok = out == shown
        print(("ok   " if ok else "FAIL ") + f"{doc}: python: {last}")
        if not ok:
            print(f"      printed:\n{out}\n      shown:\n{shown}")
            failed += 1
    return examples, failed, text


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", default=default_server())
    parser.add_argument("--kernels",
                        help="the server's --kernels (another CPU's "
                             "instruction set)")
    parser.add_argument("--update", action="store_true",
                        help="rewrite each shown output with what it prints")
    parser.add_argument("docs", nargs="*",
                        help="markdown files (default: README.md docs/*.md)")
    args = parser.parse_args()
    docs = args.docs or ["README.md"] + sorted(glob.glob("docs/*.md"))
    examples = failed = 0
    extra = ("--kernels", args.kernels) if args.kernels else ()
    with Server(args.server, *extra) as server:
        for doc in docs:
            found, bad = check_file(server, doc, args.update)
            if found == 0 and os.path.basename(doc) == "README.md":
                print("FAIL no examples found in", doc)
                bad += 1
            examples += found
            failed += bad
    print(f"{examples} examples in {len(docs)} files, {failed} failures")
    print(f"reals compared to {TOLERANCE:g} of their stage's largest "
          f"magnitude (kernels of other instruction sets add in other "
          f"orders: tests/readme/check_readme.py, TOLERANCE): "
          f"{SEEN['inexact']} of {SEEN['numbers']} not identical, the "
          f"largest by {SEEN['largest']:.2g}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
