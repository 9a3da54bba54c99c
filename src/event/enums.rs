//! Enum constants in a `print fmt`: the identifiers the kernel left as names (it replaces
//! only the enums declared with `TRACE_DEFINE_ENUM`), found and replaced by value.
//!
//! The `print fmt` is located as [`Schema::parse`](super::Schema::parse) locates it.

use std::collections::HashMap;

use std::ops::Range;

use super::expr::{lex_spanned, Tok};
use super::format::print_fmt_start;

/// Byte ranges in `s` (a `print fmt` argument list) of the identifiers it uses outside
/// string literals, `REC->` field accesses and function calls: the candidates for enum
/// constants. A text the `print fmt` lexer refuses has none: it would not compile either.
fn bare_identifier_spans(s: &str) -> Vec<Range<usize>> {
    let Ok(toks) = lex_spanned(s) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, (tok, span)) in toks.iter().enumerate() {
        if !matches!(tok, Tok::Ident(_)) {
            continue;
        }
        let member = k > 0 && matches!(toks[k - 1].0, Tok::Punct("->" | "."));
        let call_or_rec = matches!(toks.get(k + 1), Some((Tok::Punct("(" | "->"), _)));
        if !member && !call_or_rec {
            out.push(span.clone());
        }
    }
    out
}

/// The identifiers a format's `print fmt` uses outside string literals, `REC->` field
/// accesses and function calls: the candidates for enum constants.
pub fn print_fmt_identifiers(format_text: &str) -> Vec<&str> {
    let Some(start) = print_fmt_start(format_text) else {
        return Vec::new();
    };
    let s = &format_text[start..];
    bare_identifier_spans(s)
        .into_iter()
        .map(|r| &s[r])
        .collect()
}

/// The format text with every enum constant of its `print fmt` replaced by its value, as
/// the kernel itself does for the enums it knows (`TRACE_DEFINE_ENUM`). None when the
/// text names no constant of `enums`.
pub fn substitute_enums(format_text: &str, enums: &HashMap<String, i64>) -> Option<String> {
    let start = print_fmt_start(format_text)?;
    let (head, s) = format_text.split_at(start);
    let mut out = String::with_capacity(format_text.len());
    out.push_str(head);
    let mut changed = false;
    let mut copied = 0;
    for Range { start: st, end } in bare_identifier_spans(s) {
        if let Some(v) = enums.get(&s[st..end]) {
            out.push_str(&s[copied..st]);
            out.push_str(&v.to_string());
            copied = end;
            changed = true;
        }
    }
    out.push_str(&s[copied..]);
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FMT: &str = "name: writeback_dirty_inode\nID: 1\nformat:\n\tfield:unsigned long state;\toffset:8;\tsize:8;\tsigned:0;\n\n\
print fmt: \"state=%s x=%d\", __print_flags(REC->state, \"|\", {I_DIRTY_SYNC, \"I_DIRTY_SYNC\"}, {I_DIRTY_PAGES, \"I_DIRTY_PAGES\"}), REC->I_DIRTY_SYNC + sizeof(long)\n";

    #[test]
    fn finds_and_replaces_enum_constants_only() {
        let ids = print_fmt_identifiers(FMT);
        assert_eq!(ids, vec!["I_DIRTY_SYNC", "I_DIRTY_PAGES", "long"]);
        let enums: HashMap<String, i64> = [
            ("I_DIRTY_SYNC".to_string(), 16),
            ("I_DIRTY_PAGES".to_string(), 64),
        ]
        .into();
        let out = substitute_enums(FMT, &enums).unwrap();
        assert!(
            out.ends_with(
                "print fmt: \"state=%s x=%d\", __print_flags(REC->state, \"|\", {16, \"I_DIRTY_SYNC\"}, {64, \"I_DIRTY_PAGES\"}), REC->I_DIRTY_SYNC + sizeof(long)\n"
            ),
            "{out}"
        );
        // The substituted text still parses as the same event.
        assert!(crate::event::Schema::parse("writeback", &out, 8).is_ok());
        let other: HashMap<String, i64> = [("OTHER".to_string(), 1)].into();
        assert_eq!(substitute_enums(FMT, &other), None);
        // A field named like a constant before `print fmt:` is not a candidate.
        assert!(print_fmt_identifiers("name: x\nID: 1\nformat:\n").is_empty());
    }
}
