//! Symbols of ELF files as perf 6.1's `dso__load_sym` reads them: the `.symtab` (or
//! `.dynsym`) of the file with the symbols, placed by the sections of the file that
//! was mapped, and the `name@plt` entries perf makes for the PLT.

use std::sync::Arc;

use object::read::elf::{
    FileHeader, ProgramHeader, SectionHeader, SectionTable, Sym as ElfSym,
    SymbolTable as ElfSymbolTable,
};
use object::{Endian, Endianness, Object};

use super::{
    drop_duplicates, fix_ends, Binding, Builder, Names, SharedBytes, Sym, SymbolTable, TreeHistory,
    NUL_ENDED,
};

/// An ELF file's header and section table.
struct ElfParts<'d, H: FileHeader> {
    data: &'d [u8],
    header: &'d H,
    endian: Endianness,
    sections: SectionTable<'d, H>,
}

impl<'d, H: FileHeader<Endian = Endianness>> ElfParts<'d, H> {
    fn parse(data: &'d [u8]) -> Result<ElfParts<'d, H>, String> {
        let header = H::parse(data).map_err(|e| e.to_string())?;
        let endian = header.endian().map_err(|e| e.to_string())?;
        let sections = header.sections(endian, data).map_err(|e| e.to_string())?;
        Ok(ElfParts {
            data,
            header,
            endian,
            sections,
        })
    }

    /// perf's `elf_section_by_name`: the first section of that name, and its index.
    fn section_by_name(&self, name: &str) -> Option<(usize, &'d H::SectionHeader)> {
        self.sections
            .iter()
            .enumerate()
            .find(|(_, s)| self.name_of(s) == name.as_bytes())
    }

    /// The first section named `name` when it is of type `ty` (perf's symbol tables
    /// are found so: `.symtab` of type `SHT_SYMTAB`, `.dynsym` of type `SHT_DYNSYM`).
    fn table(&self, name: &str, ty: u32) -> Option<(usize, &'d H::SectionHeader)> {
        self.section_by_name(name)
            .filter(|(_, s)| s.sh_type(self.endian) == ty)
    }

    fn name_of(&self, s: &H::SectionHeader) -> &'d [u8] {
        self.sections.section_name(self.endian, s).unwrap_or(&[])
    }
}

/// The symbols of `runtime` (and of its debug file) as [`SymbolTable::from_elf`] says.
pub(super) fn load_elf<H: FileHeader<Endian = Endianness>>(
    runtime: &[u8],
    debug: Option<&[u8]>,
    [shared_runtime, shared_debug]: [Option<&SharedBytes>; 2],
    load: super::Load,
) -> Result<SymbolTable, String> {
    use object::elf::{SHT_DYNSYM, SHT_SYMTAB};
    let rt = ElfParts::<H>::parse(runtime)?;
    let segments = rt.header.program_headers(rt.endian, runtime).unwrap_or(&[]);
    let dbg = debug
        .and_then(|d| ElfParts::<H>::parse(d).ok())
        .filter(|d| d.table(".symtab", SHT_SYMTAB).is_some());
    let src = dbg.as_ref().unwrap_or(&rt);
    let shared = if dbg.is_some() {
        shared_debug
    } else {
        shared_runtime
    };
    // Every symbol inserted, in order (its `seq` is its place here), and the table as
    // it stands: address-sorted, in perf's tree order among equal addresses.
    let mut inserted = Builder {
        names: shared.map_or_else(Names::default, |f| Names::in_file(Arc::clone(f))),
        all_plain: !load.demangle,
        ..Builder::default()
    };
    let mut table: Vec<Sym> = Vec::new();
    let mut history = TreeHistory::default();
    let mut complete = true;
    let mut undecided = Vec::new();
    for (name, ty) in [(".symtab", SHT_SYMTAB), (".dynsym", SHT_DYNSYM)] {
        let Some((index, section)) = src.table(name, ty) else {
            continue;
        };
        let read = read_symbols(src, &rt, segments, index, section, &mut inserted);
        let chunk = std::mem::take(&mut inserted.syms);
        for s in &chunk {
            history.insert(s.start);
        }
        let any = !chunk.is_empty();
        table = merge_sorted(table, chunk);
        if !read {
            complete = false;
            break;
        }
        if any {
            fix_ends(&mut table, false);
            table = drop_duplicates(
                &inserted.names,
                table,
                |_| 0,
                &mut history.ops,
                (!load.eager).then_some(&mut undecided),
            );
        }
    }
    // perf adds the `.plt` symbols after the fixes, as they are, when the file gave
    // symbols without an error.
    if complete && inserted.pushed > 0 {
        plt_symbols(&rt, &mut inserted);
        let chunk = std::mem::take(&mut inserted.syms);
        for s in &chunk {
            history.insert(s.start);
        }
        table = merge_sorted(table, chunk);
    }
    let mut t = SymbolTable::of_sorted(table, inserted.names, Some(history), undecided);
    t.incomplete = !complete;
    Ok(t)
}

/// `table` (sorted by start, then insertion) with `chunk` (inserted after all of it)
/// sorted in.
fn merge_sorted(table: Vec<Sym>, chunk: Vec<Sym>) -> Vec<Sym> {
    let chunk = sorted_by_start(chunk);
    if table.is_empty() {
        return chunk;
    }
    let mut out = Vec::with_capacity(table.len() + chunk.len());
    let (mut a, mut b) = (0, 0);
    while let (Some(x), Some(y)) = (table.get(a), chunk.get(b)) {
        // On equal starts the earlier insertion goes first, as in perf's tree.
        if y.start < x.start {
            out.push(*y);
            b += 1;
        } else {
            out.push(*x);
            a += 1;
        }
    }
    out.extend_from_slice(&table[a..]);
    out.extend_from_slice(&chunk[b..]);
    out
}

/// `keys` in ascending order: a least-significant-byte-first radix sort for long lists,
/// which skips the bytes all keys share (the top ones of addresses near each other).
/// The keys come in ascending order of their low `sorted_bytes` bytes: a radix sort
/// keeps that order among keys equal above them, so it sorts by the bytes above only.
fn sort_keys(keys: &mut Vec<u64>, sorted_bytes: usize) {
    /// Below this many keys the general sort is as quick.
    const RADIX_FROM: usize = 1024;
    if keys.len() < RADIX_FROM {
        keys.sort_unstable();
        return;
    }
    let mut counts = vec![[0usize; 256]; 8 - sorted_bytes];
    for &k in keys.iter() {
        for (byte, count) in counts.iter_mut().enumerate() {
            count[(k >> (8 * (byte + sorted_bytes))) as u8 as usize] += 1;
        }
    }
    let mut other = vec![0u64; keys.len()];
    for (byte, count) in counts.iter().enumerate() {
        if count.contains(&keys.len()) {
            continue;
        }
        let byte = byte + sorted_bytes;
        let mut next = [0usize; 256];
        let mut sum = 0;
        for (slot, &n) in next.iter_mut().zip(count) {
            *slot = sum;
            sum += n;
        }
        for &k in keys.iter() {
            let slot = &mut next[(k >> (8 * byte)) as u8 as usize];
            other[*slot] = k;
            *slot += 1;
        }
        std::mem::swap(keys, &mut other);
    }
}

/// `syms` (in insertion order) sorted by start, then insertion.
///
/// A big library's table has a few hundred thousand symbols of 40 bytes: they are
/// sorted as 8-byte keys (the start above the place in the list, when both fit) and
/// moved once, rather than swapped about by a general sort.
fn sorted_by_start(mut syms: Vec<Sym>) -> Vec<Sym> {
    const PLACE_BITS: u32 = 24;
    let fits = syms.len() < 1 << PLACE_BITS
        && syms.iter().all(|s| s.start >> (64 - PLACE_BITS) == 0)
        && syms.windows(2).all(|w| w[0].seq < w[1].seq);
    if !fits {
        syms.sort_unstable_by_key(|s| (s.start, s.seq));
        return syms;
    }
    if syms.windows(2).all(|w| w[0].start <= w[1].start) {
        return syms;
    }
    let mut keys: Vec<u64> = syms
        .iter()
        .enumerate()
        .map(|(i, s)| s.start << PLACE_BITS | i as u64)
        .collect();
    // The places count up: only the starts' bytes need sorting.
    sort_keys(&mut keys, PLACE_BITS as usize / 8);
    let mask = (1u64 << PLACE_BITS) - 1;
    keys.iter().map(|k| syms[(k & mask) as usize]).collect()
}

/// perf's `dso__load_sym_internal` on one symbol table of `src`: the symbols it keeps,
/// added to `b`. False when it stopped at a symbol naming a section `src` does not have
/// (or at a table it cannot read).
fn read_symbols<H: FileHeader<Endian = Endianness>>(
    src: &ElfParts<'_, H>,
    rt: &ElfParts<'_, H>,
    segments: &[H::ProgramHeader],
    index: usize,
    section: &H::SectionHeader,
    b: &mut Builder,
) -> bool {
    use object::elf::{
        EM_AARCH64, EM_ARM, PT_LOAD, SHF_ALLOC, SHN_ABS, SHN_UNDEF, SHT_NOBITS, STB_GLOBAL,
        STB_WEAK, STT_FUNC, STT_GNU_IFUNC, STT_NOTYPE, STT_OBJECT, STV_HIDDEN, STV_INTERNAL,
    };
    let e = src.endian;
    let Ok(symbols) = ElfSymbolTable::parse(
        e,
        src.data,
        &src.sections,
        object::SectionIndex(index),
        section,
    ) else {
        return false;
    };
    // Room for every symbol and name of the table (its string table's size, which the
    // file holds, bounds the names).
    b.syms.reserve(symbols.len());
    let strings_size = src
        .sections
        .section(object::SectionIndex(section.sh_link(e) as usize))
        .map_or(0, |s| s.sh_size(e).into());
    if b.names.file.is_none() {
        b.names
            .own
            .reserve(usize::try_from(strings_size).map_or(0, |n| n.min(src.data.len())));
    }
    // Where the string table is in the file the table keeps its names in, when it
    // ends in a NUL (as ELF says it must): every name is then found there when it is
    // needed, at the offset the symbol gives, and is never read otherwise.
    let in_file = src
        .sections
        .section(object::SectionIndex(section.sh_link(e) as usize))
        .ok()
        .and_then(|s| s.data(e, src.data).ok())
        .filter(|strings| strings.last() == Some(&0))
        .and_then(|strings| Some((b.names.file_offset(strings)?, strings.len() as u64)));
    let arm = matches!(src.header.e_machine(e), EM_ARM | EM_AARCH64);
    /// What a symbol's section says about it.
    #[derive(Clone, Copy)]
    struct Place {
        loaded: bool,
        text_or_data: bool,
        /// The section's address less its file offset: what moves a symbol outside
        /// every loaded segment.
        bias: u64,
    }
    // Per section index, looked up once: None while not looked up, then the section's
    // place, or that it does not exist.
    let mut places: Vec<Option<Result<Place, ()>>> = vec![None; src.sections.len()];
    let mut place = |shndx: usize| -> Result<Place, ()> {
        if let Some(Some(p)) = places.get(shndx) {
            return *p;
        }
        let found = (|| {
            let s = src
                .sections
                .section(object::SectionIndex(shndx))
                .map_err(|_| ())?;
            let loaded = s.sh_flags(e).into() & u64::from(SHF_ALLOC) != 0;
            // A section without bytes in a debug file is taken from the mapped file
            // (the one of the same index), as perf does.
            let (name, header) = if s.sh_type(e) == SHT_NOBITS {
                let r = rt
                    .sections
                    .section(object::SectionIndex(shndx))
                    .map_err(|_| ())?;
                (rt.name_of(r), r)
            } else {
                (src.name_of(s), s)
            };
            let text_or_data = memchr::memmem::find(name, b"text").is_some()
                || memchr::memmem::find(name, b"data").is_some();
            let bias = header
                .sh_addr(e)
                .into()
                .wrapping_sub(header.sh_offset(e).into());
            Ok(Place {
                loaded,
                text_or_data,
                bias,
            })
        })();
        if let Some(slot) = places.get_mut(shndx) {
            *slot = Some(found);
        }
        found
    };
    // The loaded segments that hold something, in order: their first address, the
    // address after them, and the difference between addresses and file offsets.
    let loads: Vec<(u64, u64, u64)> = segments
        .iter()
        .filter(|p| p.p_type(e) == PT_LOAD)
        .filter_map(|p| {
            let size = p.p_memsz(e).into().max(p.p_filesz(e).into());
            let vaddr: u64 = p.p_vaddr(e).into();
            (size != 0).then(|| {
                let bias = vaddr.wrapping_sub(p.p_offset(e).into());
                (vaddr, vaddr.wrapping_add(size), bias)
            })
        })
        .collect();
    for sym in symbols.symbols() {
        let (kind, shndx) = (sym.st_type(), sym.st_shndx(e));
        if sym.st_name(e) == 0 || shndx == SHN_UNDEF {
            continue;
        }
        let visibility = sym.st_visibility();
        let label = kind == STT_NOTYPE
            && shndx != SHN_ABS
            && visibility != STV_HIDDEN
            && visibility != STV_INTERNAL;
        if !label && !matches!(kind, STT_FUNC | STT_GNU_IFUNC | STT_OBJECT) {
            continue;
        }
        // A name at an offset past the strings is no name: the symbol is skipped.
        let name: &[u8] = match in_file {
            Some((_, size)) if u64::from(sym.st_name(e)) >= size => continue,
            // Read only where it decides.
            Some(_) if !arm => &[],
            _ => match sym.name(e, symbols.strings()) {
                Ok(name) => name,
                Err(_) => continue,
            },
        };
        // ARM's mapping symbols (`$a`, `$d`, `$t`, `$x`, maybe with a `.suffix`).
        if arm
            && name.first() == Some(&b'$')
            && name.get(1).is_some_and(|c| b"adtx".contains(c))
            && matches!(name.get(2), None | Some(b'.'))
        {
            continue;
        }
        if shndx == SHN_ABS {
            continue;
        }
        // perf asks libelf for the section by this number and gives up on the whole
        // file when there is none (SHN_COMMON and SHN_XINDEX included).
        let Ok(place) = place(usize::from(shndx)) else {
            return false;
        };
        if !place.loaded || (label && !place.text_or_data) {
            continue;
        }
        let value: u64 = sym.st_value(e).into();
        // perf's `elf_read_program_header`: the first loaded segment holding the
        // address moves it to its file offset; for an address outside them all (a
        // file without segments) the section does.
        let bias = loads
            .iter()
            .find(|&&(from, to, _)| value >= from && value < to)
            .map_or(place.bias, |&(_, _, bias)| bias);
        let start = value.wrapping_sub(bias);
        let binding = match sym.st_bind() {
            STB_WEAK => Binding::Weak,
            STB_GLOBAL => Binding::Global,
            _ => Binding::Local,
        };
        let size: u64 = sym.st_size(e).into();
        let end = start.wrapping_add(size);
        // A name stays in the file when the table keeps it (found at its NUL when first
        // needed), else it is copied.
        if let Some((strings_at, _)) = in_file {
            let at = strings_at + sym.st_name(e);
            b.push_at(start, end, binding, at, NUL_ENDED, false, 0);
            continue;
        }
        match (std::str::from_utf8(name), b.names.file_offset(name)) {
            (Ok(_), Some(at)) => b.push_at(start, end, binding, at, name.len() as u32, false, 0),
            (Ok(n), None) => b.push(start, end, binding, n, false),
            (Err(_), _) => b.push(start, end, binding, &String::from_utf8_lossy(name), false),
        }
    }
    true
}

/// perf 6.1's `dso__synthesize_plt_symbols`: one `name@plt` symbol per `.rela.plt` (or
/// `.rel.plt`) entry, in order, placed in `.plt` after its header. On x86 both the header
/// and each entry are `.plt`'s `sh_entsize` long, so a `.plt` that does not say (lld
/// leaves it 0) gets all its symbols at its start, holding one address.
fn plt_symbols<H: FileHeader<Endian = Endianness>>(rt: &ElfParts<'_, H>, b: &mut Builder) {
    use object::elf::{EM_AARCH64, EM_ARM, EM_SPARC, EM_SPARCV9, SHT_DYNSYM, SHT_REL, SHT_RELA};
    let e = rt.endian;
    let Some((dynsym_index, dynsym)) = rt.table(".dynsym", SHT_DYNSYM) else {
        return;
    };
    let Some((_, rel)) = rt
        .section_by_name(".rela.plt")
        .or_else(|| rt.section_by_name(".rel.plt"))
    else {
        return;
    };
    if rel.sh_link(e) as usize != dynsym_index {
        return;
    }
    let Some((_, plt)) = rt.section_by_name(".plt") else {
        return;
    };
    let Ok(dynsyms) = ElfSymbolTable::parse(
        e,
        rt.data,
        &rt.sections,
        object::SectionIndex(dynsym_index),
        dynsym,
    ) else {
        return;
    };
    let strings_empty = rt
        .sections
        .section(object::SectionIndex(dynsym.sh_link(e) as usize))
        .map_or(true, |s| s.sh_size(e).into() == 0);
    let Ok(entries) = rel.data(e, rt.data) else {
        return;
    };
    let entsize: u64 = rel.sh_entsize(e).into();
    if strings_empty || entsize == 0 {
        return;
    }
    let count = rel.sh_size(e).into() / entsize;
    let plt_entsize: u64 = plt.sh_entsize(e).into();
    let (header, entry) = match rt.header.e_machine(e) {
        EM_ARM => (20, 12),
        EM_AARCH64 => (32, 16),
        EM_SPARC => (48, 12),
        EM_SPARCV9 => (128, 32),
        _ => (plt_entsize, plt_entsize),
    };
    let wide = rt.header.is_type_64();
    // Each entry's size as libelf reads it, and where its `r_info` is.
    let (stride, info_at) = match (rel.sh_type(e), wide) {
        (SHT_RELA, true) => (24, 8),
        (SHT_REL, true) => (16, 8),
        (SHT_RELA, false) => (12, 4),
        (SHT_REL, false) => (8, 4),
        _ => return,
    };
    let mut at = plt.sh_offset(e).into().wrapping_add(header);
    for i in 0..count as usize {
        let Some(r) = entries.get(i * stride..(i + 1) * stride) else {
            break;
        };
        let symbol = if wide {
            let info: [u8; 8] = r[info_at..info_at + 8].try_into().unwrap_or([0; 8]);
            e.read_u64_bytes(info) >> 32
        } else {
            let info: [u8; 4] = r[info_at..info_at + 4].try_into().unwrap_or([0; 4]);
            u64::from(e.read_u32_bytes(info) >> 8)
        };
        let name = dynsyms
            .symbol(object::SymbolIndex(symbol as usize))
            .ok()
            .and_then(|s| s.name(e, dynsyms.strings()).ok())
            .unwrap_or_default();
        let end = at.wrapping_add(entry);
        // The shown name (demangled, with `@plt`) is made when a lookup shows it.
        match (std::str::from_utf8(name), b.names.file_offset(name)) {
            (Ok(_), Some(name_at)) => b.push_at(
                at,
                end,
                Binding::Global,
                name_at,
                name.len() as u32,
                false,
                0,
            ),
            (Ok(n), None) => b.push(at, end, Binding::Global, n, false),
            (Err(_), _) => b.push(
                at,
                end,
                Binding::Global,
                &String::from_utf8_lossy(name),
                false,
            ),
        }
        if let Some(s) = b.syms.last_mut().filter(|s| s.seq + 1 == b.pushed) {
            s.plt = true;
        }
        at = end;
    }
}

/// The symbol tables perf's `symsrc__init` finds in an ELF file: whether its first
/// section named `.symtab` is of type `SHT_SYMTAB`, and its first `.dynsym` of type
/// `SHT_DYNSYM` (perf's `symsrc__has_symtab` and `symsrc__possibly_runtime`); None
/// for a file that is not ELF.
pub fn elf_symbol_tables(data: &[u8]) -> Option<(bool, bool)> {
    use object::elf::{FileHeader32, FileHeader64, SHT_DYNSYM, SHT_SYMTAB};
    fn of<H: FileHeader<Endian = Endianness>>(data: &[u8]) -> Option<(bool, bool)> {
        let parts = ElfParts::<H>::parse(data).ok()?;
        Some((
            parts.table(".symtab", SHT_SYMTAB).is_some(),
            parts.table(".dynsym", SHT_DYNSYM).is_some(),
        ))
    }
    match object::FileKind::parse(data).ok()? {
        object::FileKind::Elf32 => of::<FileHeader32<Endianness>>(data),
        object::FileKind::Elf64 => of::<FileHeader64<Endianness>>(data),
        _ => None,
    }
}

/// The GNU build id of an ELF file.
pub fn elf_build_id(data: &[u8]) -> Option<Vec<u8>> {
    let f = object::File::parse(data).ok()?;
    f.build_id().ok().flatten().map(<[u8]>::to_vec)
}

/// A build id as perf and bfd name files by it: lower-case hex, two digits a byte.
pub(crate) fn build_id_hex(id: &[u8]) -> String {
    use std::fmt::Write;
    let mut hex = String::with_capacity(2 * id.len());
    for b in id {
        let _ = write!(hex, "{b:02x}");
    }
    hex
}

/// The debug file of build id `id` in the system's build-id tree,
/// `/usr/lib/debug/.build-id/XX/REST.debug`; None for an id too short to split.
pub(crate) fn build_id_debug_path(id: &[u8]) -> Option<String> {
    let hex = build_id_hex(id);
    (id.len() > 1).then(|| format!("/usr/lib/debug/.build-id/{}/{}.debug", &hex[..2], &hex[2..]))
}

#[cfg(test)]
mod tests {
    use super::sort_keys;

    /// The radix sort orders keys as the general sort does: short and long lists,
    /// keys that differ in a few low bytes only, in all bytes, and repeated keys.
    #[test]
    fn sort_keys_orders_as_the_general_sort() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut random = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for n in [0, 1, 5, 1023, 1024, 5000, 70_000] {
            for mask in [0xffu64, 0xff_ffff_0000, u64::MAX, 0x7] {
                let keys: Vec<u64> = (0..n).map(|_| random() & mask | 1 << 40).collect();
                let mut expected = keys.clone();
                expected.sort_unstable();
                let mut sorted = keys;
                sort_keys(&mut sorted, 0);
                assert_eq!(sorted, expected, "{n} keys under {mask:#x}");
            }
            // Keys whose low three bytes count up (a place in a list), many equal above
            // them, sorted by the bytes above them only.
            let keys: Vec<u64> = (0..n)
                .map(|i| (random() & 0xf_0000_0f00) << 24 | i as u64)
                .collect();
            let mut expected = keys.clone();
            expected.sort_unstable();
            let mut sorted = keys;
            sort_keys(&mut sorted, 3);
            assert_eq!(sorted, expected, "{n} keys above their places");
        }
    }
}
