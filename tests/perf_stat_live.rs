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
    if let Ok(n) = std::env::var("TRACECTL_GETPID_LOOP") {
        let n: u64 = n.parse().expect("TRACECTL_GETPID_LOOP is a number");
        for _ in 0..n {
            // SAFETY: getpid has no preconditions; the raw syscall avoids any caching.
            unsafe { libc::syscall(libc::SYS_getpid) };
        }
        std::process::exit(0);
    }
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
    if !o.status.success() {
        return Err(format!(
            "exit {:?}: {}",
            o.status,
            String::from_utf8_lossy(&o.stderr)
        ));
    }
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
    if !o.status.success() {
        return Err(format!(
            "exit {:?}: {}",
            o.status,
            String::from_utf8_lossy(&o.stderr)
        ));
    }
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
