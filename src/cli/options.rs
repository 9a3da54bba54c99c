//! `tracectl options`: the plugin options `report -O` takes, as `trace-cmd options` lists
//! them (the same list as `tracectl list -O`).

use std::io::Write;

use anyhow::Result;

/// Options of `tracectl options` (none).
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Run `tracectl options`.
pub fn run(_a: Args) -> Result<i32> {
    let mut out = std::io::stdout().lock();
    super::list::write_plugin_options(&mut out)?;
    out.flush()?;
    Ok(0)
}
