//! What every subcommand shares: finding the tracefs root and the buffer to act on.

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use tracectl::tracefs::{looks_like_tracefs, Instance, Tracefs, TracefsError};

/// Global options resolved once.
pub struct Context {
    /// `--tracefs DIR` / `TRACECTL_TRACEFS`.
    pub tracefs: Option<PathBuf>,
}

impl Context {
    /// The tracefs root: the one given (a live mount, debugfs `tracing/` or a fixture
    /// tree), else the live mount found in /proc/mounts (mounted when absent and root).
    pub fn tracefs(&self) -> Result<Tracefs> {
        match &self.tracefs {
            Some(dir) => {
                if !dir.is_dir() {
                    anyhow::bail!("--tracefs {}: no such directory", dir.display());
                }
                // A debugfs mount point holds tracing/ below it.
                if !looks_like_tracefs(dir) && looks_like_tracefs(&dir.join("tracing")) {
                    return Ok(Tracefs::at(dir.join("tracing")));
                }
                if !looks_like_tracefs(dir) {
                    anyhow::bail!(
                        "--tracefs {}: does not look like a tracefs root (no trace, available_events or events/)",
                        dir.display()
                    );
                }
                Ok(Tracefs::at(dir))
            }
            None => Ok(Tracefs::discover()?),
        }
    }

    /// The buffer named by `-B` (the top level when `None`); it must exist.
    pub fn instance(&self, name: Option<&str>) -> Result<Instance> {
        Ok(self.tracefs()?.instance(name)?)
    }
}

/// Print a warning for a file the kernel refused and say that we carry on.
pub fn warn_unavailable(e: &TracefsError) {
    eprintln!("tracectl: warning: {e}; carrying on without it");
}

/// Write a JSON value as one line to stdout.
pub fn print_json(v: &serde_json::Value) -> Result<()> {
    use std::io::Write;
    // Serialize first so a closed pipe surfaces as the io::Error main() treats as quiet.
    let mut text = serde_json::to_string_pretty(v).context("encoding JSON")?;
    text.push('\n');
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(())
}

/// The exit status a failed command ends with, where it is not 1: perf's statuses for
/// the values its option parser refuses (129) and for the errors it returns as
/// `-errno`. Attached to an error as context; it adds no text to the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExitStatus(pub i32);

impl std::fmt::Display for ExitStatus {
    fn fmt(&self, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        Ok(())
    }
}

/// perf's exit status for an option or value its parser refuses (`usage_with_options`).
pub const PERF_USAGE: ExitStatus = ExitStatus(129);

/// `err`, ending the command with `status`.
pub fn with_status(err: anyhow::Error, status: ExitStatus) -> anyhow::Error {
    err.context(status)
}
