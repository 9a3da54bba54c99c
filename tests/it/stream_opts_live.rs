//! `stream` with record's options (`-f`, `-p`, `-P`, `-c`, a command) and trace-cmd
//! stream's line layout, on the live tracefs; a replay refuses the live-only options.

use std::process::{Command, Output};

use crate::support::live::{self, TRACEFS};
use crate::support::tracecmd;

const TREE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tracefs-fixtures/linux-6.18-sched-irq"
);

fn stream(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .args(["--tracefs", TRACEFS, "stream"])
        .args(args)
        .output()
        .unwrap()
}

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A line with its digits made 0: pids and times differ run to run, their widths do not.
fn shape(l: &str) -> String {
    l.chars()
        .map(|c| if c.is_ascii_digit() { '0' } else { c })
        .collect()
}

/// The exec line of /usr/bin/true, as a shape, from the pid on: the comm column (16
/// wide) differs, as trace-cmd stream starts with no saved comms (`<...>`) and a report
/// has them.
fn true_exec(out: &str) -> Option<String> {
    out.lines()
        .find(|l| l.contains("sched_process_exec:") && l.contains("filename=/usr/bin/true "))
        .map(|l| shape(l.get(16..).unwrap_or("")))
}

#[test]
fn stream_filter_and_command_in_trace_cmd_layout_live() {
    if !live::ready() {
        return;
    }
    let Some(_) = tracecmd::recorder() else {
        return;
    };
    // -f binds to the -e before it: only the exec of `true` passes, every exit shows.
    let cmd = ["sh", "-c", "ls / >/dev/null; /usr/bin/true; sleep 0.1"];
    let mut args = vec![
        "-e",
        "sched:sched_process_exec",
        "-f",
        "filename ~ \"*bin/true\"",
        "-e",
        "sched:sched_process_exit",
    ];
    args.extend(cmd);
    let ours = ok(&stream(&args));
    let execs: Vec<&str> = ours
        .lines()
        .filter(|l| l.contains("sched_process_exec:"))
        .collect();
    assert!(
        !execs.is_empty() && execs.iter().all(|l| l.contains("filename=/usr/bin/true ")),
        "-f keeps only the exec of true:\n{ours}"
    );
    assert!(
        ours.lines()
            .any(|l| l.contains("sched_process_exit:") && l.contains("comm=ls ")),
        "the second -e has no filter:\n{ours}"
    );
    // trace-cmd stream prints `trace-cmd report`'s lines. (trace-cmd stream itself works
    // at the top level, shared with everything else on the machine, and leaves tracing_on
    // at 0, so the oracle is trace-cmd report on a recording of the same exec.)
    let dir = tempfile::tempdir().unwrap();
    let dat = dir.path().join("t.dat");
    let rec = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .args(["--tracefs", TRACEFS, "record", "-q", "-o"])
        .arg(&dat)
        .args(&args)
        .output()
        .unwrap();
    ok(&rec);
    let report = Command::new("trace-cmd")
        .arg("report")
        .arg(&dat)
        .output()
        .unwrap();
    let theirs = ok(&report);
    let want = true_exec(&theirs).unwrap_or_else(|| panic!("trace-cmd report:\n{theirs}"));
    assert_eq!(
        true_exec(&ours),
        Some(want),
        "ours:\n{ours}\ntheirs:\n{theirs}"
    );
    // The kernel's lines stay available.
    let kernel = ok(&stream(&[
        "--style",
        "kernel",
        "-e",
        "sched:sched_process_exec",
        "true",
    ]));
    assert!(
        kernel
            .lines()
            .any(|l| l.contains(": sched_process_exec: filename=")),
        "{kernel}"
    );
}

#[test]
fn stream_pids_and_children_live() {
    if !live::ready() {
        return;
    }
    let mut child = Command::new("sh")
        .args(["-c", "sleep 0.4; ls / >/dev/null; sleep 0.2"])
        .spawn()
        .unwrap();
    let pid = child.id().to_string();
    let o = stream(&[
        "-P",
        &pid,
        "-c",
        "-e",
        "sched:sched_process_exec",
        "--duration-ms",
        "1200",
    ]);
    let _ = child.wait();
    let out = ok(&o);
    let execs: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("sched_process_exec:"))
        .collect();
    assert!(
        execs.iter().any(|l| l.contains("filename=/usr/bin/ls ")),
        "-c follows the children of -P {pid}:\n{out}"
    );
    assert!(
        execs
            .iter()
            .all(|l| l.contains("/usr/bin/ls ") || l.contains("/usr/bin/sleep ")),
        "only {pid} and its children:\n{out}"
    );
}

#[test]
fn stream_refuses_what_cannot_work_live() {
    if !live::ready() {
        return;
    }
    // A filter needs the event before it.
    let o = stream(&["-f", "pid == 1", "-e", "sched:sched_switch", "true"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("-f"));
    // A recorded tree cannot take a tracer, filters or a command.
    let o = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .args(["--tracefs", TREE, "stream", "-e", "sched", "-f", "pid == 1"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("live tracefs"), "{err}");
    let o = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .args(["--tracefs", TREE, "stream", "--style", "trace-cmd"])
        .output()
        .unwrap();
    assert!(!o.status.success());
}

/// The kernel stack after the exec of /usr/bin/true, as a shape from the pid on: the
/// kernel_stack line and its `=>` lines.
fn true_exec_stack(out: &str) -> Option<Vec<String>> {
    let lines: Vec<&str> = out.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("sched_process_exec:") && l.contains("filename=/usr/bin/true "))?;
    let mut stack = Vec::new();
    for l in &lines[at + 1..] {
        if stack.is_empty() && !l.contains("kernel_stack:") {
            return None;
        }
        if !stack.is_empty() && !l.starts_with("=>") {
            break;
        }
        stack.push(shape(
            l.get(if stack.is_empty() { 16 } else { 0 }..).unwrap_or(""),
        ));
    }
    Some(stack)
}

/// stream takes record's buffer options (here -T and -C) and writes them to its private
/// instance as record does: the stack traces -T adds are shown, in trace-cmd report's
/// lines for a recording with the same options.
#[test]
fn stream_takes_records_buffer_options_live() {
    if !live::ready() {
        return;
    }
    let Some(_) = tracecmd::recorder() else {
        return;
    };
    let args = [
        "-e",
        "sched:sched_process_exec",
        "-T",
        "-C",
        "global",
        "-F",
        "/usr/bin/true",
    ];
    // stream has no -F: the same options, and the command.
    let ours = ok(&stream(&[
        "-e",
        "sched:sched_process_exec",
        "-T",
        "-C",
        "global",
        "/usr/bin/true",
    ]));
    let dir = tempfile::tempdir().unwrap();
    let dat = dir.path().join("t.dat");
    let rec = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .args(["--tracefs", TRACEFS, "record", "-q", "-o"])
        .arg(&dat)
        .args(args)
        .output()
        .unwrap();
    ok(&rec);
    let theirs = ok(&Command::new("trace-cmd")
        .arg("report")
        .arg(&dat)
        .output()
        .unwrap());
    let want = true_exec_stack(&theirs).unwrap_or_else(|| panic!("trace-cmd report:\n{theirs}"));
    assert!(want.len() > 1, "{theirs}");
    assert_eq!(
        true_exec_stack(&ours),
        Some(want),
        "ours:\n{ours}\ntheirs:\n{theirs}"
    );
}
