//! `tracectl perf record`'s options as perf 6.1 has them: recorded by perf and by
//! tracectl on the same workload (tests/data/perf/opts.c), the attrs `perf evlist -v`
//! prints are the same field by field, and what `perf script` prints of both files shows
//! what the option asks for; `tracectl perf script` prints what `perf script` prints of
//! tracectl's file. Bad values fail before the command starts and leave no file.
//! Skips (with the reason) without root, perf or a C compiler.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::perf::{build_fixture_program, cc_missing, run_clean, skip_reason};

/// Whether perf (with root) and a C compiler are here; when not, the reason is printed
/// as a skip.
fn ready() -> bool {
    match skip_reason().or_else(|| cc_missing().map(str::to_string)) {
        Some(why) => {
            crate::support::skips::skip(why);
            false
        }
        None => true,
    }
}

/// A directory with tests/data/perf/opts.c built in it.
fn workdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    build_fixture_program("opts", dir.path());
    dir
}

fn tracectl() -> &'static str {
    env!("CARGO_BIN_EXE_tracectl")
}

/// The two recorders: perf writing p.data, tracectl writing t.data.
const RECORDERS: [(&str, &str); 2] = [("perf", "p.data"), ("tracectl", "t.data")];

/// Record `cmd` with `opts` by perf into p.data and by tracectl into t.data (both quiet).
fn record_both(d: &Path, opts: &[&str], cmd: &[&str]) {
    for (tool, _) in RECORDERS {
        record_by(tool, d, opts, cmd);
    }
}

/// Record `cmd` with `opts` by `tool` (one of [`RECORDERS`]), quietly.
fn record_by(tool: &str, d: &Path, opts: &[&str], cmd: &[&str]) {
    {
        let (tool, pre, file) = match tool {
            "perf" => ("perf", &["record"][..], "p.data"),
            _ => (tracectl(), &["perf", "record"][..], "t.data"),
        };
        let args = [pre, &["-q", "-o", file], opts, &["--"], cmd].concat();
        let out = Command::new(tool)
            .current_dir(d)
            .args(&args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{tool} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stderr.is_empty(),
            "{tool} {args:?} is not quiet with -q: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// `perf evlist -v` of `file`, without its tip.
fn attrs(d: &Path, file: &str) -> String {
    run_clean("perf", &["evlist", "-v", "-i", file], d)
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.to_string() + "\n")
        .collect()
}

/// The attrs of both files are the same, field by field.
fn same_attrs(d: &Path, what: &str) {
    let (p, t) = (attrs(d, "p.data"), attrs(d, "t.data"));
    let fields = |s: &str| -> Vec<String> { s.split(", ").map(str::to_string).collect() };
    assert_eq!(fields(&t), fields(&p), "{what}: the attrs differ");
}

/// `perf script ARGS` of `file`.
fn script(d: &Path, file: &str, args: &[&str]) -> String {
    run_clean("perf", &[&["script", "-i", file][..], args].concat(), d)
}

/// `tracectl perf script` prints what `perf script` prints of tracectl's file.
fn our_script_same(d: &Path, args: &[&str], what: &str) {
    let perf = script(d, "t.data", args);
    let ours = run_clean(
        tracectl(),
        &[&["perf", "script", "-i", "t.data"][..], args].concat(),
        d,
    );
    assert_eq!(
        ours, perf,
        "{what}: tracectl perf script differs from perf's"
    );
}

fn opts_bin(d: &Path) -> String {
    d.join("opts").to_string_lossy().into_owned()
}

/// Every option that only changes attr bits: the same attrs as perf's, and perf script
/// reads tracectl's file (warning of nothing) as tracectl's reader does.
#[test]
fn perf_record_opts_live_attrs_are_perf_s() {
    if !ready() {
        return;
    }
    let dir = workdir();
    let d = dir.path();
    let prog = opts_bin(d);
    let cases: &[&[&str]] = &[
        &["-i"],
        &["--no-inherit"],
        &["-T"],
        &["-P", "-c", "100000"],
        &["-c", "100000"],
        &["--sample-cpu"],
        &["-R"],
        &["-d"],
        &["--all-user"],
        &["--all-kernel"],
        &["--all-user", "-e", "cpu-clock"],
        &["--all-kernel", "-e", "cpu-clock:u"],
        &["--all-user", "-g"],
        &["--buildid-mmap"],
        &["-n"],
        &["-n", "-e", "sched:sched_switch"],
        &["-e", "sched:sched_switch", "-d", "-P"],
        &["-e", "sched:sched_switch", "--filter", "prev_pid == 1"],
        // Several events: ID when they sample the same fields, IDENTIFIER when not;
        // CPU and RAW on tracepoints only; the tracking dummy of -a and -C.
        &["-e", "cs,page-faults"],
        &["-e", "cs,page-faults", "-c", "1"],
        &["-e", "{cpu-clock,task-clock}"],
        &["-e", "cpu-clock,sched:sched_switch"],
        &["-e", "sched:sched_process_fork,cs"],
        &["-e", "sched:sched_switch,sched:sched_process_fork"],
        &["-a", "-e", "cs"],
        &["-a", "-e", "cs,sched:sched_switch", "-c", "1"],
        &["-C", "0", "-e", "page-faults", "-D", "10"],
        &["--no-buffering"],
        &["--sample-identifier"],
        &["--sample-identifier", "-e", "cs,page-faults"],
        &["--running-time"],
        &["--running-time", "-e", "cs"],
        &["-g", "--kernel-callchains"],
        &["-g", "--user-callchains"],
        &["--group", "-e", "cpu-clock", "-e", "cs,page-faults"],
        &[
            "-e",
            "sched:sched_switch,sched:sched_process_fork",
            "--exclude-perf",
        ],
        &["-e", "sched:*fork", "--filter", "child_pid > 0", "-e", "cs"],
        &[
            "--timestamp-boundary",
            "--proc-map-timeout",
            "100",
            "--aio",
            "--affinity=cpu",
        ],
        &["--num-thread-synthesize", "2", "--aio=2"],
        &["--no-bpf-event"],
        &["--no-bpf-event", "-a", "-e", "cs"],
        // One ring per thread: no inherit, no time but with -T or on tracepoints;
        // nothing changes with -a.
        &["--per-thread"],
        &["--per-thread", "-T"],
        &["--per-thread", "-a", "-e", "cs"],
    ];
    for opts in cases {
        record_both(d, opts, &[&prog, "fork", "0.05"]);
        let what = format!("{opts:?}");
        same_attrs(d, &what);
        script(d, "p.data", &[]);
        our_script_same(d, &[], &what);
    }
}

/// `-k CLOCK` (perf's names and numbers): the attrs' `use_clockid` and `clockid` are
/// perf's, and so are the CLOCKID and CLOCK_DATA sections perf's header shows (the
/// reading of the clock is the recording's own moment: its values are left out).
#[test]
fn perf_record_opts_live_clockid() {
    if !ready() {
        return;
    }
    let dir = workdir();
    let d = dir.path();
    let prog = opts_bin(d);
    let clock_lines = |file: &str| -> Vec<String> {
        run_clean("perf", &["script", "-i", file, "--header-only"], d)
            .lines()
            .filter(|l| l.starts_with("# clockid") || l.starts_with("# missing features"))
            .map(str::to_string)
            .chain(
                run_clean("perf", &["script", "-i", file, "--header-only"], d)
                    .lines()
                    .filter(|l| l.starts_with("# reference time: "))
                    .map(|l| l.rsplit_once(" (").map_or("", |(_, c)| c).to_string()),
            )
            .collect()
    };
    for (k, name) in [
        ("mono", "monotonic (1)"),
        ("CLOCK_BOOTTIME", "boottime (7)"),
        ("raw", "monotonic_raw (4)"),
        ("0", "realtime (0)"),
        ("Tai", "tai (11)"),
    ] {
        record_both(d, &["-k", k], &[&prog, "fork", "0.05"]);
        let what = format!("-k {k}");
        same_attrs(d, &what);
        our_script_same(d, &[], &what);
        let (p, t) = (clock_lines("p.data"), clock_lines("t.data"));
        assert!(
            p.contains(&format!("# clockid: {name}")),
            "{what}: perf's file names the clock: {p:?}"
        );
        // Our file lacks features perf writes whatever the options (NUMA, caches...):
        // the clock sections are not among them.
        let clock_only = |v: &[String]| -> Vec<String> {
            v.iter()
                .filter(|l| !l.starts_with("# missing"))
                .cloned()
                .collect()
        };
        assert_eq!(clock_only(&t), clock_only(&p), "{what}");
        let missing = t.iter().find(|l| l.starts_with("# missing")).unwrap();
        assert!(
            !missing.contains(" CLOCKID ") && !missing.contains(" CLOCK_DATA "),
            "{what}: {missing}"
        );
    }
}

/// `-D MS`: as perf, a `dummy:HG` event takes the side-band records from the start and
/// the events start MS after the command (the attrs are perf's, with a command, with
/// -a, with -e and -g, and with -1); the first sample of both files comes at least MS
/// after the command's exec, and perf script reads tracectl's file as tracectl does.
#[test]
fn perf_record_opts_live_delay() {
    if !ready() {
        return;
    }
    let dir = workdir();
    let d = dir.path();
    let prog = opts_bin(d);
    for opts in [
        &["-D", "100"][..],
        &["-a", "-D", "100"],
        &["-e", "cpu-clock", "-g", "-D", "100"],
        &["-D", "-1"],
    ] {
        record_both(d, opts, &[&prog, "fork", "0.2"]);
        let what = format!("{opts:?}");
        same_attrs(d, &what);
        our_script_same(d, &[], &what);
        if opts[opts.len() - 1] == "-1" {
            for (_, file) in RECORDERS {
                assert_eq!(script(d, file, &[]), "", "{what}: {file} has no samples");
            }
            continue;
        }
        for (_, file) in RECORDERS {
            let text = script(d, file, &["-F", "comm,time,event", "--show-task-events"]);
            let time = |l: &str| -> f64 {
                let t = l.split(':').next().unwrap().trim();
                t.rsplit(' ').next().unwrap().parse().unwrap()
            };
            let exec = text
                .lines()
                .find(|l| l.contains("PERF_RECORD_COMM exec: opts"))
                .map(time)
                .unwrap_or_else(|| panic!("{what}: {file}: no exec\n{text}"));
            let first = text
                .lines()
                .find(|l| l.contains(" cpu-clock") && l.trim_start().starts_with("opts"))
                .map(time)
                .unwrap_or_else(|| panic!("{what}: {file}: no sample of opts\n{text}"));
            assert!(
                first - exec >= 0.09,
                "{what}: {file}: a sample {:.3} s after the exec",
                first - exec
            );
        }
    }
}

/// `-s/--stat`: perf's `inherit_stat` and read format; the kernel's READ records of the
/// exiting tasks are in both files, so `perf report -T` lists a count per thread of
/// each.
#[test]
fn perf_record_opts_live_stat() {
    if !ready() {
        return;
    }
    let dir = workdir();
    let d = dir.path();
    let prog = opts_bin(d);
    record_both(d, &["-s"], &[&prog, "fork", "0.05"]);
    same_attrs(d, "-s");
    our_script_same(d, &[], "-s");
    for (_, file) in RECORDERS {
        let t = run_clean("perf", &["report", "-i", file, "-T", "--stdio"], d);
        let rows: Vec<&str> = t
            .lines()
            // The columns are as wide as the widest pid and tid: the header's spacing
            // follows them.
            .skip_while(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                !(w.len() >= 3 && w[0] == "#" && w[1] == "PID" && w[2] == "TID")
            })
            .skip(1)
            .filter(|l| !l.trim().is_empty())
            .collect();
        assert!(!rows.is_empty(), "{file}: no per-thread counts\n{t}");
        for r in rows {
            let n: Vec<u64> = r
                .split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect();
            assert!(n.len() == 3 && n[2] > 0, "{file}: {r}");
        }
    }
}

/// The `(pid, tid, comm)` of every sample of `file`.
fn samples(d: &Path, file: &str) -> Vec<(String, String, String)> {
    script(d, file, &["-F", "pid,tid,comm"])
        .lines()
        .map(|l| {
            let (comm, pt) = l.trim().rsplit_once(' ').unwrap();
            let (pid, tid) = pt.split_once('/').unwrap();
            (pid.into(), tid.into(), comm.trim().to_string())
        })
        .collect()
}

/// `-t TID` samples that thread only (the worker, not the main thread spinning beside
/// it), without its children, in both files.
#[test]
fn perf_record_opts_live_tid_samples_that_thread_only() {
    if !ready() {
        return;
    }
    let dir = workdir();
    let d = dir.path();
    // One workload per tool, spinning long enough for a slow start on a loaded machine
    // (it is killed once recorded).
    let mut ids = Vec::new();
    for (tool, _) in RECORDERS {
        let tid_file = d.join(format!("tid-{tool}"));
        let child = Command::new(d.join("opts"))
            .args(["threads", "20"])
            .arg(&tid_file)
            .spawn()
            .unwrap();
        let running = crate::support::perf::Reaped(child);
        let pid = running.0.id().to_string();
        let mut tid = String::new();
        for _ in 0..500 {
            tid = std::fs::read_to_string(&tid_file).unwrap_or_default();
            if tid.ends_with('\n') {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let tid = tid.trim().to_string();
        assert!(!tid.is_empty(), "the workload wrote no tid");
        record_by(tool, d, &["-t", &tid], &["sleep", "0.3"]);
        ids.push((pid, tid));
    }
    same_attrs(d, "-t");
    for ((_, file), (pid, tid)) in RECORDERS.iter().zip(&ids) {
        let s = samples(d, file);
        assert!(s.len() > 10, "{file}: {} samples of the worker", s.len());
        for (p, t, comm) in &s {
            assert_eq!(
                (p.as_str(), t.as_str(), comm.as_str()),
                (pid.as_str(), tid.as_str(), "worker"),
                "{file}"
            );
        }
    }
    our_script_same(d, &["-F", "pid,tid,comm,ip,sym"], "-t");
}

/// `--per-thread -p PID`: a ring per thread of the process, and the samples of both its
/// threads (the main one and the worker) in both files, untimed.
#[test]
fn perf_record_opts_live_per_thread_samples_each_thread() {
    if !ready() {
        return;
    }
    let dir = workdir();
    let d = dir.path();
    let mut pids = Vec::new();
    for (tool, _) in RECORDERS {
        let tid_file = d.join(format!("tid-{tool}"));
        let running = crate::support::perf::Reaped(
            Command::new(d.join("opts"))
                .args(["threads", "20"])
                .arg(&tid_file)
                .spawn()
                .unwrap(),
        );
        for _ in 0..500 {
            if std::fs::read_to_string(&tid_file).is_ok_and(|t| t.ends_with('\n')) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let pid = running.0.id().to_string();
        record_by(tool, d, &["--per-thread", "-p", &pid], &["sleep", "0.3"]);
        pids.push(pid);
    }
    same_attrs(d, "--per-thread -p");
    for ((_, file), pid) in RECORDERS.iter().zip(&pids) {
        let s = samples(d, file);
        let mut threads: Vec<&str> = s.iter().map(|x| x.1.as_str()).collect();
        threads.sort();
        threads.dedup();
        assert_eq!(threads.len(), 2, "{file}: threads {threads:?}");
        assert!(s.iter().all(|x| &x.0 == pid), "{file}: another process");
        // perf refuses to print a time the samples do not have.
        let timed = Command::new("perf")
            .current_dir(d)
            .args(["script", "-i", file, "-F", "tid,time"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&timed.stderr);
        assert!(
            err.contains("do not have TIME attribute set"),
            "{file}: samples with a time: {err}"
        );
    }
    our_script_same(d, &["-F", "pid,tid,comm,ip,sym"], "--per-thread -p");

    // A tracepoint keeps its time: the attrs are perf's and perf reads the file.
    // (The order in which perf script prints untimed samples among timed ones, as it
    // reads them, is not tracectl's reader's yet.)
    let prog = opts_bin(d);
    let opts = ["--per-thread", "-e", "cpu-clock,sched:sched_switch"];
    record_both(d, &opts, &[&prog, "fork", "0.05"]);
    same_attrs(d, "--per-thread with a tracepoint");
    let s = script(d, "t.data", &["-F", "event"]);
    assert!(s.contains("sched:sched_switch"), "{s}");
    assert!(s.contains("cpu-clock"), "{s}");
}

/// `-i` follows no children: the forked child's samples are in neither file, which
/// has the parent's; without it, both have the child's.
#[test]
fn perf_record_opts_live_no_inherit_leaves_the_children_out() {
    if !ready() {
        return;
    }
    let dir = workdir();
    let d = dir.path();
    let prog = opts_bin(d);
    for (opts, processes) in [(&["-i"][..], 1), (&[][..], 2)] {
        record_both(d, opts, &[&prog, "fork", "0.2"]);
        for file in ["p.data", "t.data"] {
            let mut pids: Vec<String> = samples(d, file).into_iter().map(|s| s.0).collect();
            pids.sort();
            pids.dedup();
            assert_eq!(pids.len(), processes, "{opts:?} {file}: {pids:?}");
        }
        our_script_same(d, &["-F", "pid,tid,comm,ip,sym"], "-i");
    }
}

/// `--filter` keeps the tracepoint's samples the filter passes: the five writes of 7
/// bytes, not the five of 3.
#[test]
fn perf_record_opts_live_filter_drops_the_filtered_samples() {
    if !ready() {
        return;
    }
    if !Path::new("/sys/kernel/tracing/events/syscalls/sys_enter_write").exists() {
        crate::support::skips::skip("no syscalls:sys_enter_write tracepoint");
        return;
    }
    let dir = workdir();
    let d = dir.path();
    let prog = opts_bin(d);
    record_both(
        d,
        &[
            "-e",
            "syscalls:sys_enter_write",
            "--filter",
            "count == 7",
            "--filter",
            "fd < 100",
        ],
        &[&prog, "writes"],
    );
    same_attrs(d, "--filter");
    for file in ["p.data", "t.data"] {
        let s = script(d, file, &["-F", "comm,event,trace"]);
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines.len(), 5, "{file}: {s}");
        for l in lines {
            assert!(l.ends_with("count: 0x00000007"), "{file}: {l}");
        }
    }
    our_script_same(d, &[], "--filter");
}

/// `--all-user` samples no kernel frames; `--all-kernel` only kernel ones.
#[test]
fn perf_record_opts_live_all_user_and_all_kernel() {
    if !ready() {
        return;
    }
    let dir = workdir();
    let d = dir.path();
    let dd = [
        "dd",
        "if=/dev/zero",
        "of=/dev/null",
        "bs=64k",
        "count=40000",
        "status=none",
    ];
    for (opt, kernel) in [("--all-user", false), ("--all-kernel", true)] {
        // Without call chains: a kernel sample's chain goes on into user space.
        let opts: &[&str] = if kernel { &[opt] } else { &[opt, "-g"] };
        record_both(d, opts, &dd);
        same_attrs(d, opt);
        for file in ["p.data", "t.data"] {
            let s = script(d, file, &["-F", "ip,dso"]);
            let frames: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
            assert!(frames.len() > 5, "{opt} {file}: {s}");
            for f in frames {
                assert_eq!(f.contains("[kernel.kallsyms]"), kernel, "{opt} {file}: {f}");
            }
        }
        our_script_same(d, &["-F", "comm,ip,sym,dso"], opt);
    }
}

/// `-n` records the side-band records and no sample.
#[test]
fn perf_record_opts_live_no_samples() {
    if !ready() {
        return;
    }
    let dir = workdir();
    let d = dir.path();
    let prog = opts_bin(d);
    record_both(d, &["-n"], &[&prog, "fork", "0.1"]);
    same_attrs(d, "-n");
    for file in ["p.data", "t.data"] {
        assert_eq!(script(d, file, &[]), "", "{file}");
    }
    our_script_same(d, &[], "-n");
}

/// `-d` gives the data address: page faults at each of the 16 pages the workload touches.
#[test]
fn perf_record_opts_live_data_addresses() {
    if !ready() {
        return;
    }
    let dir = workdir();
    let d = dir.path();
    let prog = opts_bin(d);
    record_both(
        d,
        &["-e", "page-faults", "-c", "1", "-d"],
        &[&prog, "touch"],
    );
    same_attrs(d, "-d");
    let want: Vec<String> = (0..16)
        .map(|i| format!("{:x}", 0x200000000u64 + i * 4096))
        .collect();
    for file in ["p.data", "t.data"] {
        let s = script(d, file, &["-F", "addr"]);
        let got: Vec<String> = s
            .lines()
            .map(|l| l.trim().to_string())
            .filter(|a| a.starts_with("2000"))
            .collect();
        assert_eq!(got, want, "{file}: {s}");
    }
    our_script_same(d, &["-F", "comm,tid,addr,ip,sym"], "-d");
}

/// Bad values stop tracectl before the command runs, naming what is wrong, and leave no
/// file (perf leaves an empty one for an unknown thread or a refused filter).
#[test]
fn perf_record_opts_live_bad_values_leave_nothing() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ran: PathBuf = d.join("ran");
    let cmd = format!("touch {}", ran.display());
    let cases: &[(&[&str], &str)] = &[
        (
            &["-e", "sched:sched_switch", "--filter", "no_such_field == 1"],
            "failed to set filter \"no_such_field == 1\" on event sched:sched_switch",
        ),
        (
            &["--filter", "prev_pid == 1", "-e", "sched:sched_switch"],
            "must follow a -e tracepoint",
        ),
        (
            &["-e", "cpu-clock", "--filter", "prev_pid == 1"],
            "must follow a -e tracepoint",
        ),
        (&["-t", "2147483646"], "-t 2147483646: no such thread"),
        (&["-t", "x"], "'x' is not a positive tid"),
        (&["-t", "1", "-p", "1"], "-p and -t cannot be combined"),
        (&["--all-user", "--all-kernel"], "cannot be used with"),
        (&["-k", "foo"], "-k foo: unknown clock"),
        // perf: "wrong clockid (5)." (the kernel takes no such clock for events).
        (&["-k", "5"], "wrong clockid (5)"),
        (&["-D", "-2"], "-D -2: give milliseconds to wait"),
    ];
    for (opts, msg) in cases {
        let args = [
            &["perf", "record", "-o", "t.data"][..],
            opts,
            &["--", "sh", "-c", &cmd],
        ]
        .concat();
        let out = Command::new(tracectl())
            .current_dir(d)
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{opts:?}");
        assert!(err.contains(msg), "{opts:?}: {err}");
        assert!(!ran.exists(), "{opts:?}: the command ran");
        assert!(!d.join("t.data").exists(), "{opts:?}: a file was left");
    }
    // The exit status is perf's: 129 for its usage errors, 255 for a clock the kernel
    // refuses, 234 (-EINVAL) for a frequency.
    for opts in [
        &["-k", "foo"][..],
        &["-k", "5"],
        &["-k", "99"],
        &["-F", "abc"],
        &["-F", "0"],
    ] {
        let status = |cmd: &str, pre: &[&str]| {
            let args = [
                pre,
                &["record", "-q", "-o", "s.data"][..],
                opts,
                &["--", "true"],
            ]
            .concat();
            Command::new(cmd)
                .current_dir(d)
                .args(&args)
                .output()
                .unwrap()
                .status
                .code()
        };
        let perf = status("perf", &[]);
        assert_ne!(perf, Some(0), "perf record {opts:?}");
        assert_eq!(status(tracectl(), &["perf"]), perf, "{opts:?}");
    }
}

/// `--switch-events` sets `context_switch`: both files carry the switches, which
/// `perf script --show-switch-events` shows, of the workload's tasks only.
#[test]
fn perf_record_opts_live_switch_events() {
    if !ready() {
        return;
    }
    let dir = workdir();
    let d = dir.path();
    let prog = opts_bin(d);
    record_both(d, &["--switch-events"], &[&prog, "fork", "0.1"]);
    same_attrs(d, "--switch-events");
    for file in ["p.data", "t.data"] {
        let s = script(d, file, &["--show-switch-events", "-F", "comm,tid"]);
        let switches: Vec<&str> = s
            .lines()
            .filter(|l| l.contains("PERF_RECORD_SWITCH"))
            .collect();
        assert!(!switches.is_empty(), "{file}: no switch in {s}");
        for l in switches {
            assert!(l.trim_start().starts_with("opts "), "{file}: {l}");
        }
    }
    our_script_same(d, &[], "--switch-events");
}

/// `--buildid-all` lists the build id of every object mapped, hit or not: the same list
/// as perf's, the program and its libraries in it however few samples the short run
/// takes.
#[test]
fn perf_record_opts_live_buildid_all() {
    if !ready() {
        return;
    }
    let dir = workdir();
    let d = dir.path();
    let prog = opts_bin(d);
    record_both(d, &["--buildid-all", "-N"], &[&prog, "writes"]);
    same_attrs(d, "--buildid-all");
    let list = |file: &str| run_clean("perf", &["buildid-list", "-i", file], d);
    let (p, t) = (list("p.data"), list("t.data"));
    assert_eq!(t, p, "the build-id lists differ");
    for object in [prog.as_str(), "libc.so.6", "ld-linux-x86-64.so.2", "[vdso]"] {
        assert!(t.contains(object), "{object} not in {t}");
    }
}

/// `-u USER` samples the processes of that user (by name or number): a loop run as
/// nobody is all the file has, perf reads the file as tracectl does, and a user that
/// does not exist fails before anything is recorded. (perf 6.1's own `-u` is no
/// oracle: it crashes when the user runs nothing and samples every task otherwise.)
#[test]
fn perf_record_opts_live_uid_samples_that_user_s_processes() {
    if !ready() {
        return;
    }
    if Command::new("setpriv").arg("--version").output().is_err() {
        crate::support::skips::skip("setpriv (util-linux) is not installed");
        return;
    }
    let dir = workdir();
    let d = dir.path();
    let spin = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .args(["sh", "-c", "while :; do :; done"])
        .spawn()
        .unwrap();
    let running = crate::support::perf::Reaped(spin);
    let pid = running.0.id().to_string();
    // setpriv execs the shell in place: wait until the process is nobody's.
    for _ in 0..500 {
        let meta = std::fs::metadata(format!("/proc/{pid}"));
        if std::os::unix::fs::MetadataExt::uid(&meta.unwrap()) == 65534 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    for user in ["nobody", "65534"] {
        record_by("tracectl", d, &["-u", user], &["sleep", "0.3"]);
        let s = samples(d, "t.data");
        assert!(s.len() > 10, "-u {user}: {} samples of the loop", s.len());
        for (p, t, comm) in &s {
            assert_eq!((p, t, comm.as_str()), (&pid, &pid, "sh"), "-u {user}");
        }
        our_script_same(d, &["-F", "pid,tid,comm,ip,sym"], "-u");
    }
    drop(running);
    std::fs::remove_file(d.join("t.data")).unwrap();
    let out = Command::new(tracectl())
        .current_dir(d)
        .args([
            "perf",
            "record",
            "-o",
            "t.data",
            "-u",
            "no-such-user-here",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Invalid User"),
        "{out:?}"
    );
    assert!(!d.join("t.data").exists(), "a failed -u left a file");
}
