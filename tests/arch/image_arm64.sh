#!/bin/bash
# image_arm64.sh - what can be proven here of docker/Dockerfile's linux/arm64 image, on an amd64 machine without
# binfmt_misc: its build stage, and the binary it makes against the runtime packages it lists.
#
# Run by `make test-arm64-image` from the repository root, with (all set by tests/arch/suite.mk):
#   DOCKER_ROOT / DOCKER_RUNROOT  containers-storage (vfs) dirs   BASE_TAR  cache of the debootstrapped base
#   PYTHON  interpreter with NumPy   OUT  directory for logs and roots   DEB_CACHE  debootstrap's package cache
# Steps: base image (docker/base-image.sh, as make docker-test) -> buildah bud --platform linux/arm64 --target build
# (the build stage runs on amd64 and cross-compiles) -> its /src/attention-server (an AArch64 ELF) and
# /src/runtime-packages copied out -> a root of the minimal base system and exactly those packages, unpacked
# (debian_root.py: what the runtime stage's apt-get install unpacks onto its base) -> the binary under qemu-aarch64
# -L that root: every library the dynamic loader loads is in the root, and the packages holding them are exactly
# the list -> it reports aarch64 (--version, /metrics) and serves the three lessons.
# Not run here: the runtime stage itself (its apt-get runs arm64 programs: an arm64 machine or binfmt_misc), so the
# arm64 image's configuration, user, health probe and read-only run are not checked (make docker-test checks them
# for amd64, from the same Dockerfile).
set -euo pipefail

: "${DOCKER_ROOT:?}" "${DOCKER_RUNROOT:?}" "${BASE_TAR:?}" "${PYTHON:?}" "${OUT:?}" "${DEB_CACHE:?}"
IMAGE=attention-server-build:arm64 # the build stage only, tagged to be inspected
# The platform the build stage runs on: this machine's. BuildKit sets BUILDPLATFORM itself; Debian's buildah 1.28
# sets TARGETARCH from --platform but not BUILDPLATFORM.
BUILD_PLATFORM=linux/$(dpkg --print-architecture)

. docker/tests/image_steps.sh # store, step, steps_done, fail, base_image, cleanup of $ctr
mkdir -p "$OUT"
OUT=$(realpath "$OUT")

base_image

step "buildah bud --platform linux/arm64 --target build (the build stage on $BUILD_PLATFORM, cross-compiling)"
buildah "${store[@]}" bud --isolation chroot --pull=never --format docker --platform linux/arm64 \
    --build-arg BUILDPLATFORM="$BUILD_PLATFORM" --target build \
    -f docker/Dockerfile --ignorefile docker/Dockerfile.dockerignore -t "$IMAGE" . >"$OUT/build.log" 2>&1 ||
    { tail -30 "$OUT/build.log" >&2; fail "build stage failed (log: $OUT/build.log)"; }
{ grep -E 'STEP [0-9]+/|runtime packages:' "$OUT/build.log" || true; } | sed 's/^/   /' | cut -c1-110
podman "${store[@]}" image prune -f >/dev/null 2>&1 || true

step "the build stage's binary and runtime package list"
ctr=$(buildah "${store[@]}" from --pull-never --name "attention-arm64-test-$$" "$IMAGE")
mnt=$(buildah "${store[@]}" mount "$ctr")
cp "$mnt/src/attention-server" "$OUT/attention-server"
cp "$mnt/src/runtime-packages" "$OUT/runtime-packages"
cleanup
# the stage is a full file system under vfs; what it made is copied out
buildah "${store[@]}" rmi "$IMAGE" >/dev/null
machine=$(readelf -h "$OUT/attention-server" | sed -n 's/^ *Machine: *//p')
echo "   /src/attention-server: ELF for $machine, $(stat -c %s "$OUT/attention-server") bytes"
[ "$machine" = AArch64 ] || fail "the build stage made no AArch64 binary"
[ -s "$OUT/runtime-packages" ] || fail "the build stage listed no runtime package"
echo "   runtime packages:" $(cat "$OUT/runtime-packages")

step "a root of the base system and exactly those packages (debian_root.py)"
root=$OUT/runtime-root
# shellcheck disable=SC2046 # one package a line
"$PYTHON" tests/arch/debian_root.py --arch arm64 --root "$root" --cache "$DEB_CACHE" $(cat "$OUT/runtime-packages")

step "the libraries the dynamic loader loads, in that root (qemu-aarch64, LD_TRACE_LOADED_OBJECTS)"
qemu-aarch64 -L "$root" -E LD_TRACE_LOADED_OBJECTS=1 "$OUT/attention-server" >"$OUT/loaded.txt" 2>&1 || true
"$PYTHON" tests/arch/runtime_libs.py --root "$root" --trace "$OUT/loaded.txt" --packages "$OUT/runtime-packages" ||
    fail "the binary's libraries and the runtime packages differ"

step "the binary serves the lessons from that root (qemu-aarch64)"
server=$OUT/server-arm64
printf '#!/bin/sh\nexec qemu-aarch64 -L %s -U OPENBLAS_CORETYPE %s "$@"\n' "$root" "$OUT/attention-server" >"$server"
chmod +x "$server"
"$PYTHON" tests/arch/check_build_info.py --server "$server" --expect arch=aarch64 --expect simd=generic \
    --expect products=openblas || fail "build info"
"$PYTHON" tests/lessons/run_lessons.py --server "$server" | sed 's/^/   /'
[ "${PIPESTATUS[0]}" = 0 ] || fail "lesson requests"

steps_done "test-arm64-image: build stage, runtime libraries and lessons passed"
