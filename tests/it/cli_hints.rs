//! The library's errors say what is wrong; the command line adds which command helps.

use std::process::Command;

use tracectl::tracefs::{Tracefs, TracefsError};

const TREE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tracefs-fixtures/linux-6.18-sched-irq"
);

fn stderr_of(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .arg("--tracefs")
        .arg(TREE)
        .args(args)
        .env_remove("TRACECTL_TRACEFS")
        .output()
        .unwrap();
    assert!(!out.status.success());
    String::from_utf8_lossy(&out.stderr).trim_end().to_string()
}

#[test]
fn library_errors_carry_no_command_advice() {
    let t = Tracefs::at(TREE);
    let errors: Vec<TracefsError> = vec![
        t.top().resolve_event("nosuchxyz").unwrap_err(),
        t.instance(Some("nosuch")).unwrap_err(),
        t.top().option("nosuchoption").unwrap_err(),
    ];
    for e in errors {
        let m = e.to_string();
        assert!(!m.contains("tracectl"), "{m}");
    }
    assert!(matches!(
        t.instance(Some("nosuch")),
        Err(TracefsError::UnknownInstance { .. })
    ));
}

#[test]
fn the_command_line_adds_the_command_that_helps() {
    assert_eq!(
        stderr_of(&["stream", "-e", "nosuchxyz"]),
        "tracectl: unknown event \"nosuchxyz\" (see `tracectl list -e`)"
    );
    assert_eq!(
        stderr_of(&["show", "-B", "nosuch"]),
        format!(
            "tracectl: {TREE}/instances/nosuch: no such instance; create it with `tracectl set -B nosuch` or see `tracectl list -B`"
        )
    );
}
