//! `tracectl show`.

use anyhow::Result;

use super::common::Context;

/// Options of `tracectl show`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Run `tracectl show`.
pub fn run(_ctx: &Context, _args: Args) -> Result<i32> {
    anyhow::bail!("`tracectl show` is not implemented yet")
}
