//! The host facts perf.data's features carry, read from /proc and /sys, and the GNU build
//! ids of ELF files and of the running kernel.

use std::io::Read;
use std::path::Path;

use super::write::Features;
use crate::endian::Endianness;

/// The build id in a run of ELF notes (`namesz, descsz, type, name, desc`, 4-aligned):
/// the desc of the `GNU` note of type 3 (NT_GNU_BUILD_ID).
pub fn build_id_in_notes(notes: &[u8], endian: Endianness) -> Option<Vec<u8>> {
    let rd = |o: usize| -> Option<u32> { Some(endian.u32(notes.get(o..o + 4)?)) };
    let mut o = 0usize;
    while o + 12 <= notes.len() {
        let namesz = rd(o)? as usize;
        let descsz = rd(o + 4)? as usize;
        let kind = rd(o + 8)?;
        let name_at = o + 12;
        let desc_at = name_at.checked_add(namesz.div_ceil(4) * 4)?;
        let end = desc_at.checked_add(descsz.div_ceil(4) * 4)?;
        if kind == 3 && notes.get(name_at..name_at + namesz)? == b"GNU\0" {
            return Some(notes.get(desc_at..desc_at + descsz)?.to_vec());
        }
        o = end;
    }
    None
}

/// The GNU build id of an ELF file, from its PT_NOTE segments; `None` when the file is
/// not a readable ELF or has none.
pub fn elf_build_id(path: &Path) -> Option<Vec<u8>> {
    let mut f = std::fs::File::open(path).ok()?;
    let mut head = [0u8; 64];
    f.read_exact(&mut head).ok()?;
    if &head[..4] != b"\x7fELF" {
        return None;
    }
    let is64 = head[4] == 2;
    let endian = Endianness::big_if(head[5] == 2);
    let u16_at = |b: &[u8], o: usize| -> Option<u64> { Some(endian.u16(b.get(o..o + 2)?).into()) };
    let u32_at = |b: &[u8], o: usize| -> Option<u64> { Some(endian.u32(b.get(o..o + 4)?).into()) };
    let u64_at = |b: &[u8], o: usize| -> Option<u64> { Some(endian.u64(b.get(o..o + 8)?)) };
    let word = |b: &[u8], o: usize| if is64 { u64_at(b, o) } else { u32_at(b, o) };
    let (phoff, phentsize, phnum) = if is64 {
        (u64_at(&head, 32)?, u16_at(&head, 54)?, u16_at(&head, 56)?)
    } else {
        (u32_at(&head, 28)?, u16_at(&head, 42)?, u16_at(&head, 44)?)
    };
    if phnum == 0 || phnum > 256 || phentsize < if is64 { 56 } else { 32 } {
        return None;
    }
    let mut ph = vec![0u8; (phentsize * phnum) as usize];
    use std::io::{Seek, SeekFrom};
    f.seek(SeekFrom::Start(phoff)).ok()?;
    f.read_exact(&mut ph).ok()?;
    for i in 0..phnum as usize {
        let e = &ph[i * phentsize as usize..];
        if u32_at(e, 0)? != 4 {
            continue; // not PT_NOTE
        }
        let (off, size) = if is64 {
            (word(e, 8)?, word(e, 32)?)
        } else {
            (word(e, 4)?, word(e, 16)?)
        };
        if size == 0 || size > 1 << 20 {
            continue;
        }
        let mut notes = vec![0u8; size as usize];
        f.seek(SeekFrom::Start(off)).ok()?;
        if f.read_exact(&mut notes).is_err() {
            continue;
        }
        if let Some(id) = build_id_in_notes(&notes, endian) {
            return Some(id);
        }
    }
    None
}

/// The running kernel's build id (`/sys/kernel/notes`).
pub fn kernel_build_id() -> Option<Vec<u8>> {
    let notes = std::fs::read("/sys/kernel/notes").ok()?;
    build_id_in_notes(&notes, Endianness::NATIVE)
}

/// The build id of the kernel's vDSO image as this process maps it (see
/// [`vdso_image`]), which is the one every 64-bit process maps: perf lists it for the
/// `[vdso]` of a recording, from its own copy.
pub fn vdso_build_id() -> Option<Vec<u8>> {
    crate::perf::symbols::elf_build_id(&vdso_image()?)
}

/// The kernel's vDSO image as this process maps it (`[vdso]` in /proc/self/maps, read
/// through /proc/self/mem): the copy perf writes out and files in its build-id cache.
pub fn vdso_image() -> Option<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    /// The image is a page or two; anything much larger is no vDSO.
    const MAX_IMAGE: u64 = 1 << 20;
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let range = maps
        .lines()
        .find(|l| l.split_whitespace().nth(5) == Some("[vdso]"))?
        .split_whitespace()
        .next()?;
    let (start, end) = range.split_once('-')?;
    let start = u64::from_str_radix(start, 16).ok()?;
    let len = u64::from_str_radix(end, 16).ok()?.checked_sub(start)?;
    if len > MAX_IMAGE {
        return None;
    }
    let mut image = vec![0u8; len as usize];
    std::fs::File::open("/proc/self/mem")
        .ok()?
        .read_exact_at(&mut image, start)
        .ok()?;
    Some(image)
}

fn first_line_value(text: &str, key: &str) -> Option<String> {
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim() == key)
        .map(|(_, v)| v.trim().to_string())
}

fn count_cpus(list: &str) -> u32 {
    list.trim()
        .split(',')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('-') {
            Some((a, b)) => match (a.parse::<u32>(), b.parse::<u32>()) {
                (Ok(a), Ok(b)) if b >= a => b - a + 1,
                _ => 0,
            },
            None => u32::from(p.parse::<u32>().is_ok()),
        })
        .sum()
}

/// The host's features: uname, CPUs, memory, CPU description and id, CPU topology.
/// `cmdline` and `version` are the caller's.
pub fn host_features(cmdline: Vec<String>, version: &str) -> Features {
    let uts = nix::sys::utsname::uname().ok();
    let s = |o: Option<&std::ffi::OsStr>| o.map(|v| v.to_string_lossy().into_owned());
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let online = count_cpus(&read("/sys/devices/system/cpu/online"));
    let present = count_cpus(&read("/sys/devices/system/cpu/present")).max(online);
    let cpuinfo = read("/proc/cpuinfo");
    let cpudesc = first_line_value(&cpuinfo, "model name")
        .map(|m| m.split_whitespace().collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    let cpuid = match (
        first_line_value(&cpuinfo, "vendor_id"),
        first_line_value(&cpuinfo, "cpu family"),
        first_line_value(&cpuinfo, "model"),
        first_line_value(&cpuinfo, "stepping"),
    ) {
        (Some(v), Some(f), Some(m), Some(st)) => format!("{v},{f},{m},{st}"),
        _ => String::new(),
    };
    let total_mem_kb = first_line_value(&read("/proc/meminfo"), "MemTotal")
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0);
    let mut cores = Vec::new();
    let mut threads = Vec::new();
    if let Ok(cpus) = crate::perf::online_cpus() {
        for c in cpus {
            let t = format!("/sys/devices/system/cpu/cpu{c}/topology");
            for (file, list) in [
                ("core_siblings_list", &mut cores),
                ("thread_siblings_list", &mut threads),
            ] {
                let v = read(&format!("{t}/{file}")).trim().to_string();
                if !v.is_empty() && !list.contains(&v) {
                    list.push(v);
                }
            }
        }
    }
    // perf's per-CPU ids: -1 for what sysfs does not say (an offline CPU).
    let id = |c: u32, file: &str| -> i32 {
        read(&format!("/sys/devices/system/cpu/cpu{c}/topology/{file}"))
            .trim()
            .parse()
            .unwrap_or(-1)
    };
    let cpu_ids = (0..present)
        .map(|c| (id(c, "core_id"), id(c, "physical_package_id")))
        .collect();
    Features {
        hostname: s(uts.as_ref().map(|u| u.nodename())).unwrap_or_default(),
        osrelease: s(uts.as_ref().map(|u| u.release())).unwrap_or_default(),
        version: version.to_string(),
        arch: s(uts.as_ref().map(|u| u.machine())).unwrap_or_default(),
        nr_cpus: (present, online),
        cpudesc,
        cpuid,
        total_mem_kb,
        cmdline,
        cpu_topology: (!cores.is_empty() && !threads.is_empty()).then_some((cores, threads)),
        cpu_ids,
        ..Features::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_id_note_found_after_other_notes() {
        let mut n = Vec::new();
        // A "Linux" note of type 6 with a 4-byte desc, then the GNU build id.
        n.extend_from_slice(&6u32.to_le_bytes());
        n.extend_from_slice(&4u32.to_le_bytes());
        n.extend_from_slice(&6u32.to_le_bytes());
        n.extend_from_slice(b"Linux\0\0\0");
        n.extend_from_slice(&[1, 2, 3, 4]);
        n.extend_from_slice(&4u32.to_le_bytes());
        n.extend_from_slice(&20u32.to_le_bytes());
        n.extend_from_slice(&3u32.to_le_bytes());
        n.extend_from_slice(b"GNU\0");
        n.extend_from_slice(&[0xab; 20]);
        assert_eq!(
            build_id_in_notes(&n, Endianness::Little),
            Some(vec![0xab; 20])
        );
        assert_eq!(build_id_in_notes(&n[..40], Endianness::Little), None);
        // A huge size does not overflow.
        let mut bad = n.clone();
        bad[0..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(build_id_in_notes(&bad, Endianness::Little), None);
    }

    #[test]
    fn cpu_lists_are_counted() {
        assert_eq!(count_cpus("0-1\n"), 2);
        assert_eq!(count_cpus("0,2-3"), 3);
        assert_eq!(count_cpus(""), 0);
    }
}
