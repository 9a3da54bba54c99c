//! Function-tracer controls: set_ftrace_filter/notrace, graph filters, depth, function
//! pids and function triggers. Sandboxes and locked-down kernels refuse many of these
//! files with EPERM; the errors say so and callers carry on without them.

use std::fmt;

use super::events::{parse_pids, pid_text};
use super::instance::Instance;
use super::suggest::{closest, glob_match, is_glob};
use super::{AppendMode, Tracefs, TracefsError};

/// Which function-filter file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FunctionFilter {
    /// `set_ftrace_filter` (trace only these; `-l`).
    Filter,
    /// `set_ftrace_notrace` (never trace these; `-n`).
    Notrace,
    /// `set_graph_function` (graph only from these; `-g`).
    GraphFunction,
    /// `set_graph_notrace`.
    GraphNotrace,
}

impl FunctionFilter {
    /// The tracefs file.
    pub fn file(&self) -> &'static str {
        match self {
            FunctionFilter::Filter => "set_ftrace_filter",
            FunctionFilter::Notrace => "set_ftrace_notrace",
            FunctionFilter::GraphFunction => "set_graph_function",
            FunctionFilter::GraphNotrace => "set_graph_notrace",
        }
    }
}

/// What a function trigger does (`FUNC:COMMAND[:ARG][:COUNT]` in set_ftrace_filter).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FunctionTriggerAction {
    /// `traceon`.
    TraceOn,
    /// `traceoff`.
    TraceOff,
    /// `stacktrace`.
    Stacktrace,
    /// `dump` (the whole ring buffer to the console).
    Dump,
    /// `cpudump` (this CPU's buffer to the console).
    CpuDump,
    /// `snapshot`.
    Snapshot,
    /// `enable_event:SYS:EVENT`.
    EnableEvent(String, String),
    /// `disable_event:SYS:EVENT`.
    DisableEvent(String, String),
}

/// A function trigger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionTrigger {
    /// The function (or glob).
    pub function: String,
    /// The command.
    pub action: FunctionTriggerAction,
    /// `:N`, `None` for unlimited.
    pub count: Option<u64>,
}

impl fmt::Display for FunctionTrigger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:", self.function)?;
        match &self.action {
            FunctionTriggerAction::TraceOn => f.write_str("traceon")?,
            FunctionTriggerAction::TraceOff => f.write_str("traceoff")?,
            FunctionTriggerAction::Stacktrace => f.write_str("stacktrace")?,
            FunctionTriggerAction::Dump => f.write_str("dump")?,
            FunctionTriggerAction::CpuDump => f.write_str("cpudump")?,
            FunctionTriggerAction::Snapshot => f.write_str("snapshot")?,
            FunctionTriggerAction::EnableEvent(s, e) => write!(f, "enable_event:{s}:{e}")?,
            FunctionTriggerAction::DisableEvent(s, e) => write!(f, "disable_event:{s}:{e}")?,
        }
        if let Some(c) = self.count {
            write!(f, ":{c}")?;
        }
        Ok(())
    }
}

impl FunctionTrigger {
    /// The text that removes it (`!FUNC:COMMAND[:ARG]`, appended).
    pub fn removal_text(&self) -> String {
        let mut t = FunctionTrigger {
            count: None,
            ..self.clone()
        }
        .to_string();
        t.insert(0, '!');
        t
    }
}

/// Parse `available_filter_functions`: the name before any ` [module]`.
pub fn parse_available_functions(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(String::from)
        .collect()
}

/// Check each function pattern against the available functions: plain names must be
/// there (else [`TracefsError::UnknownFunction`] with the closest names), globs must
/// match something; `:mod:`, regex-looking and `!` forms go to the kernel as they are.
pub fn validate_functions(patterns: &[&str], available: &[String]) -> Result<(), TracefsError> {
    for p in patterns {
        let p = p.trim().trim_start_matches('!');
        if p.is_empty() || p.contains(':') || p.starts_with('^') || p.ends_with('$') {
            continue;
        }
        let found = if is_glob(p) {
            available.iter().any(|f| glob_match(p, f))
        } else {
            available.iter().any(|f| f == p)
        };
        if !found {
            return Err(TracefsError::UnknownFunction {
                name: p.to_string(),
                suggestions: closest(p, available.iter().map(|s| s.as_str()), 3),
            });
        }
    }
    Ok(())
}

impl Tracefs {
    /// `available_filter_functions` (root only; EPERM in sandboxes).
    pub fn available_functions(&self) -> Result<Vec<String>, TracefsError> {
        Ok(parse_available_functions(
            &self.top().read_string("available_filter_functions")?,
        ))
    }
}

impl Instance {
    /// The entries of a function-filter file (header comments skipped).
    pub fn function_filter(&self, which: FunctionFilter) -> Result<Vec<String>, TracefsError> {
        Ok(super::file::entry_lines(&self.read_string(which.file())?))
    }

    /// Check, without writing, that `patterns` can go into `which`: the file is there and
    /// this kernel lets it be read, and every plain name is in `available_filter_functions`
    /// when that can be read.
    pub fn check_function_filter(
        &self,
        which: FunctionFilter,
        patterns: &[&str],
    ) -> Result<(), TracefsError> {
        self.function_filter(which)?;
        if let Ok(avail) = self.tracefs().available_functions() {
            validate_functions(patterns, &avail)?;
        }
        Ok(())
    }

    /// Set a function filter, replacing (`>`) or adding (`>>`). Patterns are checked
    /// against `available_filter_functions` when it can be read.
    pub fn set_function_filter(
        &self,
        which: FunctionFilter,
        patterns: &[&str],
        mode: AppendMode,
    ) -> Result<(), TracefsError> {
        if let Ok(avail) = self.tracefs().available_functions() {
            validate_functions(patterns, &avail)?;
        }
        let mut text = patterns.join("\n");
        text.push('\n');
        self.write(which.file(), text.as_bytes(), mode)
    }

    /// Empty a function filter (truncate).
    pub fn clear_function_filter(&self, which: FunctionFilter) -> Result<(), TracefsError> {
        self.write(which.file(), b"", AppendMode::Truncate)
    }

    /// Add a function trigger (appended to `set_ftrace_filter`).
    pub fn add_function_trigger(&self, t: &FunctionTrigger) -> Result<(), TracefsError> {
        self.write(
            "set_ftrace_filter",
            t.to_string().as_bytes(),
            AppendMode::Append,
        )
    }

    /// Remove a function trigger.
    pub fn remove_function_trigger(&self, t: &FunctionTrigger) -> Result<(), TracefsError> {
        self.write(
            "set_ftrace_filter",
            t.removal_text().as_bytes(),
            AppendMode::Append,
        )
    }

    /// `max_graph_depth` (0 = unlimited).
    pub fn max_graph_depth(&self) -> Result<u32, TracefsError> {
        let v = self.read_value("max_graph_depth")?;
        v.parse().map_err(|_| TracefsError::Parse {
            path: self.path("max_graph_depth"),
            detail: v,
        })
    }

    /// Set `max_graph_depth`.
    pub fn set_max_graph_depth(&self, depth: u32) -> Result<(), TracefsError> {
        self.write_str("max_graph_depth", &depth.to_string())
    }

    /// `set_ftrace_pid`.
    pub fn ftrace_pids(&self) -> Result<Vec<u32>, TracefsError> {
        parse_pids(self, "set_ftrace_pid")
    }

    /// Trace functions only for these pids.
    pub fn set_ftrace_pids(&self, pids: &[u32], mode: AppendMode) -> Result<(), TracefsError> {
        self.write("set_ftrace_pid", pid_text(pids).as_bytes(), mode)
    }

    /// `set_ftrace_notrace_pid`.
    pub fn ftrace_notrace_pids(&self) -> Result<Vec<u32>, TracefsError> {
        parse_pids(self, "set_ftrace_notrace_pid")
    }

    /// Never trace functions of these pids.
    pub fn set_ftrace_notrace_pids(
        &self,
        pids: &[u32],
        mode: AppendMode,
    ) -> Result<(), TracefsError> {
        self.write("set_ftrace_notrace_pid", pid_text(pids).as_bytes(), mode)
    }

    /// Follow forks in the function pid filters (`options/function-fork`).
    pub fn set_function_fork(&self, on: bool) -> Result<(), TracefsError> {
        self.set_option("function-fork", on)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triggers_text() {
        let t = FunctionTrigger {
            function: "schedule".into(),
            action: FunctionTriggerAction::TraceOff,
            count: Some(1),
        };
        assert_eq!(t.to_string(), "schedule:traceoff:1");
        assert_eq!(t.removal_text(), "!schedule:traceoff");
        let t = FunctionTrigger {
            function: "do_exit".into(),
            action: FunctionTriggerAction::EnableEvent("sched".into(), "sched_switch".into()),
            count: None,
        };
        assert_eq!(t.to_string(), "do_exit:enable_event:sched:sched_switch");
    }

    #[test]
    fn validation() {
        let avail =
            parse_available_functions("schedule\nschedule_idle\nvfs_read\next4_sync_fs [ext4]\n");
        assert_eq!(avail[3], "ext4_sync_fs");
        validate_functions(&["schedule", "vfs_*", ":mod:ext4", "!vfs_read"], &avail).unwrap();
        match validate_functions(&["schedul"], &avail) {
            Err(TracefsError::UnknownFunction { suggestions, .. }) => {
                assert_eq!(suggestions[0], "schedule")
            }
            r => panic!("{r:?}"),
        }
        assert!(validate_functions(&["nosuch_*"], &avail).is_err());
    }
}
