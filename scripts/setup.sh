#!/usr/bin/env bash
# Installs what tracectl's tests and benchmarks compare against (Debian's trace-cmd and perf) and
# what the VM tests boot with (qemu, busybox), and mounts tracefs when we are root and it is
# missing. Safe to run twice.
set -euo pipefail
need=()
command -v trace-cmd >/dev/null 2>&1 || need+=(trace-cmd)
command -v perf >/dev/null 2>&1 || need+=(linux-perf)
if [ "${TRACECTL_VM:-0}" = 1 ]; then
    command -v qemu-system-x86_64 >/dev/null 2>&1 || need+=(qemu-system-x86)
    [ -x /bin/busybox ] || need+=(busybox-static)
    command -v cpio >/dev/null 2>&1 || need+=(cpio)
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    # The VM harness resolves kernels with apt-cache, which needs fresh lists.
    apt-get update -qq
    if [ ${#need[@]} -gt 0 ]; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
    fi
elif [ ${#need[@]} -gt 0 ]; then
    echo "setup: missing ${need[*]} and cannot install as non-root (tests that need them will skip)" >&2
fi
if [ "$(id -u)" = 0 ] && [ -d /sys/kernel/tracing ] && ! grep -q ' /sys/kernel/tracing tracefs ' /proc/mounts; then
    mount -t tracefs nodev /sys/kernel/tracing || echo "setup: could not mount tracefs (live tests will skip)" >&2
fi
