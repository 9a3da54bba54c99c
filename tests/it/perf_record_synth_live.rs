//! The records `tracectl perf record --namespaces` synthesizes for the tasks that run
//! when it starts, in perf 6.1's order: with `-a`, per thread a FORK (the leader's from
//! its parent process), its NAMESPACES, its COMM, and the leader's MMAP2s right after
//! its COMM; with `-p`, per thread the COMM then the NAMESPACES, no FORK, the leader's
//! MMAP2s after its own. A process of four threads (tests/data/perf/threads.c) is
//! recorded by perf and by tracectl; its synthesized records are the same in both
//! files, perf reads tracectl's as tracectl does, and with `-p` `perf report --stats`
//! counts as many records of each kind in both.
//! Skips (with the reason) without root, perf or a C compiler.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use crate::support::perf::{assert_same_lines, build_fixture_program, cc_workdir, run};

fn tracectl() -> &'static str {
    env!("CARGO_BIN_EXE_tracectl")
}

/// The fixture, running until dropped (its standard input then ends).
struct Threads {
    child: Child,
    pid: String,
}

impl Threads {
    fn start(d: &Path) -> Threads {
        let mut child = Command::new(d.join("threads"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let pid = line.trim().strip_prefix("ready ").unwrap().to_string();
        Threads { child, pid }
    }
}

impl Drop for Threads {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// Record `scope` (`-a` or `-p PID`) with `--namespaces` while `sleep 0.1` runs.
fn record(d: &Path, by_perf: bool, file: &str, scope: &[&str]) {
    let (tool, pre) = match by_perf {
        true => ("perf", &["record"][..]),
        false => (tracectl(), &["perf", "record"][..]),
    };
    let opts = ["-q", "-o", file, "--namespaces"];
    let args = [pre, &opts[..], scope, &["--", "sleep", "0.1"][..]].concat();
    run(tool, &args, d);
}

const SHOW: [&str; 3] = ["script", "--show-task-events", "--show-namespace-events"];

/// The synthesized records (at time 0) of process `pid`, as perf script shows them:
/// the record's name and what follows it.
fn synthesized_of(script: &str, pid: &str) -> Vec<String> {
    let of_pid = [format!("({pid}:"), format!(" {pid}/"), format!(":{pid}/")];
    script
        .lines()
        .filter_map(|l| l.split_once(" 0.000000: PERF_RECORD_").map(|(_, r)| r))
        .filter(|r| of_pid.iter().any(|p| r.contains(p.as_str())))
        .map(|r| r.split(" - nr_namespaces").next().unwrap_or(r).to_string())
        .collect()
}

/// The count `perf report --stats` gives of records of `kind` in `file`.
fn count(d: &Path, file: &str, kind: &str) -> u64 {
    let stats = run("perf", &["report", "--stats", "-i", file], d);
    let label = format!("{kind} events:");
    stats
        .lines()
        .find_map(|l| l.trim().strip_prefix(&label))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

#[test]
fn perf_record_synth_live_tasks_in_perfs_order() {
    let Some(dir) = cc_workdir() else { return };
    let d = dir.path();
    build_fixture_program("threads", d);
    let threads = Threads::start(d);
    let pid = threads.pid.as_str();
    let tids: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(tids.len(), 4, "the fixture's threads");

    for (scope, name) in [(&["-a"][..], "a"), (&["-p", pid][..], "p")] {
        let (perf_file, ours_file) = (format!("{name}-perf.data"), format!("{name}-ours.data"));
        record(d, true, &perf_file, scope);
        record(d, false, &ours_file, scope);
        let args = [&SHOW[..], &["-i", &ours_file][..]].concat();
        let perf = run("perf", &args, d);
        let ours = run(tracectl(), &[&["perf"][..], &args].concat(), d);
        assert_same_lines(&ours, &perf, &format!("perf {args:?}"));
        let theirs = run("perf", &[&SHOW[..], &["-i", &perf_file][..]].concat(), d);
        let (mine, perfs) = (synthesized_of(&ours, pid), synthesized_of(&theirs, pid));
        assert_eq!(mine, perfs, "{scope:?}: the fixture's synthesized records");
        let forks = mine.iter().filter(|r| r.starts_with("FORK")).count();
        let comms = mine.iter().filter(|r| r.starts_with("COMM")).count();
        assert_eq!(comms, 4, "{scope:?}: {mine:#?}");
        assert_eq!(
            forks,
            if name == "a" { 4 } else { 0 },
            "{scope:?}: {mine:#?}"
        );
        if name == "p" {
            for kind in ["COMM", "FORK", "NAMESPACES", "MMAP2"] {
                let (t, p) = (count(d, &ours_file, kind), count(d, &perf_file, kind));
                assert_eq!(t, p, "-p: {kind} records: tracectl wrote {t}, perf {p}");
            }
        }
    }
    drop(threads);
}
