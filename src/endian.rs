//! Byte order of the traced kernel, and the one integer reader every source uses.
//!
//! A trace's byte order is decided once (the file header of a trace.dat, the host for a
//! live tracefs) and carried as an [`Endianness`]; payloads, sub-buffer pages and
//! trace.dat sections are read through its methods.

/// The byte order of a trace's integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Endianness {
    /// Least significant byte first (x86, most arm64 and riscv kernels).
    #[default]
    Little,
    /// Most significant byte first (s390, big-endian powerpc).
    Big,
}

impl Endianness {
    /// The byte order of the machine running this code.
    pub const NATIVE: Endianness = if cfg!(target_endian = "big") {
        Endianness::Big
    } else {
        Endianness::Little
    };

    /// `Big` when `big` is true (a trace.dat header's flag, a page layout's field).
    #[inline]
    pub const fn big_if(big: bool) -> Endianness {
        if big {
            Endianness::Big
        } else {
            Endianness::Little
        }
    }

    /// Whether this is [`Endianness::Big`].
    #[inline(always)]
    pub const fn is_big(self) -> bool {
        matches!(self, Endianness::Big)
    }

    /// The unsigned integer of `size` bytes (1, 2, 4 or 8) at `off` in `data`; None when
    /// it does not fit or the size is another.
    #[inline(always)]
    pub fn read_uint(self, data: &[u8], off: usize, size: usize) -> Option<u64> {
        let end = off.checked_add(size)?;
        // Without a branch on the size: the eight bytes ending where the value ends, the
        // value kept from them (most fields lie at offset 8 or later).
        if let (Some(w), 1 | 2 | 4 | 8) = (end.checked_sub(8).and_then(|s| data.get(s..end)), size)
        {
            let w: [u8; 8] = w.try_into().ok()?;
            let bits = 8 * size as u32;
            return Some(match self {
                Endianness::Big => u64::from_be_bytes(w) & (u64::MAX >> (64 - bits)),
                Endianness::Little => u64::from_le_bytes(w) >> (64 - bits),
            });
        }
        let b = data.get(off..end)?;
        Some(match size {
            1 => b[0] as u64,
            2 => self.u16(b) as u64,
            4 => self.u32(b) as u64,
            8 => self.u64(b),
            _ => return None,
        })
    }

    /// The unsigned integer the bytes of `b` make, whatever their number up to 8 (a
    /// 3-byte field, say); more bytes keep the low 64 bits.
    #[inline]
    pub fn uint_of(self, b: &[u8]) -> u64 {
        let fold = |v: u64, x: &u8| (v << 8) | u64::from(*x);
        match self {
            Endianness::Big => b.iter().fold(0, fold),
            Endianness::Little => b.iter().rev().fold(0, fold),
        }
    }

    /// The `u16` of the first two bytes of `b` (which must hold them).
    #[inline]
    pub fn u16(self, b: &[u8]) -> u16 {
        let a = [b[0], b[1]];
        match self {
            Endianness::Big => u16::from_be_bytes(a),
            Endianness::Little => u16::from_le_bytes(a),
        }
    }

    /// The `u32` of the first four bytes of `b` (which must hold them).
    #[inline]
    pub fn u32(self, b: &[u8]) -> u32 {
        let a = [b[0], b[1], b[2], b[3]];
        match self {
            Endianness::Big => u32::from_be_bytes(a),
            Endianness::Little => u32::from_le_bytes(a),
        }
    }

    /// The `u64` of the first eight bytes of `b` (which must hold them).
    #[inline]
    pub fn u64(self, b: &[u8]) -> u64 {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[..8]);
        match self {
            Endianness::Big => u64::from_be_bytes(a),
            Endianness::Little => u64::from_le_bytes(a),
        }
    }

    /// The `u32` at `off` in `b`; None when `b` ends before it does.
    #[inline(always)]
    pub fn u32_at(self, b: &[u8], off: usize) -> Option<u32> {
        let a: [u8; 4] = b.get(off..off.checked_add(4)?)?.try_into().ok()?;
        Some(match self {
            Endianness::Big => u32::from_be_bytes(a),
            Endianness::Little => u32::from_le_bytes(a),
        })
    }

    /// The `u64` at `off` in `b`; None when `b` ends before it does.
    #[inline(always)]
    pub fn u64_at(self, b: &[u8], off: usize) -> Option<u64> {
        let a: [u8; 8] = b.get(off..off.checked_add(8)?)?.try_into().ok()?;
        Some(match self {
            Endianness::Big => u64::from_be_bytes(a),
            Endianness::Little => u64::from_le_bytes(a),
        })
    }

    /// `v` as two bytes in this order.
    #[inline]
    pub fn u16_bytes(self, v: u16) -> [u8; 2] {
        match self {
            Endianness::Big => v.to_be_bytes(),
            Endianness::Little => v.to_le_bytes(),
        }
    }

    /// `v` as four bytes in this order.
    #[inline]
    pub fn u32_bytes(self, v: u32) -> [u8; 4] {
        match self {
            Endianness::Big => v.to_be_bytes(),
            Endianness::Little => v.to_le_bytes(),
        }
    }

    /// `v` as eight bytes in this order.
    #[inline]
    pub fn u64_bytes(self, v: u64) -> [u8; 8] {
        match self {
            Endianness::Big => v.to_be_bytes(),
            Endianness::Little => v.to_le_bytes(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Endianness;

    #[test]
    fn read_uint_agrees_with_a_byte_loop() {
        let data: Vec<u8> = (0..24u8).map(|i| i.wrapping_mul(37) ^ 0xa5).collect();
        for len in 0..=data.len() {
            let d = &data[..len];
            for off in 0..=len + 2 {
                for size in 0..=9 {
                    for endian in [Endianness::Little, Endianness::Big] {
                        let want =
                            (matches!(size, 1 | 2 | 4 | 8) && off + size <= len).then(|| {
                                let b = &d[off..off + size];
                                let mut v = 0u64;
                                for i in 0..size {
                                    let byte = if endian.is_big() {
                                        b[i]
                                    } else {
                                        b[size - 1 - i]
                                    };
                                    v = v << 8 | u64::from(byte);
                                }
                                v
                            });
                        assert_eq!(
                            endian.read_uint(d, off, size),
                            want,
                            "len {len} off {off} size {size} {endian:?}"
                        );
                    }
                }
            }
        }
        assert_eq!(Endianness::Little.read_uint(&data, usize::MAX, 8), None);
    }

    #[test]
    fn odd_sizes_and_fixed_widths() {
        use Endianness::{Big, Little};
        assert_eq!(Little.uint_of(&[1, 2, 3]), 0x030201);
        assert_eq!(Big.uint_of(&[1, 2, 3]), 0x010203);
        assert_eq!(Big.u32(&Big.u32_bytes(7)), 7);
        assert_eq!(Little.u64(&Little.u64_bytes(u64::MAX - 1)), u64::MAX - 1);
        assert_eq!(Little.u16(&[1, 2]), 0x0201);
    }
}
