//! Side-by-side timing of the print-fmt engine on the committed all-events tree:
//! `cargo test --release --test event_bench -- --ignored --nocapture`.
//! The baseline formats three numbers of each record with `write!`; the ratio is what to
//! read, absolute times on a shared machine are noise.

mod event_oracle;

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use tracectl::event::EventFormatter;
use tracectl::event::{EventPrinter, HeaderPage, Record};
use tracectl::tracefs::Tracefs;

#[test]
#[ignore = "timing; run with --release --ignored"]
fn print_fmt_engine_ns_per_event() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tracefs-fixtures/linux-6.18-all");
    let t = Tracefs::at(&dir);
    let printer = EventPrinter::from_source(&t).unwrap();
    let header = HeaderPage::parse(&t.read_string("events/header_page").unwrap()).unwrap();
    let mut recs = Vec::new();
    for (cpu, bytes) in event_oracle::fixture_raw(&t) {
        for r in event_oracle::walk_pages(&bytes, &header, 4096) {
            recs.push((cpu, r));
        }
    }
    let mut out = Vec::with_capacity(1 << 22);
    for (cpu, r) in &recs {
        printer.write_event(
            &Record {
                cpu: *cpu,
                ts: r.ts,
                data: &r.data,
            },
            &mut out,
        );
    }
    let rounds = std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let n = (recs.len() * rounds) as f64;
    let start = Instant::now();
    for _ in 0..rounds {
        for (cpu, r) in &recs {
            out.clear();
            printer.write_event(
                &Record {
                    cpu: *cpu,
                    ts: r.ts,
                    data: &r.data,
                },
                &mut out,
            );
        }
    }
    let ours = start.elapsed().as_nanos() as f64 / n;
    let start = Instant::now();
    for _ in 0..rounds {
        for (_, r) in &recs {
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
        }
    }
    let base = start.elapsed().as_nanos() as f64 / n;
    eprintln!(
        "{} records x {rounds}: print fmt engine {ours:.0} ns/event, write! baseline {base:.0} ns/event, ratio {:.2}",
        recs.len(),
        ours / base
    );
}
