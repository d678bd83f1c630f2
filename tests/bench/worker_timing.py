"""The timing loop of work_rate.py and encode_rate.py: a server with one
worker that takes every request (--fast-lane off, --max-work 0), bodies
sent in turn ROUNDS times, and each body's fastest figures read from its
access-log lines, so that a neighbour's load on a shared machine counts
as little as it can."""
import json
import os
import subprocess
import tempfile
import time
import urllib.request

ROUNDS = 5


def best_entries(server, bodies, keys, rounds=ROUNDS):
    """{label: access-log entry} for bodies ({label: bytes} POSTed to
    /v1/attention), each key of `keys` the least of its rounds."""
    log = tempfile.NamedTemporaryFile(suffix=".log", delete=False)
    srv = subprocess.Popen([server, "--listen", "127.0.0.1:0",
                            "--threads", "1", "--fast-lane", "off",
                            "--max-work", "0"],
                           stdout=subprocess.PIPE, stderr=log)
    line = srv.stdout.readline().decode()
    port = int(line.split("listening on http://")[1].split()[0]
               .rsplit(":", 1)[1])
    best, done = {}, 0
    try:
        for _ in range(rounds):
            for label, data in bodies.items():
                req = urllib.request.Request(
                    f"http://127.0.0.1:{port}/v1/attention", data=data,
                    headers={"Content-Type": "application/json"})
                urllib.request.urlopen(req, timeout=600).read()
                done += 1
                lines = []
                while len(lines) < done:  # the log writes in batches
                    time.sleep(0.02)
                    with open(log.name) as f:
                        lines = [x for x in f if x.startswith('{"time"')]
                entry = json.loads(lines[-1])
                kept = best.setdefault(label, dict(entry))
                for key in keys:
                    kept[key] = min(kept[key], entry[key])
    finally:
        srv.terminate()
        srv.wait()
        os.unlink(log.name)
    return best
