//! `tracectl perf report` prints `perf report --stdio -g none`'s table (perf 6.1) for the
//! perf.data files under tests/data/perf. The expected texts were written by perf in
//! that directory with `perf report -i NAME.data --symfs symfs --kallsyms kallsyms
//! --stdio -g none [OPTIONS] | grep -v '^# (Tip:'` (perf ends with a random tip).

use std::path::{Path, PathBuf};
use std::process::Command;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf")
}

fn check(data: &str, extra: &[&str], result: &str) {
    let mut args = vec![
        "perf",
        "report",
        "-i",
        data,
        "--symfs",
        "symfs",
        "--kallsyms",
        "kallsyms",
        "--stdio",
        "-g",
        "none",
    ];
    args.extend_from_slice(extra);
    let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .current_dir(dir())
        .args(&args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = String::from_utf8(out.stdout).unwrap();
    let want = std::fs::read_to_string(dir().join("results").join(result)).unwrap();
    for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
        assert_eq!(g, w, "{result}: line {} differs", i + 1);
    }
    assert_eq!(got, want, "{result}");
}

#[test]
fn perf_report_children_by_default_with_call_chains() {
    check("cc-spin.data", &[], "report.cc-spin.txt");
}

#[test]
fn perf_report_no_children() {
    check(
        "cc-spin.data",
        &["--no-children"],
        "report.cc-spin_--no-children.txt",
    );
    check(
        "cc-spin.data",
        &["--no-children", "--sort", "comm,dso"],
        "report.cc-spin_--no-children_--sort_comm_dso.txt",
    );
}

#[test]
fn perf_report_sort_keys() {
    check(
        "tc-spin.data",
        &["--sort", "dso,sym"],
        "report.tc-spin_--sort_dso_sym.txt",
    );
    check(
        "tp-sched.data",
        &["--sort", "pid"],
        "report.tp-sched_--sort_pid.txt",
    );
}

#[test]
fn perf_report_tracepoints_several_events() {
    check("tp-sched.data", &[], "report.tp-sched.txt");
    check("tp-mixed.data", &[], "report.tp-mixed.txt");
}

#[test]
fn perf_report_without_call_chains() {
    check("cc-nocg.data", &[], "report.cc-nocg.txt");
}

/// Samples taken in perf's child before its exec carry the comm `perf-exec`; perf sizes
/// the command column by the comm each row's thread ended with (`sh`) and cuts
/// `perf-exec` to that width.
#[test]
fn perf_report_comm_column_is_sized_by_the_last_comm() {
    check("tp-exec.data", &[], "report.tp-exec.txt");
    check(
        "tp-exec.data",
        &["--sort", "comm"],
        "report.tp-exec_--sort_comm.txt",
    );
    check(
        "tp-exec.data",
        &["--sort", "pid"],
        "report.tp-exec_--sort_pid.txt",
    );
}
