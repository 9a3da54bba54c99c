//! The data section of a file recorded with `perf record -z`: `PERF_RECORD_COMPRESSED`
//! records whose payloads are one zstd stream (perf flushes it at the end of each
//! record and keeps one decompression context for the whole file), and whose
//! decompressed bytes are the records perf read from the ring buffers. A record may
//! begin in one payload and end in the next; the decompressed records take the place of
//! the COMPRESSED record that held them, among the records written as they are
//! (FINISHED_ROUND, those synthesized at the start).
//!
//! [`RecordCompressor`] writes that stream as perf 6.1 does: one compression context for
//! the whole file, flushed after each block of ring data, into records of at most
//! [`MAX_PAYLOAD`] bytes each (their size is not padded to 8).

use zstd::stream::raw::{Decoder, Encoder, InBuffer, Operation, OutBuffer};

use super::abi::record;
use super::read::{PerfData, RawRecord};
use super::{PerfDataError, PerfDataErrorKind};

/// What one record's payload may grow to when the COMPRESSED feature does not say
/// (perf's own buffer is the ring buffer's size, `comp_mmap_len`).
const DEFAULT_RECORD_LIMIT: u64 = 256 << 20;

/// Where a stretch of the decompressed data came from: `(start in the data, file
/// offset, whether it is a COMPRESSED record's)`. A stretch of plain records keeps its
/// offsets; every record out of a COMPRESSED one is at that record's offset, as perf
/// shows them.
pub(super) type Origin = (u64, u64, bool);

/// The decompressed data section and where its parts came from.
pub(super) type Inflated = (Vec<u8>, Vec<Origin>);

/// The data section with every COMPRESSED record replaced by the records it holds,
/// and where each part came from; None when the file has no COMPRESSED record.
pub(super) fn inflate(file: &PerfData) -> Result<Option<Inflated>, PerfDataError> {
    let mut first = true;
    let mut out: Vec<u8> = Vec::new();
    let mut origins: Vec<Origin> = Vec::new();
    let mut decoder: Option<Decoder<'static>> = None;
    let limit = match file.compressed()? {
        Some(c) if c.mmap_len > 0 => u64::from(c.mmap_len),
        _ => DEFAULT_RECORD_LIMIT,
    };
    let err =
        |r: &RawRecord, kind| PerfDataError::new(file.path(), "COMPRESSED record", r.offset, kind);
    for r in file.records() {
        let r = r?;
        if r.type_ != record::COMPRESSED {
            if decoder.is_some() {
                origins.push((out.len() as u64, r.offset, false));
                out.extend_from_slice(file.record_bytes(&r));
            }
            continue;
        }
        if first {
            first = false;
            // The records before the first COMPRESSED one, as they are.
            let start = file.data_offset();
            origins.push((0, start, false));
            out.extend_from_slice(&file.data_bytes()[..(r.offset - start) as usize]);
            let d = Decoder::new().map_err(|e| err(&r, PerfDataErrorKind::Io(e)))?;
            decoder = Some(d);
        }
        let Some(d) = decoder.as_mut() else {
            continue;
        };
        let before = out.len() as u64;
        origins.push((before, r.offset, true));
        let mut input = InBuffer::around(r.body);
        let mut chunk = [0u8; 64 << 10];
        loop {
            let mut output = OutBuffer::around(&mut chunk[..]);
            d.run(&mut input, &mut output).map_err(|e| {
                err(
                    &r,
                    PerfDataErrorKind::Corrupt(format!(
                        "zstd payload of {} bytes: {e}",
                        r.body.len()
                    )),
                )
            })?;
            let made = output.pos();
            out.extend_from_slice(&chunk[..made]);
            if out.len() as u64 - before > limit {
                return Err(err(
                    &r,
                    PerfDataErrorKind::Corrupt(format!(
                        "its payload decompresses to more than {limit} bytes (the recording's buffer size)"
                    )),
                ));
            }
            if input.pos() == r.body.len() && made < chunk.len() {
                break;
            }
        }
    }
    Ok(decoder.map(|_| (out, origins)))
}

/// The most compressed bytes one COMPRESSED record holds: perf keeps the record within
/// PERF_SAMPLE_MAX_SIZE (64 KiB), less its 8-byte header and one byte.
pub const MAX_PAYLOAD: usize = (1 << 16) - 8 - 1;

/// The zstd stream of a recording's ring data, cut into COMPRESSED records.
pub struct RecordCompressor {
    encoder: Encoder<'static>,
    level: u32,
    transferred: u64,
    compressed: u64,
}

impl std::fmt::Debug for RecordCompressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordCompressor")
            .field("level", &self.level)
            .field("transferred", &self.transferred)
            .field("compressed", &self.compressed)
            .finish()
    }
}

impl RecordCompressor {
    /// A compressor at zstd `level` (1 to 22).
    pub fn new(level: u32) -> std::io::Result<RecordCompressor> {
        Ok(RecordCompressor {
            encoder: Encoder::new(level as i32)?,
            level,
            transferred: 0,
            compressed: 0,
        })
    }

    /// The zstd level.
    pub fn level(&self) -> u32 {
        self.level
    }

    /// Compress `data` (whole records read from the rings) and hand each COMPRESSED
    /// record made, header and payload, to `emit`. Everything given so far is in the
    /// records emitted once this returns.
    pub fn compress(
        &mut self,
        data: &[u8],
        mut emit: impl FnMut(&[u8]) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        let mut rec = vec![0u8; 8 + MAX_PAYLOAD];
        let mut input = InBuffer::around(data);
        loop {
            let (made, pending) = {
                let mut output = OutBuffer::around(&mut rec[8..]);
                if input.pos() < data.len() {
                    self.encoder.run(&mut input, &mut output)?;
                }
                let pending = if input.pos() == data.len() {
                    self.encoder.flush(&mut output)?
                } else {
                    1
                };
                (output.pos(), pending)
            };
            if made > 0 {
                let size = 8 + made;
                rec[..4].copy_from_slice(&record::COMPRESSED.to_ne_bytes());
                rec[4..6].copy_from_slice(&0u16.to_ne_bytes());
                rec[6..8].copy_from_slice(&(size as u16).to_ne_bytes());
                emit(&rec[..size])?;
                self.compressed += size as u64;
            }
            if input.pos() == data.len() && pending == 0 {
                break;
            }
        }
        self.transferred += data.len() as u64;
        Ok(())
    }

    /// Bytes of ring data compressed so far.
    pub fn transferred(&self) -> u64 {
        self.transferred
    }

    /// Bytes of COMPRESSED records (headers included) made so far.
    pub fn compressed(&self) -> u64 {
        self.compressed
    }

    /// The ratio perf reports: ring bytes over record bytes, in single precision; 0
    /// before anything was compressed.
    pub fn ratio(&self) -> f32 {
        if self.transferred == 0 || self.compressed == 0 {
            return 0.0;
        }
        self.transferred as f32 / self.compressed as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What one compressor made, decompressed with one context as a reader does, gives
    /// back the bytes in their order; no record is bigger than perf's limit.
    #[test]
    fn records_decompress_to_the_ring_data() {
        let mut c = RecordCompressor::new(3).unwrap();
        let mut recs: Vec<Vec<u8>> = Vec::new();
        let mut want = Vec::new();
        let mut seed = 7u64;
        for round in 0..3 {
            // Incompressible bytes, more than one record's worth in the second round.
            let n = if round == 1 { 200_000 } else { 5000 };
            let block: Vec<u8> = (0..n)
                .map(|_| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                    (seed >> 56) as u8
                })
                .collect();
            want.extend_from_slice(&block);
            c.compress(&block, |r| {
                recs.push(r.to_vec());
                Ok(())
            })
            .unwrap();
        }
        assert!(recs.len() > 3);
        let mut d = Decoder::new().unwrap();
        let mut got = Vec::new();
        for r in &recs {
            assert_eq!(u32::from_ne_bytes(r[..4].try_into().unwrap()), 81);
            let size = u16::from_ne_bytes(r[6..8].try_into().unwrap()) as usize;
            assert_eq!(size, r.len());
            assert!(r.len() <= 1 << 16);
            let mut input = InBuffer::around(&r[8..]);
            let mut chunk = vec![0u8; 1 << 18];
            loop {
                let mut out = OutBuffer::around(&mut chunk[..]);
                d.run(&mut input, &mut out).unwrap();
                let made = out.pos();
                got.extend_from_slice(&chunk[..made]);
                if input.pos() == r.len() - 8 && made < chunk.len() {
                    break;
                }
            }
        }
        assert_eq!(got, want);
        assert_eq!(c.transferred(), want.len() as u64);
        assert_eq!(
            c.compressed(),
            recs.iter().map(|r| r.len() as u64).sum::<u64>()
        );
    }
}
