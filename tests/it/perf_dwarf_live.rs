//! `--call-graph dwarf` on this machine: perf's recordings read by `tracectl perf script`
//! and `tracectl perf record`'s read by `perf script`, compared with what perf prints.
//! The program is tests/data/perf/calls.c as built under symfs (`hot` under
//! `caller_a`, `caller_b` and a recursion). Skips (with the reason) without root or
//! without perf.
//!
//! perf 6.1 names the frame in glibc's `__libc_start_main` from the inline information
//! of libc's debug file (`__libc_start_main_impl+0x84 (inlined)`), as tracectl does when
//! it finds that file. Every line is compared whole (see [`same_script`] for the samples
//! taken in the dynamic loader).

use std::path::Path;
use std::process::Command;

use crate::support::perf::{run, skip_reason};

/// A copy of the calls program in `d`.
fn calls_in(d: &Path) -> String {
    let calls = d.join("calls");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf/symfs/tmp/tpf/calls"),
        &calls,
    )
    .unwrap();
    calls.to_str().unwrap().to_string()
}

/// `tracectl perf script` and `perf script` on `file`, sample by sample and line for
/// line; returns the number of frame lines compared.
///
/// Samples taken in the dynamic loader (before `main`) are left out, at most one in
/// twenty: perf prints each inline level of ld.so's code as a line of its own, and
/// ld.so's startup code without call frame information (`_start` at exec, crti's
/// `_init`) is unwound by libunwind's own guesses, which framehop does not make.
fn same_script(d: &Path, file: &str) -> usize {
    let perf = run("perf", &["script", "-i", file], d);
    let ours = run(
        env!("CARGO_BIN_EXE_tracectl"),
        &["perf", "script", "-i", file],
        d,
    );
    let blocks = |t: &str| -> Vec<Vec<String>> {
        t.split("\n\n")
            .filter(|b| !b.trim().is_empty())
            .map(|b| b.lines().map(str::to_string).collect())
            .collect()
    };
    let (ours, perf) = (blocks(&ours), blocks(&perf));
    assert_eq!(ours.len(), perf.len(), "{file}: number of samples");
    let (mut whole, mut loader) = (0, 0);
    for (o, p) in ours.iter().zip(&perf) {
        assert_eq!(o[0], p[0], "{file}: sample header");
        if p.iter().any(|l| l.contains("/ld-linux")) {
            loader += 1;
            continue;
        }
        assert_eq!(
            o.len(),
            p.len(),
            "{file}: frames of {:#?}\nperf: {:#?}",
            o,
            p
        );
        for (ol, pl) in o.iter().zip(p) {
            assert_eq!(ol, pl, "{file}: a frame of {o:#?}\nperf: {p:#?}");
            whole += usize::from(pl.starts_with('\t'));
        }
    }
    assert!(
        loader * 20 <= perf.len(),
        "{file}: {loader} of {} samples in the dynamic loader",
        perf.len()
    );
    whole
}

/// perf's own dwarf recording: every unwound frame tracectl prints is perf's, through
/// main to `_start`.
#[test]
fn perf_script_live_dwarf_call_chains_match_perf() {
    if let Some(why) = skip_reason() {
        crate::support::skips::skip(why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let calls = calls_in(d);
    run(
        "perf",
        &[
            "record",
            "-q",
            "-o",
            "dw.data",
            "-F",
            "999",
            "--call-graph",
            "dwarf",
            "--",
            &calls,
        ],
        d,
    );
    let script = run("perf", &["script", "-i", "dw.data"], d);
    assert!(
        script.lines().any(|l| l.contains(" _start+")),
        "perf unwound to _start:\n{script}"
    );
    let whole = same_script(d, "dw.data");
    assert!(whole > 100, "{whole} frame lines compared whole");
}

/// tracectl's dwarf recording: perf reads the attr (registers, stack size, kernel-only
/// chain) and unwinds the samples to the hot function's callers; both print the same.
#[test]
fn perf_record_live_dwarf_is_unwound_by_perf() {
    if let Some(why) = skip_reason() {
        crate::support::skips::skip(why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let calls = calls_in(d);
    run(
        env!("CARGO_BIN_EXE_tracectl"),
        &[
            "perf",
            "record",
            "-F",
            "999",
            "--call-graph",
            "dwarf,4100",
            "-o",
            "dw.data",
            "--",
            &calls,
        ],
        d,
    );
    let evlist = run("perf", &["evlist", "-v", "-i", "dw.data"], d);
    for want in [
        "CALLCHAIN",
        "REGS_USER|STACK_USER",
        "exclude_callchain_user: 1",
        "sample_regs_user: 0xff0fff",
        // 4100 rounded up to a multiple of 8, as perf does.
        "sample_stack_user: 4104",
    ] {
        assert!(evlist.contains(want), "{want} in {evlist}");
    }
    let script = run("perf", &["script", "-i", "dw.data"], d);
    let lines: Vec<&str> = script.lines().collect();
    for caller in ["caller_a", "caller_b", "rec"] {
        assert!(
            lines
                .windows(2)
                .any(|w| w[0].contains(" hot+") && w[1].contains(&format!(" {caller}+"))),
            "perf unwinds hot to {caller}:\n{script}"
        );
    }
    let whole = same_script(d, "dw.data");
    assert!(whole > 100, "{whole} frame lines compared whole");
}

/// `--call-graph lbr` and a stack size perf refuses fail before anything is recorded.
#[test]
fn perf_record_refused_call_graphs_record_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (mode, says) in [
        ("lbr", "hardware counters"),
        ("dwarf,65529", "at most 65528"),
        ("dwarf,0", "incorrect stack dump size"),
        ("dwarf,8k", "incorrect stack dump size"),
        ("frames", "unknown mode"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
            .current_dir(d)
            .args(["perf", "record", "--call-graph", mode, "--", "true"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{mode} refused");
        assert!(err.contains(mode) && err.contains(says), "{mode}: {err}");
        assert!(!d.join("perf.data").exists(), "{mode}: nothing recorded");
    }
}
