//! Values of the `print fmt` expression language and C's integer arithmetic on them
//! (promotions, casts, signedness, the width of `long`).

use super::EvalResult;
use crate::endian::Endianness;
use crate::event::format::sign_extend;
use crate::event::pointer;

/// A value of the expression language.
#[derive(Debug, Clone)]
pub(super) enum Value<'a> {
    /// An integer with its C type: the value is kept sign-extended when signed.
    Int { v: u64, signed: bool, size: u8 },
    /// A pointer to bytes in the payload or in the program (strings, arrays).
    Bytes(&'a [u8], u8),
    /// Text made by a helper.
    Text(Vec<u8>),
}

/// An integer with its C type, as `Value::Int` holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Int {
    pub(super) v: u64,
    pub(super) signed: bool,
    pub(super) size: u8,
}

impl Int {
    /// `v` as a C integer of `size` bytes (0: 8).
    #[inline]
    pub(super) fn norm(v: u64, signed: bool, size: u8) -> Int {
        let size = if size == 0 { 8 } else { size };
        Int {
            v: norm_value(v, signed, size),
            signed,
            size,
        }
    }

    /// The type C gives the integer literal `v`: int, unsigned int, long or unsigned long.
    #[inline]
    pub(super) fn of(v: u64) -> Int {
        let (signed, size) = if v <= i32::MAX as u64 {
            (true, 4)
        } else if v <= u32::MAX as u64 {
            (false, 4)
        } else {
            (v <= i64::MAX as u64, 8)
        };
        Int { v, signed, size }
    }

    pub(super) fn val(self) -> Value<'static> {
        Value::Int {
            v: self.v,
            signed: self.signed,
            size: self.size,
        }
    }
}

pub(super) fn norm(v: u64, signed: bool, size: u8) -> Value<'static> {
    Int::norm(v, signed, size).val()
}

/// `v` as a C integer of `size` bytes (0: 8): truncated, sign-extended when signed.
#[inline]
pub(super) fn norm_value(v: u64, signed: bool, size: u8) -> u64 {
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

pub(super) fn int_of(v: u64) -> Value<'static> {
    Int::of(v).val()
}

pub(super) fn truthy(v: &Value) -> bool {
    match v {
        Value::Int { v, .. } => *v != 0,
        Value::Bytes(..) | Value::Text(_) => true,
    }
}

pub(super) fn read_elem(b: &[u8], i: usize, el: usize, endian: Endianness) -> Option<u64> {
    endian.read_uint(b, i.checked_mul(el)?, el)
}

pub(super) fn binary<'a>(op: &str, a: Value<'a>, b: Value<'a>) -> EvalResult<Value<'a>> {
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
pub(super) enum BinOp {
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
    pub(super) fn of(op: &str) -> Option<BinOp> {
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
pub(super) fn int_binary(op: BinOp, a: Int, b: Int) -> Option<Int> {
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
    pub(super) fn as_ptr_arg(&self) -> pointer::PtrArg<'_> {
        match self {
            Value::Int { v, .. } => pointer::PtrArg::Addr(*v),
            Value::Bytes(b, _) => pointer::PtrArg::Data(b),
            Value::Text(t) => pointer::PtrArg::Data(t),
        }
    }
}
