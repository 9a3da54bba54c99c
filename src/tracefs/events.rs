//! Tracepoint events: listing, enabling, filters, `set_event` and the event pid filters.

use std::fmt;
use std::path::{Path, PathBuf};

use super::instance::{EnableState, Instance};
use super::suggest::{check_glob, closest, glob_match, is_glob};
use super::{AppendMode, Tracefs, TracefsError};
use crate::bre::basic_regex;

/// A tracepoint event, `system:name`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventName {
    /// The system (directory under `events/`).
    pub system: String,
    /// The event.
    pub name: String,
}

impl EventName {
    /// Build from parts.
    pub fn new(system: impl Into<String>, name: impl Into<String>) -> EventName {
        EventName {
            system: system.into(),
            name: name.into(),
        }
    }

    /// The event's directory relative to a buffer: `events/SYSTEM/NAME`.
    pub fn dir(&self) -> PathBuf {
        Path::new("events").join(&self.system).join(&self.name)
    }
}

impl fmt::Display for EventName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.system, self.name)
    }
}

/// Parse `available_events` (`system:name` per line).
pub fn parse_available_events(text: &str) -> Vec<EventName> {
    text.lines()
        .filter_map(|l| l.trim().split_once(':'))
        .map(|(s, n)| EventName::new(s, n))
        .collect()
}

/// What an `-e` argument resolved to: trace-cmd writes a system's or all events'
/// `enable` file when asked for a whole system, the events' own files otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventTarget {
    /// `all`: `events/enable`.
    All,
    /// A whole system: `events/SYSTEM/enable`.
    System(String),
    /// These events.
    Events(Vec<EventName>),
}

impl EventTarget {
    /// The directory whose `enable`/`filter` files this target uses, one per entry.
    pub fn dirs(&self) -> Vec<PathBuf> {
        match self {
            EventTarget::All => vec![PathBuf::from("events")],
            EventTarget::System(s) => vec![Path::new("events").join(s)],
            EventTarget::Events(v) => v.iter().map(|e| e.dir()).collect(),
        }
    }

    /// The events this target covers.
    pub fn events<'a>(&self, available: &'a [EventName]) -> Vec<&'a EventName> {
        available
            .iter()
            .filter(|e| self.covers(&e.system, &e.name))
            .collect()
    }

    /// Whether the target covers the event `system:name`.
    pub fn covers(&self, system: &str, name: &str) -> bool {
        match self {
            EventTarget::All => true,
            EventTarget::System(s) => s == system,
            EventTarget::Events(v) => v.iter().any(|e| e.system == system && e.name == name),
        }
    }
}

/// The events of `available` that any of the `-e` specs selects, in `available` order;
/// the first spec that matches nothing is an [`TracefsError::UnknownEvent`] with the
/// closest names.
pub fn select_events<S: AsRef<str>>(
    specs: &[S],
    available: &[EventName],
) -> Result<Vec<EventName>, TracefsError> {
    let targets = specs
        .iter()
        .map(|s| resolve_event(s.as_ref(), available))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(available
        .iter()
        .filter(|e| targets.iter().any(|t| t.covers(&e.system, &e.name)))
        .cloned()
        .collect())
}

/// A pattern for `list -e`, matched as trace-cmd matches it: POSIX basic regular
/// expressions, case-insensitive and searched (not anchored). `SYS:EVENT` (split at the
/// first `:`) needs both parts to match, an empty part matching anything; a pattern
/// without `:` needs the system or the event name to match.
///
/// A glob that reads as a regex matching nothing (`sched:*`, whose `*` is literal) is
/// taken as a glob instead, on the event name, the system or `system:name`.
#[derive(Debug)]
pub struct EventPattern {
    /// The system's regex when the pattern has a `:`.
    system: Option<regex::Regex>,
    /// The event's regex (or, without `:`, the system's or the event's).
    event: regex::Regex,
    /// The pattern as a glob, when it is one.
    glob: Option<String>,
}

impl EventPattern {
    /// Parse; an invalid regular expression is an error naming it.
    pub fn parse(pat: &str) -> Result<EventPattern, String> {
        let bad = |e: String| format!("{pat:?} is not a valid regular expression: {e}");
        let (system, event) = match pat.split_once(':') {
            Some((s, n)) => (
                Some(basic_regex(s).map_err(bad)?),
                basic_regex(n).map_err(bad)?,
            ),
            None => (None, basic_regex(pat).map_err(bad)?),
        };
        let glob = (is_plain_or_glob(pat.replacen(':', "", 1).as_str())
            && is_glob(pat)
            && check_glob(pat).is_ok())
        .then(|| pat.to_string());
        Ok(EventPattern {
            system,
            event,
            glob,
        })
    }

    /// Whether an event matches the regular expressions.
    pub fn matches(&self, e: &EventName) -> bool {
        match &self.system {
            Some(s) => s.is_match(&e.system) && self.event.is_match(&e.name),
            None => self.event.is_match(&e.system) || self.event.is_match(&e.name),
        }
    }

    /// Whether an event matches the pattern read as a glob.
    fn matches_glob(&self, e: &EventName) -> bool {
        let Some(g) = &self.glob else { return false };
        match g.split_once(':') {
            Some((s, n)) if !s.is_empty() && !n.is_empty() => {
                glob_match(s, &e.system) && glob_match(n, &e.name)
            }
            _ => {
                glob_match(g, &e.name) || glob_match(g, &e.system) || glob_match(g, &e.to_string())
            }
        }
    }

    /// The events of `all` that match, by the regular expressions, else (nothing
    /// matching) by the glob. They come as trace-cmd lists them, system by system: the
    /// systems in the order they first appear in `all`, each one's events in `all` order.
    pub fn select(&self, all: Vec<EventName>) -> Vec<EventName> {
        let mut first: std::collections::HashMap<String, usize> = Default::default();
        for (i, e) in all.iter().enumerate() {
            first.entry(e.system.clone()).or_insert(i);
        }
        let by_regex = all.iter().any(|e| self.matches(e));
        let mut v: Vec<EventName> = all
            .into_iter()
            .filter(|e| {
                if by_regex {
                    self.matches(e)
                } else {
                    self.matches_glob(e)
                }
            })
            .collect();
        v.sort_by_key(|e| first[&e.system]);
        v
    }
}

fn is_plain_or_glob(s: &str) -> bool {
    s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "_-.*?[]!".contains(c))
}

/// Resolve an `-e` argument against the available events: `all`, `SYSTEM`,
/// `SYSTEM:EVENT`, `EVENT` (in whichever system has it), with globs on either side.
/// Nothing matching is an [`TracefsError::UnknownEvent`] with the closest names.
pub fn resolve_event(spec: &str, available: &[EventName]) -> Result<EventTarget, TracefsError> {
    let spec = spec.trim();
    if spec == "all" || spec == "*" || spec == "*:*" {
        return Ok(EventTarget::All);
    }
    let (sys, name) = match spec.split_once(':') {
        Some((s, n)) => (Some(s), n),
        None => (None, spec),
    };
    let matched: Vec<EventName> = match sys {
        Some(s) if n_is_all(name) && !is_glob(s) => {
            if available.iter().any(|e| e.system == s) {
                return Ok(EventTarget::System(s.to_string()));
            }
            Vec::new()
        }
        Some(s) => available
            .iter()
            .filter(|e| glob_match(s, &e.system) && glob_match(name, &e.name))
            .cloned()
            .collect(),
        None => {
            if !is_glob(name) && available.iter().any(|e| e.system == name) {
                return Ok(EventTarget::System(name.to_string()));
            }
            available
                .iter()
                .filter(|e| glob_match(name, &e.name))
                .cloned()
                .collect()
        }
    };
    if matched.is_empty() {
        return Err(unknown_event(spec, available));
    }
    Ok(EventTarget::Events(matched))
}

fn n_is_all(n: &str) -> bool {
    n.is_empty() || n == "*"
}

/// The error for an event spec that matches nothing, with the closest names.
pub fn unknown_event(spec: &str, available: &[EventName]) -> TracefsError {
    let full: Vec<String> = available.iter().map(|e| e.to_string()).collect();
    let mut systems: Vec<&str> = available.iter().map(|e| e.system.as_str()).collect();
    systems.dedup();
    let suggestions = if spec.contains(':') {
        closest(spec, full.iter().map(|s| s.as_str()), 3)
    } else {
        let mut s = closest(spec, systems.iter().copied(), 2);
        let names: Vec<&str> = available.iter().map(|e| e.name.as_str()).collect();
        for n in closest(spec, names, 3) {
            if let Some(e) = available.iter().find(|e| e.name == n) {
                s.push(e.to_string());
            }
        }
        s
    };
    TracefsError::UnknownEvent {
        name: spec.to_string(),
        suggestions,
    }
}

impl Tracefs {
    /// `available_events` (shared by every instance).
    pub fn available_events(&self) -> Result<Vec<EventName>, TracefsError> {
        Ok(parse_available_events(
            &self.read_string("available_events")?,
        ))
    }

    /// The event systems, sorted.
    pub fn systems(&self) -> Result<Vec<String>, TracefsError> {
        let mut v: Vec<String> = self
            .available_events()?
            .into_iter()
            .map(|e| e.system)
            .collect();
        v.sort();
        v.dedup();
        Ok(v)
    }

    /// The event systems in the order the kernel lists `events/` (what `trace-cmd list
    /// -s` prints): every directory there.
    pub fn event_systems(&self) -> Result<Vec<String>, TracefsError> {
        subdirs(&self.path("events"))
    }

    /// Every event of `events/` that has an `id` (what perf can open as a tracepoint):
    /// the systems sorted by name, and each one's events sorted by name.
    pub fn tracepoints(&self) -> Result<Vec<EventName>, TracefsError> {
        let sorted_dirs = |dir: &Path| {
            subdirs(dir).map(|mut v| {
                v.sort();
                v
            })
        };
        let events = self.path("events");
        let mut out = Vec::new();
        for system in sorted_dirs(&events)? {
            let sys_dir = events.join(&system);
            for name in sorted_dirs(&sys_dir)? {
                if sys_dir.join(&name).join("id").exists() {
                    out.push(EventName::new(system.clone(), name));
                }
            }
        }
        Ok(out)
    }

    /// The text of one of an event's files (`filter`, `trigger`), as the kernel gives it.
    pub fn event_file(&self, e: &EventName, file: &str) -> Result<String, TracefsError> {
        self.read_string(e.dir().join(file))
    }

    /// Events matching a `list -e` pattern, in `available_events` order.
    pub fn list_events(&self, pattern: Option<&str>) -> Result<Vec<EventName>, TracefsError> {
        let all = self.available_events()?;
        let Some(p) = pattern else { return Ok(all) };
        let pat = EventPattern::parse(p).map_err(|detail| TracefsError::BadValue {
            path: self.path("available_events"),
            detail,
        })?;
        Ok(pat.select(all))
    }

    /// An event's `format` text.
    pub fn event_format(&self, e: &EventName) -> Result<String, TracefsError> {
        self.read_string(e.dir().join("format"))
    }
}

impl Instance {
    /// Resolve an `-e` argument against `available_events`.
    pub fn resolve_event(&self, spec: &str) -> Result<EventTarget, TracefsError> {
        resolve_event(spec, &self.tracefs().available_events()?)
    }

    /// Enable or disable events by `-e` syntax; returns what was written to.
    pub fn set_events_enabled(&self, spec: &str, on: bool) -> Result<EventTarget, TracefsError> {
        let target = self.resolve_event(spec)?;
        self.set_target_enabled(&target, on)?;
        Ok(target)
    }

    /// Write `1`/`0` to the `enable` files of a resolved target.
    pub fn set_target_enabled(&self, target: &EventTarget, on: bool) -> Result<(), TracefsError> {
        for d in target.dirs() {
            self.write_str(d.join("enable"), if on { "1" } else { "0" })?;
        }
        Ok(())
    }

    /// Disable every event (`events/enable` gets `0`).
    pub fn disable_all_events(&self) -> Result<(), TracefsError> {
        self.write_str("events/enable", "0")
    }

    /// State of `events/enable`, `events/SYSTEM/enable` or an event's `enable`.
    pub fn enable_state(&self, target_dir: impl AsRef<Path>) -> Result<EnableState, TracefsError> {
        let f = target_dir.as_ref().join("enable");
        let t = self.read_string(&f)?;
        EnableState::parse(&t).ok_or_else(|| TracefsError::Parse {
            path: self.path(&f),
            detail: format!("{:?}", t.trim()),
        })
    }

    /// State of one event.
    pub fn event_state(&self, e: &EventName) -> Result<EnableState, TracefsError> {
        self.enable_state(e.dir())
    }

    /// The enabled events, from `set_event`.
    pub fn enabled_events(&self) -> Result<Vec<EventName>, TracefsError> {
        Ok(parse_available_events(&self.read_string("set_event")?))
    }

    /// Write `set_event` lines (`SYS:EVENT`, `!SYS:EVENT` to disable), replacing or appending.
    pub fn write_set_event(&self, lines: &[&str], mode: AppendMode) -> Result<(), TracefsError> {
        let mut text = lines.join("\n");
        text.push('\n');
        self.write("set_event", text.as_bytes(), mode)
    }

    /// Set the filter of a target's events or system (`events/.../filter`).
    pub fn set_filter(&self, target: &EventTarget, filter: &str) -> Result<(), TracefsError> {
        for d in target.dirs() {
            if d.as_os_str() == "events" {
                return Err(TracefsError::BadValue {
                    path: self.path("events/filter"),
                    detail: "a filter needs a system or an event, not `all`".into(),
                });
            }
            self.write_str(d.join("filter"), filter)?;
        }
        Ok(())
    }

    /// An event's filter text (`none` when there is none).
    pub fn filter(&self, e: &EventName) -> Result<String, TracefsError> {
        self.read_value(e.dir().join("filter"))
    }

    /// Remove an event's (or system's) filter (`echo 0 > filter`).
    pub fn clear_filter(&self, dir: impl AsRef<Path>) -> Result<(), TracefsError> {
        self.write_str(dir.as_ref().join("filter"), "0")
    }

    /// `set_event_pid`.
    pub fn event_pids(&self) -> Result<Vec<u32>, TracefsError> {
        parse_pids(self, "set_event_pid")
    }

    /// Trace events only for these pids (`set_event_pid`), replacing or adding.
    pub fn set_event_pids(&self, pids: &[u32], mode: AppendMode) -> Result<(), TracefsError> {
        self.write("set_event_pid", pid_text(pids).as_bytes(), mode)
    }

    /// `set_event_notrace_pid`.
    pub fn event_notrace_pids(&self) -> Result<Vec<u32>, TracefsError> {
        parse_pids(self, "set_event_notrace_pid")
    }

    /// Never trace events of these pids (`set_event_notrace_pid`).
    pub fn set_event_notrace_pids(
        &self,
        pids: &[u32],
        mode: AppendMode,
    ) -> Result<(), TracefsError> {
        self.write("set_event_notrace_pid", pid_text(pids).as_bytes(), mode)
    }

    /// Follow forks in the event pid filters (`options/event-fork`).
    pub fn set_event_fork(&self, on: bool) -> Result<(), TracefsError> {
        self.set_option("event-fork", on)
    }
}

/// Pids as written by trace-cmd: separated by spaces; empty clears the file.
pub(crate) fn pid_text(pids: &[u32]) -> String {
    pids.iter()
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

pub(crate) fn parse_pids(inst: &Instance, file: &str) -> Result<Vec<u32>, TracefsError> {
    let text = inst.read_string(file)?;
    let mut out = Vec::new();
    for w in text.split_whitespace() {
        if w.starts_with('#') || w == "no" || w == "pid" {
            continue;
        }
        out.push(w.parse().map_err(|_| TracefsError::Parse {
            path: inst.path(file),
            detail: format!("{w:?} is not a pid"),
        })?);
    }
    Ok(out)
}

/// The names of the directories in `dir`, in the order the kernel lists them.
fn subdirs(dir: &Path) -> Result<Vec<String>, TracefsError> {
    let rd = std::fs::read_dir(dir).map_err(|e| TracefsError::from_io(dir, e))?;
    let mut v = Vec::new();
    for ent in rd {
        let ent = ent.map_err(|e| TracefsError::from_io(dir, e))?;
        if ent.file_type().map(|t| t.is_dir()).unwrap_or(false) {
            v.push(ent.file_name().to_string_lossy().into_owned());
        }
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn avail() -> Vec<EventName> {
        parse_available_events(
            "sched:sched_switch\nsched:sched_wakeup\nsched:sched_waking\nirq:irq_handler_entry\nirq:softirq_entry\ntimer:timer_start\n",
        )
    }

    #[test]
    fn resolve_forms() {
        let a = avail();
        assert_eq!(resolve_event("all", &a).unwrap(), EventTarget::All);
        assert_eq!(
            resolve_event("sched", &a).unwrap(),
            EventTarget::System("sched".into())
        );
        assert_eq!(
            resolve_event("sched:*", &a).unwrap(),
            EventTarget::System("sched".into())
        );
        assert_eq!(
            resolve_event("sched:sched_switch", &a).unwrap(),
            EventTarget::Events(vec![EventName::new("sched", "sched_switch")])
        );
        assert_eq!(
            resolve_event("softirq_entry", &a).unwrap(),
            EventTarget::Events(vec![EventName::new("irq", "softirq_entry")])
        );
        match resolve_event("sched:sched_wak*", &a).unwrap() {
            EventTarget::Events(v) => assert_eq!(v.len(), 2),
            t => panic!("{t:?}"),
        }
    }

    #[test]
    fn typo_suggests_closest() {
        let a = avail();
        match resolve_event("sched:sched_swich", &a) {
            Err(TracefsError::UnknownEvent { name, suggestions }) => {
                assert_eq!(name, "sched:sched_swich");
                assert_eq!(suggestions[0], "sched:sched_switch");
            }
            r => panic!("{r:?}"),
        }
        let msg = resolve_event("shed", &a).unwrap_err().to_string();
        assert!(msg.contains("did you mean sched"), "{msg}");
    }

    #[test]
    fn patterns() {
        let a = avail();
        let count = |p: &str| EventPattern::parse(p).unwrap().select(a.clone()).len();
        // Globs that read as regexes matching nothing.
        assert_eq!(count("sched:*"), 3);
        assert_eq!(count("*irq*"), 2);
        assert_eq!(count("^irq:.*entry$"), 2);
        assert_eq!(count("wak"), 2);
        assert_eq!(count("sched_sw.*"), 1);
        assert_eq!(count("SCHED:"), 3);
        assert_eq!(count("^irq$"), 2);
        assert_eq!(count("sched.sched"), 0);
        assert_eq!(count("sched_sw\\|irq_handler_e"), 2);
        // System by system, in the order the systems first appear.
        let mixed = parse_available_events("a:x1\nb:y1\na:x2\nb:y2\n");
        let names: Vec<String> = EventPattern::parse("1\\|2")
            .unwrap()
            .select(mixed)
            .iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(names, ["a:x1", "a:x2", "b:y1", "b:y2"]);
        assert!(EventPattern::parse("[").is_err());
        assert!(EventPattern::parse("[[:alpha:]]").is_err());
    }
}
