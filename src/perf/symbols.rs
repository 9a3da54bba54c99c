//! Symbol tables for perf samples, built with perf's rules: kernel symbols from a
//! kallsyms text, user symbols from the ELF files that MMAP records name.
//!
//! perf keeps, of several symbols at one address, the one with a size, then a non-weak
//! one, then a global one, then the one with fewer leading underscores, then the longer
//! name; a symbol without a size ends where the next one starts. [`SymbolTable`] applies
//! the same rules, so `name+0xoff` comes out as `perf script` prints it.

use std::collections::HashMap;

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
    name: Box<str>,
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
    let (ua, ub) = (underscores(&a.name), underscores(&b.name));
    if ub > ua {
        return true;
    }
    if ua > ub {
        return false;
    }
    a.name.len() >= b.name.len()
}

impl SymbolTable {
    /// Sort, drop duplicates and give sizeless symbols their end.
    fn finish(mut syms: Vec<Sym>) -> SymbolTable {
        syms.sort_by_key(|s| s.start);
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
        for i in 1..kept.len() {
            if kept[i - 1].end == kept[i - 1].start {
                kept[i - 1].end = kept[i].start;
            }
        }
        if let Some(last) = kept.last_mut() {
            if last.end == last.start {
                last.end = (last.start + 4095) / 4096 * 4096 + 4096;
            }
        }
        SymbolTable { syms: kept }
    }

    /// The symbol holding `addr`: its name and start.
    pub fn find(&self, addr: u64) -> Option<(&str, u64)> {
        let i = self.syms.partition_point(|s| s.start <= addr);
        let s = self.syms.get(i.checked_sub(1)?)?;
        (addr < s.end).then_some((&*s.name, s.start))
    }

    /// Number of symbols.
    pub fn len(&self) -> usize {
        self.syms.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.syms.is_empty()
    }

    /// The ELF function symbols of a file (`.symtab`, else `.dynsym`), at file offsets
    /// (perf's adjusted addresses), demangled as perf demangles them.
    pub fn from_elf(data: &[u8]) -> Result<SymbolTable, String> {
        let file = object::File::parse(data).map_err(|e| e.to_string())?;
        let mut syms = Vec::new();
        let mut add = |sym: object::Symbol<'_, '_>| {
            if !matches!(sym.kind(), SymbolKind::Text) || sym.is_undefined() {
                return;
            }
            let Ok(name) = sym.name() else { return };
            if name.is_empty() {
                return;
            }
            let Some(idx) = sym.section_index() else {
                return;
            };
            let Ok(sec) = file.section_by_index(idx) else {
                return;
            };
            let Some((off, _)) = sec.file_range() else {
                return;
            };
            let start = sym.address().wrapping_sub(sec.address()).wrapping_add(off);
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
                name: demangle(name).into_boxed_str(),
            });
        };
        let mut any = false;
        for s in file.symbols() {
            any = true;
            add(s);
        }
        if !any {
            for s in file.dynamic_symbols() {
                add(s);
            }
        }
        Ok(SymbolTable::finish(syms))
    }
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
            kernel: SymbolTable::finish(core),
            modules: modules
                .into_iter()
                .map(|(k, v)| (k, SymbolTable::finish(v)))
                .collect(),
        }
    }
}

/// perf's demangling: C++ (`_Z`) without parameters, Rust without the hash.
pub fn demangle(name: &str) -> String {
    if name.starts_with("_R")
        || (name.starts_with("_ZN") && name.ends_with('E') && is_rust_legacy(name))
    {
        if let Ok(d) = rustc_demangle::try_demangle(name) {
            return format!("{d:#}");
        }
    }
    if name.starts_with("_Z") {
        if let Ok(sym) = cpp_demangle::Symbol::new(name) {
            let opts = cpp_demangle::DemangleOptions::new().no_params();
            if let Ok(s) = sym.demangle(&opts) {
                return s;
            }
        }
    }
    name.to_string()
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
