#!/usr/bin/python3
"""openapi.yaml describes exactly what the server does.

Checks against the sources and a running server: the request fields the
decoder knows are the schema's properties; every problem `code` the sources
can send is in the schema's enum and every code in the enum is sent
somewhere; every path in the spec answers (not 404), every route the server
has is in the spec; GET /openapi.yaml serves this very file.
"""
import argparse
import glob
import os
import re
import sys
import urllib.error
import urllib.request

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "oracle"))
from serverproc import Server, default_server  # noqa: E402


def source_codes():
    codes = set()
    for path in glob.glob("server/**/*.c", recursive=True):
        text = open(path).read()
        # problem_reply(r, STATUS, "code", ...) and decode_fail(err, STATUS, "code"
        for m in re.finditer(r'(?:problem_reply|decode_fail)\(\s*[^,]+,\s*'
                             r'[^,]+,\s*(?:[^"]*\?\s*)?"([a-z0-9_]+)"', text):
            codes.add(m.group(1))
        # codes chosen by a ternary: both sides are snake_case codes
        for m in re.finditer(r'\?\s*"([a-z0-9]+_[a-z0-9_]+)"\s*:\s*'
                             r'"([a-z0-9]+_[a-z0-9_]+)"', text):
            codes.update(m.groups())
    return codes


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", default=default_server())
    args = parser.parse_args()
    spec = yaml.safe_load(open("openapi.yaml"))
    failures = []

    fields = set(spec["components"]["schemas"]["AttentionRequest"]["properties"])
    known = re.search(r"raw_known_fields\[\] = \{(.*?)\};",
                      open("server/json/raw_request.c").read(), re.S).group(1)
    decoder = set(re.findall(r'"([a-z_]+)"', known))
    if fields != decoder:
        failures.append(f"request fields: spec {sorted(fields ^ decoder)} "
                        "differ from the decoder's")

    enum = set(spec["components"]["schemas"]["Problem"]["properties"]["code"]
               ["enum"])
    sent = source_codes()
    if sent - enum:
        failures.append(f"codes sent but not in the spec: {sorted(sent - enum)}")
    if enum - sent:
        failures.append(f"codes in the spec never sent: {sorted(enum - sent)}")

    routes = set(re.findall(r'\{"(/[^"]*)", "[A-Z, ]+", ROUTE_',
                            open("server/http/daemon.c").read()))
    if routes != set(spec["paths"]):
        failures.append(f"routes {sorted(routes)} vs spec "
                        f"{sorted(spec['paths'])}")

    with Server(args.server) as server:
        base = f"http://127.0.0.1:{server.port}"
        for path, ops in spec["paths"].items():
            method = "POST" if "post" in ops else "GET"
            req = urllib.request.Request(base + path, method=method, data=(
                b"{}" if method == "POST" else None),
                headers={"Content-Type": "application/json"})
            try:
                status = urllib.request.urlopen(req).status
            except urllib.error.HTTPError as e:
                status = e.code
            if status == 404:
                failures.append(f"{method} {path} answers 404")
        served = urllib.request.urlopen(base + "/openapi.yaml").read()
        if served != open("openapi.yaml", "rb").read():
            failures.append("GET /openapi.yaml differs from openapi.yaml")

    for f in failures:
        print("FAIL", f)
    print(f"openapi: {len(fields)} request fields, {len(enum)} problem codes, "
          f"{len(routes)} routes checked")
    print(f"{0 if failures else 1} passed, {1 if failures else 0} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
