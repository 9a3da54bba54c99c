//! `tracectl completions SHELL`: shell completion scripts generated from the command-line
//! definitions, so they never drift from the options.

use std::io::Write;

use anyhow::Result;
use clap::{CommandFactory, Parser, ValueEnum};

/// The shells `completions` writes for.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Shell {
    /// bash (source it, or install it as /usr/share/bash-completion/completions/tracectl)
    Bash,
    /// zsh (install it as `_tracectl` in a directory of $fpath)
    Zsh,
    /// fish (install it as ~/.config/fish/completions/tracectl.fish)
    Fish,
}

/// `tracectl completions`.
#[derive(Debug, Parser)]
pub struct Args {
    /// The shell to write the completion script for
    #[arg(value_enum)]
    shell: Shell,
}

/// Write the completion script to stdout.
pub fn run(a: Args) -> Result<i32> {
    let mut cmd = super::Cli::command();
    let shell = match a.shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "tracectl", &mut out);
    std::io::stdout().lock().write_all(&out)?;
    Ok(0)
}
