//! `perf script`'s text (perf 6.1): one line per sample, `comm tid [cpu] secs.usecs:
//! period event: payload`, with the call chain on `\t<addr> sym+0xoff (dso)` lines and a
//! blank line after it; and Brendan Gregg's folded stacks (`--folded`).
//!
//! A tracepoint payload is printed by the event model's print-fmt engine in
//! libtraceevent's style ([`DatCatalog`]), with the schemas of the file's TRACING_DATA.

use std::io::{self, Write};

use crate::bytes::push_dec;
use crate::event::Record;
use crate::perf::data::abi::{attr_type, record, sample};
use crate::perf::data::{Attr, Event, PerfData, PerfDataError, RawRecord, Sample};
use crate::perf::machine::{ordered_records, Location, Machine};
use crate::render::tracecmd::{Catalog, DatCatalog};

/// Fields of `perf script -F` (perf's `PERF_OUTPUT_*`).
pub mod field {
    #![allow(missing_docs)]
    pub const COMM: u32 = 1 << 0;
    pub const TID: u32 = 1 << 1;
    pub const PID: u32 = 1 << 2;
    pub const TIME: u32 = 1 << 3;
    pub const CPU: u32 = 1 << 4;
    pub const EVNAME: u32 = 1 << 5;
    pub const TRACE: u32 = 1 << 6;
    pub const IP: u32 = 1 << 7;
    pub const SYM: u32 = 1 << 8;
    pub const DSO: u32 = 1 << 9;
    pub const SYMOFFSET: u32 = 1 << 11;
    pub const PERIOD: u32 = 1 << 13;
}

/// `-F` names and their fields.
pub const FIELD_NAMES: &[(&str, u32)] = &[
    ("comm", field::COMM),
    ("tid", field::TID),
    ("pid", field::PID),
    ("time", field::TIME),
    ("cpu", field::CPU),
    ("event", field::EVNAME),
    ("trace", field::TRACE),
    ("ip", field::IP),
    ("sym", field::SYM),
    ("dso", field::DSO),
    ("symoff", field::SYMOFFSET),
    ("period", field::PERIOD),
];

/// perf's default fields for an event type.
fn default_fields(type_: u32) -> u32 {
    use field::*;
    let base = COMM | TID | CPU | TIME | EVNAME;
    match type_ {
        attr_type::TRACEPOINT => base | TRACE,
        _ => base | IP | SYM | SYMOFFSET | DSO | PERIOD,
    }
}

/// Why `perf script` output cannot be made as asked.
#[derive(Debug)]
#[non_exhaustive]
pub enum ScriptError {
    /// The file could not be read.
    Data(PerfDataError),
    /// A `-F` field the samples do not carry, or that needs another.
    Field(String),
    /// Writing the output failed.
    Io(io::Error),
}

impl std::fmt::Display for ScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScriptError::Data(e) => write!(f, "{e}"),
            ScriptError::Field(m) => write!(f, "{m}"),
            ScriptError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ScriptError {}

impl From<PerfDataError> for ScriptError {
    fn from(e: PerfDataError) -> Self {
        ScriptError::Data(e)
    }
}
impl From<io::Error> for ScriptError {
    fn from(e: io::Error) -> Self {
        ScriptError::Io(e)
    }
}

/// Parse `-F` (`comm,tid,time`; a leading `type:` is not supported) into fields.
pub fn parse_fields(spec: &str) -> Result<u32, ScriptError> {
    let mut v = 0;
    for name in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let f = FIELD_NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, f)| *f)
            .ok_or_else(|| {
                ScriptError::Field(format!(
                    "invalid -F field '{name}'; known: {}",
                    FIELD_NAMES
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(",")
                ))
            })?;
        v |= f;
    }
    Ok(v)
}

/// What `tracectl perf script` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScriptOutput {
    /// perf script's text.
    Text,
    /// Collapsed stacks: `root;...;leaf count`, one line per distinct stack.
    Folded,
}

/// The name perf gives an event of the file.
pub fn event_name(attr: &Attr, catalog: Option<&DatCatalog>) -> String {
    if let Some(n) = &attr.name {
        return n.clone();
    }
    if attr.type_ == attr_type::TRACEPOINT {
        if let Some((s, n)) = catalog.and_then(|c| c.event(attr.config as u16)) {
            return format!("{s}:{n}");
        }
    }
    "unknown".to_string()
}

/// Samples of a perf.data printed as `perf script` prints them.
pub struct PerfScript<'f> {
    file: &'f PerfData,
    /// Threads, mappings and symbols.
    pub machine: Machine,
    catalog: Option<DatCatalog>,
    fields: Vec<u32>,
    /// `%*s: ` of each event's name, right-aligned to the longest.
    name_columns: Vec<Vec<u8>>,
    use_callchain: bool,
    warnings: Vec<String>,
    /// Threads that print runs of samples, and the shortest run printed in parallel.
    threads: usize,
    parallel_min: usize,
}

impl<'f> PerfScript<'f> {
    /// Prepare to print `file`; `user_fields` is `-F` (None: perf's defaults per type).
    pub fn new(
        file: &'f PerfData,
        machine: Machine,
        catalog: Option<DatCatalog>,
        user_fields: Option<u32>,
    ) -> Result<PerfScript<'f>, ScriptError> {
        let names: Vec<String> = file
            .attrs()
            .iter()
            .map(|a| event_name(a, catalog.as_ref()))
            .collect();
        let use_callchain = file
            .attrs()
            .iter()
            .any(|a| a.sample_type & sample::CALLCHAIN != 0);
        let mut warnings = Vec::new();
        let mut fields = Vec::new();
        for (a, name) in file.attrs().iter().zip(&names) {
            let mut f = match user_fields {
                Some(u) => {
                    if u & field::TRACE != 0 && a.type_ != attr_type::TRACEPOINT {
                        warnings.push(format!(
                            "'trace' not valid for {} events. Ignoring.",
                            type_name(a.type_)
                        ));
                    }
                    if a.type_ != attr_type::TRACEPOINT {
                        u & !field::TRACE
                    } else {
                        u
                    }
                }
                None => {
                    let mut d = default_fields(a.type_);
                    if a.type_ == attr_type::TRACEPOINT
                        && use_callchain
                        && a.sample_type & sample::CALLCHAIN != 0
                    {
                        d |= field::IP | field::SYM | field::SYMOFFSET | field::DSO;
                    }
                    d
                }
            };
            for (fl, bit, what, fname) in [
                (field::IP, sample::IP, "IP", "ip"),
                (field::TID | field::PID, sample::TID, "TID", "tid"),
                (field::TIME, sample::TIME, "TIME", "time"),
                (field::CPU, sample::CPU, "CPU", "cpu"),
            ] {
                if f & fl != 0 && a.sample_type & bit == 0 {
                    if user_fields.is_some() {
                        return Err(ScriptError::Field(format!(
                            "Samples for '{name}' event do not have {what} attribute set. Cannot print '{fname}' field."
                        )));
                    }
                    f &= !fl;
                }
            }
            if f & field::SYM != 0 && f & field::IP == 0 {
                return Err(ScriptError::Field(
                    "Display of symbols requested but neither sample IP nor sample address\nis selected. Hence, no addresses to convert to symbols.".into(),
                ));
            }
            if f & field::DSO != 0 && f & field::IP == 0 {
                return Err(ScriptError::Field(
                    "Display of DSO requested but no address to convert.".into(),
                ));
            }
            if f & field::SYMOFFSET != 0 && f & field::SYM == 0 {
                return Err(ScriptError::Field(
                    "Display of offsets requested but symbol is not selected.".into(),
                ));
            }
            fields.push(f);
        }
        let name_width = names.iter().map(|n| n.len()).max().unwrap_or(0);
        let name_columns = names
            .iter()
            .map(|n| {
                let mut v = Vec::new();
                pad_left(&mut v, n.as_bytes(), name_width);
                v.extend_from_slice(b": ");
                v
            })
            .collect();
        Ok(PerfScript {
            file,
            machine,
            catalog,
            fields,
            name_columns,
            use_callchain,
            warnings,
            // Printing in parallel measured slower than one thread on two CPUs (0.22 s
            // against 0.15 s for 880k tracepoint samples), so it is opt-in.
            threads: 1,
            parallel_min: 1024,
        })
    }

    /// Print with up to `threads` threads, in parallel only runs of at least `min_run`
    /// samples (by default one thread; runs of 1024).
    pub fn set_parallelism(&mut self, threads: usize, min_run: usize) {
        self.threads = threads.max(1);
        self.parallel_min = min_run.max(1);
    }

    /// Messages perf prints on stderr for this selection (`'trace' not valid ...`).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Print every sample in time order.
    pub fn run(&mut self, out: &mut dyn Write, mode: ScriptOutput) -> Result<(), ScriptError> {
        let records = ordered_records(self.file)?;
        if mode == ScriptOutput::Text {
            return self.run_text(&records, out);
        }
        let mut buf: Vec<u8> = Vec::with_capacity(1 << 17);
        let mut folded: std::collections::HashMap<Vec<u8>, u64> = Default::default();
        let mut order: Vec<Vec<u8>> = Vec::new();
        let mut stack: Vec<u8> = Vec::new();
        for r in &records {
            match self.file.decode(r)? {
                Event::Sample(s) => {
                    stack.clear();
                    self.write_folded(&s, &mut stack);
                    match folded.get_mut(&stack) {
                        Some(n) => *n += 1,
                        None => {
                            folded.insert(stack.clone(), 1);
                            order.push(stack.clone());
                        }
                    }
                }
                other => self.machine.apply(&other),
            }
        }
        order.sort();
        for k in order {
            buf.extend_from_slice(&k);
            buf.push(b' ');
            push_dec(&mut buf, folded[&k]);
            buf.push(b'\n');
        }
        out.write_all(&buf)?;
        Ok(())
    }

    /// The text of every sample: each run of samples between two records that change the
    /// machine (COMM, MMAP, FORK, ...) is decoded and printed in parallel chunks, which are
    /// written in order.
    fn run_text(
        &mut self,
        records: &[RawRecord<'_>],
        out: &mut dyn Write,
    ) -> Result<(), ScriptError> {
        /// Samples per chunk: enough to pay for a thread, few enough to bound the memory.
        const CHUNK: usize = 8192;
        let workers = self.threads;
        let mut bufs: Vec<Vec<u8>> = (0..workers).map(|_| Vec::with_capacity(1 << 17)).collect();
        let mut i = 0;
        while i < records.len() {
            let run = records[i..]
                .iter()
                .position(|r| r.type_ != record::SAMPLE)
                .unwrap_or(records.len() - i);
            let samples = &records[i..i + run];
            // Rounds of up to `workers` chunks.
            for round in samples.chunks(CHUNK * workers) {
                let per = round.len().div_ceil(workers).max(1);
                let this = &*self;
                if workers == 1 || round.len() < self.parallel_min {
                    bufs[0].clear();
                    this.write_samples(round, &mut bufs[0])?;
                    out.write_all(&bufs[0])?;
                    continue;
                }
                let results: Vec<Result<(), ScriptError>> = std::thread::scope(|scope| {
                    let mut parts = round.chunks(per).zip(bufs.iter_mut());
                    let (first, first_buf) = parts.next().expect("a round is never empty");
                    let handles: Vec<_> = parts
                        .map(|(part, buf)| {
                            scope.spawn(move || {
                                buf.clear();
                                this.write_samples(part, buf)
                            })
                        })
                        .collect();
                    first_buf.clear();
                    let mut results = vec![this.write_samples(first, first_buf)];
                    results.extend(
                        handles
                            .into_iter()
                            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))),
                    );
                    results
                });
                let used = round.len().div_ceil(per);
                for (r, buf) in results.into_iter().zip(&bufs).take(used) {
                    // What came before a bad record is printed, as in a serial run.
                    out.write_all(buf)?;
                    r?;
                }
            }
            i += run;
            if let Some(r) = records.get(i) {
                let ev = self.file.decode(r)?;
                self.machine.apply(&ev);
                i += 1;
            }
        }
        Ok(())
    }

    /// The text of `records`, all samples, appended to `out`.
    fn write_samples(
        &self,
        records: &[RawRecord<'_>],
        out: &mut Vec<u8>,
    ) -> Result<(), ScriptError> {
        for r in records {
            if let Event::Sample(s) = self.file.decode(r)? {
                self.write_sample(&s, out);
            }
        }
        Ok(())
    }

    /// One sample's text.
    pub fn write_sample(&self, s: &Sample, out: &mut Vec<u8>) {
        let f = self.fields[s.attr];
        let attr = &self.file.attrs()[s.attr];
        if f & field::COMM != 0 {
            let comm = self.machine.comm_of(s.tid);
            if f & field::IP != 0 && self.use_callchain {
                out.extend_from_slice(comm.as_bytes());
                out.push(b' ');
            } else {
                pad_left(out, comm.as_bytes(), 16);
                out.push(b' ');
            }
        }
        if f & field::PID != 0 && f & field::TID != 0 {
            pad_dec(out, s.pid as i64, 5);
            out.push(b'/');
            let start = out.len();
            push_i64(out, s.tid as i64);
            while out.len() - start < 5 {
                out.push(b' ');
            }
            out.push(b' ');
        } else if f & field::PID != 0 {
            pad_dec(out, s.pid as i64, 5);
            out.push(b' ');
        } else if f & field::TID != 0 {
            pad_dec(out, s.tid as i64, 5);
            out.push(b' ');
        }
        if f & field::CPU != 0 {
            out.push(b'[');
            for _ in crate::bytes::dec_len(u64::from(s.cpu))..3 {
                out.push(b'0');
            }
            push_dec(out, u64::from(s.cpu));
            out.extend_from_slice(b"] ");
        }
        if f & field::TIME != 0 {
            // `%12s` of `secs.usecs`: the seconds right-aligned in 5 (12 - 7) or wider.
            let secs = s.time / 1_000_000_000;
            let us = (s.time % 1_000_000_000) / 1000;
            let n = crate::bytes::dec_len(secs);
            for _ in n..5 {
                out.push(b' ');
            }
            push_dec(out, secs);
            out.push(b'.');
            let mut d = [b'0'; 6];
            let mut v = us;
            for c in d.iter_mut().rev() {
                *c = b'0' + (v % 10) as u8;
                v /= 10;
            }
            out.extend_from_slice(&d);
            out.extend_from_slice(b": ");
        }
        if f & field::PERIOD != 0 {
            pad_dec(out, s.period as i64, 10);
            out.push(b' ');
        }
        if f & field::EVNAME != 0 {
            out.extend_from_slice(&self.name_columns[s.attr]);
        }
        if f & field::TRACE != 0 && !s.raw.is_empty() {
            if let Some(c) = &self.catalog {
                let rec = Record {
                    cpu: s.cpu,
                    ts: s.time,
                    data: s.raw,
                };
                let start = out.len();
                c.write_info(&rec, out);
                if out.len() > start && out.last() == Some(&b'\n') {
                    out.pop();
                }
            }
        }
        if f & field::IP != 0 {
            let chain = self.use_callchain && attr.sample_type & sample::CALLCHAIN != 0;
            if chain {
                out.push(b'\n');
                let m = &self.machine;
                m.callchain(s, |loc, _| {
                    out.push(b'\t');
                    write_location(out, &loc, f, loc.addr);
                    out.push(b'\n');
                });
            } else {
                out.push(b' ');
                let loc = self.machine.resolve(s.pid, s.cpumode, s.ip);
                write_location(out, &loc, f, s.ip);
            }
        }
        out.push(b'\n');
    }

    /// One sample as a folded stack (root first, `;`-separated; the comm is the root).
    pub fn write_folded(&mut self, s: &Sample, out: &mut Vec<u8>) {
        let comm = self.machine.comm(s.tid).to_string();
        out.extend_from_slice(comm.as_bytes());
        let attr = &self.file.attrs()[s.attr];
        let mut frames: Vec<Location> = Vec::new();
        if attr.sample_type & sample::CALLCHAIN != 0 {
            self.machine.callchain(s, |l, _| frames.push(l));
        } else if attr.sample_type & sample::IP != 0 {
            frames.push(self.machine.resolve(s.pid, s.cpumode, s.ip));
        }
        for l in frames.iter().rev() {
            out.push(b';');
            match (l.sym, l.dso) {
                (Some((name, _)), _) => out.extend_from_slice(name.as_bytes()),
                // As stackcollapse-perf: an unknown function is named after its file.
                (None, Some(dso)) => {
                    let base = dso.rsplit('/').next().unwrap_or(dso);
                    out.push(b'[');
                    out.extend_from_slice(base.trim_matches(|c| c == '[' || c == ']').as_bytes());
                    out.push(b']');
                }
                (None, None) => out.extend_from_slice(b"[unknown]"),
            }
        }
    }
}

fn type_name(t: u32) -> &'static str {
    match t {
        attr_type::HARDWARE => "hardware",
        attr_type::SOFTWARE => "software",
        attr_type::TRACEPOINT => "tracepoint",
        attr_type::HW_CACHE => "hardware-cache",
        attr_type::RAW => "raw",
        attr_type::BREAKPOINT => "breakpoint",
        _ => "unknown",
    }
}

/// `%16lx sym+0xoff (dso)` as selected by `f`.
fn write_location(out: &mut Vec<u8>, loc: &Location, f: u32, ip: u64) {
    if f & field::IP != 0 {
        let mut h = Vec::with_capacity(16);
        push_hex(&mut h, ip);
        pad_left(out, &h, 16);
    }
    if f & field::SYM != 0 {
        out.push(b' ');
        match loc.sym {
            Some((name, off)) => {
                out.extend_from_slice(name.as_bytes());
                if f & field::SYMOFFSET != 0 {
                    out.extend_from_slice(b"+0x");
                    push_hex(out, off);
                }
            }
            None => out.extend_from_slice(b"[unknown]"),
        }
    }
    if f & field::DSO != 0 {
        out.extend_from_slice(b" (");
        out.extend_from_slice(loc.dso.unwrap_or("[unknown]").as_bytes());
        out.push(b')');
    }
}

fn push_hex(out: &mut Vec<u8>, v: u64) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut buf = [0u8; 16];
    let mut i = 16;
    let mut v = v;
    loop {
        i -= 1;
        buf[i] = HEX[(v & 15) as usize];
        v >>= 4;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

fn push_i64(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    push_dec(out, v.unsigned_abs());
}

fn pad_dec(out: &mut Vec<u8>, v: i64, width: usize) {
    let n = crate::bytes::dec_len(v.unsigned_abs()) + usize::from(v < 0);
    for _ in n..width {
        out.push(b' ');
    }
    push_i64(out, v);
}

fn pad_left(out: &mut Vec<u8>, s: &[u8], width: usize) {
    for _ in s.len()..width {
        out.push(b' ');
    }
    out.extend_from_slice(s);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dat::TracingData;
    use crate::event::KallsymsSource;

    /// The text of a committed perf.data with `threads` threads, printing in parallel runs
    /// of `min_run` samples or more.
    fn script(name: &str, threads: usize, min_run: usize) -> Vec<u8> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf");
        let path = dir.join(name);
        let file = PerfData::open(&path).unwrap();
        let kallsyms = KallsymsSource::file(dir.join("kallsyms"));
        let catalog = file.tracing_data().map(|(block, offset)| {
            let td = TracingData::parse(block, &path, offset).unwrap();
            DatCatalog::from_tracing_data(&td, kallsyms.clone())
        });
        let mut machine = Machine::new(kallsyms, Some(dir.join("symfs")));
        machine.set_build_ids(file.build_ids().unwrap());
        let mut s = PerfScript::new(&file, machine, catalog, None).unwrap();
        s.set_parallelism(threads, min_run);
        let mut out = Vec::new();
        s.run(&mut out, ScriptOutput::Text).unwrap();
        out
    }

    /// Runs cut into chunks for several threads print what perf printed, in order.
    #[test]
    fn parallel_chunks_print_perfs_text_in_order() {
        for (data, want) in [
            ("tp-mixed.data", "tp-mixed.script"),
            ("tp-callchain.data", "tp-callchain.script"),
            ("cc-spin.data", "cc-spin.script"),
        ] {
            let want = std::fs::read(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("tests/data/perf/results")
                    .join(want),
            )
            .unwrap();
            for threads in [1, 2, 3, 7] {
                let got = script(data, threads, 1);
                assert!(
                    got == want,
                    "{data} with {threads} threads differs from perf's text"
                );
            }
        }
    }
}
