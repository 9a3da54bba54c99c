//! `report --first-event --last-event`: each CPU's first and last record, and a record of
//! an event the file has no format for, which trace-cmd prints as `[UNKNOWN EVENT]`
//! instead of its time (seen on recordings that caught another tool's events).

use std::process::Command;

use crate::support::{pins, synth};

/// A sub-buffer of `tick`-shaped records with the given event ids, 1 us apart from `start`.
fn page(start: u64, ids: &[u16]) -> Vec<u8> {
    let mut data = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let delta: u32 = if i == 0 { 0 } else { 1000 };
        data.extend_from_slice(&(3 | (delta << 5)).to_le_bytes());
        data.extend_from_slice(&id.to_le_bytes());
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

#[test]
fn unknown_first_or_last_events_print_as_trace_cmd_prints_them() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("firstlast.dat");
    // CPU 0 starts with an unknown event, CPU 1 ends with one (on its second page), CPU 2
    // has only known ones.
    let mut cpu1 = page(2_000_000_000, &[900, 900]);
    cpu1.extend(page(2_500_000_000, &[900, 777]));
    let cpus = vec![
        (0, page(1_000_000_000, &[901, 900, 900])),
        (1, cpu1),
        (2, page(3_000_000_000, &[900, 900])),
    ];
    synth::write_tick_file(&f, "42 ticker\n", cpus);
    let args = ["--first-event", "--last-event"];
    let golden = pins::trace_cmd_report(
        &f,
        &args,
        "report_first_last/firstlast.txt",
        "report_first_last.written",
        "The file tests/it/report_first_last.rs writes; results/report_first_last/firstlast.txt \
         is trace-cmd's report --first-event --last-event of it.",
    );
    assert!(golden.contains("[UNKNOWN EVENT]"), "{golden}");
    let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .current_dir(dir.path())
        .arg("report")
        .args(args)
        .args(["-i", "firstlast.dat"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), golden);
}
