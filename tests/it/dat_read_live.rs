//! Reading trace.dat files recorded by trace-cmd during the test run: our reader must
//! find as many events of each type as `trace-cmd report` prints.

use crate::support::skips;

use crate::support::dat::*;

use tracectl::dat::{Compression, DatFile};

fn check(args: &[&str], version: u32, compression: Compression) {
    if let Some(why) = skip_reason() {
        skips::skip(why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.dat");
    let mut a = vec!["-e", "sched", "-e", "irq"];
    a.extend_from_slice(args);
    tracecmd_record(&file, &a);
    let dat = DatFile::open(&file).unwrap();
    assert_eq!(dat.header().version, version);
    assert_eq!(dat.header().compression, compression);
    assert!(dat.header_page().contains("commit"));
    assert!(dat.header_event().contains("type_len"));
    assert!(dat
        .event_formats()
        .iter()
        .any(|(s, t)| s == "sched" && t.contains("name: sched_switch")));
    assert!(dat
        .ftrace_formats()
        .iter()
        .any(|t| t.contains("name: function")));
    assert!(
        dat.kallsyms().unwrap().lines().count() > 1000,
        "kallsyms section read"
    );
    assert!(dat.printk_formats().contains(" : \""));
    assert!(!dat.cmdlines().is_empty());
    assert_eq!(dat.buffers()[0].name, "");
    assert_eq!(dat.buffers()[0].clock.as_deref(), Some("local"));
    assert!(dat.options().uname.is_some());
    assert!(dat
        .options()
        .version
        .as_deref()
        .unwrap_or("")
        .starts_with("3."));
    assert_eq!(dat.options().cpustats.len() as u32, dat.nr_cpus());
    assert!(dat.warnings().is_empty(), "{:?}", dat.warnings());
    let ours = our_counts(&dat, 0);
    let theirs = report_counts(&file, &[]);
    assert!(!theirs.is_empty());
    assert_eq!(ours, theirs);
    assert_eq!(ring_counts(&dat, 0), theirs, "tracectl::ring on our pages");
}

#[test]
fn v7_zstd_counts_match_tracecmd() {
    check(&[], 7, Compression::Zstd);
}

#[test]
fn v7_uncompressed_counts_match_tracecmd() {
    check(&["--compression", "none"], 7, Compression::None);
}

#[test]
fn v6_counts_match_tracecmd() {
    check(&["--file-version", "6"], 6, Compression::None);
}

fn check_instances(args: &[&str]) {
    if let Some(why) = skip_reason() {
        skips::skip(why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.dat");
    // One name per call: the v6 and v7 tests run at the same time.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let inst = format!("dat-read-{}-{n}", std::process::id());
    let mut a = vec![
        "-e",
        "sched_switch",
        "-e",
        "sched_wakeup",
        "-B",
        &inst,
        "-e",
        "sched_switch",
    ];
    a.extend_from_slice(args);
    tracecmd_record(&file, &a);
    let dat = DatFile::open(&file).unwrap();
    let names: Vec<&str> = dat.buffers().iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["", inst.as_str()]);
    let mut ours = std::collections::BTreeMap::new();
    for b in 0..dat.buffers().len() {
        assert_eq!(dat.buffers()[b].clock.as_deref(), Some("local"));
        for (k, v) in our_counts(&dat, b) {
            *ours.entry(k).or_insert(0) += v;
        }
    }
    assert_eq!(ours, report_counts(&file, &[]));
    assert!(ours.get("sched_switch").copied().unwrap_or(0) > 0);
}

#[test]
fn v7_instances_counts_match_tracecmd() {
    check_instances(&[]);
}

#[test]
fn v6_instances_counts_match_tracecmd() {
    check_instances(&["--file-version", "6"]);
}
