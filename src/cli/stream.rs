//! `tracectl stream`.

use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Result;

use super::common::Context;

/// Options of `tracectl stream`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Run `tracectl stream`.
pub fn run(_ctx: &Context, _args: Args) -> Result<i32> {
    anyhow::bail!("`tracectl stream` is not implemented yet")
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// Install SIGINT/SIGTERM handlers that only set a flag, so the command can restore tracefs
/// state on its own exit path; returns that flag.
pub fn stop_flag() -> &'static AtomicBool {
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
    let action = SigAction::new(SigHandler::Handler(on_signal), SaFlags::empty(), SigSet::empty());
    for sig in [Signal::SIGINT, Signal::SIGTERM] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        let _ = unsafe { sigaction(sig, &action) };
    }
    &STOP
}
