//! Sinks: kernel-style text, trace-cmd-style text, JSON lines.

pub mod plugins;
pub mod tracecmd;
