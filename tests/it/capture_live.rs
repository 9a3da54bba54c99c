//! Live: `tracectl capture` and `tracectl stream` against the real tracefs. They work in
//! private instances only and must leave no instance behind, even when they fail.
//! Skipped (with the reason printed) when not root or tracefs is absent.

use crate::support::live;

use std::path::Path;
use std::process::Command;

use crate::support::live::TRACEFS as ROOT;

/// The private instances process `pid` made (`tracectl-VERB-PID`) that still exist. Other
/// tests running at the same time make and remove their own, so only the process under
/// test is looked at.
fn instances_of(pid: u32) -> Vec<String> {
    let suffix = format!("-{pid}");
    std::fs::read_dir(Path::new(ROOT).join("instances"))
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("tracectl-") && n.ends_with(&suffix))
                .collect()
        })
        .unwrap_or_default()
}

/// Run tracectl on the live tracefs: its output and its pid.
fn tracectl_pid(args: &[&str]) -> (std::process::Output, u32) {
    let child = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .arg("--tracefs")
        .arg(ROOT)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    (child.wait_with_output().unwrap(), pid)
}

fn tracectl(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .arg("--tracefs")
        .arg(ROOT)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn capture_writes_a_replayable_tree_and_removes_its_instance() {
    if !live::ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("tree");
    let (out, pid) = tracectl_pid(&[
        "capture",
        dest.to_str().unwrap(),
        "-e",
        "sched:sched_switch",
        "-e",
        "sched:sched_process_exec",
        "--",
        "sh",
        "-c",
        "/bin/true; sleep 0.05",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        instances_of(pid),
        Vec::<String>::new(),
        "capture left an instance behind"
    );
    for f in [
        "available_events",
        "events/header_page",
        "events/sched/sched_switch/format",
        "saved_cmdlines",
        "host/uname",
    ] {
        assert!(dest.join(f).is_file(), "{f} missing");
    }
    // header_page must not be cut short by a small first read.
    let hp = std::fs::read_to_string(dest.join("events/header_page")).unwrap();
    assert!(hp.contains("field: char data;"), "{hp}");
    assert_eq!(
        std::fs::read_to_string(dest.join("options/hash-ptr"))
            .unwrap()
            .trim(),
        "0"
    );
    let trace = std::fs::read_to_string(dest.join("trace")).unwrap();
    assert!(
        trace.contains("sched_process_exec: filename=/bin/true"),
        "{trace}"
    );
    // Only the recorded events' formats (and ftrace's) were copied.
    assert!(!dest.join("events/irq").exists());
    // The tree replays: the same number of body lines as the kernel's text, same contexts.
    let replay = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .arg("--tracefs")
        .arg(&dest)
        .args(["stream", "--no-header"])
        .output()
        .unwrap();
    assert!(replay.status.success());
    let ours = String::from_utf8(replay.stdout).unwrap();
    let body: Vec<&str> = trace.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(ours.lines().count(), body.len());
    for (a, b) in ours.lines().zip(&body) {
        let cut = |l: &str| l[..l.find(": ").unwrap()].to_string();
        assert_eq!(cut(a), cut(b));
    }
}

#[test]
fn capture_of_an_unknown_event_fails_with_a_suggestion_and_leaves_nothing() {
    if !live::ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (out, pid) = tracectl_pid(&[
        "capture",
        dir.path().join("t").to_str().unwrap(),
        "-e",
        "sched:sched_swich",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("sched:sched_switch"), "{err}");
    assert_eq!(instances_of(pid), Vec::<String>::new());
}

#[test]
fn live_stream_shows_enabled_events_and_cleans_up_on_sigint() {
    if !live::ready() {
        return;
    }
    let child = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .arg("--tracefs")
        .arg(ROOT)
        .args(["stream", "-e", "sched:sched_switch", "--style", "json"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(400));
    // Make sure something switches.
    let _ = Command::new("sh").args(["-c", "sleep 0.01"]).status();
    std::thread::sleep(std::time::Duration::from_millis(300));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let first = text.lines().next().expect("at least one sched_switch");
    let v: serde_json::Value = serde_json::from_str(first).unwrap();
    assert_eq!(v["event"], "sched_switch");
    assert!(v["fields"]["next_pid"].is_number());
    assert_eq!(
        instances_of(pid),
        Vec::<String>::new(),
        "stream left its instance behind"
    );
}

#[test]
fn capture_whose_workload_cannot_start_still_removes_its_instance() {
    if !live::ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (out, pid) = tracectl_pid(&[
        "capture",
        dir.path().join("t").to_str().unwrap(),
        "-e",
        "sched:sched_switch",
        "--",
        "/nonexistent/tracectl-workload",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/tracectl-workload"), "{err}");
    assert_eq!(
        instances_of(pid),
        Vec::<String>::new(),
        "the failed capture left its instance behind"
    );
}

#[test]
fn record_tgid_capture_replays_with_the_tgid_column() {
    if !live::ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("tree");
    let out = tracectl(&[
        "capture",
        dest.to_str().unwrap(),
        "-e",
        "sched",
        "-O",
        "record-tgid",
        "--",
        "sh",
        "-c",
        "sleep 0.02",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let trace = std::fs::read_to_string(dest.join("trace")).unwrap();
    assert!(trace.contains("TGID"), "{trace}");
    let replay = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .arg("--tracefs")
        .arg(&dest)
        .arg("stream")
        .output()
        .unwrap();
    assert!(replay.status.success());
    let ours = String::from_utf8(replay.stdout).unwrap();
    assert_eq!(ours.lines().count(), trace.lines().count());
    for (a, b) in ours.lines().zip(trace.lines()) {
        if b.starts_with('#') {
            assert_eq!(a, b);
        } else {
            let cut = |l: &str| l[..l.find(": ").unwrap()].to_string();
            assert_eq!(cut(a), cut(b));
        }
    }
}
