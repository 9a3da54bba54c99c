//! `tracectl report`: print trace.dat files the way `trace-cmd report` does.

use std::ffi::OsString;
use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::{bail, Context as _, Result};
use tracectl::dat::{DatError, DatFile};
use tracectl::event::Record;
use tracectl::render::tracecmd::{
    Cmdlines, DatCatalog, DatSource, EventFilter, ThreadedSource, TimeFormat, TraceCmdStyle,
};
use tracectl::session::report::{
    clock_of, kernel_or_json, write_report, ReportError, ReportInput, ReportOptions,
};
use tracectl::tracefs::cpus_in_list;

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
fn ts_offsets(
    args: &[OsString],
    values: &[i64],
    files: usize,
    positional: bool,
) -> anyhow::Result<Vec<i64>> {
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
                bail!("--ts-offset must come after the -i file it shifts");
            }
            if let (Some(v), Some(slot)) = (values.get(next), out.get_mut(seen_i - 1)) {
                *slot = *v;
            }
            next += 1;
        }
    }
    Ok(out)
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
    let mut dats = Vec::new();
    for f in &files {
        let dat = DatFile::open(f)
            .with_context(|| format!("cannot read {} as a trace.dat file", f.display()))?;
        if !args.quiet {
            // Each warning names the file already.
            for w in dat.warnings() {
                eprintln!("tracectl: warning: {w}");
            }
        }
        dats.push(dat);
    }
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 16, stdout.lock());

    if args.list_events {
        for dat in &dats {
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
        out.flush()?;
        return Ok(0);
    }

    if args.first_event || args.last_event || args.cpus {
        for (dat, f) in dats.iter().zip(files) {
            let clock = clock_of(dat);
            let time =
                TimeFormat::for_clock(&clock, dat.ts_adjust().tsc2nsec.is_some(), args.nsecs);
            writeln!(out, "List of CPUs in {} with data:", f.display())?;
            let bounds = DatSource::cpu_bounds(dat, 0)
                .with_context(|| format!("reading {}", f.display()))?;
            print_warnings(&bounds.warnings);
            // trace-cmd prints a record of an event the file has no format for as
            // `[UNKNOWN EVENT]` instead of its time.
            let catalog = DatCatalog::formats_only(dat);
            let push = |line: &mut Vec<u8>, (ts, id): (u64, Option<u16>)| {
                if id.is_some_and(|id| catalog.registry().get(id).is_some()) {
                    push_ts(line, ts, time);
                } else {
                    line.extend_from_slice(b"[UNKNOWN EVENT]");
                }
            };
            for b in bounds.cpus {
                let mut line = format!("  {}", b.cpu).into_bytes();
                if args.first_event {
                    line.extend_from_slice(b"\tFirst event:");
                    push(&mut line, b.first);
                }
                if args.last_event {
                    line.extend_from_slice(b"\tLast event:");
                    push(&mut line, b.last);
                }
                line.push(b'\n');
                out.write_all(&line)?;
            }
        }
        out.flush()?;
        return Ok(0);
    }

    if args.stat {
        for dat in &dats {
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
        return Ok(0);
    }

    let cpus = if args.cpu.is_empty() {
        None
    } else {
        // CPUs past the most any file has select nothing (and are not listed).
        let count = dats.iter().map(cpu_count).max().unwrap_or(0);
        let mut v = Vec::new();
        for c in &args.cpu {
            v.extend(
                cpus_in_list(c, count)
                    .with_context(|| format!("--cpu {c} (in {})", files_list(&files)))?,
            );
        }
        Some(v)
    };

    // A latency tracer's recording holds the kernel's text, which is printed as it is
    // after the `cpus=` line (trace-cmd does the same; it cannot be merged with others).
    if let Some(i) = dats.iter().position(|d| {
        matches!(
            d.buffers().first().map(|b| &b.data),
            Some(tracectl::dat::BufferData::Latency { .. })
        )
    }) {
        if dats.len() > 1 {
            bail!(
                "{} is a latency trace (text), which cannot be merged with other files; report it alone",
                files[i].display()
            );
        }
        let text = dats[i]
            .latency_text(0)
            .with_context(|| format!("reading the latency text of {}", files[i].display()))?;
        writeln!(out, "cpus={}", dats[i].nr_cpus())?;
        out.write_all(&text)?;
        out.write_all(b"\n")?;
        out.flush()?;
        return Ok(0);
    }
    // The catalogs before the threads that read them (their symbol tables come later).
    let catalogs: Vec<DatCatalog> = dats.iter().map(DatCatalog::formats_only).collect();
    std::thread::scope(|scope| report_dats(scope, &args, &files, &dats, &catalogs, cpus, &mut out))
}

/// The report proper (`--json`, `--style kernel` or trace-cmd's text) of opened files.
fn report_dats<'s>(
    scope: &'s std::thread::Scope<'s, '_>,
    args: &Args,
    files: &[PathBuf],
    dats: &'s [DatFile],
    catalogs: &'s [DatCatalog],
    cpus: Option<Vec<u32>>,
    out: &mut dyn Write,
) -> Result<i32> {
    let raw_args: Vec<OsString> = std::env::args_os().collect();
    let negated = negated_filters(&raw_args, args.filter.len());
    let first_negated = args.filter.len() - negated;
    // trace-cmd's text: every buffer's pages are decompressed and merged on threads of
    // their own, which start now, while the formats and symbol tables are read.
    // Those threads also compile each event's format the first time they meet it, which
    // the report loop would otherwise do on its way to that event's first line.
    let text_style = !args.json && args.style == "trace-cmd";
    let spawn = |dat: &'s DatFile, catalog: &'s DatCatalog, b: usize| {
        DatSource::open(dat, b).map(|s| {
            let registry = catalog.registry();
            let endian = dat.endian();
            let mut seen = vec![0u64; 1024];
            ThreadedSource::spawn_with(scope, s, move |data: &[u8]| {
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
                }
            })
        })
    };
    let mut early: Vec<Vec<Option<Result<ThreadedSource, DatError>>>> = dats
        .iter()
        .zip(catalogs)
        .map(|(dat, catalog)| {
            (0..if text_style { dat.buffers().len() } else { 0 })
                .map(|b| Some(spawn(dat, catalog, b)))
                .collect()
        })
        .collect();
    for (c, dat) in catalogs.iter().zip(dats) {
        c.load_functions(dat);
    }
    if args.json || args.style != "trace-cmd" {
        for (c, dat) in catalogs.iter().zip(dats) {
            c.load_kallsyms(dat);
        }
        if args.style != "trace-cmd" && args.style != "kernel" {
            bail!("unknown --style '{}': use trace-cmd or kernel", args.style);
        }
        if dats.len() != 1 {
            bail!("--json and --style kernel read one file; give a single -i");
        }
        let mut filter = EventFilter::new();
        for (i, text) in args.filter.iter().enumerate() {
            let warnings = filter
                .add(&catalogs[0], text, i >= first_negated)
                .map_err(anyhow::Error::msg)?;
            print_warnings(&warnings);
        }
        return match kernel_or_json(
            &dats[0],
            &catalogs[0],
            &filter,
            cpus.as_deref(),
            args.json,
            out,
        ) {
            Ok(warnings) => {
                print_warnings(&warnings);
                Ok(0)
            }
            Err(ReportError::Output(e)) => Err(e.into()),
            Err(e) => Err(anyhow::Error::new(e)),
        };
    }
    let offsets = ts_offsets(
        &raw_args,
        &args.ts_offset,
        dats.len(),
        args.input.is_empty(),
    )?;
    let mut inputs = Vec::new();
    // Buffer instances come after every file's top buffer, as trace-cmd orders them (ties
    // in time go to the earlier input).
    let mut instance_inputs = Vec::new();
    for (file_index, ((dat, f), catalog)) in dats.iter().zip(files).zip(catalogs).enumerate() {
        dat.buffer(0)?;
        let mut cmdlines = Cmdlines::new();
        cmdlines.load(dat.cmdlines());
        for (b, buffer) in dat.buffers().iter().enumerate() {
            let clock = buffer.clock.clone().unwrap_or_else(|| clock_of(dat));
            let style = TraceCmdStyle {
                time: TimeFormat::for_clock(&clock, dat.ts_adjust().tsc2nsec.is_some(), args.nsecs),
                latency: args.latency,
                raw: args.raw,
                fgraph_tailprint: args.plugin_option.iter().any(|o| o == "fgraph:tailprint"),
                fgraph_depth: args.plugin_option.iter().any(|o| o == "fgraph:depth"),
            };
            let mut filter = EventFilter::new();
            for (i, text) in args.filter.iter().enumerate() {
                let warnings = filter.add(catalog, text, i >= first_negated).map_err(|e| {
                    anyhow::anyhow!(
                        "{e} (in {}; try `tracectl report -E -i {}` to list its events)",
                        f.display(),
                        f.display()
                    )
                })?;
                // Every buffer of a file has the same events: one warning per file.
                if b == 0 {
                    print_warnings(&warnings);
                }
            }
            let source = early[file_index][b]
                .take()
                .unwrap_or_else(|| spawn(dat, catalog, b))
                .with_context(|| {
                    format!(
                        "reading the trace data of {} (buffer {:?})",
                        f.display(),
                        buffer.name
                    )
                })?;
            // trace-cmd labels a file by its base name.
            let base = f
                .file_name()
                .map_or_else(|| f.display().to_string(), |n| n.to_string_lossy().into());
            let input = ReportInput {
                name: if b == 0 { base } else { buffer.name.clone() },
                instance: b > 0,
                file: file_index,
                catalog,
                style,
                cmdlines: cmdlines.clone(),
                cpus: dat.nr_cpus() as usize,
                cpu_base: dat.nr_cpus().saturating_mul(b as u32),
                ts_offset: offsets.get(file_index).copied().unwrap_or(0),
                filter,
                source: Box::new(source),
            };
            if b == 0 {
                inputs.push(input);
            } else {
                instance_inputs.push(input);
            }
        }
    }
    inputs.extend(instance_inputs);
    let opts = ReportOptions { cpus };
    let res = write_report(inputs, &opts, out);
    if let Ok(summary) = &res {
        print_warnings(&summary.warnings);
    }
    // Formats are parsed as their events are met: the ones that failed are known now.
    if !args.quiet {
        for (c, f) in catalogs.iter().zip(files) {
            for (sys, e) in c.format_errors() {
                eprintln!(
                    "tracectl: warning: {}: event format of system {sys} not understood: {e}",
                    f.display()
                );
            }
        }
    }
    if args.verbose {
        for (c, f) in catalogs.iter().zip(files) {
            for (event, why, n) in c.registry().fallback_report() {
                eprintln!(
                    "tracectl: {}: {event}: {n} records printed as fields: {why}",
                    f.display()
                );
            }
        }
    }
    match res {
        Ok(_) => Ok(0),
        Err(ReportError::Output(e)) => Err(e.into()),
        Err(e) => Err(anyhow::Error::new(e)),
    }
}

/// The CPU numbers `--cpu` can select in a file: its CPUs, then each instance buffer's
/// numbered after the buffers before it (as trace-cmd numbers them; see `cpu_base`), or
/// past the highest CPU with data when the file names fewer.
fn cpu_count(dat: &DatFile) -> u32 {
    let n = dat.nr_cpus();
    dat.buffers()
        .iter()
        .enumerate()
        .map(|(b, buf)| {
            let in_data = buf.cpus().iter().map(|c| c.cpu.saturating_add(1)).max();
            n.saturating_mul(b as u32)
                .saturating_add(in_data.unwrap_or(0).max(n))
        })
        .max()
        .unwrap_or(0)
        .max(n)
}

fn files_list(files: &[PathBuf]) -> String {
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    names.join(", ")
}

/// The library's warnings (sub-buffers skipped, filter names that are no field), one
/// line each.
fn print_warnings(warnings: &[String]) {
    for w in warnings {
        eprintln!("tracectl: warning: {w}");
    }
}

fn push_ts(out: &mut Vec<u8>, ts: u64, time: TimeFormat) {
    let mut b = Vec::new();
    tracectl::render::tracecmd::write_time(&mut b, ts, time);
    // The list prints the time without the report's leading space and trailing colon.
    let s = &b[..b.len() - 1];
    let s = if time == TimeFormat::Raw { s } else { &s[1..] };
    out.extend_from_slice(s);
}
