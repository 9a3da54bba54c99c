//! Where a kernel's event descriptions come from.
//!
//! The event model ([`crate::event::Registry`]) reads `format` texts and the metadata
//! printing needs (kallsyms, `printk_formats`, the kernel config) through
//! [`FormatSource`], so it depends on no particular container: a tracefs root (live or a
//! fixture tree) implements it in `tracefs`, a trace.dat's or perf.data's formats in
//! `dat` (`DatFormats`).

use std::error::Error;
use std::fmt;

/// A failure to read one text from a source; its message names the file.
pub type SourceError = Box<dyn Error + Send + Sync>;

/// The texts that describe one kernel's events.
pub trait FormatSource: fmt::Debug + Send + Sync {
    /// `events/header_page`: the sub-buffer header, which gives the kernel's long size.
    fn header_page(&self) -> Result<String, SourceError>;

    /// Every event the source describes, as `(system, name)`, in any order.
    fn events(&self) -> Result<Vec<(String, String)>, SourceError>;

    /// The id of an event when the source holds it apart from the format (tracefs's
    /// `events/<system>/<name>/id`); None when only the format's `ID:` line gives it.
    fn id(&self, system: &str, name: &str) -> Option<u16>;

    /// `events/<system>/<name>/format`.
    fn format(&self, system: &str, name: &str) -> Result<String, SourceError>;

    /// `printk_formats`, for `bprint` formats and `bputs` strings.
    fn printk_formats(&self) -> Option<String> {
        None
    }

    /// The kernel's symbols in `/proc/kallsyms` form.
    fn kallsyms(&self) -> Option<String> {
        None
    }

    /// The kernel's build configuration (`CONFIG_HZ=...`).
    fn kernel_config(&self) -> Option<String> {
        None
    }
}
