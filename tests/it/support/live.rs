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

/// The machine's lock on the top-level tracefs instance, `/tmp/tracefs-top.lock`, held
/// while it lives: tests that record the top level with trace-cmd (which leaves global
/// files such as `buffer_size_kb` as its options set them) take it, so that they never
/// see each other's settings. Not reentrant: take it once per test.
pub struct TopLock {
    _file: std::fs::File,
}

impl TopLock {
    pub fn take() -> TopLock {
        use std::os::fd::AsRawFd;
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open("/tmp/tracefs-top.lock")
            .unwrap();
        // SAFETY: flock on a file descriptor this struct owns.
        assert_eq!(unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) }, 0);
        TopLock { _file: f }
    }
}
