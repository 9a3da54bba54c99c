//! Compiling a schema's `print fmt` once: the kernel's own printers chosen by event,
//! field names resolved to indexes, constants folded, constant flag/symbol tables
//! numbered and evaluated, and the plan made.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::eval::{looser_right, Evaluator};
use super::plan::{plan, Plan};
use super::printf::{parse_format, Seg};
use super::value::Value;
use super::HELPERS;
use crate::event::expr::{lex, parse_print_fmt, Expr};
use crate::event::format::Schema;
use crate::event::{PrintEnv, PrintStyle};

/// How a schema prints.
#[derive(Debug, Clone, Default)]
pub(super) enum Kind {
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
    /// `ftrace:func_repeats` (options/func-no-repeats): `<ip> <-<parent> (repeats: N,
    /// last_ts: TIME)`, TIME being the record's time less `top_delta_ts << 32 |
    /// bottom_delta_ts`, printed as the time column is.
    FtraceFuncRepeats {
        ip: usize,
        parent: usize,
        count: usize,
        top: usize,
        bottom: usize,
    },
    /// `syscalls:sys_enter_*`: the kernel's `sys_name(arg: value, ...)`.
    SyscallEnter { call: String, args: Vec<usize> },
    /// `syscalls:sys_exit_*`: `sys_name -> 0xret`.
    SyscallExit { call: String, ret: usize },
    /// The print fmt cannot be evaluated: print `field=value` pairs.
    Fallback(String),
    #[default]
    Empty,
}

/// What the evaluator has at compile time in `style`: the long size, no record and no
/// symbol or string tables.
pub(super) fn compile_env(schema: &Schema, style: PrintStyle) -> PrintEnv<'static> {
    PrintEnv {
        style,
        long_size: schema.long_size,
        ..PrintEnv::default()
    }
}

/// The values of a table's entries in `style`, as the evaluator computes them with no
/// record (None for an entry that does not evaluate).
pub(super) fn const_table_values(
    schema: &Schema,
    style: PrintStyle,
    entries: &[Expr],
) -> Vec<Option<u64>> {
    let env = compile_env(schema, style);
    let cx = Evaluator::new(schema, &[], &env);
    entries
        .iter()
        .map(|e| cx.table_entry(e).ok().map(|(v, _)| v))
        .collect()
}

/// The name of the call that stands for a constant flag/symbol table once compiled:
/// `__print_flags(value, delim, TABLE_REF(id))`, `id` indexing [`Program::tables`].
pub(super) const TABLE_REF: &str = "__table_ref";

/// A constant flag/symbol table taken out of the compiled expressions: its entries and
/// their values in both styles, computed once at compile time.
#[derive(Debug)]
pub(super) struct ConstTable {
    pub(super) entries: Vec<Expr>,
    /// [kernel values, trace-cmd values], by entry.
    pub(super) values: [Vec<Option<u64>>; 2],
}

/// Moves every constant flag/symbol table of `program` into `program.tables`, leaving a
/// [`TABLE_REF`] call with its id in its place.
pub(super) fn number_const_tables(program: &mut Program, schema: &Schema) {
    pub(super) fn walk(e: &mut Expr, schema: &Schema, tables: &mut Vec<ConstTable>) {
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

/// The bytes of a print fmt's format string as the format file has them (between its
/// first pair of unescaped quotes, escapes left as written).
fn format_string(print_fmt: &str) -> &[u8] {
    let b = print_fmt.as_bytes();
    let Some(open) = b.iter().position(|&c| c == b'"') else {
        return &[];
    };
    let mut i = open + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return &b[open + 1..i],
            _ => i += 1,
        }
    }
    &b[open + 1..]
}

/// A compiled `print fmt`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Program {
    pub(super) kind: Kind,
    /// The constant `__print_flags`/`__print_symbolic` tables, by the id their
    /// [`TABLE_REF`] holds, with their values: evaluated once instead of for every record.
    pub(super) tables: Arc<[ConstTable]>,
    /// For events the kernel prints with its own code (syscalls, ftrace:function): the
    /// print fmt as written, which the trace-cmd style prints.
    pub(super) as_written: Option<Box<Kind>>,
    /// Records that had to fall back to `field=value` pairs.
    pub(super) fallbacks: Arc<AtomicU64>,
    /// The reason of the first runtime fallback, when the compiled program failed on a record.
    pub(super) runtime_reason: Arc<std::sync::OnceLock<String>>,
    /// libtraceevent 1.7 (trace-cmd's) fails this print fmt: see
    /// [`Schema::tracecmd_fails`](crate::event::Schema::tracecmd_fails).
    pub(super) tracecmd_fails: bool,
}

impl Program {
    pub(crate) fn compile(schema: &Schema) -> Program {
        let kind = match compile_kind(schema) {
            Ok(k) => k,
            Err(e) => Kind::Fallback(e),
        };
        let as_written = match kind {
            Kind::SyscallEnter { .. }
            | Kind::SyscallExit { .. }
            | Kind::FtraceFunction { .. }
            | Kind::FtraceFuncRepeats { .. }
            | Kind::FtraceKernelStack { .. } => compile_printf(schema).ok().map(Box::new),
            _ => None,
        };
        let mut program = Program {
            kind,
            as_written,
            tracecmd_fails: format_string(&schema.print_fmt).contains(&b'\t'),
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
    pub(super) fn kind_for(&self, style: PrintStyle) -> &Kind {
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
                | Kind::FtraceFuncRepeats { .. }
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

pub(super) fn compile_kind(schema: &Schema) -> Result<Kind, String> {
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
            "func_repeats" => {
                return Ok(Kind::FtraceFuncRepeats {
                    ip: idx("ip")?,
                    parent: idx("parent_ip")?,
                    count: idx("count")?,
                    top: idx("top_delta_ts")?,
                    bottom: idx("bottom_delta_ts")?,
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
pub(super) fn compile_printf(schema: &Schema) -> Result<Kind, String> {
    let toks = lex(&schema.print_fmt)?;
    let (mut fmt, mut args) = parse_print_fmt(&toks, schema.long_size, |n| schema.field_index(n))?;
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
pub(super) fn resolve_names(e: &mut Expr, schema: &Schema) {
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
pub(super) fn check_expr(e: &Expr) -> Result<(), String> {
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
pub(super) fn first_ident(e: &Expr) -> Option<String> {
    match e {
        Expr::Ident(n) if crate::event::constants::constant(n).is_none() => {
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
pub(super) fn is_const(e: &Expr) -> bool {
    matches!(e, Expr::Num(_) | Expr::Const(..))
}

/// Fold constant subexpressions once (the gfp flag tables are long constant
/// expressions the hot path would otherwise evaluate for every record).
pub(super) fn fold(e: &mut Expr, schema: &Schema) {
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
                let level = crate::event::expr::prec(o);
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
pub(super) fn fold_chain(e: &mut Expr, level: Option<u8>, schema: &Schema) {
    match e {
        Expr::Binary(o, l, r) if crate::event::expr::prec(o) == level => {
            fold_chain(l, level, schema);
            fold(r, schema);
        }
        other => fold(other, schema),
    }
}

/// Whether an expression reads the record (a field), so its value is not constant.
pub(super) fn reads_record(e: &Expr) -> bool {
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
