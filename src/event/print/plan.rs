//! The planned fast path: a `print fmt` reduced at compile time to pieces that read
//! their fields directly (offset, size, sign), integer expressions compiled per style,
//! and the records those pieces cannot settle handed to the evaluator.

use super::compile::{compile_env, const_table_values};
use super::eval::{looser_right, Evaluator};
use super::helpers::{null_label, table_label, write_flags, write_symbol, TableRest};
use super::plain_line::PlainLine;
use super::printf::{fmt_str, plain_int, Seg, Spec};
use super::value::{int_binary, norm_value, read_elem, BinOp, Int, Value};
use super::EvalResult;
use crate::bytes::Text;
use crate::event::expr::{CType, Expr};
use crate::event::format::{sign_extend, until_nul, FieldKind, Schema};
use crate::event::pointer;
use crate::event::PrintStyle;

/// A planned `print fmt`: each conversion with the literal text before it (one step per
/// conversion instead of one per literal and one per conversion), and the text after the
/// last one.
#[derive(Debug, Clone)]
pub(super) struct Plan {
    pub(super) steps: Vec<(Text, Piece)>,
    pub(super) tail: Text,
    /// The same steps as a [`PlainLine`], when they are all plain conversions.
    pub(super) line: Option<PlainLine>,
}

impl Plan {
    pub(super) fn new(segs: &[Seg], pieces: Vec<Piece>) -> Plan {
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
        let mut plan = Plan {
            steps,
            tail: before.unwrap_or_default(),
            line: None,
        };
        plan.line = PlainLine::of(&plan);
        plan
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
pub(super) enum Piece {
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
pub(super) enum TableSource {
    /// A field.
    Field(FieldRead),
    /// An expression over fields, per style; a style without one goes through the
    /// evaluator.
    IntExpr(Box<[Option<IntExpr>; 2]>),
}

/// A planned flag or symbol table.
#[derive(Debug, Clone)]
pub(super) struct TableEntries {
    /// (value, label) in table order, up to the first entry the evaluator cannot read.
    pub(super) known: Box<[(u64, Box<[u8]>)]>,
    /// What follows them: a record whose lookup gets to an entry the plan could not read
    /// goes through the evaluator (which fails on it, as it always did).
    pub(super) rest: TableRest,
    /// The index in `known` from which no value is below zero (see [`write_flags`]).
    pub(super) quiet_from: usize,
}

/// Where a planned piece reads its integer: `size` (1, 2, 4 or 8) bytes at payload
/// offset `off`, sign-extended when `sext`, giving the value [`Evaluator::field_int`] gives;
/// `ty` is the C type [`Evaluator::field`] gives it (signed, size). `field` names the piece for
/// the error of a payload too short to hold it.
#[derive(Debug, Clone, Copy)]
pub(super) struct FieldRead {
    pub(super) field: usize,
    pub(super) off: usize,
    pub(super) size: u8,
    pub(super) sext: bool,
    pub(super) ty: (bool, u8),
}

impl FieldRead {
    /// A scalar or pointer field of 1, 2, 4 or 8 bytes.
    pub(super) fn of(schema: &Schema, field: usize) -> Option<FieldRead> {
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
pub(super) fn text_piece(e: &Expr, schema: &Schema, arg: usize, spec: Spec) -> Option<Piece> {
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
        let rest = if known.len() == end {
            TableRest::End
        } else if table[known.len()..end].iter().all(null_label) {
            TableRest::Unnamed
        } else {
            TableRest::Unread
        };
        let quiet_from = known
            .iter()
            .rposition(|(v, _)| (*v as i64) < 0)
            .map_or(0, |i| i + 1);
        TableEntries {
            known,
            rest,
            quiet_from,
        }
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

/// The `Plain` form of an `Int` or `Elem` piece, when it has one: a fixed-offset scalar,
/// pointer or array element of 1, 2, 4 or 8 bytes, and a `%u %d %i %x %X` conversion
/// without width, precision or flags.
pub(super) fn plain_piece(p: &Piece, schema: &Schema) -> Option<Piece> {
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
pub(super) fn plain_conv(s: &Spec) -> Option<(u8, u8)> {
    (s.width <= 0
        && s.prec < 0
        && !s.alt
        && !s.plus
        && !s.space
        && matches!(s.conv, b'u' | b'd' | b'i' | b'x' | b'X'))
    .then_some((if s.len == 0 { 4 } else { s.len }, s.conv))
}

/// The plan of a print fmt, or None when it has `*` widths or precisions.
pub(super) fn plan(segs: &[Seg], args: &[Expr], schema: &Schema) -> Option<Vec<Piece>> {
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
pub(super) enum IntExpr {
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
    /// A `Chain` of right shifts, masks, integer casts that keep every value and at most
    /// one left shift, last (`MAJOR(dev)`, `MINOR(dev)`, `REC->index << 12`), reduced at
    /// compile time to one read, one shift, one mask and one left shift.
    Bits(FieldBits),
    /// A name that is neither a field nor a constant, in trace-cmd style: libtraceevent
    /// reads it as its kallsyms address (`vmemmap_base` in the mm_page events). The
    /// address is looked up the first time a record needs it and kept.
    Symbol(Box<SymbolAddress>),
}

/// The kallsyms address of a name, looked up once (see [`IntExpr::Symbol`]).
#[derive(Debug, Clone)]
pub(super) struct SymbolAddress {
    name: String,
    address: std::sync::OnceLock<u64>,
}

/// An [`IntExpr::Bits`]: the value is `((raw >> shift) & mask) << left` of the field's
/// unsigned bytes, as a C integer of type `ty` (signed, size).
#[derive(Debug, Clone, Copy)]
pub(super) struct FieldBits {
    read: FieldRead,
    shift: u32,
    mask: u64,
    left: u32,
    ty: (bool, u8),
}

impl FieldBits {
    /// The `Bits` form of the chain `read` then `ops`, when each step's value is known
    /// from the mask alone: the field is unsigned (or promoted from fewer than 4 unsigned
    /// bytes), and every step keeps the values under its mask non-negative, so that a
    /// right shift or a mask of them is the same bit operation on the mask and a cast
    /// only cuts bits off. The steps' types come from the evaluator's own `cast_int`
    /// and `int_binary` applied to the mask.
    fn of(read: FieldRead, ops: &[ChainOp], cx: &Evaluator) -> Option<FieldBits> {
        fn low_bits(size: u8) -> u64 {
            match size {
                1..=7 => (1u64 << (u32::from(size) * 8)) - 1,
                _ => u64::MAX,
            }
        }
        // The values under `i.v` are non-negative in `i`'s type.
        fn fits(i: Int) -> bool {
            match i.size {
                1..=7 => i.v < 1u64 << (u32::from(i.size) * 8 - u32::from(i.signed)),
                _ => !i.signed || i.v <= i64::MAX as u64,
            }
        }
        if read.sext {
            return None;
        }
        let mut cur = Int {
            v: low_bits(read.size),
            signed: read.ty.0,
            size: read.ty.1,
        };
        if !fits(cur) {
            return None;
        }
        let (mut shift, mut mask, mut left) = (0u32, cur.v, 0u32);
        for op in ops {
            if left != 0 {
                return None;
            }
            cur = match *op {
                ChainOp::Cast(t) if !t.pointer => {
                    let n = cx.cast_int(&t, cur);
                    if t.size != 0 && n.v != cur.v & low_bits(t.size) {
                        return None;
                    }
                    n
                }
                ChainOp::Bin(BinOp::And, k) => int_binary(BinOp::And, cur, k)?,
                ChainOp::Bin(BinOp::Shr, k) => {
                    shift = (shift + (k.v & 63) as u32).min(63);
                    int_binary(BinOp::Shr, cur, k)?
                }
                ChainOp::Bin(BinOp::Shl, k) => {
                    // Last: the type of the shift, the value shifted and cut at run time.
                    left = (k.v & 63) as u32;
                    let ty = int_binary(BinOp::Shl, Int { v: 0, ..cur }, k)?;
                    Int { v: cur.v, ..ty }
                }
                _ => return None,
            };
            if left == 0 {
                if !fits(cur) {
                    return None;
                }
                mask = cur.v;
            }
        }
        Some(FieldBits {
            read,
            shift,
            mask,
            left,
            ty: (cur.signed, cur.size),
        })
    }
}

/// One step of a [`IntExpr::Chain`].
#[derive(Debug, Clone, Copy)]
pub(super) enum ChainOp {
    Cast(CType),
    Bin(BinOp, Int),
}

impl IntExpr {
    /// Whether the calc reads the record.
    pub(super) fn reads(&self) -> bool {
        match self {
            // A symbol's address is known only with the symbol table of the records:
            // never folded at compile time, like a field.
            IntExpr::Field(_) | IntExpr::Chain(..) | IntExpr::Bits(_) | IntExpr::Symbol(_) => true,
            IntExpr::Const(_) => false,
            IntExpr::Cast(_, x) | IntExpr::Unary(_, x) => x.reads(),
            IntExpr::Bin { a, b, .. } | IntExpr::Logic(_, a, b) => a.reads() || b.reads(),
            IntExpr::Cond(c, t, f) => c.reads() || t.reads() || f.reads(),
        }
    }

    /// The calc with its parts that read no field computed now (`(struct page
    /// *)vmemmap_base`), and a `?:` on a constant condition reduced to its branch.
    pub(super) fn folded(self, cx: &Evaluator) -> IntExpr {
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

    /// The `Bits` or `Chain` form of a calc that is one, else the calc as it was.
    pub(super) fn chained(self, cx: &Evaluator) -> IntExpr {
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
            Some(r) if !ops.is_empty() => match FieldBits::of(r, &ops, cx) {
                Some(b) => IntExpr::Bits(b),
                None => IntExpr::Chain(r, ops.into()),
            },
            _ => self,
        }
    }
}

/// What a [`Piece::IntExpr`] prints of its value.
#[derive(Debug, Clone)]
pub(super) enum IntOutput {
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
pub(super) fn int_expr_of(e: &Expr, schema: &Schema, style: PrintStyle) -> Option<IntExpr> {
    let sub = |x: &Expr| int_expr_of(x, schema, style).map(Box::new);
    Some(match e {
        Expr::Num(n) => IntExpr::Const(Int::of(*n)),
        &Expr::Const(v, signed, size) => IntExpr::Const(Int { v, signed, size }),
        Expr::Field(i) => IntExpr::Field(FieldRead::of(schema, *i)?),
        // libtraceevent reads a name as its kallsyms address.
        Expr::Ident(n) if style == PrintStyle::TraceCmd => {
            IntExpr::Symbol(Box::new(SymbolAddress {
                name: n.clone(),
                address: std::sync::OnceLock::new(),
            }))
        }
        Expr::Ident(n) => IntExpr::Const(Int::of(crate::event::constants::constant(n)?)),
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
pub(super) fn int_expr_styles(e: &Expr, schema: &Schema) -> [Option<IntExpr>; 2] {
    [PrintStyle::Kernel, PrintStyle::TraceCmd].map(|style| {
        let env = compile_env(schema, style);
        let cx = Evaluator::new(schema, &[], &env);
        int_expr_of(e, schema, style).map(|c| c.folded(&cx).chained(&cx))
    })
}

/// The `IntExpr` piece of argument `arg` (expression `e`) with conversion `spec`, when one
/// style at least can compute it without the evaluator.
pub(super) fn int_expr_piece(e: &Expr, schema: &Schema, spec: Spec, arg: usize) -> Option<Piece> {
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

impl<'a, 'e> Evaluator<'a, 'e> {
    /// [`Evaluator::printf`] over a plan made at compile time.
    pub(super) fn printf_planned(
        &self,
        segs: &'a [Seg],
        args: &'a [Expr],
        plan: &Plan,
        out: &mut Vec<u8>,
    ) -> EvalResult<()> {
        if let Some(line) = &plan.line {
            if line.write(self.data, self.endian().is_big(), out) {
                return Ok(());
            }
        }
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
                    let b = f.bytes(self.data, self.endian()).ok_or_else(|| {
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
                    let v = match self.array_element(*field, *index) {
                        Some(Value::Int { v, .. }) => v,
                        _ => {
                            let f = &self.schema.fields[*field];
                            let FieldKind::Array { elem_size, .. } = f.kind else {
                                return Err("an indexed field is not an array".into());
                            };
                            let b = f.bytes(self.data, self.endian()).ok_or_else(|| {
                                format!("field `{}` lies outside the payload", f.name)
                            })?;
                            let el = (elem_size as u8).max(1) as usize;
                            let raw = read_elem(b, *index, el, self.endian())
                                .ok_or("array index past the data")?;
                            if el < 4 {
                                raw
                            } else {
                                norm_value(raw, false, el as u8)
                            }
                        }
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
                        write_flags(
                            out,
                            v,
                            delim,
                            known,
                            table.rest,
                            table.quiet_from,
                            style == 1,
                        )?
                    } else {
                        let more = table.rest != TableRest::End;
                        write_symbol(out, v, self.table_mask(*wide), known, more)?
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
    pub(super) fn int_cast(&self, v: u64, cast: Option<(bool, bool, u8)>) -> u64 {
        match cast {
            Some((true, _, _)) => norm_value(v, false, self.long()),
            Some((false, signed, size)) if size != 0 => norm_value(v, signed, size),
            _ => v,
        }
    }

    /// The integer a planned piece reads (see [`FieldRead`]).
    #[inline(always)]
    pub(super) fn read(&self, r: &FieldRead) -> EvalResult<u64> {
        let Some(raw) = self.endian().read_uint(self.data, r.off, r.size as usize) else {
            // An array element past the record reads as 0 in trace-cmd style (see
            // `Evaluator::array_element`).
            if self.env.style == PrintStyle::TraceCmd
                && matches!(self.schema.fields[r.field].kind, FieldKind::Array { .. })
            {
                return Ok(0);
            }
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
    pub(super) fn int_expr(&self, c: &IntExpr) -> Option<Int> {
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
            IntExpr::Bits(b) => self.field_bits(b)?,
            IntExpr::Symbol(s) => Int::of(self.symbol_address(s)),
        })
    }

    /// [`Evaluator::int_expr`] of an operand, with the leaves (constants and fields, most operands)
    /// and the bits of a field (`MAJOR(dev)`) taken without a call.
    #[inline(always)]
    pub(super) fn operand(&self, c: &IntExpr) -> Option<Int> {
        match c {
            IntExpr::Const(i) => Some(*i),
            IntExpr::Field(r) => self.int_expr_field(r),
            IntExpr::Bits(b) => self.field_bits(b),
            c => self.int_expr(c),
        }
    }

    #[inline(always)]
    fn field_bits(&self, b: &FieldBits) -> Option<Int> {
        let raw = self
            .endian()
            .read_uint(self.data, b.read.off, b.read.size as usize)?;
        Some(Int::norm(
            ((raw >> b.shift) & b.mask) << b.left,
            b.ty.0,
            b.ty.1,
        ))
    }

    #[inline(always)]
    pub(super) fn int_expr_field(&self, r: &FieldRead) -> Option<Int> {
        let raw = self.endian().read_uint(self.data, r.off, r.size as usize)?;
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
}

impl Evaluator<'_, '_> {
    /// [`IntExpr::Symbol`]'s value: the address the evaluator's function table gives the
    /// name (0 when it has none, as libtraceevent's strtoull reads it), kept once found.
    fn symbol_address(&self, s: &SymbolAddress) -> u64 {
        if let Some(&a) = s.address.get() {
            return a;
        }
        match self.env.functions.and_then(|f| f.address_of(&s.name)) {
            Some(a) => *s.address.get_or_init(|| a),
            // Not cached: a later table (symbols loaded lazily) may know it.
            None => 0,
        }
    }
}
