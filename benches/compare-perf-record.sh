#!/bin/sh
# Side by side: the slowdown of a workload under `perf record -F 999 -g` and under
# `tracectl perf record -F 999 -g` (issue 13, section 4).
#
# The workload is a fixed amount of work (not a fixed time), built here from C with frame
# pointers: ITERS rounds of arithmetic in a hot function with a 64 KiB read(2) of
# /dev/zero every 8 rounds, in PROCS processes at once (default: one per CPU). Each
# configuration (alone, under perf, under tracectl) runs RUNS times; the best wall time
# of each is printed with its slowdown against the bare run, and the ratio of the two
# slowdowns (tracectl / perf: 1.00 means the same cost, below 1 means cheaper).
# Both recorders' files are checked with `perf report` before the figures are printed.
#
# Needs root, perf (linux-perf) and a C compiler. Run it on an idle machine.
#   benches/compare-perf-record.sh
# Environment: ITERS (default 3000), PROCS (default: online CPUs), RUNS (default 5),
# KEEP=1 keeps the work dir.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
iters=${ITERS:-3000}
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
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static char buf[65536];
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
    for (int p = 0; p < procs; p++)
        if (fork() == 0)
            _exit((int)(caller(iters) & 0));
    while (wait(NULL) > 0)
        ;
    return 0;
}
C
cc -O1 -fno-omit-frame-pointer -fno-inline -o "$work/work" "$work/work.c"

now() { date +%s%N; }
# best_of CMD...: the best wall time of RUNS runs, in milliseconds.
best_of() {
    best=""
    i=0
    while [ $i -lt "$runs" ]; do
        t0=$(now)
        "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
        t1=$(now)
        ms=$(( (t1 - t0) / 1000000 ))
        if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
        i=$((i + 1))
    done
    echo "$best"
}

echo "workload: $procs process(es) x $iters rounds; best of $runs runs each"
base=$(best_of "$work/work" "$iters" "$procs")
perf_ms=$(best_of perf record -q -F 999 -g -o "$work/perf.data" -- "$work/work" "$iters" "$procs")
ours_ms=$(best_of "$tracectl" perf record -F 999 -g -o "$work/tracectl.data" -- "$work/work" "$iters" "$procs")

for f in perf tracectl; do
    if ! perf report --stdio -i "$work/$f.data" >/dev/null 2>"$work/report.err" \
        || [ -s "$work/report.err" ]; then
        echo "perf report on the $f file failed or warned:" >&2
        cat "$work/report.err" >&2
        exit 1
    fi
done
samples() { perf script -i "$1" 2>/dev/null | grep -c 'cpu-clock' || true; }

awk -v b="$base" -v p="$perf_ms" -v o="$ours_ms" \
    -v ps="$(samples "$work/perf.data")" -v os="$(samples "$work/tracectl.data")" 'BEGIN {
    printf "%-36s %9s %9s %9s\n", "", "wall ms", "slowdown", "samples"
    printf "%-36s %9d %9s %9s\n", "workload alone", b, "1.000", "-"
    printf "%-36s %9d %9.3f %9d\n", "perf record -F 999 -g", p, p / b, ps
    printf "%-36s %9d %9.3f %9d\n", "tracectl perf record -F 999 -g", o, o / b, os
    printf "ratio of slowdowns (tracectl / perf): %.3f\n", (o / b) / (p / b)
}'
