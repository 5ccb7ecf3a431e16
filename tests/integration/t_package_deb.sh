# The Debian package (make deb, tools/deb.sh): built from a copy of the
# tree (the repository stays clean), named by configure.ac's version,
# lintian-clean (no error, no warning), and installed with apt on a clean
# Debian 12 (tools/package/root.sh: a debootstrap minbase root, here under
# an overlay in a private mount namespace, so the cached root stays clean
# and nothing leaks).  From the installed paths: memprof --version gives
# the version and the commit, memprof -p reads a process running there
# (a chroot shares the PID namespace), memprof serve runs memprof-serve
# beside it and answers /metrics on loopback; the unit is installed and
# not enabled; /etc/default/memprof-serve holds ARGS.
. "$SRCDIR/tests/integration/lib.sh"

version=$(sed -n 's/^AC_INIT(\[memprof\], \[\([^]]*\)\].*/\1/p' "$SRCDIR/configure.ac")
revision=$(git -C "$SRCDIR" rev-parse --short=12 HEAD)
status_before=$(git -C "$SRCDIR" status --porcelain)

deb=$(bash "$SRCDIR/tools/deb.sh" "$WORK/deb") || die "tools/deb.sh failed"
check "the package is memprof_${version}_$(dpkg --print-architecture).deb" \
    test "$(basename "$deb")" = "memprof_${version}_$(dpkg --print-architecture).deb"
check "debian/changelog's version is configure.ac's" \
    test "$(dpkg-parsechangelog -l "$SRCDIR/debian/changelog" -S Version)" = "$version"
check "so is the generated configure's (autoconf was run)" grep -qx "PACKAGE_VERSION='$version'" "$SRCDIR/configure"
check "and the man page's header's" sh -c "head -1 '$SRCDIR/docs/memprof.1' | grep -qF '\"memprof $version\"'"
check "the repository is left as it was" test "$(git -C "$SRCDIR" status --porcelain)" = "$status_before"
lintian -I "$deb" >"$WORK/lintian" 2>&1
cat "$WORK/lintian" >&2
check "lintian: no error, no warning" sh -c "! grep -Eq '^[EW]: ' '$WORK/lintian'"
check "Depends from shlibs (libdw1, libmicrohttpd12) and misc" \
    sh -c "dpkg-deb -f '$deb' Depends | grep -q libdw1 && dpkg-deb -f '$deb' Depends | grep -q libmicrohttpd12"

# A clean Debian 12: the cached root under an overlay, mounted by a holder
# process in its own mount namespace; every command runs there (nsenter).
ROOTFS=$(bash "$SRCDIR/tools/package/root.sh") || die "tools/package/root.sh failed"
R=$WORK/root
mkdir -p "$R" "$WORK/upper" "$WORK/ovwork" /var/tmp/memprof-package-root/archives/partial
unshare --mount --propagation private sh -c "
    mount -t overlay overlay -o lowerdir=$ROOTFS,upperdir=$WORK/upper,workdir=$WORK/ovwork $R &&
    mount -t proc proc $R/proc &&
    mount --bind /var/tmp/memprof-package-root/archives $R/var/cache/apt/archives &&
    touch $WORK/mounted && exec sleep 3600" &
HOLDER=$!
PIDS+=("$HOLDER")
wait_until 20 "the overlay root to be mounted" test -f "$WORK/mounted"
inside() { nsenter -t "$HOLDER" -m chroot "$R" env TMPDIR=/tmp "$@"; }
on_host() { nsenter -t "$HOLDER" -m "$@"; }

cp "$deb" "$R/tmp/" 2>/dev/null || on_host cp "$deb" "$R/tmp/"
check "apt install ./$(basename "$deb") on a clean Debian 12" \
    inside env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "/tmp/$(basename "$deb")" \
    >"$WORK/apt.log" 2>&1
tail -5 "$WORK/apt.log" >&2

OUT=$(inside memprof --version 2>&1); echo "$OUT" >&2
check "memprof --version: $version and the commit built" \
    test "$OUT" = "memprof $version (revision $revision)"
check "the man pages of both programs, bash completion, docs" \
    inside test -e /usr/share/man/man1/memprof.1.gz -a -e /usr/share/man/man1/memprof-serve.1.gz \
        -a -e /usr/share/bash-completion/completions/memprof -a -e /usr/share/doc/memprof/serve.md.gz
# Completion of the command lines, as bash-completion would load it.
complete_words() {    # complete_words WORD...: what TAB offers after them
    inside bash -c 'source /usr/share/bash-completion/completions/memprof
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _memprof; echo "${COMPREPLY[*]}"' sh "$@"
}
check "bash completion: memprof --ve offers --version" test "$(complete_words memprof --ve)" = --version
check "bash completion: memprof serve --li offers --listen" test "$(complete_words memprof serve --li)" = --listen
check "/etc/default/memprof-serve holds ARGS" inside grep -q '^ARGS=' /etc/default/memprof-serve
check "memprof-serve.service installed, ExecStart /usr/bin/memprof-serve" \
    inside grep -q '^ExecStart=/usr/bin/memprof-serve \$ARGS' /lib/systemd/system/memprof-serve.service
check "the unit is not enabled" \
    sh -c "! ls '$WORK/upper/etc/systemd/system/multi-user.target.wants/memprof-serve.service' 2>/dev/null"
# The installed unit checked by the host's systemd (252, Debian 12's), its
# program the installed one (the root has no systemd of its own).
inside cat /lib/systemd/system/memprof-serve.service |
    sed "s|/usr/bin/memprof-serve|$R/usr/bin/memprof-serve|" >"$WORK/memprof-serve.service"
on_host systemd-analyze verify --man=no "$WORK/memprof-serve.service" >"$WORK/verify" 2>&1; RC=$?
cat "$WORK/verify" >&2
check "systemd-analyze verify: clean" sh -c "[ $RC = 0 ] && [ ! -s '$WORK/verify' ]"

# A process of that Debian (glibc malloc), read from there.
nsenter -t "$HOLDER" -m chroot "$R" sleep 3600 &
TPID=$!
PIDS+=("$TPID")
wait_until 10 "sleep to run in the root" sh -c "[ \"\$(cat /proc/$TPID/comm 2>/dev/null)\" = sleep ]"
inside memprof -p "$TPID" -e info >"$WORK/info" 2>&1; RC=$?
cat "$WORK/info" >&2
check "memprof -p on a process there: info names glibc malloc" \
    sh -c "[ $RC = 0 ] && grep -q '^allocator  *glibc malloc' '$WORK/info'"

nsenter -t "$HOLDER" -m chroot "$R" env TMPDIR=/tmp memprof serve --listen 127.0.0.1:0 --target comm=sleep >"$WORK/serve.out" 2>"$WORK/serve.err" &
PIDS+=($!)
wait_until 20 "memprof serve to listen" grep -q 'listening on 127.0.0.1:' "$WORK/serve.err"
port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$WORK/serve.err")
curl -sf "http://127.0.0.1:$port/metrics" >"$WORK/metrics"; RC=$?
cat "$WORK/metrics" >&2
check "memprof serve (memprof-serve beside memprof): /metrics answers" test "$RC" = 0
check "/metrics: memprof_build_info of this version and commit" \
    grep -qF "memprof_build_info{version=\"$version\",revision=\"$revision\"} 1" "$WORK/metrics"
check "/metrics: the process there is read (memprof_target_up 1)" \
    grep -Eq "^memprof_target_up\{pid=\"$TPID\".*\} 1$" "$WORK/metrics"
