#!/usr/bin/env bash
# From each recorded NAME-v7.dat: NAME-v6.dat.zst (trace-cmd convert to version 6 without
# compression, then zstd, to keep the repository small) and results/NAME-v{6,7}/MODE.txt,
# the stdout of `trace-cmd report ARGS... -i FILE` for every line of modes.tsv, run in the
# file's directory (some modes print the file name as given).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for v7 in *-v7.dat; do
    name=${v7%-v7.dat}
    trace-cmd convert --file-version 6 --compression none -i "$v7" -o "$scratch/$name-v6.dat"
    zstd -q -19 -f "$scratch/$name-v6.dat" -o "$name-v6.dat.zst"
    for input in "$here/$v7" "$scratch/$name-v6.dat"; do
        stem=$(basename "$input" .dat)
        rm -rf "results/$stem" && mkdir -p "results/$stem"
        grep -v '^#' modes.tsv | while IFS= read -r line; do
            IFS=$'\t' read -r -a args <<<"$line"
            mode=${args[0]}
            rm -f "results/$stem/$mode.failed"
            if ! (cd "$(dirname "$input")" && trace-cmd report "${args[@]:1}" -i "$stem.dat") \
                >"results/$stem/$mode.txt" 2>/dev/null; then
                # No golden where trace-cmd itself fails (3.1.6 crashes on some -F filters
                # of files with an instance buffer): the marker says so.
                rm "results/$stem/$mode.txt"
                echo "trace-cmd report ${args[*]:1} -i $stem.dat failed" >"results/$stem/$mode.failed"
            fi
        done
    done
done
