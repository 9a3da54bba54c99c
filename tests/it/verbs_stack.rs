//! `tracectl stack` on small recorded trees (the switch is the tree's
//! `host/stack_tracer_enabled`), and on the live kernel against `trace-cmd stack`.
//!
//! The build host's kernel has no stack tracer (its function tracer is blocked), so the
//! live test there compares the refusal; on a kernel with one it compares the report.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use crate::support::{live, skips, tree::bin};

/// The comment the kernel prints while the tracer is off and nothing was measured.
const DISABLED: &str = "#\n# Stack tracer disabled\n#\n# To enable the stack tracer, \
either add 'stacktrace' to the\n# kernel command line\n# or 'echo 1 > \
/proc/sys/kernel/stack_tracer_enabled'\n#\n";

const STACK: &str = "        Depth    Size   Location    (3 entries)\n        -----    ----   \
--------\n  0)     2928      88   __kmalloc+0x5b/0x250\n  1)     2840     120   \
ext4_htree_store_dirent+0x3c/0x120\n  2)     2720    2720   do_syscall_64+0x3b/0x90\n";

fn tree(dir: &Path, with_switch: bool) -> std::path::PathBuf {
    let root = dir.join("tracing");
    fs::create_dir_all(root.join("events")).unwrap();
    fs::create_dir_all(root.join("host")).unwrap();
    fs::write(root.join("trace"), "").unwrap();
    fs::write(root.join("available_events"), "").unwrap();
    fs::write(root.join("stack_trace"), format!("{DISABLED}{STACK}")).unwrap();
    fs::write(root.join("stack_max_size"), "2928\n").unwrap();
    if with_switch {
        fs::write(root.join("host/stack_tracer_enabled"), "0\n").unwrap();
    }
    root
}

fn run(root: &Path, args: &[&str]) -> Output {
    Command::new(bin())
        .arg("--tracefs")
        .arg(root)
        .arg("stack")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn stack_reports_starts_stops_and_resets_a_tree() {
    let dir = tempfile::tempdir().unwrap();
    let root = tree(dir.path(), true);
    let out = run(&root, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // trace-cmd's layout: the state, then stack_trace without its '#' lines.
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("(stack tracer not running)\n{STACK}")
    );

    assert!(run(&root, &["--start"]).status.success());
    assert_eq!(
        fs::read_to_string(root.join("host/stack_tracer_enabled")).unwrap(),
        "1"
    );
    let out = run(&root, &[]);
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("(stack tracer running)\n"));

    assert!(run(&root, &["--stop"]).status.success());
    assert_eq!(
        fs::read_to_string(root.join("host/stack_tracer_enabled")).unwrap(),
        "0"
    );

    assert!(run(&root, &["--reset"]).status.success());
    assert_eq!(
        fs::read_to_string(root.join("stack_max_size")).unwrap(),
        "0"
    );

    // One action at a time.
    assert!(!run(&root, &["--start", "--stop"]).status.success());
}

#[test]
fn stack_without_a_stack_tracer_fails_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = tree(dir.path(), false);
    for args in [&[][..], &["--start"], &["--stop"], &["--reset"]] {
        let out = run(&root, args);
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("stack tracer not configured") && err.contains("stack_tracer_enabled"),
            "{args:?}: {err}"
        );
        assert!(out.stdout.is_empty());
        assert_eq!(
            fs::read_to_string(root.join("stack_max_size")).unwrap(),
            "2928\n"
        );
        assert!(!root.join("host/stack_tracer_enabled").exists());
    }
}

#[test]
fn stack_garbage_switch_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let root = tree(dir.path(), true);
    fs::write(root.join("host/stack_tracer_enabled"), "on\n").unwrap();
    let out = run(&root, &[]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("invalid stack tracer state") && err.contains("\"on\\n\""),
        "{err}"
    );
}

/// Read only: `tracectl stack` and `trace-cmd stack` agree on the live kernel (both
/// print the same report, or both refuse because the kernel has no stack tracer).
#[test]
fn stack_matches_trace_cmd_live() {
    if !live::ready() {
        return;
    }
    if Command::new("trace-cmd").arg("--help").output().is_err() {
        skips::skip("trace-cmd is not installed (scripts/setup.sh installs it)");
        return;
    }
    let theirs = Command::new("trace-cmd").arg("stack").output().unwrap();
    let ours = Command::new(bin()).arg("stack").output().unwrap();
    assert_eq!(ours.status.success(), theirs.status.success());
    if theirs.status.success() {
        assert_eq!(
            String::from_utf8_lossy(&ours.stdout),
            String::from_utf8_lossy(&theirs.stdout)
        );
    } else {
        assert!(String::from_utf8_lossy(&theirs.stderr).contains("not configured"));
        assert!(String::from_utf8_lossy(&ours.stderr).contains("not configured"));
    }
}
