//! `tracectl perf ...`: perf's commands with perf's option names (so that trace-cmd's
//! `stat` keeps its meaning at the top level).

use std::io::Write;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};
use clap::{Parser, Subcommand};
use tracectl::perf::delay::InitialDelay;
use tracectl::perf::{
    aggregate, delta, parse_event_list, set_tool_counts, unread_in_tool_group, Count, EventKind,
    EventSpec, GatedChild, RunStats, Scope, StatSession, ToolReadings,
};
use tracectl::render::perf_stat::{
    self, HwMetric, StatGroup, StatRow, StatSplit, StatStyle, StatTarget,
};
use tracectl::render::perf_stat_metric_only as metric_only;

use super::common::{with_status, Context, ExitStatus, PERF_USAGE};
use super::perf_control;

/// `tracectl perf`.
#[derive(Debug, Parser)]
pub struct Args {
    #[command(subcommand)]
    command: PerfCommand,
}

#[derive(Debug, Subcommand)]
enum PerfCommand {
    /// Count events while a command runs (or system-wide, or for running processes)
    Stat(StatArgs),
    /// Sample events into a perf.data file that perf report and perf script read
    Record(super::perf_record::RecordArgs),
    /// Print the samples of a perf.data as `perf script` does
    Script(super::perf_read::ScriptArgs),
    /// Summarize the samples of a perf.data as `perf report --stdio` does
    Report(Box<super::perf_read::ReportArgs>),
    /// List the events `tracectl perf` can count and sample, as `perf list` does
    List(ListArgs),
}

/// `tracectl perf list`, with `perf list`'s arguments.
#[derive(Debug, Parser)]
pub struct ListArgs {
    /// Print the names alone, each followed by a space (no newline, as perf)
    #[arg(long = "raw-dump")]
    raw_dump: bool,
    /// What to list: hw, sw, cache, tracepoint, a `sys:event` glob, or text matched
    /// anywhere in the names (pmu, sdt and metric list nothing: tracectl does not take
    /// those events)
    #[arg(value_name = "WHAT")]
    what: Vec<String>,
}

/// `tracectl perf stat`, with `perf stat`'s options.
#[derive(Debug, Parser)]
#[command(trailing_var_arg = true)]
pub struct StatArgs {
    /// Event selector (repeatable; comma lists, `{a,b}` groups, `:u`/`:k` modifiers,
    /// `sys:event` tracepoints and globs)
    #[arg(short = 'e', long = "event", value_name = "EVENT", value_parser = in_order)]
    events: Vec<InOrder>,
    /// System-wide collection from all CPUs
    #[arg(short = 'a', long = "all-cpus")]
    all_cpus: bool,
    /// Do not aggregate counts across CPUs (with -a or -C)
    #[arg(short = 'A', long = "no-aggr")]
    no_aggr: bool,
    /// Count only on these CPUs (`0,2-3`)
    #[arg(short = 'C', long = "cpu", value_name = "CPUS")]
    cpu: Option<String>,
    /// Count existing processes (comma list of pids, all their threads)
    #[arg(short = 'p', long = "pid", value_name = "PID")]
    pid: Option<String>,
    /// Count existing threads (comma list of tids)
    #[arg(short = 't', long = "tid", value_name = "TID")]
    tid: Option<String>,
    /// Print counts every MS milliseconds
    #[arg(short = 'I', long = "interval-print", value_name = "MS")]
    interval: Option<u64>,
    /// CSV output with this field separator
    #[arg(short = 'x', long = "field-separator", value_name = "SEP")]
    sep: Option<String>,
    /// Run the command N times and print the mean and its spread
    #[arg(short = 'r', long = "repeat", value_name = "N", default_value_t = 1)]
    repeat: u32,
    /// One JSON object per counter
    #[arg(short = 'j', long = "json")]
    json: bool,
    /// Write the counts to FILE instead of stderr
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<std::path::PathBuf>,
    /// Null run: open no counters, print only the elapsed time (with -e, count those
    /// events only)
    #[arg(short = 'n', long = "null")]
    null: bool,
    /// Append perf's detailed events: -d L1-dcache and LLC loads and misses, -dd also
    /// L1-icache, dTLB and iTLB, -ddd also L1-dcache prefetches
    #[arg(short = 'd', long = "detailed", action = clap::ArgAction::Count)]
    detailed: u8,
    /// Enable the counters MS milliseconds after the command starts (the elapsed time
    /// counts from then); -1 never enables them
    #[arg(
        short = 'D',
        long = "delay",
        value_name = "MS",
        allow_negative_numbers = true
    )]
    delay: Option<i64>,
    /// End the command (SIGTERM) and print the counts after MS milliseconds (at least 10)
    #[arg(long = "timeout", value_name = "MS")]
    timeout: Option<u64>,
    /// With -I: print this many intervals, then stop printing
    #[arg(long = "interval-count", value_name = "N")]
    interval_count: Option<u64>,
    /// Call sync() before each run
    #[arg(short = 'S', long = "sync")]
    sync: bool,
    /// Run this shell command before each run (a failure stops before counting)
    #[arg(long = "pre", value_name = "COMMAND")]
    pre: Option<String>,
    /// Run this shell command after each run
    #[arg(long = "post", value_name = "COMMAND")]
    post: Option<String>,
    /// Append to the -o file instead of replacing it
    #[arg(long = "append")]
    append: bool,
    /// Print nothing: no counts, no messages (the exit status still tells)
    #[arg(long = "quiet")]
    quiet: bool,
    /// Children of the command or of the counted threads are not counted
    #[arg(short = 'i', long = "no-inherit")]
    no_inherit: bool,
    /// Count every event in user space only
    #[arg(long = "all-user")]
    all_user: bool,
    /// Count every event in kernel space only
    #[arg(long = "all-kernel")]
    all_kernel: bool,
    /// Accepted for perf's sake: counts print without thousands' separators, as perf
    /// prints them in the C locale
    #[arg(short = 'B', long = "big-num", overrides_with = "no_big_num")]
    big_num: bool,
    /// No thousands' separators (always so here)
    #[arg(long = "no-big-num")]
    no_big_num: bool,
    /// With -I: print the totals after the intervals too
    #[arg(long = "summary")]
    summary: bool,
    /// With --summary and -x: no `summary` column on the totals' lines
    #[arg(long = "no-csv-summary")]
    no_csv_summary: bool,
    /// With -r: a table of each run's elapsed time and its distance from the mean
    #[arg(long = "table")]
    table: bool,
    /// Counts per socket (with -a or -C)
    #[arg(long = "per-socket")]
    per_socket: bool,
    /// Counts per die (with -a or -C)
    #[arg(long = "per-die")]
    per_die: bool,
    /// Counts per core (with -a or -C)
    #[arg(long = "per-core")]
    per_core: bool,
    /// Counts per NUMA node (with -a or -C)
    #[arg(long = "per-node")]
    per_node: bool,
    /// Counts per thread (with -p, -t, or -a for every thread of the system, busiest
    /// first, leaving out those that counted nothing)
    #[arg(long = "per-thread")]
    per_thread: bool,
    /// Print only the derived metrics, one line per reading (perf leaves out rates
    /// per second and CPUs utilized)
    #[arg(long = "metric-only")]
    metric_only: bool,
    /// Print more on stderr: the CPU's id, events the kernel does not support, and each
    /// counter's raw value, enabled and running time after each reading (to the output)
    #[arg(short = 'v', long = "verbose", action = clap::ArgAction::Count)]
    verbose: u8,
    /// Do not merge events of the same name from different PMUs (there are none to
    /// merge among the events counted here: accepted for perf's sake)
    #[arg(long = "no-merge")]
    no_merge: bool,
    /// With perf's `percore` event term (not taken here): per-thread counts of a core
    /// (accepted for perf's sake)
    #[arg(long = "percore-show-thread")]
    percore_show_thread: bool,
    /// Take commands while counting from descriptors (`fd:CTL[,ACK]`) or FIFOs
    /// (`fifo:CTL[,ACK]`): `enable`, `disable`, `enable NAME`, `disable NAME`, `ping`,
    /// `evlist`; each answered with `ack` on ACK (start disabled with -D -1)
    #[arg(long = "control", value_name = "fd:CTL[,ACK]|fifo:CTL[,ACK]")]
    control: Option<String>,
    /// Count the events defined before this option only in these cgroups (comma list,
    /// the Nth cgroup for the Nth event; one cgroup for all of them); needs -a or -C
    #[arg(short = 'G', long = "cgroup", value_name = "NAME", value_parser = in_order)]
    cgroup: Vec<InOrder>,
    /// Count every event once in each of these cgroups (comma list); needs -a or -C
    #[arg(long = "for-each-cgroup", value_name = "NAME")]
    for_each_cgroup: Option<String>,
    /// perf's metric groups: perf 6.1 has none that this machine's PMUs can count; it
    /// says so and counts the events without them, and so does this
    #[arg(short = 'M', long = "metrics", value_name = "METRICS")]
    metrics: Vec<String>,
    /// perf's top-down statistics (need the CPU's PMU): refused as perf refuses them
    #[arg(long = "topdown")]
    topdown: bool,
    /// The level of the top-down statistics (0: the highest one)
    #[arg(long = "td-level", value_name = "N", default_value_t = 0)]
    td_level: u32,
    /// perf's transaction statistics (need the CPU's PMU): refused as perf refuses them
    #[arg(short = 'T', long = "transaction")]
    transaction: bool,
    /// The command to run (after `--` or the options)
    #[arg(value_name = "COMMAND")]
    command: Vec<String>,
}

/// An option's value with its place among the options given, for options whose meaning
/// depends on their order (`-G` names cgroups for the events defined before it).
#[derive(Debug, Clone)]
pub(super) struct InOrder {
    seq: usize,
    text: String,
}

/// Values are parsed in command-line order: number them as they come.
fn in_order(s: &str) -> Result<InOrder, String> {
    static SEQ: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    Ok(InOrder {
        seq: SEQ.fetch_add(1, Ordering::SeqCst),
        text: s.to_string(),
    })
}

/// Run `tracectl perf ...`.
pub fn run(ctx: &Context, args: Args) -> Result<i32> {
    match args.command {
        PerfCommand::Stat(a) => {
            live_only(ctx, "perf stat")?;
            stat(ctx, a)
        }
        PerfCommand::Record(a) => {
            live_only(ctx, "perf record")?;
            super::perf_record::record(ctx, a)
        }
        PerfCommand::Script(a) => super::perf_read::script(ctx, a),
        PerfCommand::Report(a) => super::perf_read::report(ctx, *a),
        PerfCommand::List(a) => {
            live_only(ctx, "perf list")?;
            list(ctx, a)
        }
    }
}

/// `tracectl perf list`: perf 6.1's lines (`  %-50s [kind]`) for the events tracectl
/// opens, each argument in turn as perf takes them.
fn list(ctx: &Context, a: ListArgs) -> Result<i32> {
    use tracectl::perf::spec::{list_events, ListSelector};
    let tracepoints: Vec<(String, String)> = match ctx.tracefs() {
        Ok(t) => t
            .tracepoints()
            .context("listing the tracepoints")?
            .into_iter()
            .map(|e| (e.system, e.name))
            .collect(),
        Err(_) => Vec::new(),
    };
    let supported = |t: u32, c: u64| tracectl::perf::event_supported(t, c);
    let pmu_events =
        tracectl::perf::pmu::named_events(std::path::Path::new(tracectl::perf::pmu::SYSFS_PMUS));
    let selectors: Vec<ListSelector<'_>> = if a.what.is_empty() {
        vec![ListSelector::All]
    } else {
        a.what.iter().map(|w| ListSelector::parse(w)).collect()
    };
    let mut out = String::new();
    for sel in selectors {
        for e in list_events(sel, &supported, &pmu_events, &tracepoints) {
            if a.raw_dump {
                out.push_str(e.name.split(" OR ").next().unwrap_or_default());
                out.push(' ');
            } else {
                out.push_str(&format!("  {:<50} [{}]\n", e.name, e.kind));
            }
        }
    }
    let stdout = std::io::stdout();
    let mut lock = stdout.lock();
    match lock.write_all(out.as_bytes()).and_then(|()| lock.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(0),
        r => r.map(|()| 0).context("writing the list"),
    }
}

/// Counting and sampling happen on the running kernel: a `--tracefs` tree (a recording)
/// would name tracepoint ids of another kernel, so it is refused before anything runs.
fn live_only(ctx: &Context, command: &str) -> Result<()> {
    if ctx.tracefs.is_some() {
        ctx.tracefs()?.require_live(command)?;
    }
    Ok(())
}

/// perf's default events for a command or a process, and for system-wide counting.
fn default_events(system_wide: bool) -> &'static str {
    if system_wide {
        "cpu-clock,context-switches,cpu-migrations,page-faults,cycles,instructions,branches,branch-misses"
    } else {
        "task-clock,context-switches,cpu-migrations,page-faults,cycles,instructions,branches,branch-misses"
    }
}

/// The command forked and waiting for its counters (`None` without a command).
pub(super) fn gated_command(argv: &[String]) -> Result<Option<GatedChild>> {
    match argv.first() {
        None => Ok(None),
        Some(prog) => Ok(Some(
            GatedChild::spawn(argv).with_context(|| format!("cannot run '{prog}'"))?,
        )),
    }
}

/// The CPUs of `-C LIST` (all online ones without it), each checked to be online.
pub(super) fn cpus_of(list: Option<&str>, online: &[u32]) -> Result<Vec<u32>> {
    let Some(list) = list else {
        return Ok(online.to_vec());
    };
    let limit = online.iter().max().map_or(1, |m| m + 1);
    let cpus =
        tracectl::tracefs::parse_cpu_list(list, limit).map_err(|e| anyhow::anyhow!("-C: {e}"))?;
    if let Some(c) = cpus.iter().find(|c| !online.contains(c)) {
        bail!("-C {list}: CPU {c} is not online (online: {online:?})");
    }
    Ok(cpus)
}

pub(super) fn parse_ids(list: &str, what: &str) -> Result<Vec<i32>> {
    list.split(',')
        .map(|p| {
            p.trim()
                .parse::<i32>()
                .ok()
                .filter(|&v| v > 0)
                .with_context(|| {
                    format!(
                        "-{what} {list}: '{p}' is not a positive {}",
                        if what == "p" { "pid" } else { "tid" }
                    )
                })
        })
        .collect()
}

/// Parse `-e` lists (or `default` when none is given), tracepoints resolved in tracefs.
pub(super) fn resolve_events(
    ctx: &Context,
    given: &[String],
    default: &str,
) -> Result<Vec<EventSpec>> {
    let lists: Vec<String> = if given.is_empty() {
        vec![default.to_string()]
    } else {
        given.to_vec()
    };
    let tracefs = std::cell::OnceCell::new();
    let lookup = |pattern: &str| -> Result<Vec<(String, String, u64)>, String> {
        let t = match tracefs.get_or_init(|| ctx.tracefs().map_err(|e| format!("{e:#}"))) {
            Ok(t) => t,
            Err(e) => return Err(e.clone()),
        };
        // perf's tracepoint names take globs on either side of the `:`, not regexes.
        let available = t.available_events().map_err(|e| e.to_string())?;
        let names =
            tracectl::tracefs::select_events(&[pattern], &available).map_err(|e| e.to_string())?;
        if names.is_empty() {
            return Err("no such tracepoint".to_string());
        }
        names
            .into_iter()
            .map(|n| {
                let rel = format!("events/{}/{}/id", n.system, n.name);
                let id = t
                    .read_string(&rel)
                    .map_err(|e| e.to_string())?
                    .trim()
                    .parse::<u64>()
                    .map_err(|_| format!("{}: not a number", t.path(&rel).display()))?;
                Ok((n.system, n.name, id))
            })
            .collect()
    };
    let mut events = Vec::new();
    for list in &lists {
        // perf's option parser refuses an event it cannot parse or find.
        parse_event_list(list, &lookup, &mut events)
            .map_err(|e| with_status(e.into(), PERF_USAGE))?;
    }
    Ok(events)
}

/// perf's exit status for what it refuses with -EINVAL.
pub(super) const EINVAL_STATUS: ExitStatus = ExitStatus(256 - libc::EINVAL);

/// What the counters count, and the child when a command runs.
struct Plan {
    scope_of: Box<dyn Fn(Option<i32>) -> Scope>,
    target: StatTarget,
    split: StatSplit,
    /// What each slot of the scope is: a CPU's topology, or a thread and its comm.
    slots: Slots,
    /// Every thread of the system, counted one by one (`--per-thread -a`): threads that
    /// counted nothing are left out, as perf leaves them out.
    whole_system_threads: bool,
}

/// What the slots of a counting scope are, for splitting counts into rows.
#[derive(Clone)]
enum Slots {
    /// One slot: the command.
    One,
    /// CPUs, with where each sits.
    Cpus(Vec<(u32, tracectl::perf::CpuTopology)>),
    /// Threads, with their comms.
    Threads(Vec<(i32, String)>),
}

/// The one split the options ask for (perf refuses more than one).
fn split_of(args: &StatArgs) -> Result<StatSplit> {
    let asked: Vec<(&str, StatSplit)> = [
        (args.no_aggr, "-A", StatSplit::Cpu),
        (args.per_socket, "--per-socket", StatSplit::Socket),
        (args.per_die, "--per-die", StatSplit::Die),
        (args.per_core, "--per-core", StatSplit::Core),
        (args.per_node, "--per-node", StatSplit::Node),
        (args.per_thread, "--per-thread", StatSplit::Thread),
    ]
    .into_iter()
    .filter(|(on, _, _)| *on)
    .map(|(_, name, split)| (name, split))
    .collect();
    match asked.as_slice() {
        [] => Ok(StatSplit::Whole),
        [(_, split)] => Ok(*split),
        [(a, _), (b, _), ..] => {
            bail!("{a} and {b} cannot be combined: give one way to split the counts")
        }
    }
}

fn plan(args: &StatArgs) -> Result<Plan> {
    let has_cmd = !args.command.is_empty();
    let split = split_of(args)?;
    let system = args.all_cpus || args.cpu.is_some();
    if args.pid.is_some() && args.tid.is_some() {
        bail!("-p and -t cannot be combined: give the threads with -t, or the processes with -p");
    }
    if (args.pid.is_some() || args.tid.is_some()) && system {
        bail!("-p/-t count tasks on every CPU and cannot be combined with -a or -C");
    }
    match split {
        StatSplit::Whole => {}
        StatSplit::Thread => {
            if !(args.all_cpus || args.pid.is_some() || args.tid.is_some()) {
                bail!("--per-thread needs -p, -t or -a: it splits the counts of running threads");
            }
            if args.cpu.is_some() {
                bail!("--per-thread counts threads on every CPU and cannot be combined with -C");
            }
            if args.repeat > 1 {
                bail!("-r cannot be combined with --per-thread");
            }
        }
        _ if !system => bail!(
            "{} (counts split by CPU) needs -a or -C",
            match split {
                StatSplit::Cpu => "-A",
                StatSplit::Socket => "--per-socket",
                StatSplit::Die => "--per-die",
                StatSplit::Core => "--per-core",
                _ => "--per-node",
            }
        ),
        _ => {}
    }
    if args.repeat == 0 {
        bail!("-r 0: the number of runs must be at least 1");
    }
    if args.repeat > 1 && !has_cmd {
        bail!("-r needs a command to repeat");
    }
    if args.interval == Some(0) {
        bail!("-I 0: the interval must be at least 1 ms (perf's minimum is 10)");
    }
    if args.interval_count.is_some() && args.interval.is_none() {
        bail!("--interval-count needs -I: it is the number of intervals to print");
    }
    if args.interval_count == Some(0) {
        bail!("--interval-count 0: give the number of intervals to print (at least 1)");
    }
    if let Some(t) = args.timeout {
        if t < 10 {
            bail!("--timeout {t}: the timeout must be at least 10 ms");
        }
        if args.interval.is_some() {
            bail!("--timeout cannot be combined with -I (perf refuses it too)");
        }
        if t < 100 && !args.quiet {
            // perf's own warning, word for word.
            eprintln!(
                "timeout < 100ms. The overhead percentage could be high in some cases. Please proceed with caution."
            );
        }
    }
    if let Some(d) = args.delay {
        InitialDelay::from_ms(d).with_context(|| {
            format!("-D {d}: give milliseconds to wait, or -1 to never enable the counters")
        })?;
    }
    if args.append && args.output.is_none() {
        bail!("--append needs -o FILE: it appends the counts to that file");
    }
    if args.all_user && args.all_kernel {
        bail!("--all-user and --all-kernel cannot be combined");
    }
    if let Some(s) = &args.sep {
        if s.is_empty() {
            bail!("-x needs a separator, e.g. -x,");
        }
    }
    if args.json && args.sep.is_some() {
        bail!("--json and -x cannot be combined");
    }
    if split == StatSplit::Thread && args.all_cpus {
        let threads = tracectl::perf::all_threads().context("listing the threads in /proc")?;
        let tids: Vec<i32> = threads.iter().map(|t| t.0).collect();
        return Ok(Plan {
            scope_of: Box::new(move |_| Scope::Threads(tids.clone())),
            target: StatTarget::SystemWide,
            split,
            slots: Slots::Threads(threads),
            whole_system_threads: true,
        });
    }
    if system {
        let online = tracectl::perf::online_cpus().context("reading the online CPUs")?;
        let cpus = cpus_of(args.cpu.as_deref(), &online)?;
        let target = if args.all_cpus || args.cpu.is_none() {
            StatTarget::SystemWide
        } else {
            StatTarget::Cpus(args.cpu.clone().unwrap_or_default())
        };
        let mut placed = Vec::with_capacity(cpus.len());
        for &c in &cpus {
            let t = if matches!(split, StatSplit::Whole | StatSplit::Cpu) {
                tracectl::perf::CpuTopology::default()
            } else {
                tracectl::perf::cpu_topology(c)
                    .with_context(|| format!("reading the topology of CPU {c}"))?
            };
            placed.push((c, t));
        }
        return Ok(Plan {
            scope_of: Box::new(move |_| Scope::Cpus(cpus.clone())),
            target,
            split,
            slots: Slots::Cpus(placed),
            whole_system_threads: false,
        });
    }
    // Only --per-thread names its rows by the threads' comms: read them for it alone.
    let named = |tids: &[i32]| -> Vec<(i32, String)> {
        let comm = |t: i32| {
            if split == StatSplit::Thread {
                tracectl::perf::thread_comm(t).unwrap_or_default()
            } else {
                String::new()
            }
        };
        tids.iter().map(|&t| (t, comm(t))).collect()
    };
    if let Some(list) = &args.pid {
        let mut threads = Vec::new();
        for pid in parse_ids(list, "p")? {
            threads.extend(
                tracectl::perf::process_threads(pid)
                    .with_context(|| format!("-p {pid}: no such process"))?,
            );
        }
        let slots = Slots::Threads(named(&threads));
        return Ok(Plan {
            scope_of: Box::new(move |_| Scope::Threads(threads.clone())),
            target: StatTarget::Process(list.clone()),
            split,
            slots,
            whole_system_threads: false,
        });
    }
    if let Some(list) = &args.tid {
        let tids = parse_ids(list, "t")?;
        for t in &tids {
            if !std::path::Path::new(&format!("/proc/{t}")).exists() {
                bail!("-t {t}: no such thread");
            }
        }
        let slots = Slots::Threads(named(&tids));
        return Ok(Plan {
            scope_of: Box::new(move |_| Scope::Threads(tids.clone())),
            target: StatTarget::Thread(list.clone()),
            split,
            slots,
            whole_system_threads: false,
        });
    }
    if !has_cmd {
        bail!("nothing to count: give a command (`tracectl perf stat -- CMD`), -a, -C, -p or -t");
    }
    Ok(Plan {
        scope_of: Box::new(|pid| Scope::Command(pid.unwrap_or(0))),
        target: StatTarget::Command(args.command.join(" ")),
        split,
        slots: Slots::One,
        whole_system_threads: false,
    })
}

/// The metric perf derives for a hardware event, by its unit.
fn hw_metric(kind: &EventKind) -> Option<HwMetric> {
    // The cache events whose misses perf relates to their accesses: reads that miss.
    const READ_MISS: u64 = 1 << 16;
    Some(match kind {
        EventKind::Hardware(0) => HwMetric::Ghz,
        EventKind::Hardware(1) => HwMetric::InsnPerCycle,
        EventKind::Hardware(3) => HwMetric::OfAll("of all cache refs"),
        EventKind::Hardware(5) => HwMetric::OfAll("of all branches"),
        EventKind::Hardware(7) => HwMetric::Idle("frontend cycles idle"),
        EventKind::Hardware(8) => HwMetric::Idle("backend cycles idle"),
        EventKind::HwCache(c) => match c {
            c if *c == READ_MISS => HwMetric::OfAll("of all L1-dcache accesses"),
            c if *c == 1 | READ_MISS => HwMetric::OfAll("of all L1-icache accesses"),
            c if *c == 2 | READ_MISS => HwMetric::OfAll("of all LL-cache accesses"),
            c if *c == 3 | READ_MISS => HwMetric::OfAll("of all dTLB cache accesses"),
            c if *c == 4 | READ_MISS => HwMetric::OfAll("of all iTLB cache accesses"),
            _ => return None,
        },
        _ => return None,
    })
}

/// The raw value perf sorts `--per-thread` rows by (not scaled for multiplexing).
fn raw_value(c: &Count) -> u64 {
    match c {
        Count::Value(r) => r.value,
        _ => 0,
    }
}

/// Sort `v` as glibc's `qsort` (a top-down merge sort) sorts it with perf's comparator
/// of `--per-thread` rows, `(int)(b - a)` on unsigned 64-bit counts: rows compare by the
/// low 32 bits of their difference, so the order of counts more than 2^31 apart follows
/// the merge's steps, which this repeats.
fn sort_like_perf_threads<T: Clone>(v: &mut [T], key: &impl Fn(&T) -> u64) {
    let n = v.len();
    if n <= 1 {
        return;
    }
    let (n1, _) = (n / 2, n - n / 2);
    sort_like_perf_threads(&mut v[..n1], key);
    sort_like_perf_threads(&mut v[n1..], key);
    let mut merged = Vec::with_capacity(n);
    let (mut i, mut j) = (0, n1);
    while i < n1 && j < n {
        // perf's comparator: (int)(b->val - a->val) with a = left, b = right.
        let c = key(&v[j]).wrapping_sub(key(&v[i])) as u32 as i32;
        if c <= 0 {
            merged.push(v[i].clone());
            i += 1;
        } else {
            merged.push(v[j].clone());
            j += 1;
        }
    }
    merged.extend_from_slice(&v[i..n1]);
    merged.extend_from_slice(&v[j..n]);
    v.clone_from_slice(&merged);
}

/// Rows for one reading, split as the plan says: one per event; per CPU (`-A`: every
/// CPU of an event, event after event); per socket, die, core or node (every event of
/// a group, group after group); or per thread (every thread of an event, busiest first).
fn rows<'a>(
    events: &'a [EventSpec],
    counts: &[Vec<Count>],
    plan: &Plan,
    cgroups: &[Option<&'a str>],
) -> Vec<StatRow<'a>> {
    let row = |i: usize, count: Count, group: Option<StatGroup>| StatRow {
        name: &events[i].name,
        is_clock: events[i].kind.is_clock() && !unread_in_tool_group(events, i),
        msec: events[i].kind.is_clock() && !events[i].through_pmu,
        ns: matches!(events[i].kind, EventKind::Tool(_)),
        is_instructions: events[i].kind == EventKind::Hardware(1),
        is_cycles: events[i].kind == EventKind::Hardware(0),
        hw_metric: hw_metric(&events[i].kind),
        cgroup: cgroups.get(i).copied().flatten(),
        count,
        mean: None,
        noise_pct: None,
        group,
    };
    let is_tool = |e: usize| matches!(events[e].kind, EventKind::Tool(_));
    let mut out = Vec::new();
    match (plan.split, &plan.slots) {
        (StatSplit::Cpu, Slots::Cpus(cpus)) => {
            for (e, slots) in counts.iter().enumerate().take(events.len()) {
                // perf's tool events are on the first CPU alone.
                let n = if is_tool(e) { 1 } else { slots.len() };
                for (c, (cpu, _)) in slots.iter().zip(cpus).take(n) {
                    out.push(row(e, *c, Some(StatGroup::Cpu(*cpu))));
                }
            }
        }
        (
            split @ (StatSplit::Socket | StatSplit::Die | StatSplit::Core | StatSplit::Node),
            Slots::Cpus(cpus),
        ) => {
            // perf orders its aggregation ids by node, socket, die and core.
            let key = |t: &tracectl::perf::CpuTopology| match split {
                StatSplit::Socket => (0, t.socket, 0, 0),
                StatSplit::Die => (0, t.socket, t.die, 0),
                StatSplit::Core => (0, t.socket, t.die, t.core),
                _ => (t.node, 0, 0, 0),
            };
            let mut keys: Vec<_> = cpus.iter().map(|(_, t)| key(t)).collect();
            keys.sort_unstable();
            keys.dedup();
            for k in keys {
                let members: Vec<usize> =
                    (0..cpus.len()).filter(|&i| key(&cpus[i].1) == k).collect();
                let n = members.len();
                let group = match split {
                    StatSplit::Socket => StatGroup::Socket {
                        socket: k.1,
                        cpus: n,
                    },
                    StatSplit::Die => StatGroup::Die {
                        socket: k.1,
                        die: k.2,
                        cpus: n,
                    },
                    StatSplit::Core => StatGroup::Core {
                        socket: k.1,
                        die: k.2,
                        core: k.3,
                        cpus: n,
                    },
                    _ => StatGroup::Node { node: k.0, cpus: n },
                };
                for (e, slots) in counts.iter().enumerate().take(events.len()) {
                    let mine: Vec<Count> = members
                        .iter()
                        .filter_map(|&i| slots.get(i).copied())
                        .collect();
                    // perf counts the CPUs up to the first one where the event did not
                    // count (that one included).
                    let counted = if is_tool(e) {
                        // A tool event is on the first CPU alone.
                        usize::from(members.contains(&0))
                    } else {
                        mine.iter()
                            .position(|c| !matches!(c, Count::Value(r) if r.enabled > 0))
                            .map_or(mine.len(), |p| p + 1)
                    };
                    let mut group = group.clone();
                    match &mut group {
                        StatGroup::Socket { cpus, .. }
                        | StatGroup::Die { cpus, .. }
                        | StatGroup::Core { cpus, .. }
                        | StatGroup::Node { cpus, .. } => *cpus = counted,
                        StatGroup::Cpu(_) | StatGroup::Thread { .. } => {}
                    }
                    out.push(row(e, aggregate(&mine), Some(group)));
                }
            }
        }
        (StatSplit::Thread, Slots::Threads(threads)) => {
            for (e, slots) in counts.iter().enumerate().take(events.len()) {
                let mut mine: Vec<(Count, usize)> = slots
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| !plan.whole_system_threads || raw_value(c) != 0)
                    .map(|(i, c)| (*c, i))
                    .collect();
                sort_like_perf_threads(&mut mine, &|x: &(Count, usize)| raw_value(&x.0));
                for (c, i) in mine {
                    let (tid, comm) = threads[i].clone();
                    out.push(row(e, c, Some(StatGroup::Thread { comm, tid })));
                }
            }
        }
        _ => {
            for (e, slots) in counts.iter().enumerate().take(events.len()) {
                out.push(row(e, aggregate(slots), None));
            }
        }
    }
    out
}

struct Output {
    sink: Box<dyn Write>,
}

impl Output {
    fn put(&mut self, s: &str) -> Result<()> {
        self.sink.write_all(s.as_bytes())?;
        self.sink.flush()?;
        Ok(())
    }
}

/// perf's detailed events (`-d`, `-dd`, `-ddd`), appended to the event list.
fn detailed_events(level: u8) -> Vec<&'static str> {
    let mut v = Vec::new();
    if level >= 1 {
        v.extend([
            "L1-dcache-loads",
            "L1-dcache-load-misses",
            "LLC-loads",
            "LLC-load-misses",
        ]);
    }
    if level >= 2 {
        v.extend([
            "L1-icache-loads",
            "L1-icache-load-misses",
            "dTLB-loads",
            "dTLB-load-misses",
            "iTLB-loads",
            "iTLB-load-misses",
        ]);
    }
    if level >= 3 {
        v.extend(["L1-dcache-prefetches", "L1-dcache-prefetch-misses"]);
    }
    v
}

/// Run a `--pre`/`--post` command through the shell, as perf does with system(3).
fn run_shell(option: &str, cmd: &str) -> Result<std::process::ExitStatus> {
    std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(cmd)
        .status()
        .with_context(|| format!("{option} '{cmd}': cannot run /bin/sh"))
}

/// The events to count, each with the cgroup it counts in (`None` for everywhere), as
/// perf assigns them: the Nth name of the `-G` options to the Nth event defined before it
/// (one name alone to all of them), and `--for-each-cgroup` copying every event for each
/// cgroup.
struct Counted {
    events: Vec<EventSpec>,
    cgroups: Vec<Option<String>>,
    /// Whether rows name their cgroup (perf names it, empty, on all rows then).
    any_cgroup: bool,
}

fn events_and_cgroups(ctx: &Context, args: &StatArgs, system_wide: bool) -> Result<Counted> {
    if !args.cgroup.is_empty() && args.for_each_cgroup.is_some() {
        bail!("--cgroup and --for-each-cgroup cannot be used together");
    }
    let cgroup_wanted = !args.cgroup.is_empty() || args.for_each_cgroup.is_some();
    if cgroup_wanted && !(args.all_cpus || args.cpu.is_some()) {
        // perf's words (and its -EINVAL): cgroups are counted per CPU.
        return Err(with_status(
            anyhow::anyhow!(
                "both cgroup and no-aggregation modes only available in system-wide mode (give -a or -C)"
            ),
            EINVAL_STATUS,
        ));
    }
    let first_event = args.events.iter().map(|e| e.seq).min();
    if let Some(g) = args.cgroup.first() {
        if !first_event.is_some_and(|e| e < g.seq) {
            return Err(with_status(
                anyhow::anyhow!(
                    "must define events before cgroups (-G {} comes before any -e)",
                    g.text
                ),
                PERF_USAGE,
            ));
        }
    }
    let mut events: Vec<EventSpec> = Vec::new();
    let mut cgroups: Vec<Option<String>> = Vec::new();
    let mut given: usize = 0;
    let mut options: Vec<(usize, bool, &str)> = args
        .events
        .iter()
        .map(|e| (e.seq, true, e.text.as_str()))
        .chain(args.cgroup.iter().map(|g| (g.seq, false, g.text.as_str())))
        .collect();
    options.sort_by_key(|o| o.0);
    for (_, is_event, text) in options {
        if is_event {
            let more = resolve_events(ctx, &[text.to_string()], "")?;
            let base = events.len();
            events.extend(more.into_iter().map(|mut e| {
                e.leader += base;
                e
            }));
            cgroups.resize(events.len(), None);
            continue;
        }
        for name in text.split(',') {
            if !name.is_empty() {
                // Refused by perf's option parser.
                check_cgroup(name).map_err(|e| with_status(e, PERF_USAGE))?;
                let Some(slot) = cgroups.get_mut(given) else {
                    return Err(with_status(
                        anyhow::anyhow!(
                            "-G {text}: more cgroups than the {} events defined before it",
                            events.len()
                        ),
                        PERF_USAGE,
                    ));
                };
                *slot = Some(name.to_string());
            }
            given += 1;
        }
        if given == 1 {
            let first = cgroups[0].clone();
            cgroups.iter_mut().for_each(|c| *c = first.clone());
        }
    }
    if events.is_empty() && !(args.null && args.events.is_empty()) {
        events = resolve_events(ctx, &[], default_events(system_wide))?;
        cgroups = vec![None; events.len()];
    }
    if !args.null && args.detailed > 0 {
        let extra = detailed_events(args.detailed).join(",");
        let more = resolve_events(ctx, &[extra], "")?;
        let base = events.len();
        events.extend(more.into_iter().map(|mut e| {
            e.leader += base;
            e
        }));
        cgroups.resize(events.len(), None);
    }
    if let Some(list) = &args.for_each_cgroup {
        let (base, mut all, mut names) = (events.clone(), Vec::new(), Vec::new());
        let chosen: Vec<String> = match tracectl::perf::cgroup::is_pattern_list(list) {
            true => tracectl::perf::cgroup::matching(list).map_err(|e| {
                with_status(
                    anyhow::anyhow!("--for-each-cgroup {list}: {e}"),
                    EINVAL_STATUS,
                )
            })?,
            false => list
                .split(',')
                .filter(|n| !n.is_empty())
                .map(str::to_string)
                .collect(),
        };
        for name in &chosen {
            check_cgroup(name).map_err(|e| with_status(e, EINVAL_STATUS))?;
            let at = all.len();
            all.extend(base.iter().cloned().map(|mut e| {
                e.leader += at;
                e
            }));
            names.resize(all.len(), Some(name.to_string()));
        }
        events = all;
        cgroups = names;
    }
    Ok(Counted {
        events,
        cgroups,
        any_cgroup: given > 0 || args.for_each_cgroup.is_some(),
    })
}

/// A cgroup perf can count in, or perf's error for it.
fn check_cgroup(name: &str) -> Result<()> {
    tracectl::perf::cgroup::open(name)
        .map(|_| ())
        .map_err(|e| anyhow::anyhow!("{e}"))
}

/// perf's answer to `-T` and `--topdown` on a machine without the CPU's PMU, with its
/// exit status: these statistics count CPU events that this machine does not have.
fn pmu_statistics_refused(args: &StatArgs, split: StatSplit) -> Result<Option<(String, i32)>> {
    if args.null || !(args.transaction || args.topdown) {
        return Ok(None);
    }
    if std::path::Path::new("/sys/bus/event_source/devices/cpu").exists() {
        bail!("-T and --topdown are not supported: they need perf's event tables for this CPU");
    }
    // perf exits with -EINVAL.
    let einval = 256 - libc::EINVAL;
    if args.transaction {
        let text = "Cannot set up transaction events\n\
            event syntax error: 'task-clock,{instructions,cycles,cpu/cycles-t/,cpu/tx-sta..'\n\
            \x20                    \\___ Cannot find PMU `cpu'. Missing kernel support?\n";
        return Ok(Some((text.to_string(), einval)));
    }
    let text = if args.td_level > 1 {
        "Invalid top-down metrics level. The max level is 1."
    } else if !matches!(split, StatSplit::Whole | StatSplit::Core) {
        "top down event configuration requires --per-core mode"
    } else if !(args.all_cpus || args.cpu.is_some()) || !args.cgroup.is_empty() {
        "top down event configuration requires system-wide mode (-a)"
    } else {
        "System does not support topdown"
    };
    Ok(Some((format!("{text}\n"), einval)))
}

/// perf's CPU id, as `-v` prints it: `vendor-family-MODEL-STEPPING` (model and stepping
/// in hexadecimal), from /proc/cpuinfo.
fn cpuid() -> Option<String> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let field = |name: &str| -> Option<&str> {
        text.lines()
            .find(|l| l.split(':').next().is_some_and(|k| k.trim() == name))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim())
    };
    let num = |name: &str| field(name)?.parse::<u32>().ok();
    Some(format!(
        "{}-{}-{:X}-{:X}",
        field("vendor_id")?,
        num("cpu family")?,
        num("model")?,
        num("stepping")?
    ))
}

/// `-v`'s lines after a reading without a split: `name: value enabled running` for each
/// counter (to the output), or "failed to read counter" (to stderr) for one the kernel
/// does not support.
fn verbose_counts(out: &mut Output, events: &[EventSpec], counts: &[Vec<Count>]) -> Result<()> {
    for (e, slots) in events.iter().zip(counts) {
        match aggregate(slots) {
            Count::NotSupported => eprintln!("failed to read counter {}", e.name),
            Count::NotCounted => out.put(&format!("{}: 0 0 0\n", e.name))?,
            Count::Value(r) => {
                let v = Count::Value(r).scaled().unwrap_or(0.0).round() as u64;
                out.put(&format!("{}: {v} {} {}\n", e.name, r.enabled, r.running))?
            }
        }
    }
    Ok(())
}

fn stat(ctx: &Context, args: StatArgs) -> Result<i32> {
    // Validate everything before a counter is opened or a command started.
    let plan = plan(&args)?;
    if args.metric_only && args.repeat > 1 {
        bail!("--metric-only is not supported with -r");
    }
    if args.metric_only && plan.split == StatSplit::Thread {
        bail!("--metric-only is not supported with --per-thread");
    }
    let system_wide = matches!((plan.scope_of)(None), Scope::Cpus(_))
        || matches!(plan.target, StatTarget::SystemWide);
    let Counted {
        mut events,
        cgroups,
        any_cgroup,
    } = events_and_cgroups(ctx, &args, system_wide)?;
    for m in &args.metrics {
        // perf knows no metric that this machine's PMUs can count; it says so and goes on.
        let first = m.split(',').next().unwrap_or_default();
        if !args.quiet {
            eprintln!("Cannot find metric or group `{first}'");
        }
    }
    if let Some((text, code)) = pmu_statistics_refused(&args, plan.split)? {
        eprint!("{text}");
        return Ok(code);
    }
    let mut control = args
        .control
        .as_deref()
        .map(perf_control::Control::open)
        .transpose()
        // perf's option parser opens the control channel.
        .map_err(|e| with_status(e, PERF_USAGE))?;
    let cgroup_dirs: Vec<Option<std::fs::File>> = cgroups
        .iter()
        .map(|c| {
            c.as_deref()
                .map(|n| tracectl::perf::cgroup::open(n).map(|g| g.dir))
                .transpose()
        })
        .collect::<std::io::Result<_>>()?;
    if args.verbose > 0 {
        if let Some(id) = cpuid() {
            eprintln!("Using CPUID {id}");
        }
        if control.is_none() {
            eprintln!("Control descriptor is not initialized");
        }
    }
    for e in &mut events {
        if args.all_user {
            e.exclude_kernel = true;
            e.exclude_user = false;
        } else if args.all_kernel {
            e.exclude_kernel = false;
            e.exclude_user = true;
        }
    }
    let style = style_of(&args);
    let quiet = args.quiet;
    let mut out = Output {
        sink: match &args.output {
            _ if quiet => Box::new(std::io::sink()),
            Some(p) => Box::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .write(true)
                    .append(args.append)
                    .truncate(!args.append)
                    .open(p)
                    .with_context(|| format!("-o {}", p.display()))?,
            ),
            None => Box::new(std::io::stderr()),
        },
    };
    if args.output.is_some() && !quiet {
        // perf starts its output file with the time, as ctime(3) writes it.
        let now = chrono::Local::now().format("%a %b %e %H:%M:%S %Y");
        out.put(&format!("# started on {now}\n\n"))?;
    }
    // Checked by plan().
    let delay = args
        .delay
        .and_then(InitialDelay::from_ms)
        .unwrap_or_default();
    let opts = tracectl::perf::CountOptions {
        no_inherit: args.no_inherit,
        ignore_missing_threads: plan.whole_system_threads,
        // -D 0 is no delay, as in perf.
        enable_later: delay.is_delayed(),
    };
    if plan.whole_system_threads {
        // A descriptor per thread and event: raise the limit, as perf does.
        tracectl::perf::raise_open_files_limit();
    }
    let stop = tracectl::tracefs::stop_on_signals();

    let mut per_run: Vec<Vec<RunStats>> = Vec::new();
    let mut elapsed_stats = RunStats::default();
    let mut elapsed_runs = Vec::new();
    // The last run's counts, its elapsed nanoseconds, and the command's user/sys seconds.
    type LastRun = (Vec<Vec<Count>>, f64, Option<(f64, f64)>);
    let mut last: Option<LastRun> = None;
    let mut exit_code = 0;
    let cgroup_names: Vec<Option<&str>> = cgroups
        .iter()
        .map(|c| any_cgroup.then(|| c.as_deref().unwrap_or("")))
        .collect();
    let rows = |counts: &[Vec<Count>]| rows(&events, counts, &plan, &cgroup_names);
    let mut warned = false;
    let mut intervals_printed = 0;
    for run in 0..args.repeat {
        if args.verbose > 0 && args.repeat > 1 {
            out.put(&format!("[ perf stat: executing run #{} ... ]\n", run + 1))?;
        }
        if let Some(pre) = &args.pre {
            let st = run_shell("--pre", pre)?;
            if !st.success() {
                bail!("--pre '{pre}' failed ({st}); nothing was counted");
            }
        }
        if args.sync {
            nix::unistd::sync();
        }
        let mut child = gated_command(&args.command)?;
        let scope = (plan.scope_of)(child.as_ref().map(GatedChild::pid));
        let session = StatSession::open_in_cgroups(&events, scope, opts, &cgroup_dirs)?;
        if args.verbose > 0 && !std::mem::replace(&mut warned, true) {
            for (e, slots) in events.iter().zip(session.read()?) {
                if slots.iter().all(|c| *c == Count::NotSupported) {
                    eprintln!("Warning:\n{} event is not supported by the kernel.", e.name);
                }
            }
        }
        let mut start = Instant::now();
        let delayed = opts.enable_later;
        if delayed && !quiet {
            eprintln!("Events disabled");
        }
        if !delayed && !matches!(session.scope(), Scope::Command(_)) {
            session.enable().context("enabling the counters")?;
        }
        if let Some(c) = child.as_mut() {
            c.release().context("starting the command")?;
        }
        // -D MS: the counters are enabled MS after the command starts, whether it still
        // runs or not, and the elapsed time counts from then; -D -1 never enables them.
        if delay.wait_from(start, stop) {
            session.enable().context("enabling the counters")?;
            if !quiet {
                eprintln!("Events enabled");
            }
            start = Instant::now();
        }
        let deadline = args.timeout.map(|ms| start + Duration::from_millis(ms));
        let mut timed_out = false;
        let mut exit = None;
        let mut prev: Option<Vec<Vec<Count>>> = None;
        let mut intervals = 0u64;
        let interval = args.interval.map(Duration::from_millis);
        let mut next_tick = interval.map(|i| start + i);
        loop {
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) && !timed_out {
                timed_out = true;
                match child.as_ref() {
                    Some(c) => c.terminate().context("ending the command at --timeout")?,
                    None => break,
                }
            }
            let wake = [next_tick, deadline.filter(|_| !timed_out)]
                .into_iter()
                .flatten()
                .min();
            let mut wait = wake
                .map(|t| t.saturating_duration_since(now))
                .unwrap_or(Duration::from_millis(100));
            if let Some(c) = control.as_mut() {
                c.serve(&session, &events)?;
                wait = wait.min(Duration::from_millis(10));
            }
            if let Some(c) = child.as_mut() {
                if let Some(e) = c.wait_timeout(wait).context("waiting for the command")? {
                    exit = Some(e);
                    break;
                }
            } else if stop.load(Ordering::SeqCst) {
                break;
            } else {
                std::thread::sleep(wait.min(Duration::from_millis(10)));
            }
            let now = Instant::now();
            if let (Some(tick), Some(iv)) = (next_tick, interval) {
                if now >= tick {
                    let mut counts = session.read()?;
                    let t = start.elapsed();
                    // The command's CPU times are known only once it has ended.
                    let tool = ToolReadings {
                        duration_ns: t.as_nanos() as u64,
                        ..Default::default()
                    };
                    set_tool_counts(&events, &mut counts, session.scope(), tool);
                    let shown = since_last(&counts, prev.as_ref());
                    let rs = rows(&shown);
                    let lines = interval_lines(&args, &plan, &rs, intervals, t, iv);
                    if args.verbose > 0 && plan.split == StatSplit::Whole {
                        verbose_counts(&mut out, &events, &shown)?;
                    }
                    out.put(&lines)?;
                    prev = Some(counts);
                    intervals += 1;
                    next_tick = Some(tick + iv);
                    if args.interval_count.is_some_and(|n| intervals >= n) {
                        // perf prints no more, but waits for the command to end.
                        next_tick = None;
                        if child.is_none() {
                            break;
                        }
                    }
                }
            }
        }
        let elapsed = start.elapsed();
        session.disable().ok();
        let mut counts = session.read()?;
        // perf takes no rusage of a command it counts in intervals: its CPU times are 0.
        if args.interval.is_some() {
            if let Some(e) = exit.as_mut() {
                (e.user_us, e.sys_us) = (0, 0);
            }
        }
        let tool = ToolReadings {
            duration_ns: elapsed.as_nanos() as u64,
            user_ns: exit.as_ref().map_or(0, |e| e.user_us * 1000),
            system_ns: exit.as_ref().map_or(0, |e| e.sys_us * 1000),
        };
        set_tool_counts(&events, &mut counts, session.scope(), tool);
        if args.verbose > 0 && plan.split == StatSplit::Whole && args.interval.is_none() {
            verbose_counts(&mut out, &events, &counts)?;
        }
        if let (Some(e), Some(prog)) = (&exit, args.command.first()) {
            if let Some((_, text)) = e.signal() {
                if !quiet {
                    eprintln!("{prog}: {text}");
                }
            }
        }
        if let Some(post) = &args.post {
            // perf runs it after each run and pays no heed to how it ends.
            let _ = run_shell("--post", post);
        }
        if args.interval.is_some() {
            if args.interval_count.is_none() {
                // The last, partial interval up to the command's end, as perf prints it.
                // Its rates are over a whole interval's length, as perf computes them.
                let shown = since_last(&counts, prev.as_ref());
                let length = args.interval.map(Duration::from_millis).unwrap_or(elapsed);
                let rs = rows(&shown);
                let lines = interval_lines(&args, &plan, &rs, intervals, elapsed, length);
                if args.verbose > 0 && plan.split == StatSplit::Whole {
                    verbose_counts(&mut out, &events, &shown)?;
                }
                out.put(&lines)?;
                intervals += 1;
            }
            intervals_printed = intervals;
            if args.verbose > 0 && plan.split == StatSplit::Whole {
                // perf reads the counters once more for the totals.
                verbose_counts(&mut out, &events, &since_last(&counts, Some(&counts)))?;
            }
            if !args.summary {
                return Ok(exit.map_or(0, |e| e.code()));
            }
        }
        if let Some(e) = exit {
            // The end --timeout asked for is not a failure of the command.
            exit_code = if timed_out && e.signal().is_some_and(|(s, _)| s == libc::SIGTERM) {
                0
            } else {
                e.code()
            };
            last = Some((
                counts.clone(),
                elapsed.as_nanos() as f64,
                Some((e.user_us as f64 / 1e6, e.sys_us as f64 / 1e6)),
            ));
        } else {
            last = Some((counts.clone(), elapsed.as_nanos() as f64, None));
        }
        elapsed_stats.push(elapsed.as_secs_f64());
        elapsed_runs.push(elapsed.as_secs_f64());
        let rs = rows(&counts);
        if per_run.is_empty() {
            // The scaled value, the enabled time and the running time of each run.
            per_run = vec![vec![RunStats::default(); 3]; rs.len()];
        }
        for (stats, r) in per_run.iter_mut().zip(&rs) {
            if let (Some(v), Count::Value(c)) = (r.count.scaled(), r.count) {
                stats[0].push(v);
                stats[1].push(c.enabled as f64);
                stats[2].push(c.running as f64);
            }
        }
        if stop.load(Ordering::SeqCst) {
            break;
        }
    }
    let Some((counts, elapsed_ns, user_sys)) = last else {
        return Ok(exit_code);
    };
    let mut rs = rows(&counts);
    let runs = args.repeat;
    if runs > 1 {
        for (r, stats) in rs.iter_mut().zip(&per_run) {
            let s = &stats[0];
            if s.runs() > 0 {
                // perf prints the mean enabled and running times of the runs.
                if let Count::Value(c) = &mut r.count {
                    c.enabled = stats[1].mean() as u64;
                    c.running = stats[2].mean() as u64;
                }
                r.mean = Some(s.mean());
                r.noise_pct = Some(if s.mean() != 0.0 {
                    100.0 * s.stddev_of_mean() / s.mean()
                } else {
                    0.0
                });
            }
        }
    }
    // A null run (-n) prints only its times, and nothing at all in CSV or JSON.
    if events.is_empty() && !matches!(style, StatStyle::Table) && !args.metric_only {
        return Ok(exit_code);
    }
    let mut s = String::new();
    if matches!(style, StatStyle::Table) {
        s.push_str(&perf_stat::header(&plan.target, runs));
    }
    let elapsed_mean_ns = if runs > 1 {
        elapsed_stats.mean() * 1e9
    } else {
        elapsed_ns
    };
    // --summary after -I: the totals, each CSV line marked as perf marks it.
    let summary_prefix = (args.summary && args.interval.is_some() && !args.no_csv_summary)
        .then(|| format!("{:>16}", "summary"));
    let prefix = match style {
        StatStyle::Csv(_) => summary_prefix.as_deref(),
        _ => None,
    };
    if args.metric_only {
        // After intervals, perf repeats the units only where its count of printings
        // comes round (every 26th).
        let printings = if args.interval.is_some() {
            intervals_printed
        } else {
            0
        };
        if printings % 26 == 0 {
            s.push_str(&metric_only::header(&rs, &style, plan.split, false));
        }
        metric_only::write_lines(&mut s, &rs, &style, elapsed_mean_ns, None, prefix);
        if rs.is_empty() && plan.split == StatSplit::Whole {
            // perf ends the line of no counters all the same.
            s.push('\n');
        }
    } else {
        perf_stat::write_rows(&mut s, &rs, &style, elapsed_mean_ns, prefix);
    }
    if matches!(style, StatStyle::Table) {
        let sd = (runs > 1).then(|| elapsed_stats.stddev_of_mean());
        let ru = if matches!(plan.target, StatTarget::Command(_)) {
            user_sys
        } else {
            None
        };
        let table = (args.table && runs > 1).then_some(elapsed_runs.as_slice());
        let footer = perf_stat::footer(elapsed_mean_ns / 1e9, sd, ru, table);
        // With no counter lines, the footer follows the header's blank line directly.
        s.push_str(if events.is_empty() {
            footer.strip_prefix('\n').unwrap_or(&footer)
        } else {
            &footer
        });
    }
    out.put(&s)?;
    Ok(exit_code)
}

/// How the counts are printed: `--json`, `-x SEP` or the table.
fn style_of(args: &StatArgs) -> StatStyle {
    if args.json {
        StatStyle::Json
    } else if let Some(s) = &args.sep {
        StatStyle::Csv(s.clone())
    } else {
        StatStyle::Table
    }
}

/// One interval's lines (`-I`), under the header that perf repeats every 25 intervals;
/// `index` counts the intervals printed before, `at` is the time since the start and
/// `length` the interval's.
fn interval_lines(
    args: &StatArgs,
    plan: &Plan,
    rows: &[StatRow],
    index: u64,
    at: Duration,
    length: Duration,
) -> String {
    let style = style_of(args);
    let mut s = String::new();
    let prefix = format!("{:>6}.{:09}", at.as_secs(), at.subsec_nanos());
    if args.metric_only {
        if index % 25 == 0 {
            s.push_str(&metric_only::header(rows, &style, plan.split, true));
        }
        let p = if args.json {
            format!("{}.{:09}", at.as_secs(), at.subsec_nanos())
        } else {
            prefix
        };
        metric_only::write_lines(
            &mut s,
            rows,
            &style,
            length.as_nanos() as f64,
            Some(&p),
            None,
        );
        return s;
    }
    if style == StatStyle::Table && index % 25 == 0 {
        s.push_str(perf_stat::interval_header(plan.split));
    }
    perf_stat::write_rows(
        &mut s,
        rows,
        &style,
        length.as_nanos() as f64,
        Some(&prefix),
    );
    s
}

/// The counts of an interval: `counts` less the reading before it (the first interval
/// counts from the start).
fn since_last(counts: &[Vec<Count>], prev: Option<&Vec<Vec<Count>>>) -> Vec<Vec<Count>> {
    match prev {
        Some(p) => counts
            .iter()
            .zip(p)
            .map(|(n, b)| n.iter().zip(b).map(|(n, b)| delta(n, b)).collect())
            .collect(),
        None => counts.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::sort_like_perf_threads;

    #[test]
    fn per_thread_rows_busiest_first_ties_in_thread_order() {
        let mut v = vec![
            (5u64, 'a'),
            (9, 'b'),
            (5, 'c'),
            (0, 'd'),
            (9, 'e'),
            (7, 'f'),
        ];
        sort_like_perf_threads(&mut v, &|x: &(u64, char)| x.0);
        let order: String = v.iter().map(|x| x.1).collect();
        assert_eq!(order, "befacd");
    }
}
