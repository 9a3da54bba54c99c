//! `tracectl extract`.

use std::path::PathBuf;

use anyhow::Result;

use super::common::Context;
use super::record::{live_tracefs, print_summary, write_options};

/// Options of `tracectl extract`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Buffer (instance) to extract; the top level when absent
    #[arg(short = 'B')]
    pub instance: Option<String>,
    /// Output file
    #[arg(short = 'o', default_value = "trace.dat")]
    pub output: PathBuf,
    /// Store the formats of all events, not only the enabled ones
    #[arg(short = 'a')]
    pub all_formats: bool,
    /// Print nothing but errors
    #[arg(short = 'q')]
    pub quiet: bool,
    /// trace.dat version to write, 6 or 7
    #[arg(long = "file-version", default_value_t = 7)]
    pub file_version: u32,
    /// Compression for version 7: zstd, zlib or none
    #[arg(long, default_value = "zstd")]
    pub compression: String,
    /// Extract the snapshot buffer
    #[arg(short = 's')]
    pub snapshot: bool,
}

/// Run `tracectl extract`: drain the buffer's trace_pipe_raw into a trace.dat.
pub fn run(ctx: &Context, a: Args) -> Result<i32> {
    let t = live_tracefs(ctx)?;
    let wo = write_options(a.file_version, &a.compression)?;
    let s = super::progress::while_writing("extracting", a.quiet, &a.output, || {
        tracectl::record::extract(
            &t,
            a.instance.as_deref(),
            &a.output,
            a.all_formats,
            a.snapshot,
            wo,
        )
    })?;
    if !a.quiet {
        print_summary(&s, &a.output);
    }
    Ok(0)
}
