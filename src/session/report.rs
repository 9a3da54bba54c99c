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

use crate::dat::{DatError, DatFile};
use crate::event::EventFormatter;
use crate::event::{PrintEnv, PrintStyle, Record};
use crate::render::tracecmd::{
    shown_missed, Catalog, Cmdlines, DatCatalog, DatSource, EventFilter, FieldSpec, FilterContext,
    RecordSource, SourceError, TimeFormat, TraceCmdRenderer, TraceCmdStyle, HARDIRQ_FLAG,
    SOFTIRQ_FLAG,
};
use crate::render::{json, CommonFields, Comms, KernelStyle};
use crate::session::profile_hooks::{HookError, ProfileHook};
use crate::session::report_profile::Profile;
use crate::session::report_wakeup::WakeupLatency;

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
    pub cmdlines: Cmdlines,
    /// CPU count printed in the `cpus=N` line.
    pub cpus: usize,
    /// The traced kernel's `sizeof(long)` (the width of a kernel stack's addresses).
    pub long_size: usize,
    /// The event hooks the file recorded (`record -H`), in the file's order: `--profile`
    /// times them after those of the options.
    pub profile_hooks: Vec<ProfileHook>,
    /// What `--cpu` adds to this input's CPU numbers before matching them: trace-cmd
    /// 3.1.6 numbers an instance's CPUs after those of the buffers before it in its file
    /// (`--cpu 2` selects CPU 0 of the first instance of a 2-CPU file, `--cpu 0` none
    /// of it). 0 for a top buffer.
    pub cpu_base: u32,
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
    /// `-I`: leave out records written in hard interrupt context (`common_flags`).
    pub no_hardirq: bool,
    /// `-S`: leave out records written in soft interrupt context.
    pub no_softirq: bool,
    /// `--ts-check`: a warning for each printed record older than the one before.
    pub ts_check: bool,
    /// `-w`: the wakeup latency at each `sched_switch` that ends a wait, and its
    /// summary after the records (see [`WakeupLatency`]).
    pub wakeup: bool,
    /// `--profile`: the records of each file's top buffer are accounted per task instead
    /// of printed, and the profile follows (see [`Profile`]).
    pub profile: bool,
    /// `-G`: with `profile`, the irq and softirq pairs belong to per-CPU global tasks.
    pub profile_global: bool,
    /// `-H`: with `profile`, more event pairs to time.
    pub profile_hooks: Vec<ProfileHook>,
    /// `--by-comm`: with `profile`, the tasks of one comm merged into one group.
    pub profile_by_comm: bool,
    /// Whether the report's second thread also writes whole lines (see [`WholeLines`]).
    pub whole_lines: WholeLines,
    /// Whether the lines are formatted on two threads (see [`ReportThreads`]).
    pub threads: ReportThreads,
    /// The size of the recorded data (the stored bytes of every buffer's CPUs), which
    /// [`WholeLines::BySize`] and [`ReportThreads::BySize`] go by.
    pub data_bytes: u64,
}

/// Whether a report spreads its work over threads: one that decodes the pages (see
/// [`crate::render::tracecmd::ThreadedSource`]) and a second writer of lines beside the
/// loop. The output is the same either way; only the speed differs.
///
/// The threads shorten a report's wall time only while a core is free for them; the
/// hand-overs (records copied into batches, infos and lines copied back, channel
/// wake-ups) always cost CPU time. Measured here by callgrind on trace-cmd recordings:
/// all on one thread, a 2 MB sched file took 18% fewer instructions (335 M to 275 M), a
/// 2.7 MB file of timer, workqueue, rcu and irq events 13% fewer (653 M to 568 M), a
/// 4.3 MB mix of kmem, syscalls, ext4 and filemap 12% fewer (1,191 M to 1,046 M); the
/// least task-clock of 9 alternating runs on two shared cores went down 17-31% on the
/// small files, 10-15% on 4 to 21 MB ones, and 23% on a 37 MB kmem file (2.9 s to 2.3 s).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReportThreads {
    /// The threads for [`ONE_THREAD_BELOW`] bytes of data or more, or while a core is
    /// free when the report starts (fewer runnable threads than the cores this process
    /// may run on: on an idle machine the threads shorten the wall time); one thread
    /// otherwise, where the hand-overs would only add CPU time to a busy machine.
    #[default]
    BySize,
    /// The decoding thread and the second writer whatever the size.
    Always,
    /// Everything on the calling thread.
    Never,
}

/// The data size up to which [`ReportThreads::BySize`] keeps a report on one thread.
pub const ONE_THREAD_BELOW: u64 = 64 << 20;

impl ReportThreads {
    /// Whether a report of `data_bytes` of recorded data runs on several threads.
    pub fn wanted(self, data_bytes: u64) -> bool {
        match self {
            ReportThreads::BySize => data_bytes >= ONE_THREAD_BELOW || a_core_is_free(),
            ReportThreads::Always => true,
            ReportThreads::Never => false,
        }
    }

    /// [`ReportThreads::Always`] or [`ReportThreads::Never`] as [`ReportThreads::wanted`]
    /// decides for `data_bytes`: decided once, for every part of one report.
    pub fn decided(self, data_bytes: u64) -> ReportThreads {
        if self.wanted(data_bytes) {
            ReportThreads::Always
        } else {
            ReportThreads::Never
        }
    }
}

/// Whether fewer threads are runnable than there are cores this process may run on
/// (the calling thread counts among the runnable ones), by the kernel's count in
/// `/proc/loadavg`; false when it cannot be read.
fn a_core_is_free() -> bool {
    let Ok(cores) = std::thread::available_parallelism() else {
        return false;
    };
    let Ok(text) = std::fs::read_to_string("/proc/loadavg") else {
        return false;
    };
    // "0.55 0.76 0.91 2/345 12345": the fourth field is runnable/all.
    let runnable = text
        .split_whitespace()
        .nth(3)
        .and_then(|f| f.split_once('/'))
        .and_then(|(r, _)| r.parse::<usize>().ok());
    runnable.is_some_and(|r| r < cores.get())
}

/// Whether the report's second thread, which writes the infos of a share of the lines,
/// also writes a share of the lines whole (head, name and info, with a copy of the comm
/// table). The output is the same either way; only the speed differs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum WholeLines {
    /// Whole lines for less than [`WHOLE_LINES_BELOW`] bytes of data, infos only above.
    /// Measured on two cores (wall time, fastest of 6 alternating runs): whole lines
    /// took a sixth off a 1.1 MB file (180k events) but added a fifth to a 2 MB one
    /// (330k events) and a sixth to a 6.5 MB one: while the second thread is idle at the
    /// start of a report they keep it busy, later they make it the slower of the two.
    #[default]
    BySize,
    /// Whole lines whatever the size.
    Always,
    /// Infos only.
    Never,
}

/// The data size up to which [`WholeLines::BySize`] hands whole lines over.
pub const WHOLE_LINES_BELOW: u64 = 3 << 19;

impl WholeLines {
    /// Whether whole lines are handed over for `data_bytes` of recorded data.
    pub fn wanted(self, data_bytes: u64) -> bool {
        match self {
            WholeLines::BySize => data_bytes < WHOLE_LINES_BELOW,
            WholeLines::Always => true,
            WholeLines::Never => false,
        }
    }
}

/// What a report printed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReportSummary {
    /// Records printed.
    pub records: u64,
    /// Dropped-events lines printed.
    pub dropped_lines: u64,
    /// Sub-buffers that failed to decode (skipped).
    pub bad_pages: u64,
    /// Why they failed, one line each, for the caller to show.
    pub warnings: Vec<String>,
}

struct Live<'a> {
    input: ReportInput<'a>,
    renderer: TraceCmdRenderer<'a, dyn Catalog + 'a>,
    prefix: Vec<u8>,
    /// `--profile` of a file's top buffer: its records go here.
    profile: Option<Profile>,
    /// `--profile` left out a record of this buffer instance (and said so).
    left_out: bool,
}

/// A report that could not be written: the output failed or an input could not be read.
#[derive(Debug)]
#[non_exhaustive]
pub enum ReportError {
    /// Writing the output failed (a closed pipe ends the report this way).
    Output(io::Error),
    /// A trace.dat could not be read.
    Dat(DatError),
    /// A buffer's records could not be read.
    Source(SourceError),
    /// Reading input `name` failed.
    Input {
        /// The input's name.
        name: String,
        /// What failed.
        source: SourceError,
    },
    /// A `-H` hook does not apply to input `name`.
    Hook {
        /// The input's name.
        name: String,
        /// Why.
        source: HookError,
    },
}

impl std::fmt::Display for ReportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReportError::Output(e) => write!(f, "writing the report: {e}"),
            ReportError::Dat(e) => write!(f, "{e}"),
            ReportError::Source(e) => write!(f, "{e}"),
            ReportError::Input { name, source } => write!(f, "reading {name}: {source}"),
            ReportError::Hook { name, source } => write!(f, "profiling {name}: {source}"),
        }
    }
}

impl std::error::Error for ReportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReportError::Output(e) => Some(e),
            // Their own text is this error's; the chain goes on with their causes.
            ReportError::Dat(e) => e.source(),
            ReportError::Source(e) => e.source(),
            ReportError::Input { source, .. } => Some(source.as_ref()),
            ReportError::Hook { source, .. } => Some(source),
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
        // (trace-cmd profiles the top buffers; an instance's records are printed.)
        let profile = match opts.profile && !input.instance {
            true => {
                // trace-cmd's list: the options' hooks, last first, then the file's, last
                // first (Profile::new takes them in the order given and adds the last first).
                let hooks: Vec<ProfileHook> = input
                    .profile_hooks
                    .iter()
                    .chain(&opts.profile_hooks)
                    .cloned()
                    .collect();
                let mut p = Profile::new(
                    input.catalog,
                    input.cpus,
                    input.long_size,
                    opts.profile_global,
                    &hooks,
                )
                .map_err(|source| ReportError::Hook {
                    name: input.name.clone(),
                    source,
                })?;
                p.by_comm(opts.profile_by_comm);
                summary.warnings.extend(p.warnings().iter().cloned());
                Some(p)
            }
            false => None,
        };
        lives.push(Live {
            input,
            renderer,
            prefix,
            profile,
            left_out: false,
        });
    }
    // trace-cmd's function plugin keeps one set of per-CPU stacks for the whole report,
    // and the buffers of one file share one comm table.
    for i in 1..lives.len() {
        let (first, rest) = lives.split_at_mut(i);
        rest[0].renderer.share_function_stacks(&first[0].renderer);
        if let Some(same_file) = first.iter().find(|l| l.input.file == rest[0].input.file) {
            rest[0].renderer.share_cmdlines(&same_file.renderer);
        }
    }
    // -w reads one file: the events of its first input are those of all.
    let mut wakeup = if opts.wakeup {
        lives
            .first()
            .and_then(|l| WakeupLatency::new(l.input.catalog))
    } else {
        None
    };
    std::thread::scope(|scope| {
        // Whole lines go to the info writer too (for small files: see WholeLines), unless
        // -w (a latency ends the line) or --profile (records are accounted, not printed);
        // --ts-diff lines depend on the line before (see
        // TraceCmdRenderer::line_is_independent).
        let lines = !opts.wakeup && !opts.profile && opts.whole_lines.wanted(opts.data_bytes);
        let mut pipe = match opts.threads.wanted(opts.data_bytes) {
            true => InfoPipe::start(scope, kinds, lines),
            false => InfoPipe::without_writer(kinds.len()),
        };
        report_loop(
            &mut lives,
            opts,
            &mut buf,
            &mut pipe,
            &mut summary,
            wakeup.as_mut(),
            out,
        )?;
        pipe.submit(&mut buf, out)?;
        pipe.finish(out)?;
        if let Some(w) = &wakeup {
            w.write_summary(out)?;
        }
        // trace-cmd writes the last file's profile first.
        for l in lives.iter().rev() {
            if let Some(p) = &l.profile {
                p.write(l.input.catalog, &l.input.cmdlines, out)?;
            }
        }
        out.flush()?;
        Ok::<(), ReportError>(())
    })?;
    summary.bad_pages = lives.iter().map(|l| l.input.source.bad_pages()).sum();
    let from_sources: Vec<String> = lives
        .iter_mut()
        .flat_map(|l| l.input.source.take_warnings())
        .collect();
    summary.warnings.extend(from_sources);
    Ok(summary)
}

/// Records per batch of infos handed to the info writer.
const INFO_BATCH: usize = 1024;

/// The text at which a batch ends even with fewer deferred infos.
const BATCH_TEXT: usize = 1 << 18;

/// The room a batch's text buffer starts with: its limit and a usual last line's worth,
/// so that it seldom grows (each growth copies the whole batch). Room is not free: the
/// heap is backed by huge pages (see `main.rs`), which the kernel clears whole, so room
/// never written to is cleared all the same, and the batches held while a function map
/// is built ([`WAITING_IN_FLIGHT`]) made that a fifth of a 178k-event report's loop.
const BATCH_ROOM: usize = BATCH_TEXT + (1 << 12);

/// The share of independent infos handed to the info writer (see `InfoPipe::share`).
const SHARE: f32 = 0.5;

/// The share of independent whole lines handed to the info writer (see
/// `InfoPipe::takes_line`).
const LINE_SHARE: f32 = 0.5;

/// Lines that could be handed over between two copies of a comm table that changed.
const LINES_PER_TABLE: usize = 1024;

/// Batches at the info writer at most: enough to even out batches of different cost.
const IN_FLIGHT: usize = 4;

/// Batches at the info writer at most while it waits for a function map that another
/// thread builds (the loop writes heads meanwhile); after, they are written out as the
/// writer finishes them.
/// Bounds the memory the waiting lines hold (a batch's text is at most [`BATCH_ROOM`]),
/// all of it fresh heap the kernel clears first: with 32 batches a 178k-event report
/// spent more CPU time clearing them than it saved by going on; with 8 (a 2.2 MB
/// file, alternating runs on two shared cores) its CPU time is 6-15% lower and its wall
/// time the same, since the loop's waits leave the core to the map's thread.
const WAITING_IN_FLIGHT: usize = 8;

/// The merge of all inputs, line by line into `buf`; infos that do not depend on the
/// renderer's state are left to `pipe`.
fn report_loop<'a>(
    lives: &mut [Live<'a>],
    opts: &ReportOptions,
    buf: &mut Vec<u8>,
    pipe: &mut InfoPipe<'a>,
    summary: &mut ReportSummary,
    mut wakeup: Option<&mut WakeupLatency>,
    out: &mut dyn Write,
) -> Result<(), ReportError> {
    // `--ts-diff` and `--ts-check`: the last printed record's, across all inputs.
    let mut diff_last = 0u64;
    let mut last_ts = 0u64;
    loop {
        // The next record: smallest time (after the input's offset), earliest input on
        // ties; each source already ordered its CPUs.
        let mut best: Option<(usize, i128)> = None;
        for (i, l) in lives.iter_mut().enumerate() {
            let ts = peek_ts(l)?;
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
        // trace-cmd 3.1.6 ends the whole report, silently, at a record that follows dropped
        // events when the file has no format for its event (whatever --cpu or -F say).
        let catalog = l.input.catalog;
        if taken.missed.is_some()
            && rec
                .event_id(catalog.endian())
                .and_then(|id| catalog.event(id))
                .is_none()
        {
            break;
        }
        if accept(
            &mut l.renderer,
            &l.input.filter,
            l.input.catalog,
            &rec,
            l.input.cpu_base,
            opts,
        ) {
            if let Some(p) = &mut l.profile {
                // trace-cmd prints each record's file label (several files) even so.
                buf.extend_from_slice(&l.prefix);
                p.record(&rec, taken.missed.is_some());
                summary.records += 1;
                if buf.len() >= BATCH_TEXT {
                    pipe.submit(buf, out)?;
                }
                continue;
            }
            if opts.profile {
                // An instance's record. trace-cmd 3.1.6's profiler knows only the top
                // buffers and ends the whole report at the first one ("Handle not
                // found?"), before any profile is written; here the profile of the top
                // buffers is written, without the instance's records, and that is said.
                if !l.left_out {
                    l.left_out = true;
                    summary.warnings.push(format!(
                        "--profile: the records of buffer instance {} are left out (the \
                         profile is of the top buffers; trace-cmd 3.1.6 stops at the first \
                         of them)",
                        l.input.name
                    ));
                }
                continue;
            }
            if opts.ts_check && last_ts > rec.ts {
                summary.warnings.push(format!(
                    "record on cpu {} went backwards: {} to {} delta: -{}",
                    rec.cpu,
                    last_ts,
                    rec.ts,
                    last_ts - rec.ts
                ));
            }
            last_ts = rec.ts;
            l.renderer.diff_last = diff_last;
            if let Some(count) = taken.missed.and_then(shown_missed) {
                buf.extend_from_slice(&l.prefix);
                l.renderer.write_dropped(buf, rec.cpu, count);
                summary.dropped_lines += 1;
            }
            buf.extend_from_slice(&l.prefix);
            let graph = rec
                .event_id(l.input.catalog.endian())
                .and_then(|id| l.renderer.graph_entry(id));
            // (A graph entry is no sched event.)
            let latency = match (wakeup.as_deref_mut(), graph) {
                (Some(w), None) => w.record(&rec),
                _ => None,
            };
            match graph {
                None if latency.is_none() && pipe.takes_line(i, &mut l.renderer, &rec) => {
                    pipe.defer_line(i, buf.len(), &rec);
                    buf.push(b'\n');
                }
                None if leave_to_writer(pipe, &mut l.renderer, &rec) => {
                    l.renderer.write_head(buf, &rec);
                    l.renderer.write_name(buf, &rec);
                    l.renderer.learn_comms(&rec);
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
            // -w: the latency goes at the end of the line.
            if let Some(lat) = latency {
                if buf.last() == Some(&b'\n') {
                    buf.pop();
                    WakeupLatency::write_latency(buf, lat);
                    buf.push(b'\n');
                }
            }
            diff_last = l.renderer.diff_last;
            summary.records += 1;
            if pipe.deferred() >= INFO_BATCH || buf.len() >= BATCH_TEXT {
                let waiting = lives.iter().any(|l| l.input.catalog.functions_pending());
                pipe.submit_while(buf, out, waiting)?;
            }
        }
    }
    Ok(())
}

/// Whether the info of `rec` goes to the info writer: its share of the independent ones,
/// and every independent one that would wait for the function map (built on another
/// thread): the loop goes on with the heads of the next lines meanwhile instead of
/// leaving a core idle.
fn leave_to_writer<'a>(
    pipe: &mut InfoPipe<'a>,
    renderer: &mut TraceCmdRenderer<'a, dyn Catalog + 'a>,
    rec: &Record,
) -> bool {
    if !pipe.has_writer() {
        return false;
    }
    let wanted = pipe.wants();
    (wanted || renderer.info_waits_for_functions(rec)) && renderer.info_is_deferrable(rec)
}

/// A record whose info (or whole line) is written by the info writer: where it goes in
/// its batch's text and the record itself (its bytes at `off..off + len` of the batch's
/// arena).
#[derive(Debug, Clone, Copy)]
struct Hole {
    input: usize,
    at: usize,
    cpu: u32,
    ts: u64,
    off: usize,
    len: usize,
    /// The whole line but its newline, not only the info.
    line: bool,
    /// The comm table to write this line's head and the next ones with: an index of the
    /// batch's `tables` ([`NO_TABLE`]: the one the writer has).
    table: u32,
}

/// [`Hole::table`] of a hole written with the comm table of the holes before it.
const NO_TABLE: u32 = u32::MAX;

/// The record bytes a new batch has room for per hole.
const ARENA_PER_HOLE: usize = 48;

/// The info bytes a new batch has room for per hole.
const INFO_PER_HOLE: usize = 64;

/// One batch: the records whose infos are wanted, and the infos once written.
#[derive(Debug, Default)]
struct InfoJob {
    arena: Vec<u8>,
    holes: Vec<Hole>,
    /// Copies of the loop's comm tables, for the heads of the whole lines.
    tables: Vec<Option<Cmdlines>>,
    infos: Vec<u8>,
    /// End of each hole's info in `infos`.
    ends: Vec<usize>,
}

impl InfoJob {
    /// A job with room for a usual batch, so that it does not grow record by record:
    /// a full one for the holes, and for the bytes what a batch of small records needs
    /// (they grow for bigger ones; room is cleared even unused, see [`BATCH_ROOM`]).
    fn with_room() -> InfoJob {
        InfoJob {
            arena: Vec::with_capacity(INFO_BATCH * ARENA_PER_HOLE),
            holes: Vec::with_capacity(INFO_BATCH),
            tables: Vec::new(),
            infos: Vec::with_capacity(INFO_BATCH * INFO_PER_HOLE),
            ends: Vec::with_capacity(INFO_BATCH),
        }
    }
}

/// The report's second thread: while the loop writes the heads (and everything that
/// reads or changes the comm table) of one batch of lines, a renderer of its own writes
/// the print-fmt text of the batches before, and whole lines whose heads it can write
/// with a copy of the loop's comm table; the lines are then put together in order.
/// A few batches are in flight ([`IN_FLIGHT`]; [`WAITING_IN_FLIGHT`] at most while a
/// function map is being built): the output stays in order and memory stays bounded.
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
    /// Whether whole lines may be handed over (no option makes a line depend on the
    /// lines before it), their share, and the credit that spreads them.
    lines: bool,
    line_share: f32,
    line_credit: f32,
    /// Per input: the generation of the comm table the writer was last given; and the
    /// lines that could have been handed over since a table was last given.
    sent_tables: Vec<Option<u64>>,
    lines_since_table: usize,
    /// The table [`InfoPipe::takes_line`] added for the next whole line.
    next_table: u32,
    _inputs: std::marker::PhantomData<&'a ()>,
}

impl<'a> InfoPipe<'a> {
    fn start<'s>(
        scope: &'s std::thread::Scope<'s, '_>,
        kinds: Vec<(&'a dyn Catalog, TraceCmdStyle)>,
        lines: bool,
    ) -> InfoPipe<'a>
    where
        'a: 's,
    {
        let inputs = kinds.len();
        let (to_writer, jobs) = std::sync::mpsc::sync_channel::<InfoJob>(WAITING_IN_FLIGHT);
        let (done, from_writer) = std::sync::mpsc::channel::<InfoJob>();
        scope.spawn(move || {
            let mut renderers: Vec<TraceCmdRenderer<'a, dyn Catalog + 'a>> = kinds
                .into_iter()
                .map(|(c, style)| {
                    let mut r = TraceCmdRenderer::new(c, style, Cmdlines::new());
                    r.leave_comms_to_others();
                    r
                })
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
                    let r = &mut renderers[h.input];
                    if let Some(t) = job.tables.get_mut(h.table as usize) {
                        if let Some(t) = t.take() {
                            r.cmdlines = std::rc::Rc::new(t);
                        }
                    }
                    if h.line {
                        r.write_head(&mut job.infos, &rec);
                        r.write_name(&mut job.infos, &rec);
                    }
                    r.write_info(&mut job.infos, &rec);
                    job.ends.push(job.infos.len());
                }
                job.tables.clear();
                if done.send(job).is_err() {
                    return;
                }
            }
        });
        InfoPipe {
            to_writer: Some(to_writer),
            from_writer,
            ..InfoPipe::without_writer(inputs)
        }
        .with_share(lines)
    }

    /// A pipe that takes nothing: the loop writes every line itself.
    fn without_writer(inputs: usize) -> InfoPipe<'a> {
        InfoPipe {
            to_writer: None,
            from_writer: std::sync::mpsc::channel::<InfoJob>().1,
            job: InfoJob::default(),
            in_flight: std::collections::VecDeque::new(),
            spare_jobs: Vec::new(),
            spare_bufs: Vec::new(),
            joined: Vec::new(),
            share: 0.0,
            credit: 0.0,
            lines: false,
            line_share: 0.0,
            line_credit: 0.0,
            sent_tables: vec![None; inputs],
            lines_since_table: 0,
            next_table: NO_TABLE,
            _inputs: std::marker::PhantomData,
        }
    }

    /// The pipe with a writer's shares of infos and (when `lines`) whole lines.
    fn with_share(self, lines: bool) -> InfoPipe<'a> {
        InfoPipe {
            job: InfoJob::with_room(),
            share: SHARE,
            lines,
            line_share: LINE_SHARE,
            ..self
        }
    }

    /// Whether a writer thread takes infos and lines.
    fn has_writer(&self) -> bool {
        self.to_writer.is_some()
    }

    /// Leave the info of `rec` (from input `input`) to the writer; it goes at `at` in
    /// the current text.
    fn defer(&mut self, input: usize, at: usize, rec: &Record) {
        self.push_hole(input, at, rec, false, NO_TABLE);
    }

    fn push_hole(&mut self, input: usize, at: usize, rec: &Record, line: bool, table: u32) {
        let off = self.job.arena.len();
        crate::bytes::put(&mut self.job.arena, rec.data);
        self.job.holes.push(Hole {
            input,
            at,
            cpu: rec.cpu,
            ts: rec.ts,
            off,
            len: rec.data.len(),
            line,
            table,
        });
    }

    /// Whether the whole line of `rec` (from input `input`, rendered by `renderer`) goes
    /// to the writer: its share of the independent lines (see
    /// [`TraceCmdRenderer::line_is_independent`]), while the writer keeps up and its copy
    /// of the comm table is current (or a new copy may be sent: at most one per
    /// [`LINES_PER_TABLE`] lines that could go, as a file of sched events changes the
    /// table all the time). The comm table must be sorted already: the loop's first lookup decides how
    /// later comms are kept.
    fn takes_line<'r>(
        &mut self,
        input: usize,
        renderer: &mut TraceCmdRenderer<'r, dyn Catalog + 'r>,
        rec: &Record,
    ) -> bool {
        if !self.lines || self.in_flight.len() >= IN_FLIGHT {
            return false;
        }
        self.line_credit += self.line_share;
        if self.line_credit < 1.0 {
            return false;
        }
        self.line_credit -= 1.0;
        if !renderer.cmdlines.is_sorted() || !renderer.line_is_independent(rec) {
            return false;
        }
        let table = &renderer.cmdlines;
        let generation = table.generation();
        self.lines_since_table += 1;
        if self.sent_tables[input] != Some(generation) {
            if self.sent_tables[input].is_some() && self.lines_since_table < LINES_PER_TABLE {
                return false;
            }
            self.sent_tables[input] = Some(generation);
            self.lines_since_table = 0;
            self.job.tables.push(Some(Cmdlines::clone(table)));
            self.next_table = (self.job.tables.len() - 1) as u32;
        }
        true
    }

    /// Leave the whole line of `rec` (from input `input`), accepted by
    /// [`InfoPipe::takes_line`], to the writer; it goes at `at` in the current text.
    fn defer_line(&mut self, input: usize, at: usize, rec: &Record) {
        let table = std::mem::replace(&mut self.next_table, NO_TABLE);
        self.push_hole(input, at, rec, true, table);
    }

    /// Whether the next independent info should go to the writer: its share, unless the
    /// writer is behind (catching up on the lines that waited for a function map).
    fn wants(&mut self) -> bool {
        self.credit += self.share;
        if self.credit >= 1.0 {
            self.credit -= 1.0;
            self.in_flight.len() < IN_FLIGHT
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
        self.submit_while(buf, out, false)
    }

    /// [`InfoPipe::submit`], where `waiting` says that a function map the writer may need
    /// is still being built: the loop then waits for the writer only when
    /// [`WAITING_IN_FLIGHT`] batches are at it, and writes out those it finished.
    fn submit_while(
        &mut self,
        buf: &mut Vec<u8>,
        out: &mut dyn Write,
        waiting: bool,
    ) -> Result<(), ReportError> {
        if self.job.holes.is_empty() && self.in_flight.is_empty() {
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
            return Err(writer_stopped());
        }
        self.in_flight.push_back(text);
        let n = self.in_flight.len();
        if waiting {
            if n >= WAITING_IN_FLIGHT {
                self.write_oldest(out)?;
            } else if n > IN_FLIGHT {
                self.write_finished(out)?;
            }
            return Ok(());
        }
        // Once the map is built, the batches that waited for it are written out as the
        // writer finishes them, down to fewer than IN_FLIGHT: only then does the loop
        // hand it infos and lines again (see `wants`). Writing out one batch per batch
        // sent kept the writer at WAITING_IN_FLIGHT - 1 batches for the rest of the
        // report, and so idle, while the loop wrote every info itself (on a 178k-event
        // file the writer's thread ran 1.5 ms, the loop's 25).
        if n > IN_FLIGHT {
            self.write_finished(out)?;
        }
        if self.in_flight.len() >= IN_FLIGHT {
            self.write_oldest(out)?;
        }
        Ok(())
    }

    /// Write out the batches in flight that the writer has finished, oldest first,
    /// without waiting for the others.
    fn write_finished(&mut self, out: &mut dyn Write) -> Result<(), ReportError> {
        while !self.in_flight.is_empty() {
            match self.from_writer.try_recv() {
                Ok(job) => self.write_batch(job, out)?,
                Err(std::sync::mpsc::TryRecvError::Empty) => break,
                Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                    return Err(writer_stopped());
                }
            }
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
        if self.in_flight.is_empty() {
            return Ok(());
        }
        let job = self.from_writer.recv().map_err(|_| writer_stopped())?;
        self.write_batch(job, out)
    }

    /// Write out the oldest batch in flight, whose infos the writer wrote into `job`.
    fn write_batch(&mut self, mut job: InfoJob, out: &mut dyn Write) -> Result<(), ReportError> {
        let Some(mut text) = self.in_flight.pop_front() else {
            return Ok(());
        };
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
        job.tables.clear();
        self.spare_jobs.push(job);
        text.clear();
        self.spare_bufs.push(text);
        Ok(())
    }
}

/// The info writer thread ended before the loop did (it panicked).
fn writer_stopped() -> ReportError {
    ReportError::Output(io::Error::other(
        "the report's info writer stopped unexpectedly",
    ))
}

fn write_graph_entry(
    l: &mut Live,
    entry: &Record,
    f: [FieldSpec; 2],
    offset: i64,
    buf: &mut Vec<u8>,
) -> Result<(), ReportError> {
    let next_ts = peek_ts(l)?;
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
    cpu_base: u32,
    opts: &ReportOptions,
) -> bool {
    if let Some(cpus) = &opts.cpus {
        if !cpus.contains(&rec.cpu.saturating_add(cpu_base)) {
            return false;
        }
    }
    if opts.no_hardirq || opts.no_softirq {
        let flags = renderer.flags(rec);
        if (opts.no_hardirq && flags & HARDIRQ_FLAG != 0)
            || (opts.no_softirq && flags & SOFTIRQ_FLAG != 0)
        {
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
/// The trace clock of a file's first buffer (`local` when it names none).
pub fn clock_of(dat: &DatFile) -> String {
    dat.buffers()
        .first()
        .and_then(|b| b.clock.clone())
        .unwrap_or_else(|| "local".to_string())
}

/// The kernel's own text for each event, through the event model.
struct KernelText<'a> {
    catalog: &'a DatCatalog,
    env: PrintEnv<'a>,
}

impl EventFormatter for KernelText<'_> {
    fn write_event(&self, rec: &Record, out: &mut Vec<u8>) -> bool {
        self.catalog.registry().write_event(rec, &self.env, out)
    }
}

/// `--json` and `--style kernel`: the stream's sinks over a trace.dat. Returns the
/// warnings about the data (sub-buffers skipped) for the caller to show.
pub fn kernel_or_json(
    dat: &DatFile,
    catalog: &DatCatalog,
    filter: &EventFilter,
    cpus: Option<&[u32]>,
    json: bool,
    out: &mut dyn Write,
) -> Result<Vec<String>, ReportError> {
    let endian = dat.endian();
    let registry = catalog.registry();
    let clock = clock_of(dat);
    let style = KernelStyle {
        time_in_ns: TimeFormat::for_clock(&clock, dat.ts_adjust().tsc2nsec.is_some(), false)
            != TimeFormat::Raw,
        record_tgid: false,
        irq_info: true,
        endian,
        common: CommonFields::from_registry(registry),
    };
    let mut comms = Comms::from_saved_cmdlines(dat.cmdlines());
    let mut cmdlines = Cmdlines::new();
    cmdlines.load(dat.cmdlines());
    let text = KernelText {
        catalog,
        env: PrintEnv {
            time_in_ns: style.time_in_ns,
            ..catalog.print_env(PrintStyle::Kernel)
        },
    };
    let mut source = DatSource::open(dat, 0).map_err(ReportError::Dat)?;
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 17);
    while source.peek_ts().map_err(ReportError::Source)?.is_some() {
        let Some(t) = source.take() else { break };
        let rec = t.rec;
        if cpus.is_some_and(|c| !c.contains(&rec.cpu)) {
            continue;
        }
        if !filter.is_empty() {
            let id = rec.event_id(endian).unwrap_or(u16::MAX);
            let pid = style.pid(&rec);
            let comm = |p: i32| cmdlines.comm(p).to_string();
            if !filter.accepts(catalog, id, &rec, &FilterContext { comm: &comm, pid }) {
                continue;
            }
        }
        if let Some(count) = t.missed {
            if json {
                json::write_lost(&mut buf, rec.cpu, rec.ts, count);
            } else {
                style.write_lost(&mut buf, rec.cpu, count);
            }
        }
        if json {
            json::write_record(
                &mut buf,
                &rec,
                &comms,
                registry.of(&rec),
                &style,
                text.env.kallsyms,
            );
        } else {
            style.write_line(&mut buf, &rec, &comms, &text);
        }
        // Live comms: the sched events name tasks the saved cmdlines may have missed.
        learn_comm(catalog, &rec, &mut comms);
        if buf.len() >= 1 << 16 {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    out.write_all(&buf)?;
    out.flush()?;
    Ok(source.take_warnings())
}

/// Remember the comm a sched_switch's next task carries, for later lines.
fn learn_comm(catalog: &DatCatalog, rec: &Record, comms: &mut Comms) {
    let Some(id) = rec.event_id(catalog.endian()) else {
        return;
    };
    if catalog.event(id).map(|e| e.1) != Some("sched_switch") {
        return;
    }
    if let (Some(p), Some(c)) = (
        catalog.field(id, "next_pid"),
        catalog.field(id, "next_comm"),
    ) {
        let pid = crate::render::tracecmd::read_uint(rec.data, p, catalog.endian()).unwrap_or(0)
            as u32 as i32;
        let bytes = rec.data.get(c.offset..c.offset + c.size).unwrap_or(&[]);
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        if pid > 0 && comms.comm(pid) == "<...>" {
            comms.learn(pid, &String::from_utf8_lossy(&bytes[..end]));
        }
    }
}

/// The next record's timestamp of an input, or the error naming the input.
fn peek_ts(l: &mut Live<'_>) -> Result<Option<u64>, ReportError> {
    l.input
        .source
        .peek_ts()
        .map_err(|source| ReportError::Input {
            name: l.input.name.clone(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record of a real recording, with its bytes copied out of the source.
    fn first_record(dat: &DatFile) -> (u32, u64, Vec<u8>) {
        let mut source = DatSource::open(dat, 0).unwrap();
        source.peek_ts().unwrap().unwrap();
        let rec = source.peek().unwrap();
        (rec.cpu, rec.ts, rec.data.to_vec())
    }

    #[test]
    fn the_writer_is_handed_infos_again_once_the_function_map_is_built() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/tracecmd/2cpu-v7.dat");
        let dat = DatFile::open(path).unwrap();
        let catalog = DatCatalog::from_dat(&dat);
        let (cpu, ts, data) = first_record(&dat);
        let rec = Record {
            cpu,
            ts,
            data: &data,
        };
        let mut out = Vec::new();
        std::thread::scope(|scope| {
            let kinds: Vec<(&dyn Catalog, TraceCmdStyle)> =
                vec![(&catalog, TraceCmdStyle::default())];
            let mut pipe = InfoPipe::start(scope, kinds, false);
            let mut buf = Vec::new();
            let mut batch = |pipe: &mut InfoPipe, waiting: bool, out: &mut Vec<u8>| {
                buf.extend_from_slice(b"head ");
                pipe.defer(0, buf.len(), &rec);
                buf.push(b'\n');
                pipe.submit_while(&mut buf, out, waiting).unwrap();
            };
            // The batches held while a function map is built (the writer may have
            // finished some already, which are then written out).
            for _ in 1..WAITING_IN_FLIGHT {
                batch(&mut pipe, true, &mut out);
            }
            assert!(pipe.in_flight.len() < WAITING_IN_FLIGHT);
            // Built: the writer finishes them, and the next batches write them out.
            let mut batches = WAITING_IN_FLIGHT - 1;
            while pipe.in_flight.len() >= IN_FLIGHT {
                assert!(
                    batches < 200,
                    "{} batches still in flight",
                    pipe.in_flight.len()
                );
                std::thread::sleep(std::time::Duration::from_millis(5));
                batch(&mut pipe, false, &mut out);
                batches += 1;
            }
            assert!((0..4).any(|_| pipe.wants()), "no info is handed over");
            pipe.finish(&mut out).unwrap();
            assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), batches);
        });
        let mut info = Vec::new();
        TraceCmdRenderer::new(
            &catalog as &dyn Catalog,
            TraceCmdStyle::default(),
            Cmdlines::new(),
        )
        .write_info(&mut info, &rec);
        let line = [&b"head "[..], &info, b"\n"].concat();
        assert!(out.starts_with(&line), "{}", String::from_utf8_lossy(&out));
    }
}
