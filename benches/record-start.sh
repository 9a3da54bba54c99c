#!/bin/sh
# Side by side: how long after its invocation `tracectl record` starts the traced command,
# against `trace-cmd record` with the same events (issue 14, section 5: the command should
# start within 30 ms; the kernel's symbols and the formats are read while it runs).
#
# The traced command is `date +%s%N`: it prints the time it ran, and the invocation's time
# is taken just before the recorder is started, so the difference is the recorder's
# start-up (process start, tracefs set-up, arming) plus date's own exec. Each side runs RUNS
# times, alternating; the fastest and the median start-up of each are printed, with the
# ratios (trace-cmd / tracectl: above 1 means tracectl starts the command sooner). The whole
# wall time of each recording (tear-down and writing the file included) is compared the same
# way: the ratio of the fastest runs is the figure to quote on a shared machine, where the
# medians carry the other users' load.
#
# Needs root, tracefs and trace-cmd (run through scripts/trace-cmd-record). trace-cmd records
# in the top-level buffer, so on a machine shared with other tracefs users hold their lock:
#   flock /tmp/tracefs-top.lock benches/record-start.sh
# Environment: RUNS (default 15), EVENTS (default sched:sched_switch), KEEP=1 keeps the
# work dir.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
runs=${RUNS:-15}
events=${EVENTS:-sched:sched_switch}
work=$(mktemp -d "${TMPDIR:-/tmp}/record-start.XXXXXX")
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT

command -v trace-cmd >/dev/null || { echo "trace-cmd is not installed (scripts/setup.sh)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "needs root (it records)" >&2; exit 1; }

echo "building tracectl (release)..."
(cd "$here" && cargo build --release --quiet --bin tracectl)
tracectl=$here/target/release/tracectl

evargs=""
for e in $(echo "$events" | tr ',' ' '); do evargs="$evargs -e $e"; done

# one SIDE: prints "start_ns wall_ns"
one() {
    t0=$(date +%s%N)
    if [ "$1" = tracectl ]; then
        # shellcheck disable=SC2086
        "$tracectl" record -q $evargs -o "$work/t.dat" -- date +%s%N >"$work/out" 2>"$work/err"
    else
        # shellcheck disable=SC2086
        "$here/scripts/trace-cmd-record" record -q $evargs -o "$work/c.dat" -- date +%s%N >"$work/out" 2>"$work/err"
    fi
    t1=$(date +%s%N)
    ran=$(grep -E '^[0-9]{19}$' "$work/out" | head -n1)
    [ -n "$ran" ] || { echo "$1: the command's time is missing:" >&2; cat "$work/out" "$work/err" >&2; exit 1; }
    echo "$((ran - t0)) $((t1 - t0))"
}

: >"$work/tracectl"
: >"$work/trace-cmd"
i=0
while [ "$i" -lt "$runs" ]; do
    one tracectl >>"$work/tracectl"
    one trace-cmd >>"$work/trace-cmd"
    i=$((i + 1))
done

stats() { # column -> "min median" in ms
    cut -d' ' -f"$2" "$1" | sort -n | awk '{ v[NR] = $1 } END { printf "%.1f %.1f", v[1] / 1e6, v[int((NR + 1) / 2)] / 1e6 }'
}
set -- $(stats "$work/tracectl" 1) $(stats "$work/trace-cmd" 1) $(stats "$work/tracectl" 2) $(stats "$work/trace-cmd" 2)
printf 'events: %s, %s runs each\n' "$events" "$runs"
printf '%-28s %10s %10s\n' "" fastest median
printf '%-28s %8s ms %8s ms\n' "tracectl: start of command" "$1" "$2"
printf '%-28s %8s ms %8s ms\n' "trace-cmd: start of command" "$3" "$4"
printf '%-28s %8s ms %8s ms\n' "tracectl: whole recording" "$5" "$6"
printf '%-28s %8s ms %8s ms\n' "trace-cmd: whole recording" "$7" "$8"
awk -v a="$1" -v b="$3" -v c="$2" -v d="$4" 'BEGIN { printf "start-up ratio (trace-cmd / tracectl): %.2fx fastest, %.2fx median\n", b / a, d / c }'
awk -v a="$5" -v b="$7" -v c="$6" -v d="$8" 'BEGIN { printf "whole-recording ratio (trace-cmd / tracectl): %.2fx fastest, %.2fx median\n", b / a, d / c }'
