//! Command-line definitions, one module per subcommand.
//!
//! The binary only parses flags and wires the library together; the work is in the library.

use std::io::{self, Write};
use std::path::PathBuf;

use clap::{Parser, Subcommand};
use tracectl::record::RecordError;
use tracectl::ring::RingError;
use tracectl::session::stream::StreamError;
use tracectl::tracefs::capture::CaptureError;
use tracectl::tracefs::graph::GraphError;
use tracectl::tracefs::TracefsError;

mod common;

mod buffers;
mod capture;
mod check_events;
mod completions;
mod convert;
mod dump;
mod extract;
mod flamegraph;
mod graph;
mod hist;
mod list;
mod man_text;
mod mem;
mod options;
mod perf;
mod perf_control;
mod perf_read;
mod perf_record;
mod perf_record_zstd;
mod profile;
mod progress;
mod record;
mod report;
mod show;
mod simple;
mod split;
mod stack;
mod stat;
mod stream;

/// Drive Linux ftrace through tracefs and decode what it records.
#[derive(Debug, Parser)]
// As perf's and trace-cmd's option parsers, a flag or option given again is taken again
// (the last value wins) rather than refused; lists (`-e A -e B`) still gather every one;
// and a long option may be shortened to any prefix that names it alone (`--comm` for
// `--comms`).
#[command(
    name = "tracectl",
    version,
    about,
    long_about = None,
    propagate_version = true,
    args_override_self = true,
    infer_long_args = true
)]
pub struct Cli {
    /// Tracefs root to use: a live mount, a debugfs `tracing/` dir or a recorded fixture
    /// tree (default: found from /proc/mounts, mounted if absent and root)
    #[arg(long, global = true, value_name = "DIR", env = "TRACECTL_TRACEFS")]
    pub tracefs: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands, named after trace-cmd's verbs where one exists.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List available events, tracers, clocks, options, functions or instances
    List(list::Args),
    /// Reset, configure and enable tracing, then exit (or run a command and exit with it)
    Start(simple::StartArgs),
    /// Configure tracing without resetting first
    Set(simple::StartArgs),
    /// Stop writing to the ring buffer (tracing_on=0)
    Stop(simple::InstanceArgs),
    /// Resume writing to the ring buffer (tracing_on=1)
    Restart(simple::InstanceArgs),
    /// Put the top level (or the instances -B/-a name) back to the kernel's defaults
    Reset(simple::ResetArgs),
    /// Clear the ring buffer
    Clear(simple::InstanceArgs),
    /// Show the trace or a control file
    Show(show::Args),
    /// Show the whole current tracing state
    Stat(stat::Args),
    /// Take, show, clear or free a snapshot
    Snapshot(simple::SnapshotArgs),
    /// Write a line to trace_marker
    Marker(simple::MarkerArgs),
    /// Record a trace to a trace.dat file
    Record(record::Args),
    /// Print a trace.dat file
    #[command(disable_version_flag = true)]
    Report(report::Args),
    /// Decode and print events as they arrive (or replay a fixture tree)
    Stream(stream::Args),
    /// Write the current buffers to a trace.dat file
    Extract(extract::Args),
    /// Print a trace.dat's metadata (layout, formats, options, sections) as trace-cmd dump does
    Dump(dump::Args),
    /// Rewrite a trace.dat as version 6 or 7, with another compression
    Convert(convert::Args),
    /// Split a trace.dat into smaller files by time, events or pages
    Split(split::Args),
    /// function_graph of one command (or one system call of it) in one step
    Graph(graph::Args),
    /// Parse every event format and list the ones that fail
    CheckEvents(check_events::Args),
    /// Copy a tracefs tree (metadata, and optionally a trace) into a fixture directory
    Capture(capture::Args),
    /// perf_event counting and sampling with perf's options (`tracectl perf stat ...`)
    Perf(perf::Args),
    /// Write a shell completion script (bash, zsh or fish) to stdout
    Completions(completions::Args),
    /// Draw folded stacks, a perf.data or a function_graph trace.dat as a flame graph SVG
    Flamegraph(flamegraph::Args),
    /// Print the man page (roff) for tracectl or one subcommand
    Man(simple::ManArgs),
    /// List the plugin options `report -O` takes
    Options(options::Args),
    /// Sum the slab allocations of a trace.dat per call site
    Mem(mem::Args),
    /// Histogram of the call stacks of a trace.dat
    Hist(hist::Args),
    /// Show, start, stop or reset the kernel's stack tracer
    Stack(stack::Args),
    /// Record a command and print where its tasks spent their time (report --profile)
    Profile(profile::Args),
}

/// Run the command line; returns the process exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse_from(argv()) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return match e.use_stderr() {
                false => 0,
                // perf's status for what its option parser refuses.
                true if is_perf_command(std::env::args_os().skip(1)) => common::PERF_USAGE.0,
                true => e.exit_code(),
            };
        }
    };
    match run(cli) {
        Ok(code) => code,
        Err(err) => {
            if is_broken_pipe(&err) {
                return 0;
            }
            let _ = writeln!(io::stderr(), "tracectl: {}{}", chain_text(&err), hint(&err));
            err.downcast_ref::<common::ExitStatus>().map_or(1, |s| s.0)
        }
    }
}

/// Whether a command line (without the program name) runs `tracectl perf ...`: its first
/// word that is neither an option nor the value of `--tracefs` is `perf`.
fn is_perf_command(mut args: impl Iterator<Item = std::ffi::OsString>) -> bool {
    while let Some(a) = args.next() {
        if a == "--tracefs" {
            args.next();
        } else if !a.as_encoded_bytes().starts_with(b"-") {
            return a == "perf";
        }
    }
    false
}

/// Run a command line (the program name first) in this process, as [`main`] does, but
/// return a failure instead of printing it. Tests drive the commands through this.
#[allow(dead_code)]
pub fn run_args<I, T>(args: I) -> anyhow::Result<i32>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let args = args.into_iter().map(Into::into).collect();
    run(Cli::try_parse_from(perf_record::attach_optional_values(
        args,
    ))?)
}

/// The process's arguments as the command line is parsed: perf record's attached
/// optional values made explicit ([`perf_record::attach_optional_values`]).
pub(crate) fn argv() -> Vec<std::ffi::OsString> {
    perf_record::attach_optional_values(std::env::args_os().collect())
}

/// What to try next, for the errors whose fix is another tracectl command; the library's
/// messages say what is wrong, the command line says which command helps.
fn hint(err: &anyhow::Error) -> String {
    if err
        .chain()
        .any(|e| matches!(ring_error(e), Some(RingError::NoData { .. })))
    {
        return " (capture a tree with data: tracectl capture DIR -e EVENT)".into();
    }
    let tracefs_error = err.chain().find_map(tracefs_error);
    match tracefs_error {
        Some(TracefsError::UnknownEvent { suggestions, .. }) if suggestions.is_empty() => {
            " (see `tracectl list -e`)".into()
        }
        Some(TracefsError::UnknownFunction { suggestions, .. }) if suggestions.is_empty() => {
            " (see `tracectl list -f`)".into()
        }
        Some(TracefsError::UnknownOption { suggestions, .. }) if suggestions.is_empty() => {
            " (see `tracectl list -o`)".into()
        }
        Some(TracefsError::UnknownInstance { path, suggestions }) if suggestions.is_empty() => {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            format!("; create it with `tracectl set -B {name}` or see `tracectl list -B`")
        }
        _ => String::new(),
    }
}

/// The ring-buffer error inside an error of the library, if any.
fn ring_error<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a RingError> {
    match e.downcast_ref::<StreamError>() {
        Some(StreamError::Ring(r) | StreamError::Layout(r)) => Some(r),
        _ => e.downcast_ref::<RingError>(),
    }
}

/// The tracefs error inside an error of the library, if any: the wrappers hold it as a
/// variant, not as a source.
fn tracefs_error<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a TracefsError> {
    if let Some(t) = e.downcast_ref::<TracefsError>() {
        return Some(t);
    }
    if let Some(RingError::Tracefs(t)) = ring_error(e) {
        return Some(t);
    }
    if let Some(StreamError::Tracefs(t)) = e.downcast_ref() {
        return Some(t);
    }
    if let Some(RecordError::Tracefs(t)) = e.downcast_ref() {
        return Some(t);
    }
    if let Some(CaptureError::Tracefs(t)) = e.downcast_ref() {
        return Some(t);
    }
    if let Some(GraphError::Tracefs(t)) = e.downcast_ref() {
        return Some(t);
    }
    None
}

fn run(cli: Cli) -> anyhow::Result<i32> {
    let ctx = common::Context {
        tracefs: cli.tracefs,
    };
    match cli.command {
        Command::List(a) => list::run(&ctx, a),
        Command::Start(a) => simple::start(&ctx, a, true),
        Command::Set(a) => simple::start(&ctx, a, false),
        Command::Stop(a) => simple::stop(&ctx, a),
        Command::Restart(a) => simple::restart(&ctx, a),
        Command::Reset(a) => simple::reset(&ctx, a),
        Command::Clear(a) => simple::clear(&ctx, a),
        Command::Show(a) => show::run(&ctx, a),
        Command::Stat(a) => stat::run(&ctx, a),
        Command::Snapshot(a) => simple::snapshot(&ctx, a),
        Command::Marker(a) => simple::marker(&ctx, a),
        Command::Record(a) => record::run(&ctx, a),
        Command::Report(a) => report::run(&ctx, a),
        Command::Stream(a) => stream::run(&ctx, a),
        Command::Extract(a) => extract::run(&ctx, a),
        Command::Dump(a) => dump::run(&ctx, a),
        Command::Convert(a) => convert::run(&ctx, a),
        Command::Split(a) => split::run(a),
        Command::Graph(a) => graph::run(&ctx, a),
        Command::CheckEvents(a) => check_events::run(&ctx, a),
        Command::Capture(a) => capture::run(&ctx, a),
        Command::Perf(a) => perf::run(&ctx, a),
        Command::Completions(a) => completions::run(a),
        Command::Flamegraph(a) => flamegraph::run(&ctx, a),
        Command::Man(a) => simple::man(a),
        Command::Options(a) => options::run(a),
        Command::Mem(a) => mem::run(a),
        Command::Hist(a) => hist::run(a),
        Command::Stack(a) => stack::run(&ctx, a),
        Command::Profile(a) => profile::run(&ctx, a),
    }
}

/// The error and its causes joined by ": ", each cause left out when the text before it
/// already says it (library errors name their cause in their own message and also give it
/// as their source, so that a broken pipe can be found in the chain).
fn chain_text(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in err.chain() {
        let s = cause.to_string();
        if s.is_empty() || text.contains(&s) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&s);
    }
    text
}

/// A broken pipe anywhere in the chain ends quietly, as `| head` users expect.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::{Cli, Command};
    use clap::Parser;

    /// The option values (-e events, or -g functions for graph) and the command.
    fn parse(args: &[&str]) -> (Vec<String>, Vec<String>) {
        let cli = Cli::try_parse_from(std::iter::once("tracectl").chain(args.iter().copied()))
            .unwrap_or_else(|e| panic!("{args:?}: {e}"));
        match cli.command {
            Command::Record(a) => (a.events, a.command),
            Command::Set(a) => (a.events, a.command),
            Command::Graph(a) => (a.functions, a.command),
            c => panic!("{args:?} parsed as {c:?}"),
        }
    }

    #[test]
    fn the_command_follows_the_options_with_or_without_dashes() {
        for (verb, opt, value) in [
            ("record", "-e", "sched"),
            ("set", "-e", "sched"),
            ("graph", "-g", "vfs_read"),
        ] {
            let want = (
                vec![value.to_string()],
                vec!["ls".to_string(), "-l".to_string()],
            );
            assert_eq!(parse(&[verb, opt, value, "ls", "-l"]), want, "{verb}");
            assert_eq!(parse(&[verb, opt, value, "--", "ls", "-l"]), want, "{verb}");
            // Everything after the command's name is the command's, even our own options.
            let (values, command) = parse(&[verb, opt, value, "sh", "-e", "-c", "-o", "--"]);
            assert_eq!(values, [value], "{verb}");
            assert_eq!(command, ["sh", "-e", "-c", "-o", "--"], "{verb}");
        }
        assert_eq!(parse(&["record", "-e", "sched"]).1, Vec::<String>::new());
    }
}
