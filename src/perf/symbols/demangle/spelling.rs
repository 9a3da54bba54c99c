//! GNU's spelling of what cpp_demangle writes another way: literals, standard
//! abbreviations and the spaces of function types.

/// cpp_demangle's text as GNU's demangler (which perf uses) spells it: integer literals
/// of unsigned and long types with a suffix (`8u`, not `(unsigned int)8`), no separator
/// left by an empty template pack (`<A>`, not `<A, >`), `decltype(nullptr)` for `Dn`,
/// and the standard abbreviations as GNU writes them without its verbose option.
pub(super) fn gnu_spelling(s: &str) -> String {
    let s = standard_abbreviations(s);
    let s = s.as_str();
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
    function_type_spaces(&out)
}

/// The standard abbreviations (`Si`, `So`, `Sd`, `Ss`) as GNU spells them without
/// `DMGL_VERBOSE`: short (`std::istream`), except as the class of a constructor or
/// destructor, where the full template is written
/// (`std::basic_ostream<char, std::char_traits<char> >::basic_ostream`); cpp_demangle
/// writes some of them the other way round. `Dn` is `decltype(nullptr)` to GNU.
pub(super) fn standard_abbreviations(s: &str) -> String {
    // Every name replaced below is in `std::`.
    if memchr::memmem::find(s.as_bytes(), b"std::").is_none() {
        return s.to_string();
    }
    const CHAR_TRAITS: &str = "<char, std::char_traits<char> >";
    const STRING: &str = "<char, std::char_traits<char>, std::allocator<char> >";
    let mut out = s.to_string();
    for (short, template, args) in [
        ("istream", "basic_istream", CHAR_TRAITS),
        ("iostream", "basic_iostream", CHAR_TRAITS),
        ("ostream", "basic_ostream", CHAR_TRAITS),
        ("string", "basic_string", STRING),
    ] {
        // Every name replaced below starts with `std::` and the short or the template
        // name: without either the text stays as it is.
        let holds = |word: &str| {
            memchr::memmem::find_iter(out.as_bytes(), b"std::")
                .any(|i| out.as_bytes()[i + "std::".len()..].starts_with(word.as_bytes()))
        };
        if !holds(short) && !holds(template) {
            continue;
        }
        let full = format!("std::{template}{args}");
        let short_ctor = format!("std::{short}::{short}");
        let short_dtor = format!("std::{short}::~{short}");
        let full_ctor = format!("{full}::{template}");
        let full_dtor = format!("{full}::~{template}");
        let short = format!("std::{short}");
        out = replace_names(&out, &short_ctor, &full_ctor);
        out = replace_names(&out, &short_dtor, &full_dtor);
        // The full name that is not a constructor's or destructor's class.
        let mut kept = String::with_capacity(out.len());
        let mut rest = out.as_str();
        while let Some(i) = rest.find(&full) {
            let after = &rest[i + full.len()..];
            kept.push_str(&rest[..i]);
            if after.starts_with(&full_ctor[full.len()..])
                || after.starts_with(&full_dtor[full.len()..])
            {
                kept.push_str(&full);
            } else {
                kept.push_str(&short);
            }
            rest = after;
        }
        kept.push_str(rest);
        out = kept;
    }
    if memchr::memmem::find(out.as_bytes(), b"std::nullptr_t").is_none() {
        return out;
    }
    replace_names(&out, "std::nullptr_t", "decltype(nullptr)")
}

/// `s` with every `from` that is a whole name (not followed by more of an identifier,
/// not preceded by one or by `::`) replaced by `to`.
pub(super) fn replace_names(s: &str, from: &str, to: &str) -> String {
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out = String::with_capacity(s.len());
    let mut at = 0;
    while let Some(i) = s[at..].find(from).map(|i| at + i) {
        let whole_start = !s.as_bytes()[..i]
            .last()
            .is_some_and(|&c| ident(c) || c == b':');
        let whole_end = !s.as_bytes().get(i + from.len()).is_some_and(|&c| ident(c));
        out.push_str(&s[at..i]);
        out.push_str(if whole_start && whole_end { to } else { from });
        at = i + from.len();
    }
    out.push_str(&s[at..]);
    out
}

/// GNU writes a space between a function type's return type and its parameters
/// (`std::function<B<int> ()>`); cpp_demangle leaves it out after a class type. A `(`
/// right after a name, `>`, `*` or `&`, whose `)` is followed by `>` or `,` (or ends a typeinfo's
/// type), opens such a list (a
/// local name's function, `f()::x`, is followed by `::`; `sizeof`, `decltype` and the
/// like are not types).
pub(super) fn function_type_spaces(s: &str) -> String {
    const WORDS: [&str; 6] = [
        "sizeof", "alignof", "decltype", "noexcept", "typeid", "lambda",
    ];
    let b = s.as_bytes();
    // A typeinfo's type is a function type when it ends with its parameters.
    let typeinfo_of_a_type = ["typeinfo for ", "typeinfo name for "]
        .iter()
        .any(|p| s.starts_with(p));
    let mut out = String::with_capacity(s.len() + 4);
    let mut last = 0;
    for (i, &c) in b.iter().enumerate() {
        if c != b'(' || i == 0 {
            continue;
        }
        let before = b[i - 1];
        // A return type ends with a name, its template arguments, or a pointer or
        // reference to one (`A& (B)`); an operator's name is no return type.
        let pointee = s[..i].trim_end_matches(['*', '&']);
        let pointer = matches!(before, b'*' | b'&')
            && pointee
                .bytes()
                .last()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'>')
            && !pointee.ends_with("operator");
        if !(before.is_ascii_alphanumeric() || before == b'_' || before == b'>' || pointer) {
            continue;
        }
        let word_start = b[..i]
            .iter()
            .rposition(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
            .map_or(0, |p| p + 1);
        if WORDS.contains(&&s[word_start..i]) || s[..i].ends_with("operator") {
            continue;
        }
        let mut depth = 0usize;
        let close = b[i..].iter().position(|&c| {
            match c {
                b'(' => depth += 1,
                b')' => depth = depth.saturating_sub(1),
                _ => {}
            }
            depth == 0
        });
        if let Some(j) = close.map(|p| i + p) {
            if matches!(b.get(j + 1), Some(b'>' | b',')) || (j + 1 == b.len() && typeinfo_of_a_type)
            {
                out.push_str(&s[last..i]);
                out.push(' ');
                last = i;
            }
        }
    }
    out.push_str(&s[last..]);
    out
}
