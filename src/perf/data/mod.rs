//! perf.data files (perf's `PERFILE2` format, as tools/perf/Documentation/
//! perf.data-file-format.txt describes it): the on-disk ABI ([`abi`]), the reader
//! ([`PerfData`]) and the writer ([`PerfDataWriter`]).
//!
//! * [`write`](mod@write): writing a file: header, attrs with their ids, the records, the features.
//! * [`host`]: the host facts the features carry (hostname, CPU, memory, build ids).
//!
//! ```no_run
//! use tracectl::perf::data::{Event, PerfData};
//! let file = PerfData::open("perf.data")?;
//! let mut raw_bytes = 0;
//! for rec in file.records() {
//!     if let Event::Sample(s) = file.decode(&rec?)? {
//!         raw_bytes += s.raw.len();
//!     }
//! }
//! # Ok::<(), tracectl::perf::data::PerfDataError>(())
//! ```

pub mod abi;
pub mod compressed;
mod error;
mod features;
pub mod host;
mod read;
mod read_lists;
mod sample;
mod sample_read;
pub mod write;

pub use error::{PerfDataError, PerfDataErrorKind};
pub use features::{
    BpfFunction, BpfProg, CacheLevel, ClockData, Compressed, CpuTopology, EventDesc, GroupDesc,
    MemNode, MemTopology, NumaNode, PmuCaps,
};
pub use read::{
    Attr, DsoId, Event, EventGroup, FeatureSection, NamespaceLinks, PerfData, RawRecord, Records,
    SampleId,
};
pub use sample::{Sample, UserRegs};
pub use sample_read::ReadPeriods;
pub use write::{AttrEntry, Features, PerfDataWriter};
