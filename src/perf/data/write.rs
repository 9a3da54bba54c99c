//! Writing perf.data: the file header, the attrs with their id arrays, the records as
//! they come from the rings, and the feature sections `perf report` and `perf script`
//! read (host facts, the command line, event descriptions, build ids, tracing data).
//!
//! Layout: header | attrs (attr + ids section each) | id arrays | data | feature section
//! table | feature bodies. Numbers are in the host's byte order, as perf writes them.

use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::abi::{feature, record, FILE_HEADER_SIZE, NAME_ALIGN};

/// One event of the file: its attr as the kernel took it, the ids the kernel gave its
/// file descriptors, and its name as perf prints it.
#[derive(Debug, Clone)]
pub struct AttrEntry {
    /// The `perf_event_attr` bytes (its `size` field says how many).
    pub attr: Vec<u8>,
    /// `PERF_EVENT_IOC_ID` of every descriptor of this event.
    pub ids: Vec<u64>,
    /// `cycles`, `sched:sched_switch`, ...
    pub name: String,
}

/// One BUILD_ID entry: a DSO the samples may hit, with its GNU build id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildIdEntry {
    /// `misc::KERNEL` or `misc::USER`.
    pub misc: u16,
    /// -1 for the host.
    pub pid: i32,
    /// The build id (at most 20 bytes are stored).
    pub id: Vec<u8>,
    /// `[kernel.kallsyms]`, or the file's path.
    pub filename: String,
}

/// The feature sections to write after the data.
#[derive(Debug, Clone, Default)]
pub struct Features {
    /// HOSTNAME
    pub hostname: String,
    /// OSRELEASE
    pub osrelease: String,
    /// VERSION (of the writing tool)
    pub version: String,
    /// ARCH
    pub arch: String,
    /// NRCPUS: (available, online)
    pub nr_cpus: (u32, u32),
    /// CPUDESC
    pub cpudesc: String,
    /// CPUID
    pub cpuid: String,
    /// TOTAL_MEM, in kB
    pub total_mem_kb: u64,
    /// CMDLINE
    pub cmdline: Vec<String>,
    /// BUILD_ID
    pub build_ids: Vec<BuildIdEntry>,
    /// No BUILD_ID section at all (`perf record -B`), rather than one with `build_ids`.
    pub no_build_id: bool,
    /// TRACING_DATA: the "tracing data" block, when tracepoints were recorded.
    pub tracing_data: Option<Vec<u8>>,
    /// SAMPLE_TIME: first and last sample time, when there were samples.
    pub sample_time: Option<(u64, u64)>,
    /// GROUP_DESC: (leader index, number of members) of each group of two or more.
    pub groups: Vec<(u32, u32)>,
    /// CPU_TOPOLOGY: the sibling lists (cores, then threads), as perf stores them.
    pub cpu_topology: Option<(Vec<String>, Vec<String>)>,
    /// CPU_TOPOLOGY, after the sibling lists: each CPU's core and socket id (-1 when
    /// unknown), one pair per CPU `nr_cpus` counts as available (perf's `--sort
    /// socket` reads them).
    pub cpu_ids: Vec<(i32, i32)>,
    /// CLOCKID and CLOCK_DATA: the samples' clock (`-k`), its resolution and a reading.
    pub clock: Option<crate::perf::clockid::ClockReference>,
    /// BPF_PROG_INFO and BPF_BTF, as their bodies
    /// ([`crate::perf::bpf_progs::BpfPrograms`]).
    pub bpf: Option<(Vec<u8>, Vec<u8>)>,
    /// COMPRESSED: how the data records were compressed (`perf record -z`).
    pub compressed: Option<super::Compressed>,
}

/// A perf.data file being written.
#[derive(Debug)]
pub struct PerfDataWriter {
    w: BufWriter<File>,
    path: PathBuf,
    pos: u64,
    data_start: u64,
    attrs: Vec<AttrEntry>,
    attr_size: u64,
}

fn padded_string(out: &mut Vec<u8>, s: &str) {
    let len = (s.len() + 1).div_ceil(NAME_ALIGN) * NAME_ALIGN;
    out.extend_from_slice(&(len as u32).to_ne_bytes());
    out.extend_from_slice(s.as_bytes());
    out.resize(out.len() + len - s.len(), 0);
}

impl PerfDataWriter {
    /// Create `path` and write everything that goes before the records.
    pub fn create(path: &Path, attrs: Vec<AttrEntry>) -> io::Result<PerfDataWriter> {
        let attr_size = attrs.first().map_or(0, |a| a.attr.len() as u64);
        if attrs.iter().any(|a| a.attr.len() as u64 != attr_size) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "perf.data attrs must all have the same size",
            ));
        }
        // As perf: the file is its owner's only (0600).
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(path)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        let mut w = PerfDataWriter {
            w: BufWriter::with_capacity(1 << 18, file),
            path: path.to_path_buf(),
            pos: 0,
            data_start: 0,
            attrs,
            attr_size,
        };
        // The header is rewritten at the end, when the sizes are known.
        w.put(&[0u8; FILE_HEADER_SIZE as usize])?;
        let entry = attr_size + 16;
        let attrs_len = entry * w.attrs.len() as u64;
        let mut ids_at = FILE_HEADER_SIZE + attrs_len;
        let mut buf = Vec::new();
        for a in &w.attrs {
            buf.extend_from_slice(&a.attr);
            buf.extend_from_slice(&ids_at.to_ne_bytes());
            buf.extend_from_slice(&(a.ids.len() as u64 * 8).to_ne_bytes());
            ids_at += a.ids.len() as u64 * 8;
        }
        for a in &w.attrs {
            for id in &a.ids {
                buf.extend_from_slice(&id.to_ne_bytes());
            }
        }
        w.put(&buf)?;
        w.data_start = w.pos;
        Ok(w)
    }

    fn put(&mut self, b: &[u8]) -> io::Result<()> {
        self.w.write_all(b).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("{}: write at offset {}: {e}", self.path.display(), self.pos),
            )
        })?;
        self.pos += b.len() as u64;
        Ok(())
    }

    /// Append one record given in parts (a ring record that wrapped comes in two).
    pub fn record(&mut self, parts: &[&[u8]]) -> io::Result<()> {
        for p in parts {
            self.put(p)?;
        }
        Ok(())
    }

    /// Append `PERF_RECORD_FINISHED_ROUND`: every record before it may be sorted and
    /// handed out before those after it.
    pub fn finished_round(&mut self) -> io::Result<()> {
        let mut h = [0u8; 8];
        h[..4].copy_from_slice(&record::FINISHED_ROUND.to_ne_bytes());
        h[6..].copy_from_slice(&8u16.to_ne_bytes());
        self.put(&h)
    }

    /// Bytes of records written so far.
    pub fn data_size(&self) -> u64 {
        self.pos - self.data_start
    }

    /// Write the features and the final header; returns the file size.
    pub fn finish(mut self, f: &Features) -> io::Result<u64> {
        let data_size = self.data_size();
        let mut bodies: Vec<(u32, Vec<u8>)> = Vec::new();
        if let Some(t) = &f.tracing_data {
            bodies.push((feature::TRACING_DATA, t.clone()));
        }
        let mut b = Vec::new();
        let build_ids: &[BuildIdEntry] = if f.no_build_id { &[] } else { &f.build_ids };
        for e in build_ids {
            let name_len = (e.filename.len() + 1).div_ceil(NAME_ALIGN) * NAME_ALIGN;
            let size = 8 + 4 + 24 + name_len;
            b.extend_from_slice(&0u32.to_ne_bytes());
            b.extend_from_slice(&(e.misc | super::abi::misc::BUILD_ID_SIZE).to_ne_bytes());
            b.extend_from_slice(&(size as u16).to_ne_bytes());
            b.extend_from_slice(&e.pid.to_ne_bytes());
            let n = e.id.len().min(20);
            let mut id = [0u8; 24];
            id[..n].copy_from_slice(&e.id[..n]);
            id[20] = n as u8;
            b.extend_from_slice(&id);
            b.extend_from_slice(e.filename.as_bytes());
            b.resize(b.len() + name_len - e.filename.len(), 0);
        }
        if !f.no_build_id {
            bodies.push((feature::BUILD_ID, b));
        }
        for (id, s) in [
            (feature::HOSTNAME, &f.hostname),
            (feature::OSRELEASE, &f.osrelease),
            (feature::VERSION, &f.version),
            (feature::ARCH, &f.arch),
        ] {
            let mut b = Vec::new();
            padded_string(&mut b, s);
            bodies.push((id, b));
        }
        let mut b = Vec::new();
        b.extend_from_slice(&f.nr_cpus.0.to_ne_bytes());
        b.extend_from_slice(&f.nr_cpus.1.to_ne_bytes());
        bodies.push((feature::NRCPUS, b));
        for (id, s) in [(feature::CPUDESC, &f.cpudesc), (feature::CPUID, &f.cpuid)] {
            let mut b = Vec::new();
            padded_string(&mut b, s);
            bodies.push((id, b));
        }
        bodies.push((feature::TOTAL_MEM, f.total_mem_kb.to_ne_bytes().to_vec()));
        let mut b = Vec::new();
        b.extend_from_slice(&(f.cmdline.len() as u32).to_ne_bytes());
        for a in &f.cmdline {
            padded_string(&mut b, a);
        }
        bodies.push((feature::CMDLINE, b));
        let mut b = Vec::new();
        b.extend_from_slice(&(self.attrs.len() as u32).to_ne_bytes());
        b.extend_from_slice(&(self.attr_size as u32).to_ne_bytes());
        for a in &self.attrs {
            b.extend_from_slice(&a.attr);
            b.extend_from_slice(&(a.ids.len() as u32).to_ne_bytes());
            padded_string(&mut b, &a.name);
            for id in &a.ids {
                b.extend_from_slice(&id.to_ne_bytes());
            }
        }
        bodies.push((feature::EVENT_DESC, b));
        if let Some((cores, threads)) = &f.cpu_topology {
            let mut b = Vec::new();
            for list in [cores, threads] {
                b.extend_from_slice(&(list.len() as u32).to_ne_bytes());
                for s in list {
                    padded_string(&mut b, s);
                }
            }
            if f.cpu_ids.len() == f.nr_cpus.0 as usize {
                for (core, socket) in &f.cpu_ids {
                    b.extend_from_slice(&core.to_ne_bytes());
                    b.extend_from_slice(&socket.to_ne_bytes());
                }
            }
            bodies.push((feature::CPU_TOPOLOGY, b));
        }
        if !f.groups.is_empty() {
            let mut b = Vec::new();
            b.extend_from_slice(&(f.groups.len() as u32).to_ne_bytes());
            for (leader, members) in &f.groups {
                padded_string(&mut b, "{anon_group}");
                b.extend_from_slice(&leader.to_ne_bytes());
                b.extend_from_slice(&members.to_ne_bytes());
            }
            bodies.push((feature::GROUP_DESC, b));
        }
        if let Some((first, last)) = f.sample_time {
            let mut b = first.to_ne_bytes().to_vec();
            b.extend_from_slice(&last.to_ne_bytes());
            bodies.push((feature::SAMPLE_TIME, b));
        }
        if let Some(c) = &f.clock {
            bodies.push((feature::CLOCKID, c.res_ns.to_ne_bytes().to_vec()));
        }
        if let Some((progs, btfs)) = &f.bpf {
            bodies.push((feature::BPF_PROG_INFO, progs.clone()));
            bodies.push((feature::BPF_BTF, btfs.clone()));
        }
        if let Some(c) = &f.compressed {
            let mut b = Vec::new();
            for v in [c.version, c.type_, c.level, c.ratio, c.mmap_len] {
                b.extend_from_slice(&v.to_ne_bytes());
            }
            bodies.push((feature::COMPRESSED, b));
        }
        if let Some(c) = &f.clock {
            let mut b = 1u32.to_ne_bytes().to_vec(); // version
            b.extend_from_slice(&(c.clockid as u32).to_ne_bytes());
            b.extend_from_slice(&c.tod_ns.to_ne_bytes());
            b.extend_from_slice(&c.clockid_ns.to_ne_bytes());
            bodies.push((feature::CLOCK_DATA, b));
        }

        // The section table, then the bodies in the same (feature id) order.
        let table_at = self.pos;
        let mut at = table_at + 16 * bodies.len() as u64;
        let mut table = Vec::new();
        let mut bitmap = [0u8; 32];
        for (id, body) in &bodies {
            table.extend_from_slice(&at.to_ne_bytes());
            table.extend_from_slice(&(body.len() as u64).to_ne_bytes());
            at += body.len() as u64;
            bitmap[*id as usize / 8] |= 1 << (id % 8);
        }
        self.put(&table)?;
        for (_, body) in &bodies {
            self.put(body)?;
        }
        let end = self.pos;
        self.write_header(data_size, &bitmap)?;
        Ok(end)
    }

    /// Write a header that makes the file as written so far a perf.data of its records
    /// and no features, which [`super::PerfData::open`] reads: a recording reads its
    /// records back before it writes its features, as perf does for its build ids.
    /// Records and [`PerfDataWriter::finish`] may follow.
    pub fn write_header_so_far(&mut self) -> io::Result<()> {
        self.write_header(self.data_size(), &[0u8; 32])?;
        let at = self.pos;
        self.w
            .get_mut()
            .seek(SeekFrom::Start(at))
            .map_err(|e| io::Error::new(e.kind(), format!("{}: seek: {e}", self.path.display())))?;
        Ok(())
    }

    /// Write the file header at the start of the file (flushing what is buffered
    /// first): `data_size` bytes of records and the features of `bitmap`.
    fn write_header(&mut self, data_size: u64, bitmap: &[u8; 32]) -> io::Result<()> {
        let mut h = Vec::with_capacity(FILE_HEADER_SIZE as usize);
        h.extend_from_slice(&u64::from_le_bytes(*super::abi::MAGIC).to_ne_bytes());
        h.extend_from_slice(&FILE_HEADER_SIZE.to_ne_bytes());
        h.extend_from_slice(&(self.attr_size + 16).to_ne_bytes());
        for (off, size) in [
            (
                FILE_HEADER_SIZE,
                (self.attr_size + 16) * self.attrs.len() as u64,
            ),
            (self.data_start, data_size),
            (0, 0),
        ] {
            h.extend_from_slice(&off.to_ne_bytes());
            h.extend_from_slice(&size.to_ne_bytes());
        }
        h.extend_from_slice(bitmap);
        let err = |e: io::Error, what: &str| {
            io::Error::new(e.kind(), format!("{}: {what}: {e}", self.path.display()))
        };
        self.w.flush().map_err(|e| err(e, "flush"))?;
        let file = self.w.get_mut();
        file.seek(SeekFrom::Start(0))
            .map_err(|e| err(e, "seek to the header"))?;
        file.write_all(&h).map_err(|e| err(e, "write the header"))?;
        file.flush().map_err(|e| err(e, "flush"))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_padded_to_64_with_their_length() {
        let mut b = Vec::new();
        padded_string(&mut b, "vm");
        assert_eq!(b.len(), 4 + 64);
        assert_eq!(&b[..4], &64u32.to_ne_bytes());
        assert_eq!(&b[4..7], b"vm\0");
        let mut b = Vec::new();
        padded_string(&mut b, &"x".repeat(64));
        assert_eq!(b.len(), 4 + 128);
    }

    #[test]
    fn header_attrs_ids_and_features_point_where_they_are() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("perf.data");
        let mut attr = vec![0u8; 128];
        attr[4..8].copy_from_slice(&128u32.to_ne_bytes());
        let mut w = PerfDataWriter::create(
            &p,
            vec![AttrEntry {
                attr: attr.clone(),
                ids: vec![7, 8],
                name: "cpu-clock".into(),
            }],
        )
        .unwrap();
        w.finished_round().unwrap();
        let f = Features {
            hostname: "h".into(),
            ..Features::default()
        };
        let size = w.finish(&f).unwrap();
        let d = std::fs::read(&p).unwrap();
        assert_eq!(d.len() as u64, size);
        let u64_at = |o: usize| u64::from_ne_bytes(d[o..o + 8].try_into().unwrap());
        assert_eq!(&d[..8], b"PERFILE2");
        assert_eq!(u64_at(8), 104);
        assert_eq!(u64_at(16), 144);
        assert_eq!((u64_at(24), u64_at(32)), (104, 144));
        let (ids_at, ids_len) = (u64_at(104 + 128), u64_at(104 + 136));
        assert_eq!(ids_len, 16);
        assert_eq!(u64_at(ids_at as usize), 7);
        assert_eq!(u64_at(ids_at as usize + 8), 8);
        let (data_at, data_len) = (u64_at(40), u64_at(48));
        assert_eq!(data_at, ids_at + 16);
        assert_eq!(data_len, 8);
        assert_eq!(
            u32::from_ne_bytes(d[data_at as usize..][..4].try_into().unwrap()),
            68
        );
        // The hostname section is the third set bit (BUILD_ID, HOSTNAME, ...).
        let table = (data_at + data_len) as usize;
        let bitmap = &d[72..104];
        assert_eq!(bitmap[0], 0b1111_1100);
        let host_at = u64_at(table + 16) as usize;
        assert_eq!(&d[host_at..host_at + 6], &[64, 0, 0, 0, b'h', 0]);
    }

    /// The file written so far reads as a perf.data of its records, without features;
    /// records and the features may follow, and the finished file holds them all.
    #[test]
    fn the_records_so_far_read_back_before_the_features() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("perf.data");
        let mut attr = vec![0u8; 128];
        attr[4..8].copy_from_slice(&128u32.to_ne_bytes());
        let entry = AttrEntry {
            attr,
            ids: vec![7],
            name: "cpu-clock".into(),
        };
        let mut w = PerfDataWriter::create(&p, vec![entry]).unwrap();
        w.finished_round().unwrap();
        w.write_header_so_far().unwrap();
        let so_far = super::super::PerfData::open(&p).unwrap();
        assert_eq!(so_far.records().count(), 1);
        assert!(so_far.features().is_empty());
        drop(so_far);
        w.finished_round().unwrap();
        let f = Features {
            hostname: "h".into(),
            ..Features::default()
        };
        w.finish(&f).unwrap();
        let done = super::super::PerfData::open(&p).unwrap();
        assert_eq!(done.records().count(), 2);
        assert_eq!(
            done.feature_string(feature::HOSTNAME).unwrap().as_deref(),
            Some("h")
        );
    }

    /// perf reads a CPU's socket from the ids after the sibling lists, one pair per
    /// CPU of NRCPUS; a file with the lists alone has no sockets.
    #[test]
    fn cpu_topology_ids_follow_the_sibling_lists() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, ids: Vec<(i32, i32)>| {
            let p = dir.path().join(name);
            let mut attr = vec![0u8; 128];
            attr[4..8].copy_from_slice(&128u32.to_ne_bytes());
            let w = PerfDataWriter::create(
                &p,
                vec![AttrEntry {
                    attr,
                    ids: vec![1],
                    name: "cpu-clock".into(),
                }],
            )
            .unwrap();
            let f = Features {
                nr_cpus: (3, 3),
                cpu_topology: Some((vec!["0-2".into()], vec!["0".into(), "1-2".into()])),
                cpu_ids: ids,
                ..Features::default()
            };
            w.finish(&f).unwrap();
            crate::perf::data::PerfData::open(&p)
                .unwrap()
                .cpu_sockets()
                .unwrap()
        };
        assert_eq!(
            write("ids.data", vec![(0, 0), (1, 1), (1, -1)]),
            Some(vec![0, 1, -1])
        );
        assert_eq!(write("lists.data", Vec::new()), None);
    }
}
