//! Symbol names as perf 6.1 prints them: C++ through GNU's demangler (libiberty, no
//! parameters), spelled here on top of cpp_demangle's output; Rust without the hash.
//!
//! `scripts/demangle-survey` counts the names of a machine's libraries that come out
//! differently from binutils' `c++filt -p -i`, which prints what perf prints.

mod mangled;

/// perf's demangling: C++ (`_Z`) without parameters, Rust without the hash.
pub fn demangle(name: &str) -> String {
    // Clone suffixes (`.cold`, `.warm`, `.llvm.123`, `.constprop.0`) after a mangled
    // name are dropped, as perf's demangler does without parameters.
    let name = strip_clone_suffix(name);
    if name.starts_with("_R")
        || (name.starts_with("_ZN") && name.ends_with('E') && is_rust_legacy(name))
    {
        if let Ok(d) = rustc_demangle::try_demangle(name) {
            return format!("{d:#}");
        }
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
            let s = gnu_spelling(&misplaced_const(s));
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
    Some(format!("{words}{}", gnu_spelling(&misplaced_const(&text))))
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
    Some(mangled::gnu_ctor_dtor_names(&text, &ctor_dtors))
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

/// A vendor qualifier that stands for a reference in a name given to cpp_demangle (see
/// [`marked_references`]).
struct ReferenceMarker {
    /// In the mangled name.
    mangled: &'static str,
    /// As cpp_demangle writes it, after the type and a space.
    written: &'static str,
    reference: &'static str,
    /// A pack expansion's (`DpOT_`), which goes on each element.
    pack: bool,
}

/// The marker cpp_demangle wrote as `s`, and its number if it has one.
fn reference_marker(s: &str) -> Option<(&'static ReferenceMarker, Option<usize>)> {
    REFERENCE_MARKERS.iter().find_map(|m| {
        let number = s.strip_prefix(m.written)?;
        if number.is_empty() {
            Some((m, None))
        } else {
            Some((m, Some(number.parse().ok()?)))
        }
    })
}

/// `&` and `&&`, on a type or on a pack expansion's elements.
const REFERENCE_MARKERS: [ReferenceMarker; 4] = [
    ReferenceMarker {
        mangled: "U15__tracectl_lref",
        written: "__tracectl_lref",
        reference: "&",
        pack: false,
    },
    ReferenceMarker {
        mangled: "U15__tracectl_rref",
        written: "__tracectl_rref",
        reference: "&&",
        pack: false,
    },
    ReferenceMarker {
        mangled: "U15__tracectl_lpck",
        written: "__tracectl_lpck",
        reference: "&",
        pack: true,
    },
    ReferenceMarker {
        mangled: "U15__tracectl_rpck",
        written: "__tracectl_rpck",
        reference: "&&",
        pack: true,
    },
];

/// `name` with each `R` (`&`) and `O` (`&&`) before a closure type, a substitution or a
/// template parameter replaced by a vendor qualifier ([`REFERENCE_MARKERS`]); None when
/// it names no closure or holds no such reference. cpp_demangle hands a reference to a
/// closure type to the lambda's parameters (`{lambda(A&&)#1}` for GNU's
/// `{lambda(A)#1}&&`), or loses it to a reference among them; a vendor qualifier it
/// writes after the type, which is where GNU writes the reference. A qualifier takes
/// one substitution like the reference it replaces, so the rest of the name keeps its
/// meaning.
fn marked_references(name: &str) -> Option<String> {
    if !name.contains("Ul") {
        return None;
    }
    let b = name.as_bytes();
    let mut out = String::with_capacity(name.len() + 64);
    let mut changed = false;
    let mut name_end = 0;
    let mut to_parameters = 0usize;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_digit() {
            let start = i;
            i += b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
            if source_name_length(b, start, i) {
                let len: usize = name[start..i].parse().ok()?;
                i = i.checked_add(len).filter(|&end| end <= b.len())?;
                name_end = i;
            }
            out.push_str(&name[start..i]);
            continue;
        }
        // A substitution (`S<seq-id>_`) or a template parameter (`T<n>_`) as a whole:
        // its digits are base 36.
        if let Some(len) = (c == b'S' || c == b'T')
            .then(|| seq_id_len(&b[i + 1..]))
            .flatten()
        {
            out.push_str(&name[i..i + 1 + len]);
            i += 1 + len;
            continue;
        }
        if let Some(pack) = (c == b'R' || c == b'O')
            .then(|| reference_kind(b, i, name_end))
            .flatten()
        {
            let marker = &REFERENCE_MARKERS[(c == b'O') as usize + 2 * pack as usize];
            if !pack && b.get(i + 1) == Some(&b'T') {
                // A reference to a template parameter, numbered: GNU resolves it, when
                // a substitution writes it again, as where it was first written.
                let written = format!("{}{to_parameters}", marker.written);
                out.push_str(&format!("U{}{written}", written.len()));
                to_parameters += 1;
            } else {
                out.push_str(marker.mangled);
            }
            changed = true;
        } else {
            out.push(c as char);
        }
        i += 1;
    }
    changed.then_some(out)
}

/// The length of a `<seq-id>_` (base-36 digits, then `_`) at the start of `s`.
fn seq_id_len(s: &[u8]) -> Option<usize> {
    let digits = s
        .iter()
        .take_while(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
        .count();
    (s.get(digits) == Some(&b'_')).then_some(digits + 1)
}

/// Whether the `R` or `O` at `i` is a reference to a closure type written there
/// (`Z...E`), a substitution or a template parameter, maybe qualified: not a method's
/// ref-qualifier (`NR`, `NKO`), an operator (`oR`, `eO`), a fold (`fR`) or an exception
/// specification (`DO`); Some(true) for a pack expansion's (`DpOT_`). `name_end` is
/// where the last source name ended: the letters of a name are none of those.
fn reference_kind(b: &[u8], i: usize, name_end: usize) -> Option<bool> {
    let quals = b[..i]
        .iter()
        .rev()
        .take_while(|&&c| matches!(c, b'r' | b'V' | b'K' | b'R' | b'O'))
        .count();
    let after_name = i - quals == name_end;
    if i == 0
        || (!after_name
            && (matches!(b.get(i - quals - 1), Some(b'N'))
                || (quals == 0 && matches!(b[i - 1], b'o' | b'e' | b'f' | b'D'))))
    {
        return None;
    }
    let pack = !after_name && b[..i - quals].ends_with(b"Dp");
    let mut at = i + 1;
    while matches!(b.get(at), Some(b'r' | b'V' | b'K' | b'R' | b'O')) {
        at += 1;
    }
    let referred = match b.get(at) {
        Some(b'Z') => true,
        Some(b'S' | b'T') => seq_id_len(&b[at + 1..]).is_some(),
        _ => false,
    };
    referred.then_some(pack)
}

/// Whether the digits at `start..end` of a mangled name are the length of a source name
/// (an identifier follows) rather than a number of the grammar: a discriminator
/// (`_1`, `__12_`), a closure's or unnamed type's number (`E0_`, `Ut0_`), a constructor
/// or destructor (`C1`, `D0`), an array or vector size (`A4_`, `Dv4_`), a function
/// parameter (`fp0_`), a default argument (`Ed0_`) or a literal (`Lj8E`, `Lin1E`).
fn source_name_length(b: &[u8], start: usize, end: usize) -> bool {
    let at = |k: usize| start.checked_sub(k).map(|j| b[j]);
    let after = b.get(end).copied();
    match at(1) {
        None | Some(b'_' | b'S' | b'T' | b'A') => false,
        Some(b'C' | b'D') => end - start != 1,
        Some(b'E') => !matches!(after, Some(b'_' | b'E')),
        Some(b'I') => at(2) != Some(b'C'),
        Some(b'v' | b'F' | b'B' | b'U') if at(2) == Some(b'D') => false,
        Some(b'p' | b'L') if at(2) == Some(b'f') => false,
        Some(b't') if at(2) == Some(b'U') => false,
        Some(b'd') if at(2) == Some(b'E') => false,
        Some(b'n') if at(3) == Some(b'L') => false,
        Some(c) if c.is_ascii_lowercase() && at(2) == Some(b'L') => false,
        _ => true,
    }
}

/// Writes `reference` (`&` or `&&`) after the type that `out` ends with, in place of the
/// space before a reference marker, as GNU does: collapsed with a reference already
/// there (`& &&` is `&`); in a function type's declarator (`void (&)()`,
/// `void (A::*&)()`). Where the text changed and by how many bytes; None when the
/// reference has no place: an array, a cv-qualified function type.
fn place_reference(out: &mut String, reference: &str) -> Option<(usize, isize)> {
    /// `reference` collapsed into the text `ty` ends with.
    fn collapse(ty: &str, reference: &str) -> String {
        if ty.ends_with("&&") && reference == "&" {
            ty[..ty.len() - 1].to_string()
        } else if ty.ends_with('&') {
            ty.to_string()
        } else {
            format!("{ty}{reference}")
        }
    }
    if !out.ends_with(' ') {
        return None;
    }
    out.pop();
    let cv_function = [") const", ") volatile"].iter().any(|q| out.ends_with(q));
    if out.is_empty() || out.ends_with([']', ' ']) || cv_function {
        return None;
    }
    let before = out.len();
    if !out.ends_with(')') {
        *out = collapse(out, reference);
        return Some((before.min(out.len()), out.len() as isize - before as isize));
    }
    // A function type: its parameters are the last parentheses, after a declarator in
    // parentheses (`(*)`, `(A::*)`, `(&)`) or after the return type and a space.
    let b = out.as_bytes();
    let mut depth = 0usize;
    let open = (0..b.len()).rev().find(|&i| {
        match b[i] {
            b')' => depth += 1,
            b'(' => depth = depth.saturating_sub(1),
            _ => {}
        }
        depth == 0
    })?;
    let (head, params) = out.split_at(open);
    let (declared, at) = if let Some(declarator) = head.strip_suffix(')') {
        let collapsed = collapse(declarator, reference);
        let at = declarator.len().min(collapsed.len());
        (format!("{collapsed})"), at)
    } else if head.ends_with(' ') {
        (format!("{head}({reference})"), head.len())
    } else {
        return None;
    };
    *out = format!("{declared}{params}");
    Some((at, out.len() as isize - before as isize))
}

/// `text` with each reference marker (see [`marked_references`]) written as the
/// reference; None when one cannot be.
fn placed_references(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((i, marker)) = REFERENCE_MARKERS
        .iter()
        .filter_map(|m| rest.find(m.written).map(|i| (i, m)))
        .min_by_key(|&(i, _)| i)
    {
        out.push_str(&rest[..i]);
        // A pack's elements are not told apart in this text: it is not used then.
        if marker.pack || place_reference(&mut out, marker.reference).is_none() {
            return None;
        }
        rest = rest[i + marker.written.len()..].trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    Some(out)
}

/// A function's address as a template argument, as GNU writes it: a member of a class
/// (not a template, not cv-qualified) by its name alone (`&A::f`), any other function
/// in parentheses with its parameters, and a function template with its return type
/// too (`&(void f<int>())`, `&(A::g() const)`); cpp_demangle writes `&A::f()` and
/// `&f<int>()`. `with_return_types` gives the same text with the return types that
/// GNU writes for function templates.
fn function_addresses(text: &str, with_return_types: impl FnOnce() -> Option<String>) -> String {
    let found = address_arguments(text);
    if found.is_empty() {
        return text.to_string();
    }
    let mut typed: Option<Option<(String, Vec<AddressArgument>)>> = None;
    let mut with_return_types = Some(with_return_types);
    let mut out = String::with_capacity(text.len() + 8 * found.len());
    let mut at = 0;
    for (k, arg) in found.iter().enumerate() {
        let name = &text[arg.start..arg.params];
        let quals = &text[arg.params_end..arg.end];
        let member = depth0_contains(name, "::") && !name.ends_with('>');
        out.push_str(&text[at..arg.start]);
        if member && quals.is_empty() {
            out.push_str(name);
        } else if name.ends_with('>') {
            // Its return type from the text that has them: the same arguments in the
            // same order.
            let typed = typed.get_or_insert_with(|| {
                let t = with_return_types.take().and_then(|f| f())?;
                let args = address_arguments(&t);
                (args.len() == found.len()).then_some((t, args))
            });
            let whole = match typed {
                Some((t, args)) => &t[args[k].start..args[k].end],
                None => &text[arg.start..arg.end],
            };
            out.push('(');
            out.push_str(whole);
            out.push(')');
        } else {
            out.push('(');
            out.push_str(&text[arg.start..arg.end]);
            out.push(')');
        }
        at = arg.end;
    }
    out.push_str(&text[at..]);
    out
}

/// A function's address written as a template argument: `&` then `name(params) quals`,
/// by byte offsets after the `&`.
struct AddressArgument {
    start: usize,
    params: usize,
    params_end: usize,
    end: usize,
}

/// The template arguments of `text` that are `&` and a function with its parameters.
fn address_arguments(text: &str) -> Vec<AddressArgument> {
    let b = text.as_bytes();
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(amp) = text[from..].find('&').map(|i| from + i) {
        from = amp + 1;
        if !(text[..amp].ends_with('<') || text[..amp].ends_with(", ")) {
            continue;
        }
        // The argument runs to the `,` or `>` that ends it; its first `(` at its own
        // depth opens the function's parameters.
        let mut depth = 0usize;
        let mut params = None;
        let mut end = None;
        for (i, &c) in b.iter().enumerate().skip(amp + 1) {
            match c {
                b'(' if depth == 0 && params.is_none() => {
                    if text[..i].ends_with("operator") {
                        break;
                    }
                    params = Some(i);
                    depth += 1;
                }
                b'(' | b'<' | b'[' | b'{' => depth += 1,
                b',' if depth == 0 => {
                    end = Some(i);
                    break;
                }
                b'>' if depth == 0 => {
                    end = Some(i);
                    break;
                }
                b')' | b'>' | b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        let (Some(params), Some(end)) = (params, end) else {
            continue;
        };
        let Some(close) = matching(b, params) else {
            continue;
        };
        let quals = &text[close + 1..end];
        if close >= end || qualifiers_len(quals) != quals.len() || params == amp + 1 {
            continue;
        }
        found.push(AddressArgument {
            start: amp + 1,
            params,
            params_end: close + 1,
            end,
        });
        from = end;
    }
    found
}

/// Whether `s` holds `what` outside every bracket.
fn depth0_contains(s: &str, what: &str) -> bool {
    let mut depth = 0i32;
    for (i, c) in s.char_indices() {
        match c {
            '(' | '<' | '[' | '{' => depth += 1,
            ')' | '>' | ']' | '}' => depth -= 1,
            _ if depth == 0 && s[i..].starts_with(what) => return true,
            _ => {}
        }
    }
    false
}

/// Where cpp_demangle wrote a template parameter or a template argument list, and the
/// `, ` it wrote between the elements of each.
#[derive(Default)]
struct NodeRecorder {
    out: String,
    /// Every node opened so far: a template parameter or argument list, with its span
    /// and separators; `None` for the other kinds.
    nodes: Vec<Option<ListNode>>,
    open: Vec<usize>,
    /// A reference marker ([`marked_references`]) came where no reference can be written.
    unplaced_reference: bool,
    /// The template argument each numbered reference marker was first written after.
    first_written: Vec<FirstWritten>,
}

/// A template argument as first written after a numbered reference marker: its text,
/// its own separators and the lists inside it, at offsets from its start.
struct FirstWritten {
    number: usize,
    text: String,
    separators: Vec<usize>,
    lists: Vec<ListNode>,
}

impl NodeRecorder {
    /// The offsets of the nodes after `at` moved by `by` bytes, where the text changed.
    fn moved(&mut self, at: usize, by: isize) {
        let len = self.out.len();
        let shift = |x: &mut usize, after: bool| {
            if *x > at || (!after && *x == at) {
                *x = x.saturating_add_signed(by).clamp(at, len);
            }
        };
        for node in self.nodes.iter_mut().flatten() {
            shift(&mut node.start, false);
            shift(&mut node.end, true);
            for sep in &mut node.separators {
                shift(sep, false);
            }
        }
    }

    /// The template argument just written (before a space) for the reference marker
    /// `number` made the one it was first written as: GNU's demangler keeps the
    /// template arguments that a reference to a template parameter was first printed
    /// with, and prints it with them again when a substitution repeats it elsewhere.
    fn as_first_written(&mut self, number: usize) {
        let Some(end) = self.out.len().checked_sub(1) else {
            return;
        };
        let Some(k) = self
            .nodes
            .iter()
            .rposition(|n| n.as_ref().is_some_and(|n| n.param && n.end == end))
        else {
            return;
        };
        let Some(param) = self.nodes[k].as_ref() else {
            return;
        };
        let start = param.start;
        if start > end || !self.out.is_char_boundary(start) {
            return;
        }
        let text = &self.out[start..end];
        // In a lambda's signature a template parameter is `auto:N`, wherever it is
        // written.
        if text.starts_with("auto:") {
            return;
        }
        let inside = |i: usize, n: &ListNode| i > k && n.start >= start && n.end <= end;
        let Some(first) = self.first_written.iter().find(|f| f.number == number) else {
            let lists = self
                .nodes
                .iter()
                .enumerate()
                .filter_map(|(i, n)| n.as_ref().filter(|n| inside(i, n)))
                .map(|n| ListNode {
                    param: n.param,
                    start: n.start - start,
                    end: n.end - start,
                    separators: n.separators.iter().map(|s| s - start).collect(),
                })
                .collect();
            let separators = param.separators.iter().map(|s| s - start).collect();
            self.first_written.push(FirstWritten {
                number,
                text: text.to_string(),
                separators,
                lists,
            });
            return;
        };
        if first.text == text {
            return;
        }
        // The lists inside the replaced text are those of the first one.
        for (i, node) in self.nodes.iter_mut().enumerate() {
            if node.as_ref().is_some_and(|n| inside(i, n)) {
                *node = None;
            }
        }
        if let Some(param) = self.nodes[k].as_mut() {
            param.end = start + first.text.len();
            param.separators = first.separators.iter().map(|s| s + start).collect();
        }
        let shifted = first.lists.iter().map(|n| {
            Some(ListNode {
                param: n.param,
                start: n.start + start,
                end: n.end + start,
                separators: n.separators.iter().map(|s| s + start).collect(),
            })
        });
        self.nodes.extend(shifted);
        self.out.replace_range(start..end, &first.text);
    }
}

struct ListNode {
    param: bool,
    start: usize,
    end: usize,
    separators: Vec<usize>,
}

impl cpp_demangle::DemangleWrite for NodeRecorder {
    fn push_demangle_node(&mut self, kind: cpp_demangle::DemangleNodeType) {
        use cpp_demangle::DemangleNodeType::{TemplateArgs, TemplateParam};
        let param = kind == TemplateParam;
        self.open.push(self.nodes.len());
        self.nodes
            .push((param || kind == TemplateArgs).then(|| ListNode {
                param,
                start: self.out.len(),
                end: self.out.len(),
                separators: Vec::new(),
            }));
    }

    fn write_string(&mut self, s: &str) -> std::fmt::Result {
        if let Some((marker, number)) = reference_marker(s) {
            if let Some(number) = number {
                self.as_first_written(number);
            }
            // A pack of several elements: the reference is written once, after it and
            // its qualifiers, for `pack_qualifiers` to put on each element.
            let several = marker.pack && self.out.ends_with(' ') && {
                let end = self.out.len() - 1;
                self.nodes.iter().flatten().any(|n| {
                    n.param
                        && !n.separators.is_empty()
                        && n.end <= end
                        && self.out.is_char_boundary(n.end)
                        && n.end + qualifiers_len(&self.out[n.end..end]) == end
                })
            };
            if several {
                self.out.pop();
                self.out.push_str(marker.reference);
            } else if let Some((at, by)) = place_reference(&mut self.out, marker.reference) {
                self.moved(at, by);
            } else {
                self.unplaced_reference = true;
            }
            return Ok(());
        }
        if s == ", " {
            let at = self.out.len();
            if let Some(Some(node)) = self.open.last().map(|&i| &mut self.nodes[i]) {
                node.separators.push(at);
            }
        }
        self.out.push_str(s);
        Ok(())
    }

    fn pop_demangle_node(&mut self) {
        if let Some(Some(node)) = self.open.pop().map(|i| &mut self.nodes[i]) {
            node.end = self.out.len();
        }
    }
}

/// `ty` with the qualifiers `quals` after it, as GNU writes them: a reference to a
/// reference collapses (`A&` and `&&` are `A&`, `A&&` and `&` are `A&`), one to a
/// qualified reference does not (`A& const&`).
fn with_qualifiers(ty: &str, quals: &str) -> String {
    match quals {
        "&&" if ty.ends_with('&') => ty.to_string(),
        "&" if ty.ends_with('&') => format!("{}&", ty.trim_end_matches('&')),
        _ => format!("{ty}{quals}"),
    }
}

/// Qualifier words that cpp_demangle writes once for a whole pack expansion.
const PACK_QUALIFIERS: [&str; 6] = ["&&", "&", "*", " const", " volatile", " restrict"];

/// The length of the run of [`PACK_QUALIFIERS`] at the start of `s`.
fn qualifiers_len(s: &str) -> usize {
    let mut rest = s;
    while let Some(q) = PACK_QUALIFIERS.iter().find(|q| rest.starts_with(**q)) {
        rest = &rest[q.len()..];
    }
    s.len() - rest.len()
}

/// GNU writes the qualifiers of a pack expansion (`DpRKT_`) after each element
/// (`A const&, B const&`); cpp_demangle writes them once, after whichever element takes
/// them, and writes them alone for an empty pack. The elements' own spelling is found
/// in a template argument list written before (the function's or its class's).
fn pack_qualifiers(rec: &NodeRecorder) -> String {
    let text = rec.out.as_str();
    // Only lists whose offsets hold together (the text around them was edited).
    let sound = |n: &&ListNode| {
        let mut at = n.start;
        n.start <= n.end
            && n.end <= text.len()
            && [n.start, n.end].iter().all(|&i| text.is_char_boundary(i))
            && n.separators.iter().all(|&s| {
                let ok = s >= at && s + 2 <= n.end && text.is_char_boundary(s + 2);
                at = s + 2;
                ok
            })
    };
    let lists: Vec<&ListNode> = rec.nodes.iter().flatten().filter(sound).collect();
    let elements = |n: &ListNode| -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        let mut from = n.start;
        for &sep in &n.separators {
            v.push((from, sep));
            from = sep + 2;
        }
        // A list whose last element ends with `>` is closed with ` >`, its space
        // written inside the list.
        let end = n.end - text[from..n.end].ends_with(' ') as usize;
        v.push((from, end));
        v
    };
    // (start, end, replacement), in order, not overlapping.
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    for (k, tp) in lists.iter().enumerate() {
        if !tp.param || edits.last().is_some_and(|e| e.1 > tp.start) {
            continue;
        }
        let after = qualifiers_len(&text[tp.end..]);
        if tp.start == tp.end {
            if after == 0 {
                continue;
            }
            // An empty pack: its qualifiers go, with the separator before it (GNU
            // keeps the one after an empty first parameter: `f(, int)`).
            let (mut start, end) = (tp.start, tp.end + after);
            if !matches!(text.as_bytes().get(end), Some(b')' | b',' | b'>')) {
                continue;
            }
            if text[..start].ends_with(", ") {
                start -= 2;
            } else if !text[..start].ends_with(['(', '<']) {
                continue;
            }
            edits.push((start, end, String::new()));
            continue;
        }
        let parts = elements(tp);
        // The `, ` of a function's parameters written inside the parameter's text (a
        // local class's `f(A, B)::X`) do not separate a pack's elements.
        let balanced = |&(s, e): &(usize, usize)| {
            let t = &text[s..e];
            t.matches('(').count() == t.matches(')').count()
        };
        if parts.len() < 2 || !parts.iter().all(balanced) {
            continue;
        }
        let found = lists[..k]
            .iter()
            .rev()
            .filter(|l| !l.param)
            .find_map(|args| {
                let args = elements(args);
                let (j, quals) = (0..args.len().checked_sub(parts.len() - 1)?).find_map(|j| {
                    let mut quals = String::new();
                    for (i, &(s, e)) in parts.iter().enumerate() {
                        let arg = &text[args[j + i].0..args[j + i].1];
                        let rest = text[s..e].strip_prefix(arg)?;
                        if qualifiers_len(rest) != rest.len() {
                            return None;
                        }
                        quals.push_str(rest);
                    }
                    Some((j, quals))
                })?;
                Some((j, args, quals))
            });
        let Some((j, args, mut quals)) = found else {
            continue;
        };
        quals.push_str(&text[tp.end..tp.end + after]);
        if quals.is_empty() {
            continue;
        }
        let spelled: Vec<String> = (0..parts.len())
            .map(|i| with_qualifiers(&text[args[j + i].0..args[j + i].1], &quals))
            .collect();
        edits.push((tp.start, tp.end + after, spelled.join(", ")));
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut at = 0;
    for (start, end, with) in edits {
        out.push_str(&text[at..start]);
        out.push_str(&with);
        at = end;
    }
    out.push_str(&text[at..]);
    out
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

/// cpp_demangle's text as GNU's demangler (which perf uses) spells it: integer literals
/// of unsigned and long types with a suffix (`8u`, not `(unsigned int)8`), no separator
/// left by an empty template pack (`<A>`, not `<A, >`), `decltype(nullptr)` for `Dn`,
/// and the standard abbreviations as GNU writes them without its verbose option.
fn gnu_spelling(s: &str) -> String {
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
fn standard_abbreviations(s: &str) -> String {
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
    replace_names(&out, "std::nullptr_t", "decltype(nullptr)")
}

/// `s` with every `from` that is a whole name (not followed by more of an identifier,
/// not preceded by one or by `::`) replaced by `to`.
fn replace_names(s: &str, from: &str, to: &str) -> String {
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
fn function_type_spaces(s: &str) -> String {
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
