//! `tracectl perf script --show-namespace-events` and `--show-cgroup-events` against
//! perf 6.1's `perf script` on a file perf records here with `--namespaces
//! --all-cgroups` (NAMESPACES records of every task, synthesized and of the tasks it
//! starts, one of them in a new UTS namespace; CGROUP records of the cgroups): each
//! option alone, with the task records, with the fields cut down and with a CPU filter.
//! Skips (with the reason) without root or without perf.

use std::path::Path;

use crate::support::perf::{assert_same_lines, run, skip_reason};

fn same(d: &Path, args: &[&str]) -> String {
    let perf = run(
        "perf",
        &[&["script", "-i", "ns.data"][..], args].concat(),
        d,
    );
    let ours_args = [&["perf", "script", "-i", "ns.data"][..], args].concat();
    let ours = run(env!("CARGO_BIN_EXE_tracectl"), &ours_args, d);
    assert_same_lines(&ours, &perf, &format!("perf script {args:?}"));
    perf
}

#[test]
fn perf_script_ns_live_namespace_and_cgroup_records_match_perf() {
    if let Some(why) = skip_reason() {
        crate::support::skips::skip(why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rec = [
        "record",
        "-q",
        "-o",
        "ns.data",
        "--namespaces",
        "--all-cgroups",
        "--sample-cpu",
    ];
    let events = [
        "-e",
        "sched:sched_process_exec",
        "-e",
        "cpu-clock",
        "-F",
        "999",
    ];
    let work = ["--", "sh", "-c", "ls / >/dev/null; unshare -u true"];
    run("perf", &[&rec[..], &events, &work].concat(), d);
    let plain = same(d, &[]);
    let ns = same(d, &["--show-namespace-events"]);
    assert!(
        ns.contains("PERF_RECORD_NAMESPACES") && ns != plain,
        "perf shows NAMESPACES records:\n{ns}"
    );
    let cg = same(d, &["--show-cgroup-events"]);
    assert!(
        cg.contains("PERF_RECORD_CGROUP") && cg != plain,
        "perf shows CGROUP records:\n{cg}"
    );
    same(
        d,
        &[
            "--show-namespace-events",
            "--show-cgroup-events",
            "--show-task-events",
        ],
    );
    same(d, &["--show-namespace-events", "-F", "comm,pid,time,event"]);
    same(
        d,
        &["--show-namespace-events", "--show-cgroup-events", "-C", "0"],
    );
}
