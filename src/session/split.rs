//! `trace-cmd split`: cut the top buffer of a trace.dat into smaller trace.dat files, by
//! time, by event count or by pages, once or repeatedly, over all CPUs or per CPU.
//!
//! The records are read with the report's [`DatSource`], packed again into sub-buffer
//! pages by [`SubBufferWriter`] exactly where trace-cmd 3.1.6 packs them (so `-p` cuts
//! at the same records), staged per CPU in temporary files next to the output and written
//! with the project's trace.dat writer in the input's version, compression and byte
//! order. Every part is written under a `.partial` name and renamed only when all parts
//! are done, so a failure leaves nothing behind; so does a split stopped through
//! [`split_until`]'s flag (set by a signal handler, say).
//!
//! What trace-cmd 3.1.6 does and this loop keeps, because the parts must match its
//! parts record for record:
//! - the window of a time split starts at the part's first record (or at the start time),
//!   and the record that passes it starts the next part;
//! - the record that ends a part goes back to its CPU only when that CPU has records in
//!   the part; otherwise trace-cmd has stepped past it and it is in no part;
//! - with an end time, `-r` still writes a single part (the next part would start at the
//!   end time);
//! - a part holds every CPU of the input, empty ones too; timestamps are stored with the
//!   file's offsets applied, and the parts carry none of the input's options.
//!
//! A page after lost events keeps the count where it fits. trace-cmd writes its 8-byte
//! count after the records whatever room is left and flags it stored; libtraceevent reads
//! it as a C `int`. With 4 bytes left (little endian) that int is in the page, and the
//! parts here hold the same bytes, so both readers print the same count (or
//! `[EVENTS DROPPED]` for one not known). With no room left, trace-cmd's count goes past
//! the page and a reader of its part takes the low half of whatever follows the page for
//! the count (in a file, the next page's timestamp: `CPU:0 [1002000000 EVENTS DROPPED]`,
//! or no line when that half is 0); this loop does not follow there: the page says the
//! count is unknown (`CPU:N [EVENTS DROPPED]`), as the kernel says it for a full page.
//! And from a version 6 input with instance buffers trace-cmd's parts keep a BUFFER option
//! per instance pointing at offset 0 with no data, which only moves report's columns by the
//! instance name's width; the parts here have the top buffer alone.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::dat::{
    write_dat, BufferData, BufferSource, Compression, DatError, DatFile, Metadata, WriteOptions,
};
use crate::render::tracecmd::{DatSource, RecordSource};
use crate::ring::{stored_record_size, PageLayout, SubBufferWriter};

/// When a part ends (trace-cmd split's `-s`, `-m`, `-u`, `-e`, `-p`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitBy {
    /// `-s`: this many seconds after the part's first record.
    Seconds(u64),
    /// `-m`: this many milliseconds.
    Millis(u64),
    /// `-u`: this many microseconds.
    Micros(u64),
    /// `-e`: this many records.
    Events(u64),
    /// `-p`: this many sub-buffer pages per CPU (implies per-CPU splitting).
    Pages(u64),
}

impl SplitBy {
    fn count(self) -> u64 {
        match self {
            SplitBy::Seconds(n)
            | SplitBy::Millis(n)
            | SplitBy::Micros(n)
            | SplitBy::Events(n)
            | SplitBy::Pages(n) => n,
        }
    }

    /// The time window in nanoseconds, for the time splits.
    fn window_ns(self) -> Option<u64> {
        match self {
            SplitBy::Seconds(n) => Some(n.saturating_mul(1_000_000_000)),
            SplitBy::Millis(n) => Some(n.saturating_mul(1_000_000)),
            SplitBy::Micros(n) => Some(n.saturating_mul(1_000)),
            SplitBy::Events(_) | SplitBy::Pages(_) => None,
        }
    }
}

/// What to split and how (trace-cmd split's options).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitOptions {
    /// The trace.dat to split (`-i`).
    pub input: PathBuf,
    /// Base name of the parts (`-o`); the input's name when None.
    pub output: Option<PathBuf>,
    /// When a part ends; None: at the end time or the end of the input.
    pub by: Option<SplitBy>,
    /// `-r`: write parts until the end time or the end of the input, named
    /// `BASE.0001`, `BASE.0002`, ...; otherwise one part, `BASE.1`.
    pub repeat: bool,
    /// `-c`: apply the limit to each CPU on its own.
    pub per_cpu: bool,
    /// `-C`: keep only this CPU's records.
    pub cpu: Option<u32>,
    /// Records before this time (ns, as `report` shows them) are left out; 0: none.
    pub start_ns: u64,
    /// Records after this time end the split; 0: none.
    pub end_ns: u64,
}

/// One file written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitPart {
    /// Its path.
    pub path: PathBuf,
    /// Records in it.
    pub events: u64,
    /// Sub-buffer pages in it, over all CPUs.
    pub pages: u64,
}

/// What [`split`] wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SplitSummary {
    /// The parts, in order.
    pub parts: Vec<SplitPart>,
    /// Records that ended a part on a CPU without records in it, which trace-cmd's split
    /// steps past (see the module notes): in no part.
    pub skipped: u64,
    /// Notes for the caller to show (instance buffers left out).
    pub warnings: Vec<String>,
}

/// Why [`split`] failed. Nothing is left behind: no part, no temporary file.
#[derive(Debug)]
#[non_exhaustive]
pub enum SplitError {
    /// The input could not be read.
    Input(DatError),
    /// The input holds a latency tracer's text, which has no records to split.
    Latency(PathBuf),
    /// A limit of 0 (`-s`, `-m`, `-u`, `-e`, `-p` need 1 or more).
    ZeroLimit,
    /// The end time is before the start time.
    EndBeforeStart {
        /// Start, ns.
        start_ns: u64,
        /// End, ns.
        end_ns: u64,
    },
    /// `-C` names a CPU the input has no data for.
    NoSuchCpu {
        /// The input.
        path: PathBuf,
        /// The CPU asked for.
        cpu: u32,
        /// The CPUs of the input.
        cpus: Vec<u32>,
    },
    /// A part would overwrite the input.
    OutputIsInput(PathBuf),
    /// A sub-buffer of the input does not decode.
    BadPage {
        /// The input.
        path: PathBuf,
        /// The decoder's message (CPU, sub-buffer, offset).
        message: String,
    },
    /// Reading the input's records failed.
    Read {
        /// The input.
        path: PathBuf,
        /// The reader's message.
        message: String,
    },
    /// Writing a part or its temporary files failed.
    Write {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: io::Error,
    },
    /// The trace.dat writer failed.
    Output(DatError),
    /// The stop flag was set before the parts were all written (see [`split_until`]).
    Interrupted,
}

impl fmt::Display for SplitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SplitError::Input(e) | SplitError::Output(e) => write!(f, "{e}"),
            SplitError::Latency(p) => write!(
                f,
                "{}: a latency tracer's trace (text) has no records to split",
                p.display()
            ),
            SplitError::ZeroLimit => write!(f, "the split size must be greater than 0"),
            SplitError::EndBeforeStart { start_ns, end_ns } => write!(
                f,
                "the end time {} is before the start time {}: give an end after the start",
                secs(*end_ns),
                secs(*start_ns)
            ),
            SplitError::NoSuchCpu { path, cpu, cpus } => {
                let list: Vec<String> = cpus.iter().map(u32::to_string).collect();
                write!(
                    f,
                    "{}: no CPU {cpu} in the file (its CPUs: {})",
                    path.display(),
                    if list.is_empty() {
                        "none".to_string()
                    } else {
                        list.join(", ")
                    }
                )
            }
            SplitError::OutputIsInput(p) => write!(
                f,
                "the part {} would overwrite the input: choose another output name",
                p.display()
            ),
            SplitError::BadPage { path, message } => write!(
                f,
                "{}: {message}; the parts would miss its records, so nothing was written",
                path.display()
            ),
            SplitError::Read { path, message } => {
                write!(f, "{}: reading the records: {message}", path.display())
            }
            SplitError::Write { path, source } => write!(f, "{}: {source}", path.display()),
            SplitError::Interrupted => write!(f, "interrupted: no part was written"),
        }
    }
}

impl std::error::Error for SplitError {}

fn secs(ns: u64) -> String {
    format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000)
}

/// The name of part `n` (from 1): `BASE.1` for a single split, `BASE.0001`... with `-r`,
/// as trace-cmd 3.1.6 names them.
pub fn part_path(base: &Path, repeat: bool, n: u32) -> PathBuf {
    let mut s = base.as_os_str().to_os_string();
    if repeat {
        s.push(format!(".{n:04}"));
    } else {
        s.push(".1");
    }
    PathBuf::from(s)
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

/// Split the top buffer of `o.input` into parts; see the module documentation.
pub fn split(o: &SplitOptions) -> Result<SplitSummary, SplitError> {
    split_until(o, &AtomicBool::new(false))
}

/// [`split`], which gives up with [`SplitError::Interrupted`] once `stop` is set (it is
/// read between records and between parts): the parts written so far and the temporary
/// files are removed, as on any other error.
pub fn split_until(o: &SplitOptions, stop: &AtomicBool) -> Result<SplitSummary, SplitError> {
    if o.by.is_some_and(|b| b.count() == 0) {
        return Err(SplitError::ZeroLimit);
    }
    if o.end_ns != 0 && o.end_ns < o.start_ns {
        return Err(SplitError::EndBeforeStart {
            start_ns: o.start_ns,
            end_ns: o.end_ns,
        });
    }
    let dat = DatFile::open(&o.input).map_err(SplitError::Input)?;
    let top = dat.buffer(0).map_err(SplitError::Input)?;
    if matches!(top.data, BufferData::Latency { .. }) {
        return Err(SplitError::Latency(o.input.clone()));
    }
    let mut cpus: Vec<u32> = top.cpus().iter().map(|c| c.cpu).collect();
    cpus.sort_unstable();
    if let Some(cpu) = o.cpu {
        if !cpus.contains(&cpu) {
            return Err(SplitError::NoSuchCpu {
                path: o.input.clone(),
                cpu,
                cpus,
            });
        }
    }
    let base = o.output.clone().unwrap_or_else(|| o.input.clone());
    let first = part_path(&base, o.repeat, 1);
    if same_file(&first, &o.input) {
        return Err(SplitError::OutputIsInput(first));
    }
    let mut warnings = Vec::new();
    let others: Vec<String> = dat.buffers()[1..]
        .iter()
        .map(|b| format!("\"{}\"", b.name))
        .collect();
    if !others.is_empty() {
        warnings.push(format!(
            "{}: the instance buffers {} are not in the parts (split takes the top buffer, \
             as trace-cmd 3.1.6 does)",
            o.input.display(),
            others.join(", ")
        ));
    }

    let header = dat.header_page_layout().map_err(SplitError::Input)?;
    let layout = PageLayout::new(&header, Some(top.page_size), dat.endian());
    let h = dat.header();
    let wo = WriteOptions {
        version: h.version,
        compression: if h.version < 7 {
            Compression::None
        } else {
            h.compression
        },
        endian: h.endian,
        long_size: h.file_long_size,
        page_size: h.page_size,
    };
    let clock = top.clock.clone().unwrap_or_else(|| "local".into());
    let meta = Metadata::from_dat(&dat).map_err(SplitError::Input)?;

    let per_cpu = o.per_cpu || o.cpu.is_some() || matches!(o.by, Some(SplitBy::Pages(_)));
    let open = |cpu: Option<u32>| -> Result<DatSource, SplitError> {
        let mut s = DatSource::open(&dat, 0).map_err(SplitError::Input)?;
        if let Some(c) = cpu {
            s.retain_cpu(c);
        }
        Ok(s)
    };
    let mut reader = if per_cpu {
        let wanted: Vec<u32> = match o.cpu {
            Some(c) => vec![c],
            None => cpus.clone(),
        };
        let mut v = Vec::new();
        for c in wanted {
            v.push((c, open(Some(c))?));
        }
        Reader::PerCpu(v)
    } else {
        Reader::Merged(open(None)?)
    };

    let mut written: Vec<PathBuf> = Vec::new();
    let result = (|| {
        let mut summary = SplitSummary {
            warnings,
            ..SplitSummary::default()
        };
        let mut start = o.start_ns;
        let mut n = 1u32;
        loop {
            let path = part_path(&base, o.repeat, n);
            if same_file(&path, &o.input) {
                return Err(SplitError::OutputIsInput(path));
            }
            n = n.saturating_add(1);
            let partial = with_suffix(&path, ".partial");
            written.push(partial.clone());
            let mut part = Part::create(&path, &cpus, layout)?;
            let outcome = (|| {
                let current = part.fill(&mut reader, o, start, &mut summary.skipped, stop)?;
                let buffers = vec![part.buffer_source(&clock)?];
                write_dat(&partial, &wo, &meta, &[], buffers).map_err(SplitError::Output)?;
                if stop.load(Ordering::Relaxed) {
                    return Err(SplitError::Interrupted);
                }
                Ok(current)
            })();
            part.remove_temps();
            let current = outcome?;
            summary.parts.push(SplitPart {
                path,
                events: part.events,
                pages: part.pages,
            });
            if !o.repeat {
                break;
            }
            start = 0;
            if current == 0 || (o.end_ns != 0 && current >= o.end_ns) {
                break;
            }
        }
        Ok(summary)
    })();
    match result {
        Ok(summary) => {
            for (i, p) in summary.parts.iter().enumerate() {
                std::fs::rename(&written[i], &p.path).map_err(|source| {
                    for w in &written[i..] {
                        let _ = std::fs::remove_file(w);
                    }
                    SplitError::Write {
                        path: p.path.clone(),
                        source,
                    }
                })?;
            }
            Ok(summary)
        }
        Err(e) => {
            for w in &written {
                let _ = std::fs::remove_file(w);
            }
            Err(e)
        }
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    if a == b {
        return true;
    }
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// Where the records come from: one merged stream, or one stream per CPU.
enum Reader {
    Merged(DatSource),
    PerCpu(Vec<(u32, DatSource)>),
}

/// The record in hand: read from the input, not yet written.
#[derive(Debug, Default)]
struct Current {
    cpu: u32,
    ts: u64,
    data: Vec<u8>,
    missed: Option<Option<u64>>,
}

fn read_next(src: &mut DatSource, cur: &mut Current, path: &Path) -> Result<bool, SplitError> {
    let peeked = src.peek_ts().map_err(|e| SplitError::Read {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    if src.bad_pages() > 0 {
        let message = src.take_warnings().into_iter().next().unwrap_or_default();
        return Err(SplitError::BadPage {
            path: path.to_path_buf(),
            message,
        });
    }
    if peeked.is_none() {
        return Ok(false);
    }
    let Some(t) = src.take() else {
        return Ok(false);
    };
    cur.cpu = t.rec.cpu;
    cur.ts = t.rec.ts;
    cur.missed = t.missed;
    cur.data.clear();
    cur.data.extend_from_slice(t.rec.data);
    Ok(true)
}

/// One CPU of the part being written: its page in progress and its staged pages.
struct CpuOut {
    cpu: u32,
    writer: SubBufferWriter,
    tmp: PathBuf,
    file: Option<BufWriter<File>>,
    /// Time of the last record written in this part (trace-cmd's saved offset): the
    /// reader goes back to just after it. None when none, or once the input ran out.
    last: Option<u64>,
}

/// The part being written.
struct Part {
    cpus: Vec<CpuOut>,
    page_size: usize,
    events: u64,
    pages: u64,
}

impl Part {
    fn create(path: &Path, cpus: &[u32], layout: PageLayout) -> Result<Part, SplitError> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut part = Part {
            cpus: Vec::new(),
            page_size: layout.subbuf_size,
            events: 0,
            pages: 0,
        };
        for &cpu in cpus {
            let tmp = dir.join(format!(".tmp.{name}.{cpu}.{}", std::process::id()));
            let file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)
                .map_err(|source| {
                    part.remove_temps();
                    SplitError::Write {
                        path: tmp.clone(),
                        source,
                    }
                })?;
            part.cpus.push(CpuOut {
                cpu,
                writer: SubBufferWriter::new(layout),
                tmp,
                file: Some(BufWriter::new(file)),
                last: None,
            });
        }
        Ok(part)
    }

    fn remove_temps(&mut self) {
        for c in &mut self.cpus {
            c.file = None;
            let _ = std::fs::remove_file(&c.tmp);
        }
    }

    fn index_of(&self, cpu: u32) -> Option<usize> {
        self.cpus.iter().position(|c| c.cpu == cpu)
    }

    /// Store the page `i` has in progress, if any.
    fn flush_page(&mut self, i: usize) -> Result<(), SplitError> {
        let c = &mut self.cpus[i];
        if let Some(page) = c.writer.close_page() {
            if let Some(f) = c.file.as_mut() {
                f.write_all(page).map_err(|source| SplitError::Write {
                    path: c.tmp.clone(),
                    source,
                })?;
            }
            self.pages += 1;
        }
        Ok(())
    }

    /// Read records into the part as trace-cmd's split does (all CPUs merged, or each
    /// CPU in turn) and return where the next part starts: 0 when the input ran out.
    fn fill(
        &mut self,
        reader: &mut Reader,
        o: &SplitOptions,
        start: u64,
        skipped: &mut u64,
        stop: &AtomicBool,
    ) -> Result<u64, SplitError> {
        match reader {
            Reader::Merged(src) => self.fill_from(src, None, o, start, skipped, stop)?,
            Reader::PerCpu(v) => {
                for (cpu, src) in v.iter_mut() {
                    self.fill_from(src, Some(*cpu), o, start, skipped, stop)?;
                }
            }
        }
        for i in 0..self.cpus.len() {
            self.flush_page(i)?;
            let c = &mut self.cpus[i];
            if let Some(mut f) = c.file.take() {
                f.flush().map_err(|source| SplitError::Write {
                    path: c.tmp.clone(),
                    source,
                })?;
            }
        }
        let mut current = o.end_ns;
        for c in &self.cpus {
            if let Some(ts) = c.last {
                if current == 0 || ts > current {
                    current = ts.wrapping_add(1);
                }
            }
        }
        Ok(current)
    }

    /// One pass of trace-cmd's `parse_cpu`: from `src` (one CPU's records when `only` is
    /// set) until the limit, the end time or the end of the input.
    fn fill_from(
        &mut self,
        src: &mut DatSource,
        only: Option<u32>,
        o: &SplitOptions,
        start: u64,
        skipped: &mut u64,
        stop: &AtomicBool,
    ) -> Result<(), SplitError> {
        let path = o.input.as_path();
        let mut cur = Current::default();
        let mut have = read_next(src, &mut cur, path)?;
        let mut start = start;
        if start != 0 {
            while have && cur.ts < start {
                have = read_next(src, &mut cur, path)?;
            }
        } else if have {
            start = cur.ts;
        }
        let mut count = 0u64;
        let mut pages = 0u64;
        let limit = o.by.map_or(0, SplitBy::count);
        let window_end =
            o.by.and_then(SplitBy::window_ns)
                .map(|w| start.saturating_add(w));
        while have && (o.end_ns == 0 || cur.ts <= o.end_ns) {
            if stop.load(Ordering::Relaxed) {
                return Err(SplitError::Interrupted);
            }
            let Some(i) = self.index_of(cur.cpu) else {
                // A CPU missing from the table cannot happen with one buffer's streams.
                have = read_next(src, &mut cur, path)?;
                continue;
            };
            let size = stored_record_size(cur.data.len());
            if !self.cpus[i].writer.fits(size) || cur.missed.is_some() {
                if matches!(o.by, Some(SplitBy::Pages(_))) {
                    pages += 1;
                    if pages > limit {
                        break;
                    }
                }
                self.flush_page(i)?;
                let missed = cur.missed.map(|m| m.unwrap_or(u64::MAX));
                self.cpus[i].writer.open_page(cur.ts, missed);
            }
            self.cpus[i].last = Some(cur.ts);
            if !self.cpus[i].writer.push(cur.ts, &cur.data) {
                // Only a time extend went in; the record comes round again.
                continue;
            }
            self.events += 1;
            have = read_next(src, &mut cur, path)?;
            if !have {
                match only {
                    None => self.cpus.iter_mut().for_each(|c| c.last = None),
                    Some(cpu) => {
                        if let Some(j) = self.index_of(cpu) {
                            self.cpus[j].last = None;
                        }
                    }
                }
                break;
            }
            if let Some(end) = window_end {
                if cur.ts > end {
                    break;
                }
            }
            if matches!(o.by, Some(SplitBy::Events(_))) {
                count += 1;
                if count >= limit {
                    break;
                }
            }
        }
        if have {
            // The record in hand ends the part: it goes back to its CPU when that CPU
            // has records in the part, otherwise trace-cmd has stepped past it.
            let back = self
                .index_of(cur.cpu)
                .is_some_and(|i| self.cpus[i].last.is_some());
            if !(back && src.untake(cur.cpu, cur.missed)) {
                *skipped += 1;
            }
        }
        Ok(())
    }

    /// The staged pages as the top buffer of the part.
    fn buffer_source(&self, clock: &str) -> Result<BufferSource<'static>, SplitError> {
        let mut cpus: Vec<(u32, Box<dyn Read>)> = Vec::new();
        for c in &self.cpus {
            let f = File::open(&c.tmp).map_err(|source| SplitError::Write {
                path: c.tmp.clone(),
                source,
            })?;
            cpus.push((c.cpu, Box::new(io::BufReader::new(f))));
        }
        Ok(BufferSource {
            name: String::new(),
            clock: clock.to_string(),
            page_size: self.page_size,
            cpus,
        })
    }
}
