//! trace.dat v6/v7 files: reader and writer compatible with trace-cmd.
//!
//! [`DatFile::open`] parses all metadata (headers, formats, kallsyms, printk formats,
//! cmdlines, options, buffers) and leaves the trace data in the file; [`CpuPages`]
//! then streams one CPU's sub-buffer pages a chunk at a time, so memory stays flat
//! whatever the file size. Decode the pages with [`crate::ring`]. Stored timestamps
//! become displayed ones through [`DatFile::ts_adjust`] (DATE, OFFSET, TSC2NSEC).
//!
//! [`write_dat`] writes v7 (zstd by default, zlib or none) or v6 files with the metadata
//! and options trace-cmd writes; `trace-cmd report` and `trace-cmd dump` read them.
//! CPU data comes from any [`std::io::Read`] of whole pages, so a recording streams from
//! its capture files and [`buffers_of`] copies or converts an existing file.
//!
//! What real writers do that the format documents do not say, and this module handles:
//! v6 stores the trace clock after the CPU table; v7 compressed per-CPU sizes from
//! trace-cmd <= 3.1 are 4 bytes short (the chunks are walked instead); the STRINGS
//! section is not referenced by any option; a v6 instance BUFFER option points at its
//! own `flyrecord` marker.

mod compress;
mod convert;
mod dump;
mod error;
mod formats;
mod input;
mod options;
mod pages;
mod reader;
mod tracing_data;
mod writer;

pub use compress::Compression;
pub use convert::convert_dat;
pub use dump::{dump, DumpError, DumpSelect};
pub(crate) use error::OPEN;
pub use error::{DatError, DatErrorKind};
pub use formats::DatFormats;
pub use options::{opt, DatOption, Options, ShiftSample, TimeShift};
pub use pages::CpuPages;
pub use reader::{
    selected_clock, Buffer, BufferData, CpuData, DatFile, FileHeader, OptionsSection, TsAdjust,
    TsChoices, MAGIC,
};
pub use tracing_data::TracingData;
pub use writer::{
    buffers_of, tracing_data, write_dat, write_dat_with, write_latency_dat, BufferSource, Metadata,
    NewOption, Precompressed, WriteOptions, WriteSummary,
};
