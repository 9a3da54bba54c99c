//! The feature sections `perf report --header` prints, read into typed values: event
//! descriptions, CPU, NUMA and memory topology, caches, PMU mappings and capabilities,
//! groups, clocks (tools/perf/util/header.c's `process_*` layouts).
//!
//! Each reader returns `Ok(None)` when the file lacks the section, and an error naming
//! the section and offset when its bytes end early or hold a count past them.

use super::abi::feature;
use super::read::{parse_attr, read_string, Cur, Short};
use super::{Attr, PerfData, PerfDataError};

/// One event of EVENT_DESC: its attr, its name and its ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventDesc {
    /// The attr as stored in the section.
    pub attr: Attr,
    /// The name perf gave the event.
    pub name: String,
    /// Its sample ids.
    pub ids: Vec<u64>,
}

/// CPU_TOPOLOGY: sibling lists, and each CPU's ids when the file has them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuTopology {
    /// Core (package) sibling lists.
    pub cores: Vec<String>,
    /// Thread sibling lists.
    pub threads: Vec<String>,
    /// `(core id, socket id)` of each CPU, by number; empty in files written before perf
    /// stored them.
    pub ids: Vec<(i32, i32)>,
    /// Die sibling lists, when stored.
    pub dies: Vec<String>,
    /// Each CPU's die id, when the die lists are stored.
    pub die_ids: Vec<i32>,
}

/// One NUMA_TOPOLOGY node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumaNode {
    /// Node number.
    pub node: u32,
    /// Memory in kB.
    pub mem_total: u64,
    /// Free memory in kB.
    pub mem_free: u64,
    /// Its CPUs, as a list (`0-1`).
    pub cpus: String,
}

/// One CACHE level of one CPU group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheLevel {
    /// 1, 2, 3...
    pub level: u32,
    /// Line size in bytes.
    pub line_size: u32,
    /// Number of sets.
    pub sets: u32,
    /// Associativity.
    pub ways: u32,
    /// `Data`, `Instruction`, `Unified`.
    pub type_: String,
    /// `32K`.
    pub size: String,
    /// The CPUs sharing it (`0-1`).
    pub map: String,
}

/// MEM_TOPOLOGY: the memory block size and each node's blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemTopology {
    /// Block size in bytes.
    pub block_size: u64,
    /// The nodes.
    pub nodes: Vec<MemNode>,
}

/// One MEM_TOPOLOGY node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemNode {
    /// Node number.
    pub node: u64,
    /// The node's size field as stored.
    pub size: u64,
    /// The blocks it holds: bit `i` of word `i / 64` for block `i`.
    pub blocks: Vec<u64>,
    /// Number of bits of `blocks` that count.
    pub nbits: u64,
}

/// CLOCK_DATA: the clock of the samples and one reading of it with the time of day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockData {
    /// The `clockid_t` of the samples.
    pub clockid: u32,
    /// Time of day, ns since the epoch.
    pub tod_ns: u64,
    /// The same instant on `clockid`, ns.
    pub clockid_ns: u64,
}

/// COMPRESSED: how the data records were compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compressed {
    /// Format version.
    pub version: u32,
    /// 1 for Zstd.
    pub type_: u32,
    /// Compression level.
    pub level: u32,
    /// Ratio reached.
    pub ratio: u32,
    /// mmap size used.
    pub mmap_len: u32,
}

/// The capabilities of one PMU (PMU_CAPS, or CPU_PMU_CAPS for `cpu`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PmuCaps {
    /// The PMU's name.
    pub pmu: String,
    /// `name=value` of each capability.
    pub caps: Vec<String>,
}

/// One GROUP_DESC entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupDesc {
    /// The group's name (`{anon_group}` for none).
    pub name: String,
    /// Index of its leader among the attrs.
    pub leader_idx: u32,
    /// Number of events in it.
    pub nr_members: u32,
}

/// One BPF program of the BPF_PROG_INFO feature: what perf prints of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BpfProg {
    /// The kernel's program id.
    pub id: u32,
    /// The program's own name (`bpf_prog_info.name`).
    pub name: String,
    /// The id of its BTF object (0: none).
    pub btf_id: u32,
    /// For each function (sub-program): its tag, JITed address and JITed length, and
    /// the BTF type id of its `func_info` when there is one.
    pub functions: Vec<BpfFunction>,
    /// Whether the counts of addresses, lengths and tags agree (perf prints nothing of a
    /// program whose counts do not).
    pub consistent: bool,
}

/// One function of a [`BpfProg`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BpfFunction {
    /// `prog_tags[i]`.
    pub tag: [u8; 8],
    /// `jited_ksyms[i]`.
    pub addr: u64,
    /// `jited_func_lens[i]`.
    pub len: u32,
    /// The `type_id` of `func_info[i]`, if the program has func_info.
    pub btf_type: Option<u32>,
}

impl BpfProg {
    /// Read one program from perf's `struct perf_bpil`: its `struct bpf_prog_info` and the
    /// data its array pointers point into, as offsets (the file's form). The error says
    /// what does not fit.
    pub fn from_bpil(
        info: &[u8],
        data: &[u8],
        e: crate::endian::Endianness,
    ) -> Result<BpfProg, String> {
        // The fields of `struct bpf_prog_info` read here end at byte 192.
        if info.len() < 192 {
            return Err(format!(
                "a bpf_prog_info of {} bytes (at least 192 expected)",
                info.len()
            ));
        }
        let u32_at = |o: usize| e.u32(&info[o..o + 4]);
        let u64_at = |o: usize| e.u64(&info[o..o + 8]);
        let name_bytes = &info[64..80];
        let name_end = name_bytes.iter().position(|&b| b == 0).unwrap_or(16);
        let (nr_ksyms, nr_lens, nr_tags) = (u32_at(104), u32_at(108), u32_at(180));
        let (ksyms, lens, tags) = (u64_at(112), u64_at(120), u64_at(184));
        let (func_info, func_info_rec, nr_func_info) = (u64_at(136), u32_at(132), u32_at(144));
        let consistent = nr_ksyms == nr_lens && nr_ksyms == nr_tags;
        let bad =
            |what: &str| format!("program {}: its {what} pass the end of its data", u32_at(4));
        let slice = |off: u64, len: u64| -> Option<&[u8]> {
            let start = usize::try_from(off).ok()?;
            let end = start.checked_add(usize::try_from(len).ok()?)?;
            data.get(start..end)
        };
        let mut functions = Vec::new();
        if consistent {
            let n = u64::from(nr_ksyms);
            let addrs = slice(ksyms, n * 8).ok_or_else(|| bad("addresses"))?;
            let lengths = slice(lens, n * 4).ok_or_else(|| bad("lengths"))?;
            let tag_bytes = slice(tags, n * 8).ok_or_else(|| bad("tags"))?;
            let finfo = if nr_func_info >= nr_ksyms && func_info_rec >= 8 {
                slice(
                    func_info,
                    u64::from(nr_func_info) * u64::from(func_info_rec),
                )
            } else {
                None
            };
            for i in 0..nr_ksyms as usize {
                let mut tag = [0u8; 8];
                tag.copy_from_slice(&tag_bytes[i * 8..i * 8 + 8]);
                // struct bpf_func_info: insn_off, type_id.
                let btf_type = finfo.map(|f| {
                    let at = i * func_info_rec as usize + 4;
                    e.u32(&f[at..at + 4])
                });
                functions.push(BpfFunction {
                    tag,
                    addr: e.u64(&addrs[i * 8..i * 8 + 8]),
                    len: e.u32(&lengths[i * 4..i * 4 + 4]),
                    btf_type,
                });
            }
        }
        Ok(BpfProg {
            id: u32_at(4),
            name: String::from_utf8_lossy(&name_bytes[..name_end]).into_owned(),
            btf_id: u32_at(128),
            functions,
            consistent,
        })
    }

    /// perf's name of function `i` (`synthesize_bpf_prog_name`): `bpf_prog_`, the tag in
    /// hex, then `_` and the function's name in `btf` (the program's BTF, when there is
    /// one), else the program's own name for a lone function, else `F` (nothing for a
    /// lone function of a program without a name). The error is the BTF's.
    pub fn function_name(&self, i: usize, btf: Option<&[u8]>) -> Result<String, String> {
        let Some(f) = self.functions.get(i) else {
            return Ok(String::new());
        };
        let lone = self.functions.len() == 1;
        let mut n = String::from("bpf_prog_");
        for b in f.tag {
            n.push_str(&format!("{b:02x}"));
        }
        let short = match (btf, f.btf_type) {
            (Some(b), Some(t)) => crate::btf::type_name(b, t)?.unwrap_or_default(),
            _ if lone && i == 0 && self.name.is_empty() => return Ok(n),
            _ if lone && i == 0 => self.name.clone(),
            _ => "F".to_string(),
        };
        n.push('_');
        n.push_str(&short);
        Ok(n)
    }
}

/// A reader over one feature section, turning short reads into errors naming it.
struct Section<'a> {
    file: &'a PerfData,
    what: &'static str,
    c: Cur<'a>,
}

impl<'a> Section<'a> {
    fn err(&self, s: Short) -> PerfDataError {
        self.file.short(self.what, s)
    }
    fn u32(&mut self) -> Result<u32, PerfDataError> {
        self.c.u32().map_err(|s| self.file.short(self.what, s))
    }
    fn u64(&mut self) -> Result<u64, PerfDataError> {
        self.c.u64().map_err(|s| self.file.short(self.what, s))
    }
    fn string(&mut self) -> Result<String, PerfDataError> {
        let s = read_string(&mut self.c).map_err(|s| self.file.short(self.what, s))?;
        Ok(String::from_utf8_lossy(s).into_owned())
    }
    fn left(&self) -> usize {
        self.c.data.len() - self.c.pos
    }
    /// A count read from the file, refused when `count * min_bytes` passes the end.
    fn count(&mut self, min_bytes: u64) -> Result<u32, PerfDataError> {
        let at = self.c.offset();
        let n = self.u32()?;
        if u64::from(n) * min_bytes > self.left() as u64 {
            return Err(self.file.corrupt(
                self.what,
                at,
                format!(
                    "a count of {n} entries needs at least {} bytes, {} left",
                    u64::from(n) * min_bytes,
                    self.left()
                ),
            ));
        }
        Ok(n)
    }
    fn strings(&mut self) -> Result<Vec<String>, PerfDataError> {
        let n = self.count(4)?;
        (0..n).map(|_| self.string()).collect()
    }
}

impl PerfData {
    fn section(&self, id: u32, what: &'static str) -> Option<Section<'_>> {
        let f = self.feature(id)?;
        Some(Section {
            file: self,
            what,
            c: self.cur(f.offset, f.size),
        })
    }

    /// TOTAL_MEM: the machine's memory in kB.
    pub fn total_mem(&self) -> Result<Option<u64>, PerfDataError> {
        let Some(mut s) = self.section(feature::TOTAL_MEM, "TOTAL_MEM feature") else {
            return Ok(None);
        };
        s.u64().map(Some)
    }

    /// EVENT_DESC: every event's attr, name and ids, in the file's order.
    pub fn event_desc(&self) -> Result<Option<Vec<EventDesc>>, PerfDataError> {
        let Some(mut s) = self.section(feature::EVENT_DESC, "EVENT_DESC feature") else {
            return Ok(None);
        };
        let nr = s.u32()?;
        let attr_size = u64::from(s.u32()?);
        let mut v = Vec::new();
        for _ in 0..nr {
            let at = s.c.offset();
            let raw = s.c.take(attr_size).map_err(|e| s.err(e))?;
            let mut ac = Cur {
                data: raw,
                pos: 0,
                base: at,
                endian: self.endian(),
            };
            let attr = parse_attr(&mut ac, attr_size).map_err(|e| s.err(e))?;
            let nr_ids = s.u32()?;
            let name = s.string()?;
            if u64::from(nr_ids) * 8 > s.left() as u64 {
                return Err(self.corrupt(
                    s.what,
                    s.c.offset(),
                    format!("{nr_ids} ids need {} bytes, {} left", nr_ids * 8, s.left()),
                ));
            }
            let ids = (0..nr_ids).map(|_| s.u64()).collect::<Result<_, _>>()?;
            v.push(EventDesc { attr, name, ids });
        }
        Ok(Some(v))
    }

    /// CPU_TOPOLOGY, with the CPU count NRCPUS gives (the ids are per available CPU).
    pub fn cpu_topology(&self) -> Result<Option<CpuTopology>, PerfDataError> {
        let Some(mut s) = self.section(feature::CPU_TOPOLOGY, "CPU_TOPOLOGY feature") else {
            return Ok(None);
        };
        let nr_cpus = self.nr_cpus()?.map_or(0, |(avail, _)| avail);
        let mut t = CpuTopology {
            cores: s.strings()?,
            threads: s.strings()?,
            ..CpuTopology::default()
        };
        if s.left() == 0 {
            return Ok(Some(t));
        }
        let pairs = (0..nr_cpus)
            .map(|_| Ok((s.u32()? as i32, s.u32()? as i32)))
            .collect::<Result<Vec<_>, PerfDataError>>()?;
        t.ids = pairs;
        if s.left() == 0 {
            return Ok(Some(t));
        }
        t.dies = s.strings()?;
        t.die_ids = (0..nr_cpus)
            .map(|_| Ok(s.u32()? as i32))
            .collect::<Result<_, PerfDataError>>()?;
        Ok(Some(t))
    }

    /// NUMA_TOPOLOGY: each node's memory and CPUs.
    pub fn numa_topology(&self) -> Result<Option<Vec<NumaNode>>, PerfDataError> {
        let Some(mut s) = self.section(feature::NUMA_TOPOLOGY, "NUMA_TOPOLOGY feature") else {
            return Ok(None);
        };
        let n = s.count(4 + 8 + 8 + 4)?;
        let mut v = Vec::new();
        for _ in 0..n {
            v.push(NumaNode {
                node: s.u32()?,
                mem_total: s.u64()?,
                mem_free: s.u64()?,
                cpus: s.string()?,
            });
        }
        Ok(Some(v))
    }

    /// PMU_MAPPINGS: `(type, name)` of each PMU.
    pub fn pmu_mappings(&self) -> Result<Option<Vec<(u32, String)>>, PerfDataError> {
        let Some(mut s) = self.section(feature::PMU_MAPPINGS, "PMU_MAPPINGS feature") else {
            return Ok(None);
        };
        let n = s.count(8)?;
        let mut v = Vec::new();
        for _ in 0..n {
            let t = s.u32()?;
            v.push((t, s.string()?));
        }
        Ok(Some(v))
    }

    /// GROUP_DESC: the groups of two or more events.
    pub fn group_desc(&self) -> Result<Option<Vec<GroupDesc>>, PerfDataError> {
        let Some(mut s) = self.section(feature::GROUP_DESC, "GROUP_DESC feature") else {
            return Ok(None);
        };
        let n = s.count(12)?;
        let mut v = Vec::new();
        for _ in 0..n {
            v.push(GroupDesc {
                name: s.string()?,
                leader_idx: s.u32()?,
                nr_members: s.u32()?,
            });
        }
        Ok(Some(v))
    }

    /// CACHE: each cache level of each CPU group (version 1, the only one perf writes).
    pub fn caches(&self) -> Result<Option<Vec<CacheLevel>>, PerfDataError> {
        let Some(mut s) = self.section(feature::CACHE, "CACHE feature") else {
            return Ok(None);
        };
        let at = s.c.offset();
        let version = s.u32()?;
        if version != 1 {
            return Err(self.corrupt(s.what, at, format!("version {version}, not 1")));
        }
        let n = s.count(4 * 4 + 3 * 4)?;
        let mut v = Vec::new();
        for _ in 0..n {
            v.push(CacheLevel {
                level: s.u32()?,
                line_size: s.u32()?,
                sets: s.u32()?,
                ways: s.u32()?,
                type_: s.string()?,
                size: s.string()?,
                map: s.string()?,
            });
        }
        Ok(Some(v))
    }

    /// MEM_TOPOLOGY (version 1).
    pub fn mem_topology(&self) -> Result<Option<MemTopology>, PerfDataError> {
        let Some(mut s) = self.section(feature::MEM_TOPOLOGY, "MEM_TOPOLOGY feature") else {
            return Ok(None);
        };
        let at = s.c.offset();
        let version = s.u64()?;
        if version != 1 {
            return Err(self.corrupt(s.what, at, format!("version {version}, not 1")));
        }
        let block_size = s.u64()?;
        let at = s.c.offset();
        let nr = s.u64()?;
        if nr.saturating_mul(24) > s.left() as u64 {
            return Err(self.corrupt(s.what, at, format!("{nr} nodes past the section")));
        }
        let mut nodes = Vec::new();
        for _ in 0..nr {
            let node = s.u64()?;
            let size = s.u64()?;
            let at = s.c.offset();
            let nbits = s.u64()?;
            let words = nbits.div_ceil(64);
            if words.saturating_mul(8) > s.left() as u64 {
                return Err(self.corrupt(s.what, at, format!("{nbits} bits past the section")));
            }
            let blocks = (0..words).map(|_| s.u64()).collect::<Result<_, _>>()?;
            nodes.push(MemNode {
                node,
                size,
                blocks,
                nbits,
            });
        }
        Ok(Some(MemTopology { block_size, nodes }))
    }

    /// CLOCKID: the resolution of the samples' clock, in ns.
    pub fn clockid_res_ns(&self) -> Result<Option<u64>, PerfDataError> {
        let Some(mut s) = self.section(feature::CLOCKID, "CLOCKID feature") else {
            return Ok(None);
        };
        s.u64().map(Some)
    }

    /// CLOCK_DATA (version 1).
    pub fn clock_data(&self) -> Result<Option<ClockData>, PerfDataError> {
        let Some(mut s) = self.section(feature::CLOCK_DATA, "CLOCK_DATA feature") else {
            return Ok(None);
        };
        let at = s.c.offset();
        let version = s.u32()?;
        if version != 1 {
            return Err(self.corrupt(s.what, at, format!("version {version}, not 1")));
        }
        Ok(Some(ClockData {
            clockid: s.u32()?,
            tod_ns: s.u64()?,
            clockid_ns: s.u64()?,
        }))
    }

    /// DIR_FORMAT: the version of a perf.data directory.
    pub fn dir_format(&self) -> Result<Option<u64>, PerfDataError> {
        let Some(mut s) = self.section(feature::DIR_FORMAT, "DIR_FORMAT feature") else {
            return Ok(None);
        };
        s.u64().map(Some)
    }

    /// COMPRESSED.
    pub fn compressed(&self) -> Result<Option<Compressed>, PerfDataError> {
        let Some(mut s) = self.section(feature::COMPRESSED, "COMPRESSED feature") else {
            return Ok(None);
        };
        Ok(Some(Compressed {
            version: s.u32()?,
            type_: s.u32()?,
            level: s.u32()?,
            ratio: s.u32()?,
            mmap_len: s.u32()?,
        }))
    }

    /// CPU_PMU_CAPS: the `cpu` PMU's capabilities.
    pub fn cpu_pmu_caps(&self) -> Result<Option<PmuCaps>, PerfDataError> {
        let Some(mut s) = self.section(feature::CPU_PMU_CAPS, "CPU_PMU_CAPS feature") else {
            return Ok(None);
        };
        Ok(Some(PmuCaps {
            pmu: "cpu".into(),
            caps: pmu_caps(&mut s)?,
        }))
    }

    /// PMU_CAPS: the capabilities of the PMUs that have some.
    pub fn pmu_caps(&self) -> Result<Option<Vec<PmuCaps>>, PerfDataError> {
        let Some(mut s) = self.section(feature::PMU_CAPS, "PMU_CAPS feature") else {
            return Ok(None);
        };
        let n = s.count(8)?;
        let mut v = Vec::new();
        for _ in 0..n {
            let caps = pmu_caps(&mut s)?;
            v.push(PmuCaps {
                pmu: s.string()?,
                caps,
            });
        }
        Ok(Some(v))
    }

    /// HYBRID_TOPOLOGY: `(PMU name, CPU list)` of each kind of core.
    pub fn hybrid_topology(&self) -> Result<Option<Vec<(String, String)>>, PerfDataError> {
        let Some(mut s) = self.section(feature::HYBRID_TOPOLOGY, "HYBRID_TOPOLOGY feature") else {
            return Ok(None);
        };
        let n = s.count(8)?;
        let mut v = Vec::new();
        for _ in 0..n {
            let pmu = s.string()?;
            v.push((pmu, s.string()?));
        }
        Ok(Some(v))
    }

    /// BPF_BTF: the ids of the BTF objects stored.
    pub fn bpf_btf_ids(&self) -> Result<Option<Vec<u32>>, PerfDataError> {
        let Some(mut s) = self.section(feature::BPF_BTF, "BPF_BTF feature") else {
            return Ok(None);
        };
        let n = s.count(8)?;
        let mut v = Vec::new();
        for _ in 0..n {
            v.push(s.u32()?);
            let size = s.u32()?;
            s.c.take(u64::from(size)).map_err(|e| s.err(e))?;
        }
        Ok(Some(v))
    }

    /// BPF_PROG_INFO: the BPF programs whose info the file stores. Each is perf's
    /// `struct perf_bpil`: the sizes of the `struct bpf_prog_info` and of the data after
    /// it, a mask of the arrays kept, the info (whose array pointers are offsets into the
    /// data), then the data.
    pub fn bpf_progs(&self) -> Result<Option<Vec<BpfProg>>, PerfDataError> {
        const WHAT: &str = "BPF_PROG_INFO feature";
        let Some(mut s) = self.section(feature::BPF_PROG_INFO, WHAT) else {
            return Ok(None);
        };
        let n = s.count(16)?;
        let mut progs = Vec::new();
        for _ in 0..n {
            let at = s.c.offset();
            let info_len = s.u32()?;
            let data_len = s.u32()?;
            let _arrays = s.u64()?;
            let info = s.c.take(u64::from(info_len)).map_err(|e| s.err(e))?;
            let data = s.c.take(u64::from(data_len)).map_err(|e| s.err(e))?;
            let prog = BpfProg::from_bpil(info, data, s.c.endian)
                .map_err(|msg| self.corrupt(WHAT, at, msg))?;
            progs.push(prog);
        }
        Ok(Some(progs))
    }

    /// BPF_BTF: the BTF object of id `id`, if the file stores it.
    pub fn bpf_btf(&self, id: u32) -> Result<Option<&[u8]>, PerfDataError> {
        let Some(mut s) = self.section(feature::BPF_BTF, "BPF_BTF feature") else {
            return Ok(None);
        };
        let n = s.count(8)?;
        for _ in 0..n {
            let this = s.u32()?;
            let size = s.u32()?;
            let data = s.c.take(u64::from(size)).map_err(|e| s.err(e))?;
            if this == id {
                return Ok(Some(data));
            }
        }
        Ok(None)
    }
}

/// The `name=value` pairs of one PMU's capabilities.
fn pmu_caps(s: &mut Section) -> Result<Vec<String>, PerfDataError> {
    let n = s.count(8)?;
    let mut v = Vec::new();
    for _ in 0..n {
        let name = s.string()?;
        let value = s.string()?;
        v.push(format!("{name}={value}"));
    }
    Ok(v)
}
