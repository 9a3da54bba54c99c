//! Breakpoint events (`mem:ADDR[/LEN][:ACCESS]`) against Debian's perf 6.1: a program
//! (tests/data/perf/bpwrite.c, built without PIE so that its global has a known address)
//! writes a global N times; `tracectl perf stat` counts what `perf stat` counts, exactly,
//! `tracectl perf record` opens the attr perf opens (`perf evlist -v`), and perf script
//! reads tracectl's file as tracectl does. Skips without root, perf or a C compiler.

use std::path::Path;
use std::process::Command;

use crate::support::perf::{cc_workdir, run};

const TRACECTL: &str = env!("CARGO_BIN_EXE_tracectl");

/// The address of `target` in the program built in `dir`, as perf's `mem:` takes it.
fn target_address(dir: &Path) -> String {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf/bpwrite.c");
    let args = ["-O1", "-no-pie", "-o", "bpwrite", src.to_str().unwrap()];
    run("cc", &args, dir);
    let syms = run("nm", &["bpwrite"], dir);
    let addr = syms
        .lines()
        .find_map(|l| l.strip_suffix(" B target"))
        .expect("nm lists target");
    format!("0x{addr}")
}

/// Standard error of `stat` with `-x,` (the counts) of one tool.
fn stat_csv(tool: &str, events: &str, dir: &Path) -> String {
    let mut c = if tool == "perf" {
        Command::new("perf")
    } else {
        let mut c = Command::new(TRACECTL);
        c.arg("perf");
        c
    };
    let out = c
        .current_dir(dir)
        .args(["stat", "-x,", "-e", events, "--", "./bpwrite", "1000"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{tool} stat -e {events}: {out:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The count and name columns of `-x,` lines (the running time varies).
fn counts_and_names(csv: &str) -> Vec<(String, String)> {
    csv.lines()
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].to_string(), f.get(2).unwrap_or(&"").to_string())
        })
        .collect()
}

#[test]
fn perf_breakpoint_events_as_perf_live() {
    let Some(dir) = cc_workdir() else { return };
    let d = dir.path();
    let a = target_address(d);
    // Writes (8 bytes), reads or writes (default length 4), and reads alone, which x86
    // cannot watch (<not supported>); a group with a breakpoint; modifiers after the
    // access.
    let lists = [
        format!("mem:{a}/8:w,mem:{a}:rw,mem:{a}:r"),
        format!("{{mem:{a}/8:w,cs}}"),
        format!("mem:{a}:w:u,mem:{a}:w:k"),
    ];
    for events in &lists {
        let ours = counts_and_names(&stat_csv("tracectl", events, d));
        let perf = counts_and_names(&stat_csv("perf", events, d));
        // Context switches are not deterministic.
        let strip = |v: &[(String, String)]| -> Vec<(String, String)> {
            v.iter()
                .map(|(c, n)| (if n == "cs" { "N".into() } else { c.clone() }, n.clone()))
                .collect()
        };
        assert_eq!(strip(&ours), strip(&perf), "perf stat -e {events}");
        assert!(
            ours.iter()
                .any(|(c, _)| c.parse::<u64>().is_ok_and(|n| n >= 1000)),
            "the 1000 writes are counted: {ours:?}"
        );
    }
    // The recording: the attr perf opens, and a sample per write.
    let ev = format!("mem:{a}/8:w");
    run(
        "perf",
        &[
            "record",
            "-q",
            "-o",
            "perf.data",
            "-e",
            &ev,
            "--",
            "./bpwrite",
            "300",
        ],
        d,
    );
    run(
        TRACECTL,
        &[
            "perf",
            "record",
            "-q",
            "-o",
            "t.data",
            "-e",
            &ev,
            "--",
            "./bpwrite",
            "300",
        ],
        d,
    );
    let attrs = |f: &str| run("perf", &["evlist", "-v", "-i", f], d);
    assert_eq!(attrs("t.data"), attrs("perf.data"), "perf evlist -v");
    let perf = run("perf", &["script", "-i", "t.data"], d);
    let ours = run(TRACECTL, &["perf", "script", "-i", "t.data"], d);
    assert_eq!(ours, perf, "perf script of tracectl's recording");
    let in_main = ours.lines().filter(|l| l.contains(" main+")).count();
    assert_eq!(in_main, 300, "one sample per write in main:\n{ours}");
}
