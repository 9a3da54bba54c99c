//! The `trace-cmd report` main loop: inputs merged by time, CPU and event filters, the
//! dropped-events lines, and output written in large blocks.
//!
//! Behaviour copied from trace-cmd 3.1.6 (facts, not code):
//!
//! * each input prints `cpus=N` before any record; with several inputs, every line (the
//!   `cpus=` lines included) starts with the input's name right-aligned to the longest
//!   name and `": "`;
//! * the buffer instances of a file are inputs of their own, after every file's top
//!   buffer: they print no `cpus=` line, and their records start with the instance name
//!   (right-aligned, `": "`) while the top buffer's records start with as many blanks.
//!   trace-cmd learns the names as it goes: a file's `cpus=` line is aligned to the names
//!   seen so far (every file, the instances of the files before it) and is prefixed only
//!   when several files are read or the file before it had instances; records are
//!   prefixed when several files are read or the last file has instances;
//! * records of all inputs are merged by timestamp (after each input's `--ts-offset`);
//!   ties go to the earlier input, then the lower CPU;
//! * a lost-events mark belongs to the next record of its CPU: it is printed as
//!   `CPU:N [M EVENTS DROPPED]` just before that record, and is never printed when that
//!   record is filtered out (by `--cpu`, `-F` or `-v -F`).

use std::io::{self, Write};

use crate::event::Record;

use super::source::{RecordSource, SourceError};
use super::{Catalog, Cmdlines, EventFilter, FilterContext, TraceCmdRenderer, TraceCmdStyle};

/// One trace file (or buffer instance) to report.
pub struct ReportInput<'a> {
    /// Its name (a file's base name or an instance's name), printed before each line when
    /// several inputs or buffer instances are reported.
    pub name: String,
    /// A buffer instance of a file (not its top buffer): no `cpus=` line, always named.
    pub instance: bool,
    /// Index of the file it comes from, in the order the files were given.
    pub file: usize,
    /// The events of this input.
    pub catalog: &'a dyn Catalog,
    /// Renderer options (time format from its trace clock, `-l`, `-R`, ...).
    pub style: TraceCmdStyle,
    /// Comm table to start from (the file's saved cmdlines).
    pub cmdlines: super::Cmdlines,
    /// CPU count printed in the `cpus=N` line.
    pub cpus: usize,
    /// Added to every timestamp (`--ts-offset`).
    pub ts_offset: i64,
    /// `-F` filters of this input.
    pub filter: EventFilter,
    /// The records of all CPUs, merged by time, with lost-events marks.
    pub source: Box<dyn RecordSource + 'a>,
}

/// Options shared by all inputs.
#[derive(Debug, Clone, Default)]
pub struct ReportOptions {
    /// `--cpu LIST`: only these CPUs (None: all).
    pub cpus: Option<Vec<u32>>,
}

/// What a report printed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReportSummary {
    /// Records printed.
    pub records: u64,
    /// Dropped-events lines printed.
    pub dropped_lines: u64,
    /// Sub-buffers that failed to decode (reported on stderr, skipped).
    pub bad_pages: u64,
}

struct Live<'a> {
    input: ReportInput<'a>,
    renderer: TraceCmdRenderer<'a, dyn Catalog + 'a>,
    prefix: Vec<u8>,
}

/// A report that could not be written: the output failed or an input could not be read.
#[derive(Debug)]
pub enum ReportError {
    /// Writing the output failed (a closed pipe ends the report this way).
    Output(io::Error),
    /// Reading input `name` failed.
    Input {
        /// The input's name.
        name: String,
        /// What failed.
        source: SourceError,
    },
}

impl std::fmt::Display for ReportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReportError::Output(e) => write!(f, "writing the report: {e}"),
            ReportError::Input { name, source } => write!(f, "reading {name}: {source}"),
        }
    }
}

impl std::error::Error for ReportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReportError::Output(e) => Some(e),
            ReportError::Input { source, .. } => Some(source.as_ref()),
        }
    }
}

impl From<io::Error> for ReportError {
    fn from(e: io::Error) -> ReportError {
        ReportError::Output(e)
    }
}

/// Write the report of `inputs` to `out`.
///
/// Output is buffered in blocks; an error of `out` (a closed pipe) or of an input ends
/// the report and is returned.
pub fn write_report<'a>(
    inputs: Vec<ReportInput<'a>>,
    opts: &ReportOptions,
    out: &mut dyn Write,
) -> Result<ReportSummary, ReportError> {
    let files = inputs.iter().filter(|i| !i.instance).count();
    let multi = files > 1;
    let has_instances = |file: usize| inputs.iter().any(|i| i.instance && i.file == file);
    let named = |i: &ReportInput| multi || i.instance;
    let label = |name: &str, named: bool, width: usize| {
        let mut p = Vec::new();
        if named {
            p.resize(width.saturating_sub(name.len()), b' ');
            p.extend_from_slice(name.as_bytes());
            p.extend_from_slice(b": ");
        } else {
            p.resize(width + 2, b' ');
        }
        p
    };
    let width = inputs
        .iter()
        .filter(|i| named(i))
        .map(|i| i.name.len())
        .max()
        .unwrap_or(0);
    let prefixed = multi || (files > 0 && has_instances(files - 1));
    let mut buf: Vec<u8> = Vec::with_capacity(BATCH_ROOM);
    let mut summary = ReportSummary::default();
    let mut lives: Vec<Live<'a>> = Vec::new();
    for input in &inputs {
        if input.instance {
            continue;
        }
        if multi || (input.file > 0 && has_instances(input.file - 1)) {
            let seen = inputs
                .iter()
                .filter(|i| (multi && !i.instance) || (i.instance && i.file < input.file))
                .map(|i| i.name.len())
                .max()
                .unwrap_or(0);
            buf.extend_from_slice(&label(&input.name, named(input), seen));
        }
        buf.extend_from_slice(format!("cpus={}\n", input.cpus).as_bytes());
    }
    // What the info writer needs of each input: its events and options.
    let kinds: Vec<(&'a dyn Catalog, TraceCmdStyle)> = inputs
        .iter()
        .map(|i| (i.catalog, i.style.clone()))
        .collect();
    for input in inputs {
        let prefix = if prefixed {
            label(&input.name, named(&input), width)
        } else {
            Vec::new()
        };
        let renderer =
            TraceCmdRenderer::new(input.catalog, input.style.clone(), input.cmdlines.clone());
        lives.push(Live {
            input,
            renderer,
            prefix,
        });
    }
    std::thread::scope(|scope| {
        let mut pipe = InfoPipe::start(scope, kinds);
        report_loop(&mut lives, opts, &mut buf, &mut pipe, &mut summary, out)?;
        pipe.submit(&mut buf, out)?;
        pipe.finish(out)?;
        out.flush()?;
        Ok::<(), ReportError>(())
    })?;
    summary.bad_pages = lives.iter().map(|l| l.input.source.bad_pages()).sum();
    Ok(summary)
}

/// Records per batch of infos handed to the info writer.
const INFO_BATCH: usize = 1024;

/// The text at which a batch ends even with fewer deferred infos.
const BATCH_TEXT: usize = 1 << 18;

/// The room a batch's text buffer starts with: its limit and a last line's worth, so
/// that it never grows (each growth copied the whole batch).
const BATCH_ROOM: usize = BATCH_TEXT + (1 << 16);

/// The share of independent infos handed to the info writer (see `InfoPipe::share`).
const SHARE: f32 = 0.5;

/// Batches at the info writer at most: enough to even out batches of different cost.
const IN_FLIGHT: usize = 4;

/// The merge of all inputs, line by line into `buf`; infos that do not depend on the
/// renderer's state are left to `pipe`.
fn report_loop<'a>(
    lives: &mut [Live<'a>],
    opts: &ReportOptions,
    buf: &mut Vec<u8>,
    pipe: &mut InfoPipe<'a>,
    summary: &mut ReportSummary,
    out: &mut dyn Write,
) -> Result<(), ReportError> {
    loop {
        // The next record: smallest time (after the input's offset), earliest input on
        // ties; each source already ordered its CPUs.
        let mut best: Option<(usize, i128)> = None;
        for (i, l) in lives.iter_mut().enumerate() {
            let ts = l
                .input
                .source
                .peek_ts()
                .map_err(|source| ReportError::Input {
                    name: l.input.name.clone(),
                    source,
                })?;
            if let Some(ts) = ts {
                let t = i128::from(ts) + i128::from(l.input.ts_offset);
                if best.map_or(true, |(_, b)| t < b) {
                    best = Some((i, t));
                }
            }
        }
        let Some((i, _)) = best else { break };
        let l = &mut lives[i];
        let offset = l.input.ts_offset;
        let Some(taken) = l.input.source.take() else {
            break;
        };
        let mut rec = taken.rec;
        rec.ts = rec.ts.wrapping_add_signed(offset);
        if accept(
            &mut l.renderer,
            &l.input.filter,
            l.input.catalog,
            &rec,
            opts,
        ) {
            if let Some(count) = taken.missed {
                buf.extend_from_slice(&l.prefix);
                l.renderer.write_dropped(buf, rec.cpu, count);
                summary.dropped_lines += 1;
            }
            buf.extend_from_slice(&l.prefix);
            let graph = rec
                .event_id(l.input.catalog.endian())
                .and_then(|id| l.renderer.graph_entry(id));
            match graph {
                None if pipe.wants() && l.renderer.info_is_independent(&rec) => {
                    l.renderer.write_head(buf, &rec);
                    l.renderer.write_name(buf, &rec);
                    pipe.defer(i, buf.len(), &rec);
                    buf.push(b'\n');
                }
                None => l.renderer.write_record(buf, &rec, None),
                Some(f) => {
                    // A function_graph entry: a leaf when the very next record is its exit.
                    let owned = rec.data.to_vec();
                    let entry = Record {
                        data: &owned,
                        ..rec
                    };
                    write_graph_entry(l, &entry, f, offset, buf)?;
                }
            }
            summary.records += 1;
            if pipe.deferred() >= INFO_BATCH || buf.len() >= BATCH_TEXT {
                pipe.submit(buf, out)?;
            }
        }
    }
    Ok(())
}

/// A record whose info is written by the info writer: where it goes in its batch's text
/// and the record itself (its bytes at `off..off + len` of the batch's arena).
#[derive(Debug, Clone, Copy)]
struct Hole {
    input: usize,
    at: usize,
    cpu: u32,
    ts: u64,
    off: usize,
    len: usize,
}

/// One batch: the records whose infos are wanted, and the infos once written.
#[derive(Debug, Default)]
struct InfoJob {
    arena: Vec<u8>,
    holes: Vec<Hole>,
    infos: Vec<u8>,
    /// End of each hole's info in `infos`.
    ends: Vec<usize>,
}

impl InfoJob {
    /// A job with room for a full batch, so that it does not grow record by record.
    fn with_room() -> InfoJob {
        InfoJob {
            arena: Vec::with_capacity(INFO_BATCH * 128),
            holes: Vec::with_capacity(INFO_BATCH),
            infos: Vec::with_capacity(INFO_BATCH * 128),
            ends: Vec::with_capacity(INFO_BATCH),
        }
    }
}

/// The report's second thread: while the loop writes the heads (and everything that
/// reads or changes the comm table) of one batch of lines, a renderer of its own writes
/// the print-fmt text of the batch before; the lines are then put together in order.
/// With one batch in flight the output stays in order and memory stays flat.
struct InfoPipe<'a> {
    to_writer: Option<std::sync::mpsc::SyncSender<InfoJob>>,
    from_writer: std::sync::mpsc::Receiver<InfoJob>,
    /// The batch being filled.
    job: InfoJob,
    /// The batches at the writer, oldest first, with the text of their lines around the
    /// holes.
    in_flight: std::collections::VecDeque<Vec<u8>>,
    /// Emptied buffers for the next batches.
    spare_jobs: Vec<InfoJob>,
    spare_bufs: Vec<Vec<u8>>,
    /// A batch's lines put together.
    joined: Vec<u8>,
    /// The share of independent infos handed to the writer; the loop writes the others
    /// itself, so that neither thread waits for the other. Measured on two cores (where
    /// the decoding thread shares them too), alternating runs on 290k- and 870k-event
    /// files: 0.5 is best since the heads got cheaper (0.65 was 5-7% slower, 0.4 and 0.8
    /// slower still); all inline or all handed over is 10% slower. Feedback from the
    /// waits was tried and did no better: a wait says little when three threads share
    /// two cores.
    share: f32,
    credit: f32,
    _inputs: std::marker::PhantomData<&'a ()>,
}

impl<'a> InfoPipe<'a> {
    fn start<'s>(
        scope: &'s std::thread::Scope<'s, '_>,
        kinds: Vec<(&'a dyn Catalog, TraceCmdStyle)>,
    ) -> InfoPipe<'a>
    where
        'a: 's,
    {
        let (to_writer, jobs) = std::sync::mpsc::sync_channel::<InfoJob>(IN_FLIGHT);
        let (done, from_writer) = std::sync::mpsc::channel::<InfoJob>();
        scope.spawn(move || {
            let mut renderers: Vec<TraceCmdRenderer<'a, dyn Catalog + 'a>> = kinds
                .into_iter()
                .map(|(c, style)| TraceCmdRenderer::new(c, style, Cmdlines::new()))
                .collect();
            while let Ok(mut job) = jobs.recv() {
                job.infos.clear();
                job.ends.clear();
                for h in &job.holes {
                    let rec = Record {
                        cpu: h.cpu,
                        ts: h.ts,
                        data: &job.arena[h.off..h.off + h.len],
                    };
                    renderers[h.input].write_info(&mut job.infos, &rec);
                    job.ends.push(job.infos.len());
                }
                if done.send(job).is_err() {
                    return;
                }
            }
        });
        InfoPipe {
            to_writer: Some(to_writer),
            from_writer,
            job: InfoJob::with_room(),
            in_flight: std::collections::VecDeque::new(),
            spare_jobs: Vec::new(),
            spare_bufs: Vec::new(),
            joined: Vec::new(),
            share: SHARE,
            credit: 0.0,
            _inputs: std::marker::PhantomData,
        }
    }

    /// Leave the info of `rec` (from input `input`) to the writer; it goes at `at` in
    /// the current text.
    fn defer(&mut self, input: usize, at: usize, rec: &Record) {
        let off = self.job.arena.len();
        crate::bytes::put(&mut self.job.arena, rec.data);
        self.job.holes.push(Hole {
            input,
            at,
            cpu: rec.cpu,
            ts: rec.ts,
            off,
            len: rec.data.len(),
        });
    }

    /// Whether the next independent info should go to the writer.
    fn wants(&mut self) -> bool {
        self.credit += self.share;
        if self.credit >= 1.0 {
            self.credit -= 1.0;
            true
        } else {
            false
        }
    }

    /// Infos deferred in the current batch.
    fn deferred(&self) -> usize {
        self.job.holes.len()
    }

    /// End the current batch, whose text is `buf` (emptied for the next batch): write
    /// out the batch in flight, then hand this one to the writer (or write it out at once
    /// when it has no holes).
    fn submit(&mut self, buf: &mut Vec<u8>, out: &mut dyn Write) -> Result<(), ReportError> {
        if self.job.holes.is_empty() {
            self.finish(out)?;
            out.write_all(buf)?;
            buf.clear();
            return Ok(());
        }
        let next = self.spare_jobs.pop().unwrap_or_else(InfoJob::with_room);
        let job = std::mem::replace(&mut self.job, next);
        let text = std::mem::replace(
            buf,
            self.spare_bufs
                .pop()
                .unwrap_or_else(|| Vec::with_capacity(BATCH_ROOM)),
        );
        let sent = self.to_writer.as_ref().map(|t| t.send(job));
        if !matches!(sent, Some(Ok(()))) {
            return Err(ReportError::Output(io::Error::other(
                "the report's info writer stopped unexpectedly",
            )));
        }
        self.in_flight.push_back(text);
        if self.in_flight.len() >= IN_FLIGHT {
            self.write_oldest(out)?;
        }
        Ok(())
    }

    /// Wait for every batch in flight and write their lines out.
    fn finish(&mut self, out: &mut dyn Write) -> Result<(), ReportError> {
        while !self.in_flight.is_empty() {
            self.write_oldest(out)?;
        }
        Ok(())
    }

    /// Wait for the oldest batch in flight and write its lines out.
    fn write_oldest(&mut self, out: &mut dyn Write) -> Result<(), ReportError> {
        let Some(mut text) = self.in_flight.pop_front() else {
            return Ok(());
        };
        let mut job = self.from_writer.recv().map_err(|_| {
            ReportError::Output(io::Error::other(
                "the report's info writer stopped unexpectedly",
            ))
        })?;
        let joined = &mut self.joined;
        joined.clear();
        joined.reserve(text.len() + job.infos.len());
        let (mut from, mut start) = (0, 0);
        for (h, &end) in job.holes.iter().zip(&job.ends) {
            crate::bytes::put(joined, &text[from..h.at]);
            crate::bytes::put(joined, &job.infos[start..end]);
            from = h.at;
            start = end;
        }
        joined.extend_from_slice(&text[from..]);
        out.write_all(joined)?;
        job.arena.clear();
        job.holes.clear();
        self.spare_jobs.push(job);
        text.clear();
        self.spare_bufs.push(text);
        Ok(())
    }
}

fn write_graph_entry(
    l: &mut Live,
    entry: &Record,
    f: [super::FieldSpec; 2],
    offset: i64,
    buf: &mut Vec<u8>,
) -> Result<(), ReportError> {
    let next_ts = l
        .input
        .source
        .peek_ts()
        .map_err(|source| ReportError::Input {
            name: l.input.name.clone(),
            source,
        })?;
    if next_ts.is_some() {
        let exit = l
            .input
            .source
            .peek()
            .and_then(|next| l.renderer.graph_exit_of(entry, f, &next));
        if let Some(x) = exit {
            if let Some(t) = l.input.source.take() {
                let mut exit_rec = t.rec;
                exit_rec.ts = exit_rec.ts.wrapping_add_signed(offset);
                l.renderer.write_graph_leaf(buf, entry, f, &exit_rec, x);
                return Ok(());
            }
        }
    }
    l.renderer.write_record(buf, entry, None);
    Ok(())
}

fn accept<C: Catalog + ?Sized>(
    renderer: &mut TraceCmdRenderer<'_, C>,
    filter: &EventFilter,
    catalog: &C,
    rec: &Record,
    opts: &ReportOptions,
) -> bool {
    if let Some(cpus) = &opts.cpus {
        if !cpus.contains(&rec.cpu) {
            return false;
        }
    }
    if filter.is_empty() {
        return true;
    }
    let Some(id) = rec.event_id(catalog.endian()) else {
        return false;
    };
    let pid = renderer.pid(rec);
    let cmdlines = &renderer.cmdlines;
    let comm = |p: i32| cmdlines.comm(p).to_string();
    let ctx = FilterContext { comm: &comm, pid };
    filter.accepts(catalog, id, rec, &ctx)
}
/// Parse a `--cpu` list: `0,2-4`.
pub fn parse_cpu_list(s: &str) -> Result<Vec<u32>, String> {
    let mut v = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || format!("bad CPU list '{s}': expected numbers and ranges like 0,2-3");
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (
                    a.trim().parse().map_err(|_| bad())?,
                    b.trim().parse().map_err(|_| bad())?,
                );
                if a > b {
                    return Err(bad());
                }
                v.extend(a..=b);
            }
            None => v.push(part.parse().map_err(|_| bad())?),
        }
    }
    Ok(v)
}
