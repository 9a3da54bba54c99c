//! Files with buffer instances (`record -B`): `tracectl report` prints every buffer,
//! merged by time and labelled by instance, line for line as `trace-cmd report` does.

use crate::support::skips;

use crate::support::dat::*;

use std::path::Path;
use std::process::Command;

fn report(tool: &str, args: &[&str]) -> String {
    let exe = if tool == "ours" {
        env!("CARGO_BIN_EXE_tracectl")
    } else {
        "trace-cmd"
    };
    let o = Command::new(exe).arg("report").args(args).output().unwrap();
    assert!(
        o.status.success(),
        "{tool} report {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn same(args: &[&str]) -> usize {
    let (theirs, ours) = (report("trace-cmd", args), report("ours", args));
    let diff: Vec<_> = theirs
        .lines()
        .zip(ours.lines())
        .filter(|(a, b)| a != b)
        .take(5)
        .collect();
    assert!(
        diff.is_empty() && theirs.lines().count() == ours.lines().count(),
        "report {args:?}: {} vs {} lines; first differences (trace-cmd, ours): {diff:#?}",
        theirs.lines().count(),
        ours.lines().count()
    );
    theirs.lines().count()
}

#[test]
fn instance_buffers_are_reported_like_trace_cmd() {
    if let Some(why) = skip_reason() {
        skips::skip(why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let inst = format!("tctest{}", std::process::id());
    let multi = dir.path().join("multi.dat");
    tracecmd_record(
        &multi,
        &["-e", "sched_switch", "-B", &inst, "-e", "sched_waking"],
    );
    let multi_s = multi.to_str().unwrap();
    let lines = same(&["-i", multi_s]);
    let text = report("ours", &["-i", multi_s]);
    assert!(
        text.lines().any(|l| l.starts_with(&format!("{inst}: "))),
        "instance lines are labelled: {text}"
    );
    assert!(lines > 3, "{text}");
    assert!(
        !Path::new("/sys/kernel/tracing/instances")
            .join(&inst)
            .exists(),
        "trace-cmd removed its instance"
    );
    // Merged with a second, plain file: names are base names, the top buffer of each
    // file is labelled by it.
    let plain = dir.path().join("plain.dat");
    tracecmd_record(&plain, &["-e", "sched_switch"]);
    same(&["-i", multi_s, "-i", plain.to_str().unwrap()]);
    same(&["-i", plain.to_str().unwrap(), "-i", multi_s]);
}

/// A file tracectl recorded with two targets reads the same in both tools.
#[test]
fn our_instance_recording_reports_like_trace_cmd() {
    if let Some(why) = skip_reason() {
        skips::skip(why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let inst = format!("tctest-ours-{}", std::process::id());
    let file = dir.path().join("ours.dat");
    let o = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .args(["record", "-q", "-o", file.to_str().unwrap()])
        .args(["-e", "sched_switch", "-B", &inst, "-e", "sched_waking"])
        .args(["--", "sleep", "0.2"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines = same(&["-i", file.to_str().unwrap()]);
    assert!(lines > 3);
}

/// `--ts-offset` shifts the file before it: the second file as trace-cmd shifts it; the
/// first too (trace-cmd 3.1.6 silently ignores that one), checked against trace-cmd's
/// unshifted text moved by the offset.
#[test]
fn ts_offset_binds_to_the_file_before_it() {
    if let Some(why) = skip_reason() {
        skips::skip(why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.dat"), dir.path().join("b.dat"));
    tracecmd_record(&a, &["-e", "sched_switch"]);
    tracecmd_record(&b, &["-e", "sched_switch"]);
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    same(&["-i", a, "-i", b, "--ts-offset", "-3000000"]);
    same(&["-i", b, "-i", a, "--ts-offset", "250000000"]);

    let plain = report("trace-cmd", &["-i", a]);
    let shifted = report("ours", &["-i", a, "--ts-offset", "1000000"]);
    let moved: Vec<String> = plain
        .lines()
        .map(|l| match l.split_once("] ") {
            Some((head, rest)) => {
                let (ts, tail) = rest.split_once(':').unwrap();
                let (s, us) = ts.trim().split_once('.').unwrap();
                let t = s.parse::<u64>().unwrap() * 1_000_000 + us.parse::<u64>().unwrap() + 1000;
                let text = format!("{}.{:06}", t / 1_000_000, t % 1_000_000);
                format!("{head}] {text:>width$}:{tail}", width = ts.len())
            }
            None => l.to_string(),
        })
        .collect();
    assert_eq!(shifted.lines().collect::<Vec<_>>(), moved);
    let o = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .args(["report", "--ts-offset", "5", "-i", a])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("must come after"));
}

/// Several files: a `-F` belongs to the `-i` before it (one before any `-i` to the first
/// file), `--stat` labels each file's `cpus=` line, `-E` lists the first file's events.
#[test]
fn filters_stat_and_event_list_of_several_files_like_trace_cmd() {
    if let Some(why) = skip_reason() {
        skips::skip(why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.dat"), dir.path().join("bb.dat"));
    tracecmd_record(&a, &["-e", "sched_switch", "-e", "sched_waking"]);
    tracecmd_record(&b, &["-e", "sched_waking", "-e", "timer"]);
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    // sched_switch is not in bb.dat: a filter naming it there would be refused.
    same(&["-i", a, "-F", "sched_switch", "-i", b]);
    same(&["-F", "sched_switch", "-i", a, "-i", b]);
    same(&["-i", b, "-i", a, "-F", "sched_switch"]);
    same(&[
        "-i",
        a,
        "-F",
        "sched_waking",
        "-i",
        b,
        "-v",
        "-F",
        "sched_waking",
    ]);
    assert!(same(&["-i", a, "-i", b, "--stat"]) > 4);
    same(&["-i", b, "-i", a, "-E"]);
}
