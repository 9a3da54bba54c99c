//! `tracectl perf record`: sample events into a perf.data file, with perf's options.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::{bail, Context as _, Result};
use clap::Parser;
use tracectl::perf::data::abi::{misc, record as rec, sample};
use tracectl::perf::data::host::{elf_build_id, host_features, kernel_build_id};
use tracectl::perf::data::write::BuildIdEntry;
use tracectl::perf::data::PerfDataWriter;
use tracectl::perf::record::{RecordScope, RecordSession, SampleOptions};
use tracectl::perf::ring::RecordBytes;
use tracectl::perf::synth::{all_pids, Synth};
use tracectl::perf::{EventKind, GatedChild};

use super::common::Context;

/// `tracectl perf record`, with `perf record`'s options.
#[derive(Debug, Parser)]
#[command(
    trailing_var_arg = true,
    after_help = "Call chains are taken with frame pointers (-g, --call-graph fp); \
                  --call-graph dwarf and lbr are not supported yet."
)]
pub struct RecordArgs {
    /// Event selector (repeatable; comma lists, `:u`/`:k`/`:p` modifiers, `sys:event`
    /// tracepoints and globs). Default: cycles, or cpu-clock where there are no hardware
    /// counters, as perf does
    #[arg(short = 'e', long = "event", value_name = "EVENT")]
    events: Vec<String>,
    /// Sample every COUNT events (a period instead of a frequency)
    #[arg(short = 'c', long = "count", value_name = "COUNT")]
    count: Option<u64>,
    /// Sample at this frequency in Hz (default 4000; `max` for the kernel's maximum)
    #[arg(short = 'F', long = "freq", value_name = "FREQ")]
    freq: Option<String>,
    /// Record call chains (frame pointers)
    #[arg(short = 'g')]
    callgraph: bool,
    /// Call chain mode: `fp` (dwarf and lbr are not supported yet)
    #[arg(long = "call-graph", value_name = "MODE")]
    call_graph: Option<String>,
    /// System-wide collection from all CPUs
    #[arg(short = 'a', long = "all-cpus")]
    all_cpus: bool,
    /// Sample only on these CPUs (`0,2-3`)
    #[arg(short = 'C', long = "cpu", value_name = "CPUS")]
    cpu: Option<String>,
    /// Sample existing processes (comma list of pids, all their threads)
    #[arg(short = 'p', long = "pid", value_name = "PID")]
    pid: Option<String>,
    /// Output file (an existing one is renamed to FILE.old)
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        default_value = "perf.data"
    )]
    output: PathBuf,
    /// Data pages of each CPU's ring (a power of two)
    #[arg(
        short = 'm',
        long = "mmap-pages",
        value_name = "PAGES",
        default_value_t = 128
    )]
    mmap_pages: usize,
    /// The command to run (after `--` or the options)
    #[arg(value_name = "COMMAND")]
    command: Vec<String>,
}

fn max_sample_rate() -> Option<u64> {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_max_sample_rate")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The first null-terminated string in `r` from `off`.
fn cstr_at(r: &RecordBytes<'_>, off: usize) -> String {
    let mut v = Vec::new();
    let mut i = off;
    while let Some(b) = r.byte(i) {
        if b == 0 {
            break;
        }
        v.push(b);
        i += 1;
    }
    String::from_utf8_lossy(&v).into_owned()
}

/// What the records written so far tell: samples, their time span, and the files
/// mapped executable (whose build ids go into the header).
#[derive(Default)]
struct Seen {
    samples: u64,
    first_time: Option<u64>,
    last_time: u64,
    dsos: BTreeSet<String>,
    kernel_samples: bool,
}

impl Seen {
    fn note(&mut self, r: &RecordBytes<'_>, time_off: Option<usize>) {
        match r.kind() {
            rec::SAMPLE => {
                self.samples += 1;
                if r.misc() & 7 == misc::KERNEL {
                    self.kernel_samples = true;
                }
                if let Some(t) = time_off.and_then(|o| r.u64_at(o)) {
                    // Rings are read one after the other: the first in the file is not
                    // always the earliest.
                    let first = self.first_time.get_or_insert(t);
                    *first = (*first).min(t);
                    self.last_time = self.last_time.max(t);
                }
            }
            rec::MMAP => {
                self.dsos.insert(cstr_at(r, 40));
            }
            rec::MMAP2 => {
                let prot = r.u32_at(64).unwrap_or(0);
                if prot & libc::PROT_EXEC as u32 != 0 {
                    self.dsos.insert(cstr_at(r, 72));
                }
            }
            _ => {}
        }
    }
}

fn rename_old(path: &Path) -> Result<()> {
    if path.exists() {
        let mut old = path.as_os_str().to_owned();
        old.push(".old");
        std::fs::rename(path, &old).with_context(|| {
            format!(
                "cannot rename {} to {}",
                path.display(),
                Path::new(&old).display()
            )
        })?;
    }
    Ok(())
}

/// Run `tracectl perf record`.
pub fn record(ctx: &Context, args: RecordArgs) -> Result<i32> {
    // Validate everything before an event is opened or a command started.
    let has_cmd = !args.command.is_empty();
    let mode = args.call_graph.as_deref();
    match mode {
        None | Some("fp") => {}
        Some(m) if m.starts_with("dwarf") || m.starts_with("lbr") => {
            bail!("--call-graph {m}: only frame pointers (fp) are supported yet")
        }
        Some(m) => bail!("--call-graph {m}: unknown mode (use fp)"),
    }
    let callchain = args.callgraph || mode.is_some();
    if args.pid.is_some() && (args.all_cpus || args.cpu.is_some()) {
        bail!("-p samples a process on every CPU and cannot be combined with -a or -C");
    }
    if !has_cmd && !args.all_cpus && args.cpu.is_none() && args.pid.is_none() {
        bail!("nothing to record: give a command (`tracectl perf record -- CMD`), -a, -C or -p");
    }
    if args.count == Some(0) {
        bail!("-c 0: the period must be at least 1");
    }
    if !args.mmap_pages.is_power_of_two() {
        bail!(
            "-m {}: the number of ring pages must be a power of two",
            args.mmap_pages
        );
    }
    let max_rate = max_sample_rate();
    let mut freq = match args.freq.as_deref() {
        None => 4000,
        Some("max") => max_rate.unwrap_or(4000),
        Some(f) => match f.parse::<u64>() {
            Ok(v) if v > 0 => v,
            _ => bail!("-F {f}: give a frequency in Hz (a positive number, or max)"),
        },
    };
    if let Some(m) = max_rate.filter(|&m| freq > m) {
        eprintln!(
            "warning: Maximum frequency rate ({m} Hz) exceeded, throttling from {freq} Hz to {m} Hz."
        );
        freq = m;
    }
    let online = tracectl::perf::online_cpus().context("reading the online CPUs")?;
    let mut pids = Vec::new();
    let mut threads = Vec::new();
    let cpus_of_scope = if args.all_cpus || args.cpu.is_some() {
        Some(super::perf::cpus_of(args.cpu.as_deref(), &online)?)
    } else {
        None
    };
    if let Some(list) = &args.pid {
        for pid in super::perf::parse_ids(list, "p")? {
            threads.extend(
                tracectl::perf::process_threads(pid)
                    .with_context(|| format!("-p {pid}: no such process"))?,
            );
            pids.push(pid);
        }
    }
    let mut events = super::perf::resolve_events(ctx, &args.events, "cycles")?;
    if args.events.is_empty() {
        // perf's default is cycles at the highest precision the PMU offers (`cycles:P`).
        if let Some(e) = events.first_mut() {
            e.precise = 3;
            e.name = "cycles:P".into();
        }
    }
    let tracepoints: Vec<(String, String)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Tracepoint { system, name, .. } => Some((system.clone(), name.clone())),
            _ => None,
        })
        .collect();
    let tracing_data = if tracepoints.is_empty() {
        None
    } else {
        let t = ctx.tracefs()?;
        let mut meta = tracectl::record::metadata(&t, &tracepoints)
            .context("reading the tracepoints' formats")?;
        // perf stores only the recorded events' formats (no ftrace ones) and no kallsyms
        // (it reads the kernel's symbols itself).
        meta.kallsyms.clear();
        meta.ftrace_formats.clear();
        let wo = tracectl::dat::WriteOptions {
            page_size: tracectl::perf::page_size() as u32,
            ..Default::default()
        };
        Some(tracectl::dat::tracing_data(&meta, &wo, "0.6"))
    };
    let opts = SampleOptions {
        period: args.count,
        freq,
        callchain,
        ring_pages: args.mmap_pages,
    };

    let mut child = if has_cmd {
        Some(
            GatedChild::spawn(&args.command)
                .with_context(|| format!("cannot run '{}'", args.command[0]))?,
        )
    } else {
        None
    };
    let scope = match (&child, cpus_of_scope) {
        (Some(c), None) => RecordScope::Command(c.pid()),
        (_, Some(cpus)) => RecordScope::Cpus(cpus),
        (None, None) => RecordScope::Threads(threads),
    };
    let mut session = RecordSession::open(&events, &opts, &scope, &online).map_err(|e| {
        if e.not_supported() {
            anyhow::anyhow!(
                "cannot open event '{}' on {}: the event is not supported on this machine",
                e.event,
                e.slot
            )
        } else {
            anyhow::anyhow!("{e}")
        }
    })?;

    let synth = Synth {
        trailer: sample::id_trailer_size(session.sample_type()),
    };
    let kallsyms = std::fs::read_to_string("/proc/kallsyms").unwrap_or_default();
    let modules = std::fs::read_to_string("/proc/modules").unwrap_or_default();
    let mut side = synth.kernel_maps(&kallsyms, &modules);
    drop(kallsyms);
    match (&child, &scope) {
        (Some(c), RecordScope::Command(_)) => {
            let comm = std::fs::read_to_string(format!("/proc/{}/comm", c.pid()))
                .unwrap_or_else(|_| "tracectl".into());
            side.push(synth.comm(c.pid(), c.pid(), comm.trim_end_matches('\n')));
        }
        (_, RecordScope::Cpus(_)) => {
            for pid in all_pids() {
                side.extend(synth.process(pid));
            }
        }
        _ => {
            for &pid in &pids {
                side.extend(synth.process(pid));
            }
        }
    }

    // Everything is ready: now the file.
    rename_old(&args.output)?;
    let mut out = PerfDataWriter::create(&args.output, session.attrs().to_vec())?;
    let mut seen = Seen::default();
    for r in &side {
        seen.note(&RecordBytes::Whole(r), None);
        out.record(&[r])?;
    }
    out.finished_round()?;
    let st = session.sample_type();
    let time_off = (st & sample::TIME != 0).then(|| {
        8 + [sample::IDENTIFIER, sample::IP, sample::TID]
            .iter()
            .filter(|&&b| st & b != 0)
            .count()
            * 8
    });

    let stop = super::stream::stop_flag();
    if !matches!(scope, RecordScope::Command(_)) {
        session.enable().context("enabling the events")?;
    }
    if let Some(c) = child.as_mut() {
        c.release().context("starting the command")?;
    }
    let mut wakeups = 0u64;
    let mut exit = None;
    let mut write_err: Option<std::io::Error> = None;
    let drain = |session: &mut RecordSession,
                 out: &mut PerfDataWriter,
                 seen: &mut Seen,
                 err: &mut Option<std::io::Error>| {
        let before = out.data_size();
        session.drain(|r| {
            if err.is_some() {
                return;
            }
            seen.note(&r, time_off);
            let (a, b) = r.parts();
            if let Err(e) = out.record(&[a, b]) {
                *err = Some(e);
            }
        });
        if out.data_size() > before && err.is_none() {
            if let Err(e) = out.finished_round() {
                *err = Some(e);
            }
        }
    };
    loop {
        let polled = session.poll(100).context("waiting for samples")?;
        wakeups += u64::from(polled.woken && !polled.hung_up);
        drain(&mut session, &mut out, &mut seen, &mut write_err);
        if let Some(e) = write_err.take() {
            session.disable().ok();
            return Err(e.into());
        }
        if let Some(c) = child.as_mut() {
            // A hang-up comes as the task exits, a moment before it can be reaped.
            let waited = if polled.hung_up {
                c.wait_timeout(Duration::from_millis(20))
            } else {
                c.try_wait()
            };
            if let Some(e) = waited.context("waiting for the command")? {
                exit = Some(e);
                break;
            }
        }
        // With -p, the end of every sampled task ends the recording, as in perf.
        if stop.load(Ordering::SeqCst) || (child.is_none() && polled.all_hung_up) {
            break;
        }
    }
    session.disable().ok();
    drain(&mut session, &mut out, &mut seen, &mut write_err);
    if let Some(e) = write_err.take() {
        return Err(e.into());
    }
    // What the kernel dropped, counted by each event (its LOST records in the rings may
    // miss the last ones), stored as perf stores it: one LOST_SAMPLES record per event.
    let lost_read = session
        .lost_per_event()
        .context("reading the events' lost samples")?;
    for (a, lost) in session.attrs().iter().zip(&lost_read) {
        if let Some(n) = lost.filter(|&n| n > 0) {
            let id = (st & sample::IDENTIFIER != 0)
                .then(|| a.ids.first().copied())
                .flatten();
            out.record(&[&synth.lost_samples(n, id)])?;
        }
    }
    if let Some(c) = child.as_mut() {
        if exit.is_none() {
            // Interrupted: the command got the same signal; wait for it briefly.
            exit = c.wait_timeout(Duration::from_secs(1)).ok().flatten();
        }
    }

    let mut cmdline = vec![std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "tracectl".into())];
    cmdline.extend(std::env::args().skip(1));
    let mut features = host_features(cmdline, &format!("tracectl {}", env!("CARGO_PKG_VERSION")));
    if let Some(id) = kernel_build_id() {
        features.build_ids.push(BuildIdEntry {
            misc: misc::KERNEL,
            pid: -1,
            id,
            filename: "[kernel.kallsyms]".into(),
        });
    }
    for dso in seen.dsos.iter().filter(|d| d.starts_with('/')) {
        if let Some(id) = elf_build_id(Path::new(dso)) {
            features.build_ids.push(BuildIdEntry {
                misc: misc::USER,
                pid: -1,
                id,
                filename: dso.clone(),
            });
        }
    }
    features.tracing_data = tracing_data;
    features.sample_time = seen.first_time.map(|f| (f, seen.last_time));
    let size = out.finish(&features)?;
    let stats = session.ring_stats();
    eprintln!("[ perf record: Woken up {wakeups} times to write data ]");
    let lost = if lost_read.iter().all(Option::is_some) {
        lost_read.iter().flatten().sum()
    } else {
        stats.lost_samples
    };
    if lost > 0 || stats.lost_records > 0 {
        eprintln!(
            "Warning: {lost} samples lost ({} PERF_RECORD_LOST records: a ring was full, raise -m or lower -F)",
            stats.lost_records
        );
    }
    eprintln!(
        "[ perf record: Captured and wrote {:.3} MB {} ({} samples) ]",
        size as f64 / (1024.0 * 1024.0),
        args.output.display(),
        seen.samples
    );
    Ok(exit.map_or(0, |e| e.code()))
}
