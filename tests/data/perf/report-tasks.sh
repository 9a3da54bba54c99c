#!/bin/sh
# Writes results/report-records.NAME_OPTIONS.txt: what perf report (perf 6.1) prints
# for --stats, --tasks and --mmaps, which list the records rather than the samples'
# shares. Run in this directory: sh report-tasks.sh
set -e
run() {
    data=$1
    shift
    name=$(echo "${data%.data} $*" | sed 's/ *$//; s/ /_/g')
    perf report -i "$data" --stdio "$@" 2>/dev/null > "results/report-records.$name.txt"
}
for f in mt-clock tp-exec tp-mixed tp-sched dwarf-calls; do
    run $f.data --stats
    run $f.data --tasks
done
run tp-mixed.data --stats --no-skip-empty
run calls.data --stats --no-skip-empty
for f in tp-exec dwarf-calls; do
    run $f.data --mmaps
done
