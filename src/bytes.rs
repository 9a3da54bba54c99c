//! Appending short byte strings to an output buffer.

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

#[cfg(test)]
mod tests {
    use super::put;

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
}
