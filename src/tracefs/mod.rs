//! The control plane: a tracefs root (live mount, debugfs `tracing/` or a fixture tree).
//!
//! [`Tracefs`] is a root directory; [`Instance`] is one trace buffer in it (the top level
//! or `instances/NAME`) with typed access to its control files. A command that changes
//! files for a while saves them in a [`Ledger`], which puts them back newest first, and
//! works in a [`PrivateInstance`] removed on every way out. Everything works the
//! same on a recorded tree, which is how the tests replay other kernels:
//!
//! ```
//! use tracectl::tracefs::{EventTarget, Tracefs};
//! let root = concat!(env!("CARGO_MANIFEST_DIR"), "/tracefs-fixtures/linux-6.18-sched-irq");
//! let t = Tracefs::at(root);
//! let sched = t.list_events(Some("sched:^sched_switch$")).unwrap();
//! assert_eq!(sched[0].to_string(), "sched:sched_switch");
//! let top = t.top();
//! assert_eq!(top.trace_clock().unwrap().current, "local");
//! assert_eq!(top.resolve_event("irq").unwrap(), EventTarget::System("irq".into()));
//! // A typo comes back with the closest names.
//! let err = top.resolve_event("sched:sched_swich").unwrap_err();
//! assert!(err.to_string().contains("did you mean sched:sched_switch"));
//! ```

pub mod capture;
mod cpulist;
mod dynevent;
mod error;
mod events;
mod file;
mod formats;
mod ftrace;
pub mod graph;
mod host;
mod instance;
pub mod ledger;
mod mount;
mod private;
mod reset;
pub mod stack;
pub mod suggest;
mod trigger;

pub use cpulist::{count_cpu_list, cpus_in_list, parse_cpu_list, CpuListError, MAX_CPUS};
pub use dynevent::{DynamicEvent, ProbeKind};
pub use error::TracefsError;
pub use events::{
    parse_available_events, resolve_event, select_events, EventName, EventPattern, EventTarget,
};
pub use file::{check_regular, read_file, write_file, AppendMode};
pub use ftrace::{
    parse_available_functions, validate_functions, FunctionFilter, FunctionTrigger,
    FunctionTriggerAction,
};
pub use host::Host;
pub use instance::{
    parse_error_log, BufferSize, CpuStats, EnableState, ErrorLogEntry, Instance, TraceClocks,
};
pub use ledger::{stop_on_signals, Ledger};
pub use mount::{looks_like_tracefs, mount_lines, parse_mounts, MountEntry, USUAL_PATHS};
pub use private::{private_owner, remove_stale_instances, PrivateInstance};
pub use reset::{
    default_option, InstanceReset, ResetFlag, ResetPlan, ResetReport, DEFAULT_BUFFER_KB,
    DEFAULT_OPTIONS,
};
pub use trigger::{parse_trigger_file, removal_text, Hist, HistCommand, Trigger, TriggerAction};

use std::path::{Path, PathBuf};

/// A tracefs root directory.
///
/// Everything goes through this path, so a recorded fixture tree replays through the same
/// code as the live mount.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tracefs {
    root: PathBuf,
}

impl Tracefs {
    /// Use `root` as the tracefs root without checking what it is.
    pub fn at(root: impl Into<PathBuf>) -> Tracefs {
        Tracefs { root: root.into() }
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Absolute path of a file relative to the root, e.g. `events/header_page`.
    pub fn path(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.root.join(rel)
    }

    /// Read a whole tracefs file (one large read, see [`read_file`]).
    pub fn read(&self, rel: impl AsRef<Path>) -> Result<Vec<u8>, TracefsError> {
        read_file(&self.path(rel))
    }

    /// Read a whole tracefs file as text (invalid UTF-8 is replaced).
    pub fn read_string(&self, rel: impl AsRef<Path>) -> Result<String, TracefsError> {
        let bytes = self.read(rel)?;
        Ok(match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })
    }

    /// Write `data` to a tracefs file, truncating (`>`) or appending (`>>`).
    pub fn write(
        &self,
        rel: impl AsRef<Path>,
        data: &[u8],
        mode: AppendMode,
    ) -> Result<(), TracefsError> {
        write_file(&self.path(rel), data, mode)
    }

    /// Whether a file or directory exists below the root.
    pub fn exists(&self, rel: impl AsRef<Path>) -> bool {
        self.path(rel).exists()
    }
}
