//! Side by side, in one run, on the committed pages of `tracefs-fixtures/linux-6.18-all`:
//!
//! * baseline: a plain loop that walks the record headers of little-endian 64-bit pages
//!   (no checks, no merge), the floor any decoder is measured against;
//! * decode: `CpuStream` + `Merge` producing `Record`s with absolute timestamps;
//! * render: decode plus the kernel-style context columns (comm-pid, cpu, flags, time),
//!   then the whole line with the event model's print-fmt text, into a 64 KiB buffer
//!   handed on whenever it fills, as `tracectl stream` writes to stdout.
//!
//! Run with `cargo bench --bench ring_decode`; prints ns/event and the ratios.

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use tracectl::event::{Kallsyms, PrintEnv, PrintkFormats, Registry};
use tracectl::render::{Comms, KernelStyle};
use tracectl::ring::{load_cpu_files, page_layout, CpuStream, Entry, Merge, PageLayout};
use tracectl::tracefs::Tracefs;

fn baseline(layout: &PageLayout, bytes: &[u8]) -> (u64, u64) {
    let (mut n, mut sum) = (0u64, 0u64);
    for page in bytes.chunks_exact(layout.subbuf_size) {
        let mut ts = u64::from_le_bytes(page[0..8].try_into().unwrap());
        let commit =
            (u64::from_le_bytes(page[8..16].try_into().unwrap()) & ((1 << 27) - 1)) as usize;
        let mut pos = 16;
        let end = 16 + commit;
        while pos + 4 <= end {
            let w = u32::from_le_bytes(page[pos..pos + 4].try_into().unwrap());
            let (tl, delta) = (w & 31, u64::from(w >> 5));
            match tl {
                0 => {
                    let len =
                        u32::from_le_bytes(page[pos + 4..pos + 8].try_into().unwrap()) as usize;
                    ts += delta;
                    sum = sum.wrapping_add(ts);
                    n += 1;
                    pos += 4 + ((len + 3) & !3);
                }
                29 => {
                    if delta == 0 {
                        break;
                    }
                    pos +=
                        4 + u32::from_le_bytes(page[pos + 4..pos + 8].try_into().unwrap()) as usize;
                }
                30 | 31 => pos += 8,
                _ => {
                    ts += delta;
                    sum = sum.wrapping_add(ts);
                    n += 1;
                    pos += 4 + tl as usize * 4;
                }
            }
        }
    }
    (n, sum)
}

/// The output size at which `tracectl stream` writes its buffer out.
const FLUSH: usize = 1 << 16;

#[inline]
fn flush(out: &mut Vec<u8>) {
    if out.len() >= FLUSH {
        black_box(&out[..]);
        out.clear();
    }
}

fn time<F: FnMut() -> u64>(rounds: u32, mut f: F) -> (f64, u64) {
    let mut best = f64::MAX;
    let mut events = 0;
    for _ in 0..rounds {
        let start = Instant::now();
        events = f();
        best = best.min(start.elapsed().as_secs_f64());
    }
    (best * 1e9 / events as f64, events)
}

fn main() {
    let t =
        Tracefs::at(Path::new(env!("CARGO_MANIFEST_DIR")).join("tracefs-fixtures/linux-6.18-all"));
    let layout = page_layout(&t).unwrap();
    let data = load_cpu_files(&t, None).unwrap();
    let comms = Comms::from_saved_cmdlines(&t.read_string("saved_cmdlines").unwrap());
    let style = KernelStyle::from_tracefs(&t, layout.endian);
    let rounds = 30;

    let (base_ns, base_n) = time(rounds, || {
        let mut n = 0;
        for d in &data {
            let (c, s) = baseline(&layout, &d.bytes);
            black_box(s);
            n += c;
        }
        n
    });
    let (dec_ns, dec_n) = time(rounds, || {
        let streams = data
            .iter()
            .map(|d| CpuStream::new(layout, d.cpu, &d.bytes))
            .collect();
        let mut n = 0;
        for e in Merge::new(streams) {
            if let Ok(Entry::Event(r)) = e {
                black_box(r.data);
                n += 1;
            }
        }
        n
    });
    // Lines go into a 64 KiB buffer handed on (here: to black_box) whenever it fills, as
    // `tracectl stream` writes them to stdout.
    let mut out = Vec::with_capacity(FLUSH + 4096);
    let (ren_ns, _) = time(rounds, || {
        out.clear();
        let streams = data
            .iter()
            .map(|d| CpuStream::new(layout, d.cpu, &d.bytes))
            .collect();
        let mut n = 0;
        for e in Merge::new(streams) {
            if let Ok(Entry::Event(r)) = e {
                style.write_context(&mut out, &r, &comms);
                out.push(b'\n');
                flush(&mut out);
                n += 1;
            }
        }
        black_box(&out);
        n
    });
    let registry = Registry::from_source(&t).unwrap();
    let ksyms = zstd::decode_all(&std::fs::read(t.path("host/kallsyms.zst")).unwrap()[..]).unwrap();
    let kallsyms = Kallsyms::parse(&String::from_utf8_lossy(&ksyms));
    let printk = PrintkFormats::parse(&t.read_string("printk_formats").unwrap());
    let env = PrintEnv {
        kallsyms: Some(&kallsyms),
        functions: None,
        printk: Some(&printk),
        endian: layout.endian,
        long_size: registry.long_size(),
        hz: None,
        style: tracectl::event::PrintStyle::Kernel,
        time_in_ns: true,
    };
    let (full_ns, _) = time(rounds, || {
        out.clear();
        let streams = data
            .iter()
            .map(|d| CpuStream::new(layout, d.cpu, &d.bytes))
            .collect();
        let mut n = 0;
        for e in Merge::new(streams) {
            if let Ok(Entry::Event(r)) = e {
                style.write_context(&mut out, &r, &comms);
                registry.write_event(&r, &env, &mut out);
                out.push(b'\n');
                flush(&mut out);
                n += 1;
            }
        }
        black_box(&out);
        n
    });
    assert_eq!(
        base_n, dec_n,
        "baseline and decoder disagree on the event count"
    );
    println!("{dec_n} events, best of {rounds} rounds");
    println!("baseline header walk (one CPU at a time, no merge): {base_ns:6.1} ns/event");
    println!("decode + merge into Records:                        {dec_ns:6.1} ns/event ({:.2}x baseline)", dec_ns / base_ns);
    println!("decode + merge + kernel-style context columns:      {ren_ns:6.1} ns/event ({:.2}x baseline)", ren_ns / base_ns);
    println!("decode + merge + whole kernel-style line:           {full_ns:6.1} ns/event ({:.2}x baseline)", full_ns / base_ns);
}
