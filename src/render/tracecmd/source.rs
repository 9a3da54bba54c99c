//! Record sources for the report loop: a trace.dat buffer read page by page, or any
//! iterator of ring entries.
//!
//! A trace.dat source keeps one decoded sub-buffer per CPU in memory, so memory stays
//! flat however large the file is; records borrow that page until the source moves on.

use std::error::Error;

use crate::dat::{CpuPages, DatError, DatFile, TsAdjust};
use crate::event::{HeaderPage, Record};
use crate::ring::{Entry, PageError, PageLayout, SubBuffer};

/// A record handed out by a [`RecordSource`], with the lost-events mark that precedes it.
#[derive(Debug, Clone, Copy)]
pub struct Taken<'a> {
    /// The record.
    pub rec: Record<'a>,
    /// `Some(count)` when the kernel dropped events on this CPU just before this record
    /// (`Some(None)`: it did not count them).
    pub missed: Option<Option<u64>>,
}

/// Boxed error of a source (a read or decompression failure).
pub type SourceError = Box<dyn Error + Send + Sync>;

/// Records in time order, handed out one at a time (each borrows the source until the
/// next call).
pub trait RecordSource {
    /// Timestamp of the next record, or None at the end.
    fn peek_ts(&mut self) -> Result<Option<u64>, SourceError>;
    /// The next record; call after [`RecordSource::peek_ts`] returned `Some`.
    fn take(&mut self) -> Option<Taken<'_>>;
    /// The next record without consuming it; call after [`RecordSource::peek_ts`]
    /// returned `Some`. Its lost-events mark stays with it.
    fn peek(&mut self) -> Option<Record<'_>>;
    /// Sub-buffers that failed to decode so far (skipped after a warning on stderr).
    fn bad_pages(&self) -> u64 {
        0
    }
}

/// A [`RecordSource`] over an iterator of ring entries (pages already in memory).
pub struct EntrySource<'a, I: Iterator<Item = Result<Entry<'a>, PageError>>> {
    iter: I,
    head: Option<Record<'a>>,
    lost: Vec<Option<Option<u64>>>,
    bad: u64,
}

impl<'a, I: Iterator<Item = Result<Entry<'a>, PageError>>> EntrySource<'a, I> {
    /// Wrap a time-ordered entry iterator (for example [`crate::ring::Merge`]).
    pub fn new(iter: I) -> Self {
        EntrySource {
            iter,
            head: None,
            lost: Vec::new(),
            bad: 0,
        }
    }
}

fn set_lost(lost: &mut Vec<Option<Option<u64>>>, cpu: u32, count: Option<u64>) {
    let i = cpu as usize;
    if i >= lost.len() {
        lost.resize(i + 1, None);
    }
    lost[i] = Some(count);
}

impl<'a, I: Iterator<Item = Result<Entry<'a>, PageError>>> RecordSource for EntrySource<'a, I> {
    fn peek_ts(&mut self) -> Result<Option<u64>, SourceError> {
        while self.head.is_none() {
            match self.iter.next() {
                None => return Ok(None),
                Some(Ok(Entry::Event(r))) => self.head = Some(r),
                Some(Ok(Entry::Lost { cpu, count, .. })) => set_lost(&mut self.lost, cpu, count),
                Some(Err(e)) => {
                    self.bad += 1;
                    eprintln!("tracectl: warning: {e}");
                }
            }
        }
        Ok(self.head.map(|r| r.ts))
    }

    fn peek(&mut self) -> Option<Record<'_>> {
        self.head
    }

    fn take(&mut self) -> Option<Taken<'_>> {
        let rec = self.head.take()?;
        let missed = self.lost.get_mut(rec.cpu as usize).and_then(Option::take);
        Some(Taken { rec, missed })
    }

    fn bad_pages(&self) -> u64 {
        self.bad
    }
}

#[derive(Debug, Clone, Copy)]
struct Item {
    ts: u64,
    off: u32,
    len: u32,
}

/// One CPU of a trace.dat buffer: the current page and its decoded record positions.
struct CpuCursor {
    pages: CpuPages,
    cpu: u32,
    layout: PageLayout,
    page: Vec<u8>,
    items: Vec<Item>,
    pos: usize,
    page_index: u64,
    /// Lost-events mark of the current page, for its first record.
    lost: Option<Option<u64>>,
    done: bool,
}

impl CpuCursor {
    /// Make sure `items[pos]` exists, reading pages as needed; false at the end.
    fn fill(&mut self, adjust: &TsAdjust, bad: &mut u64) -> Result<bool, DatError> {
        while self.pos >= self.items.len() {
            if self.done {
                return Ok(false);
            }
            let Some(page) = self.pages.next_page()? else {
                self.done = true;
                return Ok(false);
            };
            self.page.clear();
            self.page.extend_from_slice(page);
            self.items.clear();
            self.pos = 0;
            let index = self.page_index;
            self.page_index += 1;
            let base = self.page.as_ptr() as usize;
            match SubBuffer::new(self.layout, &self.page, self.cpu, index) {
                Err(e) => {
                    *bad += 1;
                    eprintln!("tracectl: warning: {e}");
                }
                Ok(sb) => {
                    for entry in sb {
                        match entry {
                            Ok(Entry::Event(r)) => {
                                let ts = if adjust.is_identity() {
                                    r.ts
                                } else {
                                    adjust.apply(r.ts, self.cpu)
                                };
                                let off = (r.data.as_ptr() as usize - base) as u32;
                                self.items.push(Item {
                                    ts,
                                    off,
                                    len: r.data.len() as u32,
                                });
                            }
                            Ok(Entry::Lost { count, .. }) => self.lost = Some(count),
                            Err(e) => {
                                *bad += 1;
                                eprintln!("tracectl: warning: {e}");
                                break;
                            }
                        }
                    }
                }
            }
        }
        Ok(true)
    }
}

/// The records of one buffer of a trace.dat file, all CPUs merged by time.
///
/// Ties go to the lower CPU, as trace-cmd orders them.
pub struct DatSource {
    cursors: Vec<CpuCursor>,
    adjust: TsAdjust,
    current: Option<usize>,
    bad: u64,
}

impl DatSource {
    /// Open buffer `buffer` (0 = the first, usually the top instance) of `dat`.
    pub fn open(dat: &DatFile, buffer: usize) -> Result<DatSource, DatError> {
        let header = dat.header_page_layout()?;
        DatSource::with_header(dat, buffer, &header)
    }

    fn with_header(
        dat: &DatFile,
        buffer: usize,
        header: &HeaderPage,
    ) -> Result<DatSource, DatError> {
        let b = &dat.buffers()[buffer];
        let mut cursors = Vec::new();
        for (i, c) in b.cpus().iter().enumerate() {
            let pages = dat.cpu_pages(buffer, i)?;
            let layout = PageLayout::new(header, Some(pages.page_size()), dat.endian());
            cursors.push(CpuCursor {
                pages,
                cpu: c.cpu,
                layout,
                page: Vec::new(),
                items: Vec::new(),
                pos: 0,
                page_index: 0,
                lost: None,
                done: false,
            });
        }
        cursors.sort_by_key(|c| c.cpu);
        Ok(DatSource {
            cursors,
            adjust: dat.ts_adjust(),
            current: None,
            bad: 0,
        })
    }

    /// The first and last record timestamps of every CPU with data: `(cpu, first, last)`.
    ///
    /// Reads the whole buffer once (for `--first-event` / `--last-event`).
    pub fn cpu_bounds(dat: &DatFile, buffer: usize) -> Result<Vec<(u32, u64, u64)>, DatError> {
        let mut s = DatSource::open(dat, buffer)?;
        let adjust = s.adjust;
        let mut bad = 0;
        let mut out = Vec::new();
        for c in s.cursors.iter_mut() {
            let mut first = None;
            let mut last = 0;
            while c.fill(&adjust, &mut bad)? {
                let it = c.items[c.pos];
                first.get_or_insert(it.ts);
                last = it.ts;
                c.pos = c.items.len();
            }
            // `last` above is the first record of the last page; walk that page's records.
            if let Some(l) = c.items.last() {
                last = last.max(l.ts);
            }
            if let Some(f) = first {
                out.push((c.cpu, f, last));
            }
        }
        Ok(out)
    }
}

impl RecordSource for DatSource {
    fn peek_ts(&mut self) -> Result<Option<u64>, SourceError> {
        if let Some(i) = self.current {
            let c = &self.cursors[i];
            return Ok(Some(c.items[c.pos].ts));
        }
        let mut best: Option<(usize, u64)> = None;
        for i in 0..self.cursors.len() {
            let c = &mut self.cursors[i];
            if !c.fill(&self.adjust, &mut self.bad)? {
                continue;
            }
            let ts = c.items[c.pos].ts;
            if best.map_or(true, |(_, b)| ts < b) {
                best = Some((i, ts));
            }
        }
        self.current = best.map(|(i, _)| i);
        Ok(best.map(|(_, ts)| ts))
    }

    fn peek(&mut self) -> Option<Record<'_>> {
        let c = &self.cursors[self.current?];
        let it = c.items[c.pos];
        Some(Record {
            cpu: c.cpu,
            ts: it.ts,
            data: &c.page[it.off as usize..(it.off + it.len) as usize],
        })
    }

    fn take(&mut self) -> Option<Taken<'_>> {
        let i = self.current.take()?;
        let c = &mut self.cursors[i];
        let it = c.items[c.pos];
        c.pos += 1;
        let missed = c.lost.take();
        let data = &c.page[it.off as usize..(it.off + it.len) as usize];
        Some(Taken {
            rec: Record {
                cpu: c.cpu,
                ts: it.ts,
                data,
            },
            missed,
        })
    }

    fn bad_pages(&self) -> u64 {
        self.bad
    }
}

/// Records per batch handed from a decoding thread to the report loop: large enough that
/// the channel costs nothing per record, small enough that memory stays flat.
const BATCH: usize = 4096;

/// One decoded record of a [`Batch`]: its bytes are `data[off..off + len]`.
#[derive(Debug, Clone, Copy)]
struct Slot {
    cpu: u32,
    ts: u64,
    off: u32,
    len: u32,
    missed: Option<Option<u64>>,
}

/// Records copied out of their pages, in the order the source gave them.
#[derive(Debug, Default)]
struct Batch {
    data: Vec<u8>,
    slots: Vec<Slot>,
}

enum Msg {
    Batch(Batch),
    /// The source is exhausted; the count of sub-buffers that failed to decode.
    End(u64),
    Failed(SourceError),
}

/// A [`RecordSource`] whose records are decoded by another source on a thread of its own.
///
/// Decompressing and merging the pages of a trace.dat is a third of a report's work and
/// does not depend on the rendering, so it runs beside it: on a machine with two cores the
/// report loop only formats. Records cross in batches of copied bytes over a bounded
/// channel (a few batches in flight), and emptied batches go back to the decoder to be
/// refilled, so memory stays flat and nothing is allocated per record.
pub struct ThreadedSource {
    rx: std::sync::mpsc::Receiver<Msg>,
    recycle: std::sync::mpsc::Sender<Batch>,
    batch: Batch,
    pos: usize,
    bad: u64,
    ended: bool,
}

impl ThreadedSource {
    /// Start decoding `source` on a thread of `scope`, calling `look` there with each
    /// record's payload before it is handed over (to prepare what the reader will need
    /// for it, such as its event's compiled format, while the reader is busy). The thread
    /// stops at the source's end, at its first error (handed to the reader), or when this
    /// value is dropped.
    pub fn spawn_with<'scope, S, L>(
        scope: &'scope std::thread::Scope<'scope, '_>,
        mut source: S,
        mut look: L,
    ) -> ThreadedSource
    where
        S: RecordSource + Send + 'scope,
        L: FnMut(&[u8]) + Send + 'scope,
    {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Msg>(4);
        let (recycle, empties) = std::sync::mpsc::channel::<Batch>();
        scope.spawn(move || {
            let mut batch = Batch::default();
            loop {
                match source.peek_ts() {
                    Err(e) => {
                        let _ = tx.send(Msg::Batch(batch));
                        let _ = tx.send(Msg::Failed(e));
                        return;
                    }
                    Ok(None) => {
                        let _ = tx.send(Msg::Batch(batch));
                        let _ = tx.send(Msg::End(source.bad_pages()));
                        return;
                    }
                    Ok(Some(_)) => {}
                }
                let Some(t) = source.take() else {
                    let _ = tx.send(Msg::Batch(batch));
                    let _ = tx.send(Msg::End(source.bad_pages()));
                    return;
                };
                look(t.rec.data);
                let off = batch.data.len();
                crate::bytes::put(&mut batch.data, t.rec.data);
                batch.slots.push(Slot {
                    cpu: t.rec.cpu,
                    ts: t.rec.ts,
                    off: off as u32,
                    len: t.rec.data.len() as u32,
                    missed: t.missed,
                });
                if batch.slots.len() >= BATCH || batch.data.len() >= 1 << 30 {
                    let next = empties.try_recv().unwrap_or_default();
                    if tx
                        .send(Msg::Batch(std::mem::replace(&mut batch, next)))
                        .is_err()
                    {
                        // The reader is gone (the report ended early).
                        return;
                    }
                }
            }
        });
        ThreadedSource {
            rx,
            recycle,
            batch: Batch::default(),
            pos: 0,
            bad: 0,
            ended: false,
        }
    }

    fn current(&self) -> Option<(Slot, &[u8])> {
        let s = *self.batch.slots.get(self.pos)?;
        Some((
            s,
            &self.batch.data[s.off as usize..(s.off + s.len) as usize],
        ))
    }
}

impl RecordSource for ThreadedSource {
    fn peek_ts(&mut self) -> Result<Option<u64>, SourceError> {
        loop {
            if let Some(s) = self.batch.slots.get(self.pos) {
                return Ok(Some(s.ts));
            }
            if self.ended {
                return Ok(None);
            }
            match self.rx.recv() {
                Ok(Msg::Batch(b)) => {
                    let mut old = std::mem::replace(&mut self.batch, b);
                    self.pos = 0;
                    old.data.clear();
                    old.slots.clear();
                    let _ = self.recycle.send(old);
                }
                Ok(Msg::End(bad)) => {
                    self.bad = bad;
                    self.ended = true;
                }
                Ok(Msg::Failed(e)) => {
                    self.ended = true;
                    return Err(e);
                }
                Err(_) => {
                    self.ended = true;
                    return Err("the trace data decoder stopped unexpectedly".into());
                }
            }
        }
    }

    fn take(&mut self) -> Option<Taken<'_>> {
        let (s, _) = self.current()?;
        self.pos += 1;
        let data = &self.batch.data[s.off as usize..(s.off + s.len) as usize];
        Some(Taken {
            rec: Record {
                cpu: s.cpu,
                ts: s.ts,
                data,
            },
            missed: s.missed,
        })
    }

    fn peek(&mut self) -> Option<Record<'_>> {
        let (s, data) = self.current()?;
        Some(Record {
            cpu: s.cpu,
            ts: s.ts,
            data,
        })
    }

    fn bad_pages(&self) -> u64 {
        self.bad
    }
}
