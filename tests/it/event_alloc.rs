//! Printing a record allocates nothing: the compiled program reads fields by index and
//! writes into the caller's buffer.

use crate::support::skips;

use crate::support::event_oracle;

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use tracectl::event::EventFormatter;
use tracectl::event::{EventPrinter, HeaderPage, Record};
use tracectl::tracefs::Tracefs;

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        System.realloc(p, l, n)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn printing_records_does_not_allocate() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tracefs-fixtures/linux-6.18-all");
    if !dir.join("trace").exists() {
        skips::skip("tracefs-fixtures/linux-6.18-all is not in this checkout");
        return;
    }
    let t = Tracefs::at(&dir);
    let printer = EventPrinter::from_source(&t).unwrap();
    let header = HeaderPage::parse(&t.read_string("events/header_page").unwrap()).unwrap();
    let mut recs = Vec::new();
    for (cpu, bytes) in event_oracle::fixture_raw(&t) {
        for r in event_oracle::walk_pages(&bytes, &header, 4096) {
            recs.push((cpu, r));
        }
    }
    let mut out = Vec::with_capacity(1 << 20);
    // First pass: schemas are parsed lazily on first use.
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
    let mut per_event: std::collections::BTreeMap<String, u64> = Default::default();
    for (cpu, r) in &recs {
        out.clear();
        let rec = Record {
            cpu: *cpu,
            ts: r.ts,
            data: &r.data,
        };
        let before = ALLOCS.load(Ordering::Relaxed);
        printer.write_event(&rec, &mut out);
        let n = ALLOCS.load(Ordering::Relaxed) - before;
        if n > 0 {
            let name = printer
                .registry
                .of(&rec)
                .map(|s| s.full_name())
                .unwrap_or_default();
            *per_event.entry(name).or_default() += n;
        }
    }
    assert!(recs.len() > 10_000);
    assert!(
        per_event.is_empty(),
        "allocations while printing: {per_event:?}"
    );
}
