#!/bin/sh
# runtime-packages.sh BINARY - print the Debian packages that hold the shared libraries BINARY links, one a line.
#
# Used by the Dockerfile's build stage so the runtime stage installs what `ldd` needs and nothing else.
# A library is looked up by its real path (alternatives such as libopenblas.so.0 point into a flavour's directory),
# under both /usr/lib and /lib (bookworm's dpkg database still records some libraries under /lib).
set -eu
ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | while read -r lib; do
    real=$(readlink -f "$lib")
    for path in "$real" "${real#/usr}" "$lib"; do
        if owner=$(dpkg -S "$path" 2>/dev/null); then
            echo "${owner%%:*}"
            continue 2
        fi
    done
    echo "runtime-packages.sh: no package holds $lib" >&2
    exit 1
done | sort -u
