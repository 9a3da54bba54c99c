#!/usr/bin/env bash
# The whole test suite, as CI runs it. With TRACECTL_VM=1 the VM tests boot Debian's stock
# kernels under qemu (function_graph, snapshot and kprobes are not available on every host).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ "${TRACECTL_VM:-0}" = 1 ]; then
    RUSTFLAGS='-C target-feature=+crt-static' cargo build --release --target x86_64-unknown-linux-gnu --bin tracectl
    export TRACECTL_VM_BIN=$PWD/target/x86_64-unknown-linux-gnu/release/tracectl
fi
cargo test --no-fail-fast -- --test-threads=1
