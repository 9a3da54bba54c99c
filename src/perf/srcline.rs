//! Source lines of sampled addresses as perf 6.1 prints them (`--sort srcline`,
//! `srcfile`): perf asks binutils' `addr2line -f -i` about the address in the object's
//! file and keeps `basename:LINE` of its first answer; when addr2line finds nothing
//! there, perf prints `symbol+OFFSET` (decimal) or `object[ADDRESS]` instead.
//!
//! The DWARF line tables are read with the `addr2line` crate. Where an address has no
//! line, binutils answers from the symbol table (the nearest function symbol before it
//! in its section, and the `STT_FILE` symbol before that one for a local symbol): that
//! answer, `file.o:?` or `??:?`, is one perf takes as found (`file.o:0`, `??:0`).
//! Objects are read once, lazily, and every answer is kept per (object, address); how
//! many lookups in an object went without an answer is counted per call, as perf does
//! before it gives up on the object (`A2L_FAIL_LIMIT`).
//!
//! The same DWARF names the functions inlined at an address (`addr2line -i`), which
//! perf 6.1 lists at the call-chain entries its unwinder found (`append_inlines`).
//!
//! binutils 2.40 starts each sequence of a DWARF 5 line program with the name of file 0
//! where the standard's initial file register is 1 (`decode_line_info`): a row before
//! the sequence's first `DW_LNS_set_file` is named after file 0. Where a unit's file 0
//! and file 1 differ (glibc's detached debug files: ld.so's `handle_amd`, in
//! `dl-cacheinfo.h`, shows as `dl-get-cpu-features.c`, the unit's own file), perf prints
//! that name, and so do we (`FileZeroRows`).
//!
//! Not matched yet: binutils answers `file.c:?` for an address inside a unit that has
//! no line for it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use object::elf;
use object::{Object, ObjectSection, ObjectSymbol, SectionFlags, SymbolFlags};

use std::path::{Path, PathBuf};

use super::data::Sample;
use super::machine::{map_file, Location, Machine, ObjectId};
use super::sys::MappedFile;

/// What perf prints for an address it cannot place (`SRCLINE_UNKNOWN`).
pub const SRCLINE_UNKNOWN: &str = "??:0";

use super::object_dwarf::{ObjectDwarf, Reader};

/// A function-like symbol as binutils' `elf_find_function` weighs it.
#[derive(Debug)]
struct FunctionSym {
    /// The symbol's name as the table holds it (mangled).
    name: Arc<str>,
    section: usize,
    address: u64,
    size: u64,
    local: bool,
    /// The name of the last `STT_FILE` symbol before this one, and whether another
    /// symbol came between the first symbol of the table and that file symbol.
    file: Option<(Arc<str>, bool)>,
}

/// One object file's line tables and what addr2line falls back on.
struct ObjectLines {
    dwarf: ObjectDwarf,
    /// Allocated sections: index, start, size, in section header order.
    sections: Vec<(usize, u64, u64)>,
    /// Function-like symbols in symbol table order.
    functions: Vec<FunctionSym>,
    /// `.text`'s address less its file offset (perf's `text_offset`): a file-relative
    /// address plus this is the address addr2line is asked about.
    text_offset: u64,
    /// Per line program (by its `.debug_line` offset), read on first use: the rows
    /// binutils names after file 0.
    file_zero: RefCell<HashMap<usize, Option<Arc<FileZeroRows>>>>,
}

/// The rows of one DWARF 5 line program that binutils 2.40 names after file 0: those
/// of each sequence before its first `DW_LNS_set_file`, in a program whose file 0 is
/// not its file 1 (elsewhere the name is the same).
#[derive(Debug)]
struct FileZeroRows {
    /// File 0's base name.
    name: Box<str>,
    /// Address ranges, start inclusive, end exclusive.
    ranges: Vec<(u64, u64)>,
}

impl FileZeroRows {
    /// The rows of `unit`'s line program named after file 0; None when there are none.
    fn of_unit(unit: gimli::UnitRef<'_, Reader>) -> Option<FileZeroRows> {
        let program = unit.line_program.clone()?;
        let header = program.header().clone();
        if header.version() < 5 {
            return None;
        }
        let (zero, one) = (header.file(0)?, header.file(1)?);
        if zero.path_name() == one.path_name() && zero.directory_index() == one.directory_index() {
            return None;
        }
        let name = unit.attr_string(zero.path_name()).ok()?;
        let name = basename(&gimli::Reader::to_string_lossy(&name).ok()?).into();
        // gimli's row loop, keeping track of each sequence's first `set_file`.
        let tombstone = !0u64 >> (64 - u32::from(header.address_size()).clamp(1, 8) * 8);
        let mut program = program;
        let mut row = gimli::LineRow::new(&header);
        let mut instructions = header.instructions();
        let mut ranges = Vec::new();
        // The sequence's first row while its file is still the initial one, and
        // whether a row of a skipped sequence (a tombstone address) is being made.
        let (mut start, mut file_set, mut skipped) = (None::<u64>, false, false);
        while let Ok(Some(instruction)) = instructions.next_instruction(&header) {
            match instruction {
                gimli::LineInstruction::SetFile(_) => file_set = true,
                gimli::LineInstruction::SetAddress(a) => {
                    skipped = a < row.address() || a == tombstone;
                }
                _ => {}
            }
            let Ok(new_row) = row.execute(instruction, &mut program) else {
                break;
            };
            if !new_row {
                continue;
            }
            if !skipped {
                let at = row.address();
                match start {
                    None if !file_set && !row.end_sequence() => start = Some(at),
                    Some(s) if file_set || row.end_sequence() => {
                        if at > s {
                            ranges.push((s, at));
                        }
                        start = None;
                    }
                    _ => {}
                }
            }
            if row.end_sequence() {
                (start, file_set, skipped) = (None, false, false);
            }
            row.reset(&header);
        }
        if ranges.is_empty() {
            return None;
        }
        ranges.sort_unstable();
        Some(FileZeroRows { name, ranges })
    }

    /// Whether the row at `addr` is one of these.
    fn contains(&self, addr: u64) -> bool {
        let i = self.ranges.partition_point(|&(start, _)| start <= addr);
        i > 0 && addr < self.ranges[i - 1].1
    }
}

impl ObjectLines {
    /// The lines of `data`, the file at `path` addr2line is asked about; `runtime` is
    /// the mapped file when `data` is its separate debug file.
    fn parse(path: &Path, data: &[u8], runtime: Option<&[u8]>) -> Option<ObjectLines> {
        let file = object::File::parse(data).ok()?;
        // Like bfd, the DWARF of a file without it comes from its separate debug file.
        let separate = if file.section_by_name(".debug_line").is_none() {
            separate_debug_file(path, &file)
        } else {
            None
        };
        let separate = separate
            .as_ref()
            .and_then(|m| object::File::parse(m.bytes()).ok());
        let dwarf_file = separate.as_ref().unwrap_or(&file);
        let dwarf = ObjectDwarf::new(dwarf_file);
        let sections = file
            .sections()
            .filter(|s| match s.flags() {
                SectionFlags::Elf { sh_flags } => sh_flags & u64::from(elf::SHF_ALLOC) != 0,
                _ => false,
            })
            .map(|s| (s.index().0, s.address(), s.size()))
            .collect();
        let mut symbols: Vec<_> = file.symbols().collect();
        if symbols.is_empty() {
            symbols = file.dynamic_symbols().collect();
        }
        let mut functions = Vec::new();
        let mut file_sym: Option<Arc<str>> = None;
        // binutils' nothing_seen / symbol_seen / file_after_symbol_seen.
        let mut symbol_seen = false;
        let mut file_after_symbol = false;
        for s in symbols {
            // bfd leaves out the null symbol that opens the table.
            let SymbolFlags::Elf { st_info, st_other } = s.flags() else {
                continue;
            };
            if s.index().0 == 0 {
                continue;
            }
            let kind = st_info & 0xf;
            if kind == elf::STT_FILE {
                file_sym = Some(Arc::from(s.name().unwrap_or("")));
                if symbol_seen {
                    file_after_symbol = true;
                }
                continue;
            }
            symbol_seen = true;
            let local = st_info >> 4 == elf::STB_LOCAL;
            let hidden = st_other & 3 == elf::STV_HIDDEN;
            // What bfd's maybe_function_sym passes over: sections, data, thread-local
            // data, and annobin's notes (hidden local untyped symbols without a size).
            let annobin_note = s.size() == 0 && local && kind == elf::STT_NOTYPE && hidden;
            if matches!(kind, elf::STT_SECTION | elf::STT_OBJECT | elf::STT_TLS) || annobin_note {
                continue;
            }
            let Some(section) = s.section_index() else {
                continue;
            };
            functions.push(FunctionSym {
                name: Arc::from(s.name().unwrap_or("")),
                section: section.0,
                // bfd keeps symbol values relative to their sections; within one
                // section the file's addresses order them the same way.
                address: s.address(),
                size: s.size().max(1),
                local,
                file: file_sym.clone().map(|f| (f, file_after_symbol)),
            });
        }
        let text_of = |data: &[u8]| {
            let f = object::File::parse(data).ok()?;
            let t = f.section_by_name(".text")?;
            let (offset, _) = t.file_range()?;
            Some(t.address().wrapping_sub(offset))
        };
        Some(ObjectLines {
            dwarf,
            sections,
            functions,
            text_offset: text_of(runtime.unwrap_or(data)).unwrap_or(0),
            file_zero: RefCell::default(),
        })
    }

    /// The rows of `addr`'s line program that binutils names after file 0, when the
    /// row at `addr` is one of them; else None.
    fn file_zero_at(&self, addr: u64) -> Option<Arc<FileZeroRows>> {
        let context = self.dwarf.context_for(addr)?;
        let unit = context.find_dwarf_and_unit(addr).skip_all_loads()?;
        let offset = unit.line_program.as_ref()?.header().offset().0;
        let rows = self
            .file_zero
            .borrow_mut()
            .entry(offset)
            .or_insert_with(|| FileZeroRows::of_unit(unit).map(Arc::new))
            .clone()?;
        rows.contains(addr).then_some(rows)
    }

    /// `FILE:LINE` as perf keeps addr2line's answer from the line table's row at `addr`,
    /// which names `file` (a path) and `line`: the base name of the file binutils names.
    fn row_srcline(&self, addr: u64, file: &str, line: Option<u32>) -> String {
        let line = line.unwrap_or(0);
        match self.file_zero_at(addr) {
            Some(rows) => format!("{}:{line}", rows.name),
            None => format!("{}:{line}", basename(file)),
        }
    }

    /// What `addr2line -f -i` names at `addr` from the DWARF: the functions inlined
    /// there, innermost first, then the function they were inlined into (each as
    /// perf shows it, demangled), each with its record's line (`file:LINE`, the
    /// file's base name: the address's own line for the innermost, the call's line
    /// for the others). None when no DWARF function holds the address.
    fn inline_chain(&self, addr: u64, demangle: bool) -> Option<Vec<InlineFrame>> {
        /// perf's `MAX_INLINE_NEST`.
        const MAX_NEST: usize = 1024;
        if !self
            .sections
            .iter()
            .any(|&(_, start, size)| addr >= start && addr - start < size)
        {
            return None;
        }
        let context = self.dwarf.context_for(addr)?;
        let mut frames = context.find_frames(addr).skip_all_loads().ok()?;
        let mut names = Vec::new();
        let mut innermost = true;
        while let Ok(Some(frame)) = frames.next() {
            let name = frame
                .function
                .as_ref()
                .and_then(|f| f.raw_name().ok())
                .map(|n| shown(&n, demangle));
            // perf's `srcline_from_fileline`; addr2line prints `??` for no file and
            // `?` for no line, which perf reads as 0. The innermost frame's line is
            // the line table's row at `addr`; the others are their calls' lines.
            let srcline = match frame
                .location
                .as_ref()
                .and_then(|l| l.file.map(|f| (f, l.line)))
            {
                Some((file, line)) if innermost => self.row_srcline(addr, file, line),
                Some((file, line)) => format!("{}:{}", basename(file), line.unwrap_or(0)),
                None => SRCLINE_UNKNOWN.to_string(),
            };
            innermost = false;
            names.push((name, srcline.into_boxed_str()));
            if names.len() > MAX_NEST {
                break;
            }
        }
        if names.iter().all(|(n, _)| n.is_none()) {
            return None;
        }
        // addr2line prints `??` for a frame it cannot name.
        Some(
            names
                .into_iter()
                .map(|(n, srcline)| InlineFrame {
                    name: n.unwrap_or_else(|| "??".into()),
                    srcline,
                })
                .collect(),
        )
    }

    /// addr2line's first answer for `addr` as perf keeps it (`file:LINE`, the file's
    /// base name), or None when addr2line finds nothing.
    fn lookup(&self, addr: u64) -> Option<String> {
        if !self
            .sections
            .iter()
            .any(|&(_, start, size)| addr >= start && addr - start < size)
        {
            return None;
        }
        let context = self.dwarf.context_for(addr);
        if let Some(loc) = context
            .as_ref()
            .and_then(|c| c.find_location(addr).ok().flatten())
        {
            if let Some(file) = loc.file {
                return Some(self.row_srcline(addr, file, loc.line));
            }
        }
        let f = self.function_symbol(addr)?;
        let file = match &f.file {
            Some((name, after_symbol)) if f.local || !after_symbol => basename(name),
            _ => "??",
        };
        Some(format!("{file}:0"))
    }

    /// The function binutils' `elf_find_function` names at `addr` from the symbol
    /// table: in the first allocated section holding `addr` that has one, the symbol
    /// of the largest start not above the address (of two at one start, the larger,
    /// and of equal ones the first); no end is checked.
    fn function_symbol(&self, addr: u64) -> Option<&FunctionSym> {
        let containing = self
            .sections
            .iter()
            .filter(|&&(_, start, size)| addr >= start && addr - start < size);
        for &(index, _, _) in containing {
            let mut best: Option<&FunctionSym> = None;
            for f in &self.functions {
                if f.section != index || f.address > addr {
                    continue;
                }
                let better = match best {
                    None => true,
                    Some(b) => f.address > b.address || (f.address == b.address && f.size > b.size),
                };
                if better {
                    best = Some(f);
                }
            }
            if best.is_some() {
                return best;
            }
        }
        None
    }
}

/// The separate debug file bfd reads a file's DWARF from: by build id under
/// `/usr/lib/debug/.build-id`, else by `.gnu_debuglink` next to the file, in its
/// `.debug` directory, or under `/usr/lib/debug`.
fn separate_debug_file(path: &Path, file: &object::File<'_>) -> Option<MappedFile> {
    let mut candidates = Vec::new();
    if let Some(path) = file
        .build_id()
        .ok()
        .flatten()
        .and_then(super::symbols::build_id_debug_path)
    {
        candidates.push(PathBuf::from(path));
    }
    if let Some((name, _crc)) = file.gnu_debuglink().ok().flatten() {
        let name = Path::new(std::str::from_utf8(name).ok()?);
        let dir = path.parent().unwrap_or(Path::new("/"));
        candidates.push(dir.join(name));
        candidates.push(dir.join(".debug").join(name));
        candidates.push(
            Path::new("/usr/lib/debug")
                .join(dir.strip_prefix("/").unwrap_or(dir))
                .join(name),
        );
    }
    candidates
        .iter()
        .filter(|p| p.as_path() != path)
        .filter_map(|p| map_file(p))
        .find(|m| {
            object::File::parse(m.bytes()).is_ok_and(|f| f.section_by_name(".debug_line").is_some())
        })
}

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// One function addr2line names at an address (perf's `struct inline_list`).
#[derive(Debug)]
pub struct InlineFrame {
    /// The function, demangled.
    pub name: Box<str>,
    /// Its record's source line, as perf keeps it with the call-chain entry.
    pub srcline: Box<str>,
}

/// The functions addr2line names at one address, innermost first, ending with the
/// one the others were inlined into.
pub type InlineChain = Arc<[InlineFrame]>;

/// The source lines of one report's addresses: objects read on first use, answers
/// kept per (object, address).
#[derive(Default)]
pub struct SourceLines {
    objects: HashMap<ObjectId, Option<ObjectLines>>,
    answers: HashMap<(ObjectId, u64), Option<String>>,
    inlined: HashMap<(ObjectId, u64), Option<InlineChain>>,
    /// perf's `dso->a2l_fails` per object: 1 until addr2line first answers there, then
    /// 0 for good; above [`A2L_FAIL_LIMIT`] perf stops asking about the object.
    fails: HashMap<ObjectId, u32>,
}

/// A function's name from the DWARF or the symbol table as perf shows it: demangled,
/// or as stored under `--no-demangle`.
fn shown(name: &str, demangle: bool) -> Box<str> {
    if demangle {
        super::symbols::demangle(name).into_boxed_str()
    } else {
        name.into()
    }
}

/// perf 6.1's `A2L_FAIL_LIMIT`: after this many lookups in one object without one
/// answer (counting from 1), perf clears the object's `has_srcline` and shows every
/// later address in it with its fallback. The lookups are counted as perf makes them,
/// once per call, in the order the samples come: in a `-g` recording whose first
/// samples in an object are all call-chain entries (asked about as sampled, which
/// never has an answer), the object's own samples that come after the 122nd of those
/// print `symbol+OFFSET` even where the line tables have a line (libc's `__poll+7`
/// where the first samples were in the kernel under `__poll`). Which recording does
/// so depends on when the program's first user-mode sample in the object came, not on
/// the load at report time: perf 6.1 reads addr2line's answers without a timeout.
const A2L_FAIL_LIMIT: u32 = 123;

impl std::fmt::Debug for SourceLines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceLines")
            .field("objects", &self.objects.len())
            .field("answers", &self.answers.len())
            .finish()
    }
}

impl SourceLines {
    /// No objects read yet.
    pub fn new() -> SourceLines {
        SourceLines::default()
    }

    /// perf's `map__srcline(map, ip, sym)` for a location `machine` resolved: `ip` is
    /// the address perf keeps for the row (file-relative for a sample's own address,
    /// as sampled for a call chain entry; perf asks addr2line about either).
    pub fn srcline(&mut self, machine: &Machine, loc: &Location<'_>, ip: u64) -> String {
        self.lines(machine, loc, ip).0
    }

    /// perf's `get_srcline_split` for a location `machine` resolved (`-F srccode`): the
    /// file as the line table names it (a path) and the line addr2line gives for `ip`;
    /// None when it gives none, or only the symbol table's answer (line 0). Counted as
    /// one of the object's lookups, as [`SourceLines::srcline`] is.
    pub fn srcfile_line(
        &mut self,
        machine: &Machine,
        loc: &Location<'_>,
        ip: u64,
    ) -> Option<(String, u32)> {
        if !self.lines(machine, loc, ip).1 {
            return None;
        }
        let object = Self::object(&mut self.objects, machine, loc.object?, loc.dso?)?;
        let addr = if loc.kernel {
            ip
        } else {
            ip.wrapping_add(object.text_offset)
        };
        let context = object.dwarf.context_for(addr)?;
        let found = context.find_location(addr).ok().flatten()?;
        Some((found.file?.to_string(), found.line.unwrap_or(0)))
    }

    /// perf's `srcfile`: the file part of a source line addr2line gave, else empty.
    pub fn srcfile(&mut self, machine: &Machine, loc: &Location<'_>, ip: u64) -> String {
        match self.lines(machine, loc, ip) {
            (line, true) if line != SRCLINE_UNKNOWN => match line.split_once(':') {
                Some((file, _)) => file.to_string(),
                None => String::new(),
            },
            _ => String::new(),
        }
    }

    /// perf's `append_inlines` for an unwound call-chain entry `machine` resolved: the
    /// names addr2line gives for the entry's file-relative address, innermost first,
    /// ending with the function the others were inlined into; without a DWARF function
    /// there, the entry's own function with addr2line's answer from the symbol table.
    /// None when addr2line has no answer; perf then shows the entry as it is.
    fn inlines(&mut self, machine: &Machine, loc: &Location<'_>) -> Option<InlineChain> {
        let (dso, id) = (loc.dso?, loc.object?);
        let demangle = machine.symbol_conf().demangle;
        if loc.kernel || loc.sym.is_none() || !machine.symbol_conf().inline {
            return None;
        }
        let sym = loc.sym?.0;
        let object = Self::object(&mut self.objects, machine, id, dso)?;
        let addr = loc.addr.wrapping_add(object.text_offset);
        self.inlined
            .entry((id, addr))
            .or_insert_with(|| {
                // Without a DWARF function there, addr2line's one answer names the
                // function binutils picks from the symbol table, which need not be
                // perf's symbol (jemalloc's `__libc_realloc` where perf has
                // `realloc`): perf shows the entry inlined when the two differ.
                object
                    .inline_chain(addr, demangle)
                    .map(Arc::from)
                    .or_else(|| {
                        let srcline = object.lookup(addr)?;
                        let name = object
                            .function_symbol(addr)
                            .filter(|f| !f.name.is_empty())
                            .map_or_else(|| sym.into(), |f| shown(&f.name, demangle));
                        Some(Arc::from([InlineFrame {
                            name,
                            srcline: srcline.into_boxed_str(),
                        }]))
                    })
            })
            .clone()
    }

    /// perf 6.1's call chain of a sample with the functions inlined at its unwound
    /// entries (`append_inlines`): each of those entries comes once per function
    /// addr2line names there, innermost first, with the inlined function's name (None
    /// for the function the others were inlined into) and the line perf keeps with
    /// the entry (`node->srcline`, which `--sort srcline` shows for its row). Entries
    /// the sample carries (frame pointers, the kernel's) come as they are, without a
    /// line.
    pub fn callchain<'m>(
        &mut self,
        machine: &'m Machine,
        s: &Sample<'_>,
        f: impl FnMut(Location<'m>, u64, Option<&str>, Option<&str>),
    ) {
        self.callchain_limited(machine, s, usize::MAX, f);
    }

    /// [`SourceLines::callchain`] of at most `max_stack` addresses of the chain the
    /// sample carries and `max_stack` unwound ones (perf's `--max-stack`, which
    /// limits each on its own; the functions inlined at an address do not count).
    pub fn callchain_limited<'m>(
        &mut self,
        machine: &'m Machine,
        s: &Sample<'_>,
        max_stack: usize,
        mut f: impl FnMut(Location<'m>, u64, Option<&str>, Option<&str>),
    ) {
        self.callchain_entries(
            machine,
            s,
            max_stack,
            false,
            |_, _, loc, ip, inlined, line| f(loc, ip, inlined, line),
        );
    }

    /// [`SourceLines::callchain_limited`] with where each frame comes from: whether
    /// it was unwound, and the number of its entry among the sampled chain's or the
    /// unwound ones, from 0 at the sample (the frames of functions inlined at an
    /// address share it). `outermost_first`: as [`Machine::callchain_frames_limited`].
    pub fn callchain_entries<'m>(
        &mut self,
        machine: &'m Machine,
        s: &Sample<'_>,
        max_stack: usize,
        outermost_first: bool,
        mut f: impl FnMut(bool, usize, Location<'m>, u64, Option<&str>, Option<&str>),
    ) {
        let mut entries = [0, 0];
        machine.callchain_frames_limited(s, max_stack, outermost_first, |loc, ip, unwound| {
            let n = entries[usize::from(unwound)];
            entries[usize::from(unwound)] += 1;
            let mut f = |loc, ip, inlined, line| f(unwound, n, loc, ip, inlined, line);
            let inlines = if unwound {
                self.inlines(machine, &loc)
            } else {
                None
            };
            match (inlines, loc.sym) {
                (Some(frames), Some((sym, _))) => {
                    for frame in frames.iter() {
                        let inlined = (*frame.name != *sym).then_some(&*frame.name);
                        f(loc, ip, inlined, Some(&frame.srcline));
                    }
                }
                _ => f(loc, ip, None, None),
            }
        });
    }

    /// The lines of the object `id`, named `dso`, read on first use. perf asks
    /// addr2line only about objects named by a path (not `[kernel.kallsyms]`, a module
    /// or `[vdso]`), in the file it read the symbols from, or, when it found none, at
    /// the recorded path itself.
    fn object<'o>(
        objects: &'o mut HashMap<ObjectId, Option<ObjectLines>>,
        machine: &Machine,
        id: ObjectId,
        dso: &str,
    ) -> Option<&'o ObjectLines> {
        if dso.starts_with('[') {
            return None;
        }
        objects
            .entry(id)
            .or_insert_with(|| match machine.elf_files_at(id) {
                Some((runtime, debug)) => {
                    let found = debug.as_ref().unwrap_or(&runtime);
                    if found.inside {
                        // perf runs addr2line here on the path it read the symbols
                        // from, even when it read them inside another mount namespace;
                        // the address it asks about is placed by the file it read.
                        map_file(&found.path).and_then(|here| {
                            ObjectLines::parse(
                                &found.path,
                                here.bytes(),
                                Some(runtime.file.bytes()),
                            )
                        })
                    } else {
                        let runtime = debug.is_some().then(|| runtime.file.bytes());
                        ObjectLines::parse(&found.path, found.file.bytes(), runtime)
                    }
                }
                // perf adjusts addresses only in objects it read symbols from.
                None => map_file(Path::new(dso))
                    .and_then(|f| ObjectLines::parse(Path::new(dso), f.bytes(), None))
                    .map(|o| ObjectLines {
                        text_offset: 0,
                        ..o
                    }),
            })
            .as_ref()
    }

    /// The source line and whether addr2line gave it.
    fn lines(&mut self, machine: &Machine, loc: &Location<'_>, ip: u64) -> (String, bool) {
        let (Some(dso), Some(id)) = (loc.dso, loc.object) else {
            return (SRCLINE_UNKNOWN.to_string(), false);
        };
        let object = Self::object(&mut self.objects, machine, id, dso);
        let text_offset = object.map_or(0, |o| o.text_offset);
        let addr = if loc.kernel {
            ip
        } else {
            ip.wrapping_add(text_offset)
        };
        let fails = self.fails.entry(id).or_insert(1);
        let answer = match object {
            Some(o) if *fails <= A2L_FAIL_LIMIT => self
                .answers
                .entry((id, addr))
                .or_insert_with(|| o.lookup(addr))
                .clone(),
            _ => None,
        };
        // perf's `__get_srcline`: an answer ends the counting for good.
        if answer.is_some() {
            *fails = 0;
        } else if *fails > 0 {
            *fails = fails.saturating_add(1);
        }
        if let Some(line) = answer {
            return (line, true);
        }
        let fallback = match loc.sym {
            // The offset from the symbol's start in the same terms as `ip`.
            Some((name, off)) => format!("{name}+{}", ip.wrapping_sub(loc.addr.wrapping_sub(off))),
            // The object's short name: a JIT's perf map goes by `[JIT] tid PID`.
            None => match super::perf_map::jit_map_shown_name(dso) {
                Some(short) => format!("{short}[{addr:x}]"),
                None if dso.starts_with('[') => format!("{dso}[{addr:x}]"),
                None => format!("{}[{addr:x}]", basename(dso)),
            },
        };
        (fallback, false)
    }
}
