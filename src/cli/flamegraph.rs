//! `tracectl flamegraph`: folded stacks, a perf.data or a function_graph trace.dat to a
//! self-contained SVG (or, with `--folded-only`, to the folded stacks themselves).

use std::io::{self, Read, Write};
use std::path::PathBuf;

use anyhow::{Context as _, Result};
use clap::Parser;
use tracectl::dat::{DatFile, MAGIC as DAT_MAGIC};
use tracectl::perf::data::abi::MAGIC_LE;
use tracectl::render::flamegraph::{parse_folded, write_svg, FlameOptions};
use tracectl::render::graph_fold::fold_dat;
use tracectl::render::perf_script::{PerfScript, ScriptOutput};

use super::common::Context;
use super::perf_read::{open, SymbolArgs};

/// `tracectl flamegraph`.
#[derive(Debug, Parser)]
pub struct Args {
    /// Folded stacks (`root;...;leaf count` lines, as `tracectl perf script --folded`
    /// writes), a perf.data file, or a trace.dat recorded with the function_graph tracer
    /// (weighted by self time in ns); standard input when left out
    #[arg(value_name = "FILE")]
    input: Option<PathBuf>,
    /// Write the folded stacks (`comm;f1;...;fn COUNT` lines) instead of the SVG
    #[arg(long = "folded-only")]
    folded_only: bool,
    /// Write the SVG (or the folded stacks) here instead of standard output
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Title at the top of the graph
    #[arg(long = "title", default_value = "Flame Graph")]
    title: String,
    /// Image width in pixels
    #[arg(long = "width", default_value_t = 1200.0)]
    width: f64,
    #[command(flatten)]
    symbols: SymbolArgs,
}

/// Run `tracectl flamegraph`.
pub fn run(_ctx: &Context, a: Args) -> Result<i32> {
    let mut count_name = "samples";
    let folded = match &a.input {
        Some(p) => {
            let mut head = [0u8; 10];
            let n = std::fs::File::open(p)
                .and_then(|mut f| read_head(&mut f, &mut head))
                .with_context(|| format!("cannot read {}", p.display()))?;
            if n >= 8 && head[..8] == MAGIC_LE[..] {
                let o = open(p, &a.symbols)?;
                let mut s = PerfScript::new(&o.file, o.machine, o.catalog, &[])?;
                let mut out = Vec::new();
                s.run(&mut out, ScriptOutput::Folded)?;
                String::from_utf8_lossy(&out).into_owned()
            } else if n == DAT_MAGIC.len() && head == *DAT_MAGIC {
                let dat = DatFile::open(p)?;
                let g = fold_dat(&dat)?;
                for w in dat.warnings().iter().chain(&g.warnings) {
                    eprintln!("tracectl flamegraph: {}: {w}", p.display());
                }
                if g.stats.exits_without_entry + g.stats.unfinished > 0 {
                    eprintln!(
                        "tracectl flamegraph: {}: {} call(s) entered before the trace began, \
                         {} never returned within it (partial calls keep the time seen)",
                        p.display(),
                        g.stats.exits_without_entry,
                        g.stats.unfinished
                    );
                }
                count_name = "ns";
                g.folded
            } else {
                std::fs::read_to_string(p)
                    .with_context(|| format!("cannot read {}", p.display()))?
            }
        }
        None => {
            let mut s = String::new();
            io::stdin().read_to_string(&mut s)?;
            s
        }
    };
    if a.folded_only {
        return write_out(&a, folded.as_bytes()).map(|()| 0);
    }
    let root = parse_folded(&folded)?;
    if root.total == 0 {
        anyhow::bail!("no stacks in the input: nothing to draw");
    }
    let opts = FlameOptions {
        width: a.width.max(100.0),
        title: a.title.clone(),
        count_name: count_name.into(),
        ..FlameOptions::default()
    };
    let svg = write_svg(&root, &opts);
    write_out(&a, svg.as_bytes())?;
    Ok(0)
}

/// The output to `-o FILE` or standard output.
fn write_out(a: &Args, bytes: &[u8]) -> Result<()> {
    match &a.output {
        Some(p) => {
            std::fs::write(p, bytes).with_context(|| format!("cannot write {}", p.display()))?
        }
        None => {
            let mut out = io::stdout().lock();
            out.write_all(bytes)?;
            out.flush()?;
        }
    }
    Ok(())
}

/// Read up to `buf.len()` bytes (fewer only at the end of the file).
fn read_head(f: &mut std::fs::File, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}
