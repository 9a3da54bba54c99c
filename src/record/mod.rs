//! A recording session: set up tracefs, capture per-CPU pages, tear down and restore.
