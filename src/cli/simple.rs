//! The small control verbs: start, set, stop, restart, reset, clear, snapshot, marker, man.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context as _, Result};
use clap::{ArgMatches, CommandFactory};
use tracectl::record::{self, EventSpec, RecordConfig};
use tracectl::tracefs::{EventTarget, Instance, Ledger, ResetFlag, TracefsError};

use super::common::Context;

/// Options of `start` and `set`, named as in trace-cmd (those of `record` that make sense
/// without recording).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Buffers: the options before any -B are the top level's, those after a -B \
                        that instance's, up to the next -B (-e, -f, -R, -v, -p, -C, -b, -M, -O, \
                        -P, -c, -l, -n, -T, --module, --max-graph-depth, --subbuf-size, \
                        --buffer-percent); the others hold for the whole command. Every -g goes \
                        to the top level's set_graph_function (the kernel has no other), \
                        wherever it is given; --func-stack is the top level's only, -d and -D the \
                        last buffer's. A --module limits the -l, -n and -g given after it in its \
                        buffer (PATTERN:mod:MODULE); with none after it, the last buffer given \
                        filters all of the module's functions (in another it is dropped, with \
                        a warning), as in trace-cmd. The top level \
                        is left alone when -B is given and its options name no event nor tracer. \
                        The first -C is the clock of every buffer without its own, as in \
                        trace-cmd.\n\n\
                        -s, -r, -k, --date and --ts-offset mean something only for a recording: \
                        start accepts them and changes nothing, set refuses them, as trace-cmd \
                        does; so does set with --no-filter, -a, -G and --fork.\n\n\
                        Example: tracectl start -e sched -B foo -e irq -b 4096   \
                        (sched at the top level; irq and 4096 KiB per CPU in instance foo)"
)]
pub struct StartArgs {
    /// Event to enable: all, SYSTEM, SYSTEM:EVENT, EVENT, with globs (repeatable); a
    /// following -f or -R applies to it
    #[arg(short = 'e', long = "event", value_name = "EVENT")]
    pub events: Vec<String>,
    /// Filter for the preceding -e (its `filter` file), e.g. 'prev_pid != 0'
    #[arg(short = 'f', long = "filter", value_name = "FILTER")]
    pub filters: Vec<String>,
    /// Trigger for the preceding -e (its `trigger` file), e.g. 'traceoff:1 if prev_pid == 1'
    #[arg(short = 'R', long = "trigger", value_name = "TRIGGER")]
    pub triggers: Vec<String>,
    /// Disable the -e events that follow (up to the next -B) instead of enabling them;
    /// right before -B, remove that instance
    #[arg(short = 'v', action = clap::ArgAction::Count)]
    pub invert: u8,
    /// Tracer to use (current_tracer), e.g. nop, function, function_graph; one per
    /// buffer
    #[arg(short = 'p', long = "plugin", value_name = "TRACER")]
    pub tracer: Vec<String>,
    /// Buffer set-up and what is traced (shared with record, profile and stream); -s and
    /// -r have no effect without a recording: start accepts them, set refuses them, as
    /// trace-cmd does
    #[command(flatten)]
    pub trace: super::record::TraceArgs,
    /// Recording-only options, which start accepts and set refuses, as trace-cmd does
    #[command(flatten)]
    pub recording: super::record::RecordingArgs,
    /// Trace only the command given after the options: its pid goes to the set_event_pid of
    /// every buffer configured, as trace-cmd makes every buffer follow the command. Given
    /// before any -B it also keeps the top level; after one, the top level is left alone
    /// (trace-cmd would reset it)
    #[arg(short = 'F')]
    pub only_command: bool,
    /// Run the command as this user (name or uid)
    #[arg(long = "user", value_name = "USER")]
    pub user: Option<String>,
    /// How full a buffer gets before readers wake (buffer_percent)
    #[arg(long = "buffer-percent", value_name = "PCT")]
    pub buffer_percent: Option<u64>,
    /// Instance to configure (instances/NAME, created when missing): the options after it,
    /// up to the next -B, are that instance's (those before any -B the top level's, which
    /// is left alone when they name no event nor tracer); after -v, an instance to remove
    /// first (`-v -B old -B new`)
    #[arg(short = 'B', value_name = "INSTANCE")]
    pub instance: Vec<String>,
    /// `start` only, as in trace-cmd: has no effect without a recording (the formats of
    /// all events are what `record -a` stores)
    #[arg(short = 'a')]
    pub all_formats: bool,
    /// `start` only, as in trace-cmd: has no effect without a recording (`record
    /// --profile`'s interrupt accounting)
    #[arg(short = 'G')]
    pub global_irqs: bool,
    /// `start` only: return once the command is started instead of waiting for it
    #[arg(long = "fork")]
    pub fork: bool,
    /// Print no warnings, only errors
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    /// Print nothing on stdout (tracectl start/set print only on stderr already); the
    /// command's own output is left alone
    #[arg(long = "stderr")]
    pub stderr: bool,
    /// Also report the files start's reset left alone: named at info, with the kernel's
    /// reason at debug and all; LEVEL as trace-cmd's (none, critical, error, warning, info,
    /// debug, all or 0-6; info when not given)
    #[arg(long = "verbose", value_name = "LEVEL", num_args = 0..=1, require_equals = true, default_missing_value = "info")]
    pub verbose: Option<String>,
    /// A command to run once the state is set (its exit code is ours); it follows the
    /// options, with or without `--`
    #[arg(
        value_name = "COMMAND",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub command: Vec<String>,
}

/// trace-cmd's log levels, by name and number; the index is the number.
const VERBOSE_LEVELS: [&str; 7] = [
    "none", "critical", "error", "warning", "info", "debug", "all",
];

/// The number of `--verbose=LEVEL` (0 none ... 4 info, 5 debug, 6 all).
fn verbose_level(level: &str) -> Result<usize> {
    let n = VERBOSE_LEVELS
        .iter()
        .position(|l| *l == level)
        .or_else(|| {
            level
                .parse::<usize>()
                .ok()
                .filter(|n| *n < VERBOSE_LEVELS.len())
        })
        .with_context(|| {
            format!(
                "--verbose={level}: use one of {} or 0-6; nothing was changed",
                VERBOSE_LEVELS.join(", ")
            )
        })?;
    Ok(n)
}

/// One buffer `start`/`set` configure: the top level or an instance (`cfg.instance`),
/// with the options given for it.
pub type Buffer = RecordConfig;

/// What `start`/`set` do: configure each buffer, then remove the instances given after
/// -v.
#[derive(Debug, Default)]
pub struct StartPlan {
    /// The buffers to configure, the top level first when it is one of them.
    pub buffers: Vec<Buffer>,
    /// The -B preceded by -v.
    pub remove: Vec<String>,
    /// Options given that change nothing (why, for a warning).
    pub unused: Vec<String>,
}

use super::buffers::{given, given_flag, Group};

/// The options of one buffer, as trace-cmd keeps them per instance.
#[derive(Default)]
struct PerBuffer {
    events: Vec<EventSpec>,
    tracer: Vec<String>,
    buffer_percent: Vec<u64>,
    trace: super::record::TraceArgs,
    /// -F was given for this buffer.
    only_command: bool,
}

impl PerBuffer {
    fn names_something(&self) -> bool {
        !self.events.is_empty() || !self.tracer.is_empty()
    }
}

/// Split the options of `start`/`set` into buffers as trace-cmd parses them: those before
/// any -B are the top level's, those after a -B that instance's, up to the next -B,
/// except -g, which is the top level's wherever it is given. Each -f/-R binds to the -e before it, each -v to the -e or -B after it (a -v right
/// before -B names an instance to remove). The first -C is the clock of every buffer
/// without one of its own. Global options (-i, -d, -D, --func-stack,
/// --cmdlines-size, -s, -r) hold for the command. The top level is configured when no -B
/// is given or when it has an event, a tracer or a -F before the first -B. trace-cmd also
/// keeps it for a -F after a -B, and then resets its tracer, events, filters and trace for
/// nothing it records: that is the one place this leaves the top level alone where
/// trace-cmd would not.
pub fn plan(m: &ArgMatches, a: &StartArgs) -> Result<StartPlan> {
    #[derive(Clone, Copy)]
    enum K {
        E,
        F,
        R,
        V,
        B,
    }
    let mut items: Vec<(usize, K, String)> = Vec::new();
    for (id, k) in [
        ("events", K::E),
        ("filters", K::F),
        ("triggers", K::R),
        ("instance", K::B),
    ] {
        items.extend(given::<String>(m, id).into_iter().map(|(i, v)| (i, k, v)));
    }
    items.extend(
        given_flag(m, "invert")
            .into_iter()
            .map(|i| (i, K::V, String::new())),
    );
    items.sort_by_key(|x| x.0);
    // Each group starts at a position; group 0 (the top level) at 0.
    let mut given_groups = super::buffers::groups(m)?.into_iter().skip(1);
    let mut groups: Vec<(usize, Group, PerBuffer)> = vec![(0, Group::Top, PerBuffer::default())];
    let mut plan = StartPlan::default();
    // A -v in force.
    let mut pending_invert = false;
    for (_, k, v) in items {
        let (_, group, cur) = groups.last_mut().expect("the top group");
        match k {
            K::V => pending_invert = true,
            K::B => {
                pending_invert = false;
                let (pos, g) = given_groups.next().expect("one group per -B");
                if let Group::Removed(n) = &g {
                    plan.remove.push(n.clone());
                }
                groups.push((pos, g, PerBuffer::default()));
            }
            K::E => {
                if let Group::Removed(n) = group {
                    anyhow::bail!(
                        "-e {v}: instance {n} is to be removed (-v -B {n}) and takes no events; nothing was changed"
                    );
                }
                // As in trace-cmd, a -v holds for every -e after it, up to the next -B.
                cur.events.push(EventSpec {
                    name: v,
                    invert: pending_invert,
                    ..EventSpec::default()
                });
            }
            K::F => match cur.events.last_mut() {
                Some(e) => e.filters.push(v),
                None => anyhow::bail!("-f {v:?} must follow the -e EVENT it filters"),
            },
            K::R => match cur.events.last_mut() {
                Some(e) => e.triggers.push(v),
                None => anyhow::bail!("-R {v:?} must follow the -e EVENT it triggers on"),
            },
        }
    }
    // The per-buffer options, each to the group it follows.
    let starts: Vec<usize> = groups.iter().map(|g| g.0).collect();
    let (split, graph) = super::buffers::split(m, &starts, "tracer");
    let mut graph = graph;
    for ((_, group, b), opts) in groups.iter_mut().zip(split) {
        if let (Group::Removed(n), Some(flag)) = (&group, opts.given.iter().find(|f| **f != "-g")) {
            anyhow::bail!(
                "{flag}: instance {n} is to be removed (-v -B {n}) and takes no options; nothing was changed"
            );
        }
        if let [first, second, ..] = &opts.tracer[..] {
            anyhow::bail!(
                "-p {second}: one tracer per buffer (-p {first} already); give the other after a -B; nothing was changed"
            );
        }
        if let Some(module) = opts.dropped_module {
            plan.unused.push(dropped_module_warning(&module));
        }
        b.tracer = opts.tracer;
        b.buffer_percent = opts.buffer_percent;
        b.trace = opts.trace;
    }
    for pos in given_flag(m, "only_command") {
        let i = groups.iter().rposition(|g| g.0 <= pos).unwrap_or(0);
        if let Group::Removed(n) = &groups[i].1 {
            anyhow::bail!(
                "-F: instance {n} is to be removed (-v -B {n}) and takes no options; nothing was changed"
            );
        }
        groups[i].2.only_command = true;
    }
    // As in trace-cmd, the first -C given is the clock of every buffer without its own.
    let first_clock: Vec<String> = given::<String>(m, "clock")
        .into_iter()
        .map(|(_, c)| c)
        .take(1)
        .collect();
    let any_instance = groups.iter().any(|g| matches!(g.1, Group::Instance(_)));
    let last = groups
        .iter()
        .rposition(|g| !matches!(g.1, Group::Removed(_)))
        .unwrap_or(0);
    let mut first = true;
    for (i, (_, group, b)) in groups.into_iter().enumerate() {
        let instance = match group {
            Group::Removed(_) => continue,
            Group::Top if any_instance && !b.names_something() && !b.only_command => {
                if a.trace.func_stack {
                    plan.unused.push(FUNC_STACK_UNUSED.into());
                }
                if !graph.is_empty() {
                    plan.unused.push(
                        "-g: set_graph_function is the top level's only, which is left alone \
                         as its options name no event (-e) nor tracer (-p), as with trace-cmd"
                            .into(),
                    );
                }
                let t = &b.trace;
                let given = !t.clock.is_empty()
                    || !t.buffer_size.is_empty()
                    || !t.cpumask.is_empty()
                    || !t.options.is_empty()
                    || !t.pids.is_empty()
                    || !t.ftrace_filter.is_empty()
                    || !t.ftrace_notrace.is_empty()
                    || !t.max_graph_depth.is_empty()
                    || !t.subbuf_size.is_empty()
                    || t.children > 0
                    || t.stacktrace > 0
                    || !b.buffer_percent.is_empty();
                if given {
                    plan.unused.push(
                        "the options before the first -B are the top level's, which is left \
                         alone as they name no event (-e) nor tracer (-p), as with trace-cmd"
                            .into(),
                    );
                }
                continue;
            }
            Group::Top => None,
            Group::Instance(n) => Some(n),
        };
        // The command's own options: the per-buffer ones come from this group.
        let graph = match instance {
            None => std::mem::take(&mut graph),
            Some(_) => Vec::new(),
        };
        let place = super::buffers::Place {
            first,
            top: i == 0,
            last: i == last,
        };
        let trace =
            super::buffers::buffer_trace_args(b.trace, &a.trace, &first_clock, graph, place);
        first = false;
        plan.buffers.push(trace.apply(RecordConfig {
            events: b.events,
            plugin: b.tracer.into_iter().next(),
            buffer_percent: b.buffer_percent.last().copied(),
            instance,
            ..RecordConfig::default()
        }));
    }
    Ok(plan)
}

/// The warning for a --func-stack given when the top buffer is left out.
pub const FUNC_STACK_UNUSED: &str = "--func-stack: options/func_stack_trace is the top \
     buffer's only, which is left out as its options name no event (-e) nor tracer (-p), as \
     with trace-cmd; give -p function and -l before the first -B";

/// The warning for a --module that filters nothing ([`super::buffers::BufferOptions::dropped_module`]).
pub fn dropped_module_warning(module: &str) -> String {
    format!(
        "--module {module}: with no -l, -n nor -g after it, a --module filters all of the \
         module's functions only in the last buffer given, as in trace-cmd; here it filters \
         nothing (add -l '*' after it to trace only the module's functions)"
    )
}

/// The ArgMatches of the running subcommand, for argument order (clap's derive drops it).
fn subcommand_matches(name: &str) -> Result<ArgMatches> {
    let m = super::Cli::command().try_get_matches_from(std::env::args_os())?;
    m.subcommand_matches(name)
        .cloned()
        .with_context(|| format!("no `{name}` subcommand in the arguments"))
}

/// Options trace-cmd refuses for `set` or `start`, refused the same way.
fn check_verb_options(a: &StartArgs, reset_first: bool) -> Result<()> {
    let verb = if reset_first { "start" } else { "set" };
    if !reset_first {
        let mut given = vec![
            (a.all_formats, "-a"),
            (a.global_irqs, "-G"),
            (a.fork, "--fork"),
            (a.trace.sleep.is_some(), "-s"),
            (a.trace.rt_priority.is_some(), "-r"),
        ];
        given.extend(a.recording.given().into_iter().map(|f| (true, f)));
        for (given, flag) in given {
            if given {
                anyhow::bail!(
                    "set does not take {flag} (it is for start or record); nothing was changed"
                );
            }
        }
    }
    if a.command.is_empty() {
        for (given, flag) in [
            (a.only_command, "-F"),
            (a.fork, "--fork"),
            (a.user.is_some(), "--user"),
        ] {
            if given {
                anyhow::bail!(
                    "{flag} needs a command after the options (`tracectl {verb} -e sched {flag}{} ls`); nothing was changed",
                    if flag == "--user" { " USER" } else { "" }
                );
            }
        }
    }
    if a.trace.children > 0 && a.trace.pids.is_empty() && !a.only_command {
        anyhow::bail!("-c follows the forks of the traced pids: give -P PID or -F with a command; nothing was changed");
    }
    Ok(())
}

/// `start` (reset first) and `set` (no reset). Everything is checked before the first
/// write, so a command that fails has changed nothing.
pub fn start(ctx: &Context, a: StartArgs, reset_first: bool) -> Result<i32> {
    let verb = if reset_first { "start" } else { "set" };
    check_verb_options(&a, reset_first)?;
    let mut plan = plan(&subcommand_matches(verb)?, &a)?;
    // Without --verbose, TRACECTL_VERBOSE asks for every detail, as for the other verbs.
    let verbose = match &a.verbose {
        Some(level) => verbose_level(level)?,
        None if std::env::var_os("TRACECTL_VERBOSE").is_some() => 5,
        None => 0,
    };
    let t = ctx.tracefs()?;
    if !a.command.is_empty() {
        t.require_live(&format!("{verb} with a command"))?;
    }
    // The instances given after -v are removed once the rest is set; each must exist.
    for n in &plan.remove {
        t.instance(Some(n)).with_context(|| {
            format!("-v -B {n}: no such instance to remove; nothing was changed")
        })?;
    }
    if a.recording.no_filter {
        // As trace-cmd start: --no-filter writes no pid filter at all.
        for cfg in &mut plan.buffers {
            cfg.pids.clear();
        }
    }
    let mut targets = Vec::new();
    let mut warnings = std::mem::take(&mut plan.unused);
    for cfg in &plan.buffers {
        record::check_options(cfg).map_err(|e| anyhow::anyhow!("{e}; nothing was changed"))?;
        let target = t.instance_or_top(cfg.instance.as_deref());
        let (resolved, w) = check_start(&t, &target, cfg)?;
        targets.push(resolved);
        warnings.extend(w);
    }
    let user = match &a.user {
        Some(u) => Some(super::record::lookup_user(u)?),
        None => None,
    };
    // The command waits, stopped before its exec, until the state is set (and with -F its
    // pid is the filter).
    let mut child = match a.command.is_empty() {
        true => None,
        false => Some(super::record::spawn_stopped(&a.command, user.as_ref())?),
    };
    // As trace-cmd's -F: every buffer follows the command (trace-cmd writes the pid to the
    // set_event_pid of the buffer -F is given for and to the others' event filters, which
    // keeps the same events).
    if let (Some(c), true, false) = (&child, a.only_command, a.recording.no_filter) {
        for cfg in &mut plan.buffers {
            cfg.pids.push(c.id());
        }
    }
    let configured = configure(&t, &plan, &targets, reset_first, verbose);
    let applied = match configured {
        Ok(w) => w,
        Err(e) => {
            if let Some(mut c) = child.take() {
                let _ = c.kill();
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(c.id() as i32),
                    nix::sys::signal::Signal::SIGCONT,
                );
                let _ = c.wait();
            }
            return Err(e);
        }
    };
    warnings.extend(applied);
    if !a.quiet {
        for w in &warnings {
            eprintln!("tracectl: warning: {w}");
        }
    }
    let Some(mut child) = child else {
        return Ok(0);
    };
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGCONT,
    );
    if a.fork {
        return Ok(0);
    }
    let status = child
        .wait()
        .with_context(|| format!("running {}", a.command[0]))?;
    // Killed by a signal: 128 + its number, as a shell reports it.
    use std::os::unix::process::ExitStatusExt;
    Ok(status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
}

/// Create the instances needed, reset each buffer for `start`, write its configuration,
/// then remove the instances of -v -B. What was written is kept, unless a write fails:
/// then every buffer's files, those the reset wrote included, are put back and the
/// instances made here removed.
fn configure(
    t: &tracectl::tracefs::Tracefs,
    plan: &StartPlan,
    targets: &[Vec<Option<EventTarget>>],
    reset_first: bool,
    verbose: usize,
) -> Result<Vec<String>> {
    let (mut ledgers, mut global) = (Vec::new(), Ledger::new());
    let mut created: Vec<String> = Vec::new();
    let mut warnings = Vec::new();
    let mut ftrace_enabled = false;
    let mut insts = Vec::new();
    let result = (|| -> Result<()> {
        for (cfg, targets) in plan.buffers.iter().zip(targets) {
            let inst = match &cfg.instance {
                Some(n) => {
                    if t.instance(Some(n)).is_err() {
                        created.push(n.clone());
                    }
                    t.create_instance(n)?
                }
                None => t.top(),
            };
            // The reset is saved in the buffer's ledger too, so a later failure undoes it;
            // an instance made here is removed whole instead.
            let mut ledger = Ledger::new();
            if cfg.instance.is_some() && created.last() == cfg.instance.as_ref() {
                ledger.mark_private(&inst);
            }
            let reset = match reset_first {
                true => inst.reset_saving(&mut ledger).map(Some),
                false => Ok(None),
            };
            let applied = match reset {
                Ok(rep) => {
                    if let (Some(rep), true) = (rep, verbose >= 4) {
                        report_skipped(&rep.skipped, verbose >= 5);
                    }
                    record::setup::apply(&inst, cfg, targets, &mut ledger, &mut global)
                        .map_err(anyhow::Error::new)
                }
                Err(e) => Err(anyhow::Error::new(e)),
            };
            ledgers.push(ledger);
            let applied = applied?;
            ftrace_enabled |= applied.ftrace_enabled.is_some();
            warnings.extend(applied.warnings);
            insts.push(inst);
        }
        for n in &plan.remove {
            t.remove_instance(n).with_context(|| format!("-v -B {n}"))?;
        }
        Ok(())
    })();
    if let Err(e) = result {
        // Put back in reverse order what was written, then remove what was made here.
        for mut l in ledgers.into_iter().rev() {
            l.restore();
        }
        global.restore();
        for n in created.iter().rev() {
            let _ = t.remove_instance(n);
        }
        return Err(e);
    }
    for mut l in ledgers {
        l.forget();
    }
    global.forget();
    if ftrace_enabled {
        warnings.push("/proc/sys/kernel/ftrace_enabled is now 0 (-d/-D); write 1 to it to let function tracing work again".into());
    }
    if reset_first {
        for inst in &insts {
            inst.set_tracing_on(true)?;
        }
    }
    Ok(warnings)
}

/// Check every value of `start`/`set` against `target` (the buffer, or the top level for
/// an instance still to be created) without writing anything; returns each -e resolved
/// (`None` for one `-i` skips) and the warnings of those skipped.
fn check_start(
    t: &tracectl::tracefs::Tracefs,
    target: &Instance,
    cfg: &RecordConfig,
) -> Result<(Vec<Option<EventTarget>>, Vec<String>)> {
    const UNCHANGED: &str = "nothing was changed";
    let available = t.available_events()?;
    let mut targets = Vec::new();
    let mut warnings = Vec::new();
    for s in &cfg.events {
        let resolved = match tracectl::tracefs::resolve_event(&s.name, &available) {
            Ok(r) => r,
            Err(e @ TracefsError::UnknownEvent { .. }) if cfg.ignore_missing => {
                warnings.push(format!("{e}; ignored (-i)"));
                targets.push(None);
                continue;
            }
            Err(e) => return Err(anyhow::Error::new(e).context(UNCHANGED)),
        };
        if matches!(resolved, EventTarget::All) && !s.filters.is_empty() {
            anyhow::bail!("-f cannot apply to -e all; give a system or an event; {UNCHANGED}");
        }
        if !s.triggers.is_empty() && !matches!(resolved, EventTarget::Events(_)) {
            anyhow::bail!(
                "-R {:?}: a trigger needs one event (SYSTEM:EVENT), not {:?}; {UNCHANGED}",
                s.triggers[0],
                s.name
            );
        }
        for f in &s.filters {
            check_event_filter(t, &available, &resolved, f)
                .with_context(|| format!("-f {f:?}; {UNCHANGED}"))?;
        }
        if let EventTarget::Events(evs) = &resolved {
            for r in &s.triggers {
                for e in evs {
                    let context = || format!("-R {r:?} on {e}; {UNCHANGED}");
                    let filter = target.check_trigger(e, r).with_context(context)?;
                    if let Some(f) = filter {
                        let one = EventTarget::Events(vec![e.clone()]);
                        check_event_filter(t, &available, &one, &f).with_context(context)?;
                    }
                }
            }
        }
        targets.push(Some(resolved));
    }
    // Values the kernel lists.
    // The kernel's tracers are the same in every instance (the top level lists them).
    let tracers = target
        .available_tracers()
        .or_else(|_| t.top().available_tracers());
    if let (Some(p), Ok(avail)) = (&cfg.plugin, tracers) {
        if !avail.iter().any(|x| x == p) {
            anyhow::bail!(
                "tracer {p:?} is not in available_tracers ({}); {UNCHANGED}",
                avail.join(" ")
            );
        }
    }
    if let (Some(c), Ok(clocks)) = (&cfg.clock, target.trace_clock()) {
        if clocks.available.len() > 1 && !clocks.available.iter().any(|x| x == c) {
            anyhow::bail!(
                "unknown clock {c:?}; this kernel has: {}; {UNCHANGED}",
                clocks.available.join(" ")
            );
        }
    }
    // Values the kernel would refuse or misread.
    let checks = [
        cfg.subbuf_size_kb.map(|kb| target.check_subbuf_size_kb(kb)),
        cfg.buffer_size_kb.map(|kb| target.check_buffer_size(kb)),
        cfg.buffer_percent.map(|p| target.check_buffer_percent(p)),
        cfg.cpumask
            .as_deref()
            .map(|m| target.check_cpumask(m).map(|_| ())),
    ];
    for c in checks.into_iter().flatten() {
        c.with_context(|| UNCHANGED)?;
    }
    let mut options = cfg.options.clone();
    if cfg.stacktrace {
        options.push("stacktrace".into());
    }
    if cfg.disable_function_trace > 0 && target.exists("options/function-trace") {
        options.push("nofunction-trace".into());
    }
    for o in &options {
        target
            .check_option(o)
            .with_context(|| format!("-O {o}; {UNCHANGED}"))?;
    }
    // Files the other values go to must be there and usable.
    if !cfg.pids.is_empty() || cfg.follow_children {
        target
            .read("set_event_pid")
            .with_context(|| format!("-P: {UNCHANGED}"))?;
    }
    if cfg.cmdlines_size.is_some() {
        t.top()
            .read("saved_cmdlines_size")
            .with_context(|| format!("--cmdlines-size: {UNCHANGED}"))?;
    }
    for (which, flag, list) in record::setup::function_filters(cfg, target) {
        let pats: Vec<&str> = list.iter().map(String::as_str).collect();
        target
            .check_function_filter(which, &pats)
            .with_context(|| {
                format!("{flag} {} ({}); {UNCHANGED}", list.join(" "), which.file())
            })?;
    }
    if cfg.max_graph_depth.is_some() {
        target
            .max_graph_depth()
            .with_context(|| format!("--max-graph-depth: {UNCHANGED}"))?;
    }
    Ok((targets, warnings))
}

/// Check a -f filter against the formats of the events it goes to (see
/// [`tracectl::event::check_filter_for`]); an unreadable format is the kernel's to judge.
fn check_event_filter(
    t: &tracectl::tracefs::Tracefs,
    available: &[tracectl::tracefs::EventName],
    target: &EventTarget,
    filter: &str,
) -> Result<()> {
    let (events, every): (Vec<&tracectl::tracefs::EventName>, bool) = match target {
        EventTarget::Events(v) => (v.iter().collect(), true),
        EventTarget::System(sys) => (
            available.iter().filter(|e| &e.system == sys).collect(),
            false,
        ),
        EventTarget::All => return Ok(()),
    };
    let formats: Vec<(&str, String)> = events
        .iter()
        .filter_map(|e| {
            Some((
                e.system.as_str(),
                t.read_string(e.dir().join("format")).ok()?,
            ))
        })
        .collect();
    tracectl::event::check_filter_for(
        formats.iter().map(|(s, f)| (*s, f.as_str())),
        filter,
        every,
    )?;
    Ok(())
}

fn report_skipped(skipped: &[String], detailed: bool) {
    if skipped.is_empty() {
        return;
    }
    if detailed {
        for s in skipped {
            eprintln!("tracectl: note: {s}");
        }
    } else {
        let names: Vec<&str> = skipped
            .iter()
            .map(|s| s.split(": ").next().unwrap_or(s))
            .map(|p| p.rsplit('/').next().unwrap_or(p))
            .collect();
        eprintln!(
            "tracectl: note: left alone what the kernel refused or lacks: {} (a locked-down kernel or sandbox; \
             TRACECTL_VERBOSE=1 says why)",
            names.join(", ")
        );
    }
}

/// Options of verbs that act on one instance.
#[derive(Debug, clap::Args)]
pub struct InstanceArgs {
    /// Instance to act on (instances/NAME)
    #[arg(short = 'B', value_name = "INSTANCE")]
    pub instance: Option<String>,
    /// Act on the top level and every instance
    #[arg(short = 'a', long = "all", conflicts_with = "instance")]
    pub all: bool,
}

fn each_instance(
    ctx: &Context,
    a: &InstanceArgs,
    mut f: impl FnMut(&Instance) -> Result<(), TracefsError>,
) -> Result<i32> {
    let t = ctx.tracefs()?;
    if a.all {
        f(&t.top())?;
        for n in t.instances()? {
            f(&t.instance(Some(&n))?)?;
        }
    } else {
        f(&t.instance(a.instance.as_deref())?)?;
    }
    Ok(0)
}

/// `stop`.
pub fn stop(ctx: &Context, a: InstanceArgs) -> Result<i32> {
    each_instance(ctx, &a, |i| i.set_tracing_on(false))
}

/// `restart`.
pub fn restart(ctx: &Context, a: InstanceArgs) -> Result<i32> {
    each_instance(ctx, &a, |i| i.set_tracing_on(true))
}

/// `clear`.
pub fn clear(ctx: &Context, a: InstanceArgs) -> Result<i32> {
    each_instance(ctx, &a, |i| i.clear())
}

/// Options of `reset`, as trace-cmd reset takes them: their order matters (`-d` and `-b`
/// act on the buffers named by the closest `-B`, `-a` or `-t` before them).
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    tracectl reset                     reset the top level; instances are left alone\n  \
    tracectl reset -B one -b 4096 -B two -d\n                                     \
    reset instance one with 4096 KiB per CPU, remove instance two\n  \
    tracectl reset -a -d               remove every instance; the top level is left alone\n  \
    tracectl reset -t -a -d            reset the top level and remove every instance")]
pub struct ResetArgs {
    /// Reset this instance (repeatable); the top level is then reset only with -t
    #[arg(short = 'B', value_name = "INSTANCE")]
    pub instance: Vec<String>,
    /// Reset every existing instance; the top level is then reset only with -t
    #[arg(short = 'a', long = "all", action = clap::ArgAction::Count)]
    pub all: u8,
    /// Reset the top level too (needed with -B or -a)
    #[arg(short = 't', action = clap::ArgAction::Count)]
    pub top: u8,
    /// Remove the instance(s) of the preceding -B or -a instead of resetting them
    #[arg(short = 'd', action = clap::ArgAction::Count)]
    pub delete: u8,
    /// Per-CPU buffer size in KiB for the buffer(s) of the preceding -B, -a or -t (the top
    /// level before any of them)
    #[arg(short = 'b', value_name = "KB")]
    pub buffer_kb: Vec<u64>,
    /// Accepted for older scripts: instances are left alone without -B or -a
    #[arg(long = "keep-instances", hide = true)]
    pub keep_instances: bool,
    /// Also empty the ring buffer of every buffer reset
    #[arg(long = "clear")]
    pub clear: bool,
    /// Print what was changed as JSON
    #[arg(long)]
    pub json: bool,
}

/// The reset flags in command-line order.
fn reset_flags(m: &ArgMatches) -> Vec<ResetFlag> {
    let mut items: Vec<(usize, ResetFlag)> = Vec::new();
    if let (Some(idx), Some(vals)) = (m.indices_of("instance"), m.get_many::<String>("instance")) {
        items.extend(
            idx.zip(vals)
                .map(|(i, v)| (i, ResetFlag::Instance(v.clone()))),
        );
    }
    if let (Some(idx), Some(vals)) = (m.indices_of("buffer_kb"), m.get_many::<u64>("buffer_kb")) {
        items.extend(idx.zip(vals).map(|(i, v)| (i, ResetFlag::BufferKb(*v))));
    }
    for (id, flag) in [
        ("all", ResetFlag::AllInstances),
        ("top", ResetFlag::Top),
        ("delete", ResetFlag::Delete),
    ] {
        // A counted flag has a default value (0) whose index is not an occurrence.
        if m.value_source(id) != Some(clap::parser::ValueSource::CommandLine) {
            continue;
        }
        if let Some(idx) = m.indices_of(id) {
            items.extend(idx.map(|i| (i, flag.clone())));
        }
    }
    items.sort_by_key(|x| x.0);
    items.into_iter().map(|(_, f)| f).collect()
}

/// `reset`.
pub fn reset(ctx: &Context, a: ResetArgs) -> Result<i32> {
    let t = ctx.tracefs()?;
    let flags = reset_flags(&subcommand_matches("reset")?);
    let plan = t.reset_plan(&flags)?;
    if a.clear {
        if plan.top {
            t.top().clear()?;
        }
        for i in plan.instances.iter().filter(|i| !i.delete) {
            t.instance(Some(&i.name))?.clear()?;
        }
    }
    let rep = t.reset(&plan)?;
    if a.json {
        super::common::print_json(
            &serde_json::json!({"changed": rep.changed, "skipped": rep.skipped}),
        )?;
    } else {
        report_skipped(&rep.skipped, std::env::var_os("TRACECTL_VERBOSE").is_some());
    }
    Ok(0)
}

/// Options of `snapshot`, with trace-cmd's letters; without -s, -r or -f it prints the
/// snapshot.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
                        tracectl snapshot -s          take a snapshot of every CPU\n  \
                        tracectl snapshot -c 1 -s     take a snapshot of CPU 1 only\n  \
                        tracectl snapshot -c 1        print CPU 1's snapshot\n  \
                        tracectl snapshot -r          clear the snapshot, keep its memory\n  \
                        tracectl snapshot -f          free the snapshot buffer")]
pub struct SnapshotArgs {
    /// Take a snapshot (swap the live buffer into the snapshot buffer)
    #[arg(short = 's', group = "op")]
    pub take: bool,
    /// Clear (reset) the snapshot buffer without freeing it
    #[arg(short = 'r', group = "op")]
    pub reset: bool,
    /// Free the snapshot buffer
    #[arg(short = 'f', group = "op")]
    pub free: bool,
    /// Act on (or print) this CPU's snapshot only (per_cpu/cpuCPU/snapshot)
    #[arg(short = 'c', long = "cpu", value_name = "CPU")]
    pub cpu: Option<u32>,
    /// Instance (instances/NAME)
    #[arg(short = 'B', value_name = "INSTANCE")]
    pub instance: Option<String>,
    /// When showing: print the lines as JSON
    #[arg(long)]
    pub json: bool,
}

/// `snapshot`.
pub fn snapshot(ctx: &Context, a: SnapshotArgs) -> Result<i32> {
    let i = ctx.instance(a.instance.as_deref())?;
    if a.take {
        i.snapshot_take(a.cpu)?;
    } else if a.reset {
        i.snapshot_clear(a.cpu)?;
    } else if a.free {
        if let Some(cpu) = a.cpu {
            anyhow::bail!(
                "-c {cpu} -f: the kernel frees the snapshot buffer only for all CPUs; drop -c"
            );
        }
        i.snapshot_free()?;
    } else {
        let text = i.snapshot_text(a.cpu)?;
        let mut typer = match a.json {
            true => Some(super::show::typer(&ctx.tracefs()?)),
            false => None,
        };
        super::show::print_trace_text(&text, typer.as_mut())?;
    }
    Ok(0)
}

/// Options of `marker`.
#[derive(Debug, clap::Args)]
pub struct MarkerArgs {
    /// The text to write (words are joined with spaces)
    #[arg(required = true)]
    pub text: Vec<String>,
    /// Write to trace_marker_raw with this id instead (the text becomes the payload)
    #[arg(long = "raw-id", value_name = "ID")]
    pub raw_id: Option<u32>,
    /// Instance (instances/NAME)
    #[arg(short = 'B', value_name = "INSTANCE")]
    pub instance: Option<String>,
}

/// `marker`.
pub fn marker(ctx: &Context, a: MarkerArgs) -> Result<i32> {
    let i = ctx.instance(a.instance.as_deref())?;
    let text = a.text.join(" ");
    match a.raw_id {
        Some(id) => i.mark_raw(id, text.as_bytes())?,
        None => i.mark(&text)?,
    }
    Ok(0)
}

/// Options of `man`.
#[derive(Debug, clap::Args)]
pub struct ManArgs {
    /// Subcommand whose page to print (default: tracectl itself)
    pub subcommand: Option<String>,
    /// Write every page (tracectl.1 and tracectl-VERB.1) into this directory instead
    #[arg(long = "out", value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Render the man page of a command into roff, with its DESCRIPTION and EXAMPLES from
/// [`super::man_text`] (`verb` is "" for tracectl itself).
fn render(cmd: clap::Command, verb: &str) -> Result<Vec<u8>> {
    let text = super::man_text::page_text(verb);
    let cmd = match &text {
        Some(t) => cmd.long_about(t.description),
        None => cmd,
    };
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd).render(&mut buf)?;
    if let Some(t) = text {
        buf.extend_from_slice(super::man_text::examples_roff(t.examples).as_bytes());
    }
    Ok(buf)
}

/// Every page: (file name, roff).
pub fn man_pages() -> Result<Vec<(String, Vec<u8>)>> {
    let mut top = super::Cli::command();
    top.build();
    let mut pages = vec![("tracectl.1".to_string(), render(top.clone(), "")?)];
    for sub in top.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = format!("tracectl-{}", sub.get_name());
        // clap keeps names as &'static str without its `string` feature; a handful of
        // short strings for the life of the process.
        let leaked: &'static str = Box::leak(name.clone().into_boxed_str());
        let cmd = sub.clone().name(leaked).display_name(leaked);
        pages.push((format!("{name}.1"), render(cmd, sub.get_name())?));
    }
    Ok(pages)
}

/// `man`.
pub fn man(a: ManArgs) -> Result<i32> {
    let pages = man_pages()?;
    if let Some(dir) = a.out {
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        for (name, roff) in pages {
            let p = dir.join(&name);
            std::fs::write(&p, roff).with_context(|| format!("writing {}", p.display()))?;
        }
        return Ok(0);
    }
    let want = match &a.subcommand {
        Some(s) => format!("tracectl-{s}.1"),
        None => "tracectl.1".to_string(),
    };
    let (_, roff) = pages
        .into_iter()
        .find(|(n, _)| *n == want)
        .with_context(|| {
            format!(
                "no subcommand {:?} (see `tracectl --help`)",
                a.subcommand.as_deref().unwrap_or("")
            )
        })?;
    // On a terminal, show the page as man(1) would; else (or without man) the roff.
    if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        if let Ok(mut child) = std::process::Command::new("man")
            .args(["-l", "-"])
            .stdin(std::process::Stdio::piped())
            .spawn()
        {
            if let Some(mut stdin) = child.stdin.take() {
                // man may quit before reading it all (q in the pager): not an error.
                let _ = stdin.write_all(&roff);
            }
            let status = child.wait().context("waiting for man")?;
            return Ok(status.code().unwrap_or(1));
        }
    }
    std::io::stdout().lock().write_all(&roff)?;
    Ok(0)
}
