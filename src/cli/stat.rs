//! `tracectl stat`.

use anyhow::Result;

use super::common::Context;

/// Options of `tracectl stat`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Run `tracectl stat`.
pub fn run(_ctx: &Context, _args: Args) -> Result<i32> {
    anyhow::bail!("`tracectl stat` is not implemented yet")
}
