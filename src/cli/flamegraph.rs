//! `tracectl flamegraph`: folded stacks (or a perf.data) to a self-contained SVG.

use std::io::{self, Read, Write};
use std::path::PathBuf;

use anyhow::{Context as _, Result};
use clap::Parser;
use tracectl::perf::data::abi::MAGIC_LE;
use tracectl::render::flamegraph::{parse_folded, write_svg, FlameOptions};
use tracectl::render::perf_script::{PerfScript, ScriptOutput};

use super::common::Context;
use super::perf_read::{open, SymbolArgs};

/// `tracectl flamegraph`.
#[derive(Debug, Parser)]
pub struct Args {
    /// Folded stacks (`root;...;leaf count` lines, as `tracectl perf script --folded`
    /// writes) or a perf.data file; standard input when left out
    #[arg(value_name = "FILE")]
    input: Option<PathBuf>,
    /// Write the SVG here instead of standard output
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
    let folded = match &a.input {
        Some(p) => {
            let mut head = [0u8; 8];
            let n = std::fs::File::open(p)
                .and_then(|mut f| f.read(&mut head))
                .with_context(|| format!("cannot read {}", p.display()))?;
            if n == 8 && &head == MAGIC_LE {
                let o = open(p, &a.symbols)?;
                let mut s = PerfScript::new(&o.file, o.machine, o.catalog, None)?;
                let mut out = Vec::new();
                s.run(&mut out, ScriptOutput::Folded)?;
                String::from_utf8_lossy(&out).into_owned()
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
    let root = parse_folded(&folded)?;
    if root.total == 0 {
        anyhow::bail!("no stacks in the input: nothing to draw");
    }
    let opts = FlameOptions {
        width: a.width.max(100.0),
        title: a.title.clone(),
        ..FlameOptions::default()
    };
    let svg = write_svg(&root, &opts);
    match &a.output {
        Some(p) => {
            std::fs::write(p, svg).with_context(|| format!("cannot write {}", p.display()))?
        }
        None => {
            let mut out = io::stdout().lock();
            out.write_all(svg.as_bytes())?;
            out.flush()?;
        }
    }
    Ok(0)
}
