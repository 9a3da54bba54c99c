//! Event hooks of `--profile` (`-H`): two events timed as a pair, as trace-cmd 3.1.6 reads
//! `[<start_system>:]<start_event>,<start_match>[,<start_pid>]/
//! [<end_system>:]<end_event>,<end_match>[,<flags>]`.
//!
//! A start is matched by the end whose `end_match` field equals the start's
//! `start_match` field; the pair belongs to the task that ran the start (or the pid in
//! its `start_pid` field). Flags, in any case: `p` the pair stays on one CPU, `g` it
//! belongs to no task (a global one), `s` the start event records a kernel stack.
//!
//! The text is split the way trace-cmd 3.1.6 splits it (facts, not code): with C's
//! `strtok`, so runs of separators count as one and a separator at the very start is
//! skipped, and a start system is recognised by the `:` at the first token's length,
//! counted from the start of the text even when separators were skipped.

/// One `-H` hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileHook {
    /// The start event's system, if given.
    pub start_system: Option<String>,
    /// The start event.
    pub start_event: String,
    /// The start event's field that the end's `end_match` field must equal.
    pub start_match: String,
    /// The start event's field holding the pid of the task the pair belongs to.
    pub start_pid: Option<String>,
    /// The end event's system, if given.
    pub end_system: Option<String>,
    /// The end event.
    pub end_event: String,
    /// The end event's field matched with the start's.
    pub end_match: String,
    /// The flags as given.
    pub flags: Option<String>,
    /// The pair may start and end on different CPUs (no `p`).
    pub migrate: bool,
    /// The pair belongs to a global task (`g`).
    pub global: bool,
    /// The start event records a kernel stack (`s`).
    pub stack: bool,
    /// Flag letters that mean nothing (trace-cmd warns about each and goes on).
    pub unknown_flags: Vec<char>,
}

/// A hook that does not read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HookError {
    /// A part is missing; `part` names the first one not found.
    Invalid {
        /// The hook as given.
        hook: String,
        /// What was expected where the text ended.
        part: &'static str,
    },
    /// A field the hook names is not in its event.
    NoField {
        /// The event.
        event: String,
        /// The field.
        field: String,
    },
}

impl std::fmt::Display for HookError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HookError::Invalid { hook, part } => write!(
                f,
                "invalid hook '{hook}': no {part}; the form is \
                 [SYSTEM:]START_EVENT,START_MATCH[,START_PID]/[SYSTEM:]END_EVENT,END_MATCH[,FLAGS]"
            ),
            HookError::NoField { event, field } => write!(
                f,
                "hook: event {event} has no field {field} (see `tracectl report --event {event}`)"
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

impl ProfileHook {
    /// Read one hook as trace-cmd does.
    pub fn parse(hook: &str) -> Result<ProfileHook, HookError> {
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
        let start_pid = if at(m.1) == b',' {
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

        let mut h = ProfileHook {
            start_system,
            start_event,
            start_match,
            start_pid,
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

    /// The line trace-cmd prints on its standard output for each hook it reads.
    pub fn trace_cmd_line(&self) -> String {
        let or_null = |s: &Option<String>| s.clone().unwrap_or_else(|| "(null)".into());
        format!(
            "start {}:{}:{} ({}) end {}:{}:{} ({})",
            or_null(&self.start_system),
            self.start_event,
            self.start_match,
            or_null(&self.start_pid),
            or_null(&self.end_system),
            self.end_event,
            self.end_match,
            or_null(&self.flags),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines are trace-cmd 3.1.6's for the same hooks.
    #[test]
    fn reads_hooks_as_trace_cmd_does() {
        let h = ProfileHook::parse("sched_process_fork,child_pid,child_pid/sched_process_exit,pid")
            .unwrap();
        assert_eq!(
            h.trace_cmd_line(),
            "start (null):sched_process_fork:child_pid (child_pid) end (null):sched_process_exit:pid ((null))"
        );
        assert!(h.migrate && !h.global && !h.stack);
        let h =
            ProfileHook::parse("sched:sched_waking,pid/sched:sched_stat_runtime,pid,g").unwrap();
        assert_eq!(
            h.trace_cmd_line(),
            "start sched:sched_waking:pid ((null)) end sched:sched_stat_runtime:pid (g)"
        );
        assert!(h.migrate && h.global);
        let h = ProfileHook::parse("a,x/b,y,PS").unwrap();
        assert!(!h.migrate && h.stack && !h.global);
        for (text, line) in [
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
            assert_eq!(ProfileHook::parse(text).unwrap().trace_cmd_line(), line);
        }
        let h = ProfileHook::parse("a,b/c,d,xP").unwrap();
        assert_eq!(h.unknown_flags, vec!['x']);
        assert!(!h.migrate);
    }

    /// trace-cmd warns "Invalid hook format" and then crashes on these.
    #[test]
    fn incomplete_hooks_are_refused() {
        for (text, part) in [
            ("bad", "start match field"),
            ("a,x", "end event"),
            ("a,b/c", "end match field"),
            ("", "start event"),
            ("s:", "start event after the system"),
        ] {
            let e = ProfileHook::parse(text).unwrap_err();
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
