//! POSIX basic regular expressions as trace-cmd and libtraceevent compile them
//! (`regcomp` without `REG_EXTENDED`, with `REG_ICASE`), translated into the `regex`
//! crate's syntax.
//!
//! In a basic regex `+ ? | ( ) { }` are literal characters and their escaped forms the
//! operators (GNU), a `*` that starts the expression (or a group or an alternative) is
//! literal, and `\` inside a bracket expression is literal.

use regex::Regex;

/// Compile a basic regex, case-insensitive and unanchored (as `regexec` searches).
pub fn basic_regex(pat: &str) -> Result<Regex, String> {
    compile(pat, true)
}

/// Compile a basic regex, case-sensitive (`regcomp` without `REG_ICASE`, as perf compiles
/// its cgroup patterns) and unanchored.
pub fn basic_regex_exact_case(pat: &str) -> Result<Regex, String> {
    compile(pat, false)
}

fn compile(pat: &str, ignore_case: bool) -> Result<Regex, String> {
    Regex::new(&translate(pat, ignore_case)?)
        .map_err(|e| format!("regex '{pat}' did not compile: {e}"))
}

/// The `regex` crate's spelling of a basic regex, with `(?i)` in front when the case is
/// ignored.
fn translate(pat: &str, ignore_case: bool) -> Result<String, String> {
    let mut out = String::from(if ignore_case { "(?i)" } else { "" });
    let chars: Vec<char> = pat.chars().collect();
    // Where a `*` would have nothing to repeat, so it stands for itself.
    let mut at_start = true;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        let start = at_start;
        at_start = false;
        match c {
            '\\' => match chars.get(i).copied() {
                Some(n) => {
                    i += 1;
                    match n {
                        '(' | '|' => {
                            out.push(n);
                            at_start = true;
                        }
                        '+' | '?' | ')' | '{' | '}' => out.push(n),
                        '<' | '>' => out.push_str("\\b"),
                        'w' | 'W' | 's' | 'S' | 'b' | 'B' => {
                            out.push('\\');
                            out.push(n);
                        }
                        '1'..='9' => {
                            return Err(format!(
                                "regex '{pat}': back-references (\\{n}) are not supported"
                            ))
                        }
                        _ => push_literal(&mut out, n),
                    }
                }
                None => return Err(format!("regex '{pat}': trailing backslash")),
            },
            '^' if start => {
                out.push('^');
                at_start = true;
            }
            '*' if start => out.push_str("\\*"),
            // `$` anchors only at the end of the expression, a group or an alternative.
            '$' if !(i == chars.len()
                || (chars[i] == '\\' && matches!(chars.get(i + 1), Some(')' | '|')))) =>
            {
                out.push_str("\\$")
            }
            '+' | '?' | '|' | '(' | ')' | '{' | '}' => push_literal(&mut out, c),
            '[' => i = bracket(pat, &chars, i, &mut out)?,
            _ => out.push(c),
        }
    }
    Ok(out)
}

fn push_literal(out: &mut String, c: char) {
    if c.is_ascii_alphanumeric() || c == '_' || !c.is_ascii() {
        out.push(c);
    } else {
        out.push('\\');
        out.push(c);
    }
}

/// Copy the bracket expression whose `[` is just before `chars[i]`; returns the index
/// after its `]`.
fn bracket(pat: &str, chars: &[char], mut i: usize, out: &mut String) -> Result<usize, String> {
    let unclosed = || format!("regex '{pat}': unclosed `[`");
    out.push('[');
    if chars.get(i) == Some(&'^') {
        out.push('^');
        i += 1;
    }
    let mut first = true;
    loop {
        let c = *chars.get(i).ok_or_else(unclosed)?;
        i += 1;
        match c {
            ']' if !first => {
                out.push(']');
                return Ok(i);
            }
            // A class like [:alpha:] is copied whole.
            '[' if matches!(chars.get(i), Some(':' | '.' | '=')) => {
                let kind = chars[i];
                let end = (i + 1..chars.len().saturating_sub(1))
                    .find(|&j| chars[j] == kind && chars[j + 1] == ']')
                    .ok_or_else(unclosed)?;
                out.extend(&chars[i - 1..end + 2]);
                i = end + 2;
            }
            '-' => out.push('-'),
            _ => push_literal(out, c),
        }
        first = false;
    }
}

#[cfg(test)]
mod tests {
    use super::basic_regex;

    fn m(pat: &str, text: &str) -> bool {
        basic_regex(pat).unwrap().is_match(text)
    }

    #[test]
    fn operators_are_the_escaped_forms() {
        assert!(m("sched_sw.*", "sched_switch"));
        assert!(m("SCHED_SWITCH", "sched_switch"));
        assert!(!m("sched_switch|sched_wakeup", "sched_wakeup"));
        assert!(m("sched_switch\\|sched_wakeup", "sched_wakeup"));
        assert!(m("sched_s\\(w\\|k\\)", "sched_skip"));
        assert!(m("sched_sw\\{1\\}itch", "sched_switch"));
        assert!(!m("sched_sw+", "sched_switch"));
        assert!(m("sched_sw+", "sched_sw+"));
        assert!(m("sched_sw\\+", "sched_swwitch"));
        assert!(m("x{", "x{"));
        assert!(m("a$b", "a$b"));
        assert!(m("sched_switch$", "sched_switch"));
        assert!(!m("sched_sw$", "sched_switch"));
    }

    #[test]
    fn a_leading_star_is_literal() {
        assert!(!m("*sched_switch", "sched_switch"));
        assert!(m("*sched", "*sched"));
        assert!(m("^*", "*x"));
        // Elsewhere it repeats.
        assert!(m("sched_sw*", "sched_s"));
    }

    #[test]
    fn brackets() {
        assert!(m("[[:alpha:]]*_switch$", "sched_switch"));
        assert!(!m("[^s]ched_switch", "sched_switch"));
        assert!(m("a[\\]b", "a\\b"));
        assert!(m("[]x]", "]"));
        assert!(m("[a-c]", "b"));
        assert!(basic_regex("[").is_err());
        assert!(basic_regex("[[:alpha:").is_err());
    }
}
