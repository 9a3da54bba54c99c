//! `tracectl perf stat` against the kernel and against Debian's `perf stat` on the same
//! deterministic workload.
//!
//! The workload is this test program itself, started with `TRACECTL_GETPID_LOOP=N`: it
//! calls getpid(2) exactly N times and exits, so `syscalls:sys_enter_getpid` must count N.
//! This file runs without the libtest harness (`harness = false`) so that nothing but the
//! loop runs in the workload process.

use std::path::Path;
use std::process::{Command, Output};

mod perf_common;

const LOOPS: u64 = 20_000;

fn main() {
    perf_common::getpid_loop_if_asked();
    let tests: &[(&str, perf_common::Check)] = &[
        ("perf_stat_getpid_exact_live", getpid_exact),
        ("perf_stat_same_counts_as_perf_live", same_counts_as_perf),
        ("perf_stat_layout_as_perf_live", layout_as_perf),
        (
            "perf_stat_hardware_not_supported_live",
            hardware_not_supported,
        ),
        (
            "perf_stat_bad_event_fails_before_running",
            bad_event_fails_first,
        ),
        (
            "perf_stat_options_layout_as_perf_live",
            options_layout_as_perf,
        ),
        (
            "perf_stat_options_counts_as_perf_live",
            options_counts_as_perf,
        ),
        ("perf_stat_per_thread_as_perf_live", per_thread_as_perf),
        ("perf_stat_pre_post_append_live", pre_post_append),
        (
            "perf_stat_bad_options_fail_before_running",
            bad_options_fail_first,
        ),
    ];
    perf_common::run_checks(tests);
}

fn tracectl() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tracectl"))
}

fn workload(n: u64) -> (String, Vec<(&'static str, String)>) {
    let exe = std::env::current_exe().expect("test binary path");
    (
        exe.to_string_lossy().into_owned(),
        vec![("TRACECTL_GETPID_LOOP", n.to_string())],
    )
}

/// Skip (with the printed reason) unless root with perf_event_open and the syscall
/// tracepoints; under TRACECTL_REQUIRE_ALL=1 a skip is a failure.
fn live_or_skip(test: &str) -> Result<bool, String> {
    perf_common::run_or_skip(test, live_skip_reason())
}

fn live_skip_reason() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("needs root".into());
    }
    if !Path::new("/sys/kernel/tracing/events/syscalls/sys_enter_getpid").exists() {
        return Some("no tracefs with syscalls:sys_enter_getpid".into());
    }
    None
}

fn perf_or_skip(test: &str) -> Result<bool, String> {
    let ok = Command::new("perf")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    perf_common::run_or_skip(
        test,
        (!ok).then(|| "perf is not installed (apt-get install linux-perf)".to_string()),
    )
}

fn run(mut c: Command) -> Result<Output, String> {
    let o = c.output().map_err(|e| format!("{c:?}: {e}"))?;
    Ok(o)
}

/// An error with the exit status and stderr unless the command succeeded.
fn succeeded(o: &Output) -> Result<(), String> {
    if o.status.success() {
        return Ok(());
    }
    Err(format!(
        "exit {:?}: {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    ))
}

fn stat_cmd(tool: Command, args: &[&str], n: u64) -> Command {
    let (exe, env) = workload(n);
    let mut c = tool;
    c.arg("stat").args(args).arg("--").arg(exe);
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

fn ours(args: &[&str], n: u64) -> Command {
    let mut t = tracectl();
    t.arg("perf");
    stat_cmd(t, args, n)
}

fn perfs(args: &[&str], n: u64) -> Command {
    stat_cmd(Command::new("perf"), args, n)
}

/// `value,unit,name,...` CSV lines as (name, value).
fn csv_counts(stderr: &[u8]) -> Vec<(String, String)> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f.get(2).unwrap_or(&"").to_string(), f[0].to_string())
        })
        .collect()
}

fn getpid_exact() -> Result<(), String> {
    if !live_or_skip("perf_stat_getpid_exact_live")? {
        return Ok(());
    }
    let o = run(ours(&["-x,", "-e", "syscalls:sys_enter_getpid"], LOOPS))?;
    succeeded(&o)?;
    let counts = csv_counts(&o.stderr);
    let want = vec![("syscalls:sys_enter_getpid".to_string(), LOOPS.to_string())];
    if counts != want {
        return Err(format!("counted {counts:?}, want {want:?}"));
    }
    Ok(())
}

fn same_counts_as_perf() -> Result<(), String> {
    if !live_or_skip("perf_stat_same_counts_as_perf_live")?
        || !perf_or_skip("perf_stat_same_counts_as_perf_live")?
    {
        return Ok(());
    }
    let args = [
        "-x,",
        "-e",
        "syscalls:sys_enter_getpid,page-faults,context-switches",
    ];
    let a = run(ours(&args, LOOPS))?;
    let b = run(perfs(&args, LOOPS))?;
    let (ca, cb) = (csv_counts(&a.stderr), csv_counts(&b.stderr));
    if ca.len() != 3 || cb.len() != 3 {
        return Err(format!("tracectl: {ca:?}\nperf: {cb:?}"));
    }
    if ca[0] != cb[0] {
        return Err(format!(
            "getpid counts differ: tracectl {:?}, perf {:?}",
            ca[0], cb[0]
        ));
    }
    // page-faults: the same program, but perf and tracectl differ in what runs in the
    // child between fork and exec; 15% or 20 faults. context-switches: a handful.
    let num = |s: &str| s.parse::<f64>().map_err(|_| format!("not a count: {s}"));
    let (pa, pb) = (num(&ca[1].1)?, num(&cb[1].1)?);
    if (pa - pb).abs() > (0.15 * pb).max(20.0) {
        return Err(format!("page-faults: tracectl {pa}, perf {pb}"));
    }
    let (sa, sb) = (num(&ca[2].1)?, num(&cb[2].1)?);
    if (sa - sb).abs() > 10.0 {
        return Err(format!("context-switches: tracectl {sa}, perf {sb}"));
    }
    Ok(())
}

/// The table's shape: every line the same length, with the same words where perf has
/// words, numbers where perf has numbers.
fn shape(text: &str) -> Vec<(usize, Vec<String>)> {
    text.lines()
        .map(|l| {
            let words = l
                .split_whitespace()
                .map(|w| {
                    let bare = w.trim_matches(|c| c == '"' || c == ',' || c == '}');
                    // A rate's unit scales with its value (/sec, K/sec, M/sec, G/sec).
                    if ["/sec", "K/sec", "M/sec", "G/sec"].contains(&bare) {
                        return "#/sec".to_string();
                    }
                    if !bare.is_empty()
                        && bare
                            .chars()
                            .all(|c| c.is_ascii_digit() || c == '.' || c == '%')
                    {
                        "#".to_string()
                    } else {
                        w.to_string()
                    }
                })
                .collect::<Vec<_>>();
            // The spread of repeated runs is shown only when it is not zero.
            let words = match words.iter().position(|w| w == "(") {
                Some(i) if words.get(i + 1).is_some_and(|w| w == "+-") => words[..i].to_vec(),
                _ => words,
            };
            (l.len(), words)
        })
        .collect()
}

fn layout_as_perf() -> Result<(), String> {
    if !live_or_skip("perf_stat_layout_as_perf_live")?
        || !perf_or_skip("perf_stat_layout_as_perf_live")?
    {
        return Ok(());
    }
    for args in [
        &[
            "-e",
            "syscalls:sys_enter_getpid,task-clock,page-faults,cycles",
        ][..],
        &["-r", "3", "-e", "task-clock,syscalls:sys_enter_getpid"][..],
        &["-j", "-e", "task-clock,syscalls:sys_enter_getpid,cycles"][..],
    ] {
        let a = run(ours(args, 1000))?;
        let b = run(perfs(args, 1000))?;
        let (ta, tb) = (
            String::from_utf8_lossy(&a.stderr),
            String::from_utf8_lossy(&b.stderr),
        );
        // The spread of -r depends on the runs; its digits may differ in count.
        let (sa, sb) = (shape(&ta), shape(&tb));
        let same = sa.len() == sb.len()
            && sa
                .iter()
                .zip(&sb)
                .all(|(x, y)| x.1 == y.1 && (x.0 == y.0 || args[0] == "-r" || args[0] == "-j"));
        if !same {
            return Err(format!(
                "perf stat {args:?}\n--- tracectl\n{ta}--- perf\n{tb}"
            ));
        }
    }
    Ok(())
}

fn hardware_not_supported() -> Result<(), String> {
    if !live_or_skip("perf_stat_hardware_not_supported_live")? {
        return Ok(());
    }
    if Path::new("/sys/bus/event_source/devices/cpu").exists() {
        eprintln!("skipped perf_stat_hardware_not_supported_live: this machine has a cpu PMU");
        return Ok(());
    }
    let o = run(ours(
        &[
            "-x,",
            "-e",
            "cycles,instructions,L1-dcache-load-misses,task-clock",
        ],
        10,
    ))?;
    succeeded(&o)?;
    let c = csv_counts(&o.stderr);
    let names: Vec<_> = c
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str() == "<not supported>"))
        .collect();
    let want = [
        ("cycles", true),
        ("instructions", true),
        ("L1-dcache-load-misses", true),
        ("task-clock", false),
    ];
    if names != want {
        return Err(format!("got {c:?}"));
    }
    Ok(())
}

fn bad_event_fails_first() -> Result<(), String> {
    let tree = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tracefs-fixtures/linux-6.18-sched-irq"
    );
    let marker = std::env::temp_dir().join(format!("tracectl-perf-stat-{}", std::process::id()));
    let attempt = |root: Option<&str>, events: &str| -> Result<(Output, bool), String> {
        let mut c = tracectl();
        if let Some(r) = root {
            c.args(["--tracefs", r]);
        }
        c.args(["perf", "stat", "-e", events, "--", "touch"])
            .arg(&marker);
        let o = run(c)?;
        let ran = marker.exists();
        let _ = std::fs::remove_file(&marker);
        Ok((o, ran))
    };
    // A recorded tree is not a kernel to count on: refused before anything runs.
    let (o, ran) = attempt(Some(tree), "cs")?;
    let err = String::from_utf8_lossy(&o.stderr);
    if o.status.success() || ran || !err.contains("a recorded tree, not a live kernel") {
        return Err(format!("on a tree: exit {:?}, ran {ran}: {err}", o.status));
    }
    if !live_or_skip("perf_stat_bad_event_fails_before_running")? {
        return Ok(());
    }
    // A misspelt tracepoint: named with the closest names, and the command never runs.
    let (o, ran) = attempt(None, "cs,sched:sched_swich")?;
    let err = String::from_utf8_lossy(&o.stderr);
    if o.status.success() || ran || !err.contains("did you mean sched:sched_switch") {
        return Err(format!("exit {:?}, ran {ran}: {err}", o.status));
    }
    Ok(())
}

/// Compare the shape of tracectl's and perf's output for each option list (lengths
/// too, except for JSON, whose numbers have no fixed width).
fn same_shape(args: &[&str], n: u64, what: &str) -> Result<(), String> {
    let a = run(ours(args, n))?;
    let b = run(perfs(args, n))?;
    let (ta, tb) = (
        String::from_utf8_lossy(&a.stderr),
        String::from_utf8_lossy(&b.stderr),
    );
    // CSV fields are words of their own, and have no fixed width either.
    let csv = args.iter().any(|a| a.starts_with("-x"));
    let json = args.contains(&"-j") || csv;
    let words = |t: &str| {
        if csv {
            t.replace(',', " ")
        } else {
            t.to_string()
        }
    };
    let (sa, sb) = (shape(&words(&ta)), shape(&words(&tb)));
    let same = sa.len() == sb.len()
        && sa
            .iter()
            .zip(&sb)
            .all(|(x, y)| x.1 == y.1 && (x.0 == y.0 || json));
    if !same || a.status.code() != b.status.code() {
        return Err(format!(
            "{what}: perf stat {args:?} (exit {:?} and {:?})\n--- tracectl\n{ta}--- perf\n{tb}",
            a.status.code(),
            b.status.code()
        ));
    }
    Ok(())
}

fn options_layout_as_perf() -> Result<(), String> {
    const T: &str = "perf_stat_options_layout_as_perf_live";
    if !live_or_skip(T)? || !perf_or_skip(T)? {
        return Ok(());
    }
    let cases: &[&[&str]] = &[
        // A null run: only the times, and nothing at all in CSV or JSON.
        &["-n"],
        &["-n", "-x,"],
        &["-n", "-j"],
        // perf's detailed events, appended after -e's (hardware: <not supported> here).
        &["-d", "-e", "task-clock"],
        &["-ddd", "-e", "task-clock,page-faults"],
        // Counters enabled later, or never.
        &["-D", "20", "-e", "task-clock"],
        &["-D", "-1", "-e", "task-clock"],
        &["-S", "-B", "-e", "task-clock"],
        &["--no-big-num", "-i", "-e", "task-clock"],
        &["--quiet", "-e", "task-clock"],
        // Counts split by socket, die, core and node, in each style.
        &["-a", "--per-socket", "-e", "task-clock,cs"],
        &["-a", "--per-die", "-x,", "-e", "task-clock,cs"],
        &["-a", "--per-core", "-e", "task-clock,cs"],
        &["-a", "--per-core", "-x,", "-e", "task-clock,cs"],
        &["-a", "--per-node", "-j", "-e", "task-clock,cs"],
        &["-a", "--per-core", "-j", "-e", "task-clock"],
        &["-a", "-A", "-e", "task-clock,cs"],
    ];
    for args in cases {
        same_shape(args, 1000, "option layout")?;
    }
    // Two intervals and no more, while the command goes on.
    same_shape(
        &[
            "-a",
            "--per-socket",
            "-I",
            "20",
            "--interval-count",
            "2",
            "-e",
            "task-clock",
        ],
        3_000_000,
        "--interval-count",
    )?;
    // The totals after the intervals, in each style.
    for style in [&[][..], &["-x,"], &["-x,", "--no-csv-summary"], &["-j"]] {
        let mut args = vec!["-a", "-I", "20", "--interval-count", "1", "--summary"];
        args.extend_from_slice(style);
        args.extend_from_slice(&["-e", "task-clock"]);
        same_shape(&args, 3_000_000, "--summary")?;
    }
    // --timeout ends a command that runs longer, with perf's line for the signal.
    same_shape(
        &["--timeout", "50", "-e", "task-clock"],
        1_000_000_000,
        "--timeout",
    )?;
    Ok(())
}

/// The getpid count of a CSV run.
fn getpid_count(o: &Output) -> Result<String, String> {
    csv_counts(&o.stderr)
        .into_iter()
        .find(|(n, _)| n.starts_with("syscalls:sys_enter_getpid"))
        .map(|(_, v)| v)
        .ok_or_else(|| format!("no getpid count in {}", String::from_utf8_lossy(&o.stderr)))
}

fn options_counts_as_perf() -> Result<(), String> {
    const T: &str = "perf_stat_options_counts_as_perf_live";
    if !live_or_skip(T)? || !perf_or_skip(T)? {
        return Ok(());
    }
    let n = 5000;
    // --all-kernel counts every call of a syscall tracepoint (--all-user as perf counts
    // it); -D -1 never enables the counter, -D 0 at once.
    for (args, want) in [
        (&["--all-kernel"][..], Some(n.to_string())),
        (&["--all-user"][..], None),
        (&["-D", "-1"][..], Some("<not counted>".to_string())),
        (&["-D", "0"][..], Some(n.to_string())),
    ] {
        let mut full = vec!["-x,", "-e", "syscalls:sys_enter_getpid"];
        full.extend_from_slice(args);
        let a = getpid_count(&run(ours(&full, n))?)?;
        let b = getpid_count(&run(perfs(&full, n))?)?;
        if a != b || want.as_ref().is_some_and(|w| *w != a) {
            return Err(format!("{args:?}: tracectl {a}, perf {b}, want {want:?}"));
        }
    }
    // A context switch is counted in kernel mode: --all-user counts none of a sleep's,
    // --all-kernel (and no option) every one.
    for (opt, none) in [("--all-user", true), ("--all-kernel", false)] {
        let mut got = Vec::new();
        for mut c in [tracectl(), Command::new("perf")] {
            if c.get_program() != "perf" {
                c.arg("perf");
            }
            c.args([
                "stat",
                "-x,",
                "-e",
                "context-switches",
                opt,
                "--",
                "sleep",
                "0.02",
            ]);
            let o = run(c)?;
            let v = csv_counts(&o.stderr)
                .first()
                .map(|(_, v)| v.clone())
                .unwrap_or_default();
            got.push(v);
        }
        let counted = got[0].parse::<u64>().unwrap_or(0);
        let ok = if none {
            got[0] == got[1] && counted == 0
        } else {
            counted > 0
        };
        if !ok {
            return Err(format!("{opt}: tracectl {}, perf {}", got[0], got[1]));
        }
    }
    // -i: the loop runs in a child of the shell, which the counter no longer follows.
    let (exe, env) = workload(n);
    for inherit in [true, false] {
        let counts: Vec<String> = [tracectl(), Command::new("perf")]
            .into_iter()
            .map(|mut c| {
                if c.get_program() != "perf" {
                    c.arg("perf");
                }
                c.args(["stat", "-x,", "-e", "syscalls:sys_enter_getpid"]);
                if !inherit {
                    c.arg("-i");
                }
                c.args(["--", "/bin/sh", "-c", &format!("'{exe}'; exit 0")]);
                for (k, v) in &env {
                    c.env(k, v);
                }
                getpid_count(&run(c)?)
            })
            .collect::<Result<_, _>>()?;
        let ok = counts[0] == counts[1]
            && if inherit {
                counts[0].parse::<u64>().is_ok_and(|v| v >= n)
            } else {
                counts[0].parse::<u64>().is_ok_and(|v| v < n)
            };
        if !ok {
            return Err(format!(
                "inherit {inherit}: tracectl {}, perf {}",
                counts[0], counts[1]
            ));
        }
    }
    Ok(())
}

/// A running copy of the workload that waits, calls getpid `n` times, and waits again.
fn waiting_workload(n: u64) -> Result<std::process::Child, String> {
    let (exe, env) = workload(n);
    let mut c = Command::new(exe);
    for (k, v) in env {
        c.env(k, v);
    }
    // Long enough for the counters to be open before the loop on a loaded machine.
    c.env("TRACECTL_GETPID_BEFORE_MS", "1500")
        .env("TRACECTL_GETPID_AFTER_MS", "5000")
        .spawn()
        .map_err(|e| format!("starting the workload: {e}"))
}

fn per_thread_as_perf() -> Result<(), String> {
    const T: &str = "perf_stat_per_thread_as_perf_live";
    if !live_or_skip(T)? || !perf_or_skip(T)? {
        return Ok(());
    }
    let n = 7000;
    let mut texts: Vec<String> = Vec::new();
    for tool in ["tracectl", "perf"] {
        let mut w = waiting_workload(n)?;
        let pid = w.id().to_string();
        let mut c = if tool == "perf" {
            Command::new("perf")
        } else {
            let mut t = tracectl();
            t.arg("perf");
            t
        };
        c.args(["stat", "--per-thread", "-p", &pid, "-x,"])
            .args(["-e", "syscalls:sys_enter_getpid,syscalls:sys_enter_getppid"])
            .args(["--", "sleep", "3"]);
        let o = run(c);
        let _ = w.kill();
        let _ = w.wait();
        let o = o?;
        // The rows name the thread as comm-tid: take the pid out to compare the two runs,
        // and the running time, which is the two runs' own.
        // Only the tid after the comm's dash is replaced: the pid's digits may also occur
        // inside a count (pid 700 in the count 7000).
        let text = String::from_utf8_lossy(&o.stderr).replace(&format!("-{pid},"), "-PID,");
        texts.push(
            text.lines()
                .map(|l| {
                    let mut f: Vec<&str> = l.split(',').collect();
                    if f.len() > 4 {
                        f[4] = "RUNTIME";
                    }
                    f.join(",") + "\n"
                })
                .collect(),
        );
    }
    let comm = std::env::current_exe()
        .ok()
        .and_then(|p| {
            p.file_name()
                .map(|f| f.to_string_lossy().chars().take(15).collect::<String>())
        })
        .unwrap_or_default();
    let want = format!("{comm}-PID,{n},,syscalls:sys_enter_getpid,");
    if texts[0] != texts[1] || !texts[0].starts_with(&want) {
        return Err(format!("--- tracectl\n{}--- perf\n{}", texts[0], texts[1]));
    }
    // Every thread of the system: the busiest first, none that counted nothing.
    let o = run({
        let mut t = tracectl();
        t.args([
            "perf",
            "stat",
            "--per-thread",
            "-a",
            "-x,",
            "-e",
            "task-clock",
            "--",
            "sleep",
            "0.2",
        ]);
        t
    })?;
    let text = String::from_utf8_lossy(&o.stderr);
    let values: Vec<f64> = text
        .lines()
        .filter_map(|l| l.split(',').nth(1)?.parse().ok())
        .collect();
    if !o.status.success()
        || values.is_empty()
        || values.iter().any(|&v| v <= 0.0)
        || values.windows(2).any(|w| w[0] < w[1])
    {
        return Err(format!("--per-thread -a: {text}"));
    }
    Ok(())
}

fn pre_post_append() -> Result<(), String> {
    const T: &str = "perf_stat_pre_post_append_live";
    if !live_or_skip(T)? {
        return Ok(());
    }
    let dir = std::env::temp_dir().join(format!("tracectl-stat-opts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let log = dir.join("log");
    let out = dir.join("counts");
    let result = (|| {
        let pre = format!("echo pre >> '{}'", log.display());
        let post = format!("echo post >> '{}'", log.display());
        for _ in 0..2 {
            let o = run(ours(
                &[
                    "-r",
                    "2",
                    "--pre",
                    &pre,
                    "--post",
                    &post,
                    "--append",
                    "-o",
                    out.to_str().unwrap_or_default(),
                    "-e",
                    "task-clock",
                ],
                10,
            ))?;
            succeeded(&o)?;
        }
        let log_text = std::fs::read_to_string(&log).map_err(|e| e.to_string())?;
        if log_text != "pre\npost\npre\npost\npre\npost\npre\npost\n" {
            return Err(format!("--pre/--post ran as {log_text:?}"));
        }
        let counts = std::fs::read_to_string(&out).map_err(|e| e.to_string())?;
        if counts.matches("Performance counter stats for").count() != 2 {
            return Err(format!("--append kept {counts}"));
        }
        // A --pre that fails stops the run before the command starts.
        let marker = dir.join("ran");
        let mut c = tracectl();
        c.args(["perf", "stat", "--pre", "false", "--", "touch"])
            .arg(&marker);
        let o = run(c)?;
        let err = String::from_utf8_lossy(&o.stderr);
        if o.status.success() || marker.exists() || !err.contains("--pre 'false' failed") {
            return Err(format!("--pre false: exit {:?}: {err}", o.status));
        }
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn bad_options_fail_first() -> Result<(), String> {
    const T: &str = "perf_stat_bad_options_fail_before_running";
    if !live_or_skip(T)? {
        return Ok(());
    }
    let marker = std::env::temp_dir().join(format!("tracectl-stat-bad-{}", std::process::id()));
    for (args, says) in [
        (&["--interval-count", "2"][..], "--interval-count needs -I"),
        (&["--timeout", "5"][..], "at least 10 ms"),
        (
            &["--timeout", "100", "-I", "100"][..],
            "cannot be combined with -I",
        ),
        (&["--per-thread"][..], "--per-thread needs -p, -t or -a"),
        (
            &["--per-core"][..],
            "--per-core (counts split by CPU) needs -a or -C",
        ),
        (
            &["-a", "--per-core", "--per-socket"][..],
            "cannot be combined",
        ),
        (&["--append"][..], "--append needs -o"),
        (&["--all-user", "--all-kernel"][..], "cannot be combined"),
        (&["-D", "-5"][..], "-D -5"),
    ] {
        let mut c = tracectl();
        c.args(["perf", "stat"])
            .args(args)
            .args(["--", "touch"])
            .arg(&marker);
        let o = run(c)?;
        let ran = marker.exists();
        let _ = std::fs::remove_file(&marker);
        let err = String::from_utf8_lossy(&o.stderr);
        if o.status.success() || ran || !err.contains(says) {
            return Err(format!("{args:?}: exit {:?}, ran {ran}: {err}", o.status));
        }
    }
    Ok(())
}
