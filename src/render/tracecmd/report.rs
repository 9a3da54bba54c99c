//! The `trace-cmd report` main loop: inputs merged by time, CPU and event filters, the
//! dropped-events lines, and output written in large blocks.
//!
//! Behaviour copied from trace-cmd 3.1.6 (facts, not code):
//!
//! * each input prints `cpus=N` before any record; with several inputs, every line (the
//!   `cpus=` lines included) starts with the input's name right-aligned to the longest
//!   name and `": "`;
//! * records of all inputs are merged by timestamp (after each input's `--ts-offset`);
//!   ties go to the earlier input, then the lower CPU;
//! * a lost-events mark belongs to the next record of its CPU: it is printed as
//!   `CPU:N [M EVENTS DROPPED]` just before that record, and is never printed when that
//!   record is filtered out (by `--cpu`, `-F` or `-v -F`).

use std::io::{self, Write};

use crate::event::Record;
use crate::ring::{Entry, PageError};

use super::{Catalog, EventFilter, FilterContext, TraceCmdRenderer, TraceCmdStyle};

/// One trace file (or buffer instance) to report.
pub struct ReportInput<'a> {
    /// Its name, printed before each line when several inputs are reported.
    pub name: String,
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
    pub entries: Box<dyn Iterator<Item = Result<Entry<'a>, PageError>> + 'a>,
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
    head: Option<Record<'a>>,
    lost: Vec<Option<Option<u64>>>,
    prefix: Vec<u8>,
}

impl<'a> Live<'a> {
    /// Advance to the next record, remembering lost-events marks; page errors are counted
    /// and written to `errors`.
    fn pull(&mut self, errors: &mut dyn FnMut(PageError)) {
        self.head = None;
        for e in self.input.entries.by_ref() {
            match e {
                Ok(Entry::Event(mut rec)) => {
                    rec.ts = rec.ts.wrapping_add_signed(self.input.ts_offset);
                    self.head = Some(rec);
                    return;
                }
                Ok(Entry::Lost { cpu, count, .. }) => {
                    let i = cpu as usize;
                    if i >= self.lost.len() {
                        self.lost.resize(i + 1, None);
                    }
                    self.lost[i] = Some(count);
                }
                Err(err) => errors(err),
            }
        }
    }
}

/// Write the report of `inputs` to `out`.
///
/// Output is buffered in blocks; an error of `out` (a closed pipe) ends the report and is
/// returned.
pub fn write_report<'a>(
    inputs: Vec<ReportInput<'a>>,
    opts: &ReportOptions,
    out: &mut dyn Write,
) -> io::Result<ReportSummary> {
    let multi = inputs.len() > 1;
    let width = inputs.iter().map(|i| i.name.len()).max().unwrap_or(0);
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 17);
    let mut summary = ReportSummary::default();
    let mut lives: Vec<Live<'a>> = Vec::new();
    for input in inputs {
        let mut prefix = Vec::new();
        if multi {
            for _ in input.name.len()..width {
                prefix.push(b' ');
            }
            prefix.extend_from_slice(input.name.as_bytes());
            prefix.extend_from_slice(b": ");
        }
        buf.extend_from_slice(&prefix);
        buf.extend_from_slice(format!("cpus={}\n", input.cpus).as_bytes());
        let renderer = TraceCmdRenderer::new(input.catalog, input.style.clone(), input.cmdlines.clone());
        lives.push(Live { input, renderer, head: None, lost: Vec::new(), prefix });
    }
    let mut bad = 0u64;
    let mut on_error = |e: PageError| {
        bad += 1;
        eprintln!("tracectl: warning: {e}");
    };
    for l in lives.iter_mut() {
        l.pull(&mut on_error);
    }
    loop {
        // The next record: smallest time, earliest input on ties (each input's own merge
        // already ordered its CPUs).
        let mut best: Option<(usize, u64)> = None;
        for (i, l) in lives.iter().enumerate() {
            if let Some(r) = &l.head {
                if best.map_or(true, |(_, t)| r.ts < t) {
                    best = Some((i, r.ts));
                }
            }
        }
        let Some((i, _)) = best else { break };
        let l = &mut lives[i];
        let rec = l.head.take().expect("chosen input has a record");
        let cpu = rec.cpu as usize;
        let missed = l.lost.get_mut(cpu).and_then(Option::take);
        if accept(l, &rec, opts) {
            if let Some(count) = missed {
                buf.extend_from_slice(&l.prefix);
                l.renderer.write_dropped(&mut buf, rec.cpu, count);
                summary.dropped_lines += 1;
            }
            buf.extend_from_slice(&l.prefix);
            l.renderer.write_record(&mut buf, &rec, None);
            summary.records += 1;
            if buf.len() >= 1 << 16 {
                out.write_all(&buf)?;
                buf.clear();
            }
        }
        l.pull(&mut on_error);
    }
    out.write_all(&buf)?;
    out.flush()?;
    summary.bad_pages = bad;
    Ok(summary)
}

fn accept(l: &mut Live, rec: &Record, opts: &ReportOptions) -> bool {
    if let Some(cpus) = &opts.cpus {
        if !cpus.contains(&rec.cpu) {
            return false;
        }
    }
    if l.input.filter.is_empty() {
        return true;
    }
    let Some(id) = rec.event_id(l.input.catalog.big_endian()) else { return false };
    let pid = l.renderer.pid(rec);
    let cmdlines = &l.renderer.cmdlines;
    let comm = |p: i32| cmdlines.comm(p).to_string();
    let ctx = FilterContext { comm: &comm, pid };
    l.input.filter.accepts(l.input.catalog, id, rec, &ctx)
}

/// Parse a `--cpu` list: `0,2-4`.
pub fn parse_cpu_list(s: &str) -> Result<Vec<u32>, String> {
    let mut v = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || format!("bad CPU list '{s}': expected numbers and ranges like 0,2-3");
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.trim().parse().map_err(|_| bad())?, b.trim().parse().map_err(|_| bad())?);
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
