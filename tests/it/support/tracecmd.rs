//! Recording with trace-cmd for tests that compare with `trace-cmd report`: through
//! `scripts/trace-cmd-record` (trace-cmd with the project's LD_PRELOAD library, which
//! `scripts/setup.sh` builds), on the live tracefs.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// `scripts/trace-cmd-record` in this repository.
pub fn recorder_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/trace-cmd-record")
}

/// Why trace-cmd cannot record on this machine, if it cannot.
pub fn why_not_record() -> Option<String> {
    if unsafe { libc::geteuid() } != 0 {
        return Some("recording with trace-cmd needs root".into());
    }
    if !Path::new("/sys/kernel/tracing/events/header_page").exists() {
        return Some("tracefs is not mounted at /sys/kernel/tracing".into());
    }
    if Command::new("trace-cmd").arg("--help").output().is_err() {
        return Some("trace-cmd is not installed (scripts/setup.sh installs it)".into());
    }
    let shim = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/tracecmd-shim.so");
    if std::env::var_os("TRACECTL_SHIM").is_none() && !shim.exists() {
        return Some(format!(
            "{} is not built (scripts/setup.sh builds it)",
            shim.display()
        ));
    }
    None
}

/// The recorder, or None (the test skips, see `skips`) when this machine cannot record.
pub fn recorder() -> Option<PathBuf> {
    match why_not_record() {
        Some(why) => {
            crate::support::skips::skip(why);
            None
        }
        None => Some(recorder_path()),
    }
}
