//! `tracectl report` on bad input: clear errors naming the file, warnings for damaged
//! pages, never a panic.

use crate::support::{pins, synth};

use std::path::Path;
use std::process::{Command, Output};

/// A page with `count` `tick` records, 1 us apart, from `start` ns.
fn page(start: u64, count: u32) -> Vec<u8> {
    let mut data = Vec::new();
    for i in 0..count {
        let delta: u32 = if i == 0 { 0 } else { 1000 };
        data.extend_from_slice(&(3 | (delta << 5)).to_le_bytes()); // 12-byte payload
        data.extend_from_slice(&900u16.to_le_bytes());
        data.extend_from_slice(&[0, 0]);
        data.extend_from_slice(&42i32.to_le_bytes());
        data.extend_from_slice(&(i as i32).to_le_bytes());
    }
    let mut pg = vec![0u8; 4096];
    pg[0..8].copy_from_slice(&start.to_le_bytes());
    pg[8..16].copy_from_slice(&(data.len() as u64).to_le_bytes());
    pg[16..16 + data.len()].copy_from_slice(&data);
    pg
}

fn write(path: &Path, pages: Vec<u8>) {
    synth::write_tick_file(
        path,
        "42 ticker
",
        vec![(0, pages)],
    );
}

fn report(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .arg("report")
        .args(args)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The file is pinned (see `pins`) and trace-cmd's report of it is committed, so both
/// tools' text is compared with or without trace-cmd installed.
#[test]
fn good_file_matches_trace_cmd() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("ok.dat");
    write(&f, page(1_000_000_000, 3));
    let golden = pins::trace_cmd_report(
        &f,
        &[],
        "report_errors/ok.txt",
        "report_errors.written",
        "The file tests/it/report_errors.rs writes; results/report_errors/ok.txt is trace-cmd's report of it.",
    );
    let out = report(&["-i", f.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), golden);
}

#[test]
fn damaged_page_is_skipped_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bad-page.dat");
    let mut pages = page(1_000_000_000, 2);
    let mut bad = page(2_000_000_000, 2);
    bad[8..16].copy_from_slice(&9999u64.to_le_bytes()); // commit beyond the page
    pages.extend(bad);
    pages.extend(page(3_000_000_000, 1));
    write(&f, pages);
    let out = report(&["-i", f.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().count(), 1 + 2 + 1, "{stdout}");
    assert!(stdout.contains("     3.000000: tick"), "{stdout}");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("warning") && stderr.contains("commit"),
        "{stderr}"
    );
}

#[test]
fn missing_and_truncated_files_are_errors_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.dat");
    let out = report(&["-i", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("nope.dat"),
        "{}",
        text(&out.stderr)
    );

    let f = dir.path().join("cut.dat");
    write(&f, page(1_000_000_000, 3));
    let bytes = std::fs::read(&f).unwrap();
    std::fs::write(&f, &bytes[..bytes.len() / 3]).unwrap();
    let out = report(&["-i", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(
        err.contains("cut.dat") && !err.contains("panicked"),
        "{err}"
    );

    std::fs::write(&f, b"not a trace file at all").unwrap();
    let out = report(&["-i", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!text(&out.stderr).contains("panicked"));
}

#[test]
fn bad_filters_are_errors_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("ok.dat");
    write(&f, page(1_000_000_000, 3));
    let f = f.to_str().unwrap();
    for (filter, says) in [
        ("nosuch", "no event of the file matches"),
        ("tick:n==", "missing right operand"),
        ("tick:(n==1", "("),
    ] {
        let out = report(&["-i", f, "-F", filter]);
        assert_eq!(out.status.code(), Some(1), "-F {filter}");
        let err = text(&out.stderr);
        assert!(
            err.contains(says) && err.contains("-E"),
            "-F {filter}: {err}"
        );
    }
    // A field the event lacks makes the comparison false, as in trace-cmd.
    let out = report(&["-i", f, "-F", "tick:nosuchfield==1"]);
    assert!(out.status.success());
    assert_eq!(text(&out.stdout), "cpus=1\n");
    let out = report(&["-i", f, "-F", "tick:n>=1"]);
    assert_eq!(text(&out.stdout).lines().count(), 3);
}

/// The kallsyms section of a v7 file is decompressed when a record first needs a
/// symbol. A damaged one does not stop the file from opening nor a report that needs no
/// symbol; a report that needs one prints its records with bare addresses and a warning
/// naming the file, the section and its offset; `-f`, which lists kallsyms, fails.
#[test]
fn damaged_kallsyms_section_is_named_when_a_symbol_is_needed() {
    use tracectl::dat::DatFile;
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("ks.dat");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tracecmd/2cpu-v7.dat");
    let mut bytes = std::fs::read(data).unwrap();
    std::fs::write(&f, &bytes).unwrap();
    let at = DatFile::open(&f).unwrap().kallsyms_offset() as usize;
    assert!(at > 0, "2cpu-v7.dat has a kallsyms section");
    // The zstd frame's magic, after the 16-byte section header and the two sizes.
    for b in &mut bytes[at + 24..at + 28] {
        *b ^= 0x5a;
    }
    std::fs::write(&f, &bytes).unwrap();

    let d = DatFile::open(&f).unwrap();
    assert!(
        d.kallsyms_error().is_none(),
        "opening does not read kallsyms"
    );
    let e = d.kallsyms().unwrap_err();
    assert_eq!(e.section, "kallsyms");
    assert!(e.to_string().contains("ks.dat"), "{e}");
    assert!(d.kallsyms_error().is_some());

    let fs = f.to_str().unwrap();
    let out = report(&["-i", fs, "-F", "sched_switch"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "", "no record needed a symbol");

    let out = report(&["-i", fs]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("ks.dat: kallsyms at offset {}", at + 16))
            && err.contains("addresses were printed without symbol names")
            && !err.contains("panicked"),
        "{err}"
    );
    assert!(text(&out.stdout).contains("kmalloc:"));

    let out = report(&["-f", "-i", fs]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("ks.dat") && err.contains("kallsyms"), "{err}");
}
