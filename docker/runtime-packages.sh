#!/bin/sh
# runtime-packages.sh BINARY - print the Debian packages that hold the shared libraries BINARY links, one a line.
#
# Used by the Dockerfile's build stage so the runtime stage installs what the binary loads and nothing else.
# The libraries are found as the dynamic loader finds them, without running the binary (it may be built for
# another architecture): the DT_NEEDED entries of the binary and, in turn, of each library, looked up in the
# multiarch directories of the binary's architecture (/usr/lib/<triplet>, /lib/<triplet>) and then /usr/lib, /lib.
# A library is looked up by its real path (alternatives such as libopenblas.so.0 point into a flavour's directory),
# under both /usr/lib and /lib (bookworm's dpkg database still records some libraries under /lib); a package of
# another architecture (libc6:arm64) is printed by its name alone, as the image of that architecture installs it.
set -eu
binary=$1
# any binutils readelf reads any architecture's ELF; a cross build stage may only have its toolchain's
readelf=$(command -v readelf || ls /usr/bin/*-linux-gnu-readelf 2>/dev/null | head -1)
[ -n "$readelf" ] || { echo "runtime-packages.sh: no readelf" >&2; exit 1; }
machine=$("$readelf" -h "$binary" | sed -n 's/^ *Machine: *//p')
case $machine in
*X86-64*) triplet=x86_64-linux-gnu ;;
AArch64) triplet=aarch64-linux-gnu ;;
*) echo "runtime-packages.sh: no library directory known for machine '$machine'" >&2; exit 1 ;;
esac
needed() { "$readelf" -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'; }

# prints the owner of every library reached from the binary (with repeats)
walk() {
    todo=$(needed "$binary")
    seen=" "
    while [ -n "$todo" ]; do
        set -- $todo
        lib=$1
        shift
        todo="$*"
        case $seen in *" $lib "*) continue ;; esac
        seen="$seen$lib "
        found=
        for dir in /usr/lib/$triplet /lib/$triplet /usr/lib /lib; do
            if [ -e "$dir/$lib" ]; then
                found=$dir/$lib
                break
            fi
        done
        [ -n "$found" ] || { echo "runtime-packages.sh: $lib not found" >&2; return 1; }
        real=$(readlink -f "$found")
        owner=
        for path in "$real" "${real#/usr}" "$found"; do
            owner=$(dpkg -S "$path" 2>/dev/null) && break
        done
        [ -n "$owner" ] || { echo "runtime-packages.sh: no package holds $found" >&2; return 1; }
        echo "${owner%%:*}"
        todo="$todo $(needed "$real")"
    done
}
owners=$(walk)
printf '%s\n' $owners | sort -u
