//! The DWARF of one object file as the source-line lookups read it, loaded only as far
//! as they need.
//!
//! addr2line's `Context` reads every compilation unit of `.debug_info` when it is made
//! (its header, abbreviations and first entry), which for glibc's detached debug file
//! means inflating megabytes of zlib data and parsing four thousand units to answer
//! for the two or three functions a profile samples there. Where `.debug_aranges` says
//! which one unit covers an address, a `Context` of that unit alone gives the same
//! answers: `.debug_info` is inflated only as far as that unit's end (the inflater
//! keeps its state to go on later) and the unit is read on its own. An address no
//! `.debug_aranges` entry covers has no answer when none of the other ranges a
//! whole-file `Context` finds units by covers it either (units' `DW_AT_ranges`, pc
//! bounds, line sequences: read from the units' root entries alone). Such an address
//! that those ranges do cover, one that several units' entries cover, and a unit
//! that refers to entries outside itself (`DW_FORM_ref_addr`, type signatures,
//! supplementary files), are answered from a `Context` of the whole file as before.
//!
//! A unit alone is given a `.debug_info` that starts with it: its entries' offsets are
//! then relative to the unit, which the unit-relative references it may hold do not
//! see, and its `.debug_aranges` sets are given with the unit's offset as 0.

use std::cell::{OnceCell, RefCell};
use std::collections::HashMap;
use std::sync::Arc;

use object::{Object, ObjectSection};

/// How addr2line reads the sections: shared buffers, the file's byte order.
pub(crate) type Reader = gimli::EndianArcSlice<gimli::RunTimeEndian>;

/// A `Context` of a whole file or of one of its units.
pub(crate) type Context = addr2line::Context<Reader>;

/// The DWARF sections addr2line never reads for lines and inlined functions (variable
/// locations and macros): left empty rather than read, which for a compressed section
/// (glibc's debug files) means inflated for nothing.
const UNUSED_SECTIONS: [gimli::SectionId; 4] = [
    gimli::SectionId::DebugLoc,
    gimli::SectionId::DebugLocLists,
    gimli::SectionId::DebugMacinfo,
    gimli::SectionId::DebugMacro,
];

/// The most a zlib stream inflates to per byte (deflate's longest match, 258 bytes,
/// in at least 2 bits, with headroom): a section header claiming more is not believed.
const MAX_INFLATE_RATIO: u64 = 1100;

/// The fewest compressed bytes a partly inflated section is fed at a time. Each call
/// of the inflater ends by copying up to 32 KiB of what it inflated into its window,
/// so a section is fed in few large pieces: a quarter of the bytes still to inflate
/// (DWARF inflates to three or four times its size) and this much more.
const INFLATE_CHUNK: usize = 16 << 10;

/// A section's bytes, inflated (when compressed) as far as they were asked for.
enum SectionBytes {
    /// All of them.
    Whole(Arc<[u8]>),
    /// A zlib stream (`SHF_COMPRESSED`) inflated into `out` as far as `out.len()`.
    Inflating {
        input: Box<[u8]>,
        /// What was inflated, in a buffer with room for the whole section: the part
        /// not inflated yet is neither zeroed nor touched (glibc's `.debug_info` is
        /// megabytes of which a profile often needs the first few hundred kilobytes).
        out: Vec<u8>,
        /// The section's size (`ch_size`).
        size: usize,
        inflater: flate2::Decompress,
    },
    /// The section could not be read or inflated (a truncated stream, a size the data
    /// cannot hold).
    Unreadable,
}

impl SectionBytes {
    /// The bytes of `section`, not inflated yet.
    fn of(section: &object::Section<'_, '_>) -> SectionBytes {
        let Ok(compressed) = section.compressed_data() else {
            return SectionBytes::Unreadable;
        };
        match compressed.format {
            object::CompressionFormat::None => SectionBytes::Whole(Arc::from(compressed.data)),
            object::CompressionFormat::Zlib => {
                let size = compressed.uncompressed_size;
                let believable =
                    size <= (compressed.data.len() as u64).saturating_mul(MAX_INFLATE_RATIO);
                match usize::try_from(size) {
                    Ok(size) if believable => SectionBytes::inflating(compressed.data, size),
                    _ => SectionBytes::Unreadable,
                }
            }
            _ => match section.uncompressed_data() {
                Ok(b) => SectionBytes::Whole(Arc::from(&*b)),
                Err(_) => SectionBytes::Unreadable,
            },
        }
    }

    /// The zlib stream `input` of a section of `size` bytes, not inflated yet.
    fn inflating(input: &[u8], size: usize) -> SectionBytes {
        SectionBytes::Inflating {
            input: input.into(),
            out: Vec::with_capacity(size),
            size,
            inflater: flate2::Decompress::new(true),
        }
    }

    /// The section's size.
    fn len(&self) -> usize {
        match self {
            SectionBytes::Whole(b) => b.len(),
            SectionBytes::Inflating { size, .. } => *size,
            SectionBytes::Unreadable => 0,
        }
    }

    /// The section's first `end` bytes (fewer when it is shorter), inflating as far as
    /// needed. None when the stream ends or fails before them.
    fn prefix(&mut self, end: usize) -> Option<&[u8]> {
        let end = end.min(self.len());
        if let SectionBytes::Inflating {
            input,
            out,
            size,
            inflater,
        } = self
        {
            while out.len() < end {
                let read = usize::try_from(inflater.total_in()).ok()?;
                let want = if end == *size {
                    usize::MAX
                } else {
                    (end - out.len()) / 4 + INFLATE_CHUNK
                };
                let chunk = input.get(read..read.saturating_add(want).min(input.len()))?;
                let before = out.len();
                // Into `out`'s spare room, which is the rest of the section.
                let status = inflater.decompress_vec(chunk, out, flate2::FlushDecompress::None);
                let stuck = out.len() == before && inflater.total_in() == read as u64;
                match status {
                    // A stream longer than its header says is read as far as that.
                    Ok(_) if out.len() >= *size => out.truncate(*size),
                    Ok(flate2::Status::Ok | flate2::Status::BufError) if !stuck => {}
                    _ => {
                        *self = SectionBytes::Unreadable;
                        return None;
                    }
                }
            }
        }
        match self {
            SectionBytes::Whole(b) => Some(&b[..end]),
            SectionBytes::Inflating { out, .. } => Some(&out[..end]),
            SectionBytes::Unreadable => None,
        }
    }

    /// All of the section's bytes, inflated.
    fn whole(&mut self) -> Option<Arc<[u8]>> {
        if let SectionBytes::Whole(b) = self {
            return Some(b.clone());
        }
        self.prefix(self.len())?;
        let SectionBytes::Inflating { out, .. } = self else {
            return None;
        };
        let all = Arc::from(std::mem::take(out));
        *self = SectionBytes::Whole(Arc::clone(&all));
        Some(all)
    }
}

/// Which units' `.debug_aranges` entries cover an address.
enum Covering {
    None,
    One(usize),
    Several,
}

/// One non-empty `.debug_aranges` entry.
#[derive(Clone, Copy)]
struct Arange {
    begin: u64,
    end: u64,
    /// The unit's offset in `.debug_info`.
    unit: usize,
    /// The largest end of this entry and those before it (by begin).
    reach: u64,
}

/// The DWARF of one object file, read on demand (see the module's documentation).
pub(crate) struct ObjectDwarf {
    endian: gimli::RunTimeEndian,
    /// Every section addr2line reads but `.debug_info`, whole.
    sections: Vec<(gimli::SectionId, Reader)>,
    info: RefCell<SectionBytes>,
    /// `.debug_abbrev`, whole.
    abbrev: Arc<[u8]>,
    /// `.debug_aranges`, whole.
    aranges_bytes: Arc<[u8]>,
    /// Its non-empty entries, by begin.
    aranges: Vec<Arange>,
    /// Its sets as (unit offset, set offset), by unit offset.
    sets: Vec<(usize, usize)>,
    /// Each unit's own `Context` by its offset, made on first use; None for a unit not
    /// to be read alone.
    units: RefCell<HashMap<usize, Option<Arc<Context>>>>,
    /// The address ranges a `Context` of the whole file finds units by that
    /// `.debug_aranges` does not give (see [`ObjectDwarf::other_ranges`]), read when an
    /// address no `.debug_aranges` entry covers is first asked about.
    others: OnceCell<OtherRanges>,
    whole: OnceCell<Option<Arc<Context>>>,
}

/// The ranges by which addr2line finds units besides their `.debug_aranges` entries.
enum OtherRanges {
    /// The ranges, (begin, end) by begin.
    Known(Vec<(u64, u64)>),
    /// A unit whose ranges were not worked out (read only from its line program, an
    /// indexed range list or address, or a unit that could not be read).
    Unknown,
}

impl std::fmt::Debug for ObjectDwarf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectDwarf")
            .field("aranges", &self.aranges.len())
            .field("units", &self.units.borrow().len())
            .finish()
    }
}

impl ObjectDwarf {
    /// The DWARF sections of `file`; nothing is inflated yet but the small sections
    /// every lookup reads.
    pub(crate) fn new(file: &object::File<'_>) -> ObjectDwarf {
        let endian = if file.is_little_endian() {
            gimli::RunTimeEndian::Little
        } else {
            gimli::RunTimeEndian::Big
        };
        let whole = |id: gimli::SectionId| -> Arc<[u8]> {
            let bytes = file
                .section_by_name(id.name())
                .and_then(|s| SectionBytes::of(&s).whole());
            bytes.unwrap_or_else(|| Arc::from(&[][..]))
        };
        let mut sections = Vec::new();
        let mut abbrev = None;
        let mut aranges_bytes = None;
        let mut info = SectionBytes::Whole(Arc::from(&[][..]));
        // `Dwarf::load` names every section it reads; the result is thrown away.
        let _ = gimli::Dwarf::load(|id| -> Result<Reader, gimli::Error> {
            let bytes = match id {
                gimli::SectionId::DebugInfo => {
                    if let Some(s) = file.section_by_name(id.name()) {
                        info = SectionBytes::of(&s);
                    }
                    return Ok(Reader::new(Arc::from(&[][..]), endian));
                }
                _ if UNUSED_SECTIONS.contains(&id) => Arc::from(&[][..]),
                _ => whole(id),
            };
            match id {
                gimli::SectionId::DebugAbbrev => abbrev = Some(Arc::clone(&bytes)),
                gimli::SectionId::DebugAranges => aranges_bytes = Some(Arc::clone(&bytes)),
                _ => {}
            }
            let reader = Reader::new(bytes, endian);
            sections.push((id, reader.clone()));
            Ok(reader)
        });
        let aranges_bytes = aranges_bytes.unwrap_or_else(|| Arc::from(&[][..]));
        let (aranges, sets) = read_aranges(&aranges_bytes, endian);
        ObjectDwarf {
            endian,
            sections,
            info: RefCell::new(info),
            abbrev: abbrev.unwrap_or_else(|| Arc::from(&[][..])),
            aranges_bytes,
            aranges,
            sets,
            units: RefCell::default(),
            others: OnceCell::new(),
            whole: OnceCell::new(),
        }
    }

    /// The `Context` that answers for `addr` as one of the whole file would: that of
    /// the one unit covering it when it can be read alone, else the whole file's. None
    /// when the DWARF cannot be read.
    pub(crate) fn context_for(&self, addr: u64) -> Option<Arc<Context>> {
        if let Covering::One(unit) = self.covering(addr) {
            let own = self
                .units
                .borrow_mut()
                .entry(unit)
                .or_insert_with(|| self.unit_context(unit).map(Arc::new))
                .clone();
            if own.is_some() {
                return own;
            }
        } else if matches!(self.covering(addr), Covering::None) {
            // No unit of a whole-file `Context` would cover it either: it answers
            // nothing, as no `Context` does.
            let others = self.others.get_or_init(|| self.other_ranges());
            if let OtherRanges::Known(ranges) = others {
                if !ranges.iter().any(|&(b, e)| b <= addr && addr < e) {
                    return None;
                }
            }
        }
        self.whole
            .get_or_init(|| {
                let info = self.info.borrow_mut().whole()?;
                self.context(info, Arc::clone(&self.aranges_bytes))
                    .map(Arc::new)
            })
            .clone()
    }

    /// The ranges by which a whole-file `Context` finds units other than those of
    /// `.debug_aranges`: addr2line takes a compilation unit's ranges from its root
    /// entry's `DW_AT_ranges` when it has one (not from `.debug_aranges`), else from
    /// its `.debug_aranges` entries, else from its `DW_AT_low_pc` and `DW_AT_high_pc`,
    /// else from its line program's sequences. Only the root entries are read, each
    /// with the one abbreviation it uses (not the unit's whole table).
    fn other_ranges(&self) -> OtherRanges {
        let Some(info) = self.info.borrow_mut().whole() else {
            return OtherRanges::Unknown;
        };
        let dwarf = match self.dwarf_of(info, Arc::clone(&self.aranges_bytes)) {
            Some(d) => d,
            None => return OtherRanges::Unknown,
        };
        // The units with a non-empty `.debug_aranges` entry.
        let mut with_aranges: Vec<usize> = self.aranges.iter().map(|a| a.unit).collect();
        with_aranges.sort_unstable();
        with_aranges.dedup();
        let mut ranges = Vec::new();
        let mut read = || -> Option<()> {
            let mut headers = dwarf.debug_info.units();
            while let Some(header) = headers.next().ok()? {
                match header.type_() {
                    gimli::UnitType::Type { .. }
                    | gimli::UnitType::SplitType { .. }
                    | gimli::UnitType::Partial => continue,
                    gimli::UnitType::Compilation => {}
                    _ => return None,
                }
                let offset = header.offset().as_debug_info_offset()?.0;
                let abbrevs = self.root_abbreviation(&header)?;
                let mut entries = header.entries_raw(&abbrevs, None).ok()?;
                let abbrev = entries.read_abbreviation().ok()??;
                let (mut low, mut high, mut size, mut list) = (None, None, None, None);
                let mut lines = None;
                for spec in abbrev.attributes() {
                    let attr = entries.read_attribute(*spec).ok()?;
                    match (attr.name(), attr.value()) {
                        (gimli::DW_AT_low_pc, gimli::AttributeValue::Addr(a)) => low = Some(a),
                        (gimli::DW_AT_high_pc, gimli::AttributeValue::Addr(a)) => high = Some(a),
                        (gimli::DW_AT_high_pc, gimli::AttributeValue::Udata(n)) => size = Some(n),
                        (gimli::DW_AT_ranges, gimli::AttributeValue::RangeListsRef(r)) => {
                            list = Some(gimli::RangeListsOffset(r.0));
                        }
                        (gimli::DW_AT_stmt_list, gimli::AttributeValue::DebugLineRef(o)) => {
                            lines = Some(o);
                        }
                        (
                            gimli::DW_AT_low_pc | gimli::DW_AT_high_pc | gimli::DW_AT_ranges,
                            gimli::AttributeValue::DebugAddrIndex(_)
                            | gimli::AttributeValue::DebugRngListsIndex(_),
                        ) => return None,
                        _ => {}
                    }
                }
                let mut add = |begin: u64, end: u64| {
                    if begin < end {
                        ranges.push((begin, end));
                    }
                };
                if let Some(list) = list {
                    let mut iter = dwarf
                        .ranges
                        .ranges(
                            list,
                            header.encoding(),
                            low.unwrap_or(0),
                            &dwarf.debug_addr,
                            gimli::DebugAddrBase(0),
                        )
                        .ok()?;
                    while let Some(r) = iter.next().ok()? {
                        add(r.begin, r.end);
                    }
                } else if with_aranges.binary_search(&offset).is_ok() {
                    // Found by its `.debug_aranges` entries, as `covering` finds it.
                } else if let (Some(begin), Some(end)) = (low, high) {
                    add(begin, end);
                } else if let (Some(begin), Some(size)) = (low, size) {
                    add(begin, begin.wrapping_add(size));
                } else if let Some(lines) = lines {
                    // The line program's sequences (none in a unit of data only).
                    let program = dwarf
                        .debug_line
                        .program(lines, header.address_size(), None, None)
                        .ok()?;
                    let mut rows = program.rows();
                    let mut start = None;
                    while let Some((_, row)) = rows.next_row().ok()? {
                        if row.end_sequence() {
                            if let Some(begin) = start.take() {
                                add(begin, row.address());
                            }
                        } else if start.is_none() {
                            start = Some(row.address());
                        }
                    }
                }
            }
            Some(())
        };
        match read() {
            Some(()) => {
                ranges.sort_unstable();
                OtherRanges::Known(ranges)
            }
            None => OtherRanges::Unknown,
        }
    }

    /// The abbreviations table of `header`'s unit cut down to the one its root entry
    /// uses.
    fn root_abbreviation(
        &self,
        header: &gimli::UnitHeader<Reader>,
    ) -> Option<gimli::Abbreviations> {
        use gimli::Reader as _;
        let code = {
            let mut r = header
                .range_from(gimli::UnitOffset(header.header_size())..)
                .ok()?;
            r.read_uleb128().ok()?
        };
        let table = self.abbrev.get(header.debug_abbrev_offset().0..)?;
        let mut r = gimli::EndianSlice::new(table, self.endian);
        loop {
            let start = table.len() - r.len();
            let c = r.read_uleb128().ok()?;
            if c == 0 {
                return None;
            }
            r.read_uleb128().ok()?; // tag
            r.read_u8().ok()?; // children
            loop {
                let (name, form) = (r.read_uleb128().ok()?, r.read_uleb128().ok()?);
                if form == u64::from(gimli::DW_FORM_implicit_const.0) {
                    r.read_sleb128().ok()?;
                }
                if name == 0 && form == 0 {
                    break;
                }
            }
            if c == code {
                let end = table.len() - r.len();
                let mut one = table.get(start..end)?.to_vec();
                one.push(0);
                let section = gimli::DebugAbbrev::new(&one, self.endian);
                let parsed = section.abbreviations(gimli::DebugAbbrevOffset(0)).ok()?;
                return Some(parsed);
            }
        }
    }

    /// Which units' `.debug_aranges` entries cover `addr`.
    fn covering(&self, addr: u64) -> Covering {
        let mut found = Covering::None;
        let mut i = self.aranges.partition_point(|a| a.begin <= addr);
        while i > 0 && self.aranges[i - 1].reach > addr {
            i -= 1;
            let a = self.aranges[i];
            if a.end > addr {
                found = match found {
                    Covering::One(u) if u != a.unit => return Covering::Several,
                    _ => Covering::One(a.unit),
                };
            }
        }
        found
    }

    /// A `Context` of the unit at `offset` in `.debug_info` alone; None when it cannot be
    /// read alone (a unit that is no compilation unit, or that refers to entries
    /// outside itself).
    fn unit_context(&self, offset: usize) -> Option<Context> {
        let bytes: Arc<[u8]> = {
            let mut info = self.info.borrow_mut();
            let head = info.prefix(offset.checked_add(12)?)?.get(offset..)?;
            let length = self.endian_u32(head.get(..4)?);
            let size = match length {
                0xffff_ffff => {
                    let l = self.endian_u64(head.get(4..12)?);
                    usize::try_from(l).ok()?.checked_add(12)?
                }
                l if l < 0xffff_fff0 => usize::try_from(l).ok()?.checked_add(4)?,
                _ => return None,
            };
            let end = offset.checked_add(size)?;
            Arc::from(info.prefix(end)?.get(offset..end)?)
        };
        let reader = Reader::new(Arc::clone(&bytes), self.endian);
        let header = gimli::DebugInfo::from(reader).units().next().ok()??;
        if !matches!(header.type_(), gimli::UnitType::Compilation) {
            return None;
        }
        let abbrev = header.debug_abbrev_offset().0;
        if !self
            .abbrev
            .get(abbrev..)
            .is_some_and(|a| self.unit_local_forms(a))
        {
            return None;
        }
        // The unit's `.debug_aranges` sets, naming it at offset 0.
        let first = self.sets.partition_point(|&(u, _)| u < offset);
        let mut aranges = Vec::new();
        for &(_, set) in self.sets[first..].iter().take_while(|&&(u, _)| u == offset) {
            let b = self.aranges_bytes.get(set..)?;
            let (size, field) = match self.endian_u32(b.get(..4)?) {
                0xffff_ffff => (
                    usize::try_from(self.endian_u64(b.get(4..12)?))
                        .ok()?
                        .checked_add(12)?,
                    14..22,
                ),
                l => (usize::try_from(l).ok()?.checked_add(4)?, 6..10),
            };
            let start = aranges.len();
            aranges.extend_from_slice(b.get(..size)?);
            aranges
                .get_mut(start + field.start..start + field.end)?
                .fill(0);
        }
        self.context(bytes, Arc::from(aranges))
    }

    /// A `Context` of these `.debug_info` and `.debug_aranges` bytes with the file's
    /// other sections.
    fn context(&self, info: Arc<[u8]>, aranges: Arc<[u8]>) -> Option<Context> {
        addr2line::Context::from_dwarf(self.dwarf_of(info, aranges)?).ok()
    }

    /// These `.debug_info` and `.debug_aranges` bytes with the file's other sections.
    fn dwarf_of(&self, info: Arc<[u8]>, aranges: Arc<[u8]>) -> Option<gimli::Dwarf<Reader>> {
        gimli::Dwarf::load(|id| -> Result<Reader, gimli::Error> {
            Ok(match id {
                gimli::SectionId::DebugInfo => Reader::new(Arc::clone(&info), self.endian),
                gimli::SectionId::DebugAranges => Reader::new(Arc::clone(&aranges), self.endian),
                _ => self.sections.iter().find(|(s, _)| *s == id).map_or_else(
                    || Reader::new(Arc::from(&[][..]), self.endian),
                    |(_, r)| r.clone(),
                ),
            })
        })
        .ok()
    }

    /// Whether the abbreviations table `table` (from its start) uses only forms that
    /// refer inside their unit (no `DW_FORM_ref_addr`, type signature, supplementary
    /// or alternate file, or form given in the entry).
    fn unit_local_forms(&self, table: &[u8]) -> bool {
        let mut r = gimli::EndianSlice::new(table, self.endian);
        let mut scan = || -> Result<bool, gimli::Error> {
            use gimli::Reader as _;
            loop {
                if r.read_uleb128()? == 0 {
                    return Ok(true);
                }
                r.read_uleb128()?; // tag
                r.read_u8()?; // children
                loop {
                    let (name, form) = (r.read_uleb128()?, r.read_uleb128()?);
                    if name == 0 && form == 0 {
                        break;
                    }
                    let form = gimli::DwForm(u16::try_from(form).unwrap_or(u16::MAX));
                    if matches!(
                        form,
                        gimli::DW_FORM_ref_addr
                            | gimli::DW_FORM_ref_sig8
                            | gimli::DW_FORM_ref_sup4
                            | gimli::DW_FORM_ref_sup8
                            | gimli::DW_FORM_strp_sup
                            | gimli::DW_FORM_GNU_ref_alt
                            | gimli::DW_FORM_GNU_strp_alt
                            | gimli::DW_FORM_indirect
                    ) || form.0 == u16::MAX
                    {
                        return Ok(false);
                    }
                    if form == gimli::DW_FORM_implicit_const {
                        r.read_sleb128()?;
                    }
                }
            }
        };
        scan().unwrap_or(false)
    }

    fn endian_u32(&self, b: &[u8]) -> u32 {
        let b: [u8; 4] = b.try_into().unwrap_or_default();
        match self.endian {
            gimli::RunTimeEndian::Little => u32::from_le_bytes(b),
            gimli::RunTimeEndian::Big => u32::from_be_bytes(b),
        }
    }

    fn endian_u64(&self, b: &[u8]) -> u64 {
        let b: [u8; 8] = b.try_into().unwrap_or_default();
        match self.endian {
            gimli::RunTimeEndian::Little => u64::from_le_bytes(b),
            gimli::RunTimeEndian::Big => u64::from_be_bytes(b),
        }
    }
}

/// The non-empty entries of `.debug_aranges` by begin, and its sets as (unit offset, set
/// offset) by unit offset, as addr2line reads them; none when the section is unreadable.
fn read_aranges(
    bytes: &Arc<[u8]>,
    endian: gimli::RunTimeEndian,
) -> (Vec<Arange>, Vec<(usize, usize)>) {
    let section = gimli::DebugAranges::from(Reader::new(Arc::clone(bytes), endian));
    let mut aranges = Vec::new();
    let mut sets = Vec::new();
    let mut read = || -> Result<(), gimli::Error> {
        let mut headers = section.headers();
        while let Some(h) = headers.next()? {
            let (unit, set) = (h.debug_info_offset().0, h.offset().0);
            sets.push((unit, set));
            let mut entries = h.entries();
            while let Some(e) = entries.next()? {
                if e.length() != 0 {
                    let r = e.range();
                    aranges.push(Arange {
                        begin: r.begin,
                        end: r.end,
                        unit,
                        reach: 0,
                    });
                }
            }
        }
        Ok(())
    };
    if read().is_err() {
        // addr2line reads no unit of a file whose `.debug_aranges` it cannot read.
        return (Vec::new(), Vec::new());
    }
    aranges.sort_by_key(|a| a.begin);
    let mut reach = 0;
    for a in &mut aranges {
        reach = reach.max(a.end);
        a.reach = reach;
    }
    sets.sort_unstable();
    (aranges, sets)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn zlib(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn inflating(stream: Vec<u8>, size: usize) -> SectionBytes {
        SectionBytes::inflating(&stream, size)
    }

    #[test]
    fn a_section_is_inflated_as_far_as_asked_then_goes_on() {
        // Bytes that hardly compress, as a section's inflate in step with the stream.
        let mut x = 1u64;
        let data: Vec<u8> = (0..1_600_000)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (x >> 56) as u8
            })
            .collect();
        let mut s = inflating(zlib(&data), data.len());
        assert_eq!(s.prefix(10).unwrap(), &data[..10]);
        let SectionBytes::Inflating { out, .. } = &s else {
            panic!("inflated whole");
        };
        assert!(out.len() < data.len());
        assert_eq!(s.prefix(300_000).unwrap(), &data[..300_000]);
        assert_eq!(s.prefix(usize::MAX).unwrap(), &data[..]);
        assert_eq!(&*s.whole().unwrap(), &data[..]);
    }

    #[test]
    fn a_truncated_or_short_stream_is_unreadable() {
        let data = vec![7u8; 100_000];
        let stream = zlib(&data);
        let mut cut = inflating(stream[..stream.len() / 2].to_vec(), data.len());
        assert!(cut.whole().is_none());
        assert!(cut.prefix(1).is_none());
        // A header that claims more than the stream holds.
        let mut long = inflating(stream, data.len() + 1);
        assert!(long.whole().is_none());
    }

    #[test]
    fn the_units_covering_an_address_are_found_among_overlapping_entries() {
        let entry = |begin, end, unit| Arange {
            begin,
            end,
            unit,
            reach: 0,
        };
        let mut aranges = vec![
            entry(0x100, 0x200, 1),
            entry(0x150, 0x160, 2),
            entry(0x300, 0x400, 3),
            entry(0x380, 0x390, 3),
            entry(0x1000, 0x1010, 4),
        ];
        let mut reach = 0;
        for a in &mut aranges {
            reach = reach.max(a.end);
            a.reach = reach;
        }
        let dwarf = ObjectDwarf {
            endian: gimli::RunTimeEndian::Little,
            sections: Vec::new(),
            info: RefCell::new(SectionBytes::Unreadable),
            abbrev: Arc::from(&[][..]),
            aranges_bytes: Arc::from(&[][..]),
            aranges,
            sets: Vec::new(),
            units: RefCell::default(),
            others: OnceCell::new(),
            whole: OnceCell::new(),
        };
        let one = |addr| match dwarf.covering(addr) {
            Covering::One(u) => Some(u),
            Covering::None => None,
            Covering::Several => Some(0),
        };
        assert_eq!(one(0x120), Some(1));
        assert_eq!(one(0x155), Some(0));
        assert_eq!(one(0x160), Some(1));
        assert_eq!(one(0x385), Some(3));
        assert_eq!(one(0x200), None);
        assert_eq!(one(0x50), None);
        assert_eq!(one(0x100f), Some(4));
        assert_eq!(one(0x1010), None);
    }
}
