//! x86 instruction lengths (`perf script -F insn,insnlen`) and source code lines
//! (`-F srccode`): the decoder against binutils' `objdump -d` over real objects of this
//! machine, and `tracectl perf script` against Debian's perf 6.1 on files perf records
//! here. Skips (with the reason) without objdump, root, perf, a C compiler or addr2line.

use std::path::Path;
use std::process::Command;

use tracectl::perf::x86_insn::{insn_length, Mode};

/// One instruction as `objdump -d --insn-width=16` lists it: its address and bytes.
struct Listed {
    addr: u64,
    bytes: Vec<u8>,
    bad: bool,
}

/// The instructions objdump disassembles in `args` (its own arguments), in order.
fn objdump(args: &[&str]) -> Vec<Listed> {
    let out = Command::new("objdump")
        .args(["-d", "-w", "-z", "--insn-width=16"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "objdump {args:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut listed = Vec::new();
    for line in text.lines() {
        // `  addr:\tb0 b1 ...\tmnemonic operands`
        let mut parts = line.splitn(3, '\t');
        let (Some(addr), Some(bytes)) = (parts.next(), parts.next()) else {
            continue;
        };
        let Some(addr) = addr.trim().strip_suffix(':') else {
            continue;
        };
        let Ok(addr) = u64::from_str_radix(addr, 16) else {
            continue;
        };
        let Ok(bytes) = bytes
            .split_whitespace()
            .map(|b| u8::from_str_radix(b, 16))
            .collect::<Result<Vec<u8>, _>>()
        else {
            continue;
        };
        let text = parts.next().unwrap_or("");
        listed.push(Listed {
            addr,
            bad: text.contains("(bad)") || bytes.is_empty(),
            bytes,
        });
    }
    listed
}

/// The first byte after the legacy and REX prefixes.
fn opcode(bytes: &[u8], mode: Mode) -> Option<u8> {
    bytes.iter().copied().find(|&b| {
        !matches!(
            b,
            0x26 | 0x2e | 0x36 | 0x3e | 0x64 | 0x65 | 0x66 | 0x67 | 0xf0 | 0xf2 | 0xf3
        ) && !(mode == Mode::Bits64 && b & 0xf0 == 0x40)
    })
}

/// Lengths the decoder gives each instruction objdump lists, from the bytes objdump
/// shows for it and the ones after it; returns how many were compared and the
/// instructions whose lengths differ. objdump's `(bad)` and the x87 instructions (one
/// byte to perf's decoder, see [`tracectl::perf::x86_insn`]) are not compared.
fn compare(listed: &[Listed], mode: Mode) -> (usize, Vec<String>) {
    let mut compared = 0;
    let mut differ = Vec::new();
    let mut start = 0;
    while start < listed.len() {
        // A run of instructions one after the other.
        let mut end = start + 1;
        while end < listed.len()
            && listed[end].addr == listed[end - 1].addr + listed[end - 1].bytes.len() as u64
        {
            end += 1;
        }
        let run = &listed[start..end];
        let code: Vec<u8> = run.iter().flat_map(|l| l.bytes.iter().copied()).collect();
        let mut at = 0;
        for l in run {
            let here = &code[at..];
            at += l.bytes.len();
            // objdump lists `fwait` and the x87 instruction after it as one (`fstcw`).
            let x87 = match opcode(&l.bytes, mode) {
                Some(0xd8..=0xdf) => true,
                Some(0x9b) => l.bytes.len() > 1,
                _ => false,
            };
            if l.bad || x87 {
                continue;
            }
            // Past the end of the run objdump's listing stops: those are compared only
            // when the instruction fits.
            let got = insn_length(&here[..here.len().min(16)], mode);
            compared += 1;
            if got != Some(l.bytes.len()) {
                differ.push(format!(
                    "{:x}: {:02x?} objdump {} ours {got:?}",
                    l.addr,
                    l.bytes,
                    l.bytes.len()
                ));
            }
        }
        start = end;
    }
    (compared, differ)
}

fn objdump_missing() -> bool {
    let ok = Command::new("objdump")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        crate::support::skips::skip("binutils' objdump is not installed");
    }
    !ok
}

/// Every instruction of big objects of this machine (perf, libc, the dynamic loader)
/// has the length objdump gives it.
#[test]
fn x86_insn_lengths_match_objdump_on_this_machine_s_objects() {
    if objdump_missing() {
        return;
    }
    let mut total = 0;
    for path in [
        "/usr/bin/perf",
        "/usr/lib/x86_64-linux-gnu/libc.so.6",
        "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
        "/usr/lib/x86_64-linux-gnu/libm.so.6",
    ] {
        if !Path::new(path).exists() {
            continue;
        }
        let (compared, differ) = compare(&objdump(&[path]), Mode::Bits64);
        assert!(
            differ.is_empty(),
            "{path}: {} of {compared} lengths differ, first: {:?}",
            differ.len(),
            &differ[..differ.len().min(20)]
        );
        total += compared;
    }
    assert!(total > 100_000, "only {total} instructions compared");
}

/// 32-bit mode: the text of libc decoded as i386 code (`objdump -m i386`), which makes
/// REX bytes inc/dec, VEX/EVEX bytes les/lds/bound where the next byte names memory,
/// and `67` 16-bit addressing.
#[test]
fn x86_insn_lengths_in_32_bit_mode_match_objdump() {
    if objdump_missing() {
        return;
    }
    let path = "/usr/lib/x86_64-linux-gnu/libc.so.6";
    if !Path::new(path).exists() {
        crate::support::skips::skip("no libc.so.6 at the Debian path");
        return;
    }
    let listed = objdump(&["-m", "i386", "-j", ".text", path]);
    let (compared, differ) = compare(&listed, Mode::Bits32);
    assert!(
        differ.is_empty(),
        "{} of {compared} lengths differ, first: {:?}",
        differ.len(),
        &differ[..differ.len().min(20)]
    );
    assert!(compared > 100_000, "only {compared} instructions compared");
}
