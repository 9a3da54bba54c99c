#!/bin/sh
# perf script against tracectl perf script on the same perf.data files, side by side:
# a tracepoint-heavy system-wide recording (about a million samples) and a call-chain
# profile. The outputs are compared first (they must be identical), then each command
# is timed (best of RUNS) and the ratio printed.
#
# Needs root, perf (Debian's linux-perf) and a release build:
#     cargo build --release && sh benches/compare-perf-script.sh
# Environment: TRACECTL (default target/release/tracectl), RUNS (default 3),
# SYSCALLS (read/write pairs of the tracepoint workload, default 250000).
set -eu

TRACECTL=${TRACECTL:-target/release/tracectl}
RUNS=${RUNS:-3}
SYSCALLS=${SYSCALLS:-250000}
command -v perf >/dev/null || { echo "perf is not installed" >&2; exit 1; }
[ -x "$TRACECTL" ] || { echo "$TRACECTL not found: cargo build --release first" >&2; exit 1; }
TRACECTL=$(realpath "$TRACECTL")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# Best wall time in seconds of RUNS runs of "$@" with stdout to /dev/null.
best() {
    b=
    i=0
    while [ $i -lt "$RUNS" ]; do
        s=$(date +%s.%N)
        "$@" >/dev/null 2>&1
        e=$(date +%s.%N)
        t=$(echo "$e - $s" | bc -l)
        if [ -z "$b" ] || [ "$(echo "$t < $b" | bc -l)" = 1 ]; then b=$t; fi
        i=$((i + 1))
    done
    echo "$b"
}

compare() {
    name=$1
    file=$2
    shift 2
    perf script -i "$file" "$@" >"$dir/perf.txt" 2>/dev/null
    "$TRACECTL" perf script -i "$file" "$@" >"$dir/tracectl.txt" 2>/dev/null
    lines=$(wc -l <"$dir/perf.txt")
    if ! cmp -s "$dir/perf.txt" "$dir/tracectl.txt"; then
        diff "$dir/perf.txt" "$dir/tracectl.txt" | head -20
        echo "$name: outputs differ ($(diff "$dir/perf.txt" "$dir/tracectl.txt" | grep -c '^<') of $lines lines); not timing" >&2
        return 1
    fi
    tp=$(best perf script -i "$file" "$@")
    tt=$(best "$TRACECTL" perf script -i "$file" "$@")
    printf '%-12s %9d lines identical  perf script %7.3fs  tracectl %7.3fs  ratio %5.1fx\n' \
        "$name" "$lines" "$tp" "$tt" "$(echo "$tp / $tt" | bc -l)"
}

perf record -q -o "$dir/tp.data" -a \
    -e sched:sched_switch,sched:sched_wakeup,sched:sched_waking,raw_syscalls:sys_enter,raw_syscalls:sys_exit \
    -- dd if=/dev/zero of=/dev/null bs=1 count="$SYSCALLS" 2>/dev/null
perf record -q -o "$dir/cc.data" -F 999 -g -a -- sh -c 'i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done' 2>/dev/null

echo "perf $(perf version | cut -d' ' -f3), $(nproc) CPUs, best of $RUNS"
compare tracepoints "$dir/tp.data"
compare call-chains "$dir/cc.data"
