#!/usr/bin/env bash
# Installs what tracectl's tests and benchmarks compare against (Debian's trace-cmd and
# perf) and what the VM tests boot with (qemu, busybox), builds the LD_PRELOAD library
# trace-cmd records through (scripts/trace-cmd-record), and mounts tracefs when we are
# root and it is missing. Safe to run twice.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
need=()
command -v trace-cmd >/dev/null 2>&1 || need+=(trace-cmd)
command -v perf >/dev/null 2>&1 || need+=(linux-perf)
command -v cc >/dev/null 2>&1 || need+=(gcc libc6-dev)
# The dynamic loader's source lines (perf report --sort srcline) come from glibc's
# detached debug file.
if command -v dpkg >/dev/null 2>&1 && ! dpkg -s libc6-dbg >/dev/null 2>&1; then
    need+=(libc6-dbg)
fi
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
shim=$repo/target/tracecmd-shim.so
if command -v cc >/dev/null 2>&1; then
    if [ ! -f "$shim" ] || [ "$repo/scripts/tracecmd-shim/shim.c" -nt "$shim" ]; then
        mkdir -p "$repo/target"
        cc -shared -fPIC -O2 -Wall -Werror -o "$shim.tmp" "$repo/scripts/tracecmd-shim/shim.c" -ldl
        mv "$shim.tmp" "$shim"
    fi
else
    echo "setup: no C compiler; scripts/trace-cmd-record cannot run (tests that record with trace-cmd will skip)" >&2
fi
