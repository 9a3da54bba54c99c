//! The records perf 6.1 writes at the start of every recording, written by `tracectl
//! perf record` as perf writes them: PERF_RECORD_ID_INDEX first (each id's ring, CPU and
//! thread), the kernel's map, PERF_RECORD_THREAD_MAP and PERF_RECORD_CPU_MAP, then the
//! tasks' records and the forked command's COMM (`perf-exec`, its name until its
//! exec), and PERF_RECORD_FINISHED_INIT after the last synthesized record, before any of
//! the kernel's. For a command, `-a`, `-p` and `--per-thread -p`, perf and tracectl
//! record the same command: `perf script -D` shows those records alike in both files
//! (pids and ids aside), `perf report --stats` lists the same kinds of records for
//! both, as does `tracectl perf report --stats` for tracectl's, and both files are
//! their owner's only (0600). With `--overwrite` (rings written backward, read at the
//! end), both tools' events have perf's attr (`write_backward`), and a busy command
//! whose samples overflow one-page rings leaves no more of its last samples than the
//! rings hold in either file, perf reading tracectl's without a warning. Both count the
//! reader's wake-ups alike (`Woken up 1 times` for a short command). Skips (with the reason)
//! without root or perf.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use crate::support::perf::{run_clean, skip_reason, Reaped};

fn tracectl() -> &'static str {
    env!("CARGO_BIN_EXE_tracectl")
}

/// One record as `perf script -D` prints it.
#[derive(Debug)]
struct Dumped {
    offset: u64,
    /// Its time; 0 for records without one.
    time: u64,
    /// The text after `PERF_RECORD_`, with the entry lines of an ID_INDEX.
    text: String,
}

/// The records of `perf script -D` in file order.
fn dump(d: &Path, file: &str) -> Vec<Dumped> {
    let out = run_clean("perf", &["script", "-D", "-i", file], d);
    let mut v: Vec<Dumped> = Vec::new();
    for line in out.lines() {
        if let Some(entry) = line.strip_prefix(" ... id: ") {
            // An ID_INDEX entry: what follows the id.
            if let (Some(last), Some((_, rest))) = (v.last_mut(), entry.split_once("  ")) {
                last.text.push_str(&format!("\n{rest}"));
            }
            continue;
        }
        let Some((head, rest)) = line.split_once(": PERF_RECORD_") else {
            continue;
        };
        let tokens: Vec<&str> = head.split_whitespace().collect();
        let Some(at) = tokens.iter().position(|t| t.starts_with("0x")) else {
            continue;
        };
        let offset = u64::from_str_radix(&tokens[at][2..], 16).unwrap();
        let time = at
            .checked_sub(1)
            .and_then(|i| tokens[i].parse().ok())
            .unwrap_or(0);
        v.push(Dumped {
            offset,
            time,
            text: rest.to_string(),
        });
    }
    v.sort_by_key(|r| r.offset);
    v
}

/// The records of a file up to its FINISHED_INIT that every recording has, whatever
/// runs: ID_INDEX, the kernel's map, THREAD_MAP, CPU_MAP and the forked command's COMM,
/// with `pids` written as `PID`. Asserts that FINISHED_INIT is there once, after every
/// synthesized record (time 0) and before every record of the kernel's.
fn init_records(records: &[Dumped], pids: &[&str], what: &str) -> Vec<String> {
    let inits: Vec<usize> = (0..records.len())
        .filter(|&i| records[i].text.starts_with("FINISHED_INIT"))
        .collect();
    assert_eq!(inits.len(), 1, "{what}: one FINISHED_INIT: {records:#?}");
    let (before, after) = records.split_at(inits[0]);
    assert!(
        before.iter().all(|r| r.time == 0),
        "{what}: a record with a time before FINISHED_INIT: {before:#?}"
    );
    let late = after
        .iter()
        .find(|r| r.time == 0 && !r.text.starts_with("FINISHED"));
    assert!(
        late.is_none(),
        "{what}: a synthesized record after FINISHED_INIT: {late:?}"
    );
    before
        .iter()
        .filter(|r| {
            ["ID_INDEX", "THREAD_MAP", "CPU_MAP", "MMAP -1/0"]
                .iter()
                .any(|k| r.text.starts_with(k))
                || r.text.starts_with("COMM: perf-exec")
        })
        .map(|r| {
            let mut t = r.text.clone();
            for p in pids {
                t = t.replace(p, "PID");
            }
            t
        })
        // With -a, other tools' commands waiting for their exec are perf-exec too.
        .filter(|t| !t.starts_with("COMM: perf-exec") || t == "COMM: perf-exec:PID/PID")
        .collect()
}

/// The kinds of records a `--stats` report lists (its aggregated part).
fn kinds(stats: &str) -> Vec<String> {
    stats
        .lines()
        .take_while(|l| !l.contains(" stats:"))
        .filter_map(|l| l.trim().split_once(" events:").map(|(k, _)| k.to_string()))
        .collect()
}

/// The pid of the forked command, from its `perf-exec` COMM (the last one before
/// FINISHED_INIT: with -a, the walk of every process may find others).
fn command_pid(records: &[Dumped]) -> String {
    records
        .iter()
        .take_while(|r| !r.text.starts_with("FINISHED_INIT"))
        .filter_map(|r| r.text.strip_prefix("COMM: perf-exec:"))
        .last()
        .and_then(|r| r.split('/').next())
        .unwrap_or_else(|| panic!("no perf-exec COMM: {records:#?}"))
        .to_string()
}

#[test]
fn perf_record_init_live_records_as_perf() {
    if let Some(why) = skip_reason() {
        crate::support::skips::skip(why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let target = Reaped(Command::new("sleep").arg("30").spawn().unwrap());
    let tpid = target.0.id().to_string();
    let cases: [(&str, Vec<&str>); 4] = [
        ("command", vec![]),
        ("-a", vec!["-a"]),
        ("-p", vec!["-p", &tpid]),
        ("--per-thread -p", vec!["--per-thread", "-p", &tpid]),
    ];
    for (name, scope) in &cases {
        let mut files = Vec::new();
        for (tool, pre) in [
            ("perf", &["record"][..]),
            (tracectl(), &["perf", "record"][..]),
        ] {
            let file = format!("{}.data", files.len());
            let opts = ["-q", "-o", &file];
            let args = [pre, &opts[..], scope, &["--", "sleep", "0.1"][..]].concat();
            run_clean(tool, &args, d);
            let mode = std::fs::metadata(d.join(&file))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{name}: {tool}'s file mode");
            files.push(file);
        }
        let (perf_file, ours_file) = (&files[0], &files[1]);
        let (perf_dump, ours_dump) = (dump(d, perf_file), dump(d, ours_file));
        let perf_pids = [command_pid(&perf_dump), tpid.clone()];
        let ours_pids = [command_pid(&ours_dump), tpid.clone()];
        let perf_init = init_records(
            &perf_dump,
            &perf_pids.iter().map(String::as_str).collect::<Vec<_>>(),
            &format!("{name}: perf's file"),
        );
        let ours_init = init_records(
            &ours_dump,
            &ours_pids.iter().map(String::as_str).collect::<Vec<_>>(),
            &format!("{name}: tracectl's file"),
        );
        // The ids differ from one recording to the next: the entries' rings, CPUs and
        // threads do not.
        assert_eq!(
            ours_init, perf_init,
            "{name}: the records before FINISHED_INIT"
        );
        for k in ["ID_INDEX", "THREAD_MAP", "CPU_MAP", "COMM: perf-exec"] {
            assert!(
                perf_init.iter().any(|r| r.starts_with(k)),
                "{name}: perf wrote no {k}: {perf_init:#?}"
            );
        }
        let perf_kinds = kinds(&run_clean(
            "perf",
            &["report", "--stats", "-i", perf_file],
            d,
        ));
        let ours_kinds = kinds(&run_clean(
            "perf",
            &["report", "--stats", "-i", ours_file],
            d,
        ));
        let tracectl_kinds = kinds(&run_clean(
            tracectl(),
            &["perf", "report", "--stats", "-i", ours_file],
            d,
        ));
        // With -a, what else runs meanwhile may add records of other kinds to either
        // file: those every recording of the command has are compared.
        let common = |k: &Vec<String>| -> Vec<String> {
            let every = [
                "TOTAL",
                "MMAP",
                "COMM",
                "EXIT",
                "SAMPLE",
                "MMAP2",
                "ID_INDEX",
                "THREAD_MAP",
                "CPU_MAP",
                "FINISHED_INIT",
            ];
            k.iter()
                .filter(|k| *name != "-a" || every.contains(&k.as_str()))
                .cloned()
                .collect()
        };
        let (ours_kinds, perf_kinds) = (common(&ours_kinds), common(&perf_kinds));
        let tracectl_kinds = common(&tracectl_kinds);
        assert_eq!(ours_kinds, perf_kinds, "{name}: perf report --stats");
        assert_eq!(
            tracectl_kinds, perf_kinds,
            "{name}: tracectl perf report --stats"
        );
    }
    drop(target);
}

/// The number after `SAMPLE events:` in a `--stats` report.
fn samples(stats: &str) -> u64 {
    stats
        .lines()
        .find_map(|l| l.trim().strip_prefix("SAMPLE events:"))
        .and_then(|r| r.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

#[test]
fn perf_record_init_live_overwrite_keeps_the_last_samples() {
    if let Some(why) = skip_reason() {
        crate::support::skips::skip(why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Some 0.2 s of work at 4000 samples a second: far more than a page holds.
    let busy = "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done";
    let mut found = Vec::new();
    for (tool, pre, file) in [
        ("perf", &["record"][..], "perf.data"),
        (tracectl(), &["perf", "record"][..], "ours.data"),
    ] {
        let opts = ["-q", "--overwrite", "-m", "1", "-o", file];
        let args = [pre, &opts[..], &["--", "sh", "-c", busy][..]].concat();
        run_clean(tool, &args, d);
        let evlist = run_clean("perf", &["evlist", "-v", "-i", file], d);
        let stats = run_clean("perf", &["report", "--stats", "-i", file], d);
        run_clean("perf", &["script", "-i", file], d);
        found.push((evlist, kinds(&stats), samples(&stats)));
    }
    let (perf, ours) = (&found[0], &found[1]);
    assert!(
        perf.0.contains("write_backward: 1"),
        "perf's attr: {}",
        perf.0
    );
    assert_eq!(ours.0, perf.0, "perf evlist -v");
    assert_eq!(ours.1, perf.1, "the kinds of records");
    // A page of 4096 bytes holds 102 samples of 40 bytes: each CPU's ring kept its last
    // ones (the command may run on any CPU), of the thousands taken.
    let most = 102 * std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    for (who, kept) in [("perf", perf.2), ("tracectl", ours.2)] {
        assert!(
            kept > 50 && kept <= most,
            "{who} kept {kept} samples (at most {most})"
        );
    }
}

/// perf's `Woken up N times` line of a recording's standard error.
fn woken_line(err: &str) -> String {
    err.lines()
        .find(|l| l.starts_with("[ perf record: Woken up "))
        .unwrap_or_else(|| panic!("no wake-up line in: {err}"))
        .to_string()
}

/// The wake-ups perf counts: a short command's recording (no ring reaches its watermark)
/// wakes once, at the end (the command's hang-up), and so does a `-p` recording that its
/// process's exit ends, per CPU or `--per-thread`.
#[test]
fn perf_record_init_live_wakeups_as_perf() {
    if let Some(why) = skip_reason() {
        crate::support::skips::skip(why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for scope in [&[][..], &["-p"][..], &["--per-thread", "-p"][..]] {
        let mut lines = Vec::new();
        for tool in ["perf", tracectl()] {
            let mut args: Vec<String> = Vec::new();
            if tool != "perf" {
                args.push("perf".into());
            }
            args.extend(["record", "-N", "-o", "w.data"].map(String::from));
            args.extend(scope.iter().map(|s| s.to_string()));
            let _target = if scope.is_empty() {
                args.extend(["--", "true"].map(String::from));
                None
            } else {
                let t = Reaped(Command::new("sleep").arg("1.5").spawn().unwrap());
                args.push(t.0.id().to_string());
                Some(t)
            };
            let out = Command::new(tool)
                .current_dir(d)
                .args(&args)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{tool} {args:?}: {err}");
            lines.push(woken_line(&err));
        }
        assert_eq!(lines[1], lines[0], "{scope:?}: tracectl, then perf");
    }
}
