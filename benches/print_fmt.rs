//! Side by side, in one run, on the committed pages of `tracefs-fixtures/linux-6.18-all`:
//! the print-fmt engine (the event model's text for each record) against a baseline that
//! formats three numbers of each record with `write!`. The ratio is what to read; absolute
//! times on a shared machine are noise.
//!
//! Run with `cargo bench --bench print_fmt` (`BENCH_ROUNDS` sets the rounds, default 20).

use std::hint::black_box;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use tracectl::event::{EventFormatter, EventPrinter, Record};
use tracectl::ring::{load_cpu_files, page_layout, CpuStream, Entry, Merge};
use tracectl::tracefs::Tracefs;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tracefs-fixtures/linux-6.18-all");
    let t = Tracefs::at(&dir);
    let printer = EventPrinter::from_source(&t).unwrap();
    let layout = page_layout(&t).unwrap();
    let data = load_cpu_files(&t, None).unwrap();
    let streams = data
        .iter()
        .map(|d| CpuStream::new(layout, d.cpu, &d.bytes))
        .collect();
    let recs: Vec<Record> = Merge::new(streams)
        .filter_map(|e| match e.unwrap() {
            Entry::Event(r) => Some(r),
            Entry::Lost { .. } => None,
        })
        .collect();
    let rounds: usize = std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let mut out = Vec::with_capacity(1 << 22);
    // Warm the lazily compiled formats first.
    for r in &recs {
        printer.write_event(r, &mut out);
    }
    let n = (recs.len() * rounds) as f64;
    let start = Instant::now();
    for _ in 0..rounds {
        for r in &recs {
            out.clear();
            printer.write_event(r, &mut out);
            black_box(&out);
        }
    }
    let ours = start.elapsed().as_nanos() as f64 / n;
    let start = Instant::now();
    for _ in 0..rounds {
        for r in &recs {
            out.clear();
            let a = r
                .data
                .get(8..16)
                .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap()));
            let b = r
                .data
                .get(4..8)
                .map_or(0, |b| i32::from_le_bytes(b.try_into().unwrap()));
            let _ = write!(out, "a={a:#x} b={b} ts={}", r.ts);
            black_box(&out);
        }
    }
    let base = start.elapsed().as_nanos() as f64 / n;
    println!(
        "{} records x {rounds}: print fmt engine {ours:.0} ns/event, write! baseline {base:.0} ns/event, ratio {:.2}",
        recs.len(),
        ours / base
    );
}
