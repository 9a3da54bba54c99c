//! `tracectl dump`: the metadata of a trace.dat, as `trace-cmd dump` prints it.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context as _, Result};
use tracectl::dat::{DatFile, DumpSelect};

use super::common::Context;

/// Options of `tracectl dump` (trace-cmd dump's names).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Input file (default trace.dat)
    #[arg(short = 'i')]
    pub input: Option<PathBuf>,
    /// Input file, as trace-cmd dump also takes it
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Check that the file reads as a trace.dat to its end, then say it is valid (with no
    /// other option, print nothing else)
    #[arg(short = 'v', long = "validate")]
    pub validate: bool,
    /// Print everything below
    #[arg(long)]
    pub all: bool,
    /// Print the file's layout, one line per part (the default when nothing else is chosen)
    #[arg(long)]
    pub summary: bool,
    /// Print the header page format
    #[arg(long = "head-page")]
    pub head_page: bool,
    /// Print the header event format
    #[arg(long = "head-event")]
    pub head_event: bool,
    /// Print the ftrace event formats
    #[arg(long = "ftrace-events")]
    pub ftrace_events: bool,
    /// Print the event systems and their number of events
    #[arg(long)]
    pub systems: bool,
    /// Print the event formats
    #[arg(long)]
    pub events: bool,
    /// Print the saved kallsyms
    #[arg(long)]
    pub kallsyms: bool,
    /// Print the saved printk formats
    #[arg(long)]
    pub printk: bool,
    /// Print the saved command lines
    #[arg(long = "cmd-lines")]
    pub cmd_lines: bool,
    /// Print every option stored in the file, with its contents
    #[arg(long)]
    pub options: bool,
    /// Print where each CPU's trace data is (offset and size; v7: per buffer)
    #[arg(long)]
    pub flyrecord: bool,
    /// Print the stored trace clock (v6: also the clock stored after the CPU table)
    #[arg(long)]
    pub clock: bool,
    /// Print the strings of a v7 file (section descriptions) with their offsets
    #[arg(long)]
    pub strings: bool,
    /// Print the section table of a v7 file
    #[arg(long)]
    pub sections: bool,
    /// Accepted for trace-cmd's log level (none, critical, error, warning, info, debug,
    /// all or 0-6); the dump itself is the same at every level
    #[arg(
        long,
        value_name = "LEVEL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "info"
    )]
    pub verbose: Option<String>,
}

/// Whether trace-cmd takes `level` as a log level: a leading number, or a text that
/// starts with a level's name.
fn log_level_valid(level: &str) -> bool {
    const NAMES: [&str; 7] = [
        "none", "critical", "error", "warning", "info", "debug", "all",
    ];
    level.starts_with(|c: char| c.is_ascii_digit()) || NAMES.iter().any(|n| level.starts_with(n))
}

/// Run `tracectl dump`.
pub fn run(_ctx: &Context, a: Args) -> Result<i32> {
    if a.input.is_some() && a.file.is_some() {
        anyhow::bail!("give the input file once, either with -i or as an argument");
    }
    let path = a
        .input
        .or(a.file)
        .unwrap_or_else(|| PathBuf::from("trace.dat"));
    if let Some(level) = &a.verbose {
        if !log_level_valid(level) {
            anyhow::bail!(
                "invalid --verbose level {level:?}: use none, critical, error, warning, info, \
                 debug, all or a number 0-6"
            );
        }
    }
    let mut sel = if a.all {
        DumpSelect::all()
    } else {
        DumpSelect {
            summary: a.summary,
            head_page: a.head_page,
            head_event: a.head_event,
            ftrace_events: a.ftrace_events,
            systems: a.systems,
            events: a.events,
            kallsyms: a.kallsyms,
            printk: a.printk,
            cmd_lines: a.cmd_lines,
            options: a.options,
            flyrecord: a.flyrecord,
            clock: a.clock,
            strings: a.strings,
            sections: a.sections,
        }
    };
    if sel == DumpSelect::default() && !a.validate {
        sel.summary = true;
    }
    let dat = DatFile::open(&path).with_context(|| format!("cannot dump {}", path.display()))?;
    let name = path.to_string_lossy();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    tracectl::dat::dump(&dat, &name, &sel, &mut out)
        .with_context(|| format!("cannot dump {}", path.display()))?;
    if a.validate {
        writeln!(out, "File {name} is a valid trace-cmd file")?;
    }
    out.flush()?;
    Ok(0)
}
