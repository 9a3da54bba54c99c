//! Stream scheduler events for two seconds as typed values: who switched to whom, and
//! which task woke which.
//!
//!     sudo cargo run --example stream_typed
//!
//! The events are enabled in a private instance that is removed on every way out.

use std::io::Write;
use std::time::Duration;

use tracectl::session::LiveTrace;
use tracectl::tracefs::Tracefs;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tracefs = Tracefs::discover()?;
    let mut trace = LiveTrace::start(&tracefs, &["sched:sched_switch", "sched:sched_wakeup"])?;
    for note in trace.notes() {
        eprintln!("note: {note}");
    }
    // Written with writeln! so that a closed pipe (`| head`) ends the output quietly.
    let mut out = std::io::stdout().lock();
    let n = trace.read_for(Duration::from_secs(2), |ev| match ev.name() {
        "sched_switch" => drop(writeln!(
            out,
            "[{:03}] {:>16}:{:<6} -> {:>16}:{}",
            ev.cpu,
            ev.str("prev_comm").unwrap_or_default(),
            ev.int("prev_pid").unwrap_or(-1),
            ev.str("next_comm").unwrap_or_default(),
            ev.int("next_pid").unwrap_or(-1),
        )),
        _ => drop(writeln!(
            out,
            "[{:03}] wakeup {}:{} on CPU {}",
            ev.cpu,
            ev.str("comm").unwrap_or_default(),
            ev.int("pid").unwrap_or(-1),
            ev.int("target_cpu").unwrap_or(-1),
        )),
    })?;
    eprintln!("{n} events, {} lost", trace.lost());
    Ok(())
}
