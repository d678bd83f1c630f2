"""Compare two server builds' time to encode a big reply as JSON.

    ab_encode.py SERVER_A SERVER_B [--rounds 15] [--n 1024]

The request: x (n, 4) of small numbers, 1 head, asking for the scores, masked
scores and weights (3 n² numbers: about 56 MB of JSON at n 1024), cheap to
compute and long to encode.  Each round starts A, B and A again as a
control, in turn (the order reversed every other round), sends the request
once to warm up and then once measured, and reads the server's access log:
the encoding's milliseconds are the line's work_ms less its compute_ms (the
small body's decoding is the rest, under a millisecond).  Prints each
build's median over the rounds and the ratios A ÷ B and A ÷ control: the
control's ratio is the noise the B ratio must stand out from.
"""
import argparse
import http.client
import json
import random
import re
import statistics
import subprocess


def body(n):
    rng = random.Random(1)

    def mat(rows, cols):
        return [[round(rng.uniform(-0.5, 0.5), 3) for _ in range(cols)]
                for _ in range(rows)]
    return json.dumps({"x": mat(n, 4), "w_q": mat(4, 4), "w_k": mat(4, 4),
                       "w_v": mat(4, 4),
                       "return": ["scores", "masked_scores", "weights"]})


def encode_ms(server, payload):
    """The measured request's encoding milliseconds, from a fresh server."""
    proc = subprocess.Popen([server, "--listen", "127.0.0.1:0",
                             "--compute-timeout", "0", "--idle-timeout", "600"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    port = int(re.search(r"127\.0\.0\.1:(\d+)",
                         proc.stdout.readline()).group(1))
    conn = http.client.HTTPConnection("127.0.0.1", port)
    for _ in range(2):
        conn.request("POST", "/v1/attention", payload,
                     {"Content-Type": "application/json"})
        reply = conn.getresponse()
        reply.read()
        assert reply.status == 200, reply.status
    conn.close()
    proc.terminate()
    _, log = proc.communicate(timeout=30)
    lines = [json.loads(x) for x in log.splitlines() if x.startswith("{")]
    last = [x for x in lines if x.get("path") == "/v1/attention"][-1]
    return last["work_ms"] - last["compute_ms"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--n", type=int, default=1024)
    args = ap.parse_args()
    payload = body(args.n)
    contestants = [("A", args.a), ("B", args.b), ("control", args.a)]
    times = {name: [] for name, _ in contestants}
    for r in range(args.rounds):
        order = contestants if r % 2 == 0 else contestants[::-1]
        for name, server in order:
            times[name].append(encode_ms(server, payload))
    med = {name: statistics.median(t) for name, t in times.items()}
    print(f"medians of {args.rounds} rounds, n {args.n}: encode ms "
          f"A {med['A']:.2f}, B {med['B']:.2f}, control {med['control']:.2f}; "
          f"A / B {med['A'] / med['B']:.3f}, "
          f"A / control {med['A'] / med['control']:.3f}")


if __name__ == "__main__":
    main()
