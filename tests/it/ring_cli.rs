//! `tracectl stream` on fixture trees: JSON output, CPU selection, event selection and a
//! corrupt sub-buffer.

use crate::support::fixtures::copy_tree;
use crate::support::skips;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn tree(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tracefs-fixtures")
        .join(name)
}

fn stream(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .arg("--tracefs")
        .arg(dir)
        .arg("stream")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn json_lines_parse_and_carry_typed_fields() {
    let out = stream(
        &tree("linux-6.18-sched-irq"),
        &["--style", "json", "-e", "sched:sched_switch"],
    );
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let kernel = std::fs::read_to_string(tree("linux-6.18-sched-irq").join("trace")).unwrap();
    let want = kernel
        .lines()
        .filter(|l| l.contains(": sched_switch: "))
        .count();
    assert!(want > 0);
    assert_eq!(text.lines().count(), want);
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["system"], "sched");
        assert_eq!(v["event"], "sched_switch");
        assert!(v["fields"]["prev_comm"].is_string(), "{line}");
        assert!(v["fields"]["next_pid"].is_i64(), "{line}");
        assert!(v["ts"].is_u64());
    }
}

#[test]
fn one_cpu_only() {
    let out = stream(
        &tree("linux-6.18-sched-irq"),
        &["--cpu", "1", "--no-header"],
    );
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.lines().count() > 0);
    assert!(text.lines().all(|l| l.contains(" [001] ")), "{text}");
}

#[test]
fn a_corrupt_sub_buffer_is_reported_and_the_rest_decoded() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&tree("linux-6.18-sched-irq"), dir.path());
    let raw = dir.path().join("per_cpu/cpu0/trace_pipe_raw");
    let mut bytes = std::fs::read(&raw).unwrap();
    assert!(bytes.len() >= 2 * 4096);
    // Sub-buffer 1 claims more data than a sub-buffer holds.
    bytes[4096 + 8..4096 + 16].copy_from_slice(&5000u64.to_le_bytes());
    std::fs::write(&raw, &bytes).unwrap();
    let out = stream(dir.path(), &["--no-header"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cpu0 sub-buffer 1 offset 8: commit 5000"),
        "{err}"
    );
    assert!(err.contains("1 malformed sub-buffer(s) skipped"), "{err}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.lines().any(|l| l.contains(" [000] ")) && text.lines().any(|l| l.contains(" [001] "))
    );
}

#[test]
fn a_tree_without_data_says_how_to_capture_one() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("events")).unwrap();
    std::fs::copy(
        tree("linux-6.18-sched-irq").join("events/header_page"),
        dir.path().join("events/header_page"),
    )
    .unwrap();
    let out = stream(dir.path(), &[]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("trace_pipe_raw") && err.contains("tracectl capture"),
        "{err}"
    );
}

#[test]
fn a_tree_without_host_enums_from_the_running_kernel_uses_its_btf() {
    let rel = "events/writeback/writeback_mark_inode_dirty/format";
    let tree_fmt = std::fs::read_to_string(tree("linux-6.18-all").join(rel)).unwrap();
    let live_fmt = tracectl::tracefs::read_file(&Path::new("/sys/kernel/tracing").join(rel));
    if live_fmt.map(|b| b != tree_fmt.as_bytes()).unwrap_or(true)
        || !Path::new("/sys/kernel/btf/vmlinux").exists()
    {
        skips::skip("the running kernel is not the one linux-6.18-all was captured on");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&tree("linux-6.18-all"), dir.path());
    std::fs::remove_file(dir.path().join("host/enums")).unwrap();
    let out = stream(dir.path(), &[]);
    assert!(out.status.success());
    let kernel = std::fs::read(tree("linux-6.18-all").join("trace")).unwrap();
    assert!(
        out.stdout == kernel,
        "replay differs from the kernel's trace text"
    );
}

#[test]
fn a_format_that_does_not_parse_is_named_once_and_the_other_events_print() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&tree("linux-6.18-sched-irq"), dir.path());
    let fmt = dir.path().join("events/sched/sched_wakeup/format");
    let text = std::fs::read_to_string(&fmt).unwrap();
    assert!(text.contains("offset:24;"));
    std::fs::write(&fmt, text.replace("offset:24;", "offset:xx;")).unwrap();
    let out = stream(dir.path(), &["--no-header"]);
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning:")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(
        warnings[0].contains("events/sched/sched_wakeup/format")
            && warnings[0].contains("`offset:xx` is not a number")
            && warnings[0].contains("<unknown event id 374>"),
        "{err}"
    );
    // Every other event prints exactly as the kernel's `trace` text.
    let got = String::from_utf8(out.stdout).unwrap();
    let kernel = std::fs::read_to_string(dir.path().join("trace")).unwrap();
    let want: Vec<&str> = kernel
        .lines()
        .filter(|l| !l.starts_with('#') && !l.contains(": sched_wakeup: "))
        .collect();
    let others: Vec<&str> = got
        .lines()
        .filter(|l| !l.ends_with("<unknown event id 374>"))
        .collect();
    assert!(want.len() > 100);
    assert_eq!(others, want);
    assert_eq!(
        got.lines().count() - others.len(),
        kernel
            .lines()
            .filter(|l| l.contains(": sched_wakeup: "))
            .count()
    );
}
