//! The loops that run a command from start to end: sources read, records filtered and
//! merged, sinks written.
//!
//! A session ties the layers below it together; the command line only parses arguments
//! into its options and prints what it returns.

pub mod report;
