//! Rust symbol names, v0 (`_R…`) and legacy (`_ZN…E`), written straight into one
//! `String` as rustc-demangle's alternate form (`{:#}`, what perf shows: no hashes, no
//! types after constants) writes them, without its formatting machinery.
//!
//! The names rustc makes are covered: paths, generic arguments, types, lifetimes,
//! integer and `bool` constants. Anything else (punycode identifiers, string, `char`
//! or structured constants, pattern types, a name nested very deep, a malformed one)
//! gives None, and the caller hands the name to rustc-demangle itself.

/// Most output written here; rustc-demangle's own limit is 1,000,000 bytes.
const MAX_OUT: usize = 1 << 16;
/// Most nesting followed here (paths, types, constants, back references); rustc-demangle
/// stops at 500.
const MAX_DEPTH: u32 = 200;
/// Most lifetimes one binder (`for<'a, ...>`) may bind here.
const MAX_BOUND: u64 = 64;

/// `name` (a whole symbol name, without a clone suffix) demangled as
/// `format!("{:#}", rustc_demangle::try_demangle(name)?)` writes it, or None when the
/// name is not one this covers.
pub(super) fn demangle_rust(name: &str) -> Option<String> {
    if !name.is_ascii() {
        return None;
    }
    if let Some(inner) = name.strip_prefix("_R") {
        v0(inner)
    } else {
        legacy(name.strip_prefix("_ZN")?)
    }
}

/// A v0 name after its `_R`: its path, followed by nothing or by the instantiating
/// crate's path (not shown).
fn v0(inner: &str) -> Option<String> {
    if !inner.as_bytes().first()?.is_ascii_uppercase() {
        return None;
    }
    let mut p = V0 {
        text: inner,
        s: inner.as_bytes(),
        at: 0,
        depth: 0,
        bound: 0,
        skipping: false,
        out: String::with_capacity(inner.len() + inner.len() / 2),
    };
    p.path(true)?;
    if p.peek().is_some_and(|b| b.is_ascii_uppercase()) {
        p.skipping = true;
        p.path(false)?;
    }
    (p.at == p.s.len()).then_some(p.out)
}

/// rustc-demangle's name for a basic type's tag.
fn basic_type(tag: u8) -> Option<&'static str> {
    Some(match tag {
        b'b' => "bool",
        b'c' => "char",
        b'e' => "str",
        b'u' => "()",
        b'a' => "i8",
        b's' => "i16",
        b'l' => "i32",
        b'x' => "i64",
        b'n' => "i128",
        b'i' => "isize",
        b'h' => "u8",
        b't' => "u16",
        b'm' => "u32",
        b'y' => "u64",
        b'o' => "u128",
        b'j' => "usize",
        b'f' => "f32",
        b'd' => "f64",
        b'z' => "!",
        b'p' => "_",
        b'v' => "...",
        _ => return None,
    })
}

/// A v0 name read and written in one pass.
struct V0<'s> {
    /// The mangled name, as text and as its bytes.
    text: &'s str,
    s: &'s [u8],
    at: usize,
    depth: u32,
    /// Lifetimes bound by the binders around what is being written.
    bound: u32,
    /// Reading without writing: the path of an `impl`, the instantiating crate. Back
    /// references are then not followed and lifetimes not resolved.
    skipping: bool,
    out: String,
}

impl<'s> V0<'s> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        let hit = self.peek() == Some(b);
        self.at += hit as usize;
        hit
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.at += 1;
        Some(b)
    }

    fn put(&mut self, s: &str) -> Option<()> {
        if !self.skipping {
            if self.out.len() + s.len() > MAX_OUT {
                return None;
            }
            self.out.push_str(s);
        }
        Some(())
    }

    fn put_u64(&mut self, v: u64) -> Option<()> {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        let mut v = v;
        loop {
            i -= 1;
            digits[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        // Only ASCII digits were written.
        self.put(std::str::from_utf8(&digits[i..]).ok()?)
    }

    fn push_depth(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }

    /// A base-62 number ending in `_` (`_` alone is 0, else the digits' value plus 1).
    fn integer_62(&mut self) -> Option<u64> {
        if self.eat(b'_') {
            return Some(0);
        }
        let mut x: u64 = 0;
        while !self.eat(b'_') {
            let d = match self.next()? {
                d @ b'0'..=b'9' => d - b'0',
                d @ b'a'..=b'z' => 10 + d - b'a',
                d @ b'A'..=b'Z' => 36 + d - b'A',
                _ => return None,
            };
            x = x.checked_mul(62)?.checked_add(d as u64)?;
        }
        x.checked_add(1)
    }

    /// An optional number after `tag`: 0 without the tag, else the number plus 1.
    fn opt_integer_62(&mut self, tag: u8) -> Option<u64> {
        if !self.eat(tag) {
            return Some(0);
        }
        self.integer_62()?.checked_add(1)
    }

    /// An identifier: a decimal length, an optional `_`, the bytes. Punycode ones
    /// (`u`) are left to rustc-demangle.
    fn ident(&mut self) -> Option<&'s str> {
        if self.peek() == Some(b'u') {
            return None;
        }
        let digit = |b: Option<u8>| b.filter(u8::is_ascii_digit).map(|d| (d - b'0') as usize);
        let mut len = digit(self.peek())?;
        self.at += 1;
        if len != 0 {
            while let Some(d) = digit(self.peek()) {
                self.at += 1;
                len = len.checked_mul(10)?.checked_add(d)?;
            }
        }
        self.eat(b'_');
        let start = self.at;
        let end = start.checked_add(len).filter(|&e| e <= self.s.len())?;
        self.at = end;
        // A name cut out of the text: UTF-8 when it starts and ends at characters.
        self.text.get(start..end)
    }

    /// A back reference (its `B` read): what it points at, written by `f`.
    fn backref(&mut self, f: impl FnOnce(&mut Self) -> Option<()>) -> Option<()> {
        let b_at = self.at - 1;
        let target = self.integer_62()?;
        if target >= b_at as u64 {
            return None;
        }
        if self.skipping {
            return Some(());
        }
        let resume = std::mem::replace(&mut self.at, target as usize);
        self.push_depth()?;
        f(self)?;
        self.depth -= 1;
        self.at = resume;
        Some(())
    }

    fn path(&mut self, in_value: bool) -> Option<()> {
        self.push_depth()?;
        let tag = self.next()?;
        match tag {
            b'C' => {
                self.opt_integer_62(b's')?;
                let name = self.ident()?;
                self.put(name)?;
            }
            b'N' => {
                let ns = match self.next()? {
                    ns @ b'A'..=b'Z' => Some(ns),
                    b'a'..=b'z' => None,
                    _ => return None,
                };
                self.path(in_value)?;
                let dis = self.opt_integer_62(b's')?;
                let name = self.ident()?;
                match ns {
                    Some(ns) => {
                        self.put("::{")?;
                        match ns {
                            b'C' => self.put("closure")?,
                            b'S' => self.put("shim")?,
                            // An uppercase ASCII letter.
                            _ => self.put(std::str::from_utf8(&[ns]).ok()?)?,
                        }
                        if !name.is_empty() {
                            self.put(":")?;
                            self.put(name)?;
                        }
                        self.put("#")?;
                        self.put_u64(dis)?;
                        self.put("}")?;
                    }
                    None if !name.is_empty() => {
                        self.put("::")?;
                        self.put(name)?;
                    }
                    None => {}
                }
            }
            b'M' | b'X' | b'Y' => {
                if tag != b'Y' {
                    // The impl's own path is not shown.
                    self.opt_integer_62(b's')?;
                    let was = std::mem::replace(&mut self.skipping, true);
                    self.path(false)?;
                    self.skipping = was;
                }
                self.put("<")?;
                self.ty()?;
                if tag != b'M' {
                    self.put(" as ")?;
                    self.path(false)?;
                }
                self.put(">")?;
            }
            b'I' => {
                self.path(in_value)?;
                if in_value {
                    self.put("::")?;
                }
                self.put("<")?;
                self.list(Self::generic_arg, ", ")?;
                self.put(">")?;
            }
            b'B' => self.backref(|p| p.path(in_value))?,
            _ => return None,
        }
        self.depth -= 1;
        Some(())
    }

    /// Items written by `f`, separated by `sep`, up to an `E`: how many.
    fn list(&mut self, f: impl Fn(&mut Self) -> Option<()>, sep: &str) -> Option<usize> {
        let mut n = 0;
        while !self.eat(b'E') {
            if n > 0 {
                self.put(sep)?;
            }
            f(self)?;
            n += 1;
        }
        Some(n)
    }

    fn generic_arg(&mut self) -> Option<()> {
        if self.eat(b'L') {
            let lt = self.integer_62()?;
            self.lifetime(lt)
        } else if self.eat(b'K') {
            self.constant()
        } else {
            self.ty()
        }
    }

    /// Lifetime `lt`: `'_` for 0, else one bound by the binders around, `'a` for the
    /// innermost.
    fn lifetime(&mut self, lt: u64) -> Option<()> {
        if self.skipping {
            return Some(());
        }
        self.put("'")?;
        if lt == 0 {
            return self.put("_");
        }
        let depth = (self.bound as u64).checked_sub(lt)?;
        if depth < 26 {
            self.put(std::str::from_utf8(&[b'a' + depth as u8]).ok()?)
        } else {
            self.put("_")?;
            self.put_u64(depth)
        }
    }

    /// An optional binder (`G`) of lifetimes, written as `for<'a, ...> `, around what
    /// `f` writes.
    fn in_binder(&mut self, f: impl FnOnce(&mut Self) -> Option<()>) -> Option<()> {
        let n = self.opt_integer_62(b'G')?;
        if self.skipping {
            return f(self);
        }
        if n > MAX_BOUND {
            return None;
        }
        if n > 0 {
            self.put("for<")?;
            for i in 0..n {
                if i > 0 {
                    self.put(", ")?;
                }
                self.bound += 1;
                self.lifetime(1)?;
            }
            self.put("> ")?;
        }
        f(self)?;
        self.bound -= n as u32;
        Some(())
    }

    fn ty(&mut self) -> Option<()> {
        let tag = self.next()?;
        if let Some(t) = basic_type(tag) {
            return self.put(t);
        }
        self.push_depth()?;
        match tag {
            b'R' | b'Q' => {
                self.put("&")?;
                if self.eat(b'L') {
                    let lt = self.integer_62()?;
                    if lt != 0 {
                        self.lifetime(lt)?;
                        self.put(" ")?;
                    }
                }
                if tag == b'Q' {
                    self.put("mut ")?;
                }
                self.ty()?;
            }
            b'P' | b'O' => {
                self.put(if tag == b'O' { "*mut " } else { "*const " })?;
                self.ty()?;
            }
            b'A' | b'S' => {
                self.put("[")?;
                self.ty()?;
                if tag == b'A' {
                    self.put("; ")?;
                    self.constant()?;
                }
                self.put("]")?;
            }
            b'T' => {
                self.put("(")?;
                if self.list(Self::ty, ", ")? == 1 {
                    self.put(",")?;
                }
                self.put(")")?;
            }
            b'F' => self.in_binder(|p| {
                let is_unsafe = p.eat(b'U');
                let abi = if !p.eat(b'K') {
                    None
                } else if p.eat(b'C') {
                    Some("C")
                } else {
                    Some(p.ident().filter(|a| !a.is_empty())?)
                };
                if is_unsafe {
                    p.put("unsafe ")?;
                }
                if let Some(abi) = abi {
                    p.put("extern \"")?;
                    // A `-` in the ABI's name is mangled as `_`.
                    for (i, part) in abi.split('_').enumerate() {
                        if i > 0 {
                            p.put("-")?;
                        }
                        p.put(part)?;
                    }
                    p.put("\" ")?;
                }
                p.put("fn(")?;
                p.list(Self::ty, ", ")?;
                p.put(")")?;
                if !p.eat(b'u') {
                    p.put(" -> ")?;
                    p.ty()?;
                }
                Some(())
            })?,
            b'D' => {
                self.put("dyn ")?;
                self.in_binder(|p| p.list(Self::dyn_trait, " + ").map(drop))?;
                if !self.eat(b'L') {
                    return None;
                }
                let lt = self.integer_62()?;
                if lt != 0 {
                    self.put(" + ")?;
                    self.lifetime(lt)?;
                }
            }
            b'B' => self.backref(Self::ty)?,
            // Pattern types and the splat marker are left to rustc-demangle.
            b'W' | b'w' => return None,
            _ => {
                self.at -= 1;
                self.path(false)?;
            }
        }
        self.depth -= 1;
        Some(())
    }

    /// A path whose generic arguments' `<` is left open (true) for the trait object's
    /// associated type bindings that may follow.
    fn path_open_generics(&mut self) -> Option<bool> {
        if self.eat(b'B') {
            let mut open = false;
            self.backref(|p| {
                open = p.path_open_generics()?;
                Some(())
            })?;
            Some(open)
        } else if self.eat(b'I') {
            self.path(false)?;
            self.put("<")?;
            self.list(Self::generic_arg, ", ")?;
            Some(true)
        } else {
            self.path(false)?;
            Some(false)
        }
    }

    fn dyn_trait(&mut self) -> Option<()> {
        let mut open = self.path_open_generics()?;
        while self.eat(b'p') {
            self.put(if open { ", " } else { "<" })?;
            open = true;
            let name = self.ident()?;
            self.put(name)?;
            self.put(" = ")?;
            if self.eat(b'K') {
                self.constant()?;
            } else {
                self.ty()?;
            }
        }
        if open {
            self.put(">")?;
        }
        Some(())
    }

    /// A constant: a placeholder, an integer or a `bool` (others give None).
    fn constant(&mut self) -> Option<()> {
        let tag = self.next()?;
        self.push_depth()?;
        match tag {
            b'p' => self.put("_")?,
            b'h' | b't' | b'm' | b'y' | b'o' | b'j' => self.const_uint()?,
            b'a' | b's' | b'l' | b'x' | b'n' | b'i' => {
                if self.eat(b'n') {
                    self.put("-")?;
                }
                self.const_uint()?;
            }
            b'b' => match self.hex_value()? {
                (Some(0), _) => self.put("false")?,
                (Some(1), _) => self.put("true")?,
                _ => return None,
            },
            b'B' => self.backref(Self::constant)?,
            _ => return None,
        }
        self.depth -= 1;
        Some(())
    }

    /// Lowercase hex digits up to a `_`: their value if it fits in 64 bits, and the
    /// digits.
    fn hex_value(&mut self) -> Option<(Option<u64>, &'s str)> {
        let start = self.at;
        while !self.eat(b'_') {
            match self.next()? {
                b'0'..=b'9' | b'a'..=b'f' => {}
                _ => return None,
            }
        }
        // Hex digits: ASCII.
        let digits = self.text.get(start..self.at - 1)?;
        let significant = digits.trim_start_matches('0');
        let value =
            (significant.len() <= 16).then(|| u64::from_str_radix(significant, 16).unwrap_or(0));
        Some((value, digits))
    }

    /// An unsigned integer constant: decimal, or the hex digits after `0x` when it
    /// does not fit in 64 bits.
    fn const_uint(&mut self) -> Option<()> {
        match self.hex_value()? {
            (Some(v), _) => self.put_u64(v),
            (None, digits) => {
                self.put("0x")?;
                self.put(digits)
            }
        }
    }
}

/// A legacy name after its `_ZN`: length-prefixed elements up to the final `E`, shown
/// joined by `::` with their `$..$` escapes and `..` decoded, without the last element
/// when it is a hash (`h` and hex digits).
fn legacy(inner: &str) -> Option<String> {
    let s = inner.as_bytes();
    let mut out = String::with_capacity(inner.len());
    let mut at = 0;
    let mut first = true;
    while *s.get(at)? != b'E' {
        if !s[at].is_ascii_digit() {
            return None;
        }
        let mut len = 0usize;
        while let Some(d) = s.get(at).filter(|b| b.is_ascii_digit()) {
            len = len.checked_mul(10)?.checked_add((d - b'0') as usize)?;
            at += 1;
        }
        let end = at.checked_add(len).filter(|&e| e <= s.len())?;
        let element = &inner[at..end];
        at = end;
        let last = s.get(at) == Some(&b'E');
        if last && is_rust_hash(element) {
            break;
        }
        if !first {
            out.push_str("::");
        }
        first = false;
        unescape_legacy(element, &mut out);
    }
    // The final `E` ends the name.
    (at + 1 == s.len()).then_some(out)
}

/// rustc-demangle's hash element: `h` then hex digits.
fn is_rust_hash(s: &str) -> bool {
    s.strip_prefix('h')
        .is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// A legacy element as shown: a leading `_$` loses its `_`, `..` is `::`, and the
/// escapes `$SP$ $BP$ $RF$ $LT$ $GT$ $LP$ $RP$ $C$` and `$u<hex>$` stand for their
/// characters. At an escape it does not know the rest is written as it is.
fn unescape_legacy(element: &str, out: &mut String) {
    let mut rest = element;
    if rest.starts_with("_$") {
        rest = &rest[1..];
    }
    loop {
        if let Some(after) = rest.strip_prefix('.') {
            if let Some(after) = after.strip_prefix('.') {
                out.push_str("::");
                rest = after;
            } else {
                out.push('.');
                rest = after;
            }
        } else if let Some(body) = rest.strip_prefix('$') {
            let Some(end) = body.find('$') else {
                break;
            };
            let (escape, after) = (&body[..end], &body[end + 1..]);
            let plain = match escape {
                "SP" => '@',
                "BP" => '*',
                "RF" => '&',
                "LT" => '<',
                "GT" => '>',
                "LP" => '(',
                "RP" => ')',
                "C" => ',',
                _ => {
                    let c = escape
                        .strip_prefix('u')
                        .filter(|d| d.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
                        .and_then(|d| u32::from_str_radix(d, 16).ok())
                        .and_then(char::from_u32)
                        .filter(|c| !c.is_control());
                    match c {
                        Some(c) => c,
                        None => break,
                    }
                }
            };
            out.push(plain);
            rest = after;
        } else if let Some(i) = rest.find(['$', '.']) {
            out.push_str(&rest[..i]);
            rest = &rest[i..];
        } else {
            break;
        }
    }
    out.push_str(rest);
}

#[cfg(test)]
mod tests {
    use super::demangle_rust;
    use std::collections::BTreeSet;

    /// rustc-demangle's alternate form of `name`, which [`demangle_rust`] must write.
    fn crate_text(name: &str) -> Option<String> {
        rustc_demangle::try_demangle(name)
            .ok()
            .map(|d| format!("{d:#}"))
    }

    /// The Rust names (v0 and legacy with a hash, clone suffixes cut as the demangler
    /// cuts them) of the ELF symbol tables of `files`.
    fn rust_names(files: &[std::path::PathBuf]) -> BTreeSet<String> {
        use object::{Object, ObjectSymbol};
        let mut names = BTreeSet::new();
        for f in files {
            let Ok(bytes) = std::fs::read(f) else {
                continue;
            };
            let Ok(elf) = object::File::parse(&*bytes) else {
                continue;
            };
            for sym in elf.symbols().chain(elf.dynamic_symbols()) {
                let Ok(name) = sym.name() else { continue };
                let name = super::super::strip_clone_suffix(name);
                if name.starts_with("_R")
                    || (name.starts_with("_ZN") && super::super::is_rust_legacy(name))
                {
                    names.insert(name.to_string());
                }
            }
        }
        names
    }

    /// The Rust toolchains' libraries and programs, and this test program.
    fn rust_files() -> Vec<std::path::PathBuf> {
        let mut files = vec![std::env::current_exe().unwrap()];
        let home = std::env::var_os("HOME").unwrap_or_default();
        let toolchains = std::path::Path::new(&home).join(".rustup/toolchains");
        for t in std::fs::read_dir(toolchains)
            .into_iter()
            .flatten()
            .flatten()
        {
            for dir in ["lib", "bin"] {
                for f in std::fs::read_dir(t.path().join(dir))
                    .into_iter()
                    .flatten()
                    .flatten()
                {
                    if f.file_type().is_ok_and(|t| t.is_file()) {
                        files.push(f.path());
                    }
                }
            }
        }
        files
    }

    /// Every Rust name of this machine's Rust programs and libraries comes out as
    /// rustc-demangle writes it, and nearly all of them without it.
    #[test]
    fn rust_names_of_this_machine_as_rustc_demangle_writes_them() {
        let names = rust_names(&rust_files());
        let (mut v0, mut legacy, mut written) = (0, 0, 0);
        for name in &names {
            let theirs = crate_text(name);
            if theirs.is_some() {
                if name.starts_with("_R") {
                    v0 += 1;
                } else {
                    legacy += 1;
                }
            }
            if let Some(ours) = demangle_rust(name) {
                written += 1;
                assert_eq!(Some(&ours), theirs.as_ref(), "{name}");
            }
        }
        // This test program alone holds thousands of legacy names.
        assert!(legacy > 1000, "{legacy} legacy names");
        assert!(
            written * 100 >= (v0 + legacy) * 99,
            "{written} of {}",
            v0 + legacy
        );
    }

    /// The forms rustc rarely makes, as rustc-demangle writes them or left to it.
    #[test]
    fn rare_forms() {
        for name in [
            // Closures, shims, impls, trait impls, generic arguments in values.
            "_RNCNvCs1234_7mycrate4main0B3_",
            "_RNSNvCs1234_7mycrate4main6vtable",
            "_RNvMCs4Cv8Wi1oAIB_7mycrateNtB2_3Foo3bar",
            "_RNvXs_Cs4Cv8Wi1oAIB_7mycrateNtB4_3FooNtNtCs1_4core3fmt7Display3fmt",
            "_RNvYNtCs1_1a1BNtCs1_1c1D1e",
            // Types: references with lifetimes, pointers, arrays, tuples, fn, dyn.
            "_RMC0FG0_RL0_eEu",
            "_RMC0FGq_RL1_eEu",
            "_RMC0FUKCEp",
            "_RMC0FUK19x86_64_sysv64_abiEhEl",
            "_RMC0DG_INtC0_3FooReEp4ItemReNtC0_3BarEL_",
            "_RMC0DNtC0_3FooEL0_",
            "_RMC0DNtC0_3FooNtC0_3BarEL_",
            "_RMC0TE",
            "_RMC0ThE",
            "_RMC0TahE",
            "_RMC0OPAhj8_",
            "_RMC0SQRL_b",
            // Constants: integers, negative, wide, bool, placeholder, back reference.
            "_RIC0Kj1f_E",
            "_RIC0Kanff_E",
            "_RIC0Ko123456789abcdef0123_E",
            "_RIC0Kb1_Kb0_KpE",
            "_RIC0Kb2_E",
            "_RIC0Kh_KB4_E",
            // Left to rustc-demangle: nesting past its limit.
            "_RINvCs1_4core3memB_NtCs1_5alloc3VecpEB4_",
            // Left to rustc-demangle: punycode, str and char constants, patterns.
            "_RNvC7mycrateu8gdel_5qa6Escher",
            "_RIC0Kc58_E",
            "_RIC0KRe616263_E",
            "_RMC0WmRm1_m9_",
            // Malformed: a back reference forward, a bad tag, trailing bytes.
            "_RNvB9_1a",
            "_RNvCs_4core",
            "_RZ",
            "_RNvC1a1b.",
            "_RNvC1a1bX",
            // Legacy: escapes, `..`, a leading `_$`, an escape it does not know.
            "_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$$GT$..$u7b$$u7b$closure$u7d$$u7d$$GT$17h6b8e9b5b8e9b5b8eE",
            "_ZN71_$LT$Test$u20$$u2b$$u20$$u27$static$u20$as$u20$foo..Bar$LT$Test$GT$$GT$3bar17h0123456789abcdefE",
            "_ZN13_$LT$test$GT$17h0123456789abcdefE",
            "_ZN4a$Q$17h0123456789abcdefE",
            "_ZN4a$u0$17h0123456789abcdefE",
            "_ZN5a.b$C17h0123456789abcdefE",
            "_ZN17h0123456789abcdefE",
            "_ZN3foo17h0123456789abcdefE",
            "_ZN3foo17h0123456789abcdefEx",
            "_ZN3foo99h0123456789abcdefE",
        ] {
            if let Some(ours) = demangle_rust(name) {
                assert_eq!(Some(ours), crate_text(name), "{name}");
            }
        }
        // Those written here.
        for name in [
            "_RNCNvCs1234_7mycrate4main0B3_",
            "_RNSNvCs1234_7mycrate4main6vtable",
            "_RNvMCs4Cv8Wi1oAIB_7mycrateNtB2_3Foo3bar",
            "_RMC0OPAhj8_",
            "_RMC0FGq_RL1_eEu",
            "_RMC0DG_INtC0_3FooReEp4ItemReNtC0_3BarEL_",
            "_RIC0Ko123456789abcdef0123_E",
            "_ZN4a$Q$17h0123456789abcdefE",
        ] {
            assert!(demangle_rust(name).is_some(), "{name}");
        }
        // Those left to rustc-demangle.
        for name in [
            "_RNvC7mycrateu8gdel_5qa6Escher",
            "_RIC0Kc58_E",
            "_RINvCs1_4core3memB_NtCs1_5alloc3VecpEB4_",
            "_RIC0Kh_KB4_E",
            "_RNvB9_1a",
            "_RNvC1a1bX",
            "_ZN3foo17h0123456789abcdefEx",
        ] {
            assert!(demangle_rust(name).is_none(), "{name}");
        }
    }
}
