//! The kernel's `%p` family: symbols, addresses, MACs, UUIDs, hex dumps and bitmaps.

use super::print::{push_hex2, Spec};
use super::{PrintEnv, PrintStyle};
use crate::bytes::{push_dec as push_u64, push_hex};
use crate::endian::Endianness;

/// What a `%p` conversion receives.
pub(crate) enum PtrArg<'a> {
    /// A plain address (pointers, symbols).
    Addr(u64),
    /// A pointer into the record: the bytes it points to.
    Data(&'a [u8]),
}

/// Format one `%p` conversion.
pub(crate) fn format(
    env: &PrintEnv,
    spec: &Spec,
    arg: &PtrArg,
    long: u8,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let ext = spec.ext();
    let first = ext.first().copied().unwrap_or(0);
    if env.style == PrintStyle::TraceCmd {
        if let PtrArg::Addr(a) = arg {
            if !matches!(first, b'M' | b'm' | b'I' | b'i' | b'U' | b'h') {
                tracecmd_addr(env, *a, first, long, out);
                return Ok(());
            }
        }
    }
    match (first, arg) {
        (b'S' | b's' | b'F' | b'f' | b'B', PtrArg::Addr(a)) => {
            symbol(env, *a, first, out);
            Ok(())
        }
        (b'I' | b'i', PtrArg::Data(d)) => ip(ext, d, out),
        (b'M' | b'm', PtrArg::Data(d)) => {
            let d = d.get(..6).ok_or("%pM needs 6 bytes")?;
            let sep = if first == b'm' {
                None
            } else if ext.contains(&b'F') {
                Some(b'-')
            } else {
                Some(b':')
            };
            let rev = ext.contains(&b'R');
            for i in 0..6 {
                if i != 0 {
                    if let Some(s) = sep {
                        out.push(s);
                    }
                }
                push_hex2(out, d[if rev { 5 - i } else { i }]);
            }
            Ok(())
        }
        (b'U', PtrArg::Data(d)) => {
            let d = d.get(..16).ok_or("%pU needs 16 bytes")?;
            let kind = ext.get(1).copied().unwrap_or(b'b');
            let le = matches!(kind, b'l' | b'L');
            let upper = matches!(kind, b'B' | b'L');
            let order: [usize; 16] = if le {
                [3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15]
            } else {
                core::array::from_fn(|i| i)
            };
            for (n, &i) in order.iter().enumerate() {
                if matches!(n, 4 | 6 | 8 | 10) {
                    out.push(b'-');
                }
                let start = out.len();
                push_hex2(out, d[i]);
                if upper {
                    out[start..].make_ascii_uppercase();
                }
            }
            Ok(())
        }
        (b'h', PtrArg::Data(d)) => {
            let n = if spec.width < 0 {
                1
            } else {
                spec.width.min(64) as usize
            };
            let sep = match ext.get(1) {
                Some(b'C') => Some(b':'),
                Some(b'D') => Some(b'-'),
                Some(b'N') => None,
                _ => Some(b' '),
            };
            for (i, b) in d.iter().take(n).enumerate() {
                if i != 0 {
                    if let Some(s) = sep {
                        out.push(s);
                    }
                }
                push_hex2(out, *b);
            }
            Ok(())
        }
        (b'b', PtrArg::Data(d)) => {
            let nbits = spec.width.max(0) as usize;
            bitmap(
                out,
                d,
                nbits,
                ext.get(1) == Some(&b'l'),
                long as usize,
                env.endian,
            );
            Ok(())
        }
        (0 | b'x' | b'K' | b'X', PtrArg::Addr(a)) => {
            plain(*a, long, out);
            Ok(())
        }
        (0 | b'x' | b'K', PtrArg::Data(_)) => {
            Err("%p of a payload pointer (its kernel address is unknown)".into())
        }
        _ => Err(format!(
            "%p{} is not supported for this argument",
            String::from_utf8_lossy(ext)
        )),
    }
}

/// Kernel style `%p`: with options/hash-ptr off the kernel prints it as `%px`, the
/// address in hex zero-padded to a pointer's width, no `0x`.
#[inline]
pub(crate) fn plain(addr: u64, long: u8, out: &mut Vec<u8>) {
    let width = 2 * long as usize;
    if width > 16 {
        // Wider than any address: the leading zeros past sixteen digits.
        out.resize(out.len() + width - 16, b'0');
    }
    let digits = (64 - addr.leading_zeros() as usize).div_ceil(4).max(1);
    crate::bytes::push_hex_width(out, addr, width.clamp(digits, 16), false);
}

/// `%pS` `name+0xoff/0xsize [module]`, `%ps` `name [module]`, `%pB` (return addresses).
/// libtraceevent's `%p`, `%ps` and `%pS`: glibc's `%p` for plain pointers (and every
/// extension it does not know), `name` / `name+0xoff` for symbols.
fn tracecmd_addr(env: &PrintEnv, addr: u64, kind: u8, long: u8, out: &mut Vec<u8>) {
    let addr = if long == 4 { addr & 0xffff_ffff } else { addr };
    if matches!(kind, b'S' | b's' | b'F' | b'f') {
        // The texts of a function map's lookups are kept with the kernel style's (see
        // `symbol`), their letter's high bit set.
        let table = env.functions.map_or(0, |f| f.table_id());
        let key = (table, addr, kind | 0x80);
        let slot = sym_slot(addr, key.2);
        if table != 0 && cached_symbol(slot, key, out) {
            return;
        }
        let start = out.len();
        match tracecmd_function(env, addr) {
            Some((name, start)) => {
                crate::bytes::put(out, name.as_bytes());
                if matches!(kind, b'S' | b'F') {
                    crate::bytes::put(out, b"+0x");
                    push_hex(out, addr - start, false);
                }
            }
            None => {
                crate::bytes::put(out, b"0x");
                push_hex(out, addr, false);
            }
        }
        if table != 0 {
            keep_symbol(slot, key, &out[start..]);
        }
    } else if addr == 0 {
        crate::bytes::put(out, b"(nil)");
    } else {
        crate::bytes::put(out, b"0x");
        push_hex(out, addr, false);
    }
}

/// The function holding `addr` as libtraceevent finds it: in the function map when the
/// environment has one, else in kallsyms.
pub(crate) fn tracecmd_function<'e>(env: &PrintEnv<'e>, addr: u64) -> Option<(&'e str, u64)> {
    match env.functions {
        Some(f) => f.function(addr),
        None => env
            .kallsyms
            .and_then(|k| k.lookup(addr))
            .map(|s| (s.name, s.addr)),
    }
}

/// Kernel style `%pS`, `%ps`, `%pF`, `%pf` and `%pB` of `addr` (`kind`: the letter).
pub(crate) fn symbol(env: &PrintEnv, addr: u64, kind: u8, out: &mut Vec<u8>) {
    let Some(k) = env.kallsyms.filter(|k| k.id() != 0) else {
        crate::bytes::put(out, b"0x");
        push_hex(out, addr, false);
        return;
    };
    // Traces name the same call sites over and over: their text is kept per thread.
    let key = (k.id(), addr, kind);
    let slot = sym_slot(addr, kind);
    if cached_symbol(slot, key, out) {
        return;
    }
    let start = out.len();
    let back = kind == b'B';
    let look = if back { addr.wrapping_sub(1) } else { addr };
    match k.lookup(look) {
        Some(s) => {
            crate::bytes::put(out, s.name.as_bytes());
            if matches!(kind, b'S' | b'F' | b'B') {
                crate::bytes::put(out, b"+0x");
                push_hex(out, addr - s.addr, false);
                crate::bytes::put(out, b"/0x");
                push_hex(out, s.size, false);
            }
            if let Some(m) = s.module {
                crate::bytes::put(out, b" [");
                crate::bytes::put(out, m.as_bytes());
                out.push(b']');
            }
            keep_symbol(slot, key, &out[start..]);
        }
        None => {
            crate::bytes::put(out, b"0x");
            push_hex(out, addr, false);
        }
    }
}

/// The slot of (`addr`, `kind`) in the per-thread `%pS` text cache.
#[inline]
fn sym_slot(addr: u64, kind: u8) -> usize {
    ((addr ^ (addr >> 9) ^ u64::from(kind)).wrapping_mul(0x9e37_79b9_7f4a_7c15)
        >> (64 - SYM_SLOTS.trailing_zeros())) as usize
}

/// Append the text kept for `key` (table id, address, letter) in `slot`, if it is there.
#[inline]
fn cached_symbol(slot: usize, key: (u64, u64, u8), out: &mut Vec<u8>) -> bool {
    SYM_TEXT.with(|c| {
        let c = c.borrow();
        let s = &c[slot];
        if (s.table, s.addr, s.kind) == key {
            crate::bytes::put(out, &s.text[..s.len as usize]);
            true
        } else {
            false
        }
    })
}

/// Keep `text` for `key` in `slot` (when it is short enough).
fn keep_symbol(slot: usize, key: (u64, u64, u8), text: &[u8]) {
    if text.len() <= SYM_TEXT_LEN {
        SYM_TEXT.with(|c| {
            let s = &mut c.borrow_mut()[slot];
            (s.table, s.addr, s.kind) = key;
            s.len = text.len() as u8;
            s.text[..text.len()].copy_from_slice(text);
        });
    }
}

/// Slots of the per-thread `%pS` text cache (64 bytes each).
const SYM_SLOTS: usize = 256;
/// The longest text a slot holds.
const SYM_TEXT_LEN: usize = 46;

/// One symbol's text: kallsyms table id or function map id (never 0 in a filled slot;
/// a function map's letters have their high bit set), address, `%p` letter, and the text.
#[derive(Clone, Copy)]
struct SymSlot {
    table: u64,
    addr: u64,
    kind: u8,
    len: u8,
    text: [u8; SYM_TEXT_LEN],
}

thread_local! {
    static SYM_TEXT: std::cell::RefCell<[SymSlot; SYM_SLOTS]> = const {
        std::cell::RefCell::new(
            [SymSlot {
                table: 0,
                addr: 0,
                kind: 0,
                len: 0,
                text: [0; SYM_TEXT_LEN],
            }; SYM_SLOTS],
        )
    };
}

fn ip(ext: &[u8], d: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    let leading = ext[0] == b'i';
    match ext.get(1) {
        Some(b'4') => {
            ip4(d.get(..4).ok_or("%pI4 needs 4 bytes")?, leading, out);
            Ok(())
        }
        Some(b'6') => {
            let a = d.get(..16).ok_or("%pI6 needs 16 bytes")?;
            if leading {
                a.iter().for_each(|b| push_hex2(out, *b));
            } else if ext.get(2) == Some(&b'c') {
                ip6_compressed(a, out);
            } else {
                ip6_full(a, out);
            }
            Ok(())
        }
        Some(b'S') => {
            let flags = &ext[2..];
            let fam = u16::from_ne_bytes([
                *d.first().ok_or("empty sockaddr")?,
                *d.get(1).ok_or("short sockaddr")?,
            ]);
            let port = d
                .get(2..4)
                .map(|p| u16::from_be_bytes([p[0], p[1]]))
                .unwrap_or(0);
            match fam {
                2 => {
                    ip4(d.get(4..8).ok_or("short sockaddr_in")?, leading, out);
                    if flags.contains(&b'p') {
                        out.push(b':');
                        push_u64(out, port as u64);
                    }
                }
                10 => {
                    let a = d.get(8..24).ok_or("short sockaddr_in6")?;
                    let p = flags.contains(&b'p');
                    if p {
                        out.push(b'[');
                    }
                    if flags.contains(&b'c') {
                        ip6_compressed(a, out);
                    } else {
                        ip6_full(a, out);
                    }
                    if p {
                        crate::bytes::put(out, b"]:");
                        push_u64(out, port as u64);
                    }
                }
                _ => crate::bytes::put(out, b"(invalid address)"),
            }
            Ok(())
        }
        _ => Err(format!(
            "%p{} is not supported",
            String::from_utf8_lossy(ext)
        )),
    }
}

fn ip4(a: &[u8], leading: bool, out: &mut Vec<u8>) {
    for (i, b) in a.iter().enumerate() {
        if i != 0 {
            out.push(b'.');
        }
        if leading {
            out.push(b'0' + b / 100);
            out.push(b'0' + b / 10 % 10);
            out.push(b'0' + b % 10);
        } else {
            push_u64(out, *b as u64);
        }
    }
}

fn ip6_full(a: &[u8], out: &mut Vec<u8>) {
    for i in 0..8 {
        if i != 0 {
            out.push(b':');
        }
        push_hex2(out, a[2 * i]);
        push_hex2(out, a[2 * i + 1]);
    }
}

/// RFC 5952 style as the kernel's `ip6_compressed_string` writes it: the longest run of
/// zero words (more than one) becomes `::`, IPv4-mapped and -compatible tails print dotted.
fn ip6_compressed(a: &[u8], out: &mut Vec<u8>) {
    let words: Vec<u16> = (0..8)
        .map(|i| u16::from_be_bytes([a[2 * i], a[2 * i + 1]]))
        .collect();
    let mapped = words[..5].iter().all(|&w| w == 0) && words[5] == 0xffff;
    let useful = if mapped { 6 } else { 8 };
    // Longest run of zeros.
    let (mut best, mut best_len) = (usize::MAX, 0);
    let mut i = 0;
    while i < useful {
        let mut j = i;
        while j < useful && words[j] == 0 {
            j += 1;
        }
        if j - i > best_len {
            best = i;
            best_len = j - i;
        }
        i = j + 1;
    }
    if best_len <= 1 {
        best = usize::MAX;
    }
    let mut need_colon = false;
    let mut i = 0;
    while i < useful {
        if i == best {
            crate::bytes::put(out, b"::");
            i += best_len;
            need_colon = false;
            continue;
        }
        if need_colon {
            out.push(b':');
        }
        push_hex(out, words[i] as u64, false);
        need_colon = true;
        i += 1;
    }
    if mapped {
        if need_colon {
            out.push(b':');
        }
        ip4(&a[12..16], false, out);
    }
}

fn bit(d: &[u8], k: usize, long: usize, endian: Endianness) -> bool {
    if endian.is_big() {
        let word = k / (long * 8);
        let b = k % (long * 8);
        let byte = word * long + (long - 1 - b / 8);
        d.get(byte).is_some_and(|x| x >> (b % 8) & 1 == 1)
    } else {
        d.get(k / 8).is_some_and(|x| x >> (k % 8) & 1 == 1)
    }
}

/// `%*pb` (hex, 32-bit chunks separated by commas) or `%*pbl` (ranges like `0-3,5`).
pub(crate) fn bitmap(
    out: &mut Vec<u8>,
    d: &[u8],
    nbits: usize,
    list: bool,
    long: usize,
    endian: Endianness,
) {
    if list {
        let mut first = true;
        let mut k = 0;
        while k < nbits {
            if !bit(d, k, long, endian) {
                k += 1;
                continue;
            }
            let start = k;
            while k + 1 < nbits && bit(d, k + 1, long, endian) {
                k += 1;
            }
            if !first {
                out.push(b',');
            }
            first = false;
            push_u64(out, start as u64);
            if k > start {
                out.push(b'-');
                push_u64(out, k as u64);
            }
            k += 1;
        }
        return;
    }
    let mut chunk = nbits % 32;
    if chunk == 0 {
        chunk = 32;
    }
    let mut i = nbits.div_ceil(32) * 32;
    let mut first = true;
    while i >= 32 {
        i -= 32;
        let mut v: u64 = 0;
        for b in (0..chunk).rev() {
            v = v << 1 | bit(d, i + b, long, endian) as u64;
        }
        if !first {
            out.push(b',');
        }
        let start = out.len();
        push_hex(out, v, false);
        let w = chunk.div_ceil(4);
        let n = out.len() - start;
        if n < w {
            out.splice(start..start, std::iter::repeat(b'0').take(w - n));
        }
        chunk = 32;
        first = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> PrintEnv<'static> {
        PrintEnv {
            kallsyms: None,
            functions: None,
            printk: None,
            endian: Endianness::Little,
            long_size: 8,
            hz: None,
            style: Default::default(),
            time_in_ns: true,
        }
    }

    fn p(ext: &str, width: i32, arg: PtrArg) -> String {
        let mut spec = Spec {
            width,
            prec: -1,
            conv: b'p',
            ..Spec::default()
        };
        spec.ext[..ext.len()].copy_from_slice(ext.as_bytes());
        let mut out = Vec::new();
        format(&env(), &spec, &arg, 8, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// A table with one function ending 0x10 bytes before any address.
    #[derive(Debug)]
    struct OneFunction {
        id: u64,
        name: std::cell::Cell<&'static str>,
    }

    impl crate::event::FunctionLookup for OneFunction {
        fn function(&self, addr: u64) -> Option<(&str, u64)> {
            Some((self.name.get(), addr - 0x10))
        }

        fn table_id(&self) -> u64 {
            self.id
        }
    }

    #[test]
    fn trace_cmd_symbol_texts_are_kept_per_table_and_only_for_tables_with_an_id() {
        let text = |f: &OneFunction, kind: u8| {
            let env = PrintEnv {
                functions: Some(f),
                style: PrintStyle::TraceCmd,
                ..env()
            };
            let mut out = Vec::new();
            tracecmd_addr(&env, 0xffffffff81000110, kind, 8, &mut out);
            String::from_utf8(out).unwrap()
        };
        let a = OneFunction {
            id: u64::MAX - 1,
            name: std::cell::Cell::new("in_a"),
        };
        let b = OneFunction {
            id: u64::MAX - 2,
            name: std::cell::Cell::new("in_b"),
        };
        for _ in 0..2 {
            assert_eq!(text(&a, b'S'), "in_a+0x10");
            assert_eq!(text(&a, b's'), "in_a");
            assert_eq!(text(&b, b'S'), "in_b+0x10");
        }
        let unkept = OneFunction {
            id: 0,
            name: std::cell::Cell::new("first"),
        };
        assert_eq!(text(&unkept, b'S'), "first+0x10");
        unkept.name.set("second");
        assert_eq!(text(&unkept, b'S'), "second+0x10");
    }

    #[test]
    fn addresses_and_network() {
        assert_eq!(p("", -1, PtrArg::Addr(0)), "0000000000000000");
        assert_eq!(
            p("", -1, PtrArg::Addr(0xffff888103458600)),
            "ffff888103458600"
        );
        assert_eq!(p("S", -1, PtrArg::Addr(0)), "0x0");
        assert_eq!(p("I4", -1, PtrArg::Data(&[10, 0, 2, 15])), "10.0.2.15");
        assert_eq!(
            p("i4", -1, PtrArg::Data(&[10, 0, 2, 15])),
            "010.000.002.015"
        );
        let mut v6 = [0u8; 16];
        v6[0] = 0xfe;
        v6[1] = 0x80;
        v6[15] = 1;
        assert_eq!(p("I6c", -1, PtrArg::Data(&v6)), "fe80::1");
        assert_eq!(
            p("I6", -1, PtrArg::Data(&v6)),
            "fe80:0000:0000:0000:0000:0000:0000:0001"
        );
        assert_eq!(p("I6c", -1, PtrArg::Data(&[0; 16])), "::");
        let mut mapped = [0u8; 16];
        mapped[10] = 0xff;
        mapped[11] = 0xff;
        mapped[12..].copy_from_slice(&[1, 2, 3, 4]);
        assert_eq!(p("I6c", -1, PtrArg::Data(&mapped)), "::ffff:1.2.3.4");
        let mut sin = [0u8; 16];
        sin[..2].copy_from_slice(&2u16.to_ne_bytes());
        sin[2..4].copy_from_slice(&8080u16.to_be_bytes());
        sin[4..8].copy_from_slice(&[127, 0, 0, 1]);
        assert_eq!(p("ISpc", -1, PtrArg::Data(&sin)), "127.0.0.1:8080");
        let mut sin6 = [0u8; 28];
        sin6[..2].copy_from_slice(&10u16.to_ne_bytes());
        sin6[2..4].copy_from_slice(&443u16.to_be_bytes());
        sin6[8..24].copy_from_slice(&v6);
        assert_eq!(p("ISpc", -1, PtrArg::Data(&sin6)), "[fe80::1]:443");
        assert_eq!(
            p("M", -1, PtrArg::Data(&[0, 0x1b, 0x21, 0xa, 0xb, 0xc])),
            "00:1b:21:0a:0b:0c"
        );
        assert_eq!(
            p("m", -1, PtrArg::Data(&[0, 0x1b, 0x21, 0xa, 0xb, 0xc])),
            "001b210a0b0c"
        );
    }

    #[test]
    fn uuid_hex_and_bitmaps() {
        let u: Vec<u8> = (0..16).collect();
        assert_eq!(
            p("U", -1, PtrArg::Data(&u)),
            "00010203-0405-0607-0809-0a0b0c0d0e0f"
        );
        assert_eq!(
            p("Ul", -1, PtrArg::Data(&u)),
            "03020100-0504-0706-0809-0a0b0c0d0e0f"
        );
        assert_eq!(p("h", 3, PtrArg::Data(&[1, 0xab, 3, 4])), "01 ab 03");
        assert_eq!(p("hC", 2, PtrArg::Data(&[1, 0xab])), "01:ab");
        assert_eq!(p("hN", 2, PtrArg::Data(&[1, 0xab])), "01ab");
        assert_eq!(p("b", 8, PtrArg::Data(&[0x0f, 0, 0, 0, 0, 0, 0, 0])), "0f");
        assert_eq!(
            p("bl", 16, PtrArg::Data(&[0x2f, 0x01, 0, 0, 0, 0, 0, 0])),
            "0-3,5,8"
        );
        let mut out = Vec::new();
        bitmap(
            &mut out,
            &[3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0],
            128,
            false,
            8,
            Endianness::Little,
        );
        assert_eq!(out, b"00000000,00000001,00000000,00000003");
    }
}
