#!/bin/sh
# Side by side: the slowdown of a workload under `perf record -F 999 -g` and under
# `tracectl perf record -F 999 -g`, and under `perf stat` and `tracectl perf stat` with
# the same events (issue 13, section 4).
#
# The workload is a fixed amount of work (not a fixed time), built here from C with frame
# pointers: ITERS rounds of arithmetic in a hot function with a 64 KiB read(2) of
# /dev/zero every 8 rounds, in PROCS processes at once (default: one per CPU). Each
# configuration (alone, under perf, under tracectl) runs RUNS times. The workload times
# itself (from its start to the end of its last process): the best of those times is its
# slowdown against the bare run, and the ratio of the two slowdowns is printed
# (tracectl / perf: 1.00 means the same cost, below 1 means cheaper). The recorders'
# whole wall time (their start-up and the writing of the file included) is printed too.
# Both recorders' files are checked with `perf report` before the figures are printed.
#
# Needs root, perf (linux-perf) and a C compiler. Run it on an idle machine.
#   benches/compare-perf-record.sh
# Environment: ITERS (default 20000), PROCS (default: online CPUs), RUNS (default 5),
# KEEP=1 keeps the work dir.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
iters=${ITERS:-20000}
procs=${PROCS:-$(nproc)}
runs=${RUNS:-5}
work=$(mktemp -d "${TMPDIR:-/tmp}/compare-perf-record.XXXXXX")
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT

command -v perf >/dev/null || { echo "perf is not installed (apt-get install linux-perf)" >&2; exit 1; }
command -v cc >/dev/null || { echo "no C compiler (cc)" >&2; exit 1; }

echo "building tracectl (release)..."
(cd "$here" && cargo build --release --quiet --bin tracectl)
tracectl=$here/target/release/tracectl

cat >"$work/work.c" <<'C'
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static char buf[65536];
static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}
__attribute__((noinline)) unsigned long hot(long iters, int fd) {
    volatile unsigned long x = 0;
    for (long r = 1; r <= iters; r++) {
        for (int i = 0; i < 20000; i++)
            x = x * 6364136223846793005UL + i;
        if (r % 8 == 0 && read(fd, buf, sizeof buf) < 0)
            return 0;
    }
    return x;
}
__attribute__((noinline)) unsigned long caller(long iters) {
    return hot(iters, open("/dev/zero", O_RDONLY));
}
int main(int argc, char **argv) {
    long iters = atol(argv[1]);
    int procs = atoi(argv[2]);
    long long t0 = now_ns();
    for (int p = 0; p < procs; p++)
        if (fork() == 0)
            _exit((int)(caller(iters) & 0));
    while (wait(NULL) > 0)
        ;
    printf("%lld\n", (now_ns() - t0) / 1000000);
    return 0;
}
C
cc -O1 -fno-omit-frame-pointer -fno-inline -o "$work/work" "$work/work.c"

now() { date +%s%N; }
# best_of CMD...: "W T": the best of RUNS runs of the workload's own time W and of the
# whole command's wall time T, in milliseconds.
best_of() {
    bw=""
    bt=""
    i=0
    while [ $i -lt "$runs" ]; do
        t0=$(now)
        "$@" >"$work/out" 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
        t1=$(now)
        t=$(( (t1 - t0) / 1000000 ))
        w=$(tail -n 1 "$work/out")
        if [ -z "$bw" ] || [ "$w" -lt "$bw" ]; then bw=$w; fi
        if [ -z "$bt" ] || [ "$t" -lt "$bt" ]; then bt=$t; fi
        i=$((i + 1))
    done
    echo "$bw $bt"
}

echo "workload: $procs process(es) x $iters rounds; best of $runs runs each"
base=$(best_of "$work/work" "$iters" "$procs")
perf_ms=$(best_of perf record -q -F 999 -g -o "$work/perf.data" -- "$work/work" "$iters" "$procs")
ours_ms=$(best_of "$tracectl" perf record -F 999 -g -o "$work/tracectl.data" -- "$work/work" "$iters" "$procs")
stat_events=task-clock,context-switches,page-faults,syscalls:sys_enter_read
perf_stat_ms=$(best_of perf stat -e "$stat_events" -- "$work/work" "$iters" "$procs")
ours_stat_ms=$(best_of "$tracectl" perf stat -e "$stat_events" -- "$work/work" "$iters" "$procs")

for f in perf tracectl; do
    if ! perf report --stdio -i "$work/$f.data" >/dev/null 2>"$work/report.err" \
        || [ -s "$work/report.err" ]; then
        echo "perf report on the $f file failed or warned:" >&2
        cat "$work/report.err" >&2
        exit 1
    fi
done
samples() { perf script -i "$1" 2>/dev/null | grep -c 'cpu-clock' || true; }

set -- $base; bw=$1; bt=$2
set -- $perf_ms; pw=$1; pt=$2
set -- $ours_ms; ow=$1; ot=$2
set -- $perf_stat_ms; sw=$1; st=$2
set -- $ours_stat_ms; qw=$1; qt=$2
awk -v bw="$bw" -v bt="$bt" -v pw="$pw" -v pt="$pt" -v ow="$ow" -v ot="$ot" \
    -v sw="$sw" -v st="$st" -v qw="$qw" -v qt="$qt" \
    -v ps="$(samples "$work/perf.data")" -v os="$(samples "$work/tracectl.data")" 'BEGIN {
    printf "%-32s %12s %9s %13s %8s\n", "", "workload ms", "slowdown", "total wall ms", "samples"
    printf "%-32s %12d %9s %13d %8s\n", "workload alone", bw, "1.000", bt, "-"
    printf "%-32s %12d %9.3f %13d %8d\n", "perf record -F 999 -g", pw, pw / bw, pt, ps
    printf "%-32s %12d %9.3f %13d %8d\n", "tracectl perf record -F 999 -g", ow, ow / bw, ot, os
    printf "ratio of workload slowdowns (tracectl / perf): %.3f\n", (ow / bw) / (pw / bw)
    printf "ratio of total wall times (tracectl / perf): %.3f\n", ot / pt
    printf "%-32s %12d %9.3f %13d %8s\n", "perf stat (4 events)", sw, sw / bw, st, "-"
    printf "%-32s %12d %9.3f %13d %8s\n", "tracectl perf stat (4 events)", qw, qw / bw, qt, "-"
    printf "perf stat: ratio of workload slowdowns (tracectl / perf): %.3f\n", (qw / bw) / (sw / bw)
}'
