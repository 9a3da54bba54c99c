//! `report` over trace.dat files: open them, then list their events, their CPUs' first and
//! last records, their buffer statistics, a latency tracer's text, or the report proper
//! (`--json`, `--style kernel` or trace-cmd's text, each buffer instance an input of its
//! own). The command line fills [`FilesOptions`] and prints the [`Note`]s it is handed.

use std::fmt;
use std::io::{self, Write};
use std::path::PathBuf;

use crate::dat::{BufferData, DatError, DatFile, TsChoices};
use crate::event::Record;
use crate::render::tracecmd::{
    filter_test_strings, write_time, Cmdlines, DatCatalog, DatSource, DiffUnit, EventFilter,
    EventPatterns, FilterError, RecordSource, ThreadedSource, TimeFormat, TraceCmdStyle,
};
use crate::session::profile_hooks::{HookError, ProfileHook};
use crate::session::report::{
    clock_of, kernel_or_json, write_report, ReportError, ReportInput, ReportOptions, ReportSummary,
    ReportThreads, WholeLines,
};
use crate::tracefs::{cpus_in_list, CpuListError};

/// What to print of the files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilesMode {
    /// The events whose formats each file holds (`-E`).
    ListEvents,
    /// The CPUs with data (`--cpus`), with their first and/or last record's time
    /// (`--first-event`, `--last-event`).
    CpuList {
        /// Each CPU's first record.
        first: bool,
        /// Each CPU's last record.
        last: bool,
    },
    /// The kernel buffer statistics stored in each file (`--stat`).
    Stat,
    /// The uname each file recorded, then its version line (`--uname`).
    Uname,
    /// The version of trace-cmd that recorded each file (`--version`).
    Version,
    /// The byte order of the first file and of this machine (`-e`).
    Endian,
    /// The page size of the first file and of this machine (`-p`).
    PageSize,
    /// The first file's kallsyms, sorted by address (`-f`).
    Functions,
    /// The first file's `trace_printk` strings, sorted by address (`-P`).
    Printk,
    /// The event formats stored in the first file (`--events`), or those a
    /// `[SYSTEM:]EVENT` regex pair matches (`--event`).
    EventFormats(Option<String>),
    /// Whether every event format of the first file parses (`--check-events`): nothing is
    /// printed, [`FilesError::FormatsNotParsed`] says they do not.
    CheckEvents,
    /// The records (a latency tracer's text as it is).
    Report,
}

/// More of trace-cmd report's options (all off by default).
#[derive(Debug, Clone, Default)]
pub struct TraceCmdOptions {
    /// `-O [PLUGIN:]OPTION[=VALUE]` plugin options, in the order given.
    pub plugin_options: Vec<String>,
    /// `-N` (and `-L`): no plugins; every event prints its print fmt.
    pub no_plugins: bool,
    /// `-n REGEX`: events whose plugin is not used.
    pub no_handler: Vec<String>,
    /// `-r REGEX`: events printed as raw fields.
    pub print_raw: Vec<String>,
    /// `-I`: leave out records written in hard interrupt context.
    pub no_hardirq: bool,
    /// `-S`: leave out records written in soft interrupt context.
    pub no_softirq: bool,
    /// `--ts-diff`: each record's delta from the one printed before.
    pub ts_diff: bool,
    /// `--ts-check`: warn about a timestamp going backwards.
    pub ts_check: bool,
    /// `--ts2secs HZ` of each file (by index; missing: none): its timestamps are ticks of
    /// this frequency.
    pub ts2secs: Vec<Option<u64>>,
    /// `--nodate`: ignore the file's DATE offset.
    pub nodate: bool,
    /// `--raw-ts`: the stored timestamps, without any of the file's adjustments.
    pub raw_ts: bool,
    /// `--align-ts`: timestamps relative to the first record of the files.
    pub align_ts: bool,
    /// `-T` (with `-F`): print each filter as libtraceevent keeps it for every event it
    /// names, instead of the report.
    pub test_filters: bool,
    /// The file (by index) each `-F` filter belongs to, as trace-cmd binds them: the
    /// `-i` before it, the first file for one before any `-i`. Empty: every filter
    /// applies to every file.
    pub filter_files: Vec<usize>,
    /// Whether the report's second thread also writes whole lines (the output is the
    /// same; tests run each way).
    pub whole_lines: WholeLines,
    /// Whether the report runs on several threads (the output is the same; tests run
    /// each way).
    pub threads: ReportThreads,
}

impl TraceCmdOptions {
    /// Whether `-F` filter `filter` (its index) applies to file `file` (its index).
    pub fn filter_applies(&self, filter: usize, file: usize) -> bool {
        self.filter_files.get(filter).map_or(true, |&f| f == file)
    }
}

/// The output style of the report proper.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilesStyle {
    /// trace-cmd's text.
    TraceCmd,
    /// The kernel's own `trace` text.
    Kernel,
    /// A style of another name: refused when the report proper starts.
    Other(String),
}

/// Options of a report over trace.dat files.
#[derive(Debug, Clone)]
pub struct FilesOptions {
    /// The files, in the order given.
    pub files: Vec<PathBuf>,
    /// What to print.
    pub mode: FilesMode,
    /// `--cpu` lists: only these CPUs (empty: all).
    pub cpu_lists: Vec<String>,
    /// `-F` filters, in the order given.
    pub filters: Vec<String>,
    /// Filters from this index on remove the records they match (those after `-v`).
    pub first_negated: usize,
    /// Nanoseconds added to each file's timestamps (`--ts-offset`); None when an offset
    /// came before any file (refused when trace-cmd's text report starts).
    pub ts_offsets: Option<Vec<i64>>,
    /// One JSON object per record.
    pub json: bool,
    /// The text style.
    pub style: FilesStyle,
    /// Timestamps in nanoseconds (`-t`).
    pub nsecs: bool,
    /// Latency format (`-l`).
    pub latency: bool,
    /// Raw field values (`-R`).
    pub raw: bool,
    /// No warnings about the files themselves or their formats (`-q`).
    pub quiet: bool,
    /// After the report, the events whose print fmt could not be evaluated.
    pub verbose: bool,
    /// trace-cmd report's other options.
    pub more: TraceCmdOptions,
    /// `-w`: wakeup latencies (one file only).
    pub wakeup: bool,
    /// `--profile`: each task's time per event instead of the records.
    pub profile: bool,
    /// `-G`: with `profile`, irq and softirq pairs belong to per-CPU global tasks.
    pub profile_global: bool,
    /// `-H`: with `profile`, more event pairs to time.
    pub profile_hooks: Vec<ProfileHook>,
    /// `--by-comm`: with `profile`, the tasks of one comm merged into one group.
    pub profile_by_comm: bool,
}

/// A message for the caller to show, as it comes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    /// A warning about the data, a filter or a format.
    Warning(String),
    /// An event whose records were printed as fields, and why (`verbose`).
    Fallback(String),
}

/// A report over files that failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum FilesError {
    /// A file could not be read as a trace.dat file.
    Open {
        /// The file.
        path: PathBuf,
        /// Why.
        source: DatError,
    },
    /// Reading a file failed.
    Dat(DatError),
    /// Reading a file failed while doing `what`.
    Reading {
        /// What was being done, naming the file.
        what: String,
        /// Why it failed.
        source: DatError,
    },
    /// A `--cpu` list does not parse or names a CPU past the files' last.
    CpuList {
        /// The list as given.
        list: String,
        /// The files, comma separated.
        files: String,
        /// Why.
        source: CpuListError,
    },
    /// A latency trace given with other files.
    LatencyMerged(PathBuf),
    /// A style of an unknown name.
    UnknownStyle(String),
    /// `--json` or `--style kernel` with several files.
    OneFileOnly,
    /// `-w` with several files.
    WakeupOneFile,
    /// A `-F` filter that does not apply to a file (`file` is None for the one file of
    /// `--json` and `--style kernel`).
    Filter {
        /// The file.
        file: Option<PathBuf>,
        /// Why.
        source: FilterError,
    },
    /// A `--ts-offset` before any file.
    TsOffsetBeforeFile,
    /// A `-O` plugin option that is not known.
    PluginOption(crate::render::plugins::PluginOptionError),
    /// A `-n`, `-r` or `--event` regex that does not compile.
    Regex {
        /// The option.
        option: &'static str,
        /// Why.
        why: String,
    },
    /// An option that only applies to trace-cmd's text, given with `--json` or
    /// `--style kernel`.
    TextOnly(&'static str),
    /// `--check-events`: this many event formats of the file do not parse.
    FormatsNotParsed {
        /// The file.
        file: PathBuf,
        /// The formats, `system:name: why` each.
        failures: Vec<String>,
    },
    /// The report proper failed.
    Report(ReportError),
    /// Writing the output failed.
    Output(io::Error),
}

impl fmt::Display for FilesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FilesError::Open { path, .. } => {
                write!(f, "cannot read {} as a trace.dat file", path.display())
            }
            FilesError::Dat(e) => write!(f, "{e}"),
            FilesError::Reading { what, .. } => write!(f, "{what}"),
            FilesError::CpuList { list, files, .. } => write!(f, "--cpu {list} (in {files})"),
            FilesError::LatencyMerged(path) => write!(
                f,
                "{} is a latency trace (text), which cannot be merged with other files; report it alone",
                path.display()
            ),
            FilesError::UnknownStyle(s) => {
                write!(f, "unknown --style '{s}': use trace-cmd or kernel")
            }
            FilesError::OneFileOnly => {
                write!(f, "--json and --style kernel read one file; give a single -i")
            }
            FilesError::WakeupOneFile => {
                write!(f, "-w (wakeup latency) reads one file; give a single -i")
            }
            FilesError::Filter { file: None, source } => write!(f, "{source}"),
            FilesError::Filter {
                file: Some(path),
                source,
            } => write!(f, "{source} (in {})", path.display()),
            FilesError::TsOffsetBeforeFile => {
                write!(f, "--ts-offset must come after the -i file it shifts")
            }
            FilesError::PluginOption(e) => write!(f, "{e}"),
            FilesError::Regex { option, why } => write!(f, "{option}: {why}"),
            FilesError::TextOnly(option) => write!(
                f,
                "{option} applies to trace-cmd's text only: leave out --json and --style kernel"
            ),
            FilesError::FormatsNotParsed { file, failures } => write!(
                f,
                "{} of the event formats in {} do not parse: {}",
                failures.len(),
                file.display(),
                failures.join("; ")
            ),
            FilesError::Report(e) => write!(f, "{e}"),
            FilesError::Output(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for FilesError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FilesError::Open { source, .. } | FilesError::Reading { source, .. } => Some(source),
            FilesError::CpuList { source, .. } => Some(source),
            FilesError::PluginOption(e) => Some(e),
            // Their own text is this error's; the chain goes on with their causes.
            FilesError::Dat(e) => e.source(),
            FilesError::Report(e) => e.source(),
            FilesError::Output(e) => e.source(),
            _ => None,
        }
    }
}

impl From<io::Error> for FilesError {
    fn from(e: io::Error) -> FilesError {
        FilesError::Output(e)
    }
}

impl From<DatError> for FilesError {
    fn from(e: DatError) -> FilesError {
        FilesError::Dat(e)
    }
}

/// Open `opts.files` and write what `opts.mode` asks for to `out`, handing each warning
/// to `note` as it comes. Returns the report's summary when the records were reported.
pub fn report_files(
    opts: &FilesOptions,
    out: &mut dyn Write,
    note: &mut dyn FnMut(Note),
) -> Result<Option<ReportSummary>, FilesError> {
    let files = &opts.files;
    // Options are checked before any file is read.
    // Each input file loads the plugins once, which applies a `-O` without value once.
    let plugin_options =
        crate::render::plugins::PluginOptions::parse(&opts.more.plugin_options, files.len())
            .map_err(FilesError::PluginOption)?;
    let patterns = |option: &'static str, v: &[String]| {
        EventPatterns::new(v).map_err(|why| FilesError::Regex { option, why })
    };
    let no_handler = patterns("-n", &opts.more.no_handler)?;
    let print_raw = patterns("-r", &opts.more.print_raw)?;
    let event_regex = match &opts.mode {
        FilesMode::EventFormats(Some(r)) => {
            Some(EventRegex::new(r).map_err(|why| FilesError::Regex {
                option: "--event",
                why,
            })?)
        }
        _ => None,
    };
    if opts.json || opts.style != FilesStyle::TraceCmd {
        let m = &opts.more;
        for (on, option) in [
            (m.no_plugins, "-N"),
            (!m.no_handler.is_empty(), "-n"),
            (!m.print_raw.is_empty(), "-r"),
            (m.no_hardirq, "-I"),
            (m.no_softirq, "-S"),
            (m.ts_diff, "--ts-diff"),
            (m.ts_check, "--ts-check"),
            (m.ts2secs.iter().any(Option::is_some), "--ts2secs"),
            (m.nodate, "--nodate"),
            (m.raw_ts, "--raw-ts"),
            (m.align_ts, "--align-ts"),
            (!m.plugin_options.is_empty(), "-O"),
        ] {
            if on && opts.mode == FilesMode::Report {
                return Err(FilesError::TextOnly(option));
            }
        }
    }
    if opts.wakeup && opts.mode == FilesMode::Report && files.len() > 1 {
        return Err(FilesError::WakeupOneFile);
    }
    let mut dats = Vec::new();
    for f in files {
        let dat = DatFile::open(f).map_err(|source| FilesError::Open {
            path: f.clone(),
            source,
        })?;
        if !opts.quiet {
            // Each warning names the file already.
            for w in dat.warnings() {
                note(Note::Warning(w.to_string()));
            }
        }
        dats.push(dat);
    }
    // trace-cmd reads the hooks a file recorded (`record -H`) when it opens the file and
    // prints each, whatever the report is.
    for (f, dat) in files.iter().zip(&dats) {
        for hook in recorded_hooks(dat) {
            match hook {
                Ok(h) => writeln!(out, "{}", h.trace_cmd_line())?,
                Err(e) => note(Note::Warning(format!("{}: {e}", f.display()))),
            }
        }
    }

    match &opts.mode {
        FilesMode::ListEvents => {
            // trace-cmd lists the first file's events only.
            list_events(&dats[..1], out)?;
            return Ok(None);
        }
        FilesMode::CpuList { first, last } => {
            cpu_list(opts, &dats, *first, *last, out, note)?;
            return Ok(None);
        }
        FilesMode::Stat => {
            stat(opts, &dats, out)?;
            return Ok(None);
        }
        FilesMode::Uname | FilesMode::Version => {
            uname_version(opts, &dats, out)?;
            return Ok(None);
        }
        FilesMode::Endian => {
            let name = |big: bool| if big { "big" } else { "little" };
            writeln!(
                out,
                "file is {} endian and host is {} endian",
                name(dats[0].endian() == crate::endian::Endianness::Big),
                name(cfg!(target_endian = "big"))
            )?;
            out.flush()?;
            return Ok(None);
        }
        FilesMode::PageSize => {
            writeln!(
                out,
                "file page size is {}, and host page size is {}",
                dats[0].header().page_size,
                crate::perf::page_size()
            )?;
            out.flush()?;
            return Ok(None);
        }
        FilesMode::Functions => {
            for (addr, name, module) in
                crate::render::plugins::kallsyms_listing(dats[0].kallsyms()?)
            {
                match module {
                    Some(m) => writeln!(out, "{addr:016x} {name} [{m}]")?,
                    None => writeln!(out, "{addr:016x} {name}")?,
                }
            }
            out.flush()?;
            return Ok(None);
        }
        FilesMode::Printk => {
            printk_list(&dats[0], out)?;
            return Ok(None);
        }
        FilesMode::EventFormats(_) => {
            event_formats(&dats[0], event_regex.as_ref(), out)?;
            return Ok(None);
        }
        FilesMode::CheckEvents => {
            // trace-cmd 3.1.6 fails only for a format whose name or ID cannot be read
            // (libtraceevent keeps an event whose fields or print fmt do not parse, and
            // reports success): the same here; `verbose` lists the others too.
            let catalog = DatCatalog::from_dat(&dats[0]);
            let registry = catalog.registry();
            let no_id: Vec<String> = registry
                .events()
                .filter(|(_, _, id)| id.is_none())
                .map(|(s, n, _)| format!("{s}:{n}"))
                .collect();
            let mut unreadable: Vec<String> = catalog
                .format_errors()
                .into_iter()
                .map(|(sys, e)| format!("{sys}: {e}"))
                .collect();
            for f in registry.check_all() {
                if no_id.contains(&f.event) {
                    unreadable.push(format!("{}: {}", f.event, f.message));
                } else if opts.verbose {
                    note(Note::Fallback(format!(
                        "{}: {}: the format does not parse (trace-cmd keeps the event and prints [FAILED TO PARSE]): {}",
                        files[0].display(),
                        f.event,
                        f.message
                    )));
                }
            }
            if !unreadable.is_empty() {
                return Err(FilesError::FormatsNotParsed {
                    file: files[0].clone(),
                    failures: unreadable,
                });
            }
            return Ok(None);
        }
        FilesMode::Report => {}
    }

    if opts.more.test_filters && !opts.filters.is_empty() {
        // As trace-cmd: the first file's filters, then nothing else.
        let catalog = DatCatalog::from_dat(&dats[0]);
        for (_, text) in opts
            .filters
            .iter()
            .enumerate()
            .filter(|(i, _)| opts.more.filter_applies(*i, 0))
        {
            let lines =
                filter_test_strings(&catalog, text).map_err(|source| FilesError::Filter {
                    file: Some(files[0].clone()),
                    source,
                })?;
            for (event, shown) in lines {
                writeln!(out, " '{event}: {shown}'")?;
            }
        }
        out.flush()?;
        return Ok(None);
    }

    let cpus = if opts.cpu_lists.is_empty() {
        None
    } else {
        // CPUs past the last buffer's select nothing (and are not listed).
        let (_, count) = cpu_numbering(&dats);
        let mut v = Vec::new();
        for c in &opts.cpu_lists {
            v.extend(
                cpus_in_list(c, count).map_err(|source| FilesError::CpuList {
                    list: c.clone(),
                    files: files_list(files),
                    source,
                })?,
            );
        }
        Some(v)
    };

    // A latency tracer's recording holds the kernel's text, which is printed as it is
    // after the `cpus=` line (trace-cmd does the same; it cannot be merged with others).
    if let Some(i) = dats.iter().position(|d| {
        matches!(
            d.buffers().first().map(|b| &b.data),
            Some(BufferData::Latency { .. })
        )
    }) {
        if dats.len() > 1 {
            return Err(FilesError::LatencyMerged(files[i].clone()));
        }
        let text = dats[i]
            .latency_text(0)
            .map_err(|source| FilesError::Reading {
                what: format!("reading the latency text of {}", files[i].display()),
                source,
            })?;
        writeln!(out, "cpus={}", dats[i].nr_cpus())?;
        out.write_all(&text)?;
        out.write_all(b"\n")?;
        out.flush()?;
        return Ok(None);
    }
    // The catalogs before the threads that read them (symbol tables are built on first use).
    let catalogs: Vec<DatCatalog> = dats.iter().map(DatCatalog::from_dat).collect();
    let text = TextChoices {
        plugin_options,
        no_handler,
        print_raw,
    };
    std::thread::scope(|scope| report_dats(scope, opts, &text, &dats, &catalogs, cpus, out, note))
}

/// The parsed text options of the report proper.
struct TextChoices {
    plugin_options: crate::render::plugins::PluginOptions,
    no_handler: EventPatterns,
    print_raw: EventPatterns,
}

/// trace-cmd's `--event [SYSTEM:]EVENT`: two case-insensitive basic regexes, unanchored;
/// without a colon the one regex is tried on the system (all its events) and on each
/// event's name.
struct EventRegex {
    system: regex::Regex,
    event: regex::Regex,
    /// A colon was given: a system that does not match prints nothing.
    unique: bool,
}

impl EventRegex {
    fn new(text: &str) -> Result<EventRegex, String> {
        // As strtok splits: empty pieces are skipped, a third piece is ignored.
        let mut parts = text.split(':').filter(|p| !p.is_empty());
        let Some(system) = parts.next() else {
            return Err(format!(
                "{text:?} names no event: give [SYSTEM:]EVENT, e.g. sched:switch"
            ));
        };
        let event = parts.next();
        Ok(EventRegex {
            system: crate::bre::basic_regex(system)?,
            event: crate::bre::basic_regex(event.unwrap_or(system))?,
            unique: event.is_some(),
        })
    }
}

/// `--events`, `--event`: the event formats as stored in the file, each system's after a
/// `system:` line. (trace-cmd 3.1.6 prints these for version 6 files only: it has already
/// read a version 7 file's formats when it gets to them, and prints nothing.)
fn event_formats(dat: &DatFile, regex: Option<&EventRegex>, out: &mut dyn Write) -> io::Result<()> {
    let mut last_system: Option<&str> = None;
    for (system, text) in dat.event_formats() {
        // The text up to a NUL, as printf's `%.*s` prints it.
        let text = text.split('\0').next().unwrap_or("");
        let print = match regex {
            None => true,
            Some(r) => {
                let sys_match = r.system.is_match(system);
                if sys_match && !r.unique {
                    true
                } else if !sys_match && r.unique {
                    false
                } else {
                    let first = text.lines().next().unwrap_or("");
                    r.event
                        .is_match(first.strip_prefix("name: ").unwrap_or(first))
                }
            }
        };
        if !print {
            continue;
        }
        if last_system != Some(system.as_str()) {
            write!(out, "\nsystem: {system}\n")?;
            last_system = Some(system.as_str());
        }
        writeln!(out, "{text}")?;
    }
    out.flush()
}

/// `-P`: the `trace_printk` strings, as libtraceevent keeps them (quotes and a final
/// `\n` taken off, escapes left as written), sorted by address.
fn printk_list(dat: &DatFile, out: &mut dyn Write) -> io::Result<()> {
    let mut v: Vec<(u64, &str)> = Vec::new();
    for line in dat.printk_formats().split('\n').filter(|l| !l.is_empty()) {
        // `ADDR : "TEXT"`: the address up to the first colon, the text after its blank.
        let (addr, text) = line.split_once(':').unwrap_or((line, ""));
        let digits = addr.trim_start();
        let digits = digits
            .strip_prefix("0x")
            .or_else(|| digits.strip_prefix("0X"))
            .unwrap_or(digits);
        let end = digits
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(digits.len());
        let addr = u64::from_str_radix(&digits[..end], 16).unwrap_or(0);
        let text = text.get(1..).unwrap_or("");
        let text = text.strip_prefix('"').unwrap_or(text);
        let text = text.strip_suffix('"').unwrap_or(text);
        let text = text.strip_suffix("\\n").unwrap_or(text);
        v.push((addr, text));
    }
    // libtraceevent lists them newest first, then sorts by address (glibc's stable sort).
    v.reverse();
    v.sort_by_key(|e| e.0);
    for (addr, text) in v {
        writeln!(out, "{addr:016x} {text}")?;
    }
    out.flush()
}

/// `--uname`, `--version`: each file's `cpus=` line, then its uname (`--uname` only) and
/// the version of trace-cmd that recorded it.
fn uname_version(opts: &FilesOptions, dats: &[DatFile], out: &mut dyn Write) -> io::Result<()> {
    let names: Vec<String> = opts.files.iter().map(|f| base_name(f)).collect();
    let width = names.iter().map(String::len).max().unwrap_or(0);
    for (dat, name) in dats.iter().zip(&names) {
        if dats.len() > 1 {
            write!(out, "{name:>width$}: ")?;
        }
        writeln!(out, "cpus={}", dat.nr_cpus())?;
        if opts.mode == FilesMode::Uname {
            match &dat.options().uname {
                Some(u) => writeln!(out, "{u}")?,
                None => writeln!(out, " uname was not recorded in this file")?,
            }
        }
        match &dat.options().version {
            Some(v) => writeln!(out, "{v}")?,
            None => writeln!(out, " version was not recorded in this file")?,
        }
    }
    out.flush()
}

/// The event hooks a file recorded (`record -H`), in the file's order.
fn recorded_hooks(dat: &DatFile) -> impl Iterator<Item = Result<ProfileHook, HookError>> + '_ {
    dat.options()
        .hooks
        .iter()
        .map(|t| ProfileHook::parse(t.trim_end_matches('\0')))
}

/// trace-cmd labels a file by its base name.
fn base_name(f: &std::path::Path) -> String {
    f.file_name()
        .map_or_else(|| f.display().to_string(), |n| n.to_string_lossy().into())
}

/// `-E`: each file's events, sorted, as `system:name`.
fn list_events(dats: &[DatFile], out: &mut dyn Write) -> io::Result<()> {
    for dat in dats {
        let mut names: Vec<(String, String)> = Vec::new();
        let catalog = DatCatalog::from_dat(dat);
        for (s, n, _) in catalog.registry().events() {
            names.push((s.to_string(), n.to_string()));
        }
        names.sort();
        for (s, n) in names {
            writeln!(out, "{s}:{n}")?;
        }
    }
    out.flush()
}

/// `--cpus`, `--first-event`, `--last-event`: the CPUs with data of each file.
fn cpu_list(
    opts: &FilesOptions,
    dats: &[DatFile],
    first: bool,
    last: bool,
    out: &mut dyn Write,
    note: &mut dyn FnMut(Note),
) -> Result<(), FilesError> {
    for (dat, f) in dats.iter().zip(&opts.files) {
        let clock = clock_of(dat);
        let time = TimeFormat::for_clock(&clock, dat.ts_adjust().tsc2nsec.is_some(), opts.nsecs);
        writeln!(out, "List of CPUs in {} with data:", f.display())?;
        let bounds = DatSource::cpu_bounds(dat, 0).map_err(|source| FilesError::Reading {
            what: format!("reading {}", f.display()),
            source,
        })?;
        for w in bounds.warnings {
            note(Note::Warning(w));
        }
        // trace-cmd prints a record of an event the file has no format for as
        // `[UNKNOWN EVENT]` instead of its time.
        let catalog = DatCatalog::from_dat(dat);
        let push = |line: &mut Vec<u8>, (ts, id): (u64, Option<u16>)| {
            if id.is_some_and(|id| catalog.registry().get(id).is_some()) {
                push_ts(line, ts, time);
            } else {
                line.extend_from_slice(b"[UNKNOWN EVENT]");
            }
        };
        for b in bounds.cpus {
            let mut line = format!("  {}", b.cpu).into_bytes();
            if first {
                line.extend_from_slice(b"\tFirst event:");
                push(&mut line, b.first);
            }
            if last {
                line.extend_from_slice(b"\tLast event:");
                push(&mut line, b.last);
            }
            line.push(b'\n');
            out.write_all(&line)?;
        }
    }
    out.flush()?;
    Ok(())
}

/// `--stat`: the kernel buffer statistics each file holds, and where its CPUs' data is.
fn stat(opts: &FilesOptions, dats: &[DatFile], out: &mut dyn Write) -> Result<(), FilesError> {
    let names: Vec<String> = opts.files.iter().map(|f| base_name(f)).collect();
    let width = names.iter().map(String::len).max().unwrap_or(0);
    for (dat, name) in dats.iter().zip(&names) {
        // With several files, each one's `cpus=` line has its label (as every report's).
        if dats.len() > 1 {
            write!(out, "{name:>width$}: ")?;
        }
        writeln!(out, "cpus={}", dat.nr_cpus())?;
        writeln!(
            out,
            "\nKernel buffer statistics:\n  Note: \"entries\" are the entries left in the kernel ring buffer and are not\n        recorded in the trace data. They should all be zero.\n"
        )?;
        // The CPUSTAT texts start with their own `CPU: N` line.
        for text in &dat.options().cpustats {
            out.write_all(text.trim_end_matches('\0').as_bytes())?;
            writeln!(out)?;
        }
        writeln!(out)?;
        if let Some(b) = dat.buffers().first() {
            // trace-cmd reads compressed data into a scratch file that starts one page
            // in, CPU after CPU, and reports those offsets and uncompressed sizes.
            let mut scratch = u64::from(dat.header().page_size);
            for (i, c) in b.cpus().iter().enumerate() {
                let (offset, size) = if b.compressed {
                    let mut pages = dat.cpu_pages(0, i)?;
                    let mut n = 0u64;
                    while let Some(p) = pages.next_page()? {
                        n += p.len() as u64;
                    }
                    let at = scratch;
                    scratch += n;
                    (at, n)
                } else {
                    (c.offset, c.size)
                };
                writeln!(
                    out,
                    "CPU{} data recorded at offset=0x{offset:x}\n    {size} bytes in size",
                    c.cpu
                )?;
            }
        }
    }
    out.flush()?;
    Ok(())
}

/// A buffer's records as the report loop reads them: decoded on a thread of their own
/// or in the loop.
type OpenedSource<'s> = Box<dyn RecordSource + 's>;

/// The report proper (`--json`, `--style kernel` or trace-cmd's text) of opened files.
#[allow(clippy::too_many_arguments)]
fn report_dats<'s>(
    scope: &'s std::thread::Scope<'s, '_>,
    opts: &FilesOptions,
    text: &TextChoices,
    dats: &'s [DatFile],
    catalogs: &'s [DatCatalog],
    cpus: Option<Vec<u32>>,
    out: &mut dyn Write,
    note: &mut dyn FnMut(Note),
) -> Result<Option<ReportSummary>, FilesError> {
    let files = &opts.files;
    let first_negated = opts.first_negated;
    // trace-cmd's text: every buffer's pages are decompressed and merged on threads of
    // their own (when the report is threaded, see ReportThreads), which start now, while the formats and symbol tables are read.
    // Those threads also compile each event's format the first time they meet it, which
    // the report loop would otherwise do on its way to that event's first line.
    let text_style = !opts.json && opts.style == FilesStyle::TraceCmd;
    let data_bytes: u64 = dats
        .iter()
        .flat_map(|d| d.buffers())
        .flat_map(|b| b.cpus())
        .map(|c| c.size)
        .sum();
    // (Without the threads the loop compiles formats and builds the function map itself,
    // on first use.)
    let threads = opts.more.threads.decided(data_bytes);
    let threaded = threads == ReportThreads::Always;
    let hz = |file: usize| opts.more.ts2secs.get(file).copied().flatten();
    let spawn = |file: usize, dat: &'s DatFile, catalog: &'s DatCatalog, b: usize| {
        let choices = TsChoices {
            raw: opts.more.raw_ts,
            ignore_date: opts.more.nodate,
            hz: hz(file),
        };
        DatSource::open_adjusted(dat, b, dat.ts_adjust_with(&choices)).map(|s| {
            if !threaded {
                return Box::new(s) as OpenedSource<'s>;
            }
            let registry = catalog.registry();
            let endian = dat.endian();
            let mut seen = vec![0u64; 1024];
            let t = ThreadedSource::spawn_with(scope, s, move |data: &[u8]| {
                let Some(id) = (Record {
                    cpu: 0,
                    ts: 0,
                    data,
                })
                .event_id(endian) else {
                    return;
                };
                let (word, bit) = (usize::from(id) / 64, 1u64 << (id % 64));
                if seen[word] & bit == 0 {
                    seen[word] |= bit;
                    let _ = registry.get(id);
                    // The first event that may print a function name starts the function
                    // map (kallsyms decompressed and read) on a thread of its own: the
                    // report loop, still waiting for its first batch, would otherwise
                    // build it on its way to that record's line.
                    if catalog.may_print_functions(id) && catalog.claim_functions() {
                        scope.spawn(|| catalog.build_functions());
                    }
                }
            });
            Box::new(t) as OpenedSource<'s>
        })
    };
    let mut early: Vec<Vec<Option<Result<OpenedSource<'s>, DatError>>>> = dats
        .iter()
        .zip(catalogs)
        .enumerate()
        .map(|(file, (dat, catalog))| {
            (0..if text_style { dat.buffers().len() } else { 0 })
                .map(|b| Some(spawn(file, dat, catalog, b)))
                .collect()
        })
        .collect();
    if !text_style {
        for (c, dat) in catalogs.iter().zip(dats) {
            c.load_kallsyms(dat)?;
        }
        if let FilesStyle::Other(name) = &opts.style {
            return Err(FilesError::UnknownStyle(name.clone()));
        }
        if dats.len() != 1 {
            return Err(FilesError::OneFileOnly);
        }
        let mut filter = EventFilter::new();
        for (i, text) in opts.filters.iter().enumerate() {
            let warnings = filter
                .add(&catalogs[0], text, i >= first_negated)
                .map_err(|source| FilesError::Filter { file: None, source })?;
            for w in warnings {
                note(Note::Warning(w));
            }
        }
        let warnings = kernel_or_json(
            &dats[0],
            &catalogs[0],
            &filter,
            cpus.as_deref(),
            opts.json,
            out,
        )
        .map_err(FilesError::Report)?;
        for w in warnings {
            note(Note::Warning(w));
        }
        return Ok(None);
    }
    let offsets = opts
        .ts_offsets
        .as_ref()
        .ok_or(FilesError::TsOffsetBeforeFile)?;
    let mut inputs = Vec::new();
    // Buffer instances come after every file's top buffer, as trace-cmd orders them (ties
    // in time go to the earlier input).
    let mut instance_inputs = Vec::new();
    let (cpu_bases, _) = cpu_numbering(dats);
    let time_format = |dat: &DatFile, clock: Option<&String>| {
        if opts.more.raw_ts {
            // trace-cmd prints raw timestamps as a raw clock's.
            TimeFormat::Raw
        } else {
            let clock = clock.cloned().unwrap_or_else(|| clock_of(dat));
            TimeFormat::for_clock(&clock, dat.ts_adjust().tsc2nsec.is_some(), opts.nsecs)
        }
    };
    // trace-cmd sets the function plugin's one format as it opens each file: the last
    // file's wins.
    let repeat_time = match dats.last() {
        Some(dat) => time_format(dat, None),
        None => TimeFormat::Usecs,
    };
    for (file_index, ((dat, f), catalog)) in dats.iter().zip(files).zip(catalogs).enumerate() {
        dat.buffer(0)?;
        let mut cmdlines = Cmdlines::new();
        cmdlines.load(dat.cmdlines());
        for (b, buffer) in dat.buffers().iter().enumerate() {
            let m = &opts.more;
            let time = time_format(dat, buffer.clock.as_ref());
            // trace-cmd rounds the deltas to microseconds for a file with a trace clock,
            // unless -t or --ts2secs.
            let has_clock = buffer.clock.is_some() || dat.options().trace_clock.is_some();
            let ts_diff =
                m.ts_diff
                    .then_some(if has_clock && hz(file_index).is_none() && !opts.nsecs {
                        DiffUnit::Usecs
                    } else {
                        DiffUnit::Raw
                    });
            let style = TraceCmdStyle {
                time,
                latency: opts.latency,
                raw: opts.raw,
                plugin_options: text.plugin_options,
                plugins: !m.no_plugins,
                no_handler: text.no_handler.clone(),
                print_raw: text.print_raw.clone(),
                ts_diff,
                repeat_time,
            };
            let mut filter = EventFilter::new();
            for (i, text) in opts.filters.iter().enumerate() {
                if !opts.more.filter_applies(i, file_index) {
                    continue;
                }
                let warnings = filter
                    .add(catalog, text, i >= first_negated)
                    .map_err(|source| FilesError::Filter {
                        file: Some(f.clone()),
                        source,
                    })?;
                // Every buffer of a file has the same events: one warning per file.
                if b == 0 {
                    for w in warnings {
                        note(Note::Warning(w));
                    }
                }
            }
            let source = early[file_index][b]
                .take()
                .unwrap_or_else(|| spawn(file_index, dat, catalog, b))
                .map_err(|source| FilesError::Reading {
                    what: format!(
                        "reading the trace data of {} (buffer {:?})",
                        f.display(),
                        buffer.name
                    ),
                    source,
                })?;
            let base = base_name(f);
            let input = ReportInput {
                name: if b == 0 { base } else { buffer.name.clone() },
                instance: b > 0,
                file: file_index,
                catalog,
                style,
                cmdlines: cmdlines.clone(),
                cpus: dat.nr_cpus() as usize,
                long_size: dat.long_size(),
                profile_hooks: recorded_hooks(dat).filter_map(Result::ok).collect(),
                cpu_base: cpu_bases[file_index][b],
                ts_offset: offsets.get(file_index).copied().unwrap_or(0),
                filter,
                source,
            };
            if b == 0 {
                inputs.push(input);
            } else {
                instance_inputs.push(input);
            }
        }
    }
    inputs.extend(instance_inputs);
    if opts.more.align_ts {
        // trace-cmd subtracts the earliest first record of the files (their top buffers)
        // from every input.
        let mut first: Option<u64> = None;
        for input in inputs.iter_mut().filter(|i| !i.instance) {
            let ts = input.source.peek_ts().map_err(|source| {
                FilesError::Report(ReportError::Input {
                    name: input.name.clone(),
                    source,
                })
            })?;
            if let Some(ts) = ts {
                let ts = ts.wrapping_add_signed(input.ts_offset);
                first = Some(first.map_or(ts, |f| f.min(ts)));
            }
        }
        if let Some(first) = first {
            for input in &mut inputs {
                input.ts_offset = input.ts_offset.wrapping_sub(first as i64);
            }
        }
    }
    let report_opts = ReportOptions {
        cpus,
        no_hardirq: opts.more.no_hardirq,
        no_softirq: opts.more.no_softirq,
        ts_check: opts.more.ts_check,
        wakeup: opts.wakeup,
        profile: opts.profile,
        profile_global: opts.profile_global,
        profile_hooks: opts.profile_hooks.clone(),
        profile_by_comm: opts.profile_by_comm,
        whole_lines: opts.more.whole_lines,
        threads,
        data_bytes,
    };
    let res = write_report(inputs, &report_opts, out);
    if let Ok(summary) = &res {
        for w in &summary.warnings {
            note(Note::Warning(w.clone()));
        }
    }
    // Formats are parsed as their events are met, and kallsyms is read when a record
    // first needs a symbol: the ones that failed are known now.
    for (dat, c) in dats.iter().zip(catalogs) {
        if let Some(e) = dat.kallsyms_error().filter(|_| c.functions_used()) {
            note(Note::Warning(format!(
                "{e}; addresses were printed without symbol names"
            )));
        }
    }
    if !opts.quiet {
        for (c, f) in catalogs.iter().zip(files) {
            for (sys, e) in c.format_errors() {
                note(Note::Warning(format!(
                    "{}: event format of system {sys} not understood: {e}",
                    f.display()
                )));
            }
        }
    }
    if opts.verbose {
        for (c, f) in catalogs.iter().zip(files) {
            for (event, why, n) in c.registry().fallback_report() {
                note(Note::Fallback(format!(
                    "{}: {event}: {n} records printed as fields: {why}",
                    f.display()
                )));
            }
        }
    }
    res.map(Some).map_err(FilesError::Report)
}

/// The number `--cpu` selects each buffer's first CPU by, per file and buffer, and the
/// count of numbers that select anything. trace-cmd numbers the CPUs of all the buffers it
/// reads in one run, in its order of inputs: every file's top buffer, then each file's
/// instance buffers; each buffer takes as many numbers as its file has CPUs (more when its
/// data names a higher CPU, as the last one's may).
fn cpu_numbering(dats: &[DatFile]) -> (Vec<Vec<u32>>, u32) {
    let mut bases: Vec<Vec<u32>> = dats
        .iter()
        .map(|d| vec![0; d.buffers().len().max(1)])
        .collect();
    let order = (0..dats.len())
        .map(|f| (f, 0))
        .chain((0..dats.len()).flat_map(|f| (1..dats[f].buffers().len()).map(move |b| (f, b))));
    let mut next = 0u32;
    let mut count = 0u32;
    for (f, b) in order {
        let n = dats[f].nr_cpus();
        let in_data = dats[f]
            .buffers()
            .get(b)
            .and_then(|buf| buf.cpus().iter().map(|c| c.cpu.saturating_add(1)).max())
            .unwrap_or(0);
        bases[f][b] = next;
        count = count.max(next.saturating_add(n.max(in_data)));
        next = next.saturating_add(n);
    }
    (bases, count)
}

fn files_list(files: &[PathBuf]) -> String {
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    names.join(", ")
}

fn push_ts(out: &mut Vec<u8>, ts: u64, time: TimeFormat) {
    let mut b = Vec::new();
    write_time(&mut b, ts, time);
    // The list prints the time without the report's leading space and trailing colon.
    let s = &b[..b.len() - 1];
    let s = if time == TimeFormat::Raw { s } else { &s[1..] };
    out.extend_from_slice(s);
}
