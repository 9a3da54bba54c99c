//! Address-to-function lookup the way libtraceevent resolves it for trace-cmd.
//!
//! Why not the event model's kallsyms table: trace-cmd's answers depend on details that a
//! symbolizer would do differently, and report output must match them byte for byte:
//!
//! * every kallsyms line is kept except names starting with `$` and types `A`/`a`
//!   (absolute symbols, which x86-64 uses for per-cpu offsets); data symbols (`d`, `b`,
//!   `r`, ...) are kept, so an address may resolve to a variable;
//! * the table is sorted by address (stably) and searched with glibc's `bsearch`, where an
//!   entry matches a key equal to its address or lying strictly between it and the next
//!   entry's address; the last entry therefore matches only its exact address, and among
//!   entries with equal addresses the one the binary search lands on wins;
//! * a line that does not parse (`%16llx %c name`) ends the parse, keeping what was read.

use crate::event::symbols::{kallsyms_words, parse_hex, word_end};

/// A sorted table of kernel function names by start address.
#[derive(Debug, Default, Clone)]
pub struct FunctionMap {
    addrs: Vec<u64>,
    /// (start, length) of each name in `text`.
    names: Vec<(u32, u32)>,
    /// Every name, one after another: one allocation instead of one per symbol.
    text: String,
    /// Unique per parsed map (0 for an empty one): the key of the lookup cache.
    id: u64,
}

static NEXT_MAP_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

thread_local! {
    /// Recent lookups per thread, direct-mapped: ((map id, address), index or usize::MAX).
    /// Call sites repeat, and the map itself stays shareable between threads.
    static FIND_CACHE: std::cell::RefCell<Vec<((u64, u64), usize)>> =
        std::cell::RefCell::new(vec![((0, u64::MAX), usize::MAX); 512]);
}

impl FunctionMap {
    /// An empty map: every lookup fails.
    pub fn new() -> FunctionMap {
        FunctionMap::default()
    }

    /// Parse `/proc/kallsyms` text (`addr type name [module]` lines).
    pub fn parse(text: &str) -> FunctionMap {
        // Half the lines on another thread: this table is on the path to a report's first
        // line. A line that ends the parse in the first half also drops the second half.
        let cut = if text.len() > 1 << 20 {
            memchr::memchr(b'\n', &text.as_bytes()[text.len() / 2..])
                .map_or(text.len(), |i| text.len() / 2 + i + 1)
        } else {
            text.len()
        };
        let (head, tail) = text.split_at(cut);
        let ((mut pairs, stopped), (rest, _)) = if tail.is_empty() {
            (Self::parse_lines(head), (Vec::new(), false))
        } else {
            std::thread::scope(|s| {
                let t = s.spawn(|| Self::parse_lines(tail));
                let h = Self::parse_lines(head);
                (h, t.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            })
        };
        if !stopped {
            pairs.extend(rest);
        }
        pairs.sort_by_key(|p| p.0);
        let mut all = String::with_capacity(pairs.iter().map(|p| p.1.len()).sum());
        let names = pairs
            .iter()
            .map(|p| {
                let start = all.len() as u32;
                all.push_str(p.1);
                (start, p.1.len() as u32)
            })
            .collect();
        FunctionMap {
            addrs: pairs.iter().map(|p| p.0).collect(),
            names,
            text: all,
            id: NEXT_MAP_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// The `(address, name)` pairs of `text`'s lines, and whether a line that does not
    /// parse ended the list.
    fn parse_lines(text: &str) -> (Vec<(u64, &str)>, bool) {
        let mut pairs: Vec<(u64, &str)> = Vec::with_capacity(text.len() / 32);
        let mut at = 0;
        let ends = memchr::memchr_iter(b'\n', text.as_bytes()).chain(std::iter::once(text.len()));
        for end in ends {
            let line = &text[at..end];
            at = end + 1;
            // The usual line, `<16 hex digits> <type> <name>...`, read in place.
            if let Some((addr, kind, name)) = usual_line(line) {
                if !(name.starts_with('$') || kind == b'A' || kind == b'a') {
                    pairs.push((addr, name));
                }
                continue;
            }
            let ([addr, kind, name, _], n) = kallsyms_words(line);
            if line.is_empty() {
                continue;
            }
            if n < 3 {
                return (pairs, true);
            }
            // sscanf's %16llx reads at most 16 hex digits.
            let digits = &addr[..addr.len().min(16)];
            let Some(addr) = parse_hex(digits) else {
                return (pairs, true);
            };
            if kind.len() != 1 {
                return (pairs, true);
            }
            if name.starts_with('$') || kind == "A" || kind == "a" {
                continue;
            }
            pairs.push((addr, name));
        }
        (pairs, false)
    }

    fn name(&self, i: usize) -> &str {
        let (start, len) = self.names[i];
        &self.text[start as usize..(start + len) as usize]
    }

    /// Number of symbols kept.
    pub fn len(&self) -> usize {
        self.addrs.len()
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.addrs.is_empty()
    }

    /// The function holding `addr` and its start address.
    pub fn find(&self, addr: u64) -> Option<(&str, u64)> {
        if self.addrs.is_empty() {
            return None;
        }
        let slot = ((addr ^ (addr >> 11)).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 55) as usize;
        let key = (self.id, addr);
        let hit = FIND_CACHE.with(|c| {
            let (k, i) = c.borrow()[slot];
            (k == key).then_some(i)
        });
        let i = match hit {
            Some(i) => i,
            None => {
                let i = self.search(addr).unwrap_or(usize::MAX);
                FIND_CACHE.with(|c| c.borrow_mut()[slot] = (key, i));
                i
            }
        };
        (i != usize::MAX).then(|| (self.name(i), self.addrs[i]))
    }

    fn search(&self, addr: u64) -> Option<usize> {
        let n = self.addrs.len();
        let (mut l, mut u) = (0usize, n);
        while l < u {
            let idx = (l + u) / 2;
            let here = self.addrs[idx];
            // The entry after the last one is a sentinel at address 0.
            let next = if idx + 1 < n { self.addrs[idx + 1] } else { 0 };
            if addr == here || (addr > here && addr < next) {
                return Some(idx);
            }
            if addr < here {
                u = idx;
            } else {
                l = idx + 1;
            }
        }
        None
    }
}

impl crate::event::FunctionLookup for FunctionMap {
    fn function(&self, addr: u64) -> Option<(&str, u64)> {
        self.find(addr)
    }
}

/// Hexadecimal digit values; 0xff for any other byte.
const HEX: [u8; 256] = {
    let mut t = [0xffu8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

/// A line of exactly the usual shape, `<16 hex digits> <type char> <name>[ more]`, as
/// (address, type, name); None for anything else, which the general path then reads
/// (with the same result for this shape).
#[inline]
fn usual_line(line: &str) -> Option<(u64, u8, &str)> {
    let b = line.as_bytes();
    if b.len() < 20 || b[16] != b' ' || b[18] != b' ' || b[17].is_ascii_whitespace() {
        return None;
    }
    let mut addr = 0u64;
    let mut bad = 0u8;
    for &c in &b[..16] {
        let d = HEX[c as usize];
        bad |= d;
        addr = addr << 4 | u64::from(d & 15);
    }
    if bad > 15 || b[19].is_ascii_whitespace() {
        return None;
    }
    let end = word_end(b, 19);
    Some((addr, b[17], &line[19..end]))
}

#[cfg(test)]
mod tests {
    use super::FunctionMap;

    #[test]
    fn lookup_between_entries_and_last_exact_only() {
        let m = FunctionMap::parse(
            "ffffffff81000000 T _stext\nffffffff81000100 t foo\n0000000000001000 A fixed_percpu_data\nffffffff81000200 T bar [mod]\n",
        );
        assert_eq!(m.len(), 3);
        assert_eq!(
            m.find(0xffffffff81000104),
            Some(("foo", 0xffffffff81000100))
        );
        assert_eq!(
            m.find(0xffffffff81000000),
            Some(("_stext", 0xffffffff81000000))
        );
        assert_eq!(
            m.find(0xffffffff81000200),
            Some(("bar", 0xffffffff81000200))
        );
        assert_eq!(m.find(0xffffffff81000201), None);
        assert_eq!(m.find(0x1000), None);
        assert_eq!(m.find(0x10), None);
    }

    #[test]
    fn unusual_lines_read_like_sscanf_and_a_bad_line_ends_the_table() {
        // Tabs and extra blanks between the words, a short address, a `$` name, then a
        // line whose address is not hex: everything after it is dropped.
        let m = FunctionMap::parse(
            "ffffffff81000000\tT  first\n  1000 t short\nffffffff81000100 t $x\n\nffffffff81000200 T  spaced [m]\nffffffff8100030g T bad\nffffffff81000400 T after\n",
        );
        assert_eq!(m.len(), 3);
        assert_eq!(
            m.find(0xffffffff81000000),
            Some(("first", 0xffffffff81000000))
        );
        assert_eq!(m.find(0x1000), Some(("short", 0x1000)));
        assert_eq!(
            m.find(0xffffffff81000200),
            Some(("spaced", 0xffffffff81000200))
        );
        assert_eq!(m.find(0xffffffff81000400), None);
    }

    #[test]
    fn both_halves_of_a_large_text_are_read() {
        let mut text = String::new();
        for i in 0..40_000u64 {
            text.push_str(&format!(
                "{:016x} t function_number_{i}\n",
                0xffffffff81000000 + i * 16
            ));
        }
        assert!(text.len() > 1 << 20);
        let m = FunctionMap::parse(&text);
        assert_eq!(m.len(), 40_000);
        assert_eq!(
            m.find(0xffffffff81000000 + 39_999 * 16),
            Some(("function_number_39999", 0xffffffff81000000 + 39_999 * 16))
        );
        assert_eq!(
            m.find(0xffffffff81000000 + 20_000 * 16 + 3),
            Some(("function_number_20000", 0xffffffff81000000 + 20_000 * 16))
        );
    }
}
