//! Writing trace.dat v7 (default, zstd) and v6 files that trace-cmd reads.

use crate::endian::Endianness;
use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::compress::Compression;
use super::error::{DatError, DatErrorKind};
use super::options::opt;
use super::reader::{DatFile, MAGIC};

/// Pages per compressed chunk, as trace-cmd writes them.
const PAGES_IN_CHUNK: usize = 10;

/// The metadata texts stored at the front of a trace.dat.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Metadata {
    /// `events/header_page`.
    pub header_page: String,
    /// `events/header_event`.
    pub header_event: String,
    /// `events/ftrace/*/format` texts.
    pub ftrace_formats: Vec<String>,
    /// `(system, format text)` of the recorded events; a system's events are written
    /// together, systems in order of first appearance.
    pub event_formats: Vec<(String, String)>,
    /// `/proc/kallsyms`.
    pub kallsyms: String,
    /// `printk_formats`.
    pub printk_formats: String,
    /// `saved_cmdlines`.
    pub cmdlines: String,
}

impl Metadata {
    /// Every format with its system, ftrace ones first: what an event registry needs.
    pub fn all_formats(&self) -> impl Iterator<Item = (&str, &str)> {
        self.ftrace_formats
            .iter()
            .map(|t| ("ftrace", t.as_str()))
            .chain(
                self.event_formats
                    .iter()
                    .map(|(s, t)| (s.as_str(), t.as_str())),
            )
    }

    /// The metadata of an open file (for rewriting it); fails when its kallsyms section
    /// cannot be read.
    pub fn from_dat(d: &DatFile) -> Result<Metadata, DatError> {
        Ok(Metadata {
            header_page: d.header_page().to_string(),
            header_event: d.header_event().to_string(),
            ftrace_formats: d.ftrace_formats().to_vec(),
            event_formats: d.event_formats().to_vec(),
            kallsyms: d.kallsyms()?.to_string(),
            printk_formats: d.printk_formats().to_string(),
            cmdlines: d.cmdlines().to_string(),
        })
    }
}

/// How to write a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOptions {
    /// 6 or 7.
    pub version: u32,
    /// Compression of v7 sections and data (ignored for v6, which has none).
    pub compression: Compression,
    /// Byte order of the numbers written; must match the kernel that produced the pages.
    pub endian: Endianness,
    /// `sizeof(long)` of the recording program.
    pub long_size: u8,
    /// Page size of the traced host.
    pub page_size: u32,
}

impl Default for WriteOptions {
    /// v7 with zstd, in this machine's byte order, as trace-cmd 3.x writes by default.
    fn default() -> WriteOptions {
        WriteOptions {
            version: 7,
            compression: Compression::Zstd,
            endian: Endianness::NATIVE,
            long_size: std::mem::size_of::<usize>() as u8,
            page_size: 4096,
        }
    }
}

/// One buffer to write: its name, clock and the raw pages of each CPU.
pub struct BufferSource<'a> {
    /// Instance name, `""` for the top instance (which must come first).
    pub name: String,
    /// The selected trace clock (`local`, ...).
    pub clock: String,
    /// Bytes per sub-buffer page.
    pub page_size: usize,
    /// `(cpu, whole pages as read from trace_pipe_raw)`.
    pub cpus: Vec<(u32, Box<dyn Read + 'a>)>,
}

/// An option to store: id and payload (strings NUL-terminated, numbers in file byte order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewOption {
    /// Option id (see [`opt`]).
    pub id: u16,
    /// Payload.
    pub data: Vec<u8>,
}

impl NewOption {
    /// A text option (TRACECLOCK, UNAME, VERSION, CPUSTAT, DATE, ...), NUL-terminated.
    pub fn text(id: u16, text: &str) -> NewOption {
        let mut data = text.as_bytes().to_vec();
        data.push(0);
        NewOption { id, data }
    }

    /// The DATE option for `offset_us` microseconds (`record --date`).
    pub fn date(offset_us: i64) -> NewOption {
        let s = if offset_us < 0 {
            format!("-0x{:x}", offset_us.unsigned_abs())
        } else {
            format!("0x{offset_us:x}")
        };
        NewOption::text(opt::DATE, &s)
    }
}

/// What was written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteSummary {
    /// File size.
    pub bytes: u64,
    /// Pages of trace data written, over all buffers and CPUs.
    pub pages: u64,
}

struct Out {
    w: BufWriter<File>,
    path: PathBuf,
    pos: u64,
    endian: Endianness,
    section: String,
}

impl Out {
    fn err(&self, e: io::Error) -> DatError {
        DatError::new(
            &self.path,
            format!("writing {}", self.section),
            self.pos,
            DatErrorKind::Io(e),
        )
    }
    fn bytes(&mut self, b: &[u8]) -> Result<(), DatError> {
        self.w.write_all(b).map_err(|e| self.err(e))?;
        self.pos += b.len() as u64;
        Ok(())
    }
    fn u16(&mut self, v: u16) -> Result<(), DatError> {
        self.bytes(&self.endian.u16_bytes(v))
    }
    fn u32(&mut self, v: u32) -> Result<(), DatError> {
        self.bytes(&self.endian.u32_bytes(v))
    }
    fn u64(&mut self, v: u64) -> Result<(), DatError> {
        self.bytes(&self.endian.u64_bytes(v))
    }
    fn cstr(&mut self, s: &str) -> Result<(), DatError> {
        self.bytes(s.as_bytes())?;
        self.bytes(&[0])
    }
    fn align(&mut self, to: u64) -> Result<(), DatError> {
        let pad = (to - self.pos % to) % to;
        self.bytes(&vec![0u8; pad as usize])
    }
    /// Overwrite bytes already written (offsets, sizes known only later).
    fn patch(&mut self, at: u64, b: &[u8]) -> Result<(), DatError> {
        let r = (|| {
            self.w.flush()?;
            let f = self.w.get_mut();
            f.seek(SeekFrom::Start(at))?;
            f.write_all(b)?;
            f.seek(SeekFrom::Start(self.pos))?;
            Ok(())
        })();
        r.map_err(|e| self.err(e))
    }
    fn patch_u64(&mut self, at: u64, v: u64) -> Result<(), DatError> {
        self.patch(at, &self.endian.u64_bytes(v))
    }
    fn patch_u32(&mut self, at: u64, v: u32) -> Result<(), DatError> {
        self.patch(at, &self.endian.u32_bytes(v))
    }
}

/// Numbers for in-memory section bodies.
struct Body {
    v: Vec<u8>,
    endian: Endianness,
}

impl Body {
    fn u32(&mut self, x: u32) {
        self.v.extend_from_slice(&self.endian.u32_bytes(x));
    }
    fn u64(&mut self, x: u64) {
        self.v.extend_from_slice(&self.endian.u64_bytes(x));
    }
    fn cstr(&mut self, s: &str) {
        self.v.extend_from_slice(s.as_bytes());
        self.v.push(0);
    }
}

fn headers_body(m: &Metadata, endian: Endianness) -> Vec<u8> {
    let mut b = Body {
        v: Vec::new(),
        endian,
    };
    b.v.extend_from_slice(b"header_page\0");
    b.u64(m.header_page.len() as u64);
    b.v.extend_from_slice(m.header_page.as_bytes());
    b.v.extend_from_slice(b"header_event\0");
    b.u64(m.header_event.len() as u64);
    b.v.extend_from_slice(m.header_event.as_bytes());
    b.v
}

fn ftrace_body(m: &Metadata, endian: Endianness) -> Vec<u8> {
    let mut b = Body {
        v: Vec::new(),
        endian,
    };
    b.u32(m.ftrace_formats.len() as u32);
    for f in &m.ftrace_formats {
        b.u64(f.len() as u64);
        b.v.extend_from_slice(f.as_bytes());
    }
    b.v
}

fn events_body(m: &Metadata, endian: Endianness) -> Vec<u8> {
    let mut systems: Vec<(&str, Vec<&str>)> = Vec::new();
    for (s, t) in &m.event_formats {
        match systems.iter_mut().find(|(n, _)| n == s) {
            Some((_, v)) => v.push(t),
            None => systems.push((s, vec![t])),
        }
    }
    let mut b = Body {
        v: Vec::new(),
        endian,
    };
    b.u32(systems.len() as u32);
    for (s, evs) in systems {
        b.cstr(s);
        b.u32(evs.len() as u32);
        for t in evs {
            b.u64(t.len() as u64);
            b.v.extend_from_slice(t.as_bytes());
        }
    }
    b.v
}

fn sized_body(text: &str, endian: Endianness, wide: bool) -> Vec<u8> {
    let mut b = Body {
        v: Vec::new(),
        endian,
    };
    if wide {
        b.u64(text.len() as u64);
    } else {
        b.u32(text.len() as u32);
    }
    b.v.extend_from_slice(text.as_bytes());
    b.v
}

/// Read up to `buf.len()` bytes, fewer only at the end of the input.
fn read_full(r: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Write a trace.dat at `path`.
///
/// `options` are stored as given, except those the writer owns (DONE, BUFFER, CPUCOUNT
/// and the v7 section pointers), so the options of a [`DatFile`] can be passed back in.
/// A TRACECLOCK option is added from the first buffer's clock when none is given.
/// The first buffer must be the top instance (name `""`).
pub fn write_dat(
    path: &Path,
    wo: &WriteOptions,
    meta: &Metadata,
    options: &[NewOption],
    buffers: Vec<BufferSource<'_>>,
) -> Result<WriteSummary, DatError> {
    write_any(path, wo, meta, options, buffers, None, &[])
}

/// [`write_dat`] with metadata sections compressed ahead of time ([`Precompressed`]): each
/// one that matches the file's compression, byte order and text is stored as given, so the
/// file is byte for byte the one [`write_dat`] writes, without compressing it again.
pub fn write_dat_with(
    path: &Path,
    wo: &WriteOptions,
    meta: &Metadata,
    options: &[NewOption],
    buffers: Vec<BufferSource<'_>>,
    precompressed: &[Precompressed],
) -> Result<WriteSummary, DatError> {
    write_any(path, wo, meta, options, buffers, None, precompressed)
}

/// A version 7 metadata section compressed before the file is written (the kallsyms text,
/// compressed while a recording runs).
#[derive(Debug, Clone)]
pub struct Precompressed {
    id: u16,
    compression: Compression,
    endian: Endianness,
    /// The uncompressed section body, for the check that it is the file's.
    body_len: usize,
    /// A hash of the body: the section is only used for the same text.
    body_hash: u64,
    z: Vec<u8>,
}

impl Precompressed {
    /// The kallsyms section of `kallsyms` for a file written with `compression` in byte
    /// order `endian`.
    pub fn kallsyms(
        kallsyms: &str,
        compression: Compression,
        endian: Endianness,
    ) -> std::io::Result<Precompressed> {
        let body = sized_body(kallsyms, endian, false);
        Ok(Precompressed {
            id: opt::KALLSYMS,
            compression,
            endian,
            body_len: body.len(),
            body_hash: body_hash(&body),
            z: compression.compress(&body)?,
        })
    }

    /// The compressed body, if it is the one `body` would compress to in this file.
    fn for_section(
        &self,
        id: u16,
        c: Compression,
        endian: Endianness,
        body: &[u8],
    ) -> Option<&[u8]> {
        (self.id == id
            && self.compression == c
            && self.endian == endian
            && self.body_len == body.len()
            && self.body_hash == body_hash(body))
        .then_some(&self.z[..])
    }
}

/// FNV-1a over the body, eight bytes at a time (a check against a mixed-up section, run
/// on megabytes: it must cost far less than compressing them).
fn body_hash(b: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut words = b.chunks_exact(8);
    for w in &mut words {
        h = (h ^ u64::from_le_bytes(w.try_into().unwrap_or([0; 8]))).wrapping_mul(0x100_0000_01b3);
    }
    for &x in words.remainder() {
        h = (h ^ u64::from(x)).wrapping_mul(0x100_0000_01b3);
    }
    h
}

/// Write a latency trace.dat: the kernel's `trace` text (of a latency tracer such as
/// irqsoff) instead of binary pages, as `trace-cmd record` stores latency tracers.
/// v6 puts it after a `latency` marker, v7 in a BUFFER_TEXT section.
pub fn write_latency_dat(
    path: &Path,
    wo: &WriteOptions,
    meta: &Metadata,
    options: &[NewOption],
    clock: &str,
    text: &[u8],
) -> Result<WriteSummary, DatError> {
    write_any(
        path,
        wo,
        meta,
        options,
        Vec::new(),
        Some((clock, text)),
        &[],
    )
}

fn write_any(
    path: &Path,
    wo: &WriteOptions,
    meta: &Metadata,
    options: &[NewOption],
    mut buffers: Vec<BufferSource<'_>>,
    latency: Option<(&str, &[u8])>,
    precompressed: &[Precompressed],
) -> Result<WriteSummary, DatError> {
    let file =
        File::create(path).map_err(|e| DatError::new(path, "create", 0, DatErrorKind::Io(e)))?;
    let mut out = Out {
        w: BufWriter::with_capacity(1 << 16, file),
        path: path.to_path_buf(),
        pos: 0,
        endian: wo.endian,
        section: "initial header".into(),
    };
    if !(6..=7).contains(&wo.version) {
        return Err(DatError::new(
            path,
            "write options",
            0,
            DatErrorKind::Unsupported(format!("version {}; write 6 or 7", wo.version)),
        ));
    }
    if buffers.first().map(|b| !b.name.is_empty()).unwrap_or(false) {
        return Err(DatError::new(
            path,
            "write options",
            0,
            DatErrorKind::Unsupported(
                "the first buffer must be the top instance (name \"\")".into(),
            ),
        ));
    }
    let mut opts: Vec<NewOption> = options
        .iter()
        .filter(|o| {
            !matches!(
                o.id,
                opt::DONE | opt::BUFFER | opt::CPUCOUNT | opt::STRINGS..=opt::BUFFER_TEXT
            )
        })
        .cloned()
        .collect();
    let top_clock = buffers
        .first()
        .map(|b| b.clock.clone())
        .or_else(|| latency.map(|(c, _)| c.to_string()))
        .unwrap_or_else(|| "local".into());
    if !opts.iter().any(|o| o.id == opt::TRACECLOCK) {
        opts.insert(
            0,
            NewOption::text(opt::TRACECLOCK, &format!("[{top_clock}]")),
        );
    }
    let nr_cpus = buffers
        .iter()
        .flat_map(|b| b.cpus.iter().map(|(c, _)| c + 1))
        .max()
        .unwrap_or(0);

    out.bytes(&initial_header(wo, &wo.version.to_string()))?;
    let mut summary = WriteSummary::default();
    let job = Job {
        wo,
        meta,
        opts: &opts,
        nr_cpus,
        latency,
        precompressed,
    };
    if wo.version == 6 {
        write_v6(&mut out, &job, &mut buffers, &mut summary)?;
    } else {
        write_v7(&mut out, &job, &mut buffers, &mut summary)?;
    }
    out.section = "end of file".into();
    out.w.flush().map_err(|e| out.err(e))?;
    summary.bytes = out.pos;
    Ok(summary)
}

/// Copy one CPU's pages; returns bytes written (pages padded to whole pages).
fn copy_raw(
    out: &mut Out,
    src: &mut dyn Read,
    page: usize,
    summary: &mut WriteSummary,
) -> Result<u64, DatError> {
    let mut buf = vec![0u8; page * 16];
    let mut total = 0;
    loop {
        let n = read_full(src, &mut buf).map_err(|e| out.err(e))?;
        if n == 0 {
            break;
        }
        let whole = n.div_ceil(page) * page;
        buf[n..whole].fill(0);
        out.bytes(&buf[..whole])?;
        total += whole as u64;
        summary.pages += (whole / page) as u64;
        if n < buf.len() {
            break;
        }
    }
    Ok(total)
}

/// Write one CPU's pages as compressed chunks; returns bytes written including the
/// chunk count (the size trace-cmd >= 3.2 stores).
fn copy_chunked(
    out: &mut Out,
    src: &mut dyn Read,
    page: usize,
    c: Compression,
    summary: &mut WriteSummary,
) -> Result<u64, DatError> {
    let start = out.pos;
    out.u32(0)?;
    let mut buf = vec![0u8; page * PAGES_IN_CHUNK];
    let mut chunks = 0u32;
    loop {
        let n = read_full(src, &mut buf).map_err(|e| out.err(e))?;
        if n == 0 {
            break;
        }
        let whole = n.div_ceil(page) * page;
        buf[n..whole].fill(0);
        let z = c.compress(&buf[..whole]).map_err(|e| out.err(e))?;
        out.u32(z.len() as u32)?;
        out.u32(whole as u32)?;
        out.bytes(&z)?;
        chunks += 1;
        summary.pages += (whole / page) as u64;
        if n < buf.len() {
            break;
        }
    }
    out.patch_u32(start, chunks)?;
    Ok(out.pos - start)
}

/// The magic, version string, byte order, long size and page size every file starts with.
fn initial_header(wo: &WriteOptions, version: &str) -> Vec<u8> {
    let mut v = MAGIC.to_vec();
    v.extend_from_slice(version.as_bytes());
    v.push(0);
    v.extend_from_slice(&[wo.endian as u8, wo.long_size]);
    v.extend_from_slice(&wo.endian.u32_bytes(wo.page_size));
    v
}

/// The "tracing data" block a version 6 file starts with (magic, `version`, byte order,
/// sizes, then header_page/header_event, the ftrace and event formats, kallsyms, printk
/// formats and saved cmdlines), as perf.data's TRACING_DATA feature stores it with
/// version `"0.6"`.
pub fn tracing_data(meta: &Metadata, wo: &WriteOptions, version: &str) -> Vec<u8> {
    let mut v = initial_header(wo, version);
    for (_, _, body) in metadata_sections(meta, wo.endian) {
        v.extend_from_slice(&body);
    }
    v
}

/// The metadata every file carries, in file order: (option id in version 7, the section
/// description version 7 stores in its string table, body).
fn metadata_sections(m: &Metadata, endian: Endianness) -> [(u16, &'static str, Vec<u8>); 6] {
    [
        (opt::HEADER_INFO, "headers", headers_body(m, endian)),
        (opt::FTRACE_EVENTS, "ftrace events", ftrace_body(m, endian)),
        (opt::EVENT_FORMATS, "events format", events_body(m, endian)),
        (
            opt::KALLSYMS,
            "kallsyms",
            sized_body(&m.kallsyms, endian, false),
        ),
        (
            opt::PRINTK,
            "printk",
            sized_body(&m.printk_formats, endian, false),
        ),
        (
            opt::CMDLINES,
            "command lines",
            sized_body(&m.cmdlines, endian, true),
        ),
    ]
}

/// What both version writers need besides the output, the buffers and the summary.
struct Job<'a> {
    wo: &'a WriteOptions,
    meta: &'a Metadata,
    opts: &'a [NewOption],
    nr_cpus: u32,
    latency: Option<(&'a str, &'a [u8])>,
    precompressed: &'a [Precompressed],
}

fn write_v6(
    out: &mut Out,
    job: &Job<'_>,
    buffers: &mut [BufferSource<'_>],
    summary: &mut WriteSummary,
) -> Result<(), DatError> {
    let Job {
        wo,
        meta: m,
        opts,
        nr_cpus,
        latency,
        ..
    } = *job;
    let endian = wo.endian;
    // Version 6 stores the same metadata bodies back to back, without section headers.
    for (_, desc, body) in metadata_sections(m, endian) {
        out.section = desc.into();
        out.bytes(&body)?;
    }
    out.u32(nr_cpus)?;
    out.section = "options".into();
    out.bytes(b"options  \0")?;
    for o in opts {
        out.u16(o.id)?;
        out.u32(o.data.len() as u32)?;
        out.bytes(&o.data)?;
    }
    let mut patches = Vec::new();
    for b in buffers.iter().skip(1) {
        out.u16(opt::BUFFER)?;
        out.u32(8 + b.name.len() as u32 + 1)?;
        patches.push(out.pos);
        out.u64(0)?;
        out.cstr(&b.name)?;
    }
    out.u16(opt::DONE)?;
    if let Some((_, text)) = latency {
        out.section = "latency".into();
        out.bytes(b"latency  \0")?;
        out.bytes(text)?;
        return Ok(());
    }
    for (i, b) in buffers.iter_mut().enumerate() {
        out.section = format!("flyrecord \"{}\"", b.name);
        if i > 0 {
            out.align(wo.page_size as u64)?;
            let here = out.pos;
            out.patch_u64(patches[i - 1], here)?;
        }
        out.bytes(b"flyrecord\0")?;
        let table = out.pos;
        for _ in 0..nr_cpus {
            out.u64(0)?;
            out.u64(0)?;
        }
        let clock = format!("[{}]", b.clock);
        out.u64(clock.len() as u64)?;
        out.bytes(clock.as_bytes())?;
        let page = b.page_size.max(1);
        for (cpu, src) in b.cpus.iter_mut() {
            out.align(wo.page_size.max(1) as u64)?;
            let at = out.pos;
            out.section = format!("flyrecord \"{}\" cpu{cpu}", b.name);
            let size = copy_raw(out, src.as_mut(), page, summary)?;
            let mut ent = Vec::new();
            let w = |v: u64| endian.u64_bytes(v);
            ent.extend_from_slice(&w(at));
            ent.extend_from_slice(&w(size));
            out.patch(table + *cpu as u64 * 16, &ent)?;
        }
        // CPUs without data still need an offset inside the file.
        for cpu in 0..nr_cpus {
            if !b.cpus.iter().any(|(c, _)| *c == cpu) {
                let here = out.pos;
                out.patch_u64(table + cpu as u64 * 16, here)?;
            }
        }
    }
    Ok(())
}

fn write_v7(
    out: &mut Out,
    job: &Job<'_>,
    buffers: &mut [BufferSource<'_>],
    summary: &mut WriteSummary,
) -> Result<(), DatError> {
    let Job {
        wo,
        meta: m,
        opts,
        nr_cpus,
        latency,
        precompressed,
    } = *job;
    let endian = wo.endian;
    let c = wo.compression;
    out.cstr(c.name())?;
    out.cstr(&c.version())?;
    let first_opts_at = out.pos;
    out.u64(0)?;

    let mut strings: Vec<u8> = Vec::new();
    let mut string_id = |s: &str| -> u32 {
        let id = strings.len() as u32;
        strings.extend_from_slice(s.as_bytes());
        strings.push(0);
        id
    };

    // Metadata sections, compressed whole when the file is compressed.
    let sections = metadata_sections(m, endian);
    let mut pointers = Vec::new();
    for (id, desc, body) in sections {
        out.section = desc.to_string();
        let at = out.pos;
        let sid = string_id(desc);
        let stored = if c == Compression::None {
            body
        } else {
            let ready = precompressed
                .iter()
                .find_map(|p| p.for_section(id, c, endian, &body));
            let z = match ready {
                Some(z) => std::borrow::Cow::Borrowed(z),
                None => std::borrow::Cow::Owned(c.compress(&body).map_err(|e| out.err(e))?),
            };
            let mut b = Body {
                v: Vec::with_capacity(z.len() + 8),
                endian,
            };
            b.u32(z.len() as u32);
            b.u32(body.len() as u32);
            b.v.extend_from_slice(&z);
            b.v
        };
        out.u16(id)?;
        out.u16((c != Compression::None) as u16)?;
        out.u32(sid)?;
        out.u64(stored.len() as u64)?;
        out.bytes(&stored)?;
        pointers.push((id, at));
    }

    // First options section: pointers to the metadata and the given options.
    let mut body = Body {
        v: Vec::new(),
        endian,
    };
    let add = |b: &mut Body, id: u16, data: &[u8]| {
        b.v.extend_from_slice(&endian.u16_bytes(id));
        b.u32(data.len() as u32);
        b.v.extend_from_slice(data);
    };
    for (id, at) in &pointers {
        add(&mut body, *id, &endian.u64_bytes(*at));
    }
    for o in opts {
        add(&mut body, o.id, &o.data);
    }
    add(&mut body, opt::CPUCOUNT, &endian.u32_bytes(nr_cpus));
    out.section = "options".into();
    let opts1_at = out.pos;
    out.patch_u64(first_opts_at, opts1_at)?;
    let sid = string_id("options");
    out.u16(0)?;
    out.u16(0)?;
    out.u32(sid)?;
    out.u64(body.v.len() as u64 + 14)?;
    out.bytes(&body.v)?;
    out.u16(opt::DONE)?;
    out.u32(8)?;
    let next_ptr = out.pos;
    out.u64(0)?;

    // One BUFFER section per instance; page-aligned data per CPU.
    let mut buffer_opts = Vec::new();
    for b in buffers.iter_mut() {
        out.section = format!("buffer flyrecord \"{}\"", b.name);
        let sect_at = out.pos;
        let sid = string_id(&format!("buffer flyrecord {}", b.name));
        let compressed = c != Compression::None;
        out.u16(opt::BUFFER)?;
        out.u16(compressed as u16)?;
        out.u32(sid)?;
        let size_at = out.pos;
        out.u64(0)?;
        let body_start = out.pos;
        let page = b.page_size.max(1);
        let mut table = Vec::new();
        for (cpu, src) in b.cpus.iter_mut() {
            out.align(wo.page_size.max(1) as u64)?;
            out.section = format!("buffer flyrecord \"{}\" cpu{cpu}", b.name);
            let at = out.pos;
            let size = if compressed {
                copy_chunked(out, src.as_mut(), page, c, summary)?
            } else {
                copy_raw(out, src.as_mut(), page, summary)?
            };
            table.push((*cpu, at, size));
        }
        let len = out.pos - body_start;
        out.patch_u64(size_at, len)?;
        let mut o = Body {
            v: Vec::new(),
            endian,
        };
        o.u64(sect_at);
        o.cstr(&b.name);
        o.cstr(&b.clock);
        o.u32(b.page_size as u32);
        o.u32(table.len() as u32);
        for (cpu, at, size) in table {
            o.u32(cpu);
            o.u64(at);
            o.u64(size);
        }
        buffer_opts.push(o.v);
    }

    if let Some((clock, text)) = latency {
        out.section = "buffer latency".into();
        let sect_at = out.pos;
        let sid = string_id("buffer latency ");
        let compressed = c != Compression::None;
        out.u16(opt::BUFFER_TEXT)?;
        out.u16(compressed as u16)?;
        out.u32(sid)?;
        let size_at = out.pos;
        out.u64(0)?;
        let body_start = out.pos;
        if compressed {
            let chunk = wo.page_size.max(1) as usize * PAGES_IN_CHUNK;
            out.u32(text.len().div_ceil(chunk) as u32)?;
            for part in text.chunks(chunk) {
                let z = c.compress(part).map_err(|e| out.err(e))?;
                out.u32(z.len() as u32)?;
                out.u32(part.len() as u32)?;
                out.bytes(&z)?;
            }
        } else {
            out.bytes(text)?;
        }
        let len = out.pos - body_start;
        out.patch_u64(size_at, len)?;
        let mut o = Body {
            v: Vec::new(),
            endian,
        };
        o.u64(sect_at);
        o.cstr("");
        o.cstr(clock);
        buffer_opts.push(o.v);
    }

    // Last options section: the buffers, then DONE 0.
    out.section = "options".into();
    let opts2_at = out.pos;
    out.patch_u64(next_ptr, opts2_at)?;
    let mut body = Body {
        v: Vec::new(),
        endian,
    };
    for (i, b) in buffer_opts.iter().enumerate() {
        let id = if i == buffers.len() {
            opt::BUFFER_TEXT
        } else {
            opt::BUFFER
        };
        add(&mut body, id, b);
    }
    let sid = string_id("options");
    out.u16(0)?;
    out.u16(0)?;
    out.u32(sid)?;
    out.u64(body.v.len() as u64 + 14)?;
    out.bytes(&body.v)?;
    out.u16(opt::DONE)?;
    out.u32(8)?;
    out.u64(0)?;

    // Strings last: every description is known by now.
    out.section = "strings".into();
    let sid = string_id("strings");
    let stored = if c == Compression::None {
        strings.clone()
    } else {
        let z = c.compress(&strings).map_err(|e| out.err(e))?;
        let mut b = Body {
            v: Vec::new(),
            endian,
        };
        b.u32(z.len() as u32);
        b.u32(strings.len() as u32);
        b.v.extend_from_slice(&z);
        b.v
    };
    out.u16(opt::STRINGS)?;
    out.u16((c != Compression::None) as u16)?;
    out.u32(sid)?;
    out.u64(stored.len() as u64)?;
    out.bytes(&stored)?;
    Ok(())
}

impl From<&super::options::DatOption> for NewOption {
    fn from(o: &super::options::DatOption) -> NewOption {
        NewOption {
            id: o.id,
            data: o.data.clone(),
        }
    }
}

/// The buffers of an open file as sources for [`write_dat`] (for converting or copying).
pub fn buffers_of(d: &DatFile) -> Result<Vec<BufferSource<'static>>, DatError> {
    let mut v = Vec::new();
    for (i, b) in d.buffers().iter().enumerate() {
        if b.cpus().is_empty() && matches!(b.data, super::reader::BufferData::Latency { .. }) {
            return Err(DatError::new(
                d.path(),
                format!("buffer \"{}\"", b.name),
                0,
                DatErrorKind::Unsupported("latency (text) buffers cannot be rewritten".into()),
            ));
        }
        let mut cpus: Vec<(u32, Box<dyn Read>)> = Vec::new();
        for (j, c) in b.cpus().iter().enumerate() {
            cpus.push((
                c.cpu,
                Box::new(PagesReader {
                    pages: d.cpu_pages(i, j)?,
                    buf: Vec::new(),
                    pos: 0,
                }),
            ));
        }
        v.push(BufferSource {
            name: b.name.clone(),
            clock: b.clock.clone().unwrap_or_else(|| "local".into()),
            page_size: b.page_size,
            cpus,
        });
    }
    Ok(v)
}

/// [`super::CpuPages`] as a byte stream.
struct PagesReader {
    pages: super::CpuPages,
    buf: Vec<u8>,
    pos: usize,
}

impl Read for PagesReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.pos == self.buf.len() {
            match self
                .pages
                .next_page()
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?
            {
                Some(p) => {
                    self.buf.clear();
                    self.buf.extend_from_slice(p);
                    self.pos = 0;
                }
                None => return Ok(0),
            }
        }
        let n = out.len().min(self.buf.len() - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The section stored is the precompressed one (not compressed again) exactly when it
    /// matches the file: a marked copy shows which was written.
    #[test]
    fn a_matching_precompressed_section_is_stored_as_given() {
        let dir = tempfile::tempdir().unwrap();
        let meta = Metadata {
            kallsyms: "ffffffff81000000 T _stext\n".repeat(100),
            ..Metadata::default()
        };
        let wo = WriteOptions {
            page_size: 4096,
            ..WriteOptions::default()
        };
        let mut pre = Precompressed::kallsyms(&meta.kallsyms, wo.compression, wo.endian).unwrap();
        pre.z.extend_from_slice(b"MARK-precompressed");
        let path = dir.path().join("t.dat");
        let write = |pre: &[Precompressed]| {
            write_dat_with(&path, &wo, &meta, &[], Vec::new(), pre).unwrap();
            std::fs::read(&path).unwrap()
        };
        let marked = |b: &[u8]| b.windows(18).any(|w| w == b"MARK-precompressed");
        assert!(marked(&write(std::slice::from_ref(&pre))));
        pre.body_hash ^= 1;
        assert!(!marked(&write(&[pre])));
    }
}
