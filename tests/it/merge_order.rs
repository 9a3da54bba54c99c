//! Cross-CPU merges of more than two CPUs, with an empty stream, streams that end early,
//! streams of several sub-buffers and equal timestamps: the ring merge (`ring::Merge`)
//! and the trace.dat report merge (`tracectl report`).
//!
//! The expected order is defined apart from either merge: all records, stably sorted by
//! (timestamp, CPU), so that equal timestamps go to the lower CPU and keep their order
//! within a CPU. The kernel's `trace` iterator and trace-cmd both take another CPU's
//! record only when its timestamp is strictly smaller, scanning CPUs upwards; for the
//! report, trace-cmd's own output of the same file is committed and compared too.

use crate::support::{pins, synth};

use std::process::Command;

use tracectl::event::HeaderPage;
use tracectl::ring::{CpuStream, Entry, Merge, PageLayout};

/// One CPU's records: absolute timestamps (ns, non-decreasing), each tagged
/// `cpu * 1000 + index` in its `n` field.
struct Cpu {
    cpu: u32,
    ts: Vec<u64>,
}

/// Five CPUs: 0 busy, 1 empty, 2 ending early, 3 sharing timestamps with 0 and 4 (and
/// twice with itself), 4 spread over several sub-buffers and starting last.
fn cpus() -> Vec<Cpu> {
    let busy: Vec<u64> = (0..40).map(|i| 1_000_000 + i * 1000).collect();
    let mut shared: Vec<u64> = busy.iter().step_by(3).copied().collect();
    shared.extend([1_040_000, 1_040_000, 1_050_000]);
    let late: Vec<u64> = (0..600).map(|i| 1_020_000 + i * 97).collect();
    vec![
        Cpu { cpu: 0, ts: busy },
        Cpu {
            cpu: 1,
            ts: Vec::new(),
        },
        Cpu {
            cpu: 2,
            ts: vec![999_000, 1_000_000, 1_003_000],
        },
        Cpu { cpu: 3, ts: shared },
        Cpu { cpu: 4, ts: late },
    ]
}

fn payload(cpu: u32, i: usize) -> [u8; 12] {
    let mut p = [0u8; 12];
    p[0..2].copy_from_slice(&900u16.to_le_bytes());
    p[4..8].copy_from_slice(&(100 + cpu as i32).to_le_bytes());
    p[8..12].copy_from_slice(&((cpu * 1000) as i32 + i as i32).to_le_bytes());
    p
}

/// The CPU's records as 4 KiB sub-buffers the way the kernel writes them (each page
/// starts at its first record's time; records carry deltas).
fn pages(c: &Cpu) -> Vec<u8> {
    let mut out = Vec::new();
    let per_page = 4080 / 16;
    for (chunk_no, chunk) in c.ts.chunks(per_page).enumerate() {
        let mut data = Vec::new();
        let mut prev = chunk[0];
        for (k, &ts) in chunk.iter().enumerate() {
            let delta = (ts - prev) as u32;
            prev = ts;
            data.extend_from_slice(&(3 | (delta << 5)).to_le_bytes());
            data.extend_from_slice(&payload(c.cpu, chunk_no * per_page + k));
        }
        let mut pg = vec![0u8; 4096];
        pg[0..8].copy_from_slice(&chunk[0].to_le_bytes());
        pg[8..16].copy_from_slice(&(data.len() as u64).to_le_bytes());
        pg[16..16 + data.len()].copy_from_slice(&data);
        out.extend(pg);
    }
    out
}

/// `(ts, cpu, n)` of every record, stably sorted by (timestamp, CPU).
fn expected() -> Vec<(u64, u32, i32)> {
    let mut all: Vec<(u64, u32, i32)> = cpus()
        .iter()
        .flat_map(|c| {
            c.ts.iter()
                .enumerate()
                .map(move |(i, &t)| (t, c.cpu, (c.cpu * 1000) as i32 + i as i32))
        })
        .collect();
    all.sort_by_key(|&(t, cpu, _)| (t, cpu));
    all
}

#[test]
fn the_order_under_test_has_ties_gaps_and_early_ends() {
    let e = expected();
    let ties = e.windows(2).filter(|w| w[0].0 == w[1].0).count();
    let cross_ties = e
        .windows(2)
        .filter(|w| w[0].0 == w[1].0 && w[0].1 != w[1].1)
        .count();
    assert!(cross_ties >= 10 && ties > cross_ties, "{ties} {cross_ties}");
    assert!(pages(&cpus()[4]).len() >= 3 * 4096);
    assert!(pages(&cpus()[1]).is_empty());
}

#[test]
fn ring_merge_of_five_cpus_is_a_stable_sort_by_time_and_cpu() {
    let hp = HeaderPage::parse(synth::HEADER_PAGE).unwrap();
    let layout = PageLayout::new(&hp, Some(4096), tracectl::endian::Endianness::Little);
    let cpus = cpus();
    let bytes: Vec<Vec<u8>> = cpus.iter().map(pages).collect();
    let streams: Vec<CpuStream> = cpus
        .iter()
        .zip(&bytes)
        .map(|(c, b)| CpuStream::new(layout, c.cpu, b))
        .collect();
    let got: Vec<(u64, u32, i32)> = Merge::new(streams)
        .map(|e| match e.unwrap() {
            Entry::Event(r) => (
                r.ts,
                r.cpu,
                i32::from_le_bytes(r.data[8..12].try_into().unwrap()),
            ),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(got, expected());
}

fn write_file(path: &std::path::Path) {
    let cpus = cpus().iter().map(|c| (c.cpu, pages(c))).collect();
    synth::write_tick_file(
        path,
        "100 zero
102 two
103 three
104 four
",
        cpus,
    );
}

/// `(cpu, n)` of each record line of a report (`comm-pid [cpu] ts: tick: n=N`).
fn records_of(report: &str) -> Vec<(u32, i32)> {
    report
        .lines()
        .filter(|l| l.contains(": tick:"))
        .map(|l| {
            let cpu = l[l.find('[').unwrap() + 1..l.find(']').unwrap()]
                .parse()
                .unwrap();
            let n = l.rsplit("n=").next().unwrap().trim().parse().unwrap();
            (cpu, n)
        })
        .collect()
}

/// The report of a five-CPU file: records in the stable (timestamp, CPU) order, and
/// byte for byte trace-cmd's output of the same (pinned) file.
#[test]
fn report_merge_of_five_cpus_is_a_stable_sort_by_time_and_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("five.dat");
    write_file(&f);
    let golden = pins::trace_cmd_report(
        &f,
        &[],
        "merge_order/five.txt",
        "merge_order.written",
        "The five-CPU file tests/it/merge_order.rs writes; results/merge_order/five.txt is \
         trace-cmd's report of it.",
    );
    let want: Vec<(u32, i32)> = expected().iter().map(|&(_, c, n)| (c, n)).collect();
    assert_eq!(records_of(&golden), want, "trace-cmd's order");
    let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .arg("report")
        .arg("-i")
        .arg(&f)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ours = String::from_utf8(out.stdout).unwrap();
    assert_eq!(records_of(&ours), want);
    assert!(ours == golden, "tracectl's text differs from trace-cmd's");
}

/// The 4-CPU recording trace-cmd made in a VM: tracectl's records come in trace-cmd's
/// order (the whole text is compared in tracecmd_goldens; this names the property).
#[test]
fn report_of_the_four_cpu_recording_keeps_trace_cmds_order() {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tracecmd");
    let golden = std::fs::read_to_string(data.join("results/4cpu-v7/plain.txt")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .current_dir(&data)
        .args(["report", "-i", "4cpu-v7.dat"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let ours = String::from_utf8(out.stdout).unwrap();
    let key = |l: &str| -> Option<(String, String)> {
        let open = l.find(" [")?;
        let close = l[open..].find("] ")? + open;
        let ts = l[close + 2..].split_whitespace().next()?.to_string();
        Some((l[open + 2..close].to_string(), ts))
    };
    let (g, o): (Vec<_>, Vec<_>) = (
        golden.lines().filter_map(key).collect(),
        ours.lines().filter_map(key).collect(),
    );
    let cpus: std::collections::BTreeSet<&str> = g.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(cpus.len(), 4, "{cpus:?}");
    assert!(g.len() > 1000);
    assert_eq!(o, g);
}
