//! Bounded, endian-aware readers over the file and over decompressed sections.
//!
//! Every length read from the file is checked against what is left before anything is
//! allocated, so a corrupt size gives an error instead of an out-of-memory abort.

use crate::endian::Endianness;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::error::{DatError, DatErrorKind};

/// The open file, shared by the metadata parser and every per-CPU page stream.
#[derive(Debug)]
pub(crate) struct FileSrc {
    pub file: File,
    pub path: PathBuf,
    pub len: u64,
    pub endian: Endianness,
}

impl FileSrc {
    pub fn err(&self, section: &str, offset: u64, kind: DatErrorKind) -> DatError {
        DatError::new(&self.path, section, offset, kind)
    }

    /// `n` bytes at `off`, where `n` was read from a length field: a length beyond the
    /// end of the file is corruption, not truncation.
    pub fn read_len_at(&self, off: u64, n: u64, section: &str) -> Result<Vec<u8>, DatError> {
        let available = self.len.saturating_sub(off);
        if n > available {
            return Err(self.err(section, off, too_long(n, available)));
        }
        self.read_at(off, n, section)
    }

    /// `n` bytes at `off`, or a Truncated error naming `section`.
    pub fn read_at(&self, off: u64, n: u64, section: &str) -> Result<Vec<u8>, DatError> {
        let available = self.len.saturating_sub(off);
        if n > available {
            return Err(self.err(
                section,
                off,
                DatErrorKind::Truncated {
                    needed: n,
                    available,
                },
            ));
        }
        let mut buf = vec![0u8; n as usize];
        self.read_into(off, &mut buf, section)?;
        Ok(buf)
    }

    pub fn read_into(&self, off: u64, buf: &mut [u8], section: &str) -> Result<(), DatError> {
        let available = self.len.saturating_sub(off);
        if buf.len() as u64 > available {
            return Err(self.err(
                section,
                off,
                DatErrorKind::Truncated {
                    needed: buf.len() as u64,
                    available,
                },
            ));
        }
        self.file
            .read_exact_at(buf, off)
            .map_err(|e| self.err(section, off, DatErrorKind::Io(e)))
    }
}

pub(crate) fn too_long(length: u64, available: u64) -> DatErrorKind {
    DatErrorKind::LengthTooLarge { length, available }
}

/// A sequential reader: the file itself (v6) or one decompressed section (v7).
pub(crate) trait Input {
    /// The next `n` bytes.
    fn take(&mut self, n: u64) -> Result<Vec<u8>, DatError>;
    /// A NUL-terminated string (the NUL is consumed, not returned).
    fn cstr(&mut self) -> Result<String, DatError>;
    fn endian(&self) -> Endianness;
    /// Bytes left in this input.
    fn remaining(&self) -> u64;
    fn corrupt(&self, msg: String) -> DatError;
    /// The error for a length field of `length` bytes that runs past the end.
    fn too_long(&self, length: u64) -> DatError;
    fn set_section(&mut self, name: &str);

    /// The next `n` bytes, where `n` was just read from a length field.
    fn take_len(&mut self, n: u64) -> Result<Vec<u8>, DatError> {
        if n > self.remaining() {
            return Err(self.too_long(n));
        }
        self.take(n)
    }

    fn u16(&mut self) -> Result<u16, DatError> {
        let b = self.take(2)?;
        Ok(self.endian().u16(&b))
    }
    fn u32(&mut self) -> Result<u32, DatError> {
        let b = self.take(4)?;
        Ok(self.endian().u32(&b))
    }
    fn u64(&mut self) -> Result<u64, DatError> {
        let b = self.take(8)?;
        Ok(self.endian().u64(&b))
    }
    /// Text stored as raw bytes; invalid UTF-8 is replaced rather than refused because
    /// formats and kallsyms are only ever displayed.
    /// `n` comes from a length field.
    fn text(&mut self, n: u64) -> Result<String, DatError> {
        let b = self.take_len(n)?;
        Ok(String::from_utf8(b)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
    }
    /// Check a fixed marker such as `"header_page\0"`.
    fn expect(&mut self, magic: &[u8]) -> Result<(), DatError> {
        let b = self.take(magic.len() as u64)?;
        if b != magic {
            return Err(self.corrupt(format!(
                "expected {:?}, found {:?}",
                String::from_utf8_lossy(magic),
                String::from_utf8_lossy(&b)
            )));
        }
        Ok(())
    }
}

/// Sequential reads straight from the file.
pub(crate) struct FileCur<'a> {
    pub src: &'a FileSrc,
    pub pos: u64,
    pub section: String,
}

impl Input for FileCur<'_> {
    fn take(&mut self, n: u64) -> Result<Vec<u8>, DatError> {
        let b = self.src.read_at(self.pos, n, &self.section)?;
        self.pos += n;
        Ok(b)
    }
    fn cstr(&mut self) -> Result<String, DatError> {
        let start = self.pos;
        let mut out = Vec::new();
        loop {
            let n = 256.min(self.src.len.saturating_sub(self.pos));
            if n == 0 {
                return Err(self.src.err(
                    &self.section,
                    start,
                    DatErrorKind::Truncated {
                        needed: out.len() as u64 + 1,
                        available: out.len() as u64,
                    },
                ));
            }
            let b = self.src.read_at(self.pos, n, &self.section)?;
            if let Some(i) = b.iter().position(|&c| c == 0) {
                out.extend_from_slice(&b[..i]);
                self.pos += i as u64 + 1;
                return Ok(String::from_utf8_lossy(&out).into_owned());
            }
            out.extend_from_slice(&b);
            self.pos += n;
            if out.len() > 1 << 20 {
                return Err(self.corrupt("string without terminating NUL".into()));
            }
        }
    }
    fn endian(&self) -> Endianness {
        self.src.endian
    }
    fn remaining(&self) -> u64 {
        self.src.len.saturating_sub(self.pos)
    }
    fn corrupt(&self, msg: String) -> DatError {
        self.src
            .err(&self.section, self.pos, DatErrorKind::Corrupt(msg))
    }
    fn too_long(&self, length: u64) -> DatError {
        self.src
            .err(&self.section, self.pos, too_long(length, self.remaining()))
    }
    fn set_section(&mut self, name: &str) {
        self.section = name.to_string();
    }
}

/// Sequential reads from an in-memory section body (decompressed or not).
pub(crate) struct SliceCur<'a> {
    pub data: &'a [u8],
    pub pos: usize,
    /// File offset of the section, for error messages.
    pub base: u64,
    pub path: &'a Path,
    pub section: String,
    pub endian: Endianness,
}

impl SliceCur<'_> {
    fn err(&self, kind: DatErrorKind) -> DatError {
        DatError::new(
            self.path,
            format!("{} (byte {} of the section body)", self.section, self.pos),
            self.base,
            kind,
        )
    }
}

impl Input for SliceCur<'_> {
    fn take(&mut self, n: u64) -> Result<Vec<u8>, DatError> {
        let available = (self.data.len() - self.pos) as u64;
        if n > available {
            return Err(self.err(DatErrorKind::Truncated {
                needed: n,
                available,
            }));
        }
        let b = self.data[self.pos..self.pos + n as usize].to_vec();
        self.pos += n as usize;
        Ok(b)
    }
    fn cstr(&mut self) -> Result<String, DatError> {
        let rest = &self.data[self.pos..];
        match rest.iter().position(|&c| c == 0) {
            Some(i) => {
                let s = String::from_utf8_lossy(&rest[..i]).into_owned();
                self.pos += i + 1;
                Ok(s)
            }
            None => Err(self.err(DatErrorKind::Truncated {
                needed: rest.len() as u64 + 1,
                available: rest.len() as u64,
            })),
        }
    }
    fn endian(&self) -> Endianness {
        self.endian
    }
    fn remaining(&self) -> u64 {
        (self.data.len() - self.pos) as u64
    }
    fn corrupt(&self, msg: String) -> DatError {
        self.err(DatErrorKind::Corrupt(msg))
    }
    fn too_long(&self, length: u64) -> DatError {
        self.err(too_long(length, self.remaining()))
    }
    fn set_section(&mut self, name: &str) {
        self.section = name.to_string();
    }
}
