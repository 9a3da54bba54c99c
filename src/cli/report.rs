//! `tracectl report`.

use anyhow::Result;

use super::common::Context;

/// Options of `tracectl report`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Run `tracectl report`.
pub fn run(_ctx: &Context, _args: Args) -> Result<i32> {
    anyhow::bail!("`tracectl report` is not implemented yet")
}
