//! The records of a perf mmap ring, read in place.
//!
//! The kernel appends records (each starting with `perf_event_header`: `type: u32`,
//! `misc: u16`, `size: u16`) to a power-of-two data area and moves `data_head`; the reader
//! consumes up to it and moves `data_tail`. Between the two, the bytes are stable, and
//! they are at most two slices of the data area: the part up to its end and the part that
//! wrapped to its start. A record that straddles the end comes out as
//! [`RecordBytes::Split`], so nothing is copied.
//!
//! This module is the safe half (no kernel needed, unit-tested on plain buffers); the
//! mapping itself is `sys::Ring`.

use std::ops::Range;

/// `PERF_RECORD_LOST`: `{ id: u64, lost: u64 }` (+ sample_id).
pub const RECORD_LOST: u32 = 2;
/// `PERF_RECORD_LOST_SAMPLES`: `{ lost: u64 }` (+ sample_id).
pub const RECORD_LOST_SAMPLES: u32 = 13;

/// One record as it lies in the ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordBytes<'a> {
    /// Contiguous.
    Whole(&'a [u8]),
    /// Wrapped at the ring's end: the bytes up to the end, then those at its start.
    Split(&'a [u8], &'a [u8]),
}

impl<'a> RecordBytes<'a> {
    /// The two parts (the second empty for a whole record).
    pub fn parts(&self) -> (&'a [u8], &'a [u8]) {
        match *self {
            RecordBytes::Whole(a) => (a, &[]),
            RecordBytes::Split(a, b) => (a, b),
        }
    }

    /// Length in bytes (the header's `size`).
    pub fn len(&self) -> usize {
        let (a, b) = self.parts();
        a.len() + b.len()
    }

    /// Whether the record has no bytes (never, for a record taken from a ring).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The byte at `off`.
    pub fn byte(&self, off: usize) -> Option<u8> {
        let (a, b) = self.parts();
        if off < a.len() {
            Some(a[off])
        } else {
            b.get(off - a.len()).copied()
        }
    }

    /// `N` bytes at `off`, gathered across the wrap.
    pub fn array<const N: usize>(&self, off: usize) -> Option<[u8; N]> {
        if let Some(s) = self.parts().0.get(off..off + N) {
            return s.try_into().ok();
        }
        let mut out = [0u8; N];
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.byte(off + i)?;
        }
        Some(out)
    }

    /// The native-endian u64 at `off`.
    pub fn u64_at(&self, off: usize) -> Option<u64> {
        self.array::<8>(off).map(u64::from_ne_bytes)
    }

    /// The native-endian u32 at `off`.
    pub fn u32_at(&self, off: usize) -> Option<u32> {
        self.array::<4>(off).map(u32::from_ne_bytes)
    }

    /// `perf_event_header.type`.
    pub fn kind(&self) -> u32 {
        self.u32_at(0).unwrap_or(0)
    }

    /// `perf_event_header.misc`.
    pub fn misc(&self) -> u16 {
        self.array::<2>(4).map_or(0, u16::from_ne_bytes)
    }

    /// A contiguous copy (for the rare reader that needs one).
    pub fn to_vec(&self) -> Vec<u8> {
        let (a, b) = self.parts();
        let mut v = Vec::with_capacity(a.len() + b.len());
        v.extend_from_slice(a);
        v.extend_from_slice(b);
        v
    }
}

/// Where the readable bytes `[tail, head)` lie in a data area of `len` bytes (a power of
/// two): one range, or two when they wrap. `None` when `head - tail` is more than the
/// area holds (the positions are not a consistent pair).
pub fn readable(len: usize, tail: u64, head: u64) -> Option<(Range<usize>, Range<usize>)> {
    let avail = head.wrapping_sub(tail);
    if len == 0 || avail > len as u64 {
        return None;
    }
    let avail = avail as usize;
    let start = (tail % len as u64) as usize;
    let first = avail.min(len - start);
    Some((start..start + first, 0..avail - first))
}

/// What was read from a ring.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RingStats {
    /// Records handed out.
    pub records: u64,
    /// Their bytes.
    pub bytes: u64,
    /// `PERF_RECORD_LOST` records: times the kernel found the ring full.
    pub lost_records: u64,
    /// Samples those records and `PERF_RECORD_LOST_SAMPLES` say were dropped.
    pub lost_samples: u64,
    /// Bytes skipped after a record header that did not fit (a size under 8 or past
    /// `head`): the ring's contents could not be trusted beyond it.
    pub malformed_bytes: u64,
}

impl RingStats {
    /// Count one record (its loss reports included).
    pub fn account(&mut self, r: &RecordBytes<'_>) {
        self.records += 1;
        self.bytes += r.len() as u64;
        match r.kind() {
            RECORD_LOST => {
                self.lost_records += 1;
                self.lost_samples += r.u64_at(16).unwrap_or(0);
            }
            RECORD_LOST_SAMPLES => self.lost_samples += r.u64_at(8).unwrap_or(0),
            _ => {}
        }
    }

    /// Add another ring's counts.
    pub fn add(&mut self, o: &RingStats) {
        self.records += o.records;
        self.bytes += o.bytes;
        self.lost_records += o.lost_records;
        self.lost_samples += o.lost_samples;
        self.malformed_bytes += o.malformed_bytes;
    }
}

/// The records of a readable region (`first` then `second`, as [`readable`] cuts them).
#[derive(Debug, Clone)]
pub struct Records<'a> {
    first: &'a [u8],
    second: &'a [u8],
    pos: usize,
    /// Bytes left unread after a malformed header.
    pub malformed: usize,
}

impl<'a> Records<'a> {
    /// Iterate the records of `first` followed by `second`.
    pub fn new(first: &'a [u8], second: &'a [u8]) -> Records<'a> {
        Records {
            first,
            second,
            pos: 0,
            malformed: 0,
        }
    }

    fn total(&self) -> usize {
        self.first.len() + self.second.len()
    }

    fn slice(&self, start: usize, end: usize) -> RecordBytes<'a> {
        let f = self.first.len();
        if end <= f {
            RecordBytes::Whole(&self.first[start..end])
        } else if start >= f {
            RecordBytes::Whole(&self.second[start - f..end - f])
        } else {
            RecordBytes::Split(&self.first[start..], &self.second[..end - f])
        }
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = RecordBytes<'a>;

    fn next(&mut self) -> Option<RecordBytes<'a>> {
        let total = self.total();
        if self.pos >= total {
            return None;
        }
        let head = self.slice(self.pos, total);
        let size = head.array::<2>(6).map_or(0, u16::from_ne_bytes) as usize;
        if size < 8 || self.pos + size > total {
            self.malformed = total - self.pos;
            self.pos = total;
            return None;
        }
        let r = self.slice(self.pos, self.pos + size);
        self.pos += size;
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kind: u32, size: u16, fill: u8) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&kind.to_ne_bytes());
        v.extend_from_slice(&0u16.to_ne_bytes());
        v.extend_from_slice(&size.to_ne_bytes());
        v.resize(size as usize, fill);
        v
    }

    /// Put `bytes` into a ring of `len` bytes starting at absolute position `tail`.
    fn ring_with(len: usize, tail: u64, bytes: &[u8]) -> Vec<u8> {
        let mut ring = vec![0xeeu8; len];
        for (i, b) in bytes.iter().enumerate() {
            ring[((tail as usize) + i) % len] = *b;
        }
        ring
    }

    fn read_all(ring: &[u8], tail: u64, head: u64) -> (Vec<Vec<u8>>, Vec<bool>, usize) {
        let (a, b) = readable(ring.len(), tail, head).unwrap();
        let mut it = Records::new(&ring[a], &ring[b]);
        let mut out = Vec::new();
        let mut split = Vec::new();
        for r in it.by_ref() {
            split.push(matches!(r, RecordBytes::Split(..)));
            out.push(r.to_vec());
        }
        (out, split, it.malformed)
    }

    #[test]
    fn readable_ranges() {
        assert_eq!(readable(64, 0, 0), Some((0..0, 0..0)));
        assert_eq!(readable(64, 8, 40), Some((8..40, 0..0)));
        assert_eq!(readable(64, 48, 80), Some((48..64, 0..16)));
        // Positions are free-running counters: many laps later, same cut.
        assert_eq!(
            readable(64, 64 * 1000 + 48, 64 * 1000 + 80),
            Some((48..64, 0..16))
        );
        assert_eq!(readable(64, 0, 64), Some((0..64, 0..0)));
        assert_eq!(readable(64, 0, 72), None);
        // Counter wrap-around of u64 itself.
        assert_eq!(readable(64, u64::MAX - 7, 8), Some((56..64, 0..8)));
    }

    #[test]
    fn records_in_place_and_split_at_the_end() {
        let a = record(9, 24, 0xa1);
        let b = record(10, 32, 0xb2);
        let c = record(3, 40, 0xc3);
        let mut bytes = a.clone();
        bytes.extend_from_slice(&b);
        bytes.extend_from_slice(&c);
        let ring = ring_with(128, 104, &bytes);
        let (recs, split, bad) = read_all(&ring, 104, 104 + bytes.len() as u64);
        assert_eq!(recs, vec![a.clone(), b.clone(), c.clone()]);
        // a: 104..128 whole; b: 0..32 whole; c: 32..72 whole.
        assert_eq!(split, vec![false, false, false]);
        assert_eq!(bad, 0);
        // Shift so that b straddles the end (a 88..112, b 112..144, c 16..56).
        let ring = ring_with(128, 88, &bytes);
        let (recs, split, bad) = read_all(&ring, 88, 88 + bytes.len() as u64);
        assert_eq!(recs, vec![a, b, c]);
        assert_eq!(split, vec![false, true, false]);
        assert_eq!(bad, 0);
    }

    #[test]
    fn split_record_fields_read_across_the_wrap() {
        let mut lost = record(RECORD_LOST, 32, 0);
        lost[8..16].copy_from_slice(&7u64.to_ne_bytes());
        lost[16..24].copy_from_slice(&12345u64.to_ne_bytes());
        // Header at 60..64 and the rest wrapped: the header itself is split too.
        for tail in [44u64, 52, 56, 60] {
            let ring = ring_with(64, tail, &lost);
            let (a, b) = readable(64, tail, tail + 32).unwrap();
            let mut it = Records::new(&ring[a], &ring[b]);
            let r = it.next().unwrap();
            assert!(matches!(r, RecordBytes::Split(..)), "tail {tail}");
            assert_eq!(r.kind(), RECORD_LOST);
            assert_eq!(r.len(), 32);
            assert_eq!(r.u64_at(8), Some(7));
            let mut st = RingStats::default();
            st.account(&r);
            assert_eq!(st.lost_records, 1);
            assert_eq!(st.lost_samples, 12345);
            assert!(it.next().is_none());
        }
        let mut ls = record(RECORD_LOST_SAMPLES, 24, 0);
        ls[8..16].copy_from_slice(&5u64.to_ne_bytes());
        let mut st = RingStats::default();
        st.account(&RecordBytes::Whole(&ls));
        assert_eq!((st.lost_records, st.lost_samples, st.records), (0, 5, 1));
    }

    #[test]
    fn malformed_sizes_stop_the_walk() {
        let mut bytes = record(9, 16, 1);
        let mut short = record(9, 8, 2);
        short[6..8].copy_from_slice(&4u16.to_ne_bytes()); // size 4 < header
        bytes.extend_from_slice(&short);
        let ring = ring_with(64, 0, &bytes);
        let (recs, _, bad) = read_all(&ring, 0, 24);
        assert_eq!(recs.len(), 1);
        assert_eq!(bad, 8);
        // A size past head.
        let bytes = record(9, 48, 1);
        let ring = ring_with(64, 0, &bytes);
        let (recs, _, bad) = read_all(&ring, 0, 16);
        assert!(recs.is_empty());
        assert_eq!(bad, 16);
    }
}
