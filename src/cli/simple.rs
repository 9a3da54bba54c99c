//! The small control verbs: start, set, stop, restart, reset, clear, snapshot, marker, man.

use anyhow::Result;

use super::common::Context;

/// Options of `start` and `set`.
#[derive(Debug, clap::Args)]
pub struct StartArgs {}

/// Options of verbs that act on one instance.
#[derive(Debug, clap::Args)]
pub struct InstanceArgs {}

/// Options of `reset`.
#[derive(Debug, clap::Args)]
pub struct ResetArgs {}

/// Options of `snapshot`.
#[derive(Debug, clap::Args)]
pub struct SnapshotArgs {}

/// Options of `marker`.
#[derive(Debug, clap::Args)]
pub struct MarkerArgs {}

/// Options of `man`.
#[derive(Debug, clap::Args)]
pub struct ManArgs {}

fn todo(verb: &str) -> Result<i32> {
    anyhow::bail!("`tracectl {verb}` is not implemented yet")
}

/// `start` (reset first) and `set` (no reset).
pub fn start(_ctx: &Context, _a: StartArgs, reset_first: bool) -> Result<i32> {
    todo(if reset_first { "start" } else { "set" })
}
/// `stop`.
pub fn stop(_ctx: &Context, _a: InstanceArgs) -> Result<i32> { todo("stop") }
/// `restart`.
pub fn restart(_ctx: &Context, _a: InstanceArgs) -> Result<i32> { todo("restart") }
/// `reset`.
pub fn reset(_ctx: &Context, _a: ResetArgs) -> Result<i32> { todo("reset") }
/// `clear`.
pub fn clear(_ctx: &Context, _a: InstanceArgs) -> Result<i32> { todo("clear") }
/// `snapshot`.
pub fn snapshot(_ctx: &Context, _a: SnapshotArgs) -> Result<i32> { todo("snapshot") }
/// `marker`.
pub fn marker(_ctx: &Context, _a: MarkerArgs) -> Result<i32> { todo("marker") }
/// `man`.
pub fn man(_a: ManArgs) -> Result<i32> { todo("man") }
