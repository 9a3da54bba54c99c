//! Reading trace.dat v6 and v7 files.

use crate::endian::Endianness;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use super::compress::Compression;
use super::error::{DatError, DatErrorKind, OPEN};
use super::input::{FileCur, FileSrc, Input, SliceCur};
use super::options::{opt, DatOption, Options};
use super::pages::CpuPages;
use super::tracing_data::{read_event_formats, read_ftrace_formats, read_headers, read_sections};
use super::writer::Metadata;
use crate::event::HeaderPage;
use crate::event::{KallsymsSource, KallsymsText};

/// The trace.dat magic: `0x17 0x08 0x44` then `"tracing"`.
pub const MAGIC: &[u8; 10] = b"\x17\x08\x44tracing";

/// The fixed header at the start of every trace.dat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileHeader {
    /// 6 or 7.
    pub version: u32,
    /// Byte order of every number after the header (and of the traced kernel's data).
    pub endian: Endianness,
    /// `sizeof(long)` of the recording program; the kernel's comes from `header_page`.
    pub file_long_size: u8,
    /// Page size of the traced host.
    pub page_size: u32,
    /// Compression of sections and data (v7; `None` for v6).
    pub compression: Compression,
    /// Codec version string as stored (v7).
    pub compression_version: String,
}

/// How a buffer's data is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BufferData {
    /// Binary ring-buffer pages per CPU (`flyrecord`).
    Flyrecord(Vec<CpuData>),
    /// The kernel's `trace` text (a `latency` file, `trace-cmd record` of a latency tracer).
    Latency {
        /// Offset of the text (v6) or of the section body (v7).
        offset: u64,
        /// Bytes of text (v6) or of the section body (v7).
        size: u64,
    },
}

/// Where one CPU's pages are in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuData {
    /// The CPU number.
    pub cpu: u32,
    /// File offset of the data.
    pub offset: u64,
    /// Stored size. For compressed v7 data written by trace-cmd <= 3.1 this is 4 bytes
    /// short, which is why page streaming walks the chunks instead of trusting it.
    pub size: u64,
}

/// One trace buffer: the top instance (name `""`) or a named instance (`record -B`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Buffer {
    /// Instance name; empty for the top instance.
    pub name: String,
    /// Trace clock the buffer was recorded with (`local`, `global`, `x86-tsc`, ...), if stored.
    pub clock: Option<String>,
    /// Bytes per sub-buffer page.
    pub page_size: usize,
    /// Whether the data is stored in compressed chunks.
    pub compressed: bool,
    /// The data.
    pub data: BufferData,
}

impl Buffer {
    /// The per-CPU data locations (empty for latency text).
    pub fn cpus(&self) -> &[CpuData] {
        match &self.data {
            BufferData::Flyrecord(c) => c,
            BufferData::Latency { .. } => &[],
        }
    }
}

/// An open trace.dat file: all metadata parsed, trace data left in the file.
///
/// ```no_run
/// let dat = tracectl::dat::DatFile::open("trace.dat")?;
/// for (i, buffer) in dat.buffers().iter().enumerate() {
///     for cpu in 0..buffer.cpus().len() {
///         let mut pages = dat.cpu_pages(i, cpu)?;
///         while let Some(page) = pages.next_page()? {
///             let _ = page.len(); // decode with tracectl::ring
///         }
///     }
/// }
/// # Ok::<(), tracectl::dat::DatError>(())
/// ```
#[derive(Debug)]
pub struct DatFile {
    src: Arc<FileSrc>,
    header: FileHeader,
    meta: Metadata,
    nr_cpus: u32,
    options: Options,
    options_sections: Vec<OptionsSection>,
    metadata_start: u64,
    v6_clock: Option<String>,
    buffers: Vec<Buffer>,
    warnings: Vec<String>,
    /// The kallsyms text. A v7 section is decompressed when first asked for (megabytes
    /// that a report of events printing no symbols never reads); v6 text is read at open.
    kallsyms: KallsymsSource,
    /// Offset of the v7 kallsyms section (0 without one), for its errors.
    kallsyms_at: u64,
    /// Why the v7 kallsyms section could not be read, once it was asked for.
    kallsyms_error: Arc<std::sync::OnceLock<DatError>>,
}

/// One options section of a v7 file, as the chain from the file header visits them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionsSection {
    /// File offset of the section header.
    pub offset: u64,
    /// Section flags (bit 0: compressed).
    pub flags: u16,
    /// Size of the section body as stored.
    pub size: u64,
    /// Where its options are in [`Options::all`].
    pub options: std::ops::Range<usize>,
    /// Its DONE option (whose payload is the next section's offset); `None` when the
    /// section ends without one.
    pub done: Option<DatOption>,
}

/// Section ids of v7 files (the option id space).
mod section {
    pub const OPTIONS: u16 = 0;
    pub const BUFFER: u16 = 3;
}

impl DatFile {
    /// The 16-byte header of the v7 section at `offset`: `(id, flags, stored size)`; the
    /// size is of the body as stored (compressed when flag bit 0 is set).
    pub fn section_header(&self, offset: u64) -> Result<(u16, u16, u64), DatError> {
        let h = self.src.read_at(offset, 16, "section header")?;
        let e = self.header.endian;
        Ok((e.u16(&h[0..2]), e.u16(&h[2..4]), e.u64(&h[8..16])))
    }

    /// Open and parse the metadata of a trace.dat.
    pub fn open(path: impl AsRef<Path>) -> Result<DatFile, DatError> {
        let path = path.as_ref();
        let open_err = |kind| DatError::new(path, OPEN, 0, kind);
        let file = File::open(path).map_err(|e| open_err(DatErrorKind::Io(e)))?;
        let meta = file.metadata().map_err(|e| open_err(DatErrorKind::Io(e)))?;
        // A device or FIFO has no length and would be read forever.
        if !meta.is_file() {
            return Err(open_err(DatErrorKind::NotRegularFile));
        }
        let len = meta.len();
        let mut src = FileSrc {
            file,
            path: path.to_path_buf(),
            len,
            endian: Endianness::Little,
        };

        // The fixed part is read before the byte order is known.
        let head = src.read_at(0, 10, "initial header")?;
        if head != MAGIC {
            return Err(src.err(
                "initial header",
                0,
                DatErrorKind::Corrupt("no trace.dat magic (\\x17\\x08\\x44tracing)".into()),
            ));
        }
        let mut cur = FileCur {
            src: &src,
            pos: 10,
            section: "initial header".into(),
        };
        let vs = cur.cstr()?;
        let version: u32 = vs
            .parse()
            .map_err(|_| cur.corrupt(format!("version {vs:?} is not a number")))?;
        if !(6..=7).contains(&version) {
            return Err(src.err(
                "initial header",
                10,
                DatErrorKind::Unsupported(format!(
                    "trace.dat version {version}; versions 6 and 7 are supported (convert with `trace-cmd convert --file-version 7`)"
                )),
            ));
        }
        let b = cur.take(6)?;
        let endian = match b[0] {
            0 => Endianness::Little,
            1 => Endianness::Big,
            x => return Err(cur.corrupt(format!("endianness byte {x}, expected 0 or 1"))),
        };
        let file_long_size = b[1];
        let page_size = endian.u32(&b[2..6]);
        if page_size == 0 || page_size > 1 << 24 {
            return Err(cur.corrupt(format!("page size {page_size}")));
        }
        let pos = cur.pos;
        src.endian = endian;
        let mut dat = DatFile {
            src: Arc::new(src),
            header: FileHeader {
                version,
                endian,
                file_long_size,
                page_size,
                compression: Compression::None,
                compression_version: String::new(),
            },
            meta: Metadata::default(),
            nr_cpus: 0,
            options: Options::default(),
            options_sections: Vec::new(),
            metadata_start: pos,
            v6_clock: None,
            buffers: Vec::new(),
            warnings: Vec::new(),
            kallsyms: KallsymsSource::default(),
            kallsyms_at: 0,
            kallsyms_error: Arc::default(),
        };
        if version == 6 {
            dat.read_v6(pos)?;
            dat.kallsyms = KallsymsSource::text_of(std::mem::take(&mut dat.meta.kallsyms));
        } else {
            let src = dat.src.clone();
            let mut cur = FileCur {
                src: &src,
                pos,
                section: "initial header".into(),
            };
            let name = cur.cstr()?;
            let cversion = cur.cstr()?;
            let compression = Compression::from_name(&name).ok_or_else(|| {
                src.err(
                    "initial header",
                    pos,
                    DatErrorKind::Unsupported(format!(
                        "compression {name:?}; zstd, zlib and none are supported (convert with `trace-cmd convert --compression none`)"
                    )),
                )
            })?;
            dat.header.compression = compression;
            dat.header.compression_version = cversion;
            let first = cur.u64()?;
            dat.metadata_start = cur.pos;
            dat.read_v7(first)?;
        }
        Ok(dat)
    }

    // ---- v6 -------------------------------------------------------------------------

    fn read_v6(&mut self, pos: u64) -> Result<(), DatError> {
        let src = self.src.clone();
        let mut cur = FileCur {
            src: &src,
            pos,
            section: "header_page".into(),
        };
        read_sections(&mut cur, &mut self.meta, true)?;
        cur.set_section("cpu count");
        self.nr_cpus = cur.u32()?;
        cur.set_section("options");
        cur.expect(b"options  \0")?;
        loop {
            let at = cur.pos;
            let id = cur.u16()?;
            if id == opt::DONE {
                break;
            }
            let size = cur.u32()?;
            let data = cur.take_len(size as u64)?;
            self.add_option(DatOption {
                id,
                data,
                offset: at,
            });
        }
        cur.set_section("data kind");
        let kind = cur.take(10)?;
        let top = match &kind[..] {
            b"latency  \0" => Buffer {
                name: String::new(),
                clock: None,
                page_size: self.header.page_size as usize,
                compressed: false,
                data: BufferData::Latency {
                    offset: cur.pos,
                    size: cur.remaining(),
                },
            },
            b"flyrecord\0" => {
                let has_clock = self.options.trace_clock.is_some();
                self.read_v6_flyrecord(&mut cur, String::new(), has_clock)?
            }
            other => {
                return Err(cur.corrupt(format!(
                    "expected \"flyrecord\" or \"latency\", found {:?}",
                    String::from_utf8_lossy(other)
                )))
            }
        };
        self.buffers.push(top);
        // Named instances: BUFFER options point at their own flyrecord blocks.
        let extra: Vec<DatOption> = self
            .options
            .all
            .iter()
            .filter(|o| o.id == opt::BUFFER)
            .cloned()
            .collect();
        for o in extra {
            let mut oc = SliceCur {
                data: &o.data,
                pos: 0,
                base: o.offset,
                path: &src.path,
                section: "BUFFER option".into(),
                endian: self.header.endian,
            };
            let offset = oc.u64()?;
            let name = oc.cstr()?;
            let mut bc = FileCur {
                src: &src,
                pos: offset,
                section: format!("flyrecord \"{name}\""),
            };
            // The writer points either at the "flyrecord" marker or just past it.
            if src.len.saturating_sub(offset) >= 10
                && src.read_at(offset, 10, "BUFFER")? == b"flyrecord\0"
            {
                bc.pos += 10;
            } else if src.len.saturating_sub(offset) >= 10
                && src.read_at(offset, 10, "BUFFER")? == b"latency  \0"
            {
                self.buffers.push(Buffer {
                    name,
                    clock: None,
                    page_size: self.header.page_size as usize,
                    compressed: false,
                    data: BufferData::Latency {
                        offset: offset + 10,
                        size: src.len - offset - 10,
                    },
                });
                continue;
            }
            let b = self.read_v6_flyrecord(&mut bc, name, true)?;
            self.buffers.push(b);
        }
        Ok(())
    }

    /// The CPU table after a v6 `flyrecord` marker, and the clock trailer after it.
    fn read_v6_flyrecord(
        &mut self,
        cur: &mut FileCur<'_>,
        name: String,
        clock_follows: bool,
    ) -> Result<Buffer, DatError> {
        let sect = if name.is_empty() {
            "flyrecord".to_string()
        } else {
            format!("flyrecord \"{name}\"")
        };
        cur.set_section(&sect);
        let mut cpus = Vec::new();
        if cur.pos >= self.src.len {
            // trace-cmd leaves files like this when its recorders wrote nothing before
            // being stopped; its report shows them as empty, and so do we, with a warning.
            self.warnings.push(format!(
                "{}: the file ends where the {sect} CPU table should start (offset {}): no trace data was recorded",
                self.src.path.display(),
                cur.pos
            ));
            return Ok(Buffer {
                name,
                clock: self.options.trace_clock.as_deref().and_then(selected_clock),
                page_size: self.header.page_size as usize,
                compressed: false,
                data: BufferData::Flyrecord(cpus),
            });
        }
        for cpu in 0..self.nr_cpus {
            let at = cur.pos;
            let offset = cur.u64()?;
            let size = cur.u64()?;
            // An empty CPU may point at the page-aligned place its data would start, past
            // the end of a file that holds no data after it (trace-cmd writes such files).
            if size > 0 && offset.saturating_add(size) > self.src.len {
                return Err(self.src.err(
                    &format!("flyrecord cpu{cpu} table"),
                    at,
                    DatErrorKind::Truncated {
                        needed: size,
                        available: self.src.len.saturating_sub(offset),
                    },
                ));
            }
            cpus.push(CpuData { cpu, offset, size });
        }
        let mut clock = None;
        if clock_follows {
            // Not in the v6 spec, but every writer stores `u64 len` + the trace_clock text.
            let at = cur.pos;
            match cur.u64().and_then(|n| if n <= 4096 { cur.text(n) } else { Err(cur.corrupt(format!("clock length {n}"))) }) {
                Ok(text) => {
                    clock = selected_clock(&text);
                    if name.is_empty() {
                        self.v6_clock = Some(text);
                    }
                }
                Err(_) => self.warnings.push(format!(
                    "{}: no trace clock after the CPU table at offset {at} (file has the trace_clock bug); assuming local",
                    self.src.path.display()
                )),
            }
        }
        if clock.is_none() && name.is_empty() {
            clock = self.options.trace_clock.as_deref().and_then(selected_clock);
        }
        Ok(Buffer {
            name,
            clock,
            page_size: self.header.page_size as usize,
            compressed: false,
            data: BufferData::Flyrecord(cpus),
        })
    }

    // ---- v7 -------------------------------------------------------------------------

    /// A section's 16-byte header and its body, decompressed when flagged.
    fn read_section(
        &self,
        offset: u64,
        want: Option<u16>,
        what: &str,
    ) -> Result<(u16, Vec<u8>, u64), DatError> {
        read_section(&self.src, self.header.compression, offset, want, what)
    }

    fn slice<'a>(&'a self, data: &'a [u8], base: u64, section: &str) -> SliceCur<'a> {
        SliceCur {
            data,
            pos: 0,
            base,
            path: &self.src.path,
            section: section.into(),
            endian: self.header.endian,
        }
    }

    fn read_v7(&mut self, first: u64) -> Result<(), DatError> {
        let mut next = first;
        let mut seen = Vec::new();
        let mut last_end = 0;
        while next != 0 {
            if seen.contains(&next) {
                return Err(self.src.err(
                    "options",
                    next,
                    DatErrorKind::Corrupt("options sections form a loop".into()),
                ));
            }
            seen.push(next);
            let here = next;
            let (flags, body, base) = self.read_section(next, Some(section::OPTIONS), "options")?;
            let stored = {
                let h = self.src.read_at(next + 8, 8, "options")?;
                self.header.endian.u64(&h)
            };
            last_end = base + stored;
            next = 0;
            let mut done = None;
            let mut cur = self.slice(&body, base, "options");
            let mut found = Vec::new();
            while cur.remaining() > 0 {
                let at = base + cur.pos as u64;
                let id = cur.u16()?;
                let size = cur.u32()?;
                let data = cur.take_len(size as u64)?;
                if id == opt::DONE {
                    if data.len() >= 8 {
                        next = self.header.endian.u64(&data);
                    }
                    done = Some(DatOption {
                        id,
                        data,
                        offset: at,
                    });
                    break;
                }
                found.push(DatOption {
                    id,
                    data,
                    offset: at,
                });
            }
            let first = self.options.all.len();
            for o in found {
                self.add_option(o);
            }
            self.options_sections.push(OptionsSection {
                offset: here,
                flags,
                size: stored,
                options: first..self.options.all.len(),
                done,
            });
        }
        // The writer appends the STRINGS section right after the last options section;
        // only descriptions live there, so a missing one is not an error.
        let _ = last_end;
        self.nr_cpus = self.options.cpu_count.unwrap_or(0);
        let endian = self.header.endian;
        let opts = self.options.all.clone();
        for o in &opts {
            let ptr = || -> Result<u64, DatError> {
                if o.data.len() < 8 {
                    return Err(self.src.err(
                        "options",
                        o.offset,
                        DatErrorKind::Corrupt(format!(
                            "option {} has {} bytes, expected an 8-byte offset",
                            o.id,
                            o.data.len()
                        )),
                    ));
                }
                Ok(endian.u64(&o.data))
            };
            match o.id {
                opt::HEADER_INFO => {
                    let (_, body, base) = self.read_section(ptr()?, Some(o.id), "headers")?;
                    let mut c = self.slice(&body, base, "headers");
                    let (hp, he) = read_headers(&mut c)?;
                    self.meta.header_page = hp;
                    self.meta.header_event = he;
                }
                opt::FTRACE_EVENTS => {
                    let (_, body, base) = self.read_section(ptr()?, Some(o.id), "ftrace events")?;
                    let v = read_ftrace_formats(&mut self.slice(&body, base, "ftrace events"))?;
                    self.meta.ftrace_formats = v;
                }
                opt::EVENT_FORMATS => {
                    let (_, body, base) = self.read_section(ptr()?, Some(o.id), "events format")?;
                    let v = read_event_formats(&mut self.slice(&body, base, "events format"))?;
                    self.meta.event_formats = v;
                }
                opt::KALLSYMS => {
                    // Checked now, decompressed when first asked for.
                    let at = ptr()?;
                    let h = self.src.read_at(at, 16, "kallsyms")?;
                    let id = endian.u16(&h[0..2]);
                    if id != o.id {
                        return Err(self.src.err(
                            "kallsyms",
                            at,
                            DatErrorKind::Corrupt(format!(
                                "section id {id} where {} (kallsyms) was expected",
                                o.id
                            )),
                        ));
                    }
                    let size = endian.u64(&h[8..16]);
                    let available = self.src.len.saturating_sub(at + 16);
                    if size > available {
                        return Err(self.src.err(
                            "kallsyms",
                            at + 16,
                            DatErrorKind::LengthTooLarge {
                                length: size,
                                available,
                            },
                        ));
                    }
                    self.kallsyms_at = at;
                    let src = self.src.clone();
                    let compression = self.header.compression;
                    let failed = self.kallsyms_error.clone();
                    self.kallsyms = KallsymsSource::load_with(move || {
                        read_kallsyms(&src, compression, at)
                            .map_err(|e| failed.set(e))
                            .ok()
                    });
                }
                opt::PRINTK => {
                    let (_, body, base) = self.read_section(ptr()?, Some(o.id), "printk")?;
                    let mut c = self.slice(&body, base, "printk");
                    let n = c.u32()? as u64;
                    let t = c.text(n)?;
                    self.meta.printk_formats = t;
                }
                opt::CMDLINES => {
                    let (_, body, base) = self.read_section(ptr()?, Some(o.id), "command lines")?;
                    let mut c = self.slice(&body, base, "command lines");
                    let n = c.u64()?;
                    let t = c.text(n)?;
                    self.meta.cmdlines = t;
                }
                opt::BUFFER => {
                    let b = self.read_v7_buffer(o)?;
                    self.buffers.push(b);
                }
                opt::BUFFER_TEXT => {
                    let b = self.read_v7_text_buffer(o)?;
                    self.buffers.push(b);
                }
                _ => {}
            }
        }
        // trace-cmd lists the top instance first; keep that order for callers.
        self.buffers.sort_by_key(|b| !b.name.is_empty());
        Ok(())
    }

    fn read_v7_buffer(&self, o: &DatOption) -> Result<Buffer, DatError> {
        let mut c = self.slice(&o.data, o.offset, "BUFFER option");
        let offset = c.u64()?;
        let name = c.cstr()?;
        let clock = c.cstr()?;
        let page_size = c.u32()? as usize;
        let count = c.u32()?;
        let mut cpus = Vec::new();
        for _ in 0..count {
            let cpu = c.u32()?;
            let off = c.u64()?;
            let size = c.u64()?;
            cpus.push(CpuData {
                cpu,
                offset: off,
                size,
            });
        }
        let h = self.src.read_at(offset, 16, "buffer flyrecord")?;
        let endian = self.header.endian;
        let id = endian.u16(&h[0..2]);
        if id != section::BUFFER {
            return Err(self.src.err(
                "buffer flyrecord",
                offset,
                DatErrorKind::Corrupt(format!(
                    "section id {id} where a BUFFER section (3) was expected"
                )),
            ));
        }
        let compressed = endian.u16(&h[2..4]) & 1 != 0;
        for c in &cpus {
            // Compressed sizes may be 4 bytes short (trace-cmd <= 3.1); only the start is checked.
            let need = if compressed { 4 } else { c.size };
            if c.offset.saturating_add(need) > self.src.len {
                return Err(self.src.err(
                    &format!("flyrecord \"{name}\" cpu{}", c.cpu),
                    c.offset,
                    DatErrorKind::Truncated {
                        needed: need,
                        available: self.src.len.saturating_sub(c.offset),
                    },
                ));
            }
        }
        if page_size == 0 || page_size > 1 << 24 {
            return Err(self.src.err(
                "BUFFER option",
                o.offset,
                DatErrorKind::Corrupt(format!("page size {page_size}")),
            ));
        }
        Ok(Buffer {
            name,
            clock: Some(clock),
            page_size,
            compressed,
            data: BufferData::Flyrecord(cpus),
        })
    }

    fn read_v7_text_buffer(&self, o: &DatOption) -> Result<Buffer, DatError> {
        let mut c = self.slice(&o.data, o.offset, "BUFFER_TEXT option");
        let offset = c.u64()?;
        let name = c.cstr()?;
        let clock = if c.remaining() > 0 {
            Some(c.cstr()?)
        } else {
            None
        };
        let h = self.src.read_at(offset, 16, "buffer latency")?;
        let endian = self.header.endian;
        let compressed = endian.u16(&h[2..4]) & 1 != 0;
        let size = endian.u64(&h[8..16]);
        Ok(Buffer {
            name,
            clock,
            page_size: self.header.page_size as usize,
            compressed,
            data: BufferData::Latency {
                offset: offset + 16,
                size,
            },
        })
    }

    fn add_option(&mut self, o: DatOption) {
        if let Some(w) = self.options.add(o, self.header.endian) {
            self.warnings
                .push(format!("{}: {w}", self.src.path.display()));
        }
    }

    // ---- accessors ------------------------------------------------------------------

    /// The fixed header: version, byte order, page size, compression.
    pub fn header(&self) -> &FileHeader {
        &self.header
    }

    /// Whether numbers in the file (and in the trace data) are big-endian.
    pub fn endian(&self) -> Endianness {
        self.header.endian
    }

    /// The text of `events/header_page` stored in the file.
    pub fn header_page(&self) -> &str {
        &self.meta.header_page
    }

    /// `header_page` parsed; its `commit` size is the traced kernel's `long` size.
    pub fn header_page_layout(&self) -> Result<HeaderPage, DatError> {
        HeaderPage::parse(&self.meta.header_page).map_err(|e| {
            self.src
                .err("header_page", 0, DatErrorKind::Corrupt(e.message))
        })
    }

    /// The kernel's `sizeof(long)` (from header_page), falling back to the file header.
    pub fn long_size(&self) -> usize {
        self.header_page_layout()
            .map(|h| h.long_size())
            .unwrap_or(self.header.file_long_size as usize)
    }

    /// The text of `events/header_event`.
    pub fn header_event(&self) -> &str {
        &self.meta.header_event
    }

    /// `events/ftrace/*/format` texts (system `ftrace`).
    pub fn ftrace_formats(&self) -> &[String] {
        &self.meta.ftrace_formats
    }

    /// `(system, format text)` for every other recorded event.
    pub fn event_formats(&self) -> &[(String, String)] {
        &self.meta.event_formats
    }

    /// Every format with its system, ftrace ones first: what an event registry needs.
    pub fn all_formats(&self) -> impl Iterator<Item = (&str, &str)> {
        self.meta.all_formats()
    }

    /// `/proc/kallsyms` text as recorded (may be empty). A v7 file's section is
    /// decompressed on the first call; the error says why it could not be.
    pub fn kallsyms(&self) -> Result<&str, DatError> {
        match self.kallsyms.text() {
            Some(t) => Ok(t),
            None => match self.kallsyms_error.get() {
                Some(e) => Err(e.duplicate()),
                None => Ok(""),
            },
        }
    }

    /// The kallsyms text as a source shared with this file: read (decompressed) once,
    /// by whichever asks first, and not copied.
    pub fn kallsyms_source(&self) -> KallsymsSource {
        self.kallsyms.clone()
    }

    /// Why the kallsyms section could not be read, if reading it was tried and failed
    /// (through [`DatFile::kallsyms`] or a [`DatFile::kallsyms_source`]).
    pub fn kallsyms_error(&self) -> Option<DatError> {
        self.kallsyms_error.get().map(DatError::duplicate)
    }

    /// Offset of the v7 kallsyms section (0 when the file has none, or for v6).
    pub fn kallsyms_offset(&self) -> u64 {
        self.kallsyms_at
    }

    /// `printk_formats` text (`0xADDR : "fmt"` lines).
    pub fn printk_formats(&self) -> &str {
        &self.meta.printk_formats
    }

    /// `saved_cmdlines` text (`pid comm` lines).
    pub fn cmdlines(&self) -> &str {
        &self.meta.cmdlines
    }

    /// CPU count (v6 header word, v7 CPUCOUNT option).
    pub fn nr_cpus(&self) -> u32 {
        self.nr_cpus
    }

    /// Every option, raw and decoded.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The options sections of a v7 file in chain order (empty for v6).
    pub fn options_sections(&self) -> &[OptionsSection] {
        &self.options_sections
    }

    /// File offset where the metadata starts: v6 its `header_page` marker, v7 its first
    /// section (right after the pointer to the first options section).
    pub fn metadata_start(&self) -> u64 {
        self.metadata_start
    }

    /// The trace_clock text stored after a v6 file's top CPU table (`None` for v7, or
    /// when the file stores none).
    pub fn v6_clock_text(&self) -> Option<&str> {
        self.v6_clock.as_deref()
    }

    /// A v7 section's body (decompressed when flagged) and its flags; `what` names it in
    /// errors.
    pub(super) fn section_body(
        &self,
        offset: u64,
        what: &str,
    ) -> Result<(u16, Vec<u8>, u64), DatError> {
        self.read_section(offset, None, what)
    }

    /// The open file, for readers of this module that walk it themselves.
    pub(super) fn source(&self) -> &FileSrc {
        &self.src
    }

    /// A cursor over an in-memory section body at file offset `base`.
    pub(super) fn body_cursor<'a>(
        &'a self,
        data: &'a [u8],
        base: u64,
        section: &str,
    ) -> SliceCur<'a> {
        self.slice(data, base, section)
    }

    /// The buffers, top instance first.
    pub fn buffers(&self) -> &[Buffer] {
        &self.buffers
    }

    /// Things the reader skipped or guessed (unknown options, the v6 clock bug).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The file this was read from.
    pub fn path(&self) -> &Path {
        &self.src.path
    }

    /// Buffer `index` (0 = the first), or an error saying the file has no such buffer.
    pub fn buffer(&self, index: usize) -> Result<&Buffer, DatError> {
        self.buffers.get(index).ok_or_else(|| {
            let why = if self.buffers.is_empty() {
                "the file holds no trace data (no flyrecord or latency buffer)".to_string()
            } else {
                format!("no buffer #{index} (the file has {})", self.buffers.len())
            };
            self.src.err("buffers", 0, DatErrorKind::Corrupt(why))
        })
    }

    /// Stream the pages of the `cpu_index`-th entry of buffer `buffer`'s CPU table.
    pub fn cpu_pages(&self, buffer: usize, cpu_index: usize) -> Result<CpuPages, DatError> {
        let b = self.buffer(buffer)?;
        let c = b.cpus().get(cpu_index).ok_or_else(|| {
            self.src.err(
                "buffers",
                0,
                DatErrorKind::Corrupt(format!("buffer #{buffer} has no CPU entry #{cpu_index}")),
            )
        })?;
        let codec = if b.compressed {
            self.header.compression
        } else {
            Compression::None
        };
        Ok(CpuPages::new(
            self.src.clone(),
            &b.name,
            c.cpu,
            b.page_size,
            c.offset,
            c.size,
            codec,
        ))
    }

    /// The text of a latency buffer.
    pub fn latency_text(&self, buffer: usize) -> Result<Vec<u8>, DatError> {
        let b = self.buffer(buffer)?;
        let BufferData::Latency { offset, size } = b.data else {
            return Err(self.src.err(
                "buffers",
                0,
                DatErrorKind::Corrupt(format!("buffer #{buffer} is not latency text")),
            ));
        };
        if !b.compressed {
            return self.src.read_len_at(offset, size, "latency");
        }
        let mut pages = CpuPages::new(
            self.src.clone(),
            &b.name,
            0,
            1,
            offset,
            size,
            self.header.compression,
        );
        pages.read_all()
    }

    /// How stored timestamps map to displayed ones (DATE, OFFSET, TSC2NSEC options).
    pub fn ts_adjust(&self) -> TsAdjust {
        self.ts_adjust_with(&TsChoices::default())
    }

    /// [`DatFile::ts_adjust`] with trace-cmd report's choices: `--raw-ts` (none of the
    /// file's adjustments), `--nodate` (no DATE), `--ts2secs HZ` (the clock's frequency,
    /// which replaces TSC2NSEC).
    pub fn ts_adjust_with(&self, c: &TsChoices) -> TsAdjust {
        if c.raw {
            return TsAdjust::default();
        }
        let date = if c.ignore_date {
            0
        } else {
            self.options.date_offset_ns.unwrap_or(0)
        };
        TsAdjust {
            offset_ns: date.wrapping_add(self.options.ts_offset.unwrap_or(0)),
            tsc2nsec: self.options.tsc2nsec,
            time_shift: self.options.time_shift.clone(),
            hz: c.hz.filter(|&h| h != 0),
        }
    }
}

/// trace-cmd report's timestamp choices (see [`DatFile::ts_adjust_with`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TsChoices {
    /// `--raw-ts`: the stored timestamps as they are.
    pub raw: bool,
    /// `--nodate`: without the DATE offset.
    pub ignore_date: bool,
    /// `--ts2secs HZ`.
    pub hz: Option<u64>,
}

/// Timestamp adjustments recorded in the file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TsAdjust {
    /// Nanoseconds added to every timestamp (DATE, converted from µs, plus OFFSET).
    pub offset_ns: i64,
    /// TSC to ns conversion `(mult, shift, offset)` (TSC2NSEC option).
    pub tsc2nsec: Option<(u32, u32, u64)>,
    /// A guest trace's offsets against its host (TIME_SHIFT option).
    pub time_shift: Option<std::sync::Arc<super::TimeShift>>,
    /// `--ts2secs HZ`: timestamps are ticks of this frequency, converted to nanoseconds
    /// (in double precision, as trace-cmd does) instead of by TSC2NSEC.
    pub hz: Option<u64>,
}

impl TsAdjust {
    /// The displayed timestamp for a stored one of `cpu`, as trace-cmd computes it: the
    /// guest-to-host shift first, then the TSC conversion (`(ts - offset) * mult >>
    /// shift`), then the offset.
    pub fn apply(&self, ts: u64, cpu: u32) -> u64 {
        let mut t = match &self.time_shift {
            Some(s) => s.apply(ts, cpu),
            None => ts,
        };
        if let Some(hz) = self.hz {
            t = c_double_to_u64(t as f64 * (1_000_000_000f64 / hz as f64));
        } else if let Some((mult, shift, off)) = self.tsc2nsec {
            if mult != 0 {
                t = ((t.wrapping_sub(off) as u128 * mult as u128) >> shift.min(127)) as u64;
            }
        }
        t.wrapping_add(self.offset_ns as u64)
    }

    /// Whether anything changes timestamps.
    pub fn is_identity(&self) -> bool {
        self.offset_ns == 0
            && self.tsc2nsec.is_none()
            && self.time_shift.is_none()
            && self.hz.is_none()
    }
}

/// A double converted to an unsigned 64-bit integer as C on x86-64 does it (what trace-cmd
/// does to a `--ts2secs` timestamp): values from 2^63 on go through the signed conversion
/// of the value less 2^63, whose out-of-range result (`i64::MIN`) flips back to 0, so a
/// value of 2^64 or more (an overflow) becomes 0 where Rust's `as` would saturate.
fn c_double_to_u64(v: f64) -> u64 {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if v < TWO_63 {
        // Negative values cannot occur (a u64 times a positive factor).
        v as i64 as u64
    } else if v < 2.0 * TWO_63 {
        (v - TWO_63) as i64 as u64 ^ (1 << 63)
    } else {
        0
    }
}

/// The clock in brackets of a `trace_clock` listing (`"[local] global"` -> `local`), or
/// the bare name.
pub fn selected_clock(text: &str) -> Option<String> {
    let t = text.trim_end_matches('\0').trim();
    if let (Some(a), Some(b)) = (t.find('['), t.find(']')) {
        if a < b {
            return Some(t[a + 1..b].to_string());
        }
    }
    if t.is_empty() || t.contains(char::is_whitespace) {
        None
    } else {
        Some(t.to_string())
    }
}

/// The kallsyms section at `at` as a text: its body is decompressed in place, and the
/// text is used where it lies, after the length field (which is blanked to newlines so
/// that the whole buffer is text).
fn read_kallsyms(
    src: &FileSrc,
    compression: Compression,
    at: u64,
) -> Result<KallsymsText, DatError> {
    let (_, mut body, base) = read_section(src, compression, at, Some(opt::KALLSYMS), "kallsyms")?;
    if body.len() < 4 {
        return Err(src.err(
            "kallsyms",
            base,
            DatErrorKind::Truncated {
                needed: 4,
                available: body.len() as u64,
            },
        ));
    }
    let n = src.endian.u32(&body[0..4]) as usize;
    if n > body.len() - 4 {
        return Err(src.err(
            "kallsyms",
            base,
            DatErrorKind::LengthTooLarge {
                length: n as u64,
                available: body.len() as u64 - 4,
            },
        ));
    }
    body.truncate(4 + n);
    body[..4].fill(b'\n');
    Ok(KallsymsText::new(crate::bytes::text_lossy(body), 4))
}

/// A v7 section's 16-byte header and its body, decompressed when flagged: `(flags,
/// body, offset of the body)`.
fn read_section(
    src: &FileSrc,
    compression: Compression,
    offset: u64,
    want: Option<u16>,
    what: &str,
) -> Result<(u16, Vec<u8>, u64), DatError> {
    let h = src.read_at(offset, 16, what)?;
    let endian = src.endian;
    let id = endian.u16(&h[0..2]);
    let flags = endian.u16(&h[2..4]);
    let size = endian.u64(&h[8..16]);
    if let Some(w) = want {
        if id != w {
            return Err(src.err(
                what,
                offset,
                DatErrorKind::Corrupt(format!("section id {id} where {w} ({what}) was expected")),
            ));
        }
    }
    let body_at = offset + 16;
    let body = src.read_len_at(body_at, size, what)?;
    if flags & 1 != 0 && id != section::BUFFER {
        if body.len() < 8 {
            return Err(src.err(
                what,
                body_at,
                DatErrorKind::Truncated {
                    needed: 8,
                    available: body.len() as u64,
                },
            ));
        }
        let csize = endian.u32(&body[0..4]) as usize;
        let usize_ = endian.u32(&body[4..8]) as u64;
        if 8 + csize > body.len() {
            return Err(src.err(
                what,
                body_at,
                DatErrorKind::Truncated {
                    needed: csize as u64,
                    available: body.len() as u64 - 8,
                },
            ));
        }
        let out = compression
            .decompress(&body[8..8 + csize], usize_)
            .map_err(|m| src.err(what, body_at, DatErrorKind::Corrupt(m)))?;
        return Ok((flags, out, body_at));
    }
    Ok((flags, body, body_at))
}
