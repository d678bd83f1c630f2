#!/bin/bash
# image_test.sh - build docker/Dockerfile without a Docker engine and prove the image serves the lessons.
#
# Run by `make docker-test` from the repository root, with (all set by docker/suite.mk):
#   IMAGE        tag to build                      DOCKER_ROOT / DOCKER_RUNROOT  containers-storage (vfs) dirs
#   BASE_TAR     cache of the debootstrapped base  PYTHON                        interpreter with NumPy
#   OUT          directory for logs and reports
# Steps: base image (local storage, else cached tarball, else debootstrap) -> buildah bud (chroot isolation, vfs,
# layer cache) -> check the image's config (user, port, health check, stop signal) and libraries -> run its server
# with `buildah run --isolation chroot` on a loopback port -> three lesson requests, health probe, no file written
# -> SIGTERM -> clean drain and exit. Prints the image size and the time of each step.
set -euo pipefail

: "${IMAGE:?}" "${DOCKER_ROOT:?}" "${DOCKER_RUNROOT:?}" "${BASE_TAR:?}" "${PYTHON:?}" "${OUT:?}"
SERVER_START_TIMEOUT=60 # seconds for the first stdout line (cold chroot set-up on a busy 2-CPU machine)
DRAIN_TIMEOUT=30        # seconds for the server to stop after SIGTERM (its --grace is 20)

. docker/tests/image_steps.sh # store, step, steps_done, fail, base_image, cleanup of $ctr and $server_pid
mkdir -p "$OUT"

base_image

step "buildah bud docker/Dockerfile -> $IMAGE"
# --format docker: the OCI image format has no HEALTHCHECK; --pull=never: the FROM must come from local storage.
# No --layers: under vfs every cached step is a full copy of the file system (gigabytes per build); the build
# stage's apt downloads are cached by RUN --mount=type=cache instead, which keeps a warm build short.
buildah "${store[@]}" bud --isolation chroot --pull=never --format docker \
    -f docker/Dockerfile --ignorefile docker/Dockerfile.dockerignore -t "$IMAGE" . >"$OUT/build.log" 2>&1 ||
    { tail -30 "$OUT/build.log" >&2; fail "image build failed (log: $OUT/build.log)"; }
{ grep -E 'STEP [0-9]+/|Using cache' "$OUT/build.log" || true; } | sed 's/^/   /' | cut -c1-110
# the image this build replaced is left untagged, a full copy under vfs: drop it
podman "${store[@]}" image prune -f >/dev/null 2>&1 || true

step "image configuration"
buildah "${store[@]}" inspect --type image "$IMAGE" >"$OUT/inspect.json"
"$PYTHON" - "$OUT/inspect.json" <<'PY'
import json, sys
cfg = json.load(open(sys.argv[1]))["Docker"]["config"]
checks = {
    "non-root numeric USER": cfg.get("User", "").split(":")[0] not in ("", "0", "root")
                             and cfg.get("User", "").split(":")[0].isdigit(),
    "EXPOSE 8080/tcp": "8080/tcp" in (cfg.get("ExposedPorts") or {}),
    "STOPSIGNAL SIGTERM": cfg.get("StopSignal") == "SIGTERM",
    "HEALTHCHECK runs the probe": (cfg.get("Healthcheck") or {}).get("Test")
                                  == ["CMD", "/usr/local/bin/attention-healthcheck"],
    "ENTRYPOINT is the server": cfg.get("Entrypoint") == ["/usr/local/bin/attention-server"],
    "CMD listens on 0.0.0.0:8080": cfg.get("Cmd") == ["--listen", "0.0.0.0:8080"],
    "ATTENTION_LISTEN=0.0.0.0:8080": "ATTENTION_LISTEN=0.0.0.0:8080" in (cfg.get("Env") or []),
}
for name, ok in checks.items():
    print(("   ok   " if ok else "   FAIL ") + name)
sys.exit(0 if all(checks.values()) else 1)
PY
size=$(podman "${store[@]}" image inspect --format '{{.Size}}' "$IMAGE")
base_size=$(podman "${store[@]}" image inspect --format '{{.Size}}' "$base")
awk -v s="$size" -v b="$base_size" -v base="$base" 'BEGIN {
    printf "   image size: %d bytes (%.1f MB); base %s: %.1f MB; added by the runtime stage: %.1f MB\n",
        s, s / 1e6, base, b / 1e6, (s - b) / 1e6 }'
echo "$size" >"$OUT/image-size-bytes"

ctr=$(buildah "${store[@]}" from --pull-never --name "attention-test-$$" "$IMAGE")
run() { buildah "${store[@]}" run --isolation chroot "$@"; }

step "runtime libraries (ldd inside the image)"
run "$ctr" -- ldd /usr/local/bin/attention-server >"$OUT/ldd.txt"
sed 's/^/  /' "$OUT/ldd.txt"
! grep -q 'not found' "$OUT/ldd.txt" || fail "a library the binary needs is missing from the image"
run "$ctr" -- /usr/local/bin/attention-server --version | sed 's/^/   /'
for pkg in gcc make libc6-dev libmicrohttpd-dev libjansson-dev libopenblas-dev curl; do
    if run "$ctr" -- dpkg-query -W -f '${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
        fail "build-only package $pkg is in the runtime image"
    fi
done
echo "   ok   no compiler, -dev package or curl in the runtime image"

step "serve from inside the image (buildah run --isolation chroot, loopback port)"
mnt=$(buildah "${store[@]}" mount "$ctr")
marker=$(realpath "$OUT")/marker
touch "$marker"
sleep 1 # mtime granularity: anything written from now on is newer than the marker
# No network namespace with chroot isolation: the server's port is the host's, so listen on loopback only.
run "$ctr" -- /usr/local/bin/attention-server --listen 127.0.0.1:0 --threads 2 \
    >"$OUT/server.out" 2>"$OUT/server.err" &
runner=$!
for _ in $(seq $((SERVER_START_TIMEOUT * 10))); do
    [ -s "$OUT/server.out" ] && break
    kill -0 "$runner" 2>/dev/null || { cat "$OUT/server.err" >&2; fail "the server exited at start"; }
    sleep 0.1
done
line=$(head -1 "$OUT/server.out")
echo "   $line"
port=$(sed -nE 's|.*listening on http://127\.0\.0\.1:([0-9]+) .*|\1|p' <<<"$line")
[ -n "$port" ] || fail "no port in the server's first line"
server_pid=$(ss -ltnpH "sport = :$port" | sed -nE 's/.*pid=([0-9]+).*/\1/p' | head -1)
[ -n "$server_pid" ] || fail "no process listens on port $port"
uid=$(awk '/^Uid:/ { print $2 }' "/proc/$server_pid/status")
echo "   server pid $server_pid runs as uid $uid, root directory $(readlink "/proc/$server_pid/root")"
[ "$uid" != 0 ] || fail "the server runs as root inside the image"

step "the three lessons through the image's server"
"$PYTHON" docker/tests/lessons.py --url "http://127.0.0.1:$port" | sed 's/^/   /'
[ "${PIPESTATUS[0]}" = 0 ] || fail "lesson requests"

step "HEALTHCHECK probe inside the image"
run --env "ATTENTION_LISTEN=127.0.0.1:$port" "$ctr" -- /usr/local/bin/attention-healthcheck ||
    fail "the health probe says unhealthy while the server runs"
echo "   ok   attention-healthcheck exits 0 against the running server"
free_port=$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
if run --env "ATTENTION_LISTEN=127.0.0.1:$free_port" "$ctr" -- /usr/local/bin/attention-healthcheck 2>/dev/null; then
    fail "the health probe says healthy where nothing listens"
fi
echo "   ok   attention-healthcheck exits non-zero where nothing listens"

step "read-only root: the server wrote no file"
# buildah run itself may create its bind-mount targets (/etc/hosts, /etc/resolv.conf, /run/...); the server may not
# write anywhere else.
written=$(cd "$mnt" && find . -xdev -newer "$marker" -not -type d |
    grep -vE '^\./(etc/(hosts|resolv\.conf|hostname)|run/.*|dev/.*|proc|sys)$' || true)
[ -z "$written" ] || fail "files written inside the image: $written"
echo "   ok   no file in the image's root changed while it served"

step "SIGTERM: drain and exit"
kill -TERM "$server_pid"
for _ in $(seq $((DRAIN_TIMEOUT * 10))); do
    kill -0 "$runner" 2>/dev/null || break
    sleep 0.1
done
kill -0 "$runner" 2>/dev/null && fail "the server did not stop within ${DRAIN_TIMEOUT}s of SIGTERM"
wait "$runner" || fail "buildah run exited with status $? after SIGTERM"
server_pid=
grep -q '"event":"stopped","clean":true' "$OUT/server.err" || fail "no clean stop in the server's log"
echo "   ok   exit status 0, $(grep -c '"path":"/v1/attention"' "$OUT/server.err") requests in its access log, clean stop"

steps_done "docker-test: image $IMAGE, $size bytes, passed"
