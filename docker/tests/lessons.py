"""The three lessons as requests to a running service, each checked against the lesson's own NumPy code.

    /usr/bin/python3 docker/tests/lessons.py --url http://127.0.0.1:PORT

Used by `make docker-test` (the server inside the image) and by `make test-lb` (the same requests through nginx),
so the numbers that travel through a container or a load balancer are the numbers the lessons print.

Each lesson's expected tensors are computed here exactly as the lesson computes them (seeded weights, row-vector
projections x @ W, per-head split by columns); the service's float64 answer must match within a relative error of
1e-12 of each tensor's largest entry (the two sides differ only in the last bits: BLAS sums in another order).
"""
import argparse
import http.client
import importlib.util
import json
import os
import sys
import urllib.parse

import numpy as np

REL_TOL = 1e-12  # float64: BLAS and NumPy sum in different orders, a few ulps of the largest entry apart


def relative_error(got, want):
    """Largest difference relative to the tensor's largest magnitude (an entry near zero that comes out of a
    cancellation carries the absolute error of its larger terms, not a relative one of its own)."""
    return np.max(np.abs(got - want)) / max(np.max(np.abs(want)), np.finfo(np.float64).tiny)


# The lessons' own NumPy code lives once, in tests/lessons/lessons.py: each
# function there returns (request body, the tensors the lesson computes).
# (loaded by path: this module is called "lessons" too)
_spec = importlib.util.spec_from_file_location(
    "lesson_code", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tests", "lessons", "lessons.py"))
_lesson_code = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_lesson_code)
LESSON_CODE = _lesson_code.LESSONS

# The shapes each lesson prints or implies (lesson 002: "(2, 5, 4) (2, 5, 5) (5, 8)").
SHAPES = {"000": {"output": [3, 6], "head_outputs": [2, 3, 3]},
          "001": {"weights": [1, 3, 3], "output": [3, 4]},
          "002": {"q": [2, 5, 4], "weights": [2, 5, 5], "output": [5, 8]}}


def lesson_case(number):
    """(request asking for every stage the lesson computes, those tensors, shapes)."""
    request, expected = LESSON_CODE[number]()
    return dict(request, **{"return": list(expected) + ["weights"]}), expected, SHAPES[number]


LESSONS = {number: (lambda number=number: lesson_case(number)) for number in LESSON_CODE}


def request_body(lesson):
    body, _, _ = LESSONS[lesson]()
    return json.dumps({k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in body.items()}).encode()


def check_answer(lesson, status, payload):
    """Returns a list of problems (empty when the answer is the lesson's)."""
    _, expect, shapes = LESSONS[lesson]()
    if status != 200:
        return [f"lesson {lesson}: status {status}: {payload[:300]!r}"]
    answer = json.loads(payload)
    problems = []
    for name, want in expect.items():
        if name not in answer:
            problems.append(f"lesson {lesson}: no {name!r} in the answer")
            continue
        got = np.array(answer[name], dtype=np.float64)
        if got.shape != want.shape:
            problems.append(f"lesson {lesson}: {name} shape {got.shape}, want {want.shape}")
            continue
        err = relative_error(got, want)
        if not err <= REL_TOL:
            problems.append(f"lesson {lesson}: {name} relative error {err:.3g} > {REL_TOL}")
    for name, shape in shapes.items():
        if answer.get("shapes", {}).get(name) != shape:
            problems.append(f"lesson {lesson}: shapes.{name} = {answer.get('shapes', {}).get(name)}, want {shape}")
    if "weights" in answer:
        sums = np.array(answer["weights"]).sum(axis=-1)
        if not np.allclose(sums, 1.0, rtol=0, atol=1e-14):
            problems.append(f"lesson {lesson}: weights rows sum to {sums}")
    return problems


def post(url, lesson, headers=None, timeout=30):
    """POST one lesson; returns (status, response headers, body bytes)."""
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        conn.request("POST", "/v1/attention", body=request_body(lesson),
                     headers={"Content-Type": "application/json", **(headers or {})})
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read()
    finally:
        conn.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", required=True, help="http://HOST:PORT of the service")
    args = ap.parse_args()
    failed = 0
    for lesson in LESSONS:
        status, headers, payload = post(args.url, lesson, {"X-Request-ID": f"lesson-{lesson}"})
        problems = check_answer(lesson, status, payload)
        if headers.get("X-Request-ID") != f"lesson-{lesson}":
            problems.append(f"lesson {lesson}: X-Request-ID echoed as {headers.get('X-Request-ID')!r}")
        for p in problems:
            print("FAIL", p)
        if problems:
            failed += 1
        else:
            print(f"ok   lesson {lesson}: 200, {len(payload)} bytes, numbers match the lesson's NumPy code")
    print(f"{len(LESSONS) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
