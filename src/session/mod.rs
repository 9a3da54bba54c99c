//! The loops that run a command from start to end: sources read, records filtered and
//! merged, sinks written.
//!
//! A session ties the layers below it together; the command line only parses arguments
//! into its options and prints what it returns.

pub mod graph;
pub mod hist;
pub mod live;
pub mod mem;
pub mod report;
pub mod report_files;
pub mod report_profile;
pub mod report_wakeup;
pub mod stream;

pub use live::{LiveError, LiveEvent, LiveTrace};

use crate::event::Registry;
use crate::tracefs::capture::enum_resolved_formats;
use crate::tracefs::{EventName, Tracefs};

/// Give `reg` the formats of the events matching `specs` (all when empty) with the enum
/// constants of their `print fmt` resolved (see [`enum_resolved_formats`]).
pub fn resolve_enum_constants(t: &Tracefs, reg: &mut Registry, specs: &[String]) {
    let events: Vec<EventName> = reg.events().map(|(s, n, _)| EventName::new(s, n)).collect();
    for (system, text) in enum_resolved_formats(t, &events, specs) {
        // A format that still does not parse keeps the kernel's text and its fallback.
        let _ = reg.add_format(&system, &text);
    }
}
