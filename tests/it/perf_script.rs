//! `tracectl perf script` prints what Debian's `perf script` (perf 6.1) printed for the
//! perf.data files under tests/data/perf (see its README for how each was made); the
//! expected texts under tests/data/perf/results were written by perf itself.

use std::path::{Path, PathBuf};
use std::process::Command;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf")
}

fn tracectl(args: &[&str]) -> (String, String, bool) {
    let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .current_dir(dir())
        .args(args)
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.success(),
    )
}

/// Compare line for line and report the first difference readably.
fn same_lines(got: &str, want: &str, what: &str) {
    for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
        assert_eq!(g, w, "{what}: line {} differs", i + 1);
    }
    assert_eq!(
        got.lines().count(),
        want.lines().count(),
        "{what}: number of lines"
    );
    assert_eq!(got, want, "{what}: whole text");
}

fn check(data: &str, extra: &[&str], result: &str) {
    check_with_kallsyms(data, "kallsyms", extra, result);
}

fn check_with_kallsyms(data: &str, kallsyms: &str, extra: &[&str], result: &str) {
    let mut args = vec![
        "perf",
        "script",
        "-i",
        data,
        "--symfs",
        "symfs",
        "--kallsyms",
        kallsyms,
    ];
    args.extend_from_slice(extra);
    let (out, err, ok) = tracectl(&args);
    assert!(ok, "tracectl {args:?} failed: {err}");
    let want = std::fs::read_to_string(dir().join("results").join(result)).unwrap();
    same_lines(&out, &want, result);
}

#[test]
fn perf_script_tracepoints_sched() {
    check("tp-sched.data", &[], "tp-sched.script");
}

#[test]
fn perf_script_tracepoints_mixed_print_fmts() {
    check("tp-mixed.data", &[], "tp-mixed.script");
}

#[test]
fn perf_script_tracepoint_with_call_chains() {
    check("tp-callchain.data", &[], "tp-callchain.script");
}

#[test]
fn perf_script_cpu_clock_call_chains() {
    check("cc-spin.data", &[], "cc-spin.script");
}

#[test]
fn perf_script_task_clock_fixed_period_call_chains() {
    check("tc-spin.data", &[], "tc-spin.script");
}

#[test]
fn perf_script_cpu_clock_without_call_chains() {
    check("cc-nocg.data", &[], "cc-nocg.script");
}

/// syms.c's regions, where perf 6.1 gives a sizeless label its end before choosing
/// among symbols at one address (a global label over a local function), passes over a
/// `SyS` alias, ignores a hidden label and finds a label inside a function only when its
/// tree lookup meets the label before the function.
#[test]
fn perf_script_symbol_choice_labels_aliases_and_sizes() {
    check("syms.data", &[], "syms.script");
    check(
        "syms.data",
        &["-F", "ip,sym,symoff,dso"],
        "syms.F-ip-sym-symoff-dso.script",
    );
}

/// kallsyms with aliases (`kallsyms-alias`): of several symbols at one address perf
/// names the last one listed, whatever its type, and it passes over `$` symbols (ARM
/// mapping symbols) even inside a function.
#[test]
fn perf_script_kallsyms_aliases_and_dollar_symbols() {
    check_with_kallsyms(
        "tp-callchain.data",
        "kallsyms-alias",
        &[],
        "tp-callchain.kallsyms-alias.script",
    );
}

#[test]
fn perf_script_fields_selected() {
    check(
        "cc-spin.data",
        &["-F", "comm,tid,time,event,ip,sym,dso"],
        "cc-spin.F-comm-tid-time-event-ip-sym-dso.script",
    );
    check(
        "tp-sched.data",
        &["-F", "comm,pid,tid,cpu,time,event,trace"],
        "tp-sched.F-comm-pid-tid-cpu-time-event-trace.script",
    );
}

#[test]
fn perf_script_field_the_samples_lack_is_refused() {
    let (_, err, ok) = tracectl(&["perf", "script", "-i", "cc-spin.data", "-F", "comm,cpu"]);
    assert!(!ok);
    assert!(
        err.contains("Samples for 'cpu-clock:ppp' event do not have CPU attribute set"),
        "{err}"
    );
}

#[test]
fn perf_script_corrupt_file_names_the_offset() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.data");
    let orig = std::fs::read(dir().join("tp-sched.data")).unwrap();
    std::fs::write(&bad, &orig[..orig.len() / 2]).unwrap();
    let (_, err, ok) = tracectl(&["perf", "script", "-i", bad.to_str().unwrap()]);
    assert!(!ok);
    assert!(
        err.contains("bad.data") && err.contains("at offset"),
        "{err}"
    );
}
