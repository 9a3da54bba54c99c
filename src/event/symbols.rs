//! `/proc/kallsyms` (for `%pS` and friends) and `printk_formats` (for `trace_printk`).

use std::collections::HashMap;
use std::sync::OnceLock;

use super::print::{parse_format, Seg};

/// A kernel symbol table from the text of `/proc/kallsyms` (or a fixture's
/// `host/kallsyms`).
#[derive(Debug, Clone, Default)]
pub struct Kallsyms {
    /// (address, name start in `names`, module index or u32::MAX, name length), sorted
    /// by address.
    syms: Vec<(u64, u32, u32, u32)>,
    /// Every name, one after another: one allocation instead of one per symbol.
    names: String,
    modules: Vec<String>,
    /// Unique per parsed table (0 for an empty one), the key of the lookup cache.
    id: u64,
}

static NEXT_TABLE_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

type CacheSlot = ((usize, u64), (usize, usize));

/// Slots of the per-thread lookup cache (32 bytes each): enough for the call sites of a
/// busy trace, which a 256-slot cache kept evicting.
const LOOKUP_SLOTS: usize = 2048;

thread_local! {
    static LOOKUP_CACHE: std::cell::RefCell<Vec<CacheSlot>> = std::cell::RefCell::new(vec![((0, u64::MAX), (0, 0)); LOOKUP_SLOTS]);
}

/// A symbol found for an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Symbol<'a> {
    /// The symbol's name.
    pub name: &'a str,
    /// Its start address.
    pub addr: u64,
    /// Distance to the next symbol: what `%pS` prints after the `/`.
    pub size: u64,
    /// The module it belongs to, for module symbols.
    pub module: Option<&'a str>,
}

/// The lines of a kallsyms text (split at `\n`, empty ones included), each cut into its
/// first four words the way `split_ascii_whitespace` cuts them: `(line, words, count)`.
///
/// Both symbol tables read the whole of kallsyms (150k lines, 5 MB) before a report can
/// start; a byte loop here is several times faster than the generic string splitters.
pub(crate) fn kallsyms_lines(text: &str) -> impl Iterator<Item = (&str, [&str; 4], usize)> {
    let mut at = 0;
    let mut ends = memchr::memchr_iter(b'\n', text.as_bytes());
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        let end = match ends.next() {
            Some(e) => e,
            None => {
                done = true;
                text.len()
            }
        };
        let line = &text[at..end];
        at = end + 1;
        Some((line, kallsyms_words(line)))
    })
    .map(|(line, (words, n))| (line, words, n))
}

/// The first four words of one line (see [`kallsyms_lines`]).
#[inline]
pub(crate) fn kallsyms_words(line: &str) -> ([&str; 4], usize) {
    let b = line.as_bytes();
    let mut words = [""; 4];
    // The usual shape, `<16 hex digits> <type> <name>...`: the first two words are where
    // they always are.
    let (mut n, mut i) = if b.len() > 19
        && b[16] == b' '
        && b[18] == b' '
        && !b[17].is_ascii_whitespace()
        && !b[0].is_ascii_whitespace()
        && b[..16].iter().all(|c| !c.is_ascii_whitespace())
    {
        words[0] = &line[..16];
        words[1] = &line[17..18];
        (2, 19)
    } else {
        (0, 0)
    };
    while n < 4 {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == b.len() {
            break;
        }
        let start = i;
        i = word_end(b, i);
        // Cut at ASCII bytes: always a char boundary.
        words[n] = &line[start..i];
        n += 1;
        if n == 3 && i < b.len() && b[i] == b'\n' {
            break;
        }
    }
    (words, n)
}

/// The first ASCII whitespace byte of `b` at or after `i` (or the end), eight bytes at a
/// time: symbol names are long.
#[inline]
pub(crate) fn word_end(b: &[u8], mut i: usize) -> usize {
    while let Some(chunk) = b.get(i..i + 8) {
        let w = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        // The lowest byte below 0x21 (all ASCII whitespace is) sets its high bit here, and
        // none does when there is no such byte: the bytes before it are no whitespace.
        let below = w.wrapping_sub(0x2121_2121_2121_2121) & !w & 0x8080_8080_8080_8080;
        if below != 0 {
            i += below.trailing_zeros() as usize / 8;
            break;
        }
        i += 8;
    }
    while i < b.len() && !b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// A hexadecimal number as `u64::from_str_radix(s, 16)` reads it (an optional `+`, no
/// overflow), without its generic per-digit checks. Every kallsyms reader uses it.
pub(crate) fn parse_hex(s: &str) -> Option<u64> {
    let digits = s.strip_prefix('+').unwrap_or(s).as_bytes();
    if digits.is_empty() {
        return None;
    }
    /// The value of each hex digit, 0xff for any other byte.
    const DIGITS: [u8; 256] = {
        let mut t = [0xff; 256];
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
    // Kallsyms addresses: sixteen digits, checked and read at once.
    if let Ok(sixteen) = <&[u8; 16]>::try_from(digits) {
        return hex16(sixteen);
    }
    let mut v: u64 = 0;
    if digits.len() <= 16 {
        // Sixteen hex digits always fit: no check per digit.
        for &c in digits {
            let d = DIGITS[c as usize];
            if d == 0xff {
                return None;
            }
            v = (v << 4) | u64::from(d);
        }
        return Some(v);
    }
    for &c in digits {
        let d = DIGITS[c as usize];
        if d == 0xff {
            return None;
        }
        v = v.checked_mul(16)?.checked_add(u64::from(d))?;
    }
    Some(v)
}

/// The value of sixteen hex digits (the first the most significant), None unless all
/// sixteen bytes are hex digits: a kallsyms address, read in one vector step on x86-64.
#[inline]
pub(crate) fn hex16(digits: &[u8; 16]) -> Option<u64> {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: SSE2 is part of every x86-64 CPU (the target's baseline).
        unsafe { hex16_sse2(digits) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let (hi, lo) = digits.split_at(8);
        Some((hex8(hi)? << 32) | hex8(lo)?)
    }
}

/// [`hex16`] in the lanes of one SSE2 register: each byte is checked against the
/// digits' ranges, turned into its value, and the values are paired into bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn hex16_sse2(digits: &[u8; 16]) -> Option<u64> {
    use std::arch::x86_64::{
        __m128i, _mm_add_epi8, _mm_and_si128, _mm_cmpgt_epi8, _mm_cmplt_epi8, _mm_cvtsi128_si64,
        _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_packus_epi16, _mm_set1_epi16,
        _mm_set1_epi8, _mm_slli_epi16, _mm_srli_epi16,
    };
    // Byte `i` of the register is digit `i`.
    // SAFETY: the one unaligned load reads the sixteen bytes `digits` borrows.
    let x = unsafe { _mm_loadu_si128(digits.as_ptr().cast()) };
    // Bytes compare as signed: any byte from 0x80 up is below every range.
    let within = |v: __m128i, lo: u8, hi: u8| {
        _mm_and_si128(
            _mm_cmpgt_epi8(v, _mm_set1_epi8((lo - 1) as i8)),
            _mm_cmplt_epi8(v, _mm_set1_epi8((hi + 1) as i8)),
        )
    };
    // With bit 5 set, capital letters read as small ones (and no byte that is not a
    // letter becomes one: 0x41 to 0x46 and 0x61 to 0x66 differ only in that bit).
    let letter = within(_mm_or_si128(x, _mm_set1_epi8(0x20)), b'a', b'f');
    let digit = within(x, b'0', b'9');
    if _mm_movemask_epi8(_mm_or_si128(digit, letter)) != 0xffff {
        return None;
    }
    // Each byte's value: its low four bits, plus nine for a letter.
    let value = _mm_add_epi8(
        _mm_and_si128(x, _mm_set1_epi8(0x0f)),
        _mm_and_si128(letter, _mm_set1_epi8(9)),
    );
    // Each pair of digits (the first in the low byte of a 16-bit lane) into the lane's
    // low byte, then the eight pairs side by side, the first pair lowest.
    let pairs = _mm_or_si128(
        _mm_and_si128(_mm_slli_epi16(value, 4), _mm_set1_epi16(0x00f0)),
        _mm_srli_epi16(value, 8),
    );
    let bytes = _mm_cvtsi128_si64(_mm_packus_epi16(pairs, pairs)) as u64;
    Some(bytes.swap_bytes())
}

/// The value of eight hex digits (the first the most significant), None unless all
/// eight bytes are hex digits. Each byte is checked against the three ranges of digits
/// at once, in the bytes of one word.
#[cfg(not(target_arch = "x86_64"))]
fn hex8(digits: &[u8]) -> Option<u64> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = ONES << 7;
    let x = u64::from_be_bytes(digits.try_into().ok()?);
    if x & HIGH != 0 {
        return None;
    }
    // With every byte below 0x80 no sum carries into the next byte: a byte's high bit
    // says whether it is at least `lo`, or above `hi`.
    let within = |lo: u64, hi: u64| (x + (0x80 - lo) * ONES) & !(x + (0x7f - hi) * ONES) & HIGH;
    let letters =
        within(u64::from(b'a'), u64::from(b'f')) | within(u64::from(b'A'), u64::from(b'F'));
    if within(u64::from(b'0'), u64::from(b'9')) | letters != HIGH {
        return None;
    }
    // Each byte's value: its low four bits, plus nine for a letter.
    let v = (x & (ONES * 0x0f)) + (letters >> 7) * 9;
    // Pairs, then fours, then the eight digits side by side.
    let v = (v | (v >> 4)) & 0x00ff_00ff_00ff_00ff;
    let v = (v | (v >> 8)) & 0x0000_ffff_0000_ffff;
    Some((v | (v >> 16)) & 0xffff_ffff)
}

impl Kallsyms {
    /// Parse `address type name [module]` lines. Lines that do not parse are skipped;
    /// all-zero addresses (what a non-root reader sees) are dropped.
    pub fn parse(text: &str) -> Kallsyms {
        let mut k = Kallsyms {
            id: NEXT_TABLE_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            ..Kallsyms::default()
        };
        let mut mods: HashMap<&str, u32> = HashMap::new();
        k.names.reserve(text.len() / 2);
        k.syms.reserve(text.len() / 32);
        for (_, [a, ty, name, m], n) in kallsyms_lines(text) {
            if n < 3 {
                continue;
            }
            let Some(addr) = parse_hex(a) else {
                continue;
            };
            if addr == 0 || ty.len() != 1 {
                continue;
            }
            let module = match (n > 3).then_some(m) {
                Some(m) if m.starts_with('[') => {
                    let m = m.trim_matches(|c| c == '[' || c == ']');
                    let next = k.modules.len() as u32;
                    let id = *mods.entry(m).or_insert(next);
                    if id == next {
                        k.modules.push(m.to_string());
                    }
                    id
                }
                _ => u32::MAX,
            };
            k.syms
                .push((addr, k.names.len() as u32, module, name.len() as u32));
            k.names.push_str(name);
        }
        k.syms.sort_by_key(|s| s.0);
        k
    }

    /// Number of symbols.
    pub fn len(&self) -> usize {
        self.syms.len()
    }

    /// Whether the table is empty (kallsyms read without privileges shows zero addresses).
    pub fn is_empty(&self) -> bool {
        self.syms.is_empty()
    }

    /// Unique per parsed table, 0 for an empty one: what caches of lookups key on.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// The symbol containing `addr`: the last one at or below it. Its size runs to the next
    /// symbol with a higher address; an address past the last symbol is not found.
    pub fn lookup(&self, addr: u64) -> Option<Symbol<'_>> {
        // Traces name the same few call sites over and over: a small per-thread cache of
        // (table, address) -> result index saves two binary searches per lookup.
        // Below every symbol (user-space addresses, mostly all different): not found,
        // without the cache.
        match self.syms.first() {
            Some(s) if addr >= s.0 => {}
            _ => return None,
        }
        let key = (self.id as usize, addr);
        let slot = ((addr ^ (addr >> 12)).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 53) as usize;
        let hit = LOOKUP_CACHE.with(|c| {
            let (k, v) = c.borrow()[slot];
            (k == key && self.id != 0).then_some(v)
        });
        let (first, i) = match hit {
            Some(v) => v,
            None => {
                let v = self.search(addr);
                LOOKUP_CACHE.with(|c| c.borrow_mut()[slot] = (key, v));
                v
            }
        };
        if i == 0 {
            return None;
        }
        let (a, n, m, len) = self.syms[first];
        let next = self.syms.get(i).map(|s| s.0)?;
        Some(Symbol {
            name: &self.names[n as usize..(n + len) as usize],
            addr: a,
            size: next - a,
            module: (m != u32::MAX).then(|| self.modules[m as usize].as_str()),
        })
    }

    /// (index of the first alias, partition point) for `addr`; (0, 0) when below all.
    fn search(&self, addr: u64) -> (usize, usize) {
        let i = self.syms.partition_point(|s| s.0 <= addr);
        if i == 0 {
            return (0, 0);
        }
        let at = self.syms[i - 1].0;
        // Aliases (symbols at the same address) are few: walk back to the first of them,
        // and search only when there are many.
        let mut first = i - 1;
        while first > 0 && self.syms[first - 1].0 == at {
            first -= 1;
            if i - first > 32 {
                return (self.syms[..i].partition_point(|s| s.0 < at), i);
            }
        }
        (first, i)
    }
}

/// The `printk_formats` file: constant strings of `trace_printk`/`trace_puts` by address.
#[derive(Debug, Clone, Default)]
pub struct PrintkFormats {
    map: HashMap<u64, PrintkEntry, std::hash::BuildHasherDefault<AddrHasher>>,
}

/// Hashes a kernel address with one multiplication folded in half: the kernel chose
/// these keys, not an attacker of this process, and every record of an event that
/// prints a constant string (`rcu_utilization`, `%s` of a `const char *`) looks one up,
/// where SipHash cost more than the rest of the lookup.
#[derive(Default, Clone, Copy)]
struct AddrHasher(u64);

impl std::hash::Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = fold_multiply(self.0.rotate_left(8) ^ u64::from(b));
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = fold_multiply(self.0 ^ v);
    }
}

/// `v` times a large odd constant, the high half of the product folded onto the low half
/// (so that the low bits a hash table indexes by depend on every bit of `v`).
#[inline]
fn fold_multiply(v: u64) -> u64 {
    let p = u128::from(v) * 0x9E37_79B9_7F4A_7C15;
    (p as u64) ^ ((p >> 64) as u64)
}

#[derive(Debug, Clone)]
struct PrintkEntry {
    text: String,
    /// The format compiled on first use by a `bprint` record (for one long size).
    compiled: OnceLock<(usize, Result<Vec<Seg>, String>)>,
}

impl PrintkFormats {
    /// Parse `0xffffffff82a0b1c8 : "format\n"` lines; C escapes in the string are undone.
    pub fn parse(text: &str) -> PrintkFormats {
        let mut map = HashMap::default();
        for line in text.lines() {
            let Some((a, s)) = line.split_once(" : ") else {
                continue;
            };
            let a = a.trim().trim_start_matches("0x");
            let Ok(addr) = u64::from_str_radix(a, 16) else {
                continue;
            };
            let s = s.trim();
            let s = s
                .strip_prefix('"')
                .and_then(|s| s.strip_suffix('"'))
                .unwrap_or(s);
            map.insert(
                addr,
                PrintkEntry {
                    text: unescape(s),
                    compiled: OnceLock::new(),
                },
            );
        }
        PrintkFormats { map }
    }

    /// The string at `addr`.
    pub fn get(&self, addr: u64) -> Option<&str> {
        self.map.get(&addr).map(|e| e.text.as_str())
    }

    /// The string at `addr` compiled as a printf format, once.
    pub(crate) fn format(
        &self,
        addr: u64,
        long_size: usize,
    ) -> Option<Result<std::borrow::Cow<'_, [Seg]>, String>> {
        let e = self.map.get(&addr)?;
        let (long, compiled) = e
            .compiled
            .get_or_init(|| (long_size, parse_format(e.text.as_bytes(), long_size)));
        Some(if *long == long_size {
            compiled
                .as_deref()
                .map(std::borrow::Cow::Borrowed)
                .map_err(|m| m.clone())
        } else {
            parse_format(e.text.as_bytes(), long_size).map(std::borrow::Cow::Owned)
        })
    }

    /// Number of strings.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some(o) => {
                out.push('\\');
                out.push(o);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// The kallsyms text for a file's kernel addresses, read on first use (reading
/// `/proc/kallsyms` takes the kernel a while, and tracepoint text rarely needs it).
/// Clones share the text.
#[derive(Clone, Default)]
pub struct KallsymsSource {
    path: Option<std::path::PathBuf>,
    /// Makes the text instead of reading `path` (a trace.dat's compressed section).
    loader: Option<std::sync::Arc<KallsymsLoader>>,
    text: std::sync::Arc<std::sync::OnceLock<Option<KallsymsText>>>,
}

/// Makes a kallsyms text on first use; None when it cannot be had.
type KallsymsLoader = dyn Fn() -> Option<KallsymsText> + Send + Sync;

/// A kallsyms text held in a buffer that may start with bytes that are not part of it
/// (a section's length field), so that a decompressed section is used where it lies.
#[derive(Debug)]
pub struct KallsymsText {
    buf: String,
    start: usize,
}

impl KallsymsText {
    /// The text `buf[start..]`; `start` is cut back to a character boundary.
    pub fn new(buf: String, start: usize) -> KallsymsText {
        let mut start = start.min(buf.len());
        while !buf.is_char_boundary(start) {
            start -= 1;
        }
        KallsymsText { buf, start }
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.buf[self.start..]
    }
}

impl std::fmt::Debug for KallsymsSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KallsymsSource")
            .field("path", &self.path)
            .field("loader", &self.loader.is_some())
            .field("loaded", &self.text.get().map(Option::is_some))
            .finish()
    }
}

impl KallsymsSource {
    /// Symbols from this text.
    pub fn text_of(text: String) -> KallsymsSource {
        let s = KallsymsSource::default();
        let _ = s.text.set(Some(KallsymsText::new(text, 0)));
        s
    }

    /// Symbols from this file, read when first needed.
    pub fn file(path: std::path::PathBuf) -> KallsymsSource {
        KallsymsSource {
            path: Some(path),
            ..KallsymsSource::default()
        }
    }

    /// Symbols made by `load` when first needed (once, whichever clone asks first).
    pub fn load_with(
        load: impl Fn() -> Option<KallsymsText> + Send + Sync + 'static,
    ) -> KallsymsSource {
        KallsymsSource {
            loader: Some(std::sync::Arc::new(load)),
            ..KallsymsSource::default()
        }
    }

    /// The text (None when there is none or the file cannot be read).
    pub fn text(&self) -> Option<&str> {
        self.text
            .get_or_init(|| match &self.loader {
                Some(load) => load(),
                None => read_whole(self.path.as_ref()?).map(|t| KallsymsText::new(t, 0)),
            })
            .as_ref()
            .map(KallsymsText::as_str)
    }
}

/// The text of a file. `/proc/kallsyms` gives no size, and growing a buffer to its
/// megabytes copies them again at each step: the buffer starts with room for a big
/// kernel's (room never written to takes no memory).
pub(crate) fn read_whole(path: &std::path::Path) -> Option<String> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).ok()?;
    let size = f.metadata().map_or(0, |m| m.len());
    let room = match usize::try_from(size) {
        Ok(n) if n > 0 => n + 1,
        _ => 32 << 20,
    };
    let mut bytes = Vec::with_capacity(room);
    f.read_to_end(&mut bytes).ok()?;
    text_of(bytes)
}

/// `bytes` as text, None unless UTF-8 (as `read_to_string` reads): a kallsyms text is
/// ASCII, which one vector search over its megabytes tells.
pub(crate) fn text_of(bytes: Vec<u8>) -> Option<String> {
    if bytes.is_ascii() {
        // SAFETY: ASCII bytes are UTF-8.
        return Some(unsafe { String::from_utf8_unchecked(bytes) });
    }
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_hex_reads_as_from_str_radix_does() {
        for s in [
            "",
            "+",
            "0",
            "+ff",
            "-1",
            "ffffffff81000000",
            "FFFFFFFFFFFFFFFF",
            "10000000000000000",
            "00000000000000000000001",
            "0x10",
            "12 ",
            "abcdefABCDEF",
            "g",
            "0123456789abcdef",
            "FEDCBA9876543210",
            "ffffffff8100000g",
            "ffffffff 1000000",
            "+fffffff81000000",
            "ffffffff81000000\n",
            "@fffffff81000000",
            "`fffffff81000000",
            "/fffffff81000000",
            ":fffffff81000000",
            "Gfffffff81000000",
            "ffffffff8100000\u{7f}",
            "fffffff8100000\u{e9}",
        ] {
            let want = u64::from_str_radix(s, 16).ok();
            assert_eq!(parse_hex(s), want, "{s:?}");
        }
    }

    #[test]
    fn parse_hex_reads_sixteen_digits_with_any_ascii_byte_as_from_str_radix_does() {
        for pos in [0, 3, 7, 8, 12, 15] {
            for b in 0..0x80u8 {
                let mut digits = *b"0123456789abcdef";
                digits[pos] = b;
                let s = std::str::from_utf8(&digits).unwrap();
                assert_eq!(parse_hex(s), u64::from_str_radix(s, 16).ok(), "{s:?}");
            }
        }
    }

    #[test]
    fn parse_hex_reads_sixteen_bytes_of_any_value_as_from_str_radix_does() {
        // Every byte value at each place of sixteen, the ones no `str` holds included.
        for pos in 0..16 {
            for b in 0..=0xffu8 {
                let mut digits = *b"0123456789abcdef";
                digits[pos] = b;
                let Ok(s) = std::str::from_utf8(&digits) else {
                    assert_eq!(hex16(&digits), None, "{digits:?}");
                    continue;
                };
                if pos == 0 && b == b'+' {
                    continue;
                }
                assert_eq!(hex16(&digits), u64::from_str_radix(s, 16).ok(), "{s:?}");
            }
        }
    }

    #[test]
    fn a_word_ends_at_the_first_ascii_whitespace() {
        let naive = |b: &[u8], i: usize| {
            (i..b.len())
                .find(|&j| b[j].is_ascii_whitespace())
                .unwrap_or(b.len().max(i))
        };
        for stop in [
            b' ', b'\t', b'\n', 0x0b, 0x0c, b'\r', 0x01, 0x1f, 0x20, 0x21, 0x80, 0xff,
        ] {
            for len in 0..24 {
                for at in 0..len {
                    let mut b = vec![b'x'; len];
                    b[at] = stop;
                    if at + 2 < len {
                        b[at + 2] = b'\t';
                    }
                    for from in 0..=len {
                        assert_eq!(word_end(&b, from), naive(&b, from), "{b:?} from {from}");
                    }
                }
            }
        }
    }

    #[test]
    fn kallsyms_lookup() {
        let k = Kallsyms::parse(
            "ffffffff81000000 T _stext\nffffffff81000000 T startup_64\nffffffff81000100 t foo\n\
             ffffffff81000180 t bar\nffffffffc0000000 t modfn\t[kvm]\nffffffffc0000040 t modend\t[kvm]\n\
             0000000000000000 A zero\n",
        );
        let s = k.lookup(0xffffffff81000110).unwrap();
        assert_eq!(
            (s.name, s.addr, s.size, s.module),
            ("foo", 0xffffffff81000100, 0x80, None)
        );
        assert_eq!(k.lookup(0xffffffff81000000).unwrap().name, "_stext");
        assert_eq!(k.lookup(0xffffffffc0000004).unwrap().module, Some("kvm"));
        assert_eq!(k.lookup(0x1000), None);
        assert_eq!(k.lookup(0xffffffffc0000050), None);
    }

    #[test]
    fn the_first_of_many_aliases_is_found() {
        // More aliases than the backward walk takes before it searches instead.
        for n in [1usize, 2, 32, 33, 40] {
            let mut text = String::from("ffffffff80ffff00 T before\n");
            for i in 0..n {
                text.push_str(&format!("ffffffff81000000 T alias{i}\n"));
            }
            text.push_str("ffffffff81000100 T after\n");
            let k = Kallsyms::parse(&text);
            let s = k.lookup(0xffffffff81000010).unwrap();
            assert_eq!((s.name, s.size), ("alias0", 0x100), "{n} aliases");
        }
    }

    #[test]
    fn printk_formats() {
        let p = PrintkFormats::parse(
            "0xffffffff82a0b1c8 : \"hello %d\\n\"\n0xffffffff82a0b1d0 : \"x\\\"y\"\n",
        );
        assert_eq!(p.get(0xffffffff82a0b1c8), Some("hello %d\n"));
        assert_eq!(p.get(0xffffffff82a0b1d0), Some("x\"y"));
    }
}
