//! `tracectl perf report -D` and `--stats` against perf 6.1 on files perf records here:
//! a group read at each sample (`{task-clock,page-faults}:S`) in a busy loop, where
//! most samples find the page-fault counter unchanged (perf counts a sample of an event
//! only for a value that grew), and context switches (`--switch-events`). Every line is
//! compared with perf's. Skips (with the reason) without root or without perf.

use std::path::Path;

use crate::support::perf::{assert_same_lines, run, skip_reason};

/// `perf report ARGS -i FILE` and `tracectl perf report ARGS -i FILE` in `d`.
fn both(d: &Path, file: &str, args: &[&str]) -> (String, String) {
    let mut perf_args = vec!["report", "-i", file];
    perf_args.extend_from_slice(args);
    let perf = run("perf", &perf_args, d);
    let mut ours_args = vec!["perf", "report", "-i", file];
    ours_args.extend_from_slice(args);
    let ours = run(env!("CARGO_BIN_EXE_tracectl"), &ours_args, d);
    (perf, ours)
}

#[test]
fn perf_report_live_dump_and_stats_match_perf() {
    if let Some(why) = skip_reason() {
        eprintln!("skipped: {why}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let busy = "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done";
    let recordings: [&[&str]; 2] = [
        &[
            "-o",
            "grp.data",
            "-e",
            "{task-clock,page-faults}:S",
            "--",
            "sh",
            "-c",
            busy,
        ],
        &[
            "-o",
            "sw.data",
            "--switch-events",
            "--",
            "sh",
            "-c",
            "sleep 0.01; ls / >/dev/null",
        ],
    ];
    for args in recordings {
        run("perf", &[&["record", "-q"][..], args].concat(), d);
        let file = args[1];
        for view in [&["-D"][..], &["--stats"]] {
            let (perf, ours) = both(d, file, view);
            assert_same_lines(&ours, &perf, &format!("{file} {view:?}"));
        }
    }
    // The case itself: some samples of the group left the page faults out.
    let (perf, _) = both(d, "grp.data", &["--stats"]);
    let counts: Vec<&str> = perf
        .lines()
        .filter(|l| l.contains("SAMPLE events:"))
        .collect();
    assert!(
        counts.len() == 3 && counts[1] != counts[2],
        "page-faults sampled less often than task-clock:\n{perf}"
    );
}
