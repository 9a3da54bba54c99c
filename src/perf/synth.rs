//! The side-band records perf writes for what already runs when recording starts: the
//! kernel's map (`[kernel.kallsyms]_text`) and its modules, and for every process a COMM
//! per thread (with a FORK before it when perf walks every process), and an MMAP2 per
//! executable mapping in `/proc/PID/maps`; with `--namespaces`, a NAMESPACES per thread
//! too, and with `--all-cgroups` a CGROUP per cgroup. With them `perf report` can name
//! the tasks and symbolize samples taken before any MMAP or COMM of the kernel's own.
//!
//! Every record ends with a zeroed `sample_id` trailer of the attrs' size, as perf's own
//! synthesized records do (id 0 means "the first event").

use super::data::abi::{misc, record};

/// PERF_RECORD_KSYMBOL_TYPE_BPF.
const KSYMBOL_TYPE_BPF: u16 = 1;
/// PERF_BPF_EVENT_PROG_LOAD.
pub const BPF_EVENT_PROG_LOAD: u16 = 1;

/// Builds records with a fixed `sample_id` trailer size.
#[derive(Debug, Clone, Copy)]
pub struct Synth {
    /// Bytes of the `sample_id` trailer ([`super::data::abi::sample::id_trailer_size`]).
    pub trailer: usize,
    /// `--buildid-mmap`: map records are MMAP2 carrying the mapped file's build id
    /// (PERF_RECORD_MISC_MMAP_BUILD_ID) where it can be read, the kernel's and its
    /// modules' too.
    pub build_ids: bool,
    /// `--namespaces`: each thread's COMM comes with a NAMESPACES record.
    pub namespaces: bool,
}

fn push_padded_name(v: &mut Vec<u8>, name: &[u8]) {
    let len = (name.len() + 1).div_ceil(8) * 8;
    v.extend_from_slice(name);
    v.resize(v.len() + len - name.len(), 0);
}

/// One mapping of `/proc/PID/maps`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapLine {
    /// Start address.
    pub start: u64,
    /// End address.
    pub end: u64,
    /// File offset.
    pub pgoff: u64,
    /// Device major.
    pub maj: u32,
    /// Device minor.
    pub min: u32,
    /// Inode.
    pub ino: u64,
    /// `PROT_*` bits.
    pub prot: u32,
    /// `MAP_SHARED` or `MAP_PRIVATE`.
    pub flags: u32,
    /// The path, `[vdso]`-style name, or `//anon`.
    pub name: String,
}

/// Parse one line of `/proc/PID/maps` (`None` for a line that is not one).
pub fn parse_map_line(line: &str) -> Option<MapLine> {
    let mut it = line.splitn(6, ' ');
    let range = it.next()?;
    let perms = it.next()?.as_bytes();
    let off = it.next()?;
    let dev = it.next()?;
    let ino = it.next()?;
    let name = it.next().map(str::trim).unwrap_or("");
    let (s, e) = range.split_once('-')?;
    let (maj, min) = dev.split_once(':')?;
    if perms.len() < 4 {
        return None;
    }
    let mut prot = 0u32;
    for (i, p) in [libc::PROT_READ, libc::PROT_WRITE, libc::PROT_EXEC]
        .iter()
        .enumerate()
    {
        if perms[i] != b'-' {
            prot |= *p as u32;
        }
    }
    Some(MapLine {
        start: u64::from_str_radix(s, 16).ok()?,
        end: u64::from_str_radix(e, 16).ok()?,
        pgoff: u64::from_str_radix(off, 16).ok()?,
        maj: u32::from_str_radix(maj, 16).ok()?,
        min: u32::from_str_radix(min, 16).ok()?,
        ino: ino.parse().ok()?,
        prot,
        flags: if perms[3] == b's' {
            libc::MAP_SHARED as u32
        } else {
            libc::MAP_PRIVATE as u32
        },
        name: if name.is_empty() {
            "//anon".into()
        } else {
            name.to_string()
        },
    })
}

impl Synth {
    fn finish(&self, kind: u32, misc: u16, mut body: Vec<u8>) -> Vec<u8> {
        body.resize(body.len() + self.trailer, 0);
        with_header(kind, misc, &body)
    }

    /// PERF_RECORD_COMM.
    pub fn comm(&self, pid: i32, tid: i32, comm: &str) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&pid.to_ne_bytes());
        b.extend_from_slice(&tid.to_ne_bytes());
        push_padded_name(&mut b, &comm.as_bytes()[..comm.len().min(15)]);
        self.finish(record::COMM, 0, b)
    }

    /// PERF_RECORD_NAMESPACES of thread `tid` of process `pid`: the device and inode of
    /// each of its namespaces ([`record::NAMESPACE_NAMES`]) as `stat` finds `/proc/TID/ns/NAME`,
    /// zeros for one it cannot (as perf).
    pub fn namespaces(&self, pid: i32, tid: i32) -> Vec<u8> {
        use std::os::unix::fs::MetadataExt;
        let mut b = Vec::new();
        b.extend_from_slice(&pid.to_ne_bytes());
        b.extend_from_slice(&tid.to_ne_bytes());
        b.extend_from_slice(&(record::NAMESPACE_NAMES.len() as u64).to_ne_bytes());
        for ns in record::NAMESPACE_NAMES {
            let (dev, ino) = std::fs::metadata(format!("/proc/{tid}/ns/{ns}"))
                .map_or((0, 0), |m| (m.dev(), m.ino()));
            b.extend_from_slice(&dev.to_ne_bytes());
            b.extend_from_slice(&ino.to_ne_bytes());
        }
        self.finish(record::NAMESPACES, 0, b)
    }

    /// PERF_RECORD_CGROUP of the cgroup `id` at `path` (below the mount point, from "/").
    pub fn cgroup(&self, id: u64, path: &str) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&id.to_ne_bytes());
        push_padded_name(&mut b, path.as_bytes());
        self.finish(record::CGROUP, 0, b)
    }

    /// PERF_RECORD_LOST_SAMPLES: `lost` samples of the event whose id is `id.0`, stored
    /// `id.1` bytes into the trailer
    /// ([`super::data::abi::sample::id_trailer_offset`]).
    pub fn lost_samples(&self, lost: u64, id: Option<(u64, usize)>) -> Vec<u8> {
        let mut v = self.finish(record::LOST_SAMPLES, 0, lost.to_ne_bytes().to_vec());
        if let Some((id, at)) = id.filter(|&(_, at)| at + 8 <= self.trailer) {
            let start = v.len() - self.trailer + at;
            v[start..start + 8].copy_from_slice(&id.to_ne_bytes());
        }
        v
    }

    /// PERF_RECORD_FORK of `tid` (of process `pid`) from `ptid` (of `ppid`).
    pub fn fork(&self, pid: i32, ppid: i32, tid: i32, ptid: i32) -> Vec<u8> {
        let mut b = Vec::new();
        for v in [pid, ppid, tid, ptid] {
            b.extend_from_slice(&v.to_ne_bytes());
        }
        b.extend_from_slice(&0u64.to_ne_bytes());
        self.finish(record::FORK, 0, b)
    }

    /// PERF_RECORD_MMAP2 for a user mapping.
    pub fn mmap2(&self, pid: i32, tid: i32, m: &MapLine) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&pid.to_ne_bytes());
        b.extend_from_slice(&tid.to_ne_bytes());
        for v in [m.start, m.end.saturating_sub(m.start), m.pgoff] {
            b.extend_from_slice(&v.to_ne_bytes());
        }
        b.extend_from_slice(&m.maj.to_ne_bytes());
        b.extend_from_slice(&m.min.to_ne_bytes());
        b.extend_from_slice(&m.ino.to_ne_bytes());
        b.extend_from_slice(&0u64.to_ne_bytes());
        b.extend_from_slice(&m.prot.to_ne_bytes());
        b.extend_from_slice(&m.flags.to_ne_bytes());
        push_padded_name(&mut b, m.name.as_bytes());
        self.finish(record::MMAP2, misc::USER, b)
    }

    /// PERF_RECORD_KSYMBOL of a BPF program's function (type BPF, no flags).
    pub fn ksymbol(&self, addr: u64, len: u32, name: &str) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&addr.to_ne_bytes());
        b.extend_from_slice(&len.to_ne_bytes());
        b.extend_from_slice(&KSYMBOL_TYPE_BPF.to_ne_bytes());
        b.extend_from_slice(&0u16.to_ne_bytes());
        push_padded_name(&mut b, name.as_bytes());
        self.finish(record::KSYMBOL, 0, b)
    }

    /// PERF_RECORD_BPF_EVENT of type PROG_LOAD for program `id`.
    pub fn bpf_prog_load(&self, id: u32, tag: [u8; 8]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&BPF_EVENT_PROG_LOAD.to_ne_bytes());
        b.extend_from_slice(&0u16.to_ne_bytes());
        b.extend_from_slice(&id.to_ne_bytes());
        b.extend_from_slice(&tag);
        self.finish(record::BPF_EVENT, 0, b)
    }

    /// An MMAP2 record with the build id `id` in place of its device and inode, as perf
    /// 6.1's `perf_record_mmap2__read_build_id` puts it (20 bytes, the size before them).
    fn with_build_id(mut r: Vec<u8>, id: &[u8]) -> Vec<u8> {
        let n = id.len().min(20);
        let mut field = [0u8; 24];
        field[0] = n as u8;
        field[4..4 + n].copy_from_slice(&id[..n]);
        r[40..64].copy_from_slice(&field);
        let misc = u16::from_ne_bytes([r[4], r[5]]) | misc::MMAP_BUILD_ID;
        r[4..6].copy_from_slice(&misc.to_ne_bytes());
        r
    }

    /// A user mapping's MMAP2, with the file's build id when [`Synth::build_ids`] asks
    /// and the file has one.
    fn user_mmap2(&self, pid: i32, m: &MapLine) -> Vec<u8> {
        let r = self.mmap2(pid, pid, m);
        let id = self
            .build_ids
            .then(|| crate::perf::data::host::elf_build_id(std::path::Path::new(&m.name)))
            .flatten();
        match id {
            Some(id) => Synth::with_build_id(r, &id),
            None => r,
        }
    }

    /// PERF_RECORD_MMAP of a kernel map (pid -1): the kernel text or a module. With
    /// [`Synth::build_ids`], an MMAP2 with `build_id` (no protection bits, as perf).
    pub fn kernel_mmap(&self, start: u64, len: u64, pgoff: u64, name: &str) -> Vec<u8> {
        if self.build_ids {
            let m = MapLine {
                start,
                end: start.saturating_add(len),
                pgoff,
                maj: 0,
                min: 0,
                ino: 0,
                prot: 0,
                flags: 0,
                name: name.to_string(),
            };
            let mut r = self.mmap2(-1, 0, &m);
            r[4..6].copy_from_slice(&misc::KERNEL.to_ne_bytes());
            // mmap2 measures the length from the end, which saturates: keep the one given.
            r[24..32].copy_from_slice(&len.to_ne_bytes());
            let id = match name.strip_prefix('[').and_then(|n| n.strip_suffix(']')) {
                _ if name.starts_with("[kernel.kallsyms]") => {
                    crate::perf::data::host::kernel_build_id()
                }
                Some(module) => {
                    std::fs::read(format!("/sys/module/{module}/notes/.note.gnu.build-id"))
                        .ok()
                        .and_then(|n| {
                            crate::perf::data::host::build_id_in_notes(
                                &n,
                                crate::endian::Endianness::NATIVE,
                            )
                        })
                }
                None => None,
            };
            return match id {
                Some(id) => Synth::with_build_id(r, &id),
                None => r,
            };
        }
        let mut b = Vec::new();
        b.extend_from_slice(&(-1i32).to_ne_bytes());
        b.extend_from_slice(&0i32.to_ne_bytes());
        for v in [start, len, pgoff] {
            b.extend_from_slice(&v.to_ne_bytes());
        }
        push_padded_name(&mut b, name.as_bytes());
        self.finish(record::MMAP, misc::KERNEL, b)
    }

    /// The kernel's maps: `[kernel.kallsyms]_text` from `_text` to `_etext` (found in
    /// `kallsyms`), and one map per module of `/proc/modules` named `[module]`.
    pub fn kernel_maps(&self, kallsyms: &str, modules: &str) -> Vec<Vec<u8>> {
        // The first line naming the symbol (`address type name`), found by a search of
        // the whole text: kallsyms has some 200,000 lines, and this runs before the
        // events start.
        let address_of = |name: &str| {
            let needle = format!(" {name}\n");
            let mut from = 0;
            while let Some(at) = kallsyms[from..].find(&needle).map(|k| from + k) {
                let start = kallsyms[..at].rfind('\n').map_or(0, |n| n + 1);
                let mut it = kallsyms[start..at + needle.len()].split_whitespace();
                if let (Some(a), Some(_), Some(n), None) =
                    (it.next(), it.next(), it.next(), it.next())
                {
                    if n == name {
                        return u64::from_str_radix(a, 16).ok();
                    }
                }
                from = at + 1;
            }
            None
        };
        let text = address_of("_text");
        let etext = address_of("_etext");
        let mut out = Vec::new();
        // Addresses read as 0 when kallsyms is restricted: no kernel map then (perf
        // leaves kernel samples unresolved the same way).
        if let Some(t) = text.filter(|&t| t != 0) {
            let end = etext.filter(|&e| e > t).unwrap_or(u64::MAX);
            out.push(self.kernel_mmap(t, end - t, t, "[kernel.kallsyms]_text"));
        }
        for l in modules.lines() {
            // name size refcount deps state address
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() < 6 {
                continue;
            }
            let (Ok(size), Ok(addr)) = (
                f[1].parse::<u64>(),
                u64::from_str_radix(f[5].trim_start_matches("0x"), 16),
            ) else {
                continue;
            };
            if addr != 0 {
                out.push(self.kernel_mmap(addr, size, 0, &format!("[{}]", f[0])));
            }
        }
        out
    }

    /// The records of one running process as perf's walk of every process (`-a`)
    /// writes them: per thread, a FORK (from the parent process for the leader, from
    /// the leader for the others), its NAMESPACES with [`Synth::namespaces`], its COMM;
    /// right after the leader's, the MMAP2 of its mappings (`Synth::maps`). A process
    /// that ended meanwhile gives what could be read; one whose mappings cannot be read
    /// (no permission) gives no more than its leader's, as perf stops there.
    pub fn process(&self, pid: i32, data: bool) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        for (tid, comm) in threads(pid) {
            let parent = if tid == pid {
                parent_of(pid).unwrap_or(0)
            } else {
                pid
            };
            out.push(self.fork(pid, parent, tid, parent));
            if self.namespaces {
                out.push(self.namespaces(pid, tid));
            }
            out.push(self.comm(pid, tid, &comm));
            if tid == pid && !self.maps(pid, data, &mut out) {
                break;
            }
        }
        out
    }

    /// The records of one process perf is given (`-p`) for each of its threads: the
    /// COMM, then the NAMESPACES with [`Synth::namespaces`]; no FORK; the leader's
    /// mappings after its own (`Synth::maps`). False with the records when the
    /// leader's mappings could not be read, after which perf synthesizes no more.
    pub fn given_process(&self, pid: i32, data: bool) -> (Vec<Vec<u8>>, bool) {
        let mut out = Vec::new();
        for (tid, comm) in threads(pid) {
            out.push(self.comm(pid, tid, &comm));
            if self.namespaces {
                out.push(self.namespaces(pid, tid));
            }
            if tid == pid && !self.maps(pid, data, &mut out) {
                return (out, false);
            }
        }
        (out, true)
    }

    /// MMAP2 per executable mapping of `pid` and, with `data`, per readable one too
    /// (perf's `mmap_data`, which `--call-graph dwarf` sets: an unwinder reads the call
    /// frame tables there). False when /proc/PID/maps cannot be read.
    fn maps(&self, pid: i32, data: bool, out: &mut Vec<Vec<u8>>) -> bool {
        let Ok(maps) = std::fs::read_to_string(format!("/proc/{pid}/maps")) else {
            return false;
        };
        for m in maps.lines().filter_map(parse_map_line) {
            if m.prot & libc::PROT_EXEC as u32 != 0 {
                out.push(self.user_mmap2(pid, &m));
            } else if data && m.prot & libc::PROT_READ as u32 != 0 {
                let mut r = self.user_mmap2(pid, &m);
                let misc = u16::from_ne_bytes([r[4], r[5]]) | misc::MMAP_DATA;
                r[4..6].copy_from_slice(&misc.to_ne_bytes());
                out.push(r);
            }
        }
        true
    }
}

/// The threads of `pid` that still run, with their comms, in tid order.
fn threads(pid: i32) -> Vec<(i32, String)> {
    let tids = super::process_threads(pid).unwrap_or_else(|_| vec![pid]);
    tids.into_iter()
        .filter_map(|tid| {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm")).ok()?;
            Some((tid, comm.trim_end_matches('\n').to_string()))
        })
        .collect()
}

/// The parent process of `pid` (`PPid:` of /proc/PID/status).
fn parent_of(pid: i32) -> Option<i32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("PPid:"))
        .and_then(|v| v.trim().parse().ok())
}

/// Every process id under /proc, sorted.
pub fn all_pids() -> Vec<i32> {
    let mut v: Vec<i32> = std::fs::read_dir("/proc")
        .map(|rd| {
            rd.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    v.sort_unstable();
    v
}

/// `body` behind a record header of `kind` and `misc`.
fn with_header(kind: u32, misc: u16, body: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(8 + body.len());
    v.extend_from_slice(&kind.to_ne_bytes());
    v.extend_from_slice(&misc.to_ne_bytes());
    v.extend_from_slice(&((8 + body.len()) as u16).to_ne_bytes());
    v.extend_from_slice(body);
    v
}

/// A record of perf's own (type 64 and up): no `sample_id` trailer.
fn user_record(kind: u32, body: &[u8]) -> Vec<u8> {
    with_header(kind, 0, body)
}

/// PERF_RECORD_ID_INDEX: every counter's id with its ring, CPU and thread, as perf
/// writes it first among the synthesized records. Empty when there are no ids; split
/// into several records when one would pass the 64 KiB a record can hold.
pub fn id_index(slots: &[super::record::IdSlot]) -> Vec<Vec<u8>> {
    // 8 bytes of header and 8 of count, then 32 per entry.
    let per_record = (usize::from(u16::MAX) - 16) / 32;
    slots
        .chunks(per_record)
        .map(|chunk| {
            let mut b = Vec::with_capacity(8 + chunk.len() * 32);
            b.extend_from_slice(&(chunk.len() as u64).to_ne_bytes());
            for s in chunk {
                b.extend_from_slice(&s.id.to_ne_bytes());
                b.extend_from_slice(&s.ring.to_ne_bytes());
                b.extend_from_slice(&i64::from(s.cpu).to_ne_bytes());
                b.extend_from_slice(&i64::from(s.tid).to_ne_bytes());
            }
            user_record(record::ID_INDEX, &b)
        })
        .collect()
}

/// PERF_RECORD_THREAD_MAP: the threads the counters are opened on (-1 for all), each
/// with an empty comm, as perf record writes it.
pub fn thread_map(threads: &[i32]) -> Vec<u8> {
    let mut b = Vec::with_capacity(8 + threads.len() * 24);
    b.extend_from_slice(&(threads.len() as u64).to_ne_bytes());
    for &t in threads {
        b.extend_from_slice(&i64::from(t).to_ne_bytes());
        b.extend_from_slice(&[0u8; 16]);
    }
    user_record(record::THREAD_MAP, &b)
}

/// PERF_RECORD_CPU_MAP of `cpus` (sorted, -1 first for "any CPU"), encoded as perf's
/// `cpu_map_data__alloc` chooses: a range when the CPUs other than -1 are consecutive,
/// else a list when there is a -1 or a list is shorter than a mask of 32-bit words,
/// else that mask.
pub fn cpu_map(cpus: &[i32]) -> Vec<u8> {
    const CPUS: u16 = 0;
    const MASK: u16 = 1;
    const RANGE: u16 = 2;
    let any = cpus.first() == Some(&-1);
    let real = &cpus[usize::from(any)..];
    let nr = cpus.len() as i64;
    // perf takes the first real CPU, or -1 when there is none, and the last of all.
    let min = real.first().copied().unwrap_or(-1);
    let max = cpus.last().copied().unwrap_or(-1);
    let mut b = Vec::with_capacity(16);
    if i64::from(max) - i64::from(min) + 1 == nr - i64::from(any) {
        b.extend_from_slice(&RANGE.to_ne_bytes());
        b.push(u8::from(any));
        b.push(0);
        b.extend_from_slice(&(min as u16).to_ne_bytes());
        b.extend_from_slice(&(max as u16).to_ne_bytes());
        return user_record(record::CPU_MAP, &b);
    }
    // perf's sizes: the type, then a count and a u16 per CPU; or the type, a count and a
    // word size, then max/32 (rounded up) words.
    let list_size = 2 + 2 + 2 * cpus.len();
    let words = (max.max(0) as usize).div_ceil(32);
    let mask_size = 2 + 4 + 4 * words;
    if any || list_size < mask_size {
        b.extend_from_slice(&CPUS.to_ne_bytes());
        b.extend_from_slice(&(cpus.len() as u16).to_ne_bytes());
        for &c in cpus {
            b.extend_from_slice(&(c as u16).to_ne_bytes());
        }
    } else {
        b.extend_from_slice(&MASK.to_ne_bytes());
        b.extend_from_slice(&(words as u16).to_ne_bytes());
        b.extend_from_slice(&4u16.to_ne_bytes());
        b.resize(mask_size.div_ceil(8) * 8, 0);
        for &c in real {
            // perf sets each bit in place, into the padding when its words are too few
            // for the highest CPU; a bit past the record is left out.
            let at = 6 + (c as usize / 32) * 4;
            if at + 4 <= b.len() {
                let w = u32::from_ne_bytes(b[at..at + 4].try_into().unwrap_or_default())
                    | 1 << (c as u32 % 32);
                b[at..at + 4].copy_from_slice(&w.to_ne_bytes());
            }
        }
    }
    b.resize(b.len().div_ceil(8) * 8, 0);
    user_record(record::CPU_MAP, &b)
}

/// PERF_RECORD_FINISHED_INIT: the synthesized records end here.
pub fn finished_init() -> Vec<u8> {
    user_record(record::FINISHED_INIT, &[])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_lines() {
        let m = parse_map_line(
            "7f4f606f2000-7f4f60718000 r-xp 00001000 fe:00 325843                     /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
        )
        .unwrap();
        assert_eq!(m.start, 0x7f4f606f2000);
        assert_eq!(m.end - m.start, 0x26000);
        assert_eq!(m.pgoff, 0x1000);
        assert_eq!((m.maj, m.min, m.ino), (0xfe, 0, 325843));
        assert_eq!(m.prot, (libc::PROT_READ | libc::PROT_EXEC) as u32);
        assert_eq!(m.name, "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
        let a = parse_map_line("7ffd1000-7ffd3000 r-xp 00000000 00:00 0 ").unwrap();
        assert_eq!(a.name, "//anon");
        assert!(parse_map_line("garbage").is_none());
    }

    #[test]
    fn records_have_their_size_and_trailer() {
        let s = Synth {
            trailer: 16,
            build_ids: false,
            namespaces: false,
        };
        let c = s.comm(5, 6, "sleep");
        assert_eq!(c.len(), 8 + 8 + 8 + 16);
        assert_eq!(u16::from_ne_bytes([c[6], c[7]]) as usize, c.len());
        assert_eq!(&c[16..22], b"sleep\0");
        let k = s.kernel_maps(
            "ffffffff81000000 T _text\nffffffff81000010 t x\nffffffff8220bb08 T _etext\n",
            "",
        );
        assert_eq!(k.len(), 1);
        let r = &k[0];
        assert_eq!(u32::from_ne_bytes(r[..4].try_into().unwrap()), record::MMAP);
        assert_eq!(u64::from_ne_bytes(r[24..32].try_into().unwrap()), 0x120bb08);
        assert_eq!(&r[40..62], b"[kernel.kallsyms]_text");
    }

    /// perf's layouts: a NAMESPACES of the pid, tid, their number (7) and a device and
    /// inode each; a CGROUP of the id and the path, padded to 8; both with the trailer.
    #[test]
    fn namespaces_and_cgroup_records() {
        let s = Synth {
            trailer: 16,
            build_ids: false,
            namespaces: true,
        };
        let me = std::process::id() as i32;
        let n = s.namespaces(me, me);
        assert_eq!(n.len(), 8 + 16 + 7 * 16 + 16);
        assert_eq!(u16::from_ne_bytes([n[6], n[7]]) as usize, n.len());
        assert_eq!(
            u32::from_ne_bytes(n[..4].try_into().unwrap()),
            record::NAMESPACES
        );
        assert_eq!(&n[16..24], &7u64.to_ne_bytes());
        let c = s.cgroup(1051, "/tctl/a");
        assert_eq!(c.len(), 8 + 8 + 8 + 16);
        assert_eq!(
            u32::from_ne_bytes(c[..4].try_into().unwrap()),
            record::CGROUP
        );
        assert_eq!(&c[8..16], &1051u64.to_ne_bytes());
        assert_eq!(&c[16..24], b"/tctl/a\0");
        let root = s.cgroup(1, "/");
        assert_eq!(&root[16..24], b"/\0\0\0\0\0\0\0");
        let kinds = |records: Vec<Vec<u8>>| -> Vec<u32> {
            records
                .iter()
                .map(|r| u32::from_ne_bytes(r[..4].try_into().unwrap()))
                .take(4)
                .collect()
        };
        // perf's walk of every process: the leader's FORK too, and its maps after its
        // COMM; for a process it is given, the COMM before the namespaces.
        assert_eq!(
            kinds(s.process(me, false)),
            [
                record::FORK,
                record::NAMESPACES,
                record::COMM,
                record::MMAP2
            ]
        );
        assert_eq!(
            kinds(s.given_process(me, false).0),
            [
                record::COMM,
                record::NAMESPACES,
                record::MMAP2,
                record::MMAP2
            ]
        );
    }

    /// perf 6.1's layouts, as `perf script -D` dumps its own records: a KSYMBOL of 20
    /// bytes at an address, named and padded to 8; a BPF_EVENT with the id and tag; a
    /// kernel MMAP2 with a 20-byte build id in place of the device and inode.
    #[test]
    fn bpf_and_build_id_records() {
        let s = Synth {
            trailer: 16,
            build_ids: true,
            namespaces: false,
        };
        let k = s.ksymbol(
            0xffffffffc0022064,
            20,
            "bpf_prog_59f4a931744dcdc6_tctl_tiny",
        );
        assert_eq!(k.len(), 0x50);
        assert_eq!(
            u32::from_ne_bytes(k[..4].try_into().unwrap()),
            record::KSYMBOL
        );
        assert_eq!(&k[8..16], &0xffffffffc0022064u64.to_ne_bytes());
        assert_eq!(&k[16..24], &[20, 0, 0, 0, 1, 0, 0, 0]);
        assert_eq!(&k[24..60], b"bpf_prog_59f4a931744dcdc6_tctl_tiny\0");
        let tag = [0x59, 0xf4, 0xa9, 0x31, 0x74, 0x4d, 0xcd, 0xc6];
        let b = s.bpf_prog_load(103, tag);
        assert_eq!(b.len(), 0x28);
        assert_eq!(&b[8..16], &[1, 0, 0, 0, 103, 0, 0, 0]);
        assert_eq!(&b[16..24], &tag);
        let id: Vec<u8> = (1..=20).collect();
        let m = Synth::with_build_id(
            s.mmap2(
                -1,
                0,
                &parse_map_line("1000-2000 r-xp 0 fe:00 7 /x").unwrap(),
            ),
            &id,
        );
        assert_eq!(
            u16::from_ne_bytes([m[4], m[5]]),
            misc::USER | misc::MMAP_BUILD_ID
        );
        assert_eq!(&m[40..44], &[20, 0, 0, 0]);
        assert_eq!(&m[44..64], &id[..]);
        assert_eq!(&m[64..72], &[5, 0, 0, 0, 2, 0, 0, 0]);
    }

    /// The CPU_MAP and THREAD_MAP records perf 6.1 wrote (`perf script -D` bytes): CPUs
    /// 0-1 as a range, -1 alone (`--per-thread`) as a list, and the thread map of `-a`.
    #[test]
    fn cpu_and_thread_maps_as_perf_writes_them() {
        let range = [74, 0, 0, 0, 0, 0, 16, 0, 2, 0, 0, 0, 0, 0, 1, 0];
        assert_eq!(super::cpu_map(&[0, 1]), range);
        let any = [74, 0, 0, 0, 0, 0, 16, 0, 0, 0, 1, 0, 0xff, 0xff, 0, 0];
        assert_eq!(super::cpu_map(&[-1]), any);
        let mut all = vec![73, 0, 0, 0, 0, 0, 40, 0, 1, 0, 0, 0, 0, 0, 0, 0];
        all.extend([0xff; 8]);
        all.extend([0; 16]);
        assert_eq!(super::thread_map(&[-1]), all);
        assert_eq!(super::finished_init(), [82, 0, 0, 0, 0, 0, 8, 0]);
    }
}
