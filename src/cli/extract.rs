//! `tracectl extract`.

use anyhow::Result;

use super::common::Context;

/// Options of `tracectl extract`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Run `tracectl extract`.
pub fn run(_ctx: &Context, _args: Args) -> Result<i32> {
    anyhow::bail!("`tracectl extract` is not implemented yet")
}
