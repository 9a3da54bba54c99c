//! Sinks: kernel-style text, trace-cmd-style text, JSON lines.
