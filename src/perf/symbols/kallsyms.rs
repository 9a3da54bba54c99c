//! The kernel's symbols from a kallsyms text (`/proc/kallsyms` or a copy of it), split
//! into the core kernel's table and one per module, as perf 6.1's `dso__load_kallsyms`
//! and `maps__split_kallsyms` keep them.

use std::collections::HashMap;

use crate::event::symbols::word_end;

use super::{
    drop_duplicates, fix_ends, parse_hex, raw_name, Binding, Builder, Names, SharedBytes, Sym,
    SymbolTable,
};

/// The kernel's symbols from a kallsyms text: the core kernel and each module.
#[derive(Debug, Default)]
pub struct KernelSymbols {
    /// `[kernel.kallsyms]`.
    pub kernel: SymbolTable,
    /// Per module (`[name]` in kallsyms).
    pub modules: HashMap<String, SymbolTable>,
}

impl KernelSymbols {
    /// Parse `/proc/kallsyms` text (function and data symbols, as perf keeps them).
    pub fn parse(text: &str) -> KernelSymbols {
        Self::parse_in(text, None)
    }

    /// [`KernelSymbols::parse`] on a text that `shared` holds (the same bytes): the
    /// names stay in it rather than being copied.
    pub fn parse_shared(text: &str, shared: SharedBytes) -> KernelSymbols {
        Self::parse_in(text, Some(shared))
    }

    fn parse_in(text: &str, shared: Option<SharedBytes>) -> KernelSymbols {
        // One table for the kernel and its modules, as perf loads kallsyms: ends and
        // duplicates are fixed across all before the symbols are split per module.
        let mut all = Builder {
            names: shared.map_or_else(Names::default, Names::in_file),
            ..Builder::default()
        };
        // A line per symbol, of at least 21 bytes in the kernel's layout: room for all
        // at once, rather than copies as the list grows (nor a count of the lines first).
        all.syms.reserve(text.len() / 21 + 1);
        let mut module_names: Vec<&str> = Vec::new();
        let mut module_ids: HashMap<&str, u32> = HashMap::new();
        // The bytes names are stored in (the text itself, when shared), found once.
        let file = all.names.file.clone();
        let file = file.as_deref().map(|f| f.as_ref());
        // The kernel has over a hundred thousand symbols: its own lines
        // (`%016lx %c %s[\t[%s]]`) are cut at fixed places and their ends found with the
        // words, in one pass; others are cut into words as `split_ascii_whitespace` would.
        let bytes = text.as_bytes();
        let mut from = 0;
        while from <= bytes.len() {
            let (start, ty, name, module) = match kallsyms_line(text, from) {
                Some((start, ty, name, module, next)) => {
                    from = next;
                    (start, ty, name, module)
                }
                None => {
                    let to =
                        memchr::memchr(b'\n', &bytes[from..]).map_or(bytes.len(), |i| from + i);
                    let line = &text[from..to];
                    from = to + 1;
                    let mut words = Words { line, pos: 0 };
                    let (Some(addr), Some(ty), Some(name)) =
                        (words.next(), words.next(), words.next())
                    else {
                        continue;
                    };
                    let Some(start) = parse_hex(addr) else {
                        continue;
                    };
                    (start, ty, name, words.next())
                }
            };
            let t = ty.as_bytes()[0];
            if !matches!(t.to_ascii_uppercase(), b'T' | b'W' | b'D' | b'B') {
                continue;
            }
            // ARM modules' local `$a`/`$d`/`$t` symbols are no functions.
            if name.starts_with('$') {
                continue;
            }
            let binding = if t == b'W' {
                Binding::Weak
            } else if t.is_ascii_uppercase() {
                Binding::Global
            } else {
                Binding::Local
            };
            let module = match module {
                Some(m) if m.starts_with('[') => {
                    let m = m.trim_matches(|c| c == '[' || c == ']');
                    *module_ids.entry(m).or_insert_with(|| {
                        module_names.push(m);
                        module_names.len() as u32
                    })
                }
                _ => 0,
            };
            match file.and_then(|f| Names::offset_in(f, name.as_bytes())) {
                Some(at) => all.push_at(start, start, binding, at, name.len() as u32, true, module),
                None => all.push_in(start, start, binding, name, true, module),
            }
        }
        let Builder {
            mut syms, names, ..
        } = all;
        // The kernel lists its own symbols by address: most texts need no sorting (and
        // its stable sort's buffer as big as the list).
        if !syms.windows(2).all(|w| w[0].start <= w[1].start) {
            syms.sort_by_key(|s| s.start);
        }
        fix_ends(&mut syms, true);
        // perf's names of module symbols still end in `\t[module]` when it compares them.
        let suffix = |s: &Sym| match s.module {
            0 => 0,
            m => module_names[m as usize - 1].len() + 3,
        };
        let mut core = drop_duplicates(&names, syms, suffix, &mut Vec::new(), None);
        // The modules' symbols move to tables of their own; the kernel's stay in place.
        let mut tables: Vec<Vec<Sym>> = vec![Vec::new(); module_names.len()];
        core.retain(|s| match s.module {
            0 => true,
            m => {
                tables[m as usize - 1].push(*s);
                false
            }
        });
        // Each module's table holds its own names; the kernel's keeps the buffer.
        let modules = module_names
            .iter()
            .zip(tables)
            .map(|(m, syms)| {
                let mut own = Builder::default();
                for s in &syms {
                    own.push_in(s.start, s.end, s.binding, &raw_name(&names, s), s.plain, 0);
                }
                (
                    m.to_string(),
                    SymbolTable::of_sorted(own.syms, own.names, None, Vec::new()),
                )
            })
            .collect();
        // After their ends are fixed kallsyms symbols never overlap, so perf's lookup
        // finds what a search of the sorted symbols finds.
        let kernel = SymbolTable::of_sorted(core, names, None, Vec::new());
        KernelSymbols { kernel, modules }
    }
}

/// The ASCII-whitespace-separated words of a line, never empty.
struct Words<'a> {
    line: &'a str,
    pos: usize,
}

impl<'a> Iterator for Words<'a> {
    type Item = &'a str;
    fn next(&mut self) -> Option<&'a str> {
        let b = self.line.as_bytes();
        let mut i = self.pos;
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        let start = i;
        while i < b.len() && !b[i].is_ascii_whitespace() {
            i += 1;
        }
        self.pos = i;
        // Both ends are at ASCII bytes or the ends of the line: char boundaries.
        (i > start).then(|| &self.line[start..i])
    }
}

/// The line of the kernel's own layout, `%016lx %c %s[\t%s]`, that starts at byte `at` of
/// `text` (at a line's start): its address (read), type, name and module words, and
/// where the next line starts (past the text's end after its last line). None for any
/// other line (read word by word then, which reads a line whose first sixteen bytes are
/// not all hex digits as this would).
fn kallsyms_line(text: &str, at: usize) -> Option<(u64, &str, &str, Option<&str>, usize)> {
    let b = text.as_bytes();
    let head = b.get(at..at.checked_add(20)?)?;
    if head[16] != b' ' || head[18] != b' ' || head[17].is_ascii_whitespace() {
        return None;
    }
    // `at` is a line's start and bytes 16 to 18 are ASCII, so every cut below is at a
    // char boundary (the others are at ASCII whitespace or the text's end).
    let start = parse_hex(&text[at..at + 16])?;
    let ty = &text[at + 17..at + 18];
    let name_at = at + 19;
    let name_end = word_end(b, name_at);
    if name_end == name_at {
        return None;
    }
    let name = &text[name_at..name_end];
    // What ends a word ends the line: a newline, or the text's end.
    let line_end = |end: usize| match b.get(end) {
        None => Some(b.len() + 1),
        Some(b'\n') => Some(end + 1),
        Some(_) => None,
    };
    if b.get(name_end) != Some(&b'\t') {
        return Some((start, ty, name, None, line_end(name_end)?));
    }
    let module_at = name_end + 1;
    let module_end = word_end(b, module_at);
    if module_end == module_at {
        return None;
    }
    Some((
        start,
        ty,
        name,
        Some(&text[module_at..module_end]),
        line_end(module_end)?,
    ))
}
