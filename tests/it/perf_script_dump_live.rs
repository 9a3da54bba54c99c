//! `tracectl perf script --per-event-dump` against `perf script --per-event-dump` (perf
//! 6.1) on copies of the same file: each event's INPUT.EVENT.dump file byte for byte,
//! standard output (side-band records and perf's `[ perf script: Wrote ... ]` lines)
//! and standard error (perf's warning of records out of order) alike. A system-wide
//! recording of many tracepoints on every CPU is where records come out of order.
//! Skips (with the reason) without root or without perf.

use std::path::Path;
use std::process::Command;

use crate::support::perf::{perf_fixture, run, skip_reason};

/// Standard output and standard error of `cmd args` in `d`, which must succeed.
fn both(cmd: &str, args: &[&str], d: &Path) -> (String, String) {
    let out = Command::new(cmd)
        .current_dir(d)
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{cmd} {args:?}: {err}");
    (String::from_utf8_lossy(&out.stdout).into_owned(), err)
}

/// The `.dump` files of `d`, by name, with their bytes.
fn dumps(d: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "dump"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    v.sort();
    v
}

/// perf and tracectl on copies of `src` in two directories, with `args`.
fn same_dump(src: &Path, args: &[&str]) -> usize {
    let (p, o) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for d in [p.path(), o.path()] {
        std::fs::copy(src, d.join("in.data")).unwrap();
    }
    let with = |tool: &[&'static str]| -> Vec<&str> {
        [tool, &["-i", "in.data", "--per-event-dump"][..], args].concat()
    };
    let perf = both("perf", &with(&["script"]), p.path());
    let ours = both(
        env!("CARGO_BIN_EXE_tracectl"),
        &with(&["perf", "script"]),
        o.path(),
    );
    assert_eq!(ours.0, perf.0, "standard output, {args:?}");
    assert_eq!(ours.1, perf.1, "standard error, {args:?}");
    let (pd, od) = (dumps(p.path()), dumps(o.path()));
    let names = |v: &[(String, Vec<u8>)]| v.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&od), names(&pd), "the files, {args:?}");
    for ((name, ob), (_, pb)) in od.iter().zip(&pd) {
        assert!(ob == pb, "{name} differs, {args:?}");
    }
    pd.iter().filter(|(_, b)| !b.is_empty()).count()
}

#[test]
fn perf_script_live_per_event_dump_matches_perf() {
    if let Some(why) = skip_reason() {
        crate::support::skips::skip(why);
        return;
    }
    // Recorded files of several events, with and without side-band records shown.
    let mixed = Path::new(&perf_fixture("tp-mixed.data")).to_path_buf();
    assert!(
        same_dump(&mixed, &[]) >= 3,
        "three events or more with samples"
    );
    same_dump(&mixed, &["--show-task-events"]);
    same_dump(&mixed, &["--ns", "--reltime"]);
    // A fresh system-wide recording of block and scheduler events while data is
    // written and synced on every CPU.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let work = "for i in 1 2 3 4; do dd if=/dev/zero of=z$i bs=1M count=8 conv=fsync \
                2>/dev/null & done; wait; rm -f z1 z2 z3 z4";
    run(
        "perf",
        &[
            "record",
            "-q",
            "-o",
            "blk.data",
            "-a",
            "-e",
            "block:*",
            "-e",
            "sched:sched_switch",
            "-e",
            "sched:sched_wakeup",
            "--",
            "sh",
            "-c",
            work,
        ],
        d,
    );
    same_dump(&d.join("blk.data"), &[]);
    // The warning, if any, on plain output too.
    let perf = both("perf", &["script", "-i", "blk.data"], d);
    let ours = both(
        env!("CARGO_BIN_EXE_tracectl"),
        &["perf", "script", "-i", "blk.data"],
        d,
    );
    assert_eq!(ours.1, perf.1, "standard error");
    assert!(ours.0 == perf.0, "standard output");
}
