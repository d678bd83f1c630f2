#!/usr/bin/python3
"""The three lessons reproduced by the service.

For each lesson: the request body in tests/lessons/lesson_NNN.json (used by
the README's curl examples) must equal what the lesson's code generates; the
service's answer must agree with the lesson's NumPy numbers to 1e-13 relative
and print identically at NumPy's default precision (what the lesson shows).
Lesson 002 also prints its expected output: "(2, 5, 4) (2, 5, 5) (5, 8)" and
"True".  --write regenerates the JSON files.
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "oracle"))
from lessons import LESSONS  # noqa: E402
from serverproc import Server, default_server  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def check(name, got, want, failures):
    got = np.asarray(got, dtype=np.float64)
    err = np.abs(got - want).max() / np.abs(want).max()
    same_print = np.array2string(got) == np.array2string(want)
    ok = got.shape == want.shape and err <= 1e-13 and same_print
    print(f"  {name:14} shape {list(got.shape)!s:12} relative error "
          f"{err:.2g}  prints identically: {same_print}")
    if not ok:
        failures.append(name)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", default=default_server())
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    failures, failed_lessons = [], set()
    with Server(args.server) as server:
        for number, lesson in LESSONS.items():
            request, expected = lesson()
            path = os.path.join(HERE, f"lesson_{number}.json")
            text = json.dumps(request, separators=(",", ":")) + "\n"
            if args.write:
                with open(path, "w") as f:
                    f.write(text)
            with open(path) as f:
                if f.read() != text:
                    failures.append(f"{path} differs from the lesson's code")
                    failed_lessons.add(number)
            before = len(failures)
            # every stage the lesson computes, whatever the example returns
            status, body = server.post(dict(request, **{"return": list(expected)}))
            print(f"lesson {number}: HTTP {status}")
            if status != 200:
                failures.append(f"lesson {number}: {body}")
                continue
            for stage, want in expected.items():
                check(stage, body[stage], want, failures)
            if number == "002":
                shapes = body["shapes"]
                line = " ".join(str(tuple(shapes[s]))
                                for s in ("q", "weights", "output"))
                sums = np.asarray(body["weights"]).sum(axis=-1)
                printed = f"{line}\n{np.allclose(sums, 1)}"
                print("  prints:", printed.replace("\n", " | "))
                if printed != "(2, 5, 4) (2, 5, 5) (5, 8)\nTrue":
                    failures.append("lesson 002's printed output")
            if len(failures) > before:
                failed_lessons.add(number)
    for f in failures:
        print("FAILED:", f)
    print(f"{len(LESSONS) - len(failed_lessons)} passed, "
          f"{len(failed_lessons)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
