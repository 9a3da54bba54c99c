//! Function addresses as template arguments, as GNU's demangler writes them.

use super::matching;
use super::packs::qualifiers_len;

/// A function's address as a template argument, as GNU writes it: a member of a class
/// (not a template, not cv-qualified) by its name alone (`&A::f`), any other function
/// in parentheses with its parameters, and a function template with its return type
/// too (`&(void f<int>())`, `&(A::g() const)`); cpp_demangle writes `&A::f()` and
/// `&f<int>()`. `with_return_types` gives the same text with the return types that
/// GNU writes for function templates.
pub(super) fn function_addresses(
    text: &str,
    with_return_types: impl FnOnce() -> Option<String>,
) -> String {
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
pub(super) struct AddressArgument {
    pub(super) start: usize,
    pub(super) params: usize,
    pub(super) params_end: usize,
    pub(super) end: usize,
}

/// The template arguments of `text` that are `&` and a function with its parameters.
pub(super) fn address_arguments(text: &str) -> Vec<AddressArgument> {
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
pub(super) fn depth0_contains(s: &str, what: &str) -> bool {
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
