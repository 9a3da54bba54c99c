//! `tracectl record` / `extract` on the live tracefs: the files are read by
//! `trace-cmd report` with the events our reader finds, and tracefs is left as found.

use crate::support::{live, skips};

use crate::support::dat::*;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use tracectl::dat::DatFile;

use crate::support::live::TRACEFS;

fn have_tracecmd() -> bool {
    Command::new("trace-cmd").arg("--help").output().is_ok()
}

fn tracectl() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tracectl"));
    c.arg("--tracefs").arg(TRACEFS);
    c
}

/// Removes an instance this test made, even if an assertion fails first.
struct InstanceGuard(PathBuf);

impl Drop for InstanceGuard {
    fn drop(&mut self) {
        if self.0.exists() {
            let _ = std::fs::write(self.0.join("events/enable"), "0");
            let _ = std::fs::remove_dir(&self.0);
        }
    }
}

fn record(dir: &Path, name: &str, args: &[&str]) -> (PathBuf, Output) {
    let out = dir.join(name);
    let o = tracectl()
        .arg("record")
        .arg("-q")
        .arg("-o")
        .arg(&out)
        .args(args)
        .output()
        .unwrap();
    (out, o)
}

/// `record` that must succeed: the file's path.
fn record_ok(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let (file, o) = record(dir, name, args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    file
}

/// How many `event` records a count map holds (0 when absent).
fn n(c: &std::collections::BTreeMap<String, u64>, event: &str) -> u64 {
    c.get(event).copied().unwrap_or(0)
}

fn check_file(file: &Path) -> std::collections::BTreeMap<String, u64> {
    let dat = DatFile::open(file).unwrap();
    let ours = our_counts(&dat, 0);
    if have_tracecmd() {
        assert_eq!(
            report_counts(file, &[]),
            ours,
            "trace-cmd report vs our reader on {}",
            file.display()
        );
    }
    ours
}

fn no_private_instances_of(pid: u32) {
    let p = Path::new(TRACEFS).join(format!("instances/tracectl-record-{pid}"));
    assert!(!p.exists(), "instance {} left behind", p.display());
}

#[test]
fn record_command_v7_v6_none() {
    if !live::ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (name, extra) in [
        ("v7.dat", vec![]),
        ("v6.dat", vec!["--file-version", "6"]),
        ("none.dat", vec!["--compression", "none"]),
    ] {
        let mut args = vec!["-e", "sched", "-e", "irq"];
        args.extend(extra);
        args.extend(["--", "sleep", "0.2"]);
        let file = record_ok(dir.path(), name, &args);
        let counts = check_file(&file);
        assert!(n(&counts, "sched_switch") > 0, "{counts:?}");
        assert!(
            counts.contains_key("sched_process_exit"),
            "the command's exit is recorded: {counts:?}"
        );
        let dat = DatFile::open(&file).unwrap();
        assert_eq!(dat.options().cpustats.len() as u32, dat.nr_cpus());
        assert!(dat.options().cpustats[0].starts_with("CPU: 0\nentries:"));
        assert!(dat
            .event_formats()
            .iter()
            .all(|(s, _)| s == "sched" || s == "irq"));
        // Capture files are gone.
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains(".cpu"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
    let dirs = std::fs::read_dir(Path::new(TRACEFS).join("instances")).unwrap();
    for d in dirs.flatten() {
        let n = d.file_name().to_string_lossy().into_owned();
        if let Some(pid) = n
            .strip_prefix("tracectl-record-")
            .and_then(|p| p.parse::<i32>().ok())
        {
            // Only instances of live processes may exist (other recordings running now).
            assert!(
                Path::new(&format!("/proc/{pid}")).exists(),
                "stale instance {n}"
            );
        }
    }
}

#[test]
fn record_filter_bound_to_event_and_only_command() {
    if !live::ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // The exec event first: as in trace-cmd, a -v holds for every -e after it.
    let exec = ["-e", "sched_process_exec"];
    let command = ["--", "sleep", "0.1"];
    let filtered = ["-e", "sched_switch", "-f", "prev_pid == 1 && next_pid == 1"];
    let inverted = ["-e", "sched", "-v", "-e", "sched_switch"];
    let cases = [
        ("f.dat", &filtered[..], "an impossible filter keeps it out"),
        ("v.dat", &inverted[..], "-v carves it out"),
    ];
    for (name, first, why) in cases {
        let args: Vec<&str> = exec.iter().chain(first).chain(&command).copied().collect();
        let c = check_file(&record_ok(dir.path(), name, &args));
        assert_eq!(c.get("sched_switch"), None, "{why}: {c:?}");
        assert!(n(&c, "sched_process_exec") >= 1, "{c:?}");
    }

    let file = record_ok(
        dir.path(),
        "F.dat",
        &[
            "-F",
            "-e",
            "sched:sched_process_exec",
            "-e",
            "syscalls",
            "--",
            "sleep",
            "0.1",
        ],
    );
    let c = check_file(&file);
    assert!(n(&c, "sched_process_exec") >= 1, "{c:?}");
    if have_tracecmd() {
        let out = Command::new("trace-cmd")
            .arg("report")
            .arg(&file)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let pids: std::collections::BTreeSet<&str> = text
            .lines()
            .filter(|l| l.contains(": sys_"))
            .filter_map(|l| l.split('[').next()?.trim().rsplit('-').next())
            .collect();
        assert_eq!(pids.len(), 1, "-F keeps only the command's pid: {pids:?}");
    }
}

#[test]
fn refused_and_unknown_give_clear_errors_and_clean_up() {
    if !live::ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (_, o) = record(
        dir.path(),
        "x.dat",
        &["-e", "no_such_event_xyz", "--", "true"],
    );
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no_such_event_xyz") && err.contains("tracectl list"),
        "{err}"
    );

    let avail =
        std::fs::read_to_string(Path::new(TRACEFS).join("available_tracers")).unwrap_or_default();
    let func_refused = std::fs::OpenOptions::new()
        .write(true)
        .open(Path::new(TRACEFS).join("set_ftrace_filter"))
        .is_err();
    if func_refused {
        let (_, o) = record(
            dir.path(),
            "x.dat",
            &["-e", "sched", "-l", "schedule", "--", "true"],
        );
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("set_ftrace_filter") && err.contains("EPERM"),
            "{err}"
        );
        if avail.contains("function") {
            let (_, o) = record(dir.path(), "x.dat", &["-p", "function", "--", "true"]);
            assert!(!o.status.success());
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                err.contains("-p function") && err.contains("current_tracer"),
                "{err}"
            );
        }
    }
    // Plain tracepoint recording is unaffected by the refused function tracer.
    let file = record_ok(
        dir.path(),
        "ok.dat",
        &["-e", "sched_switch", "--", "sleep", "0.05"],
    );
    check_file(&file);
    assert!(!dir.path().join("x.dat").exists() || DatFile::open(dir.path().join("x.dat")).is_ok());
}

#[test]
fn named_instance_is_restored_and_extract_reads_it() {
    if !live::ready() {
        return;
    }
    let name = format!("tracectl-test-dat-{}", std::process::id());
    let inst = Path::new(TRACEFS).join("instances").join(&name);
    std::fs::create_dir(&inst).unwrap();
    let _g = InstanceGuard(inst.clone());
    let clock_before = std::fs::read_to_string(inst.join("trace_clock")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = record_ok(
        dir.path(),
        "b.dat",
        &[
            "-B",
            &name,
            "-C",
            "global",
            "-e",
            "sched_switch",
            "--",
            "sleep",
            "0.1",
        ],
    );
    let dat = DatFile::open(&file).unwrap();
    assert_eq!(dat.buffers()[0].clock.as_deref(), Some("global"));
    check_file(&file);
    assert!(inst.is_dir(), "an existing instance is kept");
    assert_eq!(
        std::fs::read_to_string(inst.join("trace_clock")).unwrap(),
        clock_before
    );
    assert_eq!(
        std::fs::read_to_string(inst.join("events/sched/sched_switch/enable"))
            .unwrap()
            .trim(),
        "0"
    );

    // extract: enable by hand, let events accumulate, stop, extract.
    std::fs::write(inst.join("events/sched/sched_switch/enable"), "1").unwrap();
    std::fs::write(inst.join("tracing_on"), "1").unwrap();
    std::thread::sleep(Duration::from_millis(200));
    std::fs::write(inst.join("tracing_on"), "0").unwrap();
    let out = dir.path().join("e.dat");
    let o = tracectl()
        .args(["extract", "-q", "-B", &name, "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let c = check_file(&out);
    assert!(n(&c, "sched_switch") > 0, "{c:?}");
    std::fs::write(inst.join("events/sched/sched_switch/enable"), "0").unwrap();
}

/// SIGINT/SIGTERM at several moments of `record -- sleep 5`: a valid file, the private
/// instance removed (how quickly: benches/record_stop.rs).
/// Wait (up to 10 s) until process `pid` takes signal `sig` itself (its bit in /proc's
/// SigCgt, a handler, or SigBlk, blocked to be read from a signalfd): before then the
/// signal's default action ends any program, so the kill points count from there.
fn wait_for_handler(pid: u32, sig: i32) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while std::time::Instant::now() < deadline {
        let caught = std::fs::read_to_string(format!("/proc/{pid}/status"))
            .ok()
            .is_some_and(|s| {
                s.lines().any(|l| {
                    let mask = l
                        .strip_prefix("SigCgt:")
                        .or_else(|| l.strip_prefix("SigBlk:"))
                        .and_then(|m| u64::from_str_radix(m.trim(), 16).ok());
                    mask.is_some_and(|m| m & (1u64 << (sig - 1)) != 0)
                })
            });
        if caught {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    panic!("process {pid} never installed a handler for signal {sig}");
}

/// The child's exit status; kills it and fails the test if it runs past `limit`.
fn wait_or_kill(child: &mut std::process::Child, limit: Duration) -> std::process::ExitStatus {
    let t0 = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("record did not stop within {limit:?} of the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn kill_points_leave_valid_file_and_no_instance() {
    if !live::ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (libc::SIGINT, 30u64, true),
        (libc::SIGTERM, 30, true),
        (libc::SIGINT, 400, true),
        (libc::SIGTERM, 400, true),
        (libc::SIGINT, 1200, true),
        (libc::SIGTERM, 1200, true),
        // No command: record until interrupted.
        (libc::SIGINT, 300, false),
        (libc::SIGTERM, 300, false),
    ];
    for (i, (sig, after_ms, with_cmd)) in cases.into_iter().enumerate() {
        let out = dir.path().join(format!("k{i}.dat"));
        let mut cmd = tracectl();
        cmd.args(["record", "-q", "-e", "sched", "-e", "irq", "-o"])
            .arg(&out);
        if with_cmd {
            cmd.args(["--", "sleep", "5"]);
        }
        let mut child = cmd.spawn().unwrap();
        wait_for_handler(child.id(), sig);
        std::thread::sleep(Duration::from_millis(after_ms));
        unsafe { libc::kill(child.id() as i32, sig) };
        // How fast it stops is measured by benches/record_stop.rs; here only that it
        // does (a hang fails after a minute instead of blocking the suite).
        let st = wait_or_kill(&mut child, Duration::from_secs(60));
        assert!(
            st.success(),
            "signal {sig} after {after_ms} ms (command: {with_cmd}): {st:?}"
        );
        no_private_instances_of(child.id());
        check_file(&out);
    }
}

#[test]
fn subbuf_size_cmdlines_size_and_ignore_missing() {
    if !live::ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cmdlines_before =
        std::fs::read_to_string(Path::new(TRACEFS).join("saved_cmdlines_size")).unwrap();
    let mut args = vec![
        "-i",
        "-e",
        "no_such_event_xyz",
        "-e",
        "sched",
        "--cmdlines-size",
        "300",
        "-s",
        "20000",
    ];
    let subbuf = Path::new(TRACEFS).join("buffer_subbuf_size_kb").exists();
    if subbuf {
        args.extend(["--subbuf-size", "8"]);
    }
    args.extend(["--", "sleep", "0.1"]);
    let (file, o) = record(dir.path(), "s.dat", &args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no_such_event_xyz"));
    let dat = DatFile::open(&file).unwrap();
    if subbuf {
        assert_eq!(dat.buffers()[0].page_size, 8192);
    }
    let c = check_file(&file);
    assert_eq!(ring_counts(&dat, 0), c);
    assert!(n(&c, "sched_switch") > 0);
    assert_eq!(
        std::fs::read_to_string(Path::new(TRACEFS).join("saved_cmdlines_size")).unwrap(),
        cmdlines_before
    );
}

/// Overflow a tiny buffer, extract it: the lost counts in the page headers, the
/// `[N EVENTS DROPPED]` lines of trace-cmd and the kernel's overrun stats agree.
#[test]
fn lost_events_are_counted_and_stored() {
    if !live::ready() {
        return;
    }
    let name = format!("tracectl-test-lost-{}", std::process::id());
    let inst = Path::new(TRACEFS).join("instances").join(&name);
    std::fs::create_dir(&inst).unwrap();
    let _g = InstanceGuard(inst.clone());
    std::fs::write(inst.join("buffer_size_kb"), "8").unwrap();
    std::fs::write(inst.join("events/syscalls/enable"), "1").unwrap();
    // The load runs on every CPU in turn, so that no CPU's 8 KiB is left unfilled
    // because the scheduler kept the load elsewhere.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    for cpu in 0..cpus {
        let _ = Command::new("taskset")
            .args(["-c", &cpu.to_string(), "ls", "-R", "/usr"])
            .output();
    }
    std::fs::write(inst.join("tracing_on"), "0").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("lost.dat");
    let o = tracectl()
        .args(["extract", "-B", &name, "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stderr = String::from_utf8_lossy(&o.stderr);
    // CPUs whose pages had no room for the count ("unknown count") are left out.
    let known: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("lost events: ") && !l.contains("unknown count"))
        .collect();
    let ours: u64 = known
        .iter()
        .filter_map(|l| {
            l.split("lost events: ")
                .nth(1)?
                .split(' ')
                .next()?
                .parse::<u64>()
                .ok()
        })
        .sum();
    let overrun: u64 = known
        .iter()
        .filter_map(|l| {
            l.split("overrun: ")
                .nth(1)?
                .split(',')
                .next()?
                .parse::<u64>()
                .ok()
        })
        .sum();
    let overflowed = stderr
        .lines()
        .filter(|l| l.contains("lost events: "))
        .any(|l| !l.contains("lost events: 0 "));
    assert!(overflowed, "the 8 KiB buffer overflowed: {stderr}");
    assert_eq!(ours, overrun, "page headers vs per_cpu stats: {stderr}");
    let dat = DatFile::open(&out).unwrap();
    assert!(
        dat.options()
            .cpustats
            .iter()
            .flat_map(|s| s.lines())
            .any(|l| l.starts_with("overrun: ") && l != "overrun: 0"),
        "CPUSTAT stores the overrun: {:?}",
        dat.options().cpustats
    );
    if have_tracecmd() {
        let r = Command::new("trace-cmd")
            .arg("report")
            .arg(&out)
            .output()
            .unwrap();
        let dropped: u64 = String::from_utf8_lossy(&r.stdout)
            .lines()
            .filter_map(|l| {
                l.split(" [")
                    .nth(1)?
                    .strip_suffix(" EVENTS DROPPED]")?
                    .parse::<u64>()
                    .ok()
            })
            .sum();
        assert_eq!(dropped, ours);
        check_file(&out);
    }
}

#[test]
fn cpumask_option_and_clock() {
    if !live::ready() {
        return;
    }
    let ncpu = std::fs::read_dir(Path::new(TRACEFS).join("per_cpu"))
        .unwrap()
        .count();
    if ncpu < 2 {
        skips::skip("needs 2 CPUs");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = record_ok(
        dir.path(),
        "m.dat",
        &[
            "-M",
            "1",
            "-O",
            "record-tgid",
            "-C",
            "global",
            "-e",
            "sched_switch",
            "--",
            "sleep",
            "0.3",
        ],
    );
    let dat = DatFile::open(&file).unwrap();
    assert_eq!(dat.buffers()[0].clock.as_deref(), Some("global"));
    assert!(dat
        .options()
        .trace_clock
        .as_deref()
        .unwrap()
        .contains("[global]"));
    let names = names(&dat);
    let layout_long = dat.long_size();
    for (i, c) in dat.buffers()[0].cpus().iter().enumerate() {
        let mut n = std::collections::BTreeMap::new();
        let mut pages = dat.cpu_pages(0, i).unwrap();
        while let Some(p) = pages.next_page().unwrap() {
            count_page(p, layout_long, dat.endian().is_big(), &names, &mut n);
        }
        let total: u64 = n.values().sum();
        if c.cpu == 0 {
            assert!(total > 0, "cpu0 recorded");
        } else {
            assert_eq!(total, 0, "cpu{} is outside the mask", c.cpu);
        }
    }
    check_file(&file);
}

/// The whole workflow: our recording, printed by `tracectl report` and by
/// `trace-cmd report`, line for line the same.
#[test]
fn our_recording_reports_identically_in_both_tools() {
    if !live::ready() || !have_tracecmd() {
        skips::skip("needs root, tracefs and trace-cmd");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = record_ok(
        dir.path(),
        "r.dat",
        &[
            "-e",
            "sched",
            "-e",
            "irq",
            "-e",
            "syscalls",
            "--",
            "ls",
            "-R",
            "/usr/share/doc",
        ],
    );
    let ours = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .arg("report")
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        ours.status.success(),
        "{}",
        String::from_utf8_lossy(&ours.stderr)
    );
    let theirs = Command::new("trace-cmd")
        .arg("report")
        .arg(&file)
        .output()
        .unwrap();
    let (a, b) = (
        String::from_utf8_lossy(&ours.stdout),
        String::from_utf8_lossy(&theirs.stdout),
    );
    assert!(b.lines().count() > 100);
    let diff: Vec<_> = a
        .lines()
        .zip(b.lines())
        .filter(|(x, y)| x != y)
        .take(5)
        .collect();
    assert!(
        diff.is_empty() && a.lines().count() == b.lines().count(),
        "first differences: {diff:#?}"
    );
}

/// `-e A -B name -e B`: A in the top buffer, B in a named one, as trace-cmd records.
#[test]
fn several_instances_become_buffers() {
    if !live::ready() {
        return;
    }
    let name = format!("tracectl-test-multi-{}", std::process::id());
    let _g = InstanceGuard(Path::new(TRACEFS).join("instances").join(&name));
    let dir = tempfile::tempdir().unwrap();
    let file = record_ok(
        dir.path(),
        "multi.dat",
        &[
            "-e",
            "sched_switch",
            "-B",
            &name,
            "-e",
            "sched_wakeup",
            "-e",
            "sched_waking",
            "--",
            "sleep",
            "0.2",
        ],
    );
    let dat = DatFile::open(&file).unwrap();
    let names: Vec<&str> = dat.buffers().iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["", name.as_str()]);
    let top = our_counts(&dat, 0);
    let inst = our_counts(&dat, 1);
    assert!(
        top.keys().all(|k| k == "sched_switch") && !top.is_empty(),
        "{top:?}"
    );
    assert!(
        inst.keys()
            .all(|k| k == "sched_wakeup" || k == "sched_waking")
            && !inst.is_empty(),
        "{inst:?}"
    );
    if have_tracecmd() {
        let mut all = top.clone();
        for (k, v) in inst {
            *all.entry(k).or_insert(0) += v;
        }
        assert_eq!(report_counts(&file, &[]), all);
    }
    assert!(
        !Path::new(TRACEFS).join("instances").join(&name).exists(),
        "created instance removed"
    );
}

/// `-m KB` keeps only the newest pages of each CPU, and the file stays valid.
#[test]
fn max_size_per_cpu_keeps_the_newest_pages() {
    if !live::ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = record_ok(
        dir.path(),
        "m.dat",
        &[
            "-m",
            "32",
            "-e",
            "sched",
            "-e",
            "syscalls",
            "--",
            "sh",
            "-c",
            "find /usr -maxdepth 3 >/dev/null",
        ],
    );
    let dat = DatFile::open(&file).unwrap();
    let page = dat.buffers()[0].page_size as u64;
    for i in 0..dat.buffers()[0].cpus().len() {
        let n = dat.cpu_pages(0, i).unwrap().read_all().unwrap().len() as u64 / page;
        assert!(n <= 32 * 1024 / page, "cpu entry {i}: {n} pages kept");
    }
    let c = check_file(&file);
    assert!(
        c.contains_key("sched_process_exit"),
        "the newest events are kept: {c:?}"
    );
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name() != "m.dat")
        .collect();
    assert!(left.is_empty(), "capture files removed: {left:?}");
}

/// `-l` and `-n` given after `-B NAME` go to that instance's set_ftrace_filter and
/// set_ftrace_notrace, as trace-cmd binds them. On a kernel that refuses function
/// filtering (EPERM), the error names the instance's file, and it comes before anything is
/// written: the instance keeps its state and a new one is not even created.
#[test]
fn function_filters_after_b_go_to_that_instance() {
    if !live::ready() {
        return;
    }
    let refused = std::fs::OpenOptions::new()
        .write(true)
        .open(Path::new(TRACEFS).join("set_ftrace_filter"))
        .is_err();
    if !refused {
        skips::skip("function filtering works here: this test checks the refusal path");
        return;
    }
    let name = format!("tracectl-test-lafterb-{}", std::process::id());
    let inst = Path::new(TRACEFS).join("instances").join(&name);
    std::fs::create_dir(&inst).unwrap();
    let _g = InstanceGuard(inst.clone());
    let state = || -> Vec<String> {
        [
            "set_event",
            "current_tracer",
            "tracing_on",
            "events/irq/enable",
        ]
        .iter()
        .map(|f| std::fs::read_to_string(inst.join(f)).unwrap())
        .collect()
    };
    let before = state();
    let dir = tempfile::tempdir().unwrap();
    for (flag, file) in [("-l", "set_ftrace_filter"), ("-n", "set_ftrace_notrace")] {
        let (out, o) = record(
            dir.path(),
            "x.dat",
            &[
                "-e",
                "sched:sched_switch",
                "-B",
                &name,
                "-e",
                "irq",
                flag,
                "schedule",
                "--",
                "true",
            ],
        );
        assert!(!o.status.success(), "{flag}");
        let err = String::from_utf8_lossy(&o.stderr);
        let path = format!("instances/{name}/{file}");
        assert!(
            err.contains(&format!("{flag} ({file})")) && err.contains(&path),
            "{flag}: {err}"
        );
        assert_eq!(state(), before, "{flag}");
        assert!(!out.exists());
    }
    // An instance still to be made is checked against the top level, whose files it
    // gets, and is not made.
    let new = format!("tracectl-test-lafterb-new-{}", std::process::id());
    let _g2 = InstanceGuard(Path::new(TRACEFS).join("instances").join(&new));
    let (_, o) = record(
        dir.path(),
        "x.dat",
        &[
            "-e",
            "sched:sched_switch",
            "-B",
            &new,
            "-e",
            "irq",
            "-l",
            "schedule",
            "--",
            "true",
        ],
    );
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("-l (set_ftrace_filter)"), "{err}");
    assert!(!Path::new(TRACEFS).join("instances").join(&new).exists());
}

/// `-v -B NAME` removes that instance, as trace-cmd record does (it rmdirs it before
/// making the others); a recording that fails removes nothing, nor does one naming an
/// instance that does not exist. A -H after -B enables its events in that instance's
/// buffer, and -F keeps the top buffer (recorded, empty here).
#[test]
fn v_before_b_removes_that_instance_and_h_after_b_is_its() {
    if !live::ready() {
        return;
    }
    let pid = std::process::id();
    let old = format!("tracectl-test-vold-{pid}");
    let new = format!("tracectl-test-vnew-{pid}");
    let old_dir = Path::new(TRACEFS).join("instances").join(&old);
    let _g = InstanceGuard(old_dir.clone());
    let _g2 = InstanceGuard(Path::new(TRACEFS).join("instances").join(&new));
    std::fs::create_dir(&old_dir).unwrap();
    let dir = tempfile::tempdir().unwrap();
    // Refused before the first write: the instance to remove stays.
    let (out, o) = record(
        dir.path(),
        "bad.dat",
        &["-e", "no_such_event_xyz", "-v", "-B", &old, "--", "true"],
    );
    assert!(!o.status.success());
    assert!(old_dir.exists(), "a failed record removed {old}");
    assert!(!out.exists());
    let missing = format!("tracectl-test-vmissing-{pid}");
    let (_, o) = record(
        dir.path(),
        "bad.dat",
        &["-e", "sched_switch", "-v", "-B", &missing, "--", "true"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("no such instance to remove"),
        "{err}"
    );
    // Removed, and the other buffer recorded with the hook's events.
    let file = record_ok(
        dir.path(),
        "v.dat",
        &[
            "-v",
            "-B",
            &old,
            "-B",
            &new,
            "-H",
            "sched:sched_waking,pid/sched:sched_switch,next_pid",
            "-F",
            "--",
            "sleep",
            "0.1",
        ],
    );
    assert!(!old_dir.exists(), "{old} was not removed");
    let dat = DatFile::open(&file).unwrap();
    let names: Vec<&str> = dat.buffers().iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["", new.as_str()]);
    let inst = our_counts(&dat, 1);
    assert!(
        inst.keys()
            .all(|k| k == "sched_waking" || k == "sched_switch")
            && !inst.is_empty(),
        "{inst:?}"
    );
    assert!(our_counts(&dat, 0).is_empty());
}
