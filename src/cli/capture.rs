//! `tracectl capture`.

use anyhow::Result;

use super::common::Context;

/// Options of `tracectl capture`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Run `tracectl capture`.
pub fn run(_ctx: &Context, _args: Args) -> Result<i32> {
    anyhow::bail!("`tracectl capture` is not implemented yet")
}
