#!/usr/bin/env bash
# The whole test suite, as CI runs it. With TRACECTL_VM=1 the VM tests boot Debian's stock
# kernels under qemu (function_graph, snapshot and kprobes are not available on every host).
# Every skip is a failure here (TRACECTL_REQUIRE_ALL=1, see tests/it/support/skips.rs): a run that
# could not do its live, oracle, trace-cmd or VM tests does not pass. TRACECTL_REQUIRE_ALL=0
# turns skips back into printed notes (e.g. without TRACECTL_VM=1 or without root).
set -euo pipefail
export TRACECTL_REQUIRE_ALL=${TRACECTL_REQUIRE_ALL:-1}
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Lints and docs with warnings denied, before the (long) tests.
cargo clippy --version >/dev/null 2>&1 || rustup component add clippy
cargo clippy --all-targets -- -D warnings
RUSTDOCFLAGS='-D warnings' cargo doc --no-deps
if [ "${TRACECTL_VM:-0}" = 1 ]; then
    RUSTFLAGS='-C target-feature=+crt-static' cargo build --release --target x86_64-unknown-linux-gnu --bin tracectl
    export TRACECTL_VM_BIN=$PWD/target/x86_64-unknown-linux-gnu/release/tracectl
fi
cargo test --no-fail-fast -- --test-threads=1
