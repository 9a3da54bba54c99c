//! Sinks: kernel-style text, trace-cmd-style text, JSON lines.

pub mod comm;
pub mod flamegraph;
pub mod graph;
pub mod json;
pub mod kernel;
pub mod names;
pub mod perf_report;
pub mod perf_script;
pub mod perf_stat;
pub mod plugins;
pub mod tracecmd;

pub use comm::Comms;
pub use kernel::{latency_chars, CommonFields, KernelStyle};
pub use names::EventNames;

use crate::event::Record;

/// Writes what an event prints after the context columns of a `trace` line.
///
/// For a tracepoint that is `name: ` and the text of its `print fmt`; the ftrace-internal
/// events (`print`, `bprint`, `function`, ...) print without their name, like the kernel.
/// The event model's registry implements this; [`EventNames`] is the minimal one that only
/// knows names and ids.
pub trait EventFormatter {
    /// Append the event's text to `out`; false when the event id is unknown (then a
    /// placeholder naming the id was written).
    fn write_event(&self, rec: &Record, out: &mut Vec<u8>) -> bool;
}
