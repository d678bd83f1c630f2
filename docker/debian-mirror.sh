#!/bin/bash
# debian-mirror.sh SUITE ARCHIVE - print the mirror this machine's apt uses for SUITE (e.g. bookworm,
# bookworm-security) of ARCHIVE (the last part of the URI: "debian" or "debian-security"), or nothing.
#
# The first deb URI of /etc/apt/sources.list* (one-line or deb822 format) that serves SUITE from .../ARCHIVE.
# Used by base-image.sh (the base image) and tests/arch (the arm64 roots), so that nothing names a mirror.
set -euo pipefail
want=$1
archive=$2
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    if [ -r "$f" ]; then cat "$f" && echo; fi
done | awk -v want="$want" -v arch="$archive" '
    function ok(uri) { sub(/\/+$/, "", uri); n = split(uri, p, "/"); return p[n] == arch }
    /^[[:space:]]*#/ { next }
    /^deb[[:space:]]/ { line = $0; sub(/\[[^]]*\]/, "", line); split(line, t, /[[:space:]]+/)
                        if (t[3] == want && ok(t[2])) { print t[2]; exit } next }
    /^URIs:/   { uris = $0; sub(/^URIs:[[:space:]]*/, "", uris) }
    /^Suites:/ { suites = " " $0 " " }
    /^Types:/  { types = $0 }
    /^[[:space:]]*$/ { if (types ~ /[[:space:]]deb([[:space:]]|$)/ && index(suites, " " want " ")) {
                         split(uris, u, /[[:space:]]+/); if (ok(u[1])) { print u[1]; exit } }
                       uris = suites = types = "" }'
