//! The kernel's printf: parsing a format string into literal text and conversions, and
//! writing one conversion (`vsnprintf`'s rules for flags, width, precision and length).

use crate::bytes::{push_dec as push_u64, push_hex, push_i64};
use crate::event::format::{sign_extend, until_nul};

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

    /// The spec with a `*` width and precision taken, in that order, from the arguments
    /// `next` reads, as the kernel's `vsnprintf` takes them: a negative width left-aligns,
    /// a negative precision is none, and both are capped at 4096.
    pub(crate) fn with_stars<E>(
        mut self,
        mut next: impl FnMut() -> Result<i32, E>,
    ) -> Result<Spec, E> {
        if self.width == -2 {
            let w = next()?;
            if w < 0 {
                self.left = true;
            }
            self.width = w.unsigned_abs().min(4096) as i32;
        }
        if self.prec == -2 {
            let p = next()?;
            self.prec = if p < 0 { -1 } else { p.min(4096) };
        }
        Ok(self)
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

/// A string conversion with width and precision, as the kernel's `string()` does it.
#[inline]
pub(crate) fn fmt_str(out: &mut Vec<u8>, s: &[u8], spec: &Spec) {
    // A plain `%s` (most of them: `rcu_utilization`'s, file names): the bytes alone.
    if spec.width <= 0 && spec.prec < 0 {
        crate::bytes::put(out, s);
        return;
    }
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
pub(super) fn plain_int(out: &mut Vec<u8>, v: u64, size: u8, conv: u8) {
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

/// Whether `v` is 0 once cut to the conversion's length modifier.
pub(super) fn int_is_zero(v: u64, spec: &Spec, long: u8) -> bool {
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
