//! The compression codecs trace-cmd uses for v7 sections and trace data chunks.

use std::io::{Read, Write};

/// Upper bound for one decompressed block. trace-cmd compresses a whole metadata
/// section (kallsyms: ~6 MB) or one chunk of 10 pages in one block, so anything far
/// bigger is a corrupt size rather than a real block.
pub(crate) const MAX_BLOCK: u64 = 256 << 20;

/// Blocks at least this big (a kallsyms section; data chunks are 40 KiB) are written
/// into memory that huge pages may back.
const HUGE_BLOCK: u64 = 4 << 20;

/// Compression of a v7 trace.dat (the name in the file's initial header).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// `"none"`: sections and data stored as they are.
    None,
    /// `"zstd"`: trace-cmd's default.
    Zstd,
    /// `"zlib"`: deflate with the zlib header, as zlib's `compress2` writes.
    Zlib,
}

impl Compression {
    /// The name stored in the file.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Zstd => "zstd",
            Compression::Zlib => "zlib",
        }
    }

    /// Parse the name stored in the file (or given on the command line).
    pub fn from_name(name: &str) -> Option<Compression> {
        match name {
            "none" | "" => Some(Compression::None),
            "zstd" => Some(Compression::Zstd),
            "zlib" => Some(Compression::Zlib),
            _ => None,
        }
    }

    /// The codec version string written next to the name.
    pub(crate) fn version(self) -> String {
        match self {
            Compression::None => String::new(),
            Compression::Zstd => {
                let v = zstd::zstd_safe::version_number();
                format!("{}.{}.{}", v / 10000, v / 100 % 100, v % 100)
            }
            Compression::Zlib => "1.2.13".to_string(),
        }
    }

    /// Decompress one block that should expand to exactly `expected` bytes.
    pub(crate) fn decompress(self, src: &[u8], expected: u64) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        self.decompress_into(src, expected, &mut out)?;
        Ok(out)
    }

    /// [`Compression::decompress`] into `out`, which is emptied first and keeps its
    /// memory: the data chunks of a CPU (hundreds per file) reuse one buffer.
    pub(crate) fn decompress_into(
        self,
        src: &[u8],
        expected: u64,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        if expected > MAX_BLOCK {
            return Err(format!("block claims to expand to {expected} bytes"));
        }
        out.clear();
        match self {
            Compression::None => out.extend_from_slice(src),
            Compression::Zstd => {
                // One decompression context per thread: making one per block (hundreds
                // per file) costs more than decompressing a small block.
                thread_local! {
                    static CONTEXT: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
                        const { std::cell::RefCell::new(None) };
                }
                CONTEXT.with(|c| {
                    let mut c = c.borrow_mut();
                    if c.is_none() {
                        *c = Some(
                            zstd::bulk::Decompressor::new().map_err(|e| format!("zstd: {e}"))?,
                        );
                    }
                    let d = c.as_mut().expect("just made");
                    if expected >= HUGE_BLOCK && out.capacity() < expected as usize {
                        *out = crate::bytes::huge_page_buffer(expected as usize);
                    }
                    // (Written into the room `out` has: it must hold the whole block.)
                    out.reserve(expected as usize);
                    d.decompress_to_buffer(src, out)
                        .map_err(|e| format!("zstd: {e}"))?;
                    Ok::<(), String>(())
                })?
            }
            Compression::Zlib => {
                out.reserve(expected as usize);
                flate2::read::ZlibDecoder::new(src)
                    .take(expected + 1)
                    .read_to_end(out)
                    .map_err(|e| format!("zlib: {e}"))?;
            }
        }
        if out.len() as u64 != expected {
            return Err(format!(
                "block expanded to {} bytes, header says {expected}",
                out.len()
            ));
        }
        Ok(())
    }

    /// Compress one block.
    pub(crate) fn compress(self, src: &[u8]) -> std::io::Result<Vec<u8>> {
        match self {
            Compression::None => Ok(src.to_vec()),
            Compression::Zstd => zstd::bulk::compress(src, 3),
            Compression::Zlib => {
                let mut e =
                    flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
                e.write_all(src)?;
                e.finish()
            }
        }
    }
}
