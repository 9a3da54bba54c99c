//! `tracectl dump`: the metadata sections of a trace.dat, as `trace-cmd dump` prints them.

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
    let sel = DumpSelect {
        head_page: a.head_page,
        head_event: a.head_event,
        ftrace_events: a.ftrace_events,
        systems: a.systems,
        events: a.events,
        kallsyms: a.kallsyms,
        printk: a.printk,
        cmd_lines: a.cmd_lines,
    };
    if sel == DumpSelect::default() {
        anyhow::bail!(
            "choose what to dump: --head-page, --head-event, --ftrace-events, --systems, \
             --events, --kallsyms, --printk or --cmd-lines"
        );
    }
    let dat = DatFile::open(&path).with_context(|| format!("cannot dump {}", path.display()))?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    tracectl::dat::dump(&dat, &sel, &mut out)
        .with_context(|| format!("cannot dump {}", path.display()))?;
    out.flush()?;
    Ok(0)
}
