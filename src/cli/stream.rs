//! `tracectl stream`: decode ring-buffer pages as they arrive, or replay a fixture tree
//! (the loop is [`tracectl::session::stream`]).

use std::io;
use std::sync::atomic::AtomicBool;

use anyhow::Result;
use tracectl::session::stream::{stream, StreamError, StreamOptions, StreamWarning};

use super::common::Context;

/// Output styles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Style {
    /// Exactly the lines of the kernel's `trace` file
    Kernel,
    /// One JSON object per line, every field typed
    Json,
    /// The lines of `trace-cmd stream` (live only; the default there)
    #[value(name = "trace-cmd")]
    TraceCmd,
}

/// Options of `tracectl stream`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Event to show (repeatable): all, SYSTEM, SYSTEM:EVENT, globs. Live, the events are
    /// enabled in a private instance for the duration; without -e the top-level buffer is
    /// read (and consumed) with whatever is enabled there
    #[arg(short = 'e', long = "event", value_name = "EVENT")]
    pub events: Vec<String>,
    /// Output style: trace-cmd's lines live, the kernel's `trace` lines for a replay
    #[arg(long, value_enum)]
    pub style: Option<Style>,
    /// Only this CPU's buffer
    #[arg(long, value_name = "N")]
    pub cpu: Option<u32>,
    /// Omit the `# tracer:` header lines of a replay
    #[arg(long)]
    pub no_header: bool,
    /// Live: stop after this many milliseconds (default: until Ctrl-C)
    #[arg(long, value_name = "MS")]
    pub duration_ms: Option<u64>,
    /// Filter for the preceding -e event (as record's -f)
    #[arg(short = 'f', value_name = "FILTER")]
    pub filters: Vec<String>,
    /// Tracer plugin (current_tracer of the private instance)
    #[arg(short = 'p', long = "plugin")]
    pub plugin: Option<String>,
    /// Buffer set-up of the private instance and what is traced (shared with record,
    /// profile, start and set); -s is the longest wait between reads, -r the stream's
    /// real-time priority
    #[command(flatten)]
    pub trace: super::record::TraceArgs,
    /// Command to run while streaming (the stream ends with it); it follows the options,
    /// with or without `--`
    #[arg(
        value_name = "COMMAND",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub command: Vec<String>,
}

/// Each -f with the number of the -e before it, from the process arguments; an -f before
/// any -e gets the number of no event (refused by the stream).
fn bound_filters(a: &Args) -> Vec<(usize, String)> {
    use clap::CommandFactory as _;
    let m = super::Cli::command()
        .try_get_matches_from(std::env::args_os())
        .ok();
    let Some(sub) = m.as_ref().and_then(|m| m.subcommand_matches("stream")) else {
        // Not parsed from the process arguments: every filter for the last event.
        let last = a.events.len().max(1) - 1;
        return a.filters.iter().map(|f| (last, f.clone())).collect();
    };
    let events: Vec<usize> = sub
        .indices_of("events")
        .map(|i| i.collect())
        .unwrap_or_default();
    let (Some(idx), Some(vals)) = (sub.indices_of("filters"), sub.get_many::<String>("filters"))
    else {
        return Vec::new();
    };
    idx.zip(vals)
        .map(|(i, f)| {
            let before = events.iter().filter(|&&e| e < i).count();
            (before.checked_sub(1).unwrap_or(usize::MAX), f.clone())
        })
        .collect()
}

/// Run `tracectl stream`.
pub fn run(ctx: &Context, args: Args) -> Result<i32> {
    let tracefs = ctx.tracefs()?;
    let filters = bound_filters(&args);
    let mut trace = args.trace.clone();
    trace.bind_modules_from_args("stream");
    let style = match args.style {
        Some(Style::TraceCmd) if !tracefs.is_live() => anyhow::bail!(
            "--style trace-cmd: a replay of a recorded tree prints the kernel's lines; use --style kernel or json"
        ),
        Some(s) => s,
        None if tracefs.is_live() => Style::TraceCmd,
        None => Style::Kernel,
    };
    let opts = StreamOptions {
        events: args.events,
        json: style == Style::Json,
        tracecmd: style == Style::TraceCmd,
        cpu: args.cpu,
        no_header: args.no_header,
        duration_ms: args.duration_ms,
        filters,
        buffer: trace.apply(tracectl::record::RecordConfig {
            plugin: args.plugin,
            ..Default::default()
        }),
        command: args.command,
    };
    // Only a live stream runs until interrupted; a replay keeps Ctrl-C's default.
    static NEVER: AtomicBool = AtomicBool::new(false);
    let stop = if tracefs.is_live() {
        tracectl::tracefs::stop_on_signals()
    } else {
        &NEVER
    };
    let stdout = io::stdout();
    let mut w = stdout.lock();
    // An event whose records cannot be decoded is flagged as a warning; the other
    // problems are reported as they are.
    let mut warn = |w: StreamWarning| match w {
        StreamWarning::UnknownEvent { .. } => eprintln!("tracectl: warning: {w}"),
        _ => eprintln!("tracectl: {w}"),
    };
    match stream(&tracefs, &opts, stop, &mut w, &mut warn) {
        Ok(code) => Ok(code),
        // A broken pipe ends the command quietly: keep it an io::Error for main to see.
        Err(StreamError::Io(e)) => Err(e.into()),
        Err(e) => Err(e.into()),
    }
}
