#!/usr/bin/python3
"""Runs Python cells as a notebook does: in order, in one namespace, each
cell's stdout kept apart.  Reads a JSON list of cells on stdin; writes a
JSON list of their outputs.  A cell that raises ends the run: its output
is then the traceback, and no later cell runs."""
import contextlib
import io
import json
import sys
import traceback


def main():
    cells = json.load(sys.stdin)
    namespace = {"__name__": "__main__"}
    outputs = []
    for cell in cells:
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(cell, f"<cell {len(outputs)}>", "exec"),
                     namespace)
        except Exception:  # the check shows it as the cell's output
            outputs.append(out.getvalue() + traceback.format_exc())
            break
        outputs.append(out.getvalue())
    json.dump(outputs, sys.stdout)


if __name__ == "__main__":
    main()
