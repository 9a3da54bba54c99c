//! `tracectl stack`: show, start, stop or reset the kernel's stack tracer, as
//! `trace-cmd stack`.

use std::io::Write;

use anyhow::Result;
use tracectl::tracefs::stack::StackTracer;

use super::common::Context;

/// Options of `tracectl stack`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("action").args(["start", "stop", "reset"])))]
pub struct Args {
    /// Enable the stack tracer
    #[arg(long)]
    pub start: bool,
    /// Disable the stack tracer
    #[arg(long)]
    pub stop: bool,
    /// Reset the maximum stack size seen to zero
    #[arg(long)]
    pub reset: bool,
}

/// Run `tracectl stack`: without an option, print the deepest stack seen.
pub fn run(ctx: &Context, a: Args) -> Result<i32> {
    let t = super::record::live_tracefs(ctx)?;
    let s = StackTracer::of(&t)?;
    if a.start {
        s.set_enabled(true)?;
    } else if a.stop {
        s.set_enabled(false)?;
    } else if a.reset {
        s.reset_max()?;
    } else {
        let text = s.report()?;
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes())?;
        out.flush()?;
    }
    Ok(0)
}
