use std::fmt;
use std::io;
use std::path::PathBuf;

/// An error touching a tracefs file, naming the file and saying what to do.
#[derive(Debug)]
pub enum TracefsError {
    /// The file does not exist under this root.
    NotFound {
        /// The file.
        path: PathBuf,
    },
    /// The kernel refused the file with EPERM or EACCES.
    PermissionDenied {
        /// The file.
        path: PathBuf,
    },
    /// The kernel rejected a write with EINVAL; `error_log` text when the kernel gave one.
    Rejected {
        /// The file.
        path: PathBuf,
        /// What was written.
        written: String,
        /// The kernel's `error_log` lines about it, if any.
        error_log: Option<String>,
    },
    /// Any other I/O error.
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        err: io::Error,
    },
}

impl TracefsError {
    /// Classify an I/O error on `path`.
    pub fn from_io(path: impl Into<PathBuf>, err: io::Error) -> TracefsError {
        let path = path.into();
        match err.raw_os_error() {
            Some(libc::ENOENT) => TracefsError::NotFound { path },
            Some(libc::EPERM) | Some(libc::EACCES) => TracefsError::PermissionDenied { path },
            _ => TracefsError::Io { path, err },
        }
    }

    /// The file this error concerns.
    pub fn path(&self) -> &std::path::Path {
        match self {
            TracefsError::NotFound { path }
            | TracefsError::PermissionDenied { path }
            | TracefsError::Rejected { path, .. }
            | TracefsError::Io { path, .. } => path,
        }
    }
}

impl fmt::Display for TracefsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TracefsError::NotFound { path } => write!(
                f,
                "{}: no such file (this kernel may not support it, or tracefs is not mounted there)",
                path.display()
            ),
            TracefsError::PermissionDenied { path } => write!(
                f,
                "{}: permission denied (run as root; if you are root, the kernel or a sandbox is locking this file down)",
                path.display()
            ),
            TracefsError::Rejected { path, written, error_log } => {
                write!(f, "{}: the kernel rejected {:?}", path.display(), written.trim_end())?;
                match error_log {
                    Some(log) => write!(f, "; error_log says:\n{}", log.trim_end()),
                    None => write!(f, " (invalid argument)"),
                }
            }
            TracefsError::Io { path, err } => write!(f, "{}: {}", path.display(), err),
        }
    }
}

impl std::error::Error for TracefsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TracefsError::Io { err, .. } => Some(err),
            _ => None,
        }
    }
}
