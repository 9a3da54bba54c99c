//! tracectl: drive Linux ftrace through tracefs and decode what it records.
//!
//! The crate has one event model shared by many sources and sinks (see `DESIGN.md`
//! in the project notes):
//!
//! * [`tracefs`]: the control plane. A [`tracefs::Tracefs`] is a root directory: the live
//!   mount, a debugfs `tracing/` directory or a recorded fixture tree.
//! * [`event`]: `format` files parsed into [`event::Schema`]s, with the `print fmt`
//!   compiled once per event.
//! * [`ring`]: per-CPU sub-buffer pages (`trace_pipe_raw`) decoded into [`event::Record`]s
//!   and merged across CPUs by timestamp.
//! * [`dat`]: trace.dat v6/v7 reader and writer, compatible with trace-cmd.
//! * [`text`]: the kernel's `trace` / `trace_pipe` text parsed back into fields.
//! * [`render`]: kernel-style, trace-cmd-style and JSON output.
//! * [`session`]: the loops that tie sources to sinks (`report`, `stream`).
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
