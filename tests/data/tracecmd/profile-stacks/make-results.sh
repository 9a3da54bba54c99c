#!/usr/bin/env bash
# results/STEM/MODE.txt.zst: the stdout of `trace-cmd report ARGS... -i STEM.dat`
# (trace-cmd 3.1.6) for every recording here and every line of modes.tsv, run in this
# directory, packed with zstd -19.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
for dat in *.dat; do
    stem=${dat%.dat}
    rm -rf "results/$stem" && mkdir -p "results/$stem"
    grep -v '^#' modes.tsv | while IFS= read -r line; do
        IFS=$'\t' read -r -a args <<<"$line"
        trace-cmd report "${args[@]:1}" -i "$dat" 2>/dev/null |
            zstd -q -19 -o "results/$stem/${args[0]}.txt.zst"
    done
done
