//! `tracectl report`: print trace.dat files the way `trace-cmd report` does.

use std::ffi::OsString;
use std::io;
use std::path::PathBuf;

use anyhow::Result;
use tracectl::session::report::ReportError;
use tracectl::session::report_files::{
    report_files, FilesError, FilesMode, FilesOptions, FilesStyle, Note, TraceCmdOptions,
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
    /// Plugin option [PLUGIN:]OPTION[=0|1], e.g. fgraph:tailprint or ftrace:indent=0
    /// (`tracectl list -O` lists them with their defaults; an unknown one is refused). As
    /// in trace-cmd, an option without a value flips it once per -i file
    #[arg(short = 'O', value_name = "OPTION")]
    pub plugin_option: Vec<String>,
    /// No plugins: every event prints its print fmt
    #[arg(short = 'N')]
    pub no_plugins: bool,
    /// Only local plugins (~/.trace-cmd/plugins): tracectl loads none, its plugins are
    /// built in and count as system-wide, so this is -N
    #[arg(short = 'L')]
    pub local_plugins: bool,
    /// Events (name or system, anchored regex) printed with their print fmt instead of
    /// their plugin (repeatable)
    #[arg(short = 'n', value_name = "EVENT-RE")]
    pub no_handler: Vec<String>,
    /// Events (name or system, anchored regex) printed as raw fields (repeatable)
    #[arg(short = 'r', value_name = "EVENT-RE")]
    pub print_raw: Vec<String>,
    /// Leave out records written in hard interrupt context
    #[arg(short = 'I')]
    pub no_hardirq: bool,
    /// Leave out records written in soft interrupt context
    #[arg(short = 'S')]
    pub no_softirq: bool,
    /// Print each record's time since the record printed before it
    #[arg(long = "ts-diff")]
    pub ts_diff: bool,
    /// Warn (on stderr) about a record older than the one printed before it
    #[arg(long = "ts-check")]
    pub ts_check: bool,
    /// The timestamps are ticks of this frequency: print them as seconds (before the
    /// second -i: every file's default; after it: the -i file before it)
    #[arg(long = "ts2secs", value_name = "HZ")]
    pub ts2secs: Vec<u64>,
    /// Ignore the date offset the file recorded (`record --date`)
    #[arg(long = "nodate")]
    pub nodate: bool,
    /// Print the stored timestamps, without the file's offsets or conversions
    #[arg(long = "raw-ts")]
    pub raw_ts: bool,
    /// Timestamps relative to the first record of the files
    #[arg(long = "align-ts")]
    pub align_ts: bool,
    /// Print the file's endianness and this machine's
    #[arg(short = 'e')]
    pub endian: bool,
    /// Print the file's page size and this machine's
    #[arg(short = 'p')]
    pub page_size: bool,
    /// List the functions (kallsyms) stored in the file, by address
    #[arg(short = 'f')]
    pub functions: bool,
    /// List the trace_printk strings stored in the file, by address
    #[arg(short = 'P')]
    pub printk: bool,
    /// Print the event formats stored in the file (trace-cmd 3.1.6 prints them for
    /// version 6 files only)
    #[arg(long = "events")]
    pub events: bool,
    /// Print the formats of the events [SYSTEM:]EVENT (regexes) matches
    #[arg(long = "event", value_name = "[SYSTEM:]EVENT")]
    pub event: Option<String>,
    /// Check the event formats in the file: no output, exit status 22 (EINVAL) when one's
    /// name or ID cannot be read (as trace-cmd 3.1.6, which keeps events whose fields do
    /// not parse); with --verbose, name the formats that do not parse
    #[arg(long = "check-events")]
    pub check_events: bool,
    /// Print the uname the file recorded (and the version)
    #[arg(long = "uname")]
    pub uname: bool,
    /// Print the version of trace-cmd that recorded the file
    #[arg(long = "version")]
    pub version: bool,
    /// Refused: trace-cmd's -V and --verbose=LEVEL log libtracecmd's plugin loading and
    /// file parsing, which tracectl (built-in plugins) has no counterpart for
    #[arg(short = 'V')]
    pub libtracecmd_log: bool,
    /// Test the -F filters: print each as it applies to every event it names (TRUE,
    /// FALSE or the comparisons kept), then stop; without -F it does nothing
    #[arg(short = 'T')]
    pub test_filters: bool,
    /// Quiet: no warnings
    #[arg(short = 'q')]
    pub quiet: bool,
    /// One JSON object per record (typed fields), one per line
    #[arg(long = "json")]
    pub json: bool,
    /// Output style: trace-cmd (default) or kernel (the kernel's own `trace` text)
    #[arg(long = "style", value_name = "STYLE", default_value = "trace-cmd")]
    pub style: String,
    /// Wakeup latency: after each sched_switch that ends a wait since the task's
    /// sched_wakeup, the latency; a summary after the records (one file only)
    #[arg(short = 'w')]
    pub wakeup: bool,
    /// Profile: instead of the records, where each task spent its time (blocked,
    /// preempted, waiting for wakeup, in syscalls, irqs and softirqs) and its event counts,
    /// each with a tree of the kernel stacks recorded with it (`record -T`, stacktrace
    /// triggers)
    #[arg(long = "profile")]
    pub profile: bool,
    /// With --profile: irq and softirq pairs belong to per-CPU global tasks
    #[arg(short = 'G')]
    pub global: bool,
    /// With --profile: merge the tasks of one comm into one `group: COMM` (only tasks
    /// named by their own records); groups print after the global tasks, in comm order
    /// (trace-cmd 3.1.6's order follows memory addresses and changes from run to run)
    #[arg(long = "by-comm")]
    pub by_comm: bool,
    /// With --profile: time two more events as a pair,
    /// `[SYS:]START,START_MATCH[,START_PID]/[SYS:]END,END_MATCH[,FLAGS]` (flags: p pinned
    /// to a CPU, g global, s stack); repeatable (trace-cmd prints each as it reads it)
    #[arg(short = 'H', value_name = "EVENT-HOOKS")]
    pub hooks: Vec<String>,
    /// Verbose: after the report, list on stderr the events whose print fmt could not be
    /// evaluated (printed as field=value) and why. (trace-cmd's --verbose=LEVEL, a log
    /// level of libtracecmd, is refused.)
    #[arg(
        long = "verbose",
        value_name = "LEVEL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = ""
    )]
    pub verbose: Option<String>,
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

/// The `--ts2secs` of each input file, as trace-cmd binds them: one given before the
/// second `-i` is the default of every file, one after it belongs to the `-i` before it.
fn ts2secs_per_file(args: &[OsString], values: &[u64], files: usize) -> Vec<Option<u64>> {
    let mut default = None;
    let mut own = vec![None; files];
    let mut seen_i = 0usize;
    let mut next = 0;
    for a in args.iter().map(|a| a.to_string_lossy()) {
        if a == "--" {
            break;
        }
        if a == "-i" || (a.starts_with("-i") && !a.starts_with("--")) {
            seen_i += 1;
        } else if a == "--ts2secs" || a.starts_with("--ts2secs=") {
            let v = values.get(next).copied();
            next += 1;
            if seen_i < 2 {
                default = v;
            } else if let Some(slot) = own.get_mut(seen_i - 1) {
                *slot = v;
            }
        }
    }
    own.into_iter().map(|o| o.or(default)).collect()
}

/// The file each -F filter belongs to, by index: as trace-cmd binds them, a filter given
/// after a `-i` is that file's, one before any `-i` the first file's.
fn filter_files(args: &[OsString], total: usize) -> Vec<usize> {
    let mut out = Vec::with_capacity(total);
    let mut seen_i = 0usize;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].to_string_lossy();
        if a == "--" {
            break;
        }
        if a.starts_with("-i") {
            seen_i += 1;
            i += usize::from(a == "-i");
        } else if a.starts_with("-F") {
            out.push(seen_i.saturating_sub(1));
            i += usize::from(a == "-F");
        }
        i += 1;
    }
    out.resize(total, 0);
    out
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
    let file_count = files.len();
    let negated = negated_filters(&raw_args, args.filter.len());
    let filter_files = filter_files(&raw_args, args.filter.len());
    if let Some(level) = args.verbose.as_deref().filter(|l| !l.is_empty()) {
        anyhow::bail!(
            "--verbose={level} sets libtracecmd's log level in trace-cmd, which tracectl has no counterpart for; --verbose without a level lists the events printed as fields"
        );
    }
    let verbose = args.verbose.is_some();
    let hooks = super::profile::parse_hooks(&args.hooks)?;
    if !hooks.is_empty() && (args.json || args.style != "trace-cmd") {
        anyhow::bail!(
            "-H prints trace-cmd's hook lines ahead of trace-cmd's text and changes nothing \
             else outside --profile: drop -H with --json or --style"
        );
    }
    // As trace-cmd, which prints each hook on stdout as it reads the options.
    for h in &hooks {
        println!("{}", h.trace_cmd_line());
    }
    if args.libtracecmd_log {
        anyhow::bail!(
            "-V prints libtracecmd's log (plugins loaded, file version read), which tracectl has no counterpart for: its plugins are built in; --verbose lists the events printed as fields"
        );
    }
    // In trace-cmd's order of precedence.
    let mode = if args.page_size {
        FilesMode::PageSize
    } else if args.endian {
        FilesMode::Endian
    } else if args.events {
        FilesMode::EventFormats(None)
    } else if let Some(e) = &args.event {
        FilesMode::EventFormats(Some(e.clone()))
    } else if args.check_events {
        FilesMode::CheckEvents
    } else if args.functions {
        FilesMode::Functions
    } else if args.printk {
        FilesMode::Printk
    } else if args.list_events {
        FilesMode::ListEvents
    } else if args.first_event || args.last_event || args.cpus {
        FilesMode::CpuList {
            first: args.first_event,
            last: args.last_event,
        }
    } else if args.version {
        FilesMode::Version
    } else if args.uname {
        FilesMode::Uname
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
        quiet: args.quiet,
        verbose,
        more: TraceCmdOptions {
            plugin_options: args.plugin_option,
            no_plugins: args.no_plugins || args.local_plugins,
            no_handler: args.no_handler,
            print_raw: args.print_raw,
            no_hardirq: args.no_hardirq,
            no_softirq: args.no_softirq,
            ts_diff: args.ts_diff,
            ts_check: args.ts_check,
            ts2secs: ts2secs_per_file(&raw_args, &args.ts2secs, file_count),
            nodate: args.nodate,
            raw_ts: args.raw_ts,
            align_ts: args.align_ts,
            test_filters: args.test_filters,
            filter_files,
            whole_lines: Default::default(),
            threads: Default::default(),
        },
        wakeup: args.wakeup,
        profile: args.profile,
        profile_global: args.global,
        profile_hooks: hooks,
        profile_by_comm: args.by_comm,
    };
    let stdout = io::stdout();
    let mut progress = super::progress::Progress::new("reporting", args.quiet, true);
    let mut out = io::BufWriter::with_capacity(
        1 << 16,
        super::progress::CountingWriter::new(stdout.lock(), &mut progress),
    );
    let mut note = |n: Note| match n {
        Note::Warning(w) => eprintln!("tracectl: warning: {w}"),
        Note::Fallback(f) => eprintln!("tracectl: {f}"),
    };
    match report_files(&opts, &mut out, &mut note) {
        Ok(_) => Ok(0),
        // As trace-cmd, silently: the exit status is the answer.
        Err(FilesError::FormatsNotParsed { .. }) if !verbose => Ok(22),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<OsString> {
        s.split(' ').map(OsString::from).collect()
    }

    /// As trace-cmd binds them (checked against trace-cmd 3.1.6 on two recordings): a
    /// --ts2secs before the second -i is every file's default, one after it the last
    /// file's own.
    #[test]
    fn ts2secs_binds_like_trace_cmd() {
        let a = args("tracectl report --ts2secs 2 -i a -i b");
        assert_eq!(ts2secs_per_file(&a, &[2], 2), [Some(2), Some(2)]);
        let a = args("tracectl report -i a --ts2secs 3 -i b");
        assert_eq!(ts2secs_per_file(&a, &[3], 2), [Some(3), Some(3)]);
        let a = args("tracectl report -i a -i b --ts2secs 2");
        assert_eq!(ts2secs_per_file(&a, &[2], 2), [None, Some(2)]);
        let a = args("tracectl report -i a --ts2secs 3 -i b --ts2secs 5 -i c");
        assert_eq!(
            ts2secs_per_file(&a, &[3, 5], 3),
            [Some(3), Some(5), Some(3)]
        );
        let a = args("tracectl report --ts2secs=7 a");
        assert_eq!(ts2secs_per_file(&a, &[7], 1), [Some(7)]);
    }

    /// A -F belongs to the -i before it; one before any -i to the first file.
    #[test]
    fn filters_bind_to_the_file_before_them() {
        let a = args("tracectl report -F x -i a -F y -i b -Fz -v -F w");
        assert_eq!(filter_files(&a, 4), [0, 0, 1, 1]);
        let a = args("tracectl report -ia -F -i -ib -F x");
        assert_eq!(filter_files(&a, 2), [0, 1]);
        let a = args("tracectl report -F x a");
        assert_eq!(filter_files(&a, 1), [0]);
    }
}
