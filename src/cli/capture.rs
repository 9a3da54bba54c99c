//! `tracectl capture`: copy a live tracefs root into a fixture tree.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context as _, Result};
use tracectl::session::capture;
use tracectl::tracefs::capture::CaptureOptions;

use super::common::Context;

/// Options of `tracectl capture`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Destination directory (created; files in it are overwritten)
    pub dir: PathBuf,
    /// Event to record (repeatable): all, SYSTEM, SYSTEM:EVENT, globs; none = metadata only
    #[arg(short = 'e', long = "event", value_name = "EVENT")]
    pub events: Vec<String>,
    /// Copy every event's format even when only some are recorded
    #[arg(long)]
    pub all_formats: bool,
    /// Store kallsyms as host/kallsyms.zst (/proc/kallsyms, or a tree's own copy)
    #[arg(long)]
    pub kallsyms: bool,
    /// Per-CPU buffer size (KiB) of the capture instance, to keep the tree small
    #[arg(short = 'b', long = "buffer-size-kb", value_name = "KB")]
    pub buffer_size_kb: Option<u64>,
    /// Trace clock of the capture instance (see trace_clock), e.g. counter or mono
    #[arg(short = 'C', long = "clock", value_name = "CLOCK")]
    pub clock: Option<String>,
    /// Sub-buffer size (KiB) of the capture instance (buffer_subbuf_size_kb, 6.8+)
    #[arg(long = "subbuf-size-kb", value_name = "KB")]
    pub subbuf_size_kb: Option<u64>,
    /// How long to trace when no command is given, in milliseconds
    #[arg(short = 'd', long = "duration-ms", default_value_t = 1000)]
    pub duration_ms: u64,
    /// Trace option to set in the capture instance (repeatable), e.g. record-tgid
    #[arg(short = 'O', long = "option", value_name = "OPTION")]
    pub options: Vec<String>,
    /// Tracer to run while recording, e.g. function_graph
    #[arg(short = 'p', long = "tracer", value_name = "TRACER")]
    pub tracer: Option<String>,
    /// Graph only these functions (set_graph_function; repeatable)
    #[arg(short = 'g', long = "graph-function", value_name = "FUNC")]
    pub graph_functions: Vec<String>,
    /// max_graph_depth while recording
    #[arg(long = "max-graph-depth", value_name = "N")]
    pub max_graph_depth: Option<u32>,
    /// Record in the top-level instance (its settings are restored afterwards, its buffer consumed)
    #[arg(long)]
    pub top_level: bool,
    /// Workload to run while tracing
    #[arg(last = true)]
    pub command: Vec<String>,
}

/// Run `tracectl capture`.
pub fn run(ctx: &Context, args: Args) -> Result<i32> {
    let tracefs = ctx.tracefs()?;
    if !args.command.is_empty() && args.events.is_empty() && args.tracer.is_none() {
        anyhow::bail!("a workload needs events to record: add -e EVENT (e.g. -e sched -e irq)");
    }
    let opts = CaptureOptions {
        events: args.events,
        all_formats: args.all_formats,
        kallsyms: args.kallsyms,
        command: if args.command.is_empty() {
            None
        } else {
            Some(args.command)
        },
        duration: Duration::from_millis(args.duration_ms),
        buffer_size_kb: args.buffer_size_kb,
        subbuf_size_kb: args.subbuf_size_kb,
        clock: args.clock,
        options: args.options,
        tracer: args.tracer,
        graph_functions: args.graph_functions,
        max_graph_depth: args.max_graph_depth,
        top_level: args.top_level,
    };
    let stop = tracectl::tracefs::stop_on_signals();
    let report = capture(&tracefs, &args.dir, &opts, stop).with_context(|| {
        format!(
            "capturing {} into {}",
            tracefs.root().display(),
            args.dir.display()
        )
    })?;
    for w in &report.warnings {
        eprintln!("tracectl: {w}");
    }
    for (file, why) in &report.skipped {
        eprintln!("tracectl: skipped {file}: {why}");
    }
    eprintln!(
        "tracectl: wrote {} files to {}{}",
        report.files,
        args.dir.display(),
        if report.raw_bytes.is_empty() {
            String::new()
        } else {
            format!(
                "; trace: {} lines; trace_pipe_raw bytes per CPU: {:?}",
                report.trace_lines, report.raw_bytes
            )
        }
    );
    Ok(0)
}
