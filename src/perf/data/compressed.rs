//! The data section of a file recorded with `perf record -z`: `PERF_RECORD_COMPRESSED`
//! records whose payloads are one zstd stream (perf flushes it at the end of each
//! record and keeps one decompression context for the whole file), and whose
//! decompressed bytes are the records perf read from the ring buffers. A record may
//! begin in one payload and end in the next; the decompressed records take the place of
//! the COMPRESSED record that held them, among the records written as they are
//! (FINISHED_ROUND, those synthesized at the start).

use zstd::stream::raw::{Decoder, InBuffer, Operation, OutBuffer};

use super::abi::record;
use super::read::{PerfData, RawRecord};
use super::{PerfDataError, PerfDataErrorKind};

/// What one record's payload may grow to when the COMPRESSED feature does not say
/// (perf's own buffer is the ring buffer's size, `comp_mmap_len`).
const DEFAULT_RECORD_LIMIT: u64 = 256 << 20;

/// The data section with every COMPRESSED record replaced by the records it holds;
/// None when the file has no COMPRESSED record.
pub(super) fn inflate(file: &PerfData) -> Result<Option<Vec<u8>>, PerfDataError> {
    let mut first = true;
    let mut out: Vec<u8> = Vec::new();
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
                out.extend_from_slice(file.record_bytes(&r));
            }
            continue;
        }
        if first {
            first = false;
            // The records before the first COMPRESSED one, as they are.
            let start = file.data_offset();
            out.extend_from_slice(&file.data_bytes()[..(r.offset - start) as usize]);
            let d = Decoder::new().map_err(|e| err(&r, PerfDataErrorKind::Io(e)))?;
            decoder = Some(d);
        }
        let Some(d) = decoder.as_mut() else {
            continue;
        };
        let before = out.len() as u64;
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
    Ok(decoder.map(|_| out))
}
