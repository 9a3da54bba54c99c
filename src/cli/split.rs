//! `tracectl split`: cut a trace.dat into smaller files, with trace-cmd split's options.

use std::path::PathBuf;

use anyhow::{bail, Result};
use tracectl::session::split::{split_until, SplitBy, SplitError, SplitOptions};

/// Options of `tracectl split` (trace-cmd split's names and defaults).
#[derive(Debug, clap::Args)]
#[command(
    group(clap::ArgGroup::new("size").args(["seconds", "millis", "micros", "events", "pages"])),
    after_help = "Only the top buffer is split, as trace-cmd 3.1.6 does (it has no -B or --top): \
                  instance buffers of the input are left out, with a warning. The parts keep \
                  the input's file version, compression and byte order; each starts with the \
                  record after the last one of the part before. The parts are written as \
                  NAME.partial and renamed when all are done: an error, Ctrl-C or SIGTERM \
                  leaves no part behind (exit status 130 when interrupted)."
)]
pub struct Args {
    /// Input file
    #[arg(short = 'i', default_value = "trace.dat")]
    pub input: PathBuf,
    /// Base name of the parts (default: the input file): BASE.1, or BASE.0001, BASE.0002, ... with -r
    #[arg(short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// End a part this many seconds after its first record (or after START)
    #[arg(short = 's', value_name = "SECONDS")]
    pub seconds: Option<String>,
    /// End a part this many milliseconds after its first record
    #[arg(short = 'm', value_name = "MILLISECONDS")]
    pub millis: Option<String>,
    /// End a part this many microseconds after its first record
    #[arg(short = 'u', value_name = "MICROSECONDS")]
    pub micros: Option<String>,
    /// End a part after this many records
    #[arg(short = 'e', value_name = "EVENTS")]
    pub events: Option<String>,
    /// End a part after this many sub-buffer pages per CPU (sets -c)
    #[arg(short = 'p', value_name = "PAGES")]
    pub pages: Option<String>,
    /// Repeat: write parts until END or the end of the input (with END given, trace-cmd 3.1.6 writes one part)
    #[arg(short = 'r')]
    pub repeat: bool,
    /// Apply the size to each CPU on its own
    #[arg(short = 'c')]
    pub per_cpu: bool,
    /// Keep only the records of this CPU
    #[arg(short = 'C', value_name = "CPU")]
    pub cpu: Option<String>,
    /// Leave out the records before this time, in seconds as report prints it (0.0: from the start)
    #[arg(value_name = "START")]
    pub start: Option<String>,
    /// Stop at the first record after this time, in seconds
    #[arg(value_name = "END")]
    pub end: Option<String>,
}

/// A size of `-s`, `-m`, `-u`, `-e` or `-p`: a whole number of 1 or more.
fn size(opt: char, value: &str) -> Result<u64> {
    match value.trim().parse::<u64>() {
        Ok(0) => bail!("-{opt} {value}: the size must be greater than 0"),
        Ok(n) => Ok(n),
        Err(_) => bail!("-{opt} {value}: not a whole number; give a size of 1 or more"),
    }
}

/// A START or END time in seconds, to nanoseconds as trace-cmd converts it.
fn time_ns(what: &str, value: &str) -> Result<u64> {
    match value.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok((v * 1_000_000_000.0) as u64),
        _ => bail!(
            "{what} time {value:?}: not a time in seconds; give one as report prints it \
             (like 604.400140), or 0.0 for the start of the file"
        ),
    }
}

/// Run `tracectl split`.
pub fn run(a: Args) -> Result<i32> {
    let by = if let Some(v) = &a.seconds {
        Some(SplitBy::Seconds(size('s', v)?))
    } else if let Some(v) = &a.millis {
        Some(SplitBy::Millis(size('m', v)?))
    } else if let Some(v) = &a.micros {
        Some(SplitBy::Micros(size('u', v)?))
    } else if let Some(v) = &a.events {
        Some(SplitBy::Events(size('e', v)?))
    } else if let Some(v) = &a.pages {
        Some(SplitBy::Pages(size('p', v)?))
    } else {
        None
    };
    let cpu = match &a.cpu {
        None => None,
        Some(v) => match v.trim().parse::<u32>() {
            Ok(c) => Some(c),
            Err(_) => bail!("-C {v}: not a CPU number"),
        },
    };
    let start_ns = a
        .start
        .as_deref()
        .map(|s| time_ns("start", s))
        .transpose()?
        .unwrap_or(0);
    let end_ns = a
        .end
        .as_deref()
        .map(|s| time_ns("end", s))
        .transpose()?
        .unwrap_or(0);
    if end_ns != 0 && end_ns < start_ns {
        bail!(
            "the end time {} is before the start time {}: give an end after the start",
            a.end.as_deref().unwrap_or_default(),
            a.start.as_deref().unwrap_or_default()
        );
    }
    let opts = SplitOptions {
        input: a.input,
        output: a.output,
        by,
        repeat: a.repeat,
        per_cpu: a.per_cpu,
        cpu,
        start_ns,
        end_ns,
    };
    // Ctrl-C or a kill ends the split through its error path, which removes the parts
    // written so far.
    let stop = tracectl::tracefs::stop_on_signals();
    let summary = match split_until(&opts, stop) {
        Ok(s) => s,
        Err(SplitError::Interrupted) => {
            eprintln!("tracectl split: interrupted; no part was written");
            // As a shell reports a command ended by SIGINT.
            return Ok(130);
        }
        Err(e) => return Err(e.into()),
    };
    for w in &summary.warnings {
        eprintln!("tracectl split: warning: {w}");
    }
    if summary.skipped > 0 {
        eprintln!(
            "tracectl split: note: {} record(s) ended a part on a CPU with no record in that \
             part and are in no part, as with trace-cmd split",
            summary.skipped
        );
    }
    Ok(0)
}
