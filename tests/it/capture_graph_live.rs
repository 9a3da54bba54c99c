//! Live: `tracectl capture -p TRACER` refuses a tracer the instance lacks with a message
//! that names it and suggests `--top-level`, and leaves no instance behind. The tracer is
//! function_graph where the kernel lacks it (this sandboxed host; the VM tests capture
//! real graphs), else a name no kernel has. Skipped when not root or tracefs is absent.

use crate::support::live;

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
    let tracer = if avail.split_whitespace().any(|t| t == "function_graph") {
        "no_such_tracer"
    } else {
        "function_graph"
    };
    let dest = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .args(["--tracefs", ROOT, "capture"])
        .arg(dest.path().join("t"))
        .args(["-p", tracer, "-g", "do_sys_openat2", "--", "true"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{tracer:?} is not available")) && err.contains("--top-level"),
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
