//! `field=value` listings: the fallback when a `print fmt` cannot be evaluated, and
//! libtraceevent's raw listing (`trace-cmd report -R`).

use super::compile::Kind;
use super::eval::Evaluator;
use super::helpers::print_array;
use super::printf::{push_hex2, Seg, Spec};
use crate::bytes::{push_dec as push_u64, push_hex, push_i64};
use crate::endian::Endianness;
use crate::event::expr::Expr;
use crate::event::format::{sign_extend, until_nul, Field, FieldKind, Schema};
use crate::event::{PrintEnv, Record};

impl Schema {
    /// Append every non-common field as `name=value`, separated by spaces: the text used
    /// when the `print fmt` cannot be evaluated.
    pub fn write_fields(&self, rec: &Record, env: &PrintEnv, out: &mut Vec<u8>) {
        let endian = env.endian;
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
            write_field_value(f, rec.data, endian, out);
        }
    }

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
        // An event libtraceevent failed has no print fmt to take conversions from.
        let kind = if self.program.tracecmd_fails {
            &Kind::Empty
        } else {
            kind
        };
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
pub(super) fn raw_field(f: &Field, data: &[u8], env: &PrintEnv, out: &mut Vec<u8>) {
    let endian = env.endian;
    let is_string = f.type_name.contains("char");
    match f.kind {
        FieldKind::Scalar | FieldKind::Pointer => {
            let v = f.read_u64(data, endian).unwrap_or(0);
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
            let b = f.bytes(data, endian).unwrap_or(&[]);
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
pub(crate) fn write_field_value(f: &Field, data: &[u8], endian: Endianness, out: &mut Vec<u8>) {
    let is_char = f.type_name.contains("char");
    match f.kind {
        FieldKind::Scalar => match f.read_u64(data, endian) {
            Some(v) if f.signed => push_i64(out, sign_extend(v, f.size)),
            Some(v) => push_u64(out, v),
            None => crate::bytes::put(out, b"<short>"),
        },
        FieldKind::Pointer => match f.read_u64(data, endian) {
            Some(v) => {
                crate::bytes::put(out, b"0x");
                push_hex(out, v, false);
            }
            None => crate::bytes::put(out, b"<short>"),
        },
        FieldKind::CharArray { .. } => {
            crate::bytes::put(out, f.str(data, endian).unwrap_or(b"<short>"))
        }
        _ if is_char => crate::bytes::put(out, f.str(data, endian).unwrap_or(b"<bad data_loc>")),
        FieldKind::Array { elem_size, .. }
        | FieldKind::DataLoc { elem_size }
        | FieldKind::RelLoc { elem_size }
        | FieldKind::DynamicArray { elem_size } => match f.bytes(data, endian) {
            Some(b) => print_array(out, b, elem_size, b.len() / elem_size.max(1), endian),
            None => crate::bytes::put(out, b"<bad data_loc>"),
        },
    }
}
