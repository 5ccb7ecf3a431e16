#!/usr/bin/env bash
# tools/arm64/guest.sh [-t SECONDS] [-b BUILD_DIR] COMMAND... - runs one
# shell command as root in an emulated arm64 machine and exits with its
# status.  qemu-system-aarch64 (TCG: -M virt, -cpu max,pauth-impdef=on,
# 1 vCPU, 2 GiB, no NIC) boots Debian's arm64 vmlinuz directly with a small
# initramfs (busybox; init.sh) that loads the 9p and virtio-pci modules of
# that kernel and mounts over 9p: $SYSROOT as the root, BUILD_DIR (default
# $ARM64_DIR/build) at its own path (the command runs there), and a host
# directory on /mnt/io where the command's exit status is written.  The
# command's output goes to the serial console, i.e. this script's stdout.
# The whole run is bounded by SECONDS (default 900): past it qemu is killed
# and the status is 124.
# MEMPROF_ARM64_BOOT_LOG=FILE keeps the kernel's messages; MEMPROF_ARM64_CPU
# replaces the -cpu model (plain max: PAC emulated the costly way).
. "$(dirname "$0")/common.sh"
limit=900 build=$ARM64_DIR/build
while getopts t:b: o; do
    case $o in t) limit=$OPTARG ;; b) build=$OPTARG ;; *) exit 2 ;; esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || die "usage: guest.sh [-t SECONDS] [-b BUILD_DIR] COMMAND..."
[ -f "$ARM64_DIR/stamp.kernel" ] || die "no arm64 kernel in $ARM64_DIR: run tools/arm64/sysroot.sh first"
mkdir -p "$build"
command -v qemu-system-aarch64 >/dev/null || die "qemu-system-aarch64 missing: run tools/arm64/sysroot.sh (installs qemu-system-arm)"

kdir=$ARM64_DIR/kernel
vmlinuz=$(ls "$kdir"/boot/vmlinuz-* | head -1)
kver=${vmlinuz##*/vmlinuz-}
initrd=$ARM64_DIR/initrd-$kver.gz

# A module's dependencies, from its .modinfo (no depmod output is shipped).
mod_path() { find "$kdir/lib/modules/$kver/kernel" -name "$1.ko" | head -1; }
mod_deps() { tr '\0' '\n' <"$(mod_path "$1")" | sed -n 's/^depends=//p' | tr ',' ' '; }
load_order() {    # MODULE...: them and their dependencies, dependencies first
    local m
    for m in "$@"; do
        case " $seen " in *" $m "*) continue ;; esac
        seen+=" $m"
        # shellcheck disable=SC2046
        load_order $(mod_deps "$m")
        order+=("$m")
    done
}

if [ ! -f "$initrd" ] || [ "$initrd" -ot "$REPO/tools/arm64/init.sh" ]; then
    log "making the initramfs for $kver"
    tmp=$(mktemp -d); seen= order=()
    load_order virtio_pci 9pnet_virtio 9p
    mkdir -p "$tmp"/{bin,modules,proc,sys,dev,newroot}
    cp "$kdir/bin/busybox" "$tmp/bin/busybox"
    for m in "${order[@]}"; do cp "$(mod_path "$m")" "$tmp/modules/$m.ko"; done
    printf '%s\n' "${order[@]}" >"$tmp/modules/order"
    cp "$REPO/tools/arm64/init.sh" "$tmp/init"; chmod +x "$tmp/init"
    (cd "$tmp" && find . | cpio -o -H newc --quiet | gzip -1) >"$initrd.tmp" && mv "$initrd.tmp" "$initrd"
    rm -rf "$tmp"
fi

io=$(mktemp -d "$ARM64_DIR/io.XXXXXX")
trap 'rm -rf "$io"' EXIT
printf '%s\n' "$*" >"$io/cmd"
build=$(cd "$build" && pwd -P)
echo "$build" >"$io/buildpath"
quiet=" quiet loglevel=3"
[ -n "${MEMPROF_ARM64_BOOT_LOG:-}" ] && quiet=
start=$(date +%s.%N)
# -serial stdio: the console (init.sh's and the command's output) is our
# stdout, its CR LF line ends made LF; the kernel's own messages are left
# out (quiet), or go to the boot log only.
set +e    # the pipeline's status is qemu's (grep's is 1 on no output)
timeout --kill-after=10 "$limit" qemu-system-aarch64 \
    -M virt -cpu ${MEMPROF_ARM64_CPU:-max,pauth-impdef=on} -smp 1 -m 2G -nic none \
    -display none -monitor none -serial stdio -no-reboot \
    -kernel "$vmlinuz" -initrd "$initrd" \
    -append "console=ttyAMA0 panic=-1 rdinit=/init$quiet" \
    -fsdev local,id=root,path="$SYSROOT",security_model=passthrough -device virtio-9p-pci,fsdev=root,mount_tag=root \
    -fsdev local,id=build,path="$build",security_model=passthrough -device virtio-9p-pci,fsdev=build,mount_tag=build \
    -fsdev local,id=io,path="$io",security_model=passthrough -device virtio-9p-pci,fsdev=io,mount_tag=io \
    </dev/null | sed -u 's/\r$//' | tee ${MEMPROF_ARM64_BOOT_LOG:+"$MEMPROF_ARM64_BOOT_LOG"} |
    grep --line-buffered -av '^\[ *[0-9.]*\] '
qrc=${PIPESTATUS[0]}
set -e
wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
    echo "arm64 guest: timed out after $limit s (killed)" >&2; exit 124
fi
[ -f "$io/status" ] || die "the guest ended without the command's status (qemu exit $qrc): see the console above; MEMPROF_ARM64_BOOT_LOG=FILE keeps the kernel's messages"
echo "arm64 guest: boot $(cat "$io/boot" 2>/dev/null || echo '?') s (guest uptime at the command), whole run $wall s, status $(cat "$io/status")" >&2
exit "$(cat "$io/status")"
