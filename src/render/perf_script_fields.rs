//! The `perf script -F` fields of a sample's recorded extras (perf 6.1): `misc`,
//! `tod`, `iregs`, `uregs`, `weight`, `ins_lat`, `phys_addr`, `data_page_size` and
//! `code_page_size`; and those of the code at its address, `insn`, `insnlen` and
//! `srccode`.

use std::collections::HashMap;

use crate::bytes::{push_dec, push_dec_padded, push_hex, push_hex_width};
use crate::endian::Endianness;
use crate::perf::code::{CodeFiles, SampledInsn, INSN_BYTES};
use crate::perf::data::abi::misc;
use crate::perf::data::{ClockData, Sample, UserRegs};
use crate::perf::machine::{Location, Machine};
use crate::perf::srccode::SourceCode;
use crate::perf::srcline::SourceLines;

/// `-F misc` of a record of type `type_` whose header says `m`: `K` kernel, `U` user
/// (perf tests each as a whole mask, so a hypervisor sample, cpumode 3, shows `KU`), then
/// by the record's type `M` for a data mapping, `E` for a comm set by exec, `S` for a
/// switch out and `p` when it was a preemption; padded to six columns.
pub fn write_misc(out: &mut Vec<u8>, m: u16, type_: u32) {
    use crate::perf::data::abi::record;
    /// The type-specific flag of MMAP (MMAP_DATA), COMM (COMM_EXEC) and SWITCH
    /// (SWITCH_OUT) records.
    const TYPE_FLAG: u16 = 1 << 13;
    /// `PERF_RECORD_MISC_SWITCH_OUT_PREEMPT`.
    const PREEMPT: u16 = 1 << 14;
    let has = |mask: u16| m & mask == mask;
    let start = out.len();
    if has(misc::KERNEL) {
        out.push(b'K');
    }
    if has(misc::USER) {
        out.push(b'U');
    }
    match type_ {
        record::MMAP | record::MMAP2 if has(TYPE_FLAG) => out.push(b'M'),
        record::COMM if has(TYPE_FLAG) => out.push(b'E'),
        record::SWITCH | record::SWITCH_CPU_WIDE if has(TYPE_FLAG) => {
            out.push(b'S');
            if m & PREEMPT != 0 {
                out.push(b'p');
            }
        }
        _ => {}
    }
    // `%*s` of " " in what is left of six columns: at least the one space.
    let used = out.len() - start;
    let width = 6usize.saturating_sub(used).max(1);
    out.resize(out.len() + width, b' ');
}

/// `-F tod`: the wall-clock time of `time` from the file's CLOCK_DATA reading, in the
/// local time zone as `%Y-%m-%d %H:%M:%S.uuuuuu` (nine decimals with `--ns`), and a
/// space.
pub fn write_tod(out: &mut Vec<u8>, clock: &ClockData, time: u64, nanoseconds: bool) {
    use chrono::{Local, TimeZone};
    let tod = if time > clock.clockid_ns {
        clock.tod_ns.wrapping_add(time - clock.clockid_ns)
    } else {
        clock.tod_ns.wrapping_sub(clock.clockid_ns - time)
    };
    let secs = tod / 1_000_000_000;
    let ns = tod % 1_000_000_000;
    match i64::try_from(secs)
        .ok()
        .and_then(|s| Local.timestamp_opt(s, 0).single())
    {
        Some(t) => {
            out.extend_from_slice(t.format("%Y-%m-%d %H:%M:%S").to_string().as_bytes());
            out.push(b'.');
            if nanoseconds {
                push_dec_padded(out, ns, 9, b'0');
            } else {
                push_dec_padded(out, ns / 1000, 6, b'0');
            }
        }
        None => out.extend_from_slice(b"failed"),
    }
    out.push(b' ');
}

/// `-F iregs` / `-F uregs`: ` ABI:n ` then `%5s:0x%x ` of each register the sample
/// holds; nothing for a sample without them (ABI 0, a kernel thread's user registers).
pub fn write_regs(out: &mut Vec<u8>, regs: &UserRegs, endian: Endianness) {
    if regs.abi == 0 {
        return;
    }
    out.extend_from_slice(b" ABI:");
    push_dec(out, regs.abi);
    out.push(b' ');
    for reg in (0..64u32).filter(|r| regs.mask & (1 << r) != 0) {
        let Some(v) = regs.get(reg, endian) else {
            return;
        };
        let name = crate::perf::regs::x86_64_reg_name(reg);
        out.resize(out.len() + 5usize.saturating_sub(name.len()), b' ');
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b":0x");
        push_hex(out, v, false);
        out.push(b' ');
    }
}

/// `%16u`, as perf prints `weight` and `ins_lat`.
pub fn write_dec16(out: &mut Vec<u8>, v: u64) {
    push_dec_padded(out, v, 16, b' ');
}

/// ` ` and a page size as perf names it (`get_page_size_name`): divided by 1024 while
/// the quotient is more than 1, up to G (so 1024 stays `1024B`), `N/A` for 0.
pub fn write_page_size(out: &mut Vec<u8>, size: u64) {
    out.push(b' ');
    if size == 0 {
        out.extend_from_slice(b"N/A");
        return;
    }
    let (mut n, mut unit) = (size, 0);
    while n / 1024 > 1 && unit < 3 {
        n /= 1024;
        unit += 1;
    }
    push_dec(out, n);
    out.push(b"BKMG"[unit]);
}

/// `-F data_src`: the raw `perf_mem_data_src` (`%16x`), a space and its decoding
/// (`|OP ...|LVL ...|SNP ...|TLB ...|LCK ...|BLK ...`), cut at 99 bytes (perf's buffer)
/// and padded to the longest such text of the run so far (`widest`), as perf 6.1's
/// `data_src__fprintf` prints it.
pub fn write_data_src(out: &mut Vec<u8>, v: u64, widest: &mut usize) {
    let mut text = format!("{v:16x} {}", mem_decoding(v));
    if text.len() > 99 {
        let mut cut = 99;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
    *widest = (*widest).max(text.len());
    out.extend_from_slice(text.as_bytes());
    out.resize(out.len() + (*widest - text.len()), b' ');
}

/// perf 6.1's `perf_script__meminfo_scnprintf` of a `perf_mem_data_src`: its bit fields
/// are the operation (bits 0-4), the level (5-18), the snoop (19-23), the lock (24-25),
/// the TLB (26-32), the level number (33-36), remote (37), the extended snoop (38-39),
/// the block (40-42) and the hops (43-45).
fn mem_decoding(v: u64) -> String {
    let bits = |at: u32, n: u32| (v >> at) & ((1 << n) - 1);
    let (op, lvl, snoop, lock, tlb) = (
        bits(0, 5),
        bits(5, 14),
        bits(19, 5),
        bits(24, 2),
        bits(26, 7),
    );
    let (lvl_num, remote, snoopx, blk, hops) = (
        bits(33, 4),
        bits(37, 1),
        bits(38, 2),
        bits(40, 3),
        bits(43, 3),
    );
    // Each set bit of `m` from bit 0 names the entry of `names` at its place, joined by
    // " or ".
    let named = |mut m: u64, names: &[&str], out: &mut String| {
        for name in names {
            if m == 0 {
                break;
            }
            if m & 1 != 0 {
                if !out.is_empty() {
                    out.push_str(" or ");
                }
                out.push_str(name);
            }
            m >>= 1;
        }
    };
    // The level's and the TLB's HIT (bit 1) and MISS (bit 2), told after their names.
    let hit_miss = |m: u64, out: &mut String| {
        if m & 0x2 != 0 {
            out.push_str(" hit");
        }
        if m & 0x4 != 0 {
            out.push_str(" miss");
        }
    };
    let op = match op {
        o if o & 0x1 != 0 => "N/A",
        o if o & 0x2 != 0 => "LOAD",
        o if o & 0x4 != 0 => "STORE",
        o if o & 0x8 != 0 => "PFETCH",
        o if o & 0x10 != 0 => "EXEC",
        _ => "No",
    };
    // The level: hit and miss are told after the levels.
    const LEVELS: [&str; 14] = [
        "N/A",
        "HIT",
        "MISS",
        "L1",
        "LFB/MAB",
        "L2",
        "L3",
        "Local RAM",
        "Remote RAM (1 hop)",
        "Remote RAM (2 hops)",
        "Remote Cache (1 hop)",
        "Remote Cache (2 hops)",
        "I/O",
        "Uncached",
    ];
    const HOPS: [&str; 5] = [
        "N/A",
        "core, same node",
        "node, same socket",
        "socket, same board",
        "board",
    ];
    let mut level = String::new();
    if remote != 0 {
        level.push_str("Remote ");
    }
    let mut joined = String::new();
    if hops != 0 {
        // perf reads past its table for 5 to 7, where this build of it finds NULL.
        level.push_str(HOPS.get(hops as usize).copied().unwrap_or("(null)"));
        level.push(' ');
    } else {
        named(lvl & !0x6, &LEVELS, &mut joined);
    }
    if lvl_num != 0 {
        if !joined.is_empty() {
            joined.push_str(" or ");
        }
        match lvl_num {
            0x09 => joined.push_str("CXL"),
            0x0a => joined.push_str("I/O"),
            0x0b => joined.push_str("Any cache"),
            0x0c => joined.push_str("LFB/MAB"),
            0x0d => joined.push_str("RAM"),
            0x0e => joined.push_str("PMEM"),
            0x0f => joined.push_str("N/A"),
            n => joined.push_str(&format!("L{n}")),
        }
    }
    level.push_str(&joined);
    if level.is_empty() {
        level.push_str("N/A");
    }
    hit_miss(lvl, &mut level);
    let mut snp = String::new();
    named(snoop, &["N/A", "None", "Hit", "Miss", "HitM"], &mut snp);
    named(snoopx, &["Fwd", "Peer"], &mut snp);
    if snp.is_empty() {
        snp.push_str("N/A");
    }
    let mut dtlb = String::new();
    named(
        tlb & !0x6,
        &["N/A", "HIT", "MISS", "L1", "L2", "Walker", "Fault"],
        &mut dtlb,
    );
    if dtlb.is_empty() {
        dtlb.push_str("N/A");
    }
    hit_miss(tlb, &mut dtlb);
    let lck = match lock {
        l if l & 0x1 != 0 => "N/A",
        l if l & 0x2 != 0 => "Yes",
        _ => "No",
    };
    let block = if blk == 0 || blk & 0x1 != 0 {
        " N/A".to_string()
    } else {
        let mut b = String::new();
        if blk & 0x2 != 0 {
            b.push_str(" Data");
        }
        if blk & 0x4 != 0 {
            b.push_str(" Addr");
        }
        b
    };
    format!("|OP {op}|LVL {level}|SNP {snp}|TLB {dtlb}|LCK {lck}|BLK {block}")
}

/// `-F bpf-output` of a bpf-output event's sample (software event 10): its raw bytes as
/// perf 6.1 dumps them, on lines of their own after the sample's line (` BPF output:`
/// right-aligned in 17 columns, then `     ` on the next lines; the offset as `%04x:`,
/// eight bytes as ` %02x` padded with spaces, two spaces and the bytes as characters,
/// `.` for one not printable in Latin-1); then `BPF string: "..."` when the bytes are
/// printable characters ended by a NUL and nothing but NULs after it.
pub fn write_bpf_output(out: &mut Vec<u8>, raw: &[u8]) {
    const WIDTH: usize = 8;
    const HEX: &[u8; 16] = b"0123456789abcdef";
    // perf's own ctype table: ASCII's printable characters and Latin-1's from 0xa0.
    let printable = |b: u8| (0x20..0x7f).contains(&b) || b >= 0xa0;
    out.push(b'\n');
    for (line, chunk) in raw.chunks(WIDTH).enumerate() {
        let label: &[u8] = if line == 0 {
            b"      BPF output:"
        } else {
            b"                 "
        };
        out.extend_from_slice(label);
        out.extend_from_slice(format!(" {:04x}:", line * WIDTH).as_bytes());
        for &b in chunk {
            out.extend_from_slice(&[b' ', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
        }
        let pad = WIDTH - chunk.len();
        out.resize(out.len() + 3 * pad + 2, b' ');
        out.extend(chunk.iter().map(|&b| if printable(b) { b } else { b'.' }));
        out.resize(out.len() + pad, b' ');
        out.push(b'\n');
    }
    // perf's test, byte by byte: a non-NUL byte after a NUL, or any other byte that is
    // not printable, makes the bytes no string.
    let text_end = raw.iter().position(|&b| !printable(b));
    let string = text_end.is_some_and(|end| raw[end..].iter().all(|&b| b == 0));
    if let (true, Some(end)) = (string, text_end) {
        out.extend_from_slice(b"      BPF string: \"");
        out.extend_from_slice(&raw[..end]);
        out.extend_from_slice(b"\"\n");
    }
}

/// What `-F insn`, `-F insnlen` and `-F srccode` read and remember between samples.
#[derive(Debug)]
pub struct CodeFields {
    code: CodeFiles,
    /// Whether the code at samples' addresses is read (perf's `native_arch`).
    native: bool,
    source: SourceCode,
    /// The source file and line each thread showed last (perf's `srccode_state`).
    shown: HashMap<i32, (String, u32)>,
}

impl CodeFields {
    /// Nothing read yet; `native` says whether the file was recorded on a machine of
    /// this one's architecture, without which perf reads no code.
    pub fn new(native: bool) -> CodeFields {
        CodeFields {
            code: CodeFiles::new(),
            native,
            source: SourceCode::new(),
            shown: HashMap::new(),
        }
    }

    /// `-F insnlen` (` ilen: N`) when `len`, then `-F insn` (` insn:` and ` %02x` of
    /// each byte) when `bytes` and perf decoded an instruction at the sample's address.
    pub fn write_insn(
        &mut self,
        out: &mut Vec<u8>,
        machine: &Machine,
        s: &Sample,
        bytes: bool,
        len: bool,
    ) {
        let insn = if self.native {
            self.code.insn_at(machine, s.pid, s.ip)
        } else {
            SampledInsn {
                bytes: [0; INSN_BYTES],
                len: 0,
            }
        };
        if len {
            out.extend_from_slice(b" ilen: ");
            push_dec(out, insn.len as u64);
        }
        if bytes && insn.len > 0 {
            out.extend_from_slice(b" insn:");
            for &b in insn.insn() {
                out.push(b' ');
                push_hex_width(out, u64::from(b), 2, false);
            }
        }
    }

    /// `-F srccode` (perf's `print_srccode`): `|LINE     TEXT` and a newline, the line
    /// of source code at the sample's address, unless the sample's thread showed that
    /// line of that file last; nothing where addr2line names no line or the file
    /// cannot be read.
    pub fn write_srccode(
        &mut self,
        out: &mut Vec<u8>,
        machine: &Machine,
        lines: &mut SourceLines,
        s: &Sample,
    ) {
        let loc = machine.resolve(s.pid, s.cpumode, s.ip);
        if loc.dso.is_none() {
            return;
        }
        let unnamed = Location { sym: None, ..loc };
        let Some((file, line)) = lines.srcfile_line(machine, &unnamed, loc.addr) else {
            return;
        };
        if self
            .shown
            .get(&s.tid)
            .is_some_and(|(f, l)| *f == file && *l == line)
        {
            return;
        }
        let Some(text) = self.source.line(&file, line) else {
            return;
        };
        // `|%-8d %.*s`
        out.push(b'|');
        let start = out.len();
        push_dec(out, u64::from(line));
        while out.len() - start < 8 {
            out.push(b' ');
        }
        out.push(b' ');
        out.extend_from_slice(text);
        out.push(b'\n');
        self.shown.insert(s.tid, (file, line));
    }
}
