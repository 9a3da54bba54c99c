//! `tracectl record`.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context as _, Result};
use clap::{ArgMatches, CommandFactory};
use nix::sys::signal::{SigSet, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::wait::{waitpid, WaitPidFlag};
use nix::unistd::Pid;
use tracectl::dat::{Compression, WriteOptions};
use tracectl::record::{EventSpec, RecordConfig, RecordSummary, Recorder};
use tracectl::tracefs::Tracefs;

use super::common::Context;

/// Options of `tracectl record` (trace-cmd record's names).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Buffers: the options before any -B are the top buffer's (recorded in a private \
                  instance), those after a -B that instance's, up to the next -B (-e, -f, -R, -v, \
                  -H, -p, -C, -b, -M, -O, -P, -c, -l, -n, -T, --module, --max-graph-depth, \
                  --subbuf-size); the others hold for the whole recording, but -g and \
                  --func-stack are the top buffer's only and -d and -D the last buffer's, as in \
                  trace-cmd. A --module limits the -l, -n and -g given after it in its buffer; \
                  with none after it, it filters all of the module's functions in the last \
                  buffer only (elsewhere it is dropped, with a warning). When -B is given, the \
                  options before it name no event, hook nor tracer and -F is not given, the top \
                  buffer is not recorded (nor its options, -g and --func-stack included), as in \
                  trace-cmd. The first -C is the clock of every buffer without its own. -v right \
                  before a -B removes that instance when the recording starts (it must exist and \
                  takes no options); an instance given twice is refused.\n\n\
                  Example: tracectl record -e sched -B foo -p function -l 'vfs_*' -b 4096 \
                  (sched in the top buffer; the function tracer limited to vfs_* and 4096 KiB \
                  per CPU in instance foo)"
)]
pub struct Args {
    /// Event to record: `system`, `event`, `system:event` or `all` (repeatable)
    #[arg(short = 'e', long = "event", value_name = "EVENT")]
    pub events: Vec<String>,
    /// Filter for the preceding -e event
    #[arg(short = 'f', value_name = "FILTER")]
    pub filters: Vec<String>,
    /// Trigger for the preceding -e event
    #[arg(short = 'R', value_name = "TRIGGER")]
    pub triggers: Vec<String>,
    /// Do not record the -e events that follow, up to the next -B (carve them out of an
    /// enabled system); right before -B, remove that instance (`-v -B old`)
    #[arg(short = 'v', action = clap::ArgAction::Count)]
    pub invert: u8,
    /// Tracer plugin (current_tracer) of the buffer it is given for (before any -B the top
    /// buffer's, after a -B that instance's); one per buffer
    #[arg(short = 'p', long = "plugin")]
    pub plugin: Vec<String>,
    /// Buffer set-up and what is traced (shared with profile, start, set and stream)
    #[command(flatten)]
    pub trace: TraceArgs,
    /// What only a recording into a file uses (shared with start and set)
    #[command(flatten)]
    pub recording: RecordingArgs,
    /// Record this instance (created and removed if it does not exist) with the -e
    /// events and buffer options that follow, up to the next -B; repeatable, one buffer per
    /// instance in the file (each instance once); after -v, an instance to remove
    #[arg(short = 'B')]
    pub instance: Vec<String>,
    /// Output file
    #[arg(short = 'o', default_value = "trace.dat")]
    pub output: PathBuf,
    /// Store the formats of all events, not only the recorded ones
    #[arg(short = 'a')]
    pub all_formats: bool,
    /// Print nothing but errors
    #[arg(short = 'q')]
    pub quiet: bool,
    /// Trace only the command given after the options
    #[arg(short = 'F')]
    pub only_command: bool,
    /// Keep at most about this many KiB per CPU, the newest (two halves alternate)
    #[arg(short = 'm', value_name = "KB")]
    pub max_kb: Option<u64>,
    /// Do not reset the target before recording: its buffer keeps older events and events
    /// enabled before stay enabled (like `tracectl set`, but recording)
    #[arg(short = 'K')]
    pub keep_before: bool,
    /// Run the command as this user (name or uid)
    #[arg(long = "user", value_name = "USER")]
    pub user: Option<String>,
    /// Event hook for `report --profile`:
    /// `[SYS:]START,START_MATCH[,START_PID]/[SYS:]END,END_MATCH[,FLAGS]` (flags: p pinned
    /// to a CPU, g global, s a stack with the start); its events are recorded in the
    /// buffer it is given for and the hook is stored in the file (repeatable)
    #[arg(short = 'H', value_name = "EVENT-HOOKS")]
    pub hooks: Vec<String>,
    /// trace.dat version to write, 6 or 7
    #[arg(long = "file-version", default_value_t = 7)]
    pub file_version: u32,
    /// Compression for version 7: zstd, zlib or none
    #[arg(long, default_value = "zstd")]
    pub compression: String,
    /// Command to run while recording (else record until Ctrl-C); it follows the options,
    /// with or without `--`, and everything after its name is its own
    #[arg(
        value_name = "COMMAND",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub command: Vec<String>,
}

/// Events per target: `(None, events)` for the events before any -B, then one entry per
/// -B with the events that follow it. Each -f / -R belongs to the -e before it, a -v to
/// the -e after it.
pub type Targets = Vec<(Option<String>, Vec<EventSpec>)>;

fn bind_events(m: &ArgMatches) -> Targets {
    let mut marks: Vec<(usize, char, String)> = Vec::new();
    for (id, tag) in [
        ("events", 'e'),
        ("filters", 'f'),
        ("triggers", 'R'),
        ("instance", 'B'),
    ] {
        if let (Some(idx), Some(vals)) = (m.indices_of(id), m.get_many::<String>(id)) {
            marks.extend(idx.zip(vals).map(|(i, v)| (i, tag, v.clone())));
        }
    }
    if m.get_count("invert") > 0 {
        if let Some(idx) = m.indices_of("invert") {
            marks.extend(idx.map(|i| (i, 'v', String::new())));
        }
    }
    marks.sort_by_key(|m| m.0);
    let mut targets: Targets = vec![(None, Vec::new())];
    let mut invert_next = false;
    for (_, tag, v) in marks {
        if tag == 'B' {
            targets.push((Some(v), Vec::new()));
            invert_next = false;
            continue;
        }
        let out = &mut targets.last_mut().expect("one target").1;
        match (tag, out.last_mut()) {
            ('v', _) => invert_next = true,
            // As in trace-cmd, a -v holds for every -e after it, up to the next -B.
            ('e', _) => out.push(EventSpec {
                name: v,
                invert: invert_next,
                ..Default::default()
            }),
            ('f', Some(e)) => e.filters.push(v),
            ('R', Some(e)) => e.triggers.push(v),
            // A filter before any event applies to every event, as `-e all -f`.
            ('f', None) => out.push(EventSpec {
                name: "all".into(),
                filters: vec![v],
                ..Default::default()
            }),
            (_, None) => out.push(EventSpec {
                name: "all".into(),
                triggers: vec![v],
                ..Default::default()
            }),
            _ => {}
        }
    }
    targets
}

/// The -e/-f/-R/-v/-B of subcommand `sub` as the process arguments give them, bound in
/// order (None when the process arguments are not such a command line).
pub fn event_targets(sub: &str) -> Option<Targets> {
    let m = super::Cli::command()
        .try_get_matches_from(std::env::args_os())
        .ok()?;
    m.subcommand_matches(sub).map(bind_events)
}

/// What `record` records: its buffers and the instances it removes first.
#[derive(Debug, Default)]
pub struct RecordBuffers {
    /// The buffers, the top buffer first when it is recorded.
    pub buffers: Vec<RecordConfig>,
    /// The instances given with `-v -B NAME`, to remove.
    pub remove: Vec<String>,
    /// Options given that change nothing (why, for a warning).
    pub unused: Vec<String>,
}

/// The buffers `record` records, each with its events and its own buffer options, as
/// trace-cmd 3.1.6 binds them (see [`super::buffers::split`]): the top buffer (the
/// options before any -B; tracectl records it in a private instance) first, then one per
/// -B. As in trace-cmd, the top buffer is left out when -B is given, its options name no
/// event, hook nor tracer and -F is not given; its other options, every -g and
/// --func-stack (the top buffer's only) then change nothing: the warnings say so. Each -H
/// enables its events in the buffer it is given for; -d and -D are the last buffer's.
fn buffers(m: &ArgMatches, a: &Args) -> Result<RecordBuffers> {
    use super::buffers::{buffer_trace_args, given, split, Group, Place};
    let groups = super::buffers::groups(m)?;
    let mut targets = bind_events(m);
    let starts: Vec<usize> = groups.iter().map(|g| g.0).collect();
    let group_of = |pos: usize| starts.iter().rposition(|s| *s <= pos).unwrap_or(0);
    for (pos, h) in given::<String>(m, "hooks") {
        let g = group_of(pos);
        if let Group::Removed(n) = &groups[g].1 {
            anyhow::bail!(
                "-H: instance {n} is to be removed (-v -B {n}) and takes no options; nothing was changed"
            );
        }
        let hook = super::profile::parse_hooks(std::slice::from_ref(&h))?;
        super::profile::add_hook_events(&mut targets[g].1, &hook);
    }
    let (options, mut graph) = split(m, &starts, "plugin");
    let first_clock: Vec<String> = given::<String>(m, "clock")
        .into_iter()
        .map(|(_, c)| c)
        .take(1)
        .collect();
    let several = targets.len() > 1;
    let last = groups
        .iter()
        .rposition(|g| !matches!(g.1, Group::Removed(_)))
        .unwrap_or(0);
    let mut out = RecordBuffers::default();
    let items = targets.into_iter().zip(options).zip(groups);
    for (i, (((instance, events), own), (_, group))) in items.enumerate() {
        if let Group::Removed(n) = group {
            if let Some(e) = events.first() {
                anyhow::bail!(
                    "-e {}: instance {n} is to be removed (-v -B {n}) and takes no events; nothing was changed",
                    e.name
                );
            }
            if let Some(flag) = own.given.iter().find(|f| **f != "-g") {
                anyhow::bail!(
                    "{flag}: instance {n} is to be removed (-v -B {n}) and takes no options; nothing was changed"
                );
            }
            out.remove.push(n);
            continue;
        }
        if let [first, second, ..] = &own.tracer[..] {
            anyhow::bail!(
                "-p {second}: one tracer per buffer (-p {first} already); give the other after a -B"
            );
        }
        if let Some(module) = &own.dropped_module {
            out.unused
                .push(super::simple::dropped_module_warning(module));
        }
        // trace-cmd keeps the top buffer when -F is given, wherever it is (filter_task).
        if i == 0 && several && events.is_empty() && own.tracer.is_empty() && !a.only_command {
            if a.trace.func_stack {
                out.unused.push(super::simple::FUNC_STACK_UNUSED.into());
            }
            if !graph.is_empty() {
                out.unused.push(
                    "-g: set_graph_function is the top buffer's only, which is not recorded \
                     as its options name no event (-e) nor tracer (-p), as with trace-cmd"
                        .into(),
                );
            }
            if own.any_but_graph() {
                out.unused.push(format!(
                    "{}: the options before the first -B are the top buffer's, which is not \
                     recorded as they name no event (-e) nor tracer (-p), as with trace-cmd",
                    own.given.join(" ")
                ));
            }
            graph.clear();
            continue;
        }
        let plugin = own.tracer.first().cloned();
        // Only the top buffer takes -g (trace-cmd writes set_graph_function for the top
        // instance only).
        let g = match i {
            0 => std::mem::take(&mut graph),
            _ => Vec::new(),
        };
        let place = Place {
            first: out.buffers.is_empty(),
            top: i == 0,
            last: i == last,
        };
        let trace = buffer_trace_args(own.trace, &a.trace, &first_clock, g, place);
        out.buffers.push(trace.apply(RecordConfig {
            events,
            plugin,
            instance,
            ..RecordConfig::default()
        }));
    }
    Ok(out)
}

/// [`buffers`] for `a` as the process arguments give it; when they are not such a command
/// line (embedded use), one buffer with every option, the first -B's instance if any.
fn record_buffers(a: &Args) -> Result<RecordBuffers> {
    let m = super::Cli::command()
        .try_get_matches_from(std::env::args_os())
        .ok();
    if let Some(sub) = m.as_ref().and_then(|m| m.subcommand_matches("record")) {
        return buffers(sub, a);
    }
    let mut v: Vec<EventSpec> = a
        .events
        .iter()
        .map(|e| EventSpec {
            name: e.clone(),
            ..Default::default()
        })
        .collect();
    if let Some(last) = v.last_mut() {
        last.filters = a.filters.clone();
        last.triggers = a.triggers.clone();
    }
    super::profile::add_hook_events(&mut v, &super::profile::parse_hooks(&a.hooks)?);
    let cfg = a.trace.apply(RecordConfig {
        events: v,
        plugin: a.plugin.first().cloned(),
        instance: a.instance.first().cloned(),
        ..RecordConfig::default()
    });
    Ok(RecordBuffers {
        buffers: vec![cfg],
        ..RecordBuffers::default()
    })
}

/// The tracefs root: the one given (an error there is the answer: never another root),
/// else the one found, else the usual mount points.
pub fn live_tracefs(ctx: &Context) -> Result<Tracefs> {
    if ctx.tracefs.is_some() {
        return ctx.tracefs();
    }
    if let Ok(t) = ctx.tracefs() {
        return Ok(t);
    }
    for p in ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"] {
        if std::path::Path::new(p).join("events").is_dir() {
            return Ok(Tracefs::at(p));
        }
    }
    anyhow::bail!("tracefs is not mounted: mount it (`mount -t tracefs nodev /sys/kernel/tracing`) or pass --tracefs DIR")
}

/// Version and compression from the command line.
pub fn write_options(version: u32, compression: &str) -> Result<WriteOptions> {
    let compression = Compression::from_name(compression)
        .with_context(|| format!("--compression {compression}: use zstd, zlib or none"))?;
    if !(6..=7).contains(&version) {
        anyhow::bail!("--file-version {version}: use 6 or 7");
    }
    Ok(WriteOptions {
        version,
        compression,
        ..WriteOptions::default()
    })
}

/// Print the end-of-recording statistics (trace-cmd prints the stats files too).
pub fn print_summary(s: &RecordSummary, output: &std::path::Path) {
    for c in &s.cpus {
        let stats = s
            .stats
            .iter()
            .find(|(cpu, _)| *cpu == c.cpu)
            .map(|(_, t)| t.as_str())
            .unwrap_or("");
        let field = |name: &str| {
            stats
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().parse::<u64>().ok())
                .unwrap_or(0)
        };
        let lost = if c.lost_unknown > 0 {
            format!(
                "{}+ ({} pages with an unknown count)",
                c.lost_events, c.lost_unknown
            )
        } else {
            c.lost_events.to_string()
        };
        eprintln!(
            "CPU{}: {} pages, lost events: {lost} (page headers), overrun: {}, dropped: {}",
            c.cpu,
            c.pages,
            field("overrun:"),
            field("dropped events:")
        );
    }
    eprintln!(
        "{}: {} bytes, {} pages",
        output.display(),
        s.written.bytes,
        s.written.pages
    );
}

/// The account `--user` names (a name, or a uid).
pub fn lookup_user(name: &str) -> Result<nix::unistd::User> {
    let found = match name.parse::<u32>() {
        Ok(uid) => nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid)),
        Err(_) => nix::unistd::User::from_name(name),
    };
    found
        .with_context(|| format!("--user {name}: cannot read the user database"))?
        .with_context(|| format!("--user {name}: no such user (see /etc/passwd)"))
}

/// Make `cmd` run as `u`: its groups, gid and uid, and HOME, USER and LOGNAME.
pub fn run_as(cmd: &mut Command, u: &nix::unistd::User) {
    use std::os::unix::process::CommandExt as _;
    let (uid, gid) = (u.uid.as_raw(), u.gid.as_raw());
    let cname = std::ffi::CString::new(u.name.clone()).unwrap_or_default();
    // SAFETY: between fork and exec only async-signal-safe-enough calls that read the
    // group database and change credentials; the child runs nothing else before its exec.
    // Groups first, then the gid, then the uid: after setuid the others are refused.
    unsafe {
        cmd.pre_exec(move || {
            if libc::initgroups(cname.as_ptr(), gid) != 0
                || libc::setgid(gid) != 0
                || libc::setuid(uid) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.env("HOME", &u.dir)
        .env("USER", &u.name)
        .env("LOGNAME", &u.name);
}

/// Start `command` (run as `user` if given) stopped before its exec, so that its pid can
/// be filtered and none of its events is missed; SIGCONT lets it run.
pub fn spawn_stopped(
    command: &[String],
    user: Option<&nix::unistd::User>,
) -> Result<std::process::Child> {
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg("kill -STOP $$; exec \"$0\" \"$@\"")
        .args(command);
    if let Some(u) = user {
        run_as(&mut cmd, u);
    }
    let c = cmd
        .spawn()
        .with_context(|| format!("running {}", command[0]))?;
    let _ = waitpid(Pid::from_raw(c.id() as i32), Some(WaitPidFlag::WUNTRACED));
    Ok(c)
}

/// The options `record`, `profile`, `start`, `set` and `stream` share, with trace-cmd's
/// letters: how the buffer is set up and which tasks and functions are traced. An option
/// with one value may be given again (for `record`, `start` and `set`, once per buffer: the
/// options after a -B are that instance's, as trace-cmd parses them); the last one counts.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct TraceArgs {
    /// Trace clock (trace_clock)
    #[arg(short = 'C', long = "clock", value_name = "CLOCK")]
    pub clock: Vec<String>,
    /// Per-CPU buffer size in KiB (buffer_size_kb)
    #[arg(short = 'b', value_name = "KB")]
    pub buffer_size: Vec<u64>,
    /// CPU mask in hex (tracing_cpumask)
    #[arg(short = 'M', value_name = "CPUMASK")]
    pub cpumask: Vec<String>,
    /// Trace option to set, `name` or `noname` (repeatable)
    #[arg(short = 'O', value_name = "OPTION")]
    pub options: Vec<String>,
    /// Trace only these pids (set_event_pid; repeatable)
    #[arg(short = 'P', value_name = "PID")]
    pub pids: Vec<u32>,
    /// Also trace the children of the traced pids (options/event-fork, and function-fork
    /// where the kernel has it)
    #[arg(short = 'c', action = clap::ArgAction::Count)]
    pub children: u8,
    /// Function filter (set_ftrace_filter; needs function tracing)
    #[arg(short = 'l', value_name = "FUNC")]
    pub ftrace_filter: Vec<String>,
    /// Functions not to trace (set_ftrace_notrace; needs function tracing); with -p
    /// function_graph, the top buffer's go to set_graph_notrace, as in trace-cmd
    #[arg(short = 'n', value_name = "FUNC")]
    pub ftrace_notrace: Vec<String>,
    /// Graph this function (set_graph_function; needs function_graph)
    #[arg(short = 'g', value_name = "FUNC")]
    pub graph: Vec<String>,
    /// Longest sleep between buffer reads, in microseconds
    #[arg(short = 's', value_name = "USECS")]
    pub sleep: Option<u64>,
    /// Ignore events that do not exist instead of failing
    #[arg(short = 'i')]
    pub ignore_missing: bool,
    /// A kernel stack trace after every event (options/stacktrace)
    #[arg(short = 'T', action = clap::ArgAction::Count)]
    pub stacktrace: u8,
    /// Run the threads that read the buffers at this real-time (SCHED_FIFO) priority, 1-99
    #[arg(short = 'r', value_name = "PRIO", value_parser = clap::value_parser!(u32).range(1..=99))]
    pub rt_priority: Option<u32>,
    /// Limit the -l, -n and -g given after it to this module's functions
    /// (`PATTERN:mod:MODULE`); with none after it, filter every function of the module
    /// (with -B, in the last buffer given only, as trace-cmd)
    #[arg(long = "module", value_name = "MODULE")]
    pub module: Vec<String>,
    /// Maximum function_graph depth (max_graph_depth)
    #[arg(long = "max-graph-depth", value_name = "N")]
    pub max_graph_depth: Vec<u32>,
    /// Sub-buffer (page) size in KiB (buffer_subbuf_size_kb)
    #[arg(long = "subbuf-size", value_name = "KB")]
    pub subbuf_size: Vec<u64>,
    /// Number of saved command names (saved_cmdlines_size; global)
    #[arg(long = "cmdlines-size", value_name = "N")]
    pub cmdlines_size: Option<u64>,
    /// A stack trace on every traced function (options/func_stack_trace; needs -p
    /// function, limit the functions with -l); with -B, the top buffer's only
    #[arg(long = "func-stack")]
    pub func_stack: bool,
    /// Keep latency tracers from enabling the function tracer (options/function-trace,
    /// else /proc/sys/kernel/ftrace_enabled); with -B, the last buffer given's, as
    /// trace-cmd
    #[arg(short = 'd')]
    pub disable_function_trace: bool,
    /// Like -d, and clear /proc/sys/kernel/ftrace_enabled too (every function-tracing user);
    /// with -B, the last buffer given's
    #[arg(short = 'D')]
    pub disable_all_function_trace: bool,
}

/// The options only a recording into a file uses, with trace-cmd's letters. `start`
/// accepts them as trace-cmd start does (only --no-filter changes anything there) and `set`
/// refuses them as trace-cmd set does.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct RecordingArgs {
    /// Keep the tracing state at the end: do not disable the tracer and events nor restore
    /// what was changed (tracing_on is left at 0; a private instance is kept and named)
    #[arg(short = 'k')]
    pub keep_after: bool,
    /// Store the offset from trace time to wall-clock time
    #[arg(long)]
    pub date: bool,
    /// Offset added to every timestamp when the file is read, in trace-clock units
    #[arg(long = "ts-offset", value_name = "OFFSET", allow_hyphen_values = true)]
    pub ts_offset: Option<i64>,
    /// Also trace tracectl's own threads; with start, no pid filter for -F's command nor
    /// -P's pids (as trace-cmd start)
    #[arg(long = "no-filter")]
    pub no_filter: bool,
}

impl RecordingArgs {
    /// The options given, by name (for a verb that refuses them).
    pub fn given(&self) -> Vec<&'static str> {
        [
            (self.keep_after, "-k"),
            (self.date, "--date"),
            (self.ts_offset.is_some(), "--ts-offset"),
            (self.no_filter, "--no-filter"),
        ]
        .into_iter()
        .filter_map(|(g, n)| g.then_some(n))
        .collect()
    }
}

/// One of the function-tracing options of a buffer, in command-line order.
#[derive(Debug, Clone)]
pub enum FunctionArg {
    /// `--module MODULE`.
    Module(String),
    /// `-l PATTERN` (set_ftrace_filter).
    Filter(String),
    /// `-n PATTERN` (set_ftrace_notrace).
    Notrace(String),
    /// `-g PATTERN` (set_graph_function).
    Graph(String),
}

impl FunctionArg {
    /// The option's flag.
    pub fn flag(&self) -> &'static str {
        match self {
            FunctionArg::Module(_) => "--module",
            FunctionArg::Filter(_) => "-l",
            FunctionArg::Notrace(_) => "-n",
            FunctionArg::Graph(_) => "-g",
        }
    }
}

/// The `-l`, `-n` and `-g` entries of a buffer as written to the kernel.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct FunctionLists {
    /// set_ftrace_filter entries.
    pub filter: Vec<String>,
    /// set_ftrace_notrace entries.
    pub notrace: Vec<String>,
    /// set_graph_function entries.
    pub graph: Vec<String>,
    /// The last `--module`, when no pattern follows it: trace-cmd then filters all of its
    /// functions (`*:mod:MODULE`) in the last buffer given only (see [`bind_modules`]).
    pub lone_module: Option<String>,
}

/// trace-cmd's `--module` rule for the function options of one buffer, in their order:
/// each `-l`, `-n` and `-g` takes the `--module` given before it (`PATTERN:mod:MODULE`);
/// one before any `--module` takes none. A `--module` that another replaces adds all of
/// its functions to the filter (`*:mod:MODULE`, as trace-cmd's parser does whether
/// patterns followed it or not). The last one, when no pattern follows it, is returned in
/// `lone_module`: trace-cmd adds `*:mod:MODULE` for it once, after parsing, to the buffer
/// given last only (a module alone in an earlier buffer filters nothing there), so the
/// caller decides.
///
/// A `-l` with a `:` is a command (`FUNC:traceoff`) or names its module already, and is
/// written as it is (trace-cmd writes commands without the module); a `-n` or `-g` that
/// names its module already (`:mod:`) keeps it.
pub fn bind_modules(args: impl IntoIterator<Item = FunctionArg>) -> FunctionLists {
    let mut out = FunctionLists::default();
    let mut module: Option<String> = None;
    // The current --module has no pattern after it (yet).
    let mut alone = false;
    let limit = |p: String, module: &Option<String>, keep: bool| match module {
        Some(m) if !keep => format!("{p}:mod:{m}"),
        _ => p,
    };
    for a in args {
        match a {
            FunctionArg::Module(m) => {
                if let Some(old) = module.replace(m) {
                    out.filter.push(format!("*:mod:{old}"));
                }
                alone = true;
            }
            FunctionArg::Filter(p) => {
                let keep = p.contains(':');
                out.filter.push(limit(p, &module, keep));
                alone = false;
            }
            FunctionArg::Notrace(p) => {
                let keep = p.contains(":mod:");
                out.notrace.push(limit(p, &module, keep));
                alone = false;
            }
            FunctionArg::Graph(p) => {
                let keep = p.contains(":mod:");
                out.graph.push(limit(p, &module, keep));
                alone = false;
            }
        }
    }
    if alone {
        out.lone_module = module;
    }
    out
}

/// The `--module`, `-l`, `-n` and `-g` of `m` (a subcommand's matches) in command-line
/// order, each with its position.
pub fn function_args(m: &ArgMatches) -> Vec<(usize, FunctionArg)> {
    let mut v: Vec<(usize, FunctionArg)> = Vec::new();
    type Make = fn(String) -> FunctionArg;
    let kinds: [(&str, Make); 4] = [
        ("module", FunctionArg::Module),
        ("ftrace_filter", FunctionArg::Filter),
        ("ftrace_notrace", FunctionArg::Notrace),
        ("graph", FunctionArg::Graph),
    ];
    for (id, kind) in kinds {
        if m.value_source(id) != Some(clap::parser::ValueSource::CommandLine) {
            continue;
        }
        if let (Some(idx), Some(vals)) = (m.indices_of(id), m.get_many::<String>(id)) {
            v.extend(idx.zip(vals).map(|(i, s)| (i, kind(s.clone()))));
        }
    }
    v.sort_by_key(|x| x.0);
    v
}

impl TraceArgs {
    /// Apply the `--module` rule ([`bind_modules`]) to these options as subcommand `sub`
    /// of the process arguments gives them in order: afterwards `-l`, `-n` and `-g` hold
    /// what is written and no `--module` is left. When the process arguments are not such
    /// a command line (embedded use), the modules count as given first.
    pub fn bind_modules_from_args(&mut self, sub: &str) {
        let m = super::Cli::command()
            .try_get_matches_from(std::env::args_os())
            .ok();
        let ordered = m
            .as_ref()
            .and_then(|m| m.subcommand_matches(sub))
            .map(function_args);
        self.bind_modules_in(ordered.map(|v| v.into_iter().map(|(_, a)| a).collect()));
    }

    /// [`Self::bind_modules_from_args`] with the options in the order `ordered` gives (None: the
    /// modules first, then -l, -n and -g).
    fn bind_modules_in(&mut self, ordered: Option<Vec<FunctionArg>>) {
        let args = ordered.unwrap_or_else(|| {
            let modules = self.module.iter().cloned().map(FunctionArg::Module);
            let l = self.ftrace_filter.iter().cloned().map(FunctionArg::Filter);
            let n = self
                .ftrace_notrace
                .iter()
                .cloned()
                .map(FunctionArg::Notrace);
            let g = self.graph.iter().cloned().map(FunctionArg::Graph);
            modules.chain(l).chain(n).chain(g).collect()
        });
        let mut lists = bind_modules(args);
        // One buffer: it is the last one given.
        if let Some(m) = lists.lone_module.take() {
            lists.filter.push(format!("*:mod:{m}"));
        }
        self.ftrace_filter = lists.filter;
        self.ftrace_notrace = lists.notrace;
        self.graph = lists.graph;
        self.module.clear();
    }

    /// `cfg` with these options set. A `--module` not yet bound
    /// ([`Self::bind_modules_from_args`]) counts as given before the patterns.
    pub fn apply(&self, cfg: RecordConfig) -> RecordConfig {
        if self.module.is_empty() {
            return self.apply_bound(cfg);
        }
        let mut bound = self.clone();
        bound.bind_modules_in(None);
        bound.apply_bound(cfg)
    }

    fn apply_bound(&self, cfg: RecordConfig) -> RecordConfig {
        RecordConfig {
            clock: self.clock.last().cloned(),
            buffer_size_kb: self.buffer_size.last().copied(),
            cpumask: self.cpumask.last().cloned(),
            options: self.options.clone(),
            pids: self.pids.clone(),
            follow_children: self.children > 0,
            ftrace_filter: self.ftrace_filter.clone(),
            ftrace_notrace: self.ftrace_notrace.clone(),
            graph_functions: self.graph.clone(),
            sleep_us: self.sleep,
            ignore_missing: self.ignore_missing,
            stacktrace: self.stacktrace > 0,
            rt_priority: self.rt_priority,
            max_graph_depth: self.max_graph_depth.last().copied(),
            subbuf_size_kb: self.subbuf_size.last().copied(),
            cmdlines_size: self.cmdlines_size,
            func_stack: self.func_stack,
            disable_function_trace: if self.disable_all_function_trace {
                2
            } else {
                u8::from(self.disable_function_trace)
            },
            ..cfg
        }
    }
}

/// Run `tracectl record`.
pub fn run(ctx: &Context, a: Args) -> Result<i32> {
    if a.only_command && a.command.is_empty() {
        anyhow::bail!("-F needs a command after the options (`tracectl record -F -e sched ls -l`)");
    }
    super::profile::parse_hooks(&a.hooks)?;
    let RecordBuffers {
        mut buffers,
        remove,
        unused,
    } = record_buffers(&a)?;
    if !a.quiet {
        for w in &unused {
            eprintln!("tracectl: warning: {w}");
        }
    }
    if buffers
        .iter()
        .all(|b| b.events.is_empty() && b.plugin.is_none())
    {
        anyhow::bail!("nothing to record: give events with -e (e.g. -e sched) or a tracer with -p");
    }
    let main = buffers.remove(0);
    let cfg = RecordConfig {
        more_instances: buffers,
        buffer_percent: None,
        all_formats: a.all_formats,
        date: a.recording.date,
        no_filter: a.recording.no_filter,
        keep_after: a.recording.keep_after,
        keep_before: a.keep_before,
        max_kb_per_cpu: a.max_kb,
        ts_offset: a.recording.ts_offset,
        write: write_options(a.file_version, &a.compression)?,
        hooks: a.hooks.clone(),
        ..main
    };
    let parent = match a.output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !parent.is_dir() {
        anyhow::bail!(
            "-o {}: directory {} does not exist",
            a.output.display(),
            parent.display()
        );
    }
    let run = CommandRun {
        command: &a.command,
        user: a.user.as_deref(),
        only_command: a.only_command,
        quiet: a.quiet,
        verb: "record",
        remove_instances: &remove,
    };
    let summary = record_command(ctx, cfg, &a.output, &run)?;
    if !a.quiet {
        print_summary(&summary, &a.output);
    }
    Ok(0)
}

/// The command a recording runs (and how), from the command line.
pub struct CommandRun<'a> {
    /// The command and its arguments (empty: record until Ctrl-C).
    pub command: &'a [String],
    /// `--user`: run it as this user.
    pub user: Option<&'a str>,
    /// `-F`: trace only the command.
    pub only_command: bool,
    /// `-q`: no progress nor prompt.
    pub quiet: bool,
    /// The subcommand, for messages.
    pub verb: &'static str,
    /// `-v -B NAME`: instances to remove once the recording has started (each must exist;
    /// checked first, so a refused recording removes nothing).
    pub remove_instances: &'a [String],
}

/// Record `cfg` into `output` while `run`'s command runs (or until Ctrl-C / SIGTERM),
/// printing the recorder's warnings; the summary is returned.
pub fn record_command(
    ctx: &Context,
    mut cfg: RecordConfig,
    output: &std::path::Path,
    run: &CommandRun,
) -> Result<RecordSummary> {
    let cfg_keep_after = cfg.keep_after;
    let user = match &run.user {
        Some(u) if run.command.is_empty() => {
            anyhow::bail!(
                "--user {u} needs a command after the options (`tracectl {} --user {u} -e sched ls`)",
                run.verb
            )
        }
        Some(u) => Some(lookup_user(u)?),
        None => None,
    };
    // Before the command is started: a tree has no kernel to trace it.
    let tracefs = live_tracefs(ctx)?;
    tracefs.require_live(run.verb)?;
    for n in run.remove_instances {
        tracefs.instance(Some(n)).with_context(|| {
            format!("-v -B {n}: no such instance to remove; nothing was changed")
        })?;
    }
    // The command starts stopped (its shell stops itself before exec) so no event of it
    // is missed and -F can filter its pid first. It is spawned before our signals are
    // blocked because a child inherits the blocked mask.
    let mut child = None;
    if !run.command.is_empty() {
        child = Some(spawn_stopped(run.command, user.as_ref())?);
    }
    // Signals become readable events instead of killing us, so a Ctrl-C or kill always
    // ends with a drained, written file and a restored tracefs.
    let mut mask = SigSet::empty();
    mask.add(Signal::SIGINT);
    mask.add(Signal::SIGTERM);
    // The command's exit wakes the wait below at once.
    mask.add(Signal::SIGCHLD);
    mask.thread_block().context("blocking SIGINT/SIGTERM")?;
    let sfd = SignalFd::with_flags(&mask, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)
        .context("signalfd")?;

    if let (Some(c), true) = (&child, run.only_command) {
        // As trace-cmd's -F (add_filter_pid_all): every buffer follows the command.
        cfg.pids.push(c.id());
        for b in &mut cfg.more_instances {
            b.pids.push(c.id());
        }
    }
    let mut rec = match live_tracefs(ctx).and_then(|t| Ok(Recorder::start(t, cfg, output)?)) {
        Ok(r) => r,
        Err(e) => {
            if let Some(mut c) = child {
                let _ = c.kill();
                let _ = nix::sys::signal::kill(Pid::from_raw(c.id() as i32), Signal::SIGCONT);
                let _ = c.wait();
            }
            return Err(e);
        }
    };
    for n in run.remove_instances {
        if let Err(e) = tracefs.remove_instance(n) {
            // The recording has not run the command yet: undo it whole.
            drop(rec);
            if let Some(mut c) = child {
                let _ = c.kill();
                let _ = nix::sys::signal::kill(Pid::from_raw(c.id() as i32), Signal::SIGCONT);
                let _ = c.wait();
            }
            return Err(anyhow::Error::new(e).context(format!("-v -B {n}")));
        }
    }
    for w in rec.take_warnings() {
        eprintln!("tracectl: warning: {w}");
    }
    if let Some(c) = &child {
        let _ = nix::sys::signal::kill(Pid::from_raw(c.id() as i32), Signal::SIGCONT);
    }
    rec.read_kallsyms_meanwhile();
    if !run.quiet && child.is_none() {
        eprintln!("Hit Ctrl^C to stop recording");
    }

    let mut progress = super::progress::Progress::new("recording", run.quiet, false);
    let tick: u16 = if progress.shown() { 200 } else { 1000 };
    let mut signalled = None;
    loop {
        progress.update(None, super::progress::recorded_bytes(output));
        if let Ok(Some(si)) = sfd.read_signal() {
            if si.ssi_signo != Signal::SIGCHLD as u32 {
                signalled = Some(si.ssi_signo);
                break;
            }
        }
        if let Some(c) = child.as_mut() {
            if c.try_wait().ok().flatten().is_some() {
                break;
            }
        }
        let mut fds = [nix::poll::PollFd::new(
            std::os::fd::AsFd::as_fd(&sfd),
            nix::poll::PollFlags::POLLIN,
        )];
        let _ = nix::poll::poll(&mut fds, nix::poll::PollTimeout::from(tick));
    }
    progress.finish();
    if let (Some(c), Some(_)) = (child.as_mut(), signalled) {
        // A Ctrl-C reaches the child too; a kill aimed at us is passed on.
        if c.try_wait().ok().flatten().is_none() {
            let _ = nix::sys::signal::kill(Pid::from_raw(c.id() as i32), Signal::SIGTERM);
            let _ = c.wait();
        }
    }
    let keep_after = cfg_keep_after;
    let kept = keep_after.then(|| rec.instance_name().to_string());
    let summary = rec.finish()?;
    for w in &summary.warnings {
        eprintln!("tracectl: warning: {w}");
    }
    if let Some(name) = kept {
        if name.is_empty() {
            eprintln!("tracectl: -k: the top-level tracing state was kept (tracing_on is 0); `tracectl reset` restores the defaults");
        } else {
            eprintln!("tracectl: -k: the tracing state was kept in instance {name} (tracing_on is 0); `tracectl reset -B {name} -d` removes it");
        }
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::{buffers, Args};
    use clap::{CommandFactory, Parser};

    /// `tracectl record ARGS` split into buffers: (instance, tracer, -l, -n, -g, -C, -b)
    /// of each, and the warnings.
    #[allow(clippy::type_complexity)]
    fn split(
        args: &[&str],
    ) -> (
        Vec<(
            Option<String>,
            Option<String>,
            Vec<String>,
            Vec<String>,
            Vec<String>,
            Option<String>,
            Option<u64>,
        )>,
        Vec<String>,
    ) {
        let argv: Vec<&str> = ["tracectl", "record"].iter().chain(args).copied().collect();
        let a: Args = match super::super::Cli::try_parse_from(&argv).unwrap().command {
            super::super::Command::Record(a) => a,
            c => panic!("{c:?}"),
        };
        let m = super::super::Cli::command().get_matches_from(&argv);
        let r = buffers(m.subcommand_matches("record").unwrap(), &a).unwrap();
        let (b, w) = (r.buffers, r.unused);
        let b = b
            .into_iter()
            .map(|c| {
                (
                    c.instance,
                    c.plugin,
                    c.ftrace_filter,
                    c.ftrace_notrace,
                    c.graph_functions,
                    c.clock,
                    c.buffer_size_kb,
                )
            })
            .collect();
        (b, w)
    }

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    /// The buffers and their function filters as trace-cmd 3.1.6 binds the same options
    /// (what it wrote for them on a copy of a tracefs tree, see
    /// cli_fixture::function_filters_after_b_are_that_instances; its top instance is our
    /// top buffer).
    #[test]
    fn record_binds_buffer_options_to_the_buffer_before_them() {
        let f = Some("function".to_string());
        let b1 = Some("b1".to_string());
        let b2 = Some("b2".to_string());
        let (b, w) = split(&[
            "-p",
            "function",
            "-l",
            "schedule",
            "-B",
            "b1",
            "-e",
            "irq",
            "-l",
            "vfs_read",
            "-n",
            "vfs_write",
            "-g",
            "schedule_idle",
        ]);
        assert_eq!(
            b,
            [
                (
                    None,
                    f.clone(),
                    s(&["schedule"]),
                    s(&[]),
                    s(&["schedule_idle"]),
                    None,
                    None
                ),
                (
                    b1.clone(),
                    None,
                    s(&["vfs_read"]),
                    s(&["vfs_write"]),
                    s(&[]),
                    None,
                    None
                ),
            ]
        );
        assert!(w.is_empty(), "{w:?}");
        // The top buffer names no event nor tracer: it is not recorded, nor its -l and
        // the -g given after -B.
        let (b, w) = split(&[
            "-l", "schedule", "-B", "b1", "-e", "irq", "-l", "vfs_read", "-g", "schedule",
        ]);
        assert_eq!(
            b,
            [(
                b1.clone(),
                None,
                s(&["vfs_read"]),
                s(&[]),
                s(&[]),
                None,
                None
            )]
        );
        assert!(w.len() == 2 && w[0].starts_with("-g:") && w[1].starts_with("-l:"));
        // --module after -B; -B twice; -b and -C after -B (the first -C is the clock of
        // every buffer without its own).
        let (b, _) = split(&[
            "-p",
            "function",
            "-l",
            "schedule",
            "-B",
            "b1",
            "-p",
            "function",
            "--module",
            "ext4",
            "-l",
            "ext4_*",
            "-C",
            "global",
            "-B",
            "b2",
            "-p",
            "function",
            "-n",
            "vfs_write",
            "-l",
            "schedule_idle",
            "-b",
            "2048",
        ]);
        let global = Some("global".to_string());
        assert_eq!(
            b,
            [
                (
                    None,
                    f.clone(),
                    s(&["schedule"]),
                    s(&[]),
                    s(&[]),
                    global.clone(),
                    None
                ),
                (
                    b1,
                    f.clone(),
                    s(&["ext4_*:mod:ext4"]),
                    s(&[]),
                    s(&[]),
                    global.clone(),
                    None
                ),
                (
                    b2,
                    f,
                    s(&["schedule_idle"]),
                    s(&["vfs_write"]),
                    s(&[]),
                    global,
                    Some(2048)
                ),
            ]
        );
    }

    /// `tracectl record ARGS` split into buffers.
    fn record(args: &[&str]) -> anyhow::Result<super::RecordBuffers> {
        let argv: Vec<&str> = ["tracectl", "record"].iter().chain(args).copied().collect();
        let a: Args = match super::super::Cli::try_parse_from(&argv).unwrap().command {
            super::super::Command::Record(a) => a,
            c => panic!("{c:?}"),
        };
        let m = super::super::Cli::command().get_matches_from(&argv);
        buffers(m.subcommand_matches("record").unwrap(), &a)
    }

    fn names(r: &super::RecordBuffers) -> Vec<Option<&str>> {
        r.buffers.iter().map(|b| b.instance.as_deref()).collect()
    }

    fn events(b: &tracectl::record::RecordConfig) -> Vec<&str> {
        b.events.iter().map(|e| e.name.as_str()).collect()
    }

    /// `-v -B NAME` names an instance to remove, as trace-cmd 3.1.6 does for record too
    /// (strace of `trace-cmd record -v -B old -B new -e sched:sched_switch`: rmdir of
    /// instances/old before the mkdir of instances/new); it takes no options.
    #[test]
    fn record_v_before_b_removes_that_instance() {
        let r = record(&["-e", "sched", "-v", "-B", "old", "-B", "b1", "-e", "irq"]).unwrap();
        assert_eq!(names(&r), [None, Some("b1")]);
        assert_eq!(r.remove, ["old"]);
        assert_eq!(events(&r.buffers[1]), ["irq"]);
        // A -v before other per-buffer options still applies to the next -B.
        let r = record(&["-e", "sched", "-v", "-b", "4", "-B", "old"]).unwrap();
        assert_eq!(names(&r), [None]);
        assert_eq!(r.remove, ["old"]);
        for (args, want) in [
            (
                &["-e", "x", "-v", "-B", "old", "-e", "irq"][..],
                "-e irq: instance old",
            ),
            (
                &["-e", "x", "-v", "-B", "old", "-b", "4"][..],
                "-b: instance old",
            ),
            (
                &["-v", "-B", "old", "-B", "old", "-e", "x"][..],
                "also one to configure",
            ),
        ] {
            let e = record(args).unwrap_err().to_string();
            assert!(e.contains(want), "{args:?}: {e}");
        }
    }

    /// trace-cmd keeps the top buffer when -F is given, wherever (strace of `trace-cmd
    /// record -B new -e sched:sched_switch -F true`: it wrote the top level's set_event_pid
    /// and read its trace_pipe_raw; without -F it did neither).
    #[test]
    fn record_f_keeps_the_top_buffer() {
        let r = record(&["-F", "-B", "b1", "-e", "irq", "true"]).unwrap();
        assert_eq!(names(&r), [None, Some("b1")]);
        let r = record(&["-B", "b1", "-e", "irq", "-F", "true"]).unwrap();
        assert_eq!(names(&r), [None, Some("b1")]);
        let r = record(&["-B", "b1", "-e", "irq", "true"]).unwrap();
        assert_eq!(names(&r), [Some("b1")]);
    }

    /// A -H enables its events in the buffer it is given for (trace-cmd's add_hook adds
    /// them to ctx->instance); it makes the top buffer recorded as an -e does.
    #[test]
    fn record_hook_after_b_is_that_instances() {
        let h = "sched:sched_wakeup,pid/sched:sched_switch,next_pid";
        let r = record(&["-e", "irq", "-B", "b1", "-H", h]).unwrap();
        assert_eq!(names(&r), [None, Some("b1")]);
        assert_eq!(events(&r.buffers[0]), ["irq"]);
        assert_eq!(
            events(&r.buffers[1]),
            ["sched:sched_wakeup", "sched:sched_switch"]
        );
        let r = record(&["-H", h, "-B", "b1", "-e", "irq"]).unwrap();
        assert_eq!(names(&r), [None, Some("b1")]);
        assert_eq!(events(&r.buffers[1]), ["irq"]);
    }

    /// -d and -D are the last buffer's (trace-cmd calls set_ftrace for ctx->instance; `set
    /// -e sched -d -B b1 -e sched:sched_switch` on a copy of a tree wrote 0 to
    /// instances/b1/options/function-trace only, -D also 0 to ftrace_enabled).
    #[test]
    fn record_d_is_the_last_buffers() {
        let r = record(&["-d", "-e", "sched", "-B", "b1", "-e", "irq"]).unwrap();
        let d: Vec<u8> = r.buffers.iter().map(|b| b.disable_function_trace).collect();
        assert_eq!(d, [0, 1]);
        let r = record(&[
            "-e", "sched", "-D", "-B", "b1", "-e", "irq", "-B", "b2", "-e", "x",
        ])
        .unwrap();
        let d: Vec<u8> = r.buffers.iter().map(|b| b.disable_function_trace).collect();
        assert_eq!(d, [0, 0, 2]);
        let r = record(&["-e", "sched", "-d"]).unwrap();
        assert_eq!(r.buffers[0].disable_function_trace, 1);
    }

    /// --func-stack is the top buffer's only; with the top buffer left out it applies
    /// nowhere, as in trace-cmd (`set --func-stack -l schedule -B b1 -p function -l
    /// vfs_read` on a copy of a tree wrote no func_stack_trace), and a warning says so.
    #[test]
    fn record_func_stack_is_the_top_buffers() {
        let r = record(&[
            "-p",
            "function",
            "-l",
            "schedule",
            "--func-stack",
            "-B",
            "b1",
            "-p",
            "function",
        ])
        .unwrap();
        let f: Vec<bool> = r.buffers.iter().map(|b| b.func_stack).collect();
        assert_eq!(f, [true, false]);
        let r = record(&[
            "--func-stack",
            "-l",
            "schedule",
            "-B",
            "b1",
            "-p",
            "function",
            "-l",
            "vfs_read",
        ])
        .unwrap();
        assert_eq!(names(&r), [Some("b1")]);
        assert!(!r.buffers[0].func_stack);
        assert!(r.unused[0].starts_with("--func-stack:"), "{:?}", r.unused);
    }

    /// The same instance twice is refused: trace-cmd 3.1.6 records it twice into one
    /// file and then fails to remove it (rmdir EBUSY), leaving it behind.
    #[test]
    fn record_refuses_an_instance_given_twice() {
        let e = record(&["-B", "b1", "-e", "x", "-B", "b1", "-e", "y"]).unwrap_err();
        assert!(e.to_string().contains("-B b1 is given twice"), "{e}");
    }

    /// A --module with no pattern after it filters all of the module's functions in the
    /// last buffer only; elsewhere it is dropped, as trace-cmd does (`set -p function
    /// --module ext4 -B b1 -e sched` on a copy of a tree left set_ftrace_filter alone), with
    /// a warning.
    #[test]
    fn record_lone_module_counts_in_the_last_buffer_only() {
        let r = record(&[
            "-p", "function", "--module", "ext4", "-B", "b1", "-e", "irq",
        ])
        .unwrap();
        assert!(r.buffers[0].ftrace_filter.is_empty());
        assert!(r.unused[0].starts_with("--module ext4:"), "{:?}", r.unused);
        let r = record(&[
            "-e", "irq", "-B", "b1", "-p", "function", "--module", "ext4",
        ])
        .unwrap();
        assert_eq!(r.buffers[1].ftrace_filter, ["*:mod:ext4"]);
        assert!(r.unused.is_empty(), "{:?}", r.unused);
    }

    #[test]
    fn record_takes_one_tracer_per_buffer() {
        let argv = [
            "tracectl", "record", "-p", "function", "-p", "nop", "-e", "x",
        ];
        let a: Args = match super::super::Cli::try_parse_from(argv).unwrap().command {
            super::super::Command::Record(a) => a,
            c => panic!("{c:?}"),
        };
        let m = super::super::Cli::command().get_matches_from(argv);
        let e = buffers(m.subcommand_matches("record").unwrap(), &a).unwrap_err();
        assert!(e.to_string().contains("one tracer per buffer"), "{e}");
    }
}
