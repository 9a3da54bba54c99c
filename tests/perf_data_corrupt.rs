//! Truncated, bit-flipped and size-inflated copies of real perf.data files (recorded by
//! perf 6.1, under tests/data/perf) give errors naming an offset, never a panic, and
//! reading them allocates memory bounded by the file's size.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use tracectl::dat::TracingData;
use tracectl::event::KallsymsSource;
use tracectl::perf::data::PerfData;
use tracectl::perf::machine::Machine;
use tracectl::render::perf_script::{PerfScript, ScriptOutput};
use tracectl::render::tracecmd::DatCatalog;

struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let now = LIVE.fetch_add(l.size(), Ordering::Relaxed) + l.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        System.dealloc(p, l)
    }
}

#[global_allocator]
static A: Counting = Counting;

const FILES: &[&str] = &[
    "tp-sched.data",
    "tp-callchain.data",
    "cc-spin.data",
    "tc-spin.data",
    "dwarf-calls.data",
];

fn data(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/perf")
            .join(name),
    )
    .unwrap()
}

/// Parse everything `tracectl perf script` would: header, attrs, features, tracing
/// data, every record, and the text of every sample.
fn read_everything(bytes: Vec<u8>, symfs: &Path) -> Result<usize, String> {
    let f = PerfData::from_bytes(bytes, "bad.data").map_err(|e| e.to_string())?;
    let catalog = match f.tracing_data() {
        Some((b, off)) => Some(
            TracingData::parse(b, Path::new("bad.data"), off)
                .map(|t| DatCatalog::from_tracing_data(&t, KallsymsSource::default()))
                .map_err(|e| e.to_string())?,
        ),
        None => None,
    };
    for r in f.records() {
        let r = r.map_err(|e| e.to_string())?;
        f.decode(&r).map_err(|e| e.to_string())?;
    }
    let machine = Machine::new(KallsymsSource::default(), Some(symfs.to_path_buf()));
    let mut s = PerfScript::new(&f, machine, catalog, &[]).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    s.run(&mut out, ScriptOutput::Text)
        .map_err(|e| e.to_string())?;
    Ok(out.len())
}

fn check(bytes: Vec<u8>, symfs: &Path, what: &str) -> bool {
    let len = bytes.len();
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let r = std::panic::catch_unwind(|| read_everything(bytes, symfs));
    let peak = PEAK.load(Ordering::Relaxed) - before;
    assert!(r.is_ok(), "{what}: panicked");
    assert!(
        peak < 64 * len + (16 << 20),
        "{what}: reading a {len}-byte file allocated {peak} bytes"
    );
    match r {
        Ok(Ok(_)) => false,
        Ok(Err(e)) => {
            assert!(
                e.contains("bad.data") && e.contains("offset"),
                "{what}: the error names the file and an offset: {e}"
            );
            true
        }
        Err(_) => panic!("{what}: panicked"),
    }
}

#[test]
fn perf_data_corrupt_copies_give_errors_not_panics() {
    let empty = tempfile::tempdir().unwrap();
    let repo_symfs = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf/symfs");
    for name in FILES {
        // The dwarf samples are unwound with the program's own .eh_frame, so that
        // damaged registers and stack copies go through the unwinder.
        let symfs = if name.starts_with("dwarf") {
            repo_symfs.as_path()
        } else {
            empty.path()
        };
        let orig = data(name);
        assert!(
            read_everything(orig.clone(), symfs).unwrap() > 0,
            "{name} reads"
        );

        // Truncations: densely through the header and attrs, then over the whole file.
        let mut cuts: Vec<usize> = (0..400).step_by(5).collect();
        cuts.extend((1..60).map(|i| orig.len() * i / 60));
        let mut errors = 0;
        for cut in cuts {
            if check(orig[..cut].to_vec(), symfs, &format!("{name} cut at {cut}")) {
                errors += 1;
            }
        }
        assert!(
            errors > 100,
            "{name}: truncated copies are refused ({errors})"
        );

        // Bit flips at deterministic pseudo-random places.
        let mut x: u64 = 0x9e3779b97f4a7c15;
        for i in 0..300 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut b = orig.clone();
            let at = if i % 3 == 0 {
                (x as usize) % 400.min(b.len())
            } else {
                (x as usize) % b.len()
            };
            b[at] ^= 1 << (x >> 60 & 7);
            check(b, symfs, &format!("{name} bit flip at {at}"));
        }

        // Huge sizes: every 4-aligned u32 and u64 of the first 2 KiB (header, attrs,
        // ids and the first records) set to all ones.
        for at in (0..2048.min(orig.len() - 8)).step_by(4) {
            for width in [4usize, 8] {
                if at + width > orig.len() {
                    continue;
                }
                let mut b = orig.clone();
                b[at..at + width].fill(0xff);
                check(b, symfs, &format!("{name} ones at {at}"));
            }
        }
    }
}
