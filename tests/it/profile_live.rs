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
    // -S: only the events given, to stdout; -G: irqs per CPU.
    let out = tracectl(&[
        "profile",
        "-q",
        "-S",
        "-G",
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
        "seq 3000 | cat >/dev/null; sleep 0.01",
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
    let mut want = Command::new("trace-cmd")
        .args(["report", "--profile", "-G", "-i"])
        .arg(&dat)
        .output()
        .unwrap()
        .stdout;
    let head = want.iter().position(|&b| b == b'\n').unwrap() + 1;
    want.drain(..head);
    if let Some(d) = difference(&want, &out.stdout, true) {
        panic!("profile -S -G: {d}");
    }
}

/// What cannot apply is refused before anything is recorded or written.
#[test]
fn profile_refuses_hooks_instances_and_nothing_to_record() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("p.txt");
    let cases: [(&[&str], &str); 5] = [
        (&["-H", "irq_handler_entry,irq/irq_handler_exit,irq"], "-H"),
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
