#!/bin/busybox sh
# tools/arm64/init.sh - /init of the arm64 lane's initramfs (guest.sh):
# loads the 9p and virtio-pci modules, mounts the host's directories over
# 9p (the root; the build at its host path, read from /mnt/io/buildpath;
# io on /mnt/io), runs /mnt/io/cmd as root in that root with bash, in the
# build's directory,
# writes its exit status to /mnt/io/status and powers off.
/bin/busybox --install -s /bin
hostname memprof-arm64
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
fail() { echo "arm64 init: $*"; poweroff -f; }
while read -r m; do insmod "/modules/$m.ko" || fail "insmod $m failed"; done </modules/order
# msize: larger 9p messages, fewer round trips; cache=loose for the root
# and the build (nothing changes them on the host while the guest runs).
o=trans=virtio,version=9p2000.L,msize=512000
mount -t 9p -o $o,cache=loose root /newroot || fail "mounting the root over 9p failed"
mkdir -p /newroot/mnt/io
mount -t 9p -o $o io /newroot/mnt/io || fail "mounting io over 9p failed"
mount -t proc proc /newroot/proc
mount -t sysfs sys /newroot/sys
mount -t devtmpfs dev /newroot/dev
mkdir -p /newroot/dev/pts /newroot/dev/shm
mount -t devpts devpts /newroot/dev/pts
mount -t tmpfs shm /newroot/dev/shm
mount -t tmpfs tmp /newroot/tmp
mount -t tmpfs vartmp /newroot/var/tmp
# The build at the path it has on the host, where its debug information
# says its sources are.
build=$(cat /newroot/mnt/io/buildpath)
mkdir -p "/newroot$build"
mount -t 9p -o $o,cache=loose build "/newroot$build" || fail "mounting the build over 9p failed"
cut -d' ' -f1 /proc/uptime >/newroot/mnt/io/boot
chroot /newroot /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/usr/sbin HOME=/root TERM=dumb LANG=C.UTF-8 \
    /bin/bash -c 'cd "$1" && . /mnt/io/cmd' _ "$build" </dev/console >/dev/console 2>&1
echo $? >/newroot/mnt/io/status
sync
umount /newroot/mnt/io
poweroff -f
