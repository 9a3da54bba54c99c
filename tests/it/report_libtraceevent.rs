//! Formats libtraceevent reads its own way, against trace-cmd 3.1.6 and perf 6.1:
//! - `__print_flags` tables whose values are kernel constants (`{I_DIRTY_SYNC,
//!   "I_DIRTY_SYNC"}` in the writeback events' formats), which libtraceevent cannot
//!   evaluate: trace-cmd and perf print the first such name for a zero state and the
//!   state in hex otherwise (`tests/data/tracecmd/print-flags/`);
//! - `tlb:tlb_flush`, printed by the tlb plugin, and the maple_tree events, whose format
//!   strings hold a raw tab, which trace-cmd's libtraceevent fails: `[FAILED TO PARSE]`
//!   and the raw fields, plain and with `-R` (`tests/data/tracecmd/tlb-maple/`).
//!
//! Each directory's `make-recording.sh` says how the recordings and the expected texts
//! were made.

use std::path::{Path, PathBuf};
use std::process::Command;

fn dir() -> PathBuf {
    data("print-flags")
}

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/tracecmd")
        .join(name)
}

fn tracectl_in(dir: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .current_dir(dir)
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

/// The goldens hold both kinds of state, so the test sees each rule.
const BOTH_STATES: [&str; 2] = ["state=I_DIRTY_SYNC ", "state=0x"];

#[test]
fn report_prints_unknown_flag_names_as_trace_cmd() {
    same_as(
        &dir(),
        &["report", "-i", "writeback.dat"],
        "report.txt",
        &BOTH_STATES,
    );
}

#[test]
fn perf_script_prints_unknown_flag_names_as_perf() {
    same_as(
        &dir(),
        &["perf", "script", "-i", "writeback.perf.data"],
        "script.txt",
        &BOTH_STATES,
    );
}

fn same_as(dir: &Path, args: &[&str], golden: &str, must_hold: &[&str]) {
    let got = tracectl_in(dir, args);
    let want = std::fs::read_to_string(dir.join(golden)).unwrap();
    for m in must_hold {
        assert!(want.contains(m), "{golden} lacks {m:?}");
    }
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
fn report_prints_tlb_flush_with_the_tlb_plugin_and_fails_tab_formats() {
    same_as(
        &data("tlb-maple"),
        &["report", "-i", "tlb-maple.dat"],
        "report.txt",
        &[
            " tlb_flush: ",
            "reason=local mm shootdown (3)",
            " ma_write: ",
            "[FAILED TO PARSE] fn=0x",
        ],
    );
}

#[test]
fn report_raw_fields_of_a_failed_format_are_plain() {
    same_as(
        &data("tlb-maple"),
        &["report", "-R", "-i", "tlb-maple.dat"],
        "report-R.txt",
        &[" ma_read: ", " fn=0x"],
    );
}
