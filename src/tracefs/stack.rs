//! The kernel's stack tracer (`CONFIG_STACK_TRACER`), as `trace-cmd stack` drives it.
//!
//! The switch is `/proc/sys/kernel/stack_tracer_enabled` (a number; non-zero is on); the
//! deepest stack seen since the last reset is in tracefs `stack_trace`, its size in
//! `stack_max_size` (writing 0 resets it). The tracer hooks every function call, so it
//! needs the function tracer; a kernel without it has no switch, and every command here
//! says so before touching anything. For a recorded tree the switch is the tree's
//! `host/stack_tracer_enabled` and nothing on this machine is read or written.

use std::fmt;
use std::io;
use std::path::PathBuf;

use super::Tracefs;

/// The switch of a live kernel.
pub const PROC_STACK_TRACER: &str = "/proc/sys/kernel/stack_tracer_enabled";

/// Why a stack-tracer command failed.
#[derive(Debug)]
pub enum StackError {
    /// The kernel has no stack tracer (no switch file).
    NotConfigured(PathBuf),
    /// A file could not be read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done: "reading" or "writing".
        doing: &'static str,
        /// The error.
        source: io::Error,
    },
    /// A tracefs file could not be written.
    Tracefs(super::TracefsError),
    /// The switch holds something that is not a number.
    BadState {
        /// The switch file.
        path: PathBuf,
        /// What it holds.
        text: String,
    },
}

impl fmt::Display for StackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StackError::NotConfigured(p) => write!(
                f,
                "stack tracer not configured on the running kernel: {} does not exist (it \
                 needs a kernel built with CONFIG_STACK_TRACER, which needs the function \
                 tracer)",
                p.display()
            ),
            StackError::Io {
                path,
                doing,
                source,
            } => write!(f, "{doing} {}: {source}", path.display()),
            StackError::Tracefs(e) => write!(f, "{e}"),
            StackError::BadState { path, text } => write!(
                f,
                "invalid stack tracer state in {}: {text:?} is not a number",
                path.display()
            ),
        }
    }
}

impl std::error::Error for StackError {}

/// The stack tracer of a tracefs root.
#[derive(Debug, Clone)]
pub struct StackTracer<'a> {
    t: &'a Tracefs,
    switch: PathBuf,
}

impl<'a> StackTracer<'a> {
    /// The stack tracer behind `t`; fails when its kernel has none.
    pub fn of(t: &'a Tracefs) -> Result<StackTracer<'a>, StackError> {
        let switch = if t.is_live() {
            PathBuf::from(PROC_STACK_TRACER)
        } else {
            t.path("host/stack_tracer_enabled")
        };
        if !switch.exists() {
            return Err(StackError::NotConfigured(switch));
        }
        Ok(StackTracer { t, switch })
    }

    /// The switch's value (0: off).
    pub fn status(&self) -> Result<i64, StackError> {
        let text = std::fs::read_to_string(&self.switch).map_err(|source| StackError::Io {
            path: self.switch.clone(),
            doing: "reading",
            source,
        })?;
        let t = text.trim();
        // As strtol: leading digits count, a sign is allowed.
        let end = t
            .char_indices()
            .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && (c == '-' || c == '+'))))
            .map_or(t.len(), |(i, _)| i);
        t[..end].parse().map_err(|_| StackError::BadState {
            path: self.switch.clone(),
            text: text.clone(),
        })
    }

    /// Turn the tracer on or off; nothing is written when it already is.
    pub fn set_enabled(&self, on: bool) -> Result<(), StackError> {
        let want = i64::from(on);
        if self.status()? == want {
            return Ok(());
        }
        write(&self.switch, if on { b"1" } else { b"0" })
    }

    /// Reset the maximum stack size seen (`stack_max_size` to 0).
    pub fn reset_max(&self) -> Result<(), StackError> {
        self.t
            .write("stack_max_size", b"0", super::AppendMode::Truncate)
            .map_err(StackError::Tracefs)
    }

    /// What `trace-cmd stack` prints: whether the tracer runs, then `stack_trace` without
    /// its `#` comment lines.
    pub fn report(&self) -> Result<String, StackError> {
        let running = self.status()? > 0;
        let path = self.t.path("stack_trace");
        let text = std::fs::read(&path).map_err(|source| StackError::Io {
            path: path.clone(),
            doing: "reading",
            source,
        })?;
        let text = String::from_utf8_lossy(&text);
        let mut out = String::from(if running {
            "(stack tracer running)\n"
        } else {
            "(stack tracer not running)\n"
        });
        for line in text.split_inclusive('\n') {
            if !line.starts_with('#') {
                out.push_str(line);
            }
        }
        Ok(out)
    }
}

fn write(path: &std::path::Path, data: &[u8]) -> Result<(), StackError> {
    std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .and_then(|mut f| io::Write::write_all(&mut f, data))
        .map_err(|source| StackError::Io {
            path: path.to_path_buf(),
            doing: "writing",
            source,
        })
}
