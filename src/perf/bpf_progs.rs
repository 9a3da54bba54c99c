//! The BPF programs loaded on the host, read as perf 6.1's `perf record` reads them
//! (util/bpf-event.c, util/bpf-utils.c): each program's `struct bpf_prog_info` with the
//! arrays perf keeps, laid out as its `struct perf_bpil` (the BPF_PROG_INFO feature), the
//! BTF objects of the programs that have one (BPF_BTF), and the names of the programs'
//! functions that the PERF_RECORD_KSYMBOL records carry.

use std::collections::BTreeMap;
use std::io;

use super::data::BpfProg;
use super::sys::{
    bpf_btf_data, bpf_prog_fd, bpf_prog_info, bpf_prog_next_id, ProgInfo, PROG_INFO_ARRAYS,
};
use crate::endian::Endianness;

/// `sizeof(struct bpf_prog_info)` in perf 6.1's headers: the info length perf asks for.
pub const PROG_INFO_SIZE: usize = 232;

/// The arrays perf keeps (bits of `enum perf_bpil_array`): JITed instructions, JITed
/// symbols, JITed function lengths, func_info, line_info, JITed line info, tags.
pub const PERF_ARRAYS: u64 = 1 << 0 | 1 << 3 | 1 << 4 | 1 << 5 | 1 << 6 | 1 << 7 | 1 << 8;

/// One program as perf stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedProgram {
    /// Its `struct perf_bpil`: info length, data length, arrays, the info (array pointers
    /// as offsets into the data), then the data (each array padded to 8 bytes).
    pub bpil: Vec<u8>,
    /// What the header shows of it.
    pub prog: BpfProg,
    /// `bpf_prog_info.tag`.
    pub tag: [u8; 8],
    /// The info's `func_info_rec_size` and `nr_func_info`.
    func_info: (u32, u32),
}

impl LoadedProgram {
    fn from_info(p: &ProgInfo) -> io::Result<LoadedProgram> {
        let e = Endianness::NATIVE;
        let mut info = p.info.clone();
        let mut data = Vec::new();
        for (i, a) in PROG_INFO_ARRAYS.iter().enumerate() {
            if p.arrays & (1 << i) == 0 {
                continue;
            }
            let off = data.len() as u64;
            info[a.ptr_at..a.ptr_at + 8].copy_from_slice(&off.to_ne_bytes());
            data.extend_from_slice(&p.data[i]);
            data.resize(data.len().div_ceil(8) * 8, 0);
        }
        let mut bpil = Vec::with_capacity(16 + info.len() + data.len());
        bpil.extend_from_slice(&(info.len() as u32).to_ne_bytes());
        bpil.extend_from_slice(&(data.len() as u32).to_ne_bytes());
        bpil.extend_from_slice(&p.arrays.to_ne_bytes());
        bpil.extend_from_slice(&info);
        bpil.extend_from_slice(&data);
        let prog = BpfProg::from_bpil(&info, &data, e)
            .map_err(|m| io::Error::new(io::ErrorKind::InvalidData, m))?;
        let mut tag = [0u8; 8];
        tag.copy_from_slice(&info[8..16]);
        Ok(LoadedProgram {
            bpil,
            prog,
            tag,
            func_info: (e.u32(&info[132..136]), e.u32(&info[144..148])),
        })
    }
}

/// One function of a program as a PERF_RECORD_KSYMBOL names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BpfSymbol {
    /// JITed address.
    pub addr: u64,
    /// JITed length.
    pub len: u32,
    /// `bpf_prog_<tag>_<name>`.
    pub name: String,
}

/// The programs and BTF objects a recording stores, by id.
#[derive(Debug, Clone, Default)]
pub struct BpfPrograms {
    /// The programs (BPF_PROG_INFO), in id order.
    pub programs: BTreeMap<u32, LoadedProgram>,
    /// The BTF objects (BPF_BTF), in id order.
    pub btfs: BTreeMap<u32, Vec<u8>>,
}

/// Why the programs loaded at the start were not all read (perf's "Couldn't synthesize
/// bpf events."): the ones before it were.
#[derive(Debug)]
pub struct BpfReadStop {
    /// The program whose info could not be used.
    pub id: u32,
    /// What went wrong.
    pub reason: String,
}

fn read_info(id: u32) -> io::Result<Option<LoadedProgram>> {
    let Ok(fd) = bpf_prog_fd(id) else {
        return Ok(None);
    };
    let info = bpf_prog_info(&fd, PROG_INFO_SIZE, PERF_ARRAYS)?;
    LoadedProgram::from_info(&info).map(Some)
}

impl BpfPrograms {
    /// Every program loaded now, as perf's `perf_event__synthesize_bpf_events` walks them
    /// by id: one whose descriptor cannot be had (unloaded meanwhile) is skipped; one
    /// whose info cannot be read, whose counts of symbols, lengths and tags differ, or
    /// whose BTF cannot be read ends the walk, with the reason. Without the right to list
    /// programs (EPERM) or on a kernel without bpf(2) (EINVAL), there are none.
    pub fn loaded() -> (BpfPrograms, Option<BpfReadStop>) {
        let mut all = BpfPrograms::default();
        let mut id = 0;
        loop {
            id = match bpf_prog_next_id(id) {
                Ok(Some(next)) => next,
                Ok(None) => return (all, None),
                Err(e) if matches!(e.raw_os_error(), Some(libc::EPERM | libc::EINVAL)) => {
                    return (all, None)
                }
                Err(e) => {
                    let reason = format!("cannot get the next program: {e}");
                    return (all, Some(BpfReadStop { id, reason }));
                }
            };
            let stop = |reason: String| Some(BpfReadStop { id, reason });
            let p = match read_info(id) {
                Ok(Some(p)) => p,
                Ok(None) => continue,
                Err(e) => return (all, stop(format!("cannot read its info: {e}"))),
            };
            if !p.prog.consistent {
                let reason = "its counts of symbols, lengths and tags differ".to_string();
                return (all, stop(reason));
            }
            let (rec_size, nr_func_info) = p.func_info;
            if p.prog.btf_id != 0 && nr_func_info != 0 && rec_size != 0 {
                if nr_func_info as usize != p.prog.functions.len() {
                    let reason = "its count of BTF functions is not its count of functions";
                    return (all, stop(reason.to_string()));
                }
                match bpf_btf_data(p.prog.btf_id) {
                    Ok(b) => {
                        all.btfs.insert(p.prog.btf_id, b);
                    }
                    Err(e) => {
                        let reason = format!("cannot read its BTF {}: {e}", p.prog.btf_id);
                        return (all, stop(reason));
                    }
                }
            }
            all.programs.insert(id, p);
        }
    }

    /// Add program `id`, loaded while recording (perf's side-band `perf_env__add_bpf_info`):
    /// its info, and its BTF when it has one. A program already unloaded, or whose info
    /// cannot be read, is left out.
    pub fn add(&mut self, id: u32) {
        let Ok(Some(p)) = read_info(id) else {
            return;
        };
        let btf_id = p.prog.btf_id;
        self.programs.insert(id, p);
        if btf_id != 0 && !self.btfs.contains_key(&btf_id) {
            if let Ok(b) = bpf_btf_data(btf_id) {
                self.btfs.insert(btf_id, b);
            }
        }
    }

    /// The functions of program `id` as PERF_RECORD_KSYMBOL records name them (its BTF
    /// names them when it has one).
    pub fn symbols(&self, id: u32) -> Vec<BpfSymbol> {
        let Some(p) = self.programs.get(&id) else {
            return Vec::new();
        };
        let btf = self.btfs.get(&p.prog.btf_id).map(Vec::as_slice);
        p.prog
            .functions
            .iter()
            .enumerate()
            .map(|(i, f)| BpfSymbol {
                addr: f.addr,
                len: f.len,
                name: p.prog.function_name(i, btf).unwrap_or_default(),
            })
            .collect()
    }

    /// The BPF_PROG_INFO feature: the count, then each program's `struct perf_bpil`.
    pub fn prog_info_feature(&self) -> Vec<u8> {
        let mut b = (self.programs.len() as u32).to_ne_bytes().to_vec();
        for p in self.programs.values() {
            b.extend_from_slice(&p.bpil);
        }
        b
    }

    /// The BPF_BTF feature: the count, then each object's id, size and bytes.
    pub fn btf_feature(&self) -> Vec<u8> {
        let mut b = (self.btfs.len() as u32).to_ne_bytes().to_vec();
        for (id, data) in &self.btfs {
            b.extend_from_slice(&id.to_ne_bytes());
            b.extend_from_slice(&(data.len() as u32).to_ne_bytes());
            b.extend_from_slice(data);
        }
        b
    }
}

/// perf record's BPF side band (`evlist__add_bpf_sb_event`): a dummy event on every CPU
/// that the kernel tells of every program loaded, whoever loads it, so that a recording
/// of some tasks stores the info of programs loaded elsewhere too, as perf's does.
#[derive(Debug)]
pub struct BpfSideBand {
    rings: Vec<super::sys::Ring>,
    _counters: Vec<super::sys::Counter>,
}

impl BpfSideBand {
    /// Open it on `cpus` (started at once).
    pub fn open(cpus: &[u32]) -> io::Result<BpfSideBand> {
        let mut attr = super::sys::new_attr();
        attr.type_ = super::data::abi::attr_type::SOFTWARE;
        attr.config = super::spec::SW_DUMMY;
        attr.set_sample_id_all(1);
        attr.set_watermark(1);
        attr.__bindgen_anon_2.wakeup_watermark = 1;
        attr.set_bpf_event(1);
        let mut sb = BpfSideBand {
            rings: Vec::new(),
            _counters: Vec::new(),
        };
        for &cpu in cpus {
            let c = super::sys::Counter::open(&attr, -1, cpu as i32, None)?;
            sb.rings.push(c.map_ring(4)?);
            sb._counters.push(c);
        }
        Ok(sb)
    }

    /// Add the programs loaded since the last drain to `programs`.
    pub fn drain(&mut self, programs: &mut BpfPrograms) {
        for r in &mut self.rings {
            r.drain(|rec| {
                if let Some(id) = loaded_program(&rec) {
                    programs.add(id);
                }
            });
        }
    }
}

/// The program a PERF_RECORD_BPF_EVENT of type PROG_LOAD tells of.
pub fn loaded_program(r: &super::ring::RecordBytes<'_>) -> Option<u32> {
    if r.kind() != super::data::abi::record::BPF_EVENT {
        return None;
    }
    let b = r.u64_at(8)?.to_ne_bytes();
    (u16::from_ne_bytes([b[0], b[1]]) == super::synth::BPF_EVENT_PROG_LOAD)
        .then(|| u32::from_ne_bytes([b[4], b[5], b[6], b[7]]))
}
