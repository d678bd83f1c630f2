#!/usr/bin/python3
"""openapi.yaml describes exactly what the server does.

Checks against the sources and a running server: the request fields of the
server's schema table (printed by --print-schema, a build of
tests/contract/print_schema.c) are the AttentionRequest properties, with the
same required set and, field by field, the same kind, ranks, minimum and
choices, and the stage names are StageName's enum; the Open Inference
Protocol's inputs (RequestInput's names) are the table's tensors and its
parameters (InferenceParameters) the table's fields that hold one value,
each the AttentionRequest property of its name; the problem `code` enum is
the server's table of codes (server/base/error_codes.c), in its order, every
code of it named by some source, and docs/api.md's table of codes gives
each code once, with the table's status; every path in the spec answers (not 404), every route the server
has is in the spec, a prefix route in x-prefix-routes (and it answers the
protocol's 404 under it: the error object under /v2/, a problem with code
not_found elsewhere); GET /openapi.yaml serves this very file.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "oracle"))
from serverproc import Server, default_server  # noqa: E402


def enum_name(code):
    """The enumerator a call site names (server/base/error_codes.h)."""
    return "ERR_" + code.upper()


def unsent_codes(codes):
    """The table's codes no source of server/ names, outside the table
    itself: a code the spec would list but the server never sends."""
    table = {"server/base/error_codes.c", "server/base/error_codes.h"}
    text = "".join(open(path).read() for path in
                   glob.glob("server/**/*.c*", recursive=True) +
                   glob.glob("server/**/*.h", recursive=True)
                   if path not in table)
    return [c for c in codes if not re.search(rf"\b{enum_name(c)}\b", text)]


DOCS_CODES_HEADER = "| status | `code` | when |"


def docs_codes():
    """{code: status} of docs/api.md's table of codes, and the codes it
    names twice."""
    lines = open("docs/api.md").read().splitlines()
    if DOCS_CODES_HEADER not in lines:
        sys.exit(f"docs/api.md: no table headed {DOCS_CODES_HEADER}")
    rows = lines[lines.index(DOCS_CODES_HEADER) + 2:]
    found, twice = {}, []
    for line in rows:
        if not line.startswith("|"):
            break
        status, codes = [cell.strip() for cell in line.split("|")[1:3]]
        for code in re.findall(r"`([a-z0-9_]+)`", codes):
            if code in found:
                twice.append(code)
            found[code] = int(status)
    return found, twice


def compare_codes(spec_codes, table):
    """openapi.yaml's code list and docs/api.md's table against the
    server's table of codes, and every code sent by some source."""
    failures = []
    codes = [row["code"] for row in table["codes"]]
    if spec_codes != codes:
        failures.append(f"Problem.code enum differs from the table of codes "
                        f"(server/base/error_codes.c): spec {spec_codes}, "
                        f"table {codes}")
    for name in unsent_codes(codes):
        failures.append(f"code {name}: no source of server/ names "
                        f"{enum_name(name)}")
    for f in table["fields"]:
        for name in set(f["codes"]) - set(codes):
            failures.append(f"field {f['name']}: code {name} is not in "
                            f"the table")
    documented, twice = docs_codes()
    status = {row["code"]: row["status"] for row in table["codes"]}
    for name in twice:
        failures.append(f"docs/api.md lists {name} twice")
    if set(documented) != set(status):
        failures.append(f"docs/api.md's codes and the table differ in "
                        f"{sorted(set(documented) ^ set(status))}")
    for name in set(documented) & set(status):
        if documented[name] != status[name]:
            failures.append(f"docs/api.md gives {name} status "
                            f"{documented[name]}, the table "
                            f"{status[name]}")
    return failures


SCHEMAS_REF = "#/components/schemas/"


def follow(schemas, ref):
    """What a $ref into components/schemas points at (any depth)."""
    if not ref.startswith(SCHEMAS_REF):
        sys.exit(f"openapi.yaml: $ref {ref} is not under {SCHEMAS_REF}")
    node = schemas
    for token in ref[len(SCHEMAS_REF):].split("/"):
        node = node[token.replace("~1", "/").replace("~0", "~")]
    return node


def resolve(schemas, prop):
    """A property with its allOf/$ref chain flattened into one dict."""
    out = dict(prop)
    for part in prop.get("allOf", []):
        out.update(resolve(schemas, part))
    ref = prop.get("$ref")
    if ref:
        out.update(resolve(schemas, follow(schemas, ref)))
    return out


def array_depths(schemas, prop):
    """The nesting depths of arrays a (resolved) property allows."""
    prop = resolve(schemas, prop)
    if "oneOf" in prop:
        return set().union(*(array_depths(schemas, p) for p in prop["oneOf"]))
    if prop.get("type") != "array":
        return {0}
    items = prop.get("items", {})
    return {1 + d for d in array_depths(schemas, items)} if items else {1}


def leaf_types(schemas, prop):
    prop = resolve(schemas, prop)
    if "oneOf" in prop:
        return set().union(*(leaf_types(schemas, p) for p in prop["oneOf"]))
    if prop.get("type") == "array":
        return leaf_types(schemas, prop.get("items", {}))
    return {prop.get("type", "any")}


def compare_field(schemas, table, f, prop, where):
    """One row of the table against its property (an object's members
    against the object form's properties)."""
    failures = []
    p = resolve(schemas, prop)
    kind = f["kind"]
    if kind == "tensor":
        # a tensor may also come as a BinaryTensor object: only its
        # nested-array form is compared
        depths = array_depths(schemas, prop) - {0}
        want = set(range(f["min_rank"], f["max_rank"] + 1))
        # whole numbers (positions, heads) are numbers the table's codec
        # checks further (invalid_positions, invalid_heads)
        leaves = {"number" if t == "integer" else t
                  for t in leaf_types(schemas, prop)} - {"object"}
        want_leaves = {"number": {"number"}, "boolean": {"boolean"},
                       "either": {"number", "boolean"}}[f["leaf"]]
        if depths != want:
            failures.append(f"{where}: spec nests {sorted(depths)} deep, "
                            f"the table allows ranks {sorted(want)}")
        if leaves != want_leaves:
            failures.append(f"{where}: spec leaves {sorted(leaves)}, "
                            f"table {sorted(want_leaves)}")
        # items that must differ (heads) are uniqueItems, and only they
        if bool(p.get("uniqueItems")) != f["distinct"]:
            failures.append(f"{where}: spec uniqueItems "
                            f"{bool(p.get('uniqueItems'))}, table distinct "
                            f"{f['distinct']}")
    elif kind == "integer":
        if p.get("type") != "integer" or p.get("minimum") != f["minimum"]:
            failures.append(f"{where}: spec {p.get('type')} minimum "
                            f"{p.get('minimum')}, table integer minimum "
                            f"{f['minimum']}")
    elif kind == "number":
        positive = p.get("minimum") == 0 and bool(p.get("exclusiveMinimum"))
        if p.get("type") != "number" or positive != f["positive"]:
            failures.append(f"{where}: spec {p.get('type')}, table number"
                            f" (positive: {f['positive']})")
    elif kind == "boolean":
        if p.get("type") != "boolean":
            failures.append(f"{where}: spec {p.get('type')}, table boolean")
    elif kind == "enum":
        if p.get("type") != "string" or p.get("enum") != f["choices"]:
            failures.append(f"{where}: spec {p.get('enum')}, table "
                            f"{f['choices']}")
    elif kind == "stages":
        items = resolve(schemas, p.get("items", {}))
        if p.get("type") != "array" or items.get("enum") != table["stages"]:
            failures.append(f"{where}: spec is not an array of StageName")
    elif kind == "labels":
        # strings, or in a batch lists of strings, one per sequence
        items = resolve(schemas, p.get("items", {}))
        forms = [resolve(schemas, f) for f in items.get("oneOf", [])]
        kinds = sorted((f.get("type"), resolve(schemas, f.get("items", {}))
                        .get("type")) for f in forms)
        if p.get("type") != "array" or \
                kinds != [("array", "string"), ("string", None)]:
            failures.append(f"{where}: spec is not an array of strings or "
                            f"of lists of strings")
    elif kind == "object":
        # true, false, or an object of exactly the table's members
        forms = [resolve(schemas, part) for part in p.get("oneOf", [])]
        types = sorted(form.get("type", "any") for form in forms)
        obj = next((form for form in forms if form.get("type") == "object"),
                   {})
        members = obj.get("properties", {})
        if types != ["boolean", "object"] or \
                obj.get("additionalProperties") is not False:
            failures.append(f"{where}: spec is not oneOf a boolean and a "
                            f"closed object")
        names = [m["name"] for m in f["members"]]
        if list(members) != names:
            failures.append(f"{where}: spec members {list(members)}, table "
                            f"{names}")
        for m in f["members"]:
            if m["name"] in members:
                failures += compare_field(schemas, table, m,
                                          members[m["name"]],
                                          f"{where}.{m['name']}")
    elif kind == "string":
        if p.get("type") != "string" or "enum" in p:
            failures.append(f"{where}: spec is not a string")
    elif kind == "state_dict":
        # an object of tensors under the state_dict's keys
        if p.get("type") != "object" or \
                not isinstance(p.get("additionalProperties"), dict):
            failures.append(f"{where}: spec is not an object of tensors")
    else:
        failures.append(f"{where}: kind {kind} is not compared")
    return failures


def compare_fields(schemas, table):
    """The server's field table against AttentionRequest, field by field."""
    failures = []
    request = schemas["AttentionRequest"]
    props = request["properties"]
    names = [f["name"] for f in table["fields"]]
    if set(props) != set(names):
        failures.append(f"request fields: spec and schema table differ in "
                        f"{sorted(set(props) ^ set(names))}")
    required = {f["name"] for f in table["fields"] if f["required"]}
    if set(request.get("required", [])) != required:
        failures.append(f"required fields: spec {sorted(request['required'])}"
                        f", schema table {sorted(required)}")
    stages = resolve(schemas, {"$ref": "#/components/schemas/StageName"})
    if stages.get("enum") != table["stages"]:
        failures.append(f"StageName {stages.get('enum')} vs the core's "
                        f"{table['stages']}")
    for f in table["fields"]:
        if f["name"] in props:
            failures += compare_field(schemas, table, f, props[f["name"]],
                                      f"field {f['name']}")
    return failures


# the members of every /v1 reply but its stages (server/json/encode.c), and
# the shapes of what was sent beside the stages
REPLY_MEMBERS = {"dtype", "num_heads", "head_dim", "value_dim", "scale",
                 "causal", "encoding", "tokens", "context_tokens", "shapes"}
SHAPES_OF_INPUTS = {"x", "context"}


def compare_response(schemas, table):
    """AttentionResponse holds no member but the reply's and every stage,
    so that a stage added to the core is declared before a reply carries
    it (make test-contract-traffic holds every recorded reply to it)."""
    failures = []
    reply = schemas["AttentionResponse"]
    stages = set(table["stages"])
    if reply.get("additionalProperties") is not False:
        failures.append("AttentionResponse takes members it does not name")
    if set(reply["properties"]) != REPLY_MEMBERS | stages:
        failures.append(f"AttentionResponse's members and the reply's differ "
                        f"in {sorted(set(reply['properties']) ^ (REPLY_MEMBERS | stages))}")
    shapes = reply["properties"]["shapes"]
    if shapes.get("additionalProperties") is not False or \
            set(shapes.get("properties", {})) != SHAPES_OF_INPUTS | stages:
        failures.append("AttentionResponse.shapes does not name exactly x, "
                        "context and the core's stages")
    return failures


# the kinds a request parameter of the Open Inference Protocol cannot carry
# (server/oip/oip_decode.c): tensors are inputs, labels are lists; a row
# with "oip_instead" is said the protocol's own way (the inputs' datatype
# is the dtype, the outputs are the stages)
OIP_NOT_PARAMETER_KINDS = {"tensor", "labels"}


def oip_own_parameters():
    """The protocol's parameters that are no request field: binary_data_output
    and the scheduling ones (server/oip/oip_decode.c)."""
    text = open("server/oip/oip_decode.c").read()
    scheduling = re.search(r"scheduling_parameters\[\] = \{([^}]*)\}", text)
    if not scheduling or '"binary_data_output"' not in text:
        sys.exit("server/oip/oip_decode.c: its own parameters are not found")
    return {"binary_data_output"} | set(re.findall(r'"([a-z_]+)"',
                                                   scheduling.group(1)))


def compare_oip(schemas, table):
    """RequestInput's names and InferenceParameters against the table."""
    failures = []
    names = resolve(schemas, schemas["RequestInput"]["properties"]["name"])
    tensors = [f["name"] for f in table["fields"] if f["kind"] == "tensor"]
    if names.get("enum") != tensors:
        failures.append(f"RequestInput names {names.get('enum')} vs the "
                        f"table's tensors {tensors}")
    params = schemas["InferenceParameters"]["properties"]
    want = [f["name"] for f in table["fields"]
            if f["kind"] not in OIP_NOT_PARAMETER_KINDS
            and "oip_instead" not in f]
    want_all = set(want) | oip_own_parameters()
    if set(params) != want_all:
        failures.append(f"InferenceParameters: spec and the server differ "
                        f"in {sorted(set(params) ^ want_all)}")
    for name in set(params) & set(want):
        ref = f"{SCHEMAS_REF}AttentionRequest/properties/{name}"
        if params[name].get("$ref") != ref:
            failures.append(f"InferenceParameters.{name} is not {ref}")
    return failures


def table_routes():
    """(exact paths, prefix paths) of the route table's rows
    (server/http/routes.c)."""
    text = open("server/http/routes.c").read()
    table = re.search(r"^static const route table\[\] = \{(.*?)^\};", text,
                      re.S | re.M)
    if not table:
        sys.exit("server/http/routes.c: no route table found")
    exact, prefixes = set(), set()
    for row in re.findall(r"\{(\.path = .*?)\}", table.group(1), re.S):
        path = re.search(r'\.path = "([^"]*)"', row).group(1)
        (prefixes if re.search(r"\.prefix = true", row) else exact).add(path)
    return exact, prefixes


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", default=default_server())
    parser.add_argument("--print-schema", required=True,
                        help="the build of tests/contract/print_schema.c")
    args = parser.parse_args()
    spec = yaml.safe_load(open("openapi.yaml"))
    failures = []

    schemas = spec["components"]["schemas"]
    table = json.loads(subprocess.run([args.print_schema], check=True,
                                      capture_output=True, text=True).stdout)
    failures += compare_fields(schemas, table)
    failures += compare_oip(schemas, table)
    failures += compare_response(schemas, table)
    fields = table["fields"]

    enum = spec["components"]["schemas"]["Problem"]["properties"]["code"][
        "enum"]
    failures += compare_codes(enum, table)

    routes, prefixes = table_routes()
    if routes != set(spec["paths"]):
        failures.append(f"routes {sorted(routes)} vs spec "
                        f"{sorted(spec['paths'])}")
    if prefixes != set(spec.get("x-prefix-routes", {})):
        failures.append(f"prefix routes {sorted(prefixes)} vs spec "
                        f"x-prefix-routes {sorted(spec.get('x-prefix-routes', {}))}")

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
        for prefix in prefixes:
            try:
                urllib.request.urlopen(base + prefix + "no-such-route")
                status, body = 200, b""
            except urllib.error.HTTPError as e:
                status, body = e.code, e.read()
            # the protocol's error object under /v2/, a problem elsewhere
            answer = json.loads(body or b"{}")
            if status != 404 or not ("error" in answer or
                                     answer.get("code") == "not_found"):
                failures.append(f"GET {prefix}no-such-route: {status} "
                                f"{body[:120]!r}, not the protocol's 404")
        served = urllib.request.urlopen(base + "/openapi.yaml").read()
        if served != open("openapi.yaml", "rb").read():
            failures.append("GET /openapi.yaml differs from openapi.yaml")

    for f in failures:
        print("FAIL", f)
    print(f"openapi: {len(fields)} request fields, {len(enum)} problem codes, "
          f"{len(routes)} routes and {len(prefixes)} prefix route checked")
    print(f"{0 if failures else 1} passed, {1 if failures else 0} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
