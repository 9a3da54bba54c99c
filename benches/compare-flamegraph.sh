#!/bin/sh
# A flame graph from a perf.data, two ways, side by side:
#   tracectl perf script --folded | tracectl flamegraph
#   perf script | inferno-collapse-perf | inferno-flamegraph
# on the same call-chain profile (recorded here with `perf record -F 999 -g -a` while a
# busy workload runs, or the FILE given). Before timing, the folded stacks of both
# pipelines are compared: tracectl's against inferno's collapse of perf's own text,
# summed per stack (the two may order lines differently; inferno weighs by period). Each pipeline runs RUNS times;
# the best wall time of each and their ratio are printed.
#
# Needs root, perf (linux-perf) and inferno installed for the benchmark only
# (`cargo install inferno --root DIR`, then INFERNO=DIR/bin). Run it on an idle machine.
#   benches/compare-flamegraph.sh [FILE]
# Environment: RUNS (default 5), SECONDS_OF_PROFILE (default 5), INFERNO (directory of
# the inferno binaries; default: found in PATH).
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
runs=${RUNS:-5}
work=$(mktemp -d "${TMPDIR:-/tmp}/compare-flamegraph.XXXXXX")
trap 'rm -rf "$work"' EXIT
inferno=${INFERNO:-$(dirname "$(command -v inferno-flamegraph || echo /nonexistent/x)")}
[ -x "$inferno/inferno-flamegraph" ] && [ -x "$inferno/inferno-collapse-perf" ] || {
    echo "inferno is not installed (cargo install inferno --root DIR; INFERNO=DIR/bin)" >&2
    exit 1
}
command -v perf >/dev/null || { echo "perf is not installed (apt-get install linux-perf)" >&2; exit 1; }

echo "building tracectl (release)..."
(cd "$here" && cargo build --release --quiet --bin tracectl)
tracectl=$here/target/release/tracectl

if [ $# -ge 1 ]; then
    data=$1
else
    data=$work/perf.data
    echo "recording ${SECONDS_OF_PROFILE:-5} s of a system-wide -F 999 -g profile..."
    perf record -q -F 999 -g -a -o "$data" -- sh -c "i=0; while [ \$i -lt 40 ]; do
        ls -lR /usr >/dev/null 2>&1; i=\$((i+1)); done & sleep ${SECONDS_OF_PROFILE:-5}; kill \$! 2>/dev/null; true" \
        >/dev/null 2>"$work/record.err" || { cat "$work/record.err" >&2; exit 1; }
fi

# The folded stacks of each pipeline, summed per stack and sorted, must agree.
"$tracectl" perf script -i "$data" --folded >"$work/ours.folded"
perf script -i "$data" 2>/dev/null | "$inferno/inferno-collapse-perf" >"$work/theirs.folded"
sum() { awk '{ n = $NF; $NF = ""; sub(/ $/, ""); s[$0] += n } END { for (k in s) print k, s[k] }' "$1" | sort; }
sum "$work/ours.folded" >"$work/ours.sum"
sum "$work/theirs.folded" >"$work/theirs.sum"
stacks=$(wc -l <"$work/theirs.sum")
# inferno weighs a stack by the samples' periods (perf script prints them), tracectl counts
# samples: the stacks must be the same, and their weights in one proportion.
differ=$(awk 'NR == FNR { n = $NF; $NF = ""; ours[$0] = n; next }
    { n = $NF; $NF = ""; if (!($0 in ours)) { bad++; next }
      r = n / ours[$0]; if (k == "") k = r; else if (r != k) bad++; delete ours[$0] }
    END { for (s in ours) bad++; print bad + 0 }' "$work/ours.sum" "$work/theirs.sum")
echo "folded stacks: $stacks (inferno's collapse of perf script); stacks that differ: $differ"

best() {
    b=""
    i=0
    while [ $i -lt "$runs" ]; do
        s=$(date +%s%N)
        sh -c "$1" >/dev/null 2>&1
        e=$(date +%s%N)
        t=$(( (e - s) / 1000000 ))
        if [ -z "$b" ] || [ "$t" -lt "$b" ]; then b=$t; fi
        i=$((i + 1))
    done
    echo "$b"
}
ours=$(best "'$tracectl' perf script -i '$data' --folded | '$tracectl' flamegraph -o '$work/ours.svg'")
theirs=$(best "perf script -i '$data' | '$inferno/inferno-collapse-perf' | '$inferno/inferno-flamegraph' > '$work/theirs.svg'")
awk -v a="$theirs" -v b="$ours" -v runs="$runs" 'BEGIN {
    printf "best of %d runs, perf.data to SVG\n", runs
    printf "%-60s %8d ms\n", "perf script | inferno-collapse-perf | inferno-flamegraph", a
    printf "%-60s %8d ms\n", "tracectl perf script --folded | tracectl flamegraph", b
    if (b > 0) printf "ratio: %.1fx\n", a / b
}'
