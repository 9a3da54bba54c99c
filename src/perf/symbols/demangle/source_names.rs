//! C++ names made of source names alone (`_ZN4llvm9StringRef4findEcm`, `_Z4mainiPPc`),
//! read directly: most of a C++ library's functions are named so, and GNU's demangler
//! without parameters prints their scopes and name joined by `::` whatever the
//! parameters that follow, which a general demangler parses for nothing.

/// GNU's name (without parameters) of a mangled `name` of the form
/// `_ZN [r][V][K][R|O] <source-name>{2,} [C1|C2|C3|D0|D1|D2] E <any>`, or
/// `_Z [L] <source-name> <any but I or B>`: the source names joined by `::`, a
/// constructor or destructor named after its class. None for any other name (read by
/// the general demangler then), and for one whose names GNU spells its own way (an
/// anonymous namespace's `_GLOBAL__N`) or that holds a clone suffix.
pub(super) fn source_names_text(name: &str) -> Option<String> {
    let b = name.as_bytes();
    let rest = b.strip_prefix(b"_Z")?;
    if b.contains(&b'.') {
        return None;
    }
    let mut out = String::with_capacity(name.len());
    match rest.first()? {
        b'N' => {
            let mut at = 1;
            // CV-qualifiers and a ref-qualifier of a method: GNU shows none without
            // parameters.
            for q in [b'r', b'V', b'K'] {
                at += (rest.get(at) == Some(&q)) as usize;
            }
            at += matches!(rest.get(at), Some(b'R' | b'O')) as usize;
            let mut last: &str = "";
            let mut count = 0;
            loop {
                match rest.get(at)? {
                    b'E' => break,
                    b'C' | b'D' => {
                        let kind = rest[at];
                        let variant = *rest.get(at + 1)?;
                        let known = match kind {
                            b'C' => matches!(variant, b'1'..=b'3'),
                            _ => matches!(variant, b'0'..=b'2'),
                        };
                        if !known || count == 0 || rest.get(at + 2) != Some(&b'E') {
                            return None;
                        }
                        out.push_str("::");
                        if kind == b'D' {
                            out.push('~');
                        }
                        out.push_str(last);
                        count += 1;
                        at += 2;
                    }
                    _ => {
                        let (id, len) = source_name(&rest[at..])?;
                        if count > 0 {
                            out.push_str("::");
                        }
                        out.push_str(id);
                        last = id;
                        count += 1;
                        at += len;
                    }
                }
            }
            (count >= 2).then_some(out)
        }
        _ => {
            let at = (rest[0] == b'L') as usize;
            let (id, len) = source_name(&rest[at..])?;
            // A template's arguments or an ABI tag follow the name.
            if matches!(rest.get(at + len), Some(b'I' | b'B')) {
                return None;
            }
            out.push_str(id);
            Some(out)
        }
    }
}

/// A `<length><identifier>` at the start of `b`, of letters, digits and `_`: the
/// identifier and the bytes read. None for an anonymous namespace's name, which GNU
/// writes in words.
fn source_name(b: &[u8]) -> Option<(&str, usize)> {
    let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 || digits > 5 || b[0] == b'0' {
        return None;
    }
    let len: usize = std::str::from_utf8(&b[..digits]).ok()?.parse().ok()?;
    let id = b.get(digits..digits + len)?;
    if !id.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_') || id.starts_with(b"_GLOBAL_") {
        return None;
    }
    Some((std::str::from_utf8(id).ok()?, digits + len))
}

#[cfg(test)]
mod tests {
    use super::source_names_text;

    /// Names read here, as binutils 2.40 `c++filt -p -i` prints them (parameters it
    /// does not read included: `_ZN1A1fEQQ`).
    #[test]
    fn source_names_as_gnu_prints_them() {
        for (mangled, gnu) in [
            ("_ZN4llvm9StringRef4findEcm", "llvm::StringRef::find"),
            ("_ZNK4llvm5Value7getNameEv", "llvm::Value::getName"),
            ("_ZNKR1A1fEv", "A::f"),
            (
                "_ZN4llvm11InstructionD0Ev",
                "llvm::Instruction::~Instruction",
            ),
            (
                "_ZN4llvm11InstructionC2ERKS0_",
                "llvm::Instruction::Instruction",
            ),
            ("_ZN1AD1Ev", "A::~A"),
            ("_Z4mainiPPc", "main"),
            ("_ZL9helper_fnv", "helper_fn"),
            ("_Z3foo", "foo"),
            ("_ZN1A1fEQQ", "A::f"),
        ] {
            assert_eq!(
                source_names_text(mangled).as_deref(),
                Some(gnu),
                "{mangled}"
            );
            assert_eq!(super::super::demangle(mangled), gnu, "{mangled}");
        }
    }

    /// Names GNU spells its own way, left to the general demangler (their c++filt
    /// names are checked with it).
    #[test]
    fn other_names_are_not_read_here() {
        for (mangled, gnu) in [
            ("_ZN12_GLOBAL__N_13fooEv", "(anonymous namespace)::foo"),
            ("_Z3fooIiEvT_", "foo<int>"),
            ("_ZN3foo3barB5cxx11Ev", "foo::bar[abi:cxx11]"),
            ("_Z3fooB5cxx11v", "foo[abi:cxx11]"),
        ] {
            assert_eq!(source_names_text(mangled), None, "{mangled}");
            assert_eq!(super::super::demangle(mangled), gnu, "{mangled}");
        }
        for mangled in [
            "_ZNC1Ev",
            "_ZN1A1fD3Ev",
            "_ZNSt6vectorIiE4sizeEv",
            "_ZN1A1f.cold",
        ] {
            assert_eq!(source_names_text(mangled), None, "{mangled}");
        }
    }
}
