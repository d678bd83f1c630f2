#!/usr/bin/python3
"""Checks that the source tree's rooms depend on each other in one direction.

Every `#include "..."` in core/, server/ and tools/ is read and its target's
room looked up; an include of a room that is not below the including room
fails the check.  The rooms, lowest first:

    core            the attention maths and the thread pool: no HTTP, no JSON
    server/base     buffers, replies, problem+json, the memory budget, limits
    server/web      the embedded assets' declarations
    server/setup    configuration, BLAS and allocator set-up
    server/obs      metrics and the access log
    server/json     the codec: schema, parsers, validation, encoder
    server/api      one file per endpoint
    server/http     libmicrohttpd: daemon, routes, guards, deadlines
    server/main.c   wires them together
    tools           build-time generators (the page's field list reads the
                    schema table: server/json and what it includes)

A room may include itself and the rooms ALLOWED lists for it; the leaves
(base, web, setup, obs) may be used by any room above them, and no two rooms
include each other.  System headers (<...>) are not checked, except that the
core may not include libmicrohttpd's or jansson's.

    tools/check_layout.py           check the tree (exit 1 on a violation)
"""
import os
import re
import sys

# room -> the rooms it may include (besides itself)
ALLOWED = {
    "core": set(),
    "server/base": {"core"},
    "server/web": set(),
    "server/setup": {"core", "server/base"},
    "server/obs": {"server/base"},
    "server/json": {"core", "server/base"},
    "server/api": {"core", "server/base", "server/web", "server/setup",
                   "server/obs", "server/json"},
    "server/http": {"core", "server/base", "server/web", "server/setup",
                    "server/obs", "server/api"},
    "server/main.c": {"core", "server/base", "server/setup", "server/obs",
                      "server/http"},
    "tools": {"core", "server/base", "server/json"},
}
# headers the core must never see: it knows nothing of HTTP or JSON
CORE_FORBIDDEN = ("microhttpd.h", "jansson.h", "simdjson.h")
SOURCE = re.compile(r"\.(c|h|cpp|inc)$")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def room_of(path):
    """The room a repository path belongs to, or None (tests, generated)."""
    if path == "server/main.c":
        return path
    for room in sorted(ALLOWED, key=len, reverse=True):
        if path.startswith(room + "/"):
            return room
    return None


def sources(top):
    for folder in ("core", "server", "tools"):
        for base, _dirs, files in os.walk(os.path.join(top, folder)):
            for name in sorted(files):
                if SOURCE.search(name):
                    full = os.path.join(base, name)
                    yield os.path.relpath(full, top)


def violations(top):
    found = []
    for path in sources(top):
        room = room_of(path)
        if room is None:
            found.append(f"{path}: not in any room of the layout")
            continue
        text = open(os.path.join(top, path), encoding="utf-8").read()
        for kind, target in INCLUDE.findall(text):
            line = text[:text.find(target)].count("\n") + 1
            where = f"{path}:{line}"
            if kind == "<":
                if room == "core" and target.endswith(CORE_FORBIDDEN):
                    found.append(f"{where}: the core includes <{target}>")
                continue
            if not os.path.exists(os.path.join(top, target)):
                found.append(f"{where}: \"{target}\" is not a path from the "
                             "repository root")
                continue
            to = room_of(target)
            if to != room and to not in ALLOWED[room]:
                found.append(f"{where}: {room} includes {target} ({to}), "
                             "which is not below it")
    return found


def main():
    top = os.path.normpath(os.path.join(os.path.dirname(__file__), ".."))
    found = violations(top)
    for line in found:
        print(line)
    if found:
        print(f"layout: {len(found)} include(s) break the direction of "
              "dependencies (tools/check_layout.py lists the rooms)")
        return 1
    count = sum(1 for _ in sources(top))
    print(f"layout: {count} files, every include points down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
