//! Enable scheduler and interrupt tracepoints from a script, in an instance of its own,
//! the way `tracectl set -B NAME -e sched:sched_switch -e irq` does:
//!
//!     cargo run --example enable_events                # create tracectl-example, enable
//!     cat /sys/kernel/tracing/instances/tracectl-example/trace
//!     cargo run --example enable_events -- --off       # remove the instance again
//!
//! Needs root and tracefs. Other tools' instances and the top-level buffer are not touched.

use tracectl::tracefs::Tracefs;

const INSTANCE: &str = "tracectl-example";
const EVENTS: [&str; 2] = ["sched:sched_switch", "irq"];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tracefs = Tracefs::discover()?;
    if std::env::args().any(|a| a == "--off") {
        tracefs.remove_instance(INSTANCE)?;
        println!("removed instances/{INSTANCE}");
        return Ok(());
    }
    // Resolve every spec first: a typo fails here, with the closest names, before
    // anything is created.
    let available = tracefs.available_events()?;
    let targets = EVENTS
        .iter()
        .map(|spec| tracectl::tracefs::resolve_event(spec, &available))
        .collect::<Result<Vec<_>, _>>()?;
    let instance = match tracefs.instance(Some(INSTANCE)) {
        Ok(existing) => existing,
        Err(_) => tracefs.create_instance(INSTANCE)?,
    };
    for target in &targets {
        instance.set_target_enabled(target, true)?;
    }
    for event in instance.enabled_events()? {
        println!("enabled {event} in instances/{INSTANCE}");
    }
    Ok(())
}
