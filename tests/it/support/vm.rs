//! The qemu VM tests: whether they can run here.

use std::path::PathBuf;

use super::skips;

/// The static tracectl the guest runs (`TRACECTL_VM_BIN`), when the VM tests are on
/// (`TRACECTL_VM=1`, as `.ci/run` sets); otherwise the test skips and the caller returns.
pub fn binary() -> Option<PathBuf> {
    if std::env::var("TRACECTL_VM").as_deref() != Ok("1") {
        skips::skip("VM tests run with TRACECTL_VM=1 (.ci/run sets it)");
        return None;
    }
    match std::env::var_os("TRACECTL_VM_BIN").map(PathBuf::from) {
        Some(p) if p.is_file() => Some(p),
        _ => {
            skips::skip("TRACECTL_VM_BIN must name a static tracectl (scripts/test.sh builds it)");
            None
        }
    }
}
