#!/usr/bin/env bash
# Boots a Debian stock kernel under qemu (TCG) with a busybox initramfs, runs a guest
# script as /init's payload and copies its results back over the serial console.
#
#   harness.sh KERNEL_META GUEST_SCRIPT OUTDIR [FILE...]
#
# KERNEL_META is a Debian meta package (linux-image-amd64 for 6.1, linux-image-6.12-amd64);
# it is resolved to the current ABI package, downloaded once and cached under
# target/vm-cache. FILEs (e.g. a static tracectl) are copied into the guest's /bin.
# The guest script runs with tracefs mounted at /sys/kernel/tracing; everything it writes
# to /out is copied into OUTDIR. Exit status: the guest script's.
# TRACECTL_VM_SMP sets the guest's CPU count (default 2); TRACECTL_VM_ROOT names a
# directory whose contents are copied into the guest's root (e.g. a program and the
# shared libraries it loads); TRACECTL_VM_APPEND adds to the kernel command line.
set -euo pipefail

meta=$1 guest=$2 outdir=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${TRACECTL_VM_CACHE:-$repo/target/vm-cache}
mkdir -p "$cache" "$outdir"

for tool in qemu-system-x86_64 busybox cpio; do
    command -v "$tool" >/dev/null || { echo "vm: $tool is missing (apt-get install qemu-system-x86 busybox-static cpio)" >&2; exit 3; }
done

# Resolve the meta package to the real kernel package (never hard-code the ABI).
pkg=$(apt-cache depends "$meta" 2>/dev/null | awk '/Depends: linux-image-/{print $2; exit}')
[ -n "$pkg" ] || { echo "vm: cannot resolve $meta (run apt-get update)" >&2; exit 3; }
kdir=$cache/$pkg
if [ ! -f "$kdir/vmlinuz" ]; then
    rm -rf "$kdir.tmp" && mkdir -p "$kdir.tmp"
    (cd "$kdir.tmp" && apt-get download "$pkg" >/dev/null && dpkg -x ./*.deb root && rm -f ./*.deb)
    cp "$kdir.tmp"/root/boot/vmlinuz-* "$kdir.tmp/vmlinuz"
    rm -rf "$kdir.tmp/root" && mv "$kdir.tmp" "$kdir"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,out,etc}
echo guest > "$root/etc/hostname"
cp "$(command -v busybox)" "$root/bin/busybox"
for f in "$@"; do cp "$f" "$root/bin/"; done
if [ -n "${TRACECTL_VM_ROOT:-}" ]; then cp -a "$TRACECTL_VM_ROOT"/. "$root"/; fi
cp "$guest" "$root/guest.sh"
chmod +x "$root/guest.sh"
cat > "$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -t tracefs nodev /sys/kernel/tracing
mount -t tmpfs tmp /tmp
hostname guest
echo "TRACECTL-VM-START"
cd /
sh /guest.sh > /out/guest.log 2>&1
rc=$?
cat /out/guest.log
echo "TRACECTL-VM-OUT-BEGIN"
tar -C /out -cf - . | gzip -1 | base64
echo "TRACECTL-VM-OUT-END"
echo "TRACECTL-VM-EXIT=$rc"
poweroff -f
INIT
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$work/initramfs.cpio.gz"

serial=$work/serial.log
timeout "${TRACECTL_VM_TIMEOUT:-600}" qemu-system-x86_64 -accel tcg,thread=single -m 512M -smp "${TRACECTL_VM_SMP:-2}" \
    -nographic -no-reboot -nic none -kernel "$kdir/vmlinuz" -initrd "$work/initramfs.cpio.gz" \
    -append "console=ttyS0 quiet panic=-1 softlockup_panic=1 sysctl.kernel.panic_on_rcu_stall=1 nokaslr ${TRACECTL_VM_APPEND:-}" \
    </dev/null >"$serial" 2>&1 || true
tr -d '\r' <"$serial" >"$work/serial.txt"
cp "$work/serial.txt" "$outdir/serial.log"
# Kernel messages the console prints in the middle of the stream (`[  12.345] ...`; no
# base64 text holds `[`) are cut out.
sed -n '/^TRACECTL-VM-OUT-BEGIN$/,/^TRACECTL-VM-OUT-END$/p' "$work/serial.txt" | sed '1d;$d' \
    | sed 's/\[ *[0-9]*\.[0-9]*\] .*$//' | base64 -d 2>/dev/null | gzip -dc 2>/dev/null | tar -C "$outdir" -xf - 2>/dev/null || true
rc=$(sed -n 's/^TRACECTL-VM-EXIT=\([0-9]*\)$/\1/p' "$work/serial.txt" | tail -1)
if [ -z "$rc" ]; then
    echo "vm: the guest did not finish; last lines of the console:" >&2
    tail -20 "$work/serial.txt" >&2
    exit 4
fi
exit "$rc"
