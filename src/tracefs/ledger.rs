//! The one record of what a command changed in tracefs, put back in reverse order.
//!
//! Every command that changes tracefs state for a while (`record`, `stream`, `capture`,
//! `graph`) saves a file in a [`Ledger`] before writing it. [`Ledger::restore`] (or
//! dropping the ledger, also while unwinding from a panic) writes the saved values back,
//! newest first, so a file changed twice ends as it was before the first change and a
//! tracer goes back before the filters it depends on. SIGINT and SIGTERM end a command
//! through its normal exit path once [`stop_on_signals`] is installed, so they restore too.
//!
//! What a file reads is not always what writing it takes: [`restorable`] holds the one
//! rule per kind of file.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use super::instance::{BufferSize, Instance, TraceClocks};
use super::trigger::{removal_text, Trigger};
use super::{AppendMode, TracefsError};

/// What writing back a file takes, decided from what it read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Restore {
    /// Write these bytes (truncating).
    Write(Vec<u8>),
    /// The file cannot say its state in a form it accepts back (a system's `enable`
    /// reading `X`, a `buffer_size_kb` reading `X`); save these files instead.
    Files(Vec<PathBuf>),
}

/// The text that, written to `file` of `inst`, recreates the state read as `read`.
///
/// One rule per kind of file:
/// - `buffer_size_kb`: the size in KiB; `7 (expanded: 1408)` (a buffer never used yet)
///   restores the expanded size, the one a trace gets, since writing `7` would leave a
///   7 KiB buffer; `X` (CPUs differ) saves every `per_cpu/cpuN/buffer_size_kb` instead.
/// - `trace_clock`: the bracketed clock of `[local] global ...`.
/// - `set_event`: the enabled events, one per line (empty disables every event).
/// - `enable`: `0` or `1`; a soft-disabled `0*`/`1*` gives its enable bit; `X` (some
///   events of a system on) saves `set_event` instead.
/// - `filter`: the filter text; `none` or the system filter's comment header gives `0`,
///   which removes a filter.
/// - function lists (`set_ftrace_filter`, `set_ftrace_notrace`, `set_graph_function`,
///   `set_graph_notrace`): one function per line, without the `####` comment that an
///   empty list reads.
/// - pid lists (`set_ftrace_pid`, `set_event_pid`, and their `notrace` twins): the pids,
///   without `no pid`.
/// - anything else (`current_tracer`, `options/*`, `tracing_on`, `tracing_cpumask`,
///   `buffer_subbuf_size_kb`, `max_graph_depth`, `saved_cmdlines_size`, ...): the text,
///   trimmed.
///
/// `trigger` files and read-only files (`buffer_total_size_kb`) cannot be written back:
/// a trigger added through [`Ledger::add_trigger`] is undone by its removal line.
pub fn restorable(inst: &Instance, file: &Path, read: &[u8]) -> Result<Restore, TracefsError> {
    let text = String::from_utf8_lossy(read);
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let lines = || -> Vec<u8> {
        let mut out = String::new();
        for l in text.lines().map(str::trim) {
            if !l.is_empty() && !l.starts_with('#') {
                out.push_str(l);
                out.push('\n');
            }
        }
        out.into_bytes()
    };
    let bad = |detail: String| TracefsError::Parse {
        path: inst.path(file),
        detail,
    };
    let write = |s: &str| Ok(Restore::Write(s.as_bytes().to_vec()));
    match name.as_str() {
        "buffer_size_kb" => match BufferSize::parse(&text) {
            Some(BufferSize::PerCpu) if file == Path::new("buffer_size_kb") => Ok(Restore::Files(
                inst.cpus()?
                    .into_iter()
                    .map(|c| PathBuf::from(format!("per_cpu/cpu{c}/buffer_size_kb")))
                    .collect(),
            )),
            Some(size) => match size.effective_kb() {
                Some(kb) => write(&kb.to_string()),
                None => Err(bad(format!("{:?} is not a size", text.trim()))),
            },
            None => Err(bad(format!("{:?} is not a size", text.trim()))),
        },
        "buffer_total_size_kb" | "trigger" => Err(TracefsError::BadValue {
            path: inst.path(file),
            detail: "cannot be written back as read".into(),
        }),
        "trace_clock" => match TraceClocks::parse(&text) {
            Some(c) => write(&c.current),
            None => Err(bad("no [current] clock".into())),
        },
        "set_event" => Ok(Restore::Write(lines())),
        "enable" => match text.trim() {
            "1" | "1*" => write("1"),
            "0" | "0*" => write("0"),
            "X" => Ok(Restore::Files(vec![PathBuf::from("set_event")])),
            other => Err(bad(format!("{other:?} is not an enable state"))),
        },
        "filter" => {
            let t = text.trim();
            if t == "none" || t.lines().all(|l| l.trim_start().starts_with('#')) {
                write("0")
            } else {
                write(t)
            }
        }
        "set_ftrace_filter" | "set_ftrace_notrace" | "set_graph_function" | "set_graph_notrace" => {
            Ok(Restore::Write(lines()))
        }
        "set_ftrace_pid" | "set_ftrace_notrace_pid" | "set_event_pid" | "set_event_notrace_pid" => {
            let pids: Vec<&str> = text
                .split_whitespace()
                .filter(|w| w.bytes().all(|b| b.is_ascii_digit()))
                .collect();
            write(&pids.join(" "))
        }
        _ => write(text.trim()),
    }
}

#[derive(Debug)]
struct Change {
    inst: Instance,
    file: PathBuf,
    undo: Vec<u8>,
    mode: AppendMode,
}

/// Files changed, with what puts each back; restored newest first on
/// [`Ledger::restore`] or drop.
#[derive(Debug, Default)]
pub struct Ledger {
    changes: Vec<Change>,
    /// Instances this command created: removed whole at the end, so their files need
    /// no saving.
    private: Vec<Instance>,
}

impl Ledger {
    /// An empty ledger.
    pub fn new() -> Ledger {
        Ledger::default()
    }

    /// Changes to `inst` need no restoring: the command created it and removes it whole.
    pub fn mark_private(&mut self, inst: &Instance) {
        self.private.push(inst.clone());
    }

    /// Remember `file` of `inst` as it is now, by the rule of its kind ([`restorable`]).
    /// Files of a private instance ([`Ledger::mark_private`]) are not read.
    pub fn save(&mut self, inst: &Instance, file: impl AsRef<Path>) -> Result<(), TracefsError> {
        let file = file.as_ref();
        if self.private.contains(inst) {
            return Ok(());
        }
        let read = inst.read(file)?;
        match restorable(inst, file, &read)? {
            Restore::Write(undo) => self.changes.push(Change {
                inst: inst.clone(),
                file: file.to_path_buf(),
                undo,
                mode: AppendMode::Truncate,
            }),
            Restore::Files(files) => {
                for f in files {
                    self.save(inst, f)?;
                }
            }
        }
        Ok(())
    }

    /// Save `file` if `inst` has it; a file the kernel lacks is not an error here.
    pub fn save_if_present(
        &mut self,
        inst: &Instance,
        file: impl AsRef<Path>,
    ) -> Result<(), TracefsError> {
        if inst.exists(file.as_ref()) {
            self.save(inst, file)?;
        }
        Ok(())
    }

    /// Save `file`, then write `value` to it (truncating).
    pub fn set(
        &mut self,
        inst: &Instance,
        file: impl AsRef<Path>,
        value: &str,
    ) -> Result<(), TracefsError> {
        let file = file.as_ref();
        self.save(inst, file)?;
        inst.write_str(file, value)
    }

    /// Apply trace-cmd's `-O SPEC` (`NAME` or `noNAME`) to `inst`, saving the option
    /// first; an unknown option is refused by name before anything is written.
    pub fn apply_option(&mut self, inst: &Instance, spec: &str) -> Result<(), TracefsError> {
        let (name, on) = inst.option_spec(spec);
        inst.option(name)?;
        if inst.exists("options") {
            self.save(inst, Path::new("options").join(name))?;
        }
        inst.set_option(name, on)
    }

    /// Add a trigger to `dir/trigger` (an event's or system's directory), remembering
    /// the line that removes it. The kernel adds a trigger whichever `mode` opens the
    /// file, but an O_TRUNC open also drops its hist triggers.
    pub fn add_trigger(
        &mut self,
        inst: &Instance,
        dir: impl AsRef<Path>,
        trigger: &str,
        mode: AppendMode,
    ) -> Result<(), TracefsError> {
        let file = dir.as_ref().join("trigger");
        inst.write(&file, trigger.as_bytes(), mode)?;
        if self.private.contains(inst) {
            return Ok(());
        }
        self.changes.push(Change {
            inst: inst.clone(),
            file,
            undo: removal_text(trigger).into_bytes(),
            mode: AppendMode::Append,
        });
        Ok(())
    }

    /// Remember the triggers in `dir/trigger` (an event's or system's directory) before
    /// they are removed: each is added back as the kernel lists it, hist triggers first
    /// so that an `enable_hist` finds its histogram (whose counts start over).
    pub fn save_triggers(
        &mut self,
        inst: &Instance,
        dir: impl AsRef<Path>,
    ) -> Result<(), TracefsError> {
        let file = dir.as_ref().join("trigger");
        if self.private.contains(inst) {
            return Ok(());
        }
        let lines = super::file::entry_lines(&inst.read_string(&file)?);
        // Restored newest first: the hist triggers are pushed last.
        for l in lines.iter().rev().filter(|l| !l.starts_with("hist")) {
            self.push_trigger(inst, &file, l);
        }
        for l in lines.iter().rev().filter(|l| l.starts_with("hist")) {
            self.push_trigger(inst, &file, l);
        }
        Ok(())
    }

    fn push_trigger(&mut self, inst: &Instance, file: &Path, listed: &str) {
        self.changes.push(Change {
            inst: inst.clone(),
            file: file.to_path_buf(),
            undo: Trigger::parse(listed).to_string().into_bytes(),
            mode: AppendMode::Append,
        });
    }

    /// How many changes are remembered.
    pub fn len(&self) -> usize {
        self.changes.len()
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// Forget every change: the state stays as set (`record -k`).
    pub fn forget(&mut self) {
        self.changes.clear();
    }

    /// Forget the changes to files of `inst` (e.g. of a private instance about to be
    /// removed whole, or kept by `-k`).
    pub fn forget_instance(&mut self, inst: &Instance) {
        self.changes.retain(|c| c.inst != *inst);
    }

    /// Write every saved value back, newest first. Carries on past a file that cannot be
    /// written and returns one warning per such file.
    pub fn restore(&mut self) -> Vec<String> {
        let mut warnings = Vec::new();
        while let Some(c) = self.changes.pop() {
            if let Err(e) = c.inst.write(&c.file, &c.undo, c.mode) {
                warnings.push(format!(
                    "could not restore {}: {e}",
                    c.inst.rel(&c.file).display()
                ));
            }
        }
        warnings
    }
}

impl Drop for Ledger {
    fn drop(&mut self) {
        // An explicit restore() returns its warnings; here (an error path or a panic)
        // nobody is left to hear them.
        let _ = self.restore();
    }
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// Make SIGINT and SIGTERM set a flag instead of ending the process, so that the command
/// ends through its own exit path and every [`Ledger`] and private instance is restored;
/// returns the flag, which long-running loops poll.
pub fn stop_on_signals() -> &'static AtomicBool {
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
    let action = SigAction::new(
        SigHandler::Handler(on_signal),
        SaFlags::empty(),
        SigSet::empty(),
    );
    for sig in [Signal::SIGINT, Signal::SIGTERM] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        let _ = unsafe { sigaction(sig, &action) };
    }
    &STOP
}
