//! Streaming one CPU's sub-buffer pages out of a trace.dat, a chunk at a time.

use std::sync::Arc;

use super::compress::{Compression, MAX_BLOCK};
use super::error::{DatError, DatErrorKind};
use super::input::FileSrc;

/// Uncompressed data is read this many pages at a time.
const RAW_BATCH_PAGES: u64 = 64;

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
                    let b = self.src.read_at(pos, 4, &self.section)?;
                    left = endian.u32(&b);
                    pos += 4;
                }
                if left == 0 {
                    return Ok(false);
                }
                let h = self.src.read_at(pos, 8, &self.section)?;
                let csize = endian.u32(&h[0..4]) as u64;
                let usize_ = endian.u32(&h[4..8]) as u64;
                if usize_ > MAX_BLOCK {
                    return Err(self.err(
                        pos,
                        DatErrorKind::Corrupt(format!("chunk claims {usize_} bytes")),
                    ));
                }
                let data = self.src.read_len_at(pos + 8, csize, &self.section)?;
                let out = codec
                    .decompress(&data, usize_)
                    .map_err(|m| self.err(pos, DatErrorKind::Corrupt(m)))?;
                self.buf.extend_from_slice(&out);
                self.mode = Mode::Chunked {
                    pos: pos + 8 + csize,
                    left: left - 1,
                    codec,
                };
                Ok(true)
            }
        }
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
