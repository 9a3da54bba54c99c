//! Closest-name suggestions for misspelt events and functions.

/// Levenshtein distance between two strings, by bytes (names in tracefs are ASCII).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, &ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// Up to `max` candidates closest to `name`, best first, within a distance that still
/// reads as a typo (a third of the name's length, at least 2) and not much further than
/// the best one.
pub fn closest<'a, I>(name: &str, candidates: I, max: usize) -> Vec<String>
where
    I: IntoIterator<Item = &'a str>,
{
    let limit = (name.len() / 3).max(2);
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, _)| *d <= limit)
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    // Names much further than the best one are noise next to it.
    let best = scored.first().map(|s| s.0).unwrap_or(0);
    scored
        .into_iter()
        .take_while(|(d, _)| *d <= best + 1)
        .take(max)
        .map(|(_, c)| c.to_string())
        .collect()
}

/// Shell-style glob match with `*`, `?` and `[...]` classes, as ftrace accepts them.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    fn go(p: &[u8], t: &[u8]) -> bool {
        let (mut pi, mut ti) = (0, 0);
        let mut star: Option<(usize, usize)> = None;
        while ti < t.len() {
            if pi < p.len() {
                match p[pi] {
                    b'*' => {
                        star = Some((pi, ti));
                        pi += 1;
                        continue;
                    }
                    b'?' => {
                        pi += 1;
                        ti += 1;
                        continue;
                    }
                    b'[' => {
                        if let Some((ok, len)) = class(&p[pi..], t[ti]) {
                            if ok {
                                pi += len;
                                ti += 1;
                                continue;
                            }
                        } else if t[ti] == b'[' {
                            pi += 1;
                            ti += 1;
                            continue;
                        }
                    }
                    c if c == t[ti] => {
                        pi += 1;
                        ti += 1;
                        continue;
                    }
                    _ => {}
                }
            }
            match star {
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            }
        }
        while pi < p.len() && p[pi] == b'*' {
            pi += 1;
        }
        pi == p.len()
    }
    go(pattern.as_bytes(), text.as_bytes())
}

/// The `[...]` class at the start of `p` against `c`: (matched, length of the class
/// with its brackets), or None when it is not closed.
fn class(p: &[u8], c: u8) -> Option<(bool, usize)> {
    let mut i = 1;
    let negate = p.get(i) == Some(&b'!') || p.get(i) == Some(&b'^');
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    while i < p.len() && (first || p[i] != b']') {
        first = false;
        if i + 2 < p.len() && p[i + 1] == b'-' && p[i + 2] != b']' {
            if p[i] <= c && c <= p[i + 2] {
                matched = true;
            }
            i += 3;
        } else {
            if p[i] == c {
                matched = true;
            }
            i += 1;
        }
    }
    if i >= p.len() {
        return None;
    }
    Some((matched != negate, i + 1))
}

/// Check a glob: every `[` opens a class that is closed (an unclosed one is a typo that
/// would match nothing).
pub fn check_glob(pattern: &str) -> Result<(), String> {
    let p = pattern.as_bytes();
    let mut i = 0;
    while i < p.len() {
        if p[i] == b'[' {
            match class(&p[i..], 0) {
                Some((_, len)) => i += len,
                None => return Err(format!("unclosed `[` in the pattern {pattern:?}")),
            }
        } else {
            i += 1;
        }
    }
    Ok(())
}

/// Whether a name holds glob metacharacters.
pub fn is_glob(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance() {
        assert_eq!(edit_distance("sched_swich", "sched_switch"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn closest_picks_the_typo() {
        let c = closest(
            "sched:sched_swich",
            [
                "sched:sched_switch",
                "sched:sched_waking",
                "irq:softirq_entry",
            ],
            3,
        );
        assert_eq!(c, vec!["sched:sched_switch".to_string()]);
        assert!(closest("zzzzzzzz", ["sched:sched_switch"], 3).is_empty());
    }

    #[test]
    fn unclosed_classes_are_reported() {
        assert!(check_glob("sched_[sw]*").is_ok());
        assert!(check_glob("*").is_ok());
        assert!(check_glob("[").unwrap_err().contains("unclosed `[`"));
        assert!(check_glob("sched_[sw").is_err());
        assert!(check_glob("a[]").is_err());
    }

    #[test]
    fn long_star_patterns_take_no_time() {
        // Backtracking over every star would take about 2^24 steps here.
        let pat = "*a".repeat(24) + "b";
        assert!(!glob_match(&pat, &"a".repeat(60)));
    }

    #[test]
    fn globs() {
        assert!(glob_match("sched_*", "sched_switch"));
        assert!(glob_match("*irq*", "softirq_entry"));
        assert!(!glob_match("sched_*", "irq_handler_entry"));
        assert!(glob_match("sched_wak?ng", "sched_waking"));
        assert!(glob_match("irq_handler_[ae]*", "irq_handler_entry"));
        assert!(!glob_match("irq_handler_[!e]*", "irq_handler_entry"));
        assert!(glob_match("*", ""));
        assert!(!glob_match("a", ""));
    }
}
