//! `tracectl stream`.

use anyhow::Result;

use super::common::Context;

/// Options of `tracectl stream`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Run `tracectl stream`.
pub fn run(_ctx: &Context, _args: Args) -> Result<i32> {
    anyhow::bail!("`tracectl stream` is not implemented yet")
}
