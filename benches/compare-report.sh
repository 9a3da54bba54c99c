#!/bin/sh
# Side by side: `trace-cmd report` and `tracectl report` on the same large trace.dat.
#
# Records a trace with trace-cmd (sched, irq, timer, kmem, workqueue, signal, syscalls,
# block, ext4, filemap, net, rcu ... while a busy workload runs LOOPS times; warns when
# the file holds fewer than MIN_EVENTS events), then reports it RUNS times with each tool and prints, for each,
# the best wall time, events per second, the peak RSS (/usr/bin/time -v), and the ratio.
# The two outputs are compared first: the figures only count if they are identical.
#
# Needs root, tracefs, trace-cmd and /usr/bin/time. Expensive: run it on an idle machine.
#   benches/compare-report.sh [FILE]     # FILE: reuse an existing trace.dat instead
# Environment: MIN_EVENTS (default 2000000), RUNS (default 3), LOOPS (workload rounds,
# default 6), KEEP=1 keeps the work dir.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
min_events=${MIN_EVENTS:-2000000}
runs=${RUNS:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/compare-report.XXXXXX")
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT

# trace-cmd through the project's LD_PRELOAD library (scripts/setup.sh builds it), which
# lets it record where the function-tracer files refuse opens.
recorder=$here/scripts/trace-cmd-record
[ -f "$here/target/tracecmd-shim.so" ] || recorder=trace-cmd
command -v trace-cmd >/dev/null || { echo "trace-cmd is not installed" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time is missing (apt-get install time)" >&2; exit 1; }

echo "building tracectl (release)..."
(cd "$here" && cargo build --release --quiet --bin tracectl)
tracectl=$here/target/release/tracectl

if [ $# -ge 1 ]; then
    dat=$1
else
    dat=$work/big.dat
    # A busy workload: file system walks, syscalls, page cache and block I/O, forks.
    workload="i=0; while [ \$i -lt \${LOOPS:-6} ]; do ls -lR /usr >/dev/null 2>&1;
        dd if=/dev/zero of=$work/scratch bs=1M count=16 conv=fsync 2>/dev/null;
        cat $work/scratch >/dev/null; rm -f $work/scratch; i=\$((i+1)); done"
    # trace-cmd leaves its -b buffer size behind: put the old size back afterwards.
    sizefile=""
    for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
        [ -z "$sizefile" ] && [ -w "$d/buffer_size_kb" ] && sizefile=$d/buffer_size_kb
    done
    oldsize=$([ -n "$sizefile" ] && cat "$sizefile" || true)
    echo "recording with $recorder (buffer 64 MiB per CPU)..."
    "$recorder" record -b 65536 -e sched -e irq -e timer -e kmem -e workqueue -e signal \
        -e syscalls -e block -e ext4 -e filemap -e net -e rcu -e task \
        -o "$dat" -- sh -c "$workload" >/dev/null 2>"$work/record.err" || {
        cat "$work/record.err" >&2; exit 1; }
    case "$oldsize" in
        [0-9]*) echo "$oldsize" >"$sizefile" 2>/dev/null || true ;;
    esac
fi

events=$(trace-cmd report -i "$dat" 2>/dev/null | tail -n +2 | grep -vc '^CPU:[0-9]* \[' || true)
size=$(stat -c %s "$dat")
echo "file: $dat ($size bytes, $events events)"
if [ "$events" -lt "$min_events" ]; then
    echo "warning: fewer than $min_events events; figures are less telling" >&2
fi

echo "comparing outputs..."
trace-cmd report -i "$dat" >"$work/theirs.txt" 2>/dev/null
"$tracectl" report -i "$dat" >"$work/ours.txt"
total=$(wc -l <"$work/theirs.txt")
diffs=$(diff "$work/theirs.txt" "$work/ours.txt" | grep -c '^>' || true)
echo "lines: $total, differing: $diffs"
rm -f "$work/theirs.txt" "$work/ours.txt"

# best-of-RUNS wall seconds and max RSS (KiB) of a command writing to /dev/null
measure() {
    best=""
    rss=0
    i=0
    while [ $i -lt "$runs" ]; do
        /usr/bin/time -v -o "$work/time.txt" "$@" >/dev/null 2>/dev/null
        t=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0;
                 for (k = 1; k <= n; k++) s = s * 60 + p[k]; print s }' "$work/time.txt")
        r=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$work/time.txt")
        if [ -z "$best" ] || awk "BEGIN { exit !($t < $best) }"; then best=$t; fi
        [ "$r" -gt "$rss" ] && rss=$r
        i=$((i + 1))
    done
    echo "$best $rss"
}

set -- $(measure trace-cmd report -i "$dat")
tc_t=$1 tc_rss=$2
set -- $(measure "$tracectl" report -i "$dat")
us_t=$1 us_rss=$2

awk -v ev="$events" -v a="$tc_t" -v b="$us_t" -v ra="$tc_rss" -v rb="$us_rss" -v runs="$runs" 'BEGIN {
    ea = (a > 0) ? ev / a : 0; eb = (b > 0) ? ev / b : 0;
    printf "best of %d runs, output to /dev/null\n", runs;
    printf "%-10s %10s %14s %12s\n", "tool", "seconds", "events/s", "peak RSS";
    printf "%-10s %10.2f %14.0f %9d KiB\n", "trace-cmd", a, ea, ra;
    printf "%-10s %10.2f %14.0f %9d KiB\n", "tracectl", b, eb, rb;
    if (b > 0) printf "ratio: tracectl events/s = %.1fx trace-cmd, peak RSS = %.2fx trace-cmd\n", a / b, rb / ra;
}'
