//! `tracectl perf stat --metric-only`, `-v`, `--control`, `-G`/`--for-each-cgroup`, the
//! tool events (`duration_time` ...) and perf's answers to `-M`, `-T` and `--topdown`, against Debian's `perf stat` 6.1 run on
//! the same workload.
//!
//! The workload is this test program itself, started with `TRACECTL_GETPID_LOOP=N`: it
//! calls getpid(2) exactly N times (after `TRACECTL_GETPID_BEFORE_MS`, before
//! `TRACECTL_GETPID_AFTER_MS`) and exits. No libtest harness (`harness = false`), so that
//! nothing but the loop runs in the workload process.

use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod perf_common;

fn main() {
    perf_common::getpid_loop_if_asked();
    let tests: &[(&str, perf_common::Check)] = &[
        ("perf_stat_metric_only_as_perf_live", metric_only_as_perf),
        ("perf_stat_verbose_as_perf_live", verbose_as_perf),
        ("perf_stat_control_fifo_as_perf_live", control_fifo_as_perf),
        ("perf_stat_control_fd_as_perf_live", control_fd_as_perf),
        ("perf_stat_cgroup_as_perf_live", cgroup_as_perf),
        (
            "perf_stat_pmu_statistics_as_perf_live",
            pmu_statistics_as_perf,
        ),
        (
            "perf_stat_more_bad_options_fail_before_running",
            bad_options_fail_first,
        ),
        ("perf_stat_pmu_terms_as_perf_live", pmu_terms_as_perf),
        ("perf_stat_tool_events_as_perf_live", tool_events_as_perf),
    ];
    perf_common::run_checks(tests);
}

const TRACECTL: &str = env!("CARGO_BIN_EXE_tracectl");

/// `perf stat ARGS` (tool "perf") or `tracectl perf stat ARGS`.
fn stat(tool: &str, args: &[&str]) -> Command {
    let mut c = if tool == "perf" {
        Command::new("perf")
    } else {
        let mut c = Command::new(TRACECTL);
        c.arg("perf");
        c
    };
    c.arg("stat").args(args);
    c
}

/// `stat(tool, args)` counting the workload (`n` getpid calls).
fn on_workload(tool: &str, args: &[&str], n: u64) -> Command {
    let mut c = stat(tool, args);
    c.arg("--").arg(workload_exe());
    c.env("TRACECTL_GETPID_LOOP", n.to_string());
    c
}

fn workload_exe() -> String {
    std::env::current_exe()
        .expect("test binary path")
        .to_string_lossy()
        .into_owned()
}

fn run(mut c: Command) -> Result<Output, String> {
    c.output().map_err(|e| format!("{c:?}: {e}"))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn skip_reason() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("needs root".into());
    }
    if !Path::new("/sys/kernel/tracing/events/syscalls/sys_enter_getpid").exists() {
        return Some("no tracefs with syscalls:sys_enter_getpid".into());
    }
    let perf = Command::new("perf")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    (!perf).then(|| "perf is not installed (apt-get install linux-perf)".to_string())
}

fn live_or_skip(test: &str) -> Result<bool, String> {
    perf_common::run_or_skip(test, skip_reason())
}

/// Digits made 9s: the times and counts that vary from run to run, widths kept.
fn digits_masked(t: &str) -> String {
    t.chars()
        .map(|c| if c.is_ascii_digit() { '9' } else { c })
        .collect()
}

/// Every number made `N` and runs of blanks one: the words and their order, for lines
/// whose counts vary in width from run to run (and rates, whose unit scales with them).
fn words_masked(t: &str) -> String {
    let t = t
        .replace("K/sec", "/sec")
        .replace("M/sec", "/sec")
        .replace("G/sec", "/sec");
    t.lines()
        .map(|l| {
            l.split_whitespace()
                .map(|w| {
                    let mut out = String::new();
                    let mut in_num = false;
                    for c in w.chars() {
                        if c.is_ascii_digit() || (in_num && c == '.') {
                            if !in_num {
                                out.push('N');
                            }
                            in_num = true;
                        } else {
                            in_num = false;
                            out.push(c);
                        }
                    }
                    out
                })
                .collect::<Vec<_>>()
                .join(" ")
                + "\n"
        })
        .collect()
}

/// Both tools on the workload; an error showing both outputs unless `same` holds for
/// their stderr (masked by `mask`) and their exit statuses match.
fn compare(args: &[&str], n: u64, mask: fn(&str) -> String) -> Result<(), String> {
    let a = run(on_workload("tracectl", args, n))?;
    let b = run(on_workload("perf", args, n))?;
    let (ta, tb) = (mask(&text(&a.stderr)), mask(&text(&b.stderr)));
    if ta != tb || a.status.code() != b.status.code() {
        return Err(format!(
            "perf stat {args:?} (exit {:?} and {:?})\n--- tracectl\n{}--- perf\n{}",
            a.status.code(),
            b.status.code(),
            text(&a.stderr),
            text(&b.stderr)
        ));
    }
    Ok(())
}

fn metric_only_as_perf() -> Result<(), String> {
    if !live_or_skip("perf_stat_metric_only_as_perf_live")? {
        return Ok(());
    }
    // Hardware events are <not supported> here; the software ones' metrics (CPUs
    // utilized, /sec) are left out of this layout by perf; units are named per CPU only.
    let hw = "task-clock,cycles,instructions,branch-misses,L1-dcache-load-misses,cache-misses,stalled-cycles-frontend,cs";
    let cases: &[&[&str]] = &[
        &["--metric-only"],
        &["--metric-only", "-e", "task-clock,cs,cycles"],
        &[
            "--metric-only",
            "-x,",
            "-e",
            "task-clock,cycles,instructions",
        ],
        &["--metric-only", "-j", "-e", "task-clock,cycles,cs"],
        &["--metric-only", "-a", "-A", "-e", hw],
        &["--metric-only", "-a", "-A", "-x;", "-e", hw],
        &["--metric-only", "-a", "-A", "-j", "-e", hw],
        &["--metric-only", "-a", "-A", "-e", "cs,cycles"],
        &[
            "--metric-only",
            "-a",
            "--per-socket",
            "-e",
            "cycles,task-clock",
        ],
        &[
            "--metric-only",
            "-a",
            "--per-die",
            "-x,",
            "-e",
            "task-clock,cycles",
        ],
        &[
            "--metric-only",
            "-a",
            "--per-core",
            "-x,",
            "-e",
            "cycles,cs",
        ],
        &["--metric-only", "-a", "--per-node", "-j", "-e", "cycles,cs"],
        // A null run: the units line and the empty line of no counters.
        &["--metric-only", "-n"],
        &["--metric-only", "-n", "-x,"],
        &["--metric-only", "-n", "-j"],
        // Accepted for perf's sake: nothing here to merge or to show per thread.
        &["--no-merge", "-e", "task-clock,cycles"],
        &["--percore-show-thread", "-a", "-A", "-e", "cs"],
    ];
    for args in cases {
        let mask = if args[0] == "--metric-only" {
            digits_masked
        } else {
            words_masked
        };
        compare(args, 1000, mask)?;
    }
    // Intervals, with the units under the time column, and no more after the count.
    for style in [&[][..], &["-x,"], &["-j"]] {
        for split in [&[][..], &["-a", "-A"], &["-a", "--per-socket"]] {
            let mut args = vec!["--metric-only", "-I", "200", "--interval-count", "2"];
            args.extend_from_slice(style);
            args.extend_from_slice(split);
            args.extend_from_slice(&["-e", "task-clock,cycles"]);
            compare(&args, 3_000_000, digits_masked)?;
        }
    }
    Ok(())
}

fn verbose_as_perf() -> Result<(), String> {
    if !live_or_skip("perf_stat_verbose_as_perf_live")? {
        return Ok(());
    }
    let n = 4000;
    for args in [
        &["-v", "-e", "syscalls:sys_enter_getpid,cycles,task-clock"][..],
        &["-v", "-x,", "-e", "syscalls:sys_enter_getpid,instructions"],
        &["-v", "-r", "2", "-e", "syscalls:sys_enter_getpid,cycles"],
        &["-v", "-a", "-A", "-e", "cs"],
    ] {
        compare(args, n, words_masked)?;
    }
    // The raw counts: exact for the getpid tracepoint, in both tools.
    for tool in ["tracectl", "perf"] {
        let o = run(on_workload(
            tool,
            &["-v", "-x,", "-e", "syscalls:sys_enter_getpid"],
            n,
        ))?;
        let want = format!("syscalls:sys_enter_getpid: {n} ");
        let err = text(&o.stderr);
        if !err.lines().any(|l| l.starts_with(&want)) {
            return Err(format!("{tool}: no line starting {want:?} in\n{err}"));
        }
    }
    // With -o, the raw counts go to the file and the rest to stderr.
    let dir = tempdir("verbose")?;
    let result = (|| {
        let mut outs = Vec::new();
        for tool in ["tracectl", "perf"] {
            let file = dir.join(tool);
            let f = file.to_string_lossy().into_owned();
            let o = run(on_workload(
                tool,
                &["-v", "-o", &f, "-e", "syscalls:sys_enter_getpid,cycles"],
                n,
            ))?;
            let written = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
            // Without perf's "# started on" line, which only perf writes.
            let written: String = written
                .lines()
                .filter(|l| !l.starts_with("# started on"))
                .map(|l| format!("{l}\n"))
                .collect();
            outs.push((words_masked(&text(&o.stderr)), words_masked(&written)));
        }
        if outs[0] != outs[1] {
            return Err(format!("-v -o: tracectl {:?}\nperf {:?}", outs[0], outs[1]));
        }
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn tempdir(what: &str) -> Result<PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("tracectl-stat-{what}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

/// The commands sent while counting, each with how long to wait before it: counting
/// starts disabled (-D -1); the workload's loop runs about 1.0 s after the tool starts,
/// and the workload ends 4 s after it.
const SCRIPT: &[(u64, &str)] = &[
    (300, "enable"),
    (0, "ping"),
    (0, "disable cs"),
    (0, "enable cs"),
    (0, "enable nosuch"),
    (0, "evlist"),
    (0, "evlist -g"),
    (0, "evlist -F"),
    (0, "enablex"),
    (0, "bogus"),
    (0, "snapshot"),
    (0, "stop"),
    (2000, "disable"),
];

/// Run the control script against `cmd` (already told where the FIFOs are), writing
/// commands to `ctl` and reading the acknowledgements from `ack`: the acknowledgements
/// seen for each command, and the command's output.
fn control_session(mut cmd: Command, ctl: &Path, ack: &Path) -> Result<(String, Output), String> {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.env("TRACECTL_GETPID_BEFORE_MS", "1000")
        .env("TRACECTL_GETPID_AFTER_MS", "4000");
    let child = cmd.spawn().map_err(|e| format!("{cmd:?}: {e}"))?;
    let open = |p: &Path, write: bool| {
        std::fs::OpenOptions::new()
            .read(!write)
            .write(write)
            .custom_flags(libc::O_NONBLOCK)
            .open(p)
    };
    let mut acks = String::new();
    let script = (|| -> Result<(), String> {
        // The FIFO opens for writing once the tool has opened it (for reading).
        let until = Instant::now() + Duration::from_secs(5);
        let mut w = loop {
            match open(ctl, true) {
                Ok(w) => break w,
                Err(_) if Instant::now() < until => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => return Err(format!("{}: {e}", ctl.display())),
            }
        };
        let mut r = open(ack, false).map_err(|e| format!("{}: {e}", ack.display()))?;
        for (wait, c) in SCRIPT {
            std::thread::sleep(Duration::from_millis(*wait));
            w.write_all(format!("{c}\n").as_bytes())
                .map_err(|e| e.to_string())?;
            // An acknowledgement comes at once, or not at all.
            let until = Instant::now() + Duration::from_millis(400);
            let mut got = Vec::new();
            while Instant::now() < until && got.len() < 5 {
                let mut b = [0u8; 16];
                match r.read(&mut b) {
                    Ok(k) => got.extend_from_slice(&b[..k]),
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
            acks.push_str(&format!("{c}: {got:?}\n"));
        }
        Ok(())
    })();
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    script?;
    Ok((acks, out))
}

/// The two tools' control sessions compared: acknowledgements, messages and counts
/// (the getpid count exactly: the loop ran while the counters were enabled).
fn compare_control(make: &dyn Fn(&str) -> Command, ctl: &Path, ack: &Path) -> Result<(), String> {
    let mut got = Vec::new();
    for tool in ["tracectl", "perf"] {
        let (acks, out) = control_session(make(tool), ctl, ack)?;
        got.push((acks, words_masked(&text(&out.stderr)), text(&out.stderr)));
    }
    let want = "5000,,syscalls:sys_enter_getpid,";
    if got[0].0 != got[1].0 || got[0].1 != got[1].1 || !got[0].2.contains(want) {
        return Err(format!(
            "--- tracectl\n{}{}--- perf\n{}{}",
            got[0].0, got[0].2, got[1].0, got[1].2
        ));
    }
    Ok(())
}

fn fifos(what: &str) -> Result<(PathBuf, PathBuf, PathBuf), String> {
    let dir = tempdir(what)?;
    let (ctl, ack) = (dir.join("ctl"), dir.join("ack"));
    for p in [&ctl, &ack] {
        nix::unistd::mkfifo(p.as_path(), nix::sys::stat::Mode::S_IRWXU)
            .map_err(|e| format!("mkfifo {}: {e}", p.display()))?;
    }
    Ok((dir, ctl, ack))
}

fn control_fifo_as_perf() -> Result<(), String> {
    if !live_or_skip("perf_stat_control_fifo_as_perf_live")? {
        return Ok(());
    }
    let (dir, ctl, ack) = fifos("control-fifo")?;
    let spec = format!("fifo:{},{}", ctl.display(), ack.display());
    let make = |tool: &str| {
        on_workload(
            tool,
            &[
                "-D",
                "-1",
                "--control",
                &spec,
                "-x,",
                "-e",
                "syscalls:sys_enter_getpid,cs",
                "-e",
                "{task-clock,page-faults}",
            ],
            5000,
        )
    };
    let result = compare_control(&make, &ctl, &ack);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn control_fd_as_perf() -> Result<(), String> {
    if !live_or_skip("perf_stat_control_fd_as_perf_live")? {
        return Ok(());
    }
    let (dir, ctl, ack) = fifos("control-fd")?;
    // The descriptors are inherited from a shell that opened the FIFOs.
    let make = |tool: &str| {
        let prog = if tool == "perf" {
            "perf".to_string()
        } else {
            format!("'{TRACECTL}' perf")
        };
        let mut c = Command::new("/bin/sh");
        c.arg("-c").arg(format!(
            "exec 7<>'{}' 8<>'{}'; exec {prog} stat -D -1 --control fd:7,8 -x, -e syscalls:sys_enter_getpid -- '{}'",
            ctl.display(),
            ack.display(),
            workload_exe()
        ));
        c.env("TRACECTL_GETPID_LOOP", "5000");
        c
    };
    let result = compare_control(&make, &ctl, &ack);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// The cgroup file system perf counts cgroups in: a v1 hierarchy with perf_event, else
/// the v2 one.
fn cgroup_root() -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    let all: Vec<Vec<&str>> = mounts
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    let v1 = all
        .iter()
        .find(|f| f.len() > 3 && f[2] == "cgroup" && f[3].split(',').any(|o| o == "perf_event"));
    let v2 = all.iter().find(|f| f.len() > 2 && f[2] == "cgroup2");
    v1.or(v2).map(|f| PathBuf::from(f[1]))
}

fn cgroup_as_perf() -> Result<(), String> {
    const T: &str = "perf_stat_cgroup_as_perf_live";
    if !live_or_skip(T)? {
        return Ok(());
    }
    let Some(root) = cgroup_root() else {
        return perf_common::run_or_skip(T, Some("no cgroup file system mounted".into()))
            .map(|_| ());
    };
    let names: Vec<String> = ["a", "b"]
        .iter()
        .map(|s| format!("tracectl-test-{}-{s}", std::process::id()))
        .collect();
    for n in &names {
        std::fs::create_dir(root.join(n))
            .map_err(|e| format!("{}: {e}", root.join(n).display()))?;
    }
    let result = (|| {
        let n = 6000;
        // The workload moves itself into the first cgroup: its calls count there alone.
        let in_cgroup = |tool: &str, args: &[&str]| {
            let mut c = stat(tool, args);
            c.args(["--", "/bin/sh", "-c"]).arg(format!(
                "echo $$ > '{}/cgroup.procs'; exec '{}'",
                root.join(&names[0]).display(),
                workload_exe()
            ));
            c.env("TRACECTL_GETPID_LOOP", n.to_string());
            c
        };
        let g = format!("{},", names[0]);
        let each = format!("{},{}", names[0], names[1]);
        let gp = "syscalls:sys_enter_getpid";
        let cases: Vec<Vec<&str>> = vec![
            vec!["-a", "-x,", "-e", gp, "-e", gp, "-G", &g],
            vec!["-a", "-e", gp, "-e", "task-clock", "-G", &names[0]],
            vec!["-a", "-j", "--for-each-cgroup", &each, "-e", gp],
            vec!["-C", "0", "-x,", "-e", gp, "-G", &names[1]],
            vec!["-a", "-A", "-e", gp, "-G", &names[1]],
        ];
        for args in &cases {
            let a = run(in_cgroup("tracectl", args))?;
            let b = run(in_cgroup("perf", args))?;
            let (ta, tb) = (text(&a.stderr), text(&b.stderr));
            if words_masked(&ta) != words_masked(&tb) || a.status.code() != b.status.code() {
                return Err(format!("{args:?}\n--- tracectl\n{ta}--- perf\n{tb}"));
            }
        }
        // Exact: the cgroup's count is the workload's, the whole system's at least that.
        let o = run(in_cgroup("tracectl", &cases[0]))?;
        let t = text(&o.stderr);
        let want = format!("{n},,{gp},{},", names[0]);
        let rest = t
            .lines()
            .nth(1)
            .and_then(|l| l.split(',').next()?.parse::<u64>().ok());
        if !t.starts_with(&want) || !rest.is_some_and(|v| v >= n) {
            return Err(format!("want {want:?} then at least {n}:\n{t}"));
        }
        Ok(())
    })();
    for n in &names {
        let _ = std::fs::remove_dir(root.join(n));
    }
    result
}

fn pmu_statistics_as_perf() -> Result<(), String> {
    const T: &str = "perf_stat_pmu_statistics_as_perf_live";
    if !live_or_skip(T)? {
        return Ok(());
    }
    if Path::new("/sys/bus/event_source/devices/cpu").exists() {
        eprintln!("skipped {T}: this machine has a cpu PMU");
        return Ok(());
    }
    let cases: &[&[&str]] = &[
        &["-M", "nosuch", "-e", "syscalls:sys_enter_getpid"],
        &["-T"],
        &["-T", "-a", "-A"],
        &["-n", "-T"],
        &["--topdown"],
        &["--topdown", "-a", "-A"],
        &["--topdown", "-a", "--per-core"],
        &["--topdown", "-C", "0"],
        &["--topdown", "-a", "--td-level", "2"],
        &["--td-level", "2", "-e", "task-clock"],
    ];
    for args in cases {
        compare(args, 100, words_masked)?;
    }
    Ok(())
}

/// Events named through a PMU's sysfs directory (`PMU/TERMS/`): the software PMU's
/// `config=` (task-clock's metric follows the event, not its spelling), and where the
/// machine has one, the msr PMU's `tsc` event, its format term `event=`, `name=`,
/// modifiers it refuses, groups, and CSV. perf opens msr's events again without
/// exclude_guest, which the msr PMU refuses. Terms and PMUs that do not exist are
/// refused as perf refuses them (exit 129).
fn pmu_terms_as_perf() -> Result<(), String> {
    const T: &str = "perf_stat_pmu_terms_as_perf_live";
    if !live_or_skip(T)? {
        return Ok(());
    }
    // Refused before the command runs, with perf's exit status and the reason.
    for (event, says) in [
        ("software/bogus/", "unknown term 'bogus' for pmu 'software'"),
        ("nosuchpmu/config=0/", "cannot find PMU 'nosuchpmu'"),
        ("software/config=1", "the closing '/' is missing"),
        ("software/config=zz/", "'zz' is not a number"),
    ] {
        let (ours, perf) = (
            run(on_workload("tracectl", &["-e", event], 1))?,
            run(on_workload("perf", &["-e", event], 1))?,
        );
        let err = text(&ours.stderr);
        if ours.status.code() != perf.status.code() || !err.contains(says) {
            return Err(format!(
                "-e {event}: exit {:?} (perf {:?}): {err}",
                ours.status.code(),
                perf.status.code()
            ));
        }
    }
    let mut cases: Vec<&[&str]> = vec![
        &["-e", "software/config=1/"],
        &["-e", "software/config=0x1,name=clock/", "-e", "cs"],
    ];
    if Path::new("/sys/bus/event_source/devices/msr/events/tsc").exists() {
        cases.extend([
            &["-e", "msr/tsc/"][..],
            &["-e", "msr/event=0x0/,task-clock"],
            &["-e", "msr/tsc,name=tsc_count/"],
            &["-e", "msr/tsc/u"],
            &["-e", "{msr/tsc/,cs}"],
            &["-x,", "-e", "msr/tsc/"],
        ]);
    } else {
        eprintln!("{T}: no msr PMU here; its cases left out");
    }
    for args in cases {
        compare(args, 100, words_masked)?;
    }
    Ok(())
}

fn bad_options_fail_first() -> Result<(), String> {
    const T: &str = "perf_stat_more_bad_options_fail_before_running";
    if !live_or_skip(T)? {
        return Ok(());
    }
    let marker = std::env::temp_dir().join(format!("tracectl-stat-more-{}", std::process::id()));
    for (args, says) in [
        (&["--metric-only", "-r", "2"][..], "not supported with -r"),
        (
            &["--metric-only", "-p", "1", "--per-thread"],
            "not supported with --per-thread",
        ),
        (&["--control", "foo"], "give fd:CTL-FD"),
        (&["--control", "fifo:"], "give fd:CTL-FD"),
        (&["--control", "fd:abc"], "give fd:CTL-FD"),
        (&["--control", "fd:99"], "descriptor 99 is not open"),
        (
            &["--control", "fifo:/nonexistent/ctl"],
            "cannot open '/nonexistent/ctl'",
        ),
        (
            &["-e", "cs", "-G", "x"],
            "only available in system-wide mode",
        ),
        (
            &["-a", "-G", "x", "-e", "cs"],
            "must define events before cgroups",
        ),
        (
            &["-a", "-e", "cs", "-G", "tracectl-no-such-cgroup"],
            "no access to cgroup",
        ),
        (
            &["-a", "-e", "cs", "-G", "/,/"],
            "more cgroups than the 1 events",
        ),
    ] {
        let mut c = Command::new(TRACECTL);
        c.args(["perf", "stat"])
            .args(args)
            .args(["--", "touch"])
            .arg(&marker);
        let o = run(c)?;
        let ran = marker.exists();
        let _ = std::fs::remove_file(&marker);
        let err = text(&o.stderr);
        if o.status.success() || ran || !err.contains(says) {
            return Err(format!("{args:?}: exit {:?}, ran {ran}: {err}", o.status));
        }
    }
    Ok(())
}

/// The count of `event` in a table, and the footer's seconds of `what` (user or sys)
/// as nanoseconds.
fn table_count(t: &str, event: &str) -> Option<u64> {
    t.lines().find_map(|l| {
        let w: Vec<&str> = l.split_whitespace().collect();
        (w.len() >= 3 && w[1] == "ns" && w[2] == event)
            .then(|| w[0].parse().ok())
            .flatten()
    })
}

fn footer_ns(t: &str, what: &str) -> Option<u64> {
    t.lines().find_map(|l| {
        let rest = l.trim().strip_suffix(&format!(" seconds {what}"))?;
        let (s, frac) = rest.split_once('.')?;
        Some(s.parse::<u64>().ok()? * 1_000_000_000 + frac.parse::<u64>().ok()?)
    })
}

/// perf's tool events: counted by the tool (wall time, and the command's rusage once
/// it has ended), shown in ns, on the first CPU alone, not counted in intervals (user
/// and system time), and perf's quirks in groups: the members of a group a tool event
/// leads are not counted, and a tool event under another leader reads as 0.
fn tool_events_as_perf() -> Result<(), String> {
    if !live_or_skip("perf_stat_tool_events_as_perf_live")? {
        return Ok(());
    }
    let cases: &[&[&str]] = &[
        &["-e", "duration_time,cs,task-clock"],
        &["-x,", "-e", "duration_time,cs,task-clock"],
        &["-j", "-e", "task-clock,duration_time"],
        &["-a", "-A", "-e", "duration_time,cs"],
        &["-a", "-A", "-x,", "-e", "cs,duration_time"],
        &["-a", "--per-core", "-e", "duration_time,task-clock"],
        &["-a", "--per-socket", "-e", "duration_time"],
        &["-e", "{duration_time,cs}"],
        &["-e", "{duration_time,task-clock,cs}"],
        &["-x,", "-e", "{duration_time,task-clock,cs},page-faults"],
        &["-x,", "-e", "{cs,duration_time}"],
        &["-r", "2", "-x,", "-e", "duration_time,task-clock"],
    ];
    for args in cases {
        compare(args, 100_000, words_masked)?;
    }
    // The command's CPU times are not taken in intervals (nor in the summary after
    // them): user_time and system_time are not counted there.
    let intervals = |tool: &str| {
        let args = [
            "-I",
            "200",
            "--interval-count",
            "2",
            "-e",
            "duration_time,user_time,system_time",
        ];
        let mut c = on_workload(tool, &args, 3_000_000);
        c.env("TRACECTL_GETPID_AFTER_MS", "300");
        run(c)
    };
    let (a, b) = (intervals("tracectl")?, intervals("perf")?);
    let (ta, tb) = (text(&a.stderr), text(&b.stderr));
    if words_masked(&ta) != words_masked(&tb) {
        return Err(format!(
            "-I with tool events\n--- tracectl\n{ta}--- perf\n{tb}"
        ));
    }
    // user_time and system_time are the command's rusage, which the footer prints
    // too: the same nanoseconds in both places (as in perf's own output).
    for tool in ["tracectl", "perf"] {
        let o = run(on_workload(
            tool,
            &["-e", "duration_time,user_time,system_time"],
            2_000_000,
        ))?;
        let t = text(&o.stderr);
        let duration = table_count(&t, "duration_time");
        let elapsed = footer_ns(&t, "time elapsed");
        let (user, sys) = (footer_ns(&t, "user"), footer_ns(&t, "sys"));
        let ok = duration.is_some_and(|d| d > 0)
            && elapsed.is_some()
            && user.is_some()
            && sys.is_some_and(|s| s > 0)
            && table_count(&t, "system_time") == sys
            && (user == Some(0) || table_count(&t, "user_time") == user);
        if !ok {
            return Err(format!("{tool}: tool events and the footer disagree\n{t}"));
        }
        if tool == "tracectl" && duration != elapsed {
            return Err(format!("duration_time is not the time elapsed\n{t}"));
        }
    }
    Ok(())
}
