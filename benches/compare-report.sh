#!/bin/sh
# Side by side: `trace-cmd report` and `tracectl report` on a corpus of trace.dat files
# with different event mixes, and the MINIMUM ratio over the corpus.
#
# Without arguments it records six mixes with trace-cmd while a busy workload runs:
#   sched      sched_switch/wakeup heavy (plugin-formatted lines)
#   kmem       kmalloc/kfree/kmem_cache_* dominated (call_site as %pS, gfp flags)
#   syscalls   raw_syscalls plus syscalls:sys_enter/exit_openat and read/write
#   fileio     ext4 extent lookups, filemap, block
#   kernel     timer, workqueue, rcu, irq, softirq
#   everything all of the above and signal, task, net
# With FILE arguments it uses those files instead (a DIR argument stands for every
# DIR/*.dat); benches/report-corpus.sh DIR records two mid-size ones (about 200k and 300k
# events of kmem, syscalls, ext4 and filemap). The speed goal is a minimum ratio over
# small, mid-size and large files alike: give it the six mixes and the mid-size files,
#   benches/compare-report.sh SIXDIR MIDDIR
#
# For each file the two outputs are compared first (the figures only count if they are
# identical), then each tool reports it RUNS times, alternating, output to /dev/null.
# Printed per file: events, the fastest run of each and their ratio, the median of the
# pairwise ratios, and peak RSS. Last line: the minimum fastest-vs-fastest ratio.
#
# Needs root, tracefs, trace-cmd and /usr/bin/time. Expensive: run it on an idle machine.
#   benches/compare-report.sh [FILE|DIR...]
# Environment: RUNS (default 15), LOOPS (workload rounds, default 3), KEEP=1 keeps the
# work dir, TRACE_CMD_HERE (the trace-cmd wrapper used to record), CPU=1 also times
# each tool's CPU (user + system, `perf stat` task-clock) in RUNS more alternating runs:
# when other jobs share the cores, the wall times measure them as much as the tools.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
runs=${RUNS:-15}
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

# A busy workload: file system walks, syscalls, page cache and block I/O, forks.
workload="i=0; while [ \$i -lt ${LOOPS:-3} ]; do ls -lR /usr >/dev/null 2>&1;
    dd if=/dev/zero of=$work/scratch bs=1M count=16 conv=fsync 2>/dev/null;
    cat $work/scratch >/dev/null; rm -f $work/scratch;
    find /usr/share -name '*.gz' -size +4k 2>/dev/null | head -200 | xargs cat >/dev/null 2>&1;
    i=\$((i+1)); done"

record() { # name, events...
    name=$1
    shift
    # trace-cmd leaves its -b buffer size behind: put the old size back afterwards.
    sizefile=""
    for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
        [ -z "$sizefile" ] && [ -w "$d/buffer_size_kb" ] && sizefile=$d/buffer_size_kb
    done
    oldsize=$([ -n "$sizefile" ] && cat "$sizefile" || true)
    echo "recording $name with $recorder..." >&2
    "$recorder" record -b 32768 "$@" -o "$work/$name.dat" -- sh -c "$workload" \
        >/dev/null 2>"$work/record.err" || { cat "$work/record.err" >&2; exit 1; }
    case "$oldsize" in
        # A buffer never used reads "7 (expanded: 1408)": restore the size a trace gets.
        *expanded:*) oldsize=${oldsize##*expanded: }; oldsize=${oldsize%)}
            echo "$oldsize" >"$sizefile" 2>/dev/null || true ;;
        [0-9]*) echo "$oldsize" >"$sizefile" 2>/dev/null || true ;;
    esac
    echo "$work/$name.dat"
}

if [ $# -ge 1 ]; then
    files=""
    for a in "$@"; do
        if [ -d "$a" ]; then
            for f in "$a"/*.dat; do
                [ -f "$f" ] && files="$files
$f"
            done
        else
            files="$files
$a"
        fi
    done
    [ -n "$files" ] || { echo "no .dat files in $*" >&2; exit 1; }
else
    files="$(record sched -e sched)
$(record kmem -e kmem:kmalloc -e kmem:kfree -e kmem:kmem_cache_alloc -e kmem:kmem_cache_free -e kmem:mm_page_alloc -e kmem:mm_page_free)
$(record syscalls -e raw_syscalls -e syscalls:sys_enter_openat -e syscalls:sys_exit_openat -e syscalls:sys_enter_read -e syscalls:sys_exit_read -e syscalls:sys_enter_write -e syscalls:sys_exit_write)
$(record fileio -e ext4 -e filemap -e block)
$(record kernel -e timer -e workqueue -e rcu -e irq)
$(record everything -e sched -e irq -e timer -e kmem -e workqueue -e signal -e syscalls -e block -e ext4 -e filemap -e net -e rcu -e task)"
fi

# One run: wall seconds and peak RSS (KiB) of a command writing to /dev/null. The wall
# time comes from a nanosecond clock read around the run (/usr/bin/time prints only
# hundredths, too coarse for the small files); /usr/bin/time still gives the peak RSS.
once() {
    t0=$(date +%s%N)
    /usr/bin/time -v -o "$work/time.txt" "$@" >/dev/null 2>/dev/null
    t1=$(date +%s%N)
    awk -v ns=$((t1 - t0)) '/Maximum resident set size/ { r = $2 }
         END { printf "%.6f %d\n", ns / 1e9, r }' FS=': ' "$work/time.txt"
}

# One run's CPU time in seconds (task-clock, threads and children included).
cpu_once() {
    perf stat -x, -e task-clock -o "$work/cpu.txt" -- "$@" >/dev/null 2>&1
    awk -F, '/task-clock/ { printf "%.6f\n", $1 / 1000 }' "$work/cpu.txt"
}
cpu=${CPU:-0}
if [ "$cpu" = 1 ] && ! command -v perf >/dev/null; then
    echo "CPU=1 needs perf" >&2
    exit 1
fi

printf '%-14s %9s %9s %9s %8s %8s %10s %10s' file events "tc best" "us best" "best x" "median x" "tc RSS" "us RSS"
[ "$cpu" = 1 ] && printf ' %9s %9s %6s' "tc cpu" "us cpu" "cpu x"
printf '\n'
: >"$work/ratios"
: >"$work/cpu_ratios"
for dat in $files; do
    name=$(basename "$dat" .dat)
    trace-cmd report -i "$dat" >"$work/theirs.txt" 2>/dev/null
    "$tracectl" report -i "$dat" >"$work/ours.txt"
    if ! cmp -s "$work/theirs.txt" "$work/ours.txt"; then
        echo "$name: outputs differ ($(diff "$work/theirs.txt" "$work/ours.txt" | grep -c '^>') lines); not timed" >&2
        echo "differ" >>"$work/ratios"
        continue
    fi
    events=$(tail -n +2 "$work/theirs.txt" | grep -vc '^CPU:[0-9]* \[' || true)
    rm -f "$work/theirs.txt" "$work/ours.txt"
    : >"$work/pairs"
    i=0
    while [ "$i" -lt "$runs" ]; do
        # Alternate which tool goes first, so that neither always meets a warm cache.
        if [ $((i % 2)) = 0 ]; then
            a=$(once trace-cmd report -i "$dat"); b=$(once "$tracectl" report -i "$dat")
        else
            b=$(once "$tracectl" report -i "$dat"); a=$(once trace-cmd report -i "$dat")
        fi
        echo "$a $b" >>"$work/pairs"
        i=$((i + 1))
    done
    awk -v name="$name" -v ev="$events" '
        { ta[NR] = $1; ra = ($2 > ra) ? $2 : ra; tb[NR] = $3; rb = ($4 > rb) ? $4 : rb;
          r[NR] = ($3 > 0) ? $1 / $3 : 0 }
        END {
            ba = ta[1]; bb = tb[1];
            for (i = 2; i <= NR; i++) { if (ta[i] < ba) ba = ta[i]; if (tb[i] < bb) bb = tb[i] }
            n = NR; for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (r[j] < r[i]) { t = r[i]; r[i] = r[j]; r[j] = t }
            med = (n % 2) ? r[(n + 1) / 2] : (r[n / 2] + r[n / 2 + 1]) / 2;
            best = (bb > 0) ? ba / bb : 0;
            printf "%-14s %9d %9.4f %9.4f %8.1f %8.1f %6d KiB %6d KiB", name, ev, ba, bb, best, med, ra, rb;
            print best > "/dev/stderr"
        }' "$work/pairs" 2>>"$work/ratios"
    if [ "$cpu" = 1 ]; then
        : >"$work/cpu_pairs"
        i=0
        while [ "$i" -lt "$runs" ]; do
            if [ $((i % 2)) = 0 ]; then
                a=$(cpu_once trace-cmd report -i "$dat"); b=$(cpu_once "$tracectl" report -i "$dat")
            else
                b=$(cpu_once "$tracectl" report -i "$dat"); a=$(cpu_once trace-cmd report -i "$dat")
            fi
            echo "$a $b" >>"$work/cpu_pairs"
            i=$((i + 1))
        done
        awk 'NR == 1 || $1 < ba { ba = $1 } NR == 1 || $2 < bb { bb = $2 }
             END { best = (bb > 0) ? ba / bb : 0;
                   printf " %9.4f %9.4f %6.1f", ba, bb, best; print best > "/dev/stderr" }' \
            "$work/cpu_pairs" 2>>"$work/cpu_ratios"
    fi
    printf '\n'
done
awk 'BEGIN { min = ""; bad = 0 }
     /differ/ { bad++; next }
     { if (min == "" || $1 < min) min = $1 }
     END {
        if (bad) printf "%d file(s) differ: their ratios do not count\n", bad;
        if (min != "") printf "minimum ratio over the corpus (fastest run vs fastest run): %.1fx\n", min;
     }' "$work/ratios"
[ "$cpu" = 1 ] && awk 'NR == 1 || $1 < min { min = $1 }
     END { if (NR) printf "minimum CPU-time ratio over the corpus (least vs least): %.1fx\n", min }' \
    "$work/cpu_ratios"
exit 0
