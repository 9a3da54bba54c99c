//! `tracectl mem`: slab allocations per call site from a trace.dat, as `trace-cmd mem`.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use tracectl::session::mem::{mem_summary, write_mem};

/// Options of `tracectl mem`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The trace.dat to read (kmem:kmalloc, kfree, kmem_cache_alloc, ... events)
    #[arg(short = 'i', value_name = "FILE", conflicts_with = "file")]
    pub input: Option<PathBuf>,
    /// The trace.dat to read, as with -i (default: trace.dat)
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
}

/// Run `tracectl mem`.
pub fn run(a: Args) -> Result<i32> {
    let path = a
        .input
        .or(a.file)
        .unwrap_or_else(|| PathBuf::from("trace.dat"));
    let summary = mem_summary(&path)?;
    for w in &summary.warnings {
        eprintln!("tracectl mem: {}: {w}", path.display());
    }
    let mut out = std::io::stdout().lock();
    write_mem(&summary.rows, &mut out)?;
    out.flush()?;
    Ok(0)
}
