//! The `perf script -F` fields of a sample's recorded extras (perf 6.1): `misc`,
//! `tod`, `iregs`, `uregs`, `weight`, `ins_lat`, `phys_addr`, `data_page_size` and
//! `code_page_size`.

use crate::bytes::{push_dec, push_dec_padded, push_hex};
use crate::endian::Endianness;
use crate::perf::data::abi::misc;
use crate::perf::data::{ClockData, UserRegs};

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
