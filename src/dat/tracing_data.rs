//! The "tracing data" block: what a trace.dat v6 holds from its magic to the saved
//! cmdlines (header_page, header_event, the ftrace and event `format` files, kallsyms,
//! printk formats, cmdlines). perf.data stores the same block in its TRACING_DATA
//! feature, so both files load tracepoint schemas through [`TracingData`].

use std::path::Path;

use super::error::{DatError, DatErrorKind};
use super::input::{Input, SliceCur};
use super::reader::MAGIC;
use super::writer::Metadata;
use crate::endian::Endianness;
use crate::event::HeaderPage;

/// The metadata sections of a tracing data block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TracingData {
    /// Byte order of the numbers in the block and of the event payloads.
    pub endian: Endianness,
    /// `sizeof(long)` of the writer (the kernel's is in `header_page`).
    pub file_long_size: u8,
    /// Page size of the traced host.
    pub page_size: u32,
    /// The texts: header_page, header_event, formats, kallsyms (may be empty), printk
    /// formats, saved cmdlines.
    pub sections: Metadata,
}

impl TracingData {
    /// Parse a whole block (from its `\x17\x08Dtracing` magic) held in memory; `path` and
    /// `offset` (the block's file offset) are only used in errors. perf writes version
    /// `0.6` (`0.5` has no cmdlines); trace.dat writes `6`.
    pub fn parse(block: &[u8], path: &Path, offset: u64) -> Result<TracingData, DatError> {
        let mut cur = SliceCur {
            data: block,
            pos: 0,
            base: offset,
            path,
            section: "tracing data header".into(),
            endian: Endianness::Little,
        };
        if block.len() < MAGIC.len() || &block[..MAGIC.len()] != MAGIC {
            return Err(cur.corrupt("no tracing data magic (\\x17\\x08\\x44tracing)".into()));
        }
        cur.pos = MAGIC.len();
        let version = cur.cstr()?;
        let with_cmdlines = match version.as_str() {
            "0.5" => false,
            "0.6" | "6" => true,
            v => {
                return Err(DatError::new(
                    path,
                    "tracing data header",
                    offset + MAGIC.len() as u64,
                    DatErrorKind::Unsupported(format!(
                        "tracing data version {v:?}; 0.5, 0.6 and 6 are supported"
                    )),
                ))
            }
        };
        let b = cur.take(2)?;
        cur.endian = match b[0] {
            0 => Endianness::Little,
            1 => Endianness::Big,
            x => return Err(cur.corrupt(format!("endianness byte {x}, expected 0 or 1"))),
        };
        let file_long_size = b[1];
        let page_size = cur.u32()?;
        let mut td = TracingData {
            endian: cur.endian,
            file_long_size,
            page_size,
            ..TracingData::default()
        };
        read_sections(&mut cur, &mut td.sections, with_cmdlines)?;
        Ok(td)
    }

    /// The kernel's `sizeof(long)` (from header_page), falling back to the block header.
    pub fn long_size(&self) -> usize {
        HeaderPage::parse(&self.sections.header_page)
            .map(|h| h.long_size())
            .unwrap_or(self.file_long_size as usize)
    }
}

/// The sections after the fixed header, header_page to cmdlines (without cmdlines
/// before version 0.6).
pub(crate) fn read_sections(
    cur: &mut dyn Input,
    meta: &mut Metadata,
    with_cmdlines: bool,
) -> Result<(), DatError> {
    let (page, event) = read_headers(cur)?;
    meta.header_page = page;
    meta.header_event = event;
    cur.set_section("ftrace formats");
    meta.ftrace_formats = read_ftrace_formats(cur)?;
    cur.set_section("event formats");
    meta.event_formats = read_event_formats(cur)?;
    cur.set_section("kallsyms");
    let n = cur.u32()? as u64;
    meta.kallsyms = cur.text(n)?;
    cur.set_section("printk formats");
    let n = cur.u32()? as u64;
    meta.printk_formats = cur.text(n)?;
    if with_cmdlines {
        cur.set_section("cmdlines");
        let n = cur.u64()?;
        meta.cmdlines = cur.text(n)?;
    }
    Ok(())
}

/// `header_page` and `header_event`, each after its name.
pub(crate) fn read_headers(cur: &mut dyn Input) -> Result<(String, String), DatError> {
    cur.set_section("header_page");
    cur.expect(b"header_page\0")?;
    let n = cur.u64()?;
    let page = cur.text(n)?;
    cur.set_section("header_event");
    cur.expect(b"header_event\0")?;
    let n = cur.u64()?;
    Ok((page, cur.text(n)?))
}

/// The ftrace formats: a count, then sized texts.
pub(crate) fn read_ftrace_formats(cur: &mut dyn Input) -> Result<Vec<String>, DatError> {
    let count = cur.u32()?;
    let mut v = Vec::new();
    for _ in 0..count {
        let n = cur.u64()?;
        v.push(cur.text(n)?);
    }
    Ok(v)
}

/// The event formats: a count of systems, each a name, a count and sized texts.
pub(crate) fn read_event_formats(cur: &mut dyn Input) -> Result<Vec<(String, String)>, DatError> {
    let mut v = Vec::new();
    for (sys, texts) in read_event_systems(cur)? {
        v.extend(texts.into_iter().map(|t| (sys.clone(), t)));
    }
    Ok(v)
}

/// The event formats system by system, as stored (a system may hold no event).
pub(crate) fn read_event_systems(
    cur: &mut dyn Input,
) -> Result<Vec<(String, Vec<String>)>, DatError> {
    let systems = cur.u32()?;
    let mut v = Vec::new();
    for _ in 0..systems {
        let sys = cur.cstr()?;
        let count = cur.u32()?;
        let mut texts = Vec::new();
        for _ in 0..count {
            let n = cur.u64()?;
            texts.push(cur.text(n)?);
        }
        v.push((sys, texts));
    }
    Ok(v)
}
