#!/usr/bin/python3
"""Lists the C and C++ functions of core/ and server/ longer than a screen.

A function is read as the tree is formatted (clang-format, .clang-format):
its body opens with a "{" alone at the start of a line and closes with the
next "}" at the start of a line; its length counts from the first line of
its signature (the lines above the "{" back to a blank line, a comment's
end or a line ending in ";" or "}") to its closing "}".

    tools/long_functions.py [--max N] [FOLDER...]   (default: 80, core
                                                    server); exit 1 when
                                                    one is longer
"""
import argparse
import os
import re
import sys

SOURCE = re.compile(r"\.(c|cpp|inc)$")
# a name before its "(", or a template's SFX(name) (core/*_impl.inc)
NAME = re.compile(r"SFX\((\w+)\)\s*\(|([A-Za-z_]\w*)\s*\(")


def functions(path):
    """(name, first line, length) of each function of path."""
    lines = open(path, encoding="utf-8").read().splitlines()
    found = []
    for i, line in enumerate(lines):
        if line != "{":
            continue
        start = i
        while start > 0 and lines[start - 1].strip() and \
                not lines[start - 1].rstrip().endswith((";", "}", "*/")) and \
                not lines[start - 1].startswith(("#", "//")):
            start -= 1
        end = next((j for j in range(i + 1, len(lines))
                    if lines[j].startswith("}")), len(lines) - 1)
        signature = " ".join(lines[start:i])
        if "=" in signature.split("(")[0]:
            continue  # an initialiser, not a function
        m = NAME.search(signature)
        if m:
            found.append((m.group(1) or m.group(2), start + 1,
                          end - start + 1))
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max", type=int, default=80)
    parser.add_argument("folders", nargs="*", default=["core", "server"])
    args = parser.parse_args()
    top = os.path.normpath(os.path.join(os.path.dirname(__file__), ".."))
    long, count = [], 0
    for folder in args.folders:
        for base, _dirs, files in os.walk(os.path.join(top, folder)):
            for name in sorted(files):
                if not SOURCE.search(name):
                    continue
                path = os.path.join(base, name)
                for fn, first, length in functions(path):
                    count += 1
                    if length > args.max:
                        long.append((length, os.path.relpath(path, top),
                                     first, fn))
    for length, path, first, fn in sorted(long, reverse=True):
        print(f"{path}:{first}: {fn} is {length} lines, more than "
              f"{args.max}")
    print(f"functions: {count} read in {' '.join(args.folders)}, "
          f"{len(long)} longer than {args.max} lines")
    return 1 if long else 0


if __name__ == "__main__":
    sys.exit(main())
