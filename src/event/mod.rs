//! The event model: `format` files, schemas, records and the print-fmt engine.
//!
//! * [`Schema::parse`] reads `events/<system>/<event>/format`: typed [`Field`]s (scalars,
//!   pointers, char and fixed arrays, `__data_loc`/`__rel_loc` incl. zero-length, `[]`
//!   arrays) and the `print fmt`, compiled once into a program whose fields are resolved
//!   to indexes and whose constant subexpressions are folded.
//! * [`Registry`] maps ids and `system:name` to schemas, parsing a format on first use.
//! * [`Schema::write_text`] appends the kernel's own text for a record, allocation-free:
//!   C expressions (casts, `?:`, `sizeof`, statement expressions), the kernel's printf
//!   (flags, width, precision, length modifiers, `%#x` as `0x0`), the `%p` family (`%p` as
//!   with `options/hash-ptr` off, `%pS`/`%ps`/`%pB` via [`Kallsyms`], `%pI4`/`%pI6c`/
//!   `%pISpc`, `%pM`, `%pU`, `%*ph`, `%*pb(l)`), the helpers in [`HELPERS`], `%s` of
//!   constant kernel strings via [`PrintkFormats`], and the kernel's own printers for
//!   syscalls and the ftrace events `print`, `bprint`, `bputs`, `raw_data`,
//!   `kernel_stack`, `user_stack` and `function`.
//! * A `print fmt` the engine cannot evaluate (an enum constant the kernel did not export,
//!   `jiffies`, a driver's `trace_seq_printf` block) prints `field=value` pairs instead,
//!   counted per event ([`Schema::fallback_count`], [`Registry::fallback_report`]);
//!   `tracectl check-events -v` lists those formats.
//!
//! ```
//! use tracectl::endian::Endianness;
//! use tracectl::event::{PrintEnv, Record, Registry};
//! let mut reg = Registry::new(8, Endianness::Little);
//! let id = reg.add_format("demo", "name: hello\nID: 42\nformat:\n\
//!     \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
//!     \tfield:int value;\toffset:4;\tsize:4;\tsigned:1;\n\n\
//!     print fmt: \"value=%d%s\", REC->value, REC->value < 0 ? \" (negative)\" : \"\"\n").unwrap();
//! let mut data = vec![42u8, 0, 0, 0];
//! data.extend_from_slice(&(-3i32).to_le_bytes());
//! let rec = Record { cpu: 0, ts: 0, data: &data };
//! let mut out = Vec::new();
//! reg.get(id).unwrap().write_text(&rec, &PrintEnv::default(), &mut out);
//! assert_eq!(out, b"value=-3 (negative)");
//! ```

mod constants;
mod enums;
mod expr;
mod filter;
mod format;
mod header;
mod pointer;
mod printer;

mod print;
mod record;
mod registry;
pub(crate) mod symbols;

use crate::endian::Endianness;
pub use crate::formats::FormatSource;
pub use enums::{print_fmt_identifiers, substitute_enums};
pub use filter::{check_filter, check_filter_for, FilterSyntaxError};
pub use format::{Field, FieldClass, FieldKind, FieldSpec, FieldValue, FormatError, Schema};
pub use header::{HeaderEvent, HeaderPage, HeaderPageError};
pub use printer::{EventFormatter, EventPrinter};
use std::fmt;

pub(crate) use print::PlainLine;
pub use print::{TextPattern, HELPERS};
pub use record::Record;
pub use registry::{Registry, RegistryError};
pub use symbols::{Kallsyms, KallsymsSource, KallsymsText, PrintkFormats, Symbol};

/// Address-to-function lookup with libtraceevent's rules (`trace-cmd report` resolves
/// `%pS`, `%ps` and call sites this way; see `render::plugins::FunctionMap`): the name and
/// start address of the function holding `addr`.
pub trait FunctionLookup: fmt::Debug {
    /// The function holding `addr` and its start address.
    fn function(&self, addr: u64) -> Option<(&str, u64)>;

    /// The address of the symbol called `name`, if the table has one.
    fn address_of(&self, _name: &str) -> Option<u64> {
        None
    }

    /// A number no other table of this process has, under which the texts of its
    /// lookups may be kept and reused; 0 (the default): they are not kept.
    fn table_id(&self) -> u64 {
        0
    }
}

/// What printing needs beyond the record: symbol tables and the target's ABI.
#[derive(Debug, Clone, Copy)]
pub struct PrintEnv<'a> {
    /// Kernel symbols for `%pS`, `%ps`, `%pB` and the ftrace events' call sites.
    pub kallsyms: Option<&'a Kallsyms>,
    /// In [`PrintStyle::TraceCmd`], the table symbols are looked up in instead of
    /// `kallsyms` (libtraceevent's search differs from the kernel's at the edges).
    pub functions: Option<&'a dyn FunctionLookup>,
    /// `printk_formats`, for `bprint` formats and `bputs` strings.
    pub printk: Option<&'a PrintkFormats>,
    /// Byte order of the payloads.
    pub endian: Endianness,
    /// The kernel's `sizeof(long)`.
    pub long_size: usize,
    /// The kernel's HZ, for `jiffies_to_msecs()`; None prints those events as fields.
    pub hz: Option<u32>,
    /// Whose print engine to imitate: the kernel's `trace` text or libtraceevent's
    /// (`trace-cmd report`).
    pub style: PrintStyle,
    /// The trace clock counts nanoseconds (`trace_clock`: local, global, mono...): a time
    /// inside an event's text (`func_repeats`' last call) prints as `sec.usec`, else as
    /// the raw count, as the kernel's time column does.
    pub time_in_ns: bool,
}

/// Whose text the print engine reproduces where the kernel and libtraceevent differ.
///
/// libtraceevent (1.7, used by `trace-cmd report` 3.1) prints plain `%p` with glibc's
/// `%p` (`0x` + hex, `(nil)` for NULL) where the kernel prints bare hex; `%pS`/`%pF` as
/// `name+0xoff` without the `/0xsize` and module the kernel adds (`%pB` as a plain
/// pointer); and it evaluates identifiers it does not know (`vmemmap_base`,
/// `HRTIMER_MODE_ABS`) instead of giving up: inside expressions the address kallsyms
/// gives the name, else 0, and in
/// `__print_flags`/`__print_symbolic` tables the softirq and hrtimer-restart names it
/// knows, else -1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PrintStyle {
    /// The kernel's own `trace` text.
    #[default]
    Kernel,
    /// libtraceevent's text, as `trace-cmd report` prints it.
    TraceCmd,
}

impl Default for PrintEnv<'_> {
    /// No symbols, host byte order, 64-bit long.
    fn default() -> Self {
        PrintEnv {
            kallsyms: None,
            functions: None,
            printk: None,
            endian: Endianness::NATIVE,
            long_size: 8,
            hz: None,
            style: PrintStyle::Kernel,
            time_in_ns: true,
        }
    }
}
