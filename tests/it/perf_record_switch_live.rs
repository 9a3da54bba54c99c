//! `tracectl perf record`'s options that change when and where records are written,
//! against Debian's perf 6.1 recording the same command with the same option:
//! `--tail-synthesize` (and `--overwrite`, which turns it on) writes only the command's
//! COMM at the start and, after the rings' records, FINISHED_INIT, the command's COMM,
//! then ID_INDEX, the kernel's maps, THREAD_MAP, CPU_MAP and the tasks, in perf's order;
//! `--switch-output` (SIGUSR2, a size, a time) with `--switch-max-files`, and
//! `--timestamp-filename`, write perf's `OUTPUT.<timestamp>` files with perf's lines,
//! each file's records in perf's order and read by `perf report`/`perf script` without a
//! warning. Skips (with the reason) without root or perf.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::perf::{run_clean, skip_reason, Reaped};

/// The program and leading arguments of `perf record` for one of the two tools.
fn record_cmd(tool: &str) -> Command {
    let mut c = Command::new(tool);
    if tool == "perf" {
        c.arg("record");
    } else {
        c.args(["perf", "record"]);
    }
    c
}

const TOOLS: [&str; 2] = ["perf", env!("CARGO_BIN_EXE_tracectl")];

/// `tool perf record ARGS` in `d`, which must succeed: its standard error.
fn record(tool: &str, args: &[&str], d: &Path) -> String {
    let out = record_cmd(tool).current_dir(d).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{tool} record {args:?}: {err}");
    err
}

/// The kinds of the records of `file`, in file order (`perf script -D`'s `event: N`).
fn kinds(d: &Path, file: &str) -> Vec<u32> {
    let out = run_clean("perf", &["script", "-D", "-i", file], d);
    let mut v: Vec<(u64, u32)> = out
        .lines()
        .filter_map(|l| {
            let (head, kind) = l.split_once("]: event: ")?;
            let off = head.strip_prefix("0x")?.split('@').next()?;
            Some((
                u64::from_str_radix(off, 16).ok()?,
                kind.trim().parse().ok()?,
            ))
        })
        .collect();
    v.sort_unstable();
    v.into_iter().map(|(_, k)| k).collect()
}

const COMM: u32 = 3;
const SAMPLE: u32 = 9;
const FINISHED_ROUND: u32 = 68;
const FINISHED_INIT: u32 = 82;
const ID_INDEX: u32 = 69;
const LOST_SAMPLES: u32 = 13;

/// The kinds without those that depend on when the rings were read (samples, rounds,
/// lost samples).
fn steady(kinds: &[u32]) -> Vec<u32> {
    kinds
        .iter()
        .copied()
        .filter(|k| ![SAMPLE, FINISHED_ROUND, LOST_SAMPLES].contains(k))
        .collect()
}

/// The kinds from FINISHED_INIT on, each kind once, in the order it first comes.
fn first_seen_after_init(kinds: &[u32]) -> Vec<u32> {
    let at = kinds.iter().position(|&k| k == FINISHED_INIT).unwrap();
    let mut v = Vec::new();
    for &k in &steady(&kinds[at..]) {
        if !v.contains(&k) {
            v.push(k);
        }
    }
    v
}

/// The files `name.<16 digits>` of `d`, sorted (oldest first).
fn stamped_files(d: &Path, name: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|f| {
            f.strip_prefix(name)
                .and_then(|r| r.strip_prefix('.'))
                .is_some_and(|s| s.len() == 16 && s.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect();
    v.sort();
    v
}

/// perf's `[ perf record: ... ]` lines with their numbers and time stamps as `N`.
fn record_lines(err: &str) -> Vec<String> {
    err.lines()
        .filter(|l| l.starts_with("[ perf record:"))
        .map(|l| {
            let mut s = String::new();
            let mut in_number = false;
            for c in l.chars() {
                if c.is_ascii_digit() || (in_number && c == '.') {
                    if !in_number {
                        s.push('N');
                    }
                    in_number = true;
                } else {
                    in_number = false;
                    s.push(c);
                }
            }
            s
        })
        .collect()
}

/// Each file reads in perf's report and script without a warning.
fn reads_cleanly(d: &Path, files: &[String]) {
    for f in files {
        run_clean("perf", &["report", "--stats", "-i", f], d);
        run_clean("perf", &["script", "-i", f], d);
    }
}

/// `--tail-synthesize` and `--overwrite`, for a command and for `-a`: the same kinds of
/// records in the same order as perf's (ring records aside), nothing but the command's
/// COMM before FINISHED_INIT, which follows the rings' records.
#[test]
fn perf_record_switch_live_tail_synthesis_as_perf() {
    if let Some(why) = skip_reason() {
        crate::support::skips::skip(why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for opts in [
        &["--tail-synthesize"][..],
        &["--overwrite"][..],
        &["--tail-synthesize", "--namespaces"][..],
        &["--tail-synthesize", "-a"][..],
    ] {
        let mut found = Vec::new();
        for tool in TOOLS {
            let args = [&["-q", "-o", "t.data"][..], opts, &["--", "sleep", "0.2"]].concat();
            record(tool, &args, d);
            reads_cleanly(d, &["t.data".to_string()]);
            found.push(kinds(d, "t.data"));
        }
        let (perf, ours) = (&found[0], &found[1]);
        let init = ours.iter().position(|&k| k == FINISHED_INIT).unwrap();
        assert!(
            ours[..init].contains(&SAMPLE) || opts.contains(&"-a"),
            "{opts:?}: the samples come before FINISHED_INIT: {ours:?}"
        );
        assert!(
            !ours[..init].contains(&ID_INDEX),
            "{opts:?}: nothing synthesized before FINISHED_INIT but the COMM: {ours:?}"
        );
        assert_eq!(
            ours[0], COMM,
            "{opts:?}: the command's COMM first: {ours:?}"
        );
        if opts.contains(&"-a") {
            // Which processes run differs from one recording to the next: their kinds
            // come in perf's order.
            assert_eq!(
                first_seen_after_init(ours),
                first_seen_after_init(perf),
                "{opts:?}: tracectl's kinds after FINISHED_INIT, then perf's"
            );
        } else {
            // The rings' records (before FINISHED_INIT) come in the order the rings are
            // read, which depends on the CPUs the command ran on: compared as a set of
            // kinds; from FINISHED_INIT on, in order.
            let split = |k: &[u32]| {
                let at = k.iter().position(|&x| x == FINISHED_INIT).unwrap();
                let mut rings = steady(&k[..at]);
                rings.sort_unstable();
                (rings, steady(&k[at..]))
            };
            assert_eq!(
                split(ours),
                split(perf),
                "{opts:?}: tracectl's kinds, then perf's: {ours:?} {perf:?}"
            );
        }
    }
}

/// `--tail-synthesize` on a busy command: perf's report names the samples' command and
/// objects in our file as in perf's (no more unresolved objects than perf leaves).
#[test]
fn perf_record_switch_live_tail_synthesis_symbolizes() {
    if let Some(why) = skip_reason() {
        crate::support::skips::skip(why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let busy = "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done";
    let mut unknown = Vec::new();
    for tool in TOOLS {
        let args = [
            "-q",
            "--tail-synthesize",
            "-o",
            "b.data",
            "--",
            "sh",
            "-c",
            busy,
        ];
        record(tool, &args, d);
        let out = run_clean("perf", &["script", "-F", "comm,dso", "-i", "b.data"], d);
        let lines: Vec<&str> = out.lines().filter(|l| !l.trim().is_empty()).collect();
        assert!(lines.len() > 20, "{tool}: few samples: {out}");
        for l in &lines {
            assert!(l.trim_start().starts_with("sh "), "{tool}: {l}");
        }
        let n = lines.iter().filter(|l| l.contains("[unknown]")).count();
        unknown.push(n as f64 / lines.len() as f64);
    }
    assert!(
        unknown[1] <= unknown[0] + 0.1,
        "unresolved samples: perf {:.2}, tracectl {:.2}",
        unknown[0],
        unknown[1]
    );
}

/// Wait until the recorded command (a child of `tool`'s process) has exec'd `comm`.
fn wait_for_exec(parent: u32, comm: &str) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(5) {
        let children = std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children"))
            .unwrap_or_default();
        for c in children.split_whitespace() {
            let name = std::fs::read_to_string(format!("/proc/{c}/comm")).unwrap_or_default();
            if name.trim() == comm {
                return;
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("the command {comm} did not start");
}

/// `--switch-output` (signal): a SIGUSR2 while the command runs gives two files, named,
/// announced and filled as perf's: the second starts with the records of what exists,
/// the command's COMM and maps, then FINISHED_INIT; the attrs are perf's.
#[test]
fn perf_record_switch_live_signal_as_perf() {
    if let Some(why) = skip_reason() {
        crate::support::skips::skip(why);
        return;
    }
    let mut found = Vec::new();
    for tool in TOOLS {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let child = record_cmd(tool)
            .current_dir(d)
            .args(["--switch-output", "-o", "s.data", "--", "sleep", "1"])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let mut child = Reaped(child);
        wait_for_exec(pid, "sleep");
        std::thread::sleep(Duration::from_millis(200));
        // SAFETY: kill on our own child, not reaped yet.
        assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGUSR2) }, 0);
        let mut err = String::new();
        child
            .0
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let status = child.0.wait().unwrap();
        assert!(status.success(), "{tool}: {err}");
        let files = stamped_files(d, "s.data");
        assert_eq!(files.len(), 2, "{tool}: {files:?}");
        assert!(!d.join("s.data").exists(), "{tool}: no unstamped file");
        reads_cleanly(d, &files);
        for f in &files {
            assert!(err.contains(&format!("[ perf record: Dump {f} ]")), "{err}");
        }
        let evlist = run_clean("perf", &["evlist", "-v", "-i", &files[1]], d);
        let evlist: String = evlist
            .lines()
            .map(|l| l.split(", id = ").next().unwrap_or(l).to_string() + "\n")
            .collect();
        let header = run_clean("perf", &["report", "--header-only", "-i", &files[1]], d);
        let missing_build_id = header
            .lines()
            .any(|l| l.starts_with("# missing features:") && l.contains(" BUILD_ID "));
        found.push((
            record_lines(&err),
            files
                .iter()
                .map(|f| steady(&kinds(d, f)))
                .collect::<Vec<_>>(),
            evlist,
            missing_build_id,
        ));
    }
    let (perf, ours) = (&found[0], &found[1]);
    assert_eq!(ours.0, perf.0, "the [ perf record: ] lines");
    assert_eq!(ours.1, perf.1, "each file's kinds of records");
    assert_eq!(ours.2, perf.2, "perf evlist -v");
    assert!(perf.3 && ours.3, "no build ids with --switch-output");
}

/// `--switch-output=1s` with `--switch-max-files=1`: two switches announced (one at the
/// second, one at the end), one file left, as perf; and `--timestamp-filename` alone
/// renames the one file with perf's line.
#[test]
fn perf_record_switch_live_time_max_files_and_timestamp() {
    if let Some(why) = skip_reason() {
        crate::support::skips::skip(why);
        return;
    }
    for opts in [
        &["--switch-output=1s", "--switch-max-files=1"][..],
        &["--timestamp-filename"][..],
    ] {
        let mut found = Vec::new();
        for tool in TOOLS {
            let dir = tempfile::tempdir().unwrap();
            let d = dir.path();
            let secs = if opts.len() == 2 { "1.3" } else { "0.1" };
            let args = [&["-o", "m.data"][..], opts, &["--", "sleep", secs]].concat();
            let err = record(tool, &args, d);
            let files = stamped_files(d, "m.data");
            reads_cleanly(d, &files);
            let last = format!("[ perf record: Dump {} ]", files.last().unwrap());
            assert!(err.contains(&last), "{tool} {opts:?}: {err}");
            found.push((record_lines(&err), files.len()));
        }
        assert_eq!(found[1], found[0], "{opts:?}: tracectl, then perf");
    }
}

/// `--switch-output=SIZE`: perf's warning for a size under half a ring, and files that
/// reach the size before the next one starts, each read without a warning.
#[test]
fn perf_record_switch_live_size() {
    if let Some(why) = skip_reason() {
        crate::support::skips::skip(why);
        return;
    }
    let busy = "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done";
    let mut warnings = Vec::new();
    for tool in TOOLS {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let args = ["--switch-output=8K", "-o", "z.data", "--", "sh", "-c", busy];
        let err = record(tool, &args, d);
        warnings.push(
            err.lines()
                .filter(|l| l.starts_with("WARNING"))
                .map(String::from)
                .collect::<Vec<_>>(),
        );
        let files = stamped_files(d, "z.data");
        reads_cleanly(d, &files);
        if tool != "perf" {
            assert!(files.len() >= 2, "{files:?}: {err}");
            for f in &files[..files.len() - 1] {
                let len = std::fs::metadata(d.join(f)).unwrap().len();
                assert!(len >= 8 << 10, "{f}: {len} bytes");
            }
        }
    }
    assert_eq!(warnings[1], warnings[0], "the size warning");
    assert_eq!(warnings[0].len(), 1, "{:?}", warnings[0]);
}

/// Values perf refuses: its status (-EINVAL), no file written, nothing run.
#[test]
fn perf_record_switch_live_bad_values() {
    if let Some(why) = skip_reason() {
        crate::support::skips::skip(why);
        return;
    }
    for value in [
        "--switch-output=100",
        "--switch-output=1x",
        "--switch-output=",
    ] {
        let mut codes = Vec::new();
        for tool in TOOLS {
            let dir = tempfile::tempdir().unwrap();
            let d = dir.path();
            let args = [value, "-o", "e.data", "--", "touch", "ran"];
            let out = record_cmd(tool).current_dir(d).args(args).output().unwrap();
            assert!(!d.join("ran").exists(), "{tool} {value}: the command ran");
            assert!(stamped_files(d, "e.data").is_empty() && !d.join("e.data").exists());
            codes.push(out.status.code());
        }
        assert_eq!(
            codes[1], codes[0],
            "{value}: tracectl's status, then perf's"
        );
    }
}
