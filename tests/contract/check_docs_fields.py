#!/usr/bin/python3
"""docs/api.md's table of request fields names exactly the fields of the
server's schema table (tools/gen_contract.c writes it from that table; this
reads it as a reader would).

The schema table (server/request/schema.c) is printed by --print-schema, a
build of tests/contract/print_schema.c.  In its table of fields
a row documents the fields named in backticks in its first cell, outside
parentheses; names inside them ("`x` (required, or `q`, `k`, `v`)") point
to other rows.  Checked:
  - every field of the table is documented by exactly one row;
  - every name in a first cell, inside parentheses or not, is a field;
  - an enum field's row names each of its choices, quoted ("float32");
  - docs/api.md's table of stages lists the core's stages, in its order.

    tests/contract/check_docs_fields.py --print-schema build/tests/print_schema
"""
import argparse
import json
import re
import subprocess
import sys

API = "docs/api.md"
API_HEADER = "| field | what it takes | meaning |"
API_STAGES_HEADER = "| stage | shape | what |"
NAME = re.compile(r"`([^`]+)`")


def table_rows(path, header):
    """The (first cell, rest of the row) of each row of the table headed
    `header` in path."""
    lines = open(path, encoding="utf-8").read().splitlines()
    if header not in lines:
        sys.exit(f"{path}: no table headed {header}")
    rows = []
    for line in lines[lines.index(header) + 2:]:
        if not line.startswith("|"):
            break
        # a cell may hold an escaped bar (\|)
        cells = re.split(r"(?<!\\)\|", line)[1:-1]
        rows.append((cells[0].strip(), "|".join(cells[1:])))
    return rows


def outside_parentheses(cell):
    depth, kept = 0, []
    for c in cell:
        depth += c == "("
        if depth == 0:
            kept.append(c)
        depth -= c == ")" and depth > 0
    return "".join(kept)


def check_fields(path, rows, table):
    """Each field documented by one row, every name a field, each enum's
    choices named in its row."""
    failures = []
    fields = {f["name"]: f for f in table["fields"]}
    documented = {}
    for first, rest in rows:
        for name in NAME.findall(first):
            if name not in fields:
                failures.append(f"{path}: the table of fields names "
                                f"`{name}`, which is no field of the schema "
                                f"table")
        for name in NAME.findall(outside_parentheses(first)):
            if name in documented:
                failures.append(f"{path}: `{name}` is documented by two "
                                f"rows")
            documented[name] = rest
    for name, f in fields.items():
        if name not in documented:
            failures.append(f"{path}: field `{name}` has no row in the table "
                            f"of fields")
        elif f["kind"] == "enum":
            for choice in f["choices"]:
                if f'"{choice}"' not in documented[name]:
                    failures.append(f"{path}: the row of `{name}` does not "
                                    f"name its choice \"{choice}\"")
    return failures


def check_stages(where, listed, table):
    if listed != table["stages"]:
        return [f"{where} lists the stages {listed}, the core's are "
                f"{table['stages']}"]
    return []


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--print-schema", required=True,
                        help="the build of tests/contract/print_schema.c")
    args = parser.parse_args()
    table = json.loads(subprocess.run([args.print_schema], check=True,
                                      capture_output=True, text=True).stdout)
    failures = []

    failures += check_fields(API, table_rows(API, API_HEADER), table)
    stages = [NAME.findall(first)[0]
              for first, _ in table_rows(API, API_STAGES_HEADER)]
    failures += check_stages(f"{API}'s table of stages", stages, table)

    for f in failures:
        print("FAIL", f)
    print(f"docs: {len(table['fields'])} request fields and "
          f"{len(table['stages'])} stages checked in {API}")
    print(f"{0 if failures else 1} passed, {1 if failures else 0} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
