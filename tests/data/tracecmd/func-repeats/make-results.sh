#!/usr/bin/env bash
# results/MODE.txt: the stdout of `trace-cmd report ARGS... -i record.dat` for each
# `MODE ARGS...` line of modes.tsv, run in this directory; results/extract-counter.txt:
# `trace-cmd report -i extract-counter.dat` (a counter clock's raw times);
# results/two-files-*.txt: both files in one report, the counter clock's first or last.
# With an argument DIR (e.g. debian-6.12), the files and results of DIR instead.
#
#   tests/data/tracecmd/func-repeats/make-results.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")"
modes=$PWD/modes.tsv
cd "${1:-.}"
mkdir -p results
grep -v '^#' "$modes" | while IFS= read -r line; do
    IFS=$'\t' read -r -a f <<<"$line"
    trace-cmd report "${f[@]:1}" -i record.dat >"results/${f[0]}.txt"
done
trace-cmd report -i extract-counter.dat >results/extract-counter.txt
trace-cmd report -i extract-counter.dat -i record.dat >results/two-files-counter-first.txt
trace-cmd report -i record.dat -i extract-counter.dat >results/two-files-counter-last.txt
