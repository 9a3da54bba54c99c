//! perf.data files: the on-disk ABI ([`abi`]) and the reader ([`PerfData`]).
//!
//! ```no_run
//! use tracectl::perf::data::{Event, PerfData};
//! let file = PerfData::open("perf.data")?;
//! for rec in file.records() {
//!     if let Event::Sample(s) = file.decode(&rec?)? {
//!         println!("{} {} {}", s.pid, s.time, s.raw.len());
//!     }
//! }
//! # Ok::<(), tracectl::perf::data::PerfDataError>(())
//! ```

pub mod abi;
mod error;
mod read;

pub use error::{PerfDataError, PerfDataErrorKind};
pub use read::{Attr, Event, FeatureSection, PerfData, RawRecord, Records, Sample, SampleId};
