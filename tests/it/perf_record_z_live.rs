//! `tracectl perf record -z` (and `-z5`, `--compression-level=N`, `--mmap-flush`): the ring
//! data in PERF_RECORD_COMPRESSED records and the COMPRESSED header, read by perf 6.1
//! without a word on standard error, with the same samples in `perf script` as in
//! `tracectl perf script`, and the ratio of the summary line in the header. Skips (with
//! the reason) without root or without perf.

use std::path::Path;
use std::process::Command;

use crate::support::perf::{assert_same_lines, skip_reason};

/// `cmd args` in `d`: standard output and standard error; the test fails when it fails.
fn run_both(cmd: &str, args: &[&str], d: &Path) -> (String, String) {
    let out = Command::new(cmd)
        .current_dir(d)
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{cmd} {args:?}: {err}");
    (String::from_utf8_lossy(&out.stdout).into_owned(), err)
}

/// perf reading the file: its output, with nothing on standard error.
fn perf_quiet(args: &[&str], d: &Path) -> String {
    let (out, err) = run_both("perf", args, d);
    assert!(
        err.is_empty(),
        "perf {args:?} wrote on standard error:\n{err}"
    );
    out
}

/// The ratio of the summary line (`..., compressed (original X MB, ratio is R) ]`).
fn summary_ratio(stderr: &str) -> f64 {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("[ perf record: Captured and wrote "))
        .unwrap_or_else(|| panic!("no summary line:\n{stderr}"));
    let (_, after) = line
        .split_once(", compressed (original ")
        .unwrap_or_else(|| panic!("no compression in the summary line: {line}"));
    let (mb, after) = after.split_once(" MB, ratio is ").unwrap();
    assert!(mb.parse::<f64>().unwrap() > 0.0, "{line}");
    let ratio = after.strip_suffix(") ]").unwrap();
    assert_eq!(ratio.split_once('.').unwrap().1.len(), 3, "{line}");
    ratio.parse().unwrap()
}

#[test]
fn perf_record_z_live_perf_reads_the_compressed_records() {
    if let Some(why) = skip_reason() {
        crate::support::skips::skip(why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let work = "ls -R /usr/share/doc >/dev/null; ls -R /usr/lib >/dev/null";
    for (file, level_opts, level) in [
        ("z1.data", &["-z"][..], 1),
        // The level attached to the short option, as perf takes it.
        ("z5.data", &["-z5"][..], 5),
        (
            "z3.data",
            &["--compression-level=3", "--mmap-flush", "16K"][..],
            3,
        ),
        ("z30.data", &["--compression-level=30"][..], 22),
    ] {
        let rec = [
            &["perf", "record", "-o", file][..],
            level_opts,
            &[
                "-e",
                "cpu-clock",
                "-e",
                "sched:sched_switch",
                "-F",
                "4999",
                "-g",
                "--",
                "sh",
                "-c",
                work,
            ],
        ]
        .concat();
        let (_, err) = run_both(env!("CARGO_BIN_EXE_tracectl"), &rec, d);
        let ratio = summary_ratio(&err);

        let header = perf_quiet(&["report", "-i", file, "--header-only"], d);
        let want = format!(
            "# compressed : Zstd, level = {level}, ratio = {}",
            (ratio + 0.5) as u32
        );
        assert!(
            header.lines().any(|l| l == want),
            "{file}: no `{want}` in perf's header:\n{header}"
        );
        // As perf with -z: no build ids read back.
        let missing = header
            .lines()
            .find(|l| l.starts_with("# missing features:"))
            .unwrap();
        assert!(missing.contains(" BUILD_ID "), "{file}: {missing}");

        let stats = perf_quiet(&["report", "-i", file, "--stats"], d);
        assert!(stats.contains("COMPRESSED events:"), "{file}:\n{stats}");
        let samples: u64 = stats
            .lines()
            .find_map(|l| l.trim().strip_prefix("SAMPLE events:"))
            .and_then(|n| n.split_whitespace().next()?.parse().ok())
            .unwrap_or_else(|| panic!("{file}: no samples:\n{stats}"));
        assert!(samples > 0, "{file}:\n{stats}");

        // The samples decompressed: perf prints each, and ours are the same lines.
        let perf = perf_quiet(&["script", "-i", file, "-F", "comm,tid,time,event,ip"], d);
        let printed = perf.lines().filter(|l| l.contains("cpu-clock")).count()
            + perf.lines().filter(|l| l.contains("sched_switch")).count();
        assert_eq!(printed as u64, samples, "{file}:\n{stats}");
        let perf = perf_quiet(&["script", "-i", file], d);
        let (ours, ours_err) = run_both(
            env!("CARGO_BIN_EXE_tracectl"),
            &["perf", "script", "-i", file],
            d,
        );
        assert!(ours_err.is_empty(), "{file}: {ours_err}");
        assert_same_lines(&ours, &perf, &format!("perf script -i {file}"));
    }
}
