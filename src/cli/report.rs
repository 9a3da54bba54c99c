//! `tracectl report`: print trace.dat files the way `trace-cmd report` does.

use std::ffi::OsString;
use std::io;
use std::path::PathBuf;

use anyhow::Result;
use tracectl::session::report::ReportError;
use tracectl::session::report_files::{
    report_files, FilesError, FilesMode, FilesOptions, FilesStyle, Note,
};

use super::common::Context;

/// Options of `tracectl report` (trace-cmd report's names and meanings).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Input file (repeatable: files are merged by timestamp); default trace.dat
    #[arg(short = 'i', value_name = "FILE")]
    pub input: Vec<PathBuf>,
    /// Input file, as an alternative to -i
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Only show records of these CPUs (e.g. 0,2-3)
    #[arg(long = "cpu", value_name = "LIST")]
    pub cpu: Vec<String>,
    /// Event filter in libtraceevent syntax: 'EVENTS[:EXPR]', e.g.
    /// 'sched_switch:prev_pid==0' or '.*:COMM=="ls"' (repeatable)
    #[arg(short = 'F', value_name = "FILTER")]
    pub filter: Vec<String>,
    /// Filters given after -v remove the records they match
    #[arg(short = 'v')]
    pub invert: bool,
    /// Print raw field values instead of the events' formats and plugins
    #[arg(short = 'R')]
    pub raw: bool,
    /// Print timestamps in nanoseconds
    #[arg(short = 't')]
    pub nsecs: bool,
    /// Latency format: show the irq, need-resched, softirq and preempt flags
    #[arg(short = 'l')]
    pub latency: bool,
    /// List the CPUs with data and each one's first record time
    #[arg(long = "first-event")]
    pub first_event: bool,
    /// List the CPUs with data and each one's last record time
    #[arg(long = "last-event")]
    pub last_event: bool,
    /// List the CPUs that have data
    #[arg(long = "cpus")]
    pub cpus: bool,
    /// Print the kernel buffer statistics stored in the file
    #[arg(long = "stat")]
    pub stat: bool,
    /// Add this many nanoseconds to the timestamps of the -i file before it (repeatable,
    /// one per file; it must follow an -i; unlike trace-cmd 3.1.6 it also shifts the first file)
    #[arg(long = "ts-offset", value_name = "NS", allow_hyphen_values = true)]
    pub ts_offset: Vec<i64>,
    /// List the events whose formats the file holds (system:name)
    #[arg(short = 'E')]
    pub list_events: bool,
    /// Plugin option, e.g. fgraph:tailprint (accepted for compatibility)
    #[arg(short = 'O', value_name = "OPTION")]
    pub plugin_option: Vec<String>,
    /// Quiet: no warnings
    #[arg(short = 'q')]
    pub quiet: bool,
    /// One JSON object per record (typed fields), one per line
    #[arg(long = "json")]
    pub json: bool,
    /// Output style: trace-cmd (default) or kernel (the kernel's own `trace` text)
    #[arg(long = "style", value_name = "STYLE", default_value = "trace-cmd")]
    pub style: String,
    /// Verbose: after the report, list on stderr the events whose print fmt could not be
    /// evaluated (printed as field=value) and why
    #[arg(long = "verbose")]
    pub verbose: bool,
}

/// The `--ts-offset` of each input file: as in trace-cmd, an offset belongs to the `-i`
/// before it (the last one given wins); one before any `-i` is an error. (trace-cmd 3.1.6
/// ignores the offset of the first file when it is the only one; here it applies.)
/// A file given without `-i` (positional) takes the offsets wherever they stand.
/// None when an offset comes before any file.
fn ts_offsets(
    args: &[OsString],
    values: &[i64],
    files: usize,
    positional: bool,
) -> Option<Vec<i64>> {
    let mut out = vec![0; files];
    let mut seen_i = usize::from(positional);
    let mut next = 0;
    for a in args.iter().map(|a| a.to_string_lossy()) {
        if a == "--" {
            break;
        }
        if a == "-i" || (a.starts_with("-i") && !a.starts_with("--")) {
            seen_i += 1;
        } else if a == "--ts-offset" || a.starts_with("--ts-offset=") {
            if seen_i == 0 {
                return None;
            }
            if let (Some(v), Some(slot)) = (values.get(next), out.get_mut(seen_i - 1)) {
                *slot = *v;
            }
            next += 1;
        }
    }
    Some(out)
}

/// Which -F filters come after -v: trace-cmd makes every -F after the flag a negative one,
/// an order clap's derive API does not keep.
fn negated_filters(args: &[OsString], total: usize) -> usize {
    let mut seen_v = false;
    let mut before_v = 0;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].to_string_lossy();
        if a == "--" {
            break;
        }
        if a == "-v" {
            seen_v = true;
        } else if a.starts_with("-F") && !seen_v {
            before_v += 1;
            if a == "-F" {
                i += 1;
            }
        } else if a.starts_with('-')
            && !a.starts_with("--")
            && a.len() > 2
            && a[1..].chars().all(|c| c.is_ascii_alphabetic())
        {
            // Bundled short flags such as -tv.
            if a.contains('v') {
                seen_v = true;
            }
        }
        i += 1;
    }
    if seen_v {
        total - before_v.min(total)
    } else {
        0
    }
}

/// Run `tracectl report`.
pub fn run(_ctx: &Context, args: Args) -> Result<i32> {
    let mut files = args.input.clone();
    if let Some(f) = &args.file {
        files.push(f.clone());
    }
    if files.is_empty() {
        files.push(PathBuf::from("trace.dat"));
    }
    if args.json {
        let text_only = [
            (args.list_events, "-E"),
            (args.stat, "--stat"),
            (args.first_event, "--first-event"),
            (args.last_event, "--last-event"),
            (args.cpus, "--cpus"),
        ];
        if let Some((_, opt)) = text_only.iter().find(|(on, _)| *on) {
            anyhow::bail!(
                "--json prints the records; {opt} prints text only: drop --json or {opt}"
            );
        }
    }
    let raw_args: Vec<OsString> = std::env::args_os().collect();
    let negated = negated_filters(&raw_args, args.filter.len());
    let mode = if args.list_events {
        FilesMode::ListEvents
    } else if args.first_event || args.last_event || args.cpus {
        FilesMode::CpuList {
            first: args.first_event,
            last: args.last_event,
        }
    } else if args.stat {
        FilesMode::Stat
    } else {
        FilesMode::Report
    };
    let opts = FilesOptions {
        ts_offsets: ts_offsets(
            &raw_args,
            &args.ts_offset,
            files.len(),
            args.input.is_empty(),
        ),
        files,
        mode,
        cpu_lists: args.cpu,
        first_negated: args.filter.len() - negated,
        filters: args.filter,
        json: args.json,
        style: match args.style.as_str() {
            "trace-cmd" => FilesStyle::TraceCmd,
            "kernel" => FilesStyle::Kernel,
            _ => FilesStyle::Other(args.style),
        },
        nsecs: args.nsecs,
        latency: args.latency,
        raw: args.raw,
        fgraph_tailprint: args.plugin_option.iter().any(|o| o == "fgraph:tailprint"),
        fgraph_depth: args.plugin_option.iter().any(|o| o == "fgraph:depth"),
        quiet: args.quiet,
        verbose: args.verbose,
    };
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut note = |n: Note| match n {
        Note::Warning(w) => eprintln!("tracectl: warning: {w}"),
        Note::Fallback(f) => eprintln!("tracectl: {f}"),
    };
    match report_files(&opts, &mut out, &mut note) {
        Ok(_) => Ok(0),
        Err(FilesError::Output(e) | FilesError::Report(ReportError::Output(e))) => Err(e.into()),
        Err(FilesError::Dat(e)) => Err(e.into()),
        Err(FilesError::Report(e)) => Err(anyhow::Error::new(e)),
        Err(FilesError::Filter {
            file: Some(f),
            source,
        }) => Err(anyhow::anyhow!(
            "{source} (in {}; try `tracectl report -E -i {}` to list its events)",
            f.display(),
            f.display()
        )),
        Err(e) => Err(anyhow::Error::new(e)),
    }
}
