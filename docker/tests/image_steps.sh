# image_steps.sh - what the image tests share (docker/tests/image_test.sh, tests/arch/image_arm64.sh): the
# containers-storage flags, each step's time, a failure's words, the base image and the cleanup at exit. Sourced,
# from the repository root, after DOCKER_ROOT and DOCKER_RUNROOT are checked.

store=(--root "$DOCKER_ROOT" --runroot "$DOCKER_RUNROOT" --storage-driver vfs)
t_start=$(date +%s)
step_start=$t_start
step() { # print how long the previous step took, then the next step's name
    local now
    now=$(date +%s)
    printf '   (%ss)\n== %s\n' $((now - step_start)) "$1"
    step_start=$now
}
steps_done() { # print how long the last step took, then "$1 in <total>s"
    local now
    now=$(date +%s)
    printf '   (%ss)\n' $((now - step_start))
    echo "$1 in $((now - t_start))s"
}
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
base_image() { # the first FROM's image of docker/Dockerfile (after its --platform flag), into local storage;
    # sets $base to its name for the caller (image_test.sh reports its size)
    echo "== base image"
    base=$(awk 'toupper($1) == "FROM" { for (i = 2; i <= NF; i++) if ($i !~ /^--/) { print $i; exit } }' docker/Dockerfile)
    docker/base-image.sh "$base" "$BASE_TAR" "${store[@]}"
}

# What a test holds that outlives it unless stopped: the working container it set in $ctr (unmounted, removed)
# and the server it set in $server_pid (killed). Run at exit, and by a test that is done with them early.
ctr=
server_pid=
cleanup() {
    [ -n "$server_pid" ] && kill -KILL "$server_pid" 2>/dev/null || true
    if [ -n "$ctr" ]; then
        buildah "${store[@]}" umount "$ctr" >/dev/null 2>&1 || true
        buildah "${store[@]}" rm "$ctr" >/dev/null 2>&1 || true
    fi
    ctr=
    server_pid=
}
trap cleanup EXIT
trap 'exit 143' TERM INT # so that `timeout` still runs the cleanup
