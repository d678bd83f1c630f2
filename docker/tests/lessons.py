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
import json
import sys
import urllib.parse

import numpy as np

REL_TOL = 1e-12  # float64: BLAS and NumPy sum in different orders, a few ulps of the largest entry apart


def relative_error(got, want):
    """Largest difference relative to the tensor's largest magnitude (an entry near zero that comes out of a
    cancellation carries the absolute error of its larger terms, not a relative one of its own)."""
    return np.max(np.abs(got - want)) / max(np.max(np.abs(want)), np.finfo(np.float64).tiny)


def softmax(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def lesson_000():
    """Multi-head attention with per-head weight stacks (heads, d, d/heads), np.random.seed(42), no W_o."""
    x = np.array([[0.1, 0.2, 0.3, 0.4, 0.5, 0.6],
                  [0.6, 0.5, 0.4, 0.3, 0.2, 0.1],
                  [0.2, 0.1, 0.4, 0.3, 0.6, 0.5]])
    num_heads, embed_size = 2, x.shape[1]
    head_dim = embed_size // num_heads
    np.random.seed(42)
    w_q = np.random.randn(num_heads, embed_size, head_dim)
    w_k = np.random.randn(num_heads, embed_size, head_dim)
    w_v = np.random.randn(num_heads, embed_size, head_dim)
    outputs = []
    for head in range(num_heads):
        q, k, v = x @ w_q[head], x @ w_k[head], x @ w_v[head]
        scores = q @ k.T / np.sqrt(head_dim)
        weights = np.exp(scores) / np.sum(np.exp(scores), axis=-1, keepdims=True)
        outputs.append(weights @ v)
    body = {"x": x, "w_q": w_q, "w_k": w_k, "w_v": w_v, "return": ["head_outputs", "output"]}
    expect = {"head_outputs": np.stack(outputs), "output": np.concatenate(outputs, axis=-1)}
    return body, expect, {"output": [3, 6], "head_outputs": [2, 3, 3]}


def lesson_001():
    """Single-head self-attention step by step with fixed 4x4 weights."""
    x = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 2.0, 0.0, 2.0], [1.0, 1.0, 1.0, 1.0]])
    w_q = np.array([[0.1, 0.2, 0.0, 0.0], [0.0, 0.1, 0.3, 0.0], [0.1, 0.0, 0.0, 0.2], [0.0, 0.0, 0.2, 0.3]])
    w_k = np.array([[0.2, 0.0, 0.1, 0.0], [0.0, 0.1, 0.0, 0.3], [0.1, 0.0, 0.2, 0.0], [0.0, 0.2, 0.0, 0.1]])
    w_v = np.array([[0.0, 0.1, 0.0, 0.2], [0.2, 0.0, 0.2, 0.0], [0.0, 0.3, 0.1, 0.0], [0.1, 0.0, 0.0, 0.3]])
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scores = q @ k.T
    scaled = scores / np.sqrt(q.shape[1])
    weights = softmax(scaled)
    output = weights @ v
    body = {"x": x, "w_q": w_q, "w_k": w_k, "w_v": w_v,
            "return": ["q", "k", "v", "scores", "scaled_scores", "weights", "output"]}
    expect = {"q": q[None], "k": k[None], "v": v[None], "scores": scores[None],
              "scaled_scores": scaled[None], "weights": weights[None], "output": output}
    return body, expect, {"weights": [1, 3, 3], "output": [3, 4]}


def lesson_002():
    """Multi-head attention by reshaping one d x d projection into h heads (default_rng(0)), here with a W_o."""
    rng = np.random.default_rng(0)
    n, d, h = 5, 8, 2
    x = rng.normal(size=(n, d))
    w_q, w_k, w_v = rng.normal(size=(3, d, d))
    w_o = np.eye(d)[::-1].copy()  # a permutation: output is concat with its columns reversed

    def split(m):
        return m.reshape(n, h, d // h).transpose(1, 0, 2)

    qh, kh, vh = split(x @ w_q), split(x @ w_k), split(x @ w_v)
    a = softmax(qh @ kh.transpose(0, 2, 1) / np.sqrt(d // h))
    y = (a @ vh).transpose(1, 0, 2).reshape(n, d)
    assert (qh.shape, a.shape, y.shape) == ((2, 5, 4), (2, 5, 5), (5, 8))  # the lesson's expected print
    body = {"x": x, "w_q": w_q, "w_k": w_k, "w_v": w_v, "num_heads": h, "w_o": w_o,
            "return": ["q", "weights", "concat", "output"]}
    expect = {"q": qh, "weights": a, "concat": y, "output": y @ w_o}
    return body, expect, {"q": [2, 5, 4], "weights": [2, 5, 5], "output": [5, 8]}


LESSONS = {"000": lesson_000, "001": lesson_001, "002": lesson_002}


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
