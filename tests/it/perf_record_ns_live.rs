//! `tracectl perf record --namespaces --all-cgroups` as perf 6.1 records: perf and
//! tracectl record the same command (which starts a task in a new UTS namespace), and
//! perf reads tracectl's file without a warning; the attrs are perf's field by field;
//! `tracectl perf script` shows the NAMESPACES and CGROUP records as `perf script` does;
//! `perf report --stats` counts as many of each in both files; the records synthesized
//! for what exists at the start are perf's: the same cgroups with the same ids and paths,
//! and the command's namespaces as /proc names them.
//! Skips (with the reason) without root or without perf.

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

use crate::support::perf::{assert_same_lines, run_clean, skip_reason};

fn tracectl() -> &'static str {
    env!("CARGO_BIN_EXE_tracectl")
}

/// The command both record: a task forked, one in a new UTS namespace.
const WORK: [&str; 3] = ["sh", "-c", "/bin/true; unshare -u /bin/true"];

/// Record [`WORK`] with `--namespaces --all-cgroups -e cpu-clock` into `file`, by perf
/// or by tracectl, quietly.
fn record(d: &Path, by_perf: bool, file: &str) {
    let (tool, pre) = match by_perf {
        true => ("perf", &["record"][..]),
        false => (tracectl(), &["perf", "record"][..]),
    };
    let opts = [
        "-q",
        "-o",
        file,
        "--namespaces",
        "--all-cgroups",
        "-e",
        "cpu-clock",
        "--",
    ];
    let args = [pre, &opts[..], &WORK[..]].concat();
    let out = Command::new(tool)
        .current_dir(d)
        .args(&args)
        .output()
        .unwrap();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{tool} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `perf evlist -v` of `file`, field by field, without its tip.
fn attrs(d: &Path, file: &str) -> Vec<String> {
    run_clean("perf", &["evlist", "-v", "-i", file], d)
        .lines()
        .filter(|l| !l.starts_with('#'))
        .flat_map(|l| l.split(", ").map(str::to_string).collect::<Vec<_>>())
        .collect()
}

/// The count `perf report --stats` gives of records of `kind` (`NAMESPACES`) in `file`.
fn count(d: &Path, file: &str, kind: &str) -> u64 {
    let stats = run_clean("perf", &["report", "--stats", "-i", file], d);
    let label = format!("{kind} events:");
    stats
        .lines()
        .find_map(|l| l.trim().strip_prefix(&label))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// The records `perf script` prints as synthesized (at time 0) of the lines starting
/// with `PERF_RECORD_<kind>`: what follows the name, with the lines after it when the
/// record takes more (NAMESPACES), joined by spaces.
fn synthesized(script: &str, kind: &str) -> Vec<String> {
    let lines: Vec<&str> = script.lines().collect();
    let marker = format!(" 0.000000: PERF_RECORD_{kind} ");
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if let Some(at) = l.find(&marker) {
            let mut parts = vec![l[at + marker.len()..].trim()];
            let more = lines[i + 1..].iter().take_while(|m| m.starts_with('\t'));
            parts.extend(more.map(|m| m.trim()));
            out.push(parts.join(" "));
        }
    }
    out
}

/// How perf script prints a task's namespaces: `0/net: DEV/0xINO, ...` from
/// /proc/PID/ns, in perf's order.
fn proc_namespaces(pid: &str) -> String {
    let names = ["net", "uts", "ipc", "pid", "user", "mnt", "cgroup"];
    let items: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let m = std::fs::metadata(format!("/proc/{pid}/ns/{n}")).unwrap();
            format!("{i}/{n}: {}/{:#x}", m.dev(), m.ino())
        })
        .collect();
    format!("[{}]", items.join(", "))
}

#[test]
fn perf_record_ns_live_namespaces_and_cgroups_as_perf_records_them() {
    if let Some(why) = skip_reason() {
        crate::support::skips::skip(why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    record(d, true, "p.data");
    record(d, false, "t.data");
    assert_eq!(attrs(d, "t.data"), attrs(d, "p.data"), "the attrs differ");

    let show = ["--show-namespace-events", "--show-cgroup-events"];
    let mut scripts = Vec::new();
    for extra in [&[][..], &["--show-task-events"][..]] {
        let args = [&["script", "-i", "t.data"][..], &show[..], extra].concat();
        let perf = run_clean("perf", &args, d);
        let ours = run_clean(tracectl(), &[&["perf"][..], &args].concat(), d);
        assert_same_lines(&ours, &perf, &format!("perf {args:?}"));
        scripts.push(perf);
    }
    let ours = &scripts[0];
    let theirs = run_clean(
        "perf",
        &[&["script", "-i", "p.data"][..], &show[..]].concat(),
        d,
    );

    for kind in ["NAMESPACES", "CGROUP"] {
        let (t, p) = (count(d, "t.data", kind), count(d, "p.data", kind));
        assert!(
            t > 0,
            "perf report --stats counts no {kind} records:\n{ours}"
        );
        assert_eq!(t, p, "{kind} records: tracectl wrote {t}, perf {p}");
    }
    // The same cgroup tree, walked at the start of both.
    let cgroups = |s: &str| -> BTreeSet<String> { synthesized(s, "CGROUP").into_iter().collect() };
    assert_eq!(cgroups(ours), cgroups(&theirs), "the synthesized cgroups");
    assert!(cgroups(ours).iter().any(|c| c.ends_with(" /")), "{ours}");

    // The command's namespaces, synthesized before it starts: those of this test's
    // process, which started the recorder that started it; in perf's file the same.
    let ns = synthesized(ours, "NAMESPACES");
    assert_eq!(ns.len(), 1, "one task synthesized:\n{ours}");
    let (tasks, links) = ns[0].split_once(" - nr_namespaces: 7 ").unwrap();
    let (pid, tid) = tasks.split_once('/').unwrap();
    assert_eq!(pid, tid);
    assert_eq!(links, proc_namespaces("self"));
    let perf_ns = synthesized(&theirs, "NAMESPACES");
    assert_eq!(perf_ns.len(), 1, "{theirs}");
    assert!(perf_ns[0].ends_with(&links), "perf's: {}", perf_ns[0]);
}
