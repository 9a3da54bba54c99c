//! The length of an x86 instruction as perf 6.1 finds it (`perf script -F insnlen`):
//! perf decodes the bytes at a sample's address with the kernel's instruction decoder
//! (tools/arch/x86/lib/insn.c), whose tables come from the opcode maps of the Intel SDM
//! (x86-opcode-map.txt). The length is what that decoder counts: legacy prefixes, REX,
//! VEX (2 and 3 bytes) and EVEX, the opcode in the 1-, 2- and 3-byte maps, ModRM, SIB,
//! displacement and immediates sized by the operand- and address-size overrides.
//!
//! Where that decoder departs from the processor, perf's lengths do too, and so do
//! these: `call`, `jmp` and `jcc` with a 32-bit displacement, and `push` of an
//! immediate, keep four bytes of it under `66` in 64-bit mode (Intel's behavior); AMD's
//! XOP (`8f` with a map above 7) is decoded as `pop` (group 1A); `fwait` is an
//! instruction of its own, not a prefix of the x87 one after it. 3DNow! (`0f 0f`) is
//! ModRM then the opcode suffix byte.

/// The processor mode an instruction is decoded in: perf takes 64-bit for a sample in a
/// 64-bit ELF file, 32-bit otherwise (`dso->is_64_bit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Protected mode, 32-bit code segment.
    Bits32,
    /// Long mode, 64-bit code segment.
    Bits64,
}

/// The most bytes one instruction may have (the decoder reads no further).
pub const MAX_INSN_LEN: usize = 15;

/// How an operand size picks an immediate's length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Imm {
    None,
    /// `Ib`, `Jb`.
    Byte,
    /// `Iw`.
    Word,
    /// `Iz`, `Jz`: 2 bytes under a 16-bit operand size, else 4.
    Z,
    /// `Iv`: the operand size (2, 4 or 8).
    V,
    /// `Ap`: a far pointer, offset of the operand size then a 2-byte selector.
    FarPtr,
    /// `Ob`, `Ov`: a memory offset of the address size.
    MemOffset,
    /// `Iw,Ib` (`enter`).
    WordByte,
}

/// What the decoder knows of an opcode: whether a ModRM byte follows and the
/// immediate after it.
#[derive(Debug, Clone, Copy)]
struct Operands {
    modrm: bool,
    imm: Imm,
    /// `(f64)`/`(d64)` with a `z` immediate: the operand size is 64 bits in 64-bit
    /// mode whatever the prefixes say.
    force64: bool,
}

const fn ops(modrm: bool, imm: Imm) -> Operands {
    Operands {
        modrm,
        imm,
        force64: false,
    }
}

/// The one-byte opcode map (`op` is neither a prefix taken as one nor `0f`).
fn one_byte(op: u8) -> Operands {
    use Imm::*;
    match op {
        // The eight ALU rows: `op Eb,Gb`..`op Gv,Ev`, `op AL,Ib`, `op rAX,Iz`, then
        // segment pushes/pops, prefixes and BCD adjustments without operands.
        0x00..=0x3f => match op & 7 {
            0..=3 => ops(true, None),
            4 => ops(false, Byte),
            5 => ops(false, Z),
            _ => ops(false, None),
        },
        // inc/dec (32-bit; REX in 64-bit is taken before), push/pop, pusha/popa.
        0x40..=0x61 => ops(false, None),
        // bound, arpl/movsxd.
        0x62 | 0x63 => ops(true, None),
        0x64..=0x67 => ops(false, None),
        0x68 => Operands {
            modrm: false,
            imm: Z,
            force64: true,
        },
        0x69 => ops(true, Z),
        0x6a => ops(false, Byte),
        0x6b => ops(true, Byte),
        0x6c..=0x6f => ops(false, None),
        0x70..=0x7f => ops(false, Byte),
        0x80 | 0x82 | 0x83 => ops(true, Byte),
        0x81 => ops(true, Z),
        0x84..=0x8f => ops(true, None),
        0x90..=0x99 => ops(false, None),
        0x9a => ops(false, FarPtr),
        0x9b..=0x9f => ops(false, None),
        0xa0..=0xa3 => ops(false, MemOffset),
        0xa4..=0xa7 => ops(false, None),
        0xa8 => ops(false, Byte),
        0xa9 => ops(false, Z),
        0xaa..=0xaf => ops(false, None),
        0xb0..=0xb7 => ops(false, Byte),
        0xb8..=0xbf => ops(false, V),
        0xc0 | 0xc1 => ops(true, Byte),
        0xc2 => ops(false, Word),
        0xc3 => ops(false, None),
        // les/lds (VEX is taken before where it applies).
        0xc4 | 0xc5 => ops(true, None),
        0xc6 => ops(true, Byte),
        0xc7 => ops(true, Z),
        0xc8 => ops(false, WordByte),
        0xc9 => ops(false, None),
        0xca => ops(false, Word),
        0xcb | 0xcc => ops(false, None),
        0xcd => ops(false, Byte),
        0xce | 0xcf => ops(false, None),
        0xd0..=0xd3 => ops(true, None),
        0xd4 | 0xd5 => ops(false, Byte),
        // salc (unlisted), xlat; the x87 escapes take a ModRM.
        0xd6 | 0xd7 => ops(false, None),
        0xd8..=0xdf => ops(true, None),
        0xe0..=0xe7 => ops(false, Byte),
        0xe8 | 0xe9 => Operands {
            modrm: false,
            imm: Z,
            force64: true,
        },
        0xea => ops(false, FarPtr),
        0xeb => ops(false, Byte),
        0xec..=0xf5 => ops(false, None),
        // Group 3: `test` (/0, /1) has an immediate, decided with the ModRM.
        0xf6 | 0xf7 => ops(true, None),
        0xf8..=0xfd => ops(false, None),
        0xfe | 0xff => ops(true, None),
    }
}

/// The two-byte map (`0f op`), `last_prefix` being the last of `66`, `f2`, `f3` (or 0).
fn two_byte(op: u8, last_prefix: u8) -> Operands {
    use Imm::*;
    match op {
        0x00..=0x03 => ops(true, None),
        0x0d => ops(true, None),
        // 3DNow!: the last byte is the opcode.
        0x0f => ops(true, Byte),
        0x04..=0x0e => ops(false, None),
        0x10..=0x18 | 0x1a..=0x1c | 0x1e | 0x1f => ops(true, None),
        0x19 | 0x1d => ops(false, None),
        0x20..=0x23 => ops(true, None),
        0x24..=0x27 => ops(false, None),
        0x28..=0x2f => ops(true, None),
        0x30..=0x3f => ops(false, None),
        0x40..=0x6f => ops(true, None),
        0x70..=0x73 => ops(true, Byte),
        0x74..=0x76 => ops(true, None),
        // emms.
        0x77 => ops(false, None),
        0x78..=0x7f => ops(true, None),
        0x80..=0x8f => Operands {
            modrm: false,
            imm: Z,
            force64: true,
        },
        0x90..=0x9f => ops(true, None),
        0xa0..=0xa2 | 0xa8..=0xaa => ops(false, None),
        0xa3 | 0xa5..=0xa7 | 0xab | 0xad..=0xaf => ops(true, None),
        0xa4 | 0xac => ops(true, Byte),
        // jmpe without `f3`, popcnt with it.
        0xb8 => ops(last_prefix == 0xf3, None),
        0xb0..=0xb9 | 0xbb..=0xbf => ops(true, None),
        0xba => ops(true, Byte),
        0xc0 | 0xc1 | 0xc3 | 0xc7 => ops(true, None),
        0xc2 | 0xc4..=0xc6 => ops(true, Byte),
        0xc8..=0xcf => ops(false, None),
        0xd0..=0xfe => ops(true, None),
        // ud0.
        0xff => ops(false, None),
    }
}

/// Legacy prefixes: operand size, address size, segments, lock and the repeats.
fn is_legacy_prefix(b: u8) -> bool {
    matches!(
        b,
        0x26 | 0x2e | 0x36 | 0x3e | 0x64 | 0x65 | 0x66 | 0x67 | 0xf0 | 0xf2 | 0xf3
    )
}

/// The bytes of `code` as the decoder reads them: each read past the end fails.
struct Cursor<'a> {
    code: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn peek(&self, ahead: usize) -> Option<u8> {
        self.code.get(self.at + ahead).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek(0)?;
        self.at += 1;
        Some(b)
    }

    fn skip(&mut self, n: usize) -> Option<()> {
        (self.at + n <= self.code.len()).then(|| self.at += n)
    }
}

/// The length of the instruction at the start of `code` decoded in `mode`, as perf 6.1's
/// decoder counts it; None when the bytes end before the instruction does (at most
/// [`MAX_INSN_LEN`] are read) or the decoder takes them for no instruction (a VEX form
/// outside the three VEX maps, a far pointer with a 64-bit operand size).
pub fn insn_length(code: &[u8], mode: Mode) -> Option<usize> {
    let long = mode == Mode::Bits64;
    let mut c = Cursor {
        code: &code[..code.len().min(MAX_INSN_LEN)],
        at: 0,
    };
    let mut opnd: u8 = 4;
    let mut addr: u8 = if long { 8 } else { 4 };
    // Distinct prefixes count for the sizes once each; a fifth distinct one ends them.
    let mut seen = [0u8; 4];
    let mut distinct = 0;
    let mut last_prefix = 0;
    loop {
        let b = c.peek(0)?;
        if !is_legacy_prefix(b) {
            break;
        }
        if !seen[..distinct].contains(&b) {
            if distinct == seen.len() {
                break;
            }
            seen[distinct] = b;
            distinct += 1;
            match b {
                0x67 => addr ^= if long { 12 } else { 6 },
                0x66 => opnd ^= 6,
                _ => {}
            }
        }
        last_prefix = b;
        c.at += 1;
    }
    // The last prefix picks the opcode variant only when it is a SIMD one.
    if !matches!(last_prefix, 0x66 | 0xf2 | 0xf3) {
        last_prefix = 0;
    }
    if long {
        let b = c.peek(0)?;
        if b & 0xf0 == 0x40 {
            if b & 0x08 != 0 {
                opnd = 8;
            }
            c.at += 1;
        }
    }
    // VEX (c4, c5) and EVEX (62); in 32-bit mode only when the next byte could not be
    // the ModRM of a memory operand (les, lds, bound).
    let b = c.peek(0)?;
    if matches!(b, 0x62 | 0xc4 | 0xc5) {
        let b1 = c.peek(1)?;
        if long || b1 >> 6 == 3 {
            // Every VEX and EVEX immediate is one byte: the operand size does not
            // matter here.
            let (map, prefix_bytes) = match b {
                0x62 => (b1 & 0x07, 4),
                0xc4 => (b1 & 0x1f, 3),
                _ => (1, 2),
            };
            c.skip(prefix_bytes)?;
            let op = c.next()?;
            let (modrm, imm) = match map {
                1 => (op != 0x77, matches!(op, 0x70..=0x73 | 0xc2 | 0xc4..=0xc6)),
                2 => (true, false),
                3 => (true, true),
                // EVEX maps 5 and 6 (FP16): ModRM, no immediate.
                5 | 6 if b == 0x62 => (true, false),
                _ => return None,
            };
            if modrm {
                modrm_operand(&mut c, addr)?;
            }
            if imm {
                c.skip(1)?;
            }
            return Some(c.at);
        }
    }
    let op = c.next()?;
    let operands = if op == 0x0f {
        match c.next()? {
            0x38 => {
                c.next()?;
                ops(true, Imm::None)
            }
            0x3a => {
                c.next()?;
                ops(true, Imm::Byte)
            }
            op2 => two_byte(op2, last_prefix),
        }
    } else {
        one_byte(op)
    };
    if long && operands.force64 {
        opnd = 8;
    }
    let mut imm = operands.imm;
    if operands.modrm {
        let modrm = modrm_operand(&mut c, addr)?;
        // Group 3's `test` (/0, /1).
        if matches!(op, 0xf6 | 0xf7) && (modrm >> 3) & 7 < 2 {
            imm = if op == 0xf6 { Imm::Byte } else { Imm::Z };
        }
    }
    let size = match imm {
        Imm::None => 0,
        Imm::Byte => 1,
        Imm::Word => 2,
        Imm::Z => {
            if opnd == 2 {
                2
            } else {
                4
            }
        }
        Imm::V => usize::from(opnd),
        Imm::FarPtr => match opnd {
            2 => 4,
            4 => 6,
            _ => return None,
        },
        Imm::MemOffset => usize::from(addr),
        Imm::WordByte => 3,
    };
    c.skip(size)?;
    Some(c.at)
}

/// Reads a ModRM byte and the SIB and displacement it calls for with `addr`-byte
/// addressing; returns the ModRM byte.
fn modrm_operand(c: &mut Cursor<'_>, addr: u8) -> Option<u8> {
    let modrm = c.next()?;
    let mode = modrm >> 6;
    let rm = modrm & 7;
    if mode == 3 {
        return Some(modrm);
    }
    let disp = if addr == 2 {
        match (mode, rm) {
            (1, _) => 1,
            (2, _) | (0, 6) => 2,
            _ => 0,
        }
    } else {
        let base = if rm == 4 { c.next()? & 7 } else { 0 };
        match (mode, rm, base) {
            (1, _, _) => 1,
            (2, _, _) | (0, 5, _) | (0, 4, 5) => 4,
            _ => 0,
        }
    };
    c.skip(disp)?;
    Some(modrm)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn len64(code: &[u8]) -> Option<usize> {
        insn_length(code, Mode::Bits64)
    }

    fn len32(code: &[u8]) -> Option<usize> {
        insn_length(code, Mode::Bits32)
    }

    /// Encodings whose length depends on the rules one at a time, each checked against
    /// what `objdump -d` (binutils 2.40) prints for it.
    #[test]
    fn lengths_of_tricky_encodings() {
        let cases: &[(&[u8], usize)] = &[
            // mov %eax,0x1cf6d(%rip): RIP-relative disp32.
            (&[0x89, 0x05, 0x6d, 0xcf, 0x01, 0x00], 6),
            // movabs $0x8000000000000004,%rax: REX.W and an 8-byte immediate.
            (&[0x48, 0xb8, 4, 0, 0, 0, 0, 0, 0, 0x80], 10),
            // mov $imm32,%eax without REX.W: 4 bytes.
            (&[0xb8, 1, 0, 0, 0], 5),
            // mov $imm16,%ax: operand-size override.
            (&[0x66, 0xb8, 1, 0], 4),
            // movabs 0x1122334455667788,%eax: a 64-bit memory offset.
            (&[0xa1, 1, 2, 3, 4, 5, 6, 7, 8], 9),
            // addr32 mov 0x11223344,%eax: a 32-bit offset under 67.
            (&[0x67, 0xa1, 1, 2, 3, 4], 6),
            // nopw %cs:0x0(%rax,%rax,1) with two 66s: SIB, disp32.
            (&[0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0], 11),
            // lea 0x0(,%rax,8),%rdx: SIB with no base, disp32.
            (&[0x48, 0x8d, 0x14, 0xc5, 0, 0, 0, 0], 8),
            // mov 0x10(%rsp),%rax: SIB and disp8.
            (&[0x48, 0x8b, 0x44, 0x24, 0x10], 5),
            // testb $0x1,(%rdi) (group 3 /0 has an immediate) and notl (%rdi) (none).
            (&[0xf6, 0x07, 0x01], 3),
            (&[0xf7, 0x17], 2),
            (&[0xf7, 0x07, 1, 0, 0, 0], 6),
            (&[0x66, 0xf7, 0x07, 1, 0], 5),
            // endbr64.
            (&[0xf3, 0x0f, 0x1e, 0xfa], 4),
            // jne rel32, and call rel32 kept at 4 bytes under 66 in 64-bit mode.
            (&[0x0f, 0x85, 0, 0, 0, 0], 6),
            (&[0x66, 0xe8, 0, 0, 0, 0], 6),
            // enter $0x10,$0x0.
            (&[0xc8, 0x10, 0, 0], 4),
            // pshufd $0x1b,%xmm1,%xmm0 (66 0f 70 /r ib).
            (&[0x66, 0x0f, 0x70, 0xc1, 0x1b], 5),
            // pextrd $1,%xmm0,%eax (0f 3a: immediate) and pshufb (0f 38: none).
            (&[0x66, 0x0f, 0x3a, 0x16, 0xc0, 0x01], 6),
            (&[0x66, 0x0f, 0x38, 0x00, 0xc1], 5),
            // vzeroupper: VEX without ModRM.
            (&[0xc5, 0xf8, 0x77], 3),
            // vpshufd $0x0,%ymm0,%ymm1 (VEX2, map 1 immediate).
            (&[0xc5, 0xfd, 0x70, 0xc8, 0x00], 5),
            // vpermq $0xd8,%ymm0,%ymm0 (VEX3, map 3).
            (&[0xc4, 0xe3, 0xfd, 0x00, 0xc0, 0xd8], 6),
            // vmovdqu64 0x40(%rsi),%zmm0 (EVEX, compressed disp8).
            (&[0x62, 0xf1, 0xfe, 0x48, 0x6f, 0x46, 0x01], 7),
            // 3DNow! pfadd %mm1,%mm0: ModRM then the suffix.
            (&[0x0f, 0x0f, 0xc1, 0x9e], 4),
            // x87 fldt (%rdi), fld1, fnstcw 0x18(%rsi); fwait alone.
            (&[0xdb, 0x2f], 2),
            (&[0xd9, 0xe8], 2),
            (&[0xd9, 0x7e, 0x18], 3),
            (&[0x9b, 0xd9, 0x7e, 0x18], 1),
            // A REX that another REX follows is an opcode of its own.
            (&[0x48, 0x48, 0x89, 0xc0], 2),
            // popcnt with f3 has ModRM.
            (&[0xf3, 0x48, 0x0f, 0xb8, 0xc7], 5),
        ];
        for (code, want) in cases {
            assert_eq!(len64(code), Some(*want), "{code:02x?}");
        }
    }

    /// 32-bit mode: inc/dec where 64-bit has REX, 16-bit addressing under 67, les and
    /// bound with a memory operand where VEX and EVEX would start with a register one.
    #[test]
    fn lengths_in_32_bit_mode() {
        let cases: &[(&[u8], usize)] = &[
            (&[0x48], 1),
            (&[0x40, 0x89, 0xc0], 1),
            (&[0x67, 0x8b, 0x46, 0x10], 4),
            (&[0x67, 0x8b, 0x06, 0x34, 0x12], 5),
            (&[0x67, 0x8b, 0x86, 0x34, 0x12], 5),
            (&[0x8b, 0x05, 1, 2, 3, 4], 6),
            (&[0xc4, 0x06], 2),
            (&[0xc5, 0xf8, 0x77], 3),
            (&[0x62, 0x05, 1, 2, 3, 4], 6),
            (&[0xa1, 1, 2, 3, 4], 5),
            (&[0x67, 0xa1, 1, 2], 4),
            (&[0x9a, 1, 2, 3, 4, 5, 6], 7),
            (&[0x66, 0x9a, 1, 2, 3, 4], 6),
            (&[0x66, 0xe8, 1, 2], 4),
            (&[0x66, 0x68, 1, 2], 4),
        ];
        for (code, want) in cases {
            assert_eq!(len32(code), Some(*want), "{code:02x?}");
        }
    }

    /// Bytes that end before the instruction does, more than 15 bytes, a far pointer
    /// of 64-bit operand size and a VEX map outside 1-3 give no length.
    #[test]
    fn undecodable_bytes_have_no_length() {
        assert_eq!(len64(&[]), None);
        assert_eq!(len64(&[0x48]), None);
        assert_eq!(len64(&[0x0f, 0x85, 0, 0]), None);
        assert_eq!(len64(&[0x66; 16]), None);
        let mut long = vec![0x66; 14];
        long.extend_from_slice(&[0x89, 0xc0]);
        assert_eq!(len64(&long), None);
        assert_eq!(len64(&[0x48, 0x9a, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]), None);
        assert_eq!(len64(&[0x9a, 1, 2, 3, 4, 5, 6]), Some(7));
        assert_eq!(len64(&[0xc4, 0xe4, 0x7d, 0x00, 0xc0]), None);
    }
}
