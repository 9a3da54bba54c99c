//! References to closure types and pack expansions, marked in the mangled name so
//! that they can be written where GNU's demangler writes them.

/// A vendor qualifier that stands for a reference in a name given to cpp_demangle (see
/// [`marked_references`]).
pub(super) struct ReferenceMarker {
    /// In the mangled name.
    pub(super) mangled: &'static str,
    /// As cpp_demangle writes it, after the type and a space.
    pub(super) written: &'static str,
    pub(super) reference: &'static str,
    /// A pack expansion's (`DpOT_`), which goes on each element.
    pub(super) pack: bool,
}

/// The marker cpp_demangle wrote as `s`, and its number if it has one.
pub(super) fn reference_marker(s: &str) -> Option<(&'static ReferenceMarker, Option<usize>)> {
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
pub(super) const REFERENCE_MARKERS: [ReferenceMarker; 4] = [
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
pub(super) fn marked_references(name: &str) -> Option<String> {
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
pub(super) fn seq_id_len(s: &[u8]) -> Option<usize> {
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
pub(super) fn reference_kind(b: &[u8], i: usize, name_end: usize) -> Option<bool> {
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
pub(super) fn source_name_length(b: &[u8], start: usize, end: usize) -> bool {
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
pub(super) fn place_reference(out: &mut String, reference: &str) -> Option<(usize, isize)> {
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
pub(super) fn placed_references(text: &str) -> Option<String> {
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
