//! Synthesized sub-buffers in both byte orders and both long sizes.

use super::*;
use crate::endian::Endianness;

/// Builds a sub-buffer the way the kernel's writer lays one out.
struct PageBuilder {
    layout: PageLayout,
    body: Vec<u8>,
}

impl PageBuilder {
    fn new(layout: PageLayout) -> Self {
        PageBuilder {
            layout,
            body: Vec::new(),
        }
    }
    fn u32(&mut self, v: u32) {
        let b = if self.layout.endian.is_big() {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        };
        self.body.extend_from_slice(&b);
    }
    fn header(&mut self, type_len: u32, delta: u32) {
        let w = if self.layout.endian.is_big() {
            (type_len << 27) | delta
        } else {
            (delta << 5) | type_len
        };
        self.u32(w);
    }
    /// A data record, small (type_len) or large (type 0 + length word).
    fn event(&mut self, delta: u32, payload: &[u8]) {
        let padded = payload.len().div_ceil(4) * 4;
        if padded <= 112 {
            self.header((padded / 4) as u32, delta);
        } else {
            self.header(0, delta);
            self.u32(padded as u32 + 4);
        }
        self.body.extend_from_slice(payload);
        self.body
            .resize(self.body.len() + padded - payload.len(), 0);
    }
    fn extend(&mut self, delta: u64) {
        self.header(30, (delta & ((1 << 27) - 1)) as u32);
        self.u32((delta >> 27) as u32);
    }
    fn absolute(&mut self, ts: u64) {
        self.header(31, (ts & ((1 << 27) - 1)) as u32);
        self.u32(((ts >> 27) & 0xffff_ffff) as u32);
    }
    fn discard(&mut self, delta: u32, len: u32) {
        self.header(29, delta);
        self.u32(len);
        self.body.resize(self.body.len() + len as usize - 4, 0xee);
    }
    fn finish(&self, ts: u64, flags: u64, stored_missed: Option<u64>) -> Vec<u8> {
        let l = &self.layout;
        let mut page = vec![0u8; l.subbuf_size];
        let put = |page: &mut Vec<u8>, off: usize, v: u64, size: usize| {
            let bytes = if l.endian.is_big() {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            };
            let bytes = if l.endian.is_big() {
                &bytes[8 - size..]
            } else {
                &bytes[..size]
            };
            page[off..off + size].copy_from_slice(bytes);
        };
        put(&mut page, l.timestamp_offset, ts, 8);
        put(
            &mut page,
            l.commit_offset,
            self.body.len() as u64 | flags,
            l.long_size,
        );
        page[l.data_offset..l.data_offset + self.body.len()].copy_from_slice(&self.body);
        if let Some(n) = stored_missed {
            put(&mut page, l.data_offset + self.body.len(), n, l.long_size);
        }
        page
    }
}

fn layout(long_size: usize, endian: Endianness, subbuf_size: usize) -> PageLayout {
    PageLayout {
        timestamp_offset: 0,
        commit_offset: 8,
        long_size,
        data_offset: 8 + long_size,
        subbuf_size,
        endian,
    }
}

fn all_layouts() -> Vec<PageLayout> {
    let mut v = Vec::new();
    for long in [4, 8] {
        for endian in [Endianness::Little, Endianness::Big] {
            for size in [4096, 16384] {
                v.push(layout(long, endian, size));
            }
        }
    }
    v
}

fn events(stream: CpuStream<'_>) -> Vec<(u64, Vec<u8>)> {
    stream
        .map(|e| match e.unwrap() {
            Entry::Event(r) => (r.ts, r.data.to_vec()),
            Entry::Lost { count, .. } => (u64::MAX, format!("lost {count:?}").into_bytes()),
        })
        .collect()
}

#[test]
fn decodes_every_record_type_in_every_layout() {
    for l in all_layouts() {
        let mut b = PageBuilder::new(l);
        b.event(5, &[1, 2, 3, 4, 5]); // padded to 8
        b.discard(7, 20); // a discarded event: skipped, its delta still counts
        b.extend(3 << 27 | 9); // needs more than 27 bits
        b.event(1, &[9; 200]); // type 0 with a length word
        b.absolute(0x0123_4567_89ab);
        b.event(0, &[7; 112]); // the largest small record
        let page = b.finish(1000, 0, None);
        let got = events(CpuStream::new(l, 3, &page));
        let mut first = vec![1, 2, 3, 4, 5];
        first.resize(8, 0);
        assert_eq!(
            got,
            vec![
                (1005, first),
                (1005 + 7 + (3 << 27 | 9) + 1, vec![9; 200]),
                (0x0123_4567_89ab, vec![7; 112]),
            ],
            "{l:?}"
        );
    }
}

#[test]
fn absolute_time_stamp_keeps_the_top_bits_of_the_current_time() {
    let l = layout(8, Endianness::Little, 4096);
    let mut b = PageBuilder::new(l);
    b.absolute(0x10);
    b.event(0, &[0; 4]);
    let base = 0xf800_0000_0000_0000u64;
    let page = b.finish(base | 5, 0, None);
    let got = events(CpuStream::new(l, 0, &page));
    assert_eq!(got[0].0, base | 0x10);
}

#[test]
fn padding_with_zero_delta_ends_the_page() {
    let l = layout(8, Endianness::Little, 4096);
    let mut b = PageBuilder::new(l);
    b.event(1, &[1; 4]);
    b.header(29, 0);
    b.u32(0);
    b.event(1, &[2; 4]); // never reached
    let got = events(CpuStream::new(l, 0, &b.finish(0, 0, None)));
    assert_eq!(got, vec![(1, vec![1; 4])]);
}

#[test]
fn missed_events_with_and_without_a_stored_count() {
    for l in all_layouts() {
        let mut b = PageBuilder::new(l);
        b.event(1, &[1; 4]);
        let stored = b.finish(10, (1 << 31) | (1 << 30), Some(42));
        let unknown = b.finish(20, 1 << 31, None);
        let mut bytes = stored.clone();
        bytes.extend_from_slice(&unknown);
        let got: Vec<Entry> = CpuStream::new(l, 1, &bytes).map(Result::unwrap).collect();
        assert_eq!(got.len(), 4, "{l:?}");
        assert_eq!(
            got[0],
            Entry::Lost {
                cpu: 1,
                ts: 10,
                count: Some(42)
            }
        );
        assert!(matches!(got[1], Entry::Event(r) if r.ts == 11 && r.cpu == 1));
        assert_eq!(
            got[2],
            Entry::Lost {
                cpu: 1,
                ts: 20,
                count: None
            }
        );
    }
}

#[test]
fn a_malformed_page_is_reported_and_the_next_one_decoded() {
    for l in all_layouts() {
        let mut bad = PageBuilder::new(l);
        bad.event(1, &[1; 8]);
        bad.header(0, 1);
        bad.u32(10_000); // length far past the commit
        let mut good = PageBuilder::new(l);
        good.event(2, &[2; 8]);
        let mut bytes = bad.finish(100, 0, None);
        // A commit larger than the page.
        let mut huge = good.finish(0, 0, None);
        let commit_bytes = if l.endian.is_big() {
            ((l.subbuf_size as u64) << (8 * (8 - l.long_size))).to_be_bytes()
        } else {
            (l.subbuf_size as u64).to_le_bytes()
        };
        huge[l.commit_offset..l.commit_offset + l.long_size]
            .copy_from_slice(&commit_bytes[..l.long_size]);
        bytes.extend_from_slice(&huge);
        bytes.extend_from_slice(&good.finish(200, 0, None));
        let items: Vec<_> = CpuStream::new(l, 1, &bytes).collect();
        assert_eq!(items.len(), 4, "{l:?}: {items:?}");
        assert!(matches!(&items[0], Ok(Entry::Event(r)) if r.ts == 101));
        let e = items[1].as_ref().unwrap_err();
        assert_eq!((e.cpu, e.page, e.offset), (1, 0, l.data_offset + 12));
        assert!(e.to_string().contains("cpu1 sub-buffer 0 offset"), "{e}");
        let e = items[2].as_ref().unwrap_err();
        assert_eq!((e.page, e.offset), (1, l.commit_offset));
        assert!(matches!(&items[3], Ok(Entry::Event(r)) if r.ts == 202));
    }
}

#[test]
fn truncated_input_is_an_error_not_a_panic() {
    let l = layout(8, Endianness::Little, 4096);
    let mut b = PageBuilder::new(l);
    b.event(1, &[1; 40]);
    let page = b.finish(0, 0, None);
    for cut in [0, 3, 12, 17, 30] {
        let items: Vec<_> = CpuStream::new(l, 0, &page[..cut]).collect();
        assert!(items.iter().all(|i| i.is_err()), "cut {cut}: {items:?}");
    }
}

#[test]
fn merge_orders_by_time_and_breaks_ties_by_lower_cpu() {
    let l = layout(8, Endianness::Little, 4096);
    let mk = |deltas: &[u32], base: u64| {
        let mut b = PageBuilder::new(l);
        for (i, d) in deltas.iter().enumerate() {
            b.event(*d, &[i as u8; 4]);
        }
        b.finish(base, 0, None)
    };
    let cpu0 = mk(&[0, 10, 10], 100); // 100 110 120
    let cpu1 = mk(&[5, 5, 10], 100); // 105 110 120
    let merged: Vec<(u32, u64)> = Merge::new(vec![
        CpuStream::new(l, 0, &cpu0),
        CpuStream::new(l, 1, &cpu1),
    ])
    .map(|e| {
        let e = e.unwrap();
        (e.cpu(), e.ts())
    })
    .collect();
    assert_eq!(
        merged,
        vec![(0, 100), (1, 105), (0, 110), (1, 110), (0, 120), (1, 120)]
    );
}

/// Real pages with random bytes flipped, in every layout: decoding never panics, never
/// loops, and every error names a page inside the input.
#[test]
fn mutated_real_pages_never_panic() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tracefs-fixtures/linux-6.18-sched-irq");
    let original = std::fs::read(root.join("per_cpu/cpu0/trace_pipe_raw")).unwrap();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut rand = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for round in 0..300 {
        let mut bytes = original.clone();
        for _ in 0..1 + rand() % 64 {
            let i = (rand() as usize) % bytes.len();
            bytes[i] = rand() as u8;
        }
        if round % 7 == 0 {
            bytes.truncate((rand() as usize) % bytes.len());
        }
        for l in all_layouts() {
            let pages = bytes.len().div_ceil(l.subbuf_size) as u64;
            let mut n = 0usize;
            for item in CpuStream::new(l, 0, &bytes) {
                n += 1;
                assert!(n < 1_000_000, "runaway decoding");
                if let Err(e) = item {
                    assert!(e.page < pages && e.offset < l.subbuf_size, "{e}");
                }
            }
        }
    }
}
