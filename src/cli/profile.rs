//! `tracectl profile`: record with trace-cmd profile's events, then print `report
//! --profile` of the recording, as `trace-cmd profile` does in one step.
//!
//! The recording goes through the record session into a private instance and a
//! trace.dat (a temporary one unless `--dat` keeps it); the profile is the report
//! session's. trace-cmd profile prints the profile without report's `cpus=N` head line.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use tracectl::dat::WriteOptions;
use tracectl::record::profile::profile_config;
use tracectl::record::{EventSpec, RecordConfig};
use tracectl::session::profile_hooks::ProfileHook;
use tracectl::session::report_files::{
    report_files, FilesError, FilesMode, FilesOptions, FilesStyle, Note,
};

use super::common::Context;
use super::record::{
    event_targets, live_tracefs, print_summary, record_command, CommandRun, TraceArgs,
};

/// Options of `tracectl profile` (trace-cmd profile's names and meanings).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Event to record besides the profile's own: `system`, `event`, `system:event` or
    /// `all` (repeatable)
    #[arg(short = 'e', long = "event", value_name = "EVENT")]
    pub events: Vec<String>,
    /// Filter for the preceding -e event
    #[arg(short = 'f', value_name = "FILTER")]
    pub filters: Vec<String>,
    /// Trigger for the preceding -e event
    #[arg(short = 'R', value_name = "TRIGGER")]
    pub triggers: Vec<String>,
    /// Do not record the next -e event (carve it out of an enabled system)
    #[arg(short = 'v', action = clap::ArgAction::Count)]
    pub invert: u8,
    /// Tracer to run instead of function_graph at depth 1 (`-p nop`: none)
    #[arg(short = 'p', long = "plugin")]
    pub plugin: Option<String>,
    /// Only the events and tracer given: none of the profile's own (sched_switch and
    /// sched_wakeup with stacks, irqs, softirqs, syscalls, ...), no function_graph
    #[arg(short = 'S')]
    pub manual: bool,
    /// Interrupt (hard and soft) events belong to per-CPU global tasks, not to tasks
    #[arg(short = 'G')]
    pub global: bool,
    /// Merge the tasks of one comm into one `group: COMM` (its wakeups one entry, its
    /// switches one per state, stacks merged); only tasks named by their own records are
    /// merged. Groups print after the global tasks, in comm order (trace-cmd 3.1.6's order
    /// follows memory addresses and changes from run to run), then the other tasks
    #[arg(long = "by-comm")]
    pub by_comm: bool,
    /// Write the profile to this file instead of stdout
    #[arg(short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Write the profile to stderr (the command's own output is unchanged); -o wins
    #[arg(long = "stderr")]
    pub stderr: bool,
    /// Keep the recording as this trace.dat (`tracectl report --profile -i FILE` prints
    /// the same profile again)
    #[arg(long = "dat", value_name = "FILE")]
    pub dat: Option<PathBuf>,
    /// Time two more events as a pair,
    /// `[SYS:]START,START_MATCH[,START_PID]/[SYS:]END,END_MATCH[,FLAGS]` (flags: p pinned
    /// to a CPU, g global, s a stack with the start); both events are recorded and the
    /// hook is stored in the recording; repeatable (each is printed first, as report
    /// prints a file's hooks)
    #[arg(short = 'H', value_name = "EVENT-HOOKS")]
    pub hooks: Vec<String>,
    /// Refused: the profile is of the top buffer, which tracectl records in its own
    /// private instance; another instance's events would be printed, not profiled
    #[arg(short = 'B', value_name = "NAME")]
    pub instance: Vec<String>,
    /// Trace only the command given after the options
    #[arg(short = 'F')]
    pub only_command: bool,
    /// Buffer set-up and what is traced (shared with the other recording verbs)
    #[command(flatten)]
    pub trace: TraceArgs,
    /// Run the command as this user (name or uid)
    #[arg(long = "user", value_name = "USER")]
    pub user: Option<String>,
    /// Print nothing but errors and the profile
    #[arg(short = 'q')]
    pub quiet: bool,
    /// Refused with a level: trace-cmd's --verbose=LEVEL is libtracecmd's log level,
    /// which tracectl has no counterpart for
    #[arg(
        long = "verbose",
        value_name = "LEVEL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = ""
    )]
    pub verbose: Option<String>,
    /// Command to profile (else record until Ctrl-C); it follows the options, with or
    /// without `--`, and everything after its name is its own
    #[arg(
        value_name = "COMMAND",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub command: Vec<String>,
}

/// The events of `hooks` added to `events` (once each), with a stacktrace trigger on a
/// start whose hook has the `s` flag, as trace-cmd enables them for `-H`.
pub fn add_hook_events(events: &mut Vec<EventSpec>, hooks: &[ProfileHook]) {
    for h in hooks {
        for (system, event, stack) in [
            (&h.start_system, &h.start_event, h.stack),
            (&h.end_system, &h.end_event, false),
        ] {
            let name = match system {
                Some(s) => format!("{s}:{event}"),
                None => event.clone(),
            };
            let i = match events.iter().position(|e| !e.invert && e.name == name) {
                Some(i) => i,
                None => {
                    events.push(EventSpec {
                        name,
                        ..Default::default()
                    });
                    events.len() - 1
                }
            };
            let e = &mut events[i];
            if stack && !e.triggers.iter().any(|t| t.contains("stacktrace")) {
                e.triggers.push("stacktrace".into());
            }
        }
    }
}

/// The `-H` hooks read, or the first that does not read. Flag letters that mean nothing
/// are warned about, and the hook is kept, as trace-cmd does.
pub fn parse_hooks(texts: &[String]) -> Result<Vec<ProfileHook>> {
    let hooks = texts
        .iter()
        .map(|h| ProfileHook::parse(h))
        .collect::<Result<Vec<_>, _>>()?;
    for (h, text) in hooks.iter().zip(texts) {
        for c in &h.unknown_flags {
            eprintln!("tracectl: warning: hook '{text}': unknown flag {c} (ignored)");
        }
    }
    Ok(hooks)
}

/// The directory a file is to be written in, which must exist.
fn check_parent(opt: &str, path: &Path) -> Result<()> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        anyhow::bail!(
            "{opt} {}: directory {} does not exist",
            path.display(),
            parent.display()
        );
    }
    Ok(())
}

/// The trace.dat of the recording: kept (`--dat`) or removed when dropped.
struct Recording {
    path: PathBuf,
    keep: bool,
}

impl Drop for Recording {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Drops the report's `cpus=N` head line, which trace-cmd profile does not print (the
/// lines of the recording's hooks come before it and stay).
struct ProfileOnly<W: Write> {
    inner: W,
    /// The head line has gone by.
    done: bool,
    /// The line being written, until the head line has gone by.
    line: Vec<u8>,
}

impl<W: Write> Write for ProfileOnly<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut rest = buf;
        while !self.done && !rest.is_empty() {
            let Some(i) = memchr::memchr(b'\n', rest) else {
                self.line.extend_from_slice(rest);
                return Ok(buf.len());
            };
            self.line.extend_from_slice(&rest[..=i]);
            rest = &rest[i + 1..];
            if self.line.starts_with(b"cpus=") {
                self.done = true;
            } else {
                self.inner.write_all(&self.line)?;
            }
            self.line.clear();
        }
        self.inner.write_all(rest)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.write_all(&self.line)?;
        self.line.clear();
        self.inner.flush()
    }
}

/// Run `tracectl profile`.
pub fn run(ctx: &Context, a: Args) -> Result<i32> {
    let hooks = parse_hooks(&a.hooks)?;
    if let Some(b) = a.instance.first() {
        anyhow::bail!(
            "-B {b}: the profile is of the top buffer (tracectl records it in its own \
             private instance); record the instance with `tracectl record -B {b}` instead"
        );
    }
    if let Some(level) = a.verbose.as_deref().filter(|l| !l.is_empty()) {
        anyhow::bail!(
            "--verbose={level} sets libtracecmd's log level in trace-cmd, which tracectl has \
             no counterpart for"
        );
    }
    if a.only_command && a.command.is_empty() {
        anyhow::bail!("-F needs a command after the options (`tracectl profile -F sleep 1`)");
    }
    if let Some(o) = &a.output {
        check_parent("-o", o)?;
    }
    if let Some(d) = &a.dat {
        check_parent("--dat", d)?;
    }
    let events: Vec<EventSpec> = match event_targets("profile") {
        Some(mut t) => t.remove(0).1,
        // Not parsed from the process arguments (embedded use): in the order given.
        None => a
            .events
            .iter()
            .map(|e| EventSpec {
                name: e.clone(),
                ..Default::default()
            })
            .collect(),
    };
    let mut events = events;
    add_hook_events(&mut events, &hooks);
    if a.manual && events.is_empty() && a.plugin.is_none() {
        anyhow::bail!(
            "nothing to profile: with -S only the events (-e) and tracer (-p) given are \
             recorded"
        );
    }
    let mut trace = a.trace.clone();
    trace.bind_modules_from_args("profile");
    let base = trace.apply(RecordConfig {
        events,
        plugin: a.plugin.clone(),
        write: WriteOptions::default(),
        // Stored in the file: the report below reads them from it (and prints them).
        hooks: a.hooks.clone(),
        ..RecordConfig::default()
    });
    let tracefs = live_tracefs(ctx)?;
    tracefs.require_live("profile")?;
    let cfg = if a.manual {
        base
    } else {
        if base.plugin.is_none() && !tracefs.exists("max_graph_depth") {
            eprintln!(
                "tracectl: warning: the kernel has no max_graph_depth (function_graph): \
                 no user/kernel time per function, as trace-cmd skips it"
            );
        }
        profile_config(&tracefs, base, true)
    };
    let recording = Recording {
        path: a.dat.clone().unwrap_or_else(|| {
            std::env::temp_dir().join(format!("tracectl-profile-{}.dat", std::process::id()))
        }),
        keep: a.dat.is_some(),
    };
    let run = CommandRun {
        command: &a.command,
        user: a.user.as_deref(),
        only_command: a.only_command,
        quiet: a.quiet,
        verb: "profile",
        remove_instances: &[],
    };
    let summary = record_command(ctx, cfg, &recording.path, &run)?;
    if !a.quiet {
        print_summary(&summary, &recording.path);
    }
    let opts = FilesOptions {
        files: vec![recording.path.clone()],
        mode: FilesMode::Report,
        cpu_lists: Vec::new(),
        filters: Vec::new(),
        first_negated: 0,
        ts_offsets: Some(vec![0]),
        json: false,
        style: FilesStyle::TraceCmd,
        nsecs: false,
        latency: false,
        raw: false,
        quiet: a.quiet,
        verbose: false,
        more: Default::default(),
        wakeup: false,
        profile: true,
        profile_global: a.global,
        profile_hooks: Vec::new(),
        profile_by_comm: a.by_comm,
    };
    let sink: Box<dyn Write> = match &a.output {
        Some(o) => Box::new(
            File::create(o).with_context(|| format!("-o {}: cannot create it", o.display()))?,
        ),
        None if a.stderr => Box::new(io::stderr().lock()),
        None => Box::new(io::stdout().lock()),
    };
    let mut out = ProfileOnly {
        inner: io::BufWriter::with_capacity(1 << 16, sink),
        done: false,
        line: Vec::new(),
    };
    let mut note = |n: Note| match n {
        Note::Warning(w) => eprintln!("tracectl: warning: {w}"),
        Note::Fallback(f) => eprintln!("tracectl: {f}"),
    };
    match report_files(&opts, &mut out, &mut note) {
        Ok(_) => {}
        Err(FilesError::Output(e)) => return Err(e.into()),
        Err(e) => {
            return Err(anyhow::Error::new(e).context(format!(
                "profiling the recording {}",
                recording.path.display()
            )))
        }
    }
    out.flush()?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(chunks: &[&[u8]]) -> Vec<u8> {
        let mut w = ProfileOnly {
            inner: Vec::new(),
            done: false,
            line: Vec::new(),
        };
        for c in chunks {
            w.write_all(c).unwrap();
        }
        w.flush().unwrap();
        w.inner
    }

    #[test]
    fn only_the_head_line_is_dropped_however_it_is_written() {
        for chunks in [
            &[&b"cpus=2\n\ntask: a-1\n"[..]][..],
            &[b"", b"cpus=", b"2", b"\n", b"\ntask: a-1\n"],
            &[b"cpus=2\n", b"\ntask: a-1\n"],
        ] {
            assert_eq!(written(chunks), b"\ntask: a-1\n", "{chunks:?}");
        }
        // The hooks' lines come before it; a later cpus= is the profile's.
        assert_eq!(
            written(&[b"start a\nstart b\ncpus=2\n\ntask: cpus=1\n", b"cpus=3\n"]),
            b"start a\nstart b\n\ntask: cpus=1\ncpus=3\n"
        );
        assert_eq!(written(&[b"no head"]), b"no head");
    }
}
