//! Reading perf.data files (`perf record`'s output, and `tracectl perf record`'s).
//!
//! The file is read into memory once; attrs, feature sections and records are then views
//! into those bytes, so iterating a million samples copies nothing. Every size read from
//! the file is checked against the bytes that are left before it is used, so a corrupt
//! file gives a [`PerfDataError`] naming the offset, never a panic or a huge allocation.

use crate::endian::Endianness;
use std::path::{Path, PathBuf};

use super::abi::{self, feature, misc, record, sample};
use super::error::{PerfDataError, PerfDataErrorKind};
use super::sample::{Sample, SampleLayout};

/// One event of the file (`struct perf_event_attr`, its sample ids and its name).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attr {
    /// `PERF_TYPE_*` ([`abi::attr_type`]).
    pub type_: u32,
    /// Event config; the tracefs id for tracepoints.
    pub config: u64,
    /// Sample period, or frequency when [`Attr::freq`].
    pub sample_period: u64,
    /// `PERF_SAMPLE_*` bits ([`abi::sample`]).
    pub sample_type: u64,
    /// `PERF_FORMAT_*` bits ([`abi::read_format`]).
    pub read_format: u64,
    /// The bitfield word (disabled, inherit, ..., sample_id_all): [`abi::attr_flag`].
    pub flags: u64,
    /// `branch_sample_type`.
    pub branch_sample_type: u64,
    /// Registers sampled in user mode (`PERF_REG_*` bits; perf's `--call-graph dwarf`).
    pub sample_regs_user: u64,
    /// Bytes of user stack each sample copies (`--call-graph dwarf,SIZE`).
    pub sample_stack_user: u32,
    /// Registers sampled at the interrupt.
    pub sample_regs_intr: u64,
    /// The attr's `size` as the file gives it (which fields it holds).
    pub size: u32,
    /// `wakeup_events` (or `wakeup_watermark`).
    pub wakeup_events: u32,
    /// `bp_type` of a breakpoint.
    pub bp_type: u32,
    /// `config1` (or `bp_addr`).
    pub config1: u64,
    /// `config2` (or `bp_len`).
    pub config2: u64,
    /// `clockid`, with [`abi::attr_flag::USE_CLOCKID`].
    pub clockid: i32,
    /// `aux_watermark`.
    pub aux_watermark: u32,
    /// `sample_max_stack`.
    pub sample_max_stack: u16,
    /// `aux_sample_size`.
    pub aux_sample_size: u32,
    /// `sig_data`.
    pub sig_data: u64,
    /// The sample ids of this event's counters.
    pub ids: Vec<u64>,
    /// The name perf gave the event (`cpu-clock:ppp`, `sched:sched_switch`), from the
    /// EVENT_DESC feature.
    pub name: Option<String>,
}

impl Attr {
    /// An attr as this machine lays `struct perf_event_attr` out (native byte order), as
    /// much of it as `bytes` holds; `None` when it is shorter than the first version.
    pub fn from_native_bytes(bytes: &[u8]) -> Option<Attr> {
        let mut c = Cur {
            data: bytes,
            pos: 0,
            base: 0,
            endian: Endianness::NATIVE,
        };
        parse_attr(&mut c, bytes.len() as u64).ok()
    }

    /// Whether samples carry a frequency rather than a fixed period.
    pub fn freq(&self) -> bool {
        self.flags & abi::attr_flag::FREQ != 0
    }
    /// Whether non-sample records end with the sample id fields.
    pub fn sample_id_all(&self) -> bool {
        self.flags & abi::attr_flag::SAMPLE_ID_ALL != 0
    }
}

/// Where a feature section is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeatureSection {
    /// `HEADER_*` id ([`abi::feature`]).
    pub id: u32,
    /// File offset.
    pub offset: u64,
    /// Size in bytes.
    pub size: u64,
}

/// An open perf.data file.
#[derive(Debug)]
pub struct PerfData {
    bytes: Bytes,
    path: PathBuf,
    pub(super) endian: Endianness,
    pub(super) attrs: Vec<Attr>,
    /// `(sample id, attr index)`, sorted by id.
    by_id: Vec<(u64, usize)>,
    /// The same as a table indexed by `id - dense_base` (attr index + 1, 0 for none) when
    /// the ids span a small range, as the kernel's consecutive ids do: one load per
    /// sample instead of a search. Empty otherwise.
    dense_ids: Vec<u32>,
    dense_base: u64,
    /// Where each attr's samples hold their fixed words, in attr order.
    pub(super) layouts: Vec<SampleLayout>,
    /// Where the records are read: the data section, or the decompressed records of a
    /// compressed one (after the file's bytes).
    data_offset: u64,
    data_size: u64,
    /// The data section as the file header gives it.
    file_data: (u64, u64),
    features: Vec<FeatureSection>,
    /// Where the parts of decompressed data came from (empty for a file without
    /// COMPRESSED records); see [`PerfData::stored_offset`].
    origins: Vec<super::compressed::Origin>,
    /// For a pipe-mode file (`perf record -o -`), the offsets of its HEADER_ATTR
    /// records, in order; empty for a file of perf's ordinary layout.
    pipe_attrs: Vec<u64>,
    /// Whether the file is a pipe-mode one.
    pipe: bool,
}

/// The file's bytes: mapped from disk, or handed over in memory.
#[derive(Debug)]
enum Bytes {
    Owned(Vec<u8>),
    Mapped(crate::perf::sys::MappedFile),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Owned(v) => v,
            Bytes::Mapped(m) => m.bytes(),
        }
    }
}

/// One record of the data section, undecoded.
#[derive(Debug, Clone, Copy)]
pub struct RawRecord<'a> {
    /// File offset of the record header.
    pub offset: u64,
    /// `PERF_RECORD_*` ([`abi::record`]).
    pub type_: u32,
    /// `misc` of the header (cpumode and flags, [`abi::misc`]).
    pub misc: u16,
    /// The bytes after the 8-byte header.
    pub body: &'a [u8],
}

/// The `(dev, ino)` pairs of a NAMESPACES record, read as they are asked for.
#[derive(Debug, Clone, Copy)]
pub struct NamespaceLinks<'a> {
    bytes: &'a [u8],
    endian: Endianness,
}

impl<'a> NamespaceLinks<'a> {
    /// The pairs, in the record's order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (u64, u64)> + 'a {
        let endian = self.endian;
        self.bytes
            .chunks_exact(16)
            .map(move |p| (endian.u64(&p[..8]), endian.u64(&p[8..])))
    }
}

/// The sample id fields at the end of a non-sample record (`sample_id_all`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SampleId {
    /// Process id.
    pub pid: i32,
    /// Thread id.
    pub tid: i32,
    /// Timestamp, if the record has one.
    pub time: Option<u64>,
    /// CPU.
    pub cpu: Option<u32>,
    /// The event's id (`ID` or `IDENTIFIER`), which names the event the record came
    /// with, if the record has one.
    pub id: Option<u64>,
}

/// A group of events (`perf record -e '{a,b}'`), from the GROUP_DESC feature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventGroup {
    /// The group's name, None for an anonymous group.
    pub name: Option<String>,
    /// The leader's index in the file's attrs.
    pub leader: usize,
    /// The number of events, the leader's included; they follow it in the attrs.
    pub members: usize,
}

/// What an MMAP2 record says of the mapped file besides its name (perf's `struct
/// dso_id`): its device, inode and inode generation. perf 6.1 tells apart the objects
/// of one path by it; all zero (an MMAP record, anonymous memory) says nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct DsoId {
    /// Major number of the file's device.
    pub maj: u32,
    /// Minor number of the file's device.
    pub min: u32,
    /// Inode number.
    pub ino: u64,
    /// Inode generation.
    pub ino_generation: u64,
}

impl DsoId {
    /// Whether the id says nothing (perf's `dso_id__empty`): all four are zero.
    pub fn is_empty(&self) -> bool {
        *self == DsoId::default()
    }
}

/// A decoded record other than a sample.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// `PERF_RECORD_SAMPLE`.
    Sample(Sample<'a>),
    /// `PERF_RECORD_MMAP` or `MMAP2`: a file mapped into `pid` (-1: the kernel).
    Mmap {
        /// Process id.
        pid: i32,
        /// Thread id.
        tid: i32,
        /// Start address.
        start: u64,
        /// Length.
        len: u64,
        /// File offset of `start`.
        pgoff: u64,
        /// The mapped file (`[kernel.kallsyms]_text`, `/usr/lib/...`).
        filename: &'a [u8],
        /// Whether the mapping is executable (MMAP2 `prot & PROT_EXEC`; always for MMAP).
        exec: bool,
        /// MMAP2's `prot` and `flags` (`PROT_*`, `MAP_*`); 0 for MMAP.
        prot: u32,
        /// See `prot`.
        flags: u32,
        /// An MMAP record of a data mapping (`PERF_RECORD_MISC_MMAP_DATA`).
        data: bool,
        /// Whether the record is an MMAP2 (`prot` and `flags` are then the record's).
        mmap2: bool,
        /// cpumode of the record.
        cpumode: u16,
        /// The file's device and inode (empty for MMAP). perf 6.1 reads the 24 bytes
        /// the same way when they hold a build id (`build_id` is then set).
        dso_id: DsoId,
        /// The file's build id, when the MMAP2 record carries one instead of the
        /// device and inode (`perf record --buildid-mmap`).
        build_id: Option<&'a [u8]>,
        /// Sample id trailer.
        id: SampleId,
    },
    /// `PERF_RECORD_COMM`.
    Comm {
        /// Process id.
        pid: i32,
        /// Thread id.
        tid: i32,
        /// The new comm.
        comm: &'a [u8],
        /// Whether it changed because of exec.
        exec: bool,
        /// Sample id trailer.
        id: SampleId,
    },
    /// `PERF_RECORD_FORK` (`exit = false`) or `PERF_RECORD_EXIT`.
    Task {
        /// Whether this is an exit.
        exit: bool,
        /// Process id.
        pid: i32,
        /// Parent process id.
        ppid: i32,
        /// Thread id.
        tid: i32,
        /// Parent thread id.
        ptid: i32,
        /// Time of the fork or exit.
        time: u64,
        /// A fork perf wrote for a task that ran before the recording
        /// (`PERF_RECORD_MISC_FORK_EXEC`), not one the kernel saw.
        synthesized: bool,
        /// Sample id trailer.
        id: SampleId,
    },
    /// `PERF_RECORD_LOST`: `lost` samples were dropped.
    Lost {
        /// Number of samples lost.
        lost: u64,
        /// Sample id trailer.
        id: SampleId,
    },
    /// `PERF_RECORD_LOST_SAMPLES`: the kernel dropped `lost` samples of the event the
    /// trailer's id names.
    LostSamples {
        /// Number of samples lost.
        lost: u64,
        /// Sample id trailer.
        id: SampleId,
    },
    /// `PERF_RECORD_FINISHED_ROUND`: every earlier record is older than every later one.
    FinishedRound,
    /// `PERF_RECORD_SWITCH` or `PERF_RECORD_SWITCH_CPU_WIDE` (`perf record
    /// --switch-events`): a context switch in or out.
    Switch {
        /// Whether the task was switched out (else in).
        out: bool,
        /// Whether it was switched out while runnable (preempted).
        preempt: bool,
        /// The CPU-wide record's other task (`next_prev_pid`, `next_prev_tid`): the
        /// next one after a switch out, the previous one before a switch in; the first
        /// eight bytes of the record for a per-task one, as perf reads them.
        next_prev: (i32, i32),
        /// Whether the record is the CPU-wide kind.
        cpu_wide: bool,
        /// Sample id trailer.
        id: SampleId,
    },
    /// `PERF_RECORD_NAMESPACES`: the namespaces of a task, each as the device and
    /// inode of its `/proc/PID/ns/` link.
    Namespaces {
        /// Process id.
        pid: i32,
        /// Thread id.
        tid: i32,
        /// The `nr_namespaces` field as perf prints it (a u32 of the u64).
        nr: u32,
        /// `(dev, ino)` of each namespace, in the kernel's order (net, uts, ipc, pid,
        /// user, mnt, cgroup).
        links: NamespaceLinks<'a>,
        /// Sample id trailer.
        id: SampleId,
    },
    /// `PERF_RECORD_CGROUP`: a cgroup's id and path.
    Cgroup {
        /// The cgroup id (its inode).
        cgroup: u64,
        /// Its path below the cgroup mount.
        path: &'a [u8],
        /// Sample id trailer.
        id: SampleId,
    },
    /// `PERF_RECORD_KSYMBOL`: a kernel symbol (a BPF program's function) registered or
    /// unregistered.
    Ksymbol {
        /// Its address.
        addr: u64,
        /// Its length.
        len: u32,
        /// `PERF_RECORD_KSYMBOL_TYPE_*` (1: BPF).
        ksym_type: u16,
        /// `PERF_RECORD_KSYMBOL_FLAGS_*` (1: unregistered).
        flags: u16,
        /// Its name.
        name: &'a [u8],
        /// Sample id trailer.
        id: SampleId,
    },
    /// `PERF_RECORD_BPF_EVENT`: a BPF program loaded or unloaded.
    BpfEvent {
        /// `PERF_BPF_EVENT_*` (1: loaded, 2: unloaded).
        type_: u16,
        /// Its flags.
        flags: u16,
        /// The program's id.
        prog_id: u32,
        /// Sample id trailer.
        id: SampleId,
    },
    /// Anything else.
    Other {
        /// `PERF_RECORD_*`.
        type_: u32,
        /// Sample id trailer (default when absent).
        id: SampleId,
    },
}

/// A bounds-checked, endian-aware cursor over a slice of the file.
#[derive(Debug, Clone, Copy)]
pub(super) struct Cur<'a> {
    pub(super) data: &'a [u8],
    pub(super) pos: usize,
    /// File offset of `data[0]`.
    pub(super) base: u64,
    pub(super) endian: Endianness,
}

/// Failure of a [`Cur`] read: the offset and sizes, completed with the path and part by
/// the caller.
pub(super) struct Short {
    offset: u64,
    needed: u64,
    available: u64,
}

impl<'a> Cur<'a> {
    #[inline]
    pub(super) fn take(&mut self, n: u64) -> Result<&'a [u8], Short> {
        let available = (self.data.len() - self.pos) as u64;
        if n > available {
            return Err(Short {
                offset: self.base + self.pos as u64,
                needed: n,
                available,
            });
        }
        let s = &self.data[self.pos..self.pos + n as usize];
        self.pos += n as usize;
        Ok(s)
    }
    #[inline]
    pub(super) fn u16(&mut self) -> Result<u16, Short> {
        Ok(self.endian.u16(self.take(2)?))
    }

    pub(super) fn u32(&mut self) -> Result<u32, Short> {
        Ok(self.endian.u32(self.take(4)?))
    }
    #[inline]
    pub(super) fn u64(&mut self) -> Result<u64, Short> {
        Ok(self.endian.u64(self.take(8)?))
    }
    pub(super) fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }
}

/// The NUL-terminated prefix of a padded string.
pub(super) fn until_nul(b: &[u8]) -> &[u8] {
    match memchr::memchr(0, b) {
        Some(i) => &b[..i],
        None => b,
    }
}

impl PerfData {
    /// Read and check the header, attrs and feature table of a perf.data file.
    ///
    /// The file is mapped, not copied: it must not shrink while the value lives.
    pub fn open(path: impl AsRef<Path>) -> Result<PerfData, PerfDataError> {
        let path = path.as_ref();
        let io = |e| PerfDataError::new(path, "open", 0, PerfDataErrorKind::Io(e));
        let file = std::fs::File::open(path).map_err(io)?;
        match crate::perf::sys::MappedFile::map(&file).map_err(io)? {
            Some(m) => PerfData::parse(Bytes::Mapped(m), path),
            None => PerfData::parse(Bytes::Owned(Vec::new()), path),
        }
    }

    /// Parse a perf.data file held in memory; `path` is only used in errors.
    pub fn from_bytes(bytes: Vec<u8>, path: impl AsRef<Path>) -> Result<PerfData, PerfDataError> {
        PerfData::parse(Bytes::Owned(bytes), path.as_ref())
    }

    fn parse(bytes: Bytes, path: &Path) -> Result<PerfData, PerfDataError> {
        let path = path.to_path_buf();
        let len = bytes.len() as u64;
        let err = |what: &str, offset: u64, kind| PerfDataError::new(&path, what, offset, kind);
        let short = |what: &str, s: Short| {
            err(
                what,
                s.offset,
                PerfDataErrorKind::Truncated {
                    needed: s.needed,
                    available: s.available,
                },
            )
        };
        if bytes.len() < 8 {
            return Err(short(
                "file header",
                Short {
                    offset: 0,
                    needed: abi::FILE_HEADER_SIZE,
                    available: len,
                },
            ));
        }
        let endian = match &bytes[..8] {
            m if m == abi::MAGIC_LE => Endianness::Little,
            m if m == abi::MAGIC_BE => Endianness::Big,
            m if m.starts_with(b"PERFFILE") => {
                return Err(err(
                    "file header",
                    0,
                    PerfDataErrorKind::Unsupported(
                        "perf.data version 1 (PERFFILE); only version 2 (PERFILE2) is read".into(),
                    ),
                ))
            }
            _ => {
                return Err(err(
                    "file header",
                    0,
                    PerfDataErrorKind::Corrupt("no perf.data magic (PERFILE2)".into()),
                ))
            }
        };
        let mut c = Cur {
            data: &bytes,
            pos: 8,
            base: 0,
            endian,
        };
        let hdr = |c: &mut Cur| -> Result<[u64; 8], Short> {
            let mut v = [0u64; 8];
            for x in v.iter_mut() {
                *x = c.u64()?;
            }
            Ok(v)
        };
        let h = hdr(&mut c).map_err(|s| short("file header", s))?;
        let [header_size, attr_size, attrs_off, attrs_size, data_off, data_size, _, _] = h;
        if header_size != abi::FILE_HEADER_SIZE {
            if header_size == abi::PIPE_HEADER_SIZE {
                return PerfData::parse_pipe(bytes, path, endian);
            }
            return Err(err(
                "file header",
                8,
                PerfDataErrorKind::Corrupt(format!(
                    "header size {header_size}, expected {}",
                    abi::FILE_HEADER_SIZE
                )),
            ));
        }
        let bitmap = c
            .take(u64::from(feature::BITS / 8))
            .map_err(|s| short("file header", s))?;
        let check_section = |what: &str, at: u64, off: u64, size: u64| {
            if off > len || size > len - off {
                Err(err(
                    what,
                    at,
                    PerfDataErrorKind::Truncated {
                        needed: size,
                        available: len.saturating_sub(off),
                    },
                ))
            } else {
                Ok(())
            }
        };
        check_section("attrs section", 32, attrs_off, attrs_size)?;
        check_section("data section", 48, data_off, data_size)?;

        // attrs: each entry is a perf_event_attr then the file section of its ids.
        if !(16 + 64..=4096).contains(&attr_size) {
            return Err(err(
                "attrs section",
                16,
                PerfDataErrorKind::Corrupt(format!(
                    "attr entry size {attr_size}, expected between 80 and 4096"
                )),
            ));
        }
        if attrs_size % attr_size != 0 {
            return Err(err(
                "attrs section",
                attrs_off,
                PerfDataErrorKind::Corrupt(format!(
                    "section size {attrs_size} is not a multiple of the entry size {attr_size}"
                )),
            ));
        }
        let mut attrs = Vec::new();
        let section = &bytes[attrs_off as usize..(attrs_off + attrs_size) as usize];
        for (i, entry) in section.chunks_exact(attr_size as usize).enumerate() {
            let at = attrs_off + i as u64 * attr_size;
            let mut ac = Cur {
                data: entry,
                pos: 0,
                base: at,
                endian,
            };
            let mut attr =
                parse_attr(&mut ac, attr_size - 16).map_err(|s| short(&format!("attr {i}"), s))?;
            ac.pos = (attr_size - 16) as usize;
            let ids_off = ac.u64().map_err(|s| short(&format!("attr {i}"), s))?;
            let ids_size = ac.u64().map_err(|s| short(&format!("attr {i}"), s))?;
            check_section(&format!("ids of attr {i}"), at, ids_off, ids_size)?;
            let mut ic = Cur {
                data: &bytes[ids_off as usize..(ids_off + ids_size) as usize],
                pos: 0,
                base: ids_off,
                endian,
            };
            while let Ok(id) = ic.u64() {
                attr.ids.push(id);
            }
            attrs.push(attr);
        }
        if attrs.is_empty() {
            return Err(err(
                "attrs section",
                attrs_off,
                PerfDataErrorKind::Corrupt("no events (the attrs section is empty)".into()),
            ));
        }

        // The feature table follows the data: one (offset, size) per bit set.
        let mut features = Vec::new();
        let table = data_off + data_size;
        let mut fc = Cur {
            data: &bytes[table as usize..],
            pos: 0,
            base: table,
            endian,
        };
        for bit in 0..feature::BITS {
            let byte_bits = if endian == Endianness::Big {
                // Stored as big-endian u64 words.
                let word = (bit / 64) as usize;
                let w = &bitmap[word * 8..word * 8 + 8];
                let v = u64::from_be_bytes(w.try_into().unwrap_or([0; 8]));
                v >> (bit % 64) & 1
            } else {
                u64::from(bitmap[(bit / 8) as usize] >> (bit % 8) & 1)
            };
            if byte_bits == 0 {
                continue;
            }
            let at = fc.offset();
            let off = fc.u64().map_err(|s| short("feature table", s))?;
            let size = fc.u64().map_err(|s| short("feature table", s))?;
            check_section(&format!("feature {bit}"), at, off, size)?;
            features.push(FeatureSection {
                id: bit,
                offset: off,
                size,
            });
        }

        let f = PerfData {
            bytes,
            path,
            endian,
            attrs,
            by_id: Vec::new(),
            dense_ids: Vec::new(),
            dense_base: 0,
            layouts: Vec::new(),
            data_offset: data_off,
            data_size,
            file_data: (data_off, data_size),
            features,
            origins: Vec::new(),
            pipe_attrs: Vec::new(),
            pipe: false,
        };
        f.finish()
    }

    /// A file `perf record -o -` wrote: a 16-byte header, then records only, the
    /// events' attrs (HEADER_ATTR records, each an attr and its ids), the header's
    /// features (HEADER_FEATURE records, each a feature id and the section's bytes) and
    /// the tracing data (a HEADER_TRACING_DATA record, followed by the data it sizes)
    /// among them. The data section is all of the records; the attrs and features are
    /// taken from them here.
    fn parse_pipe(
        bytes: Bytes,
        path: PathBuf,
        endian: Endianness,
    ) -> Result<PerfData, PerfDataError> {
        let len = bytes.len() as u64;
        let start = abi::PIPE_HEADER_SIZE;
        let mut f = PerfData {
            bytes,
            path,
            endian,
            attrs: Vec::new(),
            by_id: Vec::new(),
            dense_ids: Vec::new(),
            dense_base: 0,
            layouts: Vec::new(),
            data_offset: start,
            data_size: len - start,
            file_data: (start, len - start),
            features: Vec::new(),
            origins: Vec::new(),
            pipe_attrs: Vec::new(),
            pipe: true,
        };
        let mut attrs = Vec::new();
        let mut features = Vec::new();
        let mut attr_offsets = Vec::new();
        for r in f.records() {
            let r = r?;
            let body_at = r.offset + abi::RECORD_HEADER_SIZE as u64;
            let mut c = f.cur(body_at, r.body.len() as u64);
            match r.type_ {
                record::HEADER_ATTR => {
                    let what = "HEADER_ATTR record";
                    let size = r.body.get(4..8).map_or(0, |b| endian.u32(b));
                    if !(64..=r.body.len() as u32).contains(&size) {
                        return Err(f.corrupt(
                            what,
                            body_at + 4,
                            format!(
                                "attr size {size}, expected between 64 and the record's {} bytes",
                                r.body.len()
                            ),
                        ));
                    }
                    let mut attr =
                        parse_attr(&mut c, u64::from(size)).map_err(|s| f.short(what, s))?;
                    c.pos = size as usize;
                    while let Ok(id) = c.u64() {
                        attr.ids.push(id);
                    }
                    attrs.push(attr);
                    attr_offsets.push(r.offset);
                }
                record::HEADER_FEATURE => {
                    let id = c.u64().map_err(|s| f.short("HEADER_FEATURE record", s))?;
                    if id < u64::from(feature::BITS) {
                        features.push(FeatureSection {
                            id: id as u32,
                            offset: body_at + 8,
                            size: r.body.len() as u64 - 8,
                        });
                    }
                }
                record::TRACING_DATA => {
                    // The records iterator skipped the data, having checked its size.
                    let size = r.body.get(..4).map_or(0, |b| endian.u32(b));
                    features.push(FeatureSection {
                        id: feature::TRACING_DATA,
                        offset: r.offset + abi::RECORD_HEADER_SIZE as u64 + r.body.len() as u64,
                        size: u64::from(size),
                    });
                }
                _ => {}
            }
        }
        if attrs.is_empty() {
            return Err(f.corrupt(
                "pipe-mode records",
                start,
                "no events (no HEADER_ATTR record)".into(),
            ));
        }
        // A feature sent twice counts as its last.
        features.sort_by_key(|s: &FeatureSection| s.id);
        features.reverse();
        features.dedup_by_key(|s| s.id);
        features.reverse();
        f.attrs = attrs;
        f.features = features;
        f.pipe_attrs = attr_offsets;
        f.finish()
    }

    /// The reading common to both kinds of file, once the attrs and features are known:
    /// the events' names, the index of their ids, their samples' layouts, and the
    /// records of COMPRESSED ones.
    fn finish(self) -> Result<PerfData, PerfDataError> {
        let mut f = self;
        f.read_event_desc()?;
        for (i, a) in f.attrs.iter().enumerate() {
            for &id in &a.ids {
                f.by_id.push((id, i));
            }
        }
        f.by_id.sort_unstable();
        f.by_id.dedup_by_key(|(id, _)| *id);
        if let (Some(&(lo, _)), Some(&(hi, _))) = (f.by_id.first(), f.by_id.last()) {
            /// Widest id range kept as a table (256 KiB of it).
            const DENSE_SPAN: u64 = 1 << 16;
            if hi - lo < DENSE_SPAN {
                f.dense_base = lo;
                f.dense_ids = vec![0; (hi - lo + 1) as usize];
                for &(id, i) in &f.by_id {
                    f.dense_ids[(id - lo) as usize] = i as u32 + 1;
                }
            }
        }
        f.layouts = f
            .attrs
            .iter()
            .map(|a| SampleLayout::of(a.sample_type))
            .collect();
        if let Some((data, origins)) = super::compressed::inflate(&f)? {
            // The decompressed records follow the file's bytes: the feature sections
            // keep their offsets, and a record's offset past the file's end is one in
            // the decompressed data.
            let mut image = Vec::with_capacity(f.bytes.len() + data.len());
            image.extend_from_slice(&f.bytes);
            f.data_offset = image.len() as u64;
            f.data_size = data.len() as u64;
            f.origins = origins;
            image.extend_from_slice(&data);
            f.bytes = Bytes::Owned(image);
        }
        Ok(f)
    }

    /// The file offset perf gives a record at `offset` of [`PerfData::records`]: the
    /// same, but for a record out of a COMPRESSED one, which is at that one's offset.
    pub fn stored_offset(&self, offset: u64) -> u64 {
        if self.pipe {
            // perf counts a pipe's bytes from the end of its header.
            return offset - abi::PIPE_HEADER_SIZE;
        }
        if self.origins.is_empty() || offset < self.data_offset {
            return offset;
        }
        let at = offset - self.data_offset;
        let k = self.origins.partition_point(|o| o.0 <= at);
        match k.checked_sub(1).map(|k| self.origins[k]) {
            Some((start, file, false)) => file + (at - start),
            Some((_, file, true)) => file,
            None => offset,
        }
    }

    /// Whether the file is one `perf record -o -` wrote (pipe mode), whose attrs and
    /// features are records.
    pub fn is_pipe(&self) -> bool {
        self.pipe
    }

    /// How many of the events a pipe-mode file had announced before its record at
    /// `offset` (all of them for a file of perf's ordinary layout).
    pub fn attrs_before(&self, offset: u64) -> usize {
        if !self.pipe {
            self.attrs.len()
        } else {
            self.pipe_attrs.partition_point(|&o| o < offset)
        }
    }

    /// The whole record `r` (header and body) as it is in the file.
    pub(super) fn record_bytes(&self, r: &RawRecord) -> &[u8] {
        let at = r.offset as usize;
        &self.bytes[at..at + abi::RECORD_HEADER_SIZE + r.body.len()]
    }

    /// The bytes of the data section.
    pub(super) fn data_bytes(&self) -> &[u8] {
        &self.bytes[self.data_offset as usize..(self.data_offset + self.data_size) as usize]
    }

    /// Names (and, for files whose attrs section is empty of ids, ids) from EVENT_DESC.
    fn read_event_desc(&mut self) -> Result<(), PerfDataError> {
        let Some(s) = self.feature(feature::EVENT_DESC) else {
            return Ok(());
        };
        let what = "EVENT_DESC feature";
        let mut c = self.cur(s.offset, s.size);
        let short = |s: Short| self.short(what, s);
        let nr = c.u32().map_err(short)?;
        let attr_size = c.u32().map_err(short)? as u64;
        let mut names = Vec::new();
        for _ in 0..nr {
            c.take(attr_size).map_err(short)?;
            let nr_ids = c.u32().map_err(short)? as u64;
            let name = read_string(&mut c).map_err(short)?;
            let ids_bytes = nr_ids
                .checked_mul(8)
                .ok_or_else(|| self.corrupt(what, c.offset(), format!("{nr_ids} ids")))?;
            let raw = c.take(ids_bytes).map_err(short)?;
            let mut ids = Vec::new();
            let mut ic = Cur {
                data: raw,
                pos: 0,
                base: 0,
                endian: self.endian,
            };
            while let Ok(id) = ic.u64() {
                ids.push(id);
            }
            names.push((String::from_utf8_lossy(name).into_owned(), ids));
        }
        if names.len() == self.attrs.len() {
            for (a, (n, ids)) in self.attrs.iter_mut().zip(names) {
                a.name = Some(n);
                if a.ids.is_empty() {
                    a.ids = ids;
                }
            }
        }
        Ok(())
    }

    pub(super) fn cur(&self, offset: u64, size: u64) -> Cur<'_> {
        Cur {
            data: &self.bytes[offset as usize..(offset + size) as usize],
            pos: 0,
            base: offset,
            endian: self.endian,
        }
    }

    pub(super) fn short(&self, what: &str, s: Short) -> PerfDataError {
        PerfDataError::new(
            &self.path,
            what,
            s.offset,
            PerfDataErrorKind::Truncated {
                needed: s.needed,
                available: s.available,
            },
        )
    }

    pub(super) fn corrupt(&self, what: &str, offset: u64, msg: String) -> PerfDataError {
        PerfDataError::new(&self.path, what, offset, PerfDataErrorKind::Corrupt(msg))
    }

    /// The file name given to [`PerfData::open`].
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The byte order of the file (and of its samples).
    pub fn endian(&self) -> Endianness {
        self.endian
    }

    /// The events, in the file's order.
    pub fn attrs(&self) -> &[Attr] {
        &self.attrs
    }

    /// File offset of the data section.
    pub fn data_offset(&self) -> u64 {
        self.file_data.0
    }

    /// The feature sections present.
    pub fn features(&self) -> &[FeatureSection] {
        &self.features
    }

    /// The feature section `id` ([`abi::feature`]), if present.
    pub fn feature(&self, id: u32) -> Option<FeatureSection> {
        self.features.iter().copied().find(|f| f.id == id)
    }

    /// The bytes of feature section `id`.
    pub fn feature_bytes(&self, id: u32) -> Option<&[u8]> {
        let f = self.feature(id)?;
        Some(&self.bytes[f.offset as usize..(f.offset + f.size) as usize])
    }

    /// A string feature (HOSTNAME, OSRELEASE, VERSION, ARCH, CPUDESC, CPUID).
    pub fn feature_string(&self, id: u32) -> Result<Option<String>, PerfDataError> {
        let Some(f) = self.feature(id) else {
            return Ok(None);
        };
        let mut c = self.cur(f.offset, f.size);
        let s = read_string(&mut c).map_err(|s| self.short(&format!("feature {id}"), s))?;
        Ok(Some(String::from_utf8_lossy(s).into_owned()))
    }

    /// The TRACING_DATA feature: the block a trace.dat v6 starts with (tracepoint formats,
    /// kallsyms, printk formats, saved cmdlines), and its file offset.
    pub fn tracing_data(&self) -> Option<(&[u8], u64)> {
        let f = self.feature(feature::TRACING_DATA)?;
        Some((
            &self.bytes[f.offset as usize..(f.offset + f.size) as usize],
            f.offset,
        ))
    }

    /// The records of the data section, in file order.
    pub fn records(&self) -> Records<'_> {
        Records {
            file: self,
            pos: self.data_offset,
            end: self.data_offset + self.data_size,
        }
    }

    /// The records of the data section as the file stores them: those of a file
    /// `perf record -z` wrote include its COMPRESSED records, where
    /// [`PerfData::records`] has the records they hold instead.
    pub fn stored_records(&self) -> Records<'_> {
        Records {
            file: self,
            pos: self.file_data.0,
            end: self.file_data.0 + self.file_data.1,
        }
    }

    /// Number of bytes of the data section (of its compressed records when the file was
    /// recorded with `perf record -z`).
    pub fn data_size(&self) -> u64 {
        self.file_data.1
    }

    /// The attr a sample id belongs to (the first when the file has one event or the id
    /// is unknown).
    pub fn attr_of_id(&self, id: u64) -> Option<usize> {
        if self.attrs.len() == 1 {
            return Some(0);
        }
        self.find_id(id)
    }

    /// The event a side-band record came with, from its sample id trailer, as perf
    /// 6.1's `evlist__id2evsel` finds it: the first event when the file has one, when
    /// the records carry no id or the id is 0; none for an id no event has when the
    /// records carry ids (`sample_id_all`).
    pub fn attr_of_record(&self, sid: &SampleId) -> Option<usize> {
        let id_all = self.attrs.first()?.sample_id_all();
        let id = if id_all { sid.id } else { None };
        if self.attrs.len() == 1 || id == Some(0) {
            return Some(0);
        }
        match id.and_then(|i| self.attr_of_id(i)) {
            Some(a) => Some(a),
            None if id_all => None,
            None => Some(0),
        }
    }

    #[inline]
    pub(super) fn find_id(&self, id: u64) -> Option<usize> {
        if !self.dense_ids.is_empty() {
            let k = usize::try_from(id.wrapping_sub(self.dense_base)).ok()?;
            let i = self.dense_ids.get(k)?.checked_sub(1)?;
            return Some(i as usize);
        }
        self.by_id
            .binary_search_by_key(&id, |(i, _)| *i)
            .ok()
            .map(|k| self.by_id[k].1)
    }

    /// The timestamp of a record without decoding it: a sample's TIME, or the TIME of a
    /// non-sample record's sample id trailer. None when the record has none.
    pub fn time_of(&self, r: &RawRecord) -> Option<u64> {
        let a = self.attrs.first()?;
        if a.sample_type & sample::TIME == 0 {
            return None;
        }
        let at = if r.type_ == record::SAMPLE {
            usize::from(self.layouts[0].time)
        } else if r.type_ < 64 && a.sample_id_all() {
            let st = self.id_sample_type(r.body)?;
            let after = present(
                st,
                &[
                    sample::ID,
                    sample::STREAM_ID,
                    sample::CPU,
                    sample::IDENTIFIER,
                ],
            ) * 8
                + 8;
            r.body.len().checked_sub(after)?
        } else {
            return None;
        };
        let b = r.body.get(at..at + 8)?;
        Some(self.endian.u64(b))
    }

    /// Decode a record.
    pub fn decode<'a>(&'a self, r: &RawRecord<'a>) -> Result<Event<'a>, PerfDataError> {
        match r.type_ {
            record::SAMPLE => self.sample(r).map(Event::Sample),
            record::MMAP | record::MMAP2 => {
                let what = if r.type_ == record::MMAP {
                    "MMAP record"
                } else {
                    "MMAP2 record"
                };
                let mut c = self.body_cur(r);
                let sh = |s: Short| self.short(what, s);
                let pid = c.u32().map_err(sh)? as i32;
                let tid = c.u32().map_err(sh)? as i32;
                let start = c.u64().map_err(sh)?;
                let len = c.u64().map_err(sh)?;
                let pgoff = c.u64().map_err(sh)?;
                let mut exec = true;
                let (mut prot, mut flags) = (0, 0);
                let mut dso_id = DsoId::default();
                let mut build_id = None;
                if r.type_ == record::MMAP2 {
                    // maj, min, ino, ino_generation, or in the same 24 bytes a build id's
                    // size (one byte, three reserved) and up to 20 bytes of id.
                    let raw = c;
                    dso_id = DsoId {
                        maj: c.u32().map_err(sh)?,
                        min: c.u32().map_err(sh)?,
                        ino: c.u64().map_err(sh)?,
                        ino_generation: c.u64().map_err(sh)?,
                    };
                    if r.misc & misc::MMAP_BUILD_ID != 0 {
                        let bytes = &raw.data[raw.pos..raw.pos + 24];
                        build_id = Some(&bytes[4..4 + usize::from(bytes[0]).min(20)]);
                    }
                    prot = c.u32().map_err(sh)?;
                    flags = c.u32().map_err(sh)?;
                    exec = prot & 4 != 0;
                }
                let (rest, id) = self.split_trailer(r, c.pos)?;
                Ok(Event::Mmap {
                    pid,
                    tid,
                    start,
                    len,
                    pgoff,
                    filename: until_nul(rest),
                    exec,
                    prot,
                    flags,
                    data: r.type_ == record::MMAP && r.misc & misc::MMAP_DATA != 0,
                    mmap2: r.type_ == record::MMAP2,
                    cpumode: r.misc & misc::CPUMODE_MASK,
                    dso_id,
                    build_id,
                    id,
                })
            }
            record::COMM => {
                let mut c = self.body_cur(r);
                let sh = |s: Short| self.short("COMM record", s);
                let pid = c.u32().map_err(sh)? as i32;
                let tid = c.u32().map_err(sh)? as i32;
                let (rest, id) = self.split_trailer(r, c.pos)?;
                Ok(Event::Comm {
                    pid,
                    tid,
                    comm: until_nul(rest),
                    exec: r.misc & misc::COMM_EXEC != 0,
                    id,
                })
            }
            record::FORK | record::EXIT => {
                let mut c = self.body_cur(r);
                let sh = |s: Short| self.short("FORK/EXIT record", s);
                let pid = c.u32().map_err(sh)? as i32;
                let ppid = c.u32().map_err(sh)? as i32;
                let tid = c.u32().map_err(sh)? as i32;
                let ptid = c.u32().map_err(sh)? as i32;
                let time = c.u64().map_err(sh)?;
                let (_, id) = self.split_trailer(r, c.pos)?;
                Ok(Event::Task {
                    exit: r.type_ == record::EXIT,
                    pid,
                    ppid,
                    tid,
                    ptid,
                    time,
                    synthesized: r.type_ == record::FORK && r.misc & misc::FORK_EXEC != 0,
                    id,
                })
            }
            record::LOST => {
                let mut c = self.body_cur(r);
                let sh = |s: Short| self.short("LOST record", s);
                c.u64().map_err(sh)?;
                let lost = c.u64().map_err(sh)?;
                let (_, id) = self.split_trailer(r, c.pos)?;
                Ok(Event::Lost { lost, id })
            }
            record::LOST_SAMPLES => {
                let mut c = self.body_cur(r);
                let lost = c.u64().map_err(|s| self.short("LOST_SAMPLES record", s))?;
                let (_, id) = self.split_trailer(r, c.pos)?;
                Ok(Event::LostSamples { lost, id })
            }
            record::FINISHED_ROUND => Ok(Event::FinishedRound),
            record::KSYMBOL => {
                let mut c = self.body_cur(r);
                let sh = |s: Short| self.short("KSYMBOL record", s);
                let addr = c.u64().map_err(sh)?;
                let len = c.u32().map_err(sh)?;
                let ksym_type = c.u16().map_err(sh)?;
                let flags = c.u16().map_err(sh)?;
                let (rest, id) = self.split_trailer(r, c.pos)?;
                Ok(Event::Ksymbol {
                    addr,
                    len,
                    ksym_type,
                    flags,
                    name: until_nul(rest),
                    id,
                })
            }
            record::BPF_EVENT => {
                let mut c = self.body_cur(r);
                let sh = |s: Short| self.short("BPF_EVENT record", s);
                let type_ = c.u16().map_err(sh)?;
                let flags = c.u16().map_err(sh)?;
                let prog_id = c.u32().map_err(sh)?;
                c.take(8).map_err(sh)?;
                let (_, id) = self.split_trailer(r, c.pos)?;
                Ok(Event::BpfEvent {
                    type_,
                    flags,
                    prog_id,
                    id,
                })
            }
            record::SWITCH | record::SWITCH_CPU_WIDE => {
                let mut c = self.body_cur(r);
                let sh = |s: Short| self.short("SWITCH record", s);
                let cpu_wide = r.type_ == record::SWITCH_CPU_WIDE;
                // perf reads the two ids of either kind; a per-task record has the
                // sample id trailer there (or nothing: then 0).
                let mut peek = c;
                let next_prev = if r.body.len() >= 8 {
                    (
                        peek.u32().map_err(sh)? as i32,
                        peek.u32().map_err(sh)? as i32,
                    )
                } else {
                    (0, 0)
                };
                if cpu_wide {
                    c = peek;
                }
                let (_, id) = self.split_trailer(r, c.pos)?;
                Ok(Event::Switch {
                    out: r.misc & misc::SWITCH_OUT != 0,
                    preempt: r.misc & misc::SWITCH_OUT_PREEMPT != 0,
                    next_prev,
                    cpu_wide,
                    id,
                })
            }
            record::NAMESPACES => {
                let mut c = self.body_cur(r);
                let sh = |s: Short| self.short("NAMESPACES record", s);
                let pid = c.u32().map_err(sh)? as i32;
                let tid = c.u32().map_err(sh)? as i32;
                let nr = c.u64().map_err(sh)?;
                let (rest, id) = self.split_trailer(r, c.pos)?;
                // No more links than the record holds, whatever the count says.
                let held = rest.len() as u64 / 16;
                if nr > held {
                    return Err(self.short(
                        "NAMESPACES record",
                        Short {
                            offset: r.offset,
                            needed: 24 + nr.saturating_mul(16),
                            available: r.body.len() as u64,
                        },
                    ));
                }
                Ok(Event::Namespaces {
                    pid,
                    tid,
                    nr: nr as u32,
                    links: NamespaceLinks {
                        bytes: &rest[..nr as usize * 16],
                        endian: self.endian,
                    },
                    id,
                })
            }
            record::CGROUP => {
                let mut c = self.body_cur(r);
                let cgroup = c.u64().map_err(|s| self.short("CGROUP record", s))?;
                let (rest, id) = self.split_trailer(r, c.pos)?;
                Ok(Event::Cgroup {
                    cgroup,
                    path: until_nul(rest),
                    id,
                })
            }
            // Its records were decompressed into the data section when the file was
            // opened; one left here is no record of the data.
            record::COMPRESSED => Err(PerfDataError::new(
                &self.path,
                "COMPRESSED record",
                r.offset,
                PerfDataErrorKind::Corrupt("a compressed record inside compressed data".into()),
            )),
            t if t < 64 => {
                let (_, id) = self.split_trailer(r, 0)?;
                Ok(Event::Other { type_: t, id })
            }
            t => Ok(Event::Other {
                type_: t,
                id: SampleId::default(),
            }),
        }
    }

    pub(super) fn body_cur<'a>(&'a self, r: &RawRecord<'a>) -> Cur<'a> {
        Cur {
            data: r.body,
            pos: 0,
            base: r.offset + abi::RECORD_HEADER_SIZE as u64,
            endian: self.endian,
        }
    }

    /// The sample_type that places the id fields of non-sample records.
    fn id_sample_type(&self, body: &[u8]) -> Option<u64> {
        let a = self.attrs.first()?;
        if !a.sample_id_all() {
            return None;
        }
        // With IDENTIFIER, the trailer's last word names its event, whose sample type
        // (CPU or not, say) shapes the rest of the trailer.
        if self.attrs.len() > 1 && a.sample_type & sample::IDENTIFIER != 0 {
            let own = body
                .last_chunk::<8>()
                .and_then(|w| self.find_id(self.endian.u64(w)))
                .and_then(|i| self.attrs.get(i));
            if let Some(own) = own {
                return Some(own.sample_type);
            }
        }
        Some(a.sample_type)
    }

    /// Split a non-sample record's body at its sample id trailer.
    fn split_trailer<'a>(
        &self,
        r: &RawRecord<'a>,
        fixed: usize,
    ) -> Result<(&'a [u8], SampleId), PerfDataError> {
        let body = r.body;
        let Some(st) = self.id_sample_type(body) else {
            return Ok((&body[fixed.min(body.len())..], SampleId::default()));
        };
        let n = present(
            st,
            &[
                sample::TID,
                sample::TIME,
                sample::ID,
                sample::STREAM_ID,
                sample::CPU,
                sample::IDENTIFIER,
            ],
        );
        let tlen = n * 8;
        if body.len() < fixed + tlen {
            return Err(self.short(
                "sample id of a record",
                Short {
                    offset: r.offset,
                    needed: (fixed + tlen) as u64,
                    available: body.len() as u64,
                },
            ));
        }
        let split = body.len() - tlen;
        let mut c = Cur {
            data: &body[split..],
            pos: 0,
            base: r.offset + 8 + split as u64,
            endian: self.endian,
        };
        let mut id = SampleId::default();
        let sh = |s: Short| self.short("sample id of a record", s);
        if st & sample::TID != 0 {
            id.pid = c.u32().map_err(sh)? as i32;
            id.tid = c.u32().map_err(sh)? as i32;
        }
        if st & sample::TIME != 0 {
            id.time = Some(c.u64().map_err(sh)?);
        }
        if st & sample::ID != 0 {
            id.id = Some(c.u64().map_err(sh)?);
        }
        if st & sample::STREAM_ID != 0 {
            c.u64().map_err(sh)?;
        }
        if st & sample::CPU != 0 {
            id.cpu = Some(c.u32().map_err(sh)?);
            c.u32().map_err(sh)?;
        }
        if st & sample::IDENTIFIER != 0 {
            id.id = Some(c.u64().map_err(sh)?);
        }
        Ok((&body[fixed..split], id))
    }
}

/// `struct perf_event_attr`, as much of it as `size` holds.
pub(super) fn parse_attr(c: &mut Cur, size: u64) -> Result<Attr, Short> {
    let mut a = Attr {
        type_: c.u32()?,
        ..Attr::default()
    };
    a.size = c.u32()?;
    a.config = c.u64()?;
    a.sample_period = c.u64()?;
    a.sample_type = c.u64()?;
    a.read_format = c.u64()?;
    a.flags = c.u64()?;
    // The sizes of the attr's versions (PERF_ATTR_SIZE_VER1..4): each adds the
    // fields read under it.
    if size >= 72 {
        a.wakeup_events = c.u32()?;
        a.bp_type = c.u32()?;
        a.config1 = c.u64()?;
        a.config2 = c.u64()?;
    }
    if size >= 80 {
        a.branch_sample_type = c.u64()?;
    }
    if size >= 96 {
        a.sample_regs_user = c.u64()?;
        a.sample_stack_user = c.u32()?;
        a.clockid = c.u32()? as i32;
    }
    if size >= 104 {
        a.sample_regs_intr = c.u64()?;
    }
    if size >= 112 {
        a.aux_watermark = c.u32()?;
        a.sample_max_stack = c.endian.u16(c.take(2)?);
        c.take(2)?; // __reserved_2
    }
    if size >= 120 {
        a.aux_sample_size = c.u32()?;
        c.take(4)?; // __reserved_3
    }
    if size >= 128 {
        a.sig_data = c.u64()?;
    }
    Ok(a)
}

/// perf's header string: a u32 length, then the bytes padded with NULs.
pub(super) fn read_string<'a>(c: &mut Cur<'a>) -> Result<&'a [u8], Short> {
    let n = c.u32()?;
    Ok(until_nul(c.take(u64::from(n))?))
}

/// Iterator over the records of the data section.
#[derive(Debug)]
pub struct Records<'a> {
    file: &'a PerfData,
    pos: u64,
    end: u64,
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<RawRecord<'a>, PerfDataError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.end {
            return None;
        }
        let f = self.file;
        let at = self.pos;
        let left = self.end - at;
        if left < abi::RECORD_HEADER_SIZE as u64 {
            self.pos = self.end;
            return Some(Err(f.short(
                "record header",
                Short {
                    offset: at,
                    needed: abi::RECORD_HEADER_SIZE as u64,
                    available: left,
                },
            )));
        }
        let h = &f.bytes[at as usize..at as usize + 8];
        let (type_, misc, size) = (
            f.endian.u32(&h[..4]),
            f.endian.u16(&h[4..6]),
            f.endian.u16(&h[6..8]),
        );
        let size = u64::from(size);
        if size < abi::RECORD_HEADER_SIZE as u64 {
            self.pos = self.end;
            return Some(Err(f.corrupt(
                "record header",
                at,
                format!("record size {size} is smaller than its 8-byte header"),
            )));
        }
        if size > left {
            self.pos = self.end;
            return Some(Err(f.short(
                "record",
                Short {
                    offset: at,
                    needed: size,
                    available: left,
                },
            )));
        }
        self.pos += size;
        if type_ == record::TRACING_DATA && f.pipe {
            // In a pipe, the tracing data follows its record (which gives its size).
            let n = f
                .bytes
                .get(at as usize + 8..at as usize + 12)
                .map_or(0, |b| f.endian.u32(b));
            let n = u64::from(n);
            if n > self.end - self.pos {
                let available = self.end - self.pos;
                self.pos = self.end;
                return Some(Err(f.short(
                    "tracing data of HEADER_TRACING_DATA record",
                    Short {
                        offset: at + size,
                        needed: n,
                        available,
                    },
                )));
            }
            self.pos += n;
        }
        Some(Ok(RawRecord {
            offset: at,
            type_,
            misc,
            body: &f.bytes[at as usize + 8..(at + size) as usize],
        }))
    }
}

/// How many of `bits` are set in `sample_type`: the number of u64 words they take.
fn present(sample_type: u64, bits: &[u64]) -> usize {
    bits.iter().filter(|&&b| sample_type & b != 0).count()
}
