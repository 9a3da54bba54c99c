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

/// Run `tracectl stream`.
pub fn run(ctx: &Context, args: Args) -> Result<i32> {
    let tracefs = ctx.tracefs()?;
    let opts = StreamOptions {
        events: args.events,
        json: args.style == Style::Json,
        cpu: args.cpu,
        no_header: args.no_header,
        duration_ms: args.duration_ms,
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
