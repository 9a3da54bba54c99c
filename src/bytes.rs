//! Byte buffers: appending short byte strings to an output buffer, and fresh buffers of
//! megabytes that fill without a page fault per page, and bytes taken as text.

/// Append `s` to `out`.
///
/// The pieces of a rendered line are mostly a few bytes long (a separator, a number's
/// digits, a field or symbol name). `Vec::extend_from_slice` hands each one to libc's
/// `memcpy`, whose call and size dispatch cost more than the copy itself: it was an eighth
/// of a report's time. Up to 64 bytes are moved here with unaligned 16-, 8-, 4-byte or
/// single-byte loads and stores that may overlap, so there is no loop over bytes.
#[inline(always)]
pub(crate) fn put(out: &mut Vec<u8>, s: &[u8]) {
    let n = s.len();
    if n > 64 {
        out.extend_from_slice(s);
        return;
    }
    out.reserve(n);
    let len = out.len();
    // SAFETY: `reserve` left room for `n` bytes after `len`. Every load below reads
    // inside `s[0..n]` and every store writes inside the `n` spare bytes at `dst`
    // (pairs of accesses overlap when `n` is not a multiple of their width), and `s`
    // cannot lie in `out`'s spare capacity, which no shared borrow can reach. All bytes
    // of `dst[0..n]` are written before the length covers them.
    unsafe {
        let src = s.as_ptr();
        let dst = out.as_mut_ptr().add(len);
        if n >= 16 {
            let mut i = 0;
            while i + 16 < n {
                dst.add(i)
                    .cast::<[u8; 16]>()
                    .write_unaligned(src.add(i).cast::<[u8; 16]>().read_unaligned());
                i += 16;
            }
            dst.add(n - 16)
                .cast::<[u8; 16]>()
                .write_unaligned(src.add(n - 16).cast::<[u8; 16]>().read_unaligned());
        } else if n >= 8 {
            let a = src.cast::<u64>().read_unaligned();
            let b = src.add(n - 8).cast::<u64>().read_unaligned();
            dst.cast::<u64>().write_unaligned(a);
            dst.add(n - 8).cast::<u64>().write_unaligned(b);
        } else if n >= 4 {
            let a = src.cast::<u32>().read_unaligned();
            let b = src.add(n - 4).cast::<u32>().read_unaligned();
            dst.cast::<u32>().write_unaligned(a);
            dst.add(n - 4).cast::<u32>().write_unaligned(b);
        } else if n > 0 {
            *dst = *src;
            *dst.add(n / 2) = *src.add(n / 2);
            *dst.add(n - 1) = *src.add(n - 1);
        }
        out.set_len(len + n);
    }
}

/// A short constant text kept inline, padded to sixteen bytes so that it is copied with one
/// sixteen-byte load and store whatever its length; longer texts are boxed.
#[derive(Debug, Clone)]
pub(crate) struct Text(Repr);

/// Private, so that only `Text::new` makes a short text (its length within its bytes).
#[derive(Debug, Clone)]
enum Repr {
    Short([u8; 16], u8),
    Long(Box<[u8]>),
}

impl Text {
    pub(crate) fn new(b: &[u8]) -> Text {
        Text(if b.len() <= 16 {
            let mut a = [0u8; 16];
            a[..b.len()].copy_from_slice(b);
            Repr::Short(a, b.len() as u8)
        } else {
            Repr::Long(b.into())
        })
    }

    /// Append the text to `out`.
    #[inline(always)]
    pub(crate) fn put(&self, out: &mut Vec<u8>) {
        match &self.0 {
            // SAFETY: `Text::new` keeps a short text's length within its 16 bytes.
            Repr::Short(a, n) => unsafe { put_prefix(out, *a, *n as usize) },
            Repr::Long(b) => put(out, b),
        }
    }
}

impl Default for Text {
    fn default() -> Text {
        Text::new(b"")
    }
}

/// Append a fixed-size array with one unaligned store.
#[inline(always)]
pub(crate) fn put_array<const N: usize>(out: &mut Vec<u8>, a: [u8; N]) {
    // SAFETY: all N bytes are kept.
    unsafe { put_prefix(out, a, N) }
}

/// Store all `N` bytes of `a` after `out`'s end and keep the first `n` of them: one store
/// whatever `n` is.
///
/// # Safety
/// `n` must be at most `N`, or the length would cover bytes never written. (A `min`
/// here instead cost the rendering loop 5% more instructions.)
#[inline(always)]
pub(crate) unsafe fn put_prefix<const N: usize>(out: &mut Vec<u8>, a: [u8; N], n: usize) {
    debug_assert!(n <= N);
    out.reserve(N);
    let len = out.len();
    // SAFETY: `reserve` left room for the `N` bytes stored; the length then covers the
    // first `n` of them, which the caller keeps within `N`.
    unsafe {
        out.as_mut_ptr()
            .add(len)
            .cast::<[u8; N]>()
            .write_unaligned(a);
        out.set_len(len + n);
    }
}

// Numbers are written straight into the output's spare room. Writing their digits to a
// stack buffer and copying them out reads back bytes the CPU is still storing, with wider
// loads than the stores: the load then waits for the stores to retire (a failed store
// forward, a dozen cycles or more, several times per line).

/// Two-digit pairs "00".."99": one division per two digits.
const DIGIT_PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Number of decimal digits of `v`.
#[inline]
pub(crate) fn dec_len(v: u64) -> usize {
    // From the bit length without branches: `bits * 1233 >> 12` is log10(2^bits) rounded
    // down or one above log10(v); the table settles which.
    const POW10: [u64; 20] = {
        let mut t = [1u64; 20];
        let mut i = 1;
        while i < 20 {
            t[i] = t[i - 1] * 10;
            i += 1;
        }
        t
    };
    let bits = 64 - (v | 1).leading_zeros() as usize;
    let t = (bits * 1233) >> 12;
    t + 1 - usize::from((v | 1) < POW10[t])
}

/// The low `n` decimal digits of `v` (leading zeros when `v` has fewer) at `dst[..n]`.
///
/// # Safety
/// `dst` must be valid for writes of `n` bytes.
#[inline(always)]
unsafe fn dec_at(dst: *mut u8, n: usize, mut v: u64) {
    let mut i = n;
    while i >= 2 {
        let d = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        dst.add(i)
            .cast::<[u8; 2]>()
            .write_unaligned([DIGIT_PAIRS[d], DIGIT_PAIRS[d + 1]]);
    }
    if i == 1 {
        *dst = b'0' + (v % 10) as u8;
    }
}

/// The low `b.len()` decimal digits of `v` into `b` (leading zeros when `v` has fewer).
#[inline]
pub(crate) fn write_dec(b: &mut [u8], v: u64) {
    // SAFETY: `b` is valid for writes of its length.
    unsafe { dec_at(b.as_mut_ptr(), b.len(), v) }
}

/// Append `v` in decimal.
#[inline]
pub(crate) fn push_dec(out: &mut Vec<u8>, v: u64) {
    // Single digits (a syscall's return, most small fields) skip the length and the
    // digit-pair loop.
    if v < 10 {
        out.push(b'0' + v as u8);
        return;
    }
    push_dec_width(out, v, dec_len(v));
}

/// Append the low `width` decimal digits of `v`, zero-padded (`%0*lu` for a `v` that fits).
#[inline]
pub(crate) fn push_dec_width(out: &mut Vec<u8>, v: u64, width: usize) {
    out.reserve(width);
    let len = out.len();
    // SAFETY: `reserve` left room for the `width` bytes `dec_at` writes, all of them,
    // before the length covers them.
    unsafe {
        dec_at(out.as_mut_ptr().add(len), width, v);
        out.set_len(len + width);
    }
}

/// Append `v` in decimal with a `-` when negative.
#[inline]
pub(crate) fn push_i64(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    push_dec(out, v.unsigned_abs());
}

/// Append `v` in decimal, right-aligned in `width` with `fill` (`%*lu`, `%0*lu`).
#[inline]
pub(crate) fn push_dec_padded(out: &mut Vec<u8>, v: u64, width: usize, fill: u8) {
    let n = dec_len(v);
    if width > n {
        out.resize(out.len() + width - n, fill);
    }
    push_dec_width(out, v, n);
}

/// Append `v` (below 1,000,000) as six digits, zero-padded: a microsecond fraction. The
/// three digit pairs come from independent 32-bit products instead of a chain of
/// divisions.
#[inline]
pub(crate) fn push_dec6(out: &mut Vec<u8>, v: u32) {
    push_dec6_then(out, v, []);
}

/// [`push_dec6`] followed by the `N` (at most 2) bytes of `after`, in one store.
#[inline]
pub(crate) fn push_dec6_then<const N: usize>(out: &mut Vec<u8>, v: u32, after: [u8; N]) {
    debug_assert!(v < 1_000_000);
    const { assert!(N <= 2) };
    let hi = v / 10_000;
    let mid = (v / 100) % 100;
    let lo = v % 100;
    let pair = |d: u32| {
        let d = d as usize * 2;
        [DIGIT_PAIRS[d], DIGIT_PAIRS[d + 1]]
    };
    let [a, b] = pair(hi);
    let [c, d] = pair(mid);
    let [e, f] = pair(lo);
    let mut w = [a, b, c, d, e, f, 0, 0];
    w[6..6 + N].copy_from_slice(&after);
    // SAFETY: 6 + N is at most 8, the array's length.
    unsafe { put_prefix(out, w, 6 + N) };
}

/// The eight hex digits of `x`, most significant first, as a big-endian number.
#[inline(always)]
fn hex_ascii8(x: u32, upper: bool) -> u64 {
    // All eight nibbles at once: spread each to a byte (the lowest nibble in the lowest
    // byte), then turn 0..15 into '0'..'9' / 'a'..'f' with carries that cannot cross
    // bytes.
    let x = u64::from(x);
    let x = (x | (x << 16)) & 0x0000_ffff_0000_ffff;
    let x = (x | (x << 8)) & 0x00ff_00ff_00ff_00ff;
    let n = (x | (x << 4)) & 0x0f0f_0f0f_0f0f_0f0f;
    // Bytes holding 10..15 get bit 4 set by +6; those get the extra letter offset.
    let letters = ((n + 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101;
    let gap = if upper { 7 } else { 39 };
    n + 0x3030_3030_3030_3030 + letters * gap
}

/// The sixteen hex digits of `v`, most significant first, as a big-endian number.
#[inline(always)]
fn hex_ascii(v: u64, upper: bool) -> u128 {
    (u128::from(hex_ascii8((v >> 32) as u32, upper)) << 64)
        | u128::from(hex_ascii8(v as u32, upper))
}

/// Append the low `width` (1 to 16) hex digits of `v`, leading zeros included.
#[inline]
pub(crate) fn push_hex_width(out: &mut Vec<u8>, v: u64, width: usize, upper: bool) {
    let width = width.clamp(1, 16);
    // The wanted digits moved to the front of the sixteen, stored all at once.
    let text = (hex_ascii(v, upper) << (8 * (16 - width))).to_be_bytes();
    // SAFETY: `width` was clamped to the sixteen digits stored.
    unsafe { put_prefix(out, text, width) }
}

/// Append `v` in hex without leading zeros (`%x`, `%X`).
#[inline(always)]
pub(crate) fn push_hex(out: &mut Vec<u8>, v: u64, upper: bool) {
    // Over half the arguments of a syscall are one digit (a descriptor, a flag, 0).
    if v < 16 {
        let digits = if upper {
            b"0123456789ABCDEF"
        } else {
            b"0123456789abcdef"
        };
        out.push(digits[v as usize]);
        return;
    }
    let digits = (64 - v.leading_zeros()).div_ceil(4).max(1) as usize;
    if digits <= 8 {
        // Half the work for the small values most fields hold.
        let text = (hex_ascii8(v as u32, upper) << (8 * (8 - digits))).to_be_bytes();
        // SAFETY: `digits` is at most the eight digits stored.
        unsafe { put_prefix(out, text, digits) }
    } else {
        push_hex_width(out, v, digits, upper);
    }
}

/// An empty buffer with room for `len` bytes, in memory the kernel may back with 2 MiB
/// pages (`madvise(MADV_HUGEPAGE)`, honoured where transparent huge pages are enabled
/// for `madvise` or always).
///
/// Writing megabytes into fresh memory otherwise takes one page fault per 4 KiB: a
/// trace.dat's kallsyms section (5 MB) cost 1,300 of them, a few milliseconds in a
/// virtual machine, on the way to a report's first line. The buffer has 2 MiB of slack
/// so that the huge page holding its last byte lies inside it.
pub(crate) fn huge_page_buffer(len: usize) -> Vec<u8> {
    const HUGE: usize = 2 << 20;
    let v: Vec<u8> = Vec::with_capacity(len.saturating_add(HUGE));
    let page = 4096;
    let start = (v.as_ptr() as usize).next_multiple_of(page);
    let end = (v.as_ptr() as usize + v.capacity()) / page * page;
    if end > start {
        // SAFETY: `start..end` lies inside the allocation `v` owns, page-aligned as
        // madvise requires; the advice only changes how its pages are backed, never
        // their contents, and a kernel without the feature just returns an error.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
    v
}

/// `bytes` as text, invalid UTF-8 replaced (as `String::from_utf8_lossy`): ASCII, as a
/// kallsyms text is, is told by one vector search, which costs less than validating it.
pub(crate) fn text_lossy(bytes: Vec<u8>) -> String {
    if bytes.is_ascii() {
        // SAFETY: ASCII bytes are UTF-8.
        return unsafe { String::from_utf8_unchecked(bytes) };
    }
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_page_buffer_holds_what_is_written() {
        let mut b = huge_page_buffer(5 << 20);
        assert!(b.is_empty() && b.capacity() >= 5 << 20);
        b.resize(5 << 20, b'x');
        assert!(b.iter().all(|&c| c == b'x'));
        assert!(huge_page_buffer(0).is_empty());
    }

    #[test]
    fn texts_of_every_length() {
        let src: Vec<u8> = (b'a'..=b'z').cycle().take(40).collect();
        for n in 0..40 {
            let t = Text::new(&src[..n]);
            let mut out = b"x".to_vec();
            t.put(&mut out);
            t.put(&mut out);
            assert_eq!(out, [&b"x"[..], &src[..n], &src[..n]].concat());
        }
    }

    #[test]
    fn decimal_lengths() {
        for p in 0..20u32 {
            let x = 10u64.pow(p);
            for v in [
                x - 1,
                x,
                x + 1,
                x.saturating_mul(2) - 1,
                x.saturating_mul(9),
            ] {
                assert_eq!(dec_len(v), v.to_string().len(), "{v}");
            }
        }
        assert_eq!(dec_len(u64::MAX), 20);
        for b in 0..64 {
            for v in [1u64 << b, (1u64 << b) - 1, (1u64 << b) + 1] {
                assert_eq!(dec_len(v), v.to_string().len(), "{v}");
            }
        }
    }

    #[test]
    fn numbers_match_std_formatting() {
        let mut vals = vec![
            0u64,
            1,
            9,
            10,
            99,
            100,
            999_999,
            1_000_000,
            u64::MAX,
            u64::MAX / 3,
        ];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            vals.push(x >> (x % 64));
            vals.push(10u64.pow((x % 20) as u32));
        }
        for v in vals {
            for start in [0usize, 3, 17] {
                let pre = vec![b'#'; start];
                let mut out = pre.clone();
                push_dec(&mut out, v);
                assert_eq!(out[start..], *v.to_string().as_bytes());
                out.truncate(start);
                push_hex(&mut out, v, false);
                push_hex(&mut out, v, true);
                assert_eq!(out[start..], *format!("{v:x}{v:X}").as_bytes());
                for w in 1..=16 {
                    out.truncate(start);
                    push_hex_width(&mut out, v, w, false);
                    let full = format!("{v:016x}");
                    assert_eq!(out[start..], full.as_bytes()[16 - w..], "{v:#x} width {w}");
                }
                out.truncate(start);
                push_dec_padded(&mut out, v, 24, b' ');
                push_i64(&mut out, v as i64);
                assert_eq!(out[start..], *format!("{v:>24}{}", v as i64).as_bytes());
                let mut b = [b'#'; 20];
                write_dec(&mut b[3..15], v);
                assert_eq!(&b[3..15], &format!("{v:020}").as_bytes()[8..]);
                assert_eq!((&b[..3], &b[15..]), (&[b'#'; 3][..], &[b'#'; 5][..]));
                out.truncate(start);
                push_dec6(&mut out, (v % 1_000_000) as u32);
                assert_eq!(out[start..], *format!("{:06}", v % 1_000_000).as_bytes());
                for w in [1usize, 2, 6, 7, 20] {
                    out.truncate(start);
                    push_dec_width(&mut out, v, w);
                    let full = format!("{v:020}");
                    assert_eq!(out[start..], full.as_bytes()[20 - w..], "{v} width {w}");
                }
                assert_eq!(out[..start], pre[..]);
            }
        }
    }

    #[test]
    fn every_length_and_offset_copies_exactly() {
        let src: Vec<u8> = (0..200u8).collect();
        for start_len in [0usize, 1, 7, 15, 31] {
            for n in 0..=130 {
                for from in [0usize, 1, 3, 9] {
                    let mut out: Vec<u8> = (0..start_len as u8).map(|b| b ^ 0xaa).collect();
                    let before = out.clone();
                    put(&mut out, &src[from..from + n]);
                    assert_eq!(out.len(), start_len + n);
                    assert_eq!(&out[..start_len], &before[..]);
                    assert_eq!(&out[start_len..], &src[from..from + n], "n={n} from={from}");
                }
            }
        }
    }

    #[test]
    fn grows_a_full_buffer() {
        let mut out = Vec::with_capacity(3);
        out.extend_from_slice(b"abc");
        put(&mut out, b"0123456789abcdefXYZ");
        put(&mut out, b"!");
        assert_eq!(out, b"abc0123456789abcdefXYZ!");
    }

    #[test]
    fn text_lossy_keeps_ascii_and_replaces_bad_utf8() {
        assert_eq!(
            text_lossy(b"ffffffff81000000 T _stext\n".to_vec()),
            "ffffffff81000000 T _stext\n"
        );
        assert_eq!(text_lossy("caf\u{e9}".as_bytes().to_vec()), "caf\u{e9}");
        assert_eq!(text_lossy(vec![b'a', 0xff, b'b']), "a\u{fffd}b");
    }
}
