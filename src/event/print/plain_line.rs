//! The planned fast path's narrowest case: a `print fmt` whose every conversion prints
//! one integer field as it is (`NR %ld (%lx, %lx, %lx, %lx, %lx, %lx)` and `NR %ld = %ld`,
//! the raw syscall events that fill most system-wide traces). Each conversion becomes a
//! read at a fixed offset and the shifts and masks its read, cast and length modifier
//! amount to, all worked out at compile time; the payload's size is checked once for the
//! whole line instead of once per field.

use super::plan::{Piece, Plan};
use crate::bytes::{push_dec, push_hex, push_i64, Text};

/// A plan made only of [`Piece::Plain`] steps without a pointer cast.
#[derive(Debug, Clone)]
pub(crate) struct PlainLine {
    steps: Box<[PlainStep]>,
    tail: Text,
    /// Payload bytes the reads need.
    need: usize,
}

/// One conversion of a [`PlainLine`] and the literal text before it.
#[derive(Debug, Clone)]
struct PlainStep {
    before: Text,
    /// Start of the eight payload bytes that end where the field ends.
    at: usize,
    /// The bits of those eight bytes that are not the field's.
    drop: u32,
    /// Sign extension of the field's value: the shift left and back (0 for none).
    read_sx: u32,
    /// An integer cast (`(int)REC->x`): the bits it keeps, then its sign extension.
    cast_mask: u64,
    cast_sx: u32,
    /// The conversion's length modifier: the bits it keeps, and for `%d` its sign
    /// extension.
    len_mask: u64,
    len_sx: u32,
    /// Whether the value printed is the field's bits as read, without an extension, a
    /// cast or a length modifier changing it: every raw syscall conversion, which then
    /// skips the shifts and masks.
    direct: bool,
    conv: PlainConv,
}

#[derive(Debug, Clone, Copy)]
enum PlainConv {
    Unsigned,
    Signed,
    Hex,
    HexUpper,
}

/// The low `bytes` bytes of a value (all of it from 8 up).
fn mask(bytes: u8) -> u64 {
    if bytes >= 8 {
        u64::MAX
    } else {
        (1u64 << (u32::from(bytes) * 8)) - 1
    }
}

/// The shift that sign-extends a value of `bytes` bytes as `sign_extend` does: only 1, 2
/// and 4 byte values are extended.
fn sx_shift(bytes: u8) -> u32 {
    match bytes {
        1 | 2 | 4 => 64 - u32::from(bytes) * 8,
        _ => 0,
    }
}

/// `v` with the bit `64 - shift - 1` copied into the `shift` bits above it.
#[inline(always)]
fn sx(v: u64, shift: u32) -> u64 {
    (((v << shift) as i64) >> shift) as u64
}

impl PlainLine {
    /// The line of a plan, when all its steps are plain conversions whose fields end at
    /// offset 8 or later (after the common type and flags; every event's own fields do).
    pub(super) fn of(plan: &Plan) -> Option<PlainLine> {
        let mut steps = Vec::with_capacity(plan.steps.len());
        let mut need = 0;
        for (before, piece) in &plan.steps {
            let Piece::Plain {
                read,
                cast,
                len,
                conv,
            } = piece
            else {
                return None;
            };
            let end = read.off.checked_add(usize::from(read.size))?;
            if end < 8 || !matches!(read.size, 1 | 2 | 4 | 8) {
                return None;
            }
            need = need.max(end);
            let (cast_mask, cast_sx) = match *cast {
                None => (u64::MAX, 0),
                Some((true, _, _)) => return None,
                Some((false, _, 0)) => (u64::MAX, 0),
                Some((false, signed, size)) => (
                    mask(size),
                    if signed && size < 8 {
                        sx_shift(size)
                    } else {
                        0
                    },
                ),
            };
            let read_sx = if read.sext { sx_shift(read.size) } else { 0 };
            let (len_mask, len_sx) = (mask(*len), sx_shift(*len));
            steps.push(PlainStep {
                before: before.clone(),
                at: end - 8,
                drop: 64 - u32::from(read.size) * 8,
                read_sx,
                cast_mask,
                cast_sx,
                len_mask,
                len_sx,
                direct: read_sx == 0
                    && cast_mask == u64::MAX
                    && cast_sx == 0
                    && len_mask == u64::MAX
                    && len_sx == 0,
                conv: match conv {
                    b'u' => PlainConv::Unsigned,
                    b'x' => PlainConv::Hex,
                    b'X' => PlainConv::HexUpper,
                    _ => PlainConv::Signed,
                },
            });
        }
        Some(PlainLine {
            steps: steps.into(),
            tail: plan.tail.clone(),
            need,
        })
    }

    /// Append the line for payload `data`; false (and nothing written) when the payload
    /// is too short for it, for the general plan to say why.
    #[inline]
    pub(crate) fn write(&self, data: &[u8], big: bool, out: &mut Vec<u8>) -> bool {
        if data.len() < self.need {
            return false;
        }
        let start = out.len();
        let done = if big {
            self.write_in::<true>(data, out)
        } else {
            self.write_in::<false>(data, out)
        };
        if !done {
            out.truncate(start);
        }
        done
    }

    #[inline(always)]
    fn write_in<const BIG: bool>(&self, data: &[u8], out: &mut Vec<u8>) -> bool {
        for s in self.steps.iter() {
            s.before.put(out);
            let Some(w) = data.get(s.at..s.at + 8) else {
                return false;
            };
            let w: [u8; 8] = w.try_into().unwrap_or_default();
            let raw = if BIG {
                u64::from_be_bytes(w) & (u64::MAX >> s.drop)
            } else {
                u64::from_le_bytes(w) >> s.drop
            };
            let (v, signed) = if s.direct {
                (raw, raw)
            } else {
                let v = sx(sx(raw, s.read_sx) & s.cast_mask, s.cast_sx) & s.len_mask;
                (v, sx(v, s.len_sx))
            };
            match s.conv {
                PlainConv::Unsigned => push_dec(out, v),
                PlainConv::Signed => push_i64(out, signed as i64),
                PlainConv::Hex => push_hex(out, v, false),
                PlainConv::HexUpper => push_hex(out, v, true),
            }
        }
        self.tail.put(out);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::compile::Kind;
    use crate::endian::Endianness;
    use crate::event::format::Schema;
    use crate::event::{PrintEnv, PrintStyle, Record};

    /// Fields of every size and sign, printed with every length modifier and through
    /// integer casts: the line prints what the evaluator prints, in both byte orders and
    /// both styles, and a payload too short for it falls back as the evaluator does (in
    /// trace-cmd style an array element past the record reads as 0 instead).
    #[test]
    fn lines_print_what_the_evaluator_prints() {
        let format = "name: mix\nID: 7\nformat:\n\
            \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
            \tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
            \tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
            \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
            \tfield:char c;\toffset:8;\tsize:1;\tsigned:1;\n\
            \tfield:unsigned char uc;\toffset:9;\tsize:1;\tsigned:0;\n\
            \tfield:short s;\toffset:10;\tsize:2;\tsigned:1;\n\
            \tfield:unsigned int u;\toffset:12;\tsize:4;\tsigned:0;\n\
            \tfield:long l;\toffset:16;\tsize:8;\tsigned:1;\n\
            \tfield:unsigned long a[2];\toffset:24;\tsize:16;\tsigned:0;\n\n\
            print fmt: \"%d %u %x %X|%hhd %hd %hu %hhx|%ld %lu %lx %lld %llX|%d %u %x|%d %u|%ld %lx\", \
            REC->c, REC->c, REC->c, REC->uc, \
            REC->s, REC->s, REC->s, REC->u, \
            REC->l, REC->l, REC->u, REC->s, REC->c, \
            (int)REC->l, (unsigned char)REC->s, (short)REC->u, \
            (unsigned short)REC->c, (long)REC->uc, \
            REC->a[0], REC->a[1]\n";
        let s = Schema::parse("test", format, 8).expect("the format parses");
        for style in [PrintStyle::Kernel, PrintStyle::TraceCmd] {
            match s.program.kind_for(style) {
                Kind::Printf { plan: Some(p), .. } => assert!(p.line.is_some(), "{style:?}"),
                _ => panic!("no plan"),
            }
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let (mut planned, mut general) = (Vec::new(), Vec::new());
        for round in 0..400 {
            let len = if round % 50 == 0 { 30 } else { 40 };
            let data: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    // Small and sign-bit values as well as random ones.
                    [x as u8, 0, 1, 0x7f, 0x80, 0xff][(x >> 40) as usize % 6]
                })
                .collect();
            let rec = Record {
                cpu: 0,
                ts: 0,
                data: &data,
            };
            for endian in [Endianness::Little, Endianness::Big] {
                for style in [PrintStyle::Kernel, PrintStyle::TraceCmd] {
                    let env = PrintEnv {
                        style,
                        endian,
                        long_size: 8,
                        ..PrintEnv::default()
                    };
                    planned.clear();
                    general.clear();
                    let a = s.write_text(&rec, &env, &mut planned);
                    let b = s.write_text_unplanned(&rec, &env, &mut general);
                    assert_eq!(
                        (a, String::from_utf8_lossy(&planned)),
                        (b, String::from_utf8_lossy(&general)),
                        "{endian:?} {style:?} {data:02x?}"
                    );
                    // trace-cmd style reads `a[1]` past the record as 0.
                    assert_eq!(a, len == 40 || style == PrintStyle::TraceCmd);
                }
            }
        }
    }
}
