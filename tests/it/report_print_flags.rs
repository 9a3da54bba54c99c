//! `__print_flags` tables whose values are kernel constants (`{I_DIRTY_SYNC,
//! "I_DIRTY_SYNC"}` in the writeback events' formats), which libtraceevent cannot
//! evaluate: trace-cmd and perf print the first such name for a zero state and the state
//! in hex otherwise. The recordings and the expected texts (trace-cmd 3.1.6's `report`,
//! perf 6.1's `script`) are in `tests/data/tracecmd/print-flags/` (`make-recording.sh`).

use std::path::{Path, PathBuf};
use std::process::Command;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tracecmd/print-flags")
}

fn tracectl(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .current_dir(dir())
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "tracectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn same(got: &str, golden: &str) {
    let want = std::fs::read_to_string(dir().join(golden)).unwrap();
    // The goldens hold both kinds of state, so the test sees each rule.
    assert!(
        want.contains("state=I_DIRTY_SYNC "),
        "{golden} lacks a zero state"
    );
    assert!(want.contains("state=0x"), "{golden} lacks a non-zero state");
    for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
        assert_eq!(g, w, "{golden} line {}", i + 1);
    }
    assert_eq!(
        got.lines().count(),
        want.lines().count(),
        "{golden}: line count"
    );
}

#[test]
fn report_prints_unknown_flag_names_as_trace_cmd() {
    same(&tracectl(&["report", "-i", "writeback.dat"]), "report.txt");
}

#[test]
fn perf_script_prints_unknown_flag_names_as_perf() {
    same(
        &tracectl(&["perf", "script", "-i", "writeback.perf.data"]),
        "script.txt",
    );
}
