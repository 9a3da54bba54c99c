#!/usr/bin/env bash
# results/split/MODE.txt.zst for each line of split.tsv: trace-cmd split run on a copy
# of the input named in.dat, then for every file it wrote (in name order) a line
# `==> NAME <==` and the stdout of `trace-cmd report -i NAME`, packed with zstd.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p results/split
grep -v '^#' split.tsv | while IFS= read -r line; do
    IFS=$'\t' read -r -a args <<<"$line"
    mode=${args[0]}
    input=${args[1]}
    dir=$scratch/$mode
    mkdir -p "$dir"
    case $input in
    *.zst) zstd -q -d "$input" -o "$dir/in.dat" ;;
    *) cp "$input" "$dir/in.dat" ;;
    esac
    (cd "$dir" && trace-cmd split -i in.dat "${args[@]:2}" >/dev/null 2>&1)
    rm "$dir/in.dat"
    (cd "$dir" && for part in $(ls -A | sort); do
        echo "==> $part <=="
        trace-cmd report -i "$part"
    done) | zstd -q -19 >"results/split/$mode.txt.zst"
    rm -rf "$dir"
done
