//! What every subcommand shares: finding the tracefs root.

use std::path::PathBuf;

use anyhow::Result;
use tracectl::tracefs::Tracefs;

/// Global options resolved once.
pub struct Context {
    /// `--tracefs DIR` / `TRACECTL_TRACEFS`.
    pub tracefs: Option<PathBuf>,
}

impl Context {
    /// The tracefs root: the one given, else the live mount.
    pub fn tracefs(&self) -> Result<Tracefs> {
        match &self.tracefs {
            Some(dir) => Ok(Tracefs::at(dir)),
            None => anyhow::bail!("no tracefs found yet: pass --tracefs DIR (discovery lands with the control plane)"),
        }
    }
}
