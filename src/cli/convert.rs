//! `tracectl convert`: rewrite a trace.dat as version 6 or 7, with another compression.

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use tracectl::dat::Compression;

use super::common::Context;

/// Options of `tracectl convert` (trace-cmd convert's names).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Input file (default trace.dat)
    #[arg(short = 'i', default_value = "trace.dat")]
    pub input: PathBuf,
    /// Output file (also accepted as the last argument)
    #[arg(short = 'o')]
    pub output: Option<PathBuf>,
    /// Output file, as trace-cmd convert also takes it
    #[arg(value_name = "OUTPUT")]
    pub output_arg: Option<PathBuf>,
    /// Version of the output file: 6 or 7
    #[arg(long = "file-version", default_value_t = 7)]
    pub file_version: u32,
    /// Compression of a version 7 output: zstd, zlib, none or any (the best: zstd)
    #[arg(long, default_value = "any")]
    pub compression: String,
}

/// Run `tracectl convert`.
pub fn run(_ctx: &Context, a: Args) -> Result<i32> {
    let output = match (a.output, a.output_arg) {
        (Some(_), Some(_)) => {
            anyhow::bail!("give the output file once, with -o or as the last argument")
        }
        (Some(o), None) | (None, Some(o)) => o,
        (None, None) => anyhow::bail!("no output file: give one with -o FILE"),
    };
    let compression = match a.compression.as_str() {
        "any" => Compression::Zstd,
        c => Compression::from_name(c)
            .with_context(|| format!("--compression {c}: use zstd, zlib, none or any"))?,
    };
    if !(6..=7).contains(&a.file_version) {
        anyhow::bail!("--file-version {}: use 6 or 7", a.file_version);
    }
    if output == a.input {
        anyhow::bail!(
            "the output file {} is the input file: write to another file",
            output.display()
        );
    }
    super::progress::while_writing("converting", false, &output, || {
        tracectl::dat::convert_dat(&a.input, &output, a.file_version, compression)
    })
    .with_context(|| {
        format!(
            "cannot convert {} to {}",
            a.input.display(),
            output.display()
        )
    })?;
    Ok(0)
}
