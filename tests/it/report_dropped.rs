//! Records that follow dropped events (a sub-buffer with the kernel's missed-events
//! flags and count): `CPU:N [M EVENTS DROPPED]` before a known event, and the end of the
//! whole report at an event the file has no format for, as trace-cmd 3.1.6 does (seen on
//! recordings that caught another tool's events while the kernel overwrote some).

use std::process::Command;

use crate::support::{pins, synth};

/// A sub-buffer of `tick`-shaped records with these event ids, 1 us apart from `start`;
/// with `missed`, the flags and count the kernel stores after lost events (its 64-bit
/// commit word carries the flags sign-extended).
fn page(start: u64, ids: &[u16], missed: Option<u64>) -> Vec<u8> {
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
    let mut commit = data.len() as u64;
    if let Some(m) = missed {
        commit |= 0xffff_ffff_c000_0000;
        pg[16 + data.len()..24 + data.len()].copy_from_slice(&m.to_le_bytes());
    }
    pg[8..16].copy_from_slice(&commit.to_le_bytes());
    pg[16..16 + data.len()].copy_from_slice(&data);
    pg
}

#[test]
fn a_record_after_dropped_events_prints_or_ends_the_report_like_trace_cmd() {
    let dir = tempfile::tempdir().unwrap();
    for (name, first) in [("known", 900u16), ("unknown", 777u16)] {
        let file = format!("dropped-{name}.dat");
        let f = dir.path().join(&file);
        let mut cpu1 = page(2_000_000_000, &[900, 900], None);
        cpu1.extend(page(2_500_000_000, &[first, 900], Some(55)));
        cpu1.extend(page(2_600_000_000, &[900, 900], None));
        let cpus = vec![
            (0, page(1_000_000_000, &[900, 900, 900], None)),
            (1, cpu1),
            (2, page(3_000_000_000, &[900, 900], None)),
        ];
        synth::write_tick_file(&f, "42 ticker\n", cpus);
        for (mode, args) in [("plain", &[][..]), ("cpu0", &["--cpu", "0"][..])] {
            let golden = pins::trace_cmd_report(
                &f,
                args,
                &format!("report_dropped/{name}-{mode}.txt"),
                &format!("report_dropped-{name}.written"),
                "A file tests/it/report_dropped.rs writes; results/report_dropped/ holds \
                 trace-cmd's reports of them.",
            );
            let dropped = golden.contains("CPU:1 [55 EVENTS DROPPED]");
            let whole = golden.contains("     3.000001: tick:");
            match (name, mode) {
                ("known", "plain") => assert!(dropped && whole, "{golden}"),
                ("known", _) => assert!(!dropped && golden.contains("1.000002"), "{golden}"),
                // The unknown event ends everything, CPU 0's records after it included.
                _ => assert!(!dropped && !whole, "{golden}"),
            }
            let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
                .current_dir(dir.path())
                .arg("report")
                .args(args)
                .args(["-i", &file])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                golden,
                "{name} {mode}"
            );
        }
    }
}
