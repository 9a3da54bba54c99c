#!/bin/sh
# perf script against tracectl perf script on the same perf.data files, side by side.
# The outputs are compared first (they must be identical), then the two commands run
# in alternation RUNS times each and the fastest CPU time (user + system, perf stat's
# task-clock) of each is printed with their ratio, per file, then the minimum ratio.
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

# CPU time in milliseconds of one run of "$@" with stdout to /dev/null.
cpu_ms() {
    perf stat -x, -e task-clock -o "$dir/stat" -- "$@" >/dev/null 2>&1
    awk -F, '$3 == "task-clock" { printf "%.1f\n", $1 }' "$dir/stat"
}

# The smaller of two numbers.
min() {
    if [ -z "$1" ] || [ "$(echo "$2 < $1" | bc -l)" = 1 ]; then echo "$2"; else echo "$1"; fi
}

worst=
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
    i=0
    while [ $i -lt "$RUNS" ]; do
        tp=$(min "$tp" "$(cpu_ms perf script -i "$file")")
        tt=$(min "$tt" "$(cpu_ms "$TRACECTL" perf script -i "$file")")
        i=$((i + 1))
    done
    ratio=$(echo "$tp / $tt" | bc -l)
    worst=$(min "$worst" "$ratio")
    printf '%-16s %9d lines identical  perf script %8.1f ms  tracectl %8.1f ms  ratio %5.1fx\n' \
        "$name" "$lines" "$tp" "$tt" "$ratio"
}

echo "perf $(perf version | cut -d' ' -f3), $(nproc) CPUs, fastest CPU time of $RUNS alternating runs"
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
[ -n "$worst" ] && printf 'minimum ratio %.1fx\n' "$worst"
exit $status
