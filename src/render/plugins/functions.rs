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
//!   entries with equal addresses the one the binary search lands on wins, in
//!   libtraceevent's order for them: reverse kallsyms order (an address inside a
//!   function names the alias kallsyms lists first);
//! * a line that does not parse (`%16llx %c name`) ends the parse, keeping what was read.

use crate::event::symbols::{hex16, kallsyms_words, parse_hex, word_end};
use crate::event::KallsymsSource;

/// A name looked up with [`FunctionMap::address_of`] and its address, if it has one.
type NameAddress = (String, Option<u64>);

/// A sorted table of kernel function names by start address.
///
/// Kept as the two halves the parse made on two threads, one after the other (kallsyms
/// lists symbols by address, so their concatenation is the sorted table): joining them
/// would copy megabytes on the way to a report's first line. The names stay in the
/// kallsyms text, which the map shares with its source.
#[derive(Debug, Default, Clone)]
pub struct FunctionMap {
    first: Part,
    second: Part,
    text: KallsymsSource,
    /// The names [`FunctionMap::address_of`] was asked for, with their answers: print
    /// fmts name a handful (`vmemmap_base`), so each is found by one scan of the table
    /// instead of ordering all of kallsyms by name.
    by_name: std::sync::Arc<std::sync::Mutex<Vec<NameAddress>>>,
    /// Unique per parsed map (0 for an empty one): the key of the lookup cache.
    id: u64,
}

/// The symbols of a run of kallsyms lines, in file order, and whether a line that does
/// not parse ended the run.
#[derive(Debug, Default, Clone)]
struct Part {
    addrs: Vec<u64>,
    /// Where each name starts in the whole kallsyms text. It ends at the next blank,
    /// found when the name is asked for: a report looks up a few thousand of 150k.
    names: Vec<u32>,
    stopped: bool,
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
        FunctionMap::of_source(&KallsymsSource::text_of(text.to_string()))
    }

    /// Parse the kallsyms text of `source` (read now if it was not), keeping the names
    /// where they are in it.
    pub fn of_source(source: &KallsymsSource) -> FunctionMap {
        let text = source.text().unwrap_or("");
        // Names are kept as 32-bit offsets (sections are far smaller; see MAX_BLOCK).
        let text = &text[..floor_char_boundary(text, u32::MAX as usize)];
        // Half the lines on another thread: this table is on the path to a report's first
        // line. A line that ends the parse in the first half also drops the second half.
        let cut = if text.len() > 1 << 20 {
            memchr::memchr(b'\n', &text.as_bytes()[text.len() / 2..])
                .map_or(text.len(), |i| text.len() / 2 + i + 1)
        } else {
            text.len()
        };
        let (head, tail) = text.split_at(cut);
        let (first, mut second) = if tail.is_empty() {
            (Part::parse(head, 0), Part::default())
        } else {
            std::thread::scope(|s| {
                let t = s.spawn(|| Part::parse(tail, cut));
                let h = Part::parse(head, 0);
                (h, t.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            })
        };
        if first.stopped {
            second = Part::default();
        }
        let in_order = |a: &[u64]| a.windows(2).all(|w| w[0] <= w[1]);
        let sorted = in_order(&first.addrs)
            && in_order(&second.addrs)
            && match (first.addrs.last(), second.addrs.first()) {
                (Some(a), Some(b)) => a <= b,
                _ => true,
            };
        let (first, second) = if sorted {
            (first, second)
        } else {
            (Part::sorted(&first, &second), Part::default())
        };
        FunctionMap {
            first,
            second,
            text: source.clone(),
            by_name: Default::default(),
            id: NEXT_MAP_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// The start address of entry `i` of the whole table.
    #[inline]
    fn addr(&self, i: usize) -> u64 {
        let n = self.first.addrs.len();
        if i < n {
            self.first.addrs[i]
        } else {
            self.second.addrs[i - n]
        }
    }

    fn name(&self, i: usize) -> &str {
        let n = self.first.addrs.len();
        let start = if i < n {
            self.first.names[i]
        } else {
            self.second.names[i - n]
        } as usize;
        let text = self.text.text().unwrap_or("");
        // Cut at an ASCII byte: a char boundary.
        &text[start..word_end(text.as_bytes(), start)]
    }

    /// Whether entry `i` is called `name`, without finding where its name ends first.
    fn is_called(&self, i: usize, name: &str) -> bool {
        let n = self.first.addrs.len();
        let start = if i < n {
            self.first.names[i]
        } else {
            self.second.names[i - n]
        } as usize;
        let text = self.text.text().unwrap_or("").as_bytes();
        let end = start + name.len();
        text.get(start..end) == Some(name.as_bytes())
            && text.get(end).map_or(true, u8::is_ascii_whitespace)
    }

    /// Number of symbols kept.
    pub fn len(&self) -> usize {
        self.first.addrs.len() + self.second.addrs.len()
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The function holding `addr` and its start address.
    pub fn find(&self, addr: u64) -> Option<(&str, u64)> {
        if self.is_empty() {
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
        (i != usize::MAX).then(|| (self.name(i), self.addr(i)))
    }

    /// The address of the first entry called `name`: what libtraceevent evaluates a
    /// name in a print fmt to when it is neither a field nor a number (`vmemmap_base`
    /// in the mm_page events).
    pub fn address_of(&self, name: &str) -> Option<u64> {
        let mut known = self.by_name.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, a)) = known.iter().find(|(n, _)| n == name) {
            return *a;
        }
        // A name is never empty, nor holds a blank.
        let found = (!name.is_empty() && !name.bytes().any(|b| b.is_ascii_whitespace()))
            .then(|| (0..self.len()).find(|&i| self.is_called(i, name)))
            .flatten()
            .map(|i| self.addr(i));
        known.push((name.to_string(), found));
        found
    }

    fn search(&self, addr: u64) -> Option<usize> {
        let n = self.len();
        let (mut l, mut u) = (0usize, n);
        while l < u {
            let idx = (l + u) / 2;
            let here = self.addr(idx);
            // The entry after the last one is a sentinel at address 0.
            let next = if idx + 1 < n { self.addr(idx + 1) } else { 0 };
            if addr == here || (addr > here && addr < next) {
                return Some(self.alias_as_libtraceevent(idx));
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

impl FunctionMap {
    /// libtraceevent builds its table from a list it prepends each kallsyms line to, so
    /// symbols sharing an address sit in reverse file order in its stably sorted array:
    /// the entry at position `idx` of a run of equal addresses here is the mirrored one
    /// there. (The binary search only compares addresses, so it lands on the same
    /// position in both tables; an address inside a function lands on the run's last
    /// entry, which there is the alias kallsyms lists first.)
    fn alias_as_libtraceevent(&self, idx: usize) -> usize {
        let at = self.addr(idx);
        let mut start = idx;
        while start > 0 && self.addr(start - 1) == at {
            start -= 1;
        }
        let mut end = idx + 1;
        while end < self.len() && self.addr(end) == at {
            end += 1;
        }
        start + (end - 1 - idx)
    }
}

impl Part {
    /// The symbols of `text`, which starts at byte `base` of the whole kallsyms text.
    fn parse(text: &str, base: usize) -> Part {
        let mut p = Part {
            addrs: Vec::with_capacity(text.len() / 40),
            names: Vec::with_capacity(text.len() / 40),
            stopped: false,
        };
        let bytes = text.as_bytes();
        let mut at = 0;
        while at < bytes.len() {
            // Nearly every line: sixteen hex digits, a blank, a printable type, a blank
            // and a printable name's first byte, read with one vector step for the
            // digits and one word for the rest (the general ways below give the same
            // answer for such a line, and read any other).
            if let Some(line) = bytes.get(at..at + 24) {
                let word: [u8; 8] = line[16..].try_into().expect("eight bytes");
                let tail = u64::from_le_bytes(word);
                let (kind, first) = (line[17], line[19]);
                if tail & 0x00ff_00ff == 0x0020_0020 && kind > b' ' && first > b' ' {
                    let digits: &[u8; 16] = line[..16].try_into().expect("sixteen bytes");
                    if let Some(addr) = hex16(digits) {
                        if !(first == b'$' || kind | 0x20 == b'a') {
                            p.addrs.push(addr);
                            p.names.push((base + at + 19) as u32);
                        }
                        // The name's first byte is not a newline.
                        at = newline_from(bytes, at + 20) + 1;
                        continue;
                    }
                }
            }
            // The usual line, `<16 hex digits> <type> <name>...`, read in place.
            if let Some((addr, kind)) = usual_line(bytes, at) {
                if !(bytes[at + 19] == b'$' || kind == b'A' || kind == b'a') {
                    p.addrs.push(addr);
                    p.names.push((base + at + 19) as u32);
                }
                at = line_end(bytes, at + 19) + 1;
                continue;
            }
            let end = line_end(bytes, at);
            let line = &text[at..end];
            let line_at = at;
            at = end + 1;
            let ([addr, kind, name, _], n) = kallsyms_words(line);
            if line.is_empty() {
                continue;
            }
            if n < 3 {
                p.stopped = true;
                break;
            }
            // sscanf's %16llx reads at most 16 hex digits.
            // Past a non-ASCII byte the digits end anyway; 16 may not be a char boundary.
            let digits = addr.get(..16).unwrap_or(addr);
            let Some(addr) = parse_hex(digits) else {
                p.stopped = true;
                break;
            };
            if kind.len() != 1 {
                p.stopped = true;
                break;
            }
            if name.starts_with('$') || kind == "A" || kind == "a" {
                continue;
            }
            p.addrs.push(addr);
            let name_at = line_at + (name.as_ptr() as usize - line.as_ptr() as usize);
            p.names.push((base + name_at) as u32);
        }
        p
    }

    /// `a`'s symbols then `b`'s, sorted stably by address (as libtraceevent sorts its
    /// table before searching it).
    fn sorted(a: &Part, b: &Part) -> Part {
        let mut all: Vec<(u64, u32)> = a
            .addrs
            .iter()
            .copied()
            .zip(a.names.iter().copied())
            .chain(b.addrs.iter().copied().zip(b.names.iter().copied()))
            .collect();
        all.sort_by_key(|p| p.0);
        let (addrs, names) = all.into_iter().unzip();
        Part {
            addrs,
            names,
            stopped: false,
        }
    }
}

/// The largest character boundary of `text` at or below `at`.
fn floor_char_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

impl crate::event::FunctionLookup for FunctionMap {
    fn function(&self, addr: u64) -> Option<(&str, u64)> {
        self.find(addr)
    }

    fn address_of(&self, name: &str) -> Option<u64> {
        FunctionMap::address_of(self, name)
    }

    fn table_id(&self) -> u64 {
        self.id
    }
}

/// The line at `at` of `text` when it has exactly the usual shape, `<16 hex digits>
/// <type char> <name>[ more]`, as (address, type); None for anything else, which the
/// general path then reads (with the same result for this shape). The name starts at
/// `at + 19`. A newline in the first 20 bytes fails one of the checks.
#[inline]
fn usual_line(text: &[u8], at: usize) -> Option<(u64, u8)> {
    let b: &[u8; 20] = text.get(at..at + 20)?.try_into().ok()?;
    if b[16] != b' ' || b[18] != b' ' || b[17].is_ascii_whitespace() || b[19].is_ascii_whitespace()
    {
        return None;
    }
    Some((hex16(b[..16].try_into().ok()?)?, b[17]))
}

/// The first newline of `text` at or after `from` (or the end), sixteen bytes at a time
/// on x86-64: a name is 20 to 30 bytes, two steps where [`line_end`] takes three or four.
#[inline]
fn newline_from(text: &[u8], from: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        let mut from = from;
        while let Some(chunk) = text.get(from..from + 16) {
            // SAFETY: SSE2 is part of every x86-64 CPU; the load reads the sixteen bytes
            // `chunk` borrows.
            let newlines = unsafe {
                let c = _mm_loadu_si128(chunk.as_ptr().cast());
                _mm_movemask_epi8(_mm_cmpeq_epi8(c, _mm_set1_epi8(b'\n' as i8)))
            };
            if newlines != 0 {
                return from + newlines.trailing_zeros() as usize;
            }
            from += 16;
        }
        line_end(text, from)
    }
    #[cfg(not(target_arch = "x86_64"))]
    line_end(text, from)
}

/// The first newline of `text` at or after `from` (or the end), eight bytes at a time:
/// a kallsyms line is about 40 bytes, too short for `memchr` to pay for its set-up.
#[inline]
fn line_end(text: &[u8], mut from: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    while let Some(chunk) = text.get(from..from + 8) {
        let w = u64::from_le_bytes(chunk.try_into().expect("eight bytes")) ^ (b'\n' as u64 * ONES);
        // The lowest byte that was a newline sets the lowest high bit here.
        let found = w.wrapping_sub(ONES) & !w & (0x80 * ONES);
        if found != 0 {
            return from + found.trailing_zeros() as usize / 8;
        }
        from += 8;
    }
    memchr::memchr(b'\n', &text[from.min(text.len())..]).map_or(text.len(), |i| from + i)
}

/// Every symbol libtraceevent keeps of a kallsyms text, as `trace-cmd report -f` lists
/// them: (address, name, module), sorted by address. The lines are read as
/// [`FunctionMap::parse`] reads them; a module is the `[module]` after a tab. Symbols at
/// the same address come last-read first (libtraceevent collects them newest first,
/// then sorts them stably).
pub fn kallsyms_listing(text: &str) -> Vec<(u64, &str, Option<&str>)> {
    let mut v = Vec::new();
    for line in text.split('\n') {
        if line.is_empty() {
            continue;
        }
        let ([addr, kind, name, _], n) = kallsyms_words(line);
        if n < 3 || kind.len() != 1 {
            break;
        }
        let digits = addr.get(..16).unwrap_or(addr);
        let Some(addr) = parse_hex(digits) else {
            break;
        };
        if name.starts_with('$') || kind == "A" || kind == "a" {
            continue;
        }
        // `name\t[module]`: the module's text up to a blank, without its last character.
        let name_end = name.as_ptr() as usize - line.as_ptr() as usize + name.len();
        let module = line[name_end..]
            .strip_prefix("\t[")
            .map(|rest| &rest[..word_end(rest.as_bytes(), 0)])
            .filter(|m| !m.is_empty())
            .map(|m| &m[..m.len() - m.chars().last().map_or(0, char::len_utf8)]);
        v.push((addr, name, module));
    }
    v.reverse();
    v.sort_by_key(|e| e.0);
    v
}

#[cfg(test)]
mod tests {
    use super::FunctionMap;

    #[test]
    fn a_non_ascii_byte_in_an_address_ends_the_table_without_a_panic() {
        // Byte 16 falls inside the two-byte `é`: the address is not hex, so the table
        // ends there, as trace-cmd's sscanf stops.
        for bad in [
            "fffffffffffffffé T bad\n",
            "ffé T bad\n",
            "éééééééééé T x\n",
        ] {
            let text = format!("ffffffff81000000 T first\n{bad}ffffffff81000100 T later\n");
            let m = FunctionMap::parse(&text);
            assert_eq!(m.len(), 1, "{bad:?}");
            assert_eq!(
                m.find(0xffffffff81000000),
                Some(("first", 0xffffffff81000000))
            );
        }
    }

    #[test]
    fn a_table_parsed_in_two_halves_finds_every_symbol() {
        // Over a megabyte of lines: parsed in two halves, kept as two parts when in
        // order, sorted into one when not. Both must answer alike, at the seam too.
        let lines: Vec<String> = (0..40_000u64)
            .map(|i| {
                format!(
                    "{:016x} T function_number_{i}\n",
                    0xffff_ffff_8100_0000 + i * 0x40
                )
            })
            .collect();
        let in_order: String = lines.concat();
        let reversed: String = lines.iter().rev().cloned().collect();
        assert!(in_order.len() > 1 << 20);
        for text in [&in_order, &reversed] {
            let m = FunctionMap::parse(text);
            assert_eq!(m.len(), 40_000);
            for i in (0..40_000u64)
                .step_by(97)
                .chain(19_990..20_010)
                .chain([39_999])
            {
                let addr = 0xffff_ffff_8100_0000 + i * 0x40;
                let name = format!("function_number_{i}");
                assert_eq!(m.find(addr), Some((name.as_str(), addr)));
                if i < 39_999 {
                    assert_eq!(m.find(addr + 0x3f), Some((name.as_str(), addr)));
                } else {
                    assert_eq!(
                        m.find(addr + 1),
                        None,
                        "the last entry matches exactly only"
                    );
                }
            }
        }
    }

    #[test]
    fn lines_read_in_place_match_the_general_reading() {
        // Lines the one-step reading takes and lines it leaves to the others (a control
        // byte as the type, names of one to three bytes, the last lines with fewer than
        // 24 bytes left, `$` names, absolute symbols, upper-case digits): the map holds
        // what the word-by-word listing reads.
        let lines = [
            "ffffffff81000000 T first_function\n",
            "ffffffff81000010 \u{1} control_type\n",
            "ffffffff81000020 t x\n",
            "ffffffff81000030 T $dollar\n",
            "ffffffff81000040 A absolute\n",
            "ffffffff81000050 a absolute_too\n",
            "FFFFFFFF81000060 T upper_digits\n",
            "ffffffff81000070 W ab\tmore [mod]\n",
            "ffffffff81000080 T abc\n",
            "ffffffff81000090 T a\n",
        ];
        let text: String = lines.concat();
        let m = FunctionMap::parse(&text);
        // The listing reads every line word by word (addresses in order, no aliases here).
        let expected: Vec<(u64, String)> = super::kallsyms_listing(&text)
            .into_iter()
            .map(|(a, n, _)| (a, n.to_string()))
            .collect();
        let got: Vec<(u64, String)> = (0..m.len())
            .map(|i| (m.addr(i), m.name(i).to_string()))
            .collect();
        assert_eq!(got, expected);
        assert_eq!(m.len(), 7);
        assert_eq!(
            m.find(0xffffffff81000065),
            Some(("upper_digits", 0xffffffff81000060))
        );
        assert_eq!(
            m.find(0xffffffff81000011),
            Some(("control_type", 0xffffffff81000010))
        );
    }

    #[test]
    fn names_are_found_by_their_whole_word() {
        let m = FunctionMap::parse(
            "ffffffff81000000 T vmemmap_base_x\nffffffff81000100 D vmemmap_base\tfoo\nffffffff81000200 T vmemmap\n",
        );
        assert_eq!(m.address_of("vmemmap_base"), Some(0xffffffff81000100));
        assert_eq!(m.address_of("vmemmap"), Some(0xffffffff81000200));
        assert_eq!(m.address_of("vmemmap_bas"), None);
        assert_eq!(m.address_of(""), None);
        assert_eq!(
            m.find(0xffffffff81000104),
            Some(("vmemmap_base", 0xffffffff81000100))
        );
    }

    #[test]
    fn aliases_resolve_as_libtraceevent_orders_them() {
        let m = FunctionMap::parse(
            "ffffffff81000010 T memcpy\nffffffff81000010 T __pi_memcpy\nffffffff81000040 T next\n",
        );
        // Inside the function: the alias kallsyms lists first, as trace-cmd prints it.
        assert_eq!(
            m.find(0xffffffff81000018),
            Some(("memcpy", 0xffffffff81000010))
        );
        // The exact address: the binary search lands on the middle entry, which
        // libtraceevent's reversed run holds as memcpy too.
        assert_eq!(m.find(0xffffffff81000010).map(|f| f.0), Some("memcpy"));
    }

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
