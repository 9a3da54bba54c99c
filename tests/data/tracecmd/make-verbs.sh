#!/usr/bin/env bash
# tests/data/tracecmd/mem/kmem.dat: a trace-cmd recording of the slab events of one `ls`
# (-F: only its own records), made with scripts/trace-cmd-record (the function-tracer
# files of the build host refuse opens). Then results/mem/STEM.txt: the stdout of
# `trace-cmd mem -i STEM.dat` for it and for the recordings of make-2cpu.sh/make-4cpu.sh;
# results/options.txt: the stdout of `trace-cmd options`. hist/stack.dat: the same
# with a kernel stack trace after every event (-T); results/hist/STEM[-P].txt: the stdout
# of `trace-cmd hist [-P] -i STEM.dat` for it and the other recordings.
# Pass --keep to keep the committed recording and remake only the goldens.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
cd "$here"
if [ "${1:-}" != --keep ]; then
    "$repo/scripts/trace-cmd-record" record -F -e kmem:kmalloc -e kmem:kfree \
        -e kmem:kmem_cache_alloc -e kmem:kmem_cache_free -o mem/kmem.dat -- ls /usr >/dev/null
    "$repo/scripts/trace-cmd-record" record -T -F -e sched:sched_switch -e sched:sched_wakeup \
        -e kmem:kmalloc -o hist/stack.dat -- ls /usr >/dev/null
fi
mkdir -p results/mem
for f in mem/kmem.dat 2cpu-v7.dat 2cpu-noinstance-v7.dat 4cpu-v7.dat; do
    trace-cmd mem -i "$f" >"results/mem/$(basename "$f" .dat).txt"
done
trace-cmd options >results/options.txt
mkdir -p results/hist
for f in hist/stack.dat mem/kmem.dat 2cpu-v7.dat 2cpu-noinstance-v7.dat 4cpu-v7.dat; do
    stem=$(basename "$f" .dat)
    trace-cmd hist -i "$f" >"results/hist/$stem.txt"
    trace-cmd hist -P -i "$f" >"results/hist/$stem-P.txt"
done
# Function-graph traces (which this host cannot record): recorded tracefs trees written as
# trace.dat files by `tracectl extract` (the test does the same), then trace-cmd hist of
# them: results/hist/tree-NAME[-P].txt.
tracectl=${TRACECTL:-$repo/target/release/tracectl}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for t in debian-6.1-function-graph-nested debian-6.1-function-graph-wrapped \
    debian-6.12-function-graph-openat; do
    "$tracectl" --tracefs "$repo/tracefs-fixtures/$t" extract -q -o "$scratch/$t.dat"
    trace-cmd hist -i "$scratch/$t.dat" >"results/hist/tree-$t.txt"
    trace-cmd hist -P -i "$scratch/$t.dat" >"results/hist/tree-$t-P.txt"
done
