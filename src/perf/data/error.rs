//! Errors of the perf.data reader: each names the file, the part being read, the byte
//! offset and, for short reads, the sizes expected and found.

use std::fmt;
use std::path::PathBuf;

/// A perf.data file that could not be read.
#[derive(Debug)]
pub struct PerfDataError {
    /// The file.
    pub path: PathBuf,
    /// The part of the file being read (`"file header"`, `"attrs"`, `"record"`, ...).
    pub what: String,
    /// File offset where the problem was found.
    pub offset: u64,
    /// What went wrong.
    pub kind: PerfDataErrorKind,
}

/// The cause of a [`PerfDataError`].
#[derive(Debug)]
#[non_exhaustive]
pub enum PerfDataErrorKind {
    /// The operating system refused the read.
    Io(std::io::Error),
    /// The part runs past the end of the file (or of its section).
    Truncated {
        /// Bytes the part needs.
        needed: u64,
        /// Bytes left.
        available: u64,
    },
    /// The bytes do not make sense.
    Corrupt(String),
    /// Valid, but not handled by this reader.
    Unsupported(String),
}

impl PerfDataError {
    pub(crate) fn new(
        path: impl Into<PathBuf>,
        what: impl Into<String>,
        offset: u64,
        kind: PerfDataErrorKind,
    ) -> PerfDataError {
        PerfDataError {
            path: path.into(),
            what: what.into(),
            offset,
            kind,
        }
    }
}

impl fmt::Display for PerfDataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} at offset {}: ",
            self.path.display(),
            self.what,
            self.offset
        )?;
        match &self.kind {
            PerfDataErrorKind::Io(e) => write!(f, "{e}"),
            PerfDataErrorKind::Truncated { needed, available } => write!(
                f,
                "needs {needed} bytes but only {available} are left (the file is truncated or damaged; record it again)"
            ),
            PerfDataErrorKind::Corrupt(m) => write!(
                f,
                "{m} (the file is damaged or not a perf.data; `perf report -D` shows what perf makes of it)"
            ),
            PerfDataErrorKind::Unsupported(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for PerfDataError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            PerfDataErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}
