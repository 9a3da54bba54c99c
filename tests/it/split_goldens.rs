//! `tracectl split` against trace-cmd 3.1.6's split of the same recordings
//! (`tests/data/tracecmd/split.tsv`, `make-split.sh`): the same parts, named the same, and
//! `tracectl report` of each equal to `trace-cmd report` of trace-cmd's part; where
//! trace-cmd is installed, `trace-cmd report` of our parts too. Then bad input: a clear
//! error and nothing left behind. No root, tracefs or trace-cmd needed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::pins::trace_cmd_installed;
use crate::support::tree::{bin, repo};

fn data(rel: &str) -> PathBuf {
    repo().join("tests/data/tracecmd").join(rel)
}

fn run_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run tracectl")
}

/// Put the recording `input` (unpacked when `.zst`) at `dir/in.dat`.
fn place_input(input: &str, dir: &Path) {
    let bytes = std::fs::read(data(input)).unwrap();
    let bytes = if input.ends_with(".zst") {
        zstd::decode_all(&bytes[..]).unwrap()
    } else {
        bytes
    };
    std::fs::write(dir.join("in.dat"), bytes).unwrap();
}

/// Every file of `dir` but the input, in name order.
fn parts(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "in.dat")
        .collect();
    v.sort();
    v
}

/// `==> NAME <==` and the report of each part, as make-split.sh writes the goldens.
fn reports(dir: &Path, names: &[String], with: &dyn Fn(&Path, &str) -> Vec<u8>) -> Vec<u8> {
    let mut out = Vec::new();
    for n in names {
        out.extend_from_slice(format!("==> {n} <==\n").as_bytes());
        out.extend_from_slice(&with(dir, n));
    }
    out
}

fn tracectl_report(dir: &Path, name: &str) -> Vec<u8> {
    let out = run_in(dir, &["report", "-i", name]);
    assert!(
        out.status.success(),
        "tracectl report {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn tracecmd_report(dir: &Path, name: &str) -> Vec<u8> {
    let out = Command::new("trace-cmd")
        .args(["report", "-i", name])
        .current_dir(dir)
        .output()
        .expect("run trace-cmd report");
    assert!(out.status.success(), "trace-cmd report {name}");
    out.stdout
}

/// The first line where `got` and `want` differ, for the failure message.
fn first_difference(got: &[u8], want: &[u8]) -> String {
    let (g, w) = (String::from_utf8_lossy(got), String::from_utf8_lossy(want));
    for (i, (a, b)) in g.lines().zip(w.lines()).enumerate() {
        if a != b {
            return format!("line {}:\n  ours:      {a}\n  trace-cmd: {b}", i + 1);
        }
    }
    format!(
        "{} lines against trace-cmd's {}",
        g.lines().count(),
        w.lines().count()
    )
}

#[test]
fn split_parts_report_as_trace_cmds_parts() {
    let modes = std::fs::read_to_string(data("split.tsv")).unwrap();
    let check_with_tracecmd = trace_cmd_installed();
    let mut checked = 0;
    for line in modes
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let f: Vec<&str> = line.split('\t').collect();
        let (mode, input, args) = (f[0], f[1], &f[2..]);
        let packed = std::fs::read(data(&format!("results/split/{mode}.txt.zst"))).unwrap();
        let want = zstd::decode_all(&packed[..]).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        place_input(input, tmp.path());
        let mut a = vec!["split", "-i", "in.dat"];
        a.extend_from_slice(args);
        let out = run_in(tmp.path(), &a);
        assert!(
            out.status.success(),
            "{mode}: tracectl {a:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let names = parts(tmp.path());
        assert!(!names.is_empty(), "{mode}: no part written");
        let got = reports(tmp.path(), &names, &tracectl_report);
        assert!(
            got == want,
            "{mode}: tracectl report of our parts differs from trace-cmd's parts: {}",
            first_difference(&got, &want)
        );
        if check_with_tracecmd {
            let theirs = reports(tmp.path(), &names, &tracecmd_report);
            assert!(
                theirs == want,
                "{mode}: trace-cmd report of our parts differs from its own parts: {}",
                first_difference(&theirs, &want)
            );
        }
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} modes in split.tsv");
}

/// A file with an instance buffer: the parts hold the top buffer and a warning says so.
#[test]
fn split_warns_that_instance_buffers_are_left_out() {
    let tmp = tempfile::tempdir().unwrap();
    place_input("2cpu-v7.dat", tmp.path());
    let out = run_in(tmp.path(), &["split", "-i", "in.dat", "-e", "100000"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning") && err.contains("\"golden\"") && err.contains("top buffer"),
        "{err}"
    );
    assert_eq!(parts(tmp.path()), ["in.dat.1"]);
}

/// Fails with a message containing every one of `needles`, and leaves `dir` as it was.
fn refused(dir: &Path, args: &[&str], needles: &[&str]) {
    let before = parts(dir);
    let out = run_in(dir, args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} succeeded");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: {n:?} not in: {err}");
    }
    assert_eq!(parts(dir), before, "{args:?} left files behind");
}

#[test]
fn split_refuses_bad_numbers_and_missing_cpus_writing_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    place_input("2cpu-noinstance-v7.dat", dir);
    refused(
        dir,
        &["split", "-i", "in.dat", "-e", "0"],
        &["-e 0", "greater than 0"],
    );
    refused(
        dir,
        &["split", "-i", "in.dat", "-m", "abc"],
        &["-m abc", "whole number"],
    );
    refused(dir, &["split", "-i", "in.dat", "-p", "-3"], &["-3"]);
    refused(
        dir,
        &["split", "-i", "in.dat", "-e", "5", "-s", "1"],
        &["cannot be used with"],
    );
    refused(
        dir,
        &["split", "-i", "in.dat", "-C", "7"],
        &["in.dat", "no CPU 7", "0, 1"],
    );
    refused(
        dir,
        &["split", "-i", "in.dat", "-C", "x"],
        &["-C x", "CPU number"],
    );
    refused(
        dir,
        &["split", "-i", "in.dat", "nope"],
        &["start time", "\"nope\""],
    );
    refused(
        dir,
        &["split", "-i", "in.dat", "604.42", "604.41"],
        &["end time", "before the start"],
    );
    refused(dir, &["split", "-i", "missing.dat"], &["missing.dat"]);
    // The part of `-o in` would be in.1; of `-i in.dat.1 -o in.dat` the input itself.
    std::fs::copy(dir.join("in.dat"), dir.join("x.1")).unwrap();
    refused(
        dir,
        &["split", "-i", "x.1", "-o", "x"],
        &["overwrite the input"],
    );
    std::fs::remove_file(dir.join("x.1")).unwrap();
}

/// A truncated recording: the error names the file and where it ends, and no part, no
/// `.partial` and no temporary file is left, even when earlier parts were complete.
#[test]
fn split_of_a_truncated_file_leaves_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let whole = std::fs::read(data("2cpu-noinstance-v7.dat")).unwrap();
    // Cut in the metadata, and in the trace data at its end (the last CPU's pages).
    for cut in [600, whole.len() - 700] {
        std::fs::write(dir.join("in.dat"), &whole[..cut]).unwrap();
        refused(
            dir,
            &["split", "-i", "in.dat", "-e", "100", "-r"],
            &["in.dat"],
        );
    }
    // An uncompressed file whose last page of CPU 1 has a commit larger than the page:
    // the parts before it were complete when the split reached it.
    place_input("2cpu-noinstance-v6.dat.zst", dir);
    let dat = tracectl::dat::DatFile::open(dir.join("in.dat")).unwrap();
    let cpu1 = dat.buffers()[0].cpus()[1];
    drop(dat);
    let mut bytes = std::fs::read(dir.join("in.dat")).unwrap();
    let last_page = (cpu1.offset + cpu1.size - 4096) as usize;
    bytes[last_page + 8..last_page + 16].copy_from_slice(&0x7fffu64.to_le_bytes());
    std::fs::write(dir.join("in.dat"), &bytes).unwrap();
    refused(
        dir,
        &["split", "-i", "in.dat", "-e", "100", "-r"],
        &["in.dat", "cpu1", "commit", "nothing was written"],
    );
}

/// A sub-buffer of `n` `tick` records 1 us apart from `start`, after `missed` lost events
/// (`Some(None)`: the kernel did not count them), with the flags as a 64-bit kernel
/// stores them (sign-extended in its commit word).
fn tick_page(start: u64, n: usize, missed: Option<Option<u64>>) -> Vec<u8> {
    tick_page_sized(start, &vec![12; n], missed)
}

/// [`tick_page`] with records of these data sizes (12, the event's own, or more: the
/// rest is padding a reader skips), each stored with a 4-byte header.
fn tick_page_sized(start: u64, sizes: &[usize], missed: Option<Option<u64>>) -> Vec<u8> {
    let mut data = Vec::new();
    for (i, &size) in sizes.iter().enumerate() {
        let delta: u32 = if i == 0 { 0 } else { 1000 };
        data.extend_from_slice(&((size as u32 / 4) | (delta << 5)).to_le_bytes());
        data.extend_from_slice(&900u16.to_le_bytes());
        data.extend_from_slice(&[0, 0]);
        data.extend_from_slice(&42i32.to_le_bytes());
        data.extend_from_slice(&(i as i32).to_le_bytes());
        data.resize(data.len() + size - 12, 0);
    }
    let mut pg = vec![0u8; 4096];
    pg[0..8].copy_from_slice(&start.to_le_bytes());
    let mut commit = data.len() as u64;
    match missed {
        Some(Some(m)) => {
            commit |= 0xffff_ffff_c000_0000;
            pg[16 + data.len()..24 + data.len()].copy_from_slice(&m.to_le_bytes());
        }
        Some(None) => commit |= 0xffff_ffff_8000_0000,
        None => {}
    }
    pg[8..16].copy_from_slice(&commit.to_le_bytes());
    pg[16..16 + data.len()].copy_from_slice(&data);
    pg
}

/// `==> NAME <==` and `trace-cmd report` of each part `trace-cmd split ARGS` makes of
/// `input`.
fn tracecmd_split_reports(input: &Path, args: &[&str]) -> Vec<u8> {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::copy(input, tmp.path().join("in.dat")).unwrap();
    let out = Command::new("trace-cmd")
        .args(["split", "-i", "in.dat"])
        .args(args)
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "trace-cmd split {args:?}");
    std::fs::remove_file(tmp.path().join("in.dat")).unwrap();
    reports(tmp.path(), &parts(tmp.path()), &tracecmd_report)
}

/// Lost-events marks (counted and not) move with their records into the parts: a part's
/// page that starts with such a record carries the mark, as trace-cmd's split writes it.
/// The input is written here and pinned (`results/split_dropped.written`); the goldens are
/// trace-cmd's split of that exact file (remade with TRACECTL_UPDATE_WRITTEN=1).
#[test]
fn split_keeps_dropped_events_marks_like_trace_cmd() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("dropped.dat");
    let mut cpu0 = tick_page(1_000_000_000, 30, None);
    cpu0.extend(tick_page(1_000_100_000, 30, Some(Some(55))));
    cpu0.extend(tick_page(1_000_200_000, 30, Some(None)));
    let mut cpu1 = tick_page(1_000_010_500, 25, Some(Some(7)));
    cpu1.extend(tick_page(1_000_150_500, 25, Some(None)));
    crate::support::synth::write_tick_file(&input, "42 ticker\n", vec![(0, cpu0), (1, cpu1)]);
    let mut pins = crate::support::pins::Pins::open("split_dropped.written");
    if let Some(why) = pins.check("dropped.dat", &std::fs::read(&input).unwrap()) {
        panic!("{why}");
    }
    pins.finish(
        "The file tests/it/split_goldens.rs writes; results/split/dropped-*.txt hold \
         trace-cmd's reports of trace-cmd split's parts of it.",
    );
    for (mode, args) in [
        ("e40r", &["-e", "40", "-r"][..]),
        ("p1r", &["-p", "1", "-r"][..]),
    ] {
        let golden = data(&format!("results/split/dropped-{mode}.txt"));
        if crate::support::pins::updating() {
            std::fs::write(&golden, tracecmd_split_reports(&input, args)).unwrap();
        }
        let want = std::fs::read(&golden).unwrap();
        let text = String::from_utf8_lossy(&want);
        assert!(
            text.contains("CPU:0 [55 EVENTS DROPPED]")
                && text.contains("CPU:1 [7 EVENTS DROPPED]")
                && text.contains("CPU:0 [EVENTS DROPPED]"),
            "{mode}: the golden shows the marks"
        );
        if trace_cmd_installed() {
            assert!(
                tracecmd_split_reports(&input, args) == want,
                "{mode}: trace-cmd split of the pinned file no longer gives {}",
                golden.display()
            );
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(&input, dir.path().join("in.dat")).unwrap();
        let mut a = vec!["split", "-i", "in.dat"];
        a.extend_from_slice(args);
        let out = run_in(dir.path(), &a);
        assert!(out.status.success(), "{mode}");
        let names = parts(dir.path());
        let got = reports(dir.path(), &names, &tracectl_report);
        assert!(
            got == want,
            "{mode}: tracectl report of our parts: {}",
            first_difference(&got, &want)
        );
        if trace_cmd_installed() {
            let theirs = reports(dir.path(), &names, &tracecmd_report);
            assert!(
                theirs == want,
                "{mode}: trace-cmd report of our parts: {}",
                first_difference(&theirs, &want)
            );
        }
    }
}

/// A page of a part that lost events precede and records fill: trace-cmd's split writes
/// its 8-byte count after the records whatever room is left, and trace-cmd report reads
/// the low 32 bits as the count. With 4 bytes left (CPU 0's 77, CPU 1's uncounted loss)
/// that half is in the page: our parts hold the same bytes and print the same marks. With
/// none left (CPU 0's uncounted loss, CPU 1's 55) it is past the page, and trace-cmd reads
/// the next page's timestamp as the count; our parts say the count is unknown there.
/// The input is written here and pinned (`results/split_full_pages.written`); the golden
/// is trace-cmd's report of trace-cmd split's part of it (remade with
/// TRACECTL_UPDATE_WRITTEN=1).
#[test]
fn split_full_page_after_lost_events_keeps_the_count_the_page_holds() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("full.dat");
    // 4080 bytes of records fill a page: 255 ticks of 16 bytes; 253 ticks and one record
    // of 28 bytes leave 4.
    let sizes = |ticks: usize, then: usize| {
        let mut v = vec![12; ticks];
        v.push(24);
        v.extend(std::iter::repeat_n(12, then));
        v
    };
    let mut cpu0 = tick_page(1_000_000_000, 30, None);
    cpu0.extend(tick_page(1_001_000_000, 255, Some(None)));
    // The part's page after the 77 takes records of the next input page too, up to 4
    // bytes short of full.
    cpu0.extend(tick_page(1_002_000_000, 200, Some(Some(77))));
    cpu0.extend(tick_page_sized(1_002_300_000, &sizes(53, 10), None));
    let mut cpu1 = tick_page_sized(1_000_500_000, &sizes(253, 0), Some(None));
    // ... and after the 55, up to full.
    cpu1.extend(tick_page(1_001_500_000, 200, Some(Some(55))));
    cpu1.extend(tick_page(1_001_800_000, 65, None));
    crate::support::synth::write_tick_file(&input, "42 ticker\n", vec![(0, cpu0), (1, cpu1)]);
    let mut pins = crate::support::pins::Pins::open("split_full_pages.written");
    if let Some(why) = pins.check("full.dat", &std::fs::read(&input).unwrap()) {
        panic!("{why}");
    }
    pins.finish(
        "The file tests/it/split_goldens.rs writes; results/split/dropped-full.txt holds \
         trace-cmd's report of trace-cmd split's part of it.",
    );
    let golden = data("results/split/dropped-full.txt");
    if crate::support::pins::updating() {
        std::fs::write(&golden, tracecmd_split_reports(&input, &[])).unwrap();
    }
    let theirs = std::fs::read_to_string(&golden).unwrap();
    if trace_cmd_installed() {
        assert!(
            tracecmd_split_reports(&input, &[]) == theirs.as_bytes(),
            "trace-cmd split of the pinned file no longer gives {}",
            golden.display()
        );
    }
    // trace-cmd's marks: the two counts in the page, the next pages' timestamps for the
    // two that are not.
    let marks: Vec<&str> = theirs.lines().filter(|l| l.contains("DROPPED")).collect();
    assert_eq!(
        marks,
        [
            "CPU:1 [EVENTS DROPPED]",
            "CPU:0 [1002000000 EVENTS DROPPED]",
            "CPU:1 [1001855000 EVENTS DROPPED]",
            "CPU:0 [77 EVENTS DROPPED]",
        ]
    );
    let want = theirs
        .replace(
            "CPU:0 [1002000000 EVENTS DROPPED]",
            "CPU:0 [EVENTS DROPPED]",
        )
        .replace(
            "CPU:1 [1001855000 EVENTS DROPPED]",
            "CPU:1 [EVENTS DROPPED]",
        );
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(&input, dir.path().join("in.dat")).unwrap();
    let out = run_in(dir.path(), &["split", "-i", "in.dat"]);
    assert!(out.status.success());
    let names = parts(dir.path());
    let got = reports(dir.path(), &names, &tracectl_report);
    assert!(
        got == want.as_bytes(),
        "tracectl report of our part: {}",
        first_difference(&got, want.as_bytes())
    );
    if trace_cmd_installed() {
        let got = reports(dir.path(), &names, &tracecmd_report);
        assert!(
            got == want.as_bytes(),
            "trace-cmd report of our part: {}",
            first_difference(&got, want.as_bytes())
        );
    }
}
