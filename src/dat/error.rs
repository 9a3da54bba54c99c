use std::fmt;
use std::io;
use std::path::PathBuf;

/// A trace.dat file that could not be read or written.
///
/// Every error names the file, the section being read (`"header_page"`, `"options"`,
/// `"buffer flyrecord cpu1"`, ...) and the byte offset in the file where it went wrong.
#[derive(Debug)]
pub struct DatError {
    /// The trace.dat file.
    pub path: PathBuf,
    /// The part of the file being read or written.
    pub section: String,
    /// File offset where the problem was found.
    pub offset: u64,
    /// What went wrong.
    pub kind: DatErrorKind,
}

/// The cause of a [`DatError`].
#[derive(Debug)]
#[non_exhaustive]
pub enum DatErrorKind {
    /// The operating system refused a read or write.
    Io(io::Error),
    /// The file ends before the section does.
    Truncated {
        /// Bytes the section needed.
        needed: u64,
        /// Bytes left in the file.
        available: u64,
    },
    /// The bytes do not make sense for this section.
    Corrupt(String),
    /// A valid feature this reader does not handle.
    Unsupported(String),
}

impl DatError {
    pub(crate) fn new(
        path: impl Into<PathBuf>,
        section: impl Into<String>,
        offset: u64,
        kind: DatErrorKind,
    ) -> DatError {
        DatError {
            path: path.into(),
            section: section.into(),
            offset,
            kind,
        }
    }
}

impl fmt::Display for DatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} at offset {}: ",
            self.path.display(),
            self.section,
            self.offset
        )?;
        match &self.kind {
            DatErrorKind::Io(e) => write!(f, "{e} (check that the file exists and is readable/writable)"),
            DatErrorKind::Truncated { needed, available } => write!(
                f,
                "file ends early: needed {needed} bytes, {available} left (was the recording interrupted or the copy cut short? record or copy it again)"
            ),
            DatErrorKind::Corrupt(m) => {
                write!(f, "{m} (the file is damaged or not a trace.dat; `trace-cmd dump -v` shows what it makes of it)")
            }
            DatErrorKind::Unsupported(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for DatError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            DatErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}
