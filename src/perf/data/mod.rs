//! perf.data files (perf's `PERFILE2` format, as tools/perf/Documentation/
//! perf.data-file-format.txt describes it).
//!
//! * [`abi`]: the on-disk constants (record types, sample bits, feature ids).
//! * [`write`](mod@write): writing a file: header, attrs with their ids, the records, the features.
//! * [`host`]: the host facts the features carry (hostname, CPU, memory, build ids).

pub mod abi;
pub mod host;
pub mod write;

pub use write::{AttrEntry, Features, PerfDataWriter};
