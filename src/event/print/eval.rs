//! The general evaluator: C expressions of a `print fmt` over one record, and the
//! printf conversions of their values.

use std::cell::RefCell;

use super::compile::Kind;
use super::helpers::is_text_helper;
use super::printf::{fmt_int, fmt_str, int_is_zero, push_hex2, Seg, Spec};
use super::value::{binary, int_of, norm, norm_value, read_elem, truthy, Int, Value};
use super::EvalResult;
use crate::bytes::push_hex;
use crate::endian::Endianness;
use crate::event::expr::{CType, Expr};
use crate::event::format::{sign_extend, until_nul, Field, FieldKind, Schema};
use crate::event::pointer;
use crate::event::{PrintEnv, PrintStyle, Record};

/// Everything an evaluation needs about one record.
pub(super) struct Evaluator<'a, 'e> {
    pub(super) schema: &'a Schema,
    pub(super) data: &'a [u8],
    pub(super) env: &'e PrintEnv<'e>,
    /// The record's timestamp (0 where there is no record).
    pub(super) ts: u64,
    /// Integer locals of statement expressions: (value, signed, size).
    /// (Grown on first use: most formats have none, and every record makes an `Evaluator`.)
    pub(super) locals: RefCell<Vec<(u64, bool, u8)>>,
}

/// Whether `b`, the right operand of `op`, is a binary expression that binds looser: one
/// the print fmt wrote in parentheses.
pub(super) fn looser_right(op: &str, b: &Expr) -> bool {
    match (crate::event::expr::prec(op), b) {
        (Some(p), Expr::Binary(o, ..)) => crate::event::expr::prec(o).is_some_and(|q| q < p),
        _ => false,
    }
}

impl<'a, 'e> Evaluator<'a, 'e> {
    pub(super) fn endian(&self) -> Endianness {
        self.env.endian
    }

    pub(super) fn long(&self) -> u8 {
        self.schema.long_size as u8
    }

    pub(super) fn new(
        schema: &'a Schema,
        data: &'a [u8],
        env: &'e PrintEnv<'e>,
    ) -> Evaluator<'a, 'e> {
        Evaluator {
            schema,
            data,
            env,
            ts: 0,
            locals: Default::default(),
        }
    }

    /// An evaluator of one record: its payload and its timestamp.
    pub(super) fn of_record(
        schema: &'a Schema,
        rec: &'a Record,
        env: &'e PrintEnv<'e>,
    ) -> Evaluator<'a, 'e> {
        Evaluator {
            ts: rec.ts,
            ..Evaluator::new(schema, rec.data, env)
        }
    }

    /// A program through the general evaluator (`Printf` without its plan).
    pub(super) fn run(&self, kind: &'a Kind, out: &mut Vec<u8>) -> EvalResult<()> {
        match kind {
            Kind::Printf { segs, args, .. } => self.printf(segs, args, out),
            Kind::FtracePrint { ip, buf } => self.ftrace_print(*ip, *buf, out),
            Kind::FtraceBprint { ip, fmt, buf } => self.ftrace_bprint(*ip, *fmt, *buf, out),
            Kind::FtraceBputs { ip, str } => self.ftrace_bputs(*ip, *str, out),
            Kind::FtraceFunction { ip, parent } => self.ftrace_function(*ip, *parent, out),
            Kind::FtraceFuncRepeats {
                ip,
                parent,
                count,
                top,
                bottom,
            } => self.ftrace_func_repeats([*ip, *parent, *count, *top, *bottom], out),
            Kind::FtraceKernelStack { caller } => self.kernel_stack(*caller, out),
            Kind::FtraceUserStack { caller } => self.user_stack(*caller, out),
            Kind::FtraceRawData { id, buf } => self.field_u64(*id).and_then(|v| {
                crate::bytes::put(out, b"# ");
                push_hex(out, v, false);
                crate::bytes::put(out, b" buf:");
                let b = self.schema.fields[*buf]
                    .bytes(self.data, self.endian())
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

    pub(super) fn printf(
        &self,
        segs: &'a [Seg],
        args: &'a [Expr],
        out: &mut Vec<u8>,
    ) -> EvalResult<()> {
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
                    let spec = spec.with_stars(|| Ok::<_, String>(self.int(take()?)? as i32))?;
                    let arg = take()?;
                    self.conv(&spec, arg, out)?;
                }
            }
        }
        Ok(())
    }

    pub(super) fn conv(&self, spec: &Spec, arg: &'a Expr, out: &mut Vec<u8>) -> EvalResult<()> {
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
    pub(super) fn int_conv(&self, spec: &Spec, v: u64, out: &mut Vec<u8>) {
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

    /// The integer value [`Evaluator::field`] gives a scalar or pointer field.
    #[inline]
    pub(super) fn field_int(&self, i: usize) -> EvalResult<u64> {
        let f = &self.schema.fields[i];
        let v = f
            .read_u64(self.data, self.endian())
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

    pub(super) fn conv_str(&self, spec: &Spec, arg: &'a Expr, out: &mut Vec<u8>) -> EvalResult<()> {
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
    pub(super) fn kernel_str(&self, spec: &Spec, v: u64, out: &mut Vec<u8>) -> EvalResult<()> {
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

    pub(super) fn int(&self, e: &'a Expr) -> EvalResult<u64> {
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
    pub(super) fn scalar_field(&self, e: &Expr) -> Option<EvalResult<u64>> {
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
    pub(super) fn scalar_truth(&self, e: &Expr) -> Option<EvalResult<bool>> {
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

    pub(super) fn field(&self, i: usize) -> EvalResult<Value<'a>> {
        let f = &self.schema.fields[i];
        let endian = self.endian();
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
                Value::Bytes(f.bytes(self.data, endian).ok_or_else(short)?, 1)
            }
            FieldKind::Array { elem_size, .. }
            | FieldKind::DataLoc { elem_size }
            | FieldKind::RelLoc { elem_size }
            | FieldKind::DynamicArray { elem_size } => Value::Bytes(
                f.bytes(self.data, endian).ok_or_else(short)?,
                elem_size as u8,
            ),
        })
    }

    pub(super) fn dyn_field(&self, args: &'a [Expr]) -> EvalResult<&'a Field> {
        match args.first() {
            Some(Expr::Field(i)) => Ok(&self.schema.fields[*i]),
            // `__get_str(name)` names the field without REC->.
            _ => Err("helper argument is not a field".into()),
        }
    }

    pub(super) fn eval(&self, e: &'a Expr) -> EvalResult<Value<'a>> {
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
                // libtraceevent reads a name as the address its function map (all of
                // kallsyms) gives it, and one it does not find with strtoull: 0.
                int_of(
                    self.env
                        .functions
                        .and_then(|f| f.address_of(n))
                        .unwrap_or(0),
                )
            }
            Expr::Ident(n) => match crate::event::constants::constant(n) {
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
                        let raw = read_elem(b, 0, el, self.endian())
                            .ok_or("dereference past the data")?;
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
                if let Some(v) = match **a {
                    Expr::Field(f) => self.array_element(f, idx),
                    _ => None,
                } {
                    return Ok(v);
                }
                match self.eval(a)? {
                    Value::Bytes(b, el) => {
                        let el = el.max(1) as usize;
                        let raw = read_elem(b, idx, el, self.endian())
                            .ok_or("array index past the data")?;
                        element_value(raw, el)
                    }
                    _ => return Err("indexing a number".into()),
                }
            }
            Expr::Call(name, args) => self.call(name, args)?,
        })
    }

    /// An element of a fixed array field as libtraceevent (trace-cmd style) reads it: by
    /// itself, so that the rest of the array may lie past the end of the record, and as 0
    /// when the element does (`ftrace:kernel_stack` records hold only the entries they use
    /// of `caller[8]`). None in other styles or for a field that is no such array.
    pub(super) fn array_element(&self, field: usize, idx: usize) -> Option<Value<'a>> {
        if self.env.style != PrintStyle::TraceCmd {
            return None;
        }
        let f = &self.schema.fields[field];
        let FieldKind::Array { elem_size, .. } = f.kind else {
            return None;
        };
        let start = idx.checked_mul(elem_size)?.checked_add(f.offset)?;
        let raw = match self.data.get(start..start.checked_add(elem_size)?) {
            Some(b) => read_elem(b, 0, elem_size.max(1), self.endian())?,
            None => 0,
        };
        Some(element_value(raw, elem_size))
    }

    pub(super) fn cast(&self, ty: &CType, v: Value<'a>) -> Value<'a> {
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
    pub(super) fn cast_int(&self, ty: &CType, i: Int) -> Int {
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

    pub(super) fn call(&self, name: &str, args: &'a [Expr]) -> EvalResult<Value<'a>> {
        let endian = self.endian();
        match name {
            "__get_str" | "__get_rel_str" => {
                let f = self.dyn_field(args)?;
                Ok(Value::Bytes(
                    until_nul(f.bytes(self.data, endian).ok_or("bad __data_loc")?),
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
                    f.bytes(self.data, endian).ok_or("bad __data_loc")?,
                    el as u8,
                ))
            }
            "__get_dynamic_array_len" | "__get_rel_dynamic_array_len" => {
                let f = self.dyn_field(args)?;
                Ok(Value::Int {
                    v: f.bytes(self.data, endian).ok_or("bad __data_loc")?.len() as u64,
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

    pub(super) fn ptr_bytes(&self, e: &'a Expr) -> EvalResult<&'a [u8]> {
        match self.eval(e)? {
            Value::Bytes(b, _) => Ok(b),
            _ => Err("a helper needs a pointer into the payload".into()),
        }
    }

    /// libtraceevent's reading of `a OP (b OP2 c ...)` when OP2 binds looser than OP: it
    /// forgets the parentheses and computes `(a OP b) OP2 c ...` (so `flags & (M | D)`
    /// becomes `(flags & M) | D`). `trace-cmd report` prints what that computes.
    pub(super) fn eval_rotated(
        &self,
        op: &'static str,
        a: &'a Expr,
        b: &'a Expr,
    ) -> EvalResult<Value<'a>> {
        let Expr::Binary(op2, ..) = b else {
            return Err("internal: not a binary expression".into());
        };
        let level = crate::event::expr::prec(op2);
        let mut rest: Vec<(&'static str, &'a Expr)> = Vec::new();
        let mut node = b;
        while let Expr::Binary(o, l, r) = node {
            if crate::event::expr::prec(o) != level {
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
}

/// An array element's value: elements narrower than an int are promoted to a signed
/// int, as C promotes them; wider ones keep their size.
fn element_value<'a>(raw: u64, el: usize) -> Value<'a> {
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
