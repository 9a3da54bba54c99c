#!/usr/bin/env bash
# results/STEM/dump/OPTION.txt: the stdout of `trace-cmd dump --OPTION STEM.dat` for each
# recording (NAME-v7.dat as committed, NAME-v6.dat unpacked from its .zst). --kallsyms is
# left out here (megabytes per file); the live test compares it with trace-cmd directly.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for zst in *-v6.dat.zst; do
    zstd -q -d -f "$zst" -o "$scratch/${zst%.zst}"
done
for input in "$here"/*-v7.dat "$scratch"/*-v6.dat; do
    stem=$(basename "$input" .dat)
    rm -rf "results/$stem/dump" && mkdir -p "results/$stem/dump"
    for opt in head-page head-event ftrace-events systems events printk cmd-lines; do
        trace-cmd dump "--$opt" "$input" >"results/$stem/dump/$opt.txt" 2>/dev/null
    done
done
