//! Finding the trace-cmd recorder for tests that compare with `trace-cmd report`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `$TRACE_CMD_HERE`, else `shared/tools/trace-cmd-here` beside the repository (or one
/// level further up, from a worktree).
pub fn trace_cmd_here() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("TRACE_CMD_HERE") {
        return Some(PathBuf::from(p));
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    [
        "../shared/tools/trace-cmd-here",
        "../../shared/tools/trace-cmd-here",
    ]
    .iter()
    .map(|p| root.join(p))
    .find(|p| p.exists())
}

/// The recorder, or None (with the reason printed) when this machine cannot record.
pub fn recorder() -> Option<PathBuf> {
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: recording with trace-cmd needs root");
        return None;
    }
    if !Path::new("/sys/kernel/tracing/events").exists() {
        eprintln!("skipped: tracefs is not mounted at /sys/kernel/tracing");
        return None;
    }
    if Command::new("trace-cmd").arg("--help").output().is_err() {
        eprintln!("skipped: trace-cmd is not installed");
        return None;
    }
    let r = trace_cmd_here();
    if r.is_none() {
        eprintln!("skipped: shared/tools/trace-cmd-here not found (set TRACE_CMD_HERE)");
    }
    r
}
