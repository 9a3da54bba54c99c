//! Live: `tracectl capture -p TRACER` refuses a tracer the instance lacks with a message
//! that names it and suggests `--top-level`, and leaves no instance behind. (This host has
//! no function_graph; the VM tests capture real graphs.) Skipped when not root or tracefs
//! is absent, or when this kernel's instances do have function_graph.

use crate::support::{live, skips};

use std::path::Path;
use std::process::Command;

use crate::support::live::TRACEFS as ROOT;

#[test]
fn missing_tracer_is_refused_with_a_hint_and_no_instance_left() {
    if !live::ready() {
        return;
    }
    let avail =
        std::fs::read_to_string(Path::new(ROOT).join("available_tracers")).unwrap_or_default();
    if avail.split_whitespace().any(|t| t == "function_graph") {
        skips::skip("this kernel has function_graph");
        return;
    }
    let dest = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .args(["--tracefs", ROOT, "capture"])
        .arg(dest.path().join("t"))
        .args(["-p", "function_graph", "-g", "do_sys_openat2", "--", "true"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("\"function_graph\" is not available") && err.contains("--top-level"),
        "{err}"
    );
    let left: Vec<String> = std::fs::read_dir(Path::new(ROOT).join("instances"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("tracectl-capture-"))
        .filter(|n| {
            // Only an instance of a process that no longer runs can be ours.
            n.trim_start_matches("tracectl-capture-")
                .parse::<u32>()
                .is_ok_and(|p| !Path::new(&format!("/proc/{p}")).exists())
        })
        .collect();
    assert!(left.is_empty(), "instances left behind: {left:?}");
}
