//! What GNU's demangler reads from the mangled name that cpp_demangle does not write
//! or cannot read: the scope of a default argument (`Ed<n>_`, `{default arg#N}`), the
//! name GNU gives a constructor or destructor (the last source name it read rather than
//! the class's, libiberty's `last_name`), the first parameter of a constructor template
//! (which cpp_demangle takes for a return type), and the member of a standard type in an
//! expression (`sr St...`). All come from one scan of the mangled name that knows its
//! tokens (source names, substitutions, template parameters) and which bracket each `E`
//! closes, but not the whole grammar; each rewrite keeps the substitutions as they were.

use super::references::{seq_id_len, source_name_length};

/// The vendor extended type that stands for a default argument's scope in a name given
/// to cpp_demangle: a last parameter of the function that holds it, which takes no
/// substitution (it is a builtin type to cpp_demangle), followed by the argument's
/// number as GNU writes it.
const DEFAULT_ARG_MARKER: &str = "__tracectl_default_arg";

/// The longest number read from a mangled name: longer ones are not names of a real
/// program.
const MAX_DIGITS: usize = 9;

/// `name` with each default argument's scope (`E d [<number>] _`, after the function
/// of a local name) written as a marker parameter of that function and a plain local
/// name (`E`), for cpp_demangle, which leaves out the entity that follows the scope;
/// None when it has none. [`default_arg_scopes`] writes the markers as GNU does.
pub(super) fn default_arg_markers(name: &str) -> Option<String> {
    let b = name.as_bytes();
    let mut out = String::with_capacity(name.len() + 32);
    let mut changed = false;
    let mut from = 0;
    for token in Tokens::new(b) {
        let Token::Close(at) = token else { continue };
        if b.get(at + 1) != Some(&b'd') {
            continue;
        }
        let digits = b[at + 2..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if digits > MAX_DIGITS || b.get(at + 2 + digits) != Some(&b'_') {
            continue;
        }
        // GNU numbers them from 1: `d_` is the first, `d0_` the second.
        let number = match digits {
            0 => 1,
            _ => name[at + 2..at + 2 + digits].parse::<u64>().ok()? + 2,
        };
        let marker = format!("{DEFAULT_ARG_MARKER}{number}");
        out.push_str(&name[from..at]);
        out.push_str(&format!("u{}{marker}E", marker.len()));
        from = at + 2 + digits + 1;
        changed = true;
    }
    out.push_str(&name[from..]);
    changed.then_some(out)
}

/// `text` with each marker of [`default_arg_markers`] taken out of its function's
/// parameters and written, as GNU does, as a scope after the function and its
/// qualifiers: `f(int) const::{default arg#1}::{lambda()#1}`. None when a marker is
/// not where it was put (the last parameter of a function followed by `::`).
pub(super) fn default_arg_scopes(text: &str) -> Option<String> {
    let mut s = text.to_string();
    while let Some(at) = s.find(DEFAULT_ARG_MARKER) {
        let digits_at = at + DEFAULT_ARG_MARKER.len();
        let digits = s[digits_at..]
            .bytes()
            .take_while(|c| c.is_ascii_digit())
            .count();
        let number = &s[digits_at..digits_at + digits];
        let close = digits_at + digits;
        if digits == 0 || s.as_bytes().get(close) != Some(&b')') {
            return None;
        }
        // The parameter and its separator; a function of no parameters had `void`.
        let start = if s[..at].ends_with("(void, ") {
            at - "void, ".len()
        } else if s[..at].ends_with(", ") {
            at - ", ".len()
        } else if s[..at].ends_with('(') {
            at
        } else {
            return None;
        };
        let mut after = close + 1;
        while let Some(q) = [" const", " volatile", " &&", " &"]
            .iter()
            .find(|q| s[after..].starts_with(**q))
        {
            after += q.len();
        }
        if !s[after..].starts_with("::") {
            return None;
        }
        let scope = format!("{{default arg#{number}}}::");
        s.insert_str(after + 2, &scope);
        s.replace_range(start..close, "");
    }
    Some(s)
}

/// `name` with a return type (`v`) put after the name of each constructor template
/// (`N...C1I...EE`); None when it has none. A constructor has no return
/// type, but cpp_demangle takes the first parameter of a template for one and leaves
/// it out (`A::A<int>()` for GNU's `A::A<int>(B&)`); `void` takes no substitution.
pub(super) fn ctor_template_return_types(name: &str) -> Option<String> {
    let b = name.as_bytes();
    let mut tokens = Tokens::new(b);
    let mut after_ctor = None;
    // The depth of each open nested name that ends with a constructor template.
    let mut open: Vec<usize> = Vec::new();
    let mut insert_at = Vec::new();
    while let Some(token) = tokens.next() {
        match token {
            Token::Open(at) if b[at] == b'I' && after_ctor == Some(at) => {
                open.push(tokens.open.len() - 1);
            }
            Token::Close(at) if open.last() == Some(&(tokens.open.len() + 1)) => {
                open.pop();
                insert_at.push(at + 1);
            }
            _ => {}
        }
        after_ctor = match token {
            Token::CtorDtor(at) if b[at] == b'C' => Some(tokens.at),
            _ => None,
        };
    }
    if insert_at.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(name.len() + insert_at.len());
    let mut from = 0;
    for at in insert_at {
        out.push_str(&name[from..at]);
        out.push('v');
        from = at;
    }
    out.push_str(&name[from..]);
    Some(out)
}

/// The prefix of a name that stands for the member of a type in a name given to
/// cpp_demangle (see [`unresolved_type_scopes`]).
const SCOPE_MARKER: &str = "__tracectl_scope_";

/// `name` with each member of a standard type in an expression (`sr St <name>
/// [<template-args>] <name>`, GNU's `std::is_same<T, int>::value`, which cpp_demangle
/// cannot read) written as a cast of that type (`cv`, which reads the type with the same
/// substitutions) to a marked name; None when it has none. The member's name takes no
/// substitution either way. [`unresolved_type_scope_text`] writes them back.
pub(super) fn unresolved_type_scopes(name: &str) -> Option<String> {
    let b = name.as_bytes();
    let mut tokens = Tokens::new(b);
    // (where `sr` is, where the member's source name starts and its identifier's range).
    let mut found: Vec<(usize, usize, usize, usize)> = Vec::new();
    // The `sr` being read, and how far: 1 after `sr`, 2 after `St`, 3 after the type's
    // name, 4 in its template arguments (to the depth given), 5 after them.
    let mut reading: Option<(usize, u8, usize)> = None;
    while let Some(token) = tokens.next() {
        let in_expression = tokens.in_expression();
        reading = match (reading, token) {
            (_, Token::Other(at)) if in_expression && b[at..].starts_with(b"sr") => {
                Some((at, 1, 0))
            }
            (Some((sr, 1, _)), Token::Abbreviation(at)) if b[at + 1] == b't' => Some((sr, 2, 0)),
            (Some((sr, 2, _)), Token::SourceName(..)) => Some((sr, 3, 0)),
            (Some((sr, 3, _)), Token::Open(at)) if b[at] == b'I' => {
                Some((sr, 4, tokens.open.len() - 1))
            }
            (Some((sr, 4, depth)), Token::Close(_)) if tokens.open.len() == depth => {
                Some((sr, 5, 0))
            }
            (Some((sr, 4, depth)), _) => Some((sr, 4, depth)),
            (Some((sr, 3 | 5, _)), Token::SourceName(start, end)) => {
                let digits = b[..start]
                    .iter()
                    .rev()
                    .take_while(|c| c.is_ascii_digit())
                    .count();
                found.push((sr, start - digits, start, end));
                None
            }
            _ => None,
        };
    }
    if found.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(name.len() + found.len() * 24);
    let mut from = 0;
    for (sr, digits_at, start, end) in found {
        out.push_str(&name[from..sr]);
        out.push_str("cv");
        out.push_str(&name[sr + 2..digits_at]);
        let member = format!("{SCOPE_MARKER}{}", name.get(start..end)?);
        out.push_str(&format!("{}{member}", member.len()));
        from = end;
    }
    out.push_str(&name[from..]);
    Some(out)
}

/// `text` with each cast to a marked name of [`unresolved_type_scopes`]
/// (`(A<B>)(__tracectl_scope_value)`) written as the member of the type GNU writes
/// (`A<B>::value`); None when one is written otherwise.
pub(super) fn unresolved_type_scope_text(text: &str) -> Option<String> {
    let mut s = text.to_string();
    let open_marker = format!("({SCOPE_MARKER}");
    while let Some(at) = s.find(&open_marker) {
        let member_at = at + open_marker.len();
        let len = s[member_at..]
            .bytes()
            .take_while(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'$')
            .count();
        let close = member_at + len;
        if at == 0 || s.as_bytes()[at - 1] != b')' || s.as_bytes().get(close) != Some(&b')') {
            return None;
        }
        // The `(` that opens the type.
        let b = s.as_bytes();
        let mut depth = 0usize;
        let type_open = (0..at).rev().find(|&i| {
            match b[i] {
                b')' | b'>' | b']' | b'}' => depth += 1,
                b'(' | b'<' | b'[' | b'{' => depth = depth.saturating_sub(1),
                _ => {}
            }
            depth == 0
        })?;
        if b[type_open] != b'(' {
            return None;
        }
        let written = format!("{}::{}", &s[type_open + 1..at - 1], &s[member_at..close]);
        s.replace_range(type_open..=close, &written);
    }
    Some(s)
}

/// A constructor or destructor of the mangled name and the name GNU writes for it.
pub(super) struct CtorDtor {
    destructor: bool,
    /// The last source name GNU read before it, outside closed template arguments.
    gnu_name: String,
    /// Its class is a standard abbreviation (`Ss`), whose constructor GNU names in
    /// full (see `standard_abbreviations`).
    abbreviation: bool,
}

/// Every constructor and destructor of the mangled `name`, in order. GNU names one by
/// the last source name it read (ignoring those inside template arguments it has
/// closed, and ABI tags), which is its class's name unless the class was reached
/// through a substitution after another name was read:
/// `_M_assign<std::_Hashtable<...>::_M_assign(...)>` for `9_M_assignIZNSI_C1E...`.
pub(super) fn ctor_dtor_names(name: &str) -> Vec<CtorDtor> {
    let b = name.as_bytes();
    let mut found = Vec::new();
    let mut last_name: &str = "";
    // The last name when each open template argument list was opened.
    let mut saved: Vec<Option<&str>> = Vec::new();
    let mut abbreviation = false;
    let mut abi_tag = false;
    for token in Tokens::new(b) {
        match token {
            Token::SourceName(start, end) => {
                if !abi_tag {
                    // A length that ends inside a character names nothing GNU prints.
                    last_name = name.get(start..end).unwrap_or("");
                }
            }
            Token::Abbreviation(at) => {
                // GNU's standard substitutions set the name a constructor takes.
                if let Some(set) = match b.get(at + 1) {
                    Some(b'a') => Some("allocator"),
                    Some(b'b' | b's') => Some("basic_string"),
                    Some(b'i') => Some("basic_istream"),
                    Some(b'o') => Some("basic_ostream"),
                    Some(b'd') => Some("basic_iostream"),
                    _ => None,
                } {
                    last_name = set;
                }
            }
            Token::Open(at) => saved.push((b[at] == b'I').then_some(last_name)),
            Token::Close(_) => {
                if let Some(Some(name)) = saved.pop() {
                    last_name = name;
                }
            }
            Token::CtorDtor(at) => found.push(CtorDtor {
                destructor: b[at] == b'D',
                gnu_name: last_name.to_string(),
                abbreviation,
            }),
            Token::Other(_) | Token::BackReference(_) => {}
        }
        abbreviation = matches!(token, Token::Abbreviation(_));
        abi_tag = matches!(token, Token::Other(at) if b[at] == b'B');
    }
    found
}

/// `text` with each constructor and destructor that cpp_demangle named after its class
/// named as GNU names it ([`ctor_dtor_names`]); unchanged when the constructors and
/// destructors written are not those of the mangled name one for one (a substitution
/// wrote one again, a namespace has its class's name).
pub(super) fn gnu_ctor_dtor_names(text: &str, names: &[CtorDtor]) -> String {
    if !names
        .iter()
        .any(|n| !n.abbreviation && !n.gnu_name.is_empty())
    {
        return text.to_string();
    }
    let written = written_ctor_dtors(text);
    if written.len() != names.len()
        || written
            .iter()
            .zip(names)
            .any(|(w, n)| w.destructor != n.destructor)
    {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (w, n) in written.iter().zip(names) {
        if n.abbreviation || n.gnu_name.is_empty() || text[w.start..w.end] == n.gnu_name {
            continue;
        }
        out.push_str(&text[at..w.start]);
        out.push_str(&n.gnu_name);
        at = w.end;
    }
    out.push_str(&text[at..]);
    out
}

/// A constructor's or destructor's name in demangled text, by byte offsets.
struct WrittenCtorDtor {
    destructor: bool,
    start: usize,
    end: usize,
}

/// The constructors and destructors written in `text`: `A::A`, `A<B>::A`, `A::~A`,
/// a name after `::` that is its class's own.
fn written_ctor_dtors(text: &str) -> Vec<WrittenCtorDtor> {
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
    let b = text.as_bytes();
    // Where the bracket closed at each `>` was opened, in one pass.
    let mut opened_at = vec![usize::MAX; b.len()];
    let mut stack = Vec::new();
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'<' | b'(' | b'[' | b'{' => stack.push(i),
            b'>' | b')' | b']' | b'}' => {
                if let Some(open) = stack.pop() {
                    opened_at[i] = open;
                }
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    for (p, _) in text.match_indices("::") {
        let destructor = b.get(p + 2) == Some(&b'~');
        let start = p + 2 + destructor as usize;
        let len = b[start..].iter().take_while(|&&c| ident(c)).count();
        if len == 0 {
            continue;
        }
        let end = start + len;
        // The class before `::`, past its template arguments.
        let mut class_end = p;
        if b[..p].ends_with(b">") {
            match opened_at[p - 1] {
                usize::MAX => continue,
                open => class_end = open,
            }
        }
        let class = &text[..class_end];
        let own = class.ends_with(&text[start..end])
            && !class.as_bytes()[..class.len() - len]
                .last()
                .is_some_and(|&c| ident(c));
        if own {
            found.push(WrittenCtorDtor {
                destructor,
                start,
                end,
            });
        }
    }
    found
}

/// A token of a mangled name, by the offset of its first byte.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(super) enum Token {
    /// A source name's identifier, by its byte range (after the length).
    SourceName(usize, usize),
    /// A substitution (`S_`, `S<seq-id>_`).
    BackReference(usize),
    /// A standard abbreviation (`St`, `Sa`, `Ss`...).
    Abbreviation(usize),
    /// What an `E` closes: `N`, `Z`, `I`, `J`, `F`, `X`, `L`, a lambda's `Ul`,
    /// `DT`/`Dt`/`DO`/`Dw`, and in an expression a call's or a braced list's operator.
    Open(usize),
    Close(usize),
    /// `C1`..`C5`, `CI1`, `CI2`, `D0`..`D5`.
    CtorDtor(usize),
    Other(usize),
}

/// The tokens of a mangled name, reading each source name, substitution and template
/// parameter whole, and an expression's two-letter operators as one token. Linear in
/// the name's length; a source name that runs past the end ends the scan.
pub(super) struct Tokens<'a> {
    b: &'a [u8],
    at: usize,
    /// The open brackets, innermost last.
    open: Vec<Bracket>,
    last: Option<Token>,
    /// The last `E` closed a lambda's signature.
    closed_lambda: bool,
}

/// What an open bracket of [`Tokens`] is.
struct Bracket {
    /// An expression (`X`), where lowercase letters are operators.
    expression: bool,
    /// A lambda's signature (`Ul`), whose `E` its number follows.
    lambda: bool,
    /// A literal (`L`, not `L_Z`): a type, then digits that are its value.
    literal: bool,
}

impl<'a> Tokens<'a> {
    pub(super) fn new(b: &'a [u8]) -> Self {
        let at = if b.starts_with(b"_Z") { 2 } else { 0 };
        Tokens {
            b,
            at,
            open: Vec::new(),
            last: None,
            closed_lambda: false,
        }
    }

    fn in_expression(&self) -> bool {
        self.open.last().is_some_and(|o| o.expression)
    }
}

impl Iterator for Tokens<'_> {
    type Item = Token;

    fn next(&mut self) -> Option<Token> {
        let b = self.b;
        let i = self.at;
        let c = *b.get(i)?;
        let next = b.get(i + 1).copied();
        let (token, len) = if c.is_ascii_digit() {
            let digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
            // Right after a name, a substitution or an `E` (other than a lambda's,
            // which its number follows) digits are a source name's length.
            // In a literal (`L <type> <value> E`), the digits after its type are
            // its value.
            let value = self.open.last().is_some_and(|o| o.literal)
                && !matches!(self.last, Some(Token::Open(at)) if at + 1 == i);
            let name = match self.last {
                _ if value => false,
                Some(Token::SourceName(..) | Token::BackReference(_) | Token::Abbreviation(_)) => {
                    true
                }
                Some(Token::Close(_)) => !self.closed_lambda,
                _ => source_name_length(b, i, i + digits),
            };
            if name {
                if digits > MAX_DIGITS {
                    return None;
                }
                let n: usize = std::str::from_utf8(&b[i..i + digits]).ok()?.parse().ok()?;
                let end = (i + digits).checked_add(n).filter(|&e| e <= b.len())?;
                (Token::SourceName(i + digits, end), end - i)
            } else {
                (Token::Other(i), digits)
            }
        } else {
            match (c, next) {
                (b'S', Some(n)) if n.is_ascii_lowercase() => (Token::Abbreviation(i), 2),
                (b'S', _) => match seq_id_len(&b[i + 1..]) {
                    Some(len) => (Token::BackReference(i), 1 + len),
                    None => (Token::Other(i), 1),
                },
                (b'T', _) => match seq_id_len(&b[i + 1..]) {
                    Some(len) => (Token::Other(i), 1 + len),
                    None => (Token::Other(i), 1),
                },
                (b'C', Some(b'1'..=b'5')) => (Token::CtorDtor(i), 2),
                (b'C', Some(b'I')) if matches!(b.get(i + 2), Some(b'1' | b'2')) => {
                    (Token::CtorDtor(i), 3)
                }
                (b'D', Some(b'0'..=b'5')) => (Token::CtorDtor(i), 2),
                (b'D', Some(b'T' | b't' | b'O' | b'w')) => (Token::Open(i), 2),
                (b'D', Some(_)) => (Token::Other(i), 2),
                (b'U', Some(b'l')) => (Token::Open(i), 2),
                // A literal's encoding (`L_Z...E`) is no local name.
                (b'L', Some(b'_')) if b.get(i + 2) == Some(&b'Z') => (Token::Open(i), 3),
                (b'N' | b'Z' | b'I' | b'J' | b'F' | b'X' | b'L', _) => (Token::Open(i), 1),
                (b'E', _) => (Token::Close(i), 1),
                // A function parameter (`fp_`, `fL0p1_`) in an expression.
                (b'f', Some(b'p' | b'L')) if self.in_expression() => {
                    let len = b[i..].iter().position(|&c| c == b'_').map_or(2, |p| p + 1);
                    (Token::Other(i), len)
                }
                (b'c' | b'i' | b't' | b'n' | b'r', Some(n)) if self.in_expression() => {
                    match (c, n) {
                        (b'c', b'l' | b'p') | (b'i' | b't', b'l') | (b'n', b'w' | b'a') => {
                            (Token::Open(i), 2)
                        }
                        (b'r', b'q') => (Token::Open(i), 2),
                        _ => (Token::Other(i), 2),
                    }
                }
                // `sr <level>+ E <name>` closes its levels with an `E`.
                (b's', Some(b'r'))
                    if self.in_expression() && b.get(i + 2).is_some_and(u8::is_ascii_digit) =>
                {
                    (Token::Open(i), 2)
                }
                (b's', Some(b'P')) if self.in_expression() => (Token::Open(i), 2),
                (c, Some(_)) if self.in_expression() && c.is_ascii_lowercase() => {
                    (Token::Other(i), 2)
                }
                _ => (Token::Other(i), 1),
            }
        };
        self.last = Some(token);
        match token {
            Token::Open(at) => self.open.push(Bracket {
                expression: b[at] == b'X',
                lambda: b[at] == b'U',
                literal: b[at] == b'L' && len == 1,
            }),
            Token::Close(_) => {
                self.closed_lambda = self.open.pop().is_some_and(|o| o.lambda);
            }
            _ => {}
        }
        self.at = i + len.max(1);
        Some(token)
    }
}

#[cfg(test)]
mod tests {
    use super::super::demangle;

    /// The scope of a default argument, as binutils 2.40 `c++filt -p -i` writes it.
    #[test]
    fn cxx_default_argument_scopes_as_gnu_spells_them() {
        for (mangled, gnu) in [
            ("_ZZ1fvEd_UlvE_", "f()::{default arg#1}::{lambda()#1}"),
            ("_ZZ1fvEd0_UlvE_", "f()::{default arg#2}::{lambda()#1}"),
            ("_ZZ1fiEd_UlvE_", "f(int)::{default arg#1}::{lambda()#1}"),
            (
                "_ZZNK1A1fEiEd_UlvE_",
                "A::f(int) const::{default arg#1}::{lambda()#1}",
            ),
            (
                "_ZN4llvm12function_refIFbPKNS_3UseEEE11callback_fnIZNS_5Value17dropDroppableUsesES5_Ed_UlS3_E_EEblS3_",
                "llvm::function_ref<bool (llvm::Use const*)>::callback_fn<llvm::Value::dropDroppableUses(llvm::function_ref<bool (llvm::Use const*)>)::{default arg#1}::{lambda(llvm::Use const*)#1}>",
            ),
            (
                "_ZN4llvm12function_refIFvPKNS_5ValueEEE11callback_fnIZNKS1_20stripInBoundsOffsetsES5_Ed_UlS3_E_EEvlS3_",
                "llvm::function_ref<void (llvm::Value const*)>::callback_fn<llvm::Value::stripInBoundsOffsets(llvm::function_ref<void (llvm::Value const*)>) const::{default arg#1}::{lambda(llvm::Value const*)#1}>",
            ),
        ] {
            assert_eq!(demangle(mangled), gnu, "{mangled}");
        }
    }

    /// The parameters of a constructor template, none taken for a return type, as
    /// binutils 2.40 `c++filt -p -i` writes them.
    #[test]
    fn cxx_constructor_template_parameters_as_gnu_spells_them() {
        for (mangled, gnu) in [
            ("_ZZN1AC1IiEERiE1x", "A::A<int>(int&)::x"),
            ("_ZZN1AC2IiEERS_iE1x", "A::A<int>(A&, int)::x"),
            ("_ZZN1BIiEC1IiEEPKcE1x", "B<int>::B<int>(char const*)::x"),
            ("_ZZN1AC1IiEEvE1x", "A::A<int>()::x"),
            (
                "_ZNSt17_Function_handlerIFvPN4llvm6SDNodeES2_EZN12_GLOBAL__N_17DeleterC1INS4_16NullifyingVectorINS0_11SmallVectorIS2_Lj0EEEEEEERNS0_12SelectionDAGERT_EUlS2_S2_E_E9_M_invokeERKSt9_Any_dataOS2_SK_",
                "std::_Function_handler<void (llvm::SDNode*, llvm::SDNode*), (anonymous namespace)::Deleter::Deleter<(anonymous namespace)::NullifyingVector<llvm::SmallVector<llvm::SDNode*, 0u> > >(llvm::SelectionDAG&, (anonymous namespace)::NullifyingVector<llvm::SmallVector<llvm::SDNode*, 0u> >&)::{lambda(llvm::SDNode*, llvm::SDNode*)#1}>::_M_invoke",
            ),
        ] {
            assert_eq!(demangle(mangled), gnu, "{mangled}");
        }
    }

    /// The member of a standard type in an expression, as binutils 2.40
    /// `c++filt -p -i` writes it.
    #[test]
    fn cxx_members_of_standard_types_in_expressions_as_gnu_spells_them() {
        for (mangled, gnu) in [
            (
                "_ZZ1fIiEvNSt9enable_ifIXsrSt7is_sameIT_iE5valueEiE4typeEE1x",
                "f<int>(std::enable_if<std::is_same<int, int>::value, int>::type)::x",
            ),
            (
                "_ZSt12__to_chars_iIaENSt9enable_ifIXsrSt5__or_IJS1_IJSt7is_sameINSt9remove_cvIT_E4typeEaES2_IS6_sES2_IS6_iES2_IS6_lES2_IS6_xEEES1_IJS2_IS6_hES2_IS6_tES2_IS6_jES2_IS6_mES2_IS6_yEEES2_IcS6_EEE5valueESt15to_chars_resultE4typeEPcSO_S4_i",
                "std::__to_chars_i<signed char>",
            ),
            (
                "_ZZNSt8__detail13__to_chars_16IjEENSt9enable_ifIXsrSt5__or_IJS2_IJSt7is_sameINSt9remove_cvIT_E4typeEaES3_IS7_sES3_IS7_iES3_IS7_lES3_IS7_xEEES2_IJS3_IS7_hES3_IS7_tES3_IS7_jES3_IS7_mES3_IS7_yEEES3_IcS7_EEE5valueESt15to_chars_resultE4typeEPcSP_S5_E8__digits",
                "std::__detail::__to_chars_16<unsigned int>(char*, char*, unsigned int)::__digits",
            ),
        ] {
            assert_eq!(demangle(mangled), gnu, "{mangled}");
        }
    }

    /// Names made to look like default arguments, constructors and literals give the
    /// name itself or a demangling, in bounded time: no length runs past the end or
    /// inside a character, no number overflows.
    #[test]
    fn cxx_hostile_names_for_the_token_scan_do_not_panic() {
        let deep = format!("_ZN1A1fI{}EEvv", "IZNS_C1E".repeat(20_000));
        let wide = format!("_ZN1A1fI{}EEvv", "N1B1gEZNS_C1EvE1x".repeat(5_000));
        for name in [
            "_ZZ1fvEd99999999999999999999_UlvE_",
            "_ZZ1fvEd",
            "_ZZ1fvEd0",
            "_ZEd_",
            "_ZN1A1fIZNS_C1EvE9\u{e9}\u{e9}xEEvv",
            "_ZN1A1fIZNS_C1EvE2\u{e9}EEvv",
            "_ZN2\u{e9}1AC1Ev",
            "_ZN1A1fIZNS_C1EvE1\u{e9}EEvv",
            "_ZN1A1\u{e9}IZNS_C1EvE1xEEvv",
            "_ZL",
            "_ZL_Z",
            "_ZXsr1",
            "_ZXfp",
            "_ZN1AC",
            "_ZN1ACI",
            "_ZN1AC1I",
            "_ZXsrSt",
            "_ZXsrSt1",
            "_ZXsrSt1aI",
            "_ZXsrSt1aIE1",
            "_Z1fIXsrSt1aIiE1bEEvv",
            "_ZN1AC1IE",
            "_ZZN1AC1IIIIiEEE",
            "_ZZ1fvu22__tracectl_default_arg1EUlvE_",
            deep.as_str(),
            wide.as_str(),
        ] {
            let _ = demangle(name);
        }
    }

    /// A constructor or destructor reached through a substitution, named after the last
    /// source name read, as binutils 2.40 `c++filt -p -i` writes it.
    #[test]
    fn cxx_constructors_named_after_the_last_name_read_as_gnu_spells_them() {
        for (mangled, gnu) in [
            ("_ZN1A1fIZNS_C1EvE1xEEvv", "A::f<A::f()::x>"),
            ("_ZN1A1fIZNS_D1EvE1xEEvv", "A::f<A::~f()::x>"),
            ("_ZN1A1fIZNS_C2ERKS_E1xEEvv", "A::f<A::f(A const&)::x>"),
            ("_ZN1A1fIN1B1gEZNS_C1EvE1xEEvv", "A::f<B::g, A::g()::x>"),
            // Names inside closed template arguments do not count.
            ("_ZN1A1fIN1BIiEEZNS_C1EvE1xEEvv", "A::f<B<int>, A::B()::x>"),
            (
                "_ZN1A1fIZNS_C1EvE1xZNS_D2EvE1yEEvv",
                "A::f<A::f()::x, A::~x()::y>",
            ),
            // Reached by their own names, they keep them.
            ("_ZN1AC1Ev", "A::A"),
            (
                "_ZNSsC1Ev",
                "std::basic_string<char, std::char_traits<char>, std::allocator<char> >::basic_string",
            ),
            (
                "_ZNSt10_HashtableIjSt4pairIKjN4llvm9StringRefEESaIS4_ENSt8__detail10_Select1stESt8equal_toIjESt4hashIjENS6_18_Mod_range_hashingENS6_20_Default_ranged_hashENS6_20_Prime_rehash_policyENS6_17_Hashtable_traitsILb0ELb0ELb1EEEE9_M_assignIZNSH_C1ERKSH_EUlPKNS6_10_Hash_nodeIS4_Lb0EEEE_EEvSK_RKT_",
                "std::_Hashtable<unsigned int, std::pair<unsigned int const, llvm::StringRef>, std::allocator<std::pair<unsigned int const, llvm::StringRef> >, std::__detail::_Select1st, std::equal_to<unsigned int>, std::hash<unsigned int>, std::__detail::_Mod_range_hashing, std::__detail::_Default_ranged_hash, std::__detail::_Prime_rehash_policy, std::__detail::_Hashtable_traits<false, false, true> >::_M_assign<std::_Hashtable<unsigned int, std::pair<unsigned int const, llvm::StringRef>, std::allocator<std::pair<unsigned int const, llvm::StringRef> >, std::__detail::_Select1st, std::equal_to<unsigned int>, std::hash<unsigned int>, std::__detail::_Mod_range_hashing, std::__detail::_Default_ranged_hash, std::__detail::_Prime_rehash_policy, std::__detail::_Hashtable_traits<false, false, true> >::_M_assign(std::_Hashtable<unsigned int, std::pair<unsigned int const, llvm::StringRef>, std::allocator<std::pair<unsigned int const, llvm::StringRef> >, std::__detail::_Select1st, std::equal_to<unsigned int>, std::hash<unsigned int>, std::__detail::_Mod_range_hashing, std::__detail::_Default_ranged_hash, std::__detail::_Prime_rehash_policy, std::__detail::_Hashtable_traits<false, false, true> > const&)::{lambda(std::__detail::_Hash_node<std::pair<unsigned int const, llvm::StringRef>, false> const*)#1}>",
            ),
        ] {
            assert_eq!(demangle(mangled), gnu, "{mangled}");
        }
    }
}
