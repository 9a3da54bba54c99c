//! `list -s`, `-e R -F`, `-F --full`, `-l`, `-R`, `-p` and `-t` print what trace-cmd
//! 3.1.6's `trace-cmd list` prints with the same options on the live tracefs (read
//! only). Skips (with the reason) without root, tracefs or trace-cmd.

use std::process::Command;

use crate::support::{live, skips, tree::bin};

fn stdout(cmd: &mut Command) -> String {
    let o = cmd.output().unwrap();
    assert!(
        o.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn list_details_match_trace_cmd_live() {
    if !live::ready() {
        return;
    }
    if Command::new("trace-cmd").arg("--help").output().is_err() {
        skips::skip("trace-cmd is not installed (scripts/setup.sh installs it)");
        return;
    }
    for args in [
        &["-s"][..],
        &["-e", "sched_sw", "-F"],
        &["-e", "sched_sw", "-F", "--full"],
        &["-e", "^irq:", "-l"],
        &["-e", "sched_sw", "-R"],
        &["-e", "sched_switch$", "-l", "-R"],
        &["-p"],
        &["-t"],
    ] {
        let theirs = stdout(Command::new("trace-cmd").arg("list").args(args));
        let ours = stdout(
            Command::new(bin())
                .args(["--tracefs", live::TRACEFS, "list"])
                .args(args),
        );
        assert!(
            theirs.lines().count() > 0,
            "trace-cmd list {args:?} printed nothing"
        );
        assert_eq!(ours, theirs, "list {args:?}");
    }
}

/// -F, -l and -R describe the events -e picks: without -e they are refused with the
/// reason rather than ignored.
#[test]
fn list_details_without_e_are_refused() {
    let o = Command::new(bin())
        .arg("--tracefs")
        .arg(crate::support::tree::repo().join("tracefs-fixtures/linux-6.18-all"))
        .args(["list", "-l"])
        .env_remove("TRACECTL_TRACEFS")
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("add -e REGEX"));
}
