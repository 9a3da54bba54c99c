#!/usr/bin/env bash
# Records function-v7.dat: trace-cmd itself with the function tracer (top buffer and an
# instance `fn`), inside a 2-CPU qemu guest running Debian's 6.1 kernel
# (tests/vm/harness.sh), with this host's trace-cmd binary and the shared libraries it
# loads copied into the guest. The reports are made by make-options.sh (options.tsv).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
stage=$(mktemp -d)
out=$(mktemp -d)
trap 'rm -rf "$stage" "$out"' EXIT
tc=$(command -v trace-cmd)
mkdir -p "$stage/bin"
cp "$tc" "$stage/bin/trace-cmd"
for lib in $(ldd "$tc" | awk '/=>/{print $3} /^\t\/lib/{print $1}'); do
    mkdir -p "$stage$(dirname "$lib")"
    cp -L "$lib" "$stage$lib"
done
TRACECTL_VM_ROOT=$stage bash "$repo/tests/vm/harness.sh" linux-image-amd64 \
    "$here/guest-function.sh" "$out"
cat "$out/guest.log"
cp "$out/function.dat" "$here/function-v7.dat"
echo "kernel $(cat "$out/uname"), $(grep version "$out/version")"
