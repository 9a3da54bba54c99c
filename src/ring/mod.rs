//! Ring-buffer data: sub-buffer pages from `per_cpu/cpuN/trace_pipe_raw`, per-CPU readers
//! (a fixture file to EOF, or the live file without blocking) and the merge across CPUs.

mod page;
mod reader;
mod stream;

pub use page::{Entry, PageError, PageLayout, SubBuffer, SubBufferHeader};
pub use reader::{load_cpu_files, page_layout, LiveReader, RawCpuData, RingError};
pub use stream::{CpuStream, Merge};

#[cfg(test)]
mod tests;
