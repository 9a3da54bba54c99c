//! Symbol tables for perf samples, built with perf's rules: kernel symbols from a
//! kallsyms text, user symbols from the ELF files that MMAP records name.
//!
//! perf keeps, of several symbols at one address, the one with a size, then a non-weak
//! one, then a global one, then the one with fewer leading underscores, then the longer
//! name; a symbol without a size ends where the next one starts. [`SymbolTable`] applies
//! the same rules, so `name+0xoff` comes out as `perf script` prints it.

use std::collections::HashMap;
use std::sync::OnceLock;

use object::{Object, ObjectSection, ObjectSymbol, SymbolKind};

/// Binding of a symbol, as perf ranks them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Binding {
    Local,
    Global,
    Weak,
}

#[derive(Debug, Clone)]
struct Sym {
    start: u64,
    end: u64,
    binding: Binding,
    /// As stored (mangled).
    name: Box<str>,
    /// Demangled on first use: most symbols of a big file are never looked up.
    demangled: OnceLock<Box<str>>,
}

impl Sym {
    fn shown(&self) -> &str {
        self.demangled
            .get_or_init(|| demangle(&self.name).into_boxed_str())
    }
}

/// Address-sorted symbols with perf's duplicate and end rules.
#[derive(Debug, Clone, Default)]
pub struct SymbolTable {
    syms: Vec<Sym>,
}

/// The kernel's symbols from a kallsyms text: the core kernel and each module.
#[derive(Debug, Clone, Default)]
pub struct KernelSymbols {
    /// `[kernel.kallsyms]`.
    pub kernel: SymbolTable,
    /// Per module (`[name]` in kallsyms).
    pub modules: HashMap<String, SymbolTable>,
}

/// A symbol without a size ends where the next one starts (the last one a page on).
fn fix_ends(syms: &mut [Sym]) {
    for i in 1..syms.len() {
        if syms[i - 1].end == syms[i - 1].start {
            syms[i - 1].end = syms[i].start;
        }
    }
    if let Some(last) = syms.last_mut() {
        if last.end == last.start {
            last.end = last
                .start
                .div_ceil(4096)
                .saturating_mul(4096)
                .saturating_add(4096);
        }
    }
}

fn underscores(s: &str) -> usize {
    s.bytes().take_while(|&b| b == b'_').count()
}

/// perf's `choose_best_symbol`: true when `a` is kept over `b`.
fn prefer_first(a: &Sym, b: &Sym) -> bool {
    let (la, lb) = (a.end - a.start, b.end - b.start);
    if lb == 0 && la > 0 {
        return true;
    }
    if la == 0 && lb > 0 {
        return false;
    }
    let (wa, wb) = (a.binding == Binding::Weak, b.binding == Binding::Weak);
    if wb && !wa {
        return true;
    }
    if wa && !wb {
        return false;
    }
    let (ga, gb) = (a.binding == Binding::Global, b.binding == Binding::Global);
    if ga && !gb {
        return true;
    }
    if gb && !ga {
        return false;
    }
    let (na, nb) = (a.shown(), b.shown());
    let (ua, ub) = (underscores(na), underscores(nb));
    if ub > ua {
        return true;
    }
    if ua > ub {
        return false;
    }
    na.len() >= nb.len()
}

impl SymbolTable {
    /// Sort, drop duplicates and give sizeless symbols their end.
    fn finish(syms: Vec<Sym>) -> SymbolTable {
        SymbolTable::finish_with(syms, false)
    }

    /// `ends_first`: kallsyms symbols get their ends before duplicates are dropped (so
    /// of several at one address the last, the only one with a size, stays), as perf
    /// loads kallsyms; ELF symbols are deduplicated first.
    fn finish_with(mut syms: Vec<Sym>, ends_first: bool) -> SymbolTable {
        syms.sort_by_key(|s| s.start);
        if ends_first {
            fix_ends(&mut syms);
        }
        let mut kept: Vec<Sym> = Vec::with_capacity(syms.len());
        for s in syms {
            match kept.last_mut() {
                Some(last) if last.start == s.start => {
                    if !prefer_first(last, &s) {
                        *last = s;
                    }
                }
                _ => kept.push(s),
            }
        }
        fix_ends(&mut kept);
        SymbolTable { syms: kept }
    }

    /// The symbol holding `addr`: its name and start.
    pub fn find(&self, addr: u64) -> Option<(&str, u64)> {
        let i = self.syms.partition_point(|s| s.start <= addr);
        let s = self.syms.get(i.checked_sub(1)?)?;
        (addr < s.end).then_some((s.shown(), s.start))
    }

    /// The end of the last symbol.
    pub fn end(&self) -> Option<u64> {
        self.syms.last().map(|s| s.end)
    }

    /// Number of symbols.
    pub fn len(&self) -> usize {
        self.syms.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.syms.is_empty()
    }

    /// The ELF function symbols of a mapped file at file offsets (perf's adjusted
    /// addresses): from `debug`'s `.symtab` when a separate debug file is given, else
    /// the file's `.symtab`, else its `.dynsym`. Names are demangled when looked up.
    pub fn from_elf(runtime: &[u8], debug: Option<&[u8]>) -> Result<SymbolTable, String> {
        let rt = object::File::parse(runtime).map_err(|e| e.to_string())?;
        let dbg = debug.and_then(|d| object::File::parse(d).ok());
        let mut syms = Vec::new();
        // A symbol's section in the file that holds the symbol table, then the section of
        // the same name in the mapped file, whose offsets are the real ones.
        let mut add = |src: &object::File<'_>, sym: object::Symbol<'_, '_>| {
            // Functions and labels (untyped symbols), in sections named like text.
            if !matches!(sym.kind(), SymbolKind::Text | SymbolKind::Unknown) || sym.is_undefined() {
                return;
            }
            let Ok(name) = sym.name() else { return };
            if name.is_empty() {
                return;
            }
            let Some(idx) = sym.section_index() else {
                return;
            };
            let Ok(sec) = src.section_by_index(idx) else {
                return;
            };
            let Ok(sname) = sec.name() else { return };
            if !sname.contains("text") {
                return;
            }
            let Some(rsec) = rt.section_by_name(sname) else {
                return;
            };
            let Some((off, _)) = rsec.file_range() else {
                return;
            };
            let start = sym.address().wrapping_sub(rsec.address()).wrapping_add(off);
            let binding = if sym.is_weak() {
                Binding::Weak
            } else if sym.is_global() {
                Binding::Global
            } else {
                Binding::Local
            };
            syms.push(Sym {
                start,
                end: start.wrapping_add(sym.size()),
                binding,
                name: name.into(),
                demangled: OnceLock::new(),
            });
        };
        match &dbg {
            Some(d) if d.symbols().next().is_some() => {
                for s in d.symbols() {
                    add(d, s);
                }
            }
            _ => {
                if rt.symbols().next().is_some() {
                    for s in rt.symbols() {
                        add(&rt, s);
                    }
                } else {
                    for s in rt.dynamic_symbols() {
                        add(&rt, s);
                    }
                }
            }
        }
        syms.extend(plt_symbols(&rt));
        Ok(SymbolTable::finish(syms))
    }
}

/// perf's synthesized `name@plt` symbols: one per `.rela.plt` entry, in order, each a
/// `.plt` entry after the 16-byte header (64-bit little-endian files).
fn plt_symbols(rt: &object::File<'_>) -> Vec<Sym> {
    use object::{ObjectSymbolTable, SymbolIndex};
    let mut v = Vec::new();
    if !rt.is_64() || !rt.is_little_endian() {
        return v;
    }
    let (Some(rela), Some(plt)) = (rt.section_by_name(".rela.plt"), rt.section_by_name(".plt"))
    else {
        return v;
    };
    let (Ok(data), Some((plt_off, _))) = (rela.data(), plt.file_range()) else {
        return v;
    };
    let Some(dynsym) = rt.dynamic_symbol_table() else {
        return v;
    };
    let entry = 16u64;
    for (i, r) in data.chunks_exact(24).enumerate() {
        let info = u64::from_le_bytes(r[8..16].try_into().unwrap_or([0; 8]));
        let idx = (info >> 32) as usize;
        let name = if idx == 0 {
            String::new()
        } else {
            match dynsym.symbol_by_index(SymbolIndex(idx)) {
                Ok(sym) => demangle(sym.name().unwrap_or("")),
                Err(_) => continue,
            }
        };
        let start = plt_off + entry * (i as u64 + 1);
        v.push(Sym {
            start,
            end: start + entry,
            binding: Binding::Global,
            demangled: OnceLock::from(format!("{name}@plt").into_boxed_str()),
            name: format!("{name}@plt").into(),
        });
    }
    v
}

/// Whether an ELF file has a `.symtab` with symbols.
pub fn elf_has_symtab(data: &[u8]) -> bool {
    object::File::parse(data).is_ok_and(|f| f.symbols().next().is_some())
}

/// The GNU build id of an ELF file.
pub fn elf_build_id(data: &[u8]) -> Option<Vec<u8>> {
    let f = object::File::parse(data).ok()?;
    f.build_id().ok().flatten().map(<[u8]>::to_vec)
}

impl KernelSymbols {
    /// Parse `/proc/kallsyms` text (function and data symbols, as perf keeps them).
    pub fn parse(text: &str) -> KernelSymbols {
        let mut core = Vec::new();
        let mut modules: HashMap<String, Vec<Sym>> = HashMap::new();
        for line in text.lines() {
            let mut it = line.split_ascii_whitespace();
            let (Some(addr), Some(ty), Some(name)) = (it.next(), it.next(), it.next()) else {
                continue;
            };
            let Ok(start) = u64::from_str_radix(addr, 16) else {
                continue;
            };
            let t = ty.as_bytes().first().copied().unwrap_or(b'?');
            if !matches!(t.to_ascii_uppercase(), b'T' | b'W' | b'D' | b'B') {
                continue;
            }
            let binding = if t == b'W' || t == b'w' {
                Binding::Weak
            } else if t.is_ascii_uppercase() {
                Binding::Global
            } else {
                Binding::Local
            };
            let sym = Sym {
                start,
                end: start,
                binding,
                name: name.into(),
                demangled: OnceLock::from(Box::<str>::from(name)),
            };
            match it.next() {
                Some(m) if m.starts_with('[') => modules
                    .entry(m.trim_matches(|c| c == '[' || c == ']').to_string())
                    .or_default()
                    .push(sym),
                _ => core.push(sym),
            }
        }
        KernelSymbols {
            kernel: SymbolTable::finish_with(core, true),
            modules: modules
                .into_iter()
                .map(|(k, v)| (k, SymbolTable::finish_with(v, true)))
                .collect(),
        }
    }
}

/// perf's demangling: C++ (`_Z`) without parameters, Rust without the hash.
pub fn demangle(name: &str) -> String {
    // Clone suffixes (`.cold`, `.warm`, `.llvm.123`, `.constprop.0`) after a mangled
    // name are dropped, as perf's demangler does without parameters.
    let name = strip_clone_suffix(name);
    if name.starts_with("_R")
        || (name.starts_with("_ZN") && name.ends_with('E') && is_rust_legacy(name))
    {
        if let Ok(d) = rustc_demangle::try_demangle(name) {
            return format!("{d:#}");
        }
    }
    if name.starts_with("_Z") {
        if let Ok(sym) = cpp_demangle::Symbol::new(name) {
            let opts = cpp_demangle::DemangleOptions::new()
                .no_params()
                .no_return_type();
            if let Ok(s) = sym.demangle(&opts) {
                // Without parameters perf shows no cv-qualifiers of the method either.
                let mut s = s.as_str();
                while let Some(t) = s
                    .strip_suffix(" const")
                    .or_else(|| s.strip_suffix(" volatile"))
                {
                    s = t;
                }
                return gnu_spelling(s);
            }
        }
    }
    name.to_string()
}

/// cpp_demangle's text as GNU's demangler (which perf uses) spells it: integer literals
/// of unsigned and long types with a suffix (`8u`, not `(unsigned int)8`), and no
/// separator left by an empty template pack (`<A>`, not `<A, >`).
fn gnu_spelling(s: &str) -> String {
    const SUFFIXES: [(&str, &str); 5] = [
        ("(unsigned long long)", "ull"),
        ("(unsigned long)", "ul"),
        ("(unsigned int)", "u"),
        ("(long long)", "ll"),
        ("(long)", "l"),
    ];
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    'scan: while let Some(i) = rest.find(['(', ',']) {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        if rest.starts_with(", >") && !out.ends_with("operator") {
            rest = &rest[2..];
            continue;
        }
        for (cast, suffix) in SUFFIXES {
            if let Some(after) = rest.strip_prefix(cast) {
                let digits = after
                    .char_indices()
                    .take_while(|&(j, c)| c.is_ascii_digit() || (j == 0 && c == '-'))
                    .count();
                if digits > 0 && after[..digits].bytes().any(|b| b.is_ascii_digit()) {
                    out.push_str(&after[..digits]);
                    out.push_str(suffix);
                    rest = &after[digits..];
                    continue 'scan;
                }
            }
        }
        out.push_str(&rest[..1]);
        rest = &rest[1..];
    }
    out.push_str(rest);
    out
}

fn strip_clone_suffix(name: &str) -> &str {
    if name.starts_with("_R") {
        // v0 Rust names never contain a dot.
        return name.split('.').next().unwrap_or(name);
    }
    if !name.starts_with("_Z") {
        return name;
    }
    let mut end = name.len();
    while let Some(dot) = name[..end].rfind('.') {
        let part = &name[dot + 1..end];
        if part.is_empty() || !part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            break;
        }
        end = dot;
        if name[..end].ends_with('E') {
            return &name[..end];
        }
    }
    name
}

/// A legacy Rust symbol ends with a 17-character `h<16 hex digits>` path element.
fn is_rust_legacy(name: &str) -> bool {
    let Some(body) = name.strip_suffix('E') else {
        return false;
    };
    body.len() > 20
        && body[..body.len() - 16].ends_with("17h")
        && body[body.len() - 16..]
            .bytes()
            .all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::demangle;

    /// Names from libLLVM as perf 6.1 (GNU's demangler) printed them in `perf script`.
    #[test]
    fn cpp_names_are_spelled_as_perf_prints_them() {
        assert_eq!(
            demangle(
                "_ZN4llvm15AnalysisManagerINS_8FunctionEJEE13getResultImplEPNS_11AnalysisKeyERS1_"
            ),
            "llvm::AnalysisManager<llvm::Function>::getResultImpl"
        );
        assert_eq!(
            demangle("_ZN4llvm12DenseMapBaseINS_13SmallDenseMapIjNS_7SDValueELj8ENS_12DenseMapInfoIjvEENS_6detail12DenseMapPairIjS2_EEEEjS2_S4_S7_E4growEj"),
            "llvm::DenseMapBase<llvm::SmallDenseMap<unsigned int, llvm::SDValue, 8u, llvm::DenseMapInfo<unsigned int, void>, llvm::detail::DenseMapPair<unsigned int, llvm::SDValue> >, unsigned int, llvm::SDValue, llvm::DenseMapInfo<unsigned int, void>, llvm::detail::DenseMapPair<unsigned int, llvm::SDValue> >::grow"
        );
    }
}
