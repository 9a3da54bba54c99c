//! `tracectl perf script` with perf script's filter, time, call-chain and side-band
//! options prints what Debian's `perf script` 6.1 prints with them, on files perf and
//! `tracectl perf record` write here; each option changes perf's output in at least one
//! case, and bad values are refused as perf refuses them (its exit status, the value
//! named). Skips (with the reason) without root or without perf.

use std::path::Path;
use std::process::Command;

use crate::support::perf::{run, skip_reason};

/// perf's and tracectl's output, exit status and standard error for `args`.
fn both(d: &Path, file: &str, args: &[&str]) -> [(String, i32, String); 2] {
    let tracectl = env!("CARGO_BIN_EXE_tracectl");
    let go = |cmd: &str, pre: &[&str]| {
        let out = Command::new(cmd)
            .current_dir(d)
            .args(pre)
            .args(["script", "-i", file])
            .args(args)
            .output()
            .unwrap();
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    [go("perf", &[]), go(tracectl, &["perf"])]
}

/// Asserts both print the same (line by line, then the count), and returns perf's text.
fn same(d: &Path, file: &str, args: &[&str]) -> String {
    let [(perf, prc, perr), (ours, orc, oerr)] = both(d, file, args);
    let what = format!("perf script -i {file} {}", args.join(" "));
    assert_eq!(prc, 0, "{what}: perf failed: {perr}");
    assert_eq!(orc, 0, "{what}: tracectl failed: {oerr}");
    crate::support::perf::assert_same_lines(&ours, &perf, &what);
    perf
}

/// Each of `cases` prints as perf prints it, and perf's text with it differs from
/// perf's text without it (`base`): the option is not ignored.
fn each_changes(d: &Path, file: &str, base: &[&str], cases: &[Vec<&str>]) {
    let plain = same(d, file, base);
    for case in cases {
        let args: Vec<&str> = base.iter().chain(case.iter()).copied().collect();
        let text = same(d, file, &args);
        assert_ne!(
            text, plain,
            "perf script -i {file} {args:?} changes perf's output"
        );
    }
}

/// The pid and tid of the first line of `text` (`-F comm,pid,tid`) whose comm is `comm`.
fn ids_of(text: &str, comm: &str) -> (String, String) {
    text.lines()
        .find_map(|l| {
            let mut w = l.split_whitespace();
            if w.next() != Some(comm) {
                return None;
            }
            let (pid, tid) = w.next()?.split_once('/')?;
            Some((pid.to_string(), tid.to_string()))
        })
        .unwrap_or_else(|| panic!("a sample of {comm} in:\n{text}"))
}

fn spin_into(d: &Path) -> String {
    let spin = d.join("spin");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf/symfs/tmp/tpf/spin"),
        &spin,
    )
    .unwrap();
    spin.to_str().unwrap().to_string()
}

/// Samples with call chains of `ls` then `spin`, run by `sh`: each filter, time style
/// and call-chain option, and the task and mmap records.
#[test]
fn perf_script_opts_live_call_chain_file_matches_perf() {
    if let Some(why) = skip_reason() {
        crate::support::skips::skip(why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let spin = spin_into(d);
    let work = format!("ls -R /usr/lib >/dev/null; {spin}");
    run(
        "perf",
        &[
            "record", "-q", "-o", "cc.data", "-F", "4999", "-g", "--", "sh", "-c", &work,
        ],
        d,
    );
    let heads = run(
        "perf",
        &["script", "-i", "cc.data", "-G", "-F", "comm,pid,tid"],
        d,
    );
    let (ls, _) = ids_of(&heads, "ls");
    let (_, spin_tid) = ids_of(&heads, "spin");
    // The middle third of the recording, in seconds as perf prints them.
    let times: Vec<f64> = run("perf", &["script", "-i", "cc.data", "-F", "time"], d)
        .lines()
        .filter_map(|l| l.trim().trim_end_matches(':').parse().ok())
        .collect();
    let (first, last) = (times[0], times[times.len() - 1]);
    let third = (last - first) / 3.0;
    let span = format!("{:.6},{:.6}", first + third, first + 2.0 * third);
    let rel_span = format!("{:.6},{:.6}", third, 2.0 * third);
    let open_span = format!("{:.6},", first + third);
    let cases: Vec<Vec<&str>> = vec![
        vec!["-c", "ls"],
        vec!["--comms", "ls,sh"],
        vec!["--pid", &ls],
        vec!["--tid", &spin_tid],
        vec!["-S", "hot_function"],
        vec!["--dsos", "spin"],
        vec!["--dsos", "[kernel.kallsyms]"],
        vec!["--time", &span],
        vec!["--time", &open_span],
        vec!["--time", "10%/2"],
        vec!["--time", "0%-10%,30%-40%"],
        vec!["--time", "25%"],
        vec!["--reltime", "--time", &rel_span],
        vec!["--ns"],
        vec!["--reltime"],
        vec!["--deltatime"],
        vec!["--deltatime", "--ns"],
        vec!["-G"],
        vec!["--max-stack", "2"],
        vec!["--max-stack", "0"],
        vec!["--stop-bt", "main,do_syscall_64"],
        vec!["--show-task-events"],
        vec!["--show-mmap-events"],
        vec!["--show-task-events", "--show-mmap-events", "-c", "spin"],
        vec!["--show-round-events"],
    ];
    each_changes(d, "cc.data", &[], &cases);
    // The one-line form with the filters and the side-band records.
    each_changes(
        d,
        "cc.data",
        &["-G"],
        &[
            vec!["--show-task-events", "--pid", &ls, "--reltime"],
            vec!["-S", "hot_function", "--ns"],
        ],
    );
    // perf refuses -C on samples without their CPU.
    let [(_, prc, perr), (_, orc, oerr)] = both(d, "cc.data", &["-C", "0"]);
    assert_eq!((orc, prc), (255, 255), "perf: {perr}");
    assert!(oerr.contains("-C 0") && oerr.contains("CPU"), "{oerr}");
}

/// Tracepoints of every CPU: -C, the side-band records with CPUs, context switches,
/// lost records, and bad values.
#[test]
fn perf_script_opts_live_cpu_wide_files_match_perf() {
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
            "tp.data",
            "-e",
            "sched:sched_switch,sched:sched_process_exec,raw_syscalls:sys_enter",
            "-a",
            "--",
            "sh",
            "-c",
            "ls / >/dev/null; sleep 0.05",
        ],
        d,
    );
    each_changes(
        d,
        "tp.data",
        &[],
        &[
            vec!["-C", "0"],
            vec!["-C", "1"],
            vec!["-C", "0-"],
            vec!["-C", "0x1,x"],
            vec!["-C", ""],
            vec!["--show-task-events", "--show-mmap-events", "--deltatime"],
            vec!["-C", "0", "--show-task-events", "--reltime", "--ns"],
            vec!["-c", "ls", "--show-task-events"],
            vec!["--show-round-events"],
        ],
    );
    // Bad values: perf's exit status, the value named.
    for (args, code, value) in [
        (&["-C", "x"][..], 255, "'x'"),
        (&["-C", "0,0"][..], 255, "'0,0'"),
        (&["-C", "1-0"][..], 255, "'1-0'"),
        (&["-C", "4096"][..], 255, "4096"),
        (&["--time", "x"][..], 234, "'x'"),
        (&["--time", "2,1"][..], 234, "'2,1'"),
        (&["--time", "5"][..], 234, "'5'"),
        (&["--time", "1,2,3,4"][..], 234, "'1,2,3,4'"),
        (&["--reltime", "--deltatime"][..], 255, "--deltatime"),
    ] {
        let [(pout, prc, perr), (out, orc, err)] = both(d, "tp.data", args);
        assert_eq!(prc, code, "perf {args:?}: {perr}");
        assert_eq!(orc, code, "tracectl {args:?}: {err}");
        assert!(pout.is_empty() && out.is_empty(), "{args:?} prints nothing");
        assert!(
            err.contains(value),
            "{args:?}: the error names {value}: {err}"
        );
    }

    // Context switches, of one task and of every CPU.
    run(
        "perf",
        &[
            "record",
            "-q",
            "--switch-events",
            "-o",
            "sw.data",
            "-e",
            "cpu-clock",
            "-F",
            "999",
            "--",
            "sh",
            "-c",
            "sleep 0.02; ls >/dev/null",
        ],
        d,
    );
    run(
        "perf",
        &[
            "record",
            "-q",
            "--switch-events",
            "-a",
            "-o",
            "swa.data",
            "-e",
            "cpu-clock",
            "-F",
            "999",
            "--",
            "sleep",
            "0.05",
        ],
        d,
    );
    for file in ["sw.data", "swa.data"] {
        each_changes(d, file, &[], &[vec!["--show-switch-events"]]);
    }
    each_changes(
        d,
        "swa.data",
        &["--show-switch-events"],
        &[vec!["-C", "1", "--deltatime"], vec!["--show-round-events"]],
    );
    // A ring of one page loses records under a system-wide syscall load: a burst of
    // one-byte copies makes it certain.
    run(
        "perf",
        &[
            "record",
            "-q",
            "-m",
            "1",
            "-o",
            "lost.data",
            "-e",
            "raw_syscalls:sys_enter",
            "-a",
            "--",
            "sh",
            "-c",
            "for i in $(seq 300); do ls / >/dev/null; done; \
             dd if=/dev/zero of=/dev/null bs=1 count=200000 2>/dev/null",
        ],
        d,
    );
    let text = same(
        d,
        "lost.data",
        &["--show-lost-events", "-F", "comm,tid,cpu,time"],
    );
    assert!(text.contains("PERF_RECORD_LOST lost "), "records were lost");
}

/// Files `tracectl perf record` writes: the filters, times and side-band records.
#[test]
fn perf_script_opts_live_tracectl_files_match_perf() {
    if let Some(why) = skip_reason() {
        crate::support::skips::skip(why);
        return;
    }
    let tracectl = env!("CARGO_BIN_EXE_tracectl");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let spin = spin_into(d);
    let work = format!("ls -R /usr/lib >/dev/null; {spin}");
    run(
        tracectl,
        &[
            "perf", "record", "-F", "999", "-g", "-o", "tc.data", "--", "sh", "-c", &work,
        ],
        d,
    );
    run(
        tracectl,
        &[
            "perf",
            "record",
            "-e",
            "sched:sched_switch",
            "-a",
            "-o",
            "tct.data",
            "--",
            "sleep",
            "0.1",
        ],
        d,
    );
    each_changes(
        d,
        "tc.data",
        &[],
        &[
            vec![
                "--show-task-events",
                "--show-mmap-events",
                "-c",
                "spin",
                "--reltime",
            ],
            vec!["--time", "10%/3", "-G", "--ns"],
            vec!["-S", "hot_function", "--max-stack", "3"],
        ],
    );
    // Folded stacks are of the samples the filters keep.
    let folded = run(
        tracectl,
        &["perf", "script", "-i", "tc.data", "--folded", "-c", "spin"],
        d,
    );
    assert!(folded.lines().count() > 0, "spin's stacks are folded");
    for l in folded.lines() {
        assert!(l.starts_with("spin;"), "only spin's stacks: {l}");
    }
    each_changes(
        d,
        "tct.data",
        &[],
        &[
            vec!["-C", "1", "--show-task-events", "--deltatime"],
            vec!["--time", "20%-30%", "--show-round-events"],
        ],
    );
}
