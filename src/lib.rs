//! tracectl: drive Linux ftrace through tracefs and decode what it records.
//!
//! Enable scheduler tracepoints on the running kernel and read them back as typed
//! records (root and tracefs needed; the events live in a private instance that is
//! removed on every way out):
//!
//! ```no_run
//! use std::time::Duration;
//! use tracectl::{session::LiveTrace, tracefs::Tracefs};
//!
//! let mut trace = LiveTrace::start(&Tracefs::discover()?, &["sched:sched_switch"])?;
//! let mut switches = Vec::new();
//! trace.read_for(Duration::from_secs(1), |ev| {
//!     switches.push((ev.cpu, ev.str("prev_comm"), ev.str("next_comm")));
//! })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The crate has one event model shared by many sources and sinks:
//!
//! * [`tracefs`]: the control plane. A [`tracefs::Tracefs`] is a root directory: the live
//!   mount, a debugfs `tracing/` directory or a recorded fixture tree. Changes go through
//!   a [`tracefs::Ledger`] that restores them; [`tracefs::PrivateInstance`]s are removed
//!   on every way out.
//! * [`event`]: `format` files parsed into [`event::Schema`]s, with the `print fmt`
//!   compiled once per event; formats come from any [`formats::FormatSource`].
//! * [`ring`]: per-CPU sub-buffer pages (`trace_pipe_raw`) decoded into [`event::Record`]s
//!   and merged across CPUs by timestamp.
//! * [`dat`]: trace.dat v6/v7 reader and writer, compatible with trace-cmd.
//! * [`perf`]: `perf_event_open` counting and sampling, perf.data, on the same event
//!   model (a tracepoint sample's payload is an ftrace record).
//! * [`text`]: the kernel's `trace` / `trace_pipe` text parsed back into fields.
//! * [`render`]: kernel-style, trace-cmd-style, perf-style and JSON output.
//! * [`session`]: the loops that tie sources to sinks (`report`, `stream`, live traces).
//!
//! Examples that run: `examples/enable_events.rs` (tracepoints from a script),
//! `examples/stream_typed.rs` (records as typed values), `examples/read_dat.rs` (a
//! trace.dat).
//!
//! ```
//! use tracectl::event::HeaderPage;
//! let header = HeaderPage::parse(
//!     "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
//!      \tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\
//!      \tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\
//!      \tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n",
//! ).unwrap();
//! assert_eq!(header.data_offset, 16);
//! assert_eq!(header.commit_size, 8);
//! ```
#![deny(missing_docs)]

pub mod bre;
pub mod btf;
mod bytes;
pub mod dat;
pub mod endian;
pub mod event;
pub mod formats;
pub mod perf;
pub mod record;
pub mod render;
pub mod ring;
pub mod session;
pub mod text;
pub mod tracefs;
