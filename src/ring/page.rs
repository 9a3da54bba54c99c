//! One ring-buffer sub-buffer ("page") as `trace_pipe_raw` hands it out.
//!
//! The header layout comes from `events/header_page`; the record encoding is the kernel's
//! `struct ring_buffer_event`: a u32 with `type_len:5` and `time_delta:27`, then data.

use crate::endian::Endianness;
use std::fmt;

use crate::event::{HeaderPage, Record};

/// Records of type 1..=28 carry `type_len * 4` bytes of data.
pub(super) const TYPE_DATA_MAX: u32 = 28;
/// Padding at the end of a page (delta 0) or a discarded event (delta != 0).
const TYPE_PADDING: u32 = 29;
/// Adds `array[0] << 27 | time_delta` to the running timestamp.
pub(super) const TYPE_TIME_EXTEND: u32 = 30;
/// Absolute timestamp: bits 0..58 in the record, the top bits from the current time.
const TYPE_TIME_STAMP: u32 = 31;
pub(super) const TS_SHIFT: u32 = 27;
pub(super) const DELTA_MASK: u32 = (1 << TS_SHIFT) - 1;
/// Valid bytes in the `commit` word; the upper bits are flags.
const COMMIT_MASK: u64 = (1 << 27) - 1;
pub(super) const MISSED_EVENTS: u64 = 1 << 31;
pub(super) const MISSED_STORED: u64 = 1 << 30;
/// An absolute time stamp holds 59 bits; the top 5 come from the page's time.
const TS_MSB: u64 = 0xf8 << 56;

/// How to read sub-buffers of one trace buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageLayout {
    /// Offset of the u64 page timestamp.
    pub timestamp_offset: usize,
    /// Offset of the `commit` word.
    pub commit_offset: usize,
    /// Size of `commit` and of the stored missed-events count: the kernel's `long`.
    pub long_size: usize,
    /// Where records start.
    pub data_offset: usize,
    /// Bytes in one sub-buffer, header included (`buffer_subbuf_size_kb` * 1024).
    pub subbuf_size: usize,
    /// Byte order of the traced kernel.
    pub endian: Endianness,
}

impl PageLayout {
    /// Layout from `events/header_page`, with the sub-buffer size from
    /// `buffer_subbuf_size_kb` when known (it may exceed the page size since 6.8).
    pub fn new(header: &HeaderPage, subbuf_size: Option<usize>, endian: Endianness) -> PageLayout {
        PageLayout {
            timestamp_offset: header.timestamp_offset,
            commit_offset: header.commit_offset,
            long_size: header.commit_size,
            data_offset: header.data_offset,
            subbuf_size: subbuf_size.unwrap_or_else(|| header.page_size()),
            endian,
        }
    }

    #[inline(always)]
    fn u32_at(&self, b: &[u8], off: usize) -> Option<u32> {
        self.endian.u32_at(b, off)
    }

    #[inline(always)]
    fn u64_at(&self, b: &[u8], off: usize) -> Option<u64> {
        self.endian.u64_at(b, off)
    }

    fn long_at(&self, b: &[u8], off: usize) -> Option<u64> {
        if self.long_size == 8 {
            self.u64_at(b, off)
        } else {
            self.u32_at(b, off).map(u64::from)
        }
    }

    /// The lost-events count a page flagged "stored" holds at `off` (None: not in the
    /// page). The kernel stores it only where a whole `long` fits, but trace-cmd's split
    /// writes its 8-byte count at the end of the records whatever room is left, past the
    /// page when it is full. libtraceevent takes the count as a C `int`, so with 4 bytes
    /// left in a little-endian page the part it reads from the page is whole there (the low
    /// half; 0xffffffff for a count not known, as -1); in a big-endian page those 4 bytes
    /// are the high half, and with none left nothing of it is in the page.
    fn stored_count(&self, b: &[u8], off: usize) -> Option<u64> {
        if let Some(n) = self.long_at(b, off) {
            return Some(n);
        }
        if self.long_size != 8 || self.endian.is_big() {
            return None;
        }
        let low = self.u32_at(b, off)?;
        (low as i32 >= 0).then_some(u64::from(low))
    }
}

/// A malformed sub-buffer: decoding skipped the rest of it and resumed at the next one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageError {
    /// CPU whose buffer held the page.
    pub cpu: u32,
    /// Index of the sub-buffer in that CPU's stream (0 = first).
    pub page: u64,
    /// Byte offset inside the sub-buffer where decoding stopped.
    pub offset: usize,
    /// What was wrong.
    pub message: String,
}

impl fmt::Display for PageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cpu{} sub-buffer {} offset {}: {}; skipped the rest of this sub-buffer (corrupt trace_pipe_raw data, or a header_page/buffer_subbuf_size_kb that does not match it)",
            self.cpu, self.page, self.offset, self.message
        )
    }
}

impl std::error::Error for PageError {}

/// What a sub-buffer yields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry<'a> {
    /// An event record.
    Event(Record<'a>),
    /// The kernel dropped events before this sub-buffer (`CPU:N [LOST M EVENTS]`);
    /// `count` is `None` when the kernel did not store how many.
    Lost {
        /// The CPU that lost them.
        cpu: u32,
        /// Timestamp of the first record after the gap (the page's time).
        ts: u64,
        /// How many, when known.
        count: Option<u64>,
    },
}

impl Entry<'_> {
    /// Timestamp used to order entries across CPUs.
    pub fn ts(&self) -> u64 {
        match self {
            Entry::Event(r) => r.ts,
            Entry::Lost { ts, .. } => *ts,
        }
    }

    /// CPU of the entry.
    pub fn cpu(&self) -> u32 {
        match self {
            Entry::Event(r) => r.cpu,
            Entry::Lost { cpu, .. } => *cpu,
        }
    }
}

/// The parsed header of one sub-buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubBufferHeader {
    /// Absolute time of the page (trace-clock units).
    pub time_stamp: u64,
    /// Bytes of records after the header.
    pub commit: usize,
    /// Events lost before this page: `None` = none, `Some(None)` = some, count unknown.
    pub missed: Option<Option<u64>>,
}

impl SubBufferHeader {
    /// Parse the header of `page`, checking the commit against the page size.
    pub fn parse(layout: &PageLayout, page: &[u8]) -> Result<SubBufferHeader, (usize, String)> {
        let time_stamp = layout.u64_at(page, layout.timestamp_offset).ok_or((
            0,
            format!(
                "sub-buffer of {} bytes is shorter than its header",
                page.len()
            ),
        ))?;
        let raw = layout.long_at(page, layout.commit_offset).ok_or((
            layout.commit_offset,
            "sub-buffer shorter than its commit word".to_string(),
        ))?;
        let commit = (raw & COMMIT_MASK) as usize;
        let room = page.len().saturating_sub(layout.data_offset);
        if commit > room {
            return Err((
                layout.commit_offset,
                format!("commit {commit} is larger than the {room} data bytes of the sub-buffer"),
            ));
        }
        let missed = if raw & MISSED_EVENTS != 0 {
            if raw & MISSED_STORED != 0 {
                Some(layout.stored_count(page, layout.data_offset + commit))
            } else {
                Some(None)
            }
        } else {
            None
        };
        Ok(SubBufferHeader {
            time_stamp,
            commit,
            missed,
        })
    }
}

/// Iterator over the entries of one sub-buffer.
///
/// Yields a [`Entry::Lost`] first when the page says events were missed, then the events
/// with absolute timestamps. A malformed record ends the page with one error.
#[derive(Debug, Clone)]
pub struct SubBuffer<'a> {
    layout: PageLayout,
    page: &'a [u8],
    cpu: u32,
    index: u64,
    pos: usize,
    end: usize,
    ts: u64,
    pending_lost: Option<Option<u64>>,
    done: bool,
}

impl<'a> SubBuffer<'a> {
    /// Start decoding `page` (one whole sub-buffer) of `cpu`, the `index`th of its stream.
    pub fn new(
        layout: PageLayout,
        page: &'a [u8],
        cpu: u32,
        index: u64,
    ) -> Result<SubBuffer<'a>, PageError> {
        let h = SubBufferHeader::parse(&layout, page).map_err(|(offset, message)| PageError {
            cpu,
            page: index,
            offset,
            message,
        })?;
        Ok(SubBuffer {
            layout,
            page,
            cpu,
            index,
            pos: layout.data_offset,
            end: layout.data_offset + h.commit,
            ts: h.time_stamp,
            pending_lost: h.missed,
            done: false,
        })
    }

    fn error(&mut self, offset: usize, message: String) -> Option<Result<Entry<'a>, PageError>> {
        self.done = true;
        Some(Err(PageError {
            cpu: self.cpu,
            page: self.index,
            offset,
            message,
        }))
    }
}

impl<'a> Iterator for SubBuffer<'a> {
    type Item = Result<Entry<'a>, PageError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if let Some(count) = self.pending_lost.take() {
            return Some(Ok(Entry::Lost {
                cpu: self.cpu,
                ts: self.ts,
                count,
            }));
        }
        loop {
            if self.pos + 4 > self.end {
                self.done = true;
                if self.pos < self.end {
                    let (pos, end) = (self.pos, self.end);
                    return self.error(
                        pos,
                        format!("{} stray bytes before the commit end {end}", end - pos),
                    );
                }
                return None;
            }
            let l = &self.layout;
            let Some(word) = l.u32_at(self.page, self.pos) else {
                let pos = self.pos;
                return self.error(pos, "record header past the end of the sub-buffer".into());
            };
            let (type_len, delta) = if l.endian.is_big() {
                (word >> 27, word & DELTA_MASK)
            } else {
                (word & 31, word >> 5)
            };
            let at = self.pos;
            match type_len {
                TYPE_PADDING => {
                    if delta == 0 {
                        // The rest of the page is unused.
                        self.done = true;
                        return None;
                    }
                    let Some(len) = l.u32_at(self.page, at + 4) else {
                        return self.error(at, "padding record without its length word".into());
                    };
                    let next = at + 4 + len as usize;
                    if len < 4 || next > self.end {
                        return self.error(
                            at,
                            format!("discarded record of {len} bytes runs past the commit end"),
                        );
                    }
                    self.ts += u64::from(delta);
                    self.pos = next;
                }
                TYPE_TIME_EXTEND | TYPE_TIME_STAMP => {
                    let Some(hi) = l.u32_at(self.page, at + 4).filter(|_| at + 8 <= self.end)
                    else {
                        return self.error(at, "time record runs past the commit end".into());
                    };
                    let v = (u64::from(hi) << TS_SHIFT) | u64::from(delta);
                    if type_len == TYPE_TIME_EXTEND {
                        self.ts = self.ts.wrapping_add(v);
                    } else {
                        self.ts = v | (self.ts & TS_MSB);
                    }
                    self.pos = at + 8;
                }
                0 => {
                    let Some(len) = l.u32_at(self.page, at + 4) else {
                        return self.error(at, "record length word past the end".into());
                    };
                    if len < 4 {
                        return self.error(
                            at,
                            format!("record length {len} is smaller than its own length word"),
                        );
                    }
                    let data_len = ((len - 4 + 3) & !3) as usize;
                    let start = at + 8;
                    if start + data_len > self.end {
                        return self.error(
                            at,
                            format!("record of {data_len} bytes runs past the commit end"),
                        );
                    }
                    self.ts = self.ts.wrapping_add(u64::from(delta));
                    self.pos = start + data_len;
                    return Some(Ok(self.emit(start, data_len)));
                }
                _ => {
                    debug_assert!(type_len <= TYPE_DATA_MAX);
                    let data_len = (type_len * 4) as usize;
                    let start = at + 4;
                    if start + data_len > self.end {
                        return self.error(
                            at,
                            format!("record of {data_len} bytes runs past the commit end"),
                        );
                    }
                    self.ts = self.ts.wrapping_add(u64::from(delta));
                    self.pos = start + data_len;
                    return Some(Ok(self.emit(start, data_len)));
                }
            }
        }
    }
}

impl<'a> SubBuffer<'a> {
    #[inline]
    fn emit(&self, start: usize, len: usize) -> Entry<'a> {
        Entry::Event(Record {
            cpu: self.cpu,
            ts: self.ts,
            data: &self.page[start..start + len],
        })
    }
}
