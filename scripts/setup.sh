#!/usr/bin/env bash
# Installs what tracectl's tests and benchmarks compare against (Debian's trace-cmd),
# and mounts tracefs when we are root and it is missing. Safe to run twice.
set -euo pipefail
if ! command -v trace-cmd >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq trace-cmd >/dev/null
    else
        echo "setup: trace-cmd is missing and cannot be installed here (tests that compare with it will skip)" >&2
    fi
fi
if [ "$(id -u)" = 0 ] && [ -d /sys/kernel/tracing ] && ! grep -q ' /sys/kernel/tracing tracefs ' /proc/mounts; then
    mount -t tracefs nodev /sys/kernel/tracing || echo "setup: could not mount tracefs (live tests will skip)" >&2
fi
