# memprof serve's image (dist/Containerfile, tools/package/image.sh): the
# .deb (tools/deb.sh) installed on the Debian 12 base imported from a
# debootstrap root, labelled with configure.ac's version and the commit;
# run by podman as docs/containers.md says (the host's PID namespace and
# network, every capability dropped but the documented ones, no seccomp
# profile), `serve` its arguments as the DaemonSet gives them, it serves a
# host process's /metrics.
. "$SRCDIR/tests/integration/lib.sh"

version=$(sed -n 's/^AC_INIT(\[memprof\], \[\([^]]*\)\].*/\1/p' "$SRCDIR/configure.ac")
revision=$(git -C "$SRCDIR" rev-parse --short=12 HEAD)
deb=$(bash "$SRCDIR/tools/deb.sh" "$WORK/deb") || die "tools/deb.sh failed"
tag=localhost/memprof-test-image:$$
image=$(bash "$SRCDIR/tools/package/image.sh" "$deb" "$tag") || die "tools/package/image.sh failed"
remove_image() { podman rm -f -t 0 "memprof-image-$$" >/dev/null 2>&1; podman image rm -f "$tag" >/dev/null 2>&1; }
CLEANUP_HOOKS+=(remove_image)
label() { podman image inspect --format "{{index .Labels \"org.opencontainers.image.$1\"}}" "$image"; }
check "the image is labelled with configure.ac's version ($version)" test "$(label version)" = "$version"
check "and the commit built ($revision)" test "$(label revision)" = "$revision"

CONF=prof:true start_target known_heap
port=$(free_port)
podman run -d --name "memprof-image-$$" --runtime runc --ulimit nofile=16384:16384 \
    --ulimit nproc=4096:4096 --pid=host --network host --cap-drop=all \
    --cap-add SYS_PTRACE,SYS_ADMIN,DAC_OVERRIDE,SYS_NICE --security-opt seccomp=unconfined \
    "$image" serve --listen "127.0.0.1:$port" --target comm=known_heap >"$WORK/run" 2>&1 ||
    die "podman run failed: $(cat "$WORK/run")"
listening() {
    podman logs "memprof-image-$$" 2>&1 | grep -q "listening on 127.0.0.1:$port" && return 0
    [ "$(podman inspect --format '{{.State.Running}}' "memprof-image-$$")" = true ] ||
        die "the container exited: $(podman logs "memprof-image-$$" 2>&1 | tail -3)"
    return 1
}
wait_until 30 "memprof serve in the container to listen" listening
podman logs "memprof-image-$$" >&2 2>&1
SERVE_URL=http://127.0.0.1:$port
http GET "/metrics?pid=$PID"
check "the host's jemalloc process served from the image: up" \
    sh -c "[ $STATUS = 200 ] && grep -Eq '^memprof_target_up\{pid=\"$PID\".*\} 1$' '$WORK/body'"
check "its jemalloc_allocated_bytes above 100 MB" \
    awk -v pid="$PID" '$1 ~ "^jemalloc_allocated_bytes\\{pid=\"" pid "\"" && $2 > 100e6 { f = 1 } END { exit !f }' "$WORK/body"
check "memprof_build_info: the package's version and commit" \
    grep -qF "memprof_build_info{version=\"$version\",revision=\"$revision\"} 1" "$WORK/body"
untraced() { alive "$PID" && [ "$(tracer_of "$PID")" = 0 ]; }
check "the process lives on, untraced" untraced
