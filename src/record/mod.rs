//! A recording session: set up tracefs, capture per-CPU pages, tear down and restore.
//!
//! [`Recorder::start`] works in a private instance (`instances/tracectl-record-<pid>`)
//! unless a buffer is named, remembers every file it changes, and puts them back (or
//! removes the instance) in [`Recorder::finish`] or, on any early exit, in `Drop`.
//! [`extract`] writes what a buffer currently holds to a trace.dat.

mod capture;
mod meta;

use std::fmt;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use capture::CpuCaptured;
pub use meta::{all_events, enabled_events, metadata};

use crate::dat::{
    opt, write_dat, BufferSource, Compression, DatError, NewOption, WriteOptions, WriteSummary,
};
use crate::event::HeaderPage;
use crate::tracefs::{AppendMode, Tracefs, TracefsError};
use capture::{CpuThread, PageInfo, Stop};

/// An event to enable, with the filters and triggers bound to it (`-e X -f F -R T`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventSpec {
    /// `system`, `event`, `system:event`, `system:*` or `all`.
    pub name: String,
    /// Filters for it (the last one wins, as in the kernel).
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
    /// `-l`: set_ftrace_filter entries (function tracing).
    pub ftrace_filter: Vec<String>,
    /// `-n`: set_ftrace_notrace entries (function tracing).
    pub ftrace_notrace: Vec<String>,
    /// `-g`: set_graph_function entries (function_graph).
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
    /// target), each with its own events; stored as named buffers.
    pub more_instances: Vec<(String, Vec<EventSpec>)>,
    /// File version and compression.
    pub write: WriteOptions,
}

/// A recording that could not be set up, run or written.
#[derive(Debug)]
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
    /// An event name that matches nothing.
    UnknownEvent(String),
    /// Capture thread or temporary file problem.
    Capture(String),
    /// Writing the trace.dat failed.
    Dat(DatError),
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
            RecordError::UnknownEvent(e) => {
                write!(f, "event {e:?} not found under events/ (list them with `tracectl list -e`)")
            }
            RecordError::Capture(m) => write!(f, "capture: {m}"),
            RecordError::Dat(e) => write!(f, "{e}"),
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

/// Resolve an event name to `(system, event-or-*)` pairs under `events/`.
pub fn resolve_event(t: &Tracefs, name: &str) -> Result<Vec<(String, String)>, RecordError> {
    if name == "all" {
        return Ok(vec![("*".into(), "*".into())]);
    }
    if let Some((s, e)) = name.split_once(':') {
        let e = if e.is_empty() { "*" } else { e };
        let ok = if e == "*" {
            t.path(format!("events/{s}")).is_dir()
        } else {
            t.path(format!("events/{s}/{e}")).is_dir()
        };
        return if ok {
            Ok(vec![(s.into(), e.into())])
        } else {
            Err(RecordError::UnknownEvent(name.into()))
        };
    }
    if name != "ftrace" && t.path(format!("events/{name}/enable")).exists() {
        return Ok(vec![(name.into(), "*".into())]);
    }
    let mut v = Vec::new();
    if let Ok(rd) = std::fs::read_dir(t.path("events")) {
        for s in rd.flatten() {
            if s.path().join(name).join("enable").exists() {
                v.push((
                    s.file_name().to_string_lossy().into_owned(),
                    name.to_string(),
                ));
            }
        }
    }
    v.sort();
    if v.is_empty() {
        Err(RecordError::UnknownEvent(name.into()))
    } else {
        Ok(v)
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
}

/// A running recording.
pub struct Recorder {
    t: Tracefs,
    inst: PathBuf,
    instance_name: String,
    created: bool,
    restore: Vec<(PathBuf, Vec<u8>, AppendMode)>,
    threads: Vec<CpuThread>,
    stop: Arc<Stop>,
    info: PageInfo,
    torn_down: bool,
    top_restore: Vec<(PathBuf, Vec<u8>)>,
    warnings: Vec<String>,
    extra: Vec<Recorder>,
    cfg: RecordConfig,
    output: PathBuf,
    /// Set by a successful [`Recorder::finish`]: only then does -k keep the state (a
    /// recording that fails or is dropped always restores).
    finishing: bool,
}

/// What, written back, recreates a file's state as read: pid and function lists read
/// `no pid` or `#### all functions enabled ####` when empty, which are not valid input.
fn restorable(read: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(read);
    let t = text.trim();
    if t == "no pid" || t.starts_with("#### all functions enabled") {
        return Vec::new();
    }
    // `7 (expanded: 1410)`: a buffer that was never used; the expanded size is its size.
    if let Some((_, rest)) = t.split_once("(expanded: ") {
        return rest.trim_end_matches(')').as_bytes().to_vec();
    }
    read.to_vec()
}

/// Whether a function tracer (or its filters) asked for cannot work in a private instance
/// of this kernel, so that the top level must be used.
fn needs_top_level(t: &Tracefs, cfg: &RecordConfig) -> bool {
    let Some(plugin) = cfg.plugin.as_deref().filter(|p| *p != "nop") else {
        return false;
    };
    let probe = PathBuf::from(format!("instances/tracectl-probe-{}", std::process::id()));
    if std::fs::create_dir(t.path(&probe)).is_err() {
        return false;
    }
    let tracers = t.read(probe.join("available_tracers")).unwrap_or_default();
    let has_tracer = String::from_utf8_lossy(&tracers)
        .split_whitespace()
        .any(|x| x == plugin);
    let has_graph_filter =
        cfg.graph_functions.is_empty() || t.exists(probe.join("set_graph_function"));
    let _ = std::fs::remove_dir(t.path(&probe));
    !(has_tracer && has_graph_filter)
}

fn is_refused(e: &TracefsError) -> bool {
    matches!(e, TracefsError::PermissionDenied { .. })
}

impl Recorder {
    fn rel(&self, f: &str) -> PathBuf {
        self.inst.join(f)
    }

    /// Write `value`, remembering the old contents to restore (named instances only:
    /// a private instance is removed whole).
    fn set(
        &mut self,
        file: &str,
        value: &str,
        restore_as: Option<(String, AppendMode)>,
    ) -> Result<(), TracefsError> {
        let rel = self.rel(file);
        if !self.created {
            let old = match restore_as {
                Some((v, m)) => Some((v.into_bytes(), m)),
                None => self
                    .t
                    .read(&rel)
                    .ok()
                    .map(|v| (restorable(&v), AppendMode::Truncate)),
            };
            self.t.write(&rel, value.as_bytes(), AppendMode::Truncate)?;
            if let Some((v, m)) = old {
                self.restore.push((rel, v, m));
            }
        } else {
            self.t.write(&rel, value.as_bytes(), AppendMode::Truncate)?;
        }
        Ok(())
    }

    /// Set up tracefs and start one capture thread per CPU; `output` is the trace.dat
    /// to write (per-CPU capture files go next to it as `<output>.cpuN`).
    pub fn start(t: Tracefs, cfg: RecordConfig, output: &Path) -> Result<Recorder, RecordError> {
        // Every event is known before anything is created or written.
        if !cfg.ignore_missing {
            let more = cfg.more_instances.iter().flat_map(|(_, evs)| evs);
            for ev in cfg.events.iter().chain(more) {
                resolve_event(&t, &ev.name)?;
            }
        }
        let stop = Stop::new().map_err(|e| RecordError::Capture(format!("pipe: {e}")))?;
        let (name, created) = match &cfg.instance {
            Some(n) => {
                let exists = t.path(format!("instances/{n}")).is_dir();
                (n.clone(), !exists)
            }
            // Older kernels offer function_graph (and the graph filters) only at the top
            // level; record there, as trace-cmd does, restoring what we change.
            None if needs_top_level(&t, &cfg) => (String::new(), false),
            None => (format!("tracectl-record-{}", std::process::id()), true),
        };
        let inst = if name.is_empty() {
            PathBuf::new()
        } else {
            PathBuf::from(format!("instances/{name}"))
        };
        if created {
            std::fs::create_dir(t.path(&inst))
                .map_err(|e| TracefsError::from_io(t.path(&inst), e))?;
        }
        let hp = HeaderPage::parse(&String::from_utf8_lossy(&t.read("events/header_page")?))
            .map_err(|e| RecordError::Capture(e.to_string()))?;
        let mut rec = Recorder {
            t,
            inst,
            instance_name: name,
            created,
            restore: Vec::new(),
            threads: Vec::new(),
            stop,
            info: PageInfo {
                subbuf: hp.page_size(),
                commit_offset: hp.commit_offset,
                data_offset: hp.data_offset,
                long_size: hp.long_size(),
                sleep_ms: 100,
                max_bytes: None,
            },
            torn_down: false,
            top_restore: Vec::new(),
            warnings: Vec::new(),
            extra: Vec::new(),
            cfg,
            output: output.to_path_buf(),
            finishing: false,
        };
        // From here on Drop restores whatever was changed, whatever fails next.
        rec.configure()?;
        rec.spawn_threads()?;
        rec.exclude_self()?;
        for (name, events) in rec.cfg.more_instances.clone() {
            let mut sub = rec.cfg.clone();
            sub.instance = Some(name.clone());
            sub.events = events;
            sub.more_instances.clear();
            // Global files are handled once, by the first target.
            sub.cmdlines_size = None;
            let prefix = PathBuf::from(format!("{}.{name}", rec.output.display()));
            let x = Recorder::start(rec.t.clone(), sub, &prefix)?;
            rec.warnings.extend(x.warnings.iter().cloned());
            rec.extra.push(x);
        }
        rec.set("tracing_on", "1", None)?;
        Ok(rec)
    }

    fn configure(&mut self) -> Result<(), RecordError> {
        let cfg = self.cfg.clone();
        self.info.max_bytes = cfg.max_kb_per_cpu.map(|k| k * 1024);
        if let Some(us) = cfg.sleep_us {
            self.info.sleep_ms = (us / 1000).clamp(1, u16::MAX as u64) as u16;
        }
        if let Some(kb) = cfg.subbuf_size_kb {
            self.set("buffer_subbuf_size_kb", &kb.to_string(), None)?;
        }
        if let Some(n) = cfg.cmdlines_size {
            // Global, so always restored, also when our instance is private.
            let rel = PathBuf::from("saved_cmdlines_size");
            let old = self.t.read(&rel)?;
            self.t
                .write(&rel, n.to_string().as_bytes(), AppendMode::Truncate)?;
            self.top_restore.push((rel, old));
        }
        if let Some(d) = cfg.max_graph_depth {
            let rel = self.rel("max_graph_depth");
            match self.set("max_graph_depth", &d.to_string(), None) {
                Err(e) if is_refused(&e) || matches!(e, TracefsError::NotFound { .. }) => {
                    return Err(RecordError::Refused {
                        what: "--max-graph-depth".into(),
                        file: self.t.path(rel),
                    })
                }
                r => r?,
            }
        }
        if let Ok(kb) = self.t.read_string(self.rel("buffer_subbuf_size_kb")) {
            if let Ok(kb) = kb.trim().parse::<usize>() {
                self.info.subbuf = kb * 1024;
            }
        }
        self.set("tracing_on", "0", None)?;
        if !self.created && !cfg.keep_before {
            // Events enabled before us are not part of this recording: disable them now,
            // enable them again at the end (set_event lists them one per line).
            let before = self.t.read(self.rel("set_event")).unwrap_or_default();
            if !before.iter().all(u8::is_ascii_whitespace) {
                self.set(
                    "set_event",
                    "",
                    Some((
                        String::from_utf8_lossy(&before).into_owned(),
                        AppendMode::Truncate,
                    )),
                )?;
            }
        }
        if let Some(c) = &cfg.clock {
            let old = self
                .t
                .read_string(self.rel("trace_clock"))
                .ok()
                .and_then(|s| crate::dat::selected_clock(&s));
            self.set("trace_clock", c, old.map(|o| (o, AppendMode::Truncate)))?;
        }
        if let Some(kb) = cfg.buffer_size_kb {
            self.set("buffer_size_kb", &kb.to_string(), None)?;
        }
        if let Some(m) = &cfg.cpumask {
            self.set("tracing_cpumask", m, None)?;
        }
        for o in &cfg.options {
            let (name, val) = match o.strip_prefix("no") {
                Some(n) if self.t.exists(self.rel(&format!("options/{n}"))) => (n.to_string(), "0"),
                _ => (o.clone(), "1"),
            };
            self.set(&format!("options/{name}"), val, None)?;
        }
        let function = cfg
            .plugin
            .as_deref()
            .is_some_and(|p| p.starts_with("function"));
        let ftrace_files: [(&Vec<String>, &str, &str); 3] = [
            (
                &cfg.ftrace_filter,
                "set_ftrace_filter",
                "-l (set_ftrace_filter)",
            ),
            (
                &cfg.ftrace_notrace,
                "set_ftrace_notrace",
                "-n (set_ftrace_notrace)",
            ),
            (
                &cfg.graph_functions,
                "set_graph_function",
                "-g (set_graph_function)",
            ),
        ];
        for (list, file, what) in ftrace_files {
            for f in list {
                let rel = self.rel(file);
                match self.t.write(&rel, f.as_bytes(), AppendMode::Append) {
                    Ok(()) => self.restore.push((rel, Vec::new(), AppendMode::Truncate)),
                    Err(e) if is_refused(&e) => {
                        return Err(RecordError::Refused {
                            what: what.into(),
                            file: self.t.path(&rel),
                        })
                    }
                    Err(e) => return Err(e.into()),
                }
            }
        }
        if !cfg.pids.is_empty() {
            let pids: Vec<String> = cfg.pids.iter().map(u32::to_string).collect();
            self.set("set_event_pid", &pids.join(" "), None)?;
            if cfg.follow_children {
                self.set("options/event-fork", "1", None)?;
            }
            if function {
                let rel = self.rel("set_ftrace_pid");
                match self.set("set_ftrace_pid", &pids.join(" "), None) {
                    Err(e) if is_refused(&e) => {
                        return Err(RecordError::Refused {
                            what: "-P with a function tracer".into(),
                            file: self.t.path(rel),
                        })
                    }
                    r => r?,
                }
                if cfg.follow_children {
                    self.set("options/function-fork", "1", None)?;
                }
            }
        }
        if let Some(p) = &cfg.plugin {
            let rel = self.rel("current_tracer");
            match self.set(
                "current_tracer",
                p,
                Some(("nop".into(), AppendMode::Truncate)),
            ) {
                Err(e) if is_refused(&e) => {
                    return Err(RecordError::Refused {
                        what: format!("-p {p}"),
                        file: self.t.path(rel),
                    })
                }
                r => r?,
            }
        }
        for ev in &cfg.events {
            let targets = match resolve_event(&self.t, &ev.name) {
                Err(RecordError::UnknownEvent(n)) if cfg.ignore_missing => {
                    self.warnings
                        .push(format!("event {n:?} not found; ignored (-i)"));
                    continue;
                }
                r => r?,
            };
            for (s, e) in targets {
                let dir = if s == "*" {
                    "events".to_string()
                } else if e == "*" {
                    format!("events/{s}")
                } else {
                    format!("events/{s}/{e}")
                };
                for f in &ev.filters {
                    self.set(
                        &format!("{dir}/filter"),
                        f,
                        Some(("0".into(), AppendMode::Truncate)),
                    )?;
                }
                for tr in &ev.triggers {
                    let rel = self.rel(&format!("{dir}/trigger"));
                    self.t.write(&rel, tr.as_bytes(), AppendMode::Append)?;
                    let undo = format!("!{}", tr.split(" if ").next().unwrap_or(tr));
                    self.restore
                        .push((rel, undo.into_bytes(), AppendMode::Append));
                }
                // A system's enable reads `X` when mixed, which cannot be written back.
                let was = self
                    .t
                    .read_string(self.rel(&format!("{dir}/enable")))
                    .unwrap_or_default();
                let undo = if was.trim() == "1" { "1" } else { "0" };
                let value = if ev.invert { "0" } else { "1" };
                self.set(
                    &format!("{dir}/enable"),
                    value,
                    Some((undo.into(), AppendMode::Truncate)),
                )?;
            }
        }
        if let Ok(kb) = self.t.read_string(self.rel("buffer_subbuf_size_kb")) {
            if let Ok(kb) = kb.trim().parse::<usize>() {
                self.info.subbuf = kb * 1024;
            }
        }
        // Start from an empty buffer: old events are not part of this recording. A target
        // that existed before is reset too, as trace-cmd does, unless -K keeps its state.
        if self.created || !cfg.keep_before {
            self.t.write(self.rel("trace"), b"", AppendMode::Truncate)?;
        }
        Ok(())
    }

    fn spawn_threads(&mut self) -> Result<(), RecordError> {
        let mut cpus: Vec<u32> = std::fs::read_dir(self.t.path(self.rel("per_cpu")))
            .map_err(|e| TracefsError::from_io(self.t.path(self.rel("per_cpu")), e))?
            .flatten()
            .filter_map(|e| {
                e.file_name()
                    .to_string_lossy()
                    .strip_prefix("cpu")
                    .and_then(|n| n.parse().ok())
            })
            .collect();
        cpus.sort();
        for cpu in cpus {
            let pipe = self
                .t
                .path(self.rel(&format!("per_cpu/cpu{cpu}/trace_pipe_raw")));
            let tmp = PathBuf::from(format!("{}.cpu{cpu}", self.output.display()));
            let th = capture::spawn(cpu, pipe, tmp, self.info, self.stop.clone())
                .map_err(|e| RecordError::Capture(format!("cpu{cpu}: {e}")))?;
            self.threads.push(th);
        }
        Ok(())
    }

    /// Keep the recorder's own threads out of the trace (set_event_notrace_pid), as
    /// their reads and wake-ups would otherwise fill it.
    fn exclude_self(&mut self) -> Result<(), RecordError> {
        if self.cfg.no_filter || !self.t.exists(self.rel("set_event_notrace_pid")) {
            return Ok(());
        }
        let mut pids = vec![std::process::id().to_string()];
        pids.extend(
            self.threads
                .iter()
                .filter_map(|t| t.tid)
                .map(|t| t.to_string()),
        );
        self.set("set_event_notrace_pid", &pids.join(" "), None)?;
        let function = self
            .cfg
            .plugin
            .as_deref()
            .is_some_and(|p| p.starts_with("function"));
        if function && self.cfg.pids.is_empty() && self.t.exists(self.rel("set_ftrace_notrace_pid"))
        {
            match self.set("set_ftrace_notrace_pid", &pids.join(" "), None) {
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

    /// Name of the instance recorded.
    pub fn instance_name(&self) -> &str {
        &self.instance_name
    }

    fn stop_threads(&mut self) -> Vec<Result<CpuCaptured, String>> {
        let _ = self
            .t
            .write(self.rel("tracing_on"), b"0", AppendMode::Truncate);
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
        let _ = self
            .t
            .write(self.rel("tracing_on"), b"0", AppendMode::Truncate);
        self.stop.trigger();
        for th in &mut self.threads {
            if let Some(h) = th.handle.take() {
                let _ = h.join();
            }
        }
        if self.cfg.keep_after && self.finishing {
            // -k: leave everything as the recording set it, tracing_on at 0. Global files
            // (saved_cmdlines_size) are still restored: they are not tracing state.
            self.restore.clear();
            while let Some((rel, v)) = self.top_restore.pop() {
                let _ = self.t.write(&rel, &v, AppendMode::Truncate);
            }
            return;
        }
        // Triggers must go before the events they hang on are disabled.
        while let Some((rel, v, m)) = self.restore.pop() {
            let _ = self.t.write(&rel, &v, m);
        }
        while let Some((rel, v)) = self.top_restore.pop() {
            let _ = self.t.write(&rel, &v, AppendMode::Truncate);
        }
        if self.created {
            // Disabling first lets rmdir succeed even if a reader lingers.
            let _ = self
                .t
                .write(self.rel("events/enable"), b"0", AppendMode::Truncate);
            let p = self.t.path(&self.inst);
            for _ in 0..50 {
                if std::fs::remove_dir(&p).is_ok() || !p.exists() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
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
        let meta = metadata(&self.t, &events)?;
        for x in &mut extras {
            x.finishing = true;
            x.teardown();
        }
        self.finishing = true;
        self.teardown();

        let clock = main.clock.clone();
        let mut options = vec![
            NewOption::text(opt::TRACECLOCK, main.clock_text.trim_end()),
            NewOption::text(opt::UNAME, &uname()),
            NewOption::text(
                opt::VERSION,
                concat!("tracectl ", env!("CARGO_PKG_VERSION")),
            ),
        ];
        if self.cfg.date {
            options.push(NewOption::date(date_offset_us(&clock)));
        }
        for (cpu, s) in &summary.stats {
            options.push(NewOption::text(opt::CPUSTAT, &format!("CPU: {cpu}\n{s}")));
        }
        let mut buffers = Vec::new();
        let mut all_tmp = Vec::new();
        for (name, c) in std::iter::once((String::new(), &main)).chain(
            extras
                .iter()
                .map(|x| x.instance_name.clone())
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
        wo.page_size = page_size().max(biggest as u32);
        let r = write_dat(&self.output, &wo, &meta, &options, buffers);
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
            if let Ok(s) = self
                .t
                .read_string(self.rel(&format!("per_cpu/cpu{}/stats", c.cpu)))
            {
                summary.stats.push((c.cpu, s));
            }
        }
        let clock_text = self
            .t
            .read_string(self.rel("trace_clock"))
            .unwrap_or_else(|_| "[local]".into());
        let events = if self.cfg.all_formats {
            all_events(&self.t)
        } else {
            enabled_events(&self.t, &self.inst)?
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

/// `uname` as trace-cmd stores it: `sysname nodename release machine`.
pub fn uname() -> String {
    match nix::sys::utsname::uname() {
        Ok(u) => format!(
            "{} {} {} {}",
            u.sysname().to_string_lossy(),
            u.nodename().to_string_lossy(),
            u.release().to_string_lossy(),
            u.machine().to_string_lossy()
        ),
        Err(_) => String::new(),
    }
}

fn page_size() -> u32 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
        .ok()
        .flatten()
        .map(|v| v as u32)
        .unwrap_or(4096)
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
    let inst = match instance {
        Some(n) => PathBuf::from(format!("instances/{n}")),
        None => PathBuf::new(),
    };
    if instance.is_some() && !t.path(&inst).is_dir() {
        return Err(RecordError::Tracefs(TracefsError::NotFound {
            path: t.path(&inst),
        }));
    }
    // Before anything is drained from the buffer: the file must be writable there.
    check_output_dir(output)?;
    let hp = HeaderPage::parse(&String::from_utf8_lossy(&t.read("events/header_page")?))
        .map_err(|e| RecordError::Capture(e.to_string()))?;
    let mut info = PageInfo {
        subbuf: hp.page_size(),
        commit_offset: hp.commit_offset,
        data_offset: hp.data_offset,
        long_size: hp.long_size(),
        sleep_ms: 100,
        max_bytes: None,
    };
    if let Some(size) =
        crate::ring::subbuf_size(t, &inst).map_err(|e| RecordError::Capture(e.to_string()))?
    {
        info.subbuf = size;
    }
    let mut cpus: Vec<u32> = std::fs::read_dir(t.path(inst.join("per_cpu")))
        .map_err(|e| TracefsError::from_io(t.path(inst.join("per_cpu")), e))?
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_string_lossy()
                .strip_prefix("cpu")
                .and_then(|n| n.parse().ok())
        })
        .collect();
    cpus.sort();
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
        let pipe = t.path(inst.join(format!("per_cpu/cpu{cpu}/{raw}")));
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
        if let Ok(s) = t.read_string(inst.join(format!("per_cpu/cpu{cpu}/stats"))) {
            summary.stats.push((cpu, s));
        }
    }
    let clock_text = t
        .read_string(inst.join("trace_clock"))
        .unwrap_or_else(|_| "[local]".into());
    let clock = crate::dat::selected_clock(&clock_text).unwrap_or_else(|| "local".into());
    let events = if all_formats {
        all_events(t)
    } else {
        enabled_events(t, &inst)?
    };
    let meta = metadata(t, &events)?;
    let mut options = vec![
        NewOption::text(opt::TRACECLOCK, clock_text.trim_end()),
        NewOption::text(opt::UNAME, &uname()),
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
    wo.page_size = page_size().max(info.subbuf as u32);
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
