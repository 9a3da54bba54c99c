//! `tracectl perf ...`: perf's commands with perf's option names (so that trace-cmd's
//! `stat` keeps its meaning at the top level).

use std::io::Write;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};
use clap::{Parser, Subcommand};
use tracectl::perf::{
    aggregate, delta, parse_event_list, Count, EventKind, EventSpec, GatedChild, RunStats, Scope,
    StatSession,
};
use tracectl::render::perf_stat::{self, StatRow, StatStyle, StatTarget};

use super::common::Context;

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
}

/// `tracectl perf stat`, with `perf stat`'s options.
#[derive(Debug, Parser)]
#[command(trailing_var_arg = true)]
pub struct StatArgs {
    /// Event selector (repeatable; comma lists, `{a,b}` groups, `:u`/`:k` modifiers,
    /// `sys:event` tracepoints and globs)
    #[arg(short = 'e', long = "event", value_name = "EVENT")]
    events: Vec<String>,
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
    /// The command to run (after `--` or the options)
    #[arg(value_name = "COMMAND")]
    command: Vec<String>,
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
        parse_event_list(list, &lookup, &mut events)?;
    }
    Ok(events)
}

/// What the counters count, and the child when a command runs.
struct Plan {
    scope_of: Box<dyn Fn(Option<i32>) -> Scope>,
    target: StatTarget,
    per_cpu: bool,
}

fn plan(args: &StatArgs) -> Result<Plan> {
    let has_cmd = !args.command.is_empty();
    if args.pid.is_some() && args.tid.is_some() {
        bail!("-p and -t cannot be combined: give the threads with -t, or the processes with -p");
    }
    if (args.pid.is_some() || args.tid.is_some()) && (args.all_cpus || args.cpu.is_some()) {
        bail!("-p/-t count tasks on every CPU and cannot be combined with -a or -C");
    }
    if args.no_aggr && !(args.all_cpus || args.cpu.is_some()) {
        bail!("-A (per-CPU counts) needs -a or -C");
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
    if let Some(s) = &args.sep {
        if s.is_empty() {
            bail!("-x needs a separator, e.g. -x,");
        }
    }
    if args.json && args.sep.is_some() {
        bail!("--json and -x cannot be combined");
    }
    if args.all_cpus || args.cpu.is_some() {
        let online = tracectl::perf::online_cpus().context("reading the online CPUs")?;
        let cpus = cpus_of(args.cpu.as_deref(), &online)?;
        let target = if args.all_cpus || args.cpu.is_none() {
            StatTarget::SystemWide
        } else {
            StatTarget::Cpus(args.cpu.clone().unwrap_or_default())
        };
        return Ok(Plan {
            scope_of: Box::new(move |_| Scope::Cpus(cpus.clone())),
            target,
            per_cpu: args.no_aggr,
        });
    }
    if let Some(list) = &args.pid {
        let mut threads = Vec::new();
        for pid in parse_ids(list, "p")? {
            threads.extend(
                tracectl::perf::process_threads(pid)
                    .with_context(|| format!("-p {pid}: no such process"))?,
            );
        }
        return Ok(Plan {
            scope_of: Box::new(move |_| Scope::Threads(threads.clone())),
            target: StatTarget::Process(list.clone()),
            per_cpu: false,
        });
    }
    if let Some(list) = &args.tid {
        let tids = parse_ids(list, "t")?;
        for t in &tids {
            if !std::path::Path::new(&format!("/proc/{t}")).exists() {
                bail!("-t {t}: no such thread");
            }
        }
        return Ok(Plan {
            scope_of: Box::new(move |_| Scope::Threads(tids.clone())),
            target: StatTarget::Thread(list.clone()),
            per_cpu: false,
        });
    }
    if !has_cmd {
        bail!("nothing to count: give a command (`tracectl perf stat -- CMD`), -a, -C, -p or -t");
    }
    Ok(Plan {
        scope_of: Box::new(|pid| Scope::Command(pid.unwrap_or(0))),
        target: StatTarget::Command(args.command.join(" ")),
        per_cpu: false,
    })
}

fn slot_cpus(scope: &Scope) -> Vec<u32> {
    match scope {
        Scope::Cpus(c) => c.clone(),
        _ => Vec::new(),
    }
}

/// Rows for one reading: aggregated per event, or per CPU with `-A`.
fn rows<'a>(
    events: &'a [EventSpec],
    counts: &[Vec<Count>],
    cpus: &[u32],
    per_cpu: bool,
) -> Vec<StatRow<'a>> {
    let row = |e: &'a EventSpec, count: Count, cpu: Option<u32>| StatRow {
        name: &e.name,
        is_clock: e.kind.is_clock(),
        is_instructions: e.kind == EventKind::Hardware(1),
        is_cycles: e.kind == EventKind::Hardware(0),
        count,
        mean: None,
        noise_pct: None,
        cpu,
    };
    let mut out = Vec::new();
    for (e, slots) in events.iter().zip(counts) {
        if per_cpu {
            for (i, c) in slots.iter().enumerate() {
                out.push(row(e, *c, cpus.get(i).copied()));
            }
        } else {
            out.push(row(e, aggregate(slots), None));
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

fn stat(ctx: &Context, args: StatArgs) -> Result<i32> {
    // Validate everything before a counter is opened or a command started.
    let plan = plan(&args)?;
    let system_wide = matches!((plan.scope_of)(None), Scope::Cpus(_));
    let events = resolve_events(ctx, &args.events, default_events(system_wide))?;
    let style = if args.json {
        StatStyle::Json
    } else if let Some(s) = &args.sep {
        StatStyle::Csv(s.clone())
    } else {
        StatStyle::Table
    };
    let mut out = Output {
        sink: match &args.output {
            Some(p) => {
                Box::new(std::fs::File::create(p).with_context(|| format!("-o {}", p.display()))?)
            }
            None => Box::new(std::io::stderr()),
        },
    };
    let stop = tracectl::tracefs::stop_on_signals();

    let mut per_run: Vec<Vec<RunStats>> = Vec::new();
    let mut elapsed_stats = RunStats::default();
    // The last run's counts, its elapsed nanoseconds, and the command's user/sys seconds.
    type LastRun = (Vec<Vec<Count>>, f64, Option<(f64, f64)>);
    let mut last: Option<LastRun> = None;
    let mut exit_code = 0;
    for _ in 0..args.repeat {
        let mut child = gated_command(&args.command)?;
        let scope = (plan.scope_of)(child.as_ref().map(GatedChild::pid));
        let cpus = slot_cpus(&scope);
        let session = StatSession::open(&events, scope)?;
        let start = Instant::now();
        if !matches!(session.scope(), Scope::Command(_)) {
            session.enable().context("enabling the counters")?;
        }
        if let Some(c) = child.as_mut() {
            c.release().context("starting the command")?;
        }
        let mut exit = None;
        let mut prev: Option<Vec<Vec<Count>>> = None;
        let mut prev_at: Option<Duration> = None;
        let mut printed_header = false;
        let interval = args.interval.map(Duration::from_millis);
        let mut next_tick = interval.map(|i| start + i);
        loop {
            let now = Instant::now();
            let wait = next_tick
                .map(|t| t.saturating_duration_since(now))
                .unwrap_or(Duration::from_millis(100));
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
                    let counts = session.read()?;
                    let shown = since_last(&counts, prev.as_ref());
                    if matches!(style, StatStyle::Table) && !printed_header {
                        out.put(&perf_stat::interval_header(plan.per_cpu))?;
                        printed_header = true;
                    }
                    let t = start.elapsed();
                    let prefix = format!("{:>6}.{:09}", t.as_secs(), t.subsec_nanos());
                    let mut s = String::new();
                    let rs = rows(&events, &shown, &cpus, plan.per_cpu);
                    perf_stat::write_rows(&mut s, &rs, &style, iv.as_nanos() as f64, Some(&prefix));
                    out.put(&s)?;
                    prev = Some(counts);
                    prev_at = Some(t);
                    next_tick = Some(tick + iv);
                }
            }
        }
        let elapsed = start.elapsed();
        session.disable().ok();
        let counts = session.read()?;
        if args.interval.is_some() {
            // The last, partial interval up to the command's end, as perf prints it.
            let shown = since_last(&counts, prev.as_ref());
            let since = prev_at.map_or(elapsed, |t| elapsed.saturating_sub(t));
            let prefix = format!("{:>6}.{:09}", elapsed.as_secs(), elapsed.subsec_nanos());
            let mut s = String::new();
            let rs = rows(&events, &shown, &cpus, plan.per_cpu);
            perf_stat::write_rows(&mut s, &rs, &style, since.as_nanos() as f64, Some(&prefix));
            out.put(&s)?;
            return Ok(exit.map_or(0, |e| e.code()));
        }
        if let Some(e) = exit {
            exit_code = e.code();
            last = Some((
                counts.clone(),
                elapsed.as_nanos() as f64,
                Some((e.user_us as f64 / 1e6, e.sys_us as f64 / 1e6)),
            ));
        } else {
            last = Some((counts.clone(), elapsed.as_nanos() as f64, None));
        }
        elapsed_stats.push(elapsed.as_secs_f64());
        let rs = rows(&events, &counts, &slot_cpus_of(&plan), plan.per_cpu);
        if per_run.is_empty() {
            per_run = vec![vec![RunStats::default()]; rs.len()];
        }
        for (stats, r) in per_run.iter_mut().zip(&rs) {
            if let Some(v) = r.count.scaled() {
                stats[0].push(v);
            }
        }
        if stop.load(Ordering::SeqCst) {
            break;
        }
    }
    let Some((counts, elapsed_ns, user_sys)) = last else {
        return Ok(exit_code);
    };
    let cpus = slot_cpus_of(&plan);
    let mut rs = rows(&events, &counts, &cpus, plan.per_cpu);
    let runs = args.repeat;
    if runs > 1 {
        for (r, stats) in rs.iter_mut().zip(&per_run) {
            let s = &stats[0];
            if s.runs() > 0 {
                r.mean = Some(s.mean());
                r.noise_pct = Some(if s.mean() != 0.0 {
                    100.0 * s.stddev_of_mean() / s.mean()
                } else {
                    0.0
                });
            }
        }
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
    perf_stat::write_rows(&mut s, &rs, &style, elapsed_mean_ns, None);
    if matches!(style, StatStyle::Table) {
        let sd = (runs > 1).then(|| elapsed_stats.stddev_of_mean());
        let ru = if matches!(plan.target, StatTarget::Command(_)) {
            user_sys
        } else {
            None
        };
        s.push_str(&perf_stat::footer(elapsed_mean_ns / 1e9, sd, ru));
    }
    out.put(&s)?;
    Ok(exit_code)
}

fn slot_cpus_of(plan: &Plan) -> Vec<u32> {
    slot_cpus(&(plan.scope_of)(None))
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
