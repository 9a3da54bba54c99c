#!/usr/bin/env bash
# results/STEM/MODE.txt for every `STEM MODE ARGS...` line of options.tsv: the stdout of
# `trace-cmd report ARGS... -i STEM.dat`, run in the file's directory (a v6 file is
# unpacked from its .zst first). Modes named `f` (the whole kallsyms) keep only the
# output's size and FNV-1a digest, as MODE.digest (`MODE SIZE DIGEST`).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for z in *-v6.dat.zst; do
    zstd -q -d -f "$z" -o "$scratch/${z%.zst}"
done
grep -v '^#' options.tsv | while IFS= read -r line; do
    IFS=$'\t' read -r -a f <<<"$line"
    stem=${f[0]} mode=${f[1]}
    if cut -f1 modes.tsv | grep -qx -- "$mode"; then
        echo "options.tsv: mode $mode is a mode of modes.tsv too; rename it" >&2
        exit 1
    fi
    dir=$here
    [ -e "$here/$stem.dat" ] || dir=$scratch
    mkdir -p "results/$stem"
    out="results/$stem/$mode.txt"
    (cd "$dir" && trace-cmd report "${f[@]:2}" -i "$stem.dat") >"$out"
    if [ "$mode" = f ]; then
        python3 - "$out" "$mode" >"results/$stem/$mode.digest" <<'PY'
import sys
data = open(sys.argv[1], 'rb').read()
h = 0xcbf29ce484222325
for b in data:
    h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
print(f"{sys.argv[2]} {len(data)} {h:016x}")
PY
        rm "$out"
    fi
done
