#!/usr/bin/env bash
# Records record.dat: `tracectl record -p function -O func-no-repeats` of `ls` in a 2-CPU
# qemu guest running a Debian kernel (tests/vm/harness.sh; 6.1 unless KERNEL_META names
# another), with the functions filtered to the directory-reading ones (guest.sh). The
# guest also keeps the kernel's own `trace` text of a second run (extract-trace.txt) and
# then drains that same buffer with `tracectl extract` (extract.dat), and does the same
# with the counter clock (extract-counter-trace.txt, extract-counter.dat).
# make-results.sh makes trace-cmd's reports of record.dat.
#
#   RUSTFLAGS='-C target-feature=+crt-static' cargo build --release \
#       --target x86_64-unknown-linux-gnu --bin tracectl
#   tests/data/tracecmd/func-repeats/make-recording.sh [KERNEL_META [DEST]]
#
# The files go to DEST (default: this directory, the 6.1 recording); the 6.12 one is
#   make-recording.sh linux-image-6.12-amd64 debian-6.12
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
dest=$here/${2:-.}
mkdir -p "$dest"
bin=$repo/target/x86_64-unknown-linux-gnu/release/tracectl
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
bash "$repo/tests/vm/harness.sh" "${1:-linux-image-amd64}" "$here/guest.sh" "$out" "$bin"
cat "$out/guest.log"
cp "$out/record.dat" "$dest/record.dat"
cp "$out/extract.dat" "$dest/extract.dat"
cp "$out/kernel-trace.txt" "$dest/extract-trace.txt"
cp "$out/extract-counter.dat" "$dest/extract-counter.dat"
cp "$out/kernel-trace-counter.txt" "$dest/extract-counter-trace.txt"
echo "kernel $(cat "$out/uname")"
