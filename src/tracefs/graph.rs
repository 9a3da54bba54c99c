//! function_graph of one command: the setup `echo FUNC > set_graph_function; echo PID >
//! set_ftrace_pid; echo function_graph > current_tracer` done for one child process, with
//! every file put back afterwards.
//!
//! The child is started held (a shell blocked reading a FIFO), its pid goes into
//! `set_ftrace_pid` before the tracer is switched on, then it is released and `exec`s the
//! command, so the graph holds that command and nothing else (children too, with
//! `options/function-fork`).

use std::fs;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus};

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::instance::Instance;
use super::{AppendMode, FunctionFilter, Ledger, TracefsError};

/// What to graph.
#[derive(Debug, Clone, Default)]
pub struct GraphOptions {
    /// Functions to graph from (`set_graph_function`); globs allowed.
    pub functions: Vec<String>,
    /// Functions whose subtrees are left out (`set_graph_notrace`).
    pub notrace: Vec<String>,
    /// `max_graph_depth` (0 = unlimited).
    pub max_depth: Option<u32>,
    /// funcgraph options to set (`funcgraph-proc`, `nofuncgraph-irqs`, ...).
    pub options: Vec<String>,
    /// Follow the command's children (`options/function-fork`).
    pub follow_forks: bool,
}

/// Whose calls to graph.
#[derive(Debug, Clone)]
pub enum GraphTarget {
    /// Start this command (held until the tracer is on) and graph it until it ends.
    Command(Vec<String>),
    /// Graph a running process for a while (or until it ends, or a signal).
    Pid {
        /// The process (its threads are traced; children too with `follow_forks`).
        pid: u32,
        /// How long.
        duration: Duration,
    },
}

/// What reads the trace of a run: set up once the tracer is on and the buffer empty,
/// before tracing starts, and finished once tracing has stopped, before any file is put
/// back (so the tracer's options can still be read).
pub trait GraphCapture {
    /// Tracing is about to start in `inst`.
    fn armed(&mut self, inst: &Instance) -> Result<(), GraphError>;
    /// Tracing has stopped in `inst`; the files are not restored yet.
    fn finish(&mut self, inst: &Instance) -> Result<(), GraphError>;
}

/// An error of a function_graph run.
#[derive(Debug)]
#[non_exhaustive]
pub enum GraphError {
    /// This kernel or sandbox has no function_graph tracer.
    NoFunctionGraph {
        /// What `available_tracers` lists.
        available: Vec<String>,
    },
    /// A tracefs file could not be used.
    Tracefs(TracefsError),
    /// SIGINT or SIGTERM arrived; the command was killed and the files restored.
    Interrupted,
    /// `-p PID`: no such process.
    NoProcess(u32),
    /// A trace option this kernel does not have (`options/NAME`).
    NoOption(String),
    /// Reading the trace while the command ran failed.
    Capture(String),
    /// The command could not be started.
    Spawn {
        /// The command.
        command: String,
        /// The cause.
        err: std::io::Error,
    },
}

impl std::fmt::Display for GraphError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GraphError::NoFunctionGraph { available } => {
                write!(
                f,
                "this kernel offers no function_graph tracer (available_tracers: {}); it needs \
                 CONFIG_FUNCTION_GRAPH_TRACER and a kernel or sandbox that allows function tracing",
                if available.is_empty() { "none".to_string() } else { available.join(" ") }
            )
            }
            GraphError::Tracefs(e) => write!(f, "{e}"),
            GraphError::Interrupted => write!(f, "interrupted; the command was killed"),
            GraphError::NoProcess(pid) => write!(f, "no process {pid} (/proc/{pid} is missing)"),
            GraphError::NoOption(name) => write!(
                f,
                "this kernel has no trace option {name} (options/{name}); `tracectl list -o` lists the ones it has"
            ),
            GraphError::Capture(e) => write!(f, "reading the trace: {e}"),
            GraphError::Spawn { command, err } => write!(f, "cannot run {command:?}: {err}"),
        }
    }
}

impl std::error::Error for GraphError {}

impl From<TracefsError> for GraphError {
    fn from(e: TracefsError) -> Self {
        GraphError::Tracefs(e)
    }
}

/// The entry symbol of a system call on this kernel, e.g. `openat` -> `__x64_sys_openat`,
/// chosen from `available_filter_functions` (or kallsyms text) when given.
pub fn syscall_entry_symbol(name: &str, available: Option<&[String]>) -> String {
    let candidates = [
        format!("__x64_sys_{name}"),
        format!("__arm64_sys_{name}"),
        format!("__riscv_sys_{name}"),
        format!("__s390x_sys_{name}"),
        format!("__se_sys_{name}"),
        format!("sys_{name}"),
    ];
    if let Some(avail) = available {
        for c in &candidates {
            if avail.iter().any(|f| f == c) {
                return c.clone();
            }
        }
    }
    let arch = if cfg!(target_arch = "aarch64") { 1 } else { 0 };
    candidates[arch].clone()
}

/// Graph `target` with function_graph in `inst`, read by `capture`, restoring every file
/// it changes; the command's exit status (none for a running process), and the files
/// that could not be put back.
///
/// For a process, `stop` ends the run early as its duration would; for a command it kills
/// the command and the run fails with [`GraphError::Interrupted`].
pub fn graph_with(
    inst: &Instance,
    target: &GraphTarget,
    opts: &GraphOptions,
    stop: &AtomicBool,
    capture: &mut dyn GraphCapture,
) -> Result<(Option<ExitStatus>, Vec<String>), GraphError> {
    // A tree has no kernel to run the command under; its files are a recording.
    inst.tracefs()
        .require_live("graph")
        .map_err(GraphError::Tracefs)?;
    let available = inst.available_tracers().unwrap_or_default();
    if !available.iter().any(|t| t == "function_graph") {
        return Err(GraphError::NoFunctionGraph { available });
    }
    if let GraphTarget::Pid { pid, .. } = target {
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            return Err(GraphError::NoProcess(*pid));
        }
    }
    let mut options = opts.options.clone();
    if opts.follow_forks {
        options.push("function-fork".into());
    }
    // Every option must exist before anything is written.
    for o in &options {
        let name = o
            .strip_prefix("no")
            .filter(|n| inst.exists(format!("options/{n}")));
        let name = name.unwrap_or(o);
        if !inst.exists(format!("options/{name}")) {
            return Err(GraphError::NoOption(name.to_string()));
        }
    }
    // Restored newest first: the tracer, then the options, then the filters.
    let mut ledger = Ledger::new();
    for file in [
        "tracing_on",
        "set_ftrace_pid",
        "set_graph_function",
        "set_graph_notrace",
        "max_graph_depth",
    ] {
        ledger.save_if_present(inst, file)?;
    }
    for o in &options {
        ledger.apply_option(inst, o)?;
    }
    ledger.save(inst, "current_tracer")?;

    inst.set_tracing_on(false)?;
    inst.set_ftrace_pids(&[], AppendMode::Truncate)?;
    if !opts.functions.is_empty() {
        let f: Vec<&str> = opts.functions.iter().map(String::as_str).collect();
        inst.set_function_filter(FunctionFilter::GraphFunction, &f, AppendMode::Truncate)?;
    }
    if !opts.notrace.is_empty() {
        let f: Vec<&str> = opts.notrace.iter().map(String::as_str).collect();
        inst.set_function_filter(FunctionFilter::GraphNotrace, &f, AppendMode::Truncate)?;
    }
    if let Some(d) = opts.max_depth {
        inst.set_max_graph_depth(d)?;
    }

    let result = match target {
        GraphTarget::Command(command) => {
            let held = HeldChild::spawn(command)?;
            (|| -> Result<Option<ExitStatus>, GraphError> {
                inst.set_ftrace_pids(&[held.pid()], AppendMode::Truncate)?;
                inst.set_tracer("function_graph")?;
                inst.clear()?;
                capture.armed(inst)?;
                inst.set_tracing_on(true)?;
                held.release_and_wait(stop).map(Some)
            })()
        }
        GraphTarget::Pid { pid, duration } => (|| -> Result<Option<ExitStatus>, GraphError> {
            inst.set_ftrace_pids(&[*pid], AppendMode::Truncate)?;
            inst.set_tracer("function_graph")?;
            inst.clear()?;
            capture.armed(inst)?;
            inst.set_tracing_on(true)?;
            let end = std::time::Instant::now() + *duration;
            let alive = std::path::PathBuf::from(format!("/proc/{pid}"));
            while std::time::Instant::now() < end && !stop.load(Ordering::SeqCst) && alive.exists()
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            Ok(None)
        })(),
    };
    let _ = inst.set_tracing_on(false);
    let captured = capture.finish(inst);
    let warnings = ledger.restore();
    let status = result?;
    captured?;
    Ok((status, warnings))
}

/// A child shell blocked on a FIFO until released; then it `exec`s the command, keeping its pid.
struct HeldChild {
    child: Option<Child>,
    fifo: PathBuf,
    dir: PathBuf,
    command: String,
}

impl HeldChild {
    fn spawn(command: &[String]) -> Result<HeldChild, GraphError> {
        let cmd_text = command.join(" ");
        let spawn_err = |err| GraphError::Spawn {
            command: cmd_text.clone(),
            err,
        };
        if command.is_empty() {
            return Err(spawn_err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "no command given",
            )));
        }
        let dir = std::env::temp_dir().join(format!("tracectl-graph-{}", std::process::id()));
        fs::create_dir_all(&dir).map_err(spawn_err)?;
        let fifo = dir.join("go");
        let _ = fs::remove_file(&fifo);
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600))
            .map_err(|e| spawn_err(std::io::Error::from(e)))?;
        let child = Command::new("/bin/sh")
            .arg("-c")
            .arg(r#"read _ < "$0"; exec "$@""#)
            .arg(&fifo)
            .args(command)
            .spawn()
            .map_err(spawn_err)?;
        Ok(HeldChild {
            child: Some(child),
            fifo,
            dir,
            command: cmd_text,
        })
    }

    fn pid(&self) -> u32 {
        self.child.as_ref().map(|c| c.id()).unwrap_or(0)
    }

    fn release_and_wait(mut self, stop: &AtomicBool) -> Result<ExitStatus, GraphError> {
        let spawn_err = |err| GraphError::Spawn {
            command: self.command.clone(),
            err,
        };
        let mut f = fs::OpenOptions::new()
            .write(true)
            .open(&self.fifo)
            .map_err(spawn_err)?;
        f.write_all(b"go\n").map_err(spawn_err)?;
        drop(f);
        let wait_err = |err| GraphError::Spawn {
            command: self.command.clone(),
            err,
        };
        let Some(child) = self.child.as_mut() else {
            return Err(wait_err(std::io::Error::other(
                "the command was already waited for",
            )));
        };
        loop {
            if let Some(status) = child.try_wait().map_err(wait_err)? {
                self.child = None;
                return Ok(status);
            }
            if stop.load(Ordering::SeqCst) {
                // Drop kills and reaps it.
                return Err(GraphError::Interrupted);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for HeldChild {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = fs::remove_file(&self.fifo);
        let _ = fs::remove_dir(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syscall_symbol_prefers_what_the_kernel_has() {
        let avail = vec!["__se_sys_openat".to_string(), "do_sys_openat2".to_string()];
        assert_eq!(
            syscall_entry_symbol("openat", Some(&avail)),
            "__se_sys_openat"
        );
        let avail = vec!["__x64_sys_openat".to_string()];
        assert_eq!(
            syscall_entry_symbol("openat", Some(&avail)),
            "__x64_sys_openat"
        );
    }
}
