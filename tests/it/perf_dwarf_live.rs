//! `--call-graph dwarf` on this machine: perf's recordings read by `tracectl perf script`
//! and `tracectl perf record`'s read by `perf script`, compared with what perf prints.
//! The program is tests/data/perf/calls.c as built under symfs (`hot` under
//! `caller_a`, `caller_b` and a recursion). Skips (with the reason) without root or
//! without perf.
//!
//! perf 6.1 names the frame in glibc's `__libc_start_main` from the inline information
//! of libc's debug file (`__libc_start_main_impl+0x84 (inlined)`), as tracectl does when
//! it finds that file. Every line is compared whole.

use std::path::Path;
use std::process::Command;

use crate::support::perf::{cc_workdir, perf_fixture, run, skip_reason};

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
/// line, those taken in the dynamic loader before `main` too; returns the number of
/// frame lines compared.
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
    let mut whole = 0;
    for (o, p) in ours.iter().zip(&perf) {
        assert_eq!(o[0], p[0], "{file}: sample header");
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

/// realign.c built here (`-O2 -fomit-frame-pointer`) and recorded by perf with a 4096-byte
/// stack copy: `drap`'s frames need r10 and an expression over rbp to find their
/// caller, and `deep`'s recursion reaches past the copy, where perf lists a frame at
/// `ffffffffffffffff`. Every sample is printed as perf does.
#[test]
fn perf_script_live_dwarf_realigned_stacks_match_perf() {
    let Some(dir) = cc_workdir() else {
        return;
    };
    let d = dir.path();
    let src = perf_fixture("realign.c");
    run(
        "cc",
        &["-O2", "-fomit-frame-pointer", "-o", "realign", &src],
        d,
    );
    let realign = d.join("realign");
    run(
        "perf",
        &[
            "record",
            "-q",
            "-o",
            "rd.data",
            "-e",
            "cpu-clock:u",
            "-c",
            "20000000",
            "--call-graph",
            "dwarf,4096",
            "--",
            realign.to_str().unwrap(),
            "4000",
        ],
        d,
    );
    let script = run("perf", &["script", "-i", "rd.data"], d);
    let lines: Vec<&str> = script.lines().collect();
    assert!(
        lines
            .windows(2)
            .any(|w| w[0].contains(" drap+") && w[1].contains(" middle+")),
        "perf unwinds drap to middle:\n{script}"
    );
    let whole = same_script(d, "rd.data");
    assert!(whole > 20, "{whole} frame lines compared whole");
}

/// Programs sampled from their first instruction: many samples fall in the dynamic
/// loader before `main`, in code with and without call frame information (where perf's
/// libunwind guesses from rbp or a PLT entry), and each is printed as perf does.
#[test]
fn perf_script_live_dwarf_dynamic_loader_matches_perf() {
    if let Some(why) = skip_reason() {
        crate::support::skips::skip(why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    run(
        "perf",
        &[
            "record",
            "-q",
            "-o",
            "ld.data",
            "-F",
            "20000",
            "--call-graph",
            "dwarf,4096",
            "--",
            "sh",
            "-c",
            "for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true; done",
        ],
        d,
    );
    let script = run("perf", &["script", "-i", "ld.data"], d);
    assert!(
        script.contains("/ld-linux"),
        "samples in the dynamic loader:\n{script}"
    );
    let whole = same_script(d, "ld.data");
    assert!(whole > 100, "{whole} frame lines compared whole");
}

/// A hot function in code the program's DWARF does not cover, with two global names at
/// one address (tests/data/perf/alias-spin.c): perf's symbol is `spin`, and the frame is
/// named by the symbol-table pick of binutils' `addr2line` (`__libc_spin`), shown
/// inlined. Every sample is printed as perf does.
#[test]
fn perf_script_live_dwarf_frame_without_debug_info_named_as_perf() {
    let Some(dir) = cc_workdir() else {
        return;
    };
    let d = dir.path();
    let src = perf_fixture;
    run(
        "cc",
        &["-O1", "-g0", "-c", "-o", "spin.o", &src("alias-spin.c")],
        d,
    );
    run(
        "cc",
        &["-O1", "-g", "-c", "-o", "main.o", &src("alias-main.c")],
        d,
    );
    run("cc", &["-o", "alias", "main.o", "spin.o"], d);
    let alias = d.join("alias");
    run(
        "perf",
        &[
            "record",
            "-q",
            "-o",
            "al.data",
            "-F",
            "999",
            "--call-graph",
            "dwarf",
            "--",
            alias.to_str().unwrap(),
            "300000000",
        ],
        d,
    );
    let script = run("perf", &["script", "-i", "al.data"], d);
    assert!(
        script.contains(" __libc_spin+"),
        "perf names the frame by binutils' pick:\n{script}"
    );
    let report = run(
        "perf",
        &[
            "report",
            "--stdio",
            "-i",
            "al.data",
            "--sort",
            "sym",
            "-g",
            "none",
            "--no-inline",
            "--no-children",
        ],
        d,
    );
    assert!(
        report.lines().any(|l| l.ends_with("] spin")),
        "perf's own symbol is spin:\n{report}"
    );
    let whole = same_script(d, "al.data");
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
