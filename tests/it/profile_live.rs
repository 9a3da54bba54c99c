//! `tracectl profile`: it records trace-cmd profile's events (switches and wakeups with
//! stacktrace triggers, irqs, softirqs, syscalls, page faults, exec) while a command runs
//! and prints the profile as `trace-cmd profile` does: `trace-cmd report --profile` of
//! the recording (kept with `--dat`) without report's `cpus=N` line.

use std::path::Path;
use std::process::{Command, Output};

use crate::report_wakeup_profile::difference;
use crate::support::live;

fn tracectl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .args(args)
        .output()
        .unwrap()
}

fn trace_cmd_profile_of(dat: &Path) -> Vec<u8> {
    let out = Command::new("trace-cmd")
        .args(["report", "--profile", "-i"])
        .arg(dat)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let (head, rest) = text.split_once('\n').unwrap();
    assert!(head.starts_with("cpus="), "{head}");
    rest.as_bytes().to_vec()
}

#[test]
fn profile_prints_trace_cmds_profile_of_what_it_recorded() {
    if !live::ready() {
        return;
    }
    if Command::new("trace-cmd").arg("--help").output().is_err() {
        crate::support::skips::skip("trace-cmd is not installed (scripts/setup.sh installs it)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (dat, text) = (dir.path().join("p.dat"), dir.path().join("p.txt"));
    let work = "for i in 1 2; do (seq 3000 | cat | wc -l >/dev/null) & done; \
                chrt -f 10 sh -c 'sleep 0.002; sleep 0.001'; wait";
    let out = tracectl(&[
        "profile",
        "-q",
        "--dat",
        dat.to_str().unwrap(),
        "-o",
        text.to_str().unwrap(),
        "sh",
        "-c",
        work,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty(), "-o: nothing on stdout");
    let got = std::fs::read(&text).unwrap();
    let want = trace_cmd_profile_of(&dat);
    let shown = String::from_utf8_lossy(&want);
    // What the profile's own events give: timed switches (with their stack trees),
    // wakeups, syscalls and softirqs, and the command's tasks.
    for part in [
        "  Event: sched_switch:",
        "  Event: sched_wakeup:",
        "  Event: sys_enter:",
        "  Event: softirq_entry:",
        "          + ",
        "\ntask: ",
    ] {
        assert!(shown.contains(part), "no {part:?} in trace-cmd's profile");
    }
    if let Some(d) = difference(&want, &got, true) {
        let keep = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/profile-mismatch");
        let _ = std::fs::create_dir_all(&keep);
        let _ = std::fs::copy(&dat, keep.join("p.dat"));
        panic!(
            "profile of {} (kept in {}): {d}",
            dat.display(),
            keep.display()
        );
    }
    // -S: only the events given (and the hook's), to stdout; -G: irqs per CPU; -H: a
    // pair of the user's with a stack at its start, stored in the recording (trace-cmd
    // reads it from there and prints it first, as we do).
    let hook = "sched:sched_process_fork,child_pid,child_pid/sched:sched_process_exit,pid,s";
    let out = tracectl(&[
        "profile",
        "-q",
        "-S",
        "-G",
        "-H",
        hook,
        "-e",
        "irq",
        "-e",
        "sched:sched_switch",
        "-e",
        "sched:sched_wakeup",
        "--dat",
        dat.to_str().unwrap(),
        "sh",
        "-c",
        "for i in 1 2 3; do (seq 3000 | cat >/dev/null) & done; wait; sleep 0.01",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = Command::new("trace-cmd")
        .args(["report", "-E", "-i"])
        .arg(&dat)
        .output()
        .unwrap();
    let events = String::from_utf8_lossy(&events.stdout);
    assert!(
        !events.contains("raw_syscalls"),
        "-S recorded the profile's own events"
    );
    let want = Command::new("trace-cmd")
        .args(["report", "--profile", "-G", "-i"])
        .arg(&dat)
        .output()
        .unwrap()
        .stdout;
    let want = String::from_utf8(want).unwrap();
    // trace-cmd profile prints no cpus= line; the stored hook's line comes first.
    let want: Vec<&str> = want
        .split('\n')
        .filter(|l| !l.starts_with("cpus="))
        .collect();
    let want = want.join("\n");
    assert!(want.starts_with("start sched:sched_process_fork:child_pid (child_pid) end"));
    assert!(
        want.contains("  Event: sched_process_fork:"),
        "no timed fork: {want}"
    );
    assert!(
        want.contains("+ trace_event_raw_event_sched_process_fork"),
        "no stack under the forks (the hook's s flag): {want}"
    );
    if let Some(d) = difference(want.as_bytes(), &out.stdout, true) {
        panic!("profile -S -G -H: {d}");
    }
}

/// What cannot apply is refused before anything is recorded or written.
#[test]
fn profile_refuses_bad_hooks_instances_and_nothing_to_record() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("p.txt");
    let cases: [(&[&str], &str); 6] = [
        (
            &["-H", "irq_handler_entry,irq/irq_handler_exit", "true"],
            "invalid hook",
        ),
        (&["-H", "a,x/b", "true"], "no end match field"),
        (&["-B", "mine", "-e", "sched"], "-B mine"),
        (&["-S", "true"], "nothing to profile"),
        (&["-F"], "-F needs a command"),
        (&["-o", "/nonexistent/dir/p.txt", "true"], "does not exist"),
    ];
    for (args, says) in cases {
        let mut a = vec!["profile", "--dat", text.to_str().unwrap()];
        a.extend_from_slice(args);
        let out = tracectl(&a);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// `record -H` stores the hooks (the last given first, as trace-cmd): trace-cmd prints
/// them on opening the file, and both profiles time them.
#[test]
fn record_h_stores_hooks_that_both_reports_read() {
    if !live::ready() {
        return;
    }
    if Command::new("trace-cmd").arg("--help").output().is_err() {
        crate::support::skips::skip("trace-cmd is not installed (scripts/setup.sh installs it)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let dat = dir.path().join("h.dat");
    let out = tracectl(&[
        "record",
        "-q",
        "-e",
        "sched:sched_switch",
        "-e",
        "sched:sched_wakeup",
        "-H",
        "sched:sched_process_fork,child_pid,child_pid/sched:sched_process_exit,pid",
        "-H",
        "sched_waking,pid/sched_stat_runtime,pid,g",
        "-o",
        dat.to_str().unwrap(),
        "sh",
        "-c",
        "for i in 1 2; do (seq 100 | cat >/dev/null) & done; wait",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want = Command::new("trace-cmd")
        .args(["report", "--profile", "-i"])
        .arg(&dat)
        .output()
        .unwrap()
        .stdout;
    let text = String::from_utf8_lossy(&want);
    assert!(
        text.starts_with(
            "start (null):sched_waking:pid ((null)) end (null):sched_stat_runtime:pid (g)\n\
             start sched:sched_process_fork:child_pid (child_pid) end"
        ),
        "{text}"
    );
    assert!(text.contains("Global Events\n") && text.contains("  Event: sched_process_fork:"));
    let got = tracectl(&["report", "--profile", "-i", dat.to_str().unwrap()]);
    assert!(got.status.success());
    if let Some(d) = difference(&want, &got.stdout, true) {
        panic!("report --profile of a file with hooks: {d}");
    }
}
