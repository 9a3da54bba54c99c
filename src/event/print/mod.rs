//! The `print fmt` engine: compiled once per schema ([`compile`]), evaluated per record
//! into the caller's buffer ([`plan`] for most records, [`eval`] for the rest),
//! producing the text the kernel itself writes in the `trace` file, or the text
//! libtraceevent writes for `trace-cmd report`.

mod compile;
mod eval;
mod fields;
mod ftrace;
mod helpers;
mod invert;
mod plain_line;
mod plan;
mod printf;
mod value;

pub(crate) use compile::Program;
pub use invert::TextPattern;
pub(crate) use plain_line::PlainLine;
pub(crate) use printf::{parse_format, push_hex2, Seg, Spec};

use std::sync::atomic::Ordering;

use self::compile::Kind;
use self::eval::Evaluator;
use crate::event::format::Schema;
use crate::event::{PrintEnv, PrintStyle, Record};

/// Helpers (functions and macros left in `print fmt` after expansion) the engine knows.
///
/// The survey test `tests/event_survey.rs` lists every name seen on the running kernel
/// and fails when one is missing here.
pub const HELPERS: &[&str] = &[
    "__print_flags",
    "__print_flags_u64",
    "__print_symbolic",
    "__print_symbolic_u64",
    "__print_hex",
    "__print_hex_str",
    "__print_array",
    "__print_dynamic_array",
    "__get_str",
    "__get_rel_str",
    "__get_dynamic_array",
    "__get_dynamic_array_len",
    "__get_rel_dynamic_array",
    "__get_rel_dynamic_array_len",
    "__get_bitmask",
    "__get_rel_bitmask",
    "__get_cpumask",
    "__get_rel_cpumask",
    "__get_sockaddr",
    "__get_rel_sockaddr",
    "__builtin_expect",
    "__builtin_constant_p",
    "sizeof",
    "jiffies_to_msecs",
    "jiffies_to_usecs",
    "is_signed_type",
];

/// A failure while evaluating one record.
pub(super) type EvalResult<T> = Result<T, String>;

impl Schema {
    /// Append the kernel's text for this event (what follows `name: ` in the `trace`
    /// file, without the newline) to `out`.
    ///
    /// Returns false when the `print fmt` could not be evaluated for this record and
    /// `field=value` pairs were written instead (counted per schema, see
    /// [`Schema::fallback_count`]).
    pub fn write_text(&self, rec: &Record, env: &PrintEnv, out: &mut Vec<u8>) -> bool {
        let start = out.len();
        let cx = Evaluator::of_record(self, rec, env);
        let res = match self.program.kind_for(env.style) {
            // Most records: a plan made at compile time.
            Kind::Printf {
                segs,
                args,
                plan: Some(plan),
                ..
            } => cx.printf_planned(segs, args, plan, out),
            kind => cx.run(kind, out),
        };
        self.settle(res, rec, env, out, start)
    }

    /// The [`PlainLine`] that [`Schema::write_text`] tries first in `style`, when the
    /// print fmt has one: a loop over many records of the event looks it up once and
    /// writes with it, and calls `write_text` only for a record it refuses.
    pub(crate) fn plain_line(&self, style: PrintStyle) -> Option<&PlainLine> {
        match self.program.kind_for(style) {
            Kind::Printf {
                plan: Some(plan), ..
            } => plan.line.as_ref(),
            _ => None,
        }
    }

    /// [`Schema::write_text`] through the general evaluator alone, without the plan made
    /// at compile time: the reference the plans are tested against.
    #[doc(hidden)]
    pub fn write_text_unplanned(&self, rec: &Record, env: &PrintEnv, out: &mut Vec<u8>) -> bool {
        let start = out.len();
        let res = Evaluator::of_record(self, rec, env).run(self.program.kind_for(env.style), out);
        self.settle(res, rec, env, out, start)
    }

    /// True for a text written; else the record falls back to its fields.
    #[inline]
    fn settle(
        &self,
        res: EvalResult<()>,
        rec: &Record,
        env: &PrintEnv,
        out: &mut Vec<u8>,
        start: usize,
    ) -> bool {
        match res {
            Ok(()) => true,
            Err(reason) => {
                self.fall_back(reason, rec, env, out, start);
                false
            }
        }
    }

    /// A record the program failed on: counted, its reason kept, and its fields written
    /// instead of what was written of the text.
    #[cold]
    #[inline(never)]
    fn fall_back(
        &self,
        reason: String,
        rec: &Record,
        env: &PrintEnv,
        out: &mut Vec<u8>,
        start: usize,
    ) {
        if !reason.is_empty() {
            let _ = self.program.runtime_reason.set(reason);
        }
        self.program.fallbacks.fetch_add(1, Ordering::Relaxed);
        out.truncate(start);
        self.write_fields(rec, env, out);
    }

    /// Whether the kernel's `trace` line shows `name: ` before [`Schema::write_text`]'s
    /// text. False for `syscalls:sys_enter_*`/`sys_exit_*` and the ftrace-internal
    /// `print`, `bprint`, `bputs` and `function` events, which the kernel prints with its
    /// own output functions.
    pub fn prints_name(&self) -> bool {
        self.program.prints_name()
    }

    /// Whether libtraceevent 1.7 (the library trace-cmd 3.1.6 prints with) marks this
    /// event as failed, so that `trace-cmd report` prints `[FAILED TO PARSE]` and the
    /// raw fields for each of its records: its format string holds a raw tab character
    /// (the maple_tree events' `"%s\tNode: ..."`). perf's own copy of the library reads
    /// such a format, as the kernel does.
    pub fn tracecmd_fails(&self) -> bool {
        self.program.tracecmd_fails
    }

    /// How many records of this event were printed as `field=value` pairs because the
    /// `print fmt` could not be evaluated.
    pub fn fallback_count(&self) -> u64 {
        self.program.fallback_count()
    }
}
