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
    /// Sub-buffers that failed to decode so far (skipped; see
    /// [`RecordSource::take_warnings`]).
    fn bad_pages(&self) -> u64 {
        0
    }
    /// The warnings met so far (a sub-buffer that failed to decode and was skipped), each
    /// handed out once: the caller shows them.
    fn take_warnings(&mut self) -> Vec<String> {
        Vec::new()
    }
}

/// A [`RecordSource`] over an iterator of ring entries (pages already in memory).
pub struct EntrySource<'a, I: Iterator<Item = Result<Entry<'a>, PageError>>> {
    iter: I,
    head: Option<Record<'a>>,
    lost: Vec<Option<Option<u64>>>,
    bad: u64,
    warnings: Vec<String>,
}

impl<'a, I: Iterator<Item = Result<Entry<'a>, PageError>>> EntrySource<'a, I> {
    /// Wrap a time-ordered entry iterator (for example [`crate::ring::Merge`]).
    pub fn new(iter: I) -> Self {
        EntrySource {
            iter,
            head: None,
            lost: Vec::new(),
            bad: 0,
            warnings: Vec::new(),
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
                    self.warnings.push(e.to_string());
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

    fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }
}

/// A sub-buffer that failed to decode: counted, and its error kept for the caller.
#[derive(Debug, Default)]
struct BadPages {
    count: u64,
    warnings: Vec<String>,
}

impl BadPages {
    fn add(&mut self, e: PageError) {
        self.count += 1;
        self.warnings.push(e.to_string());
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
    #[inline]
    fn fill(&mut self, adjust: &TsAdjust, bad: &mut BadPages) -> Result<bool, DatError> {
        // Inline for the usual case, a record left in the page: a call per record and
        // CPU cost more than the check.
        if self.pos < self.items.len() {
            return Ok(true);
        }
        self.refill(adjust, bad)
    }

    /// [`CpuCursor::fill`] once the page is used up.
    #[inline(never)]
    fn refill(&mut self, adjust: &TsAdjust, bad: &mut BadPages) -> Result<bool, DatError> {
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
                Err(e) => bad.add(e),
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
                                bad.add(e);
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

/// The first and last record of one CPU (see [`DatSource::cpu_bounds`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuBounds {
    /// The CPU.
    pub cpu: u32,
    /// Timestamp and event id (None for a record too short to hold one) of its first record.
    pub first: (u64, Option<u16>),
    /// The same of its last record.
    pub last: (u64, Option<u16>),
}

/// The records of one buffer of a trace.dat file, all CPUs merged by time.
///
/// Ties go to the lower CPU, as trace-cmd orders them.
pub struct DatSource {
    cursors: Vec<CpuCursor>,
    adjust: TsAdjust,
    current: Option<usize>,
    run: Option<Run>,
    bad: BadPages,
}

/// The CPU the last comparison of every CPU's next record chose, and the record it
/// must come before to stay the choice: the other CPUs' next records do not change
/// while this one's are taken, so a run of its records needs one comparison each
/// instead of a look at every CPU.
#[derive(Debug, Clone, Copy)]
struct Run {
    cursor: usize,
    /// (time, cursor) of the earliest next record of the other CPUs; none when they
    /// have no records left.
    bound: Option<(u64, usize)>,
}

impl Run {
    /// Whether the record at `ts` of the run's cursor comes before the bound (ties go
    /// to the lower cursor, as in the full comparison).
    #[inline]
    fn leads(&self, ts: u64) -> bool {
        self.bound
            .map_or(true, |(b, j)| ts < b || (ts == b && self.cursor < j))
    }
}

impl DatSource {
    /// Open buffer `buffer` (0 = the first, usually the top instance) of `dat`.
    pub fn open(dat: &DatFile, buffer: usize) -> Result<DatSource, DatError> {
        DatSource::open_adjusted(dat, buffer, dat.ts_adjust())
    }

    /// [`DatSource::open`] with timestamps adjusted by `adjust` instead of the file's own
    /// adjustments (see [`DatFile::ts_adjust_with`](crate::dat::DatFile::ts_adjust_with)).
    pub fn open_adjusted(
        dat: &DatFile,
        buffer: usize,
        adjust: TsAdjust,
    ) -> Result<DatSource, DatError> {
        let header = dat.header_page_layout()?;
        let mut s = DatSource::with_header(dat, buffer, &header)?;
        s.adjust = adjust;
        Ok(s)
    }

    /// Keep only the CPU `cpu` (what trace-cmd's per-CPU reads walk): the source then
    /// hands out that CPU's records alone. False when the buffer has no such CPU.
    pub fn retain_cpu(&mut self, cpu: u32) -> bool {
        self.cursors.retain(|c| c.cpu == cpu);
        self.current = None;
        self.run = None;
        !self.cursors.is_empty()
    }

    /// Give back the record [`RecordSource::take`] just handed out on `cpu`, with its
    /// lost-events mark `missed`, so that it comes next again (what trace-cmd does when
    /// it reads a record at a known offset). False when the last record taken on `cpu`
    /// is no longer in its current page: nothing changes then.
    pub fn untake(&mut self, cpu: u32, missed: Option<Option<u64>>) -> bool {
        let Some(c) = self.cursors.iter_mut().find(|c| c.cpu == cpu) else {
            return false;
        };
        if c.pos == 0 || c.pos > c.items.len() {
            return false;
        }
        c.pos -= 1;
        if missed.is_some() {
            c.lost = missed;
        }
        self.current = None;
        self.run = None;
        true
    }

    fn with_header(
        dat: &DatFile,
        buffer: usize,
        header: &HeaderPage,
    ) -> Result<DatSource, DatError> {
        let b = dat.buffer(buffer)?;
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
            run: None,
            bad: BadPages::default(),
        })
    }

    /// The first and last record of every CPU with data, each as (timestamp, event id),
    /// and the warnings of the sub-buffers skipped on the way.
    ///
    /// Reads the whole buffer once (for `--first-event` / `--last-event`).
    pub fn cpu_bounds(dat: &DatFile, buffer: usize) -> Result<BufferBounds, DatError> {
        let mut s = DatSource::open(dat, buffer)?;
        let adjust = s.adjust;
        let endian = dat.endian();
        let mut bad = BadPages::default();
        let mut out = Vec::new();
        for c in s.cursors.iter_mut() {
            let id_of = |c: &CpuCursor, it: &Item| {
                let at = it.off as usize;
                (it.len >= 2).then(|| endian.u16(&c.page[at..at + 2]))
            };
            let mut first = None;
            let mut last = (0, None);
            while c.fill(&adjust, &mut bad)? {
                let it = c.items[c.pos];
                if first.is_none() {
                    first = Some((it.ts, id_of(c, &it)));
                }
                last = (it.ts, id_of(c, &it));
                c.pos = c.items.len();
            }
            // `last` above is the first record of the last page; walk that page's records.
            if let Some(l) = c.items.last() {
                if l.ts >= last.0 {
                    last = (l.ts, id_of(c, l));
                }
            }
            if let Some(first) = first {
                out.push(CpuBounds {
                    cpu: c.cpu,
                    first,
                    last,
                });
            }
        }
        Ok(BufferBounds {
            cpus: out,
            warnings: bad.warnings,
        })
    }
}

impl RecordSource for DatSource {
    fn peek_ts(&mut self) -> Result<Option<u64>, SourceError> {
        if let Some(i) = self.current {
            let c = &self.cursors[i];
            return Ok(Some(c.items[c.pos].ts));
        }
        if let Some(run) = self.run {
            let c = &mut self.cursors[run.cursor];
            if c.fill(&self.adjust, &mut self.bad)? {
                let ts = c.items[c.pos].ts;
                if run.leads(ts) {
                    self.current = Some(run.cursor);
                    return Ok(Some(ts));
                }
            }
        }
        // Every CPU's next record (each CPU without one read further), the earliest
        // and the one after it; ties go to the lower CPU.
        let mut best: Option<(usize, u64)> = None;
        let mut second: Option<(u64, usize)> = None;
        for i in 0..self.cursors.len() {
            let c = &mut self.cursors[i];
            if !c.fill(&self.adjust, &mut self.bad)? {
                continue;
            }
            let ts = c.items[c.pos].ts;
            match best {
                Some((_, b)) if ts >= b => {
                    if second.map_or(true, |(s, _)| ts < s) {
                        second = Some((ts, i));
                    }
                }
                _ => {
                    if let Some((j, b)) = best {
                        second = Some((b, j));
                    }
                    best = Some((i, ts));
                }
            }
        }
        self.current = best.map(|(i, _)| i);
        self.run = best.map(|(cursor, _)| Run {
            cursor,
            bound: second,
        });
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
        self.bad.count
    }

    fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.bad.warnings)
    }
}

/// What [`DatSource::cpu_bounds`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BufferBounds {
    /// The first and last record of every CPU with data.
    pub cpus: Vec<CpuBounds>,
    /// Sub-buffers that failed to decode and were skipped, one line each.
    pub warnings: Vec<String>,
}

/// Records per batch handed from a decoding thread to the report loop: large enough that
/// the channel costs nothing per record, small enough that memory stays flat.
const BATCH: usize = 4096;

/// Records in the first batch; each next one is twice as large, up to [`BATCH`]. The
/// reader starts on the first records sooner, which matters when the whole file is a
/// few batches.
const FIRST_BATCH: usize = 256;

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

/// Bytes of record data a batch is given room for up front per record (records of the
/// common events are 16 to 64 bytes long).
const BATCH_DATA_ROOM: usize = 64;

impl Batch {
    /// An empty batch with room for `records` records: grown record by record, its
    /// vectors were copied at each doubling and touched twice the memory (fresh pages are
    /// costly: each one is a page fault that the kernel must clear). No more room than
    /// that: the first batches are small, and room reserved but never used still spreads
    /// the heap over more huge pages, each cleared whole when first touched.
    fn with_room(records: usize) -> Batch {
        Batch {
            data: Vec::with_capacity(records * BATCH_DATA_ROOM),
            slots: Vec::with_capacity(records),
        }
    }
}

enum Msg {
    Batch(Batch),
    /// Warnings of the source, in the order met.
    Warnings(Vec<String>),
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
    warnings: Vec<String>,
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
            let mut limit = FIRST_BATCH;
            let mut batch = Batch::with_room(limit);
            loop {
                match source.peek_ts() {
                    Err(e) => {
                        let _ = tx.send(Msg::Batch(batch));
                        let _ = tx.send(Msg::Warnings(source.take_warnings()));
                        let _ = tx.send(Msg::Failed(e));
                        return;
                    }
                    Ok(None) => {
                        let _ = tx.send(Msg::Batch(batch));
                        let _ = tx.send(Msg::Warnings(source.take_warnings()));
                        let _ = tx.send(Msg::End(source.bad_pages()));
                        return;
                    }
                    Ok(Some(_)) => {}
                }
                let Some(t) = source.take() else {
                    let _ = tx.send(Msg::Batch(batch));
                    let _ = tx.send(Msg::Warnings(source.take_warnings()));
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
                if batch.slots.len() >= limit || batch.data.len() >= 1 << 30 {
                    limit = (limit * 2).min(BATCH);
                    let warnings = source.take_warnings();
                    if !warnings.is_empty() {
                        let _ = tx.send(Msg::Warnings(warnings));
                    }
                    let next = empties
                        .try_recv()
                        .unwrap_or_else(|_| Batch::with_room(limit));
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
            warnings: Vec::new(),
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
                Ok(Msg::Warnings(w)) => self.warnings.extend(w),
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

    fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Rec = (u32, u64, Vec<u8>);

    fn drain(s: &mut DatSource, untake_every: usize) -> Vec<Rec> {
        let mut v = Vec::new();
        while s.peek_ts().unwrap().is_some() {
            let t = s.take().unwrap();
            let r = (t.rec.cpu, t.rec.ts, t.rec.data.to_vec());
            let missed = t.missed;
            // A record given back comes next again, whatever run the merge was on.
            if untake_every > 0 && v.len() % untake_every == 0 && s.untake(r.0, missed) {
                assert_eq!(s.peek_ts().unwrap(), Some(r.1));
                s.take().unwrap();
            }
            v.push(r);
        }
        v
    }

    #[test]
    fn runs_of_one_cpu_merge_as_a_comparison_of_every_cpu_does() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tracecmd");
        for name in ["2cpu-v7.dat", "4cpu-v7.dat", "function-v7.dat"] {
            let dat = DatFile::open(dir.join(name)).unwrap();
            let mut cpus: Vec<u32> = DatSource::open(&dat, 0)
                .unwrap()
                .cursors
                .iter()
                .map(|c| c.cpu)
                .collect();
            cpus.sort_unstable();
            // Each CPU alone, then merged here by looking at every CPU's next record for
            // each record (the earliest wins, the lower CPU on ties).
            let mut alone: Vec<std::collections::VecDeque<Rec>> = cpus
                .iter()
                .map(|&cpu| {
                    let mut s = DatSource::open(&dat, 0).unwrap();
                    assert!(s.retain_cpu(cpu));
                    drain(&mut s, 0).into()
                })
                .collect();
            let mut expected = Vec::new();
            loop {
                let next = (0..alone.len())
                    .filter_map(|i| alone[i].front().map(|r| (r.1, i)))
                    .min();
                let Some((_, i)) = next else { break };
                expected.push(alone[i].pop_front().unwrap());
            }
            let switches = expected.windows(2).filter(|w| w[0].0 != w[1].0).count();
            assert!(
                cpus.len() > 1 && switches > 10,
                "{name}: {switches} switches"
            );
            let merged = drain(&mut DatSource::open(&dat, 0).unwrap(), 0);
            assert!(merged == expected, "{name}: merged order differs");
            let given_back = drain(&mut DatSource::open(&dat, 0).unwrap(), 7);
            assert!(given_back == expected, "{name}: order differs after untake");
        }
    }

    fn bad_page(page: u64) -> Result<Entry<'static>, PageError> {
        Err(PageError {
            cpu: 1,
            page,
            offset: 16,
            message: "commit past the end".into(),
        })
    }

    #[test]
    fn skipped_sub_buffers_come_back_as_warnings() {
        let rec = Record {
            cpu: 0,
            ts: 5,
            data: &[1, 2, 3, 4],
        };
        let items = vec![bad_page(0), Ok(Entry::Event(rec)), bad_page(3)];
        let mut s = EntrySource::new(items.into_iter());
        assert_eq!(s.peek_ts().unwrap(), Some(5));
        assert!(s.take().is_some());
        assert_eq!(s.peek_ts().unwrap(), None);
        assert_eq!(s.bad_pages(), 2);
        let w = s.take_warnings();
        assert_eq!(w.len(), 2);
        assert!(
            w[0].starts_with("cpu1 sub-buffer 0 offset 16: commit past the end"),
            "{w:?}"
        );
        assert!(w[1].starts_with("cpu1 sub-buffer 3"), "{w:?}");
        assert!(
            s.take_warnings().is_empty(),
            "each warning is handed out once"
        );
    }

    #[test]
    fn a_decoding_thread_hands_its_warnings_over() {
        let items = vec![bad_page(7)];
        std::thread::scope(|scope| {
            let inner = EntrySource::new(items.into_iter());
            let mut s = ThreadedSource::spawn_with(scope, inner, |_| {});
            assert_eq!(s.peek_ts().unwrap(), None);
            assert_eq!(s.bad_pages(), 1);
            let w = s.take_warnings();
            assert_eq!(w.len(), 1);
            assert!(w[0].starts_with("cpu1 sub-buffer 7"), "{w:?}");
        });
    }
}
