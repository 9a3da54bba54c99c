//! trace.dat v6/v7 files: reader and writer compatible with trace-cmd.
//!
//! [`DatFile::open`] parses all metadata (headers, formats, kallsyms, printk formats,
//! cmdlines, options, buffers) and leaves the trace data in the file; [`CpuPages`]
//! then streams one CPU's sub-buffer pages a chunk at a time, so memory stays flat
//! whatever the file size. Decode the pages with [`crate::ring`].

mod compress;
mod error;
mod input;
mod options;
mod pages;
mod reader;
mod writer;

pub use compress::Compression;
pub use error::{DatError, DatErrorKind};
pub use options::{opt, DatOption, Options};
pub use pages::CpuPages;
pub use reader::{selected_clock, Buffer, BufferData, CpuData, DatFile, FileHeader, TsAdjust, MAGIC};
pub use writer::{buffers_of, write_dat, BufferSource, Metadata, NewOption, WriteOptions, WriteSummary};
