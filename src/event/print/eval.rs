//! The `print fmt` engine: compiled once per schema, evaluated per record into the
//! caller's buffer, producing the text the kernel itself writes in the `trace` file.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use std::cell::RefCell;

use super::expr::{lex, CType, Expr, Parser};
use super::format::{read_uint, sign_extend, until_nul, Field, FieldKind, Schema};
use super::pointer;
use super::{PrintEnv, PrintStyle, Record};
use crate::bytes::Text;
pub(crate) use crate::bytes::{push_dec as push_u64, push_hex, push_i64};

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

/// One piece of the format string.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Seg {
    Lit(Vec<u8>),
    Conv(Spec),
}

/// A printf conversion: `%[flags][width][.prec][len]conv[ext]`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Spec {
    pub left: bool,
    pub plus: bool,
    pub space: bool,
    pub alt: bool,
    pub zero: bool,
    /// -1: none; -2: `*`.
    pub width: i32,
    pub prec: i32,
    /// Size in bytes the length modifier reads (0 = int, i.e. 4).
    pub len: u8,
    pub conv: u8,
    /// `%p` extension letters (`S`, `I4`, `ISpc`, `hC`...), NUL-padded.
    pub ext: [u8; 4],
}

impl Spec {
    pub(crate) fn ext(&self) -> &[u8] {
        until_nul(&self.ext)
    }
}

/// Parse a printf format into literal pieces and conversions.
pub(crate) fn parse_format(fmt: &[u8], long_size: usize) -> Result<Vec<Seg>, String> {
    let mut segs = Vec::new();
    let mut lit = Vec::new();
    let mut i = 0;
    while i < fmt.len() {
        let c = fmt[i];
        if c != b'%' {
            lit.push(c);
            i += 1;
            continue;
        }
        i += 1;
        if fmt.get(i) == Some(&b'%') {
            lit.push(b'%');
            i += 1;
            continue;
        }
        let mut s = Spec {
            width: -1,
            prec: -1,
            ..Spec::default()
        };
        while let Some(&f) = fmt.get(i) {
            match f {
                b'-' => s.left = true,
                b'+' => s.plus = true,
                b' ' => s.space = true,
                b'#' => s.alt = true,
                b'0' => s.zero = true,
                _ => break,
            }
            i += 1;
        }
        let num = |i: &mut usize| -> i32 {
            let mut v: i32 = 0;
            while let Some(d) = fmt.get(*i).filter(|d| d.is_ascii_digit()) {
                v = v.saturating_mul(10).saturating_add((d - b'0') as i32);
                *i += 1;
            }
            // The kernel's trace_seq holds one page; wider fields cannot be shown anyway.
            v.min(4096)
        };
        if fmt.get(i) == Some(&b'*') {
            s.width = -2;
            i += 1;
        } else if fmt.get(i).is_some_and(|d| d.is_ascii_digit()) {
            s.width = num(&mut i);
        }
        if fmt.get(i) == Some(&b'.') {
            i += 1;
            if fmt.get(i) == Some(&b'*') {
                s.prec = -2;
                i += 1;
            } else {
                s.prec = num(&mut i).max(0);
            }
        }
        let rest = &fmt[i..];
        let (len, skip) = if rest.starts_with(b"hh") {
            (1, 2)
        } else if rest.starts_with(b"ll") {
            (8, 2)
        } else {
            match rest.first() {
                Some(b'h') => (2, 1),
                Some(b'l') => (long_size as u8, 1),
                Some(b'L') | Some(b'q') | Some(b'j') => (8, 1),
                Some(b'z') | Some(b'Z') | Some(b't') => (long_size as u8, 1),
                _ => (0, 0),
            }
        };
        s.len = len;
        i += skip;
        let conv = *fmt.get(i).ok_or("format ends inside a conversion")?;
        i += 1;
        match conv {
            b'd' | b'i' | b'u' | b'x' | b'X' | b'o' | b'c' | b's' => {}
            b'p' => {
                let mut n = 0;
                while n < 4 && fmt.get(i).is_some_and(|c| c.is_ascii_alphanumeric()) {
                    s.ext[n] = fmt[i];
                    n += 1;
                    i += 1;
                }
                // Longer extensions than we keep are unknown to the engine.
                if fmt.get(i).is_some_and(|c| c.is_ascii_alphanumeric()) && n == 4 {
                    return Err(format!(
                        "unknown %p extension `%p{}`",
                        String::from_utf8_lossy(&fmt[i - 4..=i])
                    ));
                }
            }
            other => return Err(format!("unknown conversion `%{}`", other as char)),
        }
        s.conv = conv;
        if !lit.is_empty() {
            segs.push(Seg::Lit(std::mem::take(&mut lit)));
        }
        segs.push(Seg::Conv(s));
    }
    if !lit.is_empty() {
        segs.push(Seg::Lit(lit));
    }
    Ok(segs)
}

/// How a schema prints.
#[derive(Debug, Clone, Default)]
enum Kind {
    /// The format string and its compiled argument expressions.
    Printf {
        segs: Vec<Seg>,
        /// Shared by clones of the program.
        args: Arc<Vec<Expr>>,
        /// An identifier the kernel style cannot evaluate (an unexported enum constant),
        /// reported by `check-events`; records fall back at run time.
        unknown: Option<String>,
        /// The same print fmt with its plain field conversions resolved at compile time;
        /// None when a `*` width or precision makes argument positions vary.
        plan: Option<Plan>,
    },
    /// `ftrace:print`: `<ip symbol>: <buf>`.
    FtracePrint { ip: usize, buf: usize },
    /// `ftrace:bprint`: `<ip symbol>: ` and `fmt` (a printk_formats address) applied to the
    /// binary argument words in `buf`.
    FtraceBprint { ip: usize, fmt: usize, buf: usize },
    /// `ftrace:bputs`: `<ip symbol>: ` and the constant string at `str`.
    FtraceBputs { ip: usize, str: usize },
    /// `ftrace:raw_data` (`trace_marker_raw`): `# <id hex> buf: xx xx ...`, every byte of
    /// the record after `id`, padding included, as the kernel prints it.
    FtraceRawData { id: usize, buf: usize },
    /// `ftrace:kernel_stack` (options/stacktrace): `<stack trace>` then ` => symbol` per
    /// return address to the end of the record or the first all-ones word.
    FtraceKernelStack { caller: usize },
    /// `ftrace:user_stack` (options/userstacktrace): `<user stack trace>` then
    /// ` =>  <address>` per non-zero entry of `caller`.
    FtraceUserStack { caller: usize },
    /// `ftrace:function`: `<ip> <-<parent>`.
    FtraceFunction { ip: usize, parent: usize },
    /// `syscalls:sys_enter_*`: the kernel's `sys_name(arg: value, ...)`.
    SyscallEnter { call: String, args: Vec<usize> },
    /// `syscalls:sys_exit_*`: `sys_name -> 0xret`.
    SyscallExit { call: String, ret: usize },
    /// The print fmt cannot be evaluated: print `field=value` pairs.
    Fallback(String),
    #[default]
    Empty,
}

/// A planned `print fmt`: each conversion with the literal text before it (one step per
/// conversion instead of one per literal and one per conversion), and the text after the
/// last one.
#[derive(Debug, Clone)]
struct Plan {
    steps: Vec<(Text, Piece)>,
    tail: Text,
}

impl Plan {
    fn new(segs: &[Seg], pieces: Vec<Piece>) -> Plan {
        let lit = |i: usize| match &segs[i] {
            Seg::Lit(b) => Text::new(b),
            Seg::Conv(_) => Text::default(),
        };
        let mut steps = Vec::with_capacity(pieces.len());
        let mut before: Option<Text> = None;
        for p in pieces {
            match p {
                Piece::Lit(i) => match before.take() {
                    // Two literals in a row: the second becomes a step of its own.
                    Some(b) => steps.push((b, Piece::Lit(i))),
                    None => before = Some(lit(i)),
                },
                p => steps.push((before.take().unwrap_or_default(), p)),
            }
        }
        Plan {
            steps,
            tail: before.unwrap_or_default(),
        }
    }
}

/// One step of a planned `print fmt`. Most conversions print one field as it is
/// (`REC->pid` with `%d`, `__get_str(name)` with `%s`, `(void *)REC->ip` with `%pS`) or
/// an integer expression over fields; those read the record directly instead of going
/// through the expression evaluator, which is most of the cost of a line. Both paths
/// share the reads, casts and C arithmetic (`Evaluator::cast_int`, `int_binary`),
/// [`Evaluator::int_conv`], `fmt_str` and `pointer::format` (whose kernel-style `%p` and
/// `%pS` arms the `Ptr` piece repeats); `tests/event_mutations.rs` and the `print_fmt`
/// fuzz target check that both print the same text.
#[derive(Debug, Clone)]
enum Piece {
    /// The literal text of `segs[i]`.
    Lit(usize),
    /// An integer conversion of a scalar or pointer field, possibly cast to another
    /// integer type first (`(unsigned long)(REC->dfd)`): (pointer, signed, size) of it.
    Int {
        field: usize,
        spec: Spec,
        cast: Option<(bool, bool, u8)>,
    },
    /// A `%p` conversion of a pointer field, or of a scalar field cast to a pointer
    /// (`cast`: the value is then truncated to the kernel's long).
    Ptr {
        read: FieldRead,
        cast: bool,
        spec: Spec,
        /// The first letter after `%p` (0 when none).
        ext: u8,
    },
    /// `%s` of a char array field or of `__get_str(field)`: the bytes up to the first NUL.
    Str { field: usize, spec: Spec },
    /// An integer conversion of `REC->array[index]` with a constant index.
    Elem {
        field: usize,
        index: usize,
        spec: Spec,
    },
    /// Any other conversion: argument `arg` through the general evaluator.
    General { spec: Spec, arg: usize },
    /// A conversion of an integer expression over scalar fields and constants (`MAJOR(dev)`
    /// is `(unsigned int) ((REC->dev) >> 20)`; `REC->pfn != -1UL ? REC->pfn : 0`), compiled
    /// per style (kernel, trace-cmd) into an [`IntExpr`] that computes what the evaluator
    /// computes, with the evaluator's own `cast` and `binary`. A style whose `IntExpr` could
    /// not be made sends argument `arg` through the evaluator.
    IntExpr {
        calc: Box<[Option<IntExpr>; 2]>,
        how: IntOutput,
        spec: Spec,
        arg: usize,
    },
    /// `%s` of `__print_flags`/`__print_symbolic` (or their `_u64` forms) over a scalar
    /// field read like `Plain` or an expression over fields (`src`), optionally behind
    /// `(value) ? ... : "text"` (`zero`: the text a zero value prints instead). `entries` holds, per style (kernel,
    /// trace-cmd), the table's constant (value, label) pairs; a record the pairs do not
    /// settle goes through the evaluator with argument `arg`.
    Table {
        src: TableSource,
        zero: Option<Box<[u8]>>,
        flags: bool,
        wide: bool,
        delim: Box<[u8]>,
        entries: Box<[TableEntries; 2]>,
        arg: usize,
        spec: Spec,
    },
    /// `%s` of `REC->field ? "yes" : "no"` (or `REC->field & mask ? ...` with a
    /// non-negative mask), the field read like `Plain`: the common shape of what
    /// `IntOutput::YesNo` prints, kept because it takes the rendering loop 2% fewer
    /// instructions.
    FieldYesNo {
        read: FieldRead,
        mask: u64,
        yes: Box<[u8]>,
        no: Box<[u8]>,
    },
    /// An `Int` or `Elem` piece reduced at compile time to what it reads and prints: the
    /// field or element read (`FieldRead`), then cut to the conversion's `len` bytes and
    /// printed with no width, precision or flag (`fmt_int`'s plain case).
    Plain {
        read: FieldRead,
        /// An integer cast between the read and the conversion, as in `Int`.
        cast: Option<(bool, bool, u8)>,
        len: u8,
        conv: u8,
    },
}

/// Where a [`Piece::Table`] takes its value.
#[derive(Debug, Clone)]
enum TableSource {
    /// A field.
    Field(FieldRead),
    /// An expression over fields, per style; a style without one goes through the
    /// evaluator.
    IntExpr(Box<[Option<IntExpr>; 2]>),
}

/// A planned flag or symbol table.
#[derive(Debug, Clone)]
struct TableEntries {
    /// (value, label) in table order, up to the first entry the evaluator cannot read.
    known: Box<[(u64, Box<[u8]>)]>,
    /// Whether such an entry follows: a record whose lookup gets that far goes through
    /// the evaluator (which fails on it, as it always did).
    tail: bool,
}

/// Where a planned piece reads its integer: `size` (1, 2, 4 or 8) bytes at payload
/// offset `off`, sign-extended when `sext`, giving the value [`Evaluator::field_int`] gives;
/// `ty` is the C type [`Evaluator::field`] gives it (signed, size). `field` names the piece for
/// the error of a payload too short to hold it.
#[derive(Debug, Clone, Copy)]
struct FieldRead {
    field: usize,
    off: usize,
    size: u8,
    sext: bool,
    ty: (bool, u8),
}

impl FieldRead {
    /// A scalar or pointer field of 1, 2, 4 or 8 bytes.
    fn of(schema: &Schema, field: usize) -> Option<FieldRead> {
        let f = schema.fields.get(field)?;
        let (sext, ty) = match f.kind {
            FieldKind::Scalar if f.size < 4 => (f.signed, (true, 4)),
            FieldKind::Scalar => (f.signed, (f.signed, f.size as u8)),
            FieldKind::Pointer => (false, (false, f.size as u8)),
            _ => return None,
        };
        matches!(f.size, 1 | 2 | 4 | 8).then_some(FieldRead {
            field,
            off: f.offset,
            size: f.size as u8,
            sext,
            ty,
        })
    }
}

/// The `Table` or `FieldYesNo` piece of a `%s` argument, when it has one.
fn text_piece(e: &Expr, schema: &Schema, arg: usize, spec: Spec) -> Option<Piece> {
    if spec.width >= 0 || spec.prec >= 0 {
        return None;
    }

    let (test, call, zero) = match e {
        Expr::Cond(c, t, f) => match (&**t, &**f) {
            (Expr::Str(yes), Expr::Str(no)) => {
                let (field, mask) = match &**c {
                    Expr::Field(i) => (*i, u64::MAX),
                    Expr::Binary("&", a, b) => match (&**a, &**b) {
                        (Expr::Field(i), Expr::Num(n)) => (*i, *n),
                        (Expr::Field(i), Expr::Const(n, signed, size))
                            if !(*signed && sign_extend(*n, *size as usize) < 0) =>
                        {
                            (*i, *n)
                        }
                        _ => return None,
                    },
                    _ => return None,
                };
                return Some(Piece::FieldYesNo {
                    read: FieldRead::of(schema, field)?,
                    mask,
                    yes: until_nul(yes).into(),
                    no: until_nul(no).into(),
                });
            }
            (call @ Expr::Call(..), Expr::Str(z)) => (Some(&**c), call, Some(until_nul(z))),
            _ => return None,
        },
        call => (None, call, None),
    };
    let Expr::Call(name, args) = call else {
        return None;
    };
    let (flags, wide) = match name.as_str() {
        "__print_flags" => (true, false),
        "__print_flags_u64" => (true, true),
        "__print_symbolic" => (false, false),
        "__print_symbolic_u64" => (false, true),
        _ => return None,
    };
    // The value: a field, or an expression over fields (`REC->prev_state & 255`); a
    // `?:` in front must test that same value.
    let value = args.first()?;
    if test.is_some_and(|t| t != value) {
        return None;
    }
    let src = match value {
        Expr::Field(f) => TableSource::Field(FieldRead::of(schema, *f)?),
        e => {
            let calc = int_expr_styles(e, schema);
            if calc.iter().all(Option::is_none) {
                return None;
            }
            TableSource::IntExpr(Box::new(calc))
        }
    };
    let (delim, table): (&[u8], _) = if flags {
        match args.get(1)? {
            Expr::Str(d) => (until_nul(d), args.get(2..)?),
            _ => return None,
        }
    } else {
        (b"", args.get(1..)?)
    };
    // Per style, the entries up to the first one without a constant value and a string
    // label (the evaluator fails on that one, if its loop gets there: `{ 0, NULL }` ends
    // the kernel's gfp table).
    let entries = [PrintStyle::Kernel, PrintStyle::TraceCmd].map(|style| {
        let values = const_table_values(schema, style, table);
        // The kernel's tables end at a NULL name.
        let end = match style {
            PrintStyle::Kernel => table.iter().position(null_label).unwrap_or(table.len()),
            _ => table.len(),
        };
        let known: Box<[_]> = values[..end]
            .iter()
            .zip(&table[..end])
            .map_while(|(v, e)| Some(((*v)?, Box::<[u8]>::from(table_label(e).ok()?))))
            .collect();
        let tail = known.len() < end;
        TableEntries { known, tail }
    });
    Some(Piece::Table {
        src,
        zero: zero.map(Box::from),
        flags,
        wide,
        delim: delim.into(),
        entries: Box::new(entries),
        arg,
        spec,
    })
}

/// What the evaluator has at compile time in `style`: the long size, no record and no
/// symbol or string tables.
fn compile_env(schema: &Schema, style: PrintStyle) -> PrintEnv<'static> {
    PrintEnv {
        style,
        long_size: schema.long_size,
        ..PrintEnv::default()
    }
}

/// The values of a table's entries in `style`, as the evaluator computes them with no
/// record (None for an entry that does not evaluate).
fn const_table_values(schema: &Schema, style: PrintStyle, entries: &[Expr]) -> Vec<Option<u64>> {
    let env = compile_env(schema, style);
    let cx = Evaluator::new(schema, &[], &env);
    entries
        .iter()
        .map(|e| cx.table_entry(e).ok().map(|(v, _)| v))
        .collect()
}

/// The `Plain` form of an `Int` or `Elem` piece, when it has one: a fixed-offset scalar,
/// pointer or array element of 1, 2, 4 or 8 bytes, and a `%u %d %i %x %X` conversion
/// without width, precision or flags.
fn plain_piece(p: &Piece, schema: &Schema) -> Option<Piece> {
    match *p {
        Piece::Int { field, spec, cast } => {
            let (len, conv) = plain_conv(&spec)?;
            Some(Piece::Plain {
                read: FieldRead::of(schema, field)?,
                cast,
                len,
                conv,
            })
        }
        Piece::Elem { field, index, spec } => {
            let (len, conv) = plain_conv(&spec)?;
            let f = schema.fields.get(field)?;
            let FieldKind::Array { elem_size, .. } = f.kind else {
                return None;
            };
            let el = elem_size.max(1);
            (matches!(el, 1 | 2 | 4 | 8) && (index + 1).checked_mul(el)? <= f.size).then_some(
                Piece::Plain {
                    read: FieldRead {
                        field,
                        off: f.offset + index * el,
                        size: el as u8,
                        sext: false,
                        ty: (false, el as u8),
                    },
                    cast: None,
                    len,
                    conv,
                },
            )
        }
        _ => None,
    }
}

/// A `%u %d %i %x %X` conversion without width, precision or flags, as `fmt_int`'s plain
/// case prints it: (bytes the length modifier keeps, conversion letter).
fn plain_conv(s: &Spec) -> Option<(u8, u8)> {
    (s.width <= 0
        && s.prec < 0
        && !s.alt
        && !s.plus
        && !s.space
        && matches!(s.conv, b'u' | b'd' | b'i' | b'x' | b'X'))
    .then_some((if s.len == 0 { 4 } else { s.len }, s.conv))
}

/// The plan of a print fmt, or None when it has `*` widths or precisions.
fn plan(segs: &[Seg], args: &[Expr], schema: &Schema) -> Option<Vec<Piece>> {
    let scalar = |i: usize| {
        matches!(
            schema.fields.get(i).map(|f| &f.kind),
            Some(FieldKind::Scalar | FieldKind::Pointer)
        )
    };
    let mut pieces = Vec::with_capacity(segs.len());
    let mut next = 0;
    for (i, seg) in segs.iter().enumerate() {
        let spec = match seg {
            Seg::Lit(_) => {
                pieces.push(Piece::Lit(i));
                continue;
            }
            Seg::Conv(spec) => *spec,
        };
        if spec.width == -2 || spec.prec == -2 {
            return None;
        }
        let arg = args.get(next)?;
        let piece = match (spec.conv, arg) {
            (b's', e) if text_piece(e, schema, next, spec).is_some() => {
                text_piece(e, schema, next, spec)?
            }
            (b's', Expr::Field(f))
                if matches!(schema.fields[*f].kind, FieldKind::CharArray { .. }) =>
            {
                Piece::Str { field: *f, spec }
            }
            (b's', Expr::Call(name, a))
                if matches!(name.as_str(), "__get_str" | "__get_rel_str")
                    && matches!(a.as_slice(), [Expr::Field(_)]) =>
            {
                let [Expr::Field(f)] = a.as_slice() else {
                    return None;
                };
                Piece::Str { field: *f, spec }
            }
            (b'p', Expr::Field(f)) if matches!(schema.fields[*f].kind, FieldKind::Pointer) => {
                match FieldRead::of(schema, *f) {
                    Some(read) => Piece::Ptr {
                        read,
                        cast: false,
                        spec,
                        ext: spec.ext().first().copied().unwrap_or(0),
                    },
                    None => Piece::General { spec, arg: next },
                }
            }
            (b'p', Expr::Cast(ty, x))
                if ty.pointer && matches!(**x, Expr::Field(f) if scalar(f)) =>
            {
                let Expr::Field(f) = **x else {
                    return None;
                };
                match FieldRead::of(schema, f) {
                    Some(read) => Piece::Ptr {
                        read,
                        cast: true,
                        spec,
                        ext: spec.ext().first().copied().unwrap_or(0),
                    },
                    None => Piece::General { spec, arg: next },
                }
            }
            (c, Expr::Field(f)) if c != b's' && c != b'p' && scalar(*f) => Piece::Int {
                field: *f,
                spec,
                cast: None,
            },
            (c, Expr::Cast(ty, x))
                if c != b's' && c != b'p' && matches!(**x, Expr::Field(f) if scalar(f)) =>
            {
                let Expr::Field(f) = **x else {
                    return None;
                };
                Piece::Int {
                    field: f,
                    spec,
                    cast: Some((ty.pointer, ty.signed, ty.size)),
                }
            }
            (c, Expr::Index(a, i)) if c != b's' && c != b'p' => match (&**a, &**i) {
                (Expr::Field(f), Expr::Num(n) | Expr::Const(n, ..))
                    if matches!(schema.fields[*f].kind, FieldKind::Array { .. })
                        && *n < 1 << 16 =>
                {
                    Piece::Elem {
                        field: *f,
                        index: *n as usize,
                        spec,
                    }
                }
                _ => Piece::General { spec, arg: next },
            },
            (_, e) => {
                int_expr_piece(e, schema, spec, next).unwrap_or(Piece::General { spec, arg: next })
            }
        };
        pieces.push(plain_piece(&piece, schema).unwrap_or(piece));
        next += 1;
    }
    Some(pieces)
}

/// An integer expression of a [`Piece::IntExpr`], for one style. Each node gives the value
/// the evaluator gives its expression (`Value::Int`).
#[derive(Debug, Clone)]
enum IntExpr {
    /// A scalar or pointer field, as [`Evaluator::field`] types it.
    Field(FieldRead),
    Const(Int),
    Cast(CType, Box<IntExpr>),
    /// `-`, `~`, `+` or `!`.
    Unary(u8, Box<IntExpr>),
    /// A binary operator; `scale` multiplies the right operand first (kernel-style
    /// pointer arithmetic: `(struct page *)base + n` steps by the struct size), 1 when not.
    Bin {
        op: BinOp,
        a: Box<IntExpr>,
        b: Box<IntExpr>,
        scale: u64,
    },
    /// `&&` and `||`: the right operand is evaluated only when the left one does not
    /// settle the result.
    Logic(bool, Box<IntExpr>, Box<IntExpr>),
    Cond(Box<IntExpr>, Box<IntExpr>, Box<IntExpr>),
    /// A field through casts and operators with constant right operands, in order
    /// (`MAJOR(dev)`, page offsets): the common shape, computed in a loop.
    Chain(FieldRead, Box<[ChainOp]>),
}

/// One step of a [`IntExpr::Chain`].
#[derive(Debug, Clone, Copy)]
enum ChainOp {
    Cast(CType),
    Bin(BinOp, Int),
}

impl IntExpr {
    /// Whether the calc reads the record.
    fn reads(&self) -> bool {
        match self {
            IntExpr::Field(_) | IntExpr::Chain(..) => true,
            IntExpr::Const(_) => false,
            IntExpr::Cast(_, x) | IntExpr::Unary(_, x) => x.reads(),
            IntExpr::Bin { a, b, .. } | IntExpr::Logic(_, a, b) => a.reads() || b.reads(),
            IntExpr::Cond(c, t, f) => c.reads() || t.reads() || f.reads(),
        }
    }

    /// The calc with its parts that read no field computed now (`(struct page
    /// *)vmemmap_base`), and a `?:` on a constant condition reduced to its branch.
    fn folded(self, cx: &Evaluator) -> IntExpr {
        let f = |x: Box<IntExpr>| Box::new(x.folded(cx));
        let c = match self {
            IntExpr::Cast(t, x) => IntExpr::Cast(t, f(x)),
            IntExpr::Unary(op, x) => IntExpr::Unary(op, f(x)),
            IntExpr::Bin { op, a, b, scale } => IntExpr::Bin {
                op,
                a: f(a),
                b: f(b),
                scale,
            },
            IntExpr::Logic(and, a, b) => IntExpr::Logic(and, f(a), f(b)),
            IntExpr::Cond(c, t, e) => match c.folded(cx) {
                IntExpr::Const(v) if v.v != 0 => t.folded(cx),
                IntExpr::Const(_) => e.folded(cx),
                c => IntExpr::Cond(Box::new(c), f(t), f(e)),
            },
            c => c,
        };
        if c.reads() || matches!(c, IntExpr::Const(_)) {
            return c;
        }
        match cx.int_expr(&c) {
            Some(v) => IntExpr::Const(v),
            None => c,
        }
    }

    /// The `Chain` form of a calc that is one, else the calc as it was.
    fn chained(self) -> IntExpr {
        fn walk(c: &IntExpr, ops: &mut Vec<ChainOp>) -> Option<FieldRead> {
            match c {
                IntExpr::Field(r) => Some(*r),
                IntExpr::Cast(t, x) => {
                    let r = walk(x, ops)?;
                    ops.push(ChainOp::Cast(*t));
                    Some(r)
                }
                IntExpr::Bin { op, a, b, scale: 1 } => match **b {
                    IntExpr::Const(k) => {
                        let r = walk(a, ops)?;
                        ops.push(ChainOp::Bin(*op, k));
                        Some(r)
                    }
                    _ => None,
                },
                _ => None,
            }
        }
        let mut ops = Vec::new();
        match walk(&self, &mut ops) {
            Some(r) if !ops.is_empty() => IntExpr::Chain(r, ops.into()),
            _ => self,
        }
    }
}

/// What a [`Piece::IntExpr`] prints of its value.
#[derive(Debug, Clone)]
enum IntOutput {
    /// An integer conversion; `plain_conv` of it when it has one.
    Int(Option<(u8, u8)>),
    /// A `%p` conversion of the value as an address.
    Ptr,
    /// `%s` of a kernel string address (`%s` of `REC->fn`, a `const char *`).
    KStr,
    /// `%s` of `test ? "yes" : "no"`: the value is the test.
    YesNo(Box<[u8]>, Box<[u8]>),
}

/// The [`IntExpr`] of `e` in `style`, when `e` is an integer expression the evaluator
/// computes from scalar fields and constants alone.
fn int_expr_of(e: &Expr, schema: &Schema, style: PrintStyle) -> Option<IntExpr> {
    let sub = |x: &Expr| int_expr_of(x, schema, style).map(Box::new);
    Some(match e {
        Expr::Num(n) => IntExpr::Const(Int::of(*n)),
        &Expr::Const(v, signed, size) => IntExpr::Const(Int { v, signed, size }),
        Expr::Field(i) => IntExpr::Field(FieldRead::of(schema, *i)?),
        // libtraceevent reads an atom it does not know as 0.
        Expr::Ident(_) if style == PrintStyle::TraceCmd => IntExpr::Const(Int::of(0)),
        Expr::Ident(n) => IntExpr::Const(Int::of(super::constants::constant(n)?)),
        Expr::Cast(ty, x) => IntExpr::Cast(*ty, sub(x)?),
        Expr::Unary(op @ ("-" | "~" | "+" | "!"), x) => IntExpr::Unary(op.as_bytes()[0], sub(x)?),
        Expr::Binary(op, a, b) => {
            // trace-cmd style regroups these (`eval_rotated`): left to the evaluator.
            if style == PrintStyle::TraceCmd
                && (looser_right(op, b) || matches!(**b, Expr::Cond(..)))
            {
                return None;
            }
            match *op {
                "&&" | "||" => IntExpr::Logic(*op == "&&", sub(a)?, sub(b)?),
                _ => {
                    let scale = match &**a {
                        Expr::Cast(t, _)
                            if style == PrintStyle::Kernel
                                && t.pointer
                                && t.elem > 1
                                && matches!(*op, "+" | "-") =>
                        {
                            u64::from(t.elem)
                        }
                        _ => 1,
                    };
                    IntExpr::Bin {
                        op: BinOp::of(op)?,
                        a: sub(a)?,
                        b: sub(b)?,
                        scale,
                    }
                }
            }
        }
        Expr::Cond(c, t, f) => IntExpr::Cond(sub(c)?, sub(t)?, sub(f)?),
        // The evaluator gives the first argument's value.
        Expr::Call(name, args) if name == "__builtin_expect" => {
            int_expr_of(args.first()?, schema, style)?
        }
        _ => return None,
    })
}

/// The [`IntExpr`] of `e` per style (kernel, trace-cmd), folded and chained.
fn int_expr_styles(e: &Expr, schema: &Schema) -> [Option<IntExpr>; 2] {
    [PrintStyle::Kernel, PrintStyle::TraceCmd].map(|style| {
        let env = compile_env(schema, style);
        let cx = Evaluator::new(schema, &[], &env);
        int_expr_of(e, schema, style).map(|c| c.folded(&cx).chained())
    })
}

/// The `IntExpr` piece of argument `arg` (expression `e`) with conversion `spec`, when one
/// style at least can compute it without the evaluator.
fn int_expr_piece(e: &Expr, schema: &Schema, spec: Spec, arg: usize) -> Option<Piece> {
    let (test, how) = match (spec.conv, e) {
        (b's', Expr::Cond(c, t, f)) => match (&**t, &**f) {
            (Expr::Str(yes), Expr::Str(no)) => (
                &**c,
                IntOutput::YesNo(until_nul(yes).into(), until_nul(no).into()),
            ),
            _ => (e, IntOutput::KStr),
        },
        (b's', e) => (e, IntOutput::KStr),
        (b'p', e) => (e, IntOutput::Ptr),
        (_, e) => (e, IntOutput::Int(plain_conv(&spec))),
    };
    let calc = int_expr_styles(test, schema);
    (calc.iter().any(Option::is_some)).then(|| Piece::IntExpr {
        calc: Box::new(calc),
        how,
        spec,
        arg,
    })
}

/// The name of the call that stands for a constant flag/symbol table once compiled:
/// `__print_flags(value, delim, TABLE_REF(id))`, `id` indexing [`Program::tables`].
const TABLE_REF: &str = "__table_ref";

/// A constant flag/symbol table taken out of the compiled expressions: its entries and
/// their values in both styles, computed once at compile time.
#[derive(Debug)]
struct ConstTable {
    entries: Vec<Expr>,
    /// [kernel values, trace-cmd values], by entry.
    values: [Vec<Option<u64>>; 2],
}

/// Moves every constant flag/symbol table of `program` into `program.tables`, leaving a
/// [`TABLE_REF`] call with its id in its place.
fn number_const_tables(program: &mut Program, schema: &Schema) {
    fn walk(e: &mut Expr, schema: &Schema, tables: &mut Vec<ConstTable>) {
        match e {
            Expr::Call(name, args) => {
                let skip = match name.as_str() {
                    "__print_flags" | "__print_flags_u64" => 2,
                    "__print_symbolic" | "__print_symbolic_u64" => 1,
                    _ => usize::MAX,
                };
                args.iter_mut().for_each(|a| walk(a, schema, tables));
                if let Some(entries) = args.get(skip..) {
                    if !entries.iter().any(reads_record) {
                        let entries: Vec<Expr> = args.drain(skip..).collect();
                        let values = |style| const_table_values(schema, style, &entries);
                        let values = [values(PrintStyle::Kernel), values(PrintStyle::TraceCmd)];
                        args.push(Expr::Call(
                            TABLE_REF.into(),
                            vec![Expr::Num(tables.len() as u64)],
                        ));
                        tables.push(ConstTable { entries, values });
                    }
                }
            }
            Expr::Cast(_, x) | Expr::Unary(_, x) => walk(x, schema, tables),
            Expr::Binary(_, a, b) | Expr::Index(a, b) => {
                walk(a, schema, tables);
                walk(b, schema, tables);
            }
            Expr::Cond(c, t, f) => {
                walk(c, schema, tables);
                walk(t, schema, tables);
                walk(f, schema, tables);
            }
            Expr::Block(decls, value) => {
                decls
                    .iter_mut()
                    .for_each(|d| walk(&mut d.2, schema, tables));
                walk(value, schema, tables);
            }
            _ => {}
        }
    }
    let mut tables = Vec::new();
    for kind in std::iter::once(&mut program.kind).chain(program.as_written.as_deref_mut()) {
        if let Kind::Printf { args, .. } = kind {
            Arc::make_mut(args)
                .iter_mut()
                .for_each(|a| walk(a, schema, &mut tables));
        }
    }
    program.tables = tables.into();
}

/// A compiled `print fmt`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Program {
    kind: Kind,
    /// The constant `__print_flags`/`__print_symbolic` tables, by the id their
    /// [`TABLE_REF`] holds, with their values: evaluated once instead of for every record.
    tables: Arc<[ConstTable]>,
    /// For events the kernel prints with its own code (syscalls): the print fmt as
    /// written, which the trace-cmd style prints.
    as_written: Option<Box<Kind>>,
    /// Records that had to fall back to `field=value` pairs.
    fallbacks: Arc<AtomicU64>,
    /// The reason of the first runtime fallback, when the compiled program failed on a record.
    runtime_reason: Arc<std::sync::OnceLock<String>>,
}

/// A failure while evaluating one record.
type EvalResult<T> = Result<T, String>;

/// A value of the expression language.
#[derive(Debug, Clone)]
enum Value<'a> {
    /// An integer with its C type: the value is kept sign-extended when signed.
    Int { v: u64, signed: bool, size: u8 },
    /// A pointer to bytes in the payload or in the program (strings, arrays).
    Bytes(&'a [u8], u8),
    /// Text made by a helper.
    Text(Vec<u8>),
}

/// An integer with its C type, as `Value::Int` holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Int {
    v: u64,
    signed: bool,
    size: u8,
}

impl Int {
    /// `v` as a C integer of `size` bytes (0: 8).
    #[inline]
    fn norm(v: u64, signed: bool, size: u8) -> Int {
        let size = if size == 0 { 8 } else { size };
        Int {
            v: norm_value(v, signed, size),
            signed,
            size,
        }
    }

    /// The type C gives the integer literal `v`: int, unsigned int, long or unsigned long.
    #[inline]
    fn of(v: u64) -> Int {
        let (signed, size) = if v <= i32::MAX as u64 {
            (true, 4)
        } else if v <= u32::MAX as u64 {
            (false, 4)
        } else {
            (v <= i64::MAX as u64, 8)
        };
        Int { v, signed, size }
    }

    fn val(self) -> Value<'static> {
        Value::Int {
            v: self.v,
            signed: self.signed,
            size: self.size,
        }
    }
}

fn norm(v: u64, signed: bool, size: u8) -> Value<'static> {
    Int::norm(v, signed, size).val()
}

/// `v` as a C integer of `size` bytes (0: 8): truncated, sign-extended when signed.
#[inline]
fn norm_value(v: u64, signed: bool, size: u8) -> u64 {
    match size {
        0 | 8.. => v,
        s => {
            let bits = s as u32 * 8;
            let t = v & ((1u64 << bits) - 1);
            if signed {
                sign_extend(t, s as usize) as u64
            } else {
                t
            }
        }
    }
}

fn int_of(v: u64) -> Value<'static> {
    Int::of(v).val()
}

impl Program {
    pub(crate) fn compile(schema: &Schema) -> Program {
        let kind = match compile_kind(schema) {
            Ok(k) => k,
            Err(e) => Kind::Fallback(e),
        };
        let as_written = match kind {
            Kind::SyscallEnter { .. } | Kind::SyscallExit { .. } => {
                compile_printf(schema).ok().map(Box::new)
            }
            _ => None,
        };
        let mut program = Program {
            kind,
            as_written,
            ..Program::default()
        };
        number_const_tables(&mut program, schema);
        program
    }

    pub(crate) fn fallback_reason(&self) -> Option<&str> {
        match &self.kind {
            Kind::Fallback(r) => Some(r),
            Kind::Printf {
                unknown: Some(r), ..
            } => Some(r),
            _ => self.runtime_reason.get().map(|s| s.as_str()),
        }
    }

    /// Whether the kernel writes `name: ` before this event's text (its own printers for
    /// syscalls and ftrace-internal events do not).
    /// The program a style prints with: the print fmt as written for trace-cmd style
    /// when the kernel prints the event with its own code.
    #[inline]
    fn kind_for(&self, style: PrintStyle) -> &Kind {
        match (&self.as_written, style) {
            (Some(k), PrintStyle::TraceCmd) => k,
            _ => &self.kind,
        }
    }

    pub(crate) fn prints_name(&self) -> bool {
        !matches!(
            self.kind,
            Kind::FtracePrint { .. }
                | Kind::FtraceBprint { .. }
                | Kind::FtraceBputs { .. }
                | Kind::FtraceFunction { .. }
                | Kind::FtraceRawData { .. }
                | Kind::FtraceKernelStack { .. }
                | Kind::FtraceUserStack { .. }
                | Kind::SyscallEnter { .. }
                | Kind::SyscallExit { .. }
        )
    }

    pub(crate) fn fallback_count(&self) -> u64 {
        self.fallbacks.load(Ordering::Relaxed)
    }
}

fn compile_kind(schema: &Schema) -> Result<Kind, String> {
    let idx = |n: &str| {
        schema
            .field_index(n)
            .ok_or_else(|| format!("no field `{n}`"))
    };
    if schema.system == "ftrace" {
        match schema.name.as_str() {
            "print" => {
                return Ok(Kind::FtracePrint {
                    ip: idx("ip")?,
                    buf: idx("buf")?,
                })
            }
            "bprint" => {
                return Ok(Kind::FtraceBprint {
                    ip: idx("ip")?,
                    fmt: idx("fmt")?,
                    buf: idx("buf")?,
                })
            }
            "bputs" => {
                return Ok(Kind::FtraceBputs {
                    ip: idx("ip")?,
                    str: idx("str")?,
                })
            }
            "function" => {
                return Ok(Kind::FtraceFunction {
                    ip: idx("ip")?,
                    parent: idx("parent_ip")?,
                })
            }
            "raw_data" => {
                return Ok(Kind::FtraceRawData {
                    id: idx("id")?,
                    buf: idx("buf")?,
                })
            }
            "kernel_stack" => {
                return Ok(Kind::FtraceKernelStack {
                    caller: idx("caller")?,
                })
            }
            "user_stack" => {
                return Ok(Kind::FtraceUserStack {
                    caller: idx("caller")?,
                })
            }
            _ => {}
        }
    }
    if schema.system == "syscalls" {
        if let Some(call) = schema.name.strip_prefix("sys_enter_") {
            let args = (0..schema.fields.len())
                .filter(|&i| {
                    !schema.fields[i].name.starts_with("common_")
                        && schema.fields[i].name != "__syscall_nr"
                })
                .collect();
            return Ok(Kind::SyscallEnter {
                call: format!("sys_{call}"),
                args,
            });
        }
        if let Some(call) = schema.name.strip_prefix("sys_exit_") {
            return Ok(Kind::SyscallExit {
                call: format!("sys_{call}"),
                ret: idx("ret")?,
            });
        }
    }
    compile_printf(schema)
}

/// The `print fmt` compiled as written (what libtraceevent prints for every event).
fn compile_printf(schema: &Schema) -> Result<Kind, String> {
    let toks = lex(&schema.print_fmt)?;
    let mut p = Parser::new(&toks, schema.long_size, |n| schema.field_index(n));
    let mut fmt = p.format_string()?;
    // The kernel's uprobe printer writes the probed address as `(0x...)` where the format
    // file says `(%lx)`.
    if schema.system == "uprobes" {
        if let Some(rest) = fmt.strip_prefix(b"(%lx <- %lx)") {
            fmt = [&b"(0x%lx <- 0x%lx)"[..], rest].concat();
        } else if let Some(rest) = fmt.strip_prefix(b"(%lx)") {
            fmt = [&b"(0x%lx)"[..], rest].concat();
        }
    }
    let segs = parse_format(&fmt, schema.long_size)?;
    let mut args = Vec::new();
    while p.eat(",") {
        args.push(p.expr()?);
    }
    if !p.at_end() {
        return Err("unexpected text after the print fmt arguments".into());
    }
    let mut unknown = None;
    for a in &mut args {
        resolve_names(a, schema);
        check_expr(a)?;
        fold(a, schema);
        if unknown.is_none() {
            unknown = first_ident(a);
        }
    }
    let needed: usize = segs
        .iter()
        .map(|s| match s {
            Seg::Conv(c) => 1 + (c.width == -2) as usize + (c.prec == -2) as usize,
            Seg::Lit(_) => 0,
        })
        .sum();
    if needed > args.len() {
        return Err(format!(
            "the format has {needed} conversions but only {} arguments",
            args.len()
        ));
    }
    let plan = plan(&segs, &args, schema).map(|p| Plan::new(&segs, p));
    Ok(Kind::Printf {
        segs,
        args: Arc::new(args),
        unknown,
        plan,
    })
}

/// `__get_str(name)` and friends name their field without `REC->`.
fn resolve_names(e: &mut Expr, schema: &Schema) {
    match e {
        Expr::Call(name, args) => {
            let takes_field =
                name.starts_with("__get_") || name == "__print_dynamic_array" || name == "sizeof";
            for (n, a) in args.iter_mut().enumerate() {
                if n == 0 && takes_field {
                    if let Expr::Ident(f) = a {
                        if let Some(i) = schema.field_index(f) {
                            *a = Expr::Field(i);
                            continue;
                        }
                    }
                }
                resolve_names(a, schema);
            }
        }
        Expr::Unary(_, x) | Expr::Cast(_, x) | Expr::Member(x, _) => resolve_names(x, schema),
        Expr::Binary(_, a, b) | Expr::Index(a, b) => {
            resolve_names(a, schema);
            resolve_names(b, schema);
        }
        Expr::Cond(a, b, c) => {
            resolve_names(a, schema);
            resolve_names(b, schema);
            resolve_names(c, schema);
        }
        Expr::List(xs) => xs.iter_mut().for_each(|x| resolve_names(x, schema)),
        Expr::Block(decls, v) => {
            decls
                .iter_mut()
                .for_each(|(_, _, e)| resolve_names(e, schema));
            resolve_names(v, schema);
        }
        // Known constants are looked up when evaluating: the trace-cmd style reads them
        // the way libtraceevent does (see `PrintStyle`).
        Expr::Local(_)
        | Expr::Const(..)
        | Expr::Ident(_)
        | Expr::Num(_)
        | Expr::Str(_)
        | Expr::Field(_) => {}
    }
}

/// Reject, at compile time, names the evaluator would not know.
fn check_expr(e: &Expr) -> Result<(), String> {
    match e {
        Expr::Call(name, args) => {
            if !HELPERS.contains(&name.as_str()) {
                return Err(format!("unknown function `{name}`"));
            }
            args.iter().try_for_each(check_expr)
        }
        // Unknown to the kernel-style evaluator (it fails at run time), evaluated by the
        // trace-cmd style; see `PrintStyle`.
        Expr::Ident(_) => Ok(()),
        Expr::Member(_, name) => Err(format!("member access `.{name}` outside REC")),
        Expr::Unary(op, x) => {
            if *op == "&" {
                return Err("address-of `&` is not supported".into());
            }
            check_expr(x)
        }
        Expr::Binary(_, a, b) | Expr::Index(a, b) => {
            check_expr(a)?;
            check_expr(b)
        }
        Expr::Cond(a, b, c) => {
            check_expr(a)?;
            check_expr(b)?;
            check_expr(c)
        }
        Expr::Cast(_, x) => check_expr(x),
        Expr::List(xs) => xs.iter().try_for_each(check_expr),
        Expr::Local(_) => Ok(()),
        Expr::Block(decls, v) => {
            decls.iter().try_for_each(|(_, _, e)| check_expr(e))?;
            check_expr(v)
        }
        Expr::Num(_) | Expr::Const(..) | Expr::Str(_) | Expr::Field(_) => Ok(()),
    }
}

/// `unknown identifier `X`` for the first identifier left after name resolution.
fn first_ident(e: &Expr) -> Option<String> {
    match e {
        Expr::Ident(n) if super::constants::constant(n).is_none() => {
            Some(format!("unknown identifier `{n}`"))
        }
        Expr::Ident(_) => None,
        Expr::Unary(_, x) | Expr::Cast(_, x) | Expr::Member(x, _) => first_ident(x),
        Expr::Binary(_, a, b) | Expr::Index(a, b) => first_ident(a).or_else(|| first_ident(b)),
        Expr::Cond(a, b, c) => first_ident(a)
            .or_else(|| first_ident(b))
            .or_else(|| first_ident(c)),
        Expr::Call(_, xs) | Expr::List(xs) => xs.iter().find_map(first_ident),
        Expr::Block(d, v) => d
            .iter()
            .find_map(|(_, _, x)| first_ident(x))
            .or_else(|| first_ident(v)),
        Expr::Num(_) | Expr::Const(..) | Expr::Str(_) | Expr::Field(_) | Expr::Local(_) => None,
    }
}

/// Whether an expression is a number known at compile time.
fn is_const(e: &Expr) -> bool {
    matches!(e, Expr::Num(_) | Expr::Const(..))
}

/// Fold constant subexpressions once (the gfp flag tables are long constant
/// expressions the hot path would otherwise evaluate for every record).
fn fold(e: &mut Expr, schema: &Schema) {
    let foldable = match e {
        // A pointer cast keeps its element size for pointer arithmetic.
        Expr::Cast(ty, x) => {
            fold(x, schema);
            is_const(x) && !ty.pointer
        }
        Expr::Unary(_, x) => {
            fold(x, schema);
            is_const(x)
        }
        Expr::Binary(op, a, b) => {
            fold(a, schema);
            // Shapes the trace-cmd style reads differently (see `eval_rotated`) keep
            // their operators: only their operands are folded.
            if looser_right(op, b) {
                let Expr::Binary(o, ..) = &**b else {
                    unreachable!()
                };
                let level = super::expr::prec(o);
                fold_chain(b, level, schema);
                false
            } else if let Expr::Cond(c, t, f) = &mut **b {
                fold(c, schema);
                fold(t, schema);
                fold(f, schema);
                false
            } else {
                fold(b, schema);
                is_const(a) && is_const(b)
            }
        }
        Expr::Cond(a, b, c) => {
            fold(a, schema);
            fold(b, schema);
            fold(c, schema);
            is_const(a) && is_const(b) && is_const(c)
        }
        Expr::Index(a, b) => {
            fold(a, schema);
            fold(b, schema);
            false
        }
        Expr::Call(_, args) | Expr::List(args) => {
            args.iter_mut().for_each(|a| fold(a, schema));
            false
        }
        Expr::Block(decls, v) => {
            decls.iter_mut().for_each(|(_, _, x)| fold(x, schema));
            fold(v, schema);
            false
        }
        Expr::Member(x, _) => {
            fold(x, schema);
            false
        }
        Expr::Num(_)
        | Expr::Const(..)
        | Expr::Str(_)
        | Expr::Field(_)
        | Expr::Ident(_)
        | Expr::Local(_) => false,
    };
    if !foldable {
        return;
    }
    let env = PrintEnv::default();
    let cx = Evaluator::new(schema, &[], &env);
    if let Ok(Value::Int { v, signed, size }) = cx.eval(e) {
        *e = Expr::Const(v, signed, size);
    }
}

/// Fold the operands of a chain of same-precedence binary operators, keeping the chain.
fn fold_chain(e: &mut Expr, level: Option<u8>, schema: &Schema) {
    match e {
        Expr::Binary(o, l, r) if super::expr::prec(o) == level => {
            fold_chain(l, level, schema);
            fold(r, schema);
        }
        other => fold(other, schema),
    }
}

/// Everything an evaluation needs about one record.
struct Evaluator<'a, 'e> {
    schema: &'a Schema,
    data: &'a [u8],
    env: &'e PrintEnv<'e>,
    /// Integer locals of statement expressions: (value, signed, size).
    /// (Grown on first use: most formats have none, and every record makes an `Evaluator`.)
    locals: RefCell<Vec<(u64, bool, u8)>>,
}

impl Schema {
    /// Append the kernel's text for this event (what follows `name: ` in the `trace`
    /// file, without the newline) to `out`.
    ///
    /// Returns false when the `print fmt` could not be evaluated for this record and
    /// `field=value` pairs were written instead (counted per schema, see
    /// [`Schema::fallback_count`]).
    pub fn write_text(&self, rec: &Record, env: &PrintEnv, out: &mut Vec<u8>) -> bool {
        let start = out.len();
        let cx = Evaluator::new(self, rec.data, env);
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

    /// [`Schema::write_text`] through the general evaluator alone, without the plan made
    /// at compile time: the reference the plans are tested against.
    #[doc(hidden)]
    pub fn write_text_unplanned(&self, rec: &Record, env: &PrintEnv, out: &mut Vec<u8>) -> bool {
        let start = out.len();
        let res = Evaluator::new(self, rec.data, env).run(self.program.kind_for(env.style), out);
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

    /// How many records of this event were printed as `field=value` pairs because the
    /// `print fmt` could not be evaluated.
    pub fn fallback_count(&self) -> u64 {
        self.program.fallback_count()
    }

    /// Append every non-common field as `name=value`, separated by spaces: the text used
    /// when the `print fmt` cannot be evaluated.
    pub fn write_fields(&self, rec: &Record, env: &PrintEnv, out: &mut Vec<u8>) {
        let be = env.big_endian;
        let mut first = true;
        for f in self
            .fields
            .iter()
            .filter(|f| !f.name.starts_with("common_"))
        {
            if !first {
                out.push(b' ');
            }
            first = false;
            crate::bytes::put(out, f.name.as_bytes());
            out.push(b'=');
            write_field_value(f, rec.data, be, out);
        }
    }
}

impl Schema {
    /// libtraceevent's raw listing (`trace-cmd report -R`): ` name=value` for every
    /// non-common field. A field that a print-fmt conversion takes as its whole argument
    /// (casts aside) is printed with that conversion, with `0x` before it when the format
    /// text right before ends in `0x`; the search for that conversion starts after the one
    /// the previous field used. Other fields print raw: strings as text (or `ARRAY[xx, ..]`
    /// when not printable), pointers and longs in hex, signed 16- and 8-bit values as
    /// `%2d`/`%1d`.
    pub fn write_fields_tracecmd(&self, rec: &Record, env: &PrintEnv, out: &mut Vec<u8>) {
        let cx = Evaluator::new(self, rec.data, env);
        // (segment index, field index of its argument, spec, literal-before-ends-in-0x)
        let mut convs: Vec<(Option<usize>, Spec, bool, &Expr)> = Vec::new();
        let kind = self
            .program
            .as_written
            .as_deref()
            .unwrap_or(&self.program.kind);
        if let Kind::Printf { segs, args, .. } = kind {
            let mut next = 0;
            let mut has_0x = false;
            for seg in segs {
                match seg {
                    Seg::Lit(b) => has_0x = b.len() > 1 && b.ends_with(b"0x"),
                    Seg::Conv(spec) => {
                        next += (spec.width == -2) as usize + (spec.prec == -2) as usize;
                        let Some(arg) = args.get(next) else { break };
                        next += 1;
                        let mut a = arg;
                        while let Expr::Cast(_, x) = a {
                            a = x;
                        }
                        let field = if let Expr::Field(i) = a {
                            Some(*i)
                        } else {
                            None
                        };
                        let plain = spec.width != -2 && spec.prec != -2;
                        convs.push((field.filter(|_| plain), *spec, has_0x, arg));
                        has_0x = false;
                    }
                }
            }
        }
        // Where the search for the next field's conversion starts. libtraceevent walks a
        // list of pieces and continues after the last match; when that match was the very
        // last piece (no literal text after it), the list pointer becomes NULL and every
        // later field prints raw.
        let ends_with_conv = matches!(
            kind,
            Kind::Printf { segs, .. } if matches!(segs.last(), Some(Seg::Conv(_)))
        );
        let mut start = Some(0);
        for (i, f) in self.fields.iter().enumerate() {
            if f.name.starts_with("common_") {
                continue;
            }
            out.push(b' ');
            crate::bytes::put(out, f.name.as_bytes());
            out.push(b'=');
            let is_array = !matches!(f.kind, FieldKind::Scalar | FieldKind::Pointer);
            let found = match start {
                Some(start) if !is_array && !convs.is_empty() => (0..convs.len())
                    .map(|k| (start + k) % convs.len())
                    .find(|&k| convs[k].0 == Some(i)),
                _ => None,
            };
            if let Some(k) = found {
                let (_, spec, has_0x, arg) = &convs[k];
                let mark = out.len();
                if *has_0x {
                    crate::bytes::put(out, b"0x");
                }
                if cx.conv(spec, arg, out).is_ok() {
                    start = (k + 1 < convs.len() || !ends_with_conv).then_some(k + 1);
                    continue;
                }
                out.truncate(mark);
            }
            raw_field(f, rec.data, env, out);
        }
    }
}

/// libtraceevent's `print_field_raw`.
fn raw_field(f: &Field, data: &[u8], env: &PrintEnv, out: &mut Vec<u8>) {
    let be = env.big_endian;
    let is_string = f.type_name.contains("char");
    match f.kind {
        FieldKind::Scalar | FieldKind::Pointer => {
            let v = f.read_u64(data, be).unwrap_or(0);
            let is_long = f.type_name.contains("long");
            let is_pointer = f.kind == FieldKind::Pointer || f.type_name.contains('*');
            if is_pointer || (!f.signed && is_long) {
                crate::bytes::put(out, b"0x");
                push_hex(out, v, false);
            } else if f.signed {
                match f.size {
                    4 if is_long => {
                        crate::bytes::put(out, b"0x");
                        push_hex(out, v & 0xffff_ffff, false);
                    }
                    4 | 2 | 1 => push_i64(out, sign_extend(v, f.size)),
                    _ => push_i64(out, v as i64),
                }
            } else {
                push_u64(out, v);
            }
        }
        _ => {
            let b = f.bytes(data, be).unwrap_or(&[]);
            let printable = {
                let t = until_nul(b);
                t.iter().all(|c| {
                    c.is_ascii_graphic() || *c == b' ' || (*c as char).is_ascii_whitespace()
                }) && b.get(t.len()).map_or(true, |z| *z == 0)
            };
            if is_string && printable {
                crate::bytes::put(out, until_nul(b));
            } else {
                crate::bytes::put(out, b"ARRAY[");
                for (n, x) in b.iter().enumerate() {
                    if n != 0 {
                        crate::bytes::put(out, b", ");
                    }
                    push_hex2(out, *x);
                }
                out.push(b']');
            }
        }
    }
}

/// One field's value in the fallback and JSON-ish form: integers in decimal (pointers in
/// hex), strings as text, other arrays as `{0x..,0x..}`.
pub(crate) fn write_field_value(f: &Field, data: &[u8], be: bool, out: &mut Vec<u8>) {
    let is_char = f.type_name.contains("char");
    match f.kind {
        FieldKind::Scalar => match f.read_u64(data, be) {
            Some(v) if f.signed => push_i64(out, sign_extend(v, f.size)),
            Some(v) => push_u64(out, v),
            None => crate::bytes::put(out, b"<short>"),
        },
        FieldKind::Pointer => match f.read_u64(data, be) {
            Some(v) => {
                crate::bytes::put(out, b"0x");
                push_hex(out, v, false);
            }
            None => crate::bytes::put(out, b"<short>"),
        },
        FieldKind::CharArray { .. } => {
            crate::bytes::put(out, f.str(data, be).unwrap_or(b"<short>"))
        }
        _ if is_char => crate::bytes::put(out, f.str(data, be).unwrap_or(b"<bad data_loc>")),
        FieldKind::Array { elem_size, .. }
        | FieldKind::DataLoc { elem_size }
        | FieldKind::RelLoc { elem_size }
        | FieldKind::DynamicArray { elem_size } => match f.bytes(data, be) {
            Some(b) => print_array(out, b, elem_size, b.len() / elem_size.max(1), be),
            None => crate::bytes::put(out, b"<bad data_loc>"),
        },
    }
}

impl<'a, 'e> Evaluator<'a, 'e> {
    fn be(&self) -> bool {
        self.env.big_endian
    }

    fn long(&self) -> u8 {
        self.schema.long_size as u8
    }

    fn new(schema: &'a Schema, data: &'a [u8], env: &'e PrintEnv<'e>) -> Evaluator<'a, 'e> {
        Evaluator {
            schema,
            data,
            env,
            locals: Default::default(),
        }
    }

    /// A program through the general evaluator (`Printf` without its plan).
    fn run(&self, kind: &'a Kind, out: &mut Vec<u8>) -> EvalResult<()> {
        match kind {
            Kind::Printf { segs, args, .. } => self.printf(segs, args, out),
            Kind::FtracePrint { ip, buf } => self.ftrace_print(*ip, *buf, out),
            Kind::FtraceBprint { ip, fmt, buf } => self.ftrace_bprint(*ip, *fmt, *buf, out),
            Kind::FtraceBputs { ip, str } => self.ftrace_bputs(*ip, *str, out),
            Kind::FtraceFunction { ip, parent } => self.ftrace_function(*ip, *parent, out),
            Kind::FtraceKernelStack { caller } => self.kernel_stack(*caller, out),
            Kind::FtraceUserStack { caller } => self.user_stack(*caller, out),
            Kind::FtraceRawData { id, buf } => self.field_u64(*id).and_then(|v| {
                crate::bytes::put(out, b"# ");
                push_hex(out, v, false);
                crate::bytes::put(out, b" buf:");
                let b = self.schema.fields[*buf]
                    .bytes(self.data, self.be())
                    .ok_or("buf outside the payload")?;
                for byte in b {
                    out.push(b' ');
                    push_hex2(out, *byte);
                }
                Ok(())
            }),
            Kind::SyscallEnter { call, args } => self.sys_enter(call, args, out),
            Kind::SyscallExit { call, ret } => self.field_u64(*ret).map(|v| {
                crate::bytes::put(out, call.as_bytes());
                crate::bytes::put(out, b" -> 0x");
                push_hex(out, v, false);
            }),
            Kind::Fallback(_) | Kind::Empty => Err(String::new()),
        }
    }

    fn printf(&self, segs: &'a [Seg], args: &'a [Expr], out: &mut Vec<u8>) -> EvalResult<()> {
        let mut next = 0;
        let mut take = || -> EvalResult<&'a Expr> {
            let a = args.get(next).ok_or("too few arguments")?;
            next += 1;
            Ok(a)
        };
        for seg in segs {
            match seg {
                Seg::Lit(b) => crate::bytes::put(out, b),
                Seg::Conv(spec) => {
                    let mut spec = *spec;
                    if spec.width == -2 {
                        let w = self.int(take()?)? as i32;
                        if w < 0 {
                            spec.left = true;
                        }
                        spec.width = w.unsigned_abs().min(4096) as i32;
                    }
                    if spec.prec == -2 {
                        let p = self.int(take()?)? as i32;
                        spec.prec = if p < 0 { -1 } else { p.min(4096) };
                    }
                    let arg = take()?;
                    self.conv(&spec, arg, out)?;
                }
            }
        }
        Ok(())
    }

    fn conv(&self, spec: &Spec, arg: &'a Expr, out: &mut Vec<u8>) -> EvalResult<()> {
        match spec.conv {
            b's' => {
                // Helpers that make text write straight into `out` when nothing pads them
                // (also through `?:`, as in sched_switch's prev_state).
                if spec.width < 0 && spec.prec < 0 {
                    let mut e = arg;
                    while let Expr::Cond(c, t, f) = e {
                        let yes = match self.scalar_truth(c) {
                            Some(v) => v?,
                            None => truthy(&self.eval(c)?),
                        };
                        e = if yes { t } else { f };
                    }
                    match e {
                        Expr::Call(name, args) if is_text_helper(name) => {
                            return self.text_helper(name, args, out);
                        }
                        // A string literal (`REC->accounted ? "true" : "false"`).
                        Expr::Str(s) => {
                            crate::bytes::put(out, until_nul(s));
                            return Ok(());
                        }
                        _ => {}
                    }
                    return self.conv_str(spec, e, out);
                }
                self.conv_str(spec, arg, out)
            }
            b'p' => {
                let v = self.eval(arg)?;
                pointer::format(self.env, spec, &v.as_ptr_arg(), self.long(), out)
            }
            _ => {
                let v = self.int(arg)?;
                self.int_conv(spec, v, out);
                Ok(())
            }
        }
    }

    /// An integer conversion of `v`.
    #[inline]
    fn int_conv(&self, spec: &Spec, v: u64, out: &mut Vec<u8>) {
        if self.env.style == PrintStyle::TraceCmd && spec.alt && int_is_zero(v, spec, self.long()) {
            // glibc prints `%#x` of 0 as `0`, the kernel as `0x0`.
            let plain = Spec {
                alt: false,
                ..*spec
            };
            fmt_int(out, v, &plain, self.long());
        } else {
            fmt_int(out, v, spec, self.long());
        }
    }

    /// [`Evaluator::printf`] over a plan made at compile time.
    fn printf_planned(
        &self,
        segs: &'a [Seg],
        args: &'a [Expr],
        plan: &Plan,
        out: &mut Vec<u8>,
    ) -> EvalResult<()> {
        for (before, piece) in &plan.steps {
            before.put(out);
            match piece {
                Piece::Lit(i) => {
                    if let Seg::Lit(b) = &segs[*i] {
                        crate::bytes::put(out, b);
                    }
                }
                Piece::Int { field, spec, cast } => {
                    let v = self.int_cast(self.field_int(*field)?, *cast);
                    self.int_conv(spec, v, out);
                }
                Piece::Ptr {
                    read,
                    cast,
                    spec,
                    ext,
                } => {
                    let mut v = self.read(read)?;
                    if *cast {
                        v = norm_value(v, false, self.long());
                    }
                    // The kernel-style forms every trace is full of, without
                    // `pointer::format`'s dispatch: what its arms for them write.
                    if self.env.style == PrintStyle::Kernel {
                        match ext {
                            0 | b'x' | b'K' | b'X' => {
                                pointer::plain(v, self.long(), out);
                                continue;
                            }
                            b'S' | b's' | b'F' | b'f' | b'B' => {
                                pointer::symbol(self.env, v, *ext, out);
                                continue;
                            }
                            _ => {}
                        }
                    }
                    pointer::format(self.env, spec, &pointer::PtrArg::Addr(v), self.long(), out)?;
                }
                Piece::Str { field, spec } => {
                    let f = &self.schema.fields[*field];
                    let b = f.bytes(self.data, self.be()).ok_or_else(|| {
                        if f.is_dynamic() {
                            "bad __data_loc".to_string()
                        } else {
                            format!("field `{}` lies outside the payload", f.name)
                        }
                    })?;
                    fmt_str(out, until_nul(b), spec);
                }
                Piece::Elem { field, index, spec } => {
                    // As the evaluator reads `REC->array[i]` (see `Expr::Index`).
                    let f = &self.schema.fields[*field];
                    let FieldKind::Array { elem_size, .. } = f.kind else {
                        return Err("an indexed field is not an array".into());
                    };
                    let b = f
                        .bytes(self.data, self.be())
                        .ok_or_else(|| format!("field `{}` lies outside the payload", f.name))?;
                    let el = (elem_size as u8).max(1) as usize;
                    let raw =
                        read_elem(b, *index, el, self.be()).ok_or("array index past the data")?;
                    let v = if el < 4 {
                        raw
                    } else {
                        norm_value(raw, false, el as u8)
                    };
                    self.int_conv(spec, v, out);
                }
                Piece::General { spec, arg } => self.conv(spec, &args[*arg], out)?,
                Piece::Table {
                    src,
                    zero,
                    flags,
                    wide,
                    delim,
                    entries,
                    arg,
                    spec,
                } => {
                    let style = (self.env.style == PrintStyle::TraceCmd) as usize;
                    let table = &entries[style];
                    let v = match src {
                        TableSource::Field(r) => self.read(r)?,
                        TableSource::IntExpr(c) => {
                            match c[style].as_ref().and_then(|c| self.operand(c)) {
                                Some(i) => i.v,
                                // No calc for this style, or a record it cannot settle.
                                None => {
                                    self.conv(spec, &args[*arg], out)?;
                                    continue;
                                }
                            }
                        }
                    };
                    if let (0, Some(z)) = (v, zero) {
                        crate::bytes::put(out, z);
                        continue;
                    }
                    let v = v & self.table_mask(*wide);
                    let start = out.len();
                    let known = table.known.iter().map(|(m, l)| Ok((*m, &**l)));
                    let settled = if *flags {
                        write_flags(out, v, delim, known, table.tail)?
                    } else {
                        write_symbol(out, v, self.table_mask(*wide), known, table.tail)?
                    };
                    if !settled {
                        // An entry the plan could not read comes next: the evaluator's turn.
                        out.truncate(start);
                        self.conv(spec, &args[*arg], out)?;
                    }
                }
                Piece::IntExpr {
                    calc,
                    how,
                    spec,
                    arg,
                } => {
                    let Some(c) = &calc[(self.env.style == PrintStyle::TraceCmd) as usize] else {
                        self.conv(spec, &args[*arg], out)?;
                        continue;
                    };
                    // A record the IntExpr cannot settle (a field past the payload, a division
                    // by zero) goes through the evaluator, which says why it fails.
                    let Some(Int { v, .. }) = self.operand(c) else {
                        self.conv(spec, &args[*arg], out)?;
                        continue;
                    };
                    match how {
                        IntOutput::Int(Some((len, conv))) => plain_int(out, v, *len, *conv),
                        IntOutput::Int(None) => self.int_conv(spec, v, out),
                        IntOutput::Ptr => pointer::format(
                            self.env,
                            spec,
                            &pointer::PtrArg::Addr(v),
                            self.long(),
                            out,
                        )?,
                        IntOutput::KStr => self.kernel_str(spec, v, out)?,
                        IntOutput::YesNo(yes, no) => {
                            let s = if v != 0 { yes } else { no };
                            if spec.width < 0 && spec.prec < 0 {
                                crate::bytes::put(out, s);
                            } else {
                                fmt_str(out, s, spec);
                            }
                        }
                    }
                }
                Piece::FieldYesNo {
                    read,
                    mask,
                    yes,
                    no,
                } => {
                    // `scalar_truth`: the value `field_int` gives, ANDed with the mask.
                    let v = self.read(read)?;
                    let yes_no = if v & mask != 0 { yes } else { no };
                    crate::bytes::put(out, yes_no);
                }
                Piece::Plain {
                    read,
                    cast,
                    len,
                    conv,
                } => {
                    // `field_int`, the cast as `Int` applies it, then `fmt_int`'s plain case.
                    let v = self.read(read)?;
                    plain_int(out, self.int_cast(v, *cast), *len, *conv);
                }
            }
        }
        plan.tail.put(out);
        Ok(())
    }

    /// `v` after an integer cast of a plan, as [`Evaluator::cast`] converts an integer:
    /// (pointer, signed, size).
    #[inline]
    fn int_cast(&self, v: u64, cast: Option<(bool, bool, u8)>) -> u64 {
        match cast {
            Some((true, _, _)) => norm_value(v, false, self.long()),
            Some((false, signed, size)) if size != 0 => norm_value(v, signed, size),
            _ => v,
        }
    }

    /// The integer value [`Evaluator::field`] gives a scalar or pointer field.
    #[inline]
    fn field_int(&self, i: usize) -> EvalResult<u64> {
        let f = &self.schema.fields[i];
        let v = f
            .read_u64(self.data, self.be())
            .ok_or_else(|| format!("field `{}` lies outside the payload", f.name))?;
        Ok(match f.kind {
            FieldKind::Scalar if f.size < 4 => {
                if f.signed {
                    sign_extend(v, f.size) as u64
                } else {
                    v
                }
            }
            FieldKind::Scalar => norm_value(v, f.signed, f.size as u8),
            _ => norm_value(v, false, f.size as u8),
        })
    }

    fn conv_str(&self, spec: &Spec, arg: &'a Expr, out: &mut Vec<u8>) -> EvalResult<()> {
        {
            {
                match self.eval(arg)? {
                    Value::Bytes(b, _) => fmt_str(out, until_nul(b), spec),
                    Value::Text(t) => fmt_str(out, &t, spec),
                    Value::Int { v, .. } => return self.kernel_str(spec, v, out),
                }
                Ok(())
            }
        }
    }

    /// `%s` of a kernel address: `(null)` for 0, else the constant kernel string there
    /// (`tracepoint_string()`, `__func__`), which the kernel lists in printk_formats.
    fn kernel_str(&self, spec: &Spec, v: u64, out: &mut Vec<u8>) -> EvalResult<()> {
        if v == 0 {
            fmt_str(out, b"(null)", spec);
            return Ok(());
        }
        match self.env.printk.and_then(|p| p.get(v)) {
            Some(s) => {
                fmt_str(out, s.as_bytes(), spec);
                Ok(())
            }
            None => Err(format!(
                "%s of kernel address {v:#x}, not in printk_formats"
            )),
        }
    }

    fn int(&self, e: &'a Expr) -> EvalResult<u64> {
        if let Some(v) = self.scalar_field(e) {
            return v;
        }
        match self.eval(e)? {
            Value::Int { v, .. } => Ok(v),
            Value::Bytes(..) | Value::Text(_) => Err("a string used as a number".into()),
        }
    }

    /// The value of `e` when it is a scalar or pointer field, read without the evaluator:
    /// what [`Evaluator::field`] would give (see [`Evaluator::field_int`]).
    #[inline]
    fn scalar_field(&self, e: &Expr) -> Option<EvalResult<u64>> {
        match e {
            Expr::Field(i)
                if matches!(
                    self.schema.fields[*i].kind,
                    FieldKind::Scalar | FieldKind::Pointer
                ) =>
            {
                Some(self.field_int(*i))
            }
            _ => None,
        }
    }

    /// Whether `e` is true, without the evaluator when it is a scalar field or a scalar
    /// field ANDed with a non-negative constant (`REC->flags & 0x0001u ? "M" : " "`):
    /// the C conversions cannot change whether such an AND is zero.
    #[inline]
    fn scalar_truth(&self, e: &Expr) -> Option<EvalResult<bool>> {
        match e {
            Expr::Binary("&", a, b) => {
                let c = match **b {
                    Expr::Num(n) => n,
                    Expr::Const(n, signed, size)
                        if !(signed && sign_extend(n, size as usize) < 0) =>
                    {
                        n
                    }
                    _ => return None,
                };
                Some(self.scalar_field(a)?.map(|v| v & c != 0))
            }
            _ => Some(self.scalar_field(e)?.map(|v| v != 0)),
        }
    }

    fn field(&self, i: usize) -> EvalResult<Value<'a>> {
        let f = &self.schema.fields[i];
        let be = self.be();
        let short = || format!("field `{}` lies outside the payload", f.name);
        Ok(match f.kind {
            FieldKind::Scalar if f.size < 4 => Value::Int {
                v: self.field_int(i)?,
                signed: true,
                size: 4,
            },
            FieldKind::Scalar => Value::Int {
                v: self.field_int(i)?,
                signed: f.signed,
                size: if f.size == 0 { 8 } else { f.size as u8 },
            },
            FieldKind::Pointer => Value::Int {
                v: self.field_int(i)?,
                signed: false,
                size: if f.size == 0 { 8 } else { f.size as u8 },
            },
            FieldKind::CharArray { .. } => {
                Value::Bytes(f.bytes(self.data, be).ok_or_else(short)?, 1)
            }
            FieldKind::Array { elem_size, .. }
            | FieldKind::DataLoc { elem_size }
            | FieldKind::RelLoc { elem_size }
            | FieldKind::DynamicArray { elem_size } => {
                Value::Bytes(f.bytes(self.data, be).ok_or_else(short)?, elem_size as u8)
            }
        })
    }

    fn dyn_field(&self, args: &'a [Expr]) -> EvalResult<&'a Field> {
        match args.first() {
            Some(Expr::Field(i)) => Ok(&self.schema.fields[*i]),
            // `__get_str(name)` names the field without REC->.
            _ => Err("helper argument is not a field".into()),
        }
    }

    fn eval(&self, e: &'a Expr) -> EvalResult<Value<'a>> {
        Ok(match e {
            Expr::Num(n) => int_of(*n),
            Expr::Const(v, signed, size) => Value::Int {
                v: *v,
                signed: *signed,
                size: *size,
            },
            Expr::Str(s) => Value::Bytes(s, 1),
            Expr::Field(i) => self.field(*i)?,
            Expr::Ident(n) if self.env.style == PrintStyle::TraceCmd => {
                // libtraceevent reads an atom it does not know with strtoull: 0.
                let _ = n;
                int_of(0)
            }
            Expr::Ident(n) => match super::constants::constant(n) {
                Some(v) => int_of(v),
                None => return Err(format!("unknown identifier `{n}`")),
            },
            Expr::Member(_, n) => return Err(format!("member `{n}`")),
            Expr::List(_) => return Err("a `{...}` table outside a helper".into()),
            Expr::Cast(ty, x) => self.cast(ty, self.eval(x)?),
            Expr::Local(slot) => {
                let (v, signed, size) =
                    self.locals.borrow().get(*slot).copied().unwrap_or_default();
                Value::Int { v, signed, size }
            }
            Expr::Block(decls, value) => {
                for (slot, ty, init) in decls {
                    let v = self.eval(init)?;
                    match self.cast(ty, v) {
                        Value::Int { v, signed, size } => {
                            let mut l = self.locals.borrow_mut();
                            if l.len() <= *slot {
                                l.resize(*slot + 1, Default::default());
                            }
                            l[*slot] = (v, signed, size);
                        }
                        _ => return Err("a statement-expression local that is not a number".into()),
                    }
                }
                self.eval(value)?
            }
            Expr::Unary(op, x) => {
                let v = self.eval(x)?;
                match (*op, v) {
                    ("!", v) => int_of(!truthy(&v) as u64),
                    ("*", Value::Bytes(b, el)) => {
                        let el = el.max(1) as usize;
                        let raw =
                            read_elem(b, 0, el, self.be()).ok_or("dereference past the data")?;
                        norm(raw, false, if el < 4 { 4 } else { el as u8 })
                    }
                    (_, Value::Int { v, signed, size }) => {
                        let (signed, size) = if size < 4 { (true, 4) } else { (signed, size) };
                        match *op {
                            "-" => norm(v.wrapping_neg(), signed, size),
                            "~" => norm(!v, signed, size),
                            "+" => norm(v, signed, size),
                            _ => return Err(format!("unary `{op}` on a number")),
                        }
                    }
                    _ => return Err(format!("unary `{op}` on a string")),
                }
            }
            Expr::Binary(op, a, b)
                if self.env.style == PrintStyle::TraceCmd && looser_right(op, b) =>
            {
                self.eval_rotated(op, a, b)?
            }
            // The same for a parenthesized `?:` on the right: `a OP (c ? t : f)` reads as
            // `(a OP c) ? t : f`.
            Expr::Binary(op, a, b)
                if self.env.style == PrintStyle::TraceCmd && matches!(**b, Expr::Cond(..)) =>
            {
                let Expr::Cond(c, t, f) = &**b else {
                    unreachable!()
                };
                let l = self.eval(a)?;
                let r = self.eval(c)?;
                let cond = match *op {
                    "&&" => truthy(&l) && truthy(&r),
                    "||" => truthy(&l) || truthy(&r),
                    _ => truthy(&binary(op, l, r)?),
                };
                if cond {
                    self.eval(t)?
                } else {
                    self.eval(f)?
                }
            }
            Expr::Binary(op, a, b) => {
                if *op == "&&" {
                    let r = truthy(&self.eval(a)?) && truthy(&self.eval(b)?);
                    return Ok(int_of(r as u64));
                }
                if *op == "||" {
                    let r = truthy(&self.eval(a)?) || truthy(&self.eval(b)?);
                    return Ok(int_of(r as u64));
                }
                let (av, mut bv) = (self.eval(a)?, self.eval(b)?);
                // Pointer arithmetic: `(struct page *)base + n` steps by the struct size
                // (libtraceevent ignores the cast and adds plain numbers).
                if self.env.style == PrintStyle::Kernel {
                    if let (
                        Expr::Cast(
                            CType {
                                pointer: true,
                                elem,
                                ..
                            },
                            _,
                        ),
                        "+" | "-",
                        Value::Int { v, signed, size },
                    ) = (&**a, *op, &bv)
                    {
                        if *elem > 1 {
                            bv = Value::Int {
                                v: v.wrapping_mul(*elem as u64),
                                signed: *signed,
                                size: (*size).max(8),
                            };
                        }
                    }
                }
                binary(op, av, bv)?
            }
            Expr::Cond(c, t, f) => {
                if truthy(&self.eval(c)?) {
                    self.eval(t)?
                } else {
                    self.eval(f)?
                }
            }
            Expr::Index(a, i) => {
                let idx = self.int(i)? as usize;
                match self.eval(a)? {
                    Value::Bytes(b, el) => {
                        let el = el.max(1) as usize;
                        let raw =
                            read_elem(b, idx, el, self.be()).ok_or("array index past the data")?;
                        if el < 4 {
                            Value::Int {
                                v: raw,
                                signed: true,
                                size: 4,
                            }
                        } else {
                            norm(raw, false, el as u8)
                        }
                    }
                    _ => return Err("indexing a number".into()),
                }
            }
            Expr::Call(name, args) => self.call(name, args)?,
        })
    }

    fn cast(&self, ty: &CType, v: Value<'a>) -> Value<'a> {
        match v {
            Value::Int { v, size, signed } => self.cast_int(ty, Int { v, signed, size }).val(),
            Value::Bytes(b, el) if ty.pointer => {
                Value::Bytes(b, if ty.elem == 0 { el } else { ty.elem })
            }
            other => other,
        }
    }

    /// An integer cast to `ty`: pointers take the kernel's long, small types compute as
    /// int (integer promotion).
    #[inline]
    fn cast_int(&self, ty: &CType, i: Int) -> Int {
        if ty.pointer {
            Int::norm(i.v, false, self.long())
        } else if ty.size == 0 {
            i
        } else {
            let r = Int::norm(i.v, ty.signed, ty.size);
            if r.size < 4 {
                Int {
                    v: r.v,
                    signed: true,
                    size: 4,
                }
            } else {
                r
            }
        }
    }

    fn call(&self, name: &str, args: &'a [Expr]) -> EvalResult<Value<'a>> {
        let be = self.be();
        match name {
            "__get_str" | "__get_rel_str" => {
                let f = self.dyn_field(args)?;
                Ok(Value::Bytes(
                    until_nul(f.bytes(self.data, be).ok_or("bad __data_loc")?),
                    1,
                ))
            }
            "__get_dynamic_array"
            | "__get_rel_dynamic_array"
            | "__get_sockaddr"
            | "__get_rel_sockaddr" => {
                let f = self.dyn_field(args)?;
                let el = match f.kind {
                    FieldKind::DataLoc { elem_size }
                    | FieldKind::RelLoc { elem_size }
                    | FieldKind::DynamicArray { elem_size } => elem_size,
                    _ => 1,
                };
                Ok(Value::Bytes(
                    f.bytes(self.data, be).ok_or("bad __data_loc")?,
                    el as u8,
                ))
            }
            "__get_dynamic_array_len" | "__get_rel_dynamic_array_len" => {
                let f = self.dyn_field(args)?;
                Ok(Value::Int {
                    v: f.bytes(self.data, be).ok_or("bad __data_loc")?.len() as u64,
                    signed: true,
                    size: 4,
                })
            }
            "__builtin_expect" => self.eval(args.first().ok_or("__builtin_expect()")?),
            "__builtin_constant_p" => Ok(int_of(0)),
            "is_signed_type" => Err("is_signed_type".into()),
            "sizeof" => match args.first() {
                Some(Expr::Field(i)) => Ok(int_of(self.schema.fields[*i].size as u64)),
                _ => Err("sizeof of an expression".into()),
            },
            "jiffies_to_msecs" | "jiffies_to_usecs" => {
                let hz = self
                    .env
                    .hz
                    .ok_or("jiffies conversion needs the kernel's HZ")?;
                let v = self.int(args.first().ok_or("jiffies_to_msecs()")?)?;
                let per = if name == "jiffies_to_msecs" {
                    1000
                } else {
                    1_000_000
                };
                Ok(norm(v.wrapping_mul(per) / hz.max(1) as u64, false, 4))
            }
            _ if is_text_helper(name) => {
                let mut t = Vec::new();
                self.text_helper(name, args, &mut t)?;
                Ok(Value::Text(t))
            }
            _ => Err(format!("unknown function `{name}`")),
        }
    }

    /// Helpers whose value is text the kernel prints into its trace_seq scratch buffer.
    fn text_helper(&self, name: &str, args: &'a [Expr], out: &mut Vec<u8>) -> EvalResult<()> {
        let be = self.be();
        match name {
            "__print_flags" | "__print_flags_u64" => {
                let flags = self.int(args.first().ok_or("__print_flags()")?)?
                    & self.table_mask(name == "__print_flags_u64");
                let delim = match args.get(1).ok_or("__print_flags delimiter")? {
                    Expr::Str(s) => until_nul(s),
                    e => match self.eval(e)? {
                        Value::Bytes(b, _) => until_nul(b),
                        _ => b"",
                    },
                };
                let (table, values) = self.table(&args[2..])?;
                write_flags(out, flags, delim, self.entries(table, &values), false)?;
                Ok(())
            }
            "__print_symbolic" | "__print_symbolic_u64" => {
                let mask = self.table_mask(name == "__print_symbolic_u64");
                let v = self.int(args.first().ok_or("__print_symbolic()")?)? & mask;
                let (table, values) = self.table(&args[1..])?;
                write_symbol(out, v, mask, self.entries(table, &values), false)?;
                Ok(())
            }
            "__print_hex" | "__print_hex_str" => {
                let b = self.ptr_bytes(args.first().ok_or("__print_hex()")?)?;
                let len = self.int(args.get(1).ok_or("__print_hex length")?)? as i32;
                let len = (len.max(0) as usize).min(b.len());
                let concat = name == "__print_hex_str";
                for (n, chunk) in b[..len].chunks(16).enumerate() {
                    if !concat && n != 0 {
                        out.push(b' ');
                    }
                    for (j, byte) in chunk.iter().enumerate() {
                        if !concat && j != 0 {
                            out.push(b' ');
                        }
                        push_hex2(out, *byte);
                    }
                }
                Ok(())
            }
            "__print_array" => {
                let b = self.ptr_bytes(args.first().ok_or("__print_array()")?)?;
                let count = self.int(args.get(1).ok_or("__print_array count")?)? as usize;
                let el = self.int(args.get(2).ok_or("__print_array size")?)? as usize;
                print_array(out, b, el, count, be);
                Ok(())
            }
            "__print_dynamic_array" => {
                let f = self.dyn_field(args)?;
                let el = self.int(args.get(1).ok_or("__print_dynamic_array size")?)? as usize;
                let b = f.bytes(self.data, be).ok_or("bad __data_loc")?;
                print_array(out, b, el, b.len() / el.max(1), be);
                Ok(())
            }
            "__get_bitmask" | "__get_rel_bitmask" | "__get_cpumask" | "__get_rel_cpumask" => {
                let f = self.dyn_field(args)?;
                let b = f.bytes(self.data, be).ok_or("bad __data_loc")?;
                pointer::bitmap(out, b, b.len() * 8, false, self.long() as usize, be);
                Ok(())
            }
            _ => Err(format!("unknown function `{name}`")),
        }
    }

    fn ptr_bytes(&self, e: &'a Expr) -> EvalResult<&'a [u8]> {
        match self.eval(e)? {
            Value::Bytes(b, _) => Ok(b),
            _ => Err("a helper needs a pointer into the payload".into()),
        }
    }

    /// libtraceevent's reading of `a OP (b OP2 c ...)` when OP2 binds looser than OP: it
    /// forgets the parentheses and computes `(a OP b) OP2 c ...` (so `flags & (M | D)`
    /// becomes `(flags & M) | D`). `trace-cmd report` prints what that computes.
    fn eval_rotated(&self, op: &'static str, a: &'a Expr, b: &'a Expr) -> EvalResult<Value<'a>> {
        let Expr::Binary(op2, ..) = b else {
            return Err("internal: not a binary expression".into());
        };
        let level = super::expr::prec(op2);
        let mut rest: Vec<(&'static str, &'a Expr)> = Vec::new();
        let mut node = b;
        while let Expr::Binary(o, l, r) = node {
            if super::expr::prec(o) != level {
                break;
            }
            rest.push((o, r));
            node = l;
        }
        rest.reverse();
        let apply = |o: &str, x: Value<'a>, y: Value<'a>| -> EvalResult<Value<'a>> {
            match o {
                "&&" => Ok(int_of((truthy(&x) && truthy(&y)) as u64)),
                "||" => Ok(int_of((truthy(&x) || truthy(&y)) as u64)),
                _ => binary(o, x, y),
            }
        };
        let mut v = apply(op, self.eval(a)?, self.eval(node)?)?;
        for (o, r) in rest {
            v = apply(o, v, self.eval(r)?)?;
        }
        Ok(v)
    }

    /// The entries of a flag/symbol table and their values: a constant table's computed
    /// at compile time, another's evaluated now.
    ///
    /// An entry that does not evaluate is None: the caller reports its error only if the
    /// loop reaches it, as evaluating entry by entry would.
    fn table(
        &self,
        entries: &'a [Expr],
    ) -> EvalResult<(&'a [Expr], std::borrow::Cow<'a, [Option<u64>]>)> {
        if let [Expr::Call(name, id)] = entries {
            if name == TABLE_REF {
                let table = match id.as_slice() {
                    [Expr::Num(id)] => self.schema.program.tables.get(*id as usize),
                    _ => None,
                }
                .ok_or("a flag/symbol table reference the program does not hold")?;
                let style = (self.env.style == PrintStyle::TraceCmd) as usize;
                return Ok((
                    &table.entries,
                    std::borrow::Cow::Borrowed(&table.values[style]),
                ));
            }
        }
        let values = entries
            .iter()
            .map(|e| self.table_entry(e).ok().map(|(v, _)| v))
            .collect();
        Ok((entries, std::borrow::Cow::Owned(values)))
    }

    /// The bits a table value keeps: a `long`'s, or all 64 for the `_u64` helpers.
    #[inline]
    fn table_mask(&self, wide: bool) -> u64 {
        if wide || self.long() != 4 {
            u64::MAX
        } else {
            u32::MAX as u64
        }
    }

    /// The (value, name) entries of a flag or symbol table, read one at a time up to its
    /// end in this style: a constant value (`values`) needs only its name, another entry
    /// is evaluated (and fails the record if it cannot be).
    fn entries<'s>(
        &'s self,
        table: &'a [Expr],
        values: &'s [Option<u64>],
    ) -> impl Iterator<Item = EvalResult<(u64, &'a [u8])>> + 's {
        table
            .iter()
            .zip(values)
            .take_while(|(e, _)| !self.table_end(e))
            .map(|(e, v)| match v {
                Some(v) => Ok((*v, table_label(e)?)),
                None => self.table_entry(e),
            })
    }

    /// The integer a planned piece reads (see [`FieldRead`]).
    #[inline(always)]
    fn read(&self, r: &FieldRead) -> EvalResult<u64> {
        let Some(raw) = read_uint(self.data, r.off, r.size as usize, self.be()) else {
            return Err(format!(
                "field `{}` lies outside the payload",
                self.schema.fields[r.field].name
            ));
        };
        Ok(if r.sext {
            sign_extend(raw, r.size as usize) as u64
        } else {
            raw
        })
    }

    /// The value of an [`IntExpr`]: what [`Evaluator::eval`] gives the expression it was made from,
    /// or None where the evaluator fails.
    fn int_expr(&self, c: &IntExpr) -> Option<Int> {
        Some(match c {
            IntExpr::Field(r) => self.int_expr_field(r)?,
            IntExpr::Const(i) => *i,
            IntExpr::Cast(ty, x) => self.cast_int(ty, self.operand(x)?),
            IntExpr::Unary(op, x) => {
                let Int { v, signed, size } = self.operand(x)?;
                let (signed, size) = if size < 4 { (true, 4) } else { (signed, size) };
                match op {
                    b'!' => Int::of((v == 0) as u64),
                    b'-' => Int::norm(v.wrapping_neg(), signed, size),
                    b'~' => Int::norm(!v, signed, size),
                    _ => Int::norm(v, signed, size),
                }
            }
            IntExpr::Bin { op, a, b, scale } => {
                let a = self.operand(a)?;
                let mut b = self.operand(b)?;
                if *scale > 1 {
                    b = Int {
                        v: b.v.wrapping_mul(*scale),
                        signed: b.signed,
                        size: b.size.max(8),
                    };
                }
                int_binary(*op, a, b)?
            }
            IntExpr::Logic(and, a, b) => {
                let l = self.operand(a)?.v != 0;
                let r = if l == *and {
                    self.operand(b)?.v != 0
                } else {
                    l
                };
                Int::of(r as u64)
            }
            IntExpr::Cond(c, t, f) => {
                if self.operand(c)?.v != 0 {
                    self.operand(t)?
                } else {
                    self.operand(f)?
                }
            }
            IntExpr::Chain(r, ops) => {
                let mut v = self.int_expr_field(r)?;
                for op in ops.iter() {
                    v = match op {
                        ChainOp::Cast(t) => self.cast_int(t, v),
                        ChainOp::Bin(o, k) => int_binary(*o, v, *k)?,
                    };
                }
                v
            }
        })
    }

    /// [`Evaluator::int_expr`] of an operand, with the leaves (constants and fields, most operands)
    /// taken without a call.
    #[inline(always)]
    fn operand(&self, c: &IntExpr) -> Option<Int> {
        match c {
            IntExpr::Const(i) => Some(*i),
            IntExpr::Field(r) => self.int_expr_field(r),
            c => self.int_expr(c),
        }
    }

    #[inline(always)]
    fn int_expr_field(&self, r: &FieldRead) -> Option<Int> {
        let raw = read_uint(self.data, r.off, r.size as usize, self.be())?;
        Some(Int {
            v: if r.sext {
                sign_extend(raw, r.size as usize) as u64
            } else {
                raw
            },
            signed: r.ty.0,
            size: r.ty.1,
        })
    }

    /// Whether `e` ends a flag or symbol table in this style: the kernel stops at the
    /// first entry whose name is NULL (`{ 0, NULL }` closes the gfp table).
    fn table_end(&self, e: &Expr) -> bool {
        self.env.style == PrintStyle::Kernel && null_label(e)
    }

    fn table_entry(&self, e: &'a Expr) -> EvalResult<(u64, &'a [u8])> {
        match e {
            Expr::List(items) if items.len() == 2 => {
                let v = match &items[0] {
                    // libtraceevent's table values: a few names it knows, else -1.
                    Expr::Ident(n) if self.env.style == PrintStyle::TraceCmd => {
                        tracecmd_flag_value(n)
                    }
                    Expr::Ident(n) => super::constants::constant(n)
                        .ok_or_else(|| format!("unknown identifier `{n}`"))?,
                    x => self.int(x)?,
                };
                match &items[1] {
                    Expr::Str(s) => Ok((v, s)),
                    _ => Err("a table entry's name is not a string".into()),
                }
            }
            _ => Err("a flag/symbol table entry is not `{ value, \"name\" }`".into()),
        }
    }

    fn ip_sym(&self, ip: u64, out: &mut Vec<u8>) {
        if ip == 0 {
            out.push(b'0');
            return;
        }
        let name = if self.env.style == PrintStyle::TraceCmd {
            pointer::tracecmd_function(self.env, ip).map(|(n, _)| n)
        } else {
            self.env.kallsyms.and_then(|k| k.lookup(ip)).map(|s| s.name)
        };
        match name {
            Some(n) => crate::bytes::put(out, n.as_bytes()),
            None => {
                crate::bytes::put(out, b"0x");
                let start = out.len();
                push_hex(out, ip, false);
                let n = out.len() - start;
                if n < 8 {
                    out.splice(start..start, std::iter::repeat(b'0').take(8 - n));
                }
            }
        }
    }

    fn field_u64(&self, i: usize) -> EvalResult<u64> {
        let f = &self.schema.fields[i];
        f.read_u64(self.data, self.be())
            .ok_or_else(|| format!("field `{}` lies outside the payload", f.name))
    }

    fn kernel_stack(&self, caller: usize, out: &mut Vec<u8>) -> EvalResult<()> {
        let f = &self.schema.fields[caller];
        let long = self.schema.long_size;
        let words = self
            .data
            .get(f.offset..)
            .ok_or("caller outside the payload")?;
        let all_ones = if long == 4 { u32::MAX as u64 } else { u64::MAX };
        crate::bytes::put(out, b"<stack trace>");
        for w in words.chunks_exact(long) {
            let ip = read_elem(w, 0, long, self.be()).unwrap_or(all_ones);
            if ip == all_ones {
                break;
            }
            crate::bytes::put(out, b"\n => ");
            // FTRACE_TRAMPOLINE_MARKER: INT_MAX stands for an ftrace trampoline.
            if ip == i32::MAX as u64 {
                crate::bytes::put(out, b"[FTRACE TRAMPOLINE]");
            } else {
                self.ip_sym(ip, out);
            }
        }
        Ok(())
    }

    fn user_stack(&self, caller: usize, out: &mut Vec<u8>) -> EvalResult<()> {
        let f = &self.schema.fields[caller];
        let long = self.schema.long_size;
        let words = f
            .bytes(self.data, self.be())
            .ok_or("caller outside the payload")?;
        crate::bytes::put(out, b"<user stack trace>");
        for w in words.chunks_exact(long) {
            let ip = read_elem(w, 0, long, self.be()).unwrap_or(0);
            if ip == 0 {
                break;
            }
            crate::bytes::put(out, b"\n =>  <");
            let start = out.len();
            push_hex(out, ip, false);
            let n = out.len() - start;
            if n < 2 * long {
                out.splice(start..start, std::iter::repeat(b'0').take(2 * long - n));
            }
            out.push(b'>');
        }
        Ok(())
    }

    fn sys_enter(&self, call: &str, args: &[usize], out: &mut Vec<u8>) -> EvalResult<()> {
        crate::bytes::put(out, call.as_bytes());
        out.push(b'(');
        for (n, &i) in args.iter().enumerate() {
            if n != 0 {
                crate::bytes::put(out, b", ");
            }
            crate::bytes::put(out, self.schema.fields[i].name.as_bytes());
            crate::bytes::put(out, b": ");
            let v = self.field_u64(i)?;
            if v < 10 {
                push_u64(out, v);
            } else {
                crate::bytes::put(out, b"0x");
                push_hex(out, v, false);
            }
        }
        out.push(b')');
        Ok(())
    }

    fn ftrace_print(&self, ip: usize, buf: usize, out: &mut Vec<u8>) -> EvalResult<()> {
        self.ip_sym(self.field_u64(ip)?, out);
        crate::bytes::put(out, b": ");
        let b = self.schema.fields[buf]
            .str(self.data, self.be())
            .ok_or("buf outside the payload")?;
        // The kernel's line ends with the buffer's own newline; the caller adds one.
        crate::bytes::put(out, b.strip_suffix(b"\n").unwrap_or(b));
        Ok(())
    }

    fn ftrace_bputs(&self, ip: usize, str: usize, out: &mut Vec<u8>) -> EvalResult<()> {
        self.ip_sym(self.field_u64(ip)?, out);
        crate::bytes::put(out, b": ");
        let addr = self.field_u64(str)?;
        let s = self
            .env
            .printk
            .and_then(|p| p.get(addr))
            .ok_or_else(|| format!("bputs string {addr:#x} is not in printk_formats"))?;
        let s = s.as_bytes();
        crate::bytes::put(out, s.strip_suffix(b"\n").unwrap_or(s));
        Ok(())
    }

    fn ftrace_function(&self, ip: usize, parent: usize, out: &mut Vec<u8>) -> EvalResult<()> {
        self.ip_sym(self.field_u64(ip)?, out);
        let parent = self.field_u64(parent)?;
        if parent != 0 {
            crate::bytes::put(out, b" <-");
            self.ip_sym(parent, out);
        }
        Ok(())
    }

    fn ftrace_bprint(
        &self,
        ip: usize,
        fmt: usize,
        buf: usize,
        out: &mut Vec<u8>,
    ) -> EvalResult<()> {
        self.ip_sym(self.field_u64(ip)?, out);
        crate::bytes::put(out, b": ");
        let addr = self.field_u64(fmt)?;
        let segs = self
            .env
            .printk
            .and_then(|p| p.format(addr, self.schema.long_size))
            .ok_or_else(|| format!("bprint format {addr:#x} is not in printk_formats"))??;
        let args = self.schema.fields[buf]
            .bytes(self.data, self.be())
            .ok_or("buf outside the payload")?;
        let start = out.len();
        bprintf(self.env, &segs, args, self.long(), out)?;
        if out.len() > start && out.last() == Some(&b'\n') {
            out.pop();
        }
        Ok(())
    }
}

/// Apply a format to the binary argument buffer `trace_printk` stores (each integer at its
/// natural alignment, 8-byte ones at 4; strings inline and NUL-terminated; `%p`
/// extensions that dereference memory already rendered to strings).
pub(crate) fn bprintf(
    env: &PrintEnv,
    segs: &[Seg],
    args: &[u8],
    long: u8,
    out: &mut Vec<u8>,
) -> EvalResult<()> {
    let be = env.big_endian;
    let mut pos = 0usize;
    let word = |pos: &mut usize, size: usize| -> EvalResult<u64> {
        let align = if size == 8 { 4 } else { size };
        *pos = pos.div_ceil(align) * align;
        let v = read_elem(args.get(*pos..).unwrap_or(&[]), 0, size, be)
            .ok_or("bprint arguments end early")?;
        *pos += size;
        Ok(v)
    };
    let string = |pos: &mut usize| -> &[u8] {
        let rest = args.get(*pos..).unwrap_or(&[]);
        let s = until_nul(rest);
        *pos += (s.len() + 1).min(rest.len());
        s
    };
    for seg in segs {
        match seg {
            Seg::Lit(b) => crate::bytes::put(out, b),
            Seg::Conv(spec) => {
                let mut spec = *spec;
                if spec.width == -2 {
                    let w = word(&mut pos, 4)? as u32 as i32;
                    if w < 0 {
                        spec.left = true;
                    }
                    spec.width = w.unsigned_abs().min(4096) as i32;
                }
                if spec.prec == -2 {
                    let p = word(&mut pos, 4)? as u32 as i32;
                    spec.prec = if p < 0 { -1 } else { p.min(4096) };
                }
                match spec.conv {
                    b's' => {
                        let s = string(&mut pos);
                        fmt_str(out, s, &spec);
                    }
                    b'p' => {
                        let ext = spec.ext();
                        let deref = !ext.is_empty()
                            && !matches!(
                                ext[0],
                                b'S' | b's' | b'F' | b'f' | b'x' | b'K' | b'e' | b'B'
                            );
                        if deref {
                            // Already rendered by the kernel when the event was written.
                            let s = string(&mut pos);
                            crate::bytes::put(out, s);
                        } else {
                            let v = word(&mut pos, long as usize)?;
                            pointer::format(env, &spec, &pointer::PtrArg::Addr(v), long, out)?;
                        }
                    }
                    _ => {
                        let size = match spec.len {
                            0 => 4,
                            n => n as usize,
                        };
                        let size = if spec.conv == b'c' { 1 } else { size };
                        let v = word(&mut pos, size)?;
                        fmt_int(out, v, &spec, long);
                    }
                }
            }
        }
    }
    Ok(())
}

fn is_text_helper(name: &str) -> bool {
    matches!(
        name,
        "__print_flags"
            | "__print_flags_u64"
            | "__print_symbolic"
            | "__print_symbolic_u64"
            | "__print_hex"
            | "__print_hex_str"
            | "__print_array"
            | "__print_dynamic_array"
            | "__get_bitmask"
            | "__get_rel_bitmask"
            | "__get_cpumask"
            | "__get_rel_cpumask"
    )
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Int { v, .. } => *v != 0,
        Value::Bytes(..) | Value::Text(_) => true,
    }
}

fn read_elem(b: &[u8], i: usize, el: usize, be: bool) -> Option<u64> {
    read_uint(b, i.checked_mul(el)?, el, be)
}

fn binary<'a>(op: &str, a: Value<'a>, b: Value<'a>) -> EvalResult<Value<'a>> {
    let (
        &Value::Int {
            v: x,
            signed: sa,
            size: za,
        },
        &Value::Int {
            v: y,
            signed: sb,
            size: zb,
        },
    ) = (&a, &b)
    else {
        // Pointer comparisons against 0 (`REC->ptr != NULL` after expansion).
        return match (op, &a, &b) {
            ("==", Value::Bytes(..), Value::Int { v: 0, .. })
            | ("==", Value::Int { v: 0, .. }, Value::Bytes(..)) => Ok(int_of(0)),
            ("!=", Value::Bytes(..), Value::Int { v: 0, .. })
            | ("!=", Value::Int { v: 0, .. }, Value::Bytes(..)) => Ok(int_of(1)),
            _ => Err(format!("`{op}` on a string")),
        };
    };
    let Some(op) = BinOp::of(op) else {
        return Err(format!("operator `{op}`"));
    };
    let a = Int {
        v: x,
        signed: sa,
        size: za,
    };
    let b = Int {
        v: y,
        signed: sb,
        size: zb,
    };
    int_binary(op, a, b)
        .map(Int::val)
        .ok_or_else(|| "division by zero".into())
}

/// A C binary operator on integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BinOp {
    Shl,
    Shr,
    And,
    Or,
    Xor,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
}

impl BinOp {
    fn of(op: &str) -> Option<BinOp> {
        use BinOp::*;
        Some(match op {
            "<<" => Shl,
            ">>" => Shr,
            "&" => And,
            "|" => Or,
            "^" => Xor,
            "+" => Add,
            "-" => Sub,
            "*" => Mul,
            "/" => Div,
            "%" => Rem,
            "==" => Eq,
            "!=" => Ne,
            "<" => Lt,
            ">" => Gt,
            "<=" => Le,
            ">=" => Ge,
            _ => return None,
        })
    }
}

/// `a op b` as C computes it: operands below int promoted to int, shifts in the left
/// operand's type, else both in the usual arithmetic conversion; comparisons give an int.
/// None for a division by zero.
#[inline]
fn int_binary(op: BinOp, a: Int, b: Int) -> Option<Int> {
    let (x, y) = (a.v, b.v);
    let (za, sa) = if a.size < 4 {
        (4, true)
    } else {
        (a.size, a.signed)
    };
    let (zb, sb) = if b.size < 4 {
        (4, true)
    } else {
        (b.size, b.signed)
    };
    match op {
        BinOp::Shl | BinOp::Shr => {
            let sh = (y & 63) as u32;
            let r = if op == BinOp::Shl {
                x.wrapping_shl(sh)
            } else if sa {
                ((x as i64) >> sh) as u64
            } else {
                let x = if za == 4 { x & 0xffff_ffff } else { x };
                x >> sh
            };
            return Some(Int::norm(r, sa, za));
        }
        _ => {}
    }
    let size = za.max(zb);
    let signed = if za == zb {
        sa && sb
    } else if za > zb {
        sa
    } else {
        sb
    };
    let (x, y) = (norm_value(x, signed, size), norm_value(y, signed, size));
    let cmp = |r: bool| Some(Int::of(r as u64));
    let n = |v: u64| Some(Int::norm(v, signed, size));
    match op {
        BinOp::Add => n(x.wrapping_add(y)),
        BinOp::Sub => n(x.wrapping_sub(y)),
        BinOp::Mul => n(x.wrapping_mul(y)),
        BinOp::Div | BinOp::Rem => {
            if y == 0 {
                return None;
            }
            let div = op == BinOp::Div;
            let r = if signed {
                let (a, b) = (x as i64, y as i64);
                (if div {
                    a.wrapping_div(b)
                } else {
                    a.wrapping_rem(b)
                }) as u64
            } else if size == 4 {
                let (a, b) = (x & 0xffff_ffff, y & 0xffff_ffff);
                if div {
                    a / b
                } else {
                    a % b
                }
            } else if div {
                x / y
            } else {
                x % y
            };
            n(r)
        }
        BinOp::And => n(x & y),
        BinOp::Or => n(x | y),
        BinOp::Xor => n(x ^ y),
        BinOp::Eq => cmp(x == y),
        BinOp::Ne => cmp(x != y),
        BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge => {
            let o = if signed {
                (x as i64).cmp(&(y as i64))
            } else {
                x.cmp(&y)
            };
            cmp(match op {
                BinOp::Lt => o.is_lt(),
                BinOp::Gt => o.is_gt(),
                BinOp::Le => o.is_le(),
                _ => o.is_ge(),
            })
        }
        BinOp::Shl | BinOp::Shr => unreachable!("shifts return above"),
    }
}

impl<'a> Value<'a> {
    fn as_ptr_arg(&self) -> pointer::PtrArg<'_> {
        match self {
            Value::Int { v, .. } => pointer::PtrArg::Addr(*v),
            Value::Bytes(b, _) => pointer::PtrArg::Data(b),
            Value::Text(t) => pointer::PtrArg::Data(t),
        }
    }
}

/// `{0x1,0x2}` as the kernel's `trace_print_array_seq` writes it.
pub(crate) fn print_array(out: &mut Vec<u8>, b: &[u8], el: usize, count: usize, be: bool) {
    out.push(b'{');
    for i in 0..count {
        if i.saturating_mul(el) >= b.len() {
            break;
        }
        if i != 0 {
            out.push(b',');
        }
        match read_elem(b, i, el, be) {
            Some(v) => {
                crate::bytes::put(out, b"0x");
                push_hex(out, v, false);
            }
            None if matches!(el, 1 | 2 | 4 | 8) => break,
            None => {
                crate::bytes::put(out, b"BAD SIZE:");
                push_u64(out, el as u64);
                crate::bytes::put(out, b" 0x");
                push_hex(out, b.get(i * el).copied().unwrap_or(0) as u64, false);
            }
        }
    }
    out.push(b'}');
}

/// A string conversion with width and precision, as the kernel's `string()` does it.
pub(crate) fn fmt_str(out: &mut Vec<u8>, s: &[u8], spec: &Spec) {
    let s = if spec.prec >= 0 {
        &s[..s.len().min(spec.prec as usize)]
    } else {
        s
    };
    let pad = (spec.width.max(0) as usize).saturating_sub(s.len());
    if !spec.left {
        out.extend(std::iter::repeat(b' ').take(pad));
    }
    crate::bytes::put(out, s);
    if spec.left {
        out.extend(std::iter::repeat(b' ').take(pad));
    }
}

/// An integer conversion (`d i u x X o c`) with the kernel's `number()` rules.
pub(crate) fn fmt_int(out: &mut Vec<u8>, v: u64, spec: &Spec, long: u8) {
    let size = match spec.len {
        0 => 4,
        n => n,
    };
    let _ = long;
    // No width, precision or flag: the digits alone (most conversions in print fmts).
    if spec.width <= 0
        && spec.prec < 0
        && !spec.alt
        && !spec.plus
        && !spec.space
        && matches!(spec.conv, b'u' | b'd' | b'i' | b'x' | b'X')
    {
        return plain_int(out, v, size, spec.conv);
    }
    if spec.conv == b'c' {
        let pad = (spec.width.max(1) as usize) - 1;
        if !spec.left {
            out.extend(std::iter::repeat(b' ').take(pad));
        }
        out.push(v as u8);
        if spec.left {
            out.extend(std::iter::repeat(b' ').take(pad));
        }
        return;
    }
    let signed_conv = matches!(spec.conv, b'd' | b'i');
    let bits = size as u32 * 8;
    let mut num = if bits >= 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    };
    let mut sign = 0u8;
    let mut width = spec.width.max(0) as i64;
    if signed_conv {
        let s = sign_extend(num, size as usize);
        if s < 0 {
            sign = b'-';
            num = s.unsigned_abs();
            width -= 1;
        } else if spec.plus {
            sign = b'+';
            width -= 1;
        } else if spec.space {
            sign = b' ';
            width -= 1;
        }
    }
    let base: u64 = match spec.conv {
        b'x' | b'X' => 16,
        b'o' => 8,
        _ => 10,
    };
    let upper = spec.conv == b'X';
    let need_pfx = spec.alt && base != 10;
    let is_zero = num == 0;
    if need_pfx {
        if base == 16 {
            width -= 2;
        } else if !is_zero {
            width -= 1;
        }
    }
    let mut tmp = [0u8; 24];
    let mut n = 0;
    // Least significant digit first. Each base gets its own loop so that the compiler
    // turns the division into shifts or a multiplication (a division by a variable base
    // costs tens of cycles per digit).
    let hex: &[u8; 16] = if upper {
        b"0123456789ABCDEF"
    } else {
        b"0123456789abcdef"
    };
    match base {
        16 => loop {
            tmp[n] = hex[(num & 15) as usize];
            n += 1;
            num >>= 4;
            if num == 0 {
                break;
            }
        },
        8 => loop {
            tmp[n] = b'0' + (num & 7) as u8;
            n += 1;
            num >>= 3;
            if num == 0 {
                break;
            }
        },
        _ => loop {
            tmp[n] = b'0' + (num % 10) as u8;
            n += 1;
            num /= 10;
            if num == 0 {
                break;
            }
        },
    }
    let zero = spec.zero && !spec.left;
    let mut prec = spec.prec.max(0) as i64;
    if n as i64 > prec {
        prec = n as i64;
    }
    width -= prec;
    // Runs of one byte are written with `resize` (a fill), not a push per byte.
    let fill = |out: &mut Vec<u8>, count: i64, c: u8| {
        if count > 0 {
            out.resize(out.len() + count as usize, c);
        }
    };
    if !zero && !spec.left {
        fill(out, width, b' ');
        width = width.min(0);
    }
    if sign != 0 {
        out.push(sign);
    }
    if need_pfx {
        if base == 16 || !is_zero {
            out.push(b'0');
        }
        if base == 16 {
            out.push(if upper { b'X' } else { b'x' });
        }
    }
    if !spec.left {
        fill(out, width, if zero { b'0' } else { b' ' });
        width = width.min(0);
    }
    fill(out, prec - n as i64, b'0');
    tmp[..n].reverse();
    crate::bytes::put(out, &tmp[..n]);
    fill(out, width, b' ');
}

/// `%u %d %i %x %X` of `v` with no width, precision or flag, read as an integer of
/// `size` bytes.
#[inline(always)]
fn plain_int(out: &mut Vec<u8>, v: u64, size: u8, conv: u8) {
    let num = if size >= 8 {
        v
    } else {
        v & ((1u64 << (u32::from(size) * 8)) - 1)
    };
    match conv {
        b'u' => push_u64(out, num),
        b'x' => push_hex(out, num, false),
        b'X' => push_hex(out, num, true),
        _ => push_i64(out, sign_extend(num, size as usize)),
    }
}

pub(crate) fn push_hex2(out: &mut Vec<u8>, b: u8) {
    const D: &[u8; 16] = b"0123456789abcdef";
    out.push(D[(b >> 4) as usize]);
    out.push(D[(b & 15) as usize]);
}

/// The names libtraceevent resolves in flag and symbol tables when the kernel left them
/// unexpanded (softirq vectors, hrtimer restart values); any other name is -1.
fn tracecmd_flag_value(name: &str) -> u64 {
    const KNOWN: [(&str, u64); 12] = [
        ("HI_SOFTIRQ", 0),
        ("TIMER_SOFTIRQ", 1),
        ("NET_TX_SOFTIRQ", 2),
        ("NET_RX_SOFTIRQ", 3),
        ("BLOCK_SOFTIRQ", 4),
        ("IRQ_POLL_SOFTIRQ", 5),
        ("TASKLET_SOFTIRQ", 6),
        ("SCHED_SOFTIRQ", 7),
        ("HRTIMER_SOFTIRQ", 8),
        ("RCU_SOFTIRQ", 9),
        ("HRTIMER_NORESTART", 0),
        ("HRTIMER_RESTART", 1),
    ];
    KNOWN
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(u64::MAX, |(_, v)| *v)
}

/// Whether `b`, the right operand of `op`, is a binary expression that binds looser: one
/// the print fmt wrote in parentheses.
fn looser_right(op: &str, b: &Expr) -> bool {
    match (super::expr::prec(op), b) {
        (Some(p), Expr::Binary(o, ..)) => super::expr::prec(o).is_some_and(|q| q < p),
        _ => false,
    }
}

/// Whether `v` is 0 once cut to the conversion's length modifier.
fn int_is_zero(v: u64, spec: &Spec, long: u8) -> bool {
    let bytes = match spec.len {
        0 => 4,
        n => n.min(8) as u32,
    };
    let _ = long;
    if bytes >= 8 {
        v == 0
    } else {
        v & ((1u64 << (bytes * 8)) - 1) == 0
    }
}

/// The label of a `{ value, "name" }` table entry.
fn table_label(e: &Expr) -> EvalResult<&[u8]> {
    match e {
        Expr::List(items) if items.len() == 2 => match &items[1] {
            Expr::Str(s) => Ok(s),
            other => Err(format!("a table entry's name is not a string: {other:?}")),
        },
        _ => Err("a flag/symbol table entry is not `{ value, \"name\" }`".into()),
    }
}

/// `__print_flags`'s text of `flags`: the name of each entry whose bits are all set, in
/// table order, each taking its bits out, then what is left in hex. Entries are read
/// only while bits are left. Returns false, having written nothing final, when bits are
/// left and `more` says entries the caller could not give follow.
fn write_flags<'x>(
    out: &mut Vec<u8>,
    mut flags: u64,
    delim: &[u8],
    mut entries: impl Iterator<Item = EvalResult<(u64, &'x [u8])>>,
    more: bool,
) -> EvalResult<bool> {
    let mut first = true;
    while flags != 0 {
        let Some(entry) = entries.next() else {
            break;
        };
        let (mask, name) = entry?;
        if flags & mask != mask {
            continue;
        }
        flags &= !mask;
        if !first {
            crate::bytes::put(out, delim);
        }
        first = false;
        crate::bytes::put(out, name);
    }
    if flags != 0 {
        if more {
            return Ok(false);
        }
        if !first {
            crate::bytes::put(out, delim);
        }
        crate::bytes::put(out, b"0x");
        push_hex(out, flags, false);
    }
    Ok(true)
}

/// `__print_symbolic`'s text of `v`: the name of the first entry whose value (cut to
/// `mask`) is `v`, else `v` in hex. Returns false, having written nothing, when no entry
/// matched and `more` says entries the caller could not give follow.
fn write_symbol<'x>(
    out: &mut Vec<u8>,
    v: u64,
    mask: u64,
    entries: impl Iterator<Item = EvalResult<(u64, &'x [u8])>>,
    more: bool,
) -> EvalResult<bool> {
    for entry in entries {
        let (value, name) = entry?;
        if value & mask == v {
            crate::bytes::put(out, name);
            return Ok(true);
        }
    }
    if more {
        return Ok(false);
    }
    crate::bytes::put(out, b"0x");
    push_hex(out, v, false);
    Ok(true)
}

/// Whether a table entry's name is a null pointer constant (`{ 0, NULL }`).
fn null_label(e: &Expr) -> bool {
    let Expr::List(items) = e else {
        return false;
    };
    match items.get(1) {
        Some(Expr::Num(0)) => true,
        Some(Expr::Cast(ty, x)) => ty.pointer && matches!(**x, Expr::Num(0)),
        _ => false,
    }
}

/// Whether an expression reads the record (a field), so its value is not constant.
fn reads_record(e: &Expr) -> bool {
    match e {
        Expr::Field(_) | Expr::Member(..) | Expr::Call(..) | Expr::Index(..) => true,
        Expr::Num(_) | Expr::Const(..) | Expr::Str(_) | Expr::Ident(_) => false,
        // Locals hold values computed from the record.
        Expr::Local(_) | Expr::Block(..) => true,
        Expr::Unary(_, x) | Expr::Cast(_, x) => reads_record(x),
        Expr::Binary(_, a, b) => reads_record(a) || reads_record(b),
        Expr::Cond(a, b, c) => reads_record(a) || reads_record(b) || reads_record(c),
        Expr::List(xs) => xs.iter().any(reads_record),
    }
}

#[cfg(test)]
mod tests {
    use super::{push_hex, push_i64, push_u64};

    fn values() -> Vec<u64> {
        let mut v: Vec<u64> = (0..200_000).collect();
        let mut p = 1u64;
        while let Some(q) = p.checked_mul(10) {
            v.extend([p - 1, p, p + 1, q - 1]);
            p = q;
        }
        for s in 0..64 {
            v.extend([1u64 << s, (1u64 << s) - 1, (1u64 << s) + 1]);
        }
        v.extend([u64::MAX, u64::MAX - 1, i64::MAX as u64, i64::MIN as u64]);
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200_000 {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            let r = x.wrapping_mul(0x2545_f491_4f6c_dd1d);
            // Every width, not only the 20-digit values a uniform draw gives.
            v.push(r >> (r % 64));
        }
        v
    }

    #[test]
    fn decimal_and_hex_digits_match_std_formatting() {
        let mut out = Vec::new();
        for v in values() {
            out.clear();
            out.extend_from_slice(b"<");
            push_u64(&mut out, v);
            push_i64(&mut out, v as i64);
            out.push(b'|');
            push_hex(&mut out, v, false);
            out.push(b'|');
            push_hex(&mut out, v, true);
            assert_eq!(
                String::from_utf8_lossy(&out),
                format!("<{v}{}|{v:x}|{v:X}", v as i64),
                "{v}"
            );
        }
    }
}
