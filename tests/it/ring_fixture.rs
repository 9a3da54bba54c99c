//! Decoding the committed trees' trace_pipe_raw pages: every CPU's record count and
//! timestamps match the kernel's own `trace` text of the same stopped buffer.

use std::path::Path;

use tracectl::ring::{load_cpu_files, page_layout, CpuStream, Entry, Merge};
use tracectl::tracefs::Tracefs;

fn tree(name: &str) -> Tracefs {
    Tracefs::at(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tracefs-fixtures")
            .join(name),
    )
}

/// (cpu, timestamp text) of every body line of the kernel's `trace`.
fn kernel_lines(t: &Tracefs) -> Vec<(u32, String)> {
    let text = t.read_string("trace").unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let open = l.find("] ").expect("cpu column");
            let cpu: u32 = l[open - 3..open].parse().unwrap();
            let rest = &l[open + 2..];
            let ts = rest
                .split_whitespace()
                .nth(1)
                .unwrap()
                .trim_end_matches(':')
                .to_string();
            (cpu, ts)
        })
        .collect()
}

fn check(name: &str) -> Vec<(u32, Option<u64>)> {
    let mut lost = Vec::new();
    let t = tree(name);
    let layout = page_layout(&t).unwrap();
    let data = load_cpu_files(&t, None).unwrap();
    let streams: Vec<_> = data
        .iter()
        .map(|d| CpuStream::new(layout, d.cpu, &d.bytes))
        .collect();
    let ours: Vec<(u32, String)> = Merge::new(streams)
        .filter_map(|e| match e.unwrap() {
            Entry::Lost { cpu, count, .. } => {
                lost.push((cpu, count));
                None
            }
            Entry::Event(r) => {
                // The kernel rounds to the nearest microsecond (ns2usecs adds 500).
                let us = (r.ts + 500) / 1000;
                Some((r.cpu, format!("{}.{:06}", us / 1_000_000, us % 1_000_000)))
            }
        })
        .collect();
    let kernel = kernel_lines(&t);
    assert_eq!(ours.len(), kernel.len(), "{name}: record count");
    for (i, (a, b)) in ours.iter().zip(&kernel).enumerate() {
        assert_eq!(a, b, "{name}: body line {}", i + 1);
    }
    lost
}

#[test]
fn sched_irq_tree_decodes_to_the_kernel_order_and_times() {
    assert_eq!(check("linux-6.18-sched-irq"), vec![]);
}

#[test]
fn all_events_tree_decodes_to_the_kernel_order_and_times() {
    assert_eq!(check("linux-6.18-all"), vec![]);
}

#[test]
fn sixteen_kib_sub_buffers_decode_to_the_kernel_order_and_times() {
    // buffer_subbuf_size_kb=16 while events/header_page still describes a 4 KiB page.
    let t = tree("linux-6.18-sched-subbuf16");
    assert_eq!(page_layout(&t).unwrap().subbuf_size, 16384);
    assert_eq!(check("linux-6.18-sched-subbuf16"), vec![]);
}

#[test]
fn overrun_tree_reports_the_overwritten_events_per_cpu() {
    // Both CPUs overran their 64 KiB buffers; the first sub-buffer of each says so, and
    // cpu1's stored count equals the `overrun:` of its stats (cpu0's page had no room
    // left for the count).
    let lost = check("linux-6.18-all-overrun");
    let t = tree("linux-6.18-all-overrun");
    let stats = t.read_string("per_cpu/cpu1/stats").unwrap();
    let overrun: u64 = stats
        .lines()
        .find_map(|l| l.strip_prefix("overrun:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(lost, vec![(0, None), (1, Some(overrun))]);
}
