//! Ring-buffer data: sub-buffer pages from `per_cpu/cpuN/trace_pipe_raw`, per-CPU readers
//! (a fixture file to EOF, or the live file without blocking) and the merge across CPUs.
//!
//! ```
//! use tracectl::ring::{load_cpu_files, page_layout, CpuStream, Entry, Merge};
//! use tracectl::tracefs::Tracefs;
//!
//! let tree = Tracefs::at(concat!(env!("CARGO_MANIFEST_DIR"), "/tracefs-fixtures/linux-6.18-sched-irq"));
//! let layout = page_layout(&tree)?; // events/header_page + buffer_subbuf_size_kb
//! let cpus = load_cpu_files(&tree, None)?; // per_cpu/cpuN/trace_pipe_raw
//! let streams = cpus.iter().map(|c| CpuStream::new(layout, c.cpu, &c.bytes)).collect();
//! let mut last = 0;
//! for entry in Merge::new(streams) {
//!     if let Entry::Event(rec) = entry? {
//!         assert!(rec.ts >= last, "merged in time order");
//!         last = rec.ts;
//!     }
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod page;
mod page_writer;
mod reader;
mod stream;

pub use page::{Entry, PageError, PageLayout, SubBuffer, SubBufferHeader};
pub use page_writer::{stored_record_size, SubBufferWriter};
pub use reader::{
    check_whole_subbufs, load_cpu_files, page_layout, subbuf_size, LiveReader, RawCpuData,
    RingError, MAX_SUBBUF,
};
pub use stream::{CpuStream, Merge};

#[cfg(test)]
mod tests;
