//! The kernel's event filter language (`events/<system>/<event>/filter`), checked against
//! an event's [`Schema`] before anything is written.
//!
//! A filter combines predicates `FIELD OP VALUE` with `&&`, `||`, `!` and parentheses.
//! Numeric fields take `==`, `!=`, `<`, `<=`, `>`, `>=` and `&` with a number (decimal,
//! `0x` hex or `0` octal, signed or not); string fields (`char[N]`, `__data_loc char[]`,
//! `char *`) take `==`, `!=` and `~` (a glob) with a string in quotes (double or single). Besides the
//! format's fields the kernel knows `CPU`, `COMM` and `STACKTRACE` (also in lower case).
//! A field with a suffix (`call_site.function`, `target_cpu` with `CPUS{...}`) is
//! checked for its name only: what the kernel accepts there depends on its version.
//! `0` alone clears the filter. Like the kernel, a trailing `&&` or `||` is let through.
//!
//! The check walks the tokens once, without recursion, so any nesting depth is fine.

use std::fmt;

use super::{FieldKind, Schema};

/// Why a filter would be rejected, naming the event and the offending token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterSyntaxError {
    /// `system:event`.
    pub event: String,
    /// The filter text.
    pub filter: String,
    /// Byte offset of the problem in the filter.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for FilterSyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "filter {:?} for {}: {} (at offset {})",
            self.filter, self.event, self.message, self.offset
        )
    }
}

impl std::error::Error for FilterSyntaxError {}

/// The kernel's fields that every event has besides its format's.
const GENERIC_STRING_FIELDS: &[&str] = &["COMM", "comm"];
const GENERIC_OTHER_FIELDS: &[&str] = &["CPU", "cpu", "STACKTRACE", "stacktrace"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FieldType {
    String,
    Number {
        signed: bool,
    },
    /// A suffixed field or a special one: only its name is checked.
    Other,
}

fn field_type(schema: &Schema, name: &str) -> Option<FieldType> {
    let (base, suffixed) = match name.split_once('.') {
        Some((b, _)) => (b, true),
        None => (name, false),
    };
    if GENERIC_STRING_FIELDS.contains(&base) {
        return Some(if suffixed {
            FieldType::Other
        } else {
            FieldType::String
        });
    }
    if GENERIC_OTHER_FIELDS.contains(&base) {
        return Some(FieldType::Other);
    }
    let f = schema.field(base)?;
    if suffixed {
        return Some(FieldType::Other);
    }
    let is_char = f.type_name.contains("char");
    Some(match f.kind {
        FieldKind::CharArray { .. } => FieldType::String,
        FieldKind::DataLoc { elem_size: 1 } | FieldKind::RelLoc { elem_size: 1 } if is_char => {
            FieldType::String
        }
        FieldKind::Pointer if is_char => FieldType::String,
        FieldKind::Scalar | FieldKind::Pointer => FieldType::Number { signed: f.signed },
        _ => FieldType::Other,
    })
}

/// Whether `v` reads as a number the way the kernel's filter reads it: `kstrtoll` for a
/// signed field, `kstrtoull` (no minus sign) for an unsigned one, base 0 (decimal, `0x`
/// hex, `0` octal).
fn is_number(v: &str, signed: bool) -> bool {
    let (negative, digits) = match v.strip_prefix('-') {
        Some(d) if signed => (true, d),
        Some(_) => return false,
        None => (false, v),
    };
    if !digits.starts_with(|c: char| c.is_ascii_digit()) {
        return false;
    }
    let magnitude = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        u64::from_str_radix(hex, 16)
    } else if digits.len() > 1 && digits.starts_with('0') {
        u64::from_str_radix(&digits[1..], 8)
    } else {
        digits.parse::<u64>()
    };
    match (magnitude, signed) {
        (Err(_), _) => false,
        (Ok(_), false) => true,
        (Ok(m), true) => m <= i64::MAX as u64 + u64::from(negative),
    }
}

const OPS: &[&str] = &["==", "!=", "<=", ">=", "<", ">", "&", "~"];

/// Check `filter` as the kernel would parse it for the event `schema` describes.
pub fn check_filter(schema: &Schema, filter: &str) -> Result<(), FilterSyntaxError> {
    let fail = |offset: usize, message: String| FilterSyntaxError {
        event: format!("{}:{}", schema.system, schema.name),
        filter: filter.to_string(),
        offset,
        message,
    };
    if filter.trim() == "0" {
        return Ok(());
    }
    let b = filter.as_bytes();
    let mut i = 0;
    let mut depth = 0usize;
    // True when an operand (a predicate, `(` or `!`) comes next.
    let mut want_operand = true;
    let skip_space = |i: &mut usize| {
        while *i < b.len() && b[*i].is_ascii_whitespace() {
            *i += 1;
        }
    };
    loop {
        skip_space(&mut i);
        if i >= b.len() {
            break;
        }
        let rest = &filter[i..];
        if want_operand {
            match b[i] {
                b'(' => {
                    depth += 1;
                    i += 1;
                    continue;
                }
                b'!' if !rest.starts_with("!=") => {
                    i += 1;
                    continue;
                }
                _ => {}
            }
            // FIELD
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                i += 1;
            }
            if i == start {
                return Err(fail(
                    start,
                    format!(
                        "expected a field name, found {:?}",
                        &filter[start..start + char_len(rest)]
                    ),
                ));
            }
            let field = &filter[start..i];
            let Some(ty) = field_type(schema, field) else {
                let known: Vec<&str> = schema.fields.iter().map(|f| f.name.as_str()).collect();
                return Err(fail(
                    start,
                    format!(
                        "no field {field:?} in this event (its fields: {})",
                        known.join(", ")
                    ),
                ));
            };
            // OP
            skip_space(&mut i);
            let op_at = i;
            let Some(op) = OPS.iter().find(|op| filter[i..].starts_with(**op)) else {
                return Err(fail(
                    op_at,
                    format!("expected an operator ({}) after {field:?}", OPS.join(" ")),
                ));
            };
            i += op.len();
            match ty {
                FieldType::String if !matches!(*op, "==" | "!=" | "~") => {
                    return Err(fail(
                        op_at,
                        format!("{field:?} is a string: use ==, != or ~, not {op}"),
                    ));
                }
                FieldType::Number { .. } if *op == "~" => {
                    return Err(fail(
                        op_at,
                        format!("{field:?} is a number: ~ compares strings"),
                    ));
                }
                _ => {}
            }
            // VALUE
            skip_space(&mut i);
            let val_at = i;
            if i < b.len() && (b[i] == b'"' || b[i] == b'\'') {
                let q = b[i];
                match b[i + 1..].iter().position(|&c| c == q) {
                    Some(n) => i += n + 2,
                    None => {
                        return Err(fail(val_at, "the quoted value has no closing quote".into()))
                    }
                }
                if let FieldType::Number { .. } = ty {
                    return Err(fail(val_at, format!("{field:?} is a number, not a string")));
                }
            } else {
                // A bare value ends at a space, a parenthesis or a logical operator; a
                // CPUS{...} list at its brace.
                if filter[i..].starts_with("CPUS{") {
                    match filter[i..].find('}') {
                        Some(n) => i += n + 1,
                        None => return Err(fail(val_at, "CPUS{ has no closing }".into())),
                    }
                } else {
                    while i < b.len()
                        && !b[i].is_ascii_whitespace()
                        && b[i] != b')'
                        && !filter[i..].starts_with("&&")
                        && !filter[i..].starts_with("||")
                    {
                        i += 1;
                    }
                }
                let value = &filter[val_at..i];
                if value.is_empty() {
                    return Err(fail(val_at, format!("{field:?} {op} needs a value")));
                }
                if ty == FieldType::String {
                    return Err(fail(
                        val_at,
                        format!("{field:?} is a string: put {value:?} in quotes"),
                    ));
                }
                if let FieldType::Number { signed } = ty {
                    if !is_number(value, signed) {
                        let kind = if signed { "a signed" } else { "an unsigned" };
                        return Err(fail(
                            val_at,
                            format!("{value:?} is not a number for {field:?} ({kind} field)"),
                        ));
                    }
                }
            }
            want_operand = false;
        } else if b[i] == b')' {
            if depth == 0 {
                return Err(fail(i, "unbalanced ')'".into()));
            }
            depth -= 1;
            i += 1;
        } else if rest.starts_with("&&") || rest.starts_with("||") {
            i += 2;
            skip_space(&mut i);
            // The kernel ignores a logical operator at the very end.
            want_operand = i < b.len();
        } else {
            return Err(fail(
                i,
                format!("expected && or || , found {:?}", &rest[..char_len(rest)]),
            ));
        }
    }
    if want_operand {
        return Err(fail(
            filter.len(),
            "the filter ends where a predicate should follow".into(),
        ));
    }
    if depth > 0 {
        return Err(fail(filter.len(), format!("{depth} '(' left open")));
    }
    Ok(())
}

/// Check `filter` for several events, given as `(system, format text)`: with `every`,
/// each must take it (the filter goes to each event's file); without, at least one must
/// (a system's `filter`, which the kernel keeps for the events it fits). A format that
/// does not parse is left for the kernel to judge. The error is the first event's that
/// refused it.
pub fn check_filter_for<'a>(
    formats: impl IntoIterator<Item = (&'a str, &'a str)>,
    filter: &str,
    every: bool,
) -> Result<(), FilterSyntaxError> {
    let mut first_err = None;
    let mut fits = 0usize;
    for (system, text) in formats {
        // Only the field names and types matter here, not the long size.
        let Ok(schema) = Schema::parse(system, text, 8) else {
            fits += 1;
            continue;
        };
        match check_filter(&schema, filter) {
            Ok(()) => fits += 1,
            Err(e) if every => return Err(e),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    match first_err {
        Some(e) if fits == 0 => Err(e),
        _ => Ok(()),
    }
}

fn char_len(s: &str) -> usize {
    s.chars().next().map_or(0, char::len_utf8)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SWITCH: &str = "name: sched_switch
ID: 316
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;
\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;
\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;
\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;
\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;
\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;
\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;

print fmt: \"prev_comm=%s prev_pid=%d\", REC->prev_comm, REC->prev_pid
";

    fn schema() -> Schema {
        Schema::parse("sched", SWITCH, 8).unwrap()
    }

    #[test]
    fn accepts_what_the_kernel_accepts() {
        let s = schema();
        for f in [
            "prev_pid != 0",
            "prev_pid!=0",
            "(prev_pid == 1 || next_pid == 0x10) && !(prev_prio < 120)",
            "prev_comm == \"bash\"",
            "next_comm ~ \"kworker*\"",
            "prev_comm==\"sh\"",
            "prev_comm == \"\"",
            "prev_pid == 1 &&",
            "prev_pid == 1 || ",
            "prev_pid==1&&next_pid==2",
            "prev_pid == -0x10",
            "! prev_pid == 1",
            "prev_pid == 010",
            "cpu == 1",
            "common_flags == 300",
            "prev_pid == 99999999999",
            "prev_comm == \"a b\"",
            "prev_comm ~ \"*a\"",
            "prev_state == -9223372036854775808",
            "common_pid > 0 && CPU == 1",
            "COMM ~ 'ls*'",
            "prev_state & 1",
            "prev_prio >= -1",
            "0",
            "((((prev_pid == 1))))",
        ] {
            check_filter(&s, f).unwrap_or_else(|e| panic!("{f}: {e}"));
        }
    }

    #[test]
    fn refuses_what_the_kernel_refuses_naming_the_token() {
        let s = schema();
        for (f, why, at) in [
            ("prev_pidd == 1", "no field \"prev_pidd\"", 0),
            ("prev_pid = 1", "expected an operator", 9),
            ("prev_pid == ", "needs a value", 12),
            ("prev_pid == abc", "\"abc\" is not a number", 12),
            ("prev_comm < \"a\"", "is a string", 10),
            ("prev_pid ~ \"a\"", "is a number", 9),
            ("prev_pid == \"1\"", "is a number, not a string", 12),
            ("(prev_pid == 1", "'(' left open", 14),
            ("prev_pid == 1)", "unbalanced ')'", 13),
            (
                "prev_pid == 1 && && next_pid == 2",
                "expected a field name",
                17,
            ),
            ("&& prev_pid == 1", "expected a field name", 0),
            ("prev_pid == 1 &&)", "expected a field name", 16),
            ("()", "expected a field name", 1),
            ("prev_comm == sh", "put \"sh\" in quotes", 13),
            ("prev_pid == 09", "is not a number", 12),
            ("common_flags == -1", "an unsigned field", 16),
            ("prev_pid == +1", "is not a number", 12),
            ("prev_pid == 0x", "is not a number", 12),
            ("prev_pid == 1a", "is not a number", 12),
            ("prev_pid > 18446744073709551616", "is not a number", 11),
            ("prev_pid == 1 ) ", "unbalanced ')'", 14),
            ("prev_pid == 1 next_pid == 2", "expected && or ||", 14),
            ("prev_comm == \"bash", "no closing quote", 13),
            ("[", "expected a field name", 0),
        ] {
            let e = check_filter(&s, f).expect_err(f);
            assert!(e.message.contains(why), "{f}: {e}");
            assert_eq!(e.offset, at, "{f}: {e}");
            assert_eq!(e.event, "sched:sched_switch");
        }
    }

    #[test]
    fn a_system_filter_must_fit_one_event_an_event_list_each() {
        let wakeup = SWITCH
            .replace("name: sched_switch", "name: sched_wakeup")
            .replace("prev_pid", "pid");
        let both = [("sched", SWITCH), ("sched", wakeup.as_str())];
        check_filter_for(both, "prev_pid == 1", false).unwrap();
        let e = check_filter_for(both, "prev_pid == 1", true).unwrap_err();
        assert_eq!(e.event, "sched:sched_wakeup");
        let e = check_filter_for(both, "nosuch == 1", false).unwrap_err();
        assert_eq!(e.event, "sched:sched_switch");
        // A format that does not parse is the kernel's to judge.
        check_filter_for([("sched", "garbage")], "x == 1", true).unwrap();
    }

    #[test]
    fn deep_nesting_is_fine() {
        let s = schema();
        let f = format!(
            "{}prev_pid == 1{}",
            "(".repeat(100_000),
            ")".repeat(100_000)
        );
        check_filter(&s, &f).unwrap();
        let e = check_filter(&s, &"(".repeat(100_000)).unwrap_err();
        assert!(e.message.contains("ends where a predicate"), "{e}");
    }
}
