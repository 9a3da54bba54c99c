//! `tracectl record`.

use anyhow::Result;

use super::common::Context;

/// Options of `tracectl record`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Run `tracectl record`.
pub fn run(_ctx: &Context, _args: Args) -> Result<i32> {
    anyhow::bail!("`tracectl record` is not implemented yet")
}
