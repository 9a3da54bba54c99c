//! Symbol names as perf 6.1 prints them: C++ through GNU's demangler (libiberty, no
//! parameters), spelled here on top of cpp_demangle's output; Rust without the hash.
//!
//! `scripts/demangle-survey` counts the names of a machine's libraries that come out
//! differently from binutils' `c++filt -p -i`, which prints what perf prints.

use std::borrow::Cow;

mod addresses;
mod lambda_packs;
mod mangled;
mod packs;
mod references;
mod rust;
mod source_names;
mod spelling;

use addresses::function_addresses;
use lambda_packs::lambda_pack_expansions;
use packs::{pack_qualifiers, NodeRecorder};
use references::{marked_references, placed_references, seq_id_len};
use spelling::gnu_spelling;

/// perf's demangling: C++ (`_Z`) without parameters, Rust without the hash.
pub fn demangle(name: &str) -> String {
    // Clone suffixes (`.cold`, `.warm`, `.llvm.123`, `.constprop.0`) after a mangled
    // name are dropped, as perf's demangler does without parameters.
    let name = strip_clone_suffix(name);
    if name.starts_with("_R")
        || (name.starts_with("_ZN") && name.ends_with('E') && is_rust_legacy(name))
    {
        if let Some(d) = rust::demangle_rust(name) {
            return d;
        }
        if let Ok(d) = rustc_demangle::try_demangle(name) {
            return format!("{d:#}");
        }
    }
    if let Some(t) = source_names::source_names_text(name) {
        return t;
    }
    if let Some(t) = demangle_special_function(name) {
        return t;
    }
    if name.starts_with("_Z") {
        if let Some(s) = cxx_text(name, false) {
            // Without parameters perf shows no cv- or ref-qualifiers of the method
            // either.
            let mut s = s.as_str();
            while let Some(t) = [" const", " volatile", " &&", " &"]
                .iter()
                .find_map(|q| s.strip_suffix(q))
            {
                s = t;
            }
            let s = gnu_spelling(&misplaced_const(&member_pointer_returned(s)));
            let s = construction_vtable_order(s);
            // Tables GNU names in words.
            for (open, words) in [("{vtable(", "vtable for "), ("{vtt(", "VTT for ")] {
                if let Some(t) = s.strip_prefix(open).and_then(|t| t.strip_suffix(")}")) {
                    return format!("{words}{t}");
                }
            }
            return s;
        }
    }
    name.to_string()
}

/// A thunk (`_ZTh`, `_ZTv`, `_ZTc`) or a transaction clone (`_ZGTt`) as GNU's demangler
/// names it without parameters: `non-virtual thunk to `, `virtual thunk to `,
/// `covariant return thunk to ` or `transaction clone for `, then the target function
/// with its parameters and qualifiers (GNU's special names hold a whole encoding). A
/// clone suffix after it (`.llvm.123`) is not shown.
fn demangle_special_function(name: &str) -> Option<String> {
    /// The length of a call offset (`h<number>_` or `v<number>_<number>_`) at the start.
    fn call_offset(s: &[u8]) -> Option<usize> {
        let numbers = match s.first()? {
            b'h' => 1,
            b'v' => 2,
            _ => return None,
        };
        let mut i = 1;
        for _ in 0..numbers {
            i += (s.get(i) == Some(&b'n')) as usize;
            let digits = s[i..].iter().take_while(|b| b.is_ascii_digit()).count();
            if digits == 0 || s.get(i + digits) != Some(&b'_') {
                return None;
            }
            i += digits + 1;
        }
        Some(i)
    }
    // A mangled name holds no dot: whatever follows one is a clone suffix.
    let name = name.split('.').next().unwrap_or(name);
    let (words, target) = if let Some(rest) = name.strip_prefix("_ZGTt") {
        ("transaction clone for ", rest)
    } else {
        let rest = name.strip_prefix("_ZT")?;
        // `Th`/`Tv` are followed by their one call offset, `Tc` by two after the `c`.
        let (words, offsets, mut at) = match rest.as_bytes().first()? {
            b'h' => ("non-virtual thunk to ", 1, 0),
            b'v' => ("virtual thunk to ", 1, 0),
            b'c' => ("covariant return thunk to ", 2, 1),
            _ => return None,
        };
        for _ in 0..offsets {
            at += call_offset(&rest.as_bytes()[at..])?;
        }
        (words, &rest[at..])
    };
    let text = cxx_text(&format!("_Z{target}"), true)?;
    Some(format!(
        "{words}{}",
        gnu_spelling(&misplaced_const(&member_pointer_returned(&text)))
    ))
}

/// A construction vtable as GNU names it: `construction vtable for B-in-D`, the base
/// (the second type of `_ZTC`) in the derived class (the first); cpp_demangle writes
/// them the other way round.
fn construction_vtable_order(s: String) -> String {
    const WORDS: &str = "construction vtable for ";
    let Some(types) = s.strip_prefix(WORDS) else {
        return s;
    };
    // `-in-` cannot be part of a type's name outside its brackets.
    let mut depth = 0i32;
    for (i, c) in types.char_indices() {
        match c {
            '(' | '<' | '[' | '{' => depth += 1,
            ')' | '>' | ']' | '}' => depth -= 1,
            '-' if depth == 0 && types[i..].starts_with("-in-") => {
                let (derived, base) = (&types[..i], &types[i + "-in-".len()..]);
                return format!("{WORDS}{base}-in-{derived}");
            }
            _ => {}
        }
    }
    s
}

/// The ` const` of a cv-qualified closure type or function type where GNU writes it,
/// after the lambda's signature (`{lambda(A)#1} const`) or the function's parameters
/// (`void (A) const`). cpp_demangle hands it to the first parameter that is a nested
/// name (`{lambda(A const)#1}`), but a parameter type never keeps a top-level `const`
/// (the mangling drops it), so one found there belongs to the closure or function type.
fn misplaced_const(s: &str) -> String {
    let b = s.as_bytes();
    // (where the ` const` is, where it goes) in the order found.
    let mut moves: Vec<(usize, usize)> = Vec::new();
    for (open, _) in s.match_indices('(') {
        let lambda = s[..open].ends_with("{lambda");
        // A function type's parameters follow its return type and a space (`void (`) or
        // the declarator in parentheses (`(*)(`, `(A::*)(`).
        let function_type = open > 0 && matches!(b[open - 1], b' ' | b')');
        if !(lambda || function_type) || s[..open].ends_with("operator") {
            continue;
        }
        let Some(close) = matching(b, open) else {
            continue;
        };
        // The parameters at the list's own depth.
        let mut depth = 0usize;
        let mut param_start = open + 1;
        let mut found = None;
        for i in open + 1..=close {
            match b[i] {
                b'(' | b'<' | b'[' | b'{' => depth += 1,
                b')' | b'>' | b']' | b'}' if i < close => depth = depth.saturating_sub(1),
                b',' | b')' if depth == 0 => {
                    let param = &s[param_start..i];
                    if let Some(t) = param.strip_suffix(" const") {
                        let named = t
                            .bytes()
                            .last()
                            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'>');
                        if named && !t.ends_with("auto") {
                            found = Some(i - " const".len());
                            break;
                        }
                    }
                    param_start = i + 2;
                }
                _ => {}
            }
        }
        let Some(at) = found else {
            continue;
        };
        // After the lambda's `)#N}`, or after the function type's `)`.
        let to = if lambda {
            match s[close..].find('}') {
                Some(brace) => close + brace + 1,
                None => continue,
            }
        } else {
            close + 1
        };
        if moves.iter().any(|&(a, t)| a == at || t == to) {
            continue;
        }
        moves.push((at, to));
    }
    if moves.is_empty() {
        return s.to_string();
    }
    let mut cuts: Vec<(usize, bool)> = moves
        .iter()
        .flat_map(|&(at, to)| [(at, false), (to, true)])
        .collect();
    cuts.sort();
    let mut out = String::with_capacity(s.len());
    let mut from = 0;
    for (at, insert) in cuts {
        out.push_str(&s[from..at]);
        if insert {
            out.push_str(" const");
            from = at;
        } else {
            from = at + " const".len();
        }
    }
    out.push_str(&s[from..]);
    out
}

/// A function type that returns a pointer to member function as GNU writes it, its
/// parameters after the `::*` (`R (C::*(A, B))(M)`, the `std::_Bind<F(A, B)>` of a
/// member function); cpp_demangle writes them after the class (`R (C(A, B)::*)(M)`).
/// A class name never ends with a parameter list, so a `)` right before `::*)` closes
/// the returning function type's parameters (unless it closes a `decltype(...)`).
fn member_pointer_returned(s: &str) -> Cow<'_, str> {
    const MEMBER: &str = "::*)(";
    if !s.contains(MEMBER) {
        return Cow::Borrowed(s);
    }
    let mut out = s.to_string();
    let mut from = 0;
    while let Some(found) = out[from..].find(MEMBER) {
        let at = from + found;
        from = at + MEMBER.len();
        let b = out.as_bytes();
        if at == 0 || b[at - 1] != b')' {
            continue;
        }
        let Some(open) = matching_back(b, at - 1) else {
            continue;
        };
        let class_name_end = out[..open]
            .bytes()
            .last()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'>');
        if !class_name_end || out[..open].ends_with("decltype") {
            continue;
        }
        let params = out[open..at].to_string();
        out.replace_range(open..at + "::*".len(), &format!("::*{params}"));
    }
    Cow::Owned(out)
}

/// The index of the bracket that opens the one that closes at `close`, counting every
/// kind of bracket as one depth.
fn matching_back(b: &[u8], close: usize) -> Option<usize> {
    let mut depth = 0usize;
    for i in (0..=close).rev() {
        match b[i] {
            b')' | b'>' | b'}' | b']' => depth += 1,
            b'(' | b'<' | b'{' | b'[' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// cpp_demangle's text for the mangled `name`, with what it puts in the wrong place
/// moved to where GNU writes it: a reference to a closure type after the closure (read
/// from the name with its references marked, see [`marked_references`]), the
/// qualifiers of a pack expansion (`DpRT_`) on every element of the pack, and a local
/// function's parameters after its name instead of inside a lambda's signature before it.
fn cxx_text(name: &str, params: bool) -> Option<String> {
    let ctor_dtors = mangled::ctor_dtor_names(name);
    let with_return_types = mangled::ctor_template_return_types(name);
    let read = with_return_types.as_deref().unwrap_or(name);
    let text = mangled::default_arg_markers(read)
        .and_then(|marked| cxx_text_of(&marked, params))
        .and_then(|text| mangled::default_arg_scopes(&text))
        .or_else(|| cxx_text_of(read, params))
        .or_else(|| {
            with_return_types
                .is_some()
                .then(|| cxx_text_of(name, params))
                .flatten()
        })
        .or_else(|| {
            // A name cpp_demangle cannot read at all (only then: it reads some of these
            // its own way).
            let scoped = mangled::unresolved_type_scopes(read)?;
            mangled::unresolved_type_scope_text(&cxx_text_of(&scoped, params)?)
        })?;
    let text = mangled::gnu_ctor_dtor_names(&text, &ctor_dtors);
    Some(lambda_pack_expansions(text, name))
}

/// [`cxx_text`] before the names GNU reads from the mangled name itself
/// ([`mangled`]) are put in.
fn cxx_text_of(name: &str, params: bool) -> Option<String> {
    if let Some(marked) = marked_references(name) {
        let text = cpp_demangle::Symbol::new(marked.as_str())
            .ok()
            .and_then(|sym| cxx_symbol_text(&sym, name, params));
        if text.is_some() {
            return text;
        }
    }
    cxx_symbol_text(&cpp_demangle::Symbol::new(name).ok()?, name, params)
}

/// [`cxx_text`] of `name` parsed as `sym`; None when a reference marked by
/// [`marked_references`] cannot be written where GNU writes it.
fn cxx_symbol_text(sym: &cpp_demangle::Symbol<&str>, name: &str, params: bool) -> Option<String> {
    let opts = cpp_demangle::DemangleOptions::new().no_return_type();
    let opts = if params { opts } else { opts.no_params() };
    let mut rec = NodeRecorder::default();
    sym.structured_demangle(&mut rec, &opts).ok()?;
    if rec.unplaced_reference {
        return None;
    }
    let text = pack_qualifiers(&rec);
    let text = lambda_function_params(&text);
    let text = nested_type_qualifiers(&text);
    let text = substituted_class_function_params(&text, name);
    // A function template's address needs its return type, left out above.
    let with_return_types = || {
        let opts = cpp_demangle::DemangleOptions::new();
        let opts = if params { opts } else { opts.no_params() };
        sym.demangle_with_options(&opts)
            .ok()
            .and_then(|t| placed_references(&t))
    };
    Some(function_addresses(&text, with_return_types))
}

/// cpp_demangle writes the parameters of a function whose name holds a lambda
/// (`{lambda(A, B)#1}::operator()(A, B) const` in a local name) inside the lambda's
/// signature, after the first class type there (`{lambda(A, B(A, B))#1}::operator()
/// const`). A lambda's parameter is never a function type, so a `(` right after a name
/// in a signature, closed before a `,` or the signature's end, opens such a list: it
/// moves after the member that follows the closure (and its template arguments). The
/// parameters of a function type that returns the closure (`std::_Bind<F(A)>`) land
/// there too; they move after the closure, past a space (`{lambda(B)#1} (A)`).
fn lambda_function_params(s: &str) -> String {
    let mut s = s.to_string();
    let mut from = 0;
    while let Some(open) = s[from..]
        .find("{lambda(")
        .map(|i| from + i + "{lambda(".len())
    {
        from = open;
        let b = s.as_bytes();
        let Some(close) = matching(b, open - 1) else {
            break;
        };
        // A `(` after a name at the signature's own depth.
        let mut depth = 0i32;
        let mut misplaced = None;
        for i in open..close {
            match b[i] {
                b'(' | b'<' | b'{' | b'[' => {
                    let before = b[i - 1];
                    if b[i] == b'('
                        && depth == 0
                        && (before.is_ascii_alphanumeric() || before == b'_' || before == b'>')
                        && !s[..i].ends_with("operator")
                    {
                        if let Some(end) = matching(b, i) {
                            if end < close && matches!(b[end + 1], b',' | b')') {
                                misplaced = Some((i, end + 1));
                                break;
                            }
                        }
                    }
                    depth += 1;
                }
                b')' | b'>' | b'}' | b']' => depth -= 1,
                _ => {}
            }
        }
        let Some((ps, pe)) = misplaced else {
            continue;
        };
        // The closure ends with `)#N}` or `)}`; the member after it is `::name`.
        let Some(brace) = s[close..].find('}').map(|i| close + i + 1) else {
            break;
        };
        let Some(member) = s[brace..].strip_prefix("::") else {
            // A function type returning the closure (`std::_Bind<F(A)>`): its
            // parameters after the closure, past a space.
            if matches!(s.as_bytes().get(brace), None | Some(b'>' | b',' | b')')) {
                let params = format!(" {}", &s[ps..pe]);
                s.insert_str(brace, &params);
                s.replace_range(ps..pe, "");
            }
            continue;
        };
        let mut len = if member.starts_with("operator()") {
            "operator()".len()
        } else {
            member
                .bytes()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'~')
                .count()
        };
        if len == 0 {
            continue;
        }
        if member.as_bytes().get(len) == Some(&b'<') {
            match matching(member.as_bytes(), len) {
                Some(e) => len = e + 1,
                None => continue,
            }
        }
        let at = brace + 2 + len;
        let params = s[ps..pe].to_string();
        s.insert_str(at, &params);
        s.replace_range(ps..pe, "");
    }
    s
}

/// cpp_demangle writes the parameters of a function named in a local name through a
/// substitution of its class (`ZNS2_4sortEvE3$_0`) after the class, whose nested name
/// takes them (`A()::sort::$_0`); GNU writes them after the function's name
/// (`A::sort()::$_0`). A const method's `const`, which cpp_demangle writes after the
/// whole local name (`A()::f::x const`), goes after its parameters (`A::f() const::x`).
/// The names of such functions are read from the mangled name `mangled`.
fn substituted_class_function_params(text: &str, mangled: &str) -> String {
    let mut s = text.to_string();
    let b = mangled.as_bytes();
    let mut done: Vec<(&str, &str)> = Vec::new();
    for (at, _) in mangled.match_indices("ZN") {
        let (cv, at) = match b.get(at + 2) {
            Some(b'K') => (" const", at + 1),
            _ => ("", at),
        };
        if b.get(at + 2) != Some(&b'S') {
            continue;
        }
        // `S<seq-id>_`, then the function's source name, then the nested name's end.
        let Some(seq) = seq_id_len(&b[at + 3..]) else {
            continue;
        };
        let digits_at = at + 3 + seq;
        let digits = b[digits_at..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        let Ok(len) = mangled[digits_at..digits_at + digits].parse::<usize>() else {
            continue;
        };
        let Some(function) = mangled.get(digits_at + digits..digits_at + digits + len) else {
            continue;
        };
        if b.get(digits_at + digits + len) != Some(&b'E') {
            continue;
        }
        // Each function once: all its places are rewritten together.
        if !done.contains(&(function, cv)) {
            s = function_params_after_name(&s, function, cv);
            done.push((function, cv));
        }
    }
    s
}

/// `s` with each `A(params)::function` written `A::function(params)`; with `cv`, only
/// where the template argument or name holding it ends with `cv`, which moves after
/// the parameters.
fn function_params_after_name(s: &str, function: &str, cv: &str) -> String {
    let is_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let pattern = format!(")::{function}");
    let mut s = s.to_string();
    let mut from = 0;
    while let Some(close) = s[from..].find(&pattern).map(|i| from + i) {
        let end = close + pattern.len();
        from = close + 1;
        let b = s.as_bytes();
        if b.get(end).is_some_and(|&c| is_ident(c)) {
            continue;
        }
        // The `(` that opens the parameters, right after the class's name.
        let mut depth = 0usize;
        let Some(open) = (0..=close).rev().find(|&i| {
            match b[i] {
                b')' | b'>' | b']' | b'}' => depth += 1,
                b'(' | b'<' | b'[' | b'{' => depth = depth.saturating_sub(1),
                _ => {}
            }
            depth == 0
        }) else {
            continue;
        };
        let before = &s[..open];
        let class_before = before
            .bytes()
            .last()
            .is_some_and(|c| is_ident(c) || c == b'>');
        if b[open] != b'('
            || !class_before
            || before.ends_with("operator")
            || before.ends_with("lambda")
        {
            continue;
        }
        let mut params = s[open..=close].to_string();
        let mut rest = s[end..].to_string();
        if !cv.is_empty() {
            // The end of what holds the local name: a `,` or `>` outside its brackets.
            let mut depth = 0usize;
            let stop = rest
                .bytes()
                .position(|c| {
                    match c {
                        b'(' | b'<' | b'[' | b'{' => depth += 1,
                        b')' | b']' | b'}' => depth = depth.saturating_sub(1),
                        b'>' if depth > 0 => depth -= 1,
                        b',' | b'>' => return true,
                        _ => {}
                    }
                    false
                })
                .unwrap_or(rest.len());
            if !rest[..stop].ends_with(cv) {
                continue;
            }
            rest.replace_range(stop - cv.len()..stop, "");
            params.push_str(cv);
        }
        s = format!("{before}::{function}{params}{rest}");
        from = open + 2 + function.len() + params.len();
    }
    s
}

/// cpp_demangle writes the qualifiers of a type named in a class it reached through a
/// substitution (`RNS1_9MatchTypeE`) after the class (`A&::B`, `A const::B`, `A&::*`);
/// GNU writes them after the whole name (`A::B&`, `A::*&`), the only place they can be.
fn nested_type_qualifiers(s: &str) -> String {
    let mut s = s.to_string();
    let mut from = 0;
    while let Some(at) = s[from..].find("::").map(|i| from + i) {
        from = at + 2;
        let quals = s[..at].len()
            - s[..at]
                .trim_end_matches(['&', '*'])
                .trim_end_matches(" const")
                .trim_end_matches(['&', '*'])
                .len();
        let start = at - quals;
        let name_before = s[..start]
            .bytes()
            .last()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'>');
        let name_after = s[from..]
            .bytes()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || b"_~{*".contains(&c));
        if quals == 0 || !name_before || !name_after || s[..start].ends_with("operator") {
            continue;
        }
        // The rest of the qualified name: components, their template arguments.
        let b = s.as_bytes();
        let mut end = from;
        loop {
            // A pointer to member (`A&::*` for `A::*&`) ends there.
            if b.get(end) == Some(&b'*') {
                end += 1;
                break;
            }
            while end < b.len() && (b[end].is_ascii_alphanumeric() || b"_~$".contains(&b[end])) {
                end += 1;
            }
            if matches!(b.get(end), Some(b'<' | b'{')) {
                match matching(b, end) {
                    Some(e) => end = e + 1,
                    None => break,
                }
            }
            if s[end..].starts_with("::") {
                end += 2;
            } else {
                break;
            }
        }
        let q = s[start..at].to_string();
        s.insert_str(end, &q);
        s.replace_range(start..at, "");
        from = end;
    }
    s
}

/// The index of the bracket that closes the one at `open` (`(`, `<`, `{`, `[`), counting
/// every kind of bracket as one depth.
fn matching(b: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &c) in b.iter().enumerate().skip(open) {
        match c {
            b'(' | b'<' | b'{' | b'[' => depth += 1,
            b')' | b'>' | b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `name` without the clone suffixes after a mangled name (`.cold`, `.llvm.123`).
fn strip_clone_suffix(name: &str) -> &str {
    if name.starts_with("_R") {
        // v0 Rust names never contain a dot.
        return name.split('.').next().unwrap_or(name);
    }
    if !name.starts_with("_Z") {
        return name;
    }
    let mut end = name.len();
    while let Some(dot) = name[..end].rfind('.') {
        let part = &name[dot + 1..end];
        if part.is_empty() || !part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            break;
        }
        end = dot;
        if name[..end].ends_with('E') {
            return &name[..end];
        }
    }
    name
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

#[cfg(test)]
mod tests {
    use super::demangle;

    /// Names as binutils 2.40 `c++filt -p -i` prints them (the libiberty demangler that
    /// Debian's perf 6.1 calls, without parameters or verbose spellings).
    #[test]
    fn cxx_names_as_gnu_spells_them() {
        for (mangled, gnu) in [
            (
                "_ZThn96_N4llvm18VPExpandSCEVRecipeD1Ev",
                "non-virtual thunk to llvm::VPExpandSCEVRecipe::~VPExpandSCEVRecipe()",
            ),
            ("_ZTv0_n24_N1A1fEv", "virtual thunk to A::f()"),
            ("_ZTv0_n24_N1A1fEii", "virtual thunk to A::f(int, int)"),
            ("_ZTch0_h16_N1B1fEv", "covariant return thunk to B::f()"),
            ("_ZTcv0_n12_h16_N1B1fEv", "covariant return thunk to B::f()"),
            ("_ZThn8_N1A1fEi", "non-virtual thunk to A::f(int)"),
            ("_ZThn8_N1AIiE1fEv", "non-virtual thunk to A<int>::f()"),
            ("_ZTV1A", "vtable for A"),
            ("_ZTT1A", "VTT for A"),
            ("_ZN1AIFN1BIiEEvEE1fEv", "A<B<int> ()>::f"),
            ("_ZN1AIFN1BIiE1CEvEE1fEv", "A<B<int>::C ()>::f"),
            ("_ZN1AIFN1BIN1CIiEEEEvEE1fEv", "A<B<C<int> > ()>::f"),
            ("_ZN1AIFN1BEvEE1fEv", "A<B ()>::f"),
            ("_ZN1AIFN1B1CEvEE1fEv", "A<B::C ()>::f"),
            ("_ZN1AIFvivEE1fEv", "A<void (int, void)>::f"),
            ("_ZN1AIPFvivEE1fEv", "A<void (*)(int, void)>::f"),
            ("_ZN1AIFPFvvEiEE1fEv", "A<void (*(int))()>::f"),
            ("_ZN1AIZ1fvE1BE1gEv", "A<f()::B>::g"),
            ("_ZZ1fvEN1B1gEv", "f()::B::g"),
            (
                "_ZNSt17_Function_handlerIFiN4llvm9StringRefEEZ1fvE3$_0E9_M_invokeERKSt9_Any_dataOS1_",
                "std::_Function_handler<int (llvm::StringRef), f()::$_0>::_M_invoke",
            ),
            ("_ZNKR1A1fEv", "A::f"),
            ("_ZNO1A1fEv", "A::f"),
            (
                "_ZGTtNKSt11logic_error4whatEv",
                "transaction clone for std::logic_error::what() const",
            ),
            ("_ZThn8_N1AD0Ev.llvm.123", "non-virtual thunk to A::~A()"),
            ("_ZN1A1fIDnEEvT_", "A::f<decltype(nullptr)>"),
            // A closure in a variable's initializer (the legacy data-member prefix).
            (
                "_ZN15FLAGS_nofromenvMUlvE_4_FUNEv",
                "FLAGS_nofromenv::{lambda()#1}::_FUN",
            ),
            (
                "_ZTIFN4llvm19TargetTransformInfoERKNS_8FunctionEE",
                "typeinfo for llvm::TargetTransformInfo (llvm::Function const&)",
            ),
        ] {
            assert_eq!(super::demangle(mangled), gnu, "{mangled}");
        }
    }

    /// The standard abbreviations as binutils 2.40 `c++filt -p -i` writes them: short,
    /// but in full as the class of a constructor or destructor.
    #[test]
    fn cxx_standard_abbreviations_as_gnu_spells_them() {
        for (mangled, gnu) in [
            ("_ZNKSi6gcountEv", "std::istream::gcount"),
            ("_ZNSd4swapERSd", "std::iostream::swap"),
            (
                "_ZNSoC1EOSo",
                "std::basic_ostream<char, std::char_traits<char> >::basic_ostream",
            ),
            (
                "_ZNSsD2Ev",
                "std::basic_string<char, std::char_traits<char>, std::allocator<char> >::~basic_string",
            ),
            (
                "_ZNSdD0Ev",
                "std::basic_iostream<char, std::char_traits<char> >::~basic_iostream",
            ),
        ] {
            assert_eq!(super::demangle(mangled), gnu, "{mangled}");
        }
    }

    /// A pack expansion's qualifiers on each element, as binutils 2.40 `c++filt -p -i`
    /// writes them, and none for an empty pack.
    #[test]
    fn cxx_pack_expansion_qualifiers_as_gnu_spells_them() {
        for (mangled, gnu) in [
            (
                "_ZZN1A1fIJiN1B1CEEEEvDpRT_E1x",
                "A::f<int, B::C>(int&, B::C&)::x",
            ),
            (
                "_ZZN1A1fIJPiN1B1CEEEEvDpRKT_E1x",
                "A::f<int*, B::C>(int* const&, B::C const&)::x",
            ),
            ("_ZZN1A1fIJEEEvDpRT_E1x", "A::f<>()::x"),
            ("_ZZN1A1fIJEEEviDpOT_E1x", "A::f<>(int)::x"),
            ("_ZZN1A1fIJEEEvDpOT_iE1x", "A::f<>(, int)::x"),
        ] {
            assert_eq!(super::demangle(mangled), gnu, "{mangled}");
        }
    }

    /// A function named by a lambda's member, inside a local name: its parameters after
    /// the member, as binutils 2.40 `c++filt -p -i` writes them.
    #[test]
    fn cxx_lambda_member_params_as_gnu_spells_them() {
        for (mangled, gnu) in [
            (
                "_ZZZ1fvENKUlN1B1CEE_clES0_E1x",
                "f()::{lambda(B::C)#1}::operator()(B::C) const::x",
            ),
            (
                "_ZZZ1fvENKUliN1B1CEE_clEiS1_E1x",
                "f()::{lambda(int, B::C)#1}::operator()(int, {lambda(int, B::C)#1}) const::x",
            ),
        ] {
            assert_eq!(super::demangle(mangled), gnu, "{mangled}");
        }
    }

    /// A function's address as a template argument, as binutils 2.40 `c++filt -p -i`
    /// writes it: a class member by its name, other functions in parentheses with their
    /// parameters, function templates with their return type too.
    #[test]
    fn cxx_function_addresses_as_gnu_spells_them() {
        for (mangled, gnu) in [
            ("_ZN1AIXadL_Z1fvEEE1gEv", "A<&(f())>::g"),
            ("_ZN1AIXadL_ZN1B1fEvEEE1gEv", "A<&B::f>::g"),
            ("_ZN1AIXadL_Z1fIiEvvEEE1gEv", "A<&(void f<int>())>::g"),
            ("_ZN1AIXadL_ZNK1B1fEvEEE1gEv", "A<&(B::f() const)>::g"),
            ("_ZN1AIXadL_ZN1B1fIiEEPcvEEE1gEv", "A<&(char* B::f<int>())>::g"),
            ("_ZN1AIXadL_ZN1B1xEEEE1gEv", "A<&B::x>::g"),
            (
                "_ZN12_GLOBAL__N_125ExplicitRewriteDescriptorILN4llvm14SymbolRewriter17RewriteDescriptor4TypeE1ENS1_8FunctionEXadL_ZNKS1_6Module11getFunctionENS1_9StringRefEEEE15performOnModuleERS6_",
                "(anonymous namespace)::ExplicitRewriteDescriptor<(llvm::SymbolRewriter::RewriteDescriptor::Type)1, llvm::Function, &(llvm::Module::getFunction(llvm::StringRef) const)>::performOnModule",
            ),
        ] {
            assert_eq!(super::demangle(mangled), gnu, "{mangled}");
        }
    }

    /// Qualifiers of a type named inside a class reached through a substitution, after
    /// the whole name, as binutils 2.40 `c++filt -p -i` writes them (libLLVM's names).
    #[test]
    fn cxx_qualifiers_after_a_nested_type_as_gnu_spells_them() {
        for (mangled, gnu) in [
            (
                "_ZNSt6vectorIN4llvm13FileCheckDiagESaIS1_EE12emplace_backIJRKNS0_9SourceMgrENS0_5Check13FileCheckTypeERNS0_5SMLocERNS1_9MatchTypeERNS0_7SMRangeERNS0_9StringRefEEEERS1_DpOT_",
                "std::vector<llvm::FileCheckDiag, std::allocator<llvm::FileCheckDiag> >::emplace_back<llvm::SourceMgr const&, llvm::Check::FileCheckType, llvm::SMLoc&, llvm::FileCheckDiag::MatchType&, llvm::SMRange&, llvm::StringRef&>",
            ),
            (
                "_ZN4llvm15SmallVectorImplISt4pairImMNS_7objcopy5macho11MachOWriterEFvvEEE12emplace_backIJRKjRS6_EEERS7_DpOT_",
                "llvm::SmallVectorImpl<std::pair<unsigned long, void (llvm::objcopy::macho::MachOWriter::*)()> >::emplace_back<unsigned int const&, void (llvm::objcopy::macho::MachOWriter::*&)()>",
            ),
        ] {
            assert_eq!(super::demangle(mangled), gnu, "{mangled}");
        }
    }

    /// A construction vtable, the base in the derived class, as binutils 2.40
    /// `c++filt -p -i` writes it.
    /// A function type that returns a pointer to member function (`std::_Bind`'s
    /// argument for a member function): the expected names are binutils 2.40
    /// `c++filt -p -i`'s output for these names, pasted.
    #[test]
    fn cxx_functions_returning_member_pointers_as_gnu_spells_them() {
        for (mangled, gnu) in [
            ("_Z1fIFM1AFivEPS0_EEvv", "f<int (A::*(A*))()>"),
            ("_Z1fIFM1AKFivEiEEvv", "f<int (A::*(int))() const>"),
            ("_Z1fIFPFivEiEEvv", "f<int (*(int))()>"),
            (
                "_ZN4llvm12function_refIFPNS_5ValueES2_S2_NS_8ArrayRefIiEEEE11callback_fnISt5_BindIFMNS_13slpvectorizer7BoUpSLP25ShuffleInstructionBuilderEFS2_S2_S2_S4_EPSB_St12_PlaceholderILi1EESF_ILi2EESF_ILi3EEEEEES2_lS2_S2_S4_",
                "llvm::function_ref<llvm::Value* (llvm::Value*, llvm::Value*, llvm::ArrayRef<int>)>::callback_fn<std::_Bind<llvm::Value* (llvm::slpvectorizer::BoUpSLP::ShuffleInstructionBuilder::*(llvm::slpvectorizer::BoUpSLP::ShuffleInstructionBuilder*, std::_Placeholder<1>, std::_Placeholder<2>, std::_Placeholder<3>))(llvm::Value*, llvm::Value*, llvm::ArrayRef<int>)> >",
            ),
        ] {
            assert_eq!(super::demangle(mangled), gnu, "{mangled}");
        }
    }

    #[test]
    fn cxx_construction_vtables_as_gnu_spells_them() {
        for (mangled, gnu) in [
            ("_ZTC1D8_1B", "construction vtable for B-in-D"),
            ("_ZTCSd0_Si", "construction vtable for std::istream-in-std::iostream"),
            (
                "_ZTCSt13basic_fstreamIcSt11char_traitsIcEE16_So",
                "construction vtable for std::ostream-in-std::basic_fstream<char, std::char_traits<char> >",
            ),
            (
                "_ZTCNSt7__cxx1118basic_stringstreamIwSt11char_traitsIwESaIwEEE0_St13basic_istreamIwS2_E",
                "construction vtable for std::basic_istream<wchar_t, std::char_traits<wchar_t> >-in-std::__cxx11::basic_stringstream<wchar_t, std::char_traits<wchar_t>, std::allocator<wchar_t> >",
            ),
        ] {
            assert_eq!(super::demangle(mangled), gnu, "{mangled}");
        }
    }

    /// The `const` of a closure type or a function type after its signature, not on
    /// its first parameter, as binutils 2.40 `c++filt -p -i` writes it.
    #[test]
    fn cxx_const_closures_and_function_types_as_gnu_spells_them() {
        for (mangled, gnu) in [
            ("_ZN1AIKFvN1B1CEEE1fEv", "A<void (B::C) const>::f"),
            ("_ZN1AIKFviEE1fEv", "A<void (int) const>::f"),
            (
                "_ZN1AIMN1B1CEKFvNS1_1DEiEE1fEv",
                "A<void (B::C::*)(B::C::D, int) const>::f",
            ),
            ("_ZN1AIFvMN1B1CEKFvvEEE1fEv", "A<void (void (B::C::*)() const)>::f"),
            ("_ZN1AIKZ1fvEUlN1B1CEE_E1gEv", "A<f()::{lambda(B::C)#1} const>::g"),
            ("_ZN1AIRKZ1fvEUlN1B1CEE_E1gEv", "A<f()::{lambda(B::C)#1} const&>::g"),
            ("_ZN1AIKZ1fvEUliE_E1gEv", "A<f()::{lambda(int)#1} const>::g"),
            (
                "_ZN4llvm6detail18UniqueFunctionBaseIvJNS_3orc12ExecutorAddrEEE8CallImplIKZNS2_19LocalTrampolinePoolINS2_7OrcI386EE7reenterEPvS9_EUlS3_E_EEvS9_S3_",
                "llvm::detail::UniqueFunctionBase<void, llvm::orc::ExecutorAddr>::CallImpl<llvm::orc::LocalTrampolinePool<llvm::orc::OrcI386>::reenter(void*, void*)::{lambda(llvm::orc::ExecutorAddr)#1} const>",
            ),
            (
                "_ZNSt17_Function_handlerIFSt8optionalIlEPKN4llvm4json6ObjectENS2_9StringRefEEMS4_KFS1_S7_EE9_M_invokeERKSt9_Any_dataOS6_OS7_",
                "std::_Function_handler<std::optional<long> (llvm::json::Object const*, llvm::StringRef), std::optional<long> (llvm::json::Object::*)(llvm::StringRef) const>::_M_invoke",
            ),
        ] {
            assert_eq!(super::demangle(mangled), gnu, "{mangled}");
        }
    }

    /// A reference to a closure type after the closure, collapsed with a reference
    /// there, as binutils 2.40 `c++filt -p -i` writes it (cpp_demangle gave it to the
    /// lambda's first parameter or lost it in a reference among them).
    #[test]
    fn cxx_references_to_closures_as_gnu_spells_them() {
        for (mangled, gnu) in [
            ("_ZN1AIOZ1fvEUlN1B1CEE_E1gEv", "A<f()::{lambda(B::C)#1}&&>::g"),
            ("_ZN1AIRZ1fvEUlN1B1CEE_E1gEv", "A<f()::{lambda(B::C)#1}&>::g"),
            ("_ZN1AIOZ1fvEUlRKiE_E1gEv", "A<f()::{lambda(int const&)#1}&&>::g"),
            ("_ZN1AIOZ1fvEUlOiE_E1gEv", "A<f()::{lambda(int&&)#1}&&>::g"),
            ("_ZN1AIRKZ1fvEUlN1B1CEE_E1gEv", "A<f()::{lambda(B::C)#1} const&>::g"),
            ("_ZN1AIROKZ1fvEUliE_E1gEv", "A<f()::{lambda(int)#1} const&>::g"),
            (
                "_ZN1AIJOZ1fvEUliE_RS1_EE1gEv",
                "A<f()::{lambda(int)#1}&&, f()::{lambda(int)#1}&>::g",
            ),
            ("_ZZ1fOZ1gvEUlN1B1CEE_ENK1X1hEv", "f(g()::{lambda(B::C)#1}&&)::X::h"),
            (
                "_ZZ1fIJiEEvDpOT_ENKUlOT_E_clIiEEDaS3_",
                "f<int>(int&&)::{lambda(auto:1&&)#1}::operator()<int>",
            ),
            // A pack expansion's reference on each element.
            (
                "_ZZ1fIJiZ1gvEUlvE_EEvDpOT_E1x",
                "f<int, g()::{lambda()#1}>(int&&, g()::{lambda()#1}&&)::x",
            ),
            // A method's ref-qualifier and an operator's letters are no references.
            ("_ZNR1AIZ1fvEUliE_E1gEv", "A<f()::{lambda(int)#1}>::g"),
            (
                "_ZN1AIZ1fvEUliE_EoRERKS1_",
                "A<f()::{lambda(int)#1}>::operator|=",
            ),
            (
                "_ZNSt8__detail9__variant12__gen_vtableILb1EbOZN4llvm12DenseMapInfoISt7variantIJNS2_9StringRefEmEEvE7isEqualERKS6_S9_EUlRKT_E0_JS9_EE9_S_vtableE",
                "std::__detail::__variant::__gen_vtable<true, bool, llvm::DenseMapInfo<std::variant<llvm::StringRef, unsigned long>, void>::isEqual(std::variant<llvm::StringRef, unsigned long> const&, std::variant<llvm::StringRef, unsigned long> const&)::{lambda(auto:1 const&)#2}&&, std::variant<llvm::StringRef, unsigned long> const&>::_S_vtable",
            ),
            (
                "_ZNK4llvm10Attributor10emitRemarkINS_18OptimizationRemarkERZN12_GLOBAL__N_121AAHeapToStackFunction8manifestERS0_EUlS2_E_EEvPNS_11InstructionENS_9StringRefEOT0_",
                "llvm::Attributor::emitRemark<llvm::OptimizationRemark, (anonymous namespace)::AAHeapToStackFunction::manifest(llvm::Attributor&)::{lambda(llvm::OptimizationRemark)#1}&>",
            ),
        ] {
            assert_eq!(super::demangle(mangled), gnu, "{mangled}");
        }
    }

    /// A pack expansion's reference on each element, collapsed with a reference there
    /// but not with a qualified one, as binutils 2.40 `c++filt -p -i` writes it.
    #[test]
    fn cxx_pack_expansion_references_as_gnu_spells_them() {
        for (mangled, gnu) in [
            (
                "_ZZ1fIJRiZ1gvEUlvE_EEvDpOT_E1x",
                "f<int&, g()::{lambda()#1}>(int&, g()::{lambda()#1}&&)::x",
            ),
            (
                "_ZZ1fIJRiiZ1gvEUlvE_EEvDpRT_E1x",
                "f<int&, int, g()::{lambda()#1}>(int&, int&, g()::{lambda()#1}&)::x",
            ),
            (
                "_ZZ1fIJRiiZ1gvEUlvE_EEvDpRKT_E1x",
                "f<int&, int, g()::{lambda()#1}>(int& const&, int const&, g()::{lambda()#1} const&)::x",
            ),
            (
                "_ZN4llvm3orc6shared15WrapperFunctionIFNS1_15SPSExecutorAddrENS1_11SPSSequenceIcEEiEE4callIZNS0_22ExecutorProcessControl14callSPSWrapperIS6_JRNS0_12ExecutorAddrERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEiEEENS_5ErrorESB_DpOT0_EUlPKcmE_SB_JSI_iEEESL_RKT_RT0_DpRKT1_",
                "llvm::orc::shared::WrapperFunction<llvm::orc::shared::SPSExecutorAddr (llvm::orc::shared::SPSSequence<char>, int)>::call<llvm::orc::ExecutorProcessControl::callSPSWrapper<llvm::orc::shared::SPSExecutorAddr (llvm::orc::shared::SPSSequence<char>, int), llvm::orc::ExecutorAddr&, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&, int>(llvm::orc::ExecutorAddr, llvm::orc::ExecutorAddr&, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&, int&&)::{lambda(char const*, unsigned long)#1}, llvm::orc::ExecutorAddr, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, int>",
            ),
        ] {
            assert_eq!(super::demangle(mangled), gnu, "{mangled}");
        }
    }

    /// A function named in a local name through a substitution of its class, with its
    /// parameters (and its `const`) after its name, as binutils 2.40 `c++filt -p -i`
    /// writes it.
    #[test]
    fn cxx_functions_of_substituted_classes_as_gnu_spells_them() {
        for (mangled, gnu) in [
            ("_ZN1AIPN1B1CEZNS1_1gEiE1xE1fEv", "A<B::C*, B::C::g(int)::x>::f"),
            (
                "_ZN1AIPN1B1CEZNKS1_1gEiE1xE1fEv",
                "A<B::C*, B::C::g(int) const::x>::f",
            ),
            (
                "_ZN1AIPN1B1CEZNKS1_1gEiEUlvE_E1fEv",
                "A<B::C*, B::C::g(int) const::{lambda()#1}>::f",
            ),
            (
                "_ZN1AIPN1B1CEKZNKS1_1gEiEUlvE_E1fEv",
                "A<B::C*, B::C::g(int) const::{lambda()#1} const>::f",
            ),
            (
                "_ZN1AIPN1B1CEZNS1_1gEiEUlvE_E1fEv",
                "A<B::C*, B::C::g(int)::{lambda()#1}>::f",
            ),
            (
                "_ZNSt17_Function_handlerIFvPN4llvm11logicalview7LVScopeEPFiPKNS1_8LVObjectES6_EEZNS2_4sortEvE3$_0E9_M_invokeERKSt9_Any_dataOS3_OS8_",
                "std::_Function_handler<void (llvm::logicalview::LVScope*, int (*)(llvm::logicalview::LVObject const*, llvm::logicalview::LVObject const*)), llvm::logicalview::LVScope::sort()::$_0>::_M_invoke",
            ),
        ] {
            assert_eq!(super::demangle(mangled), gnu, "{mangled}");
        }
    }

    /// A function type's parameters after a space, past a return type that ends with a
    /// pointer or reference or is a closure, as binutils 2.40 `c++filt -p -i` writes
    /// them; a function's address keeps its `&(` together.
    #[test]
    fn cxx_function_type_parameters_as_gnu_spells_them() {
        for (mangled, gnu) in [
            (
                "_ZN1A1CIPNS_1BEFRNS1_1DEiEE1fEv",
                "A::C<A::B*, A::B::D& (int)>::f",
            ),
            ("_ZN1AIFRKN1B1CEvEE1fEv", "A<B::C const& ()>::f"),
            ("_ZN1AIXadL_Z1fRiEEE1gEv", "A<&(f(int&))>::g"),
            (
                "_ZNSt5_BindIFZ1fvEUlN1B1CEiE_S1_iEE1gEv",
                "std::_Bind<f()::{lambda(B::C, int)#1} (B::C, int)>::g",
            ),
            (
                "_ZNSt5_BindIFZ1fvEUlN1B1CERKiE_S1_iEE1gEv",
                "std::_Bind<f()::{lambda(B::C, int const&)#1} (B::C, int)>::g",
            ),
        ] {
            assert_eq!(super::demangle(mangled), gnu, "{mangled}");
        }
    }

    /// A reference to a template parameter that a substitution repeats under other
    /// template arguments, written with those it was first written with, and a
    /// reference to a function type in its declarator, as binutils 2.40
    /// `c++filt -p -i` writes them.
    #[test]
    fn cxx_references_to_template_parameters_as_gnu_spells_them() {
        for (mangled, gnu) in [
            (
                "_ZZ1fIFvvEZ1gvEUlvE_EvOT_OT0_E1x",
                "f<void (), g()::{lambda()#1}>(void (&&)(), g()::{lambda()#1}&&)::x",
            ),
            (
                "_ZZ1fIMN1A1BEFvvEZ1gvEUlvE_EvRT_OT0_E1x",
                "f<void (A::B::*)(), g()::{lambda()#1}>(void (A::B::*&)(), g()::{lambda()#1}&&)::x",
            ),
            (
                "_ZZ1fIRFvvEZ1gvEUlvE_EvOT_OT0_E1x",
                "f<void (&)(), g()::{lambda()#1}>(void (&)(), g()::{lambda()#1}&&)::x",
            ),
            (
                "_ZN4llvm3orc6shared15WrapperFunctionIFNS1_8SPSEmptyENS1_11SPSSequenceINS1_8SPSTupleIJNS1_15SPSExecutorAddrEhEEEEEEE9callAsyncIZNS0_22ExecutorProcessControl19callSPSWrapperAsyncIFvS8_ENSC_9RunAsTaskENS_15unique_functionIFvNS_5ErrorEEEEJNS_8ArrayRefINS0_8tpctypes9UIntWriteIhEEEEEEEvOT0_NS0_12ExecutorAddrEOT1_DpRKT2_EUlOT_PKcmE_ZNS2_ISE_E9callAsyncIS12_SJ_JSO_EEEvSZ_SQ_DpRKT1_EUlSH_S3_E_JSO_EEEvSZ_SQ_S18_",
                "llvm::orc::shared::WrapperFunction<llvm::orc::shared::SPSEmpty (llvm::orc::shared::SPSSequence<llvm::orc::shared::SPSTuple<llvm::orc::shared::SPSExecutorAddr, unsigned char> >)>::callAsync<llvm::orc::ExecutorProcessControl::callSPSWrapperAsync<void (llvm::orc::shared::SPSSequence<llvm::orc::shared::SPSTuple<llvm::orc::shared::SPSExecutorAddr, unsigned char> >), llvm::orc::ExecutorProcessControl::RunAsTask, llvm::unique_function<void (llvm::Error)>, llvm::ArrayRef<llvm::orc::tpctypes::UIntWrite<unsigned char> > >(llvm::orc::ExecutorProcessControl::RunAsTask&&, llvm::orc::ExecutorAddr, llvm::unique_function<void (llvm::Error)>&&, llvm::ArrayRef<llvm::orc::tpctypes::UIntWrite<unsigned char> > const&)::{lambda(auto:1&&, char const*, unsigned long)#1}, llvm::orc::shared::WrapperFunction<void (llvm::orc::shared::SPSSequence<llvm::orc::shared::SPSTuple<llvm::orc::shared::SPSExecutorAddr, unsigned char> >)>::callAsync<llvm::orc::ExecutorProcessControl::callSPSWrapperAsync<void (llvm::orc::shared::SPSSequence<llvm::orc::shared::SPSTuple<llvm::orc::shared::SPSExecutorAddr, unsigned char> >), llvm::orc::ExecutorProcessControl::RunAsTask, llvm::unique_function<void (llvm::Error)>, llvm::ArrayRef<llvm::orc::tpctypes::UIntWrite<unsigned char> > >(llvm::orc::ExecutorProcessControl::RunAsTask&&, llvm::orc::ExecutorAddr, llvm::unique_function<void (llvm::Error)>&&, llvm::ArrayRef<llvm::orc::tpctypes::UIntWrite<unsigned char> > const&)::{lambda(auto:1&&, char const*, unsigned long)#1}, llvm::unique_function<void (llvm::Error)>, llvm::ArrayRef<llvm::orc::tpctypes::UIntWrite<unsigned char> > >(llvm::orc::ExecutorProcessControl::callSPSWrapperAsync<void (llvm::orc::shared::SPSSequence<llvm::orc::shared::SPSTuple<llvm::orc::shared::SPSExecutorAddr, unsigned char> >), llvm::orc::ExecutorProcessControl::RunAsTask, llvm::unique_function<void (llvm::Error)>, llvm::ArrayRef<llvm::orc::tpctypes::UIntWrite<unsigned char> > >(llvm::orc::ExecutorProcessControl::RunAsTask&&, llvm::orc::ExecutorAddr, llvm::unique_function<void (llvm::Error)>&&, llvm::ArrayRef<llvm::orc::tpctypes::UIntWrite<unsigned char> > const&)::{lambda(auto:1&&, char const*, unsigned long)#1}&&, llvm::orc::ExecutorProcessControl::RunAsTask&&, llvm::ArrayRef<llvm::orc::tpctypes::UIntWrite<unsigned char> > const&)::{lambda(llvm::Error, llvm::orc::shared::SPSEmpty)#1}, llvm::ArrayRef<llvm::orc::tpctypes::UIntWrite<unsigned char> > >",
            ),
        ] {
            assert_eq!(super::demangle(mangled), gnu, "{mangled}");
        }
    }

    /// Names that only look like closures' references give the name itself or a
    /// demangling, in bounded time: no source name runs past the end, no number
    /// overflows.
    #[test]
    fn cxx_hostile_names_with_closures_do_not_panic() {
        let long = format!("_ZN1AIOZ1fvEUl{}E_E1gEv", "RS_".repeat(5000));
        for name in [
            "_ZUl",
            "_ZOUl",
            "_Z99999999999999999999999Ul",
            "_ZN1AIOZ1fvEUl999N1B1CEE_E1gEv",
            "_ZN1AIOS_Ul",
            "_ZN1AIOT",
            "_ZRUlRORORORO",
            long.as_str(),
        ] {
            let _ = super::demangle(name);
        }
        // A closure's name written in an identifier is left alone.
        assert_eq!(super::demangle("_Z4OUlSv"), "OUlS");
    }

    /// Names from libLLVM as perf 6.1 (GNU's demangler) printed them in `perf script`.
    #[test]
    fn cpp_names_are_spelled_as_perf_prints_them() {
        assert_eq!(
            demangle(
                "_ZN4llvm15AnalysisManagerINS_8FunctionEJEE13getResultImplEPNS_11AnalysisKeyERS1_"
            ),
            "llvm::AnalysisManager<llvm::Function>::getResultImpl"
        );
        assert_eq!(
            demangle("_ZN4llvm12DenseMapBaseINS_13SmallDenseMapIjNS_7SDValueELj8ENS_12DenseMapInfoIjvEENS_6detail12DenseMapPairIjS2_EEEEjS2_S4_S7_E4growEj"),
            "llvm::DenseMapBase<llvm::SmallDenseMap<unsigned int, llvm::SDValue, 8u, llvm::DenseMapInfo<unsigned int, void>, llvm::detail::DenseMapPair<unsigned int, llvm::SDValue> >, unsigned int, llvm::SDValue, llvm::DenseMapInfo<unsigned int, void>, llvm::detail::DenseMapPair<unsigned int, llvm::SDValue> >::grow"
        );
        // A pack expansion's `&` on every element, in the SLP vectorizer's lambdas.
        assert_eq!(
            demangle("_ZZN4llvm13slpvectorizer7BoUpSLP18processBuildVectorINS1_20ShuffleCostEstimatorENS_15InstructionCostEJNS_19TargetTransformInfoENS_8ArrayRefIPNS_5ValueEEES1_NS_15SmallPtrSetImplIS8_EEEEET0_PKNS1_9TreeEntryEPNS_4TypeEDpRT1_ENKUlRNS_15SmallVectorImplIS8_EERNSL_IiEEbE_clESN_SP_b.cold"),
            "llvm::slpvectorizer::BoUpSLP::processBuildVector<llvm::slpvectorizer::BoUpSLP::ShuffleCostEstimator, llvm::InstructionCost, llvm::TargetTransformInfo, llvm::ArrayRef<llvm::Value*>, llvm::slpvectorizer::BoUpSLP, llvm::SmallPtrSetImpl<llvm::Value*> >(llvm::slpvectorizer::BoUpSLP::TreeEntry const*, llvm::Type*, llvm::TargetTransformInfo&, llvm::ArrayRef<llvm::Value*>&, llvm::slpvectorizer::BoUpSLP&, llvm::SmallPtrSetImpl<llvm::Value*>&)::{lambda(llvm::SmallVectorImpl<llvm::Value*>&, llvm::SmallVectorImpl<int>&, bool)#1}::operator()"
        );
        // The parameters of a lambda's `operator()` after it, not in the signature.
        assert_eq!(
            demangle("_ZZZN4llvm13slpvectorizer7BoUpSLP15BlockScheduling8scheduleINS_9SetVectorIPNS1_14ScheduleEntityENS_11SmallVectorIS6_Lj0EEENS_8DenseSetIS6_NS_12DenseMapInfoIS6_vEEEELj0EEEEEvRKS1_RKN12_GLOBAL__N_117InstructionsStateERKNS1_8EdgeInfoES6_RT_ENKUlS6_NS_8ArrayRefIPNS1_14ScheduleBundleEEEE_clES6_SS_ENKUlPSN_bE_clINS1_12ScheduleDataEEEDaSU_b"),
            "llvm::slpvectorizer::BoUpSLP::BlockScheduling::schedule<llvm::SetVector<llvm::slpvectorizer::BoUpSLP::ScheduleEntity*, llvm::SmallVector<llvm::slpvectorizer::BoUpSLP::ScheduleEntity*, 0u>, llvm::DenseSet<llvm::slpvectorizer::BoUpSLP::ScheduleEntity*, llvm::DenseMapInfo<llvm::slpvectorizer::BoUpSLP::ScheduleEntity*, void> >, 0u> >(llvm::slpvectorizer::BoUpSLP const&, (anonymous namespace)::InstructionsState const&, llvm::slpvectorizer::BoUpSLP::EdgeInfo const&, llvm::slpvectorizer::BoUpSLP::ScheduleEntity*, llvm::SetVector<llvm::slpvectorizer::BoUpSLP::ScheduleEntity*, llvm::SmallVector<llvm::slpvectorizer::BoUpSLP::ScheduleEntity*, 0u>, llvm::DenseSet<llvm::slpvectorizer::BoUpSLP::ScheduleEntity*, llvm::DenseMapInfo<llvm::slpvectorizer::BoUpSLP::ScheduleEntity*, void> >, 0u>&)::{lambda(llvm::slpvectorizer::BoUpSLP::ScheduleEntity*, llvm::ArrayRef<llvm::slpvectorizer::BoUpSLP::ScheduleBundle*>)#1}::operator()(llvm::slpvectorizer::BoUpSLP::ScheduleEntity*, llvm::ArrayRef<llvm::slpvectorizer::BoUpSLP::ScheduleBundle*>) const::{lambda(auto:1*, bool)#1}::operator()<llvm::slpvectorizer::BoUpSLP::ScheduleData>"
        );
    }
}
