//! `record -T`, `--func-stack`, `-d`/`-D`, `-r`, `--user` and `--ts-offset`, as
//! trace-cmd-record(1) documents them, on the live tracefs; trace-cmd 3.1.6 reads the files.

use std::path::Path;
use std::process::{Command, Output};

use crate::support::live::{self, TRACEFS};
use crate::support::tracecmd;

fn tracectl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .args(["--tracefs", TRACEFS])
        .args(args)
        .output()
        .unwrap()
}

fn record(out: &Path, args: &[&str]) -> Output {
    let mut a = vec!["record", "-q", "-o", out.to_str().unwrap()];
    a.extend_from_slice(args);
    tracectl(&a)
}

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn trace_cmd_report(file: &Path) -> String {
    let o = Command::new("trace-cmd")
        .arg("report")
        .arg(file)
        .output()
        .unwrap();
    ok(&o)
}

/// What kind of line each report line is: a stack-trace header, a stack entry with a
/// symbol and address, or an ordinary event line.
fn kinds(report: &str) -> std::collections::BTreeSet<&'static str> {
    report
        .lines()
        .skip(1)
        .map(|l| {
            if l.ends_with("kernel_stack:         <stack trace >") {
                "stack header"
            } else if l.starts_with("=> ") && l.ends_with(')') && l.contains(" (ffff") {
                "stack entry"
            } else if l.contains("sched_process_exec:") {
                "event"
            } else {
                "other"
            }
        })
        .collect()
}

#[test]
fn stacktrace_records_kernel_stacks_that_trace_cmd_prints_live() {
    if !live::ready() {
        return;
    }
    let Some(tc) = tracecmd::recorder() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ours = dir.path().join("ours.dat");
    ok(&record(
        &ours,
        &["-T", "-e", "sched:sched_process_exec", "true"],
    ));
    let theirs = dir.path().join("theirs.dat");
    // trace-cmd's own recording of so short a command now and then holds no record (its
    // exec came before trace-cmd enabled the event): it is recorded again then.
    let mut theirs_tc = String::new();
    for _ in 0..5 {
        let o = Command::new(&tc)
            .args(["record", "-q", "-T", "-e", "sched:sched_process_exec", "-o"])
            .arg(&theirs)
            .arg("true")
            .output()
            .unwrap();
        ok(&o);
        theirs_tc = trace_cmd_report(&theirs);
        if !kinds(&theirs_tc).is_empty() {
            break;
        }
    }
    let ours_tc = trace_cmd_report(&ours);
    let k = kinds(&ours_tc);
    assert!(
        k.contains("stack header") && k.contains("stack entry"),
        "our -T file has stack traces:\n{ours_tc}"
    );
    assert_eq!(
        k,
        kinds(&theirs_tc),
        "the same kinds of lines as trace-cmd's own -T recording\nours:\n{ours_tc}\ntheirs:\n{theirs_tc}"
    );
    let o = tracectl(&["report", ours.to_str().unwrap()]);
    assert_eq!(
        ok(&o),
        ours_tc,
        "tracectl report prints what trace-cmd report prints"
    );
    // The top level's option is untouched (the recording used a private instance).
    assert_eq!(
        std::fs::read_to_string(Path::new(TRACEFS).join("options/stacktrace"))
            .unwrap()
            .trim(),
        "0"
    );
}

#[test]
fn func_stack_needs_the_function_tracer_live() {
    if !live::ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("f.dat");
    let o = record(&out, &["--func-stack", "-e", "sched:sched_switch", "true"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("--func-stack") && err.contains("-p function"),
        "{err}"
    );
    assert!(!out.exists(), "a refused recording writes no file");
}

#[test]
fn disable_function_trace_clears_the_option_while_recording_live() {
    if !live::ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("d.dat");
    // The command is tracectl's child: $PPID names the private instance.
    let show = "cat /sys/kernel/tracing/instances/tracectl-record-$PPID/options/function-trace";
    let o = record(&out, &["-d", "-e", "sched:sched_switch", "sh", "-c", show]);
    assert_eq!(ok(&o).trim(), "0", "-d clears options/function-trace");
    let o = record(&out, &["-e", "sched:sched_switch", "sh", "-c", show]);
    assert_eq!(ok(&o).trim(), "1", "without -d it stays set");

    // -D clears /proc/sys/kernel/ftrace_enabled too, and puts it back.
    let knob = "/proc/sys/kernel/ftrace_enabled";
    let before = std::fs::read_to_string(knob).unwrap();
    if before.trim() == "0" {
        crate::support::skips::skip("ftrace_enabled is 0 already: -D changes nothing here");
        return;
    }
    let both = format!("{show}; cat {knob}");
    let o = record(&out, &["-D", "-e", "sched:sched_switch", "sh", "-c", &both]);
    let seen = ok(&o);
    let seen: Vec<&str> = seen.split_whitespace().collect();
    assert_eq!(seen[0], "0", "-D clears options/function-trace");
    let err = String::from_utf8_lossy(&o.stderr);
    if err.contains("ftrace_enabled") {
        // This kernel refuses the write (function tracing is locked down): a warning.
        assert_eq!(seen[1], before.trim(), "{err}");
    } else {
        assert_eq!(seen[1], "0", "-D clears ftrace_enabled");
    }
    assert_eq!(std::fs::read_to_string(knob).unwrap(), before, "restored");
}

#[test]
fn rt_priority_makes_the_capture_threads_fifo_live() {
    if !live::ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.dat");
    // Fields 40 and 41 of a thread's stat: rt_priority and policy (1 is SCHED_FIFO).
    let show = "for t in /proc/$PPID/task/*; do cat $t/stat; echo; done";
    let stats = ok(&record(
        &out,
        &["-r", "7", "-e", "sched:sched_switch", "sh", "-c", show],
    ));
    let fifo = stats
        .lines()
        .filter_map(|l| l.rsplit_once(") "))
        .map(|(_, rest)| rest.split(' ').collect::<Vec<_>>())
        .filter(|f| f.len() > 38 && f[37] == "7" && f[38] == "1")
        .count();
    let cpus = std::fs::read_dir(Path::new(TRACEFS).join("per_cpu"))
        .unwrap()
        .count();
    assert_eq!(fifo, cpus, "one FIFO 7 capture thread per CPU:\n{stats}");
    let o = record(&out, &["-r", "0", "-e", "sched:sched_switch", "true"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("-r"));
}

#[test]
fn user_runs_the_command_as_that_user_live() {
    if !live::ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("u.dat");
    let o = record(
        &out,
        &[
            "--user",
            "nobody",
            "-e",
            "sched:sched_switch",
            "sh",
            "-c",
            "id -u; id -g; echo $USER",
        ],
    );
    let nobody = nix::unistd::User::from_name("nobody").unwrap().unwrap();
    let want = format!("{}\n{}\nnobody\n", nobody.uid, nobody.gid);
    assert_eq!(ok(&o), want);
    assert!(out.exists());
    let bad = dir.path().join("bad.dat");
    let o = record(
        &bad,
        &[
            "--user",
            "no-such-user-x",
            "-e",
            "sched:sched_switch",
            "true",
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("--user no-such-user-x") && err.contains("no such user"),
        "{err}"
    );
    assert!(!bad.exists());
}

#[test]
fn ts_offset_is_stored_and_trace_cmd_applies_it_live() {
    if !live::ready() {
        return;
    }
    if tracecmd::recorder().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.dat");
    // 10^15 ns: a million seconds, far beyond this machine's uptime (the local clock).
    let offset = 1_000_000_000_000_000u64;
    ok(&record(
        &out,
        &[
            "--ts-offset",
            &offset.to_string(),
            "-e",
            "sched:sched_process_exec",
            "true",
        ],
    ));
    let uptime: f64 = std::fs::read_to_string("/proc/uptime")
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let report = trace_cmd_report(&out);
    let first = report
        .lines()
        .find(|l| l.contains("sched_process_exec:"))
        .unwrap_or_else(|| panic!("an exec event:\n{report}"));
    let ts: f64 = first
        .split(": ")
        .next()
        .and_then(|h| h.split_whitespace().last())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("a timestamp in {first}"));
    assert!(
        ts > 1_000_000.0 && ts < 1_000_000.0 + uptime + 1.0,
        "trace-cmd adds the offset: {first} (uptime {uptime})"
    );
    let o = tracectl(&["report", out.to_str().unwrap()]);
    assert_eq!(
        ok(&o),
        report,
        "tracectl report applies it as trace-cmd report does"
    );
    let o = record(
        &out,
        &[
            "--ts-offset",
            "5",
            "--date",
            "-e",
            "sched:sched_switch",
            "true",
        ],
    );
    assert!(!o.status.success(), "--ts-offset with --date is refused");
}
