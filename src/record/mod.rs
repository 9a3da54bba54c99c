//! A recording session: set up tracefs, capture per-CPU pages, tear down and restore.
//!
//! [`Recorder::start`] works in a private instance (`instances/tracectl-record-<pid>`)
//! unless a buffer is named, remembers every file it changes, and puts them back (or
//! removes the instance) in [`Recorder::finish`] or, on any early exit, in `Drop`.
//! [`extract`] writes what a buffer currently holds to a trace.dat.

mod capture;
mod meta;
pub mod profile;
pub mod setup;

use std::fmt;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use capture::CpuCaptured;
pub use meta::{all_events, enabled_events, formats, metadata};

use crate::dat::{
    opt, write_dat, write_dat_with, BufferSource, Compression, DatError, NewOption, Precompressed,
    WriteOptions, WriteSummary,
};
use crate::event::HeaderPage;
use crate::tracefs::{
    resolve_event, AppendMode, EventName, EventTarget, Instance, Ledger, PrivateInstance, Tracefs,
    TracefsError,
};
use capture::{CpuThread, PageInfo, Stop};

/// An event to enable, with the filters and triggers bound to it (`-e X -f F -R T`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventSpec {
    /// `system`, `event`, `system:event`, `system:*` or `all`.
    pub name: String,
    /// Filters for it, each in parentheses and joined with `&&` as trace-cmd does.
    pub filters: Vec<String>,
    /// Triggers to add to it.
    pub triggers: Vec<String>,
    /// `-v -e X`: disable X instead (to carve it out of an enabled system).
    pub invert: bool,
}

/// What to record and how; mirrors `trace-cmd record`'s options.
#[derive(Debug, Clone, Default)]
pub struct RecordConfig {
    /// `-e` events with their bound `-f` / `-R`.
    pub events: Vec<EventSpec>,
    /// `-p`: tracer plugin.
    pub plugin: Option<String>,
    /// `-C`: trace clock.
    pub clock: Option<String>,
    /// `-b`: per-CPU buffer size in KiB.
    pub buffer_size_kb: Option<u64>,
    /// `--buffer-percent`: how full the buffer gets before readers wake (buffer_percent).
    pub buffer_percent: Option<u64>,
    /// `-B`: use (or create) this instance instead of a private one.
    pub instance: Option<String>,
    /// `-M`: tracing_cpumask (hex).
    pub cpumask: Option<String>,
    /// `-O`: options, `name` or `noname`.
    pub options: Vec<String>,
    /// `-P`: only these pids.
    pub pids: Vec<u32>,
    /// `-c`: follow forks of the traced pids.
    pub follow_children: bool,
    /// `-l`: set_ftrace_filter entries (function tracing), as the kernel takes them: one
    /// limited to a module is `PATTERN:mod:MODULE`, all of a module's functions
    /// `*:mod:MODULE`.
    pub ftrace_filter: Vec<String>,
    /// `-n`: set_ftrace_notrace entries (function tracing), `PATTERN[:mod:MODULE]`.
    pub ftrace_notrace: Vec<String>,
    /// `-g`: set_graph_function entries (function_graph), `PATTERN[:mod:MODULE]`.
    pub graph_functions: Vec<String>,
    /// `-a`: store the formats of every event, not only the enabled ones.
    pub all_formats: bool,
    /// `--date`: store the offset to wall-clock time.
    pub date: bool,
    /// `-s`: longest sleep of a capture thread between reads, in µs (default 100 ms).
    pub sleep_us: Option<u64>,
    /// `-i`: warn about events that do not exist instead of failing.
    pub ignore_missing: bool,
    /// `--subbuf-size`: sub-buffer size in KiB (buffer_subbuf_size_kb, 6.8+).
    pub subbuf_size_kb: Option<u64>,
    /// `--cmdlines-size`: saved_cmdlines_size (top level: it is global).
    pub cmdlines_size: Option<u64>,
    /// `--max-graph-depth`: max_graph_depth (function_graph).
    pub max_graph_depth: Option<u32>,
    /// `-m`: keep at most about this many KiB per CPU (the newest).
    pub max_kb_per_cpu: Option<u64>,
    /// `--no-filter`: also record the recorder's own threads.
    pub no_filter: bool,
    /// `-k`: at the end, leave the tracer, events, filters and buffers as the recording
    /// set them (tracing_on 0) instead of restoring them; a private instance is kept.
    pub keep_after: bool,
    /// `-K`: do not reset the target before recording (its buffer keeps older events and
    /// events already enabled stay enabled), like `set` but recording.
    pub keep_before: bool,
    /// More instances recorded at the same time (`-B name -e ...` after the first
    /// target), stored as named buffers. Each names its instance (`instance`) and has its
    /// own buffer options, as trace-cmd keeps them per instance: events, tracer, clock,
    /// sizes, CPU mask, options, `-P`/`-c`, `-l`/`-n`/`-g`, `-T` and max_graph_depth (see
    /// [`RecordConfig::buffer`]); what holds for the whole recording comes from this
    /// config.
    pub more_instances: Vec<RecordConfig>,
    /// `-T`: a kernel stack trace after every event (options/stacktrace).
    pub stacktrace: bool,
    /// `--func-stack`: a stack trace on every traced function (options/func_stack_trace;
    /// `-p function` only).
    pub func_stack: bool,
    /// `-d` (1) / `-D` (2): keep latency tracers from enabling the function tracer: `-d`
    /// clears options/function-trace, or where there is none, /proc/sys/kernel/ftrace_enabled;
    /// `-D` clears both. Both are restored at the end.
    pub disable_function_trace: u8,
    /// `-r`: SCHED_FIFO priority (1-99) of the capture threads.
    pub rt_priority: Option<u32>,
    /// `--ts-offset`: stored as the OFFSET option, added to every timestamp on reading
    /// (trace-clock units).
    pub ts_offset: Option<i64>,
    /// File version and compression.
    pub write: WriteOptions,
    /// `-H`: event hooks for `report --profile`, as given; stored as HOOK options, the
    /// last given first (as trace-cmd stores them).
    pub hooks: Vec<String>,
}

impl RecordConfig {
    /// The configuration of the buffer `own` (one of [`RecordConfig::more_instances`])
    /// recorded beside this one: its own instance, events and buffer options, with this
    /// recording's sleep, `-i`, output, pid filter of our own threads, `-k`/`-K`, `-d`/`-D`
    /// and file options. Global files (saved_cmdlines_size) and the function tracer's
    /// stack option are this buffer's only.
    pub fn buffer(&self, own: &RecordConfig) -> RecordConfig {
        RecordConfig {
            instance: own.instance.clone(),
            events: own.events.clone(),
            plugin: own.plugin.clone(),
            clock: own.clock.clone(),
            buffer_size_kb: own.buffer_size_kb,
            buffer_percent: own.buffer_percent,
            cpumask: own.cpumask.clone(),
            options: own.options.clone(),
            pids: own.pids.clone(),
            follow_children: own.follow_children,
            ftrace_filter: own.ftrace_filter.clone(),
            ftrace_notrace: own.ftrace_notrace.clone(),
            graph_functions: own.graph_functions.clone(),
            stacktrace: own.stacktrace,
            max_graph_depth: own.max_graph_depth,
            subbuf_size_kb: own.subbuf_size_kb,
            cmdlines_size: None,
            func_stack: false,
            hooks: Vec::new(),
            more_instances: Vec::new(),
            ..self.clone()
        }
    }
}

/// A recording that could not be set up, run or written.
#[derive(Debug)]
#[non_exhaustive]
pub enum RecordError {
    /// A tracefs file could not be read or written.
    Tracefs(TracefsError),
    /// A function-tracing feature the kernel refuses (EPERM).
    Refused {
        /// What was asked for (`-l`, `-p function`, ...).
        what: String,
        /// The refused file.
        file: PathBuf,
    },
    /// Capture thread or temporary file problem.
    Capture(String),
    /// Writing the trace.dat failed.
    Dat(DatError),
    /// An option value that cannot work (checked before anything is written).
    BadOption {
        /// The option (`-r`, `--func-stack`, ...).
        option: String,
        /// What is wrong and what to do.
        detail: String,
    },
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordError::Tracefs(e) => write!(f, "{e}"),
            RecordError::Refused { what, file } => write!(
                f,
                "{what} needs function tracing, but the kernel refuses {} (EPERM); record tracepoint events (-e) instead, or run on a kernel that allows function tracing",
                file.display()
            ),
            RecordError::Capture(m) => write!(f, "capture: {m}"),
            RecordError::Dat(e) => write!(f, "{e}"),
            RecordError::BadOption { option, detail } => write!(f, "{option}: {detail}"),
        }
    }
}

impl std::error::Error for RecordError {}

impl From<TracefsError> for RecordError {
    fn from(e: TracefsError) -> RecordError {
        RecordError::Tracefs(e)
    }
}

impl From<DatError> for RecordError {
    fn from(e: DatError) -> RecordError {
        RecordError::Dat(e)
    }
}

/// Everything a finished recording reports.
#[derive(Debug, Clone, Default)]
pub struct RecordSummary {
    /// Per-CPU capture results.
    pub cpus: Vec<CpuCaptured>,
    /// `per_cpu/cpuN/stats` texts at the end.
    pub stats: Vec<(u32, String)>,
    /// The file written.
    pub written: WriteSummary,
    /// Files that could not be put back, an instance that could not be removed.
    pub warnings: Vec<String>,
}

/// What the kallsyms thread read: the text, and its trace.dat section already compressed
/// when the file will be compressed.
type KallsymsRead = Option<(String, Option<Precompressed>)>;

/// A thread made with the capture threads (so that its own reads are kept out of the
/// trace like theirs) that reads `/proc/kallsyms` once told to, and compresses it for the
/// file right away: both take tens of milliseconds that would otherwise come after the
/// recording's end.
struct KallsymsThread {
    go: Option<std::sync::mpsc::Sender<()>>,
    handle: std::thread::JoinHandle<KallsymsRead>,
    tid: Option<i32>,
}

impl KallsymsThread {
    fn spawn(t: Tracefs, wo: WriteOptions) -> KallsymsThread {
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let (tid_tx, tid_rx) = std::sync::mpsc::sync_channel(1);
        let handle = std::thread::spawn(move || {
            let _ = tid_tx.send(nix::unistd::gettid().as_raw());
            // Told to go, or dropped unused (then nothing is read).
            wait.recv().ok()?;
            let text = t.host().kallsyms_with_addresses()?;
            // Version 6 stores it plain; the writer compresses it itself if this fails.
            let z = (wo.version >= 7 && wo.compression != Compression::None)
                .then(|| Precompressed::kallsyms(&text, wo.compression, wo.endian).ok())
                .flatten();
            Some((text, z))
        });
        KallsymsThread {
            go: Some(go),
            handle,
            tid: tid_rx.recv().ok(),
        }
    }

    /// Whether the thread was told to read.
    fn told(&self) -> bool {
        self.go.is_none()
    }

    /// The symbols, if the thread was told to read them.
    fn join(mut self) -> Option<KallsymsRead> {
        let told = self.go.take().is_none();
        // An untold thread sees its sender dropped and ends.
        let read = self.handle.join().ok()?;
        told.then_some(read)
    }
}

/// A running recording.
pub struct Recorder {
    t: Tracefs,
    inst: Instance,
    /// The instance when this recording created it (removed at the end).
    private: Option<PrivateInstance>,
    /// Tracing state changed in a buffer that existed before (`-k` keeps it).
    ledger: Ledger,
    /// Global files (saved_cmdlines_size), always restored.
    global: Ledger,
    threads: Vec<CpuThread>,
    stop: Arc<Stop>,
    info: PageInfo,
    torn_down: bool,
    warnings: Vec<String>,
    extra: Vec<Recorder>,
    cfg: RecordConfig,
    output: PathBuf,
    /// Set by a successful [`Recorder::finish`]: only then does -k keep the state (a
    /// recording that fails or is dropped always restores).
    finishing: bool,
    /// /proc/sys/kernel/ftrace_enabled as it was before `-d`/`-D` cleared it.
    ftrace_enabled: Option<String>,
    /// The thread that reads the kernel's symbols while the command runs
    /// ([`Recorder::read_kallsyms_meanwhile`]).
    kallsyms: Option<KallsymsThread>,
}

/// Whether a function tracer (or its filters) asked for cannot work in a private instance
/// of this kernel, so that the top level must be used; with the notes of the probe
/// instance's creation (stale instances removed).
fn needs_top_level(t: &Tracefs, cfg: &RecordConfig) -> (bool, Vec<String>) {
    let Some(plugin) = cfg.plugin.as_deref().filter(|p| *p != "nop") else {
        return (false, Vec::new());
    };
    let Ok(probe) = PrivateInstance::create(t, "probe") else {
        return (false, Vec::new());
    };
    let inst = probe.instance();
    let has_tracer = inst
        .available_tracers()
        .unwrap_or_default()
        .iter()
        .any(|x| x == plugin);
    let has_graph_filter = cfg.graph_functions.is_empty() || inst.exists("set_graph_function");
    (!(has_tracer && has_graph_filter), probe.notes().to_vec())
}

/// Resolve each `-e` (see [`resolve_event`]); with `ignore_missing` (`-i`) an unknown
/// one becomes a warning and `None`.
fn resolve_events(
    events: &[EventSpec],
    available: &[EventName],
    ignore_missing: bool,
) -> Result<(Vec<Option<EventTarget>>, Vec<String>), TracefsError> {
    let mut warnings = Vec::new();
    let mut targets = Vec::new();
    for ev in events {
        match resolve_event(&ev.name, available) {
            Ok(t) => targets.push(Some(t)),
            Err(e @ TracefsError::UnknownEvent { .. }) if ignore_missing => {
                warnings.push(format!("{e}; ignored (-i)"));
                targets.push(None);
            }
            Err(e) => return Err(e),
        }
    }
    Ok((targets, warnings))
}

fn is_refused(e: &TracefsError) -> bool {
    matches!(e, TracefsError::PermissionDenied { .. })
}

/// A refused function-tracing file as the feature that needs it.
fn refused(what: &str, inst: &Instance, file: &str) -> impl FnOnce(TracefsError) -> RecordError {
    let (what, path) = (what.to_string(), inst.path(file));
    move |e| {
        if is_refused(&e) {
            RecordError::Refused { what, file: path }
        } else {
            e.into()
        }
    }
}

impl Recorder {
    /// Set up tracefs and start one capture thread per CPU; `output` is the trace.dat
    /// to write (per-CPU capture files go next to it as `<output>.cpuN`).
    pub fn start(t: Tracefs, cfg: RecordConfig, output: &Path) -> Result<Recorder, RecordError> {
        // A tree is a recording: nothing in it to trace, and nothing of it to change.
        t.require_live("record")?;
        // Every buffer's options and -e are checked before anything is created or
        // written, so a recording that cannot start changes nothing.
        let buffers: Vec<RecordConfig> = std::iter::once(cfg.clone())
            .chain(cfg.more_instances.iter().map(|b| cfg.buffer(b)))
            .collect();
        for b in &buffers {
            check_options(b)?;
            check_values(&t, b)?;
        }
        let stop = Stop::new().map_err(|e| RecordError::Capture(format!("pipe: {e}")))?;
        let available = t.available_events()?;
        let (targets, mut warnings) = resolve_events(&cfg.events, &available, cfg.ignore_missing)?;
        for b in &buffers[1..] {
            resolve_events(&b.events, &available, cfg.ignore_missing)?;
        }
        for b in &buffers {
            check_function_filters(&t, b)?;
        }
        let private = match &cfg.instance {
            Some(n) if t.instance(Some(n)).is_ok() => None,
            Some(n) => Some(PrivateInstance::create_named(&t, n)?),
            None => {
                let (top_level, notes) = needs_top_level(&t, &cfg);
                warnings.extend(notes);
                // Older kernels offer function_graph (and the graph filters) only at the
                // top level; record there, as trace-cmd does, restoring what we change.
                if top_level {
                    None
                } else {
                    Some(PrivateInstance::create(&t, "record")?)
                }
            }
        };
        let inst = match (&private, &cfg.instance) {
            (Some(p), _) => {
                warnings.extend(p.notes().iter().cloned());
                p.instance().clone()
            }
            (None, Some(n)) => t.instance(Some(n))?,
            (None, None) => t.top(),
        };
        let mut ledger = Ledger::new();
        if let Some(p) = &private {
            ledger.mark_private(p.instance());
        }
        let hp = HeaderPage::parse(&String::from_utf8_lossy(&t.read("events/header_page")?))
            .map_err(|e| RecordError::Capture(e.to_string()))?;
        let mut rec = Recorder {
            t,
            inst,
            private,
            ledger,
            global: Ledger::new(),
            threads: Vec::new(),
            stop,
            info: PageInfo::of(&hp),
            torn_down: false,
            warnings,
            extra: Vec::new(),
            cfg,
            output: output.to_path_buf(),
            finishing: false,
            ftrace_enabled: None,
            kallsyms: None,
        };
        // From here on Drop restores whatever was changed, whatever fails next.
        rec.configure(&targets)?;
        rec.spawn_threads()?;
        rec.kallsyms = Some(KallsymsThread::spawn(rec.t.clone(), rec.cfg.write));
        rec.exclude_self()?;
        for own in rec.cfg.more_instances.clone() {
            // Each buffer restores what it changed on its own (its instance's filter files
            // included) or removes the instance it made; global files are handled once,
            // by the first target.
            let sub = rec.cfg.buffer(&own);
            let name = sub.instance.clone().unwrap_or_default();
            let prefix = PathBuf::from(format!("{}.{name}", rec.output.display()));
            let x = Recorder::start(rec.t.clone(), sub, &prefix)?;
            rec.warnings.extend(x.warnings.iter().cloned());
            rec.extra.push(x);
        }
        rec.ledger.save(&rec.inst, "tracing_on")?;
        rec.inst.set_tracing_on(true)?;
        Ok(rec)
    }

    fn configure(&mut self, targets: &[Option<EventTarget>]) -> Result<(), RecordError> {
        let cfg = self.cfg.clone();
        let inst = self.inst.clone();
        let created = self.private.is_some();
        self.info.max_bytes = cfg.max_kb_per_cpu.map(|k| k * 1024);
        if let Some(us) = cfg.sleep_us {
            self.info.sleep_ms = (us / 1000).clamp(1, u16::MAX as u64) as u16;
        }
        self.ledger.save(&inst, "tracing_on")?;
        inst.set_tracing_on(false)?;
        if !created && !cfg.keep_before {
            // Events enabled before us are not part of this recording: disable them now,
            // enable them again at the end.
            let before = inst.read("set_event").unwrap_or_default();
            if !before.iter().all(u8::is_ascii_whitespace) {
                self.ledger.set(&inst, "set_event", "")?;
            }
        }
        let applied = setup::apply(&inst, &cfg, targets, &mut self.ledger, &mut self.global)?;
        self.ftrace_enabled = applied.ftrace_enabled;
        self.warnings.extend(applied.warnings);
        if let Ok(kb) = inst.subbuf_size_kb() {
            self.info.subbuf = kb as usize * 1024;
        }
        // Start from an empty buffer: old events are not part of this recording. A target
        // that existed before is reset, as trace-cmd does, unless -K keeps its state. An
        // instance made here is empty already (tracing_on went to 0 before any event was
        // enabled), and clearing it would cost a ring-buffer reset (tens of milliseconds
        // before the command may start).
        if !created && !cfg.keep_before {
            inst.clear()?;
        }
        Ok(())
    }

    fn spawn_threads(&mut self) -> Result<(), RecordError> {
        let cpus = self.inst.cpus()?;
        for cpu in cpus {
            let pipe = self.inst.path(format!("per_cpu/cpu{cpu}/trace_pipe_raw"));
            let tmp = PathBuf::from(format!("{}.cpu{cpu}", self.output.display()));
            let th = capture::spawn(cpu, pipe, tmp, self.info, self.stop.clone())
                .map_err(|e| RecordError::Capture(format!("cpu{cpu}: {e}")))?;
            self.threads.push(th);
        }
        if let Some(prio) = self.cfg.rt_priority {
            for th in &self.threads {
                let Some(tid) = th.tid else { continue };
                set_fifo(tid, prio).map_err(|e| RecordError::BadOption {
                    option: format!("-r {prio}"),
                    detail: format!(
                        "cannot make capture thread {tid} SCHED_FIFO: {e} (needs root or CAP_SYS_NICE)"
                    ),
                })?;
            }
        }
        Ok(())
    }

    /// Keep the recorder's own threads out of the trace (set_event_notrace_pid), as
    /// their reads and wake-ups would otherwise fill it.
    fn exclude_self(&mut self) -> Result<(), RecordError> {
        let inst = self.inst.clone();
        if self.cfg.no_filter || !inst.exists("set_event_notrace_pid") {
            return Ok(());
        }
        let mut pids = vec![std::process::id()];
        pids.extend(self.threads.iter().filter_map(|t| t.tid).map(|t| t as u32));
        pids.extend(self.kallsyms.iter().filter_map(|k| k.tid).map(|t| t as u32));
        self.ledger.save(&inst, "set_event_notrace_pid")?;
        inst.set_event_notrace_pids(&pids, AppendMode::Truncate)?;
        let function = self
            .cfg
            .plugin
            .as_deref()
            .is_some_and(|p| p.starts_with("function"));
        if function && self.cfg.pids.is_empty() && inst.exists("set_ftrace_notrace_pid") {
            match self
                .ledger
                .save(&inst, "set_ftrace_notrace_pid")
                .and_then(|()| inst.set_ftrace_notrace_pids(&pids, AppendMode::Truncate))
            {
                Err(e) if is_refused(&e) => {}
                r => r?,
            }
        }
        Ok(())
    }

    /// Problems that did not stop the recording (`-i` events that do not exist).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Read the kernel's symbols on a thread of their own while the recording runs
    /// (call once the traced command has started): /proc/kallsyms takes tens of
    /// milliseconds to read, which would otherwise come before the command's start or
    /// after its end. [`Recorder::finish`] uses what the thread read.
    pub fn read_kallsyms_meanwhile(&mut self) {
        if let Some(go) = self.kallsyms.as_mut().and_then(|k| k.go.take()) {
            let _ = go.send(());
        }
    }

    /// The problems so far, leaving none behind (the rest come with the summary).
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    /// Name of the instance recorded (empty for the top level).
    pub fn instance_name(&self) -> &str {
        self.inst.name().unwrap_or("")
    }

    fn stop_threads(&mut self) -> Vec<Result<CpuCaptured, String>> {
        let _ = self.inst.set_tracing_on(false);
        self.stop.trigger();
        let mut v = Vec::new();
        for th in &mut self.threads {
            if let Some(h) = th.handle.take() {
                v.push(
                    h.join()
                        .unwrap_or_else(|_| Err(format!("cpu{}: capture thread panicked", th.cpu))),
                );
            }
        }
        v
    }

    fn teardown(&mut self) {
        if self.torn_down {
            return;
        }
        self.torn_down = true;
        let _ = self.inst.set_tracing_on(false);
        self.stop.trigger();
        for th in &mut self.threads {
            if let Some(h) = th.handle.take() {
                let _ = h.join();
            }
        }
        if let Some(old) = self.ftrace_enabled.take() {
            if let Err(e) = self.t.host().set_ftrace_enabled(&old) {
                self.warnings.push(format!(
                    "could not put /proc/sys/kernel/ftrace_enabled back to {old}: {e}"
                ));
            }
        }
        if self.cfg.keep_after && self.finishing {
            // -k: leave everything as the recording set it, tracing_on at 0. Global files
            // (saved_cmdlines_size) are still restored: they are not tracing state.
            self.ledger.forget();
            let w = self.global.restore();
            self.warnings.extend(w);
            if let Some(p) = self.private.take() {
                p.keep();
            }
            return;
        }
        // Newest first: triggers go before the events they hang on are disabled.
        let w = self.ledger.restore();
        self.warnings.extend(w);
        let w = self.global.restore();
        self.warnings.extend(w);
        if let Some(p) = self.private.take() {
            let path = p.instance().path("");
            if let Err(e) = p.remove() {
                self.warnings.push(format!(
                    "could not remove {}: {e}; remove it with rmdir",
                    path.display()
                ));
            }
        }
    }

    /// Stop, drain every CPU, restore tracefs, and write the trace.dat.
    pub fn finish(mut self) -> Result<RecordSummary, RecordError> {
        let mut summary = RecordSummary::default();
        let main = self.collect(&mut summary)?;
        let mut extra = Vec::new();
        let mut extras = std::mem::take(&mut self.extra);
        for x in &mut extras {
            // Per-CPU results of other instances are not part of the top summary.
            let mut s = RecordSummary::default();
            extra.push(x.collect(&mut s)?);
        }
        let mut events = main.events.clone();
        for e in extra.iter().flat_map(|c| c.events.iter()) {
            if !events.contains(e) {
                events.push(e.clone());
            }
        }
        let kallsyms = self.kallsyms.take();
        let mut meta = match &kallsyms {
            Some(k) if k.told() => formats(&self.t, &events)?,
            _ => metadata(&self.t, &events)?,
        };
        // The tear-down (an instance's removal waits tens of milliseconds for the kernel)
        // runs while the kallsyms thread still reads and compresses.
        for x in &mut extras {
            x.finishing = true;
            x.teardown();
            summary.warnings.append(&mut x.warnings);
        }
        self.finishing = true;
        self.teardown();
        summary.warnings.append(&mut self.warnings);
        let mut precompressed = Vec::new();
        if let Some(Some((text, z))) = kallsyms.and_then(KallsymsThread::join) {
            meta.kallsyms = text;
            precompressed.extend(z);
        }

        let clock = main.clock.clone();
        let mut options = vec![
            NewOption::text(opt::TRACECLOCK, main.clock_text.trim_end()),
            NewOption::text(opt::UNAME, &self.t.host().uname()),
            NewOption::text(
                opt::VERSION,
                concat!("tracectl ", env!("CARGO_PKG_VERSION")),
            ),
        ];
        if self.cfg.date {
            options.push(NewOption::date(date_offset_us(&clock)));
        }
        if let Some(off) = self.cfg.ts_offset {
            options.push(NewOption::text(opt::OFFSET, &off.to_string()));
        }
        for (cpu, s) in &summary.stats {
            options.push(NewOption::text(opt::CPUSTAT, &format!("CPU: {cpu}\n{s}")));
        }
        for hook in self.cfg.hooks.iter().rev() {
            options.push(NewOption::text(opt::HOOK, hook));
        }
        let mut buffers = Vec::new();
        let mut all_tmp = Vec::new();
        for (name, c) in std::iter::once((String::new(), &main)).chain(
            extras
                .iter()
                .map(|x| x.instance_name().to_string())
                .zip(extra.iter()),
        ) {
            let mut files = Vec::new();
            for (cpu, parts) in &c.files {
                let mut reader: Box<dyn std::io::Read> = Box::new(std::io::empty());
                for tmp in parts {
                    let f = std::fs::File::open(tmp)
                        .map_err(|e| RecordError::Capture(format!("{}: {e}", tmp.display())))?;
                    reader = Box::new(reader.chain(std::io::BufReader::new(f)));
                }
                files.push((*cpu, reader));
            }
            for th in extras_threads_and(&self.threads, &extras) {
                all_tmp.push(th.clone());
                all_tmp.push(PathBuf::from(format!("{}.b", th.display())));
            }
            buffers.push(BufferSource {
                name,
                clock: c.clock.clone(),
                page_size: c.subbuf,
                cpus: files,
            });
        }
        let mut wo = self.cfg.write;
        // trace-cmd 3.1 walks pages with the header's page size, so larger sub-buffers
        // (--subbuf-size, 6.8+) are stored as the page size.
        let biggest = buffers.iter().map(|b| b.page_size).max().unwrap_or(0);
        wo.page_size = page_size(&self.t, biggest).max(biggest as u32);
        let r = write_dat_with(&self.output, &wo, &meta, &options, buffers, &precompressed);
        for tmp in &all_tmp {
            let _ = std::fs::remove_file(tmp);
        }
        summary.written = r?;
        Ok(summary)
    }

    /// Stop capturing and gather what the file needs, leaving tracefs as it is.
    fn collect(&mut self, summary: &mut RecordSummary) -> Result<Collected, RecordError> {
        let mut files = Vec::new();
        for r in self.stop_threads() {
            let c = r.map_err(RecordError::Capture)?;
            files.push((c.cpu, c.files.clone()));
            summary.cpus.push(c);
        }
        for c in &summary.cpus {
            if let Ok(s) = self.inst.read_string(format!("per_cpu/cpu{}/stats", c.cpu)) {
                summary.stats.push((c.cpu, s));
            }
        }
        let clock_text = self
            .inst
            .read_string("trace_clock")
            .unwrap_or_else(|_| "[local]".into());
        let events = if self.cfg.all_formats {
            all_events(&self.t)
        } else {
            enabled_events(&self.t, &self.inst.rel(""))?
        };
        Ok(Collected {
            clock: crate::dat::selected_clock(&clock_text).unwrap_or_else(|| "local".into()),
            clock_text,
            events,
            files,
            subbuf: self.info.subbuf,
        })
    }
}

/// Run thread `tid` (0: the calling thread) at SCHED_FIFO priority `prio`.
pub(crate) fn set_fifo(tid: i32, prio: u32) -> std::io::Result<()> {
    let param = libc::sched_param {
        sched_priority: prio as i32,
    };
    // SAFETY: a plain system call on a valid, initialised sched_param.
    let r = unsafe { libc::sched_setscheduler(tid, libc::SCHED_FIFO, &param) };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Every capture file path (first halves) of the main and the extra recorders.
fn extras_threads_and(main: &[CpuThread], extras: &[Recorder]) -> Vec<PathBuf> {
    main.iter()
        .chain(extras.iter().flat_map(|x| x.threads.iter()))
        .map(|t| t.tmp.clone())
        .collect()
}

/// What one instance's recording left for the file.
struct Collected {
    clock: String,
    clock_text: String,
    events: Vec<(String, String)>,
    files: Vec<(u32, Vec<PathBuf>)>,
    subbuf: usize,
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.teardown();
    }
}

/// Refuse, before anything is written, options that cannot work together or at all.
pub fn check_options(cfg: &RecordConfig) -> Result<(), RecordError> {
    let bad = |option: &str, detail: &str| {
        Err(RecordError::BadOption {
            option: option.into(),
            detail: detail.into(),
        })
    };
    if let Some(p) = cfg.rt_priority {
        if !(1..=99).contains(&p) {
            return bad(
                &format!("-r {p}"),
                "a real-time (SCHED_FIFO) priority is 1 to 99",
            );
        }
    }
    if cfg.func_stack && cfg.plugin.as_deref() != Some("function") {
        return bad(
            "--func-stack",
            "stack traces of functions need the function tracer: add -p function (and -l to limit the functions)",
        );
    }
    if cfg.ts_offset.is_some() && cfg.date {
        return bad(
            "--ts-offset",
            "cannot be used with --date (both set the file's time offset); give one",
        );
    }
    Ok(())
}

/// Refuse, before anything is written, the values the kernel would reject or misread;
/// a buffer still to be created is checked against the top level, whose files it copies.
fn check_values(t: &Tracefs, cfg: &RecordConfig) -> Result<(), TracefsError> {
    let target = t.instance_or_top(cfg.instance.as_deref());
    if let Some(kb) = cfg.buffer_size_kb {
        target.check_buffer_size(kb)?;
    }
    if let Some(kb) = cfg.subbuf_size_kb {
        target.check_subbuf_size_kb(kb)?;
    }
    if let Some(m) = &cfg.cpumask {
        target.check_cpumask(m)?;
    }
    for o in &cfg.options {
        target.check_option(o)?;
    }
    Ok(())
}

/// Refuse, before anything is written, the `-l`, `-n` and `-g` of `cfg` that its buffer
/// cannot take: a filter file this kernel refuses (EPERM: no function tracing) or lacks,
/// or a function not in `available_filter_functions`. A buffer still to be created is
/// checked against the top level, whose files it gets.
fn check_function_filters(t: &Tracefs, cfg: &RecordConfig) -> Result<(), RecordError> {
    let target = t.instance_or_top(cfg.instance.as_deref());
    for (which, flag, list) in setup::function_filters(cfg, &target) {
        let pats: Vec<&str> = list.iter().map(String::as_str).collect();
        let what = format!("{flag} ({})", which.file());
        target.check_function_filter(which, &pats).map_err(refused(
            &what,
            &target,
            which.file(),
        ))?;
    }
    Ok(())
}

/// The page size stored in the file: this machine's, or for a tree (which does not record
/// it) `fallback`, the page `events/header_page` describes.
fn page_size(t: &Tracefs, fallback: usize) -> u32 {
    t.host().page_size().unwrap_or(fallback as u32)
}

/// Wall-clock minus trace-clock time in µs, for the DATE option.
///
/// The kernel's `local`/`global`/`perf` clocks run on sched_clock, which tracks
/// CLOCK_MONOTONIC closely; `boot`, `mono`, `mono_raw` and `tai` have exact counterparts.
/// Counter clocks (`counter`, `x86-tsc`) have no wall-clock relation: offset 0.
fn date_offset_us(clock: &str) -> i64 {
    use nix::time::{clock_gettime, ClockId};
    let id = match clock {
        "boot" => ClockId::CLOCK_BOOTTIME,
        "mono_raw" => ClockId::CLOCK_MONOTONIC_RAW,
        "tai" => ClockId::CLOCK_TAI,
        "counter" | "x86-tsc" => return 0,
        _ => ClockId::CLOCK_MONOTONIC,
    };
    let us = |c| {
        clock_gettime(c)
            .map(|t| t.tv_sec() * 1_000_000 + t.tv_nsec() / 1000)
            .unwrap_or(0)
    };
    us(ClockId::CLOCK_REALTIME) - us(id)
}

/// The per-CPU capture files of `extract`, removed however it ends.
struct CaptureFiles(Vec<(u32, PathBuf)>);

impl Drop for CaptureFiles {
    fn drop(&mut self) {
        for (_, tmp) in &self.0 {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// Refuse an output file whose directory does not exist, before anything is read.
fn check_output_dir(output: &Path) -> Result<(), RecordError> {
    let dir = match output.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if dir.is_dir() {
        return Ok(());
    }
    let why = format!("the directory {} does not exist", dir.display());
    Err(RecordError::Dat(crate::dat::DatError::new(
        output,
        crate::dat::OPEN,
        0,
        crate::dat::DatErrorKind::Io(std::io::Error::new(std::io::ErrorKind::NotFound, why)),
    )))
}

/// Write what instance `instance` (top level when `None`) holds now to `output`,
/// consuming it from `trace_pipe_raw`.
///
/// With `snapshot`, the snapshot buffer is read instead (`per_cpu/cpuN/snapshot_raw`).
pub fn extract(
    t: &Tracefs,
    instance: Option<&str>,
    output: &Path,
    all_formats: bool,
    snapshot: bool,
    wo: WriteOptions,
) -> Result<RecordSummary, RecordError> {
    let inst = t.instance(instance)?;
    // Before anything is drained from the buffer: the file must be writable there.
    check_output_dir(output)?;
    let hp = HeaderPage::parse(&String::from_utf8_lossy(&t.read("events/header_page")?))
        .map_err(|e| RecordError::Capture(e.to_string()))?;
    let mut info = PageInfo::of(&hp);
    if let Some(size) = crate::ring::subbuf_size(t, &inst.rel(""))
        .map_err(|e| RecordError::Capture(e.to_string()))?
    {
        info.subbuf = size;
    }
    let cpus = inst.cpus()?;
    let stop = Stop::new().map_err(|e| RecordError::Capture(format!("pipe: {e}")))?;
    stop.trigger();
    let mut summary = RecordSummary::default();
    let mut tmps = CaptureFiles(Vec::new());
    for cpu in cpus {
        let raw = if snapshot {
            "snapshot_raw"
        } else {
            "trace_pipe_raw"
        };
        let pipe = inst.path(format!("per_cpu/cpu{cpu}/{raw}"));
        if !pipe.exists() {
            return Err(RecordError::Tracefs(TracefsError::NotFound { path: pipe }));
        }
        // A recorded tree's data (a live file reports no length).
        if let Some(len) = std::fs::metadata(&pipe)
            .ok()
            .map(|m| m.len())
            .filter(|&n| n > 0)
        {
            crate::ring::check_whole_subbufs(&pipe, len, info.subbuf)
                .map_err(|e| RecordError::Capture(e.to_string()))?;
        }
        let tmp = PathBuf::from(format!("{}.cpu{cpu}", output.display()));
        // With stop already set, the thread drains once and ends.
        let mut th = capture::spawn(cpu, pipe, tmp.clone(), info, stop.clone())
            .map_err(RecordError::Capture)?;
        tmps.0.push((cpu, tmp));
        let r = th.handle.take().map(|h| {
            h.join()
                .unwrap_or_else(|_| Err("capture thread panicked".into()))
        });
        summary.cpus.push(
            r.unwrap_or_else(|| Err("no thread".into()))
                .map_err(RecordError::Capture)?,
        );
        if let Ok(s) = inst.read_string(format!("per_cpu/cpu{cpu}/stats")) {
            summary.stats.push((cpu, s));
        }
    }
    let clock_text = inst
        .read_string("trace_clock")
        .unwrap_or_else(|_| "[local]".into());
    let clock = crate::dat::selected_clock(&clock_text).unwrap_or_else(|| "local".into());
    let events = if all_formats {
        all_events(t)
    } else {
        enabled_events(t, &inst.rel(""))?
    };
    let meta = metadata(t, &events)?;
    let mut options = vec![
        NewOption::text(opt::TRACECLOCK, clock_text.trim_end()),
        NewOption::text(opt::UNAME, &t.host().uname()),
        NewOption::text(
            opt::VERSION,
            concat!("tracectl ", env!("CARGO_PKG_VERSION")),
        ),
    ];
    for (cpu, s) in &summary.stats {
        options.push(NewOption::text(opt::CPUSTAT, &format!("CPU: {cpu}\n{s}")));
    }
    let mut files = Vec::new();
    for (cpu, tmp) in &tmps.0 {
        let f = std::fs::File::open(tmp)
            .map_err(|e| RecordError::Capture(format!("{}: {e}", tmp.display())))?;
        files.push((
            *cpu,
            Box::new(std::io::BufReader::new(f)) as Box<dyn std::io::Read>,
        ));
    }
    let mut wo = wo;
    wo.page_size = page_size(t, hp.page_size()).max(info.subbuf as u32);
    let buffers = vec![BufferSource {
        name: String::new(),
        clock,
        page_size: info.subbuf,
        cpus: files,
    }];
    summary.written = write_dat(output, &wo, &meta, &options, buffers)?;
    Ok(summary)
}

/// Parse a `--compression` value.
pub fn parse_compression(s: &str) -> Option<Compression> {
    Compression::from_name(s)
}
