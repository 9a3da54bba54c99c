//! One resolver for `-e` specs: every command that takes one names the unknown event
//! and the closest known names.

use std::process::Command;

use tracectl::tracefs::{select_events, EventName, Tracefs, TracefsError};

const TREE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tracefs-fixtures/linux-6.18-sched-irq"
);

fn tracectl(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .args(args)
        .env_remove("TRACECTL_TRACEFS")
        .output()
        .unwrap()
}

#[test]
fn select_events_names_the_first_unknown_spec_with_suggestions() {
    let avail = Tracefs::at(TREE).available_events().unwrap();
    let got = select_events(&["sched:sched_switch", "softirq_entry"], &avail).unwrap();
    assert_eq!(
        got,
        vec![
            EventName::new("irq", "softirq_entry"),
            EventName::new("sched", "sched_switch")
        ]
    );
    match select_events(&["irq", "sched:sched_wakeup_nwe"], &avail) {
        Err(TracefsError::UnknownEvent { name, suggestions }) => {
            assert_eq!(name, "sched:sched_wakeup_nwe");
            assert_eq!(suggestions[0], "sched:sched_wakeup_new");
        }
        r => panic!("{r:?}"),
    }
}

#[test]
fn stream_of_an_unknown_event_fails_with_a_suggestion() {
    let out = tracectl(&["--tracefs", TREE, "stream", "-e", "sched:sched_swich"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(out.stdout.is_empty());
    assert_eq!(
        err.trim_end(),
        "tracectl: unknown event \"sched:sched_swich\"; did you mean sched:sched_switch?"
    );
}

#[test]
fn record_of_an_unknown_event_blames_the_event_live() {
    if !nix::unistd::geteuid().is_root()
        || !std::path::Path::new("/sys/kernel/tracing/available_events").exists()
    {
        crate::support::skips::skip("needs root and a live tracefs at /sys/kernel/tracing");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("x.dat");
    let out = tracectl(&[
        "--tracefs",
        "/sys/kernel/tracing",
        "record",
        "-e",
        "sched:sched_swich",
        "-o",
        out_file.to_str().unwrap(),
        "--",
        "true",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert_eq!(
        err.trim_end(),
        "tracectl: unknown event \"sched:sched_swich\"; did you mean sched:sched_switch?"
    );
    assert!(!out_file.exists());
}
