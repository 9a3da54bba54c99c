//! Streaming one CPU's sub-buffer pages out of a trace.dat, a chunk at a time.

use std::sync::Arc;

use super::compress::{Compression, MAX_BLOCK};
use super::error::{DatError, DatErrorKind};
use super::input::FileSrc;

/// Uncompressed data is read this many pages at a time.
const RAW_BATCH_PAGES: u64 = 64;

/// Compressed chunks (a few KiB each) are read from the file this many bytes at a time:
/// one read for several chunks instead of two per chunk, and little memory per CPU.
const CHUNK_WINDOW: u64 = 32 << 10;

#[derive(Debug)]
enum Mode {
    /// Pages stored as they are: `pos..end` in the file.
    Raw { pos: u64, end: u64 },
    /// `u32 chunk_count`, then chunks of `u32 compressed, u32 uncompressed, bytes`.
    /// The stored data size is not used: trace-cmd <= 3.1 wrote it 4 bytes short.
    Chunked {
        pos: u64,
        left: u32,
        codec: Compression,
    },
}

/// The pages of one CPU of one buffer, in file order.
///
/// Memory stays at one chunk (compressed files) or a few pages (uncompressed) however
/// big the file is. Get one from [`super::DatFile::cpu_pages`].
#[derive(Debug)]
pub struct CpuPages {
    src: Arc<FileSrc>,
    cpu: u32,
    page_size: usize,
    section: String,
    mode: Mode,
    buf: Vec<u8>,
    start: usize,
    /// Compressed data read ahead of the chunks: the file's bytes from `window_at` on.
    window: Vec<u8>,
    window_at: u64,
    /// A chunk decompressed while `buf` still held part of a page.
    spill: Vec<u8>,
    page_index: u64,
    started: bool,
    data_offset: u64,
}

impl CpuPages {
    pub(crate) fn new(
        src: Arc<FileSrc>,
        buffer_name: &str,
        cpu: u32,
        page_size: usize,
        offset: u64,
        size: u64,
        codec: Compression,
    ) -> CpuPages {
        let section = if buffer_name.is_empty() {
            format!("flyrecord cpu{cpu}")
        } else {
            format!("flyrecord \"{buffer_name}\" cpu{cpu}")
        };
        let mode = match codec {
            Compression::None => Mode::Raw {
                pos: offset,
                end: offset.saturating_add(size),
            },
            c => Mode::Chunked {
                pos: offset,
                left: 0,
                codec: c,
            },
        };
        CpuPages {
            src,
            cpu,
            page_size,
            section,
            mode,
            buf: Vec::new(),
            start: 0,
            window: Vec::new(),
            window_at: 0,
            spill: Vec::new(),
            page_index: 0,
            started: false,
            data_offset: offset,
        }
    }

    /// CPU these pages were recorded on.
    pub fn cpu(&self) -> u32 {
        self.cpu
    }

    /// Size of one page (sub-buffer) in bytes.
    pub fn page_size(&self) -> usize {
        self.page_size
    }

    /// Pages returned so far.
    pub fn pages_read(&self) -> u64 {
        self.page_index
    }

    fn err(&self, offset: u64, kind: DatErrorKind) -> DatError {
        self.src.err(&self.section, offset, kind)
    }

    /// The next whole page, or `None` at the end of this CPU's data.
    pub fn next_page(&mut self) -> Result<Option<&[u8]>, DatError> {
        if self.page_size == 0 {
            return Err(self.err(
                self.data_offset,
                DatErrorKind::Corrupt("page size 0".into()),
            ));
        }
        while self.buf.len() - self.start < self.page_size {
            if !self.refill()? {
                let rest = self.buf.len() - self.start;
                if rest != 0 {
                    return Err(self.err(
                        self.data_offset,
                        DatErrorKind::Corrupt(format!(
                            "data ends with a partial page of {rest} bytes (page size {})",
                            self.page_size
                        )),
                    ));
                }
                return Ok(None);
            }
        }
        let s = self.start;
        self.start += self.page_size;
        self.page_index += 1;
        Ok(Some(&self.buf[s..s + self.page_size]))
    }

    /// Append more data to the buffer; false at the end of the data.
    fn refill(&mut self) -> Result<bool, DatError> {
        // Keep only the unconsumed tail so the buffer never grows past one block.
        self.buf.drain(..self.start);
        self.start = 0;
        match self.mode {
            Mode::Raw { pos, end } => {
                if pos >= end {
                    return Ok(false);
                }
                let n = (end - pos).min(RAW_BATCH_PAGES * self.page_size as u64);
                let old = self.buf.len();
                self.buf.resize(old + n as usize, 0);
                let (src, section) = (&self.src, &self.section);
                src.read_into(pos, &mut self.buf[old..], section)?;
                self.mode = Mode::Raw { pos: pos + n, end };
                Ok(true)
            }
            Mode::Chunked { pos, left, codec } => {
                let endian = self.src.endian;
                let (mut pos, mut left) = (pos, left);
                if !self.started {
                    self.started = true;
                    let b = self.read_window(pos, 4, false)?;
                    left = endian.u32(b);
                    pos += 4;
                }
                if left == 0 {
                    return Ok(false);
                }
                let h = self.read_window(pos, 8, false)?;
                let csize = endian.u32(&h[0..4]) as u64;
                let usize_ = endian.u32(&h[4..8]) as u64;
                if usize_ > MAX_BLOCK {
                    return Err(self.err(
                        pos,
                        DatErrorKind::Corrupt(format!("chunk claims {usize_} bytes")),
                    ));
                }
                self.read_window(pos + 8, csize, true)?;
                let at = (pos + 8 - self.window_at) as usize;
                let data = &self.window[at..at + csize as usize];
                // Chunks hold whole pages, so the buffer is usually used up: the chunk is
                // then decompressed into it, with no copy.
                let whole = self.buf.is_empty();
                let out = if whole {
                    &mut self.buf
                } else {
                    &mut self.spill
                };
                let decompressed = codec.decompress_into(data, usize_, out);
                if let Err(m) = decompressed {
                    out.clear();
                    return Err(self.err(pos, DatErrorKind::Corrupt(m)));
                }
                if !whole {
                    self.buf.extend_from_slice(&self.spill);
                }
                self.mode = Mode::Chunked {
                    pos: pos + 8 + csize,
                    left: left - 1,
                    codec,
                };
                Ok(true)
            }
        }
    }

    /// The `n` bytes of the file at `off`, from the read-ahead window (refilled from the
    /// file when it does not hold them). `length`: `n` was read from a length field, so
    /// that bytes past the end of the file are corruption rather than truncation.
    fn read_window(&mut self, off: u64, n: u64, length: bool) -> Result<&[u8], DatError> {
        let held = self.window_at..self.window_at + self.window.len() as u64;
        if off < held.start || off + n > held.end {
            let available = self.src.len.saturating_sub(off);
            if n > available {
                let kind = match length {
                    true => DatErrorKind::LengthTooLarge {
                        length: n,
                        available,
                    },
                    false => DatErrorKind::Truncated {
                        needed: n,
                        available,
                    },
                };
                return Err(self.err(off, kind));
            }
            let len = n.max(CHUNK_WINDOW).min(available) as usize;
            self.window.resize(len, 0);
            self.window_at = off;
            if let Err(e) = self.src.read_into(off, &mut self.window, &self.section) {
                self.window.clear();
                return Err(e);
            }
        }
        let at = (off - self.window_at) as usize;
        Ok(&self.window[at..at + n as usize])
    }

    /// Read every remaining page into one vector (for small buffers and tests).
    pub fn read_all(&mut self) -> Result<Vec<u8>, DatError> {
        let mut out = Vec::new();
        while let Some(p) = self.next_page()? {
            out.extend_from_slice(p);
        }
        Ok(out)
    }
}
