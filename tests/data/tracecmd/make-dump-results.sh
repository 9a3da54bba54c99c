#!/usr/bin/env bash
# results/STEM/dump/MODE.txt: the stdout of `trace-cmd dump ARGS STEM.dat` for each
# `MODE ARGS` line of dump-modes.tsv and each recording (NAME-v7.dat as committed,
# NAME-v6.dat unpacked from its .zst), run in the file's directory (the summary names the
# file as given). An output over 1 MB (the kallsyms of --all) is kept as its size and
# FNV-1a digest only, MODE.digest (`MODE SIZE DIGEST`). --kallsyms alone is left to the
# live test, which compares it with trace-cmd directly.
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
    results="$here/results/$stem/dump"
    rm -rf "$results" && mkdir -p "$results"
    while IFS=$'\t' read -r mode args; do
        [[ -z "$mode" || "$mode" == \#* ]] && continue
        out="$results/$mode.txt"
        # shellcheck disable=SC2086 # ARGS are words
        (cd "$(dirname "$input")" && trace-cmd dump $args "$(basename "$input")") >"$out" 2>/dev/null
        if [ "$(stat -c %s "$out")" -gt 1000000 ]; then
            python3 - "$out" "$mode" >"$results/$mode.digest" <<'PY'
import sys
data = open(sys.argv[1], 'rb').read()
h = 0xcbf29ce484222325
for b in data:
    h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
print(f"{sys.argv[2]} {len(data)} {h:016x}")
PY
            rm "$out"
        fi
    done <dump-modes.tsv
done
