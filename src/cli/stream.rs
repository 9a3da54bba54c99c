//! `tracectl stream`: decode ring-buffer pages as they arrive, or replay a fixture tree.

use std::collections::HashSet;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tracectl::endian::Endianness;

use anyhow::{Context as _, Result};
use tracectl::event::{EventFormatter, FormatSource};
use tracectl::event::{Kallsyms, PrintEnv, PrintkFormats, Record, Registry};
use tracectl::render::graph::{
    blank_first_string, blanks_first_string_in_comments, irq_range_from_kallsyms,
    write_latency_header, GraphLayout, GraphOptions, GraphRenderer, OwnedRecord,
};
use tracectl::render::{json, CommonFields, Comms, FieldPairs, KernelStyle};
use tracectl::ring::{load_cpu_files, page_layout, CpuStream, Entry, LiveReader, Merge, PageError};
use tracectl::tracefs::capture::{
    count_cpu_list, event_matches, is_mounted_tracefs, resolve_enum_constants_of, select_events,
};
use tracectl::tracefs::{AppendMode, Tracefs};

use super::common::Context;

/// Output styles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Style {
    /// Exactly the lines of the kernel's `trace` file
    Kernel,
    /// One JSON object per line, every field typed
    Json,
}

/// Options of `tracectl stream`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Event to show (repeatable): all, SYSTEM, SYSTEM:EVENT, globs. Live, the events are
    /// enabled in a private instance for the duration; without -e the top-level buffer is
    /// read (and consumed) with whatever is enabled there
    #[arg(short = 'e', long = "event", value_name = "EVENT")]
    pub events: Vec<String>,
    /// Output style
    #[arg(long, value_enum, default_value_t = Style::Kernel)]
    pub style: Style,
    /// Only this CPU's buffer
    #[arg(long, value_name = "N")]
    pub cpu: Option<u32>,
    /// Omit the `# tracer:` header lines of a replay
    #[arg(long)]
    pub no_header: bool,
    /// Live: stop after this many milliseconds (default: until Ctrl-C)
    #[arg(long, value_name = "MS")]
    pub duration_ms: Option<u64>,
}

/// Everything needed to print records of one buffer.
struct Printer {
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
}

impl Printer {
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
                if self.json {
                    let schema = self.text.registry.as_ref().and_then(|reg| reg.of(&rec));
                    json::write_record(out, &rec, &self.comms, schema, &self.style);
                } else if !self.style_line(&rec, out) && !self.text.knows(&rec) {
                    if let Some(id) = rec.event_id(self.style.endian) {
                        if self.lost_unknown_ids.insert(id) {
                            eprintln!("tracectl: event id {id} has no format under events/ (was the tree captured with its formats?)");
                        }
                    }
                }
            }
            Ok(Entry::Lost { cpu, ts, count }) => {
                if self.json {
                    json::write_lost(out, cpu, ts, count);
                } else if self.lost_to_stderr {
                    match count {
                        Some(n) => eprintln!(
                            "tracectl: cpu{cpu}: {n} events were overwritten before the capture"
                        ),
                        None => eprintln!(
                            "tracectl: cpu{cpu}: events were overwritten before the capture"
                        ),
                    }
                } else {
                    self.style.write_lost(out, cpu, count);
                }
            }
            Err(e) => {
                self.errors += 1;
                if self.errors <= 20 {
                    eprintln!("tracectl: {e}");
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
}

impl EventText {
    /// Whether the record's event id has a format.
    fn knows(&self, rec: &Record) -> bool {
        self.registry.as_ref().is_some_and(|reg| {
            rec.event_id(self.endian)
                .is_some_and(|id| reg.try_get(id).is_some())
        })
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
    fn report_fallbacks(&self) {
        if let Some(reg) = &self.registry {
            for (event, why, n) in reg.fallback_report() {
                eprintln!("tracectl: {event}: {n} record(s) printed as field=value ({why})");
            }
        }
    }

    /// From a tree: `host/kallsyms.zst` or `host/kallsyms`; from a live root: /proc/kallsyms.
    fn load(t: &Tracefs, endian: Endianness, specs: &[String]) -> EventText {
        let (registry, fields_only) = match Registry::from_source(t) {
            Ok(mut r) => {
                resolve_enum_constants_of(t, &mut r, specs);
                (Some(r), false)
            }
            Err(e) => {
                eprintln!("tracectl: {e}; printing events as field=value pairs");
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
            style: tracectl::event::PrintStyle::Kernel,
        };
        reg.write_event(rec, &env, out)
    }
}

fn is_live(t: &Tracefs) -> bool {
    is_mounted_tracefs(t.root())
}

fn ids_for(events: &[(String, String, u16)], specs: &[String]) -> Option<HashSet<u16>> {
    if specs.is_empty() {
        return None;
    }
    Some(
        events
            .iter()
            .filter(|(sys, name, _)| specs.iter().any(|s| event_matches(s, sys, name)))
            .map(|(_, _, id)| *id)
            .collect(),
    )
}

/// Run `tracectl stream`.
pub fn run(ctx: &Context, args: Args) -> Result<i32> {
    let tracefs = ctx.tracefs()?;
    if is_live(&tracefs) {
        live(&tracefs, &args)
    } else {
        replay(&tracefs, &args)
    }
}

fn printer_for(t: &Tracefs, meta: &Tracefs, endian: Endianness, args: &Args) -> Printer {
    let mut comms =
        Comms::from_saved_cmdlines(&meta.read_string("saved_cmdlines").unwrap_or_default());
    comms.load_saved_tgids(&meta.read_string("saved_tgids").unwrap_or_default());
    let text = EventText::load(meta, endian, &args.events);
    let only = ids_for(&text.events(), &args.events);
    let mut style = KernelStyle::from_tracefs(t, endian);
    style.common = text.common_fields();
    Printer {
        style,
        comms,
        text,
        json: args.style == Style::Json,
        only,
        errors: 0,
        lost_unknown_ids: HashSet::new(),
        learn: false,
        lost_to_stderr: false,
        annotate: false,
        started: HashSet::new(),
        idx: 0,
    }
}

fn replay(t: &Tracefs, args: &Args) -> Result<i32> {
    let layout = page_layout(t).context("reading the sub-buffer layout")?;
    let data = load_cpu_files(t, args.cpu)?;
    let mut p = printer_for(t, t, layout.endian, args);
    p.lost_to_stderr = true;
    p.annotate = t
        .read_string("options/annotate")
        .map_or(true, |s| s.trim() == "1")
        && buffer_overran(t);
    let stdout = io::stdout();
    let mut w = stdout.lock();
    let mut out = Vec::with_capacity(1 << 16);
    let graph = !p.json
        && t.read_string("current_tracer")
            .is_ok_and(|s| s.trim() == "function_graph");
    if !args.no_header && !p.json {
        if graph {
            // The graph tracer prints its own legend after `# tracer:` and `#`.
            out.extend_from_slice(b"# tracer: function_graph\n#\n");
            let gopts = GraphOptions::from_tracefs(t);
            if gopts.latency && gopts.context_info {
                let (entries, total) = buffer_counts(t);
                let uname = t.read_string("host/uname").unwrap_or_default();
                let ncpus = t
                    .read_string("host/cpu_online")
                    .ok()
                    .and_then(|l| count_cpu_list(&l))
                    .unwrap_or(1);
                write_latency_header(&mut out, &uname, entries, total, ncpus);
            }
            gopts.write_header(&mut out);
        } else {
            write_trace_header(t, &p.style, &mut out);
        }
    }
    let streams: Vec<_> = data
        .iter()
        .map(|d| CpuStream::new(layout, d.cpu, &d.bytes))
        .collect();
    if graph {
        if let Some(rc) = replay_graph(t, &mut p, Merge::new(streams), &mut out)? {
            w.write_all(&out)?;
            w.flush()?;
            return Ok(rc);
        }
        return Ok(1);
    }
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
        p.text.report_fallbacks();
    }
    if p.errors > 0 {
        eprintln!("tracectl: {} malformed sub-buffer(s) skipped", p.errors);
        return Ok(1);
    }
    Ok(0)
}

/// function_graph replay: the kernel's graph layout needs a look ahead on each CPU (leaf
/// calls), so the records are gathered first and laid out by [`GraphRenderer`].
fn replay_graph<'a>(
    t: &Tracefs,
    p: &mut Printer,
    merged: impl Iterator<Item = Result<Entry<'a>, PageError>>,
    out: &mut Vec<u8>,
) -> Result<Option<i32>> {
    let Some(reg) = &p.text.registry else {
        anyhow::bail!("the tree's event formats could not be read; function_graph needs events/ftrace/funcgraph_*/format");
    };
    let Some(glayout) = GraphLayout::from_registry(reg, p.text.endian) else {
        anyhow::bail!(
            "{}: no events/ftrace/funcgraph_entry or funcgraph_exit format; capture the tree again (capture copies events/ftrace)",
            t.root().display()
        );
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
            Ok(Entry::Lost { cpu, count, .. }) => match count {
                Some(n) => {
                    eprintln!("tracectl: cpu{cpu}: {n} events were overwritten before the capture")
                }
                None => eprintln!("tracectl: cpu{cpu}: events were overwritten before the capture"),
            },
            Err(e) => {
                p.errors += 1;
                if p.errors <= 20 {
                    eprintln!("tracectl: {e}");
                }
            }
        }
    }
    let irq_range = std::fs::read(t.path("host/kallsyms.zst"))
        .ok()
        .and_then(|z| zstd::decode_all(&z[..]).ok())
        .and_then(|b| irq_range_from_kallsyms(&String::from_utf8_lossy(&b)));
    let ncpus = t
        .read_string("host/cpu_online")
        .ok()
        .and_then(|l| count_cpu_list(&l))
        .unwrap_or_else(|| {
            std::fs::read_dir(t.path("per_cpu"))
                .map(|d| d.count())
                .unwrap_or(1)
        });
    let r = GraphRenderer {
        layout: glayout,
        opts: GraphOptions::from_tracefs(t),
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
    let release = t
        .read_string("host/uname")
        .ok()
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
        eprintln!("tracectl: {} malformed sub-buffer(s) skipped", p.errors);
        return Ok(Some(1));
    }
    Ok(Some(0))
}

/// Entries in the buffer and entries written, summed over `per_cpu/cpuN/stats`.
fn buffer_counts(t: &Tracefs) -> (u64, u64) {
    let (mut entries, mut written) = (0u64, 0u64);
    if let Ok(rd) = std::fs::read_dir(t.path("per_cpu")) {
        for e in rd.filter_map(|e| e.ok()) {
            let stats = std::fs::read_to_string(e.path().join("stats")).unwrap_or_default();
            let get = |key: &str| {
                stats
                    .lines()
                    .find_map(|l| l.strip_prefix(key)?.trim().parse::<u64>().ok())
                    .unwrap_or(0)
            };
            entries += get("entries:");
            written += get("entries:") + get("overrun:");
        }
    }
    (entries, written)
}

/// Whether any CPU's `per_cpu/cpuN/stats` reports an overrun.
fn buffer_overran(t: &Tracefs) -> bool {
    let Ok(rd) = std::fs::read_dir(t.path("per_cpu")) else {
        return false;
    };
    rd.filter_map(|e| e.ok()).any(|e| {
        std::fs::read_to_string(e.path().join("stats")).is_ok_and(|s| {
            s.lines()
                .any(|l| l.strip_prefix("overrun:").is_some_and(|v| v.trim() != "0"))
        })
    })
}

/// The `trace` file's header: tracer, entries from `per_cpu/cpuN/stats`, CPU count, legend.
fn write_trace_header(t: &Tracefs, style: &KernelStyle, out: &mut Vec<u8>) {
    let tracer = t
        .read_string("current_tracer")
        .unwrap_or_else(|_| "nop".into());
    let (mut entries, mut written, mut cpus) = (0u64, 0u64, 0usize);
    if let Ok(rd) = std::fs::read_dir(t.path("per_cpu")) {
        for e in rd.filter_map(|e| e.ok()) {
            if !e.file_name().to_string_lossy().starts_with("cpu") {
                continue;
            }
            cpus += 1;
            let stats = std::fs::read_to_string(e.path().join("stats")).unwrap_or_default();
            let get = |key: &str| {
                stats
                    .lines()
                    .find_map(|l| l.strip_prefix(key)?.trim().parse::<u64>().ok())
                    .unwrap_or(0)
            };
            entries += get("entries:");
            written += get("entries:") + get("overrun:");
        }
    }
    let online = match t.read_string("host/cpu_online") {
        Ok(list) => count_cpu_list(&list),
        Err(_) if is_live(t) => std::fs::read_to_string("/sys/devices/system/cpu/online")
            .ok()
            .and_then(|l| count_cpu_list(&l)),
        Err(_) => None,
    };
    style.write_header(out, tracer.trim(), entries, written, online.unwrap_or(cpus));
}

/// A private instance for a live stream, removed on drop (also after Ctrl-C).
struct StreamInstance {
    top: Tracefs,
    name: String,
}

impl Drop for StreamInstance {
    fn drop(&mut self) {
        let rel = format!("instances/{}", self.name);
        let _ = self
            .top
            .write(format!("{rel}/tracing_on"), b"0", AppendMode::Truncate);
        let _ = self
            .top
            .write(format!("{rel}/events/enable"), b"0", AppendMode::Truncate);
        for _ in 0..50 {
            match std::fs::remove_dir(self.top.path(&rel)) {
                Ok(()) => return,
                Err(e) if e.kind() == io::ErrorKind::NotFound => return,
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
        eprintln!(
            "tracectl: could not remove {}: rmdir it by hand",
            self.top.path(&rel).display()
        );
    }
}

fn live(top: &Tracefs, args: &Args) -> Result<i32> {
    let stop = stop_flag();
    let layout = page_layout(top).context("reading the sub-buffer layout")?;
    let mut guard = None;
    let buffer = if args.events.is_empty() {
        top.clone()
    } else {
        let available = top.read_string("available_events")?;
        let selected = select_events(&available, &args.events)?;
        let name = format!("tracectl-stream-{}", std::process::id());
        let path = top.path(format!("instances/{name}"));
        std::fs::create_dir(&path).with_context(|| format!("creating {}", path.display()))?;
        guard = Some(StreamInstance {
            top: top.clone(),
            name: name.clone(),
        });
        let it = Tracefs::at(path);
        for (sys, ev) in &selected {
            it.write(
                format!("events/{sys}/{ev}/enable"),
                b"1",
                AppendMode::Truncate,
            )?;
        }
        it
    };
    let mut layout = layout;
    if let Some(kb) = buffer
        .read_string("buffer_subbuf_size_kb")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
    {
        layout.subbuf_size = kb * 1024;
    }
    let mut p = printer_for(&buffer, top, layout.endian, args);
    p.learn = true;
    let mut reader = LiveReader::open(&buffer, &layout, args.cpu)?;
    let cpus = reader.cpus();
    let mut bufs: Vec<Vec<u8>> = cpus.iter().map(|_| Vec::new()).collect();
    let deadline = args
        .duration_ms
        .map(|ms| Instant::now() + Duration::from_millis(ms));
    let stdout = io::stdout();
    let mut w = stdout.lock();
    let mut out = Vec::with_capacity(1 << 16);
    let mut last_cmdlines = Instant::now();
    loop {
        let done = stop.load(Ordering::SeqCst) || deadline.is_some_and(|d| Instant::now() >= d);
        if !done {
            reader.wait(Duration::from_millis(100))?;
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
    drop(guard);
    if !p.json {
        p.text.report_fallbacks();
    }
    Ok(0)
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// Install SIGINT/SIGTERM handlers that only set a flag, so the command can restore tracefs
/// state on its own exit path; returns that flag.
pub fn stop_flag() -> &'static AtomicBool {
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
    let action = SigAction::new(
        SigHandler::Handler(on_signal),
        SaFlags::empty(),
        SigSet::empty(),
    );
    for sig in [Signal::SIGINT, Signal::SIGTERM] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        let _ = unsafe { sigaction(sig, &action) };
    }
    &STOP
}
