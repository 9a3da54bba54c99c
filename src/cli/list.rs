//! `tracectl list`.

use anyhow::Result;

use super::common::Context;

/// Options of `tracectl list`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Run `tracectl list`.
pub fn run(_ctx: &Context, _args: Args) -> Result<i32> {
    anyhow::bail!("`tracectl list` is not implemented yet")
}
