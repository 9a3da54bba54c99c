//! `tracectl check-events`.

use anyhow::Result;

use super::common::Context;

/// Options of `tracectl check-events`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Run `tracectl check-events`.
pub fn run(_ctx: &Context, _args: Args) -> Result<i32> {
    anyhow::bail!("`tracectl check-events` is not implemented yet")
}
