//! Packing records back into sub-buffer pages, as `trace-cmd split` rewrites them.
//!
//! Each page starts at its first record's time; the next records carry deltas, with a
//! time-extend record first when a delta does not fit the 27 bits of a header. A record
//! with up to 112 bytes of data gets a `type_len` header, a bigger one a length word. A
//! page that follows lost events says so in its commit word, with the count stored after
//! the data when there is room for it.

use super::page::{
    PageLayout, DELTA_MASK, MISSED_EVENTS, MISSED_STORED, TS_SHIFT, TYPE_DATA_MAX, TYPE_TIME_EXTEND,
};

/// Builds one sub-buffer page at a time: open a page, push records while they fit, close
/// it and store the bytes it hands out.
#[derive(Debug, Clone)]
pub struct SubBufferWriter {
    layout: PageLayout,
    page: Vec<u8>,
    /// Bytes used so far (header included); None before the first page.
    used: Option<usize>,
    /// Time of the last record written (or of the page when none yet).
    ts: u64,
    /// Events lost before the current page: None = none, Some(count).
    missed: Option<u64>,
}

/// The bytes a record took in the ring buffer it was read from: its header (a length
/// word too when the data exceeds 112 bytes) and its data. `trace-cmd split` decides
/// whether a record still fits the page with this size.
pub fn stored_record_size(data_len: usize) -> usize {
    let small = data_len != 0 && data_len <= (TYPE_DATA_MAX * 4) as usize;
    data_len + if small { 4 } else { 8 }
}

impl SubBufferWriter {
    /// A writer of pages of `layout.subbuf_size` bytes.
    pub fn new(layout: PageLayout) -> SubBufferWriter {
        SubBufferWriter {
            layout,
            page: vec![0; layout.subbuf_size],
            used: None,
            ts: 0,
            missed: None,
        }
    }

    /// Whether a page is open and `size` more bytes fit in it.
    pub fn fits(&self, size: usize) -> bool {
        self.used
            .is_some_and(|u| u + size <= self.layout.subbuf_size)
    }

    /// Close the current page and return it (None when no page is open).
    pub fn close_page(&mut self) -> Option<&[u8]> {
        if self.close() {
            self.used = None;
            Some(&self.page[..])
        } else {
            None
        }
    }

    /// Open a new page stamped `ts`, preceded by `missed` lost events (None: none;
    /// `u64::MAX`: the count is unknown). Close the previous one first.
    pub fn open_page(&mut self, ts: u64, missed: Option<u64>) {
        self.page.fill(0);
        let e = self.layout.endian;
        self.put(self.layout.timestamp_offset, &e.u64_bytes(ts));
        self.used = Some(self.layout.data_offset);
        self.ts = ts;
        self.missed = missed;
    }

    /// Append a record of time `ts` (not before the page's last) and `data` (a multiple
    /// of 4 bytes). Returns false when only a time extend was written because the delta
    /// needs more than 27 bits: call again with the same record, which may no longer fit.
    pub fn push(&mut self, ts: u64, data: &[u8]) -> bool {
        let Some(mut at) = self.used else {
            return false;
        };
        let e = self.layout.endian;
        let diff = ts.wrapping_sub(self.ts);
        if diff > u64::from(DELTA_MASK) {
            let word = self.header(TYPE_TIME_EXTEND, (diff & u64::from(DELTA_MASK)) as u32);
            self.put(at, &e.u32_bytes(word));
            self.put(at + 4, &e.u32_bytes((diff >> TS_SHIFT) as u32));
            self.used = Some(at + 8);
            self.ts = ts;
            return false;
        }
        let small = !data.is_empty() && data.len() <= (TYPE_DATA_MAX * 4) as usize;
        let type_len = if small { (data.len() / 4) as u32 } else { 0 };
        self.put(at, &e.u32_bytes(self.header(type_len, diff as u32)));
        at += 4;
        if !small {
            self.put(at, &e.u32_bytes(data.len() as u32 + 4));
            at += 4;
        }
        self.put(at, data);
        self.used = Some(at + data.len());
        self.ts = ts;
        true
    }

    fn header(&self, type_len: u32, delta: u32) -> u32 {
        if self.layout.endian.is_big() {
            (type_len << TS_SHIFT) | delta
        } else {
            (delta << 5) | type_len
        }
    }

    /// Copy `bytes` at `at`, clipped to the page (a caller that checked [`Self::fits`]
    /// never needs the clipping).
    fn put(&mut self, at: usize, bytes: &[u8]) {
        let end = (at + bytes.len()).min(self.page.len());
        if at < end {
            self.page[at..end].copy_from_slice(&bytes[..end - at]);
        }
    }

    /// Write the commit word (and the lost-events count) of the open page; false when
    /// no page is open.
    fn close(&mut self) -> bool {
        let Some(used) = self.used else {
            return false;
        };
        let used = used.min(self.layout.subbuf_size);
        let commit = (used - self.layout.data_offset) as u64;
        let mut flags = 0;
        if let Some(count) = self.missed {
            flags |= MISSED_EVENTS;
            let e = self.layout.endian;
            let room = self.layout.subbuf_size - used;
            if room >= self.layout.long_size {
                flags |= MISSED_STORED;
                if self.layout.long_size == 8 {
                    self.put(used, &e.u64_bytes(count));
                } else {
                    self.put(used, &e.u32_bytes(count as u32));
                }
            } else if room >= 4 && self.layout.long_size == 8 && !e.is_big() {
                // What trace-cmd's split leaves in the page of its 8-byte count: the low
                // half, all that libtraceevent's int reading of it takes (see
                // `PageLayout::stored_count`); the high half it writes past the page.
                flags |= MISSED_STORED;
                self.put(used, &e.u32_bytes(count as u32));
            }
        }
        let e = self.layout.endian;
        let word = commit | flags;
        if self.layout.long_size == 8 {
            self.put(self.layout.commit_offset, &e.u64_bytes(word));
        } else {
            self.put(self.layout.commit_offset, &e.u32_bytes(word as u32));
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endian::Endianness;
    use crate::ring::{Entry, SubBuffer};

    fn layout() -> PageLayout {
        PageLayout {
            timestamp_offset: 0,
            commit_offset: 8,
            long_size: 8,
            data_offset: 16,
            subbuf_size: 4096,
            endian: Endianness::Little,
        }
    }

    fn decode(page: &[u8]) -> Vec<(u64, Vec<u8>, Option<Option<u64>>)> {
        let mut lost = None;
        let mut out = Vec::new();
        for e in SubBuffer::new(layout(), page, 0, 0).unwrap() {
            match e.unwrap() {
                Entry::Event(r) => out.push((r.ts, r.data.to_vec(), lost.take())),
                Entry::Lost { count, .. } => lost = Some(count),
            }
        }
        out
    }

    /// A page `free` bytes short of full after `missed` lost events, read back.
    fn lost_mark_of_page(free: usize, missed: u64) -> Option<Option<u64>> {
        let mut w = SubBufferWriter::new(layout());
        w.open_page(1000, Some(missed));
        // 16-byte records (12 bytes of data), then one of 16 + the rest to leave `free`.
        let target = 4080 - free;
        let (n, extra) = match target % 16 {
            0 => (target / 16, 0),
            rest => (target / 16 - 1, 16 + rest),
        };
        for i in 0..n {
            assert!(w.push(1000 + i as u64, &[0u8; 12]));
        }
        if extra > 0 {
            assert!(w.push(5000, &vec![0u8; extra - 4]));
        }
        assert!(!w.fits(free + 4));
        let page = w.close_page().unwrap().to_vec();
        decode(&page)[0].2
    }

    #[test]
    fn the_lost_count_is_kept_where_the_page_holds_it() {
        assert_eq!(lost_mark_of_page(8, 77), Some(Some(77)));
        // 4 bytes: the low half, which is all trace-cmd reads of it.
        assert_eq!(lost_mark_of_page(4, 77), Some(Some(77)));
        assert_eq!(lost_mark_of_page(4, u64::MAX), Some(None));
        assert_eq!(lost_mark_of_page(0, 77), Some(None));
    }

    #[test]
    fn records_read_back_with_their_times_sizes_and_lost_mark() {
        let mut w = SubBufferWriter::new(layout());
        assert!(w.close_page().is_none());
        w.open_page(1000, Some(7));
        let small = vec![1u8; 12];
        let big = vec![2u8; 200];
        assert!(w.push(1000, &small));
        assert!(w.push(1005, &big));
        // 2^27 ns later: a time extend first, then the record.
        let far = 1005 + (1 << 27) + 3;
        assert!(!w.push(far, &small));
        assert!(w.push(far, &small));
        let page = w.close_page().unwrap().to_vec();
        assert_eq!(
            decode(&page),
            vec![
                (1000, small.clone(), Some(Some(7))),
                (1005, big, None),
                (far, small, None),
            ]
        );
        assert!(w.close_page().is_none());
    }

    #[test]
    fn fits_counts_the_stored_size() {
        let mut w = SubBufferWriter::new(layout());
        assert!(!w.fits(4));
        w.open_page(0, None);
        let data = vec![0u8; 112];
        let n = (4096 - 16) / stored_record_size(112);
        for _ in 0..n {
            assert!(w.fits(stored_record_size(112)));
            assert!(w.push(0, &data));
        }
        assert!(!w.fits(stored_record_size(112)));
        assert_eq!(stored_record_size(116), 124);
    }
}
