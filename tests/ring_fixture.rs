//! Decoding the committed trees' trace_pipe_raw pages: every CPU's record count and
//! timestamps match the kernel's own `trace` text of the same stopped buffer.

use std::path::Path;

use tracectl::ring::{load_cpu_files, page_layout, CpuStream, Entry, Merge};
use tracectl::tracefs::Tracefs;

fn tree(name: &str) -> Tracefs {
    Tracefs::at(Path::new(env!("CARGO_MANIFEST_DIR")).join("tracefs-fixtures").join(name))
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
            let ts = rest.split_whitespace().nth(1).unwrap().trim_end_matches(':').to_string();
            (cpu, ts)
        })
        .collect()
}

fn check(name: &str) {
    let t = tree(name);
    let layout = page_layout(&t).unwrap();
    let data = load_cpu_files(&t, None).unwrap();
    let streams: Vec<_> = data.iter().map(|d| CpuStream::new(layout, d.cpu, &d.bytes)).collect();
    let ours: Vec<(u32, String)> = Merge::new(streams)
        .map(|e| match e.unwrap() {
            Entry::Event(r) => {
                // The kernel rounds to the nearest microsecond (ns2usecs adds 500).
                let us = (r.ts + 500) / 1000;
                (r.cpu, format!("{}.{:06}", us / 1_000_000, us % 1_000_000))
            }
            Entry::Lost { .. } => panic!("{name}: no events were lost in this capture"),
        })
        .collect();
    let kernel = kernel_lines(&t);
    assert_eq!(ours.len(), kernel.len(), "{name}: record count");
    for (i, (a, b)) in ours.iter().zip(&kernel).enumerate() {
        assert_eq!(a, b, "{name}: body line {}", i + 1);
    }
}

#[test]
fn sched_irq_tree_decodes_to_the_kernel_order_and_times() {
    check("linux-6.18-sched-irq");
}

#[test]
fn all_events_tree_decodes_to_the_kernel_order_and_times() {
    check("linux-6.18-all");
}
