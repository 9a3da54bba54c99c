//! Copying a live tracefs root into a fixture tree (`tracectl capture`).
//!
//! A fixture tree is a directory laid out like tracefs, so pointing `--tracefs` at it
//! replays it through the same code as the live mount. A data capture runs in a private
//! instance, so the top-level buffer and every other user's settings stay untouched: the
//! only lasting trace of a capture is what the kernel itself keeps globally
//! (`saved_cmdlines`).

use std::fmt;
use std::fs;
use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::events::{parse_available_events, select_events, EventName, EventTarget};
use super::instance::Instance;
use super::{AppendMode, FunctionFilter, Ledger, PrivateInstance, Tracefs, TracefsError};

/// What to capture.
#[derive(Debug, Clone, Default)]
pub struct CaptureOptions {
    /// Events to enable for a data capture: `all`, `SYSTEM`, `SYSTEM:EVENT`, globs such as
    /// `sched:sched_*`, or a bare event name. Empty: metadata only.
    pub events: Vec<String>,
    /// Copy every `events/<sys>/<ev>/` directory even when only a few events are enabled.
    pub all_formats: bool,
    /// Store kallsyms (`/proc/kallsyms`, or a source tree's own) as `host/kallsyms.zst`
    /// (zstd), for `%pS` and call sites.
    pub kallsyms: bool,
    /// Workload to run while tracing; when absent the capture sleeps for `duration`.
    pub command: Option<Vec<String>>,
    /// How long to trace when there is no command.
    pub duration: Duration,
    /// Per-CPU buffer size of the private instance (`buffer_size_kb`), to keep trees small.
    pub buffer_size_kb: Option<u64>,
    /// Trace clock of the private instance (`trace_clock`), e.g. `counter` or `mono`.
    pub clock: Option<String>,
    /// Sub-buffer size of the private instance (`buffer_subbuf_size_kb`, 6.8+).
    pub subbuf_size_kb: Option<u64>,
    /// Extra instance options to set while recording, e.g. `record-tgid` (written as `1`).
    pub options: Vec<String>,
    /// Tracer to run while recording (`current_tracer`), e.g. `function_graph`.
    pub tracer: Option<String>,
    /// Functions written to `set_graph_function` before the tracer starts (a graph filter
    /// also keeps the code patching fast).
    pub graph_functions: Vec<String>,
    /// `max_graph_depth` while recording.
    pub max_graph_depth: Option<u32>,
    /// Record in the top-level instance instead of a private one, for kernels whose
    /// instances lack the tracer (Debian 6.1 has no function_graph in instances). Every
    /// top-level file changed is written back afterwards; the buffer itself is consumed.
    pub top_level: bool,
}

/// What a capture did.
#[derive(Debug, Clone, Default)]
pub struct CaptureReport {
    /// Files written into the tree.
    pub files: usize,
    /// Files that could not be read, with the reason (e.g. EPERM in a sandbox).
    pub skipped: Vec<(String, String)>,
    /// Bytes of `trace_pipe_raw` drained per CPU (data captures only).
    pub raw_bytes: Vec<u64>,
    /// Lines of the kernel's `trace` text (data captures only).
    pub trace_lines: usize,
    /// Exit status of the workload, if one ran.
    pub workload_status: Option<i32>,
    /// Lines for the user: stale private instances removed, files that could not be put
    /// back afterwards.
    pub warnings: Vec<String>,
}

/// A capture that could not be completed.
#[derive(Debug)]
#[non_exhaustive]
pub enum CaptureError {
    /// A tracefs file could not be read or written.
    Tracefs(TracefsError),
    /// A file in the destination tree could not be written.
    Write {
        /// The destination file.
        path: PathBuf,
        /// The cause.
        err: io::Error,
    },
    /// The workload could not be started.
    Workload {
        /// The command.
        command: String,
        /// The cause.
        err: io::Error,
    },
    /// SIGINT or SIGTERM arrived; the instance was removed and nothing more was written.
    Interrupted,
    /// The buffer cannot do what was asked (e.g. a tracer missing from an instance); the
    /// text says what to do instead.
    Unsupported(String),
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CaptureError::Tracefs(e) => write!(f, "{e}"),
            CaptureError::Write { path, err } => {
                write!(f, "{}: cannot write: {err}", path.display())
            }
            CaptureError::Workload { command, err } => write!(f, "cannot run {command:?}: {err}"),
            CaptureError::Interrupted => write!(f, "interrupted; the capture instance was removed"),
            CaptureError::Unsupported(why) => write!(f, "{why}"),
        }
    }
}

impl std::error::Error for CaptureError {}

impl From<TracefsError> for CaptureError {
    fn from(e: TracefsError) -> Self {
        CaptureError::Tracefs(e)
    }
}

/// Top-level files never read: they consume data, block, or only accept writes.
const NEVER_READ: &[&str] = &[
    "trace_pipe",
    "trace_pipe_raw",
    "snapshot_raw",
    "trace_marker",
    "trace_marker_raw",
    "free_buffer",
    "snapshot",
    // Function lists are megabytes and not part of what a fixture replays.
    "available_filter_functions",
    "available_filter_functions_addrs",
    "enabled_functions",
    "touched_functions",
];

/// Files of an instance that describe the data in its buffer; a data capture takes them
/// from the private instance rather than from the top level.
const INSTANCE_FILES: &[&str] = &[
    "trace_clock",
    "trace_options",
    "buffer_size_kb",
    "buffer_total_size_kb",
    "buffer_subbuf_size_kb",
    "buffer_percent",
    "current_tracer",
    "set_event",
    "timestamp_mode",
    "tracing_cpumask",
];

/// Copy `src` into the fixture tree `dest` (created if needed).
///
/// With events, this is a data capture: a private instance `instances/tracectl-capture-<pid>`
/// gets `options/hash-ptr` off (the kernel would otherwise print `%p` values hashed with a
/// boot secret), the events enabled, the workload run, tracing stopped; then its `trace` text
/// and, from the same stopped buffer, every `per_cpu/cpuN/trace_pipe_raw` are written to the
/// tree. The instance is removed on every path, including `stop` being set by a signal
/// handler.
pub fn capture(
    src: &Tracefs,
    dest: &Path,
    opts: &CaptureOptions,
    stop: &AtomicBool,
) -> Result<CaptureReport, CaptureError> {
    let data = !opts.events.is_empty() || opts.tracer.is_some();
    // Recording needs a kernel; a copy of a tree's metadata takes its host/ files along.
    if data {
        src.require_live("a data capture (-e, -p or a command)")?;
    }
    let mut report = CaptureReport::default();
    mkdirs(dest)?;
    let available = src.read_string("available_events")?;
    let selected = selected_events(&available, &opts.events)?;
    let data = !opts.events.is_empty() || opts.tracer.is_some();

    // Global metadata first; the instance's own view overwrites the per-buffer files.
    copy_top_level(src, dest, &mut report)?;
    let copy_all = opts.all_formats || !data;

    if data {
        let top = src.top();
        let mut ledger = Ledger::new();
        let mut private = None;
        let it = if opts.top_level {
            top.clone()
        } else {
            // A tracer's own options (options/funcgraph-*) are global to the tracer on
            // Debian 6.1 and 6.12: written in an instance they change the top level too, and
            // outlive the instance. Save the top level's copies of those.
            if opts.tracer.is_some() {
                for o in &opts.options {
                    ledger.save_if_present(&top, format!("options/{}", top.option_spec(o).0))?;
                }
            }
            let p = PrivateInstance::create(src, "capture")?;
            report.warnings.extend(p.notes().iter().cloned());
            let it = p.instance().clone();
            ledger.mark_private(&it);
            private = Some(p);
            it
        };
        record_in(&it, opts, &selected, stop, &mut report, &mut ledger)?;
        // The graph filter lives at the top level; copy what the recording used.
        for f in ["set_graph_function", "set_graph_notrace", "max_graph_depth"] {
            if top.exists(f) {
                copy_file(&top, f, dest, f, &mut report)?;
            }
        }
        // Per-buffer state while the instance still has it.
        for f in INSTANCE_FILES {
            copy_file(&it, f, dest, f, &mut report)?;
        }
        copy_dir_files(&it, "options", dest, &mut report)?;
        copy_per_cpu(&it, dest, &mut report)?;
        copy_events(
            &it,
            &top,
            dest,
            if copy_all { None } else { Some(&selected) },
            &mut report,
        )?;
        let text = it.read("trace")?;
        report.trace_lines = text.iter().filter(|&&b| b == b'\n').count();
        write_dest(dest, "trace", &text)?;
        report.files += 1;
        // The comm cache the kernel's text just used; read before anything else runs.
        copy_file(&top, "saved_cmdlines", dest, "saved_cmdlines", &mut report)?;
        copy_file(&top, "saved_tgids", dest, "saved_tgids", &mut report)?;
        report.raw_bytes = drain_raw(&it, dest, &mut report)?;
        if let Some(p) = private {
            let path = p.instance().path("");
            if let Err(e) = p.remove() {
                report.warnings.push(format!(
                    "could not remove {}: {e}; remove it with rmdir",
                    path.display()
                ));
            }
        }
        report.warnings.extend(ledger.restore());
    } else {
        let top = src.top();
        copy_events(&top, &top, dest, None, &mut report)?;
    }

    write_host(&src.host(), dest, opts, &mut report)?;
    Ok(report)
}

/// Enable, run, stop. Every change to a shared buffer goes through `ledger`.
fn record_in(
    it: &Instance,
    opts: &CaptureOptions,
    selected: &[(String, String)],
    stop: &AtomicBool,
    report: &mut CaptureReport,
    ledger: &mut Ledger,
) -> Result<(), CaptureError> {
    ledger.save(it, "tracing_on")?;
    it.set_tracing_on(false)?;
    if let Some(kb) = opts.buffer_size_kb {
        ledger.save(it, "buffer_size_kb")?;
        it.set_buffer_size(kb)?;
    }
    if let Some(clock) = &opts.clock {
        ledger.save(it, "trace_clock")?;
        it.set_trace_clock(clock)?;
    }
    if let Some(kb) = opts.subbuf_size_kb {
        ledger.save(it, "buffer_subbuf_size_kb")?;
        it.set_subbuf_size_kb(kb)?;
    }
    if it.exists("options/hash-ptr") {
        ledger.save(it, "options/hash-ptr")?;
        it.set_option("hash-ptr", false)?;
    }
    for o in &opts.options {
        ledger.apply_option(it, o)?;
    }
    if opts.events.iter().any(|e| e == "all") {
        ledger.save(it, "events/enable")?;
        it.set_target_enabled(&EventTarget::All, true)?;
    } else {
        for (sys, ev) in selected {
            let e = EventName::new(sys, ev);
            ledger.save(it, e.dir().join("enable"))?;
            it.set_target_enabled(&EventTarget::Events(vec![e]), true)?;
        }
    }
    if let Some(tracer) = &opts.tracer {
        let where_ = if opts.top_level {
            "the top-level instance"
        } else {
            "a tracefs instance on this kernel"
        };
        let hint = if opts.top_level {
            ""
        } else {
            "; try --top-level"
        };
        let avail = it.available_tracers().unwrap_or_default();
        if !avail.iter().any(|t| t == tracer) {
            return Err(CaptureError::Unsupported(format!(
                "tracer {tracer:?} is not available in {where_} (available_tracers: {}){hint}",
                avail.join(" ")
            )));
        }
        if !opts.graph_functions.is_empty() && !it.exists("set_graph_function") {
            return Err(CaptureError::Unsupported(format!(
                "-g needs set_graph_function, which {where_} lacks{hint}"
            )));
        }
        // Filters first: an unfiltered graph tracer patches every call site (seconds).
        if !opts.graph_functions.is_empty() {
            ledger.save(it, "set_graph_function")?;
            let f: Vec<&str> = opts.graph_functions.iter().map(String::as_str).collect();
            it.set_function_filter(FunctionFilter::GraphFunction, &f, AppendMode::Truncate)?;
        }
        if let Some(d) = opts.max_graph_depth {
            ledger.save(it, "max_graph_depth")?;
            it.set_max_graph_depth(d)?;
        }
        ledger.save(it, "current_tracer")?;
        it.set_tracer(tracer)?;
    }
    it.clear()?;
    ledger.save(it, "tracing_on")?;
    it.set_tracing_on(true)?;
    let outcome = run_workload(opts, stop);
    it.set_tracing_on(false)?;
    report.workload_status = outcome?;
    if stop.load(Ordering::SeqCst) {
        return Err(CaptureError::Interrupted);
    }
    Ok(())
}

fn run_workload(opts: &CaptureOptions, stop: &AtomicBool) -> Result<Option<i32>, CaptureError> {
    match &opts.command {
        Some(argv) if !argv.is_empty() => {
            let mut child = Command::new(&argv[0])
                .args(&argv[1..])
                .spawn()
                .map_err(|err| CaptureError::Workload {
                    command: argv.join(" "),
                    err,
                })?;
            let status = child.wait().map_err(|err| CaptureError::Workload {
                command: argv.join(" "),
                err,
            })?;
            Ok(Some(status.code().unwrap_or(-1)))
        }
        _ => {
            let end = Instant::now() + opts.duration;
            while Instant::now() < end && !stop.load(Ordering::SeqCst) {
                std::thread::sleep(
                    Duration::from_millis(10).min(end.saturating_duration_since(Instant::now())),
                );
            }
            Ok(None)
        }
    }
}

/// The events the `-e` specs select, as `(system, event)` pairs.
fn selected_events(
    available: &str,
    specs: &[String],
) -> Result<Vec<(String, String)>, CaptureError> {
    Ok(select_events(specs, &parse_available_events(available))?
        .into_iter()
        .map(|e| (e.system, e.name))
        .collect())
}

fn mkdirs(p: &Path) -> Result<(), CaptureError> {
    fs::create_dir_all(p).map_err(|err| CaptureError::Write {
        path: p.to_path_buf(),
        err,
    })
}

fn write_dest(dest: &Path, rel: &str, data: &[u8]) -> Result<(), CaptureError> {
    let path = dest.join(rel);
    if let Some(parent) = path.parent() {
        mkdirs(parent)?;
    }
    fs::write(&path, data).map_err(|err| CaptureError::Write { path, err })
}

/// Copy one file; unreadable files (EPERM in a sandbox, write-only files) are noted, not fatal.
fn copy_file(
    from: &Instance,
    rel: &str,
    dest: &Path,
    to: &str,
    report: &mut CaptureReport,
) -> Result<(), CaptureError> {
    match from.read(rel) {
        Ok(bytes) => {
            write_dest(dest, to, &bytes)?;
            report.files += 1;
        }
        Err(TracefsError::NotFound { .. } | TracefsError::NotSupported { .. }) => {}
        Err(e) => report.skipped.push((to.to_string(), e.to_string())),
    }
    Ok(())
}

fn list_dir(dir: &Path) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> = match fs::read_dir(dir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let is_dir = e.file_type().ok()?.is_dir();
                Some((e.file_name().into_string().ok()?, is_dir))
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    out.sort();
    out
}

fn copy_top_level(
    src: &Tracefs,
    dest: &Path,
    report: &mut CaptureReport,
) -> Result<(), CaptureError> {
    let top = src.top();
    for (name, is_dir) in list_dir(src.root()) {
        if is_dir || NEVER_READ.contains(&name.as_str()) || name == "trace" {
            continue;
        }
        copy_file(&top, &name, dest, &name, report)?;
    }
    copy_dir_files(&top, "options", dest, report)?;
    copy_per_cpu(&top, dest, report)?;
    for f in ["header_page", "header_event"] {
        let rel = format!("events/{f}");
        copy_file(&top, &rel, dest, &rel, report)?;
    }
    Ok(())
}

fn copy_dir_files(
    from: &Instance,
    dir: &str,
    dest: &Path,
    report: &mut CaptureReport,
) -> Result<(), CaptureError> {
    for (name, is_dir) in list_dir(&from.path(dir)) {
        if !is_dir {
            let rel = format!("{dir}/{name}");
            copy_file(from, &rel, dest, &rel, report)?;
        }
    }
    Ok(())
}

fn copy_per_cpu(
    from: &Instance,
    dest: &Path,
    report: &mut CaptureReport,
) -> Result<(), CaptureError> {
    for (cpu, is_dir) in list_dir(&from.path("per_cpu")) {
        if is_dir {
            for f in ["buffer_size_kb", "stats"] {
                let rel = format!("per_cpu/{cpu}/{f}");
                copy_file(from, &rel, dest, &rel, report)?;
            }
        }
    }
    Ok(())
}

/// Copy `events/`: per-system `enable`/`filter`, and per event `format`, `id`, `enable`,
/// `filter`, `trigger`. `only`: just these events plus `events/ftrace/*` (whose formats
/// describe the tracer records any tree may hold).
fn copy_events(
    from: &Instance,
    top: &Instance,
    dest: &Path,
    only: Option<&[(String, String)]>,
    report: &mut CaptureReport,
) -> Result<(), CaptureError> {
    if from.exists("events/enable") {
        copy_file(from, "events/enable", dest, "events/enable", report)?;
    }
    // The ftrace system only lives at the top level.
    let mut systems: Vec<(Instance, String)> = Vec::new();
    for (sys, is_dir) in list_dir(&top.path("events")) {
        if is_dir {
            let src = if from.exists(format!("events/{sys}")) {
                from.clone()
            } else {
                top.clone()
            };
            systems.push((src, sys));
        }
    }
    for (src, sys) in systems {
        let wanted: Vec<String> = list_dir(&src.path(format!("events/{sys}")))
            .into_iter()
            .filter(|(_, d)| *d)
            .map(|(e, _)| e)
            .filter(|e| match only {
                None => true,
                Some(sel) => sys == "ftrace" || sel.iter().any(|(s, n)| *s == sys && n == e),
            })
            .collect();
        if wanted.is_empty() {
            continue;
        }
        for f in ["enable", "filter"] {
            let rel = format!("events/{sys}/{f}");
            copy_file(&src, &rel, dest, &rel, report)?;
        }
        for ev in wanted {
            for f in ["format", "id", "enable", "filter", "trigger"] {
                let rel = format!("events/{sys}/{ev}/{f}");
                copy_file(&src, &rel, dest, &rel, report)?;
            }
        }
    }
    Ok(())
}

/// Drain every `per_cpu/cpuN/trace_pipe_raw` of a stopped buffer into the tree, whole
/// sub-buffers, without blocking.
fn drain_raw(
    it: &Instance,
    dest: &Path,
    report: &mut CaptureReport,
) -> Result<Vec<u64>, CaptureError> {
    let subbuf = it
        .read_string("buffer_subbuf_size_kb")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
        .unwrap_or(4)
        * 1024;
    let mut sizes = Vec::new();
    let mut cpus: Vec<u32> = list_dir(&it.path("per_cpu"))
        .into_iter()
        .filter_map(|(n, _)| n.strip_prefix("cpu")?.parse().ok())
        .collect();
    cpus.sort_unstable();
    for cpu in cpus {
        let rel = format!("per_cpu/cpu{cpu}/trace_pipe_raw");
        let path = it.path(&rel);
        let mut file = fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&path)
            .map_err(|e| TracefsError::from_io(&path, e))?;
        let mut out = Vec::new();
        let mut page = vec![0u8; subbuf];
        loop {
            match file.read(&mut page) {
                Ok(0) => break,
                Ok(n) => {
                    out.extend_from_slice(&page[..n]);
                    // A short read is a partial page; pad so every page stays whole.
                    out.resize(out.len() + (subbuf - n % subbuf) % subbuf, 0);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(TracefsError::from_io(&path, e).into()),
            }
        }
        let dpath = dest.join(&rel);
        mkdirs(dpath.parent().unwrap_or(dest))?;
        let mut f = fs::File::create(&dpath).map_err(|err| CaptureError::Write {
            path: dpath.clone(),
            err,
        })?;
        f.write_all(&out).map_err(|err| CaptureError::Write {
            path: dpath.clone(),
            err,
        })?;
        report.files += 1;
        sizes.push(out.len() as u64);
    }
    Ok(sizes)
}

fn write_host(
    host: &super::Host,
    dest: &Path,
    opts: &CaptureOptions,
    report: &mut CaptureReport,
) -> Result<(), CaptureError> {
    let uname = format!("{}\n", host.uname_line().unwrap_or_default());
    write_dest(dest, "host/uname", uname.as_bytes())?;
    report.files += 1;
    // The `trace` header's `#P:` counts online CPUs, which per_cpu/ (possible CPUs) may not.
    if let Some(online) = host.cpu_online() {
        write_dest(dest, "host/cpu_online", online.as_bytes())?;
        report.files += 1;
    }
    if opts.kallsyms {
        let raw = host.kallsyms().ok_or_else(|| CaptureError::Write {
            path: "kallsyms".into(),
            err: io::Error::new(io::ErrorKind::NotFound, "no kallsyms to copy"),
        })?;
        let z = zstd::encode_all(raw.as_bytes(), 12).map_err(|err| CaptureError::Write {
            path: dest.join("host/kallsyms.zst"),
            err,
        })?;
        write_dest(dest, "host/kallsyms.zst", &z)?;
        report.files += 1;
    }
    let mut notes = String::new();
    notes.push_str(&format!(
        "date: {}\n",
        chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ")
    ));
    notes.push_str(&format!("kernel: {}", uname));
    notes.push_str(&format!("events: {}\n", opts.events.join(" ")));
    if let Some(cmd) = &opts.command {
        notes.push_str(&format!("command: {}\n", cmd.join(" ")));
    } else if !opts.events.is_empty() {
        notes.push_str(&format!("duration_ms: {}\n", opts.duration.as_millis()));
    }
    if let Some(kb) = opts.buffer_size_kb {
        notes.push_str(&format!("buffer_size_kb: {kb}\n"));
    }
    if let Some(clock) = &opts.clock {
        notes.push_str(&format!("trace_clock: {clock}\n"));
    }
    for o in &opts.options {
        notes.push_str(&format!("option: {o}\n"));
    }
    if let Some(kb) = opts.subbuf_size_kb {
        notes.push_str(&format!("buffer_subbuf_size_kb: {kb}\n"));
    }
    if let Some(t) = &opts.tracer {
        notes.push_str(&format!("tracer: {t}\n"));
    }
    for g in &opts.graph_functions {
        notes.push_str(&format!("graph_function: {g}\n"));
    }
    if let Some(d) = opts.max_graph_depth {
        notes.push_str(&format!("max_graph_depth: {d}\n"));
    }
    if opts.top_level {
        notes.push_str("instance: top level\n");
    }
    for (f, why) in &report.skipped {
        notes.push_str(&format!("skipped: {f}: {why}\n"));
    }
    write_dest(dest, "host/capture.txt", notes.as_bytes())?;
    report.files += 1;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const AVAIL: &str =
        "sched:sched_switch\nsched:sched_wakeup\nirq:irq_handler_entry\nirq:softirq_entry\n";

    #[test]
    fn selects_by_system_event_and_glob() {
        let s = |v: &[&str]| {
            selected_events(AVAIL, &v.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
        };
        assert_eq!(s(&["irq"]).len(), 2);
        assert_eq!(
            s(&["sched:sched_switch"]),
            vec![("sched".into(), "sched_switch".into())]
        );
        assert_eq!(s(&["*:*_entry"]).len(), 2);
        assert_eq!(
            s(&["sched_wakeup"]),
            vec![("sched".into(), "sched_wakeup".into())]
        );
        assert_eq!(s(&["all"]).len(), 4);
    }

    #[test]
    fn unknown_event_suggests_close_names() {
        let err = selected_events(AVAIL, &["sched:sched_swich".to_string()]).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("sched:sched_switch"), "{msg}");
    }
}
