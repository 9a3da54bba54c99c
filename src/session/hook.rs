//! Event hooks: trace-cmd's `-H [start_system:]start_event,start_match[,pid]/
//! [end_system:]end_event,end_match[,flags]`, a start event paired with the end event
//! whose `end_match` field equals the start's `start_match` field.
//!
//! The text is split the way trace-cmd 3.1.6 splits it (facts, not code): with C's
//! `strtok`, so runs of separators count as one and a separator at the very start is
//! skipped, and a system is recognised by the `:` right after the first token, counted
//! from the start of the text even when separators were skipped.

use std::fmt;

/// One parsed hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventHook {
    /// System of the start event, if given.
    pub start_system: Option<String>,
    /// The start event.
    pub start_event: String,
    /// The start event's field compared with the end event's `end_match` field.
    pub start_match: String,
    /// The start event's field naming the task it belongs to, if given (else its
    /// `common_pid`).
    pub pid: Option<String>,
    /// System of the end event, if given.
    pub end_system: Option<String>,
    /// The end event.
    pub end_event: String,
    /// The end event's field compared with the start's.
    pub end_match: String,
    /// The flags text as given.
    pub flags: Option<String>,
    /// False with flag `P` (pinned: start and end on the same CPU).
    pub migrate: bool,
    /// Flag `G`: the pair belongs to no task.
    pub global: bool,
    /// Flag `S`: save stacks.
    pub stack: bool,
    /// Flag letters that mean nothing (trace-cmd warns about each and goes on).
    pub unknown_flags: Vec<char>,
}

/// A hook text that does not have the hook's form.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HookError {
    /// A part is missing; `part` names the first one not found.
    Invalid {
        /// The text as given.
        hook: String,
        /// What was expected where the text ended.
        part: &'static str,
    },
}

impl fmt::Display for HookError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HookError::Invalid { hook, part } => write!(
                f,
                "invalid hook '{hook}': no {part}; the form is \
                 [start_system:]start_event,start_match[,pid]/[end_system:]end_event,end_match[,flags]"
            ),
        }
    }
}

impl std::error::Error for HookError {}

/// C's `strtok` over a copy of the text: the same tokens, as byte ranges.
struct Tokens<'a> {
    text: &'a [u8],
    pos: usize,
}

impl Tokens<'_> {
    fn next(&mut self, separators: &[u8]) -> Option<(usize, usize)> {
        while self.pos < self.text.len() && separators.contains(&self.text[self.pos]) {
            self.pos += 1;
        }
        if self.pos >= self.text.len() {
            return None;
        }
        let start = self.pos;
        while self.pos < self.text.len() && !separators.contains(&self.text[self.pos]) {
            self.pos += 1;
        }
        let end = self.pos;
        // The separator that ended the token is consumed with it.
        if self.pos < self.text.len() {
            self.pos += 1;
        }
        Some((start, end))
    }
}

impl EventHook {
    /// Parse a hook as trace-cmd does.
    pub fn parse(hook: &str) -> Result<EventHook, HookError> {
        let text = hook.as_bytes();
        let at = |i: usize| text.get(i).copied().unwrap_or(0);
        let s = |(a, b): (usize, usize)| hook[a..b].to_string();
        let mut t = Tokens { text, pos: 0 };
        let invalid = |part| HookError::Invalid {
            hook: hook.to_string(),
            part,
        };

        let first = t.next(b":,").ok_or(invalid("start event"))?;
        // trace-cmd looks at the length of the token, not where it ends.
        let (start_system, start_event) = if at(first.1 - first.0) == b':' {
            let event = t
                .next(b",")
                .ok_or(invalid("start event after the system"))?;
            (Some(s(first)), s(event))
        } else {
            (None, s(first))
        };
        let m = t.next(b",/").ok_or(invalid("start match field"))?;
        let start_match = s(m);
        let pid = if at(m.1) == b',' {
            Some(s(t.next(b"/").ok_or(invalid("pid field"))?))
        } else {
            None
        };

        let first = t.next(b":,").ok_or(invalid("end event"))?;
        let (end_system, end_event) = if at(first.1) == b':' {
            let event = t.next(b",").ok_or(invalid("end event after the system"))?;
            (Some(s(first)), s(event))
        } else {
            (None, s(first))
        };
        let m = t.next(b",").ok_or(invalid("end match field"))?;
        let end_match = s(m);
        let flags = if at(m.1) == b',' {
            Some(s(t.next(b"").ok_or(invalid("flags"))?))
        } else {
            None
        };

        let mut h = EventHook {
            start_system,
            start_event,
            start_match,
            pid,
            end_system,
            end_event,
            end_match,
            flags: flags.clone(),
            migrate: true,
            global: false,
            stack: false,
            unknown_flags: Vec::new(),
        };
        for c in flags.as_deref().unwrap_or("").chars() {
            match c.to_ascii_lowercase() {
                'p' => h.migrate = false,
                'g' => h.global = true,
                's' => h.stack = true,
                _ => h.unknown_flags.push(c),
            }
        }
        Ok(h)
    }

    /// The line trace-cmd prints for a hook it has parsed: `start SYSTEM:EVENT:MATCH
    /// (PID) end SYSTEM:EVENT:MATCH (FLAGS)`, with `(null)` for what was not given.
    pub fn trace_cmd_line(&self) -> String {
        let or_null = |o: &Option<String>| o.clone().unwrap_or_else(|| "(null)".into());
        format!(
            "start {}:{}:{} ({}) end {}:{}:{} ({})",
            or_null(&self.start_system),
            self.start_event,
            self.start_match,
            or_null(&self.pid),
            or_null(&self.end_system),
            self.end_event,
            self.end_match,
            or_null(&self.flags)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each line is what trace-cmd 3.1.6's `report -H TEXT` printed.
    #[test]
    fn lines_as_trace_cmd_prints_them() {
        for (text, line) in [
            (
                "sched:sched_waking,pid/sched:sched_switch,next_pid",
                "start sched:sched_waking:pid ((null)) end sched:sched_switch:next_pid ((null))",
            ),
            (
                "sched_waking,pid,123/sched_switch,next_pid,PgSx",
                "start (null):sched_waking:pid (123) end (null):sched_switch:next_pid (PgSx)",
            ),
            (
                ":a,b/c,d",
                "start (null):a:b ((null)) end (null):c:d ((null))",
            ),
            (
                "a,,b//c,,d",
                "start (null):a:b ((null)) end (null):/c:d ((null))",
            ),
            ("a:b,c,d/e:f,g,h,i", "start a:b:c (d) end e:f:g (h,i)"),
        ] {
            assert_eq!(EventHook::parse(text).unwrap().trace_cmd_line(), line);
        }
        let h = EventHook::parse("a,b/c,d,xP").unwrap();
        assert_eq!(h.unknown_flags, vec!['x']);
        assert!(!h.migrate);
    }

    /// trace-cmd warns "Invalid hook format" and then crashes on these.
    #[test]
    fn incomplete_hooks_are_refused() {
        for (text, part) in [
            ("bad", "start match field"),
            ("a,b", "end event"),
            ("a,b/c", "end match field"),
            ("", "start event"),
            ("s:", "start event after the system"),
        ] {
            let e = EventHook::parse(text).unwrap_err();
            assert_eq!(
                e,
                HookError::Invalid {
                    hook: text.into(),
                    part
                },
                "{text}"
            );
            assert!(e.to_string().contains(&format!("'{text}'")));
        }
    }
}
