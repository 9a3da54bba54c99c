//! `tracectl perf record`: sample events into a perf.data file, with perf's options.

use std::path::PathBuf;

use anyhow::{bail, Context as _, Result};
use clap::Parser;
use tracectl::perf::config::{ConfigSources, PerfConfig};
use tracectl::perf::delay::InitialDelay;
use tracectl::perf::machine::build_id_cache;
use tracectl::perf::record::{
    CallGraph, Mode, RecordOpenError, RecordScope, RecordSession, SampleFields, SampleOptions,
};
use tracectl::perf::recording::{
    BuildIds, Compression, DelayNotice, Notify, Recording, Running, SwitchNotice,
};
use tracectl::perf::switch_output::{SwitchOutput, SwitchTrigger};
use tracectl::perf::EventKind;

use super::common::{with_status, Context, ExitStatus, PERF_USAGE};
use super::perf_record_zstd;

/// perf's exit status for an option value its parser refuses (`usage_with_options`).
const USAGE_ERROR: i32 = PERF_USAGE.0;
/// perf's exit status for a value it refuses with -EINVAL (256 - 22).
const EINVAL_EXIT: i32 = super::perf::EINVAL_STATUS.0;
/// perf's exit status for a device (a CPU) it cannot find: -ENODEV.
const ENODEV_STATUS: ExitStatus = ExitStatus(256 - libc::ENODEV);
/// perf record's sampling frequency when neither -F nor -c is given.
const DEFAULT_FREQ: u64 = 4000;
/// perf record's data pages per ring when -m is not given.
const DEFAULT_RING_PAGES: usize = 128;

/// C's `atoi` as perf applies it to `-F`: leading white space, a sign, then the decimal
/// digits up to the first other character (none: 0), saturated to 64 bits as `strtol`
/// does and cut to an `int`.
fn c_atoi(s: &str) -> i32 {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (negative, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut v: i64 = 0;
    for d in digits.bytes().take_while(u8::is_ascii_digit) {
        match v
            .checked_mul(10)
            .and_then(|v| v.checked_add(i64::from(d - b'0')))
        {
            Some(n) => v = n,
            None => {
                return if negative {
                    i64::MIN as i32
                } else {
                    i64::MAX as i32
                }
            }
        }
    }
    (if negative { -v } else { v }) as i32
}

/// `-m`'s value as perf reads it: a size with a B, K, M or G suffix (rounded up to whole
/// pages) or a number of pages, rounded up to a power of two (with `true` when it was).
/// `None` for what perf refuses.
fn mmap_pages(s: &str, page_size: usize) -> Option<(usize, bool)> {
    let pages = match size_with_suffix(s) {
        Some(bytes) => bytes.div_ceil(page_size as u64),
        None => {
            let t = s.trim_start();
            let digits = t.strip_prefix('+').unwrap_or(t);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            digits.parse::<u64>().ok()?
        }
    };
    let max = u64::from(u32::MAX).min(usize::MAX as u64 / page_size as u64);
    let (pages, rounded) = match pages.is_power_of_two() {
        true => (pages, false),
        false => (pages.checked_next_power_of_two()?.max(1), true),
    };
    (pages <= max).then_some((pages as usize, rounded))
}

/// `-m DATA[,AUX]`: the data pages (and whether they were rounded up), when both parts
/// are sizes perf takes.
fn ring_size(m: &str) -> Option<(usize, bool)> {
    let page = tracectl::perf::page_size();
    let (data, aux) = m.split_once(',').unwrap_or((m, ""));
    (aux.is_empty() || mmap_pages(aux, page).is_some())
        .then(|| mmap_pages(data, page))
        .flatten()
}

/// A byte count written as perf's `-m` takes one: decimal digits and then one of B, K, M,
/// G (the first of those letters in the text must follow the digits).
fn size_with_suffix(s: &str) -> Option<u64> {
    for (tag, mult) in [('B', 1u64), ('K', 1 << 10), ('M', 1 << 20), ('G', 1 << 30)] {
        let Some(at) = s.find(tag) else { continue };
        if at == 0 {
            // No digits before it: a size of 0, as strtoul reads it.
            return Some(0);
        }
        let t = s[..at].trim_start();
        let digits = t.strip_prefix('+').unwrap_or(t);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        return digits.parse::<u64>().ok()?.checked_mul(mult);
    }
    None
}

/// A byte count as perf writes a ring's size: the number and B, K, M or G, divided by
/// 1024 while more than 2 KiB of the unit remain.
fn unit_number(mut n: u64) -> String {
    let mut unit = 0;
    while n / 1024 > 1 && unit < 3 {
        n /= 1024;
        unit += 1;
    }
    format!("{n}{}", ['B', 'K', 'M', 'G'][unit])
}

/// `tracectl perf record`, with `perf record`'s options.
#[derive(Debug, Parser)]
#[command(
    trailing_var_arg = true,
    after_help = "Call chains are taken with frame pointers (-g, --call-graph fp), or \
                  with --call-graph dwarf[,SIZE] as a copy of SIZE bytes of user stack \
                  (default 8192, at most 65528) and the user registers, unwound when \
                  the file is read. --call-graph lbr is refused: it needs hardware \
                  counters."
)]
pub struct RecordArgs {
    /// Event selector (repeatable; comma lists, `:u`/`:k`/`:p` modifiers, `sys:event`
    /// tracepoints and globs). Default: cycles, or cpu-clock where there are no hardware
    /// counters, as perf does
    #[arg(short = 'e', long = "event", value_name = "EVENT")]
    events: Vec<String>,
    /// Sample every COUNT events (a period instead of a frequency; 0 keeps the
    /// frequency)
    #[arg(short = 'c', long = "count", value_name = "COUNT")]
    count: Option<u64>,
    /// Sample at this frequency in Hz (default 4000; `max` for the kernel's maximum). Read
    /// as perf reads it: the leading number (`12x` is 12, `abc` is 0, a negative number
    /// wraps to a 32-bit one, throttled to the kernel's maximum)
    #[arg(
        short = 'F',
        long = "freq",
        value_name = "FREQ",
        allow_hyphen_values = true
    )]
    freq: Option<String>,
    /// Refuse a -F over the kernel's maximum sample rate instead of throttling it
    #[arg(long = "strict-freq")]
    strict_freq: bool,
    /// Run the recording itself (not the command) at this SCHED_FIFO priority (1-99)
    #[arg(short = 'r', long = "realtime", value_name = "PRIO")]
    realtime: Option<i32>,
    /// Record call chains (frame pointers)
    #[arg(short = 'g')]
    callgraph: bool,
    /// Call chain mode: `fp` (frame pointers), or `dwarf[,SIZE]` (SIZE bytes of user
    /// stack per sample, unwound with the files' .eh_frame/.debug_frame when read)
    #[arg(long = "call-graph", value_name = "MODE")]
    call_graph: Option<String>,
    /// System-wide collection from all CPUs
    #[arg(short = 'a', long = "all-cpus")]
    all_cpus: bool,
    /// Sample only on these CPUs (`0,2-3`)
    #[arg(short = 'C', long = "cpu", value_name = "CPUS")]
    cpu: Option<String>,
    /// Sample existing processes (comma list of pids, all their threads); a command given
    /// too runs only to time the recording, which ends with it, as in perf
    #[arg(short = 'p', long = "pid", value_name = "PID")]
    pid: Option<String>,
    /// Sample the processes of this user (a name or a uid) that run when the recording
    /// starts, all their threads and the children they fork
    #[arg(short = 'u', long = "uid", value_name = "USER")]
    uid: Option<String>,
    /// Sample only these threads (comma list of tids), not their children (as -i)
    #[arg(short = 't', long = "tid", value_name = "TID")]
    tid: Option<String>,
    /// Child tasks are not followed (no inherit)
    #[arg(short = 'i', long = "no-inherit")]
    no_inherit: bool,
    /// With a command, -p, -t or -u: one ring per thread instead of one per CPU; as
    /// perf, the children are not followed and the samples carry no time (add -T for
    /// it). Ignored with -a and -C
    #[arg(long = "per-thread")]
    per_thread: bool,
    /// The rings are written backward and overwrite their oldest records when full
    /// (write_backward), so that the file holds the last ones; they are read once, at the
    /// end, as perf does, and the records of what exists are synthesized at the end
    /// (--tail-synthesize)
    #[arg(long = "overwrite")]
    overwrite: bool,
    /// Synthesize the records of what exists (kernel maps, running tasks, BPF programs,
    /// cgroups, the counters' ids) at the end of the recording instead of the start, as
    /// perf does; only the command's COMM is written at the start
    #[arg(long = "tail-synthesize")]
    tail_synthesize: bool,
    /// Print nothing but errors
    #[arg(short = 'q', long = "quiet")]
    quiet: bool,
    /// A tracepoint filter for the -e just before it (ftrace's filter syntax, e.g.
    /// `prev_pid == 1`); several for one event must all hold. A filter the kernel
    /// refuses stops the recording before the command starts
    #[arg(long = "filter", value_name = "FILTER")]
    filter: Vec<String>,
    /// Every event counts in user mode only (exclude_kernel), whatever its modifiers say
    #[arg(long = "all-user", conflicts_with = "all_kernel")]
    all_user: bool,
    /// Every event counts in kernel mode only (exclude_user), whatever its modifiers say
    #[arg(long = "all-kernel")]
    all_kernel: bool,
    /// Do not sample: the events count only (a period of 0); the file holds the
    /// side-band records
    #[arg(short = 'n', long = "no-samples")]
    no_samples: bool,
    /// Record the data address of each sample (PERF_SAMPLE_ADDR and DATA_SRC), and the
    /// data mappings that resolve it
    #[arg(short = 'd', long = "data")]
    data: bool,
    /// Record the registers at each sample's interrupt (PERF_SAMPLE_REGS_INTR): the
    /// comma-separated REGS (ax,bx,...,r15), or AX to R15 but DS, ES, FS and GS
    #[arg(
        short = 'I',
        long = "intr-regs",
        value_name = "REGS",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = ""
    )]
    intr_regs: Option<String>,
    /// Record the user-space registers at each sample (PERF_SAMPLE_REGS_USER): the
    /// comma-separated REGS, or AX to R15 but DS, ES, FS and GS
    #[arg(
        long = "user-regs",
        value_name = "REGS",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = ""
    )]
    user_regs: Option<String>,
    /// Record each sample's weight (PERF_SAMPLE_WEIGHT_STRUCT: weight and instruction
    /// latency; 0 for events that do not measure them)
    #[arg(short = 'W', long = "weight")]
    weight: bool,
    /// Record the physical address of each sample's data address (PERF_SAMPLE_PHYS_ADDR)
    #[arg(long = "phys-data")]
    phys_data: bool,
    /// Record the size of the page of each sample's data address
    /// (PERF_SAMPLE_DATA_PAGE_SIZE)
    #[arg(long = "data-page-size")]
    data_page_size: bool,
    /// Record the size of the page of each sample's instruction address
    /// (PERF_SAMPLE_CODE_PAGE_SIZE)
    #[arg(long = "code-page-size")]
    code_page_size: bool,
    /// Record the time of each sample (recorded without it too, but with --per-thread)
    #[arg(short = 'T', long = "timestamp")]
    timestamp: bool,
    /// Record the period of each sample, with -c too
    #[arg(short = 'P', long = "period")]
    period: bool,
    /// Record the CPU of each sample
    #[arg(long = "sample-cpu")]
    sample_cpu: bool,
    /// Record the raw sample data (PERF_SAMPLE_RAW, with the CPU)
    #[arg(short = 'R', long = "raw-samples")]
    raw_samples: bool,
    /// Record the context switches too (PERF_RECORD_SWITCH; SWITCH_CPU_WIDE with -a
    /// or -C), which `perf script --show-switch-events` shows
    #[arg(long = "switch-events")]
    switch_events: bool,
    /// List the build ids of every object the recording mapped, hit by a sample or not
    #[arg(long = "buildid-all", conflicts_with = "no_buildid")]
    buildid_all: bool,
    /// Record each mapped file's build id in its MMAP2 record (the kernel's, and the
    /// maps of what already runs), instead of listing them in a BUILD_ID section after
    /// the recording: no BUILD_ID section, and no build-id cache
    #[arg(long = "buildid-mmap")]
    buildid_mmap: bool,
    /// Record the namespaces of each task: those running at the start, and each new one
    /// as the kernel reports it (PERF_RECORD_NAMESPACES), which `perf script
    /// --show-namespace-events` shows
    #[arg(long = "namespaces")]
    namespaces: bool,
    /// Record the cgroup of each sample (PERF_SAMPLE_CGROUP, `perf script -F +cgroup`,
    /// `perf report --sort cgroup`) and the id and path of each cgroup: those at the
    /// start and each new one (PERF_RECORD_CGROUP, `--show-cgroup-events`)
    #[arg(long = "all-cgroups")]
    all_cgroups: bool,
    /// Record nothing of BPF programs: neither those loaded at the start nor those
    /// loaded while recording (no bpf_event in the tracking event)
    #[arg(long = "no-bpf-event")]
    no_bpf_event: bool,
    /// Put every event in one group led by the first (they are scheduled together)
    #[arg(long = "group")]
    group: bool,
    /// The kernel wakes the recording at every sample instead of when a ring fills up
    /// (wakeup_events 1)
    #[arg(long = "no-buffering")]
    no_buffering: bool,
    /// Every sample and side-band record names its event by PERF_SAMPLE_IDENTIFIER, with
    /// a single event too
    #[arg(long = "sample-identifier")]
    sample_identifier: bool,
    /// Read the events' enabled and running times with their counts (read_format
    /// TOTAL_TIME_ENABLED and TOTAL_TIME_RUNNING)
    #[arg(long = "running-time")]
    running_time: bool,
    /// With -g: keep only the kernel's part of each call chain
    #[arg(long = "kernel-callchains", conflicts_with = "user_callchains")]
    kernel_callchains: bool,
    /// With -g: keep only the user-space part of each call chain
    #[arg(long = "user-callchains")]
    user_callchains: bool,
    /// Leave out the tracing of this recording itself: each tracepoint of the -e just
    /// before it gets the filter `common_pid != PID` (joined to its --filter)
    #[arg(long = "exclude-perf", action = clap::ArgAction::Count)]
    exclude_perf: u8,
    /// Record the times of the first and last samples in the header (always done;
    /// accepted as perf takes it)
    #[arg(long = "timestamp-boundary")]
    timestamp_boundary: bool,
    /// perf's time limit on reading a process's maps at the start (accepted; the maps
    /// are read whole)
    #[arg(long = "proc-map-timeout", value_name = "MS")]
    proc_map_timeout: Option<u32>,
    /// perf's number of threads synthesizing the side-band records at the start
    /// (accepted; one reads them)
    #[arg(long = "num-thread-synthesize", value_name = "N")]
    num_thread_synthesize: Option<u32>,
    /// perf's asynchronous writing of the rings (accepted; they are written as read)
    #[arg(long = "aio", value_name = "N", num_args = 0..=1, require_equals = true, default_missing_value = "1")]
    aio: Option<u32>,
    /// perf's placement of its reading thread: node or cpu (accepted; it stays where
    /// the scheduler puts it)
    #[arg(long = "affinity", value_name = "MODE")]
    affinity: Option<String>,
    /// Stop the recording once the file's records reach SIZE (a size with a B, K, M or G
    /// suffix; 0 is no limit), after the write that reaches it, ending the command with
    /// SIGTERM, as perf does
    #[arg(long = "max-size", value_name = "SIZE")]
    max_size: Option<String>,
    /// Go on in a new file at each SIGUSR2 (`signal`, the default), once the file holds
    /// SIZE bytes (a B, K, M or G suffix), or every TIME (an s, m, h or d suffix): each
    /// finished file is renamed OUTPUT.<timestamp> (YYYYmmddHHMMSS and hundredths, as
    /// perf names it) and the next starts with the records of what exists; no build
    /// ids are listed or cached, as perf
    #[arg(
        long = "switch-output",
        value_name = "signal|SIZE|TIME",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "signal"
    )]
    switch_output: Option<String>,
    /// With --switch-output or --timestamp-filename: keep the N newest files, removing
    /// the oldest as the next one is written
    #[arg(long = "switch-max-files", value_name = "N")]
    switch_max_files: Option<usize>,
    /// Rename the file OUTPUT.<timestamp> once written
    #[arg(long = "timestamp-filename")]
    timestamp_filename: bool,
    /// Output file (an existing one is renamed to FILE.old)
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        default_value = "perf.data"
    )]
    output: PathBuf,
    /// Data pages of each CPU's ring, or its size with a B, K, M or G suffix; rounded up
    /// to a power of two, as perf does
    #[arg(short = 'm', long = "mmap-pages", value_name = "PAGES")]
    mmap_pages: Option<String>,
    /// Read a ring once it holds BYTES (a number, or a size with a B, K, M or G
    /// suffix), at most a quarter of the ring; all of it is read at the end. Default: 1,
    /// every wake-up
    #[arg(long = "mmap-flush", value_name = "BYTES")]
    mmap_flush: Option<String>,
    /// Write the ring data as zstd-compressed records (PERF_RECORD_COMPRESSED) at
    /// LEVEL, 1 (the fastest, and -z alone) to 22 (the smallest; more is 22), with a
    /// COMPRESSED header; as perf, no build ids are listed or cached then. The side-band
    /// records of what already runs stay uncompressed
    #[arg(
        short = 'z',
        long = "compression-level",
        value_name = "LEVEL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "1"
    )]
    compression_level: Option<String>,
    /// Do not add the files the samples hit to perf's build-id cache (their build ids
    /// are still listed in the file). Default: add them, under buildid.dir of perf's
    /// config files, else ~/.debug, as perf does; record.build-id = no-cache there
    /// does the same as this option
    #[arg(short = 'N', long = "no-buildid-cache")]
    no_buildid_cache: bool,
    /// Do not list the build ids of the files the samples hit (no BUILD_ID section)
    /// and do not cache the files; record.build-id = skip in perf's config files does
    /// the same
    #[arg(short = 'B', long = "no-buildid")]
    no_buildid: bool,
    /// Enable the events MS milliseconds after the command starts (maps and comms are
    /// recorded from the start); -1 never enables them
    #[arg(
        short = 'D',
        long = "delay",
        value_name = "MS",
        allow_negative_numbers = true
    )]
    delay: Option<i64>,
    /// Per-thread counts: each task's count is written as it exits (perf's
    /// `perf report -T` shows them)
    #[arg(short = 's', long = "stat")]
    stat: bool,
    /// Stamp the samples with this clock (monotonic, monotonic_raw, realtime, boottime,
    /// tai, or mono, raw, real, boot; any case, CLOCK_ prefix or not; or a clock number)
    /// instead of perf's; the file stores its resolution and a reading of it against the
    /// time of day
    #[arg(short = 'k', long = "clockid", value_name = "CLOCKID")]
    clockid: Option<String>,
    /// Parse the options and events, then stop: nothing is opened, run or written (as
    /// perf's --dry-run)
    #[arg(long = "dry-run")]
    dry_run: bool,
    /// The command to run (after `--` or the options)
    #[arg(value_name = "COMMAND")]
    command: Vec<String>,
}

/// What perf's config files say of the recorded build ids (`record.build-id`): Some
/// (no build ids, no cache) for `skip` or `no-cache`, None for `cache` or nothing.
fn configured_build_ids(config: &PerfConfig) -> Result<Option<BuildIds>> {
    let Some(v) = config.get("record.build-id") else {
        return Ok(None);
    };
    match v.as_encoded_bytes() {
        b"cache" => Ok(None),
        b"no-cache" => Ok(Some(BuildIds::NoCache)),
        b"skip" => Ok(Some(BuildIds::Skip)),
        b"mmap" => bail!(
            "record.build-id = mmap in perf's config files: build ids in the MMAP2 \
             records are not supported; set it to cache, no-cache or skip"
        ),
        _ => bail!(
            "perf's config files: wrong config key-value pair record.build-id={} \
             (give cache, no-cache, skip or mmap)",
            v.to_string_lossy()
        ),
    }
}

fn max_sample_rate() -> Option<u64> {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_max_sample_rate")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Each `--filter` (and `--exclude-perf`, the filter `common_pid != PID`) bound to the
/// events of the `-e` before it, as perf binds them (all the events of that `-e`;
/// several filters for one event joined as `(a) && (b)` in the order given); refused
/// when one of those events is not a tracepoint or no `-e` comes before it.
fn event_filters(
    ctx: &Context,
    args: &RecordArgs,
    events: &[tracectl::perf::EventSpec],
) -> Result<Vec<(usize, String)>> {
    if args.filter.is_empty() && args.exclude_perf == 0 {
        return Ok(Vec::new());
    }
    let exclude = format!("common_pid != {}", std::process::id());
    use clap::CommandFactory as _;
    let m = super::Cli::command()
        .try_get_matches_from(super::argv())
        .ok();
    let sub = m
        .as_ref()
        .and_then(|m| m.subcommand_matches("perf"))
        .and_then(|m| m.subcommand_matches("record"));
    let at = |id: &str| -> Vec<usize> {
        sub.and_then(|sub| sub.indices_of(id))
            .map(|i| i.collect())
            .unwrap_or_default()
    };
    // Each filter with its option and the number of -e options before it, in the
    // order given.
    let mut bound: Vec<(usize, &str, String)> = match sub {
        Some(_) => {
            let e_at = at("events");
            let before = |pos: usize| e_at.iter().filter(|&&e| e < pos).count();
            let mut v: Vec<(usize, usize, &str, String)> = at("filter")
                .into_iter()
                .zip(&args.filter)
                .map(|(pos, f)| (pos, before(pos), "--filter", f.clone()))
                .collect();
            // (A count that was not given has the index of its default value.)
            v.extend(
                at("exclude_perf")
                    .into_iter()
                    .take(usize::from(args.exclude_perf))
                    .map(|pos| (pos, before(pos), "--exclude-perf", exclude.clone())),
            );
            v.sort_by_key(|x| x.0);
            v.into_iter().map(|(_, n, o, f)| (n, o, f)).collect()
        }
        // Not parsed from the process arguments: every filter follows every -e.
        None => args
            .filter
            .iter()
            .map(|f| (args.events.len(), "--filter", f.clone()))
            .chain(
                (0..args.exclude_perf)
                    .map(|_| (args.events.len(), "--exclude-perf", exclude.clone())),
            )
            .collect(),
    };
    let mut out: Vec<(usize, String)> = Vec::new();
    for (n_events, option, f) in bound.drain(..) {
        let refuse = || {
            let what = if option == "--filter" {
                format!("--filter {f:?}: the filter")
            } else {
                "--exclude-perf".to_string()
            };
            anyhow::anyhow!("{what} must follow a -e tracepoint (sys:event), which it filters")
        };
        if n_events == 0 {
            return Err(refuse());
        }
        // The events of the -e just before it.
        let first = match n_events {
            1 => 0,
            n => super::perf::resolve_events(ctx, &args.events[..n - 1], "cycles")?.len(),
        };
        let end = super::perf::resolve_events(ctx, &args.events[..n_events], "cycles")?.len();
        for i in first..end {
            if !matches!(
                events.get(i).map(|e| &e.kind),
                Some(EventKind::Tracepoint { .. })
            ) {
                return Err(refuse());
            }
        }
        for i in first..end {
            match out.iter_mut().find(|(k, _)| *k == i) {
                Some((_, prev)) => *prev = format!("({prev}) && ({f})"),
                None => out.push((i, f.clone())),
            }
        }
    }
    Ok(out)
}

/// perf's words as a delayed recording's events wait and start.
fn tell_delay(n: DelayNotice) {
    eprintln!(
        "{}",
        match n {
            DelayNotice::Disabled => "Events disabled",
            DelayNotice::Enabled => "Events enabled",
        }
    );
}

/// perf's lines for a switch to a new file.
fn tell_switch(n: SwitchNotice) {
    match n {
        SwitchNotice::Woken(w) => eprintln!("[ perf record: dump data: Woken up {w} times ]"),
        SwitchNotice::Dumped(p) => eprintln!("[ perf record: Dump {} ]", p.display()),
    }
}

/// Run `tracectl perf record`.
pub fn record(ctx: &Context, args: RecordArgs) -> Result<i32> {
    // Validate everything before an event is opened or a command started.
    let has_cmd = !args.command.is_empty();
    let call_graph = match args.call_graph.as_deref() {
        Some(m) => CallGraph::parse(m)?,
        None if args.callgraph => CallGraph::FramePointer,
        None => CallGraph::None,
    };
    let ring_pages = match args.mmap_pages.as_deref() {
        None => DEFAULT_RING_PAGES,
        // The part after a comma sizes the AUX area, which no event here has: it is
        // checked as perf checks it and not used.
        Some(m) => match ring_size(m) {
            Some((pages, rounded)) => {
                if rounded {
                    eprintln!(
                        "rounding mmap pages size to {} ({pages} pages)",
                        unit_number(pages as u64 * tracectl::perf::page_size() as u64)
                    );
                }
                pages
            }
            None => {
                eprintln!(
                    "tracectl: -m {m}: invalid argument for --mmap-pages/-m: give a number of \
                     pages, or a size with a B, K, M or G suffix"
                );
                return Ok(USAGE_ERROR);
            }
        },
    };
    // perf's --max-size: a size with B, K, M or G; 0 is no limit.
    let max_size = match args.max_size.as_deref() {
        None => None,
        Some(m) => match size_with_suffix(m) {
            Some(n) => (n > 0).then_some(n),
            None => {
                eprintln!("tracectl: --max-size {m}: give a size with a B, K, M or G suffix");
                return Ok(USAGE_ERROR);
            }
        },
    };
    // A ring's mapping: its data pages and the control page.
    let ring_bytes = (ring_pages as u64 + 1) * tracectl::perf::page_size() as u64;
    let switch_trigger = match args.switch_output.as_deref() {
        None => None,
        Some(v) => match SwitchTrigger::parse(v) {
            Some(t) => Some(t),
            None => {
                eprintln!(
                    "tracectl: --switch-output={v}: give signal, a size with a B, K, M or G \
                     suffix, or a time with an s, m, h or d suffix"
                );
                return Ok(EINVAL_EXIT);
            }
        },
    };
    if let Some(SwitchTrigger::Size(n)) = switch_trigger {
        // perf's warning: the kernel wakes the reader at half a ring, so files come out
        // bigger than that.
        if n > 0 && !args.no_buffering && n < ring_bytes / 2 && !args.quiet {
            eprintln!(
                "WARNING: switch-output data size lower than wakeup kernel buffer size ({}) \
                 expect bigger perf.data sizes",
                unit_number(ring_bytes / 2)
            );
        }
    }
    if switch_trigger.is_some() && args.overwrite {
        bail!(
            "--switch-output with --overwrite is not supported: the backward rings are read \
             once, at the end"
        );
    }
    let switch_output =
        (switch_trigger.is_some() || args.timestamp_filename).then(|| SwitchOutput {
            trigger: switch_trigger,
            max_files: args.switch_max_files.unwrap_or(0),
        });
    let delay = match args.delay {
        Some(d) => InitialDelay::from_ms(d).with_context(|| {
            format!("-D {d}: give milliseconds to wait, or -1 to never enable the events")
        })?,
        None => InitialDelay::Now,
    };
    let clockid = match args.clockid.as_deref() {
        Some(k) => match tracectl::perf::clockid::parse_clockid(k) {
            Some(id) => Some(id),
            None => {
                // perf's usage error.
                eprintln!(
                    "tracectl: -k {k}: unknown clock; give monotonic, monotonic_raw, \
                     realtime, boottime, tai (or mono, raw, real, boot), or a clock number"
                );
                return Ok(USAGE_ERROR);
            }
        },
        None => None,
    };
    if args.dry_run {
        // As perf: the options and events are parsed (a refusal ends with the parser's
        // status) and nothing else is done: no event opened, no command, no file.
        super::perf::resolve_events(ctx, &args.events, "cycles")?;
        return Ok(0);
    }
    if args.pid.is_some() && args.tid.is_some() {
        bail!("-p and -t cannot be combined: give the threads with -t, or the processes with -p");
    }
    if args.uid.is_some() && (args.pid.is_some() || args.tid.is_some()) {
        bail!("-u cannot be combined with -p or -t: give the tasks one way");
    }
    if args.uid.is_some() && (args.all_cpus || args.cpu.is_some()) {
        bail!("-u samples a user's tasks on every CPU and cannot be combined with -a or -C");
    }
    let uid = match args.uid.as_deref() {
        None => None,
        Some(u) => Some(match nix::unistd::User::from_name(u) {
            Ok(Some(user)) => user.uid.as_raw(),
            _ => u.parse::<u32>().map_err(|_| {
                anyhow::anyhow!("-u {u}: Invalid User: no such user name or number")
            })?,
        }),
    };
    if (args.pid.is_some() || args.tid.is_some()) && (args.all_cpus || args.cpu.is_some()) {
        bail!("-p/-t sample tasks on every CPU and cannot be combined with -a or -C");
    }
    if !has_cmd
        && !args.all_cpus
        && args.cpu.is_none()
        && args.pid.is_none()
        && args.tid.is_none()
        && args.uid.is_none()
    {
        bail!(
            "nothing to record: give a command (`tracectl perf record -- CMD`), -a, -C, -p or -t"
        );
    }
    // As perf: its config files first, the options over them.
    let config = PerfConfig::load(&ConfigSources::from_env());
    for w in config.warnings().iter().filter(|_| !args.quiet) {
        eprintln!("{w}");
    }
    let build_ids = match configured_build_ids(&config)? {
        // As perf: the build ids are in the map records; none are listed or cached.
        // -z: perf does not read the compressed file back for them.
        // --switch-output: perf neither lists nor caches them, to switch files sooner.
        _ if args.no_buildid
            || args.buildid_mmap
            || args.compression_level.is_some()
            || switch_trigger.is_some() =>
        {
            BuildIds::Skip
        }
        Some(BuildIds::Skip) => BuildIds::Skip,
        _ if args.no_buildid_cache => BuildIds::NoCache,
        Some(b) => b,
        None => BuildIds::Cache(build_id_cache(None, config.buildid_dir().as_deref())),
    };
    let max_rate = max_sample_rate();
    let user_freq = match args.freq.as_deref() {
        None => None,
        Some(f) if f.eq_ignore_ascii_case("max") => match max_rate {
            Some(m) => {
                eprintln!("info: Using a maximum frequency rate of {m} Hz");
                Some(m)
            }
            None => {
                eprintln!(
                    "tracectl: -F max: cannot read /proc/sys/kernel/perf_event_max_sample_rate"
                );
                return Ok(USAGE_ERROR);
            }
        },
        // perf keeps a 32-bit frequency whose all-ones value means "not given".
        Some(f) => Some(u64::from(c_atoi(f) as u32)).filter(|&v| v != u64::from(u32::MAX)),
    };
    if user_freq.is_some() && args.count.is_some() {
        eprintln!("cannot set frequency and period at the same time");
        return Ok(EINVAL_EXIT);
    }
    // A period of 0 samples at the frequency, as in perf.
    let period = args.count.filter(|&c| c > 0);
    let mut freq = user_freq.unwrap_or(DEFAULT_FREQ);
    if period.is_none() && freq == 0 {
        eprintln!("frequency and count are zero, aborting");
        return Ok(EINVAL_EXIT);
    }
    if let Some(m) = max_rate.filter(|&m| period.is_none() && freq > m) {
        match user_freq {
            Some(_) if args.strict_freq => {
                eprintln!(
                    "error: Maximum frequency rate ({m} Hz) exceeded.\n       \
                     Please use -F freq option with a lower value or consider\n       \
                     tweaking /proc/sys/kernel/perf_event_max_sample_rate."
                );
                return Ok(EINVAL_EXIT);
            }
            Some(_) if !args.quiet => eprintln!(
                "warning: Maximum frequency rate ({m} Hz) exceeded, throttling from {freq} Hz \
                 to {m} Hz.\n         The limit can be raised via \
                 /proc/sys/kernel/perf_event_max_sample_rate.\n         The kernel will \
                 lower it when perf's interrupts take too long.\n         Use --strict-freq \
                 to disable this throttling, refusing to record."
            ),
            None if !args.quiet => eprintln!(
                "Lowering default frequency rate from {freq} to {m}.\nPlease consider \
                 tweaking /proc/sys/kernel/perf_event_max_sample_rate."
            ),
            _ => {}
        }
        freq = m;
    }
    let realtime = match args.realtime {
        None | Some(0) => None,
        Some(p) if (1..=99).contains(&p) => Some(p),
        Some(p) => {
            // perf's words and status (-1) for a priority SCHED_FIFO refuses.
            eprintln!("Could not set realtime priority.");
            eprintln!("tracectl: -r {p}: give a SCHED_FIFO priority from 1 to 99");
            return Ok(255);
        }
    };
    let online = tracectl::perf::online_cpus().context("reading the online CPUs")?;
    let mut pids = Vec::new();
    let mut threads = Vec::new();
    let cpus_of_scope = if args.all_cpus || args.cpu.is_some() {
        // perf fails on a CPU it cannot find with -ENODEV.
        Some(
            super::perf::cpus_of(args.cpu.as_deref(), &online)
                .map_err(|e| with_status(e, ENODEV_STATUS))?,
        )
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
    if let Some(uid) = uid {
        let found =
            tracectl::perf::user_processes(uid).context("listing the processes in /proc")?;
        for pid in found {
            // A process that ended since /proc was listed is left out.
            if let Ok(tids) = tracectl::perf::process_threads(pid) {
                threads.extend(tids);
                pids.push(pid);
            }
        }
        if pids.is_empty() {
            bail!(
                "-u {}: no process of this user runs; nothing to record",
                args.uid.as_deref().unwrap_or_default()
            );
        }
    }
    if let Some(list) = &args.tid {
        for tid in super::perf::parse_ids(list, "t")? {
            let tgid = tracectl::perf::thread_group(tid)
                .with_context(|| format!("-t {tid}: no such thread"))?;
            threads.push(tid);
            if !pids.contains(&tgid) {
                pids.push(tgid);
            }
        }
    }
    let mut events = super::perf::resolve_events(ctx, &args.events, "cycles")?;
    let filters = event_filters(ctx, &args, &events)?;
    if args.group {
        // As perf's --group: the first event leads every other.
        for e in &mut events {
            e.leader = 0;
        }
    }
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
        let mut meta = tracectl::record::formats(&t, &tracepoints)
            .context("reading the tracepoints' formats")?;
        // perf stores only the recorded events' formats (no ftrace ones).
        meta.ftrace_formats.clear();
        let wo = tracectl::dat::WriteOptions {
            page_size: tracectl::perf::page_size() as u32,
            ..Default::default()
        };
        Some(tracectl::dat::tracing_data(&meta, &wo, "0.6"))
    };
    let opts = SampleOptions {
        period,
        freq,
        call_graph,
        ring_pages,
        // perf follows no children of the threads given with -t, nor per thread.
        inherit: !args.no_inherit
            && args.tid.is_none()
            && !(args.per_thread && cpus_of_scope.is_none()),
        per_thread: args.per_thread,
        sample_time: args.timestamp,
        overwrite: args.overwrite,
        no_samples: args.no_samples,
        only: match (args.all_user, args.all_kernel) {
            (true, _) => Some(Mode::User),
            (_, true) => Some(Mode::Kernel),
            _ => None,
        },
        fields: SampleFields {
            addr: args.data,
            cpu: args.sample_cpu,
            period: args.period,
            raw: args.raw_samples,
            intr_regs: reg_list(args.intr_regs.as_deref(), "--intr-regs")?,
            user_regs: reg_list(args.user_regs.as_deref(), "--user-regs")?,
            weight: args.weight,
            phys_addr: args.phys_data,
            data_page_size: args.data_page_size,
            code_page_size: args.code_page_size,
        },
        exclude_guest: !args.events.is_empty(),
        filters,
        switch_events: args.switch_events,
        no_buffering: args.no_buffering,
        sample_identifier: args.sample_identifier,
        bpf_events: !args.no_bpf_event,
        running_time: args.running_time,
        callchain_only: match (args.kernel_callchains, args.user_callchains) {
            (true, _) => Some(Mode::Kernel),
            (_, true) => Some(Mode::User),
            _ => None,
        },
        clockid,
        delay,
        inherit_stat: args.stat,
        buildid_mmap: args.buildid_mmap,
        namespaces: args.namespaces,
        all_cgroups: args.all_cgroups,
    };

    let mut child = super::perf::gated_command(&args.command)?;
    let scope = match (&child, cpus_of_scope) {
        (Some(c), None) if pids.is_empty() => RecordScope::Command(c.pid()),
        (_, Some(cpus)) => RecordScope::Cpus(cpus),
        (_, None) => RecordScope::Threads(threads),
    };
    let session = match RecordSession::open(&events, &opts, &scope, &online) {
        Ok(session) => session,
        Err(RecordOpenError::Open(e)) if clockid.is_some() && e.invalid_argument() => {
            // perf's exit status for it: -1.
            eprintln!(
                "tracectl: wrong clockid ({}): the kernel refused it for event '{}'",
                clockid.unwrap_or_default(),
                e.event
            );
            return Ok(255);
        }
        Err(RecordOpenError::Open(e)) if e.not_supported() => bail!(
            "cannot open event '{}' on {}: the event is not supported on this machine",
            e.event,
            e.slot
        ),
        Err(e) => bail!("{e}"),
    };

    let mut cmdline = vec![std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "tracectl".into())];
    cmdline.extend(std::env::args().skip(1));
    let running = match &scope {
        RecordScope::Command(pid) => Running::Command(*pid),
        RecordScope::Cpus(_) => Running::All,
        RecordScope::Threads(_) => Running::Processes(pids),
    };
    let rec = Recording {
        output: &args.output,
        running,
        workload: child.as_ref().map(|c| c.pid()),
        tracing_data,
        cmdline,
        version: format!("tracectl {}", env!("CARGO_PKG_VERSION")),
        build_ids,
        all_build_ids: args.buildid_all,
        buildid_mmap: args.buildid_mmap,
        namespaces: args.namespaces,
        cgroups: args.all_cgroups,
        bpf_events: !args.no_bpf_event,
        clockid,
        on_delay: Notify((!args.quiet).then_some(&tell_delay as &dyn Fn(DelayNotice))),
        compression: args.compression_level.as_deref().map(|l| Compression {
            level: perf_record_zstd::compression_level(l),
            mmap_len: ring_bytes as u32,
        }),
        max_size,
        // As perf: --overwrite turns tail synthesis on.
        tail_synthesize: args.tail_synthesize || args.overwrite,
        on_switch: Notify((!args.quiet).then_some(&tell_switch as &dyn Fn(SwitchNotice))),
        switch_output,
        mmap_flush: args.mmap_flush.as_deref().map_or(1, |f| {
            perf_record_zstd::flush_bytes(perf_record_zstd::mmap_flush(f, ring_bytes))
        }),
    };
    if let Some(prio) = realtime {
        // As perf: the recording, once its events are open, and not the command (which
        // was started before and keeps its own policy).
        if let Err(e) = tracectl::perf::set_fifo_priority(prio) {
            eprintln!("Could not set realtime priority.");
            return Err(with_status(
                anyhow::anyhow!("-r {prio}: {e}"),
                ExitStatus(255),
            ));
        }
    }
    let stop = tracectl::tracefs::stop_on_signals();
    // As perf: SIGUSR2 asks for a switch with --switch-output, and is ignored otherwise.
    tracectl::perf::switch_output::catch_sigusr2(switch_trigger.is_some());
    let summary = tracectl::perf::recording::record(session, &rec, child.as_mut(), stop)?;
    if args.quiet {
        return Ok(summary.exit.map_or(0, |e| e.code()));
    }
    if let Some(stop) = &summary.bpf_stop {
        eprintln!(
            "Couldn't synthesize bpf events. (BPF program {}: {})",
            stop.id, stop.reason
        );
    }
    if let Some(e) = &summary.cgroup_error {
        eprintln!("Couldn't synthesize cgroup events. ({e})");
    }
    if let Some(bytes) = summary.size_limit {
        eprintln!(
            "[ perf record: perf size limit reached ({} KB), stopping session ]",
            bytes >> 10
        );
    }
    eprintln!(
        "[ perf record: Woken up {} times to write data ]",
        summary.wakeups
    );
    if summary.lost > 0 || summary.lost_records > 0 {
        eprintln!(
            "Warning: {} samples lost ({} PERF_RECORD_LOST records: a ring was full, raise -m or lower -F)",
            summary.lost, summary.lost_records
        );
    }
    for w in &summary.cache_warnings {
        eprintln!("warning: {w}");
    }
    for (path, e) in &summary.rotation_errors {
        eprintln!("warning: cannot remove {}: {e}", path.display());
    }
    if let Some(path) = &summary.dumped {
        eprintln!("[ perf record: Dump {} ]", path.display());
    }
    // perf counts the samples as it reads the file back for the build ids.
    let samples = if rec.build_ids == BuildIds::Skip {
        String::new()
    } else {
        format!(" ({} samples)", summary.samples)
    };
    let compressed = match summary.compression {
        Some(c) if c.ratio != 0.0 => format!(
            ", compressed (original {:.3} MB, ratio is {:.3})",
            c.transferred as f64 / (1024.0 * 1024.0),
            c.ratio
        ),
        _ => String::new(),
    };
    // perf names the time-stamped files as a pattern.
    let stamp = if summary.dumped.is_some() {
        ".<timestamp>"
    } else {
        ""
    };
    eprintln!(
        "[ perf record: Captured and wrote {:.3} MB {}{stamp}{samples}{compressed} ]",
        summary.bytes as f64 / (1024.0 * 1024.0),
        args.output.display(),
    );
    Ok(summary.exit.map_or(0, |e| e.code()))
}

/// The register mask of `--intr-regs[=REGS]` or `--user-regs[=REGS]`, if given.
fn reg_list(list: Option<&str>, option: &str) -> anyhow::Result<Option<u64>> {
    list.map(|l| {
        tracectl::perf::regs::parse_reg_list(l).map_err(|e| anyhow::anyhow!("{option}: {e}"))
    })
    .transpose()
}

/// perf's reading of a short option whose value is optional (`-z`, `-I`): a value
/// attached to it (`-z5`) is its value, a separate word is not (`-z 5` runs `5`). clap
/// takes such a value only after `=`, so the attached form of a `tracectl perf record`
/// command line is rewritten as the long option with `=` (`--compression-level=5`)
/// before it is parsed. The words after the first one that is not an option or an
/// option's value (the command and its arguments) are left alone.
pub fn attach_optional_values(mut argv: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    use clap::CommandFactory as _;
    // The words after `tracectl [--tracefs DIR] perf record`.
    let mut i = 1;
    while i < argv.len() && argv[i] == "--tracefs" {
        i += 2;
    }
    while i < argv.len() && argv[i].as_encoded_bytes().starts_with(b"-") {
        i += 1;
    }
    if !(argv.get(i).is_some_and(|a| a == "perf") && argv.get(i + 1).is_some_and(|a| a == "record"))
    {
        return argv;
    }
    let cmd = RecordArgs::command();
    // Whether an option takes a value: Some(true) required (the next word when not
    // attached), Some(false) optional (attached only).
    let takes = |a: &clap::Arg| {
        let n = a.get_num_args().unwrap_or_default();
        (n.max_values() > 0 && a.get_action().takes_values()).then_some(n.min_values() > 0)
    };
    i += 2;
    while i < argv.len() {
        let Some(word) = argv[i].to_str().map(str::to_string) else {
            return argv;
        };
        if word == "--" || !word.starts_with('-') || word == "-" {
            return argv;
        }
        if let Some(long) = word.strip_prefix("--") {
            let required = !long.contains('=')
                && cmd
                    .get_arguments()
                    .find(|a| a.get_long() == Some(long))
                    .and_then(takes)
                    == Some(true);
            i += 1 + usize::from(required);
            continue;
        }
        // A cluster of short options: the first that takes a value ends it.
        let mut next = i + 1;
        for (at, c) in word.char_indices().skip(1) {
            let Some(arg) = cmd.get_arguments().find(|a| a.get_short() == Some(c)) else {
                break;
            };
            let rest = &word[at + c.len_utf8()..];
            match takes(arg) {
                None => continue,
                Some(true) => {
                    if rest.is_empty() {
                        next += 1;
                    }
                }
                Some(false) => {
                    if let (Some(long), Some(v)) =
                        (arg.get_long(), rest.strip_prefix('=').or(Some(rest)))
                    {
                        if !rest.is_empty() {
                            let mut cluster = word[..at].to_string();
                            let own = format!("--{long}={v}");
                            argv[i] = own.into();
                            if cluster != "-" {
                                argv.insert(i, std::mem::take(&mut cluster).into());
                                next += 1;
                            }
                        }
                    }
                }
            }
            break;
        }
        i = next;
    }
    argv
}

#[cfg(test)]
mod tests {
    use super::*;

    /// perf's optional values of short options: attached only. `-z5` and `-qz3` are
    /// levels, `-z 5` is no level and runs `5`; an `-o` value or the command's own
    /// `-z5` are left alone.
    #[test]
    fn attached_optional_values_become_long_options() {
        let rewrite = |line: &str| -> String {
            let argv = line.split(' ').map(std::ffi::OsString::from).collect();
            let out: Vec<String> = attach_optional_values(argv)
                .into_iter()
                .map(|a| a.into_string().unwrap())
                .collect();
            out.join(" ")
        };
        let same = |line: &str| assert_eq!(rewrite(line), line);
        assert_eq!(
            rewrite("t perf record -z5 true"),
            "t perf record --compression-level=5 true"
        );
        assert_eq!(
            rewrite("t --tracefs /x perf record -o f -qz3 -a"),
            "t --tracefs /x perf record -o f -q --compression-level=3 -a"
        );
        assert_eq!(
            rewrite("t perf record -Iax,bx -e cpu-clock true"),
            "t perf record --intr-regs=ax,bx -e cpu-clock true"
        );
        same("t perf record -z 5");
        same("t perf record -z");
        same("t perf record -o -z5 true");
        same("t perf record --output -z5 true");
        same("t perf record sh -z5");
        same("t perf record -- sh -z5");
        same("t perf script -z5");
        same("t record -z5");
    }

    fn configured(text: &str) -> Result<Option<BuildIds>> {
        let c = PerfConfig::from_text(text.as_bytes(), std::path::Path::new("perfconfig"));
        configured_build_ids(&c)
    }

    /// perf 6.1's `record.build-id`: cache, no-cache and skip; mmap and anything else
    /// refused before anything is recorded, with perf's words for a wrong value.
    #[test]
    fn record_build_id_of_perf_s_config_files() {
        assert_eq!(configured("").unwrap(), None);
        assert_eq!(configured("[record]\n\tbuild-id = cache\n").unwrap(), None);
        assert_eq!(
            configured("[record]\n\tbuild-id = no-cache\n").unwrap(),
            Some(BuildIds::NoCache)
        );
        assert_eq!(
            configured("[record]\nbuild-id=skip\n").unwrap(),
            Some(BuildIds::Skip)
        );
        let e = configured("[record]\n\tbuild-id = Cache\n").unwrap_err();
        assert!(
            e.to_string()
                .contains("wrong config key-value pair record.build-id=Cache"),
            "{e}"
        );
        let e = configured("[record]\n\tbuild-id = mmap\n").unwrap_err();
        assert!(e.to_string().contains("not supported"), "{e}");
    }
}
