#!/bin/sh
# tracectl perf script with and without transparent huge pages, side by side, on the
# same perf.data files: whether the huge-page heap (src/main.rs tune_malloc,
# src/bytes.rs huge_page_buffer) pays for the kernel's clear_page of 2 MiB pages.
# Each file runs RUNS times in alternation, once as is and once with THP disabled
# for the whole process (prctl PR_SET_THP_DISABLE before exec, through a small C
# helper built here); the fastest CPU time (perf stat's task-clock) and the page
# faults of each are printed with the ratio (no THP / THP; above 1 means THP helps).
#     cargo build --release && sh benches/thp-perf-script.sh FILE.data...
# Needs perf, a C compiler and a release build. Environment: TRACECTL, RUNS (7).
set -eu
TRACECTL=${TRACECTL:-target/release/tracectl}
RUNS=${RUNS:-7}
[ -x "$TRACECTL" ] || { echo "$TRACECTL not found: cargo build --release first" >&2; exit 1; }
[ $# -gt 0 ] || { echo "usage: $0 FILE.data..." >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/nothp.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>
int main(int argc, char **argv) {
    const char *off = getenv("NOTHP");
    if (argc < 2) return 2;
    if (off && *off == '1' && prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0) {
        perror("prctl PR_SET_THP_DISABLE");
        return 1;
    }
    execvp(argv[1], argv + 1);
    perror(argv[1]);
    return 1;
}
C
cc -O2 -o "$dir/nothp" "$dir/nothp.c"

# "CPU_MS FAULTS" of one run with NOTHP=$1.
run() {
    NOTHP=$1 perf stat -x, -e task-clock,page-faults -o "$dir/stat" -- \
        "$dir/nothp" "$TRACECTL" perf script -i "$2" >/dev/null 2>&1
    awk -F, '$3 == "task-clock" { cpu = $1 } $3 == "page-faults" { pf = $1 }
        END { printf "%.1f %d\n", cpu, pf }' "$dir/stat"
}

echo "$(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), fastest CPU time of $RUNS alternating runs"
for f in "$@"; do
    best_on=
    best_off=
    i=0
    while [ $i -lt "$RUNS" ]; do
        set -- $(run 0 "$f")
        if [ -z "$best_on" ] || [ "$(echo "$1 < $best_on" | bc -l)" = 1 ]; then best_on=$1; fi
        faults_on=$2
        set -- $(run 1 "$f")
        if [ -z "$best_off" ] || [ "$(echo "$1 < $best_off" | bc -l)" = 1 ]; then best_off=$1; fi
        faults_off=$2
        i=$((i + 1))
    done
    printf '%-20s THP %8.1f ms %6d faults   no THP %8.1f ms %6d faults   ratio %4.2f\n' \
        "$(basename "$f")" "$best_on" "$faults_on" "$best_off" "$faults_off" \
        "$(echo "$best_off / $best_on" | bc -l)"
done
