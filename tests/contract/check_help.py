#!/usr/bin/python3
"""`attention-server --help` fits a terminal and tells the truth.

Every line is at most 100 columns; every flag shows its value's placeholder
(`--listen HOST:PORT`, not `--listen`) and its ATTENTION_* variable; and
--api-key-file names every route that openapi.yaml guards with the bearer
token, and no other.

usage: check_help.py SERVER_BIN"""
import os
import re
import subprocess
import sys

import yaml

WIDTH = 100
ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
NO_VALUE = {"help", "version"}


def guarded_paths():
    with open(os.path.join(ROOT, "openapi.yaml")) as f:
        spec = yaml.safe_load(f)
    return {path for path, ops in spec["paths"].items()
            for op in ops.values()
            if isinstance(op, dict) and {"bearer": []} in op.get("security", [])}


def main():
    text = subprocess.run([sys.argv[1], "--help"], capture_output=True,
                          text=True, check=True).stdout
    failures = []
    for n, line in enumerate(text.splitlines(), 1):
        if len(line) > WIDTH:
            failures.append(f"line {n} is {len(line)} columns: {line!r}")
    flags = re.findall(r"^  --([a-z-]+)( [^ ]+)?", text, re.M)
    for name, value in flags:
        if name not in NO_VALUE and not value:
            failures.append(f"--{name} shows no placeholder for its value")
    envs = set(re.findall(r"env (ATTENTION_[A-Z_]+)", text))
    for name, _ in flags:
        env = "ATTENTION_" + name.upper().replace("-", "_")
        if name not in NO_VALUE and env not in envs:
            failures.append(f"--{name} shows no {env}")
    key = re.search(r"^  --api-key-file .*?(?=^  --)", text, re.M | re.S)
    said = set(re.findall(r"/v[0-9][^ ,]*", " ".join(key.group(0).split())))
    if said != guarded_paths():
        failures.append(f"--api-key-file names {sorted(said)}; openapi.yaml "
                        f"guards {sorted(guarded_paths())}")
    for f in failures:
        print("FAIL ", f)
    print(f"--help: {len(flags)} flags, {len(text.splitlines())} lines, "
          f"{len(failures)} failure(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
