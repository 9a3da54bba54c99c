#!/bin/sh
# perf script against tracectl perf script on the same perf.data files, side by side.
# The outputs are compared first (they must be identical), then the two commands run
# in alternation RUNS times each and the fastest CPU time (user + system, perf stat's
# task-clock) and the fastest wall time of each are printed with their ratios, per
# file, then the minimum ratios. tracectl reads kernel symbols on a second thread, so
# on more than one CPU its wall time is below its CPU time.
#
# Without arguments it records its own corpus: a tracepoint-heavy system-wide
# recording (about a million samples) and a call-chain profile of a shell loop. With
# arguments it times those perf.data files instead (call-chain profiles of any size,
# `-g` or `--call-graph dwarf`):
#     cargo build --release && sh benches/compare-perf-script.sh [FILE.data...]
# Needs root, perf (Debian's linux-perf) and a release build.
# Environment: TRACECTL (default target/release/tracectl), RUNS (default 5),
# SYSCALLS (read/write pairs of the recorded tracepoint workload, default 250000).
set -eu

TRACECTL=${TRACECTL:-target/release/tracectl}
RUNS=${RUNS:-5}
SYSCALLS=${SYSCALLS:-250000}
command -v perf >/dev/null || { echo "perf is not installed" >&2; exit 1; }
[ -x "$TRACECTL" ] || { echo "$TRACECTL not found: cargo build --release first" >&2; exit 1; }
TRACECTL=$(realpath "$TRACECTL")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# CPU and wall time in milliseconds ("CPU WALL") of one run of "$@" with stdout to
# /dev/null.
times_ms() {
    perf stat -e task-clock -o "$dir/stat" -- "$@" >/dev/null 2>&1
    awk '$3 == "task-clock" { cpu = $1 } $3 == "time" && $4 == "elapsed" { wall = $1 * 1000 }
        END { printf "%.1f %.1f\n", cpu, wall }' "$dir/stat"
}

# The smaller of two numbers.
min() {
    if [ -z "$1" ] || [ "$(echo "$2 < $1" | bc -l)" = 1 ]; then echo "$2"; else echo "$1"; fi
}

worst=
worst_wall=
status=0
compare() {
    name=$1
    file=$2
    perf script -i "$file" >"$dir/perf.txt" 2>/dev/null
    "$TRACECTL" perf script -i "$file" >"$dir/tracectl.txt" 2>/dev/null
    lines=$(wc -l <"$dir/perf.txt")
    if ! cmp -s "$dir/perf.txt" "$dir/tracectl.txt"; then
        diff "$dir/perf.txt" "$dir/tracectl.txt" | head -20
        echo "$name: outputs differ ($(diff "$dir/perf.txt" "$dir/tracectl.txt" | grep -c '^<') of $lines lines); not timing" >&2
        return 1
    fi
    rm -f "$dir/perf.txt" "$dir/tracectl.txt"
    tp=
    tt=
    wp=
    wt=
    i=0
    while [ $i -lt "$RUNS" ]; do
        set -- $(times_ms perf script -i "$file")
        tp=$(min "$tp" "$1")
        wp=$(min "$wp" "$2")
        set -- $(times_ms "$TRACECTL" perf script -i "$file")
        tt=$(min "$tt" "$1")
        wt=$(min "$wt" "$2")
        i=$((i + 1))
    done
    ratio=$(echo "$tp / $tt" | bc -l)
    wall_ratio=$(echo "$wp / $wt" | bc -l)
    worst=$(min "$worst" "$ratio")
    worst_wall=$(min "$worst_wall" "$wall_ratio")
    printf '%-16s %9d lines identical  CPU: perf script %8.1f ms  tracectl %8.1f ms  ratio %5.1fx  wall: perf script %8.1f ms  tracectl %8.1f ms  ratio %5.1fx\n' \
        "$name" "$lines" "$tp" "$tt" "$ratio" "$wp" "$wt" "$wall_ratio"
}

echo "perf $(perf version | cut -d' ' -f3), $(nproc) CPUs, fastest CPU and wall time of $RUNS alternating runs"
if [ $# -eq 0 ]; then
    perf record -q -o "$dir/tp.data" -a \
        -e sched:sched_switch,sched:sched_wakeup,sched:sched_waking,raw_syscalls:sys_enter,raw_syscalls:sys_exit \
        -- dd if=/dev/zero of=/dev/null bs=1 count="$SYSCALLS" 2>/dev/null
    perf record -q -o "$dir/cc.data" -F 999 -g -a -- sh -c 'i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done' 2>/dev/null
    compare tracepoints "$dir/tp.data" || status=1
    compare call-chains "$dir/cc.data" || status=1
else
    for f in "$@"; do
        compare "$(basename "$f")" "$f" || status=1
    done
fi
[ -n "$worst" ] && printf 'minimum ratio: CPU %.1fx, wall %.1fx\n' "$worst" "$worst_wall"
exit $status
