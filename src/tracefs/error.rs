use std::fmt;
use std::io;
use std::path::PathBuf;

/// An error touching a tracefs file, naming the file and saying what to do.
#[derive(Debug)]
#[non_exhaustive]
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
    /// The file is missing although its directory exists: this kernel (or its
    /// configuration) does not provide the feature.
    NotSupported {
        /// The file.
        path: PathBuf,
        /// The feature, in ftrace's words (e.g. `snapshot`, `kprobe_events`).
        feature: String,
    },
    /// No tracefs mount could be found or made.
    NotMounted {
        /// Where we looked and what went wrong.
        detail: String,
    },
    /// tracefs is mounted read-only.
    ReadOnly {
        /// The mount point.
        path: PathBuf,
    },
    /// An event or system name that the kernel does not know.
    UnknownEvent {
        /// What was asked for.
        name: String,
        /// The closest known names, best first.
        suggestions: Vec<String>,
    },
    /// No instance of that name under `instances/`.
    UnknownInstance {
        /// The instance directory asked for.
        path: PathBuf,
        /// The closest instance names, best first.
        suggestions: Vec<String>,
    },
    /// No trace option of that name in the buffer.
    UnknownOption {
        /// The option file asked for.
        path: PathBuf,
        /// The option.
        name: String,
        /// The closest option names, best first.
        suggestions: Vec<String>,
    },
    /// A function name absent from `available_filter_functions`.
    UnknownFunction {
        /// What was asked for.
        name: String,
        /// The closest known names, best first.
        suggestions: Vec<String>,
    },
    /// A value that cannot be written to the named file (checked before writing).
    BadValue {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// A file whose contents could not be understood.
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// The root is a recorded tree, and the command needs a running kernel.
    NotLive {
        /// The root.
        path: PathBuf,
        /// What needs the kernel (e.g. `record`).
        command: String,
    },
    /// A device, FIFO or directory where a fixture tree should hold a file: it would be
    /// read forever.
    NotRegularFile {
        /// The file.
        path: PathBuf,
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
            Some(libc::EROFS) => TracefsError::ReadOnly { path },
            _ => TracefsError::Io { path, err },
        }
    }

    /// The file this error concerns.
    pub fn path(&self) -> Option<&std::path::Path> {
        match self {
            TracefsError::NotFound { path }
            | TracefsError::PermissionDenied { path }
            | TracefsError::Rejected { path, .. }
            | TracefsError::NotSupported { path, .. }
            | TracefsError::ReadOnly { path }
            | TracefsError::UnknownInstance { path, .. }
            | TracefsError::UnknownOption { path, .. }
            | TracefsError::BadValue { path, .. }
            | TracefsError::Parse { path, .. }
            | TracefsError::NotLive { path, .. }
            | TracefsError::NotRegularFile { path }
            | TracefsError::Io { path, .. } => Some(path),
            TracefsError::NotMounted { .. }
            | TracefsError::UnknownEvent { .. }
            | TracefsError::UnknownFunction { .. } => None,
        }
    }

    /// Whether the kernel lacks the file or refuses it (missing, EPERM, unsupported):
    /// callers that can carry on without it (reset, stat) skip it.
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            TracefsError::NotFound { .. }
                | TracefsError::PermissionDenied { .. }
                | TracefsError::NotSupported { .. }
        )
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
                "{}: permission denied (run as root; if you are root, this looks like a locked-down kernel or a sandbox refusing the file)",
                path.display()
            ),
            TracefsError::Rejected { path, written, error_log } => {
                write!(f, "{}: the kernel rejected {:?}", path.display(), written.trim_end())?;
                match error_log {
                    Some(log) => write!(f, "; error_log says:\n{}", log.trim_end()),
                    None => write!(f, " (invalid argument)"),
                }
            }
            TracefsError::NotSupported { path, feature } => write!(
                f,
                "{}: not supported by this kernel ({feature} is missing; it may need a kernel built with it)",
                path.display()
            ),
            TracefsError::NotMounted { detail } => write!(f, "tracefs not found: {detail}"),
            TracefsError::ReadOnly { path } => write!(
                f,
                "{}: tracefs is mounted read-only (remount it read-write: mount -o remount,rw MOUNTPOINT)",
                path.display()
            ),
            TracefsError::UnknownEvent { name, suggestions } => {
                write!(f, "unknown event {name:?}")?;
                did_you_mean(f, suggestions)
            }
            TracefsError::UnknownFunction { name, suggestions } => {
                write!(f, "function {name:?} is not in available_filter_functions")?;
                did_you_mean(f, suggestions)
            }
            TracefsError::UnknownInstance { path, suggestions } => {
                write!(f, "{}: no such instance", path.display())?;
                did_you_mean(f, suggestions)
            }
            TracefsError::UnknownOption {
                path,
                name,
                suggestions,
            } => {
                write!(f, "{}: no option {name:?} in this buffer", path.display())?;
                did_you_mean(f, suggestions)
            }
            TracefsError::BadValue { path, detail } => write!(f, "{}: {detail}", path.display()),
            TracefsError::Parse { path, detail } => write!(f, "{}: cannot parse: {detail}", path.display()),
            TracefsError::NotLive { path, command } => write!(
                f,
                "{}: a recorded tree, not a live kernel's tracefs: {command} needs a running kernel \
                 and leaves a recording alone (point --tracefs at a tracefs mount, or drop it)",
                path.display()
            ),
            TracefsError::NotRegularFile { path } => write!(
                f,
                "{}: not a regular file (a fixture tree holds copies of tracefs files; copy the file itself into the tree)",
                path.display()
            ),
            TracefsError::Io { path, err } => write!(f, "{}: {}", path.display(), err),
        }
    }
}

fn did_you_mean(f: &mut fmt::Formatter<'_>, suggestions: &[String]) -> fmt::Result {
    if suggestions.is_empty() {
        Ok(())
    } else {
        write!(f, "; did you mean {}?", suggestions.join(", "))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_file_and_say_what_to_do() {
        let p = PathBuf::from("/sys/kernel/tracing/set_ftrace_filter");
        let e = TracefsError::from_io(&p, io::Error::from_raw_os_error(libc::EPERM));
        let m = e.to_string();
        assert!(
            m.starts_with("/sys/kernel/tracing/set_ftrace_filter: permission denied"),
            "{m}"
        );
        assert!(m.contains("sandbox"), "{m}");
        assert!(e.is_unavailable());
        let e = TracefsError::from_io(&p, io::Error::from_raw_os_error(libc::EROFS));
        assert!(e.to_string().contains("read-only"));
        let e = TracefsError::NotSupported {
            path: PathBuf::from("/t/snapshot"),
            feature: "the snapshot buffer".into(),
        };
        assert_eq!(
            e.to_string(),
            "/t/snapshot: not supported by this kernel (the snapshot buffer is missing; it may need a kernel built with it)"
        );
        let e = TracefsError::UnknownEvent {
            name: "sched:sched_swich".into(),
            suggestions: vec!["sched:sched_switch".into()],
        };
        assert_eq!(
            e.to_string(),
            "unknown event \"sched:sched_swich\"; did you mean sched:sched_switch?"
        );
        assert!(e.path().is_none());
        let e = TracefsError::Rejected {
            path: PathBuf::from("/t/events/sched/sched_switch/filter"),
            written: "x == 1".into(),
            error_log: Some(
                "[ 1.0] event filter parse error: error: Field not found\n  Command: x == 1\n  ^\n"
                    .into(),
            ),
        };
        let m = e.to_string();
        assert!(
            m.contains(
                "the kernel rejected \"x == 1\"; error_log says:\n[ 1.0] event filter parse error"
            ),
            "{m}"
        );
        let e = TracefsError::NotMounted {
            detail: "run as root".into(),
        };
        assert_eq!(e.to_string(), "tracefs not found: run as root");
    }
}
