//! `tracectl hist`: a histogram of the call stacks of a trace.dat, as `trace-cmd hist`.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use tracectl::session::hist::write_hist;

/// Options of `tracectl hist`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The trace.dat to read (events, best recorded with -T for their stack traces)
    #[arg(short = 'i', value_name = "FILE", conflicts_with = "file")]
    pub input: Option<PathBuf>,
    /// One tree for all tasks instead of one per task
    #[arg(short = 'P')]
    pub compact: bool,
    /// The trace.dat to read, as with -i (default: trace.dat)
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
}

/// Run `tracectl hist`.
pub fn run(a: Args) -> Result<i32> {
    let path = a
        .input
        .or(a.file)
        .unwrap_or_else(|| PathBuf::from("trace.dat"));
    // The whole histogram is made before any of it is printed: a failure prints nothing.
    let mut buf = Vec::new();
    let warnings = write_hist(&path, a.compact, &mut buf)?;
    for w in &warnings {
        eprintln!("tracectl hist: {}: {w}", path.display());
    }
    let mut out = std::io::stdout().lock();
    out.write_all(&buf)?;
    out.flush()?;
    Ok(0)
}
