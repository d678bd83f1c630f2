#!/usr/bin/python3
"""Writes the committed seed corpus of the HTTP framing fuzzer
(tests/fuzz/corpus_framing): the bytes of every case of
tests/framing/test_framing.py, one file each, taken from that suite's own
list by recording what it would send instead of sending it.

Deterministic: rerunning it rewrites the same files.
Usage: make_framing_corpus.py [OUT_DIR]"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "framing"))
import test_framing  # noqa: E402

recorded = []  # (the case's name, its bytes)
case_name = [""]


class Recorder:
    """Stands for test_framing.Exchange: keeps the bytes, answers nothing."""

    def __init__(self, port, data, send_after=None):
        recorded.append((case_name[0], data + (send_after or b"")))
        self.raw = self.after = b""
        self.closed = False
        self.first_byte_at = None

    def statuses(self):
        return []

    def problem(self):
        return None

    def head_and_body(self):
        return "", b""


class Server:
    """Stands for robustlib.Server (the bearer cases start their own)."""

    def __init__(self, binary, args):
        self.port = 0

    def terminate(self):
        return 0


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE,
                                                             "corpus_framing")
    test_framing.Exchange = Recorder
    test_framing.Server = Server
    test_framing.print = lambda *a, **k: None
    c = test_framing.Checks(None)
    asked = c.case

    def case(name):
        case_name[0] = name
        return asked(name)
    c.case = case
    for group in test_framing.CASE_GROUPS:
        group(c, 0)
    test_framing.bearer_tokens(c, None)
    os.makedirs(out, exist_ok=True)
    for old in os.listdir(out):
        os.remove(os.path.join(out, old))
    for i, (case, data) in enumerate(recorded):
        name = f"{i:03d}_" + re.sub(r"[^A-Za-z0-9]+", "_", case)[:60].strip("_")
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print(f"wrote {len(recorded)} seeds to {out}")


if __name__ == "__main__":
    main()
