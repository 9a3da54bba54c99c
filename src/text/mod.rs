//! The kernel's `trace` / `trace_pipe` text, parsed back into records.
