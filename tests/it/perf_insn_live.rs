//! x86 instruction lengths (`perf script -F insn,insnlen`) and source code lines
//! (`-F srccode`): the decoder against binutils' `objdump -d` over real objects of this
//! machine, and `tracectl perf script` against Debian's perf 6.1 on files perf records
//! here. Skips (with the reason) without objdump, root, perf, a C compiler or addr2line.

use std::path::Path;
use std::process::Command;

use tracectl::perf::x86_insn::{insn_length, Mode};

use crate::perf_script_fields_live::{build_with_lines, same_script};

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
    let prefix = |b: u8| {
        let legacy = matches!(
            b,
            0x26 | 0x2e | 0x36 | 0x3e | 0x64 | 0x65 | 0x66 | 0x67 | 0xf0 | 0xf2 | 0xf3
        );
        legacy || (mode == Mode::Bits64 && b & 0xf0 == 0x40)
    };
    bytes.iter().copied().find(|&b| !prefix(b))
}

/// Lengths the decoder gives each instruction objdump lists, from the bytes objdump
/// shows for it and the ones after it; returns how many were compared and the
/// instructions whose lengths differ. objdump's `(bad)` and its `fwait` merged with the
/// x87 instruction after it (two to perf's decoder) are not compared.
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
            // objdump lists `fwait` and the x87 instruction after it as one (`fstcw`),
            // perf's decoder as two.
            let fwait = opcode(&l.bytes, mode) == Some(0x9b) && l.bytes.len() > 1;
            if l.bad || fwait {
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

/// Whether binutils' `tool` is missing, the calling test skipped then.
fn binutils_missing(tool: &str) -> bool {
    let ok = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        crate::support::skips::skip(format!("binutils' {tool} is not installed"));
    }
    !ok
}

/// Every instruction of big objects of this machine (perf, libc, the dynamic loader)
/// has the length objdump gives it.
#[test]
fn x86_insn_lengths_match_objdump_on_this_machine_s_objects() {
    if binutils_missing("objdump") {
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
    if binutils_missing("objdump") {
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

/// Why insns.c cannot run here (it executes AVX2 and BMI2 instructions).
fn cpu_lacks_avx2() -> Option<&'static str> {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let flags = info
        .lines()
        .find(|l| l.starts_with("flags"))
        .unwrap_or_default();
    let has = |f: &str| flags.split_whitespace().any(|w| w == f);
    (!(has("avx2") && has("bmi2"))).then_some("the CPU lacks AVX2 or BMI2 (insns.c)")
}

/// Records `prog ARGS` (or the whole system while it runs, `how` holding `-a`) into
/// `d/out`.
fn record(d: &Path, out: &str, how: &[&str], prog: &[&str]) {
    let args = [&["record", "-q", "-o", out][..], how, &["--"], prog].concat();
    crate::support::perf::run("perf", &args, d);
}

/// `-F insn,insnlen` with other fields, with and without call chains, of a program
/// whose hot loop runs instructions of many encodings (insns.c) and of the whole
/// system while it runs: each sample's ` ilen: N insn: ..` as perf prints it, after the
/// address, symbol and file, and after the call chain; ` ilen: 0` and no bytes for
/// kernel addresses (perf has no file of the kernel's code here).
#[test]
fn perf_script_live_insn_and_insnlen_match_perf() {
    let why = crate::support::perf::skip_reason()
        .or_else(|| crate::support::perf::cc_missing().map(str::to_string))
        .or_else(|| cpu_lacks_avx2().map(str::to_string));
    if let Some(why) = why {
        crate::support::skips::skip(why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build_with_lines("insns", d);
    let prog = ["./insns", "400000"];
    record(d, "flat.data", &["-e", "cpu-clock", "-c", "100000"], &prog);
    record(
        d,
        "fp.data",
        &["-e", "cpu-clock", "-c", "100000", "-g"],
        &prog,
    );
    record(
        d,
        "sys.data",
        &["-a", "-e", "cpu-clock", "-c", "1000000"],
        &prog,
    );
    let mut seen = String::new();
    for (file, fields) in [
        (
            "flat.data",
            &[
                "ip,sym,insn,insnlen",
                "comm,tid,ip,sym,dso,symoff,insnlen",
                "ip,insn",
                "+insn,+insnlen",
                "comm,insnlen,insn,period",
            ][..],
        ),
        (
            "fp.data",
            &["comm,ip,sym,insn,insnlen", "ip,insnlen", "+insn"][..],
        ),
        (
            "sys.data",
            &["comm,ip,sym,dso,insn,insnlen", "ip,insnlen"][..],
        ),
    ] {
        for f in fields {
            seen += &same_script(d, &["-i", file, "-F", f]);
        }
    }
    // What the recordings must show for the comparison to mean something.
    for (what, shown) in [
        (
            "a 64-bit immediate",
            " ilen: 10 insn: 48 b8 04 00 00 00 00 00 00 80",
        ),
        ("an x87 instruction", " ilen: 2 insn: d9 e8"),
        ("fwait on its own", " ilen: 1 insn: 9b\n"),
        (
            "a VEX instruction with an immediate",
            " ilen: 5 insn: c5 fd 70 c1 1b",
        ),
        (
            "group 3's test with an immediate",
            " ilen: 7 insn: f7 46 08 00 00 01 00",
        ),
        ("a kernel address", " ilen: 0\n"),
    ] {
        assert!(seen.contains(shown), "perf shows {what} ({shown:?})");
    }
}

/// `-F srccode`: the source line under each sample whose thread did not show that line
/// last, on a program built with `-g` (insns.c, lines.c), with and without call chains,
/// with `insn`, `insnlen` and as `+srccode`; nothing under kernel addresses. With its
/// DWARF in a file its `.gnu_debuglink` names, the lines come from that file and the
/// code from the program (the debug file has none).
#[test]
fn perf_script_live_srccode_matches_perf() {
    if crate::perf_script_live::srcline_skip() {
        return;
    }
    if binutils_missing("objcopy") {
        return;
    }
    if let Some(why) = cpu_lacks_avx2() {
        crate::support::skips::skip(why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build_with_lines("insns", d);
    build_with_lines("lines", d);
    let insns = ["./insns", "200000"];
    record(
        d,
        "insns.data",
        &["-e", "cpu-clock", "-c", "100000"],
        &insns,
    );
    record(
        d,
        "lines.data",
        &["-e", "cpu-clock", "-c", "1000000", "-g"],
        &["./lines"],
    );
    // lines.c again, its DWARF moved to a debug file.
    std::fs::copy(d.join("lines"), d.join("split")).unwrap();
    let run = |cmd: &str, args: &[&str]| crate::support::perf::run(cmd, args, d);
    run("objcopy", &["--only-keep-debug", "split", "split.debug"]);
    run("strip", &["-g", "-s", "split"]);
    run("objcopy", &["--add-gnu-debuglink=split.debug", "split"]);
    record(
        d,
        "split.data",
        &["-e", "cpu-clock", "-c", "1000000"],
        &["./split"],
    );
    let mut seen = String::new();
    for file in ["insns.data", "lines.data", "split.data"] {
        for f in [
            "ip,sym,srccode",
            "comm,tid,ip,insn,insnlen,srccode",
            "+srccode",
        ] {
            seen += &same_script(d, &["-i", file, "-F", f]);
        }
    }
    for (what, shown) in [
        ("an asm statement's line", "__asm__ volatile(SLOW \"movabs"),
        ("a line of lines.c", "\t\tsink += i * i;\n"),
        ("perf's line number column", "\n|"),
    ] {
        assert!(seen.contains(shown), "perf shows {what} ({shown:?})");
    }
}
