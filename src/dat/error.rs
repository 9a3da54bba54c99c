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
    /// A length field claims more bytes than the file (or section) has left.
    LengthTooLarge {
        /// The length read from the file.
        length: u64,
        /// Bytes left after the length field.
        available: u64,
    },
    /// The path is not a regular file (a device, a FIFO, a directory).
    NotRegularFile,
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

impl DatError {
    /// The same error again (an I/O cause keeps its kind and text): for an error kept
    /// by a lazily read section and returned to every caller that asks for the section.
    pub(crate) fn duplicate(&self) -> DatError {
        let kind = match &self.kind {
            DatErrorKind::Io(e) => DatErrorKind::Io(io::Error::new(e.kind(), e.to_string())),
            DatErrorKind::Truncated { needed, available } => DatErrorKind::Truncated {
                needed: *needed,
                available: *available,
            },
            DatErrorKind::LengthTooLarge { length, available } => DatErrorKind::LengthTooLarge {
                length: *length,
                available: *available,
            },
            DatErrorKind::NotRegularFile => DatErrorKind::NotRegularFile,
            DatErrorKind::Corrupt(m) => DatErrorKind::Corrupt(m.clone()),
            DatErrorKind::Unsupported(m) => DatErrorKind::Unsupported(m.clone()),
        };
        DatError::new(self.path.clone(), self.section.clone(), self.offset, kind)
    }
}

impl fmt::Display for DatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            // Opening names no section or offset: nothing has been read yet.
            DatErrorKind::Io(e) if self.section == OPEN => {
                return write!(f, "{}: {e}", self.path.display())
            }
            DatErrorKind::NotRegularFile => {
                return write!(
                f,
                "{}: not a regular file (a trace.dat is a file written by `record` or `extract`)",
                self.path.display()
            )
            }
            _ => {}
        }
        write!(
            f,
            "{}: {} at offset {}: ",
            self.path.display(),
            self.section,
            self.offset
        )?;
        match &self.kind {
            DatErrorKind::Io(e) => write!(f, "{e} (check that the file is readable)"),
            DatErrorKind::LengthTooLarge { length, available } => write!(
                f,
                "length {length} exceeds the {available} bytes left: the file is corrupt"
            ),
            DatErrorKind::NotRegularFile => Ok(()),
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

/// The section name of errors met opening the file.
pub(crate) const OPEN: &str = "open";

// The message already carries the cause's text: a `source` would print it twice.
impl std::error::Error for DatError {}
