//! `stream`: decode ring-buffer pages as they arrive from a live buffer, or replay the
//! `trace_pipe_raw` of a fixture tree, printed as the kernel's `trace` text or JSON.

use std::collections::HashSet;
use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::endian::Endianness;
use crate::event::KallsymsSource;
use crate::event::{EventFormatter, FormatSource};
use crate::event::{Kallsyms, PrintEnv, PrintkFormats, Record, Registry};
use crate::render::graph::{
    blank_first_string, blanks_first_string_in_comments, irq_range_from_kallsyms,
    write_latency_header, GraphLayout, GraphOptions, GraphRenderer, OwnedRecord,
};
use crate::render::tracecmd::{Cmdlines, DatCatalog, TimeFormat, TraceCmdRenderer, TraceCmdStyle};
use crate::render::{json, CommonFields, Comms, FieldPairs, KernelStyle};
use crate::ring::{
    load_cpu_files, page_layout, CpuStream, Entry, LiveReader, Merge, PageError, RawCpuData,
    RingError,
};
use crate::tracefs::{
    count_cpu_list, resolve_event, select_events, EventName, Instance, PrivateInstance, Tracefs,
    TracefsError,
};

/// What to stream and how.
#[derive(Debug, Clone, Default)]
pub struct StreamOptions {
    /// Events to show: all, SYSTEM, SYSTEM:EVENT, globs. Live, they are enabled in a
    /// private instance for the duration; without any, the top-level buffer is read (and
    /// consumed) with whatever is enabled there.
    pub events: Vec<String>,
    /// One JSON object per line instead of the kernel's `trace` lines.
    pub json: bool,
    /// Live: `trace-cmd stream`'s lines (those of `trace-cmd report`, without its
    /// `cpus=` line) instead of the kernel's `trace` lines.
    pub tracecmd: bool,
    /// Only this CPU's buffer.
    pub cpu: Option<u32>,
    /// Omit the `# tracer:` header lines of a replay.
    pub no_header: bool,
    /// Live: stop after this many milliseconds (default: until `stop` is set).
    pub duration_ms: Option<u64>,
    /// Live, record's `-f`: `(index into events, filter)`, the filter of that event.
    pub filters: Vec<(usize, String)>,
    /// Live, record's buffer options (`-p`, `-C`, `-b`, `-M`, `-O`, `-P`, `-c`, `-l`, `-n`,
    /// `-g`, `-T`, `-i`, `-s`, `-r`, ...) for the private instance, written the way
    /// `record` writes them; its `events` are not used (see `events` and `filters`).
    pub buffer: crate::record::RecordConfig,
    /// Live: run this command (with its arguments) once tracing is on, and stop when it
    /// ends.
    pub command: Vec<String>,
}

impl StreamOptions {
    /// Whether anything beyond events and output is asked for (a live tracefs only).
    fn sets_up_more(&self) -> bool {
        !self.filters.is_empty() || !self.command.is_empty() || self.configures_buffer()
    }

    /// Whether a buffer option is given.
    fn configures_buffer(&self) -> bool {
        let b = &self.buffer;
        b.plugin.is_some()
            || b.clock.is_some()
            || b.buffer_size_kb.is_some()
            || b.buffer_percent.is_some()
            || b.subbuf_size_kb.is_some()
            || b.cmdlines_size.is_some()
            || b.cpumask.is_some()
            || !b.options.is_empty()
            || !b.pids.is_empty()
            || b.follow_children
            || !b.ftrace_filter.is_empty()
            || !b.ftrace_notrace.is_empty()
            || !b.graph_functions.is_empty()
            || b.max_graph_depth.is_some()
            || b.stacktrace
            || b.func_stack
            || b.disable_function_trace > 0
    }

    /// Whether the stream sets up tracing of its own (events, a tracer, filters, pids),
    /// in a private instance, instead of reading the top-level buffer as it is.
    pub fn sets_up(&self) -> bool {
        !self.events.is_empty() || self.configures_buffer()
    }
}

/// A stream that could not start or go on.
#[derive(Debug)]
#[non_exhaustive]
pub enum StreamError {
    /// The sub-buffer layout (`events/header_page`) could not be read.
    Layout(RingError),
    /// The per-CPU buffers could not be opened or read.
    Ring(RingError),
    /// A tracefs file could not be read or written.
    Tracefs(TracefsError),
    /// Reading the buffers or writing the output failed (a broken pipe among them).
    Io(io::Error),
    /// The tree cannot be shown this way; the text says why.
    Unsupported(String),
    /// The kernel refuses a function-tracing file (EPERM) a record option needs.
    Refused {
        /// The option (`-p function`, `-l`, ...).
        what: String,
        /// The refused file.
        file: std::path::PathBuf,
    },
    /// A record option that cannot work (checked before anything is written) or a
    /// set-up step that failed.
    Setup(crate::record::RecordError),
    /// The command given could not be started.
    Command {
        /// Its name.
        name: String,
        /// Why.
        err: io::Error,
    },
}

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StreamError::Layout(e) => write!(f, "reading the sub-buffer layout: {e}"),
            StreamError::Ring(e) => write!(f, "{e}"),
            StreamError::Tracefs(e) => write!(f, "{e}"),
            StreamError::Io(e) => write!(f, "{e}"),
            StreamError::Unsupported(why) => write!(f, "{why}"),
            StreamError::Refused { what, file } => write!(
                f,
                "{what} needs function tracing, but the kernel refuses {} (EPERM); stream tracepoint events (-e) instead",
                file.display()
            ),
            StreamError::Setup(e) => write!(f, "{e}"),
            StreamError::Command { name, err } => write!(f, "running {name}: {err}"),
        }
    }
}

impl std::error::Error for StreamError {}

impl From<RingError> for StreamError {
    fn from(e: RingError) -> Self {
        StreamError::Ring(e)
    }
}

impl From<TracefsError> for StreamError {
    fn from(e: TracefsError) -> Self {
        StreamError::Tracefs(e)
    }
}

impl From<io::Error> for StreamError {
    fn from(e: io::Error) -> Self {
        StreamError::Io(e)
    }
}

/// Stream `t` into `w`: a live root's buffer as the kernel fills it until `stop` is set
/// (or `duration_ms` passes), a fixture tree's `trace_pipe_raw` files from start to end.
/// Problems that do not stop the stream (lost events, unknown event ids, malformed
/// sub-buffers) go to `warn` as they happen. Returns the exit status: 1 when sub-buffers
/// were skipped as malformed, else 0.
pub fn stream(
    t: &Tracefs,
    opts: &StreamOptions,
    stop: &AtomicBool,
    w: &mut dyn Write,
    warn: &mut dyn FnMut(StreamWarning),
) -> Result<i32, StreamError> {
    if t.is_live() {
        live(t, opts, stop, w, warn)
    } else if opts.sets_up_more() {
        Err(StreamError::Unsupported(format!(
            "{}: a recorded tree: -f, the buffer options (-p, -C, -b, -M, -O, -P, -c, -l, -n, -g, -T, ...) and a command need a live tracefs",
            t.root().display()
        )))
    } else {
        replay(t, opts, w, warn)
    }
}

/// Everything needed to print records of one buffer.
struct Printer<'w> {
    warn: &'w mut dyn FnMut(StreamWarning),
    style: KernelStyle,
    comms: Comms,
    /// The event model: print-fmt text exactly as the kernel prints it.
    text: EventText,
    json: bool,
    only: Option<HashSet<u16>>,
    errors: u64,
    lost_unknown_ids: HashSet<u16>,
    /// Live only: learn comms from the events themselves (the kernel's cache moves on).
    learn: bool,
    /// Replay in kernel style: the kernel's `trace` file has no `[LOST]` lines for events
    /// overwritten before it was read, so they go to stderr instead of the text.
    lost_to_stderr: bool,
    /// The kernel's `trace` marks the first line of each CPU with `##### CPU N buffer
    /// started ####` when `options/annotate` is on and the buffer overran.
    annotate: bool,
    started: HashSet<u32>,
    /// Index of the current event in the whole buffer (the kernel's `iter->idx`).
    idx: u64,
    /// Live in trace-cmd's style: the renderer of `trace-cmd report` lines.
    tracecmd: Option<TraceCmdRenderer<'w, DatCatalog>>,
}

impl Printer<'_> {
    fn wanted(&self, rec: &Record) -> bool {
        match &self.only {
            None => true,
            Some(ids) => rec
                .event_id(self.style.endian)
                .is_some_and(|id| ids.contains(&id)),
        }
    }

    fn entry(&mut self, item: Result<Entry<'_>, PageError>, out: &mut Vec<u8>) {
        match item {
            Ok(Entry::Event(rec)) => {
                if self.learn {
                    self.learn_comms(&rec);
                }
                let idx = self.idx;
                self.idx += 1;
                if !self.wanted(&rec) {
                    return;
                }
                // The kernel skips the mark for the first two entries of the trace.
                if self.annotate && !self.json && self.started.insert(rec.cpu) && idx > 1 {
                    out.extend_from_slice(
                        format!("##### CPU {} buffer started ####\n", rec.cpu).as_bytes(),
                    );
                }
                let known = if let Some(tc) = self.tracecmd.as_mut() {
                    // The renderer prints unknown events its own way, as trace-cmd does.
                    tc.write_record(out, &rec, None);
                    true
                } else if self.json {
                    let schema = self.text.registry.as_ref().and_then(|reg| reg.of(&rec));
                    json::write_record(
                        out,
                        &rec,
                        &self.comms,
                        schema,
                        &self.style,
                        self.text.kallsyms.as_ref(),
                    );
                    // JSON writes whatever it has: whether the event was known is checked below.
                    false
                } else {
                    self.style_line(&rec, out)
                };
                if !known {
                    if let Some(id) = rec.event_id(self.style.endian) {
                        if let Some(why) = self.text.why_unknown(id) {
                            if self.lost_unknown_ids.insert(id) {
                                (self.warn)(StreamWarning::UnknownEvent { id, reason: why });
                            }
                        }
                    }
                }
            }
            Ok(Entry::Lost { cpu, ts, count }) => {
                if let Some(tc) = &self.tracecmd {
                    tc.write_dropped(out, cpu, count);
                } else if self.json {
                    json::write_lost(out, cpu, ts, count);
                } else if self.lost_to_stderr {
                    (self.warn)(StreamWarning::Lost { cpu, count });
                } else {
                    self.style.write_lost(out, cpu, count);
                }
            }
            Err(e) => {
                self.errors += 1;
                if self.errors <= 20 {
                    (self.warn)(StreamWarning::Malformed(e.to_string()));
                }
            }
        }
    }

    /// Pick task names out of the events that carry them.
    fn learn_comms(&mut self, rec: &Record) {
        let endian = self.style.endian;
        let mut learned: Vec<(i32, String)> = Vec::new();
        {
            let Some(s) = self.text.registry.as_ref().and_then(|reg| reg.of(rec)) else {
                return;
            };
            let (system, name) = (s.system.as_str(), s.name.as_str());
            let fields: Vec<(&str, serde_json::Value)> = s
                .fields
                .iter()
                .map(|f| (f.name.as_str(), json::field_value(f, rec.data, endian)))
                .collect();
            let pairs: &[(&str, &str)] = match (system, name) {
                ("sched", "sched_switch") => {
                    &[("prev_pid", "prev_comm"), ("next_pid", "next_comm")]
                }
                ("sched", "sched_process_fork") => {
                    &[("parent_pid", "parent_comm"), ("child_pid", "child_comm")]
                }
                (
                    "sched",
                    "sched_wakeup" | "sched_waking" | "sched_wakeup_new" | "sched_process_exit"
                    | "sched_process_free",
                ) => &[("pid", "comm")],
                ("task", "task_newtask") => &[("pid", "comm")],
                ("task", "task_rename") => &[("pid", "newcomm")],
                _ => return,
            };
            let field = |n: &str| fields.iter().find(|(k, _)| *k == n).map(|(_, v)| v);
            for (pid_field, comm_field) in pairs {
                if let (Some(serde_json::Value::Number(p)), Some(serde_json::Value::String(c))) =
                    (field(pid_field), field(comm_field))
                {
                    if let Some(p) = p.as_i64() {
                        learned.push((p as i32, c.clone()));
                    }
                }
            }
        }
        for (p, c) in learned {
            self.comms.learn(p, &c);
        }
    }

    fn style_line(&self, rec: &Record, out: &mut Vec<u8>) -> bool {
        self.style.write_context(out, rec, &self.comms);
        let known = self.text.write_event(rec, out);
        out.push(b'\n');
        known
    }
}

/// The event model's registry with the symbol tables its `%p` conversions and
/// `bprint`/`bputs` events need.
struct EventText {
    registry: Option<Registry>,
    /// The tree has no usable `header_page`: events print as `field=value` pairs
    /// ([`FieldPairs`]) instead of through their `print fmt`.
    fields_only: bool,
    kallsyms: Option<Kallsyms>,
    printk: Option<PrintkFormats>,
    endian: Endianness,
    /// The buffer's trace clock counts nanoseconds (times inside event texts).
    time_in_ns: bool,
}

impl EventText {
    /// Why records of event `id` print as `<unknown event id N>` (None when they do not):
    /// no format, or a format that does not parse.
    fn why_unknown(&self, id: u16) -> Option<String> {
        let missing = || {
            format!("event id {id} has no format under events/; its records print as <unknown event id {id}> (was the tree captured with its formats?)")
        };
        match &self.registry {
            Some(reg) => match reg.try_get(id) {
                None => Some(missing()),
                Some(Err(e)) => Some(format!("{e}; its records print as <unknown event id {id}>")),
                Some(Ok(_)) => None,
            },
            None => Some(missing()),
        }
    }

    /// Every event as (system, name, id).
    fn events(&self) -> Vec<(String, String, u16)> {
        self.registry.as_ref().map_or_else(Vec::new, |reg| {
            reg.events()
                .filter_map(|(s, n, id)| Some((s.to_string(), n.to_string(), id?)))
                .collect()
        })
    }

    /// Offsets of the common fields, from the first format that parses.
    fn common_fields(&self) -> CommonFields {
        self.registry
            .as_ref()
            .map_or_else(CommonFields::default, CommonFields::from_registry)
    }

    /// One stderr line per event type whose text fell back to `field=value` pairs.
    fn report_fallbacks(&self, warn: &mut dyn FnMut(StreamWarning)) {
        if let Some(reg) = &self.registry {
            for (event, why, n) in reg.fallback_report() {
                warn(StreamWarning::Fallback {
                    event: event.to_string(),
                    why: why.to_string(),
                    count: n,
                });
            }
        }
    }

    /// From a tree: `host/kallsyms.zst` or `host/kallsyms`; from a live root: /proc/kallsyms.
    fn load(
        t: &Tracefs,
        endian: Endianness,
        specs: &[String],
        warn: &mut dyn FnMut(StreamWarning),
    ) -> EventText {
        let (registry, fields_only) = match Registry::from_source(t) {
            Ok(mut r) => {
                super::resolve_enum_constants(t, &mut r, specs);
                (Some(r), false)
            }
            Err(e) => {
                warn(StreamWarning::Note(format!(
                    "{e}; printing events as field=value pairs"
                )));
                // The formats still give names and fields; `long` is taken as 8 bytes.
                (Registry::from_source_with_long_size(t, 8).ok(), true)
            }
        };
        let printk = t.printk_formats().map(|s| PrintkFormats::parse(&s));
        EventText {
            registry,
            fields_only,
            kallsyms: t.kallsyms().map(|s| Kallsyms::parse(&s)),
            printk,
            endian,
            time_in_ns: true,
        }
    }

    fn write_event(&self, rec: &Record, out: &mut Vec<u8>) -> bool {
        let Some(reg) = &self.registry else {
            let id = rec.event_id(self.endian).unwrap_or(0);
            out.extend_from_slice(format!("<unknown event id {id}>").as_bytes());
            return false;
        };
        if self.fields_only {
            return FieldPairs {
                registry: reg,
                endian: self.endian,
            }
            .write_event(rec, out);
        }
        let env = PrintEnv {
            kallsyms: self.kallsyms.as_ref(),
            functions: None,
            printk: self.printk.as_ref(),
            endian: self.endian,
            long_size: reg.long_size(),
            hz: None,
            style: crate::event::PrintStyle::Kernel,
            time_in_ns: self.time_in_ns,
        };
        reg.write_event(rec, &env, out)
    }
}

fn ids_for(
    events: &[(String, String, u16)],
    specs: &[String],
) -> Result<Option<HashSet<u16>>, TracefsError> {
    if specs.is_empty() {
        return Ok(None);
    }
    let names: Vec<EventName> = events
        .iter()
        .map(|(sys, name, _)| EventName::new(sys, name))
        .collect();
    let selected = select_events(specs, &names)?;
    Ok(Some(
        events
            .iter()
            .filter(|(sys, name, _)| selected.iter().any(|e| &e.system == sys && &e.name == name))
            .map(|(_, _, id)| *id)
            .collect(),
    ))
}

fn printer_for<'w>(
    t: &Instance,
    meta: &Tracefs,
    endian: Endianness,
    args: &StreamOptions,
    warn: &'w mut dyn FnMut(StreamWarning),
) -> Result<Printer<'w>, StreamError> {
    let mut comms =
        Comms::from_saved_cmdlines(&meta.read_string("saved_cmdlines").unwrap_or_default());
    comms.load_saved_tgids(&meta.read_string("saved_tgids").unwrap_or_default());
    let mut text = EventText::load(meta, endian, &args.events, warn);
    // A private instance holds only what the stream enabled there (its events, and the
    // stack traces or tracer events its options add): all of it is shown.
    let private = t.name().is_some();
    let only = match private {
        true => None,
        false => ids_for(&text.events(), &args.events)?,
    };
    let mut style = KernelStyle::from_instance(t, endian);
    style.common = text.common_fields();
    text.time_in_ns = style.time_in_ns;
    Ok(Printer {
        warn,
        style,
        comms,
        text,
        json: args.json,
        only,
        errors: 0,
        lost_unknown_ids: HashSet::new(),
        learn: false,
        lost_to_stderr: false,
        annotate: false,
        started: HashSet::new(),
        idx: 0,
        tracecmd: None,
    })
}

fn replay(
    t: &Tracefs,
    args: &StreamOptions,
    w: &mut dyn Write,
    warn: &mut dyn FnMut(StreamWarning),
) -> Result<i32, StreamError> {
    let layout = page_layout(t).map_err(StreamError::Layout)?;
    let data = load_cpu_files(t, args.cpu)?;
    let mut p = printer_for(&t.top(), t, layout.endian, args, warn)?;
    p.lost_to_stderr = true;
    p.annotate = t
        .read_string("options/annotate")
        .map_or(true, |s| s.trim() == "1")
        && buffer_overran(t);
    let mut out = Vec::with_capacity(1 << 16);
    let graph = !p.json
        && t.read_string("current_tracer")
            .is_ok_and(|s| s.trim() == "function_graph");
    if graph {
        let gopts = GraphOptions::from_tracefs(t);
        let rc = graph_text(t, &mut p, data, gopts, !args.no_header, &mut out)?;
        w.write_all(&out)?;
        w.flush()?;
        return Ok(rc);
    }
    if !args.no_header && !p.json {
        write_trace_header(t, &p.style, &mut out);
    }
    let streams: Vec<_> = data
        .iter()
        .map(|d| CpuStream::new(layout, d.cpu, &d.bytes))
        .collect();
    for item in Merge::new(streams) {
        p.entry(item, &mut out);
        if out.len() >= 1 << 16 {
            w.write_all(&out)?;
            out.clear();
        }
    }
    w.write_all(&out)?;
    w.flush()?;
    if !p.json {
        p.text.report_fallbacks(&mut *p.warn);
    }
    if p.errors > 0 {
        (p.warn)(StreamWarning::MalformedTotal(p.errors));
        return Ok(1);
    }
    Ok(0)
}

/// The kernel's function_graph text of the sub-buffers `data` read from `t`'s top-level
/// buffer (a tree's recorded pages, or pages read live while a command ran), laid out
/// with the tracer options `gopts` that were in effect, after the `# tracer:` header when
/// `header`. The exit code: 1 when sub-buffers were malformed.
pub(crate) fn graph_pages(
    t: &Tracefs,
    data: Vec<RawCpuData>,
    gopts: GraphOptions,
    header: bool,
    out: &mut Vec<u8>,
    warn: &mut dyn FnMut(StreamWarning),
) -> Result<i32, StreamError> {
    let layout = page_layout(t).map_err(StreamError::Layout)?;
    let mut p = printer_for(&t.top(), t, layout.endian, &StreamOptions::default(), warn)?;
    p.lost_to_stderr = true;
    graph_text(t, &mut p, data, gopts, header, out)
}

fn graph_text(
    t: &Tracefs,
    p: &mut Printer,
    data: Vec<RawCpuData>,
    gopts: GraphOptions,
    header: bool,
    out: &mut Vec<u8>,
) -> Result<i32, StreamError> {
    let layout = page_layout(t).map_err(StreamError::Layout)?;
    if header {
        {
            // The graph tracer prints its own legend after `# tracer:` and `#`.
            out.extend_from_slice(b"# tracer: function_graph\n#\n");
            if gopts.latency && gopts.context_info {
                let (entries, total, _) = buffer_counts(t);
                let host = t.host();
                let uname = host.uname_line().unwrap_or_default();
                let ncpus = host
                    .cpu_online()
                    .and_then(|l| count_cpu_list(&l))
                    .unwrap_or(1);
                write_latency_header(out, &uname, entries, total, ncpus);
            }
            gopts.write_header(out);
        }
    }
    let streams: Vec<_> = data
        .iter()
        .map(|d| CpuStream::new(layout, d.cpu, &d.bytes))
        .collect();
    replay_graph(t, p, Merge::new(streams), gopts, out)
}

/// function_graph replay: the kernel's graph layout needs a look ahead on each CPU (leaf
/// calls), so the records are gathered first and laid out by [`GraphRenderer`].
fn replay_graph<'a>(
    t: &Tracefs,
    p: &mut Printer,
    merged: impl Iterator<Item = Result<Entry<'a>, PageError>>,
    gopts: GraphOptions,
    out: &mut Vec<u8>,
) -> Result<i32, StreamError> {
    let Some(reg) = &p.text.registry else {
        return Err(StreamError::Unsupported("the tree's event formats could not be read; function_graph needs events/ftrace/funcgraph_*/format".into()));
    };
    let Some(glayout) = GraphLayout::from_registry(reg, p.text.endian) else {
        return Err(StreamError::Unsupported(format!(
            "{}: no events/ftrace/funcgraph_entry or funcgraph_exit format; capture the tree again (capture copies events/ftrace)",
            t.root().display()
        )));
    };
    let mut recs = Vec::new();
    for item in merged {
        match item {
            Ok(Entry::Event(r)) => {
                if p.wanted(&r)
                    || r.event_id(p.style.endian).is_some_and(|id| {
                        reg.try_get(id).is_some_and(|s| {
                            s.is_ok_and(|s| {
                                s.system == "ftrace" && s.name.starts_with("funcgraph_")
                            })
                        })
                    })
                {
                    recs.push(OwnedRecord {
                        cpu: r.cpu,
                        ts: r.ts,
                        data: r.data.to_vec(),
                    });
                }
            }
            Ok(Entry::Lost { cpu, count, .. }) => (p.warn)(StreamWarning::Lost { cpu, count }),
            Err(e) => {
                p.errors += 1;
                if p.errors <= 20 {
                    (p.warn)(StreamWarning::Malformed(e.to_string()));
                }
            }
        }
    }
    let host = t.host();
    let irq_range = host
        .kallsyms()
        .and_then(|text| irq_range_from_kallsyms(&text));
    let ncpus = host
        .cpu_online()
        .and_then(|l| count_cpu_list(&l))
        .unwrap_or_else(|| {
            std::fs::read_dir(t.path("per_cpu"))
                .map(|d| d.count())
                .unwrap_or(1)
        });
    let r = GraphRenderer {
        layout: glayout,
        opts: gopts,
        kallsyms: p.text.kallsyms.as_ref(),
        comms: &p.comms,
        ncpus,
        irq_range,
    };
    let text = &p.text;
    // trace_marker and trace_printk text shows without its `ip: ` prefix in a comment.
    let msg_only: HashSet<u16> = ["print", "bprint", "bputs"]
        .iter()
        .filter_map(|n| reg.by_name("ftrace", n).map(|s| s.id))
        .collect();
    let endian = p.style.endian;
    let release = host
        .uname_line()
        .and_then(|u| u.split_whitespace().nth(2).map(str::to_string));
    let blank_first = release
        .as_deref()
        .is_some_and(blanks_first_string_in_comments);
    let mut comment = |rec: &Record, o: &mut Vec<u8>| {
        let start = o.len();
        let known = text.write_event(rec, o);
        let Some(name_end) = o[start..]
            .windows(2)
            .position(|w| w == b": ")
            .map(|i| start + i + 2)
        else {
            return known;
        };
        if known
            && rec
                .event_id(endian)
                .is_some_and(|id| msg_only.contains(&id))
        {
            o.drain(start..name_end);
        } else if known && blank_first {
            if let Some(schema) = reg.of(rec) {
                let mut body = o.split_off(name_end);
                blank_first_string(&schema.print_fmt, &mut body);
                o.extend_from_slice(&body);
            }
        }
        known
    };
    r.render(&recs, &mut comment, out);
    if p.errors > 0 {
        (p.warn)(StreamWarning::MalformedTotal(p.errors));
        return Ok(1);
    }
    Ok(0)
}

/// Entries in the buffer, entries written and CPUs, from every `per_cpu/cpuN/stats`.
fn buffer_counts(t: &Tracefs) -> (u64, u64, usize) {
    let top = t.top();
    let cpus = top.cpus().unwrap_or_default();
    let (mut entries, mut written) = (0u64, 0u64);
    for &cpu in &cpus {
        let stats = top.cpu_stats(cpu).unwrap_or_default();
        let e = stats.entries().unwrap_or(0);
        entries += e;
        written += e + stats.overrun().unwrap_or(0);
    }
    (entries, written, cpus.len())
}

/// Whether any CPU's `per_cpu/cpuN/stats` reports an overrun.
fn buffer_overran(t: &Tracefs) -> bool {
    let top = t.top();
    top.cpus().unwrap_or_default().into_iter().any(|cpu| {
        top.cpu_stats(cpu)
            .is_ok_and(|s| s.overrun().is_some_and(|n| n != 0))
    })
}

/// The `trace` file's header: tracer, entries from `per_cpu/cpuN/stats`, CPU count, legend.
fn write_trace_header(t: &Tracefs, style: &KernelStyle, out: &mut Vec<u8>) {
    let tracer = t
        .read_string("current_tracer")
        .unwrap_or_else(|_| "nop".into());
    let (entries, written, cpus) = buffer_counts(t);
    let online = t.host().cpu_online().and_then(|l| count_cpu_list(&l));
    style.write_header(out, tracer.trim(), entries, written, online.unwrap_or(cpus));
}

/// The event model of `trace-cmd report` for what `buffer` records: the formats of its
/// enabled events and ftrace's, printk formats and kallsyms, from the live tracefs.
fn tracecmd_catalog(
    top: &Tracefs,
    buffer: &Instance,
    endian: Endianness,
) -> Result<DatCatalog, StreamError> {
    let events = crate::record::enabled_events(top, &buffer.rel(""))?;
    let meta = crate::record::formats(top, &events)?;
    let long_size = crate::event::HeaderPage::parse(&meta.header_page)
        .map(|h| h.long_size())
        .unwrap_or(8);
    let kallsyms = top.host().kallsyms_with_addresses().unwrap_or_default();
    Ok(DatCatalog::from_metadata(
        &meta,
        long_size,
        endian,
        KallsymsSource::text_of(kallsyms),
    ))
}

/// Record's options in the private instance `inst`: tracer, function filters, pids,
/// event filters, then the events.
/// Write the stream's configuration to its private instance as `record` writes its own
/// (one code path, [`crate::record::setup::apply`]); the global files it changes are in
/// `global`, to put back at the end (the instance goes whole).
fn set_up(
    inst: &Instance,
    args: &StreamOptions,
    targets: &[Option<crate::tracefs::EventTarget>],
    global: &mut crate::tracefs::Ledger,
) -> Result<(), StreamError> {
    let mut cfg = args.buffer.clone();
    cfg.events = args
        .events
        .iter()
        .enumerate()
        .map(|(i, name)| crate::record::EventSpec {
            name: name.clone(),
            filters: args
                .filters
                .iter()
                .filter(|(n, _)| *n == i)
                .map(|(_, f)| f.clone())
                .collect(),
            ..Default::default()
        })
        .collect();
    let mut ledger = crate::tracefs::Ledger::new();
    let applied = crate::record::setup::apply(inst, &cfg, targets, &mut ledger, global);
    ledger.forget();
    match applied {
        Ok(_) => Ok(()),
        Err(crate::record::RecordError::Refused { what, file }) => {
            Err(StreamError::Refused { what, file })
        }
        Err(crate::record::RecordError::Tracefs(e)) => Err(StreamError::Tracefs(e)),
        Err(e) => Err(StreamError::Setup(e)),
    }
}

fn live(
    top: &Tracefs,
    args: &StreamOptions,
    stop: &AtomicBool,
    w: &mut dyn Write,
    warn: &mut dyn FnMut(StreamWarning),
) -> Result<i32, StreamError> {
    let layout = page_layout(top).map_err(StreamError::Layout)?;
    let mut private = None;
    // Global files (saved_cmdlines_size, a tracer's own option) the set-up changes; put
    // back when this is dropped, however the stream ends.
    let mut global = crate::tracefs::Ledger::new();
    if let Some(prio) = args.buffer.rt_priority {
        // This thread reads the buffers, as record's capture threads do.
        crate::record::set_fifo(0, prio).map_err(|e| {
            StreamError::Setup(crate::record::RecordError::BadOption {
                option: format!("-r {prio}"),
                detail: format!(
                    "cannot make the stream SCHED_FIFO: {e} (needs root or CAP_SYS_NICE)"
                ),
            })
        })?;
    }
    let wait = Duration::from_micros(args.buffer.sleep_us.unwrap_or(100_000));
    let buffer = if !args.sets_up() {
        top.top()
    } else {
        crate::record::check_options(&args.buffer).map_err(StreamError::Setup)?;
        let available = top.available_events()?;
        let mut targets = Vec::new();
        for spec in &args.events {
            match resolve_event(spec, &available) {
                Ok(t) => targets.push(Some(t)),
                Err(e @ TracefsError::UnknownEvent { .. }) if args.buffer.ignore_missing => {
                    warn(StreamWarning::Note(format!("{e}; ignored (-i)")));
                    targets.push(None);
                }
                Err(e) => return Err(e.into()),
            }
        }
        if let Some((_, f)) = args.filters.iter().find(|(i, _)| *i >= targets.len()) {
            return Err(StreamError::Unsupported(format!(
                "-f {f:?}: a filter belongs to the -e event before it; give that -e first"
            )));
        }
        let p = PrivateInstance::create(top, "stream")?;
        for note in p.notes() {
            warn(StreamWarning::Note(note.clone()));
        }
        // The instance is removed whole at the end (also when this fails half-way: the
        // PrivateInstance is dropped); only global files are put back.
        set_up(p.instance(), args, &targets, &mut global)?;
        let it = p.instance().clone();
        private = Some(p);
        it
    };
    let mut layout = layout;
    if let Ok(kb) = buffer.subbuf_size_kb() {
        layout.subbuf_size = kb as usize * 1024;
    }
    let catalog = if args.tracecmd && !args.json {
        Some(tracecmd_catalog(top, &buffer, layout.endian)?)
    } else {
        None
    };
    let mut p = printer_for(&buffer, top, layout.endian, args, warn)?;
    p.learn = true;
    if let Some(c) = &catalog {
        let clock = buffer.read_string("trace_clock").unwrap_or_default();
        let clock = crate::dat::selected_clock(&clock).unwrap_or_else(|| "local".into());
        let time = TimeFormat::for_clock(&clock, false, false);
        let style = TraceCmdStyle {
            time,
            repeat_time: time,
            ..TraceCmdStyle::default()
        };
        // trace-cmd stream starts with no comms: only the sched plugins name tasks.
        p.tracecmd = Some(TraceCmdRenderer::new(c, style, Cmdlines::new()));
    }
    let mut reader = LiveReader::open(&buffer, &layout, args.cpu)?;
    let cpus = reader.cpus();
    let mut bufs: Vec<Vec<u8>> = cpus.iter().map(|_| Vec::new()).collect();
    let deadline = args
        .duration_ms
        .map(|ms| Instant::now() + Duration::from_millis(ms));
    let mut out = Vec::with_capacity(1 << 16);
    let mut last_cmdlines = Instant::now();
    let mut child = match args.command.split_first() {
        Some((name, rest)) => Some(
            std::process::Command::new(name)
                .args(rest)
                .spawn()
                .map_err(|err| StreamError::Command {
                    name: name.clone(),
                    err,
                })?,
        ),
        None => None,
    };
    loop {
        let ended = child
            .as_mut()
            .is_some_and(|c| c.try_wait().ok().flatten().is_some());
        let done =
            ended || stop.load(Ordering::SeqCst) || deadline.is_some_and(|d| Instant::now() >= d);
        if !done {
            reader.wait(wait)?;
        }
        if reader.read_available(&mut bufs)? > 0 {
            // The kernel's comm cache moves on while we stream: when this batch has a pid
            // we cannot name, read it again before printing (at most every 50 ms).
            let unknown = bufs.iter().zip(&cpus).any(|(b, c)| {
                CpuStream::new(layout, *c, b).any(|e| {
                    matches!(e, Ok(Entry::Event(r)) if { let pid = p.style.pid(&r); pid > 0 && p.comms.comm(pid) == "<...>" })
                })
            });
            if unknown && last_cmdlines.elapsed() > Duration::from_millis(50) {
                p.comms
                    .load_saved_cmdlines(&top.read_string("saved_cmdlines").unwrap_or_default());
                last_cmdlines = Instant::now();
            }
            let streams: Vec<_> = bufs
                .iter()
                .zip(&cpus)
                .map(|(b, c)| CpuStream::new(layout, *c, b))
                .collect();
            for item in Merge::new(streams) {
                p.entry(item, &mut out);
            }
            for b in &mut bufs {
                b.clear();
            }
            w.write_all(&out)?;
            w.flush()?;
            out.clear();
        }
        if done {
            break;
        }
    }
    drop(reader);
    if let Some(mut c) = child {
        // Stopped before the command ended (Ctrl-C, --duration-ms): it ends too.
        if c.try_wait().ok().flatten().is_none() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
    if let Some(private) = private {
        let path = private.instance().path("");
        if let Err(e) = private.remove() {
            (p.warn)(StreamWarning::Note(format!(
                "could not remove {}: {e}; remove it with rmdir",
                path.display()
            )));
        }
    }
    for w in global.restore() {
        (p.warn)(StreamWarning::Note(w));
    }
    if !p.json {
        p.text.report_fallbacks(&mut *p.warn);
    }
    Ok(0)
}

/// A problem that does not stop a stream, handed to the caller to show; its `Display` is
/// the message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamWarning {
    /// Records of event `id` print as `<unknown event id N>`: the source has no format for
    /// it, or its format does not parse; `reason` says which and names the event.
    UnknownEvent {
        /// The event id the records carry.
        id: u16,
        /// Why the id has no usable format.
        reason: String,
    },
    /// Events of `cpu` were overwritten before the capture was read (the kernel's `trace`
    /// text has no line for them); `count` when the sub-buffer header stored it.
    Lost {
        /// The CPU whose buffer overran.
        cpu: u32,
        /// How many events, when known.
        count: Option<u64>,
    },
    /// A sub-buffer that could not be decoded (the first 20 are reported one by one).
    Malformed(String),
    /// How many sub-buffers were skipped as malformed in all.
    MalformedTotal(u64),
    /// `count` records of `event` printed as `field=value` pairs instead of through their
    /// `print fmt`, and why.
    Fallback {
        /// `system:name`.
        event: String,
        /// Why the `print fmt` could not be used.
        why: String,
        /// Records printed that way.
        count: u64,
    },
    /// Anything else: an unusable `header_page`, a note on the private instance, an
    /// instance that could not be removed.
    Note(String),
}

impl fmt::Display for StreamWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StreamWarning::UnknownEvent { reason, .. } => write!(f, "{reason}"),
            StreamWarning::Lost {
                cpu,
                count: Some(n),
            } => write!(
                f,
                "cpu{cpu}: {n} events were overwritten before the capture"
            ),
            StreamWarning::Lost { cpu, count: None } => {
                write!(f, "cpu{cpu}: events were overwritten before the capture")
            }
            StreamWarning::Malformed(e) | StreamWarning::Note(e) => write!(f, "{e}"),
            StreamWarning::MalformedTotal(n) => write!(f, "{n} malformed sub-buffer(s) skipped"),
            StreamWarning::Fallback { event, why, count } => {
                write!(
                    f,
                    "{event}: {count} record(s) printed as field=value ({why})"
                )
            }
        }
    }
}
