//! `graph`: function_graph of one command (or of a running process for a while), read as
//! binary sub-buffers while it runs and shown as the kernel's text, a per-function
//! summary, folded stacks weighted by self time, or one JSON object per call.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::event::{FormatSource, Kallsyms, Registry};
use crate::render::graph::{GraphLayout, GraphOptions as TextOptions};
use crate::render::graph_fold::{task_key, Call, RootCall, SelfTimeFolder};
use crate::render::Comms;
use crate::ring::{page_layout, CpuStream, Entry, LiveReader, Merge, RawCpuData};
use crate::tracefs::graph::{graph_with, GraphCapture, GraphError, GraphOptions, GraphTarget};
use crate::tracefs::Instance;

use super::stream::{graph_pages, StreamError};

/// How the run is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphView {
    /// The kernel's function_graph text.
    Text,
    /// Calls, total, self, average and longest time per function, by self time.
    Summary,
    /// `comm;outer;...;func SELF_NS` lines for flame graphs.
    Folded,
    /// One JSON object per outermost call, with its callees nested.
    Json,
}

/// What a run produced.
#[derive(Debug)]
pub struct GraphRun {
    /// The view's text.
    pub output: Vec<u8>,
    /// How the command ended (none for a running process).
    pub status: Option<ExitStatus>,
    /// Lost events, files that could not be put back, records that did not decode.
    pub warnings: Vec<String>,
}

/// Bytes kept in memory per run; beyond them sub-buffers are dropped (with a warning).
const MAX_BYTES: usize = 1 << 30;

/// What the reading thread hands back: the reader (to drain what is left), each CPU's
/// sub-buffers, and whether some were dropped.
type Captured = Result<(LiveReader, Vec<Vec<u8>>, bool), String>;

/// Reads every CPU's `trace_pipe_raw` on a thread while the command runs.
struct PageCapture {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Captured>>,
    cpus: Vec<u32>,
    pages: Vec<Vec<u8>>,
    dropped: bool,
    /// The tracer's options as they were during the run.
    text_options: Option<TextOptions>,
}

impl GraphCapture for PageCapture {
    fn armed(&mut self, inst: &Instance) -> Result<(), GraphError> {
        let layout = page_layout(inst.tracefs()).map_err(|e| GraphError::Capture(e.to_string()))?;
        let reader = LiveReader::open(inst, &layout, None)
            .map_err(|e| GraphError::Capture(e.to_string()))?;
        self.cpus = reader.cpus();
        let stop = self.stop.clone();
        let n = self.cpus.len();
        self.thread = Some(std::thread::spawn(move || {
            let mut reader = reader;
            let mut pages = vec![Vec::new(); n];
            let mut dropped = false;
            while !stop.load(Ordering::Acquire) {
                reader
                    .wait(Duration::from_millis(100))
                    .map_err(|e| e.to_string())?;
                read_capped(&mut reader, &mut pages, &mut dropped)?;
            }
            Ok((reader, pages, dropped))
        }));
        Ok(())
    }

    fn finish(&mut self, inst: &Instance) -> Result<(), GraphError> {
        self.text_options = Some(TextOptions::from_instance(inst));
        self.stop.store(true, Ordering::Release);
        let Some(h) = self.thread.take() else {
            return Ok(());
        };
        let (mut reader, mut pages, mut dropped) = h
            .join()
            .map_err(|_| GraphError::Capture("the reading thread failed".into()))?
            .map_err(GraphError::Capture)?;
        // What the kernel still holds after tracing stopped.
        read_capped(&mut reader, &mut pages, &mut dropped).map_err(GraphError::Capture)?;
        self.pages = pages;
        self.dropped = dropped;
        Ok(())
    }
}

fn read_capped(
    reader: &mut LiveReader,
    pages: &mut [Vec<u8>],
    dropped: &mut bool,
) -> Result<(), String> {
    let before: Vec<usize> = pages.iter().map(Vec::len).collect();
    reader.read_available(pages).map_err(|e| e.to_string())?;
    if pages.iter().map(Vec::len).sum::<usize>() > MAX_BYTES {
        for (p, n) in pages.iter_mut().zip(before) {
            p.truncate(n);
        }
        *dropped = true;
    }
    Ok(())
}

/// Graph `target` in `inst` and show it as `view`; every file changed is put back.
pub fn graph(
    inst: &Instance,
    target: &GraphTarget,
    opts: &GraphOptions,
    view: GraphView,
    stop: &AtomicBool,
) -> Result<GraphRun, GraphError> {
    let mut capture = PageCapture {
        stop: Arc::new(AtomicBool::new(false)),
        thread: None,
        cpus: Vec::new(),
        pages: Vec::new(),
        dropped: false,
        text_options: None,
    };
    let (status, mut warnings) = graph_with(inst, target, opts, stop, &mut capture)?;
    if capture.dropped {
        warnings.push(format!(
            "the trace grew beyond {} MiB; later sub-buffers were dropped (graph fewer functions with -g, or limit the depth with --max-graph-depth)",
            MAX_BYTES >> 20
        ));
    }
    let data: Vec<RawCpuData> = capture
        .cpus
        .iter()
        .zip(std::mem::take(&mut capture.pages))
        .map(|(&cpu, bytes)| RawCpuData { cpu, bytes })
        .collect();
    let t = inst.tracefs();
    let mut output = Vec::new();
    let mut warn = |w: String| warnings.push(w);
    match view {
        GraphView::Text => {
            let gopts = capture
                .text_options
                .unwrap_or_else(|| TextOptions::from_instance(inst));
            let mut warn = |w: super::stream::StreamWarning| warn(w.to_string());
            graph_pages(t, data, gopts, true, &mut output, &mut warn).map_err(stream_error)?;
        }
        _ => {
            let folder = walk(inst, &data, view == GraphView::Json, &mut warn)?;
            output = match view {
                GraphView::Summary => summary(&folder.0).into_bytes(),
                GraphView::Folded => folder.0.folded().into_bytes(),
                _ => calls_json(folder.1, &folder.2).into_bytes(),
            };
        }
    }
    Ok(GraphRun {
        output,
        status,
        warnings,
    })
}

fn stream_error(e: StreamError) -> GraphError {
    GraphError::Capture(e.to_string())
}

/// Every funcgraph record of `data` through a [`SelfTimeFolder`] (keeping the calls for
/// JSON), with the roots and the comms.
fn walk(
    inst: &Instance,
    data: &[RawCpuData],
    keep_calls: bool,
    warn: &mut dyn FnMut(String),
) -> Result<(SelfTimeFolder, Vec<RootCall>, Comms), GraphError> {
    let t = inst.tracefs();
    let layout = page_layout(t).map_err(|e| GraphError::Capture(e.to_string()))?;
    let registry = Registry::from_source(t).map_err(|e| GraphError::Capture(e.to_string()))?;
    let Some(glayout) = GraphLayout::from_registry(&registry, layout.endian) else {
        return Err(GraphError::Capture(
            "no events/ftrace/funcgraph_entry or funcgraph_exit format".into(),
        ));
    };
    let mut comms =
        Comms::from_saved_cmdlines(&t.read_string("saved_cmdlines").unwrap_or_default());
    comms.load_saved_tgids(&t.read_string("saved_tgids").unwrap_or_default());
    let kallsyms = t.kallsyms().map(|s| Kallsyms::parse(&s));
    let mut names: HashMap<u64, String> = HashMap::new();
    let mut name_of = |func: u64| -> String {
        names
            .entry(func)
            .or_insert_with(|| match kallsyms.as_ref().and_then(|k| k.lookup(func)) {
                Some(s) => s.name.to_string(),
                None => format!("0x{func:x}"),
            })
            .clone()
    };
    let mut folder = SelfTimeFolder::new();
    if keep_calls {
        folder.keep_calls();
    }
    let streams: Vec<_> = data
        .iter()
        .map(|d| CpuStream::new(layout, d.cpu, &d.bytes))
        .collect();
    let mut malformed = 0u64;
    for item in Merge::new(streams) {
        match item {
            Ok(Entry::Event(r)) => {
                let Some(call) = glayout.call(r.data) else {
                    continue;
                };
                let task = task_key(call.pid, r.cpu);
                let name = name_of(call.func);
                match call.span {
                    None => folder.entry(task, call.func, &name, call.depth),
                    Some(span) => {
                        let comm = comms.comm(call.pid).to_string();
                        folder.exit(task, &comm, call.func, &name, call.depth, span)
                    }
                }
            }
            Ok(Entry::Lost { cpu, count, .. }) => warn(match count {
                Some(n) => format!("CPU {cpu}: {n} events lost; calls across the gap are cut"),
                None => format!("CPU {cpu}: events lost; calls across the gap are cut"),
            }),
            Err(e) => {
                malformed += 1;
                if malformed <= 20 {
                    warn(e.to_string());
                }
            }
        }
    }
    let st = folder.stats().clone();
    if st.exits_without_entry > 0 || st.unfinished > 0 {
        warn(format!(
            "{} return(s) without their call and {} call(s) without their return (cut by the start or end of the trace, or by lost events)",
            st.exits_without_entry, st.unfinished
        ));
    }
    let roots = if keep_calls {
        folder.take_roots()
    } else {
        Vec::new()
    };
    Ok((folder, roots, comms))
}

/// The summary table: one line per function, by self time (then name).
fn summary(folder: &SelfTimeFolder) -> String {
    let mut rows: Vec<_> = folder.functions().iter().collect();
    rows.sort_by(|a, b| b.1.self_ns.cmp(&a.1.self_ns).then(a.0.cmp(b.0)));
    let us = |ns: u64| format!("{:.3}", ns as f64 / 1000.0);
    let mut out = format!(
        "{:>10} {:>14} {:>14} {:>12} {:>12}  {}\n",
        "calls", "total (us)", "self (us)", "avg (us)", "max (us)", "function"
    );
    for (name, t) in rows {
        let _ = writeln!(
            out,
            "{:>10} {:>14} {:>14} {:>12} {:>12}  {}",
            t.calls,
            us(t.total),
            us(t.self_ns),
            us(t.total / t.calls.max(1)),
            us(t.max),
            name
        );
    }
    out
}

/// One JSON object per root call, one per line.
fn calls_json(roots: Vec<RootCall>, comms: &Comms) -> String {
    fn call_value(c: Call) -> serde_json::Value {
        use crate::render::json::uint;
        serde_json::json!({
            "func": c.name,
            "depth": c.depth,
            "calltime_ns": uint(c.start),
            "duration_ns": uint(c.duration),
            "self_ns": uint(c.self_ns),
            "children": c.children.into_iter().map(call_value).collect::<Vec<_>>(),
        })
    }
    let mut out = String::new();
    for r in roots {
        let (pid, cpu) = r.task;
        let comm = if r.comm.is_empty() {
            comms.comm(pid).to_string()
        } else {
            r.comm
        };
        let mut o = serde_json::Map::new();
        o.insert("comm".into(), comm.into());
        o.insert("pid".into(), pid.into());
        if cpu != u32::MAX {
            o.insert("cpu".into(), cpu.into());
        }
        if let serde_json::Value::Object(call) = call_value(r.call) {
            o.extend(call);
        }
        out.push_str(&serde_json::Value::Object(o).to_string());
        out.push('\n');
    }
    out
}
