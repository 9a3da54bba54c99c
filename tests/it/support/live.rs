//! The live tracefs: whether a test that writes it can run here.

use std::path::Path;

use super::skips;

/// Where the live tests expect tracefs.
pub const TRACEFS: &str = "/sys/kernel/tracing";

/// Root and a tracefs with instances at [`TRACEFS`]; otherwise the test skips (see
/// `skips`) and the caller returns.
pub fn ready() -> bool {
    if !nix::unistd::geteuid().is_root() {
        skips::skip("live tracefs tests need root");
        return false;
    }
    if !Path::new(TRACEFS).join("instances").is_dir() {
        skips::skip(format!(
            "tracefs with instances/ is not mounted at {TRACEFS}"
        ));
        return false;
    }
    true
}
