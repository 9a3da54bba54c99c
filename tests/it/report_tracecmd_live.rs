//! `tracectl report` against `trace-cmd report` on files trace-cmd records during the test:
//! the whole output, line by line, for v7 + zstd files and their v6 uncompressed copies.
//!
//! Every line must be identical; a comparison that fails prints its match rate and the
//! first differing lines.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::tracecmd::recorder;

fn output(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("report output is UTF-8")
}

fn record(dir: &Path, name: &str, events: &[&str], workload: &str) -> PathBuf {
    let file = dir.join(name);
    let mut cmd = Command::new(recorder().expect("checked by the caller"));
    cmd.arg("record");
    for e in events {
        cmd.args(["-e", e]);
    }
    cmd.arg("-o").arg(&file).args(["--", "sh", "-c", workload]);
    output(&mut cmd);
    file
}

fn to_v6(file: &Path) -> PathBuf {
    let v6 = file.with_extension("v6.dat");
    output(
        Command::new("trace-cmd")
            .args([
                "convert",
                "--file-version",
                "6",
                "--compression",
                "none",
                "-i",
            ])
            .arg(file)
            .arg("-o")
            .arg(&v6),
    );
    v6
}

/// Run both reports with `args`; returns (matching lines, total lines).
fn compare(label: &str, args: &[&str]) -> (usize, usize) {
    let theirs = output(Command::new("trace-cmd").arg("report").args(args));
    let ours = output(
        Command::new(env!("CARGO_BIN_EXE_tracectl"))
            .arg("report")
            .args(args),
    );
    let (t, o): (Vec<&str>, Vec<&str>) = (theirs.lines().collect(), ours.lines().collect());
    let total = t.len().max(o.len());
    let mut same = 0;
    let mut shown = 0;
    for i in 0..total {
        let (a, b) = (
            t.get(i).copied().unwrap_or("<none>"),
            o.get(i).copied().unwrap_or("<none>"),
        );
        if a == b {
            same += 1;
        } else if shown < 15 {
            shown += 1;
            eprintln!(
                "{label}: line {}:\n  trace-cmd: {a}\n  tracectl:  {b}",
                i + 1
            );
        }
    }
    eprintln!(
        "{label}: {same}/{total} lines identical ({:.4}%)",
        100.0 * same as f64 / total.max(1) as f64
    );
    (same, total)
}

/// Every line identical; returns the line count.
fn require_all(label: &str, args: &[&str]) -> usize {
    let (same, total) = compare(label, args);
    assert!(total > 2, "{label}: only {total} lines");
    if same != total {
        // The recording is gone with the test's temporary directory: keep it to look at.
        let keep = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/report-mismatch");
        let _ = std::fs::create_dir_all(&keep);
        let file = args
            .iter()
            .position(|a| *a == "-i")
            .map(|i| Path::new(args[i + 1]));
        if let Some(f) = file {
            let _ = std::fs::copy(f, keep.join(f.file_name().unwrap()));
        }
        panic!(
            "{label}: output differs from trace-cmd report (recording kept in {})",
            keep.display()
        );
    }
    total
}

#[test]
fn sched_irq_timer_identical_to_trace_cmd() {
    if recorder().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let work = "ls -R /usr/share/doc >/dev/null; sleep 0.05; cat /proc/self/status >/dev/null";
    let v7 = record(dir.path(), "sit.dat", &["sched", "irq", "timer"], work);
    let v6 = to_v6(&v7);
    for (kind, f) in [("v7+zstd", &v7), ("v6", &v6)] {
        let f = f.to_str().unwrap();
        require_all(kind, &["-i", f]);
        require_all(&format!("{kind} -t"), &["-t", "-i", f]);
        require_all(&format!("{kind} -l"), &["-l", "-i", f]);
    }
    let f = v7.to_str().unwrap();
    require_all("--cpu 0", &["--cpu", "0", "-i", f]);
    require_all(
        "-F",
        &[
            "-F",
            "sched_switch:prev_state==0 || next_pid==0",
            "-F",
            "irq/.*",
            "-i",
            f,
        ],
    );
    require_all(
        "-v -F",
        &[
            "-v",
            "-F",
            "sched/.*",
            "-F",
            "timer:COMM==\"<idle>\"",
            "-i",
            f,
        ],
    );
    require_all(
        "--first-event --last-event",
        &["--first-event", "--last-event", "-i", f],
    );
    require_all("--stat", &["--stat", "-i", f]);
}

#[test]
fn mixed_recording_matches_trace_cmd() {
    if recorder().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let scratch = dir.path().join("scratch");
    let work = format!(
        "ls -R /usr/share/doc >/dev/null; dd if=/dev/zero of={0} bs=1M count=8 conv=fsync 2>/dev/null; \
         cat {0} >/dev/null; rm {0}; kill -USR1 $$ 2>/dev/null; true",
        scratch.display()
    );
    let events = [
        "sched",
        "irq",
        "timer",
        "kmem",
        "workqueue",
        "signal",
        "syscalls",
        "block",
        "ext4",
        "filemap",
        "net",
        "skb",
        "rcu",
        "task",
        "sock",
        "tcp",
        "udp",
        "napi",
    ];
    let v7 = record(dir.path(), "mix.dat", &events, &work);
    let v6 = to_v6(&v7);
    let mut total = 0;
    for (kind, f) in [("mixed v7+zstd", &v7), ("mixed v6", &v6)] {
        total += require_all(kind, &["-i", f.to_str().unwrap()]);
    }
    // Raw mode: every field as `name=value`, with libtraceevent's way of borrowing the
    // print fmt's conversion for a field (and of giving up after the last one).
    require_all("mixed -R", &["-R", "-i", v7.to_str().unwrap()]);
    assert!(total > 1000, "only {total} lines recorded");
}

/// Record with trace-cmd; records again (up to three times) when the file holds no
/// record: another recording of the top buffer on this machine that ends meanwhile turns
/// tracing off.
fn record_with(dir: &Path, name: &str, args: &[&str], workload: &str) -> PathBuf {
    let file = dir.join(name);
    for _ in 0..3 {
        output(
            Command::new(recorder().expect("checked by the caller"))
                .arg("record")
                .args(args)
                .arg("-o")
                .arg(&file)
                .args(["--", "sh", "-c", workload]),
        );
        let text = output(Command::new("trace-cmd").arg("report").arg("-i").arg(&file));
        if text.lines().count() > 2 {
            break;
        }
    }
    file
}

/// `-T` stacks: the function plugin prints `<stack trace >` and `=> name (addr)` lines;
/// without plugins (`-N`) or with the handler turned off (`-n`) the print fmt prints
/// `\t=> %ps` eight times, an entry past the end of the record (the kernel stores only
/// the entries it took) read as 0.
#[test]
fn kernel_stacks_with_and_without_the_plugin_match_trace_cmd() {
    if recorder().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let work = "for i in 1 2; do (i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done) & done; \
                ls -R /usr/share/doc >/dev/null; wait";
    let args = ["-e", "sched_switch", "-e", "sched_wakeup", "-T"];
    let f = record_with(dir.path(), "stack.dat", &args, work);
    let f = f.to_str().unwrap();
    let lines = require_all("-T", &["-i", f]);
    let text = output(Command::new("trace-cmd").args(["report", "-N", "-i", f]));
    assert!(
        text.contains("kernel_stack:         \t=> "),
        "no kernel_stack record printed by its print fmt in {lines} lines"
    );
    require_all("-T -N", &["-N", "-i", f]);
    require_all("-T -n kernel_stack", &["-n", "kernel_stack", "-i", f]);
    require_all("-T -N -l", &["-N", "-l", "-i", f]);
}

/// `--ts2secs HZ` multiplies each timestamp by 1e9/HZ in double precision; a product of
/// 2^64 or more is what x86-64 C makes of it when converted back: 0.
#[test]
fn ts2secs_overflow_matches_trace_cmd() {
    if recorder().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let f = record_with(dir.path(), "hz.dat", &["-e", "sched"], "sleep 0.01");
    let f = f.to_str().unwrap();
    let text = output(Command::new("trace-cmd").args(["report", "--ts2secs", "1", "-i", f]));
    assert!(
        text.contains(" 0.000000: "),
        "the trace's timestamps (uptime) are too small to overflow"
    );
    for hz in ["1", "1000", "1000000", "3"] {
        require_all(&format!("--ts2secs {hz}"), &["--ts2secs", hz, "-i", f]);
    }
}

/// `--profile` of a file with a buffer instance: trace-cmd 3.1.6 writes the file labels
/// of the top buffer's records and of the first instance record, then its profiler
/// fails on that record ("Handle not found?") and no profile is written. tracectl writes
/// the same labels, leaves the instance's records out, writes the top buffers' profile
/// and says on stderr that the instance's records are left out.
#[test]
fn profile_of_a_file_with_an_instance_profiles_the_top_buffers() {
    if recorder().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "-e",
        "sched",
        "-B",
        "tracectl-profile-test",
        "-e",
        "sched_process_exit",
    ];
    let f = record_with(dir.path(), "inst.dat", &args, "sleep 0.02; ls / >/dev/null");
    let run = |cmd: &mut Command| {
        cmd.args(["report", "--profile", "-i"])
            .arg(&f)
            .output()
            .unwrap()
    };
    let theirs = run(&mut Command::new("trace-cmd"));
    let ours = run(&mut Command::new(env!("CARGO_BIN_EXE_tracectl")));
    assert!(!theirs.status.success(), "trace-cmd profiled the instance");
    assert!(
        String::from_utf8_lossy(&theirs.stderr).contains("Handle not found?"),
        "{}",
        String::from_utf8_lossy(&theirs.stderr)
    );
    let err = String::from_utf8_lossy(&ours.stderr);
    assert!(ours.status.success(), "{err}");
    assert!(
        err.contains("records of buffer instance tracectl-profile-test are left out"),
        "{err}"
    );
    let theirs = String::from_utf8_lossy(&theirs.stdout);
    let labels = theirs
        .strip_suffix("tracectl-profile-test: ")
        .unwrap_or_else(|| panic!("{theirs:?}"));
    let ours = String::from_utf8_lossy(&ours.stdout);
    assert!(ours.starts_with(labels), "{ours}");
    assert!(ours[labels.len()..].contains("task: "), "{ours}");
}
