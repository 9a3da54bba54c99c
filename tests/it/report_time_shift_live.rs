//! A guest trace (TIME_SHIFT option: clock offsets against the host, per CPU) reported by
//! `tracectl report` and by `trace-cmd report`: the shifted timestamps agree line for line.
//! The guest file is a real trace-cmd recording rewritten with the option added.

use crate::support::skips;

use crate::support::dat::*;

use std::process::Command;

use tracectl::dat::{
    buffers_of, opt, write_dat, Compression, DatFile, Metadata, NewOption, WriteOptions,
};

/// TIME_SHIFT payload: per CPU the given (time, offset) samples, scaling 1, no fractions.
fn time_shift(flags: u32, cpus: &[Vec<(i64, i64)>]) -> Vec<u8> {
    let mut d = Vec::new();
    d.extend_from_slice(&0x1234_5678_9abc_def0u64.to_le_bytes());
    d.extend_from_slice(&flags.to_le_bytes());
    d.extend_from_slice(&(cpus.len() as u32).to_le_bytes());
    for samples in cpus {
        d.extend_from_slice(&(samples.len() as u32).to_le_bytes());
        for (t, _) in samples {
            d.extend_from_slice(&t.to_le_bytes());
        }
        for (_, o) in samples {
            d.extend_from_slice(&o.to_le_bytes());
        }
        for _ in samples {
            d.extend_from_slice(&1i64.to_le_bytes());
        }
    }
    d
}

fn report(exe: &str, file: &str) -> String {
    let o = Command::new(exe)
        .args(["report", "-i", file])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{exe}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn guest_timestamps_are_shifted_like_trace_cmd() {
    if let Some(why) = skip_reason() {
        skips::skip(why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let host = dir.path().join("host.dat");
    tracecmd_record(&host, &["-e", "sched_switch", "-e", "sched_waking"]);
    let d = DatFile::open(&host).unwrap();
    // Sample times around the recording, so that every branch is taken: before the first
    // sample, between samples, after the last one; CPU 1 has a single sample.
    let first = report("trace-cmd", host.to_str().unwrap());
    let ts: Vec<u64> = first
        .lines()
        .filter_map(|l| {
            l.split("] ")
                .nth(1)?
                .split(':')
                .next()?
                .trim()
                .parse::<f64>()
                .ok()
        })
        .map(|s| (s * 1e9) as u64)
        .collect();
    assert!(ts.len() > 4, "{first}");
    let (lo, hi) = (ts[0] as i64, *ts.last().unwrap() as i64);
    let mid = (lo + hi) / 2;
    let cpu0 = vec![
        (mid, -1_500_000),
        (lo + (hi - lo) / 4, 2_000_000),
        (hi - (hi - lo) / 8, 7_777_777),
        (mid, 123),
    ];
    let cpu1 = vec![(lo, -40_000)];
    for (flags, name) in [(1u32, "interpolated.dat"), (0, "stepped.dat")] {
        let guest = dir.path().join(name);
        let mut options: Vec<NewOption> = d
            .options()
            .all
            .iter()
            .filter(|o| o.id != opt::TIME_SHIFT)
            .map(|o| NewOption {
                id: o.id,
                data: o.data.clone(),
            })
            .collect();
        options.push(NewOption {
            id: opt::TIME_SHIFT,
            data: time_shift(flags, &[cpu0.clone(), cpu1.clone()]),
        });
        let wo = WriteOptions {
            version: 7,
            compression: Compression::Zstd,
            endian: d.endian(),
            long_size: d.long_size() as u8,
            page_size: d.buffers()[0].page_size as u32,
        };
        write_dat(
            &guest,
            &wo,
            &Metadata::from_dat(&d).unwrap(),
            &options,
            buffers_of(&d).unwrap(),
        )
        .unwrap();
        let g = guest.to_str().unwrap();
        let (theirs, ours) = (
            report("trace-cmd", g),
            report(env!("CARGO_BIN_EXE_tracectl"), g),
        );
        assert_ne!(theirs, first, "trace-cmd shifted the guest's timestamps");
        let diff: Vec<_> = theirs
            .lines()
            .zip(ours.lines())
            .filter(|(a, b)| a != b)
            .take(5)
            .collect();
        assert!(
            diff.is_empty() && theirs.lines().count() == ours.lines().count(),
            "{name}: first differences (trace-cmd, ours): {diff:#?}"
        );
    }
}
