"""Start build/attention-server on a free loopback port and talk JSON to it.

Used by the oracle and lesson tests (run with /usr/bin/python3, which has
NumPy).  Only the standard library: http.client keeps one connection alive.
"""
import http.client
import json
import os
import re
import signal
import subprocess


class Server:
    def __init__(self, binary, *flags):
        self.proc = subprocess.Popen(
            [binary, "--listen", "127.0.0.1:0", *flags],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        if not match:
            self.proc.kill()
            raise RuntimeError(f"server did not start: {line!r}")
        self.port = int(match.group(1))
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port,
                                               timeout=60)

    def post(self, body, path="/v1/attention"):
        """POSTs a dict (or bytes); returns (status, parsed JSON body)."""
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.conn.request("POST", path, body=data,
                          headers={"Content-Type": "application/json"})
        resp = self.conn.getresponse()
        return resp.status, json.loads(resp.read())

    def stop(self):
        self.conn.close()
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=30)
        if code != 0:
            raise RuntimeError(f"server exited with {code}")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if exc[0] is None:
            self.stop()
        else:
            self.proc.kill()
            self.proc.wait()


def default_server():
    return os.environ.get("ATTENTION_SERVER", "build/attention-server")
