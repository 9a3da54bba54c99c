//! Progress lines: drawn on stderr when it is a terminal (here: a pseudo-terminal made by
//! script(1)) and the report goes elsewhere; never when stderr is a pipe.

use std::path::Path;
use std::process::Command;

fn report_file() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/tracecmd/2cpu-v7.dat")
        .display()
        .to_string()
}

#[test]
fn report_draws_progress_on_a_terminal_only() {
    let bin = env!("CARGO_BIN_EXE_tracectl");
    // A pipe: the report alone, nothing on stderr.
    let o = Command::new(bin)
        .args(["report", "-i", &report_file()])
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(
        o.stderr.is_empty(),
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    if Command::new("script").arg("--version").output().is_err() {
        crate::support::skips::skip("script(1) (util-linux) is not installed");
        return;
    }
    // stderr on a pseudo-terminal, the report to /dev/null: a progress line with the
    // number of events.
    let o = Command::new("script")
        .args(["-qec"])
        .arg(format!("{bin} report -i {} >/dev/null", report_file()))
        .arg("/dev/null")
        .output()
        .unwrap();
    assert!(o.status.success());
    let tty = String::from_utf8_lossy(&o.stdout);
    assert!(
        tty.contains("reporting:"),
        "no progress line on the terminal: {tty:?}"
    );
    assert!(tty.contains(" events ("), "no event count: {tty:?}");
    // -q: nothing.
    let o = Command::new("script")
        .args(["-qec"])
        .arg(format!("{bin} report -q -i {} >/dev/null", report_file()))
        .arg("/dev/null")
        .output()
        .unwrap();
    let tty = String::from_utf8_lossy(&o.stdout);
    assert!(!tty.contains("reporting:"), "progress despite -q: {tty:?}");
}
