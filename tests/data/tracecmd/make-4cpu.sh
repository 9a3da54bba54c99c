#!/usr/bin/env bash
# Records 4cpu-v7.dat: trace-cmd itself, inside a 4-CPU qemu guest running Debian's 6.1
# kernel (tests/vm/harness.sh), with this host's trace-cmd binary and the shared libraries
# it loads copied into the guest. Then makes the v6 copy and the reports (make-results.sh).
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
TRACECTL_VM_SMP=4 TRACECTL_VM_ROOT=$stage bash "$repo/tests/vm/harness.sh" linux-image-amd64 \
    "$here/guest-4cpu.sh" "$out"
cat "$out/guest.log"
cp "$out/trace.dat" "$here/4cpu-v7.dat"
echo "kernel $(cat "$out/uname"), $(grep version "$out/version")"
