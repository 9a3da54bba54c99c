//! Event hooks of `--profile` (`-H`): two events timed as a pair, as trace-cmd 3.1.6 reads
//! `[<start_system>:]<start_event>,<start_match>[,<start_pid>]/
//! [<end_system>:]<end_event>,<end_match>[,<flags>]`.
//!
//! A start is matched by the end whose `end_match` field equals the start's
//! `start_match` field; the pair belongs to the task that ran the start (or the pid in
//! its `start_pid` field). Flags, in any case: `p` the pair stays on one CPU, `g` it
//! belongs to no task (a global one), `s` the start event records a kernel stack.

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
}

/// A hook that does not read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HookError {
    /// The text is not of the hook form.
    Invalid {
        /// The hook as given.
        hook: String,
    },
    /// A field the hook names is not in its event.
    NoField {
        /// The event.
        event: String,
        /// The field.
        field: String,
    },
    /// A flag other than p, g and s.
    UnknownFlag {
        /// The hook as given.
        hook: String,
        /// The flag.
        flag: char,
    },
}

impl std::fmt::Display for HookError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HookError::Invalid { hook } => write!(
                f,
                "invalid hook '{hook}': the form is \
                 [SYSTEM:]START_EVENT,START_MATCH[,START_PID]/[SYSTEM:]END_EVENT,END_MATCH[,FLAGS]"
            ),
            HookError::NoField { event, field } => write!(
                f,
                "hook: event {event} has no field {field} (see `tracectl report --event {event}`)"
            ),
            HookError::UnknownFlag { hook, flag } => write!(
                f,
                "hook '{hook}': unknown flag '{flag}' (p: pinned to a CPU, g: global, s: stack)"
            ),
        }
    }
}

impl std::error::Error for HookError {}

/// `[system:]event` and the fields after it, split at commas.
fn event_and_fields(part: &str) -> Option<(Option<String>, String, Vec<&str>)> {
    let first = part.find([':', ','])?;
    let (system, rest) = if part.as_bytes()[first] == b':' {
        if first == 0 {
            return None;
        }
        (Some(part[..first].to_string()), &part[first + 1..])
    } else {
        (None, part)
    };
    let mut fields = rest.split(',');
    let event = fields.next().filter(|e| !e.is_empty())?.to_string();
    Some((system, event, fields.collect()))
}

impl ProfileHook {
    /// Read one hook.
    pub fn parse(text: &str) -> Result<ProfileHook, HookError> {
        let invalid = || HookError::Invalid {
            hook: text.to_string(),
        };
        let (start, end) = text.split_once('/').ok_or_else(invalid)?;
        let (start_system, start_event, f) = event_and_fields(start).ok_or_else(invalid)?;
        let (start_match, start_pid) = match f[..] {
            [m] if !m.is_empty() => (m, None),
            [m, p] if !m.is_empty() && !p.is_empty() => (m, Some(p.to_string())),
            _ => return Err(invalid()),
        };
        let (end_system, end_event, f) = event_and_fields(end).ok_or_else(invalid)?;
        let (end_match, flags) = match f.split_first() {
            Some((m, [])) if !m.is_empty() => (*m, None),
            Some((m, rest)) if !m.is_empty() && !rest.join(",").is_empty() => {
                (*m, Some(rest.join(",")))
            }
            _ => return Err(invalid()),
        };
        let mut hook = ProfileHook {
            start_system,
            start_event,
            start_match: start_match.to_string(),
            start_pid,
            end_system,
            end_event,
            end_match: end_match.to_string(),
            flags: flags.clone(),
            migrate: true,
            global: false,
            stack: false,
        };
        for c in flags.unwrap_or_default().chars() {
            match c.to_ascii_lowercase() {
                'p' => hook.migrate = false,
                'g' => hook.global = true,
                's' => hook.stack = true,
                flag => {
                    return Err(HookError::UnknownFlag {
                        hook: text.to_string(),
                        flag,
                    })
                }
            }
        }
        Ok(hook)
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
        for bad in ["a,x", "a/b,y", "a,x/b", ":a,x/b,y", "a,x/b,y,q"] {
            assert!(ProfileHook::parse(bad).is_err(), "{bad}");
        }
    }
}
